// Why a fixture is noisy (bench/core/noise_causes.h) and the event-vs-CUPTI verdict on the paired
// differences (validate/checks.h judge_pairs): pure functions, fixed inputs.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "bench/core/noise_causes.h"
#include "validate/checks.h"

namespace xb {
namespace {

GpuClockSample snapshot(int sm, int mem, std::uint64_t reasons) {
  GpuClockSample g;
  g.valid = true;
  g.sm_clock_mhz = sm;
  g.mem_clock_mhz = mem;
  g.throttle_reasons = reasons;
  g.throttled = reasons != 0;
  return g;
}

TEST(NoiseCauses, PowerCapAndClockMoveNamed) {
  FixtureTiming t;
  t.gpu_before = snapshot(1980, 3201, 0);
  t.gpu_after = snapshot(1620, 3201, 0x4);  // SwPowerCap
  const NoiseCauses c = noise_causes(t);
  ASSERT_TRUE(c.read);
  EXPECT_EQ(c.reasons, std::vector<std::string>{"SwPowerCap"});
  ASSERT_EQ(c.causes.size(), 2u);
  EXPECT_EQ(c.causes[0], "power cap (SwPowerCap)");
  EXPECT_EQ(c.causes[1], "SM clock moved 1980 -> 1620 MHz");
  EXPECT_EQ(c.text(), "power cap (SwPowerCap); SM clock moved 1980 -> 1620 MHz");
}

TEST(NoiseCauses, ThermalAndHardwareGroupedClockWithinTwoPercentSteady) {
  FixtureTiming t;
  t.gpu_before = snapshot(1650, 3201, 0x20);       // SwThermalSlowdown
  t.gpu_after = snapshot(1620, 2619, 0x40 | 0x8);  // HwThermalSlowdown | HwSlowdown; 1.8% SM move
  const NoiseCauses c = noise_causes(t);
  ASSERT_EQ(c.causes.size(), 3u);
  EXPECT_EQ(c.causes[0], "thermal slowdown (SwThermalSlowdown, HwThermalSlowdown)");
  EXPECT_EQ(c.causes[1], "hardware slowdown (HwSlowdown)");
  EXPECT_EQ(c.causes[2], "memory clock moved 3201 -> 2619 MHz");
}

TEST(NoiseCauses, NoReasonPointsElsewhereAndUnreadSaysWhy) {
  FixtureTiming t;
  t.gpu_before = snapshot(1980, 3201, 0x1);  // GpuIdle is not a cause
  t.gpu_after = snapshot(1980, 3201, 0);
  NoiseCauses c = noise_causes(t);
  EXPECT_TRUE(c.causes.empty());
  EXPECT_EQ(c.text(), "NVML saw no throttle reason and steady clocks (SM 1980 MHz): other processes or the host");
  t.gpu_after.valid = false;
  t.gpu_after.error = "NVML not available";
  c = noise_causes(t);
  EXPECT_FALSE(c.read);
  EXPECT_EQ(c.text(), "NVML not read: NVML not available");
}

TEST(JudgePairs, StablePairsAreClaimedWhateverTheirLevel) {
  // 200 steps, event - CUPTI 750 +- 40 ns, tolerance 2000 ns: claimed.
  std::mt19937 rng(3);
  std::normal_distribution<double> d(750, 40);
  std::vector<double> diffs;
  for (int i = 0; i < 200; ++i) diffs.push_back(d(rng));
  const vd::PairedVerdict v = vd::judge_pairs(diffs, 2000);
  EXPECT_EQ(v.status, CheckStatus::Passed);
  EXPECT_TRUE(v.reason.empty());
  EXPECT_NEAR(v.abs_median, 750, 15);
  EXPECT_TRUE(v.diff.bounded);
  EXPECT_LT(v.diff.high, 800);
}

TEST(JudgePairs, UnstablePairsAreNotClaimedWithTheInterval) {
  // The median |difference| is within 1500 ns, but the pairs switch between about 300 and 1800 ns
  // in long runs (the pairing itself drifts): the interval reaches beyond, not claimed.
  std::vector<double> diffs;
  for (int i = 0; i < 100; ++i) diffs.push_back((i / 25) % 2 == 0 ? 300.0 + i : 1800.0 - i);
  const vd::PairedVerdict v = vd::judge_pairs(diffs, 1500);
  EXPECT_EQ(v.status, CheckStatus::NotClaimed);
  EXPECT_NE(v.reason.find("the pairs are unstable: the 95% interval of the median event - CUPTI difference"),
            std::string::npos)
      << v.reason;
  EXPECT_NE(v.reason.find("beyond +-1500 ns"), std::string::npos) << v.reason;
}

TEST(JudgePairs, MedianOutsideFailsAndFewPairsUseTheirRange) {
  EXPECT_EQ(vd::judge_pairs({900, 950, 1000, 1100, 980, 1020}, 500).status, CheckStatus::Failed);
  // Three pairs cannot bound a 95% interval of the median: all three within +-500 ns: claimed.
  vd::PairedVerdict v = vd::judge_pairs({300, 420, 380}, 500);
  EXPECT_FALSE(v.diff.bounded);
  EXPECT_EQ(v.status, CheckStatus::Passed);
  // One of three beyond: not claimed, saying the pairs are too few to bound the median.
  v = vd::judge_pairs({300, 420, 2000}, 500);
  EXPECT_EQ(v.status, CheckStatus::NotClaimed);
  EXPECT_NE(v.reason.find("with 3 pairs too few to bound the median at 95%"), std::string::npos) << v.reason;
}

}  // namespace
}  // namespace xb
