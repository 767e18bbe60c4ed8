// Read-only L2 flush kernel (see l2_read.h): a grid-stride loop of plain 16-byte loads
// (ld.global.v4, L2-allocating; not the .nc path, not evict-first), XOR-reduced per thread.
#include <cstdint>
#include <stdexcept>

#include <cuda_runtime.h>

#include "kernels/cuda_check.h"
#include "kernels/l2_read.h"
#include "kernels/launch_grid.h"

namespace xb {
namespace {

constexpr int kReadThreadsPerBlock = 256;
// A grid of 4096 x 256 threads covers 16 MiB per step: a 2 x L2 buffer (100 MiB on an H200) in a
// few steps, every SM busy.
constexpr int kReadMaxBlocks = 4096;
// What the loads never XOR to for the flush buffer (filled with one byte value: each vector's four
// equal words XOR to 0); the compiler cannot know it, so it keeps the loads.
constexpr unsigned int kImpossible = 0x9e3779b9u;

__global__ void __launch_bounds__(kReadThreadsPerBlock)
    l2_read_kernel(const uint4* buf, std::int64_t vectors, unsigned int* sink) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned int acc = 0;
  for (std::int64_t i = first; i < vectors; i += stride) {
    const uint4 v = buf[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == kImpossible) *sink = acc;
}

}  // namespace

void launch_l2_read(const void* buf, std::size_t bytes, unsigned int* sink, cudaStream_t stream) {
  if (!aligned16(buf)) throw std::invalid_argument("launch_l2_read: the buffer is not 16-byte aligned");
  const auto vectors = static_cast<std::int64_t>(bytes / 16);
  if (vectors == 0) return;
  const unsigned int blocks = grid_for(vectors, kReadThreadsPerBlock, kReadMaxBlocks);
  l2_read_kernel<<<blocks, kReadThreadsPerBlock, 0, stream>>>(static_cast<const uint4*>(buf), vectors, sink);
  XB_CUDA(cudaGetLastError());
}

}  // namespace xb
