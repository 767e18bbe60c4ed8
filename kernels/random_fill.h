// Device-side random inputs: uniform values in [-1, 1) from a counter-based hash, so any element
// can be regenerated from (seed, index) alone and no state is stored.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/workload.h"

namespace xb {

/// Enqueues on `stream`: dst[i] = 2 u(seed, i) - 1 for i in [0, count), where u is the top 24 bits
/// of splitmix64's output function applied to splitmix64(seed) + (i + 1) * 0x9E3779B97F4A7C15
/// (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014), scaled by
/// 2^-24. Values are multiples of 2^-23 in [-1, 1) (exactly 0 with probability 2^-24); bf16/fp16
/// round toward zero, so they stay in [-1, 1). Use a different seed per tensor. Throws CudaError
/// on launch failure, std::invalid_argument for count < 0.
void launch_random_fill(DType dtype, void* dst, std::int64_t count, std::uint64_t seed, cudaStream_t stream);

}  // namespace xb
