// The fleet report of many qualifications (see qualify_aggregate.h).
#include "bench/qualify/qualify_aggregate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "bench/cli/cli.h"
#include "bench/core/run_dir.h"
#include "bench/gate/report_format.h"
#include "common/atomic_file.h"
#include "common/strict_json.h"
#include "profiler/model/session_io.h"

namespace xb {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace strict_json;

namespace {

const char* const kResults[] = {"pass", "regression", "failed", "inconclusive"};
const char* const kVerdicts[] = {"unchanged", "improvement", "regression", "inconclusive", "failed", "recorded"};

/// Rank of a qualification result, worst highest.
int result_rank(const std::string& r) {
  if (r == "failed") return 3;
  if (r == "regression") return 2;
  if (r == "inconclusive") return 1;
  return 0;
}

/// Rank of a fixture verdict, worst highest.
int verdict_rank(const std::string& v) {
  if (v == "failed") return 5;
  if (v == "regression") return 4;
  if (v == "inconclusive") return 3;
  if (v == "improvement") return 2;
  if (v == "unchanged") return 1;
  return 0;
}

std::optional<double> optional_number(const json& obj, const char* key, const std::string& where) {
  const json& v = need(obj, key, where);
  if (v.is_null()) return std::nullopt;
  return need_number(obj, key, where);
}

template <std::size_t N>
std::string one_of(const json& obj, const char* key, const std::string& where, const char* const (&names)[N]) {
  const std::string v = need_string(obj, key, where);
  for (const char* n : names) {
    if (v == n) return v;
  }
  fail(where, fmt::format("\"{}\" is {}, not one of {}", key, quote_input(v),
                          join_list({std::begin(names), std::end(names)})));
}

json num_or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string pct_text(const std::optional<double>& v) { return v ? fmt::format("{:+.2f}%", *v) : std::string("-"); }

std::string text_or_unknown(const std::string& s) { return s.empty() ? std::string("unknown") : s; }

}  // namespace

int exit_code_of_result(const std::string& result) {
  const int rank = result_rank(result);
  return rank >= 2 ? 1 : rank == 1 ? 3 : 0;
}

QualifySummary parse_qualify_summary(std::string_view text) {
  const std::string where = "qualify.json";
  const json doc = parse_json(text, where);
  check_header(doc, "qualify", where);
  QualifySummary q;
  q.created_utc = need_string(need(doc, "crossbench", where), "created_utc", where + ": crossbench");
  q.result = one_of(doc, "result", where, kResults);
  q.exit_code = static_cast<int>(need_int(doc, "exit_code", where, 0, 255));
  if (doc.contains("host")) q.node = need_string(doc, "host", where);
  const json& warning = need(doc, "warning", where);
  if (!warning.is_null()) q.warning = need_string(doc, "warning", where);
  q.suite = need_string(need_object(doc, "suite", where), "name", where + ": suite");
  const std::string ew = where + ": environment";
  const json& env = need_object(doc, "environment", where);
  q.gpu_name = need_string(env, "gpu_name", ew);
  q.gpu_uuid = need_string(env, "gpu_uuid", ew);
  q.driver_version = need_string(env, "driver_version", ew);
  if (env.contains("gpu_pci_bus_id")) q.gpu_pci_bus_id = need_string(env, "gpu_pci_bus_id", ew);
  const json& runs = need_array(doc, "runs", where);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string at = fmt::format("{}: runs[{}]", where, i);
    if (!runs[i].is_object()) fail(at, "not an object");
    q.validation_passed = need_bool(runs[i], "validation_passed", at) && q.validation_passed;
  }
  const json& fixtures = need_array(doc, "fixtures", where);
  for (std::size_t i = 0; i < fixtures.size(); ++i) {
    const std::string at = fmt::format("{}: fixtures[{}]", where, i);
    const json& f = fixtures[i];
    if (!f.is_object()) fail(at, "not an object");
    QualifySummary::Fixture x;
    x.key = need_string(f, "key", at);
    x.verdict = one_of(f, "verdict", at, kVerdicts);
    x.reason = need_string(f, "reason", at);
    x.baseline_median_ns = optional_number(f, "baseline_median_ns", at);
    x.now_median_ns = optional_number(f, "now_median_ns", at);
    x.delta_pct = optional_number(f, "delta_pct", at);
    q.fixtures.push_back(std::move(x));
  }
  return q;
}

QualifySummary read_qualify_summary(const fs::path& file) {
  const std::string text = read_text_file(file);
  try {
    QualifySummary q = parse_qualify_summary(text);
    q.file = file;
    return q;
  } catch (const InputError& e) {
    throw InputError(file.string() + ": " + e.what());
  }
}

