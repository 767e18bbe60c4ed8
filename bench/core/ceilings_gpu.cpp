// The ceilings' measurement on the GPU (run_calibration, bench/core/ceilings.h): bench calibrate's,
// and bench sweep's when it is given no --ceilings.
#include "bench/core/ceilings.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "bench/core/device.h"
#include "bench/core/fixtures.h"
#include "bench/core/gpu_meta.h"
#include "bench/core/measure.h"
#include "bench/core/run_dir.h"
#include "common/atomic_file.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/nvml_probe.h"
#include "kernels/workload.h"
#include "profiler/exporters/table.h"

namespace xb {
namespace {

/// The clocks of one NVML snapshot as calibration records them (-1 for what could not be read).
ClockReading to_reading(const GpuSnapshot& snap, const std::string& when) {
  ClockReading r;
  r.when = when;
  r.sm_mhz = snap.sm_clock_mhz;
  r.mem_mhz = snap.mem_clock_mhz;
  r.temperature_c = snap.temperature_c;
  return r;
}

/// Longest sampling of one ceiling, s, as for a sweep point (the noise rule stops here when its
/// target is not met).
constexpr double kMaxSamplingS = 1.0;

/// The sampling core's settings for one ceiling: hot mode (a batch of calls per sample behind the
/// blocking kernel, sized for about 0.5 ms of GPU time), no warm-up of its own (the caller's
/// warm_up_for, and the GEMMs' cool-down, set the conditions), at least `calls` samples, then
/// the noise rule (0.5% RSD) for at most kMaxSamplingS. NVML is read before and after the
/// samples; `after` keeps the last snapshot: the clocks the samples ran at.
MeasureConfig ceiling_config(int calls, const Nvml& nvml, GpuSnapshot& after) {
  MeasureConfig cfg;
  cfg.mode = TimingMode::Hot;
  cfg.schedule = Schedule{0, 0, calls};
  cfg.stopping.min_samples = calls;
  cfg.stopping.min_time_s = 0;
  cfg.stopping.max_time_s = kMaxSamplingS;
  cfg.read_gpu = [&nvml, &after] {
    after = nvml.snapshot();
    return to_clock_sample(after);
  };
  return cfg;
}

/// Calls timed: samples x calls per sample (ceilings.json "calls").
int timed_calls(const Measurement& m) {
  return static_cast<int>(m.timing.samples_ns.size()) * m.timing.launches_per_sample;
}

/// "20 samples of 2 calls", and why the ceiling may be off: noise target missed, clock slowdown.
std::string sampling_note(const Measurement& m) {
  std::string note = fmt::format("{} samples of {} calls", m.timing.samples_ns.size(), m.timing.launches_per_sample);
  if (!m.converged) {
    note += fmt::format(", RSD {:.2f}% above the {:.1f}% target after {:.1f} s", m.stats.rsd() * 100,
                        m.timing.stopping.max_noise_fraction * 100, m.timing.sampling_s);
  }
  if (m.timing.gpu_after.throttled) note += ", NVML reported a clock slowdown";
  return note;
}

int attribute(cudaDeviceAttr attr, int device) {
  int v = -1;
  return cudaDeviceGetAttribute(&v, attr, device) == cudaSuccess ? v : -1;
}

}  // namespace

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
  c.clocks.push_back(to_reading(nvml.snapshot(), "idle, before calibration"));
  log << fmt::format("calibrate: {} (PCI {}), driver {}, clocks: {}\n", c.gpu_name, c.pci_bus_id,
                     c.driver_version.empty() ? std::to_string(c.cuda_driver_version) : c.driver_version,
                     c.clock_source);

  Stream stream;
  // Copy ceiling: the same measurement as bench's cold-mode bound (measure_copy), its median.
  {
    const std::size_t bytes = static_cast<std::size_t>(opt.copy_mib) << 20;
    require_device_memory(2 * bytes, fmt::format("the {} MiB copy", opt.copy_mib));
    GpuSnapshot after;
    const Measurement m =
        measure_copy(stream.get(), bytes, CopyPath::Memcpy, opt.warmup_ms, ceiling_config(opt.calls, nvml, after));
    c.clocks.push_back(to_reading(after, "right after the copy's samples"));
    c.copy.buffer_bytes = bytes;
    c.copy.moved_bytes = 2 * bytes;
    c.copy.calls = timed_calls(m);
    c.copy.median_ns = m.stats.median;
    c.copy.min_ns = m.stats.min;
    if (!(c.copy.median_ns > 0)) throw std::runtime_error("copy calibration measured no time");
    c.copy.gbps = static_cast<double>(c.copy.moved_bytes) / c.copy.median_ns;  // B/ns = GB/s
    log << fmt::format("calibrate: copy {} MiB: median {:.1f} us -> {:.0f} GB/s (read + written; {})\n", opt.copy_mib,
                       c.copy.median_ns / 1e3, c.copy.gbps, sampling_note(m));
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
      GpuSnapshot after;
      const Measurement m =
          measure_unrecorded(stream.get(), call, fmt::format("xb::calibrate_gemm_{}_{}", dtype_name, n),
                             ceiling_config(opt.calls, nvml, after));
      c.clocks.push_back(to_reading(after, fmt::format("right after the {} GEMM {} samples", dtype_name, n)));
      GemmCeiling g;
      g.dtype = dtype_name;
      g.n = n;
      g.calls = timed_calls(m);
      g.median_ns = m.stats.median;
      g.min_ns = m.stats.min;
      if (!(g.median_ns > 0)) throw std::runtime_error("GEMM calibration measured no time");
      g.tflops = op_flops(Op::Matmul, n) / g.median_ns / 1e3;  // FLOP/ns / 1e3 = TFLOP/s
      log << fmt::format("calibrate: {} GEMM {}: median {:.1f} us -> {:.1f} TFLOP/s ({})\n", dtype_name, n,
                         g.median_ns / 1e3, g.tflops, sampling_note(m));
      c.gemm.push_back(g);
    }
  }
  c.clocks.push_back(to_reading(nvml.snapshot(), "after calibration"));
  return c;
}

}  // namespace xb
