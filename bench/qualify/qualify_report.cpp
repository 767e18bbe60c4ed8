// Evaluation and reports of `bench qualify` (see qualify_report.h).
#include "bench/qualify/qualify_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "bench/cli/cli.h"
#include "bench/core/run_dir.h"
#include "bench/gate/report_format.h"
#include "common/atomic_file.h"
#include "common/stats.h"
#include "profiler/model/session_io.h"

namespace xb {

namespace fs = std::filesystem;
using nlohmann::json;

bool QualifyOutcome::validation_failed() const {
  return std::any_of(runs.begin(), runs.end(), [](const LoadedRun& r) { return !r.validation.passed(); });
}

std::string QualifyOutcome::result() const {
  const VerdictCounts c = count_verdicts(fixtures);
  if (c.failed > 0 || validation_failed()) return "failed";
  if (c.regression > 0) return "regression";
  if (c.inconclusive > 0) return "inconclusive";
  return "pass";
}

QualifyOutcome evaluate_qualification(const Suite& suite, const Baseline* baseline, std::vector<LoadedRun> runs,
                                      const GateRules& rules) {
  QualifyOutcome o;
  o.suite_name = suite.name;
  o.rules = rules;
  if (runs.empty()) throw InputError("no run folder to gate");
  o.environment = environment_of(runs.front().meta);
  for (const LoadedRun& r : runs) {
    for (const EnvironmentDifference& d : compare_environments(o.environment, environment_of(r.meta))) {
      if (d.refuses) {
        throw InputError(fmt::format("run folders {} and {} differ in {}: '{}' vs '{}'", runs.front().dir.string(),
                                     r.dir.string(), d.what, d.baseline, d.now));
      }
    }
  }
  if (baseline != nullptr) {
    o.baseline_environment = baseline->environment;
    o.baseline_created_utc = baseline->created_utc;
  }
  std::set<std::string> suite_keys;
  for (const SuiteFixture& sf : suite.fixtures) {
    suite_keys.insert(sf.key());
    const FixtureRecord* now = nullptr;
    for (const LoadedRun& r : runs) {
      std::optional<TimingMode> run_mode;  // a run folder holds one mode
      for (const FixtureRecord& f : r.fixtures) run_mode = run_mode ? run_mode : f.mode;
      for (const FixtureRecord& f : r.fixtures) {
        // A fixture that failed before sampling has no mode: it is the suite's fixture of its run.
        if (f.key() == sf.key() || (f.name == sf.name() && !f.mode && (!run_mode || *run_mode == sf.mode))) {
          now = &f;
        }
      }
      if (now != nullptr) break;
    }
    if (now == nullptr) throw InputError("no run folder holds suite fixture " + sf.key());
    const FixtureRecord* base = nullptr;
    if (baseline != nullptr) {
      base = baseline->find(sf.key());
      if (base == nullptr) {
        throw InputError(fmt::format("baseline has no entry for {}; record one with --update-baseline", sf.key()));
      }
    }
    FixtureRecord record = *now;
    if (!record.mode) record.mode = sf.mode;
    o.fixtures.push_back(gate_fixture(record, base, o.environment.gpu_name, rules));
  }
  if (baseline != nullptr) {
    std::size_t extra = 0;
    for (const FixtureRecord& f : baseline->fixtures) extra += suite_keys.count(f.key()) == 0 ? 1 : 0;
    if (extra > 0)
      o.notes.push_back(fmt::format("{} baseline fixture(s) are not in the suite and were not compared", extra));
  }
  o.runs = std::move(runs);
  o.exit_code = qualify_exit_code(o.fixtures, o.validation_failed());
  return o;
}

Baseline baseline_from_runs(const Suite& suite, const std::vector<LoadedRun>& runs, const std::string& created_utc) {
  if (runs.empty()) throw std::invalid_argument("baseline_from_runs: no run");
  Baseline b;
  b.created_utc = created_utc;
  b.suite = suite.name;
  b.environment = environment_of(runs.front().meta);
  for (const SuiteFixture& sf : suite.fixtures) {
    for (const LoadedRun& r : runs) {
      for (const FixtureRecord& f : r.fixtures) {
        if (f.key() == sf.key()) b.fixtures.push_back(f);
      }
    }
  }
  for (const FixtureRecord& f : b.fixtures) {
    if (f.samples_ns.empty()) throw std::invalid_argument("baseline: fixture " + f.key() + " has no samples");
  }
  return b;
}

namespace {

std::string us_text(double ns) { return fmt::format("{:.3f}", ns / 1e3); }

std::string p_text(const GateResult& r) {
  if (!r.has_baseline || r.verdict == Verdict::Failed) return "";
  if (r.test.p <= 0) return "< 1e-300";
  return fmt::format("{:.2g}", r.test.p);
}

std::string env_value(const std::string& s) { return s.empty() ? "unknown" : s; }
std::string env_value(long long v) { return v > 0 ? std::to_string(v) : "unknown"; }

/// A finite number or null (JSON has no NaN).
json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// ---- JUnit helpers ---------------------------------------------------------------------------

using Case = JUnitCase;

/// Checks reported once per fixture (their subject is the fixture).
bool per_fixture_check(const std::string& check) {
  return check == checks::kEventVsCupti || check == checks::kVerified;
}

/// The validation checks of one run folder as test cases: one per check, one per fixture for
/// the per-fixture checks; the worst status of the group (failed > not claimed > passed > not run).
std::vector<Case> validation_cases(const LoadedRun& run) {
  std::vector<Case> cases;
  const std::string cls = "validation." + run.label;
  for (const std::string& check : all_checks()) {
    std::vector<std::pair<std::string, std::vector<const CheckResult*>>> groups;  // (name, results)
    for (const CheckResult* r : run.validation.results_of(check)) {
      const std::string name =
          per_fixture_check(check) && !r->subject.empty() ? check + " [" + r->subject + "]" : check;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == name; });
      if (it == groups.end()) {
        groups.push_back({name, {r}});
      } else {
        it->second.push_back(r);
      }
    }
    if (groups.empty()) groups.push_back({check, {}});
    for (const auto& [name, results] : groups) {
      Case c;
      c.classname = cls;
      c.name = name;
      bool failed = false, not_claimed = false, passed = false;
      for (const CheckResult* r : results) {
        failed = failed || r->status == CheckStatus::Failed;
        not_claimed = not_claimed || r->status == CheckStatus::NotClaimed;
        passed = passed || r->status == CheckStatus::Passed;
      }
      auto describe = [](const CheckResult& r) {
        std::string s = r.subject.empty() ? std::string() : r.subject + ": ";
        if (!r.expected.empty() || !r.found.empty()) s += "expected " + r.expected + ", found " + r.found + ": ";
        return s + r.message;
      };
      if (failed) {
        c.kind = Case::Kind::Failure;
        c.type = "validation";
        std::size_t n = 0;
        for (const CheckResult* r : results) {
          if (r->status != CheckStatus::Failed) continue;
          if (n++ == 0) c.message = describe(*r);
          c.body += describe(*r) + "\n";
        }
        if (n > 1) c.message = fmt::format("{} failures; first: {}", n, c.message);
      } else if (not_claimed) {
        c.kind = Case::Kind::Skipped;
        for (const CheckResult* r : results) {
          if (r->status == CheckStatus::NotClaimed) {
            c.message = "not claimed: " + describe(*r);
            break;
          }
        }
      } else if (passed) {
        for (const CheckResult* r : results) c.out += describe(*r) + "\n";
      } else {
        c.kind = Case::Kind::Skipped;
        c.message = results.empty() ? std::string("not run: no result") : "not run: " + describe(*results.front());
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

std::string gate_line(const GateResult& r) {
  if (!r.has_baseline || r.verdict == Verdict::Failed) return r.reason;
  return fmt::format("baseline {} us, now {} us ({:+.2f}%, {:+.3f} us), threshold {:g}% ({}), p = {}: {}",
                     us_text(r.baseline_median_ns), us_text(r.now_median_ns), r.delta * 100, r.delta_ns / 1e3,
                     r.threshold * 100, to_string(r.cls), p_text(r), r.reason);
}

std::vector<Case> gate_cases(const QualifyOutcome& o) {
  std::vector<Case> cases;
  Case env;
  env.classname = "qualify";
  env.name = "baseline_environment";
  if (o.update_baseline) {
    env.out = "baseline recorded from this run: " + o.baseline_file.string();
  } else if (!o.warning.empty()) {
    env.kind = Case::Kind::Skipped;
    env.message = "WARNING (--allow-mismatch): " + o.warning;
  } else {
    env.out = "same GPU, driver, CUDA and cuBLAS as the baseline";
    for (const EnvironmentDifference& d : o.differences) {
      env.out += fmt::format("\nnote: {} differs: '{}' (baseline) vs '{}' (this run)", d.what, d.baseline, d.now);
    }
  }
  cases.push_back(env);
  for (const GateResult& r : o.fixtures) {
    Case c;
    c.classname = std::string("qualify.") + to_string(r.mode);
    c.name = r.name;
    c.time_s = r.sampling_s;
    const std::string line = gate_line(r);
    switch (r.verdict) {
      case Verdict::Regression:
        c.kind = Case::Kind::Failure;
        c.type = "regression";
        c.message = "regression: " + line;
        break;
      case Verdict::Failed:
        c.kind = Case::Kind::Error;
        c.type = "failed";
        c.message = "fixture failed: " + line;
        break;
      case Verdict::Inconclusive:
        c.kind = Case::Kind::Skipped;
        c.message = "inconclusive: " + line;
        break;
      default:
        c.out = std::string(to_string(r.verdict)) + ": " + line;
        break;
    }
    if (!r.note.empty()) c.out += (c.out.empty() ? "" : "\n") + std::string("note: ") + r.note;
    if (!o.warning.empty()) c.out += (c.out.empty() ? "" : "\n") + std::string("WARNING: ") + o.warning;
    const auto slow = o.slow_fixtures_us.find(r.name);
    if (slow != o.slow_fixtures_us.end()) {
      c.out += (c.out.empty() ? "" : "\n") +
               fmt::format("slowed on purpose by {} us per call (--slow-fixture)", slow->second);
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace

void write_qualify_junit(const QualifyOutcome& o, std::ostream& out) {
  std::vector<JUnitSuite> suites;
  JUnitSuite gate{"qualify", gate_cases(o), {}, {}};
  gate.properties = {
      {"suite", o.suite_name},
      {"result", o.result()},
      {"exit_code", std::to_string(o.exit_code)},
      {"gpu", o.environment.gpu_name},
      {"driver", o.environment.driver_version},
      {"cublas_version", std::to_string(o.environment.cublas_version)},
      {"baseline", o.baseline_file.string()},
  };
  if (!o.warning.empty()) {
    gate.properties.push_back({"WARNING", o.warning});
    gate.system_err = "WARNING: " + o.warning;
  }
  suites.push_back(std::move(gate));
  for (const LoadedRun& r : o.runs) suites.push_back({"validation." + r.label, validation_cases(r), {}, {}});
  write_junit(out, "crossbench qualify " + o.suite_name, suites);
}

namespace {

/// qualify.md's "Environment": this run's and the baseline's, side by side, then each difference.
void write_environment_markdown(const QualifyOutcome& o, std::ostream& out) {
  out << "\n## Environment\n\n| | this run | baseline |\n| --- | --- | --- |\n";
  const RunEnvironment& e = o.environment;
  const RunEnvironment* b = o.baseline_environment ? &*o.baseline_environment : nullptr;
  auto row = [&](const char* what, const std::string& now, const std::string& base) {
    out << "| " << what << " | " << markdown_cell(now) << " | " << markdown_cell(b ? base : std::string("-")) << " |\n";
  };
  row("GPU", env_value(e.gpu_name), b ? env_value(b->gpu_name) : "");
  row("GPU UUID", env_value(e.gpu_uuid), b ? env_value(b->gpu_uuid) : "");
  row("driver", env_value(e.driver_version), b ? env_value(b->driver_version) : "");
  row("CUDA driver / runtime", env_value(e.cuda_driver_version) + " / " + env_value(e.cuda_runtime_version),
      b ? env_value(b->cuda_driver_version) + " / " + env_value(b->cuda_runtime_version) : "");
  row("cuBLAS", env_value(e.cublas_version), b ? env_value(b->cublas_version) : "");
  row("CUPTI", env_value(e.cupti_version), b ? env_value(b->cupti_version) : "");
  row("power limit (W)", fmt::format("{:.0f}", e.power_limit_w), b ? fmt::format("{:.0f}", b->power_limit_w) : "");
  row("max SM / memory clock (MHz)", fmt::format("{} / {}", e.sm_clock_max_mhz, e.mem_clock_max_mhz),
      b ? fmt::format("{} / {}", b->sm_clock_max_mhz, b->mem_clock_max_mhz) : "");
  for (const EnvironmentDifference& d : o.differences) {
    out << fmt::format("\n{} {} differs: '{}' (baseline) vs '{}' (this run).",
                       d.refuses ? "**Mismatch:**" : "Note:", d.what, d.baseline, d.now);
  }
  if (!o.differences.empty()) out << "\n";
}

/// qualify.md's "Rules": the gate's thresholds and tests in words.
void write_rules_markdown(const GateRules& g, std::ostream& out) {
  out << "\n## Rules\n\n";
  if (g.threshold_override) {
    out << fmt::format("- threshold: {:.1f}% for every fixture (--threshold)\n", *g.threshold_override * 100);
  } else {
    out << fmt::format(
        "- threshold: {:g}% for compute- and memory-bound fixtures, {:g}% for overhead-bound ones "
        "(baseline median per call under {:.0f} us)\n",
        g.threshold * 100, g.overhead_threshold * 100, g.overhead_cut_ns / 1e3);
  }
  out << fmt::format(
      "- regression: median slower than the baseline's by more than the threshold AND a two-sided "
      "Mann-Whitney U test on the raw samples gives p < {}; improvement: the same, faster; else unchanged\n",
      g.alpha);
  out << fmt::format(
      "- inconclusive (never a pass): noise target missed (now or in the baseline), throttled "
      "(thermal/hardware slowdown; or power cap where the baseline had none, or SM clock more than "
      "{:.0f}% off the baseline's), fewer than {} samples\n",
      g.clock_tolerance * 100, g.min_samples);
  out << "- exit codes: 0 all pass, 1 regression or validation failure, 2 usage or input error, 3 inconclusive only\n";
  out << "- definitions: docs/qualify.md\n";
}

}  // namespace

void write_qualify_markdown(const QualifyOutcome& o, std::ostream& out) {
  const VerdictCounts c = count_verdicts(o.fixtures);
  out << "# crossbench qualification: " << o.suite_name << "\n\n";
  if (!o.warning.empty()) {
    out << "> **WARNING: baseline mismatch, compared anyway (--allow-mismatch).** " << o.warning
        << ". Differences below may come from the GPU or software, not from the code.\n\n";
  }
  const char* result_text = o.result() == "pass"         ? "PASS"
                            : o.result() == "regression" ? "FAIL (regression)"
                            : o.result() == "failed"     ? "FAIL (fixture or validation failed)"
                                                         : "INCONCLUSIVE";
  out << fmt::format(
      "**Result: {}** (exit code {}): {} unchanged, {} improvement, {} regression, {} inconclusive, "
      "{} failed{}.\n\n",
      o.update_baseline ? (o.exit_code == 1 ? "baseline NOT written" : "baseline recorded") : result_text, o.exit_code,
      c.unchanged, c.improvement, c.regression, c.inconclusive, c.failed,
      c.recorded > 0 ? fmt::format(", {} recorded", c.recorded) : std::string());
  out << "- suite: `" << o.suite_file.string() << "` (" << o.suite_name << ", " << o.fixtures.size() << " fixtures)\n";
  out << "- baseline: `" << o.baseline_file.string() << "`";
  if (o.update_baseline) {
    out << (o.baseline_written ? " (written from this run)" : " (not written)");
  } else {
    out << " (recorded " << o.baseline_created_utc << ")";
  }
  if (!o.baseline_note.empty()) out << ": " << o.baseline_note;
  out << "\n- recorded: " << o.created_utc << "\n";
  for (const auto& [name, us] : o.slow_fixtures_us) {
    out << fmt::format("- **{} slowed on purpose** by a {} us spin kernel after every call (--slow-fixture)\n", name,
                       us);
  }
  for (const std::string& n : o.notes) out << "- note: " << n << "\n";
  write_environment_markdown(o, out);
  out << "\n## Fixtures\n\n";
  out << "| fixture | mode | class | threshold | baseline median (us) | now (us) | delta % | delta (us) | p-value | "
         "verdict | why |\n";
  out << "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n";
  for (const GateResult& r : o.fixtures) {
    const bool compared = r.has_baseline && r.verdict != Verdict::Failed;
    const std::string verdict = r.verdict == Verdict::Regression || r.verdict == Verdict::Failed
                                    ? fmt::format("**{}**", to_string(r.verdict))
                                    : std::string(to_string(r.verdict));
    std::string why = r.reason;
    if (!r.note.empty()) why += " (" + r.note + ")";
    out << fmt::format("| {} | {} | {} | {:g}% | {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(r.name),
                       to_string(r.mode), to_string(r.cls), r.threshold * 100,
                       r.has_baseline ? us_text(r.baseline_median_ns) : "-",
                       r.verdict == Verdict::Failed ? "-" : us_text(r.now_median_ns),
                       compared ? fmt::format("{:+.2f}", r.delta * 100) : "-",
                       compared ? fmt::format("{:+.3f}", r.delta_ns / 1e3) : "-", compared ? p_text(r) : "-", verdict,
                       markdown_cell(why));
  }
  out << "\n## Run folders\n\n| folder | validation | passed | failed | not claimed | not run |\n| --- | --- | ---: | "
         "---: | "
         "---: | ---: |\n";
  for (const LoadedRun& r : o.runs) {
    const CheckCounts k = r.validation.counts();
    out << fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", r.dir.string(),
                       r.validation.passed() ? "passed" : "**FAILED**", k.passed, k.failed, k.not_claimed, k.not_run);
  }
  write_rules_markdown(o.rules, out);
}

void write_qualify_json(const QualifyOutcome& o, std::ostream& out) {
  json doc;
  doc["crossbench"] = {{"format", "qualify"}, {"version", 1}, {"created_utc", o.created_utc}};
  doc["host"] = o.host;
  doc["result"] = o.result();
  doc["exit_code"] = o.exit_code;
  doc["warning"] = o.warning.empty() ? json(nullptr) : json(o.warning);
  doc["suite"] = {{"name", o.suite_name}, {"file", o.suite_file.string()}};
  json baseline{{"file", o.baseline_file.string()},
                {"updated", o.update_baseline},
                {"written", o.baseline_written},
                {"note", o.baseline_note}};
  if (o.baseline_environment) {
    baseline["created_utc"] = o.baseline_created_utc;
    baseline["environment"] = environment_json(*o.baseline_environment, /*full_clocks=*/false);
  }
  doc["baseline"] = baseline;
  doc["environment"] = environment_json(o.environment, /*full_clocks=*/false);
  json diffs = json::array();
  for (const EnvironmentDifference& d : o.differences) {
    diffs.push_back({{"what", d.what}, {"baseline", d.baseline}, {"now", d.now}, {"refuses", d.refuses}});
  }
  doc["differences"] = diffs;
  doc["mismatch_allowed"] = o.mismatch_allowed;
  const GateRules& g = o.rules;
  doc["rules"] = {{"alpha", g.alpha},
                  {"threshold_pct", g.threshold * 100},
                  {"overhead_threshold_pct", g.overhead_threshold * 100},
                  {"threshold_override_pct", g.threshold_override ? json(*g.threshold_override * 100) : json(nullptr)},
                  {"overhead_cut_ns", g.overhead_cut_ns},
                  {"clock_tolerance_pct", g.clock_tolerance * 100},
                  {"min_samples", g.min_samples},
                  {"test", "Mann-Whitney U, two-sided, normal approximation with tie and continuity correction"}};
  json slow = json::object();
  for (const auto& [name, us] : o.slow_fixtures_us) slow[name] = us;
  doc["slow_fixtures_us"] = slow;
  json runs = json::array();
  for (const LoadedRun& r : o.runs) {
    const CheckCounts k = r.validation.counts();
    runs.push_back(
        {{"label", r.label},
         {"dir", r.dir.string()},
         {"validation_passed", r.validation.passed()},
         {"checks",
          {{"passed", k.passed}, {"failed", k.failed}, {"not_claimed", k.not_claimed}, {"not_run", k.not_run}}}});
  }
  doc["runs"] = runs;
  json fixtures = json::array();
  for (const GateResult& r : o.fixtures) {
    const bool compared = r.has_baseline && r.verdict != Verdict::Failed;
    json f{{"key", r.key},
           {"name", r.name},
           {"op", r.op},
           {"dtype", r.dtype},
           {"size", r.size},
           {"mode", to_string(r.mode)},
           {"class", to_string(r.cls)},
           {"threshold_pct", r.threshold * 100},
           {"baseline_median_ns", r.has_baseline ? num(r.baseline_median_ns) : json(nullptr)},
           {"now_median_ns", r.verdict == Verdict::Failed ? json(nullptr) : num(r.now_median_ns)},
           {"delta_pct", compared ? num(r.delta * 100) : json(nullptr)},
           {"delta_ns", compared ? num(r.delta_ns) : json(nullptr)},
           {"p_value", compared ? num(r.test.p) : json(nullptr)},
           {"u", compared ? num(r.test.u1) : json(nullptr)},
           {"z", compared ? num(r.test.z) : json(nullptr)},
           {"now_samples", r.now_samples},
           {"baseline_samples", r.baseline_samples},
           {"now_rsd", num(r.now_rsd)},
           {"baseline_rsd", num(r.baseline_rsd)},
           {"comparison", to_string(r.comparison)},
           {"verdict", to_string(r.verdict)},
           {"noisy", r.noisy},
           {"throttled", r.throttled},
           {"reason", r.reason},
           {"note", r.note}};
    const auto s = o.slow_fixtures_us.find(r.name);
    f["slowed_us"] = s != o.slow_fixtures_us.end() ? json(s->second) : json(nullptr);
    fixtures.push_back(std::move(f));
  }
  doc["fixtures"] = fixtures;
  const VerdictCounts c = count_verdicts(o.fixtures);
  doc["counts"] = {{"unchanged", c.unchanged},       {"improvement", c.improvement}, {"regression", c.regression},
                   {"inconclusive", c.inconclusive}, {"failed", c.failed},           {"recorded", c.recorded}};
  doc["notes"] = o.notes;
  out << doc.dump(1) << "\n";
}

void write_qualify_reports(const QualifyOutcome& o, const fs::path& dir) {
  write_file_atomic(dir / "qualify.md", [&](std::ostream& s) { write_qualify_markdown(o, s); });
  write_file_atomic(dir / "qualify.xml", [&](std::ostream& s) { write_qualify_junit(o, s); });
  write_file_atomic(dir / "qualify.json", [&](std::ostream& s) { write_qualify_json(o, s); });
}

int finish_qualification(const QualifyOptions& options, const Suite& suite, const Baseline* baseline,
                         std::vector<LoadedRun> runs, const fs::path& dir, std::ostream& log) {
  GateRules rules;
  if (options.threshold_pct) rules.threshold_override = *options.threshold_pct / 100;
  const Baseline* compare_to = options.update_baseline ? nullptr : baseline;
  std::vector<EnvironmentDifference> differences;
  std::string warning;
  if (compare_to != nullptr && !runs.empty()) {
    differences = compare_environments(compare_to->environment, environment_of(runs.front().meta));
    const std::string line = mismatch_line(differences, options.baseline.string());
    if (!line.empty() && !options.allow_mismatch)
      throw UsageError(line + "; rerun with --allow-mismatch to compare anyway");
    warning = line;
  }
  QualifyOutcome o = evaluate_qualification(suite, compare_to, std::move(runs), rules);
  o.created_utc = utc_time("%Y-%m-%dT%H:%M:%SZ");
  o.host = host_name();
  o.suite_file = options.suite;
  o.baseline_file = options.baseline;
  o.update_baseline = options.update_baseline;
  o.differences = std::move(differences);
  o.warning = warning;
  o.mismatch_allowed = !warning.empty();
  o.slow_fixtures_us = options.slow_fixtures_us;
  if (options.update_baseline) {
    const VerdictCounts c = count_verdicts(o.fixtures);
    if (c.failed > 0 || o.validation_failed()) {
      o.baseline_note = "a fixture failed or a run folder did not validate; the old baseline (if any) is kept";
    } else {
      const Baseline fresh = baseline_from_runs(suite, o.runs, o.created_utc);
      std::error_code ec;
      if (o.baseline_file.has_parent_path()) fs::create_directories(o.baseline_file.parent_path(), ec);
      write_file_atomic(o.baseline_file, [&](std::ostream& s) { write_baseline_json(fresh, s); });
      o.baseline_written = true;
      if (c.inconclusive > 0) {
        o.baseline_note = fmt::format(
            "{} fixture(s) recorded noisy or throttled: comparisons against them will be "
            "inconclusive until the baseline is recorded again",
            c.inconclusive);
      }
    }
  }
  write_qualify_reports(o, dir);
  print_qualify_summary(o, dir, log);
  return o.exit_code;
}

void print_qualify_summary(const QualifyOutcome& o, const fs::path& dir, std::ostream& out) {
  out << "\nqualification of suite " << o.suite_name << " against " << o.baseline_file.string() << "\n";
  if (!o.warning.empty()) out << "WARNING: " << o.warning << " (--allow-mismatch)\n";
  for (const GateResult& r : o.fixtures) {
    if (r.verdict == Verdict::Unchanged || r.verdict == Verdict::Recorded) continue;
    out << fmt::format("  {:<12} {}: {}\n", to_string(r.verdict), r.key, gate_line(r));
  }
  for (const LoadedRun& r : o.runs) {
    if (!r.validation.passed()) out << "  validation FAILED: " << r.dir.string() << " (see its summary.md)\n";
  }
  const VerdictCounts c = count_verdicts(o.fixtures);
  out << fmt::format("{} unchanged, {} improvement, {} regression, {} inconclusive, {} failed, {} recorded\n",
                     c.unchanged, c.improvement, c.regression, c.inconclusive, c.failed, c.recorded);
  if (o.update_baseline) {
    out << (o.baseline_written ? "baseline written: " : "baseline NOT written: ") << o.baseline_file.string()
        << (o.baseline_note.empty() ? "" : " (" + o.baseline_note + ")") << "\n";
  }
  out << "result: " << o.result() << " (exit " << o.exit_code << "); reports: " << (dir / "qualify.md").string() << ", "
      << (dir / "qualify.xml").string() << ", " << (dir / "qualify.json").string() << "\n";
}

}  // namespace xb
