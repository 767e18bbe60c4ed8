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

/// nvbench-style stopping rule (nvbench/detail/measure_cold.cu: min-samples, min-time,
/// max-noise, timeout): sampling goes on until at least `min_samples` samples and `min_time_s`
/// seconds of sampling, then stops as soon as the relative standard deviation of all samples is at
/// most `max_noise`, or when `max_time_s` seconds have passed (the noise target was not met).
/// The running mean and variance use Welford's algorithm (Knuth, TAOCP vol. 2, 4.2.2).
class StoppingRule {
 public:
  struct Config {
    int min_samples = 10;
    double min_time_s = 0.5;
    double max_time_s = 3.0;
    double max_noise = 0.005;  ///< target relative standard deviation, a fraction (0.005 = 0.5%)
  };
  enum class State { Continue, Converged, TimedOut };

  /// Throws std::invalid_argument for min_samples < 2, negative times, max_time_s < min_time_s
  /// or max_noise <= 0.
  explicit StoppingRule(Config config);

  /// Adds one sample taken when `elapsed_s` seconds of sampling had passed, returns the new state.
  /// Once the state is not Continue it stays as it is. Throws std::invalid_argument for a
  /// non-finite sample.
  State add(double sample, double elapsed_s);
  /// Checks time alone (for a loop that stopped producing samples): Continue -> TimedOut when
  /// `elapsed_s` >= max_time_s.
  State tick(double elapsed_s);

  State state() const { return state_; }
  std::size_t count() const { return count_; }
  /// Current relative standard deviation (0 with fewer than two samples).
  double rsd() const;
  const Config& config() const { return config_; }

 private:
  Config config_;
  State state_ = State::Continue;
  std::size_t count_ = 0;
  double mean_ = 0, m2_ = 0;
};

/// "converged", "timed out" or "running".
const char* to_string(StoppingRule::State state);

}  // namespace xb
