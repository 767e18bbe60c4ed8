// Profiler front end without a GPU: a fake ActivitySource injects CUPTI-like records (the
// kineto test seam), and the schedule, ranges and filtering are checked.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "../common/fake_activity_source.h"
#include "../common/validate_outputs.h"
#include "profiler/exporters/table.h"
#include "profiler/model/event_model.h"
#include "profiler/model/profiler.h"

namespace xb {
namespace {

using test::FakeSource;

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
  add(RawKind::Driver, 50, 1);    // before the window
  add(RawKind::Kernel, 120, 1);   // runs inside the window but launched outside: discarded
  add(RawKind::Runtime, 100, 2);  // inside
  add(RawKind::Memcpy, 300, 2);   // runs after the window: kept with its launch
  add(RawKind::Synchronization, 110, 2);
  add(RawKind::Runtime, 250, 3);  // after
  const ScheduleFilter f = filter_to_windows(recs, {{100, 200}});
  ASSERT_EQ(f.kept.size(), 3u);
  EXPECT_EQ(f.discarded, 3u);
  for (const RawRecord& r : f.kept) EXPECT_EQ(r.correlation_id, 2u);
}

TEST(SourceRanges, KeptWhenOverlappingAWindowWithDanglingParentsCleared) {
  auto range = [](std::uint64_t id, std::uint64_t parent, std::int64_t b, std::int64_t e) {
    HostRange r;
    r.id = id;
    r.parent_id = parent;
    r.name = "r" + std::to_string(id);
    r.start_ns = b;
    r.end_ns = e;
    return r;
  };
  const std::uint64_t k = kSourceRangeIdBase;
  const std::vector<HostRange> in = {
      range(k + 0, 0, 0, 5),          // before every window: dropped
      range(k + 1, 0, 0, 1000),       // spans both windows: kept
      range(k + 2, k + 0, 95, 120),   // overlaps the first window's end; parent dropped -> 0
      range(k + 3, k + 1, 150, 160),  // between the windows: dropped
      range(k + 4, 7, 210, 220),      // inside the second; parent is a profiler range: kept as is
      range(k + 5, 0, 300, 300),      // exactly at the second window's end: kept (closed interval)
  };
  const auto kept = filter_ranges_to_windows(in, {{200, 300}, {10, 100}});
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept[0].id, k + 1);
  EXPECT_EQ(kept[1].id, k + 2);
  EXPECT_EQ(kept[1].parent_id, 0u);
  EXPECT_EQ(kept[2].id, k + 4);
  EXPECT_EQ(kept[2].parent_id, 7u);
  EXPECT_EQ(kept[3].id, k + 5);
  EXPECT_TRUE(filter_ranges_to_windows(in, {}).empty());
}

TEST(SourceRanges, NvtxRangesOwnTheirKernelsInTheTableAndTheExportsAgree) {
  auto owned = std::make_unique<FakeSource>();
  FakeSource* src = owned.get();
  Profiler prof(std::move(owned));
  prof.start();
  prof.begin_fixture(Schedule{0, 0, 2});
  src->nvtx_push("outer, before the steps");  // overlaps the steps: kept, no parent
  for (int i = 0; i < 2; ++i) {
    const std::uint64_t step = prof.begin_step();
    src->clock += 10;
    src->nvtx_push("user_block");
    src->launch("k_in_block");
    src->clock += 60;  // one kernel at a time on the stream
    {
      // A profiler range opened inside the user's NVTX range nests under it.
      ScopedRange op(prof, "xb::op", RangeCategory::CpuOp);
      src->launch("k_in_op");
      src->clock += 60;
    }
    src->nvtx_pop();
    src->launch("k_in_step");
    src->clock += 300;  // kernels end before the step does
    prof.end_step();
    EXPECT_NE(step, 0u);
  }
  src->nvtx_pop();
  const RawSession raw = prof.stop();

  std::map<std::string, int> count;
  for (const HostRange& r : raw.ranges) ++count[r.name];
  EXPECT_EQ(count["user_block"], 2);
  EXPECT_EQ(count["xb::op"], 2);
  EXPECT_EQ(count["outer, before the steps"], 1);
  const Session s = build_session(raw);
  std::map<std::uint64_t, const HostRange*> by_id;
  for (const HostRange& r : s.ranges) by_id[r.id] = &r;
  for (const HostRange& r : s.ranges) {
    if (r.name == "xb::op") {
      ASSERT_TRUE(by_id.count(r.parent_id));
      EXPECT_EQ(by_id[r.parent_id]->name, "user_block");
    }
    if (r.name == "user_block") {
      ASSERT_TRUE(by_id.count(r.parent_id));
      EXPECT_EQ(by_id[r.parent_id]->name.rfind("ProfilerStep#", 0), 0u);
    }
  }
  const Table table = build_table(s);
  std::map<std::string, const TableRow*> row;
  for (const TableRow& r : table.rows) row[r.name] = &r;
  ASSERT_TRUE(row.count("user_block"));
  ASSERT_TRUE(row.count("k_in_block"));
  ASSERT_TRUE(row.count("k_in_op"));
  // user_block owns its own kernel and, through xb::op, the op's kernel; not the step's kernel.
  EXPECT_EQ(row["user_block"]->cuda_total_ns, row["k_in_block"]->cuda_total_ns + row["k_in_op"]->cuda_total_ns);
  EXPECT_EQ(row["user_block"]->calls, 2);

  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "xb_test_source_ranges";
  EXPECT_EQ(testing::validate_outputs(raw, dir), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace xb
