// `bench calibrate` (see calibrate.h).
#include "bench/calibrate.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <thread>
#include <iostream>
#include <memory>
#include <vector>

#include "bench/cli.h"
#include "bench/run_dir.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/nvml_probe.h"
#include "kernels/random_fill.h"
#include "kernels/workload.h"
#include "profiler/atomic_file.h"
#include "profiler/table.h"

namespace xb {
namespace {

using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) {
  return std::chrono::duration<double>(steady::now() - t0).count();
}

/// The clocks of one NVML snapshot as calibration records them (-1 for what could not be read).
ClockReading read_clocks(const Nvml& nvml, const std::string& when) {
  const GpuSnapshot snap = nvml.snapshot();
  ClockReading r;
  r.when = when;
  r.sm_mhz = snap.sm_clock_mhz;
  r.mem_mhz = snap.mem_clock_mhz;
  r.temperature_c = snap.temperature_c;
  return r;
}

/// `calls` back-to-back calls with a cudaEvent recorded before the first and after each one, so
/// that each consecutive pair times one call on the device; NVML is read once half of them have
/// completed. Returns per-call ns.
std::vector<std::int64_t> time_back_to_back(cudaStream_t stream, int calls, const std::function<void()>& enqueue,
                                            const Nvml& nvml, const std::string& when,
                                            std::vector<ClockReading>& clocks) {
  std::vector<Event> events(static_cast<std::size_t>(calls) + 1);
  events[0].record(stream);
  for (int i = 0; i < calls; ++i) {
    enqueue();
    events[static_cast<std::size_t>(i) + 1].record(stream);
  }
  events[static_cast<std::size_t>(calls / 2)].synchronize();
  clocks.push_back(read_clocks(nvml, when));
  events.back().synchronize();
  std::vector<std::int64_t> ns;
  for (int i = 0; i < calls; ++i) {
    const float ms = events[static_cast<std::size_t>(i) + 1].elapsed_ms_since(events[static_cast<std::size_t>(i)]);
    ns.push_back(static_cast<std::int64_t>(std::llround(static_cast<double>(ms) * 1e6)));
  }
  return ns;
}

int attribute(cudaDeviceAttr attr, int device) {
  int v = -1;
  return cudaDeviceGetAttribute(&v, attr, device) == cudaSuccess ? v : -1;
}

}  // namespace

int warm_up_for(cudaStream_t stream, double ms, const std::function<void()>& enqueue) {
  const auto t0 = steady::now();
  int calls = 0;
  int batch = 1;
  for (;;) {
    for (int i = 0; i < batch; ++i) enqueue();
    calls += batch;
    XB_CUDA(cudaStreamSynchronize(stream));
    const double elapsed_ms = seconds_since(t0) * 1e3;
    if (calls >= 2 && elapsed_ms >= ms) return calls;
    const double per_call_ms = elapsed_ms / calls;
    const double left_ms = std::max(ms - elapsed_ms, per_call_ms);
    batch = static_cast<int>(std::clamp(left_ms / std::max(per_call_ms, 1e-3), 1.0, 256.0));
  }
}

void require_cuda_device(const std::string& advice) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0) return;
  // cudaErrorInsufficientDriver means either no driver at all (cudaDriverGetVersion gives 0)
  // or one older than the runtime: say which, with both CUDA versions.
  std::string why = err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0";
  if (err == cudaErrorInsufficientDriver) {
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    const auto version = [](int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); };
    why = driver == 0 ? "no NVIDIA driver is installed"
                      : fmt::format("the NVIDIA driver supports CUDA {}, older than this build's runtime, CUDA {}",
                                    version(driver), version(runtime));
  }
  (void)cudaGetLastError();
  throw UsageError(fmt::format("no CUDA device found ({}); {}", why, advice));
}

void require_device_memory(std::size_t need, const std::string& what) {
  std::size_t free_bytes = 0, total_bytes = 0;
  XB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need > free_bytes) {
    throw UsageError(fmt::format("{} does not fit: it needs {:.2f} GiB of device memory, {:.2f} GiB free of {:.2f} GiB",
                                 what, static_cast<double>(need) / 1073741824.0, static_cast<double>(free_bytes) / 1073741824.0,
                                 static_cast<double>(total_bytes) / 1073741824.0));
  }
}

