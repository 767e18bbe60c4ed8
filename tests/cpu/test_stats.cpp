// Sample statistics against hand-computed (and numpy-checked) values, and the stopping rule on
// synthetic sample streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "bench/core/stopping_rule.h"
#include "common/stats.h"

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
  c.max_noise_fraction = noise;
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
  EXPECT_LT(rule.interval().half_width(), 0.005);
}

TEST(StoppingRule, NoisyStreamTimesOut) {
  StoppingRule rule(config(10, 0.1, 2.0, 0.005));
  std::mt19937 rng(2);
  std::normal_distribution<double> noise(1000.0, 50.0);  // 5% noise: 201 samples fix the median to ~0.9%
  double t = 0;
  while (rule.state() == StoppingRule::State::Continue) {
    rule.add(noise(rng), t);
    t += 0.01;
  }
  EXPECT_EQ(rule.state(), StoppingRule::State::TimedOut);
  EXPECT_GT(rule.interval().half_width(), 0.005);
  EXPECT_NEAR(static_cast<double>(rule.count()), 201, 1);  // t reaches 2.0 s at the 201st sample
  // Terminal state sticks.
  EXPECT_EQ(rule.add(1000, 5), StoppingRule::State::TimedOut);
}

TEST(StoppingRule, ColdStartDoesNotHoldTheMedianBack) {
  // A cold start (first 3 samples 1.5x slower) then steady: the samples' RSD stays above 1% for
  // thousands of samples (3 * 500^2 / n), but the median is fixed as soon as the steady samples
  // outnumber the slow ones enough for the interval's ranks to exclude them.
  StoppingRule rule(config(10, 0.0, 100.0, 0.01));
  std::vector<double> all;
  for (int i = 0; i < 3; ++i) {
    rule.add(1500, 0);
    all.push_back(1500);
  }
  int n = 0;
  while (rule.state() == StoppingRule::State::Continue && n < 100000) {
    rule.add(1000 + (n % 2), 0);
    all.push_back(1000 + (n % 2));
    ++n;
  }
  EXPECT_EQ(rule.state(), StoppingRule::State::Converged);
  EXPECT_LT(n, 40);
  EXPECT_GT(compute_stats(all).rsd(), 0.05);
}

/// A power-capped GEMM as the H200 gives it (issue 30): the SM clock oscillates under the cap (a
/// triangle of +-1% over 37 samples), slowly correlated noise (AR(1), phi 0.9, 0.3%), and a heavy
/// right tail (15% of samples slower by an exponential amount, mean 5%): RSD about 2.5%.
/// `ramp_per_sample`: a drift of the median itself, a fraction per sample.
std::vector<double> power_capped_series(std::size_t n, std::uint32_t seed, double ramp_per_sample) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> gauss(0.0, 0.003 * std::sqrt(1 - 0.81));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::exponential_distribution<double> tail(1 / 0.05);
  std::vector<double> out;
  double ar = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ar = 0.9 * ar + gauss(rng);
    const double phase = static_cast<double>(i % 37) / 37.0;
    const double clock = 0.01 * (4 * std::fabs(phase - 0.5) - 1);
    double x = 200'000 * (1 + clock + ar + ramp_per_sample * static_cast<double>(i));
    if (unit(rng) < 0.15) x *= 1 + tail(rng);
    out.push_back(x);
  }
  return out;
}

TEST(StoppingRule, PowerCappedSeriesStopsOnTheMedianDespiteItsSpread) {
  // 4000 samples in 0.5 s (a 125 us GEMM sample): the spread misses a 0.5% RSD target by 5x, the
  // median is known to about 0.05%, so the rule stops at min-time.
  const std::vector<double> x = power_capped_series(20000, 7, 0);
  StoppingRule rule(config(10, 0.5, 3.0, 0.005));
  std::size_t i = 0;
  while (rule.state() == StoppingRule::State::Continue && i < x.size()) {
    rule.add(x[i], static_cast<double>(i) * 125e-6);
    ++i;
  }
  EXPECT_EQ(rule.state(), StoppingRule::State::Converged);
  EXPECT_EQ(rule.count(), 4001u);  // the sample at t = 0.5 s
  const std::vector<double> taken(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(rule.count()));
  const double rsd = compute_stats(taken).rsd();
  EXPECT_GT(rsd, 0.02);
  EXPECT_LT(rsd, 0.03);
  const MedianInterval ci = rule.interval();
  EXPECT_TRUE(ci.bounded);
  EXPECT_EQ(ci.batches, 20u);
  EXPECT_LT(ci.half_width(), 0.001);
  EXPECT_LE(ci.low, ci.median);
  EXPECT_GE(ci.high, ci.median);
}

