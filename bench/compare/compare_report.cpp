// `bench compare`'s outcome and reports (see compare_report.h; docs/compare.md).
#include "bench/compare/compare_report.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include <nlohmann/json.hpp>

#include "bench/cli/cli.h"
#include "bench/core/run_dir.h"
#include "bench/gate/report_format.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/strict_json.h"

namespace xb {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// The fixture of `run` paired with `f` of the other run: the same key, else the same name when
/// each run holds that name once (the timing mode then differs, and the verdict says so).
const RunFixture* partner(const RunFolder& run, const RunFolder& other, const RunFixture& f) {
  if (const RunFixture* same = run.find(f.key())) return same;
  const auto count = [&](const RunFolder& r) {
    std::size_t n = 0;
    for (const RunFixture& x : r.fixtures) n += x.record.name == f.record.name ? 1 : 0;
    return n;
  };
  if (count(run) != 1 || count(other) != 1) return nullptr;
  for (const RunFixture& x : run.fixtures) {
    if (x.record.name == f.record.name) return &x;
  }
  return nullptr;
}

/// Why a fixture cannot be compared ("" when it can).
std::string cannot_compare(const RunFixture& a, const RunFixture& b) {
  for (const auto* side : {&a, &b}) {
    const char* name = side == &a ? "A" : "B";
    if (!side->record.error.empty()) return fmt::format("failed in {}: {}", name, side->record.error);
    if (side->record.samples_ns.empty()) return fmt::format("no samples in {}", name);
  }
  return "";
}

std::string pct(double fraction) { return fmt::format("{:+.2f}%", fraction * 100); }
std::string us(double ns) { return fmt::format("{:.3f}", ns / 1000); }
json num_or_null(double v, bool known) { return known && std::isfinite(v) ? json(v) : json(nullptr); }

}  // namespace

std::string CompareOutcome::result() const {
  if (!claimed) return "not claimed";
  if (fixture_failed) return "failed";
  const CompareCounts c = count_compare_verdicts(fixtures);
  if (c.slower > 0) return "slower";
  if (c.ambiguous > 0) return "ambiguous";
  if (c.faster > 0) return "faster";
  return "same";
}

CompareOutcome compare_runs(RunFolder a, RunFolder b, const GateRules& rules, const std::string& created_utc) {
  CompareOutcome o;
  o.created_utc = created_utc;
  o.rules = rules;
  o.differences = run_differences(a.environment, b.environment);
  std::vector<std::string> unvalidated;
  if (!a.validated) unvalidated.push_back("A " + a.validation);
  if (!b.validated) unvalidated.push_back("B " + b.validation);
  o.claimed = unvalidated.empty();
  for (const std::string& u : unvalidated) o.not_claimed_because += (o.not_claimed_because.empty() ? "" : "; ") + u;
  const std::string gpu = !b.environment.gpu_name.empty() ? b.environment.gpu_name : a.environment.gpu_name;
  for (const RunFixture& fb : b.fixtures) {
    const RunFixture* fa = partner(a, b, fb);
    if (fa == nullptr) {
      o.only_in_b.push_back(fb.key());
      continue;
    }
    const std::string why = cannot_compare(*fa, fb);
    if (!why.empty()) {
      o.not_compared.emplace_back(fb.key(), why);
      if (!fb.record.error.empty()) o.fixture_failed = true;
      continue;
    }
    o.fixtures.push_back(compare_fixture(*fa, fb, gpu, o.differences, rules));
  }
  for (const RunFixture& fa : a.fixtures) {
    if (partner(b, a, fa) == nullptr) o.only_in_a.push_back(fa.key());
  }
  o.a = std::move(a);
  o.b = std::move(b);
  const CompareCounts c = count_compare_verdicts(o.fixtures);
  o.exit_code = (!o.claimed || c.slower > 0 || o.fixture_failed) ? 1 : c.ambiguous > 0 ? 3 : 0;
  return o;
}

