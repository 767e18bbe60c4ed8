// Our device-to-device copy kernel: the SM-side counterpart of cudaMemcpyAsync, with the add
// kernel's access pattern (kernels/add.h). bench uses the better of the two as the cold-mode
// bandwidth bound (bench/core/fixtures.h: measure_copy_bandwidth), because cudaMemcpyAsync alone was
// beaten by our add kernel on the H200.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace xb {

/// Enqueues dst[i] = src[i] for the `bytes` bytes i in [0, bytes) on `stream`; src and dst are
/// device pointers that must not overlap. When both are 16-byte aligned each thread copies one
/// 16-byte vector (uint4) per step and the last bytes % 16 bytes take a byte path; otherwise the
/// whole range is copied a byte per thread per step. The grid has one thread per vector (per byte
/// on the byte path), up to `max_blocks` blocks of 256 threads; a grid-stride loop covers the
/// rest. max_blocks == 0 means the device's grid x limit (cudaDevAttrMaxGridDimX, queried on
/// every call); tests pass a small cap to exercise the loop. bytes == 0 launches nothing and makes
/// no CUDA call. Throws CudaError if a query or the launch fails, std::invalid_argument for
/// max_blocks < 0 or bytes above INT64_MAX.
void launch_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream, int max_blocks = 0);

}  // namespace xb