std::vector<QualifySummary> collect_qualifications(const std::vector<fs::path>& paths) {
  std::vector<QualifySummary> out;
  std::set<std::string> seen;
  for (const fs::path& arg : paths) {
    std::error_code ec;
    const fs::path base = arg.filename().empty() ? arg.parent_path() : arg;  // "dir/" names dir
    std::vector<fs::path> files;
    if (fs::is_regular_file(arg, ec)) {
      files.push_back(arg);
    } else if (fs::is_directory(arg, ec)) {
      fs::recursive_directory_iterator it(arg, fs::directory_options::none, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        if (it.depth() >= 8) it.disable_recursion_pending();
        if (it->path().filename() == "qualify.json" && it->is_regular_file(ec)) files.push_back(it->path());
      }
      if (ec) throw InputError(fmt::format("{}: cannot read the folder: {}", arg.string(), ec.message()));
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        // A folder is searched for files named exactly qualify.json (what bench qualify --out writes);
        // renamed copies (pass-qualify.json) are taken when named one by one.
        throw InputError(arg.string() +
                         ": no qualify.json in this folder or under it (give other file names, such as " +
                         "x-qualify.json, one by one)");
      }
    } else {
      throw InputError(arg.string() + ": no such file or folder");
    }
    const std::string top = base.filename().string();
    for (const fs::path& file : files) {
      const std::string canonical = fs::weakly_canonical(file, ec).string();
      if (!seen.insert(canonical).second) throw InputError(file.string() + ": the same qualify.json is given twice");
      QualifySummary q = read_qualify_summary(file);
      const fs::path rel = fs::is_regular_file(arg, ec) ? fs::path() : file.parent_path().lexically_relative(arg);
      const std::string rel_text = rel.empty() || rel == "." ? std::string() : rel.generic_string();
      if (fs::is_regular_file(arg, ec)) {
        const std::string folder = file.parent_path().filename().string();
        q.label = folder.empty() ? file.filename().string() : folder;
      } else {
        q.label = rel_text.empty() ? top : top + "/" + rel_text;
      }
      if (q.node.empty()) q.node = rel_text.empty() ? q.label : top + "/" + rel_text.substr(0, rel_text.find('/'));
      out.push_back(std::move(q));
    }
  }
  return out;
}

FleetReport aggregate_qualifications(std::vector<QualifySummary> entries, const std::string& created_utc) {
  if (entries.empty()) throw InputError("no qualification to aggregate");
  FleetReport r;
  r.created_utc = created_utc;
  r.suite = entries.front().suite;
  std::set<std::string> files;
  for (const QualifySummary& q : entries) {
    if (q.suite != r.suite) {
      throw InputError(fmt::format("{} qualifies suite {}, {} suite {}: a fleet report merges one suite",
                                   entries.front().file.string(), quote_input(r.suite), q.file.string(),
                                   quote_input(q.suite)));
    }
    if (!q.file.empty() && !files.insert(q.file.lexically_normal().string()).second) {
      throw InputError(q.file.string() + ": the same qualify.json is given twice");
    }
  }
  r.entries = std::move(entries);
  std::map<std::string, std::size_t> fixture_index;
  std::map<std::string, std::vector<double>> deltas;
  std::map<std::string, double> worst_delta;
  for (std::size_t i = 0; i < r.entries.size(); ++i) {
    const QualifySummary& q = r.entries[i];
    auto node = std::find_if(r.nodes.begin(), r.nodes.end(), [&](const NodeVerdict& n) { return n.node == q.node; });
    if (node == r.nodes.end()) node = r.nodes.insert(r.nodes.end(), NodeVerdict{q.node, "pass", 0, {}});
    node->entries.push_back(i);
    // A qualification whose run folders failed validation says "failed" itself; kept as written.
    if (result_rank(q.result) > result_rank(node->result)) node->result = q.result;
    for (const QualifySummary::Fixture& f : q.fixtures) {
      auto [it, added] = fixture_index.emplace(f.key, r.fixtures.size());
      if (added) {
        FleetFixture fresh;
        fresh.key = f.key;
        r.fixtures.push_back(std::move(fresh));
      }
      FleetFixture& x = r.fixtures[it->second];
      if (f.verdict == "regression") ++x.regression;
      if (f.verdict == "improvement") ++x.improvement;
      if (f.verdict == "unchanged") ++x.unchanged;
      if (f.verdict == "inconclusive") ++x.inconclusive;
      if (f.verdict == "failed") ++x.failed;
      if (f.verdict == "recorded") ++x.recorded;
      const bool worse = verdict_rank(f.verdict) > verdict_rank(x.worst_verdict);
      if (worse) x.worst_verdict = f.verdict;
      if (f.delta_pct) {
        deltas[f.key].push_back(*f.delta_pct);
        const auto w = worst_delta.find(f.key);
        if (w == worst_delta.end() || *f.delta_pct > w->second) {
          worst_delta[f.key] = *f.delta_pct;
          x.worst_label = q.label;
        }
      } else if (worse && worst_delta.count(f.key) == 0) {
        x.worst_label = q.label;
      }
    }
  }
  for (FleetFixture& x : r.fixtures) {
    std::vector<double>& d = deltas[x.key];
    if (d.empty()) continue;
    std::sort(d.begin(), d.end());
    x.min_delta_pct = d.front();
    x.max_delta_pct = d.back();
    const std::size_t n = d.size();
    x.median_delta_pct = n % 2 == 1 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
  }
  r.result = "pass";
  for (NodeVerdict& n : r.nodes) {
    n.exit_code = exit_code_of_result(n.result);
    if (result_rank(n.result) > result_rank(r.result)) r.result = n.result;
  }
  r.exit_code = exit_code_of_result(r.result);
  return r;
}

