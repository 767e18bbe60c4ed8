// Host fp64 references for the workloads and the output check behind Workload::verify().
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/workload.h"

namespace xb {

/// Device tensors of one workload (row-major, contiguous); unused ones stay nullptr.
struct WorkloadTensors {
  const void* a = nullptr;     ///< add: a[n,n]; GEMMs: A[n,n]
  const void* b = nullptr;     ///< add: b[n,n]; GEMMs: B[n,n]
  const void* bias = nullptr;  ///< addmm: bias[n,n]; addmm_bias1d: bias[n]; else unused
  void* out = nullptr;         ///< out[n,n]
};

/// Bound on ||out - ref||_2 / ||ref||_2 for `op` in `dtype` (see reference.cpp for the
/// derivation). add: bf16 4e-3, fp16 1e-3, fp32 1e-6; GEMMs: bf16 1e-2, fp16 2e-3, fp32 1e-4.
double verification_tolerance(Op op, DType dtype);

/// Output rows that verification compares, ascending: every row for n <= 256, else 16 rows
/// spread evenly from 0 to n-1 (row_i = i (n-1) / 15, first and last included). Each checked row
/// is checked in full (all n columns). Throws std::invalid_argument for n < 1.
std::vector<std::int64_t> verification_rows(std::int64_t n);

/// Fills out[n,n] with 0xFF bytes (NaN in bf16, fp16 and fp32), calls `run` (which enqueues one
/// call of the op on `stream`), synchronizes `stream`, copies back the checked rows of out and the
/// inputs they depend on (add: the same rows of a, b; GEMMs: the same rows of A, all of B, the
/// bias rows or vector), computes them on the host in fp64 from those exact inputs, and returns
/// ||out - ref||_2 / ||ref||_2 over the checked elements. Any NaN/Inf in out fails. `detail` says
/// what was checked and where the largest error (or first non-finite value) is, with expected and
/// found values. Host cost: 16 n^2 multiply-adds for sampled GEMMs (about 1-3 s at n = 16384).
/// Throws CudaError on CUDA failure.
Verification verify_against_reference(Op op, DType dtype, std::int64_t n, const WorkloadTensors& tensors,
                                      cudaStream_t stream, const std::function<void()>& run);

/// Copies rows [row_begin, row_end) of a device row-major [rows, cols] matrix of `dtype` to the
/// host as double (exact: every bf16/fp16/fp32 value is a double). Synchronous. Throws CudaError.
std::vector<double> copy_rows_to_host(const void* device, DType dtype, std::int64_t cols, std::int64_t row_begin,
                                      std::int64_t row_end);

}  // namespace xb
