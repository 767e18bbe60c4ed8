#include "tests/gpu/add_check.h"

#include <cmath>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/random_fill.h"
#include "kernels/reference.h"

namespace xb::testing {
namespace {

// fp32 sum of the two inputs, rounded once to the dtype (round to nearest even), as the kernel.
double expected_add(DType dtype, double a, double b) {
  const float sum = static_cast<float>(a) + static_cast<float>(b);
  switch (dtype) {
    case DType::BF16:
      return static_cast<double>(__bfloat162float(__float2bfloat16_rn(sum)));
    case DType::FP16:
      return static_cast<double>(__half2float(__float2half_rn(sum)));
    case DType::FP32:
      return static_cast<double>(sum);
  }
  return std::nan("");
}

// count elements (as one row) at byte offsets into the buffers.
std::vector<double> copy_span(const DeviceBuffer& buffer, std::size_t offset_bytes, DType dtype, std::int64_t count) {
  return copy_rows_to_host(static_cast<const char*>(buffer.get()) + offset_bytes, dtype, count, 0, 1);
}

}  // namespace

void check_add_span(const AddSpan& s, AddLaunchConfig config, AddLauncher launch) {
  SCOPED_TRACE(to_string(config));
  const std::size_t e = dtype_bytes(s.dtype);
  constexpr std::int64_t kCanary = 64;  // elements after the range that must stay untouched
  const std::size_t bytes = static_cast<std::size_t>(s.count + kCanary) * e + 64;
  Stream stream;
  DeviceBuffer a(bytes), b(bytes), out(bytes);
  const auto total = static_cast<std::int64_t>(bytes / e);
  launch_random_fill(s.dtype, a.get(), total, 11, stream.get());
  launch_random_fill(s.dtype, b.get(), total, 12, stream.get());
  XB_CUDA(cudaMemsetAsync(out.get(), 0xFF, bytes, stream.get()));

  if (s.max_blocks > 0) config.max_blocks = s.max_blocks;
  launch(s.dtype, static_cast<const char*>(a.get()) + s.a_offset, static_cast<const char*>(b.get()) + s.b_offset,
         static_cast<char*>(out.get()) + s.out_offset, s.count, stream.get(), config);
  stream.synchronize();

  const std::vector<double> ha = copy_span(a, s.a_offset, s.dtype, s.count);
  const std::vector<double> hb = copy_span(b, s.b_offset, s.dtype, s.count);
  const std::vector<double> hout = copy_span(out, s.out_offset, s.dtype, s.count + kCanary);
  std::int64_t mismatches = 0;
  for (std::int64_t i = 0; i < s.count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const double want = expected_add(s.dtype, ha[k], hb[k]);
    if (!(hout[k] == want) && mismatches++ < 5) {
      ADD_FAILURE() << "element " << i << ": expected " << want << ", found " << hout[k];
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << s.count;
  for (std::int64_t i = s.count; i < s.count + kCanary; ++i) {
    EXPECT_TRUE(std::isnan(hout[static_cast<std::size_t>(i)])) << "wrote past the end at " << i;
  }
}

std::vector<AddSpan> add_spans() {
  std::vector<AddSpan> spans;
  for (DType d : {DType::BF16, DType::FP16, DType::FP32}) {
    const std::size_t e = dtype_bytes(d);
    // Aligned: vector path, tails of 0..7 elements, a single element.
    // 65536 (256^2) and 65539: vectors a multiple of 128 and 256 threads, without and with a tail
    // (the lean kernel's no-bounds-check instantiations).
    // 12000007 > 3072^2: bench's residency-capped class.
    for (std::int64_t count : {1, 3, 7, 8, 9, 15, 17, 4095, 65536, 65539, 1000003, 5000011, 12000007}) {
      spans.push_back({d, count, 0, 0, 0});
    }
    // Grid capped at 3 blocks: many grid-stride passes, on both paths.
    spans.push_back({d, 1000003, 0, 0, 0, 3});
    spans.push_back({d, 1000003, e, 0, 0, 3});
    spans.push_back({d, 100003, 0, 0, 0, 3});
    spans.push_back({d, 100003, e, 0, 0, 3});
    // Unaligned by one element in each pointer in turn, and all three: scalar path.
    spans.push_back({d, 1000003, e, 0, 0});
    spans.push_back({d, 1000003, 0, e, 0});
    spans.push_back({d, 1000003, 0, 0, e});
    spans.push_back({d, 1000003, e, e, e});
    // 16-byte aligned but not 256-byte aligned: vector path.
    spans.push_back({d, 4097, 16, 32, 48});
  }
  return spans;
}

std::string add_span_name(const ::testing::TestParamInfo<AddSpan>& span_info) {
  const AddSpan& s = span_info.param;
  return std::string(to_string(s.dtype)) + "_count" + std::to_string(s.count) + "_off" + std::to_string(s.a_offset) +
         "_" + std::to_string(s.b_offset) + "_" + std::to_string(s.out_offset) +
         (s.max_blocks > 0 ? "_grid" + std::to_string(s.max_blocks) : "");
}

}  // namespace xb::testing
