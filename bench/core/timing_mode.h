// The timing mode of a fixture, and its one name table (the run folder's "mode", bench's --mode,
// qualify suites, crossbench.bench's mode=). Plain C++.
#pragma once

#include <optional>
#include <string_view>

namespace xb {

/// How a sample is taken (docs/metrics.md, "Hot and cold"):
enum class TimingMode {
  Hot,   ///< back-to-back calls per sample, the time divided by the calls
  Cold,  ///< the L2 flushed (and inputs rotated) before each one-call sample
};

/// "hot" or "cold".
constexpr const char* to_string(TimingMode m) { return m == TimingMode::Cold ? "cold" : "hot"; }

/// A recorded mode's name; "" when none was recorded.
constexpr const char* to_string(const std::optional<TimingMode>& m) { return m ? to_string(*m) : ""; }

/// The mode named `name` ("hot", "cold"); std::nullopt for any other text.
constexpr std::optional<TimingMode> timing_mode_named(std::string_view name) {
  for (const TimingMode m : {TimingMode::Hot, TimingMode::Cold})
    if (name == to_string(m)) return m;
  return std::nullopt;
}

}  // namespace xb
