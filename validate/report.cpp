// The validation report (validate/validator.h): check statuses and counts, and its writers:
// validation.json, the printed summary and the markdown section.
#include "validate/validator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "validate/checks.h"

namespace xb {

namespace fs = std::filesystem;

bool causes::files_agree_despite(const std::string& cause) {
  return cause == causes::kOverheadDoubleCount || cause == causes::kAnnotationSpan;
}
using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// ---------------------------------------------------------------------------------------------
// Status, report

const char* to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::Passed:
      return "passed";
    case CheckStatus::Failed:
      return "failed";
    case CheckStatus::NotRun:
      return "not_run";
    case CheckStatus::NotClaimed:
      return "not_claimed";
    case CheckStatus::NotJudged:
      return "not_judged";
  }
  return "unknown";
}

CheckStatus check_status_from_string(const std::string& name) {
  if (name == "passed") return CheckStatus::Passed;
  if (name == "failed") return CheckStatus::Failed;
  if (name == "not_run") return CheckStatus::NotRun;
  if (name == "not_claimed" || name == "noisy") return CheckStatus::NotClaimed;
  if (name == "not_judged") return CheckStatus::NotJudged;
  throw std::invalid_argument("unknown check status: " + name);
}

const std::vector<std::string>& all_checks() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const vd::CheckDef& c : vd::check_list()) out.emplace_back(c.name);
    return out;
  }();
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
      case CheckStatus::Passed:
        ++c.passed;
        break;
      case CheckStatus::Failed:
        ++c.failed;
        break;
      case CheckStatus::NotRun:
        ++c.not_run;
        break;
      case CheckStatus::NotClaimed:
        ++c.not_claimed;
        break;
      case CheckStatus::NotJudged:
        ++c.not_judged;
        break;
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
  bool any_pass = false, any_not_claimed = false;
  for (const auto& r : checks) {
    if (r.check != check) continue;
    if (r.status == CheckStatus::Failed) return CheckStatus::Failed;
    if (r.status == CheckStatus::Passed) any_pass = true;
    if (r.status == CheckStatus::NotClaimed) any_not_claimed = true;
  }
  return any_not_claimed ? CheckStatus::NotClaimed : any_pass ? CheckStatus::Passed : CheckStatus::NotRun;
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
// The printed summary (issue 16 item 4): a one-line verdict first, findings grouped by cause with
// counts, numbers rounded to what the table prints, lines of at most kMaxLine characters. The
// full texts stay in validation.json and --markdown.

namespace {

constexpr std::size_t kMaxLine = 160;
constexpr std::size_t kExamplesPerGroup = 5;

/// `s` cut to `width` characters ("..." at the end when cut; UTF-8 sequences kept whole).
std::string fit(std::string s, std::size_t width = kMaxLine) {
  if (s.size() <= width) return s;
  std::size_t cut = width - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

/// A duration in ns as the table prints it: microseconds with 3 decimals.
std::string us3(double ns) { return fmt::format("{:.3f} us", ns / 1000.0); }

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Rounds every decimal number of a text for display: before " ns" to an integer, before "%" to
/// 2 decimals, others with more than 3 decimals (or an exponent) to 3 decimals. Numbers inside names
/// (preceded by a letter, digit, '_' or '.', or followed by '.' and a digit) are left alone.
std::string round_numbers(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const bool starts =
        std::isdigit(static_cast<unsigned char>(s[i])) && (i == 0 || (!word_char(s[i - 1]) && s[i - 1] != '.'));
    if (!starts) {
      out += s[i++];
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    std::size_t decimals = 0;
    if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
      std::size_t k = j + 1;
      while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
      decimals = k - j - 1;
      j = k;
    }
    bool exponent = false;
    if (j + 1 < s.size() && (s[j] == 'e' || s[j] == 'E')) {
      std::size_t k = j + 1;
      if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
      if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
        while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
        exponent = true;
        j = k;
      }
    }
    const bool inside_name =
        j < s.size() &&
        (word_char(s[j]) || (s[j] == '.' && j + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[j + 1]))));
    const std::string number = s.substr(i, j - i);
    std::size_t k = j;
    while (k < s.size() && s[k] == ' ') ++k;
    const bool ns = s.compare(k, 2, "ns") == 0 && (k + 2 == s.size() || !word_char(s[k + 2]));
    const bool pct = k < s.size() && s[k] == '%';
    if (inside_name || (!exponent && decimals <= (ns ? 0u : pct ? 2u : 3u))) {
      out += number;
      i = j;
      continue;
    }
    const double v = std::strtod(number.c_str(), nullptr);
    if (ns)
      out += fmt::format("{}", static_cast<long long>(std::llround(v)));
    else if (pct)
      out += fmt::format("{:.2f}", v);
    else
      out += fmt::format("{:.3f}", v);
    i = j;
  }
  return out;
}

