// The stopping rule of the sampling core (bench/core/measure.h): the harness's, not the profiler's.
#pragma once

#include <cstddef>

namespace xb {

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