Calibration run_calibration(const CalibrateOptions& opt, std::ostream& log) {
  Calibration c;
  c.created_utc = utc_time("%Y-%m-%dT%H:%M:%SZ");
  XB_CUDA(cudaGetDevice(&c.device_index));
  cudaDeviceProp prop{};
  XB_CUDA(cudaGetDeviceProperties(&prop, c.device_index));
  c.gpu_name = prop.name;
  c.compute_major = prop.major;
  c.compute_minor = prop.minor;
  c.sm_count = prop.multiProcessorCount;
  c.total_global_mem = prop.totalGlobalMem;
  char bus[32] = {};
  XB_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, c.device_index));
  c.pci_bus_id = bus;
  XB_CUDA(cudaDriverGetVersion(&c.cuda_driver_version));
  XB_CUDA(cudaRuntimeGetVersion(&c.cuda_runtime_version));
  c.cublas_version = static_cast<int>(cublasLtGetVersion());
  c.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, c.device_index);

  // NVML clocks are facts recorded beside the ceilings, not needed to measure them: without NVML
  // clock_source says why and the clocks are -1 (the maximum clocks fall back to CUDA's).
  const Nvml nvml(c.pci_bus_id);
  const GpuStaticInfo info = nvml.static_info();
  c.clock_source = nvml.status();
  c.driver_version = info.driver_version;
  c.sm_clock_max_mhz = info.sm_clock_max_mhz;
  c.mem_clock_max_mhz = info.mem_clock_max_mhz;
  if (c.sm_clock_max_mhz < 0) {  // fall back to the CUDA attributes (peak clocks, kHz)
    const int khz = attribute(cudaDevAttrClockRate, c.device_index);
    c.sm_clock_max_mhz = khz > 0 ? khz / 1000 : -1;
  }
  if (c.mem_clock_max_mhz < 0) {
    const int khz = attribute(cudaDevAttrMemoryClockRate, c.device_index);
    c.mem_clock_max_mhz = khz > 0 ? khz / 1000 : -1;
  }
  c.clocks.push_back(read_clocks(nvml, "idle, before calibration"));
  log << fmt::format("calibrate: {} (PCI {}), driver {}, clocks: {}\n", c.gpu_name, c.pci_bus_id,
                     c.driver_version.empty() ? std::to_string(c.cuda_driver_version) : c.driver_version, c.clock_source);

  Stream stream;
  // Copy ceiling.
  {
    const std::size_t bytes = static_cast<std::size_t>(opt.copy_mib) << 20;
    require_device_memory(2 * bytes, fmt::format("the {} MiB copy", opt.copy_mib));
    DeviceBuffer src(bytes), dst(bytes);
    launch_random_fill(DType::BF16, src.get(), static_cast<std::int64_t>(bytes / 2), 0x5eedc0b1, stream.get());
    const auto copy = [&] {
      XB_CUDA(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
    };
    warm_up_for(stream.get(), opt.warmup_ms, copy);
    const std::vector<std::int64_t> ns = time_back_to_back(stream.get(), opt.calls, copy, nvml, "during the copy", c.clocks);
    c.copy.buffer_bytes = bytes;
    c.copy.moved_bytes = 2 * bytes;
    c.copy.calls = opt.calls;
    c.copy.median_ns = median_of(ns);
    c.copy.min_ns = static_cast<double>(*std::min_element(ns.begin(), ns.end()));
    if (!(c.copy.median_ns > 0)) throw std::runtime_error("copy calibration measured no time");
    c.copy.gbps = static_cast<double>(c.copy.moved_bytes) / c.copy.median_ns;  // B/ns = GB/s
    log << fmt::format("calibrate: copy {} MiB: median {:.1f} us -> {:.0f} GB/s (read + written)\n", opt.copy_mib,
                       c.copy.median_ns / 1e3, c.copy.gbps);
  }
  // GEMM ceilings.
  for (const std::string& dtype_name : opt.dtypes) {
    const DType dtype = parse_dtype(dtype_name);
    for (std::int64_t n : opt.gemm_sizes) {
      require_device_memory(workload_device_bytes(Op::Matmul, dtype, n), fmt::format("GEMM {} {}", dtype_name, n));
      auto w = make_workload(Op::Matmul, dtype, n, stream.get());
      const auto call = [&] { w->enqueue(); };
      XB_CUDA(cudaStreamSynchronize(stream.get()));
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(opt.cooldown_ms));
      warm_up_for(stream.get(), opt.gemm_warmup_ms, call);
      const std::vector<std::int64_t> ns = time_back_to_back(
          stream.get(), opt.calls, call, nvml, fmt::format("during the {} GEMM {}", dtype_name, n), c.clocks);
      GemmCeiling g;
      g.dtype = dtype_name;
      g.n = n;
      g.calls = opt.calls;
      g.median_ns = median_of(ns);
      g.min_ns = static_cast<double>(*std::min_element(ns.begin(), ns.end()));
      if (!(g.median_ns > 0)) throw std::runtime_error("GEMM calibration measured no time");
      g.tflops = op_flops(Op::Matmul, n) / g.median_ns / 1e3;  // FLOP/ns / 1e3 = TFLOP/s
      log << fmt::format("calibrate: {} GEMM {}: median {:.1f} us -> {:.1f} TFLOP/s\n", dtype_name, n,
                         g.median_ns / 1e3, g.tflops);
      c.gemm.push_back(g);
    }
  }
  c.clocks.push_back(read_clocks(nvml, "after calibration"));
  return c;
}

int calibrate_command(int argc, const char* const* argv) {
  const auto opt = parse_calibrate_args(argc, argv);
  if (!opt) return 0;
  const std::filesystem::path dir = opt->out.empty() ? default_run_dir() : opt->out;
  check_run_dir(dir);  // a bad --out is reported before the device checks
  require_cuda_device();
  // Everything that can be checked is checked before the folder is created.
  require_device_memory(2 * (static_cast<std::size_t>(opt->copy_mib) << 20), fmt::format("the {} MiB copy", opt->copy_mib));
  for (const std::string& dtype : opt->dtypes) {
    for (std::int64_t n : opt->gemm_sizes) {
      require_device_memory(workload_device_bytes(Op::Matmul, parse_dtype(dtype), n), fmt::format("GEMM {} {}", dtype, n));
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
