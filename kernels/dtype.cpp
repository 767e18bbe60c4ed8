// Names, sizes and operation/byte counts of the workloads (see workload.h). No CUDA calls.
#include <stdexcept>
#include <string>

#include "kernels/workload.h"

namespace xb {

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::BF16:
      return "bf16";
    case DType::FP16:
      return "fp16";
    case DType::FP32:
      return "fp32";
  }
  throw std::invalid_argument("invalid DType value " + std::to_string(static_cast<int>(dtype)));
}

DType parse_dtype(const std::string& name) {
  if (name == "bf16") return DType::BF16;
  if (name == "fp16") return DType::FP16;
  if (name == "fp32") return DType::FP32;
  throw std::invalid_argument("unknown dtype '" + name + "' (expected bf16, fp16, fp32)");
}

std::size_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::BF16:
      return 2;
    case DType::FP16:
      return 2;
    case DType::FP32:
      return 4;
  }
  throw std::invalid_argument("invalid DType value " + std::to_string(static_cast<int>(dtype)));
}

const char* to_string(Op op) {
  switch (op) {
    case Op::Matmul:
      return "matmul";
    case Op::Add:
      return "add";
    case Op::Addmm:
      return "addmm";
    case Op::AddmmBias1d:
      return "addmm_bias1d";
  }
  throw std::invalid_argument("invalid Op value " + std::to_string(static_cast<int>(op)));
}

Op parse_op(const std::string& name) {
  if (name == "matmul") return Op::Matmul;
  if (name == "add") return Op::Add;
  if (name == "addmm") return Op::Addmm;
  if (name == "addmm_bias1d") return Op::AddmmBias1d;
  throw std::invalid_argument("unknown op '" + name + "' (expected matmul, add, addmm, addmm_bias1d)");
}

double op_flops(Op op, std::int64_t n) {
  const double nd = static_cast<double>(n);
  const double gemm = 2.0 * nd * nd * nd;  // n^2 outputs x n terms x (multiply + add)
  switch (op) {
    case Op::Matmul:
      return gemm;
    case Op::Add:
      return nd * nd;
    case Op::Addmm:  // + beta * C: one add per output
    case Op::AddmmBias1d:
      return gemm + nd * nd;  // + bias[j]: one add per output
  }
  throw std::invalid_argument("invalid Op value " + std::to_string(static_cast<int>(op)));
}

double op_bytes(Op op, DType dtype, std::int64_t n) {
  const double e = static_cast<double>(dtype_bytes(dtype));
  const double nd = static_cast<double>(n);
  const double mat = nd * nd * e;  // one n x n tensor
  switch (op) {
    case Op::Matmul:
      return 3 * mat;  // read A, B; write C
    case Op::Add:
      return 3 * mat;  // read a, b; write out
    case Op::Addmm:
      return 4 * mat + 2 * mat;  // GEMM: A, B, C=out, out; copy: bias, out
    case Op::AddmmBias1d:
      return 3 * mat + nd * e;  // read A, B, bias[n]; write out
  }
  throw std::invalid_argument("invalid Op value " + std::to_string(static_cast<int>(op)));
}

}  // namespace xb
