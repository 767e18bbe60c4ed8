// bench ab's and bench tune-add's blocks (bench/core/blocks.h) without a GPU: blocks recorded the
// way the two commands record them (one timed_sample of the sampling core per block, in a profiler
// session over the fake activity source and a fake SampleDevice), then paired through
// build_session + step_metrics. Checks the A B / B A order, per-round device and cudaEvent time
// per call, the paired ratios, the dropped-record-free activity checks, and tune-add's unrecorded
// sample before each timed one.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../common/fake_activity_source.h"
#include "bench/core/blocks.h"
#include "bench/core/measure.h"
#include "profiler/model/event_model.h"
#include "profiler/model/step_metrics.h"

namespace xb {
namespace {

using test::FakeSource;

/// A device whose event interval is the sum of what the calls of the sample queued (each launch
/// adds its own known time) plus a fixed overhead.
class QueueDevice : public SampleDevice {
 public:
  std::int64_t overhead_ns = 400;
  std::int64_t queued_ns = 0;
  int holds = 0, releases = 0, abandons = 0;
  bool blocking() const override { return true; }
  void hold() override {
    ++holds;
    queued_ns = 0;
  }
  void flush_l2() override {}
  void record_start() override {}
  void record_stop() override {}
  void delay(std::int64_t) override {}
  std::int64_t release_and_wait_ns() override {
    ++releases;
    return overhead_ns + queued_ns;
  }
  void abandon() noexcept override { ++abandons; }
  void release() noexcept override {}
  void synchronize() override {}
};

struct Rig {
  FakeSource* src = nullptr;
  std::unique_ptr<Profiler> prof;
  QueueDevice dev;
  Rig() {
    auto owned = std::make_unique<FakeSource>();
    src = owned.get();
    prof = std::make_unique<Profiler>(std::move(owned));
    prof->start();
  }
  /// One call: a kernel named `kernel` in the fake source (50 ns there) and `event_ns` of queue.
  std::function<void()> launch(const std::string& kernel, std::int64_t event_ns, int kernels = 1) {
    return [this, kernel, event_ns, kernels] {
      for (int i = 0; i < kernels; ++i) src->launch(kernel);
      dev.queued_ns += event_ns;
    };
  }
};

/// Sets every kernel named `kernel` to last `ns`.
void set_duration(RawSession& raw, const std::string& kernel, std::int64_t ns) {
  for (RawRecord& r : raw.records) {
    if (r.kind == RawKind::Kernel && r.name == kernel) r.end_ns = r.start_ns + ns;
  }
}

TEST(AbBlocks, RoundsAlternateABThenBA) {
  EXPECT_EQ(ab_op_of(0, 0), 0);
  EXPECT_EQ(ab_op_of(0, 1), 1);
  EXPECT_EQ(ab_op_of(1, 0), 1);
  EXPECT_EQ(ab_op_of(1, 1), 0);
  EXPECT_EQ(ab_op_of(2, 0), 0);
}

TEST(AbBlocks, EachBlockIsOneStepAndRoundsPairFromStepMetrics) {
  Rig r;
  const int rounds = 5, launches = 4;
  const std::array<std::string, 2> fixtures{"matmul/bf16/256", "addmm/bf16/256"};
  // A: one 50 ns kernel per call (changed to 80 ns below) and 1000 ns of event time per call;
  // B: two kernels per call (a copy and a GEMM, as addmm) of 60 ns each and 1500 ns per call.
  const std::function<void()> launch[2] = {r.launch("gemm_a", 1000), r.launch("gemm_b", 1500, 2)};
  r.prof->begin_fixture(Schedule{0, 0, 2 * rounds});
  std::vector<int> order;
  SampleSpec spec;
  spec.launches = launches;
  for (int round = 0; round < rounds; ++round) {
    for (int j = 0; j < 2; ++j) {
      const int k = ab_op_of(round, j);
      order.push_back(k);
      const TimedCall c =
          timed_sample(launch[k], *r.prof, r.dev, fixtures[static_cast<std::size_t>(k)], "xb::op", spec);
      EXPECT_TRUE(c.recorded);
    }
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 1, 0, 0, 1, 1, 0, 0, 1}));
  RawSession raw = r.prof->stop();
  EXPECT_EQ(raw.meta.dropped_records, 0u);
  ASSERT_EQ(raw.event_timings.size(), 2u * rounds);
  set_duration(raw, "gemm_a", 80);
  set_duration(raw, "gemm_b", 60);
  const AbRounds ab = ab_rounds(step_metrics(build_session(raw)), fixtures, rounds);
  for (std::size_t k = 0; k < 2; ++k) {
    ASSERT_EQ(ab.device_ns[k].size(), static_cast<std::size_t>(rounds));
    ASSERT_EQ(ab.event_ns[k].size(), static_cast<std::size_t>(rounds));
    ASSERT_EQ(ab.span_ns[k].size(), static_cast<std::size_t>(rounds));
  }
  ASSERT_EQ(ab.device_ratio.size(), static_cast<std::size_t>(rounds));
  for (int i = 0; i < rounds; ++i) {
    const auto ri = static_cast<std::size_t>(i);
    EXPECT_DOUBLE_EQ(ab.device_ns[0][ri], 80.0);
    EXPECT_DOUBLE_EQ(ab.device_ns[1][ri], 120.0);  // both kernels of a call counted
    EXPECT_DOUBLE_EQ(ab.event_ns[0][ri], (400.0 + 4 * 1000) / 4);
    EXPECT_DOUBLE_EQ(ab.event_ns[1][ri], (400.0 + 4 * 1500) / 4);
    EXPECT_DOUBLE_EQ(ab.device_ratio[ri], 1.5);
    EXPECT_DOUBLE_EQ(ab.event_ratio[ri], 1600.0 / 1100.0);
    EXPECT_GT(ab.span_ns[0][ri], 0.0);
  }
  EXPECT_EQ(r.dev.holds, 2 * rounds);
  EXPECT_EQ(r.dev.releases, 2 * rounds);
  EXPECT_EQ(r.dev.abandons, 0);
}