void write_compare_markdown(const CompareOutcome& o, std::ostream& out) {
  const CompareCounts c = count_compare_verdicts(o.fixtures);
  out << "# crossbench compare\n\n";
  out << fmt::format("**Result: {}** (exit {}): {} same, {} faster, {} slower, {} ambiguous\n\n", o.result(),
                     o.exit_code, c.same, c.faster, c.slower, c.ambiguous);
  if (!o.claimed) {
    out << "**Not claimed**: a comparison is claimed only when both runs validated; " << o.not_claimed_because
        << ". The verdicts below are what the samples say.\n\n";
  }
  out << "| | run A | run B |\n| --- | --- | --- |\n";
  out << fmt::format("| folder | `{}` | `{}` |\n", o.a.dir.string(), o.b.dir.string());
  out << fmt::format("| recorded | {} | {} |\n", o.a.created_utc, o.b.created_utc);
  out << fmt::format("| GPU | {} | {} |\n", markdown_cell(o.a.environment.gpu_name),
                     markdown_cell(o.b.environment.gpu_name));
  out << fmt::format("| validation | {} | {} |\n", markdown_cell(o.a.validation), markdown_cell(o.b.validation));
  out << fmt::format("| environment from | {} | {} |\n\n", o.a.environment_source, o.b.environment_source);
  if (o.differences.empty()) {
    out << "No difference in GPU, driver, CUDA, cuBLAS, CUPTI, power limit or maximum clocks between the runs";
  } else {
    out << "Differences between the runs (**can explain** a shift: a SLOWER or FASTER it touches is AMBIGUOUS):\n\n";
    for (const RunDifference& d : o.differences)
      out << fmt::format("- {}: '{}' in A, '{}' in B{}\n", d.what, d.a, d.b, d.explains ? " (**can explain**)" : "");
  }
  for (const RunFolder* r : {&o.a, &o.b}) {
    if (!r->not_recorded.empty()) {
      std::string list;
      for (const std::string& n : r->not_recorded) list += (list.empty() ? "" : ", ") + n;
      out << fmt::format("{}not recorded in run {} (no raw_session.json), so not compared: {}",
                         o.differences.empty() ? "; " : "\n", r == &o.a ? "A" : "B", list);
    }
  }
  out << "\n\n## Fixtures\n\n";
  out << "| fixture | class | threshold | median A (us) | median B (us) | shift B vs A | interval | p | SM clock A, B "
         "(MHz) | "
         "verdict | reason |\n| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | --- | --- | --- |\n";
  for (const FixtureComparison& f : o.fixtures) {
    const std::string clocks =
        f.clock_source.empty() ? "unknown"
                               : fmt::format("{:.0f}, {:.0f} ({})", f.sm_clock_a_mhz, f.sm_clock_b_mhz, f.clock_source);
    out << fmt::format("| {} | {} | {:g}% | {} | {} | {} | [{}, {}] | {:.2g} | {} | **{}** | {} |\n",
                       markdown_cell(f.key), to_string(f.cls), f.threshold * 100, us(f.median_a_ns), us(f.median_b_ns),
                       pct(f.shift), pct(f.low), pct(f.high), f.test.p, clocks, to_string(f.verdict),
                       markdown_cell(f.reason));
  }
  std::vector<std::string> notes;
  for (const FixtureComparison& f : o.fixtures)
    for (const std::string& n : f.notes) notes.push_back(f.key + ": " + n);
  if (!notes.empty()) {
    out << "\nNotes:\n\n";
    for (const std::string& n : notes) out << "- " << n << "\n";
  }
  if (!o.only_in_a.empty() || !o.only_in_b.empty() || !o.not_compared.empty()) {
    out << "\n## Not compared\n\n";
    for (const std::string& k : o.only_in_a) out << "- " << k << ": in run A only\n";
    for (const std::string& k : o.only_in_b) out << "- " << k << ": in run B only\n";
    for (const auto& [k, why] : o.not_compared) out << "- " << k << ": " << why << "\n";
  }
  out << fmt::format(
      "\n## Rules\n\nShift: the Hodges-Lehmann estimate of log(B) - log(A) as a ratio, with the Mann-Whitney "
      "interval at {:g}%, widened to the ratio of the two medians' drift-aware intervals at {:g}% each; verdict SAME "
      "inside +-threshold, SLOWER / FASTER beyond it, AMBIGUOUS where it straddles one or a difference between the "
      "runs can explain it. Thresholds: {}; overhead-bound below {:g} us per call (docs/compare.md).\n",
      (1 - o.rules.alpha) * 100, (1 - o.rules.alpha / 2) * 100,
      o.rules.threshold_override
          ? fmt::format("{:g}% for every fixture (--threshold)", *o.rules.threshold_override * 100)
          : fmt::format("{:g}% compute- and memory-bound, {:g}% overhead-bound, at least {:g}% where both runs were "
                        "power-capped",
                        o.rules.threshold * 100, o.rules.overhead_threshold * 100,
                        o.rules.power_capped_threshold * 100),
      o.rules.overhead_cut_ns / 1000);
}

