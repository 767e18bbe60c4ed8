// The spinning delay kernel (see spin_delay.h).
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "kernels/cuda_check.h"
#include "kernels/global_timer.cuh"
#include "kernels/spin_delay.h"

namespace xb {
namespace {

__global__ void spin_delay_kernel(std::uint64_t delay_ns) {
  const std::uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < delay_ns) {}
}

}  // namespace

void enqueue_spin_delay(cudaStream_t stream, std::int64_t delay_ns) {
  if (delay_ns < 0 || delay_ns > kMaxSpinDelayNs) {
    throw std::invalid_argument("spin delay of " + std::to_string(delay_ns) + " ns is outside [0, " +
                                std::to_string(kMaxSpinDelayNs) + "] ns");
  }
  spin_delay_kernel<<<1, 1, 0, stream>>>(static_cast<std::uint64_t>(delay_ns));
  XB_CUDA_LAST();
}

void warm_up_spin_delay(cudaStream_t stream) {
  enqueue_spin_delay(stream, 0);
  XB_CUDA(cudaStreamSynchronize(stream));
}

}  // namespace xb