void write_fleet_markdown(const FleetReport& r, std::ostream& out) {
  out << "# crossbench fleet qualification: " << r.suite << "\n\n";
  out << fmt::format("**Result: {}** (exit {}): {} node(s), {} qualification(s); created {}\n\n", r.result, r.exit_code,
                     r.nodes.size(), r.entries.size(), r.created_utc);
  out << "## Nodes\n\n| node | result | qualifications |\n| --- | --- | --- |\n";
  for (const NodeVerdict& n : r.nodes) {
    std::string labels;
    for (std::size_t i : n.entries) labels += (labels.empty() ? "" : ", ") + r.entries[i].label;
    out << fmt::format("| {} | {} | {} |\n", markdown_cell(n.node), n.result, markdown_cell(labels));
  }
  out << "\n## Qualifications\n\n| node | qualification | GPU | UUID | PCI bus id | result | regression | inconclusive "
         "| failed | validation |\n| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | --- |\n";
  for (const QualifySummary& q : r.entries) {
    std::size_t reg = 0, inc = 0, failed = 0;
    for (const auto& f : q.fixtures) {
      reg += f.verdict == "regression" ? 1 : 0;
      inc += f.verdict == "inconclusive" ? 1 : 0;
      failed += f.verdict == "failed" ? 1 : 0;
    }
    out << fmt::format("| {} | {} | {} | {} | {} | {}{} | {} | {} | {} | {} |\n", markdown_cell(q.node),
                       markdown_cell(q.label), markdown_cell(text_or_unknown(q.gpu_name)),
                       markdown_cell(text_or_unknown(q.gpu_uuid)), markdown_cell(text_or_unknown(q.gpu_pci_bus_id)),
                       q.result, q.warning.empty() ? "" : " (mismatch allowed)", reg, inc, failed,
                       q.validation_passed ? "passed" : "FAILED");
  }
  out << "\n## Fixtures across the fleet\n\nDelta: each qualification's median against the baseline (qualify.json "
         "`delta_pct`); worst: the qualification with the largest delta.\n\n"
         "| fixture | worst verdict | regression | inconclusive | failed | unchanged | improvement | delta min | "
         "median "
         "| max | worst |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n";
  for (const FleetFixture& x : r.fixtures) {
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(x.key),
                       x.worst_verdict, x.regression, x.inconclusive, x.failed, x.unchanged, x.improvement,
                       pct_text(x.min_delta_pct), pct_text(x.median_delta_pct), pct_text(x.max_delta_pct),
                       markdown_cell(x.worst_label));
  }
  out << "\nA node's result is the worst of its qualifications (failed > regression > inconclusive > pass); each "
         "qualification's own report (qualify.md beside its qualify.json) has the evidence.\n";
}

void write_fleet_junit(const FleetReport& r, std::ostream& out) {
  std::vector<JUnitSuite> suites;
  for (const NodeVerdict& n : r.nodes) {
    JUnitSuite s;
    s.name = "node." + n.node;
    s.properties = {{"node", n.node}, {"result", n.result}, {"suite", r.suite}};
    for (std::size_t i : n.entries) {
      const QualifySummary& q = r.entries[i];
      s.properties.push_back({"gpu " + q.label, fmt::format("{} {} {}", q.gpu_name, text_or_unknown(q.gpu_uuid),
                                                            text_or_unknown(q.gpu_pci_bus_id))});
      const std::string cls = n.node + "." + q.label;
      for (const QualifySummary::Fixture& f : q.fixtures) {
        JUnitCase c;
        c.classname = cls;
        c.name = f.key;
        const std::string line = fmt::format("{}: delta {}: {}", f.verdict, pct_text(f.delta_pct), f.reason);
        if (f.verdict == "regression") {
          c.kind = JUnitCase::Kind::Failure;
          c.type = "regression";
          c.message = line;
        } else if (f.verdict == "failed") {
          c.kind = JUnitCase::Kind::Error;
          c.type = "failed";
          c.message = line;
        } else if (f.verdict == "inconclusive") {
          c.kind = JUnitCase::Kind::Skipped;
          c.message = line;
        } else {
          c.out = line;
        }
        if (!q.warning.empty()) c.out += (c.out.empty() ? "" : "\n") + std::string("WARNING: ") + q.warning;
        s.cases.push_back(std::move(c));
      }
      JUnitCase v;
      v.classname = cls;
      v.name = "validation";
      if (!q.validation_passed) {
        v.kind = JUnitCase::Kind::Failure;
        v.type = "validation";
        v.message = "a run folder failed validation: " + q.file.parent_path().string();
      }
      s.cases.push_back(std::move(v));
    }
    suites.push_back(std::move(s));
  }
  write_junit(out, "crossbench fleet qualification " + r.suite, suites);
}