void write_compare_json(const CompareOutcome& o, std::ostream& out) {
  const CompareCounts c = count_compare_verdicts(o.fixtures);
  const auto run_json = [](const RunFolder& r) {
    return json{{"dir", r.dir.string()},
                {"created_utc", r.created_utc},
                {"validated", r.validated},
                {"validation", r.validation},
                {"environment_source", r.environment_source},
                {"not_recorded", r.not_recorded},
                {"environment", environment_json(r.environment, false)}};
  };
  json differences = json::array();
  for (const RunDifference& d : o.differences)
    differences.push_back({{"what", d.what}, {"a", d.a}, {"b", d.b}, {"explains", d.explains}});
  json fixtures = json::array();
  for (const FixtureComparison& f : o.fixtures) {
    fixtures.push_back(
        {{"key", f.key},
         {"name", f.name},
         {"mode_a", f.mode_a},
         {"mode_b", f.mode_b},
         {"class", to_string(f.cls)},
         {"threshold_pct", f.threshold * 100},
         {"samples_a", f.samples_a},
         {"samples_b", f.samples_b},
         {"median_a_ns", f.median_a_ns},
         {"median_b_ns", f.median_b_ns},
         {"shift_pct", f.shift * 100},
         {"low_pct", f.low * 100},
         {"high_pct", f.high * 100},
         {"hodges_lehmann",
          {{"low_pct", f.shift_low * 100}, {"high_pct", f.shift_high * 100}, {"bounded", f.shift_bounded}}},
         {"medians",
          {{"low_pct", num_or_null(f.medians_low * 100, f.medians_bounded)},
           {"high_pct", num_or_null(f.medians_high * 100, f.medians_bounded)},
           {"bounded", f.medians_bounded}}},
         {"mann_whitney", {{"u1", f.test.u1}, {"z", f.test.z}, {"p", f.test.p}}},
         {"sm_clock_a_mhz", num_or_null(f.sm_clock_a_mhz, f.sm_clock_a_mhz > 0)},
         {"sm_clock_b_mhz", num_or_null(f.sm_clock_b_mhz, f.sm_clock_b_mhz > 0)},
         {"clock_source", f.clock_source},
         {"comparison", to_string(f.comparison)},
         {"verdict", to_string(f.verdict)},
         {"explained_by", f.explained_by},
         {"reason", f.reason},
         {"notes", f.notes}});
  }
  json not_compared = json::array();
  for (const auto& [k, why] : o.not_compared) not_compared.push_back({{"key", k}, {"why", why}});
  const GateRules& r = o.rules;
  const json doc{
      {"crossbench", {{"format", "compare"}, {"version", 1}, {"created_utc", o.created_utc}}},
      {"result", o.result()},
      {"exit_code", o.exit_code},
      {"claimed", o.claimed},
      {"not_claimed_because", o.not_claimed_because},
      {"runs", {{"a", run_json(o.a)}, {"b", run_json(o.b)}}},
      {"differences", differences},
      {"rules",
       {{"confidence", 1 - r.alpha},
        {"threshold_pct", r.threshold * 100},
        {"overhead_threshold_pct", r.overhead_threshold * 100},
        {"power_capped_threshold_pct", r.power_capped_threshold * 100},
        {"threshold_override_pct", r.threshold_override ? json(*r.threshold_override * 100) : json(nullptr)},
        {"overhead_cut_ns", r.overhead_cut_ns},
        {"min_samples", r.min_samples}}},
      {"fixtures", fixtures},
      {"only_in_a", o.only_in_a},
      {"only_in_b", o.only_in_b},
      {"not_compared", not_compared},
      {"counts", {{"same", c.same}, {"faster", c.faster}, {"slower", c.slower}, {"ambiguous", c.ambiguous}}}};
  out << doc.dump(1) << "\n";
}