/// What the user gave: the run folder, else the input files' names.
std::string inputs_text(const ValidationReport& report) {
  if (!report.run_dir.empty()) return report.run_dir;
  std::string what;
  auto add = [&](const json& j) {
    if (j.is_string()) what += (what.empty() ? "" : ", ") + fs::path(j.get<std::string>()).filename().string();
  };
  if (report.inputs.is_object()) {
    if (report.inputs.contains("traces"))
      for (const auto& t : report.inputs["traces"]) add(t);
    if (report.inputs.contains("table")) add(report.inputs["table"]);
    if (report.inputs.contains("events")) add(report.inputs["events"]);
  }
  return what.empty() ? "(run)" : what;
}

/// Words for a cause (CheckResult::cause), or for a check's failures of no known cause.
std::string cause_label(const std::string& key) {
  static const std::map<std::string, std::string> labels = {
      {causes::kOverheadDoubleCount, "kernels counted twice under overhead events (a PyTorch defect)"},
      {causes::kAnnotationSpan, "annotation GPU span counted as Self CUDA (pytorch#130730)"},
      {causes::kNameWrittenUnknown, "non-ASCII name written \"unknown\" in the trace by Kineto (a PyTorch defect)"},
  };
  const auto it = labels.find(key);
  if (it != labels.end()) return it->second;
  for (const vd::CheckDef& c : vd::check_list())
    if (key == c.name && c.failure_label != nullptr) return c.failure_label;
  return key;
}

/// The table row a subject names ("t.txt line 4" of "t.txt line 4 'aten::mm' (cpu_op)"), or "".
std::string row_of(const std::string& subject) {
  for (const char* word : {" line ", " row "}) {
    const auto at = subject.find(word);
    if (at == std::string::npos || subject.find(' ') < at) continue;
    std::size_t k = at + std::strlen(word), d = k;
    while (d < subject.size() && std::isdigit(static_cast<unsigned char>(subject[d]))) ++d;
    if (d > k) return subject.substr(0, d);
  }
  return "";
}

/// Failures of one cause (or, without a known cause, of one check).
struct Group {
  std::string key;
  std::vector<const CheckResult*> failures;
  std::vector<std::string> checks;  // the checks that reported them, in report order
  std::set<std::string> rows;       // distinct table rows named
  bool all_rows = true;             // every failure names a table row
  /// "3 rows" when every failure is about a table row, else "4 findings".
  std::string count() const {
    if (all_rows && !rows.empty()) return fmt::format("{} row{}", rows.size(), rows.size() == 1 ? "" : "s");
    return fmt::format("{} finding{}", failures.size(), failures.size() == 1 ? "" : "s");
  }
};

/// Failures grouped by cause: the known causes first, then by check, each in report order.
std::vector<Group> group_failures(const ValidationReport& report) {
  std::vector<Group> known, other;
  for (const auto& r : report.checks) {
    if (r.status != CheckStatus::Failed) continue;
    auto& list = r.cause.empty() ? other : known;
    const std::string key = r.cause.empty() ? r.check : r.cause;
    auto g = std::find_if(list.begin(), list.end(), [&](const Group& x) { return x.key == key; });
    if (g == list.end()) g = list.insert(list.end(), Group{key, {}, {}, {}, true});
    g->failures.push_back(&r);
    if (std::find(g->checks.begin(), g->checks.end(), r.check) == g->checks.end()) g->checks.push_back(r.check);
    const std::string row = row_of(r.subject);
    if (row.empty())
      g->all_rows = false;
    else
      g->rows.insert(row);
  }
  known.insert(known.end(), other.begin(), other.end());
  return known;
}

