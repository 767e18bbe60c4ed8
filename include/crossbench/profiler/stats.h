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

/// See MedianInterval. `samples` in the order they were taken.
MedianInterval median_interval(const std::vector<double>& samples, double confidence = 0.95);

/// Quantile p in (0, 1) of the standard normal distribution (bisection on std::erfc to 1e-12).
/// Throws std::invalid_argument for p outside (0, 1).
double normal_quantile(double p);

/// Quantile p in (0, 1) of Student's t with `dof` >= 4 degrees of freedom: the Cornish-Fisher
/// expansion of the normal quantile to four terms (Abramowitz & Stegun 26.7.5; within 0.001 of
/// the exact value at dof 4 and p = 0.975, closer for more degrees of freedom). Throws
/// std::invalid_argument for p outside (0, 1) or dof < 4.
double student_t_quantile(double p, double dof);

/// Quantile p in [0, 1] of already sorted, non-empty samples (type 7, as above).
/// Throws std::invalid_argument for empty input or p outside [0, 1].
double quantile_sorted(const std::vector<double>& sorted, double p);

}  // namespace xb
