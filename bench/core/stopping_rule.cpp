// The stopping rule (see stopping_rule.h).
#include "bench/core/stopping_rule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace xb {

StoppingRule::StoppingRule(Config config) : config_(config) {
  if (config_.min_samples < 2) throw std::invalid_argument("stopping rule: min_samples must be at least 2");
  if (!(config_.min_time_s >= 0) || !(config_.max_time_s >= config_.min_time_s)) {
    throw std::invalid_argument("stopping rule: need 0 <= min_time_s <= max_time_s");
  }
  if (!(config_.max_noise_fraction > 0)) {
    throw std::invalid_argument("stopping rule: max_noise_fraction must be positive");
  }
  if (!(config_.confidence > 0 && config_.confidence < 1)) {
    throw std::invalid_argument("stopping rule: confidence must be in (0, 1)");
  }
  set_batch_min_s(config_.batch_min_s);
}

void StoppingRule::set_batch_min_s(double s) {
  if (!(s >= 0) || !std::isfinite(s)) throw std::invalid_argument("stopping rule: batch_min_s must be finite and >= 0");
  config_.batch_min_s = std::max(config_.batch_min_s, s);
}

StoppingRule::State StoppingRule::add(double sample, double elapsed_s) {
  if (!std::isfinite(sample)) throw std::invalid_argument("stopping rule: non-finite sample");
  if (state_ != State::Continue) return state_;
  samples_.push_back(sample);
  elapsed_s_ = elapsed_s;
  const std::size_t n = samples_.size();
  if (n >= static_cast<std::size_t>(config_.min_samples) && elapsed_s >= config_.min_time_s && n >= next_check_) {
    next_check_ = n + std::max<std::size_t>(1, n / 20);
    if (interval().half_width() <= config_.max_noise_fraction) {
      state_ = State::Converged;
      return state_;
    }
  }
  return tick(elapsed_s);
}

StoppingRule::State StoppingRule::tick(double elapsed_s) {
  if (state_ == State::Continue && elapsed_s >= config_.max_time_s) state_ = State::TimedOut;
  return state_;
}

const char* to_string(StoppingRule::State state) {
  const std::optional<StopReason> reason = stop_reason_of(state);
  return reason ? to_string(*reason) : "running";
}

const char* to_string(StopReason reason) { return reason == StopReason::Converged ? "converged" : "timed out"; }

const char* to_string(const std::optional<StopReason>& reason) { return reason ? to_string(*reason) : ""; }

std::optional<StopReason> stop_reason_named(std::string_view name) {
  for (const StopReason r : {StopReason::Converged, StopReason::TimedOut})
    if (name == to_string(r)) return r;
  return std::nullopt;
}

std::optional<StopReason> stop_reason_of(StoppingRule::State state) {
  if (state == StoppingRule::State::Converged) return StopReason::Converged;
  if (state == StoppingRule::State::TimedOut) return StopReason::TimedOut;
  return std::nullopt;
}

}  // namespace xb
