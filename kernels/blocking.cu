// The spinning kernel behind BlockingKernel (see blocking.h); host logic in blocking.cpp.
#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/global_timer.cuh"

namespace xb {
namespace {

__global__ void blocking_kernel(const volatile int* release_flag, volatile int* timed_out_flag,
                                std::int64_t timeout_ns) {
  const std::uint64_t start = global_timer_ns();
  const auto limit = static_cast<std::uint64_t>(timeout_ns);
  while (*release_flag == 0) {
    if (global_timer_ns() - start >= limit) {
      *timed_out_flag = 1;
      __threadfence_system();
      return;
    }
  }
}

}  // namespace

namespace detail {

void launch_blocking_kernel(const int* release_flag, int* timed_out_flag, std::int64_t timeout_ns,
                            cudaStream_t stream) {
  blocking_kernel<<<1, 1, 0, stream>>>(release_flag, timed_out_flag, timeout_ns);
  XB_CUDA_LAST();
}

}  // namespace detail
}  // namespace xb