/// The reason of a not-run result, short: its message up to the first ": ", quoted names elided.
std::string not_run_reason(const std::string& message) {
  std::string s = message.substr(0, message.find(": "));
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool opens = s[i] == '\'' && !quoted && (i == 0 || s[i - 1] == ' ');
    const bool closes = s[i] == '\'' && quoted && (i + 1 == s.size() || !word_char(s[i + 1]));
    if (opens) {
      quoted = true;
      out += "'...";
    } else if (closes) {
      quoted = false;
      out += '\'';
    } else if (!quoted) {
      out += s[i];
    }
  }
  return out;
}

/// Findings with a known cause: rows where PyTorch's table follows its own rules and those rules
/// misreport device time (a PyTorch defect), not an inconsistency between the files.
std::size_t pytorch_defects(const ValidationReport& report) {
  return static_cast<std::size_t>(std::count_if(report.checks.begin(), report.checks.end(), [](const CheckResult& r) {
    return r.status == CheckStatus::Failed && !r.cause.empty();
  }));
}

/// "1 result" / "2 results".
std::string plural(std::size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

/// Checks (all_checks()) by their status (status_of).
struct CheckTally {
  std::size_t agree = 0, failed = 0, not_claimed = 0, not_run = 0;
};

CheckTally tally_checks(const ValidationReport& report) {
  CheckTally t;
  for (const auto& name : all_checks()) {
    const CheckStatus st = report.status_of(name);
    ++(st == CheckStatus::Passed       ? t.agree
       : st == CheckStatus::Failed     ? t.failed
       : st == CheckStatus::NotClaimed ? t.not_claimed
                                       : t.not_run);
  }
  return t;
}

}  // namespace

std::string verdict_line(const ValidationReport& report, std::size_t max_chars) {
  const CheckCounts c = report.counts();
  const CheckTally t = tally_checks(report);
  // The causes: failures of no known cause first, then the PyTorch defects, each with its count.
  std::vector<std::string> other, known;
  std::size_t n_other = 0;
  for (const auto& g : group_failures(report)) {
    const std::string full = cause_label(g.key);
    // A defect that leaves the files agreeing makes the verdict PYTORCH DEFECTS; one that makes
    // them disagree (a renamed row) stays among the FAILED findings, named.
    const bool defect = causes::files_agree_despite(g.failures.front()->cause);
    std::string item = full.substr(0, full.find(" (")) + " (" + g.count() + ")";
    if (defect) {
      const auto at = full.find("pytorch#");  // the defect's link, when it has one
      if (at != std::string::npos) item += ", " + full.substr(at, full.find(')', at) - at);
      known.push_back(item);
    } else {
      n_other += g.failures.size();
      other.push_back(item);
    }
  }
  const std::string agree = fmt::format("{} agree{} ({} passed)", plural(t.agree, "check", "checks"),
                                        t.agree == 1 ? "s" : "", plural(c.passed, "result", "results"));
  std::string counts;
  const std::string noisy_why = " (missed the precision target)";  // the console leaves it to its own line
  if (!report.noisy_fixtures.empty())
    counts += ", " + plural(report.noisy_fixtures.size(), "fixture", "fixtures") + " noisy" + noisy_why;
  if (c.not_claimed > 0) counts += ", " + plural(c.not_claimed, "result", "results") + " not claimed";
  if (c.not_judged > 0) counts += ", " + plural(c.not_judged, "result", "results") + " not judged";
  if (c.not_run > 0) counts += ", " + plural(c.not_run, "result", "results") + " not run";
  const std::size_t causes = other.size() + known.size();
  // The line with the first `shown` causes; the rest counted ("and 2 more causes (below)").
  const auto text_with = [&](std::size_t shown) {  // without the counts
    std::string text;
    std::size_t k = 0;
    const auto add = [&](const std::vector<std::string>& list, const char* first_sep) {
      for (std::size_t j = 0; j < list.size() && k < shown; ++j, ++k) text += (j ? "; " : k ? first_sep : "") + list[j];
    };
    if (!other.empty()) {
      text = fmt::format("FAILED: {}: ", plural(n_other, "finding", "findings"));
      add(other, "");
      add(known, "; PyTorch defects: ");
    } else if (!known.empty()) {
      text = "PYTORCH DEFECTS: ";
      add(known, "");
    } else {
      text = "PASSED: " + agree;
    }
    if (shown < causes)
      text += (shown > 0 ? "; and " + plural(causes - shown, "more cause", "more causes")
                         : plural(causes, "cause", "causes")) +
              " (below)";
    if (other.empty() && !known.empty()) text += "; otherwise " + agree;
    return text;
  };
  const std::string inputs = " - " + inputs_text(report);
  const std::string whole = text_with(causes) + counts;
  if (max_chars == 0 || whole.size() + inputs.size() <= max_chars) return whole + inputs;
  if (whole.size() <= max_chars) return whole;
  // The console: the counts without the explanation the noisy fixtures' own line gives, then
  // fewer causes.
  std::string short_counts = counts;
  if (const auto at = short_counts.find(noisy_why); at != std::string::npos) short_counts.erase(at, noisy_why.size());
  for (std::size_t shown = causes + 1; shown-- > 0;) {
    const std::string text = text_with(shown) + short_counts;
    if (text.size() <= max_chars) return text;
  }
  return fit(text_with(0) + short_counts, max_chars);
}

