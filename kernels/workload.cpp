// The four workloads behind make_workload (see workload.h).
#include "kernels/workload.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/add.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/gemm.h"
#include "kernels/random_fill.h"
#include "kernels/reference.h"

namespace xb {
namespace {

// One seed per input role, so that no two tensors of a workload hold the same values.
constexpr std::uint64_t kSeedA = 0x5eed0001;
constexpr std::uint64_t kSeedB = 0x5eed0002;
constexpr std::uint64_t kSeedBias = 0x5eed0003;

std::size_t matrix_bytes(DType dtype, std::int64_t n) {
  const auto side = static_cast<std::size_t>(n);
  return side * side * dtype_bytes(dtype);
}

// A device tensor of `count` elements filled with uniform [-1, 1) values from `seed`.
DeviceBuffer random_tensor(DType dtype, std::int64_t count, std::uint64_t seed, cudaStream_t stream) {
  DeviceBuffer buffer(static_cast<std::size_t>(count) * dtype_bytes(dtype));
  launch_random_fill(dtype, buffer.get(), count, seed, stream);
  return buffer;
}

/// add: out[n,n] = a[n,n] + b[n,n] with our kernel (add.cu).
class AddWorkload final : public Workload {
 public:
  AddWorkload(DType dtype, std::int64_t n, cudaStream_t stream)
      : Workload(Op::Add, dtype, n),
        stream_(stream),
        config_(add_launch_config(dtype, n * n)),
        a_(random_tensor(dtype, n * n, kSeedA, stream)),
        b_(random_tensor(dtype, n * n, kSeedB, stream)),
        out_(matrix_bytes(dtype, n)) {
    XB_CUDA(cudaStreamSynchronize(stream_));
  }

  void enqueue() override { launch_add(dtype(), a_.get(), b_.get(), out_.get(), n() * n(), stream_, config_); }

  Verification verify() override {
    WorkloadTensors t;
    t.a = a_.get();
    t.b = b_.get();
    t.out = out_.get();
    return verify_against_reference(op(), dtype(), n(), t, stream_, [this] { enqueue(); });
  }

  cudaStream_t stream() const override { return stream_; }

 private:
  cudaStream_t stream_;
  AddLaunchConfig config_;
  DeviceBuffer a_;
  DeviceBuffer b_;
  DeviceBuffer out_;
};

/// matmul, addmm and addmm_bias1d through one cuBLASLt GEMM (gemm.h):
///   matmul:       out = A B                     (beta 0)
///   addmm:        out <- bias2d (D2D copy), then out = A B + out (beta 1), as PyTorch's addmm
///                 with a 2D bias (copy into the result, then a beta = 1 GEMM)
///   addmm_bias1d: out = A B + bias[n] per row   (beta 0, CUBLASLT_EPILOGUE_BIAS), as PyTorch's
///                 addmm with a 1D bias (at::cuda::blas::gemm_and_bias)
class GemmWorkload final : public Workload {
 public:
  GemmWorkload(Op op, DType dtype, std::int64_t n, cudaStream_t stream)
      : Workload(op, dtype, n),
        stream_(stream),
        a_(random_tensor(dtype, n * n, kSeedA, stream)),
        b_(random_tensor(dtype, n * n, kSeedB, stream)),
        bias_(op == Op::Addmm         ? random_tensor(dtype, n * n, kSeedBias, stream)
              : op == Op::AddmmBias1d ? random_tensor(dtype, n, kSeedBias, stream)
                                      : DeviceBuffer()),
        out_(matrix_bytes(dtype, n)),
        gemm_(problem()) {
    XB_CUDA(cudaStreamSynchronize(stream_));
  }

  void enqueue() override {
    if (op() == Op::Addmm) {
      XB_CUDA(cudaMemcpyAsync(out_.get(), bias_.get(), bias_.bytes(), cudaMemcpyDeviceToDevice, stream_));
    }
    gemm_.enqueue(stream_);
  }

  Verification verify() override {
    WorkloadTensors t;
    t.a = a_.get();
    t.b = b_.get();
    t.bias = bias_.get();
    t.out = out_.get();
    return verify_against_reference(op(), dtype(), n(), t, stream_, [this] { enqueue(); });
  }

  cudaStream_t stream() const override { return stream_; }

 private:
  GemmProblem problem() const {
    GemmProblem p;
    p.dtype = dtype();
    p.m = n();
    p.n = n();
    p.k = n();
    p.a = a_.get();
    p.b = b_.get();
    p.out = out_.get();
    p.beta = op() == Op::Addmm ? 1.0f : 0.0f;
    p.bias = op() == Op::AddmmBias1d ? bias_.get() : nullptr;
    return p;
  }

  cudaStream_t stream_;
  DeviceBuffer a_;
  DeviceBuffer b_;
  DeviceBuffer bias_;
  DeviceBuffer out_;
  LtGemm gemm_;  // declared last: destroyed first, before the buffers it points to
};

}  // namespace

std::size_t workload_device_bytes(Op op, DType dtype, std::int64_t n) {
  if (n < 1) throw std::invalid_argument("workload_device_bytes: n " + std::to_string(n) + " < 1");
  const std::size_t mat = matrix_bytes(dtype, n);
  switch (op) {
    case Op::Add:
      return 3 * mat;  // a, b, out
    case Op::Matmul:
      return 3 * mat + kGemmWorkspaceBytes;  // A, B, out
    case Op::Addmm:
      return 4 * mat + kGemmWorkspaceBytes;  // + bias[n,n]
    case Op::AddmmBias1d:                    // + bias[n]
      return 3 * mat + static_cast<std::size_t>(n) * dtype_bytes(dtype) + kGemmWorkspaceBytes;
  }
  throw std::invalid_argument("workload_device_bytes: invalid op");
}

std::unique_ptr<Workload> make_workload(Op op, DType dtype, std::int64_t n, cudaStream_t stream) {
  if (n < 1) throw std::invalid_argument("make_workload: n " + std::to_string(n) + " < 1");
  if (op == Op::Add) return std::make_unique<AddWorkload>(dtype, n, stream);
  return std::make_unique<GemmWorkload>(op, dtype, n, stream);
}

}  // namespace xb
