// cuBLASLt GEMM owner (see gemm.h for the row-major -> column-major mapping).
#include "kernels/gemm.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace xb {
namespace {

std::string describe(const GemmProblem& p) {
  return std::string(to_string(p.dtype)) + " GEMM m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) +
         " k=" + std::to_string(p.k) + " beta=" + std::to_string(p.beta) + (p.bias != nullptr ? " epilogue=bias" : "");
}

const GemmProblem& validated(const GemmProblem& p) {
  if (p.m < 1 || p.n < 1 || p.k < 1) {
    throw std::invalid_argument("LtGemm: sizes must be positive: " + describe(p));
  }
  if (p.a == nullptr || p.b == nullptr || p.out == nullptr) {
    throw std::invalid_argument("LtGemm: null operand pointer: " + describe(p));
  }
  if (p.beta != 0.0f && p.beta != 1.0f) {
    throw std::invalid_argument("LtGemm: beta must be 0 or 1: " + describe(p));
  }
  return p;
}

// Largest power of two (<= 256, cuBLASLt's default requirement) dividing the address, in bytes.
std::uint32_t alignment_bytes(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t alignment = 256;
  while (alignment > 1 && address % alignment != 0) alignment /= 2;
  return alignment;
}

std::uint64_t u64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

}  // namespace

cudaDataType_t cuda_data_type(DType dtype) {
  switch (dtype) {
    case DType::BF16:
      return CUDA_R_16BF;
    case DType::FP16:
      return CUDA_R_16F;
    case DType::FP32:
      return CUDA_R_32F;
  }
  throw std::invalid_argument("cuda_data_type: invalid dtype");
}

LtGemm::LtGemm(const GemmProblem& problem)
    : problem_(validated(problem)),
      beta_(problem.beta),
      handle_(),
      workspace_(kGemmWorkspaceBytes),
      // fp32 accumulation and fp32 alpha/beta for every dtype; CUBLAS_COMPUTE_32F (not
      // CUBLAS_COMPUTE_32F_FAST_TF32) keeps fp32 GEMMs off TF32, as PyTorch's default
      // torch.backends.cuda.matmul.allow_tf32 = False.
      desc_(CUBLAS_COMPUTE_32F, CUDA_R_32F),
      // Column-major view (gemm.h): "A" = our b as N x K (ld N), "B" = our a as K x M (ld K),
      // C = D = our out as N x M (ld N).
      layout_a_(cuda_data_type(problem.dtype), u64(problem.n), u64(problem.k), problem.n),
      layout_b_(cuda_data_type(problem.dtype), u64(problem.k), u64(problem.m), problem.k),
      layout_c_(cuda_data_type(problem.dtype), u64(problem.n), u64(problem.m), problem.n),
      preference_() {
  const cublasOperation_t no_transpose = CUBLAS_OP_N;
  desc_.set(CUBLASLT_MATMUL_DESC_TRANSA, no_transpose);
  desc_.set(CUBLASLT_MATMUL_DESC_TRANSB, no_transpose);
  if (problem_.bias != nullptr) {
    // Bias vector of length = rows of the column-major D = N = columns of our row-major out, so
    // bias[j] is added to out[i, j] for every row i. Bias type = output type.
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    desc_.set(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
    desc_.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, problem_.bias);
    const auto bias_type = static_cast<std::int32_t>(cuda_data_type(problem_.dtype));
    desc_.set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type);
  }

  const std::uint64_t workspace_limit = kGemmWorkspaceBytes;
  preference_.set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace_limit);
  // As PyTorch (at::cuda::blas, bgemm_internal_cublaslt): tell the heuristic the operands' actual
  // alignment, so it never picks a kernel that needs more than they have.
  preference_.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_bytes(problem_.b));
  preference_.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_bytes(problem_.a));
  preference_.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_bytes(problem_.out));
  preference_.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_bytes(problem_.out));

  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_.get(), desc_.get(), layout_a_.get(), layout_b_.get(), layout_c_.get(),
                                     layout_c_.get(), preference_.get(), 1, &result, &returned);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && returned == 0)) {
    throw CublasError("cublasLtMatmulAlgoGetHeuristic returned no algorithm for " + describe(problem_) +
                      " (workspace limit " + std::to_string(kGemmWorkspaceBytes) + " bytes)");
  }
  XB_CUBLAS(status);
  XB_CUBLAS(result.state);
  algo_ = result.algo;
  algo_workspace_bytes_ = result.workspaceSize;
  algo_waves_ = result.wavesCount;
}

void LtGemm::enqueue(cudaStream_t stream) const {
  XB_CUBLAS(cublasLtMatmul(handle_.get(), desc_.get(), &alpha_, problem_.b, layout_a_.get(), problem_.a,
                           layout_b_.get(), &beta_, problem_.out, layout_c_.get(), problem_.out, layout_c_.get(),
                           &algo_, workspace_.get(), kGemmWorkspaceBytes, stream));
}

}  // namespace xb
