// `bench calibrate`: measures the ceilings a sweep is judged against on the GPU in use (device to
// device copy bandwidth, dense GEMM throughput per dtype on random data) and records the GPU, its
// clocks (NVML, loaded with dlopen when present) and the driver. GPU code; the record itself and
// its file format are plain C++ (bench/roofline.h).
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

#include <cuda_runtime_api.h>

#include "bench/roofline.h"
#include "bench/sweep.h"

namespace xb {

/// Throws UsageError (exit 2) when no CUDA device is usable: "no CUDA device found (<why>);
/// <advice>", where <why> says in words when no driver is installed or the driver is older than
/// the runtime (both CUDA versions), else names the CUDA error.
void require_cuda_device(const std::string& advice = "this command needs an NVIDIA GPU");

/// Runs `enqueue` back to back on `stream` until `ms` of wall time have passed (at least 2 calls),
/// in batches sized from the time per call seen so far (1 to 256), synchronizing after each
/// batch: a warm-up that takes the GPU off its idle clocks. Returns the calls. Throws CudaError.
int warm_up_for(cudaStream_t stream, double ms, const std::function<void()>& enqueue);

/// Throws UsageError when `need` bytes exceed the current device's free memory; `what` names the
/// buffer or point in the message.
void require_device_memory(std::size_t need, const std::string& what);

/// Measures on the current device (docs/metrics.md, "Ceilings"):
///  - copy: opt.copy_mib MiB copied device to device with cudaMemcpyAsync, back to back on one
///    stream after opt.warmup_ms of warm-up; opt.calls calls each timed by the cudaEvents recorded
///    between consecutive calls; ceiling = 2 x bytes / median time (read + written).
///  - GEMM: for each dtype and size, the matmul workload (cuBLASLt, uniform random inputs in
///    [-1, 1), the same code path as the sweep's matmul points), timed back to back after an
///    idle cool-down of opt.cooldown_ms and opt.gemm_warmup_ms of warm-up (the conditions of a
///    sweep point); a dtype's ceiling is the best median TFLOP/s over the sizes.
///  - NVML clocks (SM, memory, temperature) idle before, and while each measurement runs.
/// Prints one line per measurement to `log`. Throws CudaError/CublasError on CUDA failures and
/// UsageError when a buffer does not fit in device memory.
Calibration run_calibration(const CalibrateOptions& opt, std::ostream& log);

/// `bench calibrate ARGS` (argv[0] = "calibrate"): parses, checks the device and memory, creates
/// the folder, measures, writes ceilings.json and calibration.md. Returns the exit code (0);
/// throws UsageError for bad input before anything is written.
int calibrate_command(int argc, const char* const* argv);

}  // namespace xb
