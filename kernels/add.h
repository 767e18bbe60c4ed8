// Our elementwise add, out = a + b, for bf16, fp16 and fp32 (the `add` workload).
//
// Semantics match PyTorch's torch.add for these dtypes: each element is converted to fp32, added in
// fp32 and rounded once to the output dtype (round to nearest even), so results are bit-identical
// to at::native::CUDAFunctor_add with alpha = 1.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/workload.h"

namespace xb {

/// Launch geometry of the add kernels on one device. A launch uses one thread per 16-byte vector
/// (one per element on the scalar path), up to max_blocks blocks; past that, the kernels'
/// grid-stride loops cover the rest. Why not a grid of SMs x resident blocks: see add.cu.
struct AddLaunchConfig {
  int max_blocks = 0;         ///< cap on blocks per launch (the device's grid x limit)
  int threads_per_block = 0;  ///< 256 (the kernels' launch bound: more fails to launch)
};

/// Queries the current device once (cudaDevAttrMaxGridDimX); call at setup, not per launch.
/// Throws CudaError.
AddLaunchConfig add_launch_config(DType dtype);

/// Enqueues out[i] = a[i] + b[i] for i in [0, count) on `stream`; a, b, out are device pointers
/// to `count` elements of `dtype`; out must not overlap a or b. When all three
/// pointers are 16-byte aligned each thread moves 16 bytes per load/store (8 bf16/fp16 or 4 fp32
/// elements) and the last count % 8 (or % 4) elements take a scalar path; otherwise the whole
/// range takes the scalar path. count == 0 launches nothing. Throws CudaError if the launch fails
/// and std::invalid_argument for count < 0.
void launch_add(DType dtype, const void* a, const void* b, void* out, std::int64_t count,
                cudaStream_t stream, const AddLaunchConfig& config);

}  // namespace xb
