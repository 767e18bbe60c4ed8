// Profiler front end without a GPU: a fake ActivitySource injects CUPTI-like records (the
// kineto test seam), and the schedule, ranges and filtering are checked.
#include <gtest/gtest.h>

#include "profiler/profiler.h"

namespace xb {
namespace {

/// Fake source with a manual clock; records API + kernel pairs at chosen times.
class FakeSource : public ActivitySource {
 public:
  std::int64_t clock = 1000;
  std::vector<RawRecord> pending;
  std::vector<std::uint64_t> stack;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> tagged;  // external id -> correlation
  std::uint32_t next_corr = 1;

  void start() override {}
  std::vector<RawRecord> stop() override { return std::move(pending); }
  std::uint64_t dropped_records() const override { return 0; }
  std::int64_t now_ns() const override { return clock; }
  void push_external_id(std::uint64_t id) override { stack.push_back(id); }
  void pop_external_id() override { stack.pop_back(); }
  void describe(SessionMeta& meta) const override { meta.cupti_version = 42; }

  /// A launch call at the current time (10 ns long) and its kernel 100 ns later.
  void launch(const std::string& kernel) {
    const std::uint32_t corr = next_corr++;
    if (!stack.empty()) {
      RawRecord ext;
      ext.kind = RawKind::ExternalCorrelation;
      ext.correlation_id = corr;
      ext.external_kind = 3;
      ext.external_id = stack.back();
      pending.push_back(ext);
    }
    RawRecord api;
    api.kind = RawKind::Runtime;
    api.name = "cudaLaunchKernel";
    api.start_ns = clock;
    api.end_ns = clock + 10;
    api.correlation_id = corr;
    pending.push_back(api);
    RawRecord k;
    k.kind = RawKind::Kernel;
    k.name = kernel;
    k.start_ns = clock + 100;
    k.end_ns = clock + 150;
    k.correlation_id = corr;
    pending.push_back(k);
    clock += 20;
  }
};

TEST(Schedule, OnlyActiveStepsAreRecordedAndNamed) {
  auto owned = std::make_unique<FakeSource>();
  FakeSource* src = owned.get();
  Profiler prof(std::move(owned));
  prof.start();
  prof.begin_fixture(Schedule{1, 1, 2});
  std::vector<std::uint64_t> step_ids;
  for (int i = 0; i < 4; ++i) {
    src->clock += 1000;
    step_ids.push_back(prof.begin_step());
    {
      ScopedRange a(prof, "matmul/bf16/64", RangeCategory::UserAnnotation);
      ScopedRange op(prof, "xb::matmul", RangeCategory::CpuOp);
      src->launch("gemm");
    }
    src->clock += 500;  // kernel finishes inside the step
    prof.end_step();
  }
  EXPECT_EQ(step_ids[0], 0u);  // wait
  EXPECT_EQ(step_ids[1], 0u);  // warmup
  EXPECT_NE(step_ids[2], 0u);
  EXPECT_NE(step_ids[3], 0u);
  RawSession s = prof.stop();
  // 2 active steps x (ProfilerStep, annotation, op) ranges.
  ASSERT_EQ(s.ranges.size(), 6u);
  EXPECT_EQ(s.ranges[0].name, "ProfilerStep#2");
  EXPECT_EQ(s.ranges[3].name, "ProfilerStep#3");
  EXPECT_EQ(s.ranges[1].parent_id, s.ranges[0].id);
  EXPECT_EQ(s.ranges[2].parent_id, s.ranges[1].id);
  EXPECT_EQ(s.ranges[2].category, RangeCategory::CpuOp);
  // Records: 2 kept launches x (ext, api, kernel); the wait and warmup steps open no ranges,
  // so their launches carry no external id: 2 x (api, kernel) discarded.
  EXPECT_EQ(s.records.size(), 6u);
  EXPECT_EQ(s.meta.discarded_by_schedule, 4u);
  for (const RawRecord& r : s.records) {
    if (r.kind == RawKind::ExternalCorrelation) {
      EXPECT_TRUE(r.external_id == s.ranges[2].id || r.external_id == s.ranges[5].id);
    }
  }
  EXPECT_EQ(s.meta.cupti_version, 42u);
  EXPECT_EQ(s.meta.schedule_active, 2);
  EXPECT_TRUE(src->stack.empty());
}

TEST(Schedule, RangesMustCloseInnermostFirst) {
  Profiler prof(std::make_unique<FakeSource>());
  prof.start();
  prof.begin_fixture(Schedule{0, 0, 1});
  prof.begin_step();
  const auto outer = prof.begin_range("outer", RangeCategory::UserAnnotation);
  prof.begin_range("inner", RangeCategory::CpuOp);
  EXPECT_THROW(prof.end_range(outer), std::logic_error);
}

TEST(Schedule, EndStepClosesOpenRangesAndRejectsBadSchedules) {
  Profiler prof(std::make_unique<FakeSource>());
  EXPECT_THROW(prof.begin_fixture(Schedule{0, 0, 0}), std::invalid_argument);
  prof.start();
  prof.begin_fixture(Schedule{0, 0, 1});
  prof.begin_step();
  prof.begin_range("left open", RangeCategory::CpuOp);
  prof.end_step();
  RawSession s = prof.stop();
  ASSERT_EQ(s.ranges.size(), 2u);
  for (const HostRange& r : s.ranges) EXPECT_GE(r.end_ns, r.start_ns);
}

TEST(FilterToWindows, KeepsDeviceWorkOfCallsInsideWindows) {
  std::vector<RawRecord> recs;
  auto add = [&](RawKind kind, std::int64_t start, std::uint32_t corr) {
    RawRecord r;
    r.kind = kind;
    r.start_ns = start;
    r.end_ns = start + 5;
    r.correlation_id = corr;
    recs.push_back(r);
  };
  add(RawKind::Driver, 50, 1);     // before the window
  add(RawKind::Kernel, 120, 1);    // runs inside the window but launched outside: discarded
  add(RawKind::Runtime, 100, 2);   // inside
  add(RawKind::Memcpy, 300, 2);    // runs after the window: kept with its launch
  add(RawKind::Synchronization, 110, 2);
  add(RawKind::Runtime, 250, 3);   // after
  const ScheduleFilter f = filter_to_windows(recs, {{100, 200}});
  ASSERT_EQ(f.kept.size(), 3u);
  EXPECT_EQ(f.discarded, 3u);
  for (const RawRecord& r : f.kept) EXPECT_EQ(r.correlation_id, 2u);
}

}  // namespace
}  // namespace xb
