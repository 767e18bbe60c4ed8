// What `validate` and bench print (print_summary; issue 16 item 4): a one-line verdict first,
// findings grouped by cause with counts, numbers rounded to what the table prints (at most 3
// decimals; ns as integers), no line over 160 characters. On a crossbench run folder replayed from
// the recorded H200 session (clean, and with failures), on PyTorch's exports of
// tests/data/torch-h200-corpus and tests/data/torch-h200, and in summary.md.
#include <unistd.h>
#include <algorithm>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/core/run_dir.h"
#include "validate/validator.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kSession = fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small-2026-11-29" / "raw_session.json";
const fs::path kCorpus = fs::path(XB_TEST_DATA_DIR) / "torch-h200-corpus";
const fs::path kTorch = fs::path(XB_TEST_DATA_DIR) / "torch-h200";

std::string printed(const xb::ValidationReport& r) {
  std::ostringstream s;
  xb::print_summary(r, s);
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// The rules every printed summary follows.
void expect_readable(const std::string& text, const xb::ValidationReport& r) {
  const auto lines = lines_of(text);
  ASSERT_FALSE(lines.empty());
  // The verdict first, and the same in the JSON report.
  // PASSED, PYTORCH DEFECTS (every failure has a known cause: PyTorch's rules misreport), FAILED.
  const bool defects_only = !r.passed() && std::all_of(r.checks.begin(), r.checks.end(), [](const xb::CheckResult& c) {
    return c.status != xb::CheckStatus::Failed || !c.cause.empty();
  });
  EXPECT_EQ(lines[0].rfind(r.passed() ? "PASSED: " : defects_only ? "PYTORCH DEFECTS: " : "FAILED: ", 0), 0u) << text;
  // The JSON report holds the whole verdict; the console fits it into 160 characters, dropping
  // the inputs, then causes, never the outcome or the counts.
  const std::string whole = xb::verdict_line(r);
  EXPECT_EQ(xb::report_json(r)["verdict"].get<std::string>(), whole) << text;
  EXPECT_EQ(lines[0], xb::verdict_line(r, 160)) << text;
  if (whole.size() <= 160) {
    EXPECT_EQ(lines[0], whole);
  }
  if (lines[0] != whole) {  // fitted: the inputs dropped, the counts close the line as they close the whole
    const std::string head = whole.substr(0, whole.rfind(" - "));
    const auto last_count = lines[0].rfind(", ");
    ASSERT_NE(last_count, std::string::npos) << text;
    EXPECT_EQ(head.substr(head.size() - (lines[0].size() - last_count)), lines[0].substr(last_count)) << text;
  }
  // The verdict's "N checks agree (M results passed)" reads against the last two lines.
  static const std::regex agree(R"(([0-9]+) checks? agrees? \(([0-9]+) results? passed\))");
  std::smatch m;
  if (std::regex_search(whole, m, agree)) {
    EXPECT_EQ(lines[lines.size() - 2].rfind(
                  "- checks: " + std::to_string(xb::all_checks().size()) + "; " + std::string(m[1]) + " agree", 0),
              0u)
        << text;
    EXPECT_NE(lines.back().find("; " + std::string(m[2]) + " passed, "), std::string::npos) << text;
  }
  EXPECT_EQ(lines.back().rfind("- results: ", 0), 0u) << text;
  // No line over 160 characters.
  for (const auto& l : lines) EXPECT_LE(l.size(), 160u) << l;
  // No number with more than 3 decimals (a number: not part of a name), none in exponent form.
  static const std::regex long_decimals(R"((^|[^\w.])[0-9]+\.[0-9]{4,}([^\w.]|$))");
  static const std::regex exponent(R"((^|[^\w.])[0-9]+(\.[0-9]+)?e[+-]?[0-9]+([^\w.]|$))");
  for (const auto& l : lines) {
    EXPECT_FALSE(std::regex_search(l, long_decimals)) << l;
    EXPECT_FALSE(std::regex_search(l, exponent)) << l;
  }
  // Every failure is in one group: the group headers' counts add up to the failures.
  std::size_t failed = 0;
  for (const auto& c : r.checks) failed += c.status == xb::CheckStatus::Failed;
  std::size_t grouped = 0;
  const json doc = xb::report_json(r);
  for (const auto& [key, g] : doc["causes"].items()) grouped += g["findings"].get<std::size_t>();
  EXPECT_EQ(grouped, failed) << text;
}

/// Distinct table rows ("FILE line N") of the failures with this cause.
std::size_t rows_with_cause(const xb::ValidationReport& r, const std::string& cause) {
  std::set<std::string> rows;
  static const std::regex row(R"(^(\S+ (line|row) [0-9]+) )");
  for (const auto& c : r.checks) {
    std::smatch m;
    if (c.status == xb::CheckStatus::Failed && c.cause == cause && std::regex_search(c.subject, m, row))
      rows.insert(m[1]);
  }
  return rows.size();
}

xb::ValidationReport validate_torch(const fs::path& dir, const std::string& w) {
  xb::ValidateInputs in;
  in.traces = {fs::exists(dir / (w + ".json")) ? dir / (w + ".json") : dir / (w + ".json.gz")};
  in.table = dir / (w + ".txt");
  return xb::validate_files(in);
}

class SummaryText : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("xb_summary_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SummaryText, ReplayedRunFolderPasses) {
  std::ostringstream log;
  ASSERT_EQ(xb::replay_session(kSession, dir_ / "run", log), 0) << log.str();
  const auto r = xb::validate_run_dir(dir_ / "run");
  const std::string text = printed(r);
  expect_readable(text, r);
  EXPECT_NE(text.find("- passed ("), std::string::npos) << text;
  // event_vs_cupti per fixture from the figures, in us with 3 decimals.
  EXPECT_NE(text.find("  - matmul/bf16/64 (hot): cudaEvent 3.248 us, CUPTI span 2.940 us"), std::string::npos) << text;
  EXPECT_NE(text.find("- results: "), std::string::npos) << text;
  // A PASSED run whose fixtures missed their precision target says so in the verdict's counts,
  // with the word the console column uses ("noisy"), and names them.
  EXPECT_EQ(r.noisy_fixtures.empty(),
            xb::verdict_line(r).find(" noisy (missed the precision target)") == std::string::npos)
      << text;
  if (!r.noisy_fixtures.empty()) {
    EXPECT_NE(text.find("\n- noisy (missed the precision target: the median is less precise than asked, not wrong): " +
                        r.noisy_fixtures.front()),
              std::string::npos)
        << text;
  }
  EXPECT_EQ(xb::report_json(r)["summary"]["noisy_fixtures"].get<std::size_t>(), r.noisy_fixtures.size());
  // bench --replay printed the same summary after its own line; summary.md has it under Validation.
  EXPECT_NE(log.str().find("\nPASSED: "), std::string::npos) << log.str();
  std::ifstream md(dir_ / "run" / "summary.md");
  std::stringstream ss;
  ss << md.rdbuf();
  const std::string summary = ss.str();
  const auto at = summary.find("## Validation\n\n");
  ASSERT_NE(at, std::string::npos) << summary;
  EXPECT_EQ(summary.compare(at + 15, 8, "PASSED: "), 0) << summary.substr(at);
  for (const auto& l : lines_of(summary.substr(at))) EXPECT_LE(l.size(), 160u) << l;
  // The session predates the median-interval stopping rule: a fixture that timed out did so on its
  // samples' RSD, and its row says so beside the interval the current rule computes.
  std::size_t timed_out = 0;
  for (const auto& l : lines_of(summary.substr(0, at))) {
    if (l.find("| NO (timed out") == std::string::npos) continue;
    ++timed_out;
    EXPECT_NE(l.find("| NO (timed out on RSD > "), std::string::npos) << l;
    EXPECT_NE(l.find("the rule it was recorded under) |"), std::string::npos) << l;
  }
  EXPECT_GT(timed_out, 0u) << summary;
  EXPECT_EQ(r.noisy_fixtures.size(), timed_out) << summary;
}

TEST_F(SummaryText, ReplayedRunFolderWithFailuresGroupsThem) {
  std::ostringstream log;
  ASSERT_EQ(xb::replay_session(kSession, dir_ / "run", log), 0) << log.str();
  const fs::path events = dir_ / "run" / "events.json";
  json ev = json::parse(std::ifstream(events));
  // Two fixtures whose results did not verify; one whose event times are 16179 ns per step
  // longer (2022.375 ns per call: event_vs_cupti fails, its numbers have fractions of a ns).
  ev["fixtures"][0]["verified"] = false;
  ev["fixtures"][1]["verified"] = false;
  for (auto& s : ev["fixtures"][0]["steps"]) s["event_ns"] = s["event_ns"].get<std::int64_t>() + 16179;
  ev["fixtures"][0]["step_median_ns"] = ev["fixtures"][0]["steps"][0]["event_ns"];
  std::ofstream(events) << ev.dump();
  const auto r = xb::validate_run_dir(dir_ / "run");
  ASSERT_FALSE(r.passed());
  const std::string text = printed(r);
  expect_readable(text, r);
  const auto lines = lines_of(text);
  // The whole verdict names both causes and the noisy fixtures' reason; the console's line keeps
  // the first cause and the counts, and names how many causes follow below.
  const std::string whole = xb::verdict_line(r);
  EXPECT_NE(whole.find("cudaEvent and CUPTI times disagree beyond tolerance (1 finding); results did not match the "
                       "host reference (2 findings), 3 fixtures noisy (missed the precision target), "),
            std::string::npos)
      << whole;
  EXPECT_EQ(lines[0],
            "FAILED: 3 findings: cudaEvent and CUPTI times disagree beyond tolerance (1 finding); and 1 more "
            "cause (below), 3 fixtures noisy, 2 results not run")
      << text;
  EXPECT_NE(text.find("\n- results did not match the host reference: 2 findings [verified]\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\n- cudaEvent and CUPTI times disagree beyond tolerance: 1 finding [event_vs_cupti]\n"),
            std::string::npos)
      << text;
  // The raw result holds the fraction; the printed text rounds ns to integers.
  bool raw_fraction = false;
  for (const auto* c : r.results_of(xb::checks::kEventVsCupti))
    if (c->status == xb::CheckStatus::Failed && c->found.find('.') != std::string::npos) raw_fraction = true;
  EXPECT_TRUE(raw_fraction) << "the test no longer exercises rounding";
  EXPECT_NE(text.find("found 2334 ns\n"), std::string::npos) << text;  // 2334.375 ns in the JSON report
  EXPECT_NE(text.find(": FAILED"), std::string::npos) << text;         // the fixture's figure line
}

TEST(SummaryRounding, NumbersAreRoundedForDisplay) {
  xb::ValidationReport r;
  r.inputs = {{"traces", {"/x/t.json"}}, {"table", "/x/t.txt"}, {"events", nullptr}};
  xb::CheckResult c;
  c.check = xb::checks::kTableTotals;
  c.subject = "t.txt line 3 'kernel_1.5x_v2.12345'";
  c.expected = "197257.16666666666 ns, 2021.5 ns, 12.5%";
  c.found = "12.345678% of 1e-05 and 3.14159 s, 2.5e+06";
  c.status = xb::CheckStatus::Failed;
  r.checks.push_back(c);
  const std::string text = printed(r);
  expect_readable(text, r);
  EXPECT_NE(text.find("expected 197257 ns, 2022 ns, 12.5%, found 12.35% of 0.000 and 3.142 s, 2500000.000"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("'kernel_1.5x_v2.12345'"), std::string::npos) << text;  // names untouched
  EXPECT_EQ(
      text.rfind("FAILED: 1 finding: the table's sums, percentages or averages do not add up (1 row) - t.json, t.txt\n",
                 0),
      0u)
      << text;
}

class SummaryTorchCorpus : public ::testing::TestWithParam<const char*> {};

TEST_P(SummaryTorchCorpus, VerdictFirstGroupedRoundedShort) {
  const std::string w = GetParam();
  const auto r = validate_torch(kCorpus, w);
  const std::string text = printed(r);
  expect_readable(text, r);
  const auto lines = lines_of(text);
  // The overhead double count and pytorch#130730 are named with their row counts.
  for (const auto& [cause, label] : {std::pair<std::string, std::string>{xb::causes::kOverheadDoubleCount,
                                                                         "kernels counted twice under overhead events"},
                                     {xb::causes::kAnnotationSpan, "annotation GPU span counted as Self CUDA"}}) {
    const std::size_t rows = rows_with_cause(r, cause);
    if (rows == 0) {
      EXPECT_EQ(text.find(label), std::string::npos) << text;
      continue;
    }
    const std::string count = std::to_string(rows) + (rows == 1 ? " row" : " rows");
    EXPECT_NE(lines[0].find(label + " (" + count + ")"), std::string::npos) << text;
    EXPECT_NE(text.find("\n- " + label), std::string::npos) << text;
    EXPECT_NE(text.find(": " + count), std::string::npos) << text;
    EXPECT_EQ(xb::report_json(r)["causes"][cause]["rows"].get<std::size_t>(), rows);
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, SummaryTorchCorpus,
                         ::testing::Values("linear_fwd_bwd", "transformer_train_adamw", "two_streams", "cuda_graph",
                                           "memory_stack", "compile", "tiny_ops_20k", "long_names",
                                           "nested_same_name"));

TEST(SummaryTorchCorpusVerdicts, ExpectedVerdicts) {
  const auto two = validate_torch(kCorpus, "two_streams");
  const std::string first = lines_of(printed(two)).front();
  EXPECT_EQ(first.rfind("PYTORCH DEFECTS: kernels counted twice under overhead events (3 rows); otherwise ", 0), 0u)
      << printed(two);
  // The inputs close the whole verdict (the console drops them where the line would pass 160).
  EXPECT_NE(xb::verdict_line(two).find(" - two_streams.json, two_streams.txt"), std::string::npos)
      << xb::verdict_line(two);
  const auto compile = validate_torch(kCorpus, "compile");
  EXPECT_EQ(printed(compile).rfind("PASSED: ", 0), 0u) << printed(compile);
  const auto tr = validate_torch(kCorpus, "transformer_train_adamw");
  EXPECT_NE(printed(tr).find("- annotation GPU span counted as Self CUDA (pytorch#130730): 2 rows"), std::string::npos)
      << printed(tr);
}

/// A finding about a kernel with a long name keeps expected and found on its 160-character line:
/// the name is shortened, not the finding; the verdict keeps its counts when its causes do not fit.
TEST(SummaryLongNames, SubjectShortenedNotTheFinding) {
  xb::ValidationReport r;
  r.inputs = {{"traces", {"/x/a_trace_with_a_long_file_name.json"}}, {"table", "/x/a_table.txt"}, {"events", nullptr}};
  const std::string kernel =
      "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
      "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";
  for (const char* check : {xb::checks::kKernelStats, xb::checks::kTableRows, xb::checks::kTableTotals,
                            xb::checks::kFlows, xb::checks::kLaneOrder, xb::checks::kStreamOverlap}) {
    xb::CheckResult c;
    c.check = check;
    c.subject = "kernel '" + kernel + "'";
    c.expected = "total_ns = 74920 (a_table.txt)";
    c.found = "total_ns = 73920 (a_trace_with_a_long_file_name.json)";
    c.status = xb::CheckStatus::Failed;
    r.checks.push_back(c);
  }
  xb::CheckResult nr;
  nr.check = xb::checks::kAttribution;
  nr.message = "one trace given";
  r.checks.push_back(nr);
  const std::string text = printed(r);
  expect_readable(text, r);
  // Each example line: the name's head, then the whole finding, within 160 characters.
  const std::string finding =
      "...': expected total_ns = 74920 (a_table.txt), found total_ns = 73920 (a_trace_with_a_long_file_name.json)";
  std::size_t examples = 0;
  for (const auto& l : lines_of(text)) {
    if (l.rfind("  - kernel 'void at::native::vectorized_elementwise_", 0) != 0) continue;
    ++examples;
    EXPECT_EQ(l.size() - finding.size(), l.find(finding)) << l;
    EXPECT_GE(l.size(), 150u) << "the name is shortened no more than the line needs: " << l;
  }
  EXPECT_EQ(examples, 6u) << text;
  // Six causes do not fit the console's line: the first ones stay, the rest are counted, the
  // counts close the line; the whole verdict names every cause and the inputs.
  const std::string first = lines_of(text).front();
  EXPECT_NE(first.find(" more causes (below), 1 result not run"), std::string::npos) << first;
  EXPECT_EQ(first.rfind("FAILED: 6 findings: kernel statistics differ between the files (1 finding); ", 0), 0u)
      << first;
  const std::string whole = xb::verdict_line(r);
  EXPECT_GT(whole.size(), 160u);
  EXPECT_NE(whole.find("device activities overlap on one stream (1 finding), 1 result not run - "
                       "a_trace_with_a_long_file_name.json, a_table.txt"),
            std::string::npos)
      << whole;
}

TEST(SummaryTorchH200, SixExports) {
  for (const char* w :
       {"64_bf16_add", "64_bf16_matmul", "64_bf16_addmm", "4096_bf16_add", "4096_bf16_matmul", "4096_bf16_addmm"}) {
    if (!fs::exists(kTorch / (std::string(w) + ".json"))) continue;
    xb::ValidateInputs in;
    in.traces = {kTorch / (std::string(w) + ".json")};
    in.table = kTorch / (std::string(w) + ".txt");
    in.events = kTorch / "summary.json";
    const auto r = xb::validate_files(in);
    SCOPED_TRACE(w);
    expect_readable(printed(r), r);
  }
}

}  // namespace
