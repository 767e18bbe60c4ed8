// `bench calibrate` (see calibrate.h).
#include "bench/calibrate/calibrate.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "bench/calibrate/calibrate_args.h"
#include "bench/core/ceilings.h"
#include "bench/core/device.h"
#include "bench/core/run_dir.h"
#include "common/atomic_file.h"
#include "kernels/workload.h"

namespace xb {

int calibrate_command(int argc, const char* const* argv) {
  const auto opt = parse_calibrate_args(argc, argv);
  if (!opt) return 0;
  const std::filesystem::path dir = opt->out.empty() ? default_run_dir() : opt->out;
  check_run_dir(dir);  // a bad --out is reported before the device checks
  require_cuda_device();
  // Everything that can be checked is checked before the folder is created.
  require_device_memory(2 * (static_cast<std::size_t>(opt->copy_mib) << 20),
                        fmt::format("the {} MiB copy", opt->copy_mib));
  for (const std::string& dtype : opt->dtypes) {
    for (std::int64_t n : opt->gemm_sizes) {
      require_device_memory(workload_device_bytes(Op::Matmul, parse_dtype(dtype), n),
                            fmt::format("GEMM {} {}", dtype, n));
    }
  }
  create_run_dir(dir);
  const Calibration c = run_calibration(*opt, std::cout);
  write_file_atomic(dir / "ceilings.json", [&](std::ostream& o) { write_calibration_json(c, o); });
  write_file_atomic(dir / "calibration.md", [&](std::ostream& o) { write_calibration_markdown(c, o); });
  release_run_dir(dir);
  std::cout << "\n";
  write_calibration_markdown(c, std::cout);
  std::cout << "\ncalibration folder: " << dir.string() << "\n";
  return 0;
}

}  // namespace xb
