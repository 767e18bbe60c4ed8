// `bench compare A B`'s verdict on each fixture (docs/compare.md): is run B's fixture the SAME as
// run A's, FASTER, SLOWER, or can the two runs not tell (AMBIGUOUS)? The statistics are
// bench/compare/shift.h's (Hodges-Lehmann on log-times) and qualify's (the Mann-Whitney test, the
// fixture classes and thresholds, the throttle rule: bench/gate/gate.h), one implementation
// each. Plain C++ (no CUDA), CPU-tested in tests/cpu/test_compare.cpp.
//
// Units: samples and medians in ns per call; shifts, intervals and thresholds as fractions
// (0.03 = 3%), B / A - 1.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "bench/gate/gate.h"

namespace xb {

/// One fixture's verdict.
enum class CompareVerdict {
  Same,       ///< the shift's interval lies inside (-threshold, +threshold)
  Faster,     ///< the interval lies below -threshold and nothing that differs between the runs can explain it
  Slower,     ///< the interval lies above +threshold and nothing that differs between the runs can explain it
  Ambiguous,  ///< the interval straddles a threshold, the samples cannot tell, or a difference can explain the shift
};
/// "SAME", "FASTER", "SLOWER", "AMBIGUOUS".
const char* to_string(CompareVerdict v);

/// What the interval [low, high] of B / A - 1 says against `threshold`: Same inside (-t, t),
/// Slower above t, Faster below -t, else Ambiguous.
CompareVerdict verdict_of_interval(double low, double high, double threshold);

/// One fixture of a run folder as compare reads it.
struct RunFixture {
  FixtureRecord record;  ///< qualify's view: samples, NVML snapshots, mode, stop, error
  bool graph = false;    ///< timing.graph: samples replayed a CUDA graph
  /// "hot", "cold", "hot, graph", ...: the timing mode as compared.
  std::string mode_text() const;
  /// "<name> (<mode_text>)": the key fixtures are paired by.
  std::string key() const;
};

/// One difference between the runs, named in the output.
struct RunDifference {
  std::string what;  ///< "driver", "power limit", "timing mode", ...
  std::string a, b;  ///< the values in run A and run B, as text
  /// It can explain a shift: a SLOWER or FASTER verdict it touches becomes AMBIGUOUS. Another
  /// GPU, driver, CUDA, cuBLAS, power limit, maximum clocks, timing mode or warm-up can; another
  /// board of the same model (UUID, PCI bus id) or CUPTI version is named only.
  bool explains = false;
};

/// The comparison of one fixture present in both runs.
struct FixtureComparison {
  std::string key, name;
  std::string mode_a, mode_b;  ///< RunFixture::mode_text
  FixtureClass cls = FixtureClass::Throughput;
  double threshold = 0;  ///< fixture_threshold (gate.h), a fraction
  std::size_t samples_a = 0, samples_b = 0;
  double median_a_ns = 0, median_b_ns = 0;
  double shift = 0;                      ///< Hodges-Lehmann shift of the log-times as a ratio: exp(delta) - 1
  double shift_low = 0, shift_high = 0;  ///< its Mann-Whitney interval at rules.alpha, as ratios - 1
  bool shift_bounded = false;
  /// The ratio of the medians' drift-aware intervals at 1 - alpha/2 each (common/stats.h
  /// median_interval over the recorded batch length): [low_B / high_A, high_B / low_A] - 1.
  double medians_low = 0, medians_high = 0;
  bool medians_bounded = false;
  double low = 0, high = 0;                               ///< the interval the verdict reads: the hull of the two above
  MannWhitney test;                                       ///< B against A (gate.h), reported
  double sm_clock_a_mhz = 0, sm_clock_b_mhz = 0;          ///< 0: unknown
  std::string clock_source;                               ///< "per-sample", "NVML snapshots" or ""
  CompareVerdict comparison = CompareVerdict::Ambiguous;  ///< what the interval alone says
  CompareVerdict verdict = CompareVerdict::Ambiguous;     ///< final
  std::vector<std::string> explained_by;                  ///< differences that can explain the shift
  std::string reason;                                     ///< why this verdict, one line
  std::vector<std::string> notes;                         ///< anything else (precision target missed, ...)
};

/// Compares fixture `b` against `a` (fixtures that ran: samples, no error). `gpu_name` picks the
/// roofline's datasheet figures for the class; `run_differences` are the runs' (the fixture's own,
/// timing mode and warm-up, are added here). Order: too few samples or an unbounded interval ->
/// Ambiguous; else verdict_of_interval; a Slower or Faster that a difference explains (one with
/// `explains`, a throttle by qualify's rule, or an SM clock difference whose clock-normalized
/// interval gives another verdict) -> Ambiguous, naming it. Throws std::invalid_argument for a
/// fixture without samples.
FixtureComparison compare_fixture(const RunFixture& a, const RunFixture& b, const std::string& gpu_name,
                                  const std::vector<RunDifference>& run_differences, const GateRules& rules);

/// Counts of verdicts.
struct CompareCounts {
  std::size_t same = 0, faster = 0, slower = 0, ambiguous = 0;
};
CompareCounts count_compare_verdicts(const std::vector<FixtureComparison>& fixtures);

}  // namespace xb