void print_compare_summary(const CompareOutcome& o, const fs::path& dir, std::ostream& out) {
  out << fmt::format("compare: A {} against B {}\n", o.a.dir.string(), o.b.dir.string());
  for (const RunDifference& d : o.differences)
    out << fmt::format("  differs: {} '{}' (A) vs '{}' (B){}\n", d.what, d.a, d.b,
                       d.explains ? ": can explain a shift" : "");
  for (const FixtureComparison& f : o.fixtures)
    out << fmt::format("  {:<10} {:<32} {}\n", to_string(f.verdict), f.key, f.reason);
  for (const std::string& k : o.only_in_a) out << fmt::format("  {:<10} {}\n", "A only", k);
  for (const std::string& k : o.only_in_b) out << fmt::format("  {:<10} {}\n", "B only", k);
  for (const auto& [k, why] : o.not_compared) out << fmt::format("  {:<10} {:<32} {}\n", "not compared", k, why);
  if (!o.claimed) out << "not claimed: " << o.not_claimed_because << "\n";
  out << fmt::format("result: {} (exit {}); reports: {}, {}; pictures: python3 scripts/plot_compare.py {}\n",
                     o.result(), o.exit_code, (dir / "compare.md").string(), (dir / "compare.json").string(),
                     dir.string());
}

int compare_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    const std::optional<CompareOptions> opt = parse_compare_args(argc, argv);
    if (!opt) return 0;
    const fs::path dir = opt->out.empty() ? default_compare_dir() : opt->out;
    check_run_dir(dir);
    GateRules rules;
    if (opt->threshold_pct) rules.threshold_override = *opt->threshold_pct / 100;
    if (opt->overhead_threshold_pct) rules.overhead_threshold = *opt->overhead_threshold_pct / 100;
    RunFolder a = read_run_folder(opt->a);
    RunFolder b = read_run_folder(opt->b);
    const CompareOutcome o = compare_runs(std::move(a), std::move(b), rules, utc_time("%Y-%m-%dT%H:%M:%SZ"));
    create_run_dir(dir);
    RunDirClaim claim(dir);
    write_file_atomic(dir / "compare.md", [&](std::ostream& s) { write_compare_markdown(o, s); });
    write_file_atomic(dir / "compare.json", [&](std::ostream& s) { write_compare_json(o, s); });
    claim.keep();
    release_run_dir(dir);
    print_compare_summary(o, dir, out);
    return o.exit_code;
  } catch (const UsageError& e) {
    err << "bench compare: error: " << strict_json::one_line(e.what()) << "\n";
  } catch (const InputError& e) {
    err << "bench compare: error: " << strict_json::one_line(e.what()) << "\n";
  } catch (const std::exception& e) {  // writing the reports failed (bench's run_command: exit 1)
    err << "bench compare: error: " << strict_json::one_line(e.what()) << "\n";
    return 1;
  }
  return 2;
}

int compare_command(int argc, const char* const* argv) { return compare_main(argc, argv, std::cout, std::cerr); }

}  // namespace xb
