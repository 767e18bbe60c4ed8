// attribute_api_by_time (profiler/model/profiler.h): API records tied to the profiler's ranges by time,
// as pushed CUPTI external ids would tie them, and how it meets the external ids that NVTX ranges
// still push. Then the whole Profiler with the fake source: every launch lands in its CPU op.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "../common/fake_activity_source.h"
#include "profiler/model/profiler.h"
#include "test_model_session.h"

namespace xb {
namespace {

// Times are ns after testing::kBase; the profiler's thread is testing::kTid, as in the shared
// record helpers (test_model_session.h).
constexpr std::uint32_t kThread = testing::kTid;

HostRange range(std::uint64_t id, std::uint64_t parent, std::int64_t start, std::int64_t end) {
  return testing::range(id, parent, "r" + std::to_string(id), RangeCategory::UserAnnotation, start, end);
}

RawRecord api_at(std::uint32_t corr, std::int64_t start, std::uint32_t thread = kThread) {
  RawRecord r = testing::api(RawKind::Runtime, "cudaLaunchKernel", 211, corr, start, start + 5);
  r.thread_id = thread;
  return r;
}

/// correlation id -> external id, from the ExternalCorrelation records.
std::map<std::uint32_t, std::uint64_t> external_ids(const std::vector<RawRecord>& records) {
  std::map<std::uint32_t, std::uint64_t> out;
  for (const RawRecord& r : records) {
    if (r.kind == RawKind::ExternalCorrelation) {
      EXPECT_TRUE(out.emplace(r.correlation_id, r.external_id).second) << "two external ids for " << r.correlation_id;
    }
  }
  return out;
}

// Step 1 [100, 400) > annotation 2 [110, 390) > op 3 [120, 200), op 4 [200, 300) (back to back:
// a call that starts at 200 came after op 3), then a gap in 2 from 300 to 390.
std::vector<HostRange> nested() {
  return {range(1, 0, 100, 400), range(2, 1, 110, 390), range(3, 2, 120, 200), range(4, 2, 200, 300)};
}

TEST(AttributeApiByTime, InnermostRangeHoldingTheStart) {
  std::vector<RawRecord> records = {api_at(10, 105), api_at(11, 130), api_at(12, 200),
                                    api_at(13, 250), api_at(14, 350), api_at(15, 395),
                                    api_at(16, 400), api_at(17, 50),  api_at(18, 130, kThread + 1)};
  records.push_back(testing::device(RawKind::Kernel, 11, 500, 600));
  const auto out = attribute_api_by_time(records, nested(), kThread, {}, kProfilerExternalKind);
  const auto ext = external_ids(out);
  const std::map<std::uint32_t, std::uint64_t> want = {{10, 1}, {11, 3}, {12, 4}, {13, 4}, {14, 2}, {15, 1}};
  EXPECT_EQ(ext, want) << "16 (at the step's end: after it), 17 (before) and 18 (another thread) stay untagged";
  // Each inserted record comes just before its API record, and nothing else moved.
  ASSERT_EQ(out.size(), records.size() + want.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].kind != RawKind::ExternalCorrelation) continue;
    ASSERT_LT(i + 1, out.size());
    EXPECT_EQ(out[i].external_kind, kProfilerExternalKind);
    EXPECT_EQ(out[i + 1].kind, RawKind::Runtime);
    EXPECT_EQ(out[i + 1].correlation_id, out[i].correlation_id);
  }
  EXPECT_EQ(out.back().kind, RawKind::Kernel);
}

TEST(AttributeApiByTime, DeliveryOrderDoesNotMatter) {
  std::vector<RawRecord> records = {api_at(14, 350), api_at(11, 130), api_at(13, 250), api_at(10, 105)};
  const auto ext = external_ids(attribute_api_by_time(records, nested(), kThread, {}, kProfilerExternalKind));
  EXPECT_EQ(ext, (std::map<std::uint32_t, std::uint64_t>{{10, 1}, {11, 3}, {13, 4}, {14, 2}}));
}

