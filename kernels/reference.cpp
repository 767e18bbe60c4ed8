// Host fp64 references and the output check (see reference.h).
//
// Tolerances, on the norm-wise relative error ||out - ref||_2 / ||ref||_2 against an fp64
// reference computed from the exact (copied-back) inputs. u = unit roundoff of the output type
// with round-to-nearest: bf16 2^-8 = 3.9e-3, fp16 2^-11 = 4.9e-4, fp32 2^-24 = 6.0e-8.
//  - add: the fp32 sum of two bf16/fp16 inputs is exact, and for fp32 inputs it carries one fp32
//    rounding; the result is then rounded once to the output type. Every element's relative error
//    is therefore <= u, and so is the norm-wise error. Bounds just above u: bf16 4e-3, fp16 1e-3,
//    fp32 1e-6. These are hard bounds (normal numbers), not statistical ones.
//  - GEMMs (fp32 accumulation): one output rounding (<= u, about u/3 norm-wise for random data)
//    plus fp32 accumulation error (about sqrt(k) 2^-24 |a||b| per term for random signs, far under
//    1e-3 relative up to k = 16384) and, where cuBLASLt splits k, rounding of partial sums.
//    bf16 1e-2 (2.5 u) and fp16 2e-3 (4 u) sit at the upper end of the range that the workplace's
//    method note gives for bf16 operands (1e-3 to 1e-2; METHOD.md of the device notes). fp32
//    1e-4 is far above fp32 accumulation error ("float32 arithmetic lands far under 1e-3", same
//    note) and below TF32's error (inputs rounded to 10 mantissa bits: "near 3e-4", same note),
//    so an fp32 GEMM that ran in TF32 fails the check.
#include "kernels/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda_check.h"

namespace xb {
namespace {

constexpr std::int64_t kFullCheckMaxN = 256;
constexpr std::int64_t kSampledRows = 16;
constexpr std::size_t kHostChunkBytes = std::size_t{64} << 20;  // B streamed in 64 MiB of doubles

double to_double(__nv_bfloat16 x) { return static_cast<double>(__bfloat162float(x)); }
double to_double(__half x) { return static_cast<double>(__half2float(x)); }
double to_double(float x) { return static_cast<double>(x); }

template <typename T>
std::vector<double> copy_typed(const void* device, std::size_t offset_elements, std::size_t count) {
  std::vector<T> raw(count);
  XB_CUDA(cudaMemcpy(raw.data(), static_cast<const T*>(device) + offset_elements, count * sizeof(T),
                     cudaMemcpyDeviceToHost));
  std::vector<double> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = to_double(raw[i]);
  return out;
}

// Rows `rows` of a device [*, cols] matrix, concatenated.
std::vector<double> gather_rows(const void* device, DType dtype, std::int64_t cols,
                                const std::vector<std::int64_t>& rows) {
  std::vector<double> out;
  out.reserve(rows.size() * static_cast<std::size_t>(cols));
  std::size_t i = 0;
  while (i < rows.size()) {
    std::size_t j = i + 1;  // copy runs of consecutive rows in one call
    while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
    const std::vector<double> part =
        copy_rows_to_host(device, dtype, cols, rows[i], rows[i] + static_cast<std::int64_t>(j - i));
    out.insert(out.end(), part.begin(), part.end());
    i = j;
  }
  return out;
}

bool needs_bias(Op op) { return op == Op::Addmm || op == Op::AddmmBias1d; }

// fp64 reference of the checked rows, row-major [rows.size(), n].
std::vector<double> reference_rows(Op op, DType dtype, std::int64_t n, const WorkloadTensors& t,
                                   const std::vector<std::int64_t>& rows) {
  const auto cols = static_cast<std::size_t>(n);
  std::vector<double> ref(rows.size() * cols, 0.0);
  const std::vector<double> a = gather_rows(t.a, dtype, n, rows);
  if (op == Op::Add) {
    const std::vector<double> b = gather_rows(t.b, dtype, n, rows);
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = a[i] + b[i];
    return ref;
  }
  // ref[r, :] = sum_k A[r, k] B[k, :], streaming B in chunks of rows.
  const std::int64_t chunk_rows =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(kHostChunkBytes / (cols * sizeof(double))));
  for (std::int64_t k0 = 0; k0 < n; k0 += chunk_rows) {
    const std::int64_t k1 = std::min(n, k0 + chunk_rows);
    const std::vector<double> b = copy_rows_to_host(t.b, dtype, n, k0, k1);
    for (std::int64_t k = k0; k < k1; ++k) {
      const double* b_row = b.data() + static_cast<std::size_t>(k - k0) * cols;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const double a_rk = a[r * cols + static_cast<std::size_t>(k)];
        double* ref_row = ref.data() + r * cols;
        for (std::size_t j = 0; j < cols; ++j) ref_row[j] += a_rk * b_row[j];
      }
    }
  }
  if (op == Op::Addmm) {
    const std::vector<double> bias = gather_rows(t.bias, dtype, n, rows);
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] += bias[i];
  } else if (op == Op::AddmmBias1d) {
    const std::vector<double> bias = copy_rows_to_host(t.bias, dtype, n, 0, 1);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      for (std::size_t j = 0; j < cols; ++j) ref[r * cols + j] += bias[j];
    }
  }
  return ref;
}

