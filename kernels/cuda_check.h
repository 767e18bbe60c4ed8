// Error checks for the CUDA runtime and cuBLAS/cuBLASLt: one macro per API family, after
// nvbench/cuda_call.cuh. A failed call throws xb::CudaError (or its subclass xb::CublasError) whose
// message reads "file:line: <call text> failed: <error name>: <error string>". Destructors use
// XB_CUDA_NOTHROW, which prints the same message to stderr and never throws.
//
// A sticky error (is_sticky: a device fault) loses the process's CUDA context: every later call
// fails with the same error. The checks note the first one they see (cuda_context_lost), and
// from then on the no-throw checks stay quiet and the RAII owners (cuda_raii.h) skip their
// releases: the fault is reported once, where it happened, not again by every destructor.
#pragma once

#include <atomic>
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
  /// `what` as above; `code` the runtime's status (is_sticky(code): the context is lost).
  CudaError(const std::string& what, cudaError_t code) : std::runtime_error(what), code_(code) {}
  /// The CUDA runtime's status; cudaSuccess where none applies (a cuBLAS status, a check of
  /// crossbench's own).
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_ = cudaSuccess;
};

/// A cuBLAS or cuBLASLt call failed (same message format; also catchable as CudaError).
class CublasError : public CudaError {
 public:
  using CudaError::CudaError;
};

/// Whether `status` is a sticky error: the CUDA context of the process is lost, every later CUDA
/// call fails with the same error, and only a new process can use the device again. The list is
/// the runtime's own: the errors whose documentation in driver_types.h (CUDA 13.0's
/// cudaError_enum) says "This leaves the process in an inconsistent state and any further CUDA
/// work will return the same error. To continue using CUDA, the process must be terminated and
/// relaunched" (illegal address, launch timeout, hardware stack error, illegal instruction,
/// misaligned address, invalid address space, invalid PC, launch failure, tensor memory leak,
/// contained error, external device error) or that "the device cannot be used again" (a device
/// assert), plus an uncorrectable ECC error, which leaves the context's memory corrupt.
/// cudaErrorNotReady, a failed allocation, a bad argument and the like are not sticky.
inline bool is_sticky(cudaError_t status) noexcept {
  switch (status) {
    case cudaErrorECCUncorrectable:
    case cudaErrorContained:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorExternalDevice:
      return true;
    default:
      return false;
  }
}

namespace detail {

/// The process-wide record behind cuda_context_lost and cuda_hung_s (one per process: an inline
/// variable of a header that only static libraries include).
struct CudaLoss {
  std::atomic<int> sticky{cudaSuccess};  ///< the first sticky error seen, as int
  std::atomic<double> hung_s{0};         ///< > 0: a wait gave up after this many seconds
};
inline CudaLoss g_cuda_loss;

}  // namespace detail

/// Notes `status` when it is sticky (the first sticky error is kept); returns is_sticky(status).
/// XB_CUDA and XB_CUDA_NOTHROW call it on every failure.
inline bool note_cuda_status(cudaError_t status) noexcept {
  if (!is_sticky(status)) return false;
  int none = cudaSuccess;
  detail::g_cuda_loss.sticky.compare_exchange_strong(none, static_cast<int>(status));
  return true;
}

/// The first sticky error noted in this process (the CUDA context is lost), or cudaSuccess.
inline cudaError_t cuda_context_lost() noexcept { return static_cast<cudaError_t>(detail::g_cuda_loss.sticky.load()); }

/// Notes that a wait for the device gave up after `limit_s` seconds (a call that never finished,
/// kernels/cuda_wait.h): the device is held by work that may never end, so every call that waits
/// for it (cudaFree, cudaFreeHost, a synchronize) would block. The first note is kept.
inline void note_cuda_hang(double limit_s) noexcept {
  double none = 0;
  detail::g_cuda_loss.hung_s.compare_exchange_strong(none, limit_s > 0 ? limit_s : 1e-9);
}

/// The limit, s, after which a wait gave up (note_cuda_hang), or 0 when none did.
inline double cuda_hung_s() noexcept { return detail::g_cuda_loss.hung_s.load(); }

/// True once the context is lost or the device hung: nothing may wait for it or free on it any
/// more, and the no-throw checks and RAII owners stay quiet.
inline bool cuda_unusable() noexcept { return cuda_context_lost() != cudaSuccess || cuda_hung_s() > 0; }

namespace detail {

/// "file:line: call failed: name: string".
inline std::string format_api_failure(const char* file, int line, const char* call, const char* name,
                                      const char* description) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + name + ": " + description;
}

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  note_cuda_status(status);
  throw CudaError(format_api_failure(file, line, call, cudaGetErrorName(status), cudaGetErrorString(status)), status);
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw CublasError(format_api_failure(file, line, call, cublasGetStatusName(status), cublasGetStatusString(status)));
}

/// Prints the failure, unless the context is lost or the device hung (then the failure follows
/// from that, which is reported once where it happened).
inline void report_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept {
  if (note_cuda_status(status) || cuda_unusable()) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s: %s\n", file, line, call, cudaGetErrorName(status),
               cudaGetErrorString(status));
}

inline void report_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) noexcept {
  if (cuda_unusable()) return;  // as report_cuda_error
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

/// For destructors and other noexcept paths: prints the failure to stderr (nothing once the context
/// is lost or the device hung: cuda_unusable), never throws.
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
