// Public interface of the GPU workloads benchmarked by crossbench: matmul, add, addmm (2D bias,
// copy + GEMM with beta = 1) and addmm_bias1d (cuBLASLt bias epilogue). Host code only needs this
// header and the CUDA runtime's stream type.
//
// Layout: every tensor is row-major and contiguous. For size n: matmul C[n,n] = A[n,n] x B[n,n];
// add out[n,n] = a[n,n] + b[n,n]; addmm out[n,n] = bias[n,n] + A x B; addmm_bias1d
// out[n,n] = A x B + bias[n] broadcast along rows (bias[j] is added to column j, as in
// torch.nn.functional.linear).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <cuda_runtime_api.h>

namespace xb {

/// Element type. Arithmetic is in fp32 for all three (bf16/fp16 GEMMs accumulate in fp32, no TF32).
enum class DType { BF16, FP16, FP32 };
/// "bf16", "fp16", "fp32".
const char* to_string(DType dtype);
/// Parses "bf16" | "fp16" | "fp32"; throws std::invalid_argument naming the value otherwise.
DType parse_dtype(const std::string& name);
/// Bytes per element: 2, 2, 4.
std::size_t dtype_bytes(DType dtype);

enum class Op { Matmul, Add, Addmm, AddmmBias1d };
/// crossbench's own ops, in the order bench runs them: the table of built-in workloads. Each is
/// registered as a benchmark through the public measuring API (bench/run/builtin_ops.cpp), so
/// adding an op is one enumerator here plus its cases (name, FLOPs, bytes, workload).
inline constexpr Op kAllOps[] = {Op::Matmul, Op::Add, Op::Addmm, Op::AddmmBias1d};
/// The dtypes every built-in op takes, default first.
inline constexpr DType kAllDTypes[] = {DType::BF16, DType::FP16, DType::FP32};
/// "matmul", "add", "addmm", "addmm_bias1d".
const char* to_string(Op op);
/// Parses an op name; throws std::invalid_argument naming the value otherwise.
Op parse_op(const std::string& name);

/// Floating-point operations of one call at size n: GEMMs 2 n^3 (+ n^2 for the bias add),
/// add n^2. Source: the usual GEMM count (one multiply + one add per inner-product term).
double op_flops(Op op, std::int64_t n);
/// Minimum bytes moved by one call (each input read once, each output written once):
/// matmul 3 n^2 e; add 3 n^2 e; addmm 4 n^2 e + the bias copy's 2 n^2 e; addmm_bias1d 3 n^2 e + n e,
/// where e = dtype_bytes.
double op_bytes(Op op, DType dtype, std::int64_t n);
/// Device memory a workload of this shape allocates, including the cuBLASLt workspace, in bytes.
std::size_t workload_device_bytes(Op op, DType dtype, std::int64_t n);

/// Result of checking a workload's output against a host fp64 reference.
struct Verification {
  bool passed = false;
  double rel_error = 0;  ///< ||out - ref||_2 / ||ref||_2 over the checked elements
  double tolerance = 0;  ///< bound used for this dtype/op
  std::int64_t checked_elements = 0;
  std::string detail;  ///< e.g. "full check" or "sampled 16 rows"
};

/// One op x dtype x size with its device buffers, random inputs and library handles, all owned
/// (RAII). Construction allocates and fills inputs with uniform random values in [-1, 1) from a
/// counter-based generator on the device (never zeros or constants).
class Workload {
 public:
  virtual ~Workload() = default;
  /// Enqueues one call on the workload's stream. Throws CudaError/CublasError on API failure.
  virtual void enqueue() = 0;
  /// Poisons the output, runs one call, synchronizes, and compares with the host fp64 reference
  /// (every element for n <= 256, else 16 sampled rows). Tolerances in the implementation cite
  /// their source.
  virtual Verification verify() = 0;
  virtual cudaStream_t stream() const = 0;
  Op op() const { return op_; }
  DType dtype() const { return dtype_; }
  std::int64_t n() const { return n_; }

 protected:
  Workload(Op op, DType dtype, std::int64_t n) : op_(op), dtype_(dtype), n_(n) {}

 private:
  Op op_;
  DType dtype_;
  std::int64_t n_;
};

/// Creates a workload on the current device, using `stream` (not owned; must outlive it).
/// Throws std::invalid_argument for n < 1, CudaError on allocation failure.
std::unique_ptr<Workload> make_workload(Op op, DType dtype, std::int64_t n, cudaStream_t stream);

}  // namespace xb
