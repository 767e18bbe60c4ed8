// The gate (see gate.h; rules and their reasons in docs/qualify.md).
#include "bench/gate/gate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "bench/core/ceilings.h"
#include "common/stats.h"
#include "kernels/nvml_probe.h"

namespace xb {

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("mann_whitney_u: empty sample");
  // Pool the samples, tagged by origin, and sort once: O(n log n).
  std::vector<std::pair<double, bool>> pooled;  // (value, from a)
  pooled.reserve(a.size() + b.size());
  for (double x : a) pooled.emplace_back(x, true);
  for (double x : b) pooled.emplace_back(x, false);
  for (const auto& entry : pooled) {
    if (!std::isfinite(entry.first)) throw std::invalid_argument("mann_whitney_u: non-finite sample");
  }
  std::sort(pooled.begin(), pooled.end(),
            [](const std::pair<double, bool>& l, const std::pair<double, bool>& r) { return l.first < r.first; });
  const double n1 = static_cast<double>(a.size());
  const double n2 = static_cast<double>(b.size());
  const double n = n1 + n2;
  double rank_sum_a = 0;  // R1, mid-ranks for ties
  double tie_term = 0;    // sum of t^3 - t over groups of t tied values
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;  // ranks i+1..j
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_a += mid_rank;
    }
    tie_term += t * t * t - t;
    i = j;
  }
  MannWhitney r;
  r.n1 = a.size();
  r.n2 = b.size();
  r.u1 = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mu = n1 * n2 / 2;
  const double variance = n > 1 ? n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))) : 0.0;
  if (!(variance > 0)) {
    r.z = 0;
    r.p = 1;  // every value tied: no evidence of a difference
    return r;
  }
  const double d = r.u1 - mu;
  const double corrected = std::max(std::fabs(d) - 0.5, 0.0);  // continuity correction
  r.z = (d < 0 ? -corrected : corrected) / std::sqrt(variance);
  r.p = std::min(1.0, std::erfc(std::fabs(r.z) / std::sqrt(2.0)));
  return r;
}

const char* to_string(FixtureClass c) {
  switch (c) {
    case FixtureClass::Overhead:
      return "overhead-bound";
    case FixtureClass::Memory:
      return "memory-bound";
    case FixtureClass::Compute:
      return "compute-bound";
    case FixtureClass::Throughput:
      return "compute- or memory-bound";
  }
  return "?";
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Unchanged:
      return "unchanged";
    case Verdict::Improvement:
      return "improvement";
    case Verdict::Regression:
      return "regression";
    case Verdict::Inconclusive:
      return "inconclusive";
    case Verdict::Failed:
      return "failed";
    case Verdict::Recorded:
      return "recorded";
  }
  return "?";
}

std::string FixtureRecord::key() const { return name + " (" + to_string(mode) + ")"; }

FixtureRecord record_of(const FixtureInfo& f) {
  FixtureRecord r;
  r.name = f.name;
  r.op = f.op;
  r.dtype = f.dtype;
  r.size = f.size;
  r.mode = f.timing.mode;
  r.flops = f.flops;
  r.bytes = f.bytes;
  r.launches_per_sample = f.timing.launches_per_sample;
  r.warmed_up = f.timing.warmed_up;
  r.stop = f.timing.stop;
  r.max_noise = f.timing.stopping.max_noise_fraction;
  r.sampling_s = f.timing.sampling_s;
  r.batch_min_s = f.timing.batch_min_s;
  r.samples_ns = f.timing.samples_ns;
  r.gpu_before = f.timing.gpu_before;
  r.gpu_after = f.timing.gpu_after;
  r.sm_clock = sm_clock_range(f.timing.sample_sm_clock_mhz);
  r.error = f.error;
  if (r.error.empty() && !f.verified) r.error = "result not verified against the host reference";
  return r;
}

