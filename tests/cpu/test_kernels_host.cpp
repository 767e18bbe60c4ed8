// Tests of kernels/ that need no CUDA device (CPU tests: xb_tests, also under ASan + UBSan in
// scripts/sanitize.sh): names, parsing, operation and byte counts, verification parameters,
// error-macro messages, GEMM arguments rejected before any CUDA call.
#include <cstdint>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "kernels/cuda_check.h"
#include "kernels/gemm.h"
#include "kernels/reference.h"
#include "kernels/workload.h"

namespace xb {
namespace {

TEST(DType, NamesRoundTrip) {
  for (DType d : {DType::BF16, DType::FP16, DType::FP32}) EXPECT_EQ(parse_dtype(to_string(d)), d);
  EXPECT_STREQ(to_string(DType::BF16), "bf16");
  EXPECT_STREQ(to_string(DType::FP16), "fp16");
  EXPECT_STREQ(to_string(DType::FP32), "fp32");
  EXPECT_EQ(dtype_bytes(DType::BF16), 2u);
  EXPECT_EQ(dtype_bytes(DType::FP16), 2u);
  EXPECT_EQ(dtype_bytes(DType::FP32), 4u);
}

TEST(DType, UnknownNameNamesValueAndChoices) {
  try {
    parse_dtype("x");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown dtype 'x' (expected bf16, fp16, fp32)");
  }
  EXPECT_THROW(parse_dtype("BF16"), std::invalid_argument);  // case-sensitive
  EXPECT_THROW(parse_dtype(""), std::invalid_argument);
}

TEST(Op, NamesRoundTrip) {
  for (Op op : {Op::Matmul, Op::Add, Op::Addmm, Op::AddmmBias1d}) {
    EXPECT_EQ(parse_op(to_string(op)), op);
  }
  EXPECT_STREQ(to_string(Op::AddmmBias1d), "addmm_bias1d");
  try {
    parse_op("mm");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown op 'mm' (expected matmul, add, addmm, addmm_bias1d)");
  }
}

TEST(Counts, FlopsPerCall) {
  const double n = 4096;
  EXPECT_DOUBLE_EQ(op_flops(Op::Matmul, 4096), 2 * n * n * n);
  EXPECT_DOUBLE_EQ(op_flops(Op::Add, 4096), n * n);
  EXPECT_DOUBLE_EQ(op_flops(Op::Addmm, 4096), 2 * n * n * n + n * n);
  EXPECT_DOUBLE_EQ(op_flops(Op::AddmmBias1d, 4096), 2 * n * n * n + n * n);
  EXPECT_DOUBLE_EQ(op_flops(Op::Matmul, 65536), 2.0 * 65536.0 * 65536.0 * 65536.0);  // no overflow
}

TEST(Counts, BytesPerCall) {
  const double n = 16384, e2 = 2, e4 = 4;
  EXPECT_DOUBLE_EQ(op_bytes(Op::Matmul, DType::BF16, 16384), 3 * n * n * e2);
  EXPECT_DOUBLE_EQ(op_bytes(Op::Add, DType::BF16, 16384), 3 * n * n * e2);
  EXPECT_DOUBLE_EQ(op_bytes(Op::Add, DType::FP32, 16384), 3 * n * n * e4);
  EXPECT_DOUBLE_EQ(op_bytes(Op::Addmm, DType::FP16, 16384), 6 * n * n * e2);
  EXPECT_DOUBLE_EQ(op_bytes(Op::AddmmBias1d, DType::FP32, 16384), 3 * n * n * e4 + n * e4);
  // The reference's bf16 add at 16384^2: 4.23 TB/s = 1.61e9 bytes in ~381 us.
  EXPECT_NEAR(op_bytes(Op::Add, DType::BF16, 16384) / 1e9, 1.61, 0.01);
}

TEST(Counts, DeviceBytes) {
  const std::size_t mat = std::size_t{1000} * 1000 * 2;
  EXPECT_EQ(workload_device_bytes(Op::Add, DType::BF16, 1000), 3 * mat);
  EXPECT_EQ(workload_device_bytes(Op::Matmul, DType::BF16, 1000), 3 * mat + kGemmWorkspaceBytes);
  EXPECT_EQ(workload_device_bytes(Op::Addmm, DType::BF16, 1000), 4 * mat + kGemmWorkspaceBytes);
  EXPECT_EQ(workload_device_bytes(Op::AddmmBias1d, DType::BF16, 1000), 3 * mat + 2000 + kGemmWorkspaceBytes);
  EXPECT_EQ(kGemmWorkspaceBytes, std::size_t{32} * 1024 * 1024);
  EXPECT_THROW(workload_device_bytes(Op::Add, DType::BF16, 0), std::invalid_argument);
}

TEST(MakeWorkload, RejectsNonPositiveSize) {
  EXPECT_THROW(make_workload(Op::Add, DType::BF16, 0, nullptr), std::invalid_argument);
  EXPECT_THROW(make_workload(Op::Matmul, DType::FP32, -5, nullptr), std::invalid_argument);
}

TEST(Verification, RowsFullUpTo256ThenSixteenSpread) {
  EXPECT_EQ(verification_rows(1).size(), 1u);
  const auto full = verification_rows(256);
  ASSERT_EQ(full.size(), 256u);
  EXPECT_EQ(full.front(), 0);
  EXPECT_EQ(full.back(), 255);
  for (const std::int64_t n : {257, 1000, 16384}) {
    const auto rows = verification_rows(n);
    ASSERT_EQ(rows.size(), 16u);
    EXPECT_EQ(rows.front(), 0);
    EXPECT_EQ(rows.back(), n - 1);
    for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_GT(rows[i], rows[i - 1]);
  }
  EXPECT_THROW(verification_rows(0), std::invalid_argument);
}

TEST(Verification, Tolerances) {
  EXPECT_EQ(verification_tolerance(Op::Add, DType::BF16), 4e-3);
  EXPECT_EQ(verification_tolerance(Op::Add, DType::FP16), 1e-3);
  EXPECT_EQ(verification_tolerance(Op::Add, DType::FP32), 1e-6);
  for (Op op : {Op::Matmul, Op::Addmm, Op::AddmmBias1d}) {
    EXPECT_EQ(verification_tolerance(op, DType::BF16), 1e-2);
    EXPECT_EQ(verification_tolerance(op, DType::FP16), 2e-3);
    EXPECT_EQ(verification_tolerance(op, DType::FP32), 1e-4);
  }
  // add's bounds sit just above one rounding (unit roundoff 2^-8, 2^-11, 2^-24).
  EXPECT_GT(verification_tolerance(Op::Add, DType::BF16), 1.0 / 256);
  EXPECT_GT(verification_tolerance(Op::Add, DType::FP16), 1.0 / 2048);
}

TEST(ErrorMacros, CudaMessageHasFileLineCallNameAndString) {
  try {
    XB_CUDA(cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test_kernels_host.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find(": cudaErrorInvalidValue failed: cudaErrorInvalidValue: invalid argument"), std::string::npos)
        << what;
  }
  EXPECT_NO_THROW(XB_CUDA(cudaSuccess));
  EXPECT_NO_THROW(XB_CUDA_NOTHROW(cudaErrorInvalidValue));  // prints to stderr only
}

TEST(ErrorMacros, CublasThrowsCublasErrorWhichIsACudaError) {
  try {
    XB_CUBLAS(CUBLAS_STATUS_NOT_SUPPORTED);
    FAIL() << "no exception";
  } catch (const CublasError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("CUBLAS_STATUS_NOT_SUPPORTED failed: CUBLAS_STATUS_NOT_SUPPORTED: "), std::string::npos)
        << what;
  }
  EXPECT_THROW(XB_CUBLAS(CUBLAS_STATUS_INTERNAL_ERROR), CudaError);
  EXPECT_NO_THROW(XB_CUBLAS(CUBLAS_STATUS_SUCCESS));
}

TEST(GemmArguments, RejectedBeforeAnyCudaCall) {
  GemmProblem p;
  EXPECT_THROW(LtGemm{p}, std::invalid_argument);  // zero sizes
  p.m = p.n = p.k = 8;
  EXPECT_THROW(LtGemm{p}, std::invalid_argument);  // null pointers
}

}  // namespace
}  // namespace xb