namespace {

/// A finding's example line, "  - SUBJECT: FINDING", within kMaxLine: where it is longer, the
/// longest quoted name of the subject (a kernel's template arguments) is shortened first, so that
/// what was expected and found stays on the line.
std::string example_line(std::string subject, const std::string& finding) {
  const std::string rest = round_numbers(": " + finding);
  std::size_t over = 4 + subject.size() + rest.size();
  if (over > kMaxLine) {
    std::size_t best = std::string::npos, best_len = 0;
    for (std::size_t a = subject.find('\''); a != std::string::npos;) {
      const std::size_t b = subject.find('\'', a + 1);
      if (b == std::string::npos) break;
      if (b - a - 1 > best_len) {
        best = a + 1;
        best_len = b - a - 1;
      }
      a = subject.find('\'', b + 1);
    }
    over -= kMaxLine;
    constexpr std::size_t kMinName = 24;
    if (best != std::string::npos && best_len > kMinName) {
      std::size_t keep = best_len > over + 3 + kMinName ? best_len - over - 3 : kMinName;
      while (keep > 0 && (static_cast<unsigned char>(subject[best + keep]) & 0xC0) == 0x80) --keep;
      subject.replace(best + keep, best_len - keep, "...");
    }
  }
  return "  - " + subject + rest;
}

/// The summary's last two lines: the checks by status, then their results by status, so that the
/// verdict's "N checks agree (M results passed)" and its counts read against the whole.
std::vector<std::string> counts_lines(const ValidationReport& report) {
  const CheckCounts c = report.counts();
  const CheckTally t = tally_checks(report);
  std::string checks = fmt::format("- checks: {}; {} agree", all_checks().size(), t.agree);
  if (t.failed > 0) checks += fmt::format(", {} failed", t.failed);
  if (t.not_claimed > 0) checks += fmt::format(", {} not claimed", t.not_claimed);
  checks += fmt::format(", {} not run (each gives a result per subject: kernel, row, fixture, trace)", t.not_run);
  std::size_t partial = 0;  // not-run results of checks that ran
  for (const auto& r : report.checks)
    if (r.status == CheckStatus::NotRun && report.status_of(r.check) != CheckStatus::NotRun) ++partial;
  const std::size_t total = c.passed + c.failed + c.not_run + c.not_claimed + c.not_judged;
  std::string results = fmt::format("- results: {}; {} passed, {} failed", total, c.passed, c.failed);
  if (c.not_claimed > 0) results += fmt::format(", {} not claimed", c.not_claimed);
  if (c.not_judged > 0) results += fmt::format(", {} not judged", c.not_judged);
  results += fmt::format(", {} not run", c.not_run);
  if (partial > 0) results += fmt::format(" ({} of them parts of checks that ran)", partial);
  return {checks, results + "; every result in full: the JSON report, --markdown"};
}

json cause_counts(const ValidationReport& report) {
  json out = json::object();
  for (const auto& g : group_failures(report)) {
    json checks_j = json::array();
    for (const auto& ch : g.checks) checks_j.push_back(ch);
    out[g.failures.front()->cause.empty() ? "check:" + g.key : g.key] = {
        {"label", cause_label(g.key)}, {"findings", g.failures.size()}, {"rows", g.rows.size()}, {"checks", checks_j}};
  }
  return out;
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
  doc["verdict"] = verdict_line(report);
  doc["causes"] = cause_counts(report);
  doc["run_dir"] = report.run_dir;
  doc["inputs"] = report.inputs.is_null() ? json::object() : report.inputs;
  doc["tolerances"] = std::move(tol);
  doc["summary"] = {{"passed", c.passed},
                    {"failed", c.failed},
                    {"not_run", c.not_run},
                    {"not_claimed", c.not_claimed},
                    {"not_judged", c.not_judged},
                    {"pytorch_defects", pytorch_defects(report)},
                    {"checks_agree", tally_checks(report).agree},
                    {"noisy_fixtures", report.noisy_fixtures.size()}};
  doc["noisy_fixtures"] = report.noisy_fixtures;
  doc["verdicts"] = std::move(verdicts);
  doc["figures"] = report.figures.is_null() ? json::object() : report.figures;
  doc["checks"] = std::move(checks_j);
  return doc;
}

void write_report_json(const ValidationReport& report, std::ostream& out) {
  out << report_json(report).dump(1, ' ', false, json::error_handler_t::replace) << '\n';
}

fs::path report_json_path(const fs::path& dir_or_file) {
  std::error_code ec;
  return fs::is_directory(dir_or_file, ec) ? dir_or_file / "validation.json" : dir_or_file;
}

fs::path write_report_json(const ValidationReport& report, const fs::path& dir_or_file) {
  const fs::path path = report_json_path(dir_or_file);
  write_file_atomic(path, [&](std::ostream& out) { write_report_json(report, out); });
  return path;
}

namespace {

/// print_summary's console output, one method per section.
struct Summary {
  const ValidationReport& report;
  std::ostream& out;