namespace {

/// Thermal and hardware slowdowns: always throttling.
constexpr std::uint64_t kHardThrottle = clocks_event::kHwSlowdown | clocks_event::kSwThermalSlowdown |
                                        clocks_event::kHwThermalSlowdown | clocks_event::kHwPowerBrakeSlowdown;

std::uint64_t mask_of(const FixtureRecord& f) {
  std::uint64_t m = 0;
  if (f.gpu_before.valid) m |= f.gpu_before.throttle_reasons;
  if (f.gpu_after.valid) m |= f.gpu_after.throttle_reasons;
  return m;
}

bool any_valid(const FixtureRecord& f) { return f.gpu_before.valid || f.gpu_after.valid; }

}  // namespace

std::optional<double> mean_sm_clock_mhz(const FixtureRecord& f) {
  double sum = 0;
  int count = 0;
  for (const GpuClockSample* s : {&f.gpu_before, &f.gpu_after}) {
    if (s->valid && s->sm_clock_mhz > 0) {
      sum += s->sm_clock_mhz;
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

namespace {

std::string names_of(std::uint64_t mask) {
  std::string out;
  for (const std::string& n : throttle_reason_names(mask)) out += (out.empty() ? "" : "+") + n;
  return out;
}

std::string clock_text(const FixtureRecord& f) {
  const auto c = mean_sm_clock_mhz(f);
  return c ? fmt::format("SM {:.0f} MHz", *c) : std::string("SM clock unknown");
}

}  // namespace

bool hard_throttled(const FixtureRecord& f) { return (mask_of(f) & kHardThrottle) != 0; }

ThrottleCheck check_throttle(const FixtureRecord& now, const FixtureRecord* baseline, const GateRules& rules) {
  ThrottleCheck c;
  if (!any_valid(now)) {
    c.reason = "NVML snapshots unavailable: throttling not checked";
    return c;
  }
  const std::uint64_t mask = mask_of(now);
  if ((mask & kHardThrottle) != 0) {
    c.throttled = true;
    c.reason = fmt::format("thermal or hardware slowdown ({}, {})", names_of(mask & kHardThrottle), clock_text(now));
    return c;
  }
  if ((mask & clocks_event::kSwPowerCap) == 0) return c;
  if (baseline == nullptr) {
    c.reason = fmt::format("power-capped (SwPowerCap, {})", clock_text(now));
    return c;
  }
  if (!any_valid(*baseline)) {
    c.reason =
        fmt::format("power-capped (SwPowerCap, {}); the baseline has no NVML snapshots to compare", clock_text(now));
    return c;
  }
  if ((mask_of(*baseline) & clocks_event::kSwPowerCap) == 0) {
    c.throttled = true;
    c.reason = fmt::format("power-capped (SwPowerCap, {}) where the baseline was not ({})", clock_text(now),
                           clock_text(*baseline));
    return c;
  }
  const auto now_clock = mean_sm_clock_mhz(now);
  const auto base_clock = mean_sm_clock_mhz(*baseline);
  if (now_clock && base_clock) {
    const double diff = *now_clock / *base_clock - 1;
    if (std::fabs(diff) > rules.clock_tolerance) {
      c.throttled = true;
      c.reason = fmt::format(
          "power-capped in both runs, but SM clock {:.0f} MHz against the baseline's {:.0f} MHz "
          "({:+.1f}%, more than {:.0f}%)",
          *now_clock, *base_clock, diff * 100, rules.clock_tolerance * 100);
      return c;
    }
    c.reason = fmt::format("power-capped as in the baseline (SM {:.0f} against {:.0f} MHz)", *now_clock, *base_clock);
    return c;
  }
  c.reason = "power-capped as in the baseline (SM clocks unknown)";
  return c;
}

std::string sm_clock_difference(const FixtureRecord& now, const FixtureRecord& reference, const GateRules& rules,
                                const std::string& reference_name) {
  if (!now.sm_clock || !reference.sm_clock ||
      !sm_clocks_differ(*now.sm_clock, *reference.sm_clock, rules.sm_clock_tolerance))
    return "";
  const SmClockRange &n = *now.sm_clock, &b = *reference.sm_clock;
  return fmt::format(
      "SM clock per sample differs: median {:.0f} MHz ({:.0f}..{:.0f}) against {} {:.0f} MHz "
      "({:.0f}..{:.0f}), {:+.1f}%",
      n.median_mhz, n.min_mhz, n.max_mhz, reference_name, b.median_mhz, b.min_mhz, b.max_mhz,
      (n.median_mhz / b.median_mhz - 1) * 100);
}

FixtureClass classify_fixture(const FixtureRecord& f, double reference_median_ns, const std::string& gpu_name,
                              const GateRules& rules) {
  if (reference_median_ns < rules.overhead_cut_ns) return FixtureClass::Overhead;
  const DatasheetFigures sheet = datasheet_for(gpu_name);
  const auto peak = sheet.tflops.find(f.dtype);
  if (!sheet.known || peak == sheet.tflops.end() || !(peak->second > 0) || !(sheet.bandwidth_gbps > 0) ||
      !(f.flops > 0) || !(f.bytes > 0)) {
    return FixtureClass::Throughput;
  }
  const Roof roof{peak->second, sheet.bandwidth_gbps};
  return compute_time_ns(f.flops, roof) >= memory_time_ns(f.bytes, roof) ? FixtureClass::Compute : FixtureClass::Memory;
}

double threshold_for(FixtureClass c, const GateRules& rules) {
  if (rules.threshold_override) return *rules.threshold_override;
  return c == FixtureClass::Overhead ? rules.overhead_threshold : rules.threshold;
}

double fixture_threshold(FixtureClass c, const FixtureRecord& now, const FixtureRecord* reference,
                         const GateRules& rules) {
  const auto capped = [](const FixtureRecord& f) {
    return any_valid(f) && (mask_of(f) & clocks_event::kSwPowerCap) != 0;
  };
  const double t = threshold_for(c, rules);
  if (!rules.threshold_override && reference != nullptr && capped(now) && capped(*reference)) {
    return std::max(t, rules.power_capped_threshold);
  }
  return t;
}

GateResult gate_fixture(const FixtureRecord& now, const FixtureRecord* baseline, const std::string& gpu_name,
                        const GateRules& rules) {
  GateResult r;
  r.key = now.key();
  r.name = now.name;
  r.op = now.op;
  r.dtype = now.dtype;
  r.size = now.size;
  r.mode = now.mode;
  r.sampling_s = now.sampling_s;
  r.has_baseline = baseline != nullptr;
  r.now_samples = now.samples_ns.size();
  if (baseline != nullptr) {
    const SampleStats b = compute_stats(baseline->samples_ns);  // a baseline always has samples
    r.baseline_median_ns = b.median;
    r.baseline_rsd = b.rsd();
    r.baseline_samples = b.count;
  }
  if (!now.error.empty() || now.samples_ns.empty()) {
    r.comparison = r.verdict = Verdict::Failed;
    r.reason = now.error.empty() ? "no samples" : now.error;
    r.cls = classify_fixture(now, baseline ? r.baseline_median_ns : 0.0, gpu_name, rules);
    r.threshold = threshold_for(r.cls, rules);
    return r;
  }
  const SampleStats s = compute_stats(now.samples_ns);
  r.now_median_ns = s.median;
  r.now_rsd = s.rsd();
  r.cls = classify_fixture(now, baseline ? r.baseline_median_ns : s.median, gpu_name, rules);
  r.threshold = fixture_threshold(r.cls, now, baseline, rules);

  // What the numbers say.
  if (baseline != nullptr) {
    r.delta = r.now_median_ns / r.baseline_median_ns - 1;
    r.delta_ns = r.now_median_ns - r.baseline_median_ns;
    r.test = mann_whitney_u(now.samples_ns, baseline->samples_ns);
    const bool significant = r.test.p < rules.alpha;
    if (r.delta > r.threshold && significant) {
      r.comparison = Verdict::Regression;
    } else if (r.delta < -r.threshold && significant) {
      r.comparison = Verdict::Improvement;
    } else {
      r.comparison = Verdict::Unchanged;
    }
  } else {
    r.comparison = Verdict::Recorded;
  }

  // Can the run tell?
  std::vector<std::string> why;
  if (now.stop != StopReason::Converged) {
    r.noisy = true;
    const MedianInterval ci = median_interval(now.samples_ns, 0.95, batches_in_span(now.sampling_s, now.batch_min_s));
    why.push_back(fmt::format("precision target {:.2f}% not met (median known to {}, RSD {:.2f}%, stop: {})",
                              now.max_noise * 100,
                              ci.bounded ? fmt::format("+-{:.3f}% at 95%", ci.half_width() * 100) : "no bound at 95%",
                              r.now_rsd * 100, now.stop ? to_string(*now.stop) : "unknown"));
  }
  if (baseline != nullptr && baseline->stop != StopReason::Converged) {
    r.noisy = true;
    why.push_back(fmt::format("the baseline missed its precision target {:.2f}% (RSD {:.2f}%)",
                              baseline->max_noise * 100, r.baseline_rsd * 100));
  }
  const ThrottleCheck th = check_throttle(now, baseline, rules);
  if (th.throttled) {
    r.throttled = true;
    why.push_back("throttled: " + th.reason);
  } else {
    r.note = th.reason;
  }
  if (baseline != nullptr) {
    if (const std::string clocks = sm_clock_difference(now, *baseline, rules); !clocks.empty())
      r.note += (r.note.empty() ? "" : "; ") + clocks;
  }
  if (baseline != nullptr && hard_throttled(*baseline)) {
    r.throttled = true;
    why.push_back("the baseline was throttled (" + names_of(mask_of(*baseline) & kHardThrottle) + ")");
  }
  if (r.now_samples < rules.min_samples || (baseline != nullptr && r.baseline_samples < rules.min_samples)) {
    why.push_back(fmt::format("too few samples ({} now, {} in the baseline; at least {})", r.now_samples,
                              r.baseline_samples, rules.min_samples));
  }

  if (!why.empty()) {
    r.verdict = Verdict::Inconclusive;
    for (const std::string& w : why) r.reason += (r.reason.empty() ? "" : "; ") + w;
    if (r.comparison == Verdict::Regression || r.comparison == Verdict::Improvement) {
      r.reason += fmt::format("; the numbers alone say {}", to_string(r.comparison));
    }
    return r;
  }
  r.verdict = r.comparison;
  if (baseline == nullptr) {
    r.reason = "recorded into the baseline";
  } else if (r.verdict == Verdict::Regression) {
    r.reason = fmt::format("slower by more than {:g}%, significant (p < {})", r.threshold * 100, rules.alpha);
  } else if (r.verdict == Verdict::Improvement) {
    r.reason = fmt::format("faster by more than {:g}%, significant (p < {})", r.threshold * 100, rules.alpha);
  } else if (std::fabs(r.delta) <= r.threshold) {
    r.reason = fmt::format("within the {:g}% threshold", r.threshold * 100);
  } else {
    r.reason = fmt::format("beyond the {:g}% threshold but not significant (p >= {})", r.threshold * 100, rules.alpha);
  }
  return r;
}

VerdictCounts count_verdicts(const std::vector<GateResult>& results) {
  VerdictCounts c;
  for (const GateResult& r : results) {
    switch (r.verdict) {
      case Verdict::Unchanged:
        ++c.unchanged;
        break;
      case Verdict::Improvement:
        ++c.improvement;
        break;
      case Verdict::Regression:
        ++c.regression;
        break;
      case Verdict::Inconclusive:
        ++c.inconclusive;
        break;
      case Verdict::Failed:
        ++c.failed;
        break;
      case Verdict::Recorded:
        ++c.recorded;
        break;
    }
  }
  return c;
}

int qualify_exit_code(const std::vector<GateResult>& results, bool validation_failed) {
  const VerdictCounts c = count_verdicts(results);
  if (validation_failed || c.regression > 0 || c.failed > 0) return 1;
  if (c.inconclusive > 0) return 3;
  return 0;
}

}  // namespace xb
