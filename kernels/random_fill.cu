// Counter-based uniform random fill (see random_fill.h).
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/cuda_check.h"
#include "kernels/random_fill.h"

namespace xb {
namespace {

constexpr int kFillThreadsPerBlock = 256;
constexpr unsigned int kFillMaxBlocks = 4096;  // grid-stride beyond 1M threads
constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;

// splitmix64's output function (Steele et al. 2014; constants from Stafford's "Mix13").
__host__ __device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ float uniform_pm1(std::uint64_t key, std::uint64_t index) {
  const std::uint64_t h = mix64(key + (index + 1) * kGoldenGamma);
  // Top 24 bits -> [0, 1) exactly representable in fp32, then [-1, 1) with step 2^-23.
  const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
  return 2.0f * u - 1.0f;
}

__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rz(v); }
__device__ __forceinline__ void store(__half* p, float v) { *p = __float2half_rz(v); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }

template <typename T>
__global__ void __launch_bounds__(kFillThreadsPerBlock)
    random_fill_kernel(T* __restrict__ dst, std::int64_t count, std::uint64_t key) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first; i < count; i += stride) {
    store(dst + i, uniform_pm1(key, static_cast<std::uint64_t>(i)));
  }
}

template <typename T>
void launch_typed(void* dst, std::int64_t count, std::uint64_t seed, cudaStream_t stream) {
  const std::int64_t needed = (count + kFillThreadsPerBlock - 1) / kFillThreadsPerBlock;
  const unsigned int blocks = needed < kFillMaxBlocks ? static_cast<unsigned int>(needed) : kFillMaxBlocks;
  random_fill_kernel<T><<<blocks, kFillThreadsPerBlock, 0, stream>>>(static_cast<T*>(dst), count, mix64(seed));
  XB_CUDA_LAST();
}

}  // namespace

void launch_random_fill(DType dtype, void* dst, std::int64_t count, std::uint64_t seed, cudaStream_t stream) {
  if (count < 0) {
    throw std::invalid_argument("launch_random_fill: count " + std::to_string(count) + " < 0");
  }
  if (count == 0) return;
  switch (dtype) {
    case DType::BF16:
      return launch_typed<__nv_bfloat16>(dst, count, seed, stream);
    case DType::FP16:
      return launch_typed<__half>(dst, count, seed, stream);
    case DType::FP32:
      return launch_typed<float>(dst, count, seed, stream);
  }
  throw std::invalid_argument("launch_random_fill: invalid dtype");
}

}  // namespace xb