  void line(const std::string& s) const { out << fit(round_numbers(s)) << '\n'; }

  // `head` then the ", "-separated `items`, wrapped at whole items onto lines indented by two.
  void wrapped(std::string cur, const std::string& items) const {
    std::size_t start = 0;
    while (start < items.size()) {
      const std::size_t end = items.find(", ", start);
      const std::string item = items.substr(start, end == std::string::npos ? std::string::npos : end - start);
      const bool last = end == std::string::npos;
      if (cur.size() > 2 && cur.size() + item.size() + 1 > kMaxLine) {
        while (!cur.empty() && cur.back() == ' ') cur.pop_back();
        line(cur);
        cur = "  ";
      }
      cur += item + (last ? "" : ", ");
      start = last ? items.size() : end + 2;
    }
    line(cur);
  }

  // Findings, grouped by cause, a few examples each.
  void findings() const {
    for (const auto& g : group_failures(report)) {
      std::string checks_text;
      for (const auto& ch : g.checks) checks_text += (checks_text.empty() ? "" : ", ") + ch;
      std::string head = "- " + cause_label(g.key) + ": " + g.count();
      if (!g.all_rows || g.rows.size() != g.failures.size())
        head += g.all_rows ? fmt::format(", {} findings", g.failures.size()) : "";
      line(head + " [" + checks_text + "]");
      std::size_t shown = 0;
      for (const auto* r : g.failures) {
        if (shown++ == kExamplesPerGroup) {
          line(fmt::format("  - ... and {} more (all of them in the JSON report)",
                           g.failures.size() - kExamplesPerGroup));
          break;
        }
        const std::string finding =
            !r->expected.empty() || !r->found.empty() ? "expected " + r->expected + ", found " + r->found : r->message;
        line(example_line(r->subject.empty() ? r->check : r->subject, finding));
      }
    }
  }

