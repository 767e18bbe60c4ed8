// Sample statistics and the noise-based stopping rule of the timing loop. Plain C++ (no CUDA):
// the bench computes every reported statistic here, from the raw samples, never through Google
// Benchmark's aggregates (1.7.1's median is wrong for some even counts).
//
// Units: whatever the samples are in (the bench passes nanoseconds); rsd is a fraction.
#pragma once

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

/// Quantile p in [0, 1] of already sorted, non-empty samples (type 7, as above).
/// Throws std::invalid_argument for empty input or p outside [0, 1].
double quantile_sorted(const std::vector<double>& sorted, double p);

}  // namespace xb
