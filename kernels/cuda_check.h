// Error checks for the CUDA runtime and cuBLAS/cuBLASLt: one macro per API family, after
// nvbench/cuda_call.cuh. A failed call throws xb::CudaError (or its subclass xb::CublasError) whose
// message reads "file:line: <call text> failed: <error name>: <error string>". Destructors use
// XB_CUDA_NOTHROW, which prints the same message to stderr and never throws.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

namespace xb {

/// A CUDA runtime call (or a kernel launch) failed. what() is
/// "file:line: <call text> failed: <error name>: <error string>".
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A cuBLAS or cuBLASLt call failed (same message format; also catchable as CudaError).
class CublasError : public CudaError {
 public:
  using CudaError::CudaError;
};

namespace detail {

/// "file:line: call failed: name: string".
inline std::string format_api_failure(const char* file, int line, const char* call, const char* name,
                                      const char* description) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + name + ": " + description;
}

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw CudaError(format_api_failure(file, line, call, cudaGetErrorName(status), cudaGetErrorString(status)));
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw CublasError(format_api_failure(file, line, call, cublasGetStatusName(status), cublasGetStatusString(status)));
}

inline void report_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "%s:%d: %s failed: %s: %s\n", file, line, call, cudaGetErrorName(status),
               cudaGetErrorString(status));
}

inline void report_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "%s:%d: %s failed: %s: %s\n", file, line, call, cublasGetStatusName(status),
               cublasGetStatusString(status));
}

}  // namespace detail
}  // namespace xb

/// Evaluates a cudaError_t-returning call; throws xb::CudaError unless it is cudaSuccess.
#define XB_CUDA(call)                                                             \
  do {                                                                            \
    const cudaError_t xb_cuda_status_ = (call);                                   \
    if (xb_cuda_status_ != cudaSuccess) {                                         \
      ::xb::detail::throw_cuda_error(xb_cuda_status_, #call, __FILE__, __LINE__); \
    }                                                                             \
  } while (false)

/// Evaluates a cublasStatus_t-returning call (cuBLAS or cuBLASLt); throws xb::CublasError unless
/// it is CUBLAS_STATUS_SUCCESS.
#define XB_CUBLAS(call)                                                               \
  do {                                                                                \
    const cublasStatus_t xb_cublas_status_ = (call);                                  \
    if (xb_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                 \
      ::xb::detail::throw_cublas_error(xb_cublas_status_, #call, __FILE__, __LINE__); \
    }                                                                                 \
  } while (false)

/// For destructors and other noexcept paths: prints the failure to stderr, never throws.
#define XB_CUDA_NOTHROW(call)                                                      \
  do {                                                                             \
    const cudaError_t xb_cuda_status_ = (call);                                    \
    if (xb_cuda_status_ != cudaSuccess) {                                          \
      ::xb::detail::report_cuda_error(xb_cuda_status_, #call, __FILE__, __LINE__); \
    }                                                                              \
  } while (false)

/// cuBLAS/cuBLASLt counterpart of XB_CUDA_NOTHROW.
#define XB_CUBLAS_NOTHROW(call)                                                        \
  do {                                                                                 \
    const cublasStatus_t xb_cublas_status_ = (call);                                   \
    if (xb_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                  \
      ::xb::detail::report_cublas_error(xb_cublas_status_, #call, __FILE__, __LINE__); \
    }                                                                                  \
  } while (false)

/// After a kernel launch (<<<...>>>): throws xb::CudaError if the launch failed
/// (cudaGetLastError, which also clears a non-sticky error). Does not synchronize, so errors raised
/// while the kernel runs surface at the next synchronizing call.
#define XB_CUDA_LAST() XB_CUDA(cudaGetLastError())
