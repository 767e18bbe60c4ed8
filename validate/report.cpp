// The validation report (validate/validator.h): check statuses and counts, and its writers:
// validation.json, the printed summary and the markdown section.
#include "validate/validator.h"

#include <algorithm>
#include <ctime>
#include <stdexcept>

#include "profiler/atomic_file.h"

namespace xb {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// ---------------------------------------------------------------------------------------------
// Status, report

const char* to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::Passed: return "passed";
    case CheckStatus::Failed: return "failed";
    case CheckStatus::NotRun: return "not_run";
    case CheckStatus::Noisy: return "noisy";
  }
  return "unknown";
}

CheckStatus check_status_from_string(const std::string& name) {
  if (name == "passed") return CheckStatus::Passed;
  if (name == "failed") return CheckStatus::Failed;
  if (name == "not_run") return CheckStatus::NotRun;
  if (name == "noisy") return CheckStatus::Noisy;
  throw std::invalid_argument("unknown check status: " + name);
}

const std::vector<std::string>& all_checks() {
  static const std::vector<std::string> names = {
      checks::kKernelStats,      checks::kTableRows,          checks::kTableTotals,    checks::kAnnotationSpan,
      checks::kAttribution,      checks::kFlows,              checks::kNoDroppedRecords, checks::kDurationsPositive,
      checks::kStreamOverlap,    checks::kLaunchBeforeKernel, checks::kRecordingWindow, checks::kLaneOrder,
      checks::kEventVsCupti,     checks::kVerified};
  return names;
}

bool ValidationReport::passed() const {
  return std::none_of(checks.begin(), checks.end(),
                      [](const CheckResult& r) { return r.status == CheckStatus::Failed; });
}

CheckCounts ValidationReport::counts() const {
  CheckCounts c;
  for (const auto& r : checks) {
    switch (r.status) {
      case CheckStatus::Passed: ++c.passed; break;
      case CheckStatus::Failed: ++c.failed; break;
      case CheckStatus::NotRun: ++c.not_run; break;
      case CheckStatus::Noisy: ++c.noisy; break;
    }
  }
  return c;
}

std::vector<const CheckResult*> ValidationReport::results_of(const std::string& check) const {
  std::vector<const CheckResult*> out;
  for (const auto& r : checks)
    if (r.check == check) out.push_back(&r);
  return out;
}

CheckStatus ValidationReport::status_of(const std::string& check) const {
  bool any_pass = false, any_noisy = false;
  for (const auto& r : checks) {
    if (r.check != check) continue;
    if (r.status == CheckStatus::Failed) return CheckStatus::Failed;
    if (r.status == CheckStatus::Passed) any_pass = true;
    if (r.status == CheckStatus::Noisy) any_noisy = true;
  }
  return any_noisy ? CheckStatus::Noisy : any_pass ? CheckStatus::Passed : CheckStatus::NotRun;
}