  void unclaimed_and_noisy() const {
    // Results not claimed: ran, within tolerance, but on unstable evidence (judge_pairs).
    std::string unclaimed;
    for (const auto& r : report.checks)
      if (r.status == CheckStatus::NotClaimed)
        unclaimed += (unclaimed.empty() ? "" : ", ") + (r.subject.empty() ? r.check : r.subject);
    if (!unclaimed.empty())
      wrapped("- not claimed (the paired event - CUPTI differences are unstable; validation.json gives the interval): ",
              unclaimed);
    // Noisy fixtures: their medians missed the precision target (bench's console column `noisy`).
    std::string noisy;
    for (const auto& f : report.noisy_fixtures) noisy += (noisy.empty() ? "" : ", ") + f;
    if (!noisy.empty())
      wrapped("- noisy (missed the precision target: the median is less precise than asked, not wrong): ", noisy);
  }

  // Results of one status per check, grouped by their reason (not_run_reason: the text up to the
  // first ": ", quoted names elided), each with its count.
  void by_reason(CheckStatus status, const char* prefix) const {
    for (const auto& name : all_checks()) {
      std::vector<std::pair<std::string, std::size_t>> reasons;
      for (const auto& r : report.checks) {
        if (r.check != name || r.status != status) continue;
        const std::string why =
            not_run_reason(r.message.rfind(prefix, 0) == 0 ? r.message.substr(std::strlen(prefix)) : r.message);
        auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& p) { return p.first == why; });
        if (it == reasons.end())
          reasons.emplace_back(why, 1);
        else
          ++it->second;
      }
      if (reasons.empty()) continue;
      std::string s = "  - " + name + ": ";
      for (std::size_t i = 0; i < reasons.size(); ++i)
        s += (i ? "; " : "") + reasons[i].first +
             (reasons[i].second > 1 ? fmt::format(" ({}x)", reasons[i].second) : "");
      line(s);
    }
  }

  // Checks that passed; not-run results by check and reason.
  void passed_and_not_run() const {
    std::string passed_list;
    std::size_t n_passed = 0;
    for (const auto& name : all_checks())
      if (report.status_of(name) == CheckStatus::Passed) {
        ++n_passed;
        passed_list += (passed_list.empty() ? "" : ", ") + name;
      }
    if (n_passed > 0) wrapped(fmt::format("- passed ({}): ", n_passed), passed_list);
    const CheckCounts c = report.counts();
    if (c.not_run > 0) {
      line(fmt::format("- not run ({} result{}; never counted as passed):", c.not_run, c.not_run == 1 ? "" : "s"));
      by_reason(CheckStatus::NotRun, "");
    }
    if (c.not_judged > 0) {
      line(fmt::format(
          "- not judged ({} result{}: constructs the model does not cover; never counted as passed or failed):",
          c.not_judged, c.not_judged == 1 ? "" : "s"));
      by_reason(CheckStatus::NotJudged, "not judged: ");
    }
  }

  // Figures: event vs CUPTI per fixture, launch latency.
  void event_vs_cupti() const {
    if (report.figures.is_object() && report.figures.contains(checks::kEventVsCupti) &&
        report.figures[checks::kEventVsCupti].is_array() && !report.figures[checks::kEventVsCupti].empty()) {
      line("- event_vs_cupti, per call, median over the recorded steps (tolerance: the JSON report):");
      for (const auto& f : report.figures[checks::kEventVsCupti]) {
        const std::string name = f.value("fixture", std::string());
        CheckStatus st = CheckStatus::Passed;
        for (const auto* r : report.results_of(checks::kEventVsCupti))
          if (r->subject == name && r->status != CheckStatus::Passed) st = r->status;
        const double ev = f.value("event_median_ns", 0.0), abs_d = f.value("abs_diff_median_ns", 0.0);
        line(fmt::format("  - {}{}: cudaEvent {}, CUPTI span {}, |event - CUPTI| {} ({:.2f}%), tolerance {}: {}", name,
                         f.value("mode", std::string()).empty() ? "" : " (" + f.value("mode", std::string()) + ")",
                         us3(ev), us3(f.value("cupti_median_ns", 0.0)), us3(abs_d), ev > 0 ? 100.0 * abs_d / ev : 0.0,
                         us3(f.value("tolerance_ns", 0.0)),
                         st == CheckStatus::Failed       ? "FAILED"
                         : st == CheckStatus::NotClaimed ? "not claimed"
                                                         : "passed"));
      }
    } else if (report.figures.is_object() && report.figures.contains(checks::kEventVsCupti) &&
               report.figures[checks::kEventVsCupti].is_object()) {
      const json& f = report.figures[checks::kEventVsCupti];
      std::string s = "- event times for reference";
      if (f.contains("workload") && f["workload"].is_string()) s += " (" + f["workload"].get<std::string>() + ")";
      s += ":";
      for (const auto& [k, v] : f.items())
        if (v.is_number() && k.size() > 3 && k.compare(k.size() - 3, 3, "_ns") == 0)
          s += " " + k.substr(0, k.size() - 3) + " " + us3(v.get<double>()) + ",";
      if (s.back() == ',') s.pop_back();
      line(s);
    }
  }

