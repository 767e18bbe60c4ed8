// Host-side launch helpers shared by the one-item-per-thread kernels (kernels/add.cu,
// kernels/copy.cu): 16-byte alignment, the device's grid limit and a data-sized grid.
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "kernels/cuda_check.h"

namespace xb {

/// Whether `p` is 16-byte aligned (a uint4 load or store is allowed there).
inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

/// The current device's maximum grid x (cudaDevAttrMaxGridDimX). Throws CudaError on a failed
/// query or a limit below 1; `caller` starts that message.
inline int device_max_grid_x(const char* caller) {
  int device = 0;
  XB_CUDA(cudaGetDevice(&device));
  int limit = 0;
  XB_CUDA(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxGridDimX, device));
  if (limit < 1) {
    throw CudaError(std::string(caller) + ": device " + std::to_string(device) + " reports a maximum grid x of " +
                    std::to_string(limit));
  }
  return limit;
}

/// Blocks of `threads_per_block` for one item per thread, capped at `max_blocks`; at least 1.
inline unsigned int grid_for(std::int64_t items, int threads_per_block, int max_blocks) {
  const std::int64_t needed = (items + threads_per_block - 1) / threads_per_block;
  const std::int64_t blocks = needed < max_blocks ? needed : max_blocks;
  return static_cast<unsigned int>(blocks < 1 ? 1 : blocks);
}

}  // namespace xb
