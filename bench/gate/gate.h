// The gate shared by `bench qualify` (docs/qualify.md: per fixture, is it slower, faster or
// unchanged against a stored baseline, or can the run not say: inconclusive) and `bench compare`
// (the same test, classes and thresholds between two run folders, docs/compare.md). Plain C++
// (no CUDA), CPU-tested in tests/cpu/test_qualify_gate.cpp.
//
// Units: samples and medians in ns per call; deltas and thresholds as fractions (0.03 = 3%).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/fixture_records.h"

namespace xb {

/// Mann-Whitney U test of two independent samples, two-sided, normal approximation with tie
/// correction and continuity correction (docs/qualify.md, "Significance").
struct MannWhitney {
  std::size_t n1 = 0, n2 = 0;
  double u1 = 0;  ///< U of the first sample: R1 - n1 (n1 + 1) / 2, R1 its rank sum (mid-ranks for ties)
  double z = 0;   ///< (|U1 - n1 n2 / 2| - 0.5) / sigma, signed like U1 - n1 n2 / 2; 0 when sigma = 0
  double p = 1;   ///< two-sided p-value, erfc(|z| / sqrt 2); 1 when every value is tied
};

/// U, z and p of samples `a` (first) and `b`, in O(n log n) (one sort of the pooled samples).
/// U1 = R1 - n1(n1+1)/2; mu = n1 n2 / 2; sigma^2 = n1 n2 / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1)))
/// over the groups of t tied values, n = n1 + n2; z = sign(U1 - mu) max(|U1 - mu| - 1/2, 0) / sigma;
/// p = erfc(|z| / sqrt 2) = 2 (1 - Phi(|z|)). The same as scipy.stats.mannwhitneyu(a, b,
/// alternative="two-sided", method="asymptotic", use_continuity=True). Throws
/// std::invalid_argument when either sample is empty or holds a non-finite value.
MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

/// What bounds a fixture, for its threshold (docs/qualify.md, "Thresholds").
enum class FixtureClass {
  Overhead,    ///< per-call median under GateRules::overhead_cut_ns
  Memory,      ///< not overhead-bound; the roofline's memory term (datasheet figures) is the larger
  Compute,     ///< not overhead-bound; the compute term is the larger (or equal)
  Throughput,  ///< not overhead-bound, GPU without datasheet figures: compute or memory, not told apart
};
/// "overhead-bound", "memory-bound", "compute-bound", "compute- or memory-bound".
const char* to_string(FixtureClass c);

/// Outcome of one fixture.
enum class Verdict {
  Unchanged,     ///< within the threshold, or the difference is not significant
  Improvement,   ///< faster by more than the threshold, and significant
  Regression,    ///< slower by more than the threshold, and significant
  Inconclusive,  ///< the run cannot tell: noisy, throttled or too few samples (never a pass)
  Failed,        ///< the fixture did not run (wrong result, CUDA error)
  Recorded,      ///< --update-baseline: measured and stored, not compared
};
/// "unchanged", "improvement", "regression", "inconclusive", "failed", "recorded".
const char* to_string(Verdict v);

/// Knobs of the gate; the defaults are `bench qualify`'s.
struct GateRules {
  double alpha = 0.01;               ///< significance level of the two-sided Mann-Whitney test
  double threshold = 0.03;           ///< compute- and memory-bound fixtures
  double overhead_threshold = 0.10;  ///< overhead-bound fixtures
  /// Fixtures power-capped (NVML SwPowerCap) in both the run and the baseline: at least this. The
  /// power controller settles at a slightly different clock each run: back-to-back runs of the
  /// same build differed by up to 2.4% (results/h200/timing-2026-11-29) and a gate of an unchanged
  /// build by 3.1% (results/h200/qualify-2026-11-29) on sustained bf16 GEMMs on the H200.
  double power_capped_threshold = 0.05;
  /// Per-call median below which a fixture is overhead-bound, ns. In the H200 sweep
  /// (results/sweeps/h200-2026-11-29) every overhead-bound point has a kernel time under 7 us
  /// (8.7 us per call in hot mode at most) and every other point over 23 us.
  double overhead_cut_ns = 10'000;
  /// Both runs power-capped: SM clocks differing by more than this fraction are throttling. One
  /// power-capped GEMM fixture's NVML snapshots range over 1500..1680 MHz on the H200.
  double clock_tolerance = 0.10;
  /// Per-sample SM clocks (FixtureRecord::sm_clock) whose medians differ by more than this
  /// fraction are named in the fixture's note (sm_clock_difference): more than their 0.1-MHz
  /// rounding and the device timer's 1% (bench/core/sm_clock.h), less than a power cap's moves.
  double sm_clock_tolerance = 0.02;
  /// Fewer samples than this on either side: inconclusive (the normal approximation needs them).
  std::size_t min_samples = 10;
  /// --threshold: replaces both thresholds.
  std::optional<double> threshold_override;
};

/// One fixture as the gate sees it, from a run (raw_session.json) or a baseline.
struct FixtureRecord {
  std::string name;  ///< "<op>/<dtype>/<size>"
  std::string op, dtype;
  std::int64_t size = 0;
  std::optional<TimingMode> mode;  ///< none for a fixture that failed before sampling
  double flops = 0, bytes = 0;
  int launches_per_sample = 1;
  bool warmed_up = false;
  std::optional<StopReason> stop;  ///< none for a fixture that failed before sampling
  double max_noise = 0;
  double sampling_s = 0;
  double batch_min_s = 0;          ///< FixtureTiming::batch_min_s (0: none)
  std::vector<double> samples_ns;  ///< per call, every sample
  GpuClockSample gpu_before, gpu_after;
  /// The range of the per-sample SM clocks (FixtureTiming::sample_sm_clock_mhz, sm_clock_range);
  /// none where not recorded or none measured.
  std::optional<SmClockRange> sm_clock;
  std::string error;  ///< the fixture failed: why ("" when it ran)

