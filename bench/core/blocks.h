// Blocks of back-to-back calls, as `bench ab` and `bench tune-add` time them: each block is one
// timed_sample of the sampling core (bench/core/measure.h), so one active profiler step whose
// cudaEvent interval and device activities step_metrics (profiler/model/step_metrics.h) already pairs.
// Here: a fixture's blocks picked out of a session's step metrics and checked, and bench ab's
// per-round figures. Plain C++, header-only (CPU-tested in tests/cpu/test_ab_blocks.cpp, which
// does not link the bench executable). Units: ns.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "profiler/model/profiler.h"
#include "profiler/model/step_metrics.h"

namespace xb {

/// The steps of `fixture` among `all` (step_metrics of a session), in recording order: one per
/// block. Throws ProfilerError "<fixture>: <k> recorded blocks, expected <blocks>" when the count
/// differs, and "<fixture>, <unit> <i>: <a> device activities for <n> calls" when a block has
/// fewer device activities than calls, or with `exact` any other number than its calls.
inline std::vector<StepMetrics> fixture_blocks(const std::vector<StepMetrics>& all, const std::string& fixture,
                                               std::size_t blocks, bool exact, const std::string& unit = "block") {
  std::vector<StepMetrics> steps = step_metrics_of(all, fixture);
  if (steps.size() != blocks) {
    throw ProfilerError(fixture + ": " + std::to_string(steps.size()) + " recorded blocks, expected " +
                        std::to_string(blocks));
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const StepMetrics& s = steps[i];
    const std::size_t calls = static_cast<std::size_t>(s.launches);
    if (s.activities < calls || (exact && s.activities != calls)) {
      throw ProfilerError(fixture + ", " + unit + " " + std::to_string(i) + ": " + std::to_string(s.activities) +
                          " device activities for " + std::to_string(calls) + " calls");
    }
  }
  return steps;
}

/// Device time per call of each step: the sum of its device activities' durations / its calls.
inline std::vector<double> device_per_call_ns(const std::vector<StepMetrics>& steps) {
  std::vector<double> out;
  out.reserve(steps.size());
  for (const StepMetrics& s : steps) out.push_back(s.device_per_call_ns());
  return out;
}

/// cudaEvent time per call of each step: its event interval / its calls.
inline std::vector<double> event_per_call_ns(const std::vector<StepMetrics>& steps) {
  std::vector<double> out;
  out.reserve(steps.size());
  for (const StepMetrics& s : steps) out.push_back(s.event_per_call_ns());
  return out;
}

/// Which op (0 = A, 1 = B) bench ab times `j`-th (0 or 1) in round `round`: A B on even rounds,
/// B A on odd ones, so that neither op always runs first.
inline int ab_op_of(int round, int j) { return round % 2 == 0 ? j : 1 - j; }

/// bench ab's figures per round, A = index 0, B = index 1.
struct AbRounds {
  std::array<std::vector<double>, 2> device_ns;  ///< device time per call, per round
  std::array<std::vector<double>, 2> event_ns;   ///< cudaEvent time per call, per round
  std::array<std::vector<double>, 2> span_ns;    ///< device span per call (first start to last end), per round
  std::vector<double> device_ratio;              ///< B / A of device time, per round (paired)
  std::vector<double> event_ratio;               ///< B / A of cudaEvent time, per round
};

/// Pairs the blocks of `fixtures` (A's and B's annotation) round by round: each op's r-th step is
/// its block of round r. Throws ProfilerError (fixture_blocks) unless each op has exactly `rounds`
/// blocks, each with at least one device activity per call.
inline AbRounds ab_rounds(const std::vector<StepMetrics>& all, const std::array<std::string, 2>& fixtures, int rounds) {
  AbRounds out;
  for (std::size_t k = 0; k < 2; ++k) {
    const std::vector<StepMetrics> steps =
        fixture_blocks(all, fixtures[k], rounds < 0 ? 0 : static_cast<std::size_t>(rounds), false, "round");
    out.device_ns[k] = device_per_call_ns(steps);
    out.event_ns[k] = event_per_call_ns(steps);
    for (const StepMetrics& s : steps) out.span_ns[k].push_back(s.span_per_call_ns());
  }
  for (std::size_t r = 0; r < out.device_ns[0].size(); ++r) {
    out.device_ratio.push_back(out.device_ns[1][r] / out.device_ns[0][r]);
    out.event_ratio.push_back(out.event_ns[1][r] / out.event_ns[0][r]);
  }
  return out;
}

}  // namespace xb