TEST(StoppingRule, SeriesWhoseMedianMovesDoesNotStop) {
  // The same series drifting by 10% per second (a clock that keeps falling), 1 ms per sample: in
  // any window the median moves by more than the target, so the rule times out at 3 s.
  const std::vector<double> x = power_capped_series(3001, 8, 0.10 / 1000);
  StoppingRule rule(config(10, 0.5, 3.0, 0.005));
  for (std::size_t i = 0; i < x.size() && rule.state() == StoppingRule::State::Continue; ++i) {
    rule.add(x[i], static_cast<double>(i) * 1e-3);
  }
  EXPECT_EQ(rule.state(), StoppingRule::State::TimedOut);
  EXPECT_EQ(rule.count(), 3001u);
  const MedianInterval moving = rule.interval();
  EXPECT_GT(moving.half_width(), 0.05);
  EXPECT_LT(moving.effective_samples, 40);
  // At min-time (501 samples) the same values shuffled, the drift no longer visible in time
  // order, would have stopped: the batches are what catches it.
  std::vector<double> first(x.begin(), x.begin() + 501);
  EXPECT_GT(median_interval(first).half_width(), 0.005);
  std::shuffle(first.begin(), first.end(), std::mt19937(9));
  EXPECT_LT(median_interval(first).half_width(), 0.005);
}

TEST(MedianInterval, IndependentRanksAreTheExactBinomialOnes) {
  // Hahn & Meeker 1991 / Conover 1999: 95% ranks of the median: n = 10: x(2)..x(9); n = 20:
  // x(6)..x(15) (under 25 samples: no batches); n = 5: none reaches 95% (x(1)..x(5) covers 93.75%).
  std::vector<double> ten{7, 3, 9, 1, 5, 10, 2, 8, 4, 6};
  MedianInterval ci = median_interval(ten);
  EXPECT_TRUE(ci.bounded);
  EXPECT_DOUBLE_EQ(ci.low, 2);
  EXPECT_DOUBLE_EQ(ci.high, 9);
  EXPECT_DOUBLE_EQ(ci.median, 5.5);
  EXPECT_EQ(ci.batches, 0u);
  std::vector<double> twenty;
  for (int i = 20; i >= 1; --i) twenty.push_back(i);
  ci = median_interval(twenty);
  EXPECT_DOUBLE_EQ(ci.low, 6);
  EXPECT_DOUBLE_EQ(ci.high, 15);
  EXPECT_NEAR(ci.half_width(), 4.5 / 10.5, 1e-12);
  ci = median_interval({1, 2, 3, 4, 5});
  EXPECT_FALSE(ci.bounded);
  EXPECT_DOUBLE_EQ(ci.low, 1);
  EXPECT_DOUBLE_EQ(ci.high, 5);
  EXPECT_TRUE(std::isinf(ci.half_width()));
  // A lower level narrows it: 50% at n = 20 (z = 0.674): l = floor(10.5 - 1.51) = 8.
  ci = median_interval(twenty, 0.5);
  EXPECT_DOUBLE_EQ(ci.low, 8);
  EXPECT_DOUBLE_EQ(ci.high, 13);
}

TEST(MedianInterval, IndependentSamplesKeepTheirCount) {
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(1000.0, 10.0);
  std::vector<double> x;
  for (int i = 0; i < 2000; ++i) x.push_back(noise(rng));
  const MedianInterval ci = median_interval(x);
  EXPECT_EQ(ci.batches, 20u);
  EXPECT_GT(ci.effective_samples, 1000) << ci.effective_samples;
  // Normal samples: half-width about 1.96 * 1.2533 * sigma / sqrt(n) = 0.055% of the median; the
  // batch estimate (19 degrees of freedom, the wider of the two taken) makes it conservative, here
  // 0.080%, never narrower.
  EXPECT_GT(ci.half_width(), 0.00045);
  EXPECT_LT(ci.half_width(), 0.00090);
}

TEST(MedianInterval, QuantilesAndBadInput) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(normal_quantile(0.5), 0, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776445, 2e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 19), 2.093024, 1e-4);
  EXPECT_THROW(normal_quantile(1), std::invalid_argument);
  // 1 to 3 degrees of freedom: exact (A & S table 26.10).
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.3027, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 3), 3.1824, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.025, 3), -3.1824, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.95, 2), 2.9200, 1e-4);
  EXPECT_THROW(student_t_quantile(0.975, 0.5), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(0.975, 2.5), std::invalid_argument);
  EXPECT_THROW(median_interval({}), std::invalid_argument);
  EXPECT_THROW(median_interval({1, NAN}), std::invalid_argument);
  EXPECT_THROW(median_interval({1, 2}, 1.0), std::invalid_argument);
}

// A power-capped GEMM as the H200 showed it (results/h200/drift-2026-12-04): the clock wanders
// with a period of about a second (here a sine of 1 s, +-3% of the time) under 1% noise, one sample
// every 1.5 ms (667 a second). The first half second sits on the slow half of the wander.
std::vector<double> wandering_series(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) * 1.5e-3;
    out.push_back(200'000 * (1 + 0.03 * std::sin(2 * 3.14159265358979 * t) + noise(rng)));
  }
  return out;
}

