// Device-to-device copy kernel (see copy.h).
//
// Design: the add kernel's (kernels/add.cu), with the arithmetic left out: each thread loads one
// 16-byte vector through the read-only path (const __restrict__) and stores it; consecutive
// threads touch consecutive vectors (coalesced). The grid covers the whole range, one vector per
// thread (on the H200 a data-sized grid beat a persistent grid of SMs x resident blocks by about
// 6% for add, add.cu's table); a grid-stride loop covers what exceeds the grid limit. The tail
// (bytes % 16, at most 15 bytes) is copied a byte per thread by the lowest thread indices after
// the loop. Pointers that are not both 16-byte aligned take a byte-per-thread kernel: correct for
// any alignment, not fast (bench only times aligned cudaMalloc buffers).
//
// Resource use, nvcc 13.0 -O3 -arch=sm_90 -Xptxas -v (the Release build's flags): both kernels
// 32 registers, 0 bytes stack, 0 spill stores/loads; the vector loop is ld.global.nc.v4.u32 +
// st.global.v4.u32 (unrolled by 4). On an H200 (2026-11-29, 256 MiB, best of 20 back-to-back
// calls, read + written): 4145 GB/s against cudaMemcpyAsync's 4164 GB/s in the same run
// (results/h200/timing-2026-11-29-rerun/logs/cold-on.log).
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "kernels/copy.h"
#include "kernels/cuda_check.h"
#include "kernels/launch_grid.h"

namespace xb {
namespace {

constexpr int kCopyThreadsPerBlock = 256;
constexpr int kVectorBytes = 16;

// Requires src, dst 16-byte aligned. Vectors [0, bytes / 16) in the grid-stride loop, then the
// remaining bytes % 16 bytes, one per thread, by the lowest thread indices.
__global__ void __launch_bounds__(kCopyThreadsPerBlock)
    copy_vectorized_kernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, std::int64_t bytes) {
  const std::int64_t vectors = bytes / kVectorBytes;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const auto* src_vec = reinterpret_cast<const uint4*>(src);
  auto* dst_vec = reinterpret_cast<uint4*>(dst);
  for (std::int64_t i = first; i < vectors; i += stride) {
    dst_vec[i] = src_vec[i];
  }
  const std::int64_t tail = vectors * kVectorBytes + first;
  if (tail < bytes) {
    dst[tail] = src[tail];
  }
}

// Any alignment: one byte per thread per step.
__global__ void __launch_bounds__(kCopyThreadsPerBlock)
    copy_bytes_kernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, std::int64_t bytes) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first; i < bytes; i += stride) {
    dst[i] = src[i];
  }
}

}  // namespace

void launch_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream, int max_blocks) {
  if (max_blocks < 0) {
    throw std::invalid_argument("launch_copy: max_blocks " + std::to_string(max_blocks) + " < 0");
  }
  if (bytes == 0) return;
  if (bytes > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())) {
    throw std::invalid_argument("launch_copy: " + std::to_string(bytes) + " bytes is too many");
  }
  const int cap = max_blocks > 0 ? max_blocks : device_max_grid_x("launch_copy");
  const auto count = static_cast<std::int64_t>(bytes);
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  const dim3 block(kCopyThreadsPerBlock);
  if (aligned16(src) && aligned16(dst)) {
    // The tail needs bytes % 16 (< 16) threads, which block 0 always has.
    const dim3 grid(grid_for(count / kVectorBytes, kCopyThreadsPerBlock, cap));
    copy_vectorized_kernel<<<grid, block, 0, stream>>>(s, d, count);
  } else {
    const dim3 grid(grid_for(count, kCopyThreadsPerBlock, cap));
    copy_bytes_kernel<<<grid, block, 0, stream>>>(s, d, count);
  }
  XB_CUDA_LAST();
}

}  // namespace xb
