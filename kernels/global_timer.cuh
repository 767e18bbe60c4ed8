// Device-side nanosecond clock shared by the spinning kernels (kernels/blocking.cu,
// kernels/spin_delay.cu).
#pragma once

#include <cstdint>

namespace xb {

/// Global nanosecond timer, common to all SMs (PTX ISA: %globaltimer; its update period is about
/// 1 us on recent GPUs: fine for a timeout or a delay of microseconds).
__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace xb
