// Sample statistics and the noise-based stopping rule of the timing loop. Plain C++ (no CUDA):
// the bench computes every reported statistic here, from the raw samples, never through Google
// Benchmark's aggregates (1.7.1's median is wrong for some even counts).
//
// Units: whatever the samples are in (the bench passes nanoseconds); rsd is a fraction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xb {

/// Statistics of one sample set. Quartiles use linear interpolation between closest ranks
/// (Hyndman & Fan 1996 type 7, numpy.percentile's default): q(p) = x[h] + (h - floor h)(x[h+1] - x[h]),
/// h = (count - 1) p over the sorted samples; median = q(0.5). stddev is the sample standard
/// deviation (divisor count - 1; 0 for one sample). MAD is the raw median absolute deviation
/// from the median (no 1.4826 normal-consistency factor).
struct SampleStats {
  std::size_t count = 0;
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0, mad = 0, q1 = 0, q3 = 0;
  /// Relative standard deviation stddev / mean (0 when mean is 0).
  double rsd() const { return mean != 0 ? stddev / mean : 0; }
};

/// Computes SampleStats of `samples` (any order). Throws std::invalid_argument when empty or when a
/// sample is not finite.
SampleStats compute_stats(std::vector<double> samples);
/// Same for integer samples (e.g. nanoseconds).
SampleStats compute_stats(const std::vector<std::int64_t>& samples);

/// Median of values (mean of the two middle ones for an even count, exact to .5 without
/// overflow); 0 for none. The one median of integer samples: the table, the validator and bench
/// use it. O(n) (nth_element on the copy).
double median_of(std::vector<std::int64_t> values);

/// Distribution-free confidence interval of the median of samples taken in time order, widened for
/// their dependence (samples drift with clocks and power, so they are not independent).
///
/// Independent samples (Hahn & Meeker 1991, "Statistical Intervals", 5.2; Conover 1999, "Practical
/// Nonparametric Statistics", 3.2): the count of samples below the median is Binomial(n, 1/2), so the
/// order statistics x_(l) and x_(u) with l = floor(n/2 + 1/2 - h), u = n + 1 - l bound the median
/// at level 1 - alpha, h = z_{1-alpha/2} sqrt(n)/2 (the binomial's continuity-corrected normal
/// approximation; it gives the exact binomial ranks at n = 10, 20 and 100). It needs no model of
/// the distribution, only its continuity at the median.
///
/// Dependence: the median's error is driven by that count (Bahadur's representation, which holds for
/// mixing sequences: Sen 1972, J. Multivariate Analysis 2, 77-95), so its variance is estimated by
/// batch means (Schmeiser 1982, Operations Research 30, 556-568: 10 to 30 batches; Law & Kelton,
/// "Simulation Modeling and Analysis", 9.5.3) of the indicator I_i = [x_i < median] (1/2 at a tie):
/// k = min(20, n / 5) consecutive batches in time order (at least 5 of at least 5 samples, else
/// the independent interval alone), batch means p_j, their variance s^2, and the count's standard
/// deviation n s / sqrt(k) with Student's t at k - 1 degrees of freedom. The rank half-width h is
/// the wider of the two. A median that moves during sampling makes the batches disagree and the
/// interval wide; noise around a steady median does not.
///
/// Drift slower than a batch is invisible to the batches: a power-capped H200 GEMM's clock wanders
/// over about a second, and 20 batches of a 0.5-s run (25 ms each) covered its long-run median in
/// 46-76% of stretches instead of 95% (results/h200/drift-2026-12-04). Where such drift is known
/// to act, the caller limits the batches to those the samples' span holds at a minimum batch
/// length (`max_batches`, batches_in_span): k = min(20, n / 5, max_batches); then 2 to 4 batches
/// are used too (Student's t makes them wide), and with fewer than 2 the interval is not bounded
/// (the span cannot show the drift, so it states nothing).
///
/// Units: those of the samples. Throws std::invalid_argument for no samples, a non-finite sample or
/// confidence outside (0, 1).
struct MedianInterval {
  double median = 0;         ///< the sample median (type 7: SampleStats::median)
  double low = 0, high = 0;  ///< x_(l) and x_(u); min and max when not bounded
  double confidence = 0;     ///< the stated level, e.g. 0.95
  std::size_t count = 0;
  std::size_t batches = 0;  ///< batches of the dependence estimate; 0 with under 25 samples
  /// count / max(1, variance inflation of the count below the median): the independent samples
  /// that would give the same interval.
  double effective_samples = 0;
  /// false: too few (effective) samples to reach the level: l < 1 or u > count.
  bool bounded = false;
  /// max(median - low, high - median) / |median|: how far the true median may lie from the reported
  /// one, a fraction; +infinity when not bounded, 0 when the median is 0 and the bounds equal it.
  double half_width() const;
};

/// No limit on the batches of median_interval other than its own (20, n / 5).
constexpr std::size_t kNoBatchLimit = static_cast<std::size_t>(-1);

/// See MedianInterval. `samples` in the order they were taken; `max_batches`: the most batches their
/// span holds at a minimum batch length (batches_in_span), kNoBatchLimit for none.
MedianInterval median_interval(const std::vector<double>& samples, double confidence = 0.95,
                               std::size_t max_batches = kNoBatchLimit);

/// Batches of at least `batch_min_s` seconds that a span of `span_s` seconds holds:
/// floor(span_s / batch_min_s); kNoBatchLimit when batch_min_s <= 0 (no minimum length).
std::size_t batches_in_span(double span_s, double batch_min_s);

/// Quantile p in (0, 1) of the standard normal distribution (bisection on std::erfc to 1e-12).
/// Throws std::invalid_argument for p outside (0, 1).
double normal_quantile(double p);

/// Quantile p in (0, 1) of Student's t with `dof` degrees of freedom: for dof >= 4 the
/// Cornish-Fisher expansion of the normal quantile to four terms (Abramowitz & Stegun 26.7.5;
/// within 0.001 of the exact value at dof 4 and p = 0.975, closer for more degrees of freedom);
/// for dof 1, 2 and 3 (integers) bisection on the closed-form distribution function (A & S
/// 26.7.3: 12.706, 4.303 and 3.182 at p = 0.975). Throws std::invalid_argument for p outside
/// (0, 1), dof < 1 or a dof under 4 that is not an integer.
double student_t_quantile(double p, double dof);

/// Quantile p in [0, 1] of already sorted, non-empty samples (type 7, as above).
/// Throws std::invalid_argument for empty input or p outside [0, 1].
double quantile_sorted(const std::vector<double>& sorted, double p);

}  // namespace xb