TEST(AbBlocks, ABlockWithoutItsDeviceActivitiesIsAnError) {
  Rig r;
  const std::array<std::string, 2> fixtures{"a/bf16/64", "b/bf16/64"};
  SampleSpec spec;
  spec.launches = 3;
  r.prof->begin_fixture(Schedule{0, 0, 4});
  int b_calls = 0;
  const std::function<void()> a = r.launch("ka", 100);
  const std::function<void()> b = [&] {
    if (++b_calls != 5) r.src->launch("kb");  // round 1's block of B loses one of its kernels
    r.dev.queued_ns += 100;
  };
  for (int round = 0; round < 2; ++round) {
    for (int j = 0; j < 2; ++j) {
      const int k = ab_op_of(round, j);
      timed_sample(k == 0 ? a : b, *r.prof, r.dev, fixtures[static_cast<std::size_t>(k)], "xb::op", spec);
    }
  }
  const std::vector<StepMetrics> steps = step_metrics(build_session(r.prof->stop()));
  try {
    ab_rounds(steps, fixtures, 2);
    FAIL() << "expected ProfilerError";
  } catch (const ProfilerError& e) {
    EXPECT_STREQ(e.what(), "b/bf16/64, round 1: 2 device activities for 3 calls");
  }
  // Fewer rounds recorded than asked for.
  EXPECT_THROW(ab_rounds(steps, fixtures, 3), ProfilerError);
  try {
    fixture_blocks(steps, "a/bf16/64", 3, false);
    FAIL() << "expected ProfilerError";
  } catch (const ProfilerError& e) {
    EXPECT_STREQ(e.what(), "a/bf16/64: 2 recorded blocks, expected 3");
  }
}

TEST(AbBlocks, ExactBlocksRejectExtraActivities) {
  Rig r;
  SampleSpec spec;
  spec.launches = 2;
  r.prof->begin_fixture(Schedule{0, 0, 1});
  timed_sample(r.launch("k", 10, 2), *r.prof, r.dev, "f", "xb::op", spec);  // two kernels per call
  const std::vector<StepMetrics> steps = step_metrics(build_session(r.prof->stop()));
  EXPECT_EQ(fixture_blocks(steps, "f", 1, false).size(), 1u);
  try {
    fixture_blocks(steps, "f", 1, true, "pass");
    FAIL() << "expected ProfilerError";
  } catch (const ProfilerError& e) {
    EXPECT_STREQ(e.what(), "f, pass 0: 4 device activities for 2 calls");
  }
}

TEST(AbBlocks, TuneAddPassesRecordOnlyTheTimedSampleOfEachConfig) {
  // tune-add's pattern: per pass and config, a fixture of one wait step (the untimed launches)
  // and one active step (the timed ones); each config's passes are its blocks.
  Rig r;
  const int passes = 3, launches = 5;
  const std::vector<std::string> configs{"add/fp16/64:v1/t256/default", "add/fp16/64:v2/t128/default"};
  SampleSpec untimed, timed;
  untimed.launches = 3;
  timed.launches = launches;
  for (int pass = 0; pass < passes; ++pass) {
    for (std::size_t c = 0; c < configs.size(); ++c) {
      const auto launch = r.launch(c == 0 ? "add_v1" : "add_v2", 100 * static_cast<std::int64_t>(c + 1));
      r.prof->begin_fixture(Schedule{1, 0, 1});
      EXPECT_FALSE(timed_sample(launch, *r.prof, r.dev, configs[c], "xb::add", untimed).recorded);
      EXPECT_TRUE(timed_sample(launch, *r.prof, r.dev, configs[c], "xb::add", timed).recorded);
    }
  }
  RawSession raw = r.prof->stop();
  EXPECT_EQ(raw.event_timings.size(), static_cast<std::size_t>(passes) * configs.size());
  set_duration(raw, "add_v2", 70);
  const std::vector<StepMetrics> steps = step_metrics(build_session(raw));
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const std::vector<StepMetrics> blocks = fixture_blocks(steps, configs[c], passes, true, "pass");
    for (const StepMetrics& b : blocks) EXPECT_EQ(b.launches, launches);
    for (double d : device_per_call_ns(blocks)) EXPECT_DOUBLE_EQ(d, c == 0 ? 50.0 : 70.0);
    for (double e : event_per_call_ns(blocks))
      EXPECT_DOUBLE_EQ(e, (400.0 + launches * 100.0 * static_cast<double>(c + 1)) / launches);
  }
}

}  // namespace
}  // namespace xb
