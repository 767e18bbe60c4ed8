// The stopping rule of the sampling core (bench/core/measure.h): the harness's, not the profiler's.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "common/stats.h"

namespace xb {

/// The stopping rule's settings a user chooses, and their defaults: the one definition. bench's
/// command line (--max-noise, --min-samples, --min-time, --max-time) and its help, qualify suites'
/// "stopping" objects, xb::main and crossbench.bench (through crossbench._core.stopping_defaults())
/// all start from these.
struct StoppingSettings {
  /// Target half-width of the median's interval, a fraction of the median (0.005 = 0.5%). The
  /// command line and suites give it in percent (--max-noise 0.5, "max_noise_pct": 0.5).
  double max_noise_fraction = 0.005;
  int min_samples = 10;     ///< at least this many samples
  double min_time_s = 0.5;  ///< at least this many seconds of sampling
  double max_time_s = 3.0;  ///< at most this many seconds of sampling per fixture
};

/// Stopping on the precision of the reported median, with nvbench's budget (nvbench/detail/
/// measure_cold.cu: min-samples, min-time, timeout): sampling goes on until at least `min_samples`
/// samples and `min_time_s` seconds of sampling, then stops as soon as the median is known to
/// within `max_noise_fraction`: the half-width of its distribution-free interval at level `confidence`,
/// widened for the samples' drift (common/stats.h median_interval), is at most `max_noise_fraction` of the
/// median; or at `max_time_s` seconds (the target was not met). The samples' spread (RSD) is
/// reported, not a stopping criterion: a power-capped GEMM's samples spread 2.5% however many are
/// taken, while the median's interval narrows with them (as far as their drift allows:
/// docs/metrics.md, "Stopping rule"). The interval is recomputed when the sample count has
/// grown by 5% since the last check (O(n log n) each), so a stop comes at most 5% of samples late.
/// Where a controller moves the clock (a power or thermal limit: set_batch_min_s), the interval's
/// batches are at least that long, so no stop comes before the span can show the drift.
class StoppingRule {
 public:
  /// The user's settings and the rule's own: the interval's level and its batches' length.
  struct Config : StoppingSettings {
    double confidence = 0.95;  ///< level of the median's interval
    /// Minimum length of the interval's batches, s (common/stats.h batches_in_span); 0: none.
    double batch_min_s = 0;
  };
  enum class State { Continue, Converged, TimedOut };

  /// Throws std::invalid_argument for min_samples < 2, negative times, max_time_s < min_time_s,
  /// max_noise_fraction <= 0, confidence outside (0, 1) or a negative batch_min_s.
  explicit StoppingRule(Config config);

  /// Adds one sample taken when `elapsed_s` seconds of sampling had passed, returns the new state.
  /// Once the state is not Continue it stays as it is. Throws std::invalid_argument for a
  /// non-finite sample.
  State add(double sample, double elapsed_s);
  /// Checks time alone (for a loop that stopped producing samples): Continue -> TimedOut when
  /// `elapsed_s` >= max_time_s.
  State tick(double elapsed_s);

  State state() const { return state_; }
  std::size_t count() const { return samples_.size(); }
  /// From now on the interval's batches are at least `s` seconds long (the larger of this and the
  /// configured minimum is kept): measure() calls it when NVML reports a power or thermal limit
  /// holding the clock. Throws std::invalid_argument for a negative or non-finite `s`.
  void set_batch_min_s(double s);

  /// The median's interval over the samples so far, its batches limited to those the sampling
  /// span so far holds at Config::batch_min_s (throws std::invalid_argument with no samples).
  MedianInterval interval() const {
    return median_interval(samples_, config_.confidence, batches_in_span(elapsed_s_, config_.batch_min_s));
  }
  const Config& config() const { return config_; }

 private:
  Config config_;
  State state_ = State::Continue;
  std::vector<double> samples_;
  std::size_t next_check_ = 0;
  double elapsed_s_ = 0;  ///< the latest sample's time
};

/// "converged", "timed out" or "running".
const char* to_string(StoppingRule::State state);

/// How a fixture's sampling ended, as recorded (FixtureTiming::stop, qualify's records).
enum class StopReason {
  Converged,  ///< the median was known to within the target
  TimedOut,   ///< max_time_s passed first: the precision target was not met
};
/// "converged" or "timed out": the files' names.
const char* to_string(StopReason reason);
/// "" when none was recorded.
const char* to_string(const std::optional<StopReason>& reason);
/// The reason named `name`; std::nullopt for any other text.
std::optional<StopReason> stop_reason_named(std::string_view name);
/// The reason of a rule that stopped; std::nullopt while it continues.
std::optional<StopReason> stop_reason_of(StoppingRule::State state);

}  // namespace xb
