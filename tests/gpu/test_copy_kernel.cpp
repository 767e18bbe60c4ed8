// The SM copy kernel behind the cold-mode bandwidth bound (kernels/copy.h): byte-exact on the
// vector path, its byte tail and the unaligned byte path, with the grid-stride loop made to take
// several passes, and no byte written outside the range.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "kernels/copy.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/random_fill.h"
#include "tests/gpu/gpu_test.h"

namespace xb {
namespace {

using xb::testing::GpuTest;
using xb::testing::GpuTestWithParam;

struct CopySpan {
  std::size_t bytes;
  std::size_t src_offset;  // bytes past a 256-byte aligned address
  std::size_t dst_offset;
  int max_blocks = 0;  // > 0: cap the grid, so that the grid-stride loop makes several passes
};

class CopyKernel : public GpuTestWithParam<CopySpan> {};

TEST_P(CopyKernel, ByteExactAndWritesNothingElse) {
  const CopySpan s = GetParam();
  constexpr std::size_t kGuard = 256;         // bytes checked on either side of the range
  constexpr unsigned char kUntouched = 0xA5;  // dst's contents before the copy
  // Both buffers: guard, offset, range, guard; a multiple of 4 bytes for the fp32 random fill.
  const std::size_t total = (kGuard + 16 + s.bytes + kGuard + 3) / 4 * 4;
  Stream stream;
  DeviceBuffer src(total), dst(total);
  launch_random_fill(DType::FP32, src.get(), static_cast<std::int64_t>(total / 4), 21, stream.get());
  XB_CUDA(cudaMemsetAsync(dst.get(), kUntouched, total, stream.get()));

  const std::size_t src_at = kGuard + s.src_offset;
  const std::size_t dst_at = kGuard + s.dst_offset;
  launch_copy(src.get<const unsigned char>() + src_at, dst.get<unsigned char>() + dst_at, s.bytes, stream.get(),
              s.max_blocks);
  stream.synchronize();

  std::vector<unsigned char> hsrc(total), hdst(total);
  XB_CUDA(cudaMemcpy(hsrc.data(), src.get(), total, cudaMemcpyDeviceToHost));
  XB_CUDA(cudaMemcpy(hdst.data(), dst.get(), total, cudaMemcpyDeviceToHost));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < total; ++i) {
    const bool inside = i >= dst_at && i < dst_at + s.bytes;
    const unsigned char want = inside ? hsrc[src_at + (i - dst_at)] : kUntouched;
    if (hdst[i] != want && wrong++ < 5) {
      ADD_FAILURE() << (inside ? "byte " + std::to_string(i - dst_at) + " of the range"
                               : "byte at " + std::to_string(i) + " outside the range [" + std::to_string(dst_at) +
                                     ", " + std::to_string(dst_at + s.bytes) + ")")
                    << ": expected " << int{want} << ", found " << int{hdst[i]};
    }
  }
  EXPECT_EQ(wrong, 0u) << "of " << total << " bytes";
}

std::vector<CopySpan> copy_spans() {
  std::vector<CopySpan> spans;
  const std::size_t mib_plus_3 = (std::size_t{1} << 20) + 3;
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{17},
                            std::size_t{4097}, mib_plus_3}) {
    spans.push_back({bytes, 0, 0});    // both aligned: vector path, tails of 0 to 15 bytes
    spans.push_back({bytes, 1, 0});    // src unaligned: byte path
    spans.push_back({bytes, 0, 3});    // dst unaligned: byte path
    spans.push_back({bytes, 7, 7});    // both unaligned the same way: byte path
    spans.push_back({bytes, 16, 48});  // 16-byte aligned, not 256: vector path
  }
  // Grid capped at 3 blocks: many grid-stride passes, on both paths.
  spans.push_back({mib_plus_3, 0, 0, 3});
  spans.push_back({mib_plus_3, 1, 0, 3});
  return spans;
}

INSTANTIATE_TEST_SUITE_P(Spans, CopyKernel, ::testing::ValuesIn(copy_spans()),
                         [](const ::testing::TestParamInfo<CopySpan>& span_info) {
                           const CopySpan& s = span_info.param;
                           return "bytes" + std::to_string(s.bytes) + "_off" + std::to_string(s.src_offset) + "_" +
                                  std::to_string(s.dst_offset) +
                                  (s.max_blocks > 0 ? "_grid" + std::to_string(s.max_blocks) : "");
                         });

TEST_F(GpuTest, CopyZeroBytesLaunchesNothingAndBadGridThrows) {
  Stream stream;
  EXPECT_NO_THROW(launch_copy(nullptr, nullptr, 0, stream.get()));
  EXPECT_THROW(launch_copy(nullptr, nullptr, 16, stream.get(), -1), std::invalid_argument);
  stream.synchronize();
}

}  // namespace
}  // namespace xb
