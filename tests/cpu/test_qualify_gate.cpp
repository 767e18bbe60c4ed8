// The qualification gate (bench/gate/gate.h): Mann-Whitney U against scipy and a hand computation,
// the throttling rule, the thresholds by class, and verdicts on synthetic sample sets (clear
// regression, noise-only difference, improvement, throttled, noisy, failed) and on real H200
// samples (tests/data/qualify).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/gate/gate.h"
#include "bench/qualify/qualify_files.h"
#include "common/stats.h"
#include "kernels/nvml_probe.h"
#include "kernels/workload.h"

namespace xb {
namespace {

const std::string kH200 = "NVIDIA H200";
const std::string kData = std::string(XB_TEST_DATA_DIR) + "/qualify";

// ---- Mann-Whitney U -------------------------------------------------------------------------

TEST(MannWhitney, HandComputedWithTies) {
  // a = {1,2,2,3,4}, b = {2,3,3,5,6,7}. Pooled ranks: 1 -> 1; the three 2s share ranks 2..4 (mid
  // 3); the three 3s share 5..7 (mid 6); 4 -> 8; 5, 6, 7 -> 9, 10, 11. R1 = 1 + 3 + 3 + 6 + 8 = 21,
  // U1 = 21 - 5*6/2 = 6, mu = 5*6/2 = 15. Ties: two groups of 3: sum(t^3 - t) = 48; sigma^2 =
  // 30/12 * (12 - 48/(11*10)) = 28.909..., z = -(|6 - 15| - 0.5) / sigma = -1.5809, p = erfc(1.5809/sqrt 2).
  const MannWhitney r = mann_whitney_u({1, 2, 2, 3, 4}, {2, 3, 3, 5, 6, 7});
  EXPECT_EQ(r.n1, 5u);
  EXPECT_EQ(r.n2, 6u);
  EXPECT_DOUBLE_EQ(r.u1, 6);
  const double sigma = std::sqrt(30.0 / 12 * (12 - 48.0 / 110));
  EXPECT_NEAR(r.z, -8.5 / sigma, 1e-12);
  // scipy.stats.mannwhitneyu([1,2,2,3,4], [2,3,3,5,6,7], alternative="two-sided",
  // method="asymptotic", use_continuity=True) (scipy 1.17.1): statistic 6.0, pvalue 0.11390314458853068.
  EXPECT_NEAR(r.p, 0.11390314458853068, 1e-12);
}

TEST(MannWhitney, AgainstScipy) {
  // Reference values: scipy 1.17.1, mannwhitneyu(a, b, alternative="two-sided", method="asymptotic",
  // use_continuity=True); its statistic is U of the first sample.
  struct Case {
    std::vector<double> a, b;
    double u, p;
  };
  std::vector<double> seq_a, seq_b, tie_a, tie_b;
  for (int i = 0; i < 60; ++i) seq_a.push_back((i * 37) % 101);
  for (int i = 0; i < 70; ++i) seq_b.push_back((i * 53) % 97 + 5);
  for (int i = 0; i < 40; ++i) tie_a.push_back(i % 4);
  for (int i = 0; i < 50; ++i) tie_b.push_back(i % 5);
  const std::vector<Case> cases = {
      {{1, 2, 3}, {4, 5, 6}, 0.0, 0.08085559837005224},
      {seq_a, seq_b, 2015.0, 0.693102109486446},
      {tie_a, tie_b, 800.0, 0.09735936110021222},  // heavy ties: the tie correction matters
  };
  for (const Case& c : cases) {
    const MannWhitney r = mann_whitney_u(c.a, c.b);
    EXPECT_DOUBLE_EQ(r.u1, c.u);
    EXPECT_NEAR(r.p, c.p, 1e-12) << "n1 = " << c.a.size();
  }
}

TEST(MannWhitney, SymmetricAndDegenerate) {
  const std::vector<double> a{5, 7, 9, 11, 13}, b{6, 8, 30, 40};
  const MannWhitney ab = mann_whitney_u(a, b), ba = mann_whitney_u(b, a);
  EXPECT_DOUBLE_EQ(ab.u1 + ba.u1, 20.0);  // U1 + U2 = n1 n2
  EXPECT_DOUBLE_EQ(ab.p, ba.p);
  EXPECT_DOUBLE_EQ(ab.z, -ba.z);
  // Every value tied: no evidence either way.
  const MannWhitney same = mann_whitney_u({3, 3, 3}, {3, 3});
  EXPECT_DOUBLE_EQ(same.p, 1.0);
  EXPECT_DOUBLE_EQ(same.z, 0.0);
  EXPECT_THROW(mann_whitney_u({}, {1}), std::invalid_argument);
  EXPECT_THROW(mann_whitney_u({1, NAN}, {1}), std::invalid_argument);
}

TEST(MannWhitney, LargeSamplesFastAndExtreme) {
  // 5000 samples a side (a long fixture): one sort, and a complete separation gives p near 0.
  std::vector<double> a, b;
  for (int i = 0; i < 5000; ++i) {
    a.push_back(1000 + i % 97);
    b.push_back(2000 + i % 89);
  }
  const MannWhitney r = mann_whitney_u(a, b);
  EXPECT_DOUBLE_EQ(r.u1, 0.0);
  EXPECT_LT(r.p, 1e-300 * 1e10);
  EXPECT_LT(r.z, -80);
}

// ---- synthetic fixtures ---------------------------------------------------------------------

GpuClockSample clock(int sm_mhz, std::uint64_t mask) {
  GpuClockSample s;
  s.valid = true;
  s.sm_clock_mhz = sm_mhz;
  s.mem_clock_mhz = 3201;
  s.temperature_c = 50;
  s.power_w = 500;
  s.throttle_reasons = mask;
  s.throttled = is_throttled(mask);
  return s;
}

FixtureRecord fixture(const std::string& op, std::int64_t n, std::vector<double> samples) {
  FixtureRecord f;
  f.op = op;
  f.dtype = "bf16";
  f.size = n;
  f.name = op + "/bf16/" + std::to_string(n);
  f.mode = TimingMode::Hot;
  f.flops = op_flops(parse_op(op), n);
  f.bytes = op_bytes(parse_op(op), DType::BF16, n);
  f.stop = StopReason::Converged;
  f.max_noise = 0.005;
  f.samples_ns = std::move(samples);
  f.gpu_before = f.gpu_after = clock(1980, 0);
  return f;
}

/// `count` samples around `median_ns` with relative spread `rsd` (normal), seeded.
std::vector<double> draw(double median_ns, double rsd, int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, rsd);
  std::vector<double> v;
  for (int i = 0; i < count; ++i) v.push_back(median_ns * (1 + noise(rng)));
  return v;
}

std::vector<double> scaled(std::vector<double> v, double factor) {
  for (double& x : v) x *= factor;
  return v;
}

TEST(Gate, ClearRegression) {
  // add/bf16/4096 (26 us, memory-bound): 5% slower, 800 samples at 0.25% RSD (its H200 noise).
  const FixtureRecord base = fixture("add", 4096, draw(26'200, 0.0025, 800, 1));
  const FixtureRecord now = fixture("add", 4096, scaled(draw(26'200, 0.0025, 800, 2), 1.05));
  const GateResult r = gate_fixture(now, &base, kH200, GateRules{});
  EXPECT_EQ(r.cls, FixtureClass::Memory);
  EXPECT_DOUBLE_EQ(r.threshold, 0.03);
  EXPECT_NEAR(r.delta, 0.05, 0.003);
  EXPECT_LT(r.test.p, 1e-100);
  EXPECT_EQ(r.verdict, Verdict::Regression) << r.reason;
  EXPECT_EQ(r.comparison, Verdict::Regression);
  EXPECT_EQ(qualify_exit_code({r}, false), 1);
}

TEST(Gate, NoiseOnlyDifferenceIsUnchanged) {
  // Two draws of the same distribution, 2% RSD (a power-capped GEMM): medians differ by noise only.
  const FixtureRecord base = fixture("matmul", 4096, draw(197'000, 0.02, 3000, 3));
  const FixtureRecord now = fixture("matmul", 4096, draw(197'000, 0.02, 3000, 4));
  const GateResult r = gate_fixture(now, &base, kH200, GateRules{});
  EXPECT_EQ(r.cls, FixtureClass::Compute);
  EXPECT_LT(std::fabs(r.delta), 0.01);
  EXPECT_EQ(r.verdict, Verdict::Unchanged) << r.reason;
  EXPECT_EQ(qualify_exit_code({r}, false), 0);
}

TEST(Gate, SignificantButSmallIsUnchanged) {
  // 1% slower with thousands of samples: significant, but under the 3% threshold.
  const FixtureRecord base = fixture("matmul", 4096, draw(197'000, 0.002, 3000, 5));
  const FixtureRecord now = fixture("matmul", 4096, scaled(draw(197'000, 0.002, 3000, 6), 1.01));
  const GateResult r = gate_fixture(now, &base, kH200, GateRules{});
  EXPECT_LT(r.test.p, 1e-10);
  EXPECT_EQ(r.verdict, Verdict::Unchanged);
  EXPECT_NE(r.reason.find("within the 3% threshold"), std::string::npos) << r.reason;
}

TEST(Gate, LargeButNotSignificantIsUnchanged) {
  // Twelve samples a side, two clusters each: the median moves 7.5% but U gives p = 0.04 > 0.01.
  std::vector<double> b, n;
  for (int i = 0; i < 6; ++i) {
    b.insert(b.end(), {50'000, 150'000});
    n.insert(n.end(), {55'000, 160'000});
  }
  const FixtureRecord base = fixture("add", 8192, b);
  const GateResult r = gate_fixture(fixture("add", 8192, n), &base, kH200, GateRules{});
  EXPECT_NEAR(r.delta, 0.075, 1e-12);
  EXPECT_GT(r.test.p, 0.01);
  EXPECT_EQ(r.verdict, Verdict::Unchanged);
  EXPECT_NE(r.reason.find("not significant"), std::string::npos) << r.reason;
}

TEST(Gate, Improvement) {
  const FixtureRecord base = fixture("addmm", 8192, draw(1'650'000, 0.01, 1500, 7));
  const FixtureRecord now = fixture("addmm", 8192, scaled(draw(1'650'000, 0.01, 1500, 8), 0.90));
  const GateResult r = gate_fixture(now, &base, kH200, GateRules{});
  EXPECT_NEAR(r.delta, -0.10, 0.005);
  EXPECT_EQ(r.verdict, Verdict::Improvement) << r.reason;
  EXPECT_EQ(qualify_exit_code({r}, false), 0);
}

TEST(Gate, OverheadBoundFixturesGetTheLooserThreshold) {
  // add/bf16/64 at 1.9 us: overhead-bound, 10% threshold.
  const FixtureRecord base = fixture("add", 64, draw(1'900, 0.002, 400, 9));
  const GateResult seven =
      gate_fixture(fixture("add", 64, scaled(draw(1'900, 0.002, 400, 10), 1.07)), &base, kH200, GateRules{});
  EXPECT_EQ(seven.cls, FixtureClass::Overhead);
  EXPECT_DOUBLE_EQ(seven.threshold, 0.10);
  EXPECT_EQ(seven.verdict, Verdict::Unchanged);
  const GateResult twelve =
      gate_fixture(fixture("add", 64, scaled(draw(1'900, 0.002, 400, 11), 1.12)), &base, kH200, GateRules{});
  EXPECT_EQ(twelve.verdict, Verdict::Regression);
  // --threshold 5 replaces both thresholds.
  GateRules five;
  five.threshold_override = 0.05;
  EXPECT_EQ(gate_fixture(fixture("add", 64, scaled(draw(1'900, 0.002, 400, 10), 1.07)), &base, kH200, five).verdict,
            Verdict::Regression);
}

TEST(Gate, ClassesFromTheDatasheetRoofline) {
  const GateRules rules;
  EXPECT_EQ(classify_fixture(fixture("matmul", 4096, {}), 197'000, kH200, rules), FixtureClass::Compute);
  EXPECT_EQ(classify_fixture(fixture("add", 8192, {}), 94'000, kH200, rules), FixtureClass::Memory);
  EXPECT_EQ(classify_fixture(fixture("matmul", 1024, {}), 6'200, kH200, rules), FixtureClass::Overhead);
  EXPECT_EQ(classify_fixture(fixture("matmul", 4096, {}), 197'000, "Some Other GPU", rules), FixtureClass::Throughput);
  EXPECT_STREQ(to_string(FixtureClass::Throughput), "compute- or memory-bound");
}

TEST(Gate, ThrottledIsInconclusiveNeverPass) {
  FixtureRecord base = fixture("matmul", 4096, draw(197'000, 0.005, 2000, 12));
  FixtureRecord now = fixture("matmul", 4096, scaled(draw(197'000, 0.005, 2000, 13), 1.06));
  now.gpu_after = clock(1200, clocks_event::kHwThermalSlowdown | clocks_event::kSwPowerCap);
  const GateResult r = gate_fixture(now, &base, kH200, GateRules{});
  EXPECT_TRUE(r.throttled);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_EQ(r.comparison, Verdict::Regression);  // what the numbers alone say is kept
  EXPECT_NE(r.reason.find("HwThermalSlowdown"), std::string::npos) << r.reason;
  EXPECT_EQ(qualify_exit_code({r}, false), 3);
  // Unchanged numbers do not rescue a throttled fixture either.
  FixtureRecord same = fixture("matmul", 4096, draw(197'000, 0.005, 2000, 14));
  same.gpu_before = clock(1980, clocks_event::kHwSlowdown);
  EXPECT_EQ(gate_fixture(same, &base, kH200, GateRules{}).verdict, Verdict::Inconclusive);
  // A baseline recorded hard-throttled makes every comparison against it inconclusive.
  FixtureRecord hot_base = base;
  hot_base.gpu_after = clock(1300, clocks_event::kSwThermalSlowdown);
  EXPECT_EQ(
      gate_fixture(fixture("matmul", 4096, draw(197'000, 0.005, 2000, 15)), &hot_base, kH200, GateRules{}).verdict,
      Verdict::Inconclusive);
}

TEST(Gate, PowerCapRuleAgainstTheBaseline) {
  // The H200 measurements behind the rule: sustained bf16 GEMMs at 4096 and 8192 always run at
  // the power cap (SwPowerCap, SM ~1575 MHz instead of 1980), so a power cap seen in both runs is
  // the GEMM's normal state, not throttling.
  const GateRules rules;
  FixtureRecord base = fixture("matmul", 4096, draw(197'000, 0.01, 2000, 16));
  base.gpu_before = clock(1650, clocks_event::kSwPowerCap);
  base.gpu_after = clock(1575, clocks_event::kSwPowerCap);
  FixtureRecord now = fixture("matmul", 4096, draw(197'000, 0.01, 2000, 17));
  now.gpu_before = clock(1620, clocks_event::kSwPowerCap);
  now.gpu_after = clock(1590, clocks_event::kSwPowerCap);
  ThrottleCheck c = check_throttle(now, &base, rules);
  EXPECT_FALSE(c.throttled) << c.reason;
  EXPECT_NE(c.reason.find("as in the baseline"), std::string::npos);
  EXPECT_EQ(gate_fixture(now, &base, kH200, rules).verdict, Verdict::Unchanged);

  // Power-capped now, not in the baseline: throttled.
  FixtureRecord free_base = base;
  free_base.gpu_before = free_base.gpu_after = clock(1980, 0);
  c = check_throttle(now, &free_base, rules);
  EXPECT_TRUE(c.throttled);
  EXPECT_NE(c.reason.find("where the baseline was not"), std::string::npos) << c.reason;

  // Both capped, but the clock is 15% lower than the baseline's: throttled.
  FixtureRecord slow_clock = now;
  slow_clock.gpu_before = slow_clock.gpu_after = clock(1375, clocks_event::kSwPowerCap);
  c = check_throttle(slow_clock, &base, rules);
  EXPECT_TRUE(c.throttled);
  EXPECT_NE(c.reason.find("more than 10%"), std::string::npos) << c.reason;

  // Not capped now while the baseline was: not throttling (the GPU ran freer than before).
  FixtureRecord free_now = now;
  free_now.gpu_before = free_now.gpu_after = clock(1980, 0);
  EXPECT_FALSE(check_throttle(free_now, &base, rules).throttled);

  // No baseline (--update-baseline): a power cap alone is recorded, not inconclusive.
  EXPECT_FALSE(check_throttle(now, nullptr, rules).throttled);
  EXPECT_EQ(gate_fixture(now, nullptr, kH200, rules).verdict, Verdict::Recorded);

  // NVML unavailable: not throttled, and said so.
  FixtureRecord blind = now;
  blind.gpu_before = blind.gpu_after = GpuClockSample{};
  c = check_throttle(blind, &base, rules);
  EXPECT_FALSE(c.throttled);
  EXPECT_NE(c.reason.find("not checked"), std::string::npos);
}

TEST(Gate, PowerCappedInBothRunsGetsTheLooserThreshold) {
  // An unchanged build gated on the H200: addmm_bias1d/bf16/4096 came out 3.1% slower, power-capped
  // in both runs (results/h200/qualify-2026-11-29). Both capped: 5%, so +3.1% is unchanged; +7% is
  // still a regression; not capped: the 3% threshold.
  FixtureRecord base = fixture("matmul", 4096, draw(194'600, 0.004, 2000, 30));
  base.gpu_before = clock(1650, clocks_event::kSwPowerCap);
  base.gpu_after = clock(1575, clocks_event::kSwPowerCap);
  FixtureRecord now = fixture("matmul", 4096, scaled(draw(194'600, 0.004, 2000, 31), 1.031));
  now.gpu_before = clock(1620, clocks_event::kSwPowerCap);
  now.gpu_after = clock(1590, clocks_event::kSwPowerCap);
  GateResult r = gate_fixture(now, &base, kH200, GateRules{});
  EXPECT_DOUBLE_EQ(r.threshold, 0.05);
  EXPECT_EQ(r.verdict, Verdict::Unchanged) << r.reason;
  now.samples_ns = scaled(draw(194'600, 0.004, 2000, 32), 1.07);
  EXPECT_EQ(gate_fixture(now, &base, kH200, GateRules{}).verdict, Verdict::Regression);
  FixtureRecord free_base = fixture("matmul", 4096, draw(194'600, 0.004, 2000, 30));
  FixtureRecord free_now = fixture("matmul", 4096, scaled(draw(194'600, 0.004, 2000, 31), 1.031));
  r = gate_fixture(free_now, &free_base, kH200, GateRules{});
  EXPECT_DOUBLE_EQ(r.threshold, 0.03);
  EXPECT_EQ(r.verdict, Verdict::Regression) << r.reason;
}

TEST(Gate, NoisyIsInconclusiveNeverPass) {
  const FixtureRecord base = fixture("matmul", 8192, draw(1'600'000, 0.03, 1700, 18));
  FixtureRecord now = fixture("matmul", 8192, draw(1'600'000, 0.03, 1700, 19));
  now.stop = StopReason::TimedOut;
  GateResult r = gate_fixture(now, &base, kH200, GateRules{});
  EXPECT_TRUE(r.noisy);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_NE(r.reason.find("precision target 0.50% not met (median known to"), std::string::npos) << r.reason;
  // A noisy baseline too.
  FixtureRecord noisy_base = base;
  noisy_base.stop = StopReason::TimedOut;
  r = gate_fixture(fixture("matmul", 8192, draw(1'600'000, 0.03, 1700, 20)), &noisy_base, kH200, GateRules{});
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_NE(r.reason.find("baseline missed"), std::string::npos) << r.reason;
  // Too few samples.
  r = gate_fixture(fixture("matmul", 8192, draw(1'600'000, 0.001, 5, 21)), &base, kH200, GateRules{});
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_NE(r.reason.find("too few samples"), std::string::npos) << r.reason;
}

TEST(Gate, FailedFixtureFailsQualification) {
  const FixtureRecord base = fixture("add", 4096, draw(26'200, 0.0025, 800, 22));
  FixtureRecord now = fixture("add", 4096, {});
  now.error = "wrong result: relative error 1.0e+00 > tolerance 1.0e-02";
  const GateResult r = gate_fixture(now, &base, kH200, GateRules{});
  EXPECT_EQ(r.verdict, Verdict::Failed);
  EXPECT_EQ(r.reason, now.error);
  const GateResult ok = gate_fixture(fixture("add", 4096, draw(26'200, 0.0025, 800, 23)), &base, kH200, GateRules{});
  EXPECT_EQ(qualify_exit_code({ok, r}, false), 1);
  EXPECT_EQ(qualify_exit_code({ok}, true), 1);  // a validation failure fails qualification
  const VerdictCounts c = count_verdicts({ok, r});
  EXPECT_EQ(c.failed, 1u);
  EXPECT_EQ(c.unchanged, 1u);
}

// ---- real H200 samples ----------------------------------------------------------------------

TEST(GateOnH200, TwoWarmRunsAgreeAndADelayRegresses) {
  // Two back-to-back `bench --size 4096 --warmup` runs on the H200 (tests/data/qualify/README.md).
  const Baseline run1 = read_baseline(kData + "/h200-warm-1.json");
  const Baseline run2 = read_baseline(kData + "/h200-warm-2.json");
  const GateRules rules;
  for (const FixtureRecord& now : run2.fixtures) {
    const FixtureRecord* base = run1.find(now.key());
    ASSERT_NE(base, nullptr) << now.key();
    const GateResult r = gate_fixture(now, base, run2.environment.gpu_name, rules);
    EXPECT_NE(r.verdict, Verdict::Regression) << r.key << ": " << r.reason;
    EXPECT_NE(r.verdict, Verdict::Improvement) << r.key << ": " << r.reason;
    EXPECT_LT(std::fabs(r.delta), 0.01) << r.key;
    if (now.name == "matmul/bf16/4096") {
      // warm-1's matmul missed its 0.5% noise target (RSD 2.4%): no claim either way.
      EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.reason;
      // Both runs power-capped at similar clocks: the cap is not what makes it inconclusive.
      EXPECT_FALSE(r.throttled) << r.reason;
    } else {
      // add starts with the GEMM's power cap still set, in both runs: not throttling.
      EXPECT_EQ(r.verdict, Verdict::Unchanged) << r.key << ": " << r.reason;
    }
  }
  // The same add samples with a 10 us delay per call: a regression of about 10 us (+38%).
  const FixtureRecord* add1 = run1.find("add/bf16/4096 (hot)");
  FixtureRecord slowed = *run2.find("add/bf16/4096 (hot)");
  for (double& x : slowed.samples_ns) x += 10'000;
  const GateResult r = gate_fixture(slowed, add1, kH200, rules);
  EXPECT_EQ(r.verdict, Verdict::Regression) << r.reason;
  EXPECT_NEAR(r.delta_ns, 10'000, 100);
  EXPECT_NEAR(r.delta, 10'000 / 26'375.0, 0.01);
}

}  // namespace
}  // namespace xb