void write_fleet_json(const FleetReport& r, std::ostream& out) {
  json doc;
  doc["crossbench"] = {{"format", "qualify-aggregate"}, {"version", 1}, {"created_utc", r.created_utc}};
  doc["suite"] = r.suite;
  doc["result"] = r.result;
  doc["exit_code"] = r.exit_code;
  json nodes = json::array();
  for (const NodeVerdict& n : r.nodes) {
    json labels = json::array();
    for (std::size_t i : n.entries) labels.push_back(r.entries[i].label);
    nodes.push_back({{"node", n.node}, {"result", n.result}, {"exit_code", n.exit_code}, {"qualifications", labels}});
  }
  doc["nodes"] = nodes;
  json entries = json::array();
  for (const QualifySummary& q : r.entries) {
    json counts = json::object();
    for (const char* v : kVerdicts) counts[v] = 0;
    for (const auto& f : q.fixtures) counts[f.verdict] = counts[f.verdict].get<int>() + 1;
    entries.push_back({{"label", q.label},
                       {"node", q.node},
                       {"file", q.file.string()},
                       {"created_utc", q.created_utc},
                       {"result", q.result},
                       {"exit_code", q.exit_code},
                       {"gpu_name", q.gpu_name},
                       {"gpu_uuid", q.gpu_uuid},
                       {"gpu_pci_bus_id", q.gpu_pci_bus_id},
                       {"driver_version", q.driver_version},
                       {"validation_passed", q.validation_passed},
                       {"warning", q.warning.empty() ? json(nullptr) : json(q.warning)},
                       {"counts", counts}});
  }
  doc["qualifications"] = entries;
  json fixtures = json::array();
  for (const FleetFixture& x : r.fixtures) {
    fixtures.push_back({{"key", x.key},
                        {"worst_verdict", x.worst_verdict},
                        {"worst", x.worst_label},
                        {"counts",
                         {{"unchanged", x.unchanged},
                          {"improvement", x.improvement},
                          {"regression", x.regression},
                          {"inconclusive", x.inconclusive},
                          {"failed", x.failed},
                          {"recorded", x.recorded}}},
                        {"delta_pct",
                         {{"min", num_or_null(x.min_delta_pct)},
                          {"median", num_or_null(x.median_delta_pct)},
                          {"max", num_or_null(x.max_delta_pct)}}}});
  }
  doc["fixtures"] = fixtures;
  out << doc.dump(1) << "\n";
}

void write_fleet_reports(const FleetReport& r, const fs::path& dir) {
  write_file_atomic(dir / "aggregate.md", [&](std::ostream& s) { write_fleet_markdown(r, s); });
  write_file_atomic(dir / "aggregate.xml", [&](std::ostream& s) { write_fleet_junit(r, s); });
  write_file_atomic(dir / "aggregate.json", [&](std::ostream& s) { write_fleet_json(r, s); });
}

int qualify_aggregate_command(const std::vector<fs::path>& paths, const fs::path& out, std::ostream& log) {
  check_run_dir(out);
  const FleetReport r = aggregate_qualifications(collect_qualifications(paths), utc_time("%Y-%m-%dT%H:%M:%SZ"));
  create_run_dir(out);
  RunDirClaim claim(out);
  write_fleet_reports(r, out);
  claim.keep();
  release_run_dir(out);
  log << fmt::format("fleet qualification of suite {}: {} qualification(s) on {} node(s)\n", r.suite, r.entries.size(),
                     r.nodes.size());
  for (const NodeVerdict& n : r.nodes) log << fmt::format("  {:<14} {}\n", n.result, n.node);
  log << "result: " << r.result << " (exit " << r.exit_code << "); reports: " << (out / "aggregate.md").string() << ", "
      << (out / "aggregate.xml").string() << ", " << (out / "aggregate.json").string() << "\n";
  return r.exit_code;
}

}  // namespace xb
