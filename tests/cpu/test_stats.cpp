// Sample statistics against hand-computed (and numpy-checked) values, and the stopping rule on
// synthetic sample streams.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "bench/core/stopping_rule.h"
#include "profiler/stats.h"

namespace xb {
namespace {

TEST(SampleStats, KnownValuesEvenCount) {
  // numpy: median 2.5, percentile 25/75 = 1.75/3.25, std(ddof=1) = 1.2909944487358056.
  const SampleStats s = compute_stats(std::vector<double>{4, 1, 3, 2});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.stddev, 1.2909944487358056, 1e-12);
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  EXPECT_DOUBLE_EQ(s.mad, 1.0);  // |x - 2.5| = 1.5, 0.5, 0.5, 1.5
  EXPECT_NEAR(s.rsd(), 1.2909944487358056 / 2.5, 1e-12);
}

TEST(SampleStats, KnownValuesOddCountWithOutlier) {
  // {10, 11, 12, 13, 100}: median 12, q1 11, q3 13, mean 29.2, MAD median{2,1,0,1,88} = 1.
  const SampleStats s = compute_stats(std::vector<std::int64_t>{100, 12, 10, 13, 11});
  EXPECT_DOUBLE_EQ(s.median, 12);
  EXPECT_DOUBLE_EQ(s.q1, 11);
  EXPECT_DOUBLE_EQ(s.q3, 13);
  EXPECT_DOUBLE_EQ(s.mean, 29.2);
  EXPECT_DOUBLE_EQ(s.mad, 1);
  // std(ddof=1) of the five values: sqrt(((19.2^2 + 18.2^2 + 17.2^2 + 16.2^2 + 70.8^2)) / 4).
  EXPECT_NEAR(s.stddev, std::sqrt((19.2 * 19.2 + 18.2 * 18.2 + 17.2 * 17.2 + 16.2 * 16.2 + 70.8 * 70.8) / 4), 1e-9);
}

TEST(SampleStats, EvenCountMedianIsTheMeanOfTheMiddleTwo) {
  // The case Google Benchmark 1.7.1 gets wrong: an even count whose middle values differ.
  EXPECT_DOUBLE_EQ(compute_stats(std::vector<double>{1, 2, 10, 20, 30, 40}).median, 15);
  EXPECT_DOUBLE_EQ(compute_stats(std::vector<double>{7, 3}).median, 5);
}

TEST(SampleStats, OneSample) {
  const SampleStats s = compute_stats(std::vector<double>{5});
  EXPECT_DOUBLE_EQ(s.median, 5);
  EXPECT_DOUBLE_EQ(s.q1, 5);
  EXPECT_DOUBLE_EQ(s.q3, 5);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_DOUBLE_EQ(s.rsd(), 0);
}

TEST(SampleStats, RejectsEmptyAndNonFinite) {
  EXPECT_THROW(compute_stats(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(compute_stats(std::vector<double>{1, NAN}), std::invalid_argument);
  EXPECT_THROW(compute_stats(std::vector<double>{1, INFINITY}), std::invalid_argument);
  EXPECT_THROW(quantile_sorted({1, 2}, 1.5), std::invalid_argument);
}

StoppingRule::Config config(int min_samples, double min_time, double max_time, double noise) {
  StoppingRule::Config c;
  c.min_samples = min_samples;
  c.min_time_s = min_time;
  c.max_time_s = max_time;
  c.max_noise = noise;
  return c;
}

TEST(StoppingRule, QuietStreamConvergesOnlyAfterMinSamplesAndMinTime) {
  StoppingRule rule(config(10, 0.5, 3.0, 0.005));
  // 0.1% noise: converges at the first sample that has both 10 samples and 0.5 s behind it.
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(1000.0, 1.0);
  int i = 0;
  for (; i < 100 && rule.state() == StoppingRule::State::Continue; ++i) rule.add(noise(rng), 0.1 * i);
  EXPECT_EQ(rule.state(), StoppingRule::State::Converged);
  EXPECT_EQ(rule.count(), 10u);  // samples at t = 0.0, 0.1, ...: the 10th (t = 0.9 s) has both
  EXPECT_LT(rule.rsd(), 0.005);
}

TEST(StoppingRule, NoisyStreamTimesOut) {
  StoppingRule rule(config(10, 0.1, 2.0, 0.005));
  std::mt19937 rng(2);
  std::normal_distribution<double> noise(1000.0, 50.0);  // 5% noise
  double t = 0;
  while (rule.state() == StoppingRule::State::Continue) {
    rule.add(noise(rng), t);
    t += 0.01;
  }
  EXPECT_EQ(rule.state(), StoppingRule::State::TimedOut);
  EXPECT_GT(rule.rsd(), 0.03);
  EXPECT_NEAR(static_cast<double>(rule.count()), 201, 1);  // t reaches 2.0 s at the 201st sample
  // Terminal state sticks.
  EXPECT_EQ(rule.add(1000, 5), StoppingRule::State::TimedOut);
}

TEST(StoppingRule, StreamThatSettlesConverges) {
  // A cold start (first samples 1.5x slower) then steady: RSD falls as steady samples pile up;
  // it reaches 1% near n = 3 * 500^2 / 10^2 = 7500 steady samples.
  StoppingRule rule(config(10, 0.0, 100.0, 0.01));
  for (int i = 0; i < 3; ++i) rule.add(1500, 0);
  int n = 0;
  while (rule.state() == StoppingRule::State::Continue && n < 100000) {
    rule.add(1000 + (n % 2), 0);
    ++n;
  }
  EXPECT_EQ(rule.state(), StoppingRule::State::Converged);
  EXPECT_GT(n, 5000);
  EXPECT_LT(n, 10000);
}

TEST(StoppingRule, TickTimesOutWithoutSamples) {
  StoppingRule rule(config(10, 0.0, 1.0, 0.005));
  EXPECT_EQ(rule.tick(0.5), StoppingRule::State::Continue);
  EXPECT_EQ(rule.tick(1.0), StoppingRule::State::TimedOut);
  EXPECT_STREQ(to_string(rule.state()), "timed out");
}

TEST(StoppingRule, RejectsBadConfigAndSamples) {
  EXPECT_THROW(StoppingRule(config(1, 0, 1, 0.005)), std::invalid_argument);
  EXPECT_THROW(StoppingRule(config(10, 2, 1, 0.005)), std::invalid_argument);
  EXPECT_THROW(StoppingRule(config(10, 0, 1, 0)), std::invalid_argument);
  StoppingRule rule(config(10, 0, 1, 0.005));
  EXPECT_THROW(rule.add(NAN, 0), std::invalid_argument);
}

}  // namespace
}  // namespace xb
