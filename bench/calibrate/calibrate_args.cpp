#include "bench/calibrate/calibrate_args.h"

#include <CLI/CLI.hpp>

#include "bench/cli/cli.h"

namespace xb {

std::optional<CalibrateOptions> parse_calibrate_args(int argc, const char* const* argv) {
  CalibrateOptions opt;
  CLI::App app{
      "crossbench calibrate: measures this GPU's copy bandwidth and dense GEMM ceilings (random data) "
      "and writes ceilings.json and calibration.md"};
  app.name("bench calibrate");
  std::vector<std::string> dtypes, gemm_sizes;
  std::string out;
  app.add_option("--dtype", dtypes, "comma-separated GEMM dtypes (default bf16,fp16,fp32)");
  app.add_option("--gemm-size", gemm_sizes, "GEMM sizes n (n x n x n); the ceiling is the best (default 4096,8192)");
  app.add_option("--copy-mib", opt.copy_mib, "MiB copied per call (default 1024; read + written: twice that)");
  app.add_option(
      "--calls", opt.calls,
      "at least this many samples per measurement (default 20; the sampling core then stops at 0.5% noise or 1 s)");
  app.add_option("--warmup-ms", opt.warmup_ms, "back-to-back warm-up before each measurement, ms (default 200)");
  app.add_option("--out", out, "folder to create (default results/runs/<UTC time>-<pid>)");
  if (!parse_command_line(app, argc, argv)) return std::nullopt;
  if (!dtypes.empty()) opt.dtypes = parse_dtype_list(dtypes);
  if (!gemm_sizes.empty()) {
    opt.gemm_sizes = parse_size_spec(join_list(gemm_sizes));
  } else if (app.count("--gemm-size") > 0) {
    throw UsageError("empty size list");
  }
  if (opt.copy_mib < 1 || opt.copy_mib > 65536) throw UsageError("--copy-mib must be in 1..65536");
  if (opt.calls < 3 || opt.calls > 100000) throw UsageError("--calls must be in 3..100000");
  if (!(opt.warmup_ms >= 0 && opt.warmup_ms <= 60000)) throw UsageError("--warmup-ms must be in 0..60000");
  if (!out.empty()) opt.out = out;
  return opt;
}

}  // namespace xb