namespace {

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Writers

json report_json(const ValidationReport& report) {
  json meta = report.source_meta.is_object() ? report.source_meta : json::object();
  meta["format"] = "validation";
  meta["version"] = 1;
  meta["created_utc"] = now_utc();
  if (!meta.contains("dropped_records")) meta["dropped_records"] = nullptr;
  const CheckCounts c = report.counts();
  json checks_j = json::array();
  for (const auto& r : report.checks) {
    checks_j.push_back({{"check", r.check},
                        {"status", to_string(r.status)},
                        {"subject", r.subject},
                        {"expected", r.expected},
                        {"found", r.found},
                        {"message", r.message}});
    if (!r.cause.empty()) checks_j.back()["cause"] = r.cause;
  }
  json tol = json::object();
  for (const auto& [k, v] : report.tolerances) tol[k] = v;
  json verdicts = json::object();
  for (const auto& name : all_checks()) verdicts[name] = to_string(report.status_of(name));
  json doc = json::object();
  doc["crossbench"] = std::move(meta);
  doc["passed"] = report.passed();
  doc["run_dir"] = report.run_dir;
  doc["inputs"] = report.inputs.is_null() ? json::object() : report.inputs;
  doc["tolerances"] = std::move(tol);
  doc["summary"] = {{"passed", c.passed}, {"failed", c.failed}, {"not_run", c.not_run}, {"noisy", c.noisy}};
  doc["verdicts"] = std::move(verdicts);
  doc["figures"] = report.figures.is_null() ? json::object() : report.figures;
  doc["checks"] = std::move(checks_j);
  return doc;
}

void write_report_json(const ValidationReport& report, std::ostream& out) {
  out << report_json(report).dump(1, ' ', false, json::error_handler_t::replace) << '\n';
}

fs::path write_report_json(const ValidationReport& report, const fs::path& dir_or_file) {
  std::error_code ec;
  fs::path path = fs::is_directory(dir_or_file, ec) ? dir_or_file / "validation.json" : dir_or_file;
  write_file_atomic(path, [&](std::ostream& out) { write_report_json(report, out); });
  return path;
}

void print_summary(const ValidationReport& report, std::ostream& out) {
  std::string what = report.run_dir;
  if (what.empty() && report.inputs.is_object() && report.inputs.contains("traces")) {
    for (const auto& t : report.inputs["traces"]) what += (what.empty() ? "" : ", ") + t.get<std::string>();
    if (report.inputs["table"].is_string()) what += ", " + report.inputs["table"].get<std::string>();
    if (report.inputs["events"].is_string()) what += ", " + report.inputs["events"].get<std::string>();
  }
  out << "validation of " << (what.empty() ? "(run)" : what) << ": " << (report.passed() ? "PASSED" : "FAILED") << '\n';
  std::vector<std::string> order;
  for (const auto& r : report.checks)
    if (std::find(order.begin(), order.end(), r.check) == order.end()) order.push_back(r.check);
  std::string passed_list;
  for (const auto& name : order)
    if (report.status_of(name) == CheckStatus::Passed) passed_list += (passed_list.empty() ? "" : ", ") + name;
  if (!passed_list.empty()) out << "  passed: " << passed_list << '\n';
  for (const auto& r : report.checks) {
    if (r.status == CheckStatus::Passed) continue;
    out << "  " << (r.status == CheckStatus::Failed ? "FAILED " : r.status == CheckStatus::Noisy ? "NOISY " : "NOT RUN ") << r.check;
    if (!r.subject.empty()) out << " [" << r.subject << "]";
    if (!r.expected.empty() || !r.found.empty())
      out << ": expected " << r.expected << ", found " << r.found;
    else if (!r.message.empty())
      out << ": " << r.message;
    out << '\n';
  }
  bool event_ran = false;
  for (const auto& r : report.checks) {
    if (r.check != checks::kEventVsCupti || r.status == CheckStatus::NotRun) continue;
    event_ran = true;
    if (r.status == CheckStatus::Passed) out << "  event_vs_cupti [" << r.subject << "]: " << r.message << '\n';
  }
  if (auto t = report.tolerances.find(checks::kEventVsCupti); event_ran && t != report.tolerances.end())
    out << "  tolerance event_vs_cupti: " << t->second << '\n';
  if (report.figures.is_object() && report.figures.contains(checks::kLaunchBeforeKernel)) {
    const json& f = report.figures[checks::kLaunchBeforeKernel]["launch_latency"];
    if (f.is_object() && f.contains("count"))
      out << "  launch latency (launch to kernel start, including the blocking kernel's hold; "
          << report.figures[checks::kLaunchBeforeKernel]["file"].get<std::string>() << ", "
          << f["count"].get<std::size_t>() << " activities): min " << f["min_ns"].get<std::int64_t>() << " ns, median "
          << f["p50_ns"].get<std::int64_t>() << " ns, p99 " << f["p99_ns"].get<std::int64_t>() << " ns, max "
          << f["max_ns"].get<std::int64_t>() << " ns\n";
  }
  const CheckCounts c = report.counts();
  out << "results: " << c.passed << " passed, " << c.failed << " failed, " << c.not_run << " not run";
  if (c.noisy > 0) out << ", " << c.noisy << " noisy";
  out << '\n';
}

void write_markdown(const ValidationReport& report, const std::string& title, std::ostream& out) {
  auto cell = [](std::string s) {
    for (auto& ch : s)
      if (ch == '|') ch = '/';
    return s;
  };
  out << "## " << title << "\n\n";
  out << "Verdict: **" << (report.passed() ? "passed" : "FAILED") << "**";
  const CheckCounts c = report.counts();
  out << " (" << c.passed << " results passed, " << c.failed << " failed, " << c.not_run << " not run";
  if (c.noisy > 0) out << ", " << c.noisy << " noisy";
  out << ")\n\n";
  out << "| check | verdict | reason |\n| --- | --- | --- |\n";
  for (const auto& name : all_checks()) {
    const CheckStatus s = report.status_of(name);
    const auto results = report.results_of(name);
    const bool partly = s == CheckStatus::Passed && std::any_of(results.begin(), results.end(), [](const CheckResult* r) {
      return r->status == CheckStatus::NotRun;
    });
    std::string reason;
    auto add = [&](const CheckResult* r, const char* prefix) {
      std::string line = prefix;
      if (!r->subject.empty()) line += "[" + r->subject + "] ";
      if (r->status == CheckStatus::Failed && (!r->expected.empty() || !r->found.empty()))
        line += "expected " + r->expected + ", found " + r->found + (r->message.empty() ? "" : " — " + r->message);
      else
        line += r->message;
      reason += (reason.empty() ? "" : "<br>") + cell(line);
    };
    const auto is_note = [](const CheckResult* r) { return r->status == CheckStatus::Passed && r->message.rfind("note: ", 0) == 0; };
    // Failures first, then notes, then what did not run; passes only when nothing else is said.
    for (const auto* r : results)
      if (r->status == CheckStatus::Failed) add(r, "");
    for (const auto* r : results)
      if (r->status == CheckStatus::Noisy) add(r, "noisy: ");
    for (const auto* r : results)
      if (is_note(r)) add(r, "");
    if (s == CheckStatus::Passed)
      for (const auto* r : results)
        if (r->status == CheckStatus::Passed && !is_note(r)) add(r, "");
    for (const auto* r : results)
      if (r->status == CheckStatus::NotRun) add(r, s == CheckStatus::NotRun ? "" : "not run: ");
    const char* verdict = s == CheckStatus::Failed ? "**FAILED**" : s == CheckStatus::NotRun ? "not run" : s == CheckStatus::Noisy ? "noisy (not passed)" : partly ? "passed (part not run)" : "passed";
    out << "| " << name << " | " << verdict << " | " << reason << " |\n";
  }
  out << '\n';
}

}  // namespace xb