  void launch_latency() const {
    if (report.figures.is_object() && report.figures.contains(checks::kLaunchBeforeKernel)) {
      const json& fig = report.figures[checks::kLaunchBeforeKernel];
      const json& f = fig.contains("launch_latency") ? fig["launch_latency"] : json();
      if (f.is_object() && f.contains("count"))
        line(fmt::format(
            "- launch latency, launch to kernel start ({}, {} activities): min {}, median {}, p99 {}, max {}",
            fig.value("file", std::string()), f["count"].get<std::size_t>(), us3(f.value("min_ns", 0.0)),
            us3(f.value("p50_ns", 0.0)), us3(f.value("p99_ns", 0.0)), us3(f.value("max_ns", 0.0))));
    }
  }
};

}  // namespace

void print_summary(const ValidationReport& report, std::ostream& out) {
  const Summary s{report, out};
  s.line(verdict_line(report, kMaxLine));
  s.findings();
  s.unclaimed_and_noisy();
  s.passed_and_not_run();
  s.event_vs_cupti();
  s.launch_latency();
  for (const std::string& l : counts_lines(report)) s.line(l);
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
  if (c.not_claimed > 0) out << ", " << c.not_claimed << " not claimed";
  if (c.not_judged > 0) out << ", " << c.not_judged << " not judged";
  out << ")\n\n`" << verdict_line(report) << "`\n\n";
  out << "| check | verdict | reason |\n| --- | --- | --- |\n";
  for (const auto& name : all_checks()) {
    const CheckStatus s = report.status_of(name);
    const auto results = report.results_of(name);
    const bool partly =
        s == CheckStatus::Passed && std::any_of(results.begin(), results.end(),
                                                [](const CheckResult* r) { return r->status == CheckStatus::NotRun; });
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
    const auto is_note = [](const CheckResult* r) {
      return r->status == CheckStatus::Passed && r->message.rfind("note: ", 0) == 0;
    };
    // Failures first, then notes, then what did not run; passes only when nothing else is said.
    for (const auto* r : results)
      if (r->status == CheckStatus::Failed) add(r, "");
    for (const auto* r : results)
      if (r->status == CheckStatus::NotClaimed) add(r, "not claimed: ");
    for (const auto* r : results)
      if (is_note(r)) add(r, "");
    if (s == CheckStatus::Passed)
      for (const auto* r : results)
        if (r->status == CheckStatus::Passed && !is_note(r)) add(r, "");
    for (const auto* r : results)
      if (r->status == CheckStatus::NotRun) add(r, s == CheckStatus::NotRun ? "" : "not run: ");
    const char* verdict = s == CheckStatus::Failed       ? "**FAILED**"
                          : s == CheckStatus::NotRun     ? "not run"
                          : s == CheckStatus::NotClaimed ? "not claimed (not passed)"
                          : partly                       ? "passed (part not run)"
                                                         : "passed";
    out << "| " << name << " | " << verdict << " | " << reason << " |\n";
  }
  out << '\n';
}

}  // namespace xb
