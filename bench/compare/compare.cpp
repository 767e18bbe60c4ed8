// The verdict of one fixture of `bench compare` (see compare.h; the statistics and their sources
// in docs/compare.md).
#include "bench/compare/compare.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "bench/compare/shift.h"
#include "common/stats.h"

namespace xb {

const char* to_string(CompareVerdict v) {
  switch (v) {
    case CompareVerdict::Same:
      return "SAME";
    case CompareVerdict::Faster:
      return "FASTER";
    case CompareVerdict::Slower:
      return "SLOWER";
    case CompareVerdict::Ambiguous:
      return "AMBIGUOUS";
  }
  return "?";
}

CompareVerdict verdict_of_interval(double low, double high, double threshold) {
  if (low > -threshold && high < threshold) return CompareVerdict::Same;
  if (low > threshold) return CompareVerdict::Slower;
  if (high < -threshold) return CompareVerdict::Faster;
  return CompareVerdict::Ambiguous;
}

std::string RunFixture::mode_text() const { return std::string(to_string(record.mode)) + (graph ? ", graph" : ""); }

std::string RunFixture::key() const { return record.name + " (" + mode_text() + ")"; }

CompareCounts count_compare_verdicts(const std::vector<FixtureComparison>& fixtures) {
  CompareCounts c;
  for (const FixtureComparison& f : fixtures) {
    switch (f.verdict) {
      case CompareVerdict::Same:
        ++c.same;
        break;
      case CompareVerdict::Faster:
        ++c.faster;
        break;
      case CompareVerdict::Slower:
        ++c.slower;
        break;
      case CompareVerdict::Ambiguous:
        ++c.ambiguous;
        break;
    }
  }
  return c;
}

namespace {

std::vector<double> logs_of(const std::vector<double>& samples) {
  std::vector<double> out;
  out.reserve(samples.size());
  for (double x : samples) out.push_back(std::log(x));
  return out;
}

/// The median's drift-aware interval at `confidence`, its batches at least the recorded length.
MedianInterval median_ci(const FixtureRecord& f, double confidence) {
  return median_interval(f.samples_ns, confidence, batches_in_span(f.sampling_s, f.batch_min_s));
}

/// The SM clock of each run's fixture: the median of the per-sample clocks (FixtureRecord::sm_clock,
/// the range summary.md and events.json report) where both runs measured them, else the mean of
/// the NVML snapshots before and after sampling.
void read_clocks(const RunFixture& a, const RunFixture& b, FixtureComparison& r) {
  if (a.record.sm_clock && b.record.sm_clock) {
    r.sm_clock_a_mhz = a.record.sm_clock->median_mhz;
    r.sm_clock_b_mhz = b.record.sm_clock->median_mhz;
    r.clock_source = "per-sample";
    return;
  }
  const auto ca = mean_sm_clock_mhz(a.record), cb = mean_sm_clock_mhz(b.record);
  if (ca && cb) {
    r.sm_clock_a_mhz = *ca;
    r.sm_clock_b_mhz = *cb;
    r.clock_source = "NVML snapshots";
  }
}

/// The differences that can explain a SLOWER or FASTER shift of this fixture, in words.
std::vector<std::string> explanations(const RunFixture& a, const RunFixture& b, const FixtureComparison& r,
                                      const std::vector<RunDifference>& run_differences, const GateRules& rules) {
  std::vector<std::string> why;
  for (const RunDifference& d : run_differences) {
    if (d.explains) why.push_back(fmt::format("{} differs ('{}' in A, '{}' in B)", d.what, d.a, d.b));
  }
  if (a.mode_text() != b.mode_text())
    why.push_back(fmt::format("timing mode differs ({} in A, {} in B)", r.mode_a, r.mode_b));
  if (a.record.warmed_up != b.record.warmed_up) {
    why.push_back(fmt::format("warm-up differs (steady state reached: {} in A, {} in B)",
                              a.record.warmed_up ? "yes" : "no", b.record.warmed_up ? "yes" : "no"));
  }
  const ThrottleCheck th = check_throttle(b.record, &a.record, rules);
  if (th.throttled) why.push_back("B throttled: " + th.reason);
  if (hard_throttled(a.record)) why.push_back("A had a thermal or hardware slowdown");
  if (r.sm_clock_a_mhz > 0 && r.sm_clock_b_mhz > 0 && r.sm_clock_a_mhz != r.sm_clock_b_mhz) {
    // A compute-bound call's time scales as 1 / clock: B's interval at A's clock.
    const double scale = r.sm_clock_b_mhz / r.sm_clock_a_mhz;
    const CompareVerdict at_a_clock =
        verdict_of_interval((1 + r.low) * scale - 1, (1 + r.high) * scale - 1, r.threshold);
    if (at_a_clock != r.comparison) {
      why.push_back(
          fmt::format("SM clock {:.0f} MHz in A, {:.0f} MHz in B ({:+.1f}%, {}): at A's clock the shift would be {}",
                      r.sm_clock_a_mhz, r.sm_clock_b_mhz, (scale - 1) * 100, r.clock_source, to_string(at_a_clock)));
    }
  }
  return why;
}

/// Notes that do not change the verdict.
std::vector<std::string> notes_of(const RunFixture& a, const RunFixture& b) {
  std::vector<std::string> notes;
  for (const auto* side : {&a, &b}) {
    const char* name = side == &a ? "A" : "B";
    if (side->record.stop && *side->record.stop != StopReason::Converged) {
      notes.push_back(fmt::format(
          "{} missed its precision target ({:.2f}%): its median's drift-aware interval widens the shift's interval",
          name, side->record.max_noise * 100));
    }
  }
  return notes;
}

}  // namespace

FixtureComparison compare_fixture(const RunFixture& a, const RunFixture& b, const std::string& gpu_name,
                                  const std::vector<RunDifference>& run_differences, const GateRules& rules) {
  if (a.record.samples_ns.empty() || b.record.samples_ns.empty())
    throw std::invalid_argument("compare_fixture: " + b.key() + " has no samples");
  FixtureComparison r;
  r.key = b.key();
  r.name = b.record.name;
  r.mode_a = a.mode_text();
  r.mode_b = b.mode_text();
  r.samples_a = a.record.samples_ns.size();
  r.samples_b = b.record.samples_ns.size();
  r.median_a_ns = compute_stats(a.record.samples_ns).median;
  r.median_b_ns = compute_stats(b.record.samples_ns).median;
  r.cls = classify_fixture(b.record, r.median_a_ns, gpu_name, rules);
  r.threshold = fixture_threshold(r.cls, b.record, &a.record, rules);
  r.test = mann_whitney_u(b.record.samples_ns, a.record.samples_ns);
  read_clocks(a, b, r);
  r.notes = notes_of(a, b);

  const double confidence = 1 - rules.alpha;
  const Shift s = hodges_lehmann_shift(logs_of(a.record.samples_ns), logs_of(b.record.samples_ns), confidence);
  r.shift = std::expm1(s.estimate);
  r.shift_low = std::expm1(s.low);
  r.shift_high = std::expm1(s.high);
  r.shift_bounded = s.bounded;
  const MedianInterval ma = median_ci(a.record, 1 - rules.alpha / 2);
  const MedianInterval mb = median_ci(b.record, 1 - rules.alpha / 2);
  r.medians_bounded = ma.bounded && mb.bounded && ma.low > 0;
  r.medians_low = r.medians_bounded ? mb.low / ma.high - 1 : 0;
  r.medians_high = r.medians_bounded ? mb.high / ma.low - 1 : 0;
  r.low = std::min(r.shift_low, r.medians_bounded ? r.medians_low : r.shift_low);
  r.high = std::max(r.shift_high, r.medians_bounded ? r.medians_high : r.shift_high);

  if (r.samples_a < rules.min_samples || r.samples_b < rules.min_samples) {
    r.comparison = r.verdict = CompareVerdict::Ambiguous;
    r.reason = fmt::format("too few samples to tell ({} in A, {} in B; at least {})", r.samples_a, r.samples_b,
                           rules.min_samples);
    return r;
  }
  if (!r.shift_bounded || !r.medians_bounded) {
    r.comparison = r.verdict = CompareVerdict::Ambiguous;
    r.reason = fmt::format(
        "the samples cannot bound the shift at {:g}%: {}", confidence * 100,
        !r.shift_bounded ? "too few samples" : "a median's interval is unbounded (too few batches for the drift)");
    return r;
  }
  r.comparison = verdict_of_interval(r.low, r.high, r.threshold);
  const std::string interval = fmt::format("shift {:+.2f}% in [{:+.2f}%, {:+.2f}%] at {:g}%", r.shift * 100,
                                           r.low * 100, r.high * 100, confidence * 100);
  const double t = r.threshold * 100;
  switch (r.comparison) {
    case CompareVerdict::Same:
      r.reason = fmt::format("{}: inside +-{:g}%", interval, t);
      break;
    case CompareVerdict::Slower:
      r.reason = fmt::format("{}: above +{:g}%", interval, t);
      break;
    case CompareVerdict::Faster:
      r.reason = fmt::format("{}: below -{:g}%", interval, t);
      break;
    case CompareVerdict::Ambiguous:
      r.reason = fmt::format("{}: straddles {}{:g}%", interval, r.high >= r.threshold ? "+" : "-", t);
      break;
  }
  r.verdict = r.comparison;
  if (r.comparison == CompareVerdict::Slower || r.comparison == CompareVerdict::Faster) {
    r.explained_by = explanations(a, b, r, run_differences, rules);
    if (!r.explained_by.empty()) {
      r.verdict = CompareVerdict::Ambiguous;
      r.reason += fmt::format("; {} on the numbers alone, but {}", to_string(r.comparison), r.explained_by.front());
      if (r.explained_by.size() > 1) r.reason += fmt::format(" (and {} more)", r.explained_by.size() - 1);
    }
  }
  return r;
}

}  // namespace xb