TEST(MedianInterval, BatchesInSpan) {
  EXPECT_EQ(batches_in_span(3.0, 0.5), 6u);
  EXPECT_EQ(batches_in_span(0.99, 0.5), 1u);
  EXPECT_EQ(batches_in_span(0.2, 0.5), 0u);
  EXPECT_EQ(batches_in_span(0, 0.5), 0u);
  EXPECT_EQ(batches_in_span(3.0, 0), kNoBatchLimit);
  EXPECT_EQ(batches_in_span(3.0, -1), kNoBatchLimit);
}

TEST(MedianInterval, BatchesAsLongAsTheWanderCoverTheLongRunMedian) {
  const std::vector<double> x = wandering_series(20'000, 21);  // 30 s
  const double whole = median_interval(x).median;
  EXPECT_NEAR(whole, 200'000, 200);
  // The first half second (334 samples): 20 batches of 25 ms see a steady median, narrow and off.
  const std::vector<double> half(x.begin(), x.begin() + 334);
  const MedianInterval narrow = median_interval(half);
  EXPECT_TRUE(narrow.bounded);
  EXPECT_LT(narrow.half_width(), 0.01);
  EXPECT_GT(narrow.low, whole);  // misses the long-run median
  // Batches of at least 0.5 s: one fits, the span cannot show the wander, the interval states nothing.
  const MedianInterval none = median_interval(half, 0.95, batches_in_span(0.5, 0.5));
  EXPECT_FALSE(none.bounded);
  EXPECT_EQ(none.batches, 0u);
  EXPECT_DOUBLE_EQ(none.low, *std::min_element(half.begin(), half.end()));
  EXPECT_DOUBLE_EQ(none.high, *std::max_element(half.begin(), half.end()));
  // Over 1.5 s (3 batches, Student's t at 2 degrees of freedom: no bound), 3 s (6 batches) and
  // 6 s (12 batches): covering the long-run median, bounded from 3 s on.
  for (std::size_t n : {1000u, 2000u, 4000u}) {
    const std::vector<double> head(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
    const double span = static_cast<double>(n) * 1.5e-3;
    const MedianInterval ci = median_interval(head, 0.95, batches_in_span(span, 0.5));
    EXPECT_EQ(ci.batches, batches_in_span(span, 0.5));
    EXPECT_EQ(ci.bounded, n >= 2000u) << n;
    EXPECT_LE(ci.low, whole) << n;
    EXPECT_GE(ci.high, whole) << n;
  }
  // Under 25 samples the span-limited interval still uses its batches (2 of them here).
  const std::vector<double> few(x.begin(), x.begin() + 20);
  EXPECT_EQ(median_interval(few, 0.95, 2).batches, 2u);
  EXPECT_EQ(median_interval(few).batches, 0u);
}

TEST(StoppingRule, DriftBatchesHoldTheStopUntilTheSpanShowsTheWander) {
  const std::vector<double> x = wandering_series(4001, 22);  // 6 s
  const auto run = [&](double batch_min_s) {
    StoppingRule::Config c = config(10, 0.5, 3.0, 0.01);
    StoppingRule rule(c);
    rule.set_batch_min_s(batch_min_s);
    for (std::size_t i = 0; i < x.size() && rule.state() == StoppingRule::State::Continue; ++i)
      rule.add(x[i], static_cast<double>(i) * 1.5e-3);
    return rule;
  };
  // Without a minimum batch length: converged at min-time on the slow half of the wander, its
  // interval (1% target) clear of the long-run median of 200,000.
  const StoppingRule quick = run(0);
  EXPECT_EQ(quick.state(), StoppingRule::State::Converged);
  EXPECT_LE(quick.count(), 350u);
  EXPECT_GT(quick.interval().low, 200'000);
  // With batches of at least 0.5 s: no stop before the span holds 2 batches, and the interval it
  // stops on covers the long-run median.
  const StoppingRule slow = run(0.5);
  EXPECT_GE(slow.count(), 667u);
  EXPECT_GE(slow.config().batch_min_s, 0.5);
  const MedianInterval ci = slow.interval();
  EXPECT_LE(ci.low, 200'000 * 1.002);
  EXPECT_GE(ci.high, 200'000 * 0.998);
}

TEST(StoppingRule, BatchMinimumOnlyGrows) {
  StoppingRule rule(config(10, 0, 1, 0.005));
  rule.set_batch_min_s(0.5);
  rule.set_batch_min_s(0.25);
  EXPECT_DOUBLE_EQ(rule.config().batch_min_s, 0.5);
  EXPECT_THROW(rule.set_batch_min_s(-1), std::invalid_argument);
  EXPECT_THROW(rule.set_batch_min_s(INFINITY), std::invalid_argument);
  StoppingRule::Config bad = config(10, 0, 1, 0.005);
  bad.batch_min_s = -0.5;
  EXPECT_THROW(StoppingRule{bad}, std::invalid_argument);
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
  StoppingRule::Config bad_level = config(10, 0, 1, 0.005);
  bad_level.confidence = 1;
  EXPECT_THROW(StoppingRule{bad_level}, std::invalid_argument);
  StoppingRule rule(config(10, 0, 1, 0.005));
  EXPECT_THROW(rule.add(NAN, 0), std::invalid_argument);
}

}  // namespace
}  // namespace xb