  /// "<name> (<mode>)": a suite may hold one fixture in both modes.
  std::string key() const;
};

/// The FixtureRecord of a recorded fixture (its timing block).
FixtureRecord record_of(const FixtureInfo& fixture);

/// Throttling of one fixture against its baseline (docs/qualify.md, "Throttling").
struct ThrottleCheck {
  bool throttled = false;
  std::string reason;  ///< why throttled, or a note (e.g. "power-capped, as in the baseline"); "" when neither
};

/// The rule: a thermal or hardware slowdown (HwSlowdown, SwThermalSlowdown, HwThermalSlowdown,
/// HwPowerBrakeSlowdown) in either NVML snapshot of `now` is throttling. SwPowerCap alone is
/// throttling when the baseline fixture was not power-capped, or when both were but their mean SM
/// clocks differ by more than rules.clock_tolerance. `baseline` null (--update-baseline): only the
/// first rule. Snapshots that NVML could not read count as not throttled (with a note).
ThrottleCheck check_throttle(const FixtureRecord& now, const FixtureRecord* baseline, const GateRules& rules);

/// Whether the fixture's snapshots show a thermal or hardware slowdown (the first rule alone).
bool hard_throttled(const FixtureRecord& fixture);

/// Mean SM clock of the fixture's valid NVML snapshots (before and after sampling), MHz; nullopt
/// when none has one.
std::optional<double> mean_sm_clock_mhz(const FixtureRecord& fixture);

/// When both fixtures have per-sample SM clocks and their medians differ by more than
/// rules.sm_clock_tolerance (sm_clocks_differ): "SM clock per sample differs: median 1755 MHz
/// (1700..1800) against the baseline's 1980 MHz (1975..1980), -11.4%", `reference_name` in the
/// baseline's place; "" otherwise.
std::string sm_clock_difference(const FixtureRecord& now, const FixtureRecord& reference, const GateRules& rules,
                                const std::string& reference_name = "the baseline's");

/// The gate's result for one fixture.
struct GateResult {
  std::string key, name, op, dtype;
  std::optional<TimingMode> mode;
  std::int64_t size = 0;
  FixtureClass cls = FixtureClass::Throughput;
  double threshold = 0;  ///< fraction applied
  bool has_baseline = false;
  double baseline_median_ns = 0;
  double now_median_ns = 0;
  double delta = 0;     ///< now / baseline - 1
  double delta_ns = 0;  ///< now - baseline
  double now_rsd = 0, baseline_rsd = 0;
  std::size_t now_samples = 0, baseline_samples = 0;
  MannWhitney test;
  Verdict comparison = Verdict::Unchanged;  ///< what the numbers alone say (threshold + test)
  Verdict verdict = Verdict::Unchanged;     ///< final: comparison unless inconclusive or failed
  bool noisy = false;                       ///< now or the baseline missed its noise target
  bool throttled = false;                   ///< check_throttle, or the baseline was hard-throttled
  std::string reason;                       ///< why this verdict, one line
  std::string note;                         ///< anything else worth saying (power cap as in the baseline, no NVML, ...)
  double sampling_s = 0;
};

/// Threshold and class of a fixture: overhead-bound when `reference_median_ns` (the baseline's
/// median, or the run's with no baseline) is under rules.overhead_cut_ns; else compute- or
/// memory-bound by the roofline terms flops / peak and bytes / bandwidth of `gpu_name`'s
/// datasheet figures (bench/core/ceilings.h datasheet_for), Throughput when the GPU has none.
FixtureClass classify_fixture(const FixtureRecord& fixture, double reference_median_ns, const std::string& gpu_name,
                              const GateRules& rules);
/// The threshold of a class (threshold_override when set).
double threshold_for(FixtureClass c, const GateRules& rules);
/// The threshold of one fixture against its reference (the baseline, or run A of `bench compare`):
/// threshold_for(c), raised to at least rules.power_capped_threshold when NVML saw both `now` and
/// `reference` power-capped (SwPowerCap) and no threshold_override is set. `reference` null: threshold_for(c).
double fixture_threshold(FixtureClass c, const FixtureRecord& now, const FixtureRecord* reference,
                         const GateRules& rules);

/// Gates one fixture. `baseline` null: --update-baseline (verdict Recorded, or Inconclusive /
/// Failed). Order of the rules: failed (error or no samples) > inconclusive (noisy now or in the
/// baseline, throttled, too few samples) > regression / improvement (|delta| > threshold and
/// p < alpha) > unchanged. `comparison` keeps what the numbers said even when the verdict is
/// inconclusive.
GateResult gate_fixture(const FixtureRecord& now, const FixtureRecord* baseline, const std::string& gpu_name,
                        const GateRules& rules);

/// Counts of verdicts.
struct VerdictCounts {
  std::size_t unchanged = 0, improvement = 0, regression = 0, inconclusive = 0, failed = 0, recorded = 0;
};
VerdictCounts count_verdicts(const std::vector<GateResult>& results);

/// Exit code of a qualification: 1 when any fixture regressed or failed or `validation_failed`,
/// else 3 when any is inconclusive, else 0.
int qualify_exit_code(const std::vector<GateResult>& results, bool validation_failed);

}  // namespace xb
