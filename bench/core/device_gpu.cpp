// Device checks and warm-up (see device.h).
#include "bench/core/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "bench/core/options.h"
#include "kernels/cuda_check.h"

namespace xb {
namespace {
using steady = std::chrono::steady_clock;
double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }
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

std::string cuda_device_missing() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0) return "";
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
  return why;
}

void require_cuda_device(const std::string& advice) {
  const std::string why = cuda_device_missing();
  if (why.empty()) return;
  throw UsageError(fmt::format("no CUDA device found ({}); {}", why, advice));
}

int cuda_device_count() {
  require_cuda_device("--devices needs NVIDIA GPUs (bench --replay FILE --devices 0,1 shows the layout without one)");
  int count = 0;
  (void)cudaGetDeviceCount(&count);
  return count;
}

void require_device_memory(std::size_t need, const std::string& what) {
  std::size_t free_bytes = 0, total_bytes = 0;
  XB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need > free_bytes) {
    throw UsageError(fmt::format("{} does not fit: it needs {:.2f} GiB of device memory, {:.2f} GiB free of {:.2f} GiB",
                                 what, static_cast<double>(need) / 1073741824.0,
                                 static_cast<double>(free_bytes) / 1073741824.0,
                                 static_cast<double>(total_bytes) / 1073741824.0));
  }
}

}  // namespace xb
