// Move-only RAII owners for CUDA runtime and cuBLASLt objects (after nvbench/cuda_stream.cuh and
// cutlass's profiler, which frees a matmul's descriptors in reverse order of creation).
//
// Every owner: the constructor creates the object and throws xb::CudaError / xb::CublasError on
// failure; the destructor frees it with a no-throw check (a failure is printed to stderr), or,
// once the CUDA context is lost or the device hung (cuda_unusable, cuda_check.h), leaves it to
// the process's end: a lost context fails every release, and a hung device would block the ones
// that wait for it (cudaFree, cudaFreeHost) forever; moving
// leaves the source empty (get() == nullptr), and an empty owner's destructor does nothing. Not
// copyable. Declare owners that depend on each other in creation order, so that C++ destroys them
// in reverse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda_check.h"

namespace xb {

/// Device memory from cudaMalloc, size in bytes; freed with cudaFree. A 0-byte buffer holds
/// nullptr. cudaMalloc's pointers are aligned to at least 256 bytes.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` bytes on the current device; throws CudaError
  /// (e.g. cudaErrorMemoryAllocation).
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) XB_CUDA(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const noexcept { return ptr_; }
  /// The device pointer as T* (no check that bytes() is a multiple of sizeof(T)).
  template <typename T>
  T* get() const noexcept {
    return static_cast<T*>(ptr_);
  }
  /// Size in bytes.
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void reset() noexcept {
    if (ptr_ != nullptr && !cuda_unusable()) XB_CUDA_NOTHROW(cudaFree(ptr_));
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Page-locked host memory from cudaHostAlloc, size in bytes; freed with cudaFreeHost. With
/// `mapped` (cudaHostAllocMapped) the memory is also addressable from the device through
/// device_ptr() (zero-copy; every device access crosses PCIe/C2C).
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  /// Allocates `bytes` (> 0) bytes; throws CudaError.
  explicit PinnedHostBuffer(std::size_t bytes, bool mapped = false) : bytes_(bytes) {
    XB_CUDA(cudaHostAlloc(&host_, bytes, mapped ? cudaHostAllocMapped : cudaHostAllocDefault));
    if (mapped) {
      const cudaError_t status = cudaHostGetDevicePointer(&device_, host_, 0);
      if (status != cudaSuccess) {
        reset();
        XB_CUDA(status);
      }
    }
  }
  ~PinnedHostBuffer() { reset(); }
  PinnedHostBuffer(PinnedHostBuffer&& other) noexcept
      : host_(std::exchange(other.host_, nullptr)),
        device_(std::exchange(other.device_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  PinnedHostBuffer& operator=(PinnedHostBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      host_ = std::exchange(other.host_, nullptr);
      device_ = std::exchange(other.device_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;

  /// Host address.
  void* get() const noexcept { return host_; }
  template <typename T>
  T* get() const noexcept {
    return static_cast<T*>(host_);
  }
  /// Device address of the same memory; nullptr unless constructed with mapped = true.
  void* device_ptr() const noexcept { return device_; }
  template <typename T>
  T* device_ptr() const noexcept {
    return static_cast<T*>(device_);
  }
  /// Size in bytes.
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void reset() noexcept {
    if (host_ != nullptr && !cuda_unusable()) XB_CUDA_NOTHROW(cudaFreeHost(host_));
    host_ = nullptr;
    device_ = nullptr;
    bytes_ = 0;
  }
  void* host_ = nullptr;
  void* device_ = nullptr;
  std::size_t bytes_ = 0;
};

/// A CUDA stream from cudaStreamCreateWithFlags(cudaStreamNonBlocking): it does not synchronize
/// with the legacy default stream. Destroyed with cudaStreamDestroy (pending work still completes).
class Stream {
 public:
  /// Creates a non-blocking stream on the current device; throws CudaError.
  Stream() { XB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { reset(); }
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    if (this != &other) {
      reset();
      stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const noexcept { return stream_; }
  /// cudaStreamSynchronize; throws CudaError (including errors of kernels that ran on it).
  void synchronize() const { XB_CUDA(cudaStreamSynchronize(stream_)); }

 private:
  void reset() noexcept {
    if (stream_ != nullptr && !cuda_unusable()) XB_CUDA_NOTHROW(cudaStreamDestroy(stream_));
    stream_ = nullptr;
  }
  cudaStream_t stream_ = nullptr;
};

/// A CUDA event from cudaEventCreateWithFlags (default flags: timing enabled, so two events give
/// elapsed milliseconds through cudaEventElapsedTime). Destroyed with cudaEventDestroy.
class Event {
 public:
  /// Creates an event; `flags` as for cudaEventCreateWithFlags. Throws CudaError.
  explicit Event(unsigned int flags = cudaEventDefault) { XB_CUDA(cudaEventCreateWithFlags(&event_, flags)); }
  ~Event() { reset(); }
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    if (this != &other) {
      reset();
      event_ = std::exchange(other.event_, nullptr);
    }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const noexcept { return event_; }
  /// cudaEventRecord on `stream`; throws CudaError.
  void record(cudaStream_t stream) const { XB_CUDA(cudaEventRecord(event_, stream)); }
  /// cudaEventSynchronize; throws CudaError.
  void synchronize() const { XB_CUDA(cudaEventSynchronize(event_)); }
  /// Milliseconds from `start` to this event (cudaEventElapsedTime, about 0.5 us resolution);
  /// both must have completed. Throws CudaError.
  float elapsed_ms_since(const Event& start) const {
    float ms = 0;
    XB_CUDA(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

 private:
  void reset() noexcept {
    if (event_ != nullptr && !cuda_unusable()) XB_CUDA_NOTHROW(cudaEventDestroy(event_));
    event_ = nullptr;
  }
  cudaEvent_t event_ = nullptr;
};

/// A cuBLASLt library handle (cublasLtCreate / cublasLtDestroy). One per GEMM owner here.
class CublasLtHandle {
 public:
  /// Throws CublasError (e.g. CUBLAS_STATUS_NOT_INITIALIZED when no device is usable).
  CublasLtHandle() { XB_CUBLAS(cublasLtCreate(&handle_)); }
  ~CublasLtHandle() { reset(); }
  CublasLtHandle(CublasLtHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  CublasLtHandle& operator=(CublasLtHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;

  cublasLtHandle_t get() const noexcept { return handle_; }

 private:
  void reset() noexcept {
    if (handle_ != nullptr && !cuda_unusable()) XB_CUBLAS_NOTHROW(cublasLtDestroy(handle_));
    handle_ = nullptr;
  }
  cublasLtHandle_t handle_ = nullptr;
};

/// A cuBLASLt matmul operation descriptor (cublasLtMatmulDescCreate / Destroy): compute type,
/// scale type (type of alpha and beta), transposes, epilogue, bias pointer.
class MatmulDesc {
 public:
  /// Throws CublasError.
  MatmulDesc(cublasComputeType_t compute_type, cudaDataType_t scale_type) {
    XB_CUBLAS(cublasLtMatmulDescCreate(&desc_, compute_type, scale_type));
  }
  ~MatmulDesc() { reset(); }
  MatmulDesc(MatmulDesc&& other) noexcept : desc_(std::exchange(other.desc_, nullptr)) {}
  MatmulDesc& operator=(MatmulDesc&& other) noexcept {
    if (this != &other) {
      reset();
      desc_ = std::exchange(other.desc_, nullptr);
    }
    return *this;
  }
  MatmulDesc(const MatmulDesc&) = delete;
  MatmulDesc& operator=(const MatmulDesc&) = delete;

  cublasLtMatmulDesc_t get() const noexcept { return desc_; }
  /// cublasLtMatmulDescSetAttribute with sizeof(T) bytes; T must be the attribute's documented
  /// type (e.g. cublasOperation_t, cublasLtEpilogue_t, const void*). Throws CublasError.
  template <typename T>
  void set(cublasLtMatmulDescAttributes_t attribute, const T& value) {
    XB_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, attribute, &value, sizeof(T)));
  }

 private:
  void reset() noexcept {
    if (desc_ != nullptr) XB_CUBLAS_NOTHROW(cublasLtMatmulDescDestroy(desc_));
    desc_ = nullptr;
  }
  cublasLtMatmulDesc_t desc_ = nullptr;
};

/// A cuBLASLt matrix layout (cublasLtMatrixLayoutCreate / Destroy): element type, rows, columns
/// and leading dimension, column-major by default (cuBLAS's convention).
class MatrixLayout {
 public:
  /// `rows` x `cols` column-major matrix with leading dimension `ld` (>= rows), in elements.
  /// Throws CublasError.
  MatrixLayout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
    XB_CUBLAS(cublasLtMatrixLayoutCreate(&layout_, type, rows, cols, ld));
  }
  ~MatrixLayout() { reset(); }
  MatrixLayout(MatrixLayout&& other) noexcept : layout_(std::exchange(other.layout_, nullptr)) {}
  MatrixLayout& operator=(MatrixLayout&& other) noexcept {
    if (this != &other) {
      reset();
      layout_ = std::exchange(other.layout_, nullptr);
    }
    return *this;
  }
  MatrixLayout(const MatrixLayout&) = delete;
  MatrixLayout& operator=(const MatrixLayout&) = delete;

  cublasLtMatrixLayout_t get() const noexcept { return layout_; }

 private:
  void reset() noexcept {
    if (layout_ != nullptr) XB_CUBLAS_NOTHROW(cublasLtMatrixLayoutDestroy(layout_));
    layout_ = nullptr;
  }
  cublasLtMatrixLayout_t layout_ = nullptr;
};

/// A cuBLASLt algorithm-search preference (cublasLtMatmulPreferenceCreate / Destroy): workspace
/// limit, operand alignments.
class MatmulPreference {
 public:
  /// Throws CublasError.
  MatmulPreference() { XB_CUBLAS(cublasLtMatmulPreferenceCreate(&pref_)); }
  ~MatmulPreference() { reset(); }
  MatmulPreference(MatmulPreference&& other) noexcept : pref_(std::exchange(other.pref_, nullptr)) {}
  MatmulPreference& operator=(MatmulPreference&& other) noexcept {
    if (this != &other) {
      reset();
      pref_ = std::exchange(other.pref_, nullptr);
    }
    return *this;
  }
  MatmulPreference(const MatmulPreference&) = delete;
  MatmulPreference& operator=(const MatmulPreference&) = delete;

  cublasLtMatmulPreference_t get() const noexcept { return pref_; }
  /// cublasLtMatmulPreferenceSetAttribute with sizeof(T) bytes; T must be the attribute's
  /// documented type (e.g. std::uint64_t for CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
  /// std::uint32_t for the alignment attributes). Throws CublasError.
  template <typename T>
  void set(cublasLtMatmulPreferenceAttributes_t attribute, const T& value) {
    XB_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref_, attribute, &value, sizeof(T)));
  }

 private:
  void reset() noexcept {
    if (pref_ != nullptr) XB_CUBLAS_NOTHROW(cublasLtMatmulPreferenceDestroy(pref_));
    pref_ = nullptr;
  }
  cublasLtMatmulPreference_t pref_ = nullptr;
};

}  // namespace xb