std::string format_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string describe_rows(std::int64_t n, const std::vector<std::int64_t>& rows) {
  if (static_cast<std::int64_t>(rows.size()) == n) {
    return "full check, " + std::to_string(n) + " x " + std::to_string(n) + " elements";
  }
  std::string text = "sampled " + std::to_string(rows.size()) + " rows of " + std::to_string(n) + " (rows";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    text += (i == 0 ? " " : ", ") + std::to_string(rows[i]);
  }
  return text + "), " + std::to_string(rows.size() * static_cast<std::size_t>(n)) + " elements";
}

}  // namespace

double verification_tolerance(Op op, DType dtype) {
  // Derivation and sources: comment at the top of this file.
  if (op == Op::Add) {
    switch (dtype) {
      case DType::BF16:
        return 4e-3;
      case DType::FP16:
        return 1e-3;
      case DType::FP32:
        return 1e-6;
    }
  } else {
    switch (dtype) {
      case DType::BF16:
        return 1e-2;
      case DType::FP16:
        return 2e-3;
      case DType::FP32:
        return 1e-4;
    }
  }
  throw std::invalid_argument("verification_tolerance: invalid op or dtype");
}

std::vector<std::int64_t> verification_rows(std::int64_t n) {
  if (n < 1) throw std::invalid_argument("verification_rows: n " + std::to_string(n) + " < 1");
  std::vector<std::int64_t> rows;
  if (n <= kFullCheckMaxN) {
    rows.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)] = i;
    return rows;
  }
  for (std::int64_t i = 0; i < kSampledRows; ++i) rows.push_back(i * (n - 1) / (kSampledRows - 1));
  return rows;
}

std::vector<double> copy_rows_to_host(const void* device, DType dtype, std::int64_t cols, std::int64_t row_begin,
                                      std::int64_t row_end) {
  if (device == nullptr || cols < 0 || row_begin < 0 || row_end < row_begin) {
    throw std::invalid_argument("copy_rows_to_host: bad arguments");
  }
  const auto offset = static_cast<std::size_t>(row_begin) * static_cast<std::size_t>(cols);
  const auto count = static_cast<std::size_t>(row_end - row_begin) * static_cast<std::size_t>(cols);
  switch (dtype) {
    case DType::BF16:
      return copy_typed<__nv_bfloat16>(device, offset, count);
    case DType::FP16:
      return copy_typed<__half>(device, offset, count);
    case DType::FP32:
      return copy_typed<float>(device, offset, count);
  }
  throw std::invalid_argument("copy_rows_to_host: invalid dtype");
}

Verification verify_against_reference(Op op, DType dtype, std::int64_t n, const WorkloadTensors& tensors,
                                      cudaStream_t stream, const std::function<void()>& run) {
  if (n < 1) throw std::invalid_argument("verify_against_reference: n < 1");
  if (tensors.a == nullptr || tensors.b == nullptr || tensors.out == nullptr ||
      (needs_bias(op) && tensors.bias == nullptr)) {
    throw std::invalid_argument(std::string("verify_against_reference: missing tensor for ") + to_string(op));
  }
  const auto cols = static_cast<std::size_t>(n);
  XB_CUDA(cudaMemsetAsync(tensors.out, 0xFF, cols * cols * dtype_bytes(dtype), stream));
  run();
  XB_CUDA(cudaStreamSynchronize(stream));

  const std::vector<std::int64_t> rows = verification_rows(n);
  const std::vector<double> out = gather_rows(tensors.out, dtype, n, rows);
  const std::vector<double> ref = reference_rows(op, dtype, n, tensors, rows);

  double sum_diff2 = 0;
  double sum_ref2 = 0;
  double max_diff = -1;
  std::size_t max_at = 0;
  std::size_t non_finite = 0;
  std::size_t first_non_finite = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      if (non_finite++ == 0) first_non_finite = i;
      continue;
    }
    const double diff = out[i] - ref[i];
    sum_diff2 += diff * diff;
    sum_ref2 += ref[i] * ref[i];
    if (std::abs(diff) > max_diff) {
      max_diff = std::abs(diff);
      max_at = i;
    }
  }

  Verification v;
  v.tolerance = verification_tolerance(op, dtype);
  v.checked_elements = static_cast<std::int64_t>(out.size());
  v.detail = describe_rows(n, rows);
  const auto where = [&](std::size_t i) {
    return "[" + std::to_string(rows[i / cols]) + ", " + std::to_string(i % cols) + "]: expected " + format_g(ref[i]) +
           ", found " + format_g(out[i]);
  };
  if (non_finite > 0) {
    v.rel_error = std::numeric_limits<double>::quiet_NaN();
    v.passed = false;
    v.detail += "; " + std::to_string(non_finite) + " non-finite outputs, first at " + where(first_non_finite);
    return v;
  }
  // ||ref|| is 0 only for all-zero references (never with random inputs): then use the absolute
  // error, so that any non-zero output still fails.
  v.rel_error = sum_ref2 > 0 ? std::sqrt(sum_diff2 / sum_ref2) : std::sqrt(sum_diff2);
  v.passed = v.rel_error <= v.tolerance;
  v.detail += "; max |out - ref| " + format_g(max_diff) + " at " + where(max_at);
  return v;
}

}  // namespace xb
