// The spinning kernel behind BlockingKernel (see blocking.h); host logic in blocking.cpp.
#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/global_timer.cuh"

namespace xb {
namespace {

/// Reads this SM's counters into registers first (clock64 and globaltimer back to back), then
/// stores them into host-mapped memory, `written` last. The stores are posted writes over the bus:
/// they cost the thread a few instructions, not a round trip.
__device__ __forceinline__ void read_sm_counters(volatile SmCounters* out) {
  const auto clock = static_cast<std::uint64_t>(clock64());
  const std::uint64_t time = global_timer_ns();
  std::uint32_t smid = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  out->clock64 = clock;
  out->globaltimer_ns = time;
  out->smid = smid;
  out->written = 1;
}

__global__ void blocking_kernel(const volatile int* release_flag, volatile int* timed_out_flag, BlockReadings* readings,
                                std::int64_t timeout_ns) {
  read_sm_counters(&readings->start);
  const std::uint64_t start = global_timer_ns();
  const auto limit = static_cast<std::uint64_t>(timeout_ns);
  while (*release_flag == 0) {
    if (global_timer_ns() - start >= limit) {
      *timed_out_flag = 1;  // no release reading: the sample fails (release_and_wait_ns throws)
      __threadfence_system();
      return;
    }
  }
  read_sm_counters(&readings->release);
}

}  // namespace

namespace detail {

void launch_blocking_kernel(const int* release_flag, int* timed_out_flag, BlockReadings* readings,
                            std::int64_t timeout_ns, cudaStream_t stream) {
  blocking_kernel<<<1, 1, 0, stream>>>(release_flag, timed_out_flag, readings, timeout_ns);
  XB_CUDA_LAST();
}

}  // namespace detail
}  // namespace xb
