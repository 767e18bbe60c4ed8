// The stopping rule (see stopping_rule.h).
#include "bench/core/stopping_rule.h"

#include <cmath>
#include <stdexcept>

namespace xb {

StoppingRule::StoppingRule(Config config) : config_(config) {
  if (config_.min_samples < 2) throw std::invalid_argument("stopping rule: min_samples must be at least 2");
  if (!(config_.min_time_s >= 0) || !(config_.max_time_s >= config_.min_time_s)) {
    throw std::invalid_argument("stopping rule: need 0 <= min_time_s <= max_time_s");
  }
  if (!(config_.max_noise > 0)) throw std::invalid_argument("stopping rule: max_noise must be positive");
}

double StoppingRule::rsd() const {
  if (count_ < 2 || mean_ == 0) return 0;
  return std::sqrt(m2_ / static_cast<double>(count_ - 1)) / std::fabs(mean_);
}

StoppingRule::State StoppingRule::add(double sample, double elapsed_s) {
  if (!std::isfinite(sample)) throw std::invalid_argument("stopping rule: non-finite sample");
  if (state_ != State::Continue) return state_;
  ++count_;
  const double delta = sample - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (sample - mean_);
  if (count_ >= static_cast<std::size_t>(config_.min_samples) && elapsed_s >= config_.min_time_s &&
      rsd() <= config_.max_noise) {
    state_ = State::Converged;
  } else {
    tick(elapsed_s);
  }
  return state_;
}

StoppingRule::State StoppingRule::tick(double elapsed_s) {
  if (state_ == State::Continue && elapsed_s >= config_.max_time_s) state_ = State::TimedOut;
  return state_;
}

const char* to_string(StoppingRule::State state) {
  switch (state) {
    case StoppingRule::State::Converged: return "converged";
    case StoppingRule::State::TimedOut: return "timed out";
    case StoppingRule::State::Continue: break;
  }
  return "running";
}

}  // namespace xb