TEST(AttributeApiByTime, NvtxExternalIdsKeepTheInnermost) {
  const std::uint64_t inner_nvtx = kSourceRangeIdBase + 1;  // opened inside op 3
  const std::uint64_t outer_nvtx = kSourceRangeIdBase + 2;  // the profiler's ranges opened inside it
  std::vector<HostRange> ranges = nested();
  ranges[0].parent_id = outer_nvtx;
  const std::vector<HostRange> nvtx = {range(inner_nvtx, 3, 125, 140), range(outer_nvtx, 0, 90, 500)};
  std::vector<RawRecord> records = {testing::ext(20, inner_nvtx), api_at(20, 130),   // in the NVTX range in op 3
                                    testing::ext(21, outer_nvtx), api_at(21, 250),   // op 4 inside the outer NVTX range
                                    testing::ext(22, outer_nvtx), api_at(22, 450),   // only the NVTX range holds it
                                    testing::ext(23, 99, 1),      api_at(23, 150)};  // another kind: not ours
  const auto out = attribute_api_by_time(records, ranges, kThread, nvtx, kProfilerExternalKind);
  std::map<std::uint32_t, std::uint64_t> ours;
  for (const RawRecord& r : out) {
    if (r.kind == RawKind::ExternalCorrelation && r.external_kind == kProfilerExternalKind)
      ours[r.correlation_id] = r.external_id;
  }
  EXPECT_EQ(ours, (std::map<std::uint32_t, std::uint64_t>{{20, inner_nvtx}, {21, 4}, {22, outer_nvtx}, {23, 3}}));
  EXPECT_EQ(out.size(), records.size() + 1) << "only 23 needed a record of our kind";
}

TEST(AttributeApiByTime, NoRangesLeavesRecordsAlone) {
  const std::vector<RawRecord> records = {api_at(1, 10), testing::ext(2, 5), api_at(2, 20)};
  const auto out = attribute_api_by_time(records, {}, kThread, {}, kProfilerExternalKind);
  ASSERT_EQ(out.size(), records.size());
  EXPECT_EQ(external_ids(out), (std::map<std::uint32_t, std::uint64_t>{{2, 5}}));
}

// The whole profiler: launches inside CPU ops inside an NVTX range inside an annotation, and a
// launch between the ops, each attributed as CUPTI external ids pushed per range would have.
TEST(ProfilerAttribution, EveryLaunchInItsInnermostRange) {
  auto fake = std::make_unique<test::FakeSource>();
  test::FakeSource& src = *fake;
  Profiler prof(std::move(fake));
  prof.start();
  prof.begin_fixture(Schedule{0, 0, 1});
  const std::uint64_t step = prof.begin_step();
  std::uint64_t ann = 0, op1 = 0, op2 = 0;
  {
    ScopedRange a(prof, "fixture", RangeCategory::UserAnnotation);
    ann = src.stack.back();
    src.clock += 10;
    src.launch("between");  // in the annotation only
    src.nvtx_push("user");
    {
      ScopedRange o(prof, "xb::add", RangeCategory::CpuOp);
      op1 = src.stack.back();
      src.clock += 10;
      src.launch("k1");
      src.clock += 10;
    }
    src.nvtx_pop();
    {
      ScopedRange o(prof, "xb::add", RangeCategory::CpuOp);
      op2 = src.stack.back();
      src.clock += 10;
      src.launch("k2");
      src.clock += 10;
    }
  }
  prof.end_step();
  const RawSession s = prof.stop();
  std::map<std::string, std::uint64_t> by_kernel;
  const auto ext = external_ids(s.records);
  for (const RawRecord& r : s.records) {
    if (r.kind == RawKind::Kernel) by_kernel[r.name] = ext.count(r.correlation_id) ? ext.at(r.correlation_id) : 0;
  }
  EXPECT_NE(step, 0u);
  EXPECT_EQ(by_kernel, (std::map<std::string, std::uint64_t>{{"between", ann}, {"k1", op1}, {"k2", op2}}));
  // The NVTX range sits between the annotation and the first op.
  const auto nvtx = std::find_if(s.ranges.begin(), s.ranges.end(), [](const HostRange& r) { return r.name == "user"; });
  ASSERT_NE(nvtx, s.ranges.end());
  EXPECT_EQ(nvtx->parent_id, ann);
  const auto first_op = std::find_if(s.ranges.begin(), s.ranges.end(), [&](const HostRange& r) { return r.id == op1; });
  ASSERT_NE(first_op, s.ranges.end());
  EXPECT_EQ(first_op->parent_id, nvtx->id);
}

}  // namespace
}  // namespace xb
