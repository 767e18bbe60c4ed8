// `bench calibrate`: measures the ceilings a sweep is judged against on the GPU in use (device to
// device copy bandwidth, dense GEMM throughput per dtype on random data) and records the GPU, its
// clocks (NVML, loaded with dlopen when present) and the driver. GPU code; the record itself and
// its file format are plain C++ (bench/core/ceilings.h).
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

#include <cuda_runtime_api.h>

#include "bench/calibrate/calibrate_args.h"
#include "bench/core/ceilings.h"
#include "bench/core/device.h"

namespace xb {

/// Measures on the current device (docs/metrics.md, "Ceilings"). Every timing goes through the
/// sampling core in hot mode (bench/core/measure.h, with no profiler recording:
/// measure_unrecorded in bench/core/fixtures.h): a sample is a batch of back-to-back calls queued
/// behind the blocking kernel (batch sized for about 0.5 ms of GPU time), per-call time =
/// interval / calls; at least opt.calls samples, then until their RSD is at most 0.5% or 1 s of
/// sampling has passed. A ceiling is the per-call median.
///  - copy: opt.copy_mib MiB copied device to device with cudaMemcpyAsync from random data
///    (measure_copy, the measurement of bench's cold-mode bound) after opt.warmup_ms of
///    back-to-back warm-up; ceiling = 2 x bytes / median per-call time (read + written).
///  - GEMM: for each dtype and size, the matmul workload (cuBLASLt, uniform random inputs in
///    [-1, 1), the same code path as the sweep's matmul points), sampled after an idle cool-down
///    of opt.cooldown_ms and opt.gemm_warmup_ms of warm-up (the conditions of a sweep point: a
///    burst ceiling, not the power-capped sustained rate); a dtype's ceiling is the best median
///    TFLOP/s over the sizes.
///  - NVML clocks (SM, memory, temperature) idle before, right after each measurement's last
///    sample (the clocks it ran at), and at the end.
/// Prints one line per measurement to `log` (with the samples taken, and a note when the noise
/// target was missed or NVML saw a clock slowdown). Throws CudaError/CublasError on CUDA
/// failures, std::runtime_error when the blocking kernel timed out, and UsageError when a buffer
/// does not fit in device memory.
Calibration run_calibration(const CalibrateOptions& opt, std::ostream& log);

/// `bench calibrate ARGS` (argv[0] = "calibrate"): parses, checks the device and memory, creates
/// the folder, measures, writes ceilings.json and calibration.md. Returns the exit code (0);
/// throws UsageError for bad input before anything is written.
int calibrate_command(int argc, const char* const* argv);

}  // namespace xb
