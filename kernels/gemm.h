// cuBLASLt GEMM on row-major operands, one object per problem (after cutlass's profiler: one owner
// of the handle, descriptors, layouts, preference and workspace, freed in reverse order).
//
// Row-major to column-major: cuBLASLt is column-major, and a row-major matrix X[r,c] is the
// column-major matrix X^T[c,r] with the same bytes. So row-major C[M,N] = A[M,K] B[K,N] is
// column-major C^T[N,M] = B^T[N,K] A^T[K,M], computed with no transposes as cuBLASLt's
// m = N, n = M, k = K, its "A" = our B (ld N), its "B" = our A (ld K), C/D ld N. This is the call
// PyTorch makes for torch.matmul on contiguous tensors (kernel names ending in "_NNT").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda_raii.h"
#include "kernels/workload.h"

namespace xb {

/// cuBLASLt workspace per GEMM, bytes: 32 MiB, PyTorch's default on Hopper
/// (aten/src/ATen/cuda/CublasHandlePool.cpp, parseChosenWorkspaceSize: 4096 * 8 * 1024 when the
/// device is sm_90 and CUBLAS_WORKSPACE_CONFIG is unset).
inline constexpr std::size_t kGemmWorkspaceBytes = 32u << 20;

/// One GEMM problem on row-major, contiguous device operands:
/// out[m,n] = a[m,k] x b[k,n] (+ beta * out) (+ bias[n] broadcast down the rows).
struct GemmProblem {
  DType dtype = DType::BF16;   ///< type of a, b, out and bias; accumulation in fp32
  std::int64_t m = 0;          ///< rows of a and out
  std::int64_t n = 0;          ///< columns of b and out
  std::int64_t k = 0;          ///< columns of a = rows of b
  const void* a = nullptr;     ///< device, m x k
  const void* b = nullptr;     ///< device, k x n
  void* out = nullptr;         ///< device, m x n; also C (read) when beta = 1
  float beta = 0;              ///< 0: out = a b; 1: out = a b + out (C = D = out, in place)
  const void* bias = nullptr;  ///< optional device bias[n] (bias[j] added to column j of out) via
                               ///< CUBLASLT_EPILOGUE_BIAS; nullptr: no epilogue
};

/// Owns a cuBLASLt handle, the matmul descriptor (compute CUBLAS_COMPUTE_32F, scale CUDA_R_32F:
/// fp32 accumulation for all dtypes, no TF32 for fp32, as PyTorch by default), the A/B/C layouts,
/// the preference, a kGemmWorkspaceBytes workspace and the algorithm chosen once by
/// cublasLtMatmulAlgoGetHeuristic (its top result), so enqueue() is one cublasLtMatmul call.
/// The operand pointers are fixed at construction (their alignment enters the heuristic).
class LtGemm {
 public:
  /// Builds the descriptors and picks the algorithm. Throws std::invalid_argument for
  /// non-positive sizes or missing pointers, CublasError on cuBLASLt failure or when the heuristic
  /// returns no algorithm, CudaError when the workspace cannot be allocated.
  explicit LtGemm(const GemmProblem& problem);

  /// Enqueues the GEMM on `stream` (cublasLtMatmul with the recorded algorithm and workspace).
  /// Throws CublasError.
  void enqueue(cudaStream_t stream) const;

  const GemmProblem& problem() const noexcept { return problem_; }
  /// Workspace bytes the chosen algorithm needs (<= kGemmWorkspaceBytes).
  std::size_t algo_workspace_bytes() const noexcept { return algo_workspace_bytes_; }
  /// Heuristic's waves count for the chosen algorithm (1.0: one full wave of the device).
  float algo_waves() const noexcept { return algo_waves_; }

 private:
  GemmProblem problem_;
  float alpha_ = 1.0f;
  float beta_ = 0.0f;
  // Creation order; destroyed in reverse.
  CublasLtHandle handle_;
  DeviceBuffer workspace_;
  MatmulDesc desc_;
  MatrixLayout layout_a_;  // cuBLASLt's A = our b
  MatrixLayout layout_b_;  // cuBLASLt's B = our a
  MatrixLayout layout_c_;  // C and D = our out
  MatmulPreference preference_;
  cublasLtMatmulAlgo_t algo_{};
  std::size_t algo_workspace_bytes_ = 0;
  float algo_waves_ = 0;
};

/// cudaDataType_t of a dtype: CUDA_R_16BF, CUDA_R_16F, CUDA_R_32F.
cudaDataType_t cuda_data_type(DType dtype);

}  // namespace xb
