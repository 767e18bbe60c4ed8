// Issue 37's PyTorch profile classes: what the files can show (a profile without
// ProfilerActivity.CUDA, the legacy profiler), PyTorch's odd arithmetic (negative Self CPU, an
// overhead row above 100%, the GPU span of launches without an External id) and the renamed
// non-ASCII annotation. Derived inputs of tests/data/torch-derived (made by its make.py from real
// H200 exports, not recorded) and small Kineto traces written here, shaped as PyTorch 2.11 writes
// them.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "validate/validator.h"

namespace {

namespace fs = std::filesystem;

const fs::path kDerived = fs::path(XB_TEST_DATA_DIR) / "torch-derived";

xb::ValidationReport validate(const fs::path& trace, const fs::path& table) {
  xb::ValidateInputs in;
  in.traces = {trace};
  in.table = table;
  return xb::validate_files(in);
}

xb::ValidationReport derived(const std::string& w) {
  fs::path trace = kDerived / (w + ".json");
  if (!fs::exists(trace)) trace += ".gz";
  return validate(trace, kDerived / (w + ".txt"));
}

std::string summary(const xb::ValidationReport& r) {
  std::ostringstream s;
  xb::print_summary(r, s);
  return s.str();
}

/// Statuses of one check's results.
std::multiset<xb::CheckStatus> statuses(const xb::ValidationReport& r, const std::string& check) {
  std::multiset<xb::CheckStatus> out;
  for (const auto* x : r.results_of(check)) out.insert(x->status);
  return out;
}

/// The not-judged messages of one check, joined.
std::string not_judged(const xb::ValidationReport& r, const std::string& check) {
  std::string out;
  for (const auto* x : r.results_of(check))
    if (x->status == xb::CheckStatus::NotJudged) out += x->message + "\n";
  return out;
}

/// Writes `text` to a fresh file of this process and returns its path.
fs::path write(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("xb_torch_classes-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

/// A key_averages().table() as profiler_util.py _build_table lays it out: the name column
/// `name_width` wide, the others 12, each right-aligned and followed by two spaces; the dashed
/// rule above and below the header and the rows; then the footer lines.
std::string table(std::size_t name_width, const std::vector<std::vector<std::string>>& header_and_rows,
                  const std::vector<std::string>& footer) {
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::size_t w = i == 0 ? name_width : 12;
      out += std::string(cells[i].size() < w ? w - cells[i].size() : 0, ' ') + cells[i] + "  ";
    }
    return out + "\n";
  };
  std::string rule;
  for (std::size_t i = 0; i < header_and_rows[0].size(); ++i) rule += std::string(i == 0 ? name_width : 12, '-') + "  ";
  rule += "\n";
  std::string out = rule + line(header_and_rows[0]) + rule;
  for (std::size_t i = 1; i < header_and_rows.size(); ++i) out += line(header_and_rows[i]);
  out += rule;
  for (const auto& f : footer) out += f + "\n";
  return out;
}

const std::vector<std::string> kCpuHeader = {"Name",      "Self CPU %",   "Self CPU",  "CPU total %",
                                             "CPU total", "CPU time avg", "# of Calls"};

// ---------------------------------------------------------------------------------------------
// What the files can show

TEST(TorchClasses, CpuOnlyProfileJudgesTheCpuColumnsAndNoDeviceCheck) {
  const auto r = derived("cpu_only");
  EXPECT_TRUE(r.passed()) << summary(r);
  EXPECT_EQ(r.status_of(xb::checks::kTableRows), xb::CheckStatus::Passed);
  EXPECT_EQ(r.status_of(xb::checks::kTableTotals), xb::CheckStatus::Passed);
  EXPECT_TRUE(not_judged(r, xb::checks::kTableRows).empty()) << not_judged(r, xb::checks::kTableRows);
  for (const char* check : {xb::checks::kKernelStats, xb::checks::kAnnotationSpan, xb::checks::kAttribution,
                            xb::checks::kFlows, xb::checks::kStreamOverlap, xb::checks::kLaunchBeforeKernel}) {
    EXPECT_EQ(statuses(r, check), std::multiset<xb::CheckStatus>{xb::CheckStatus::NotJudged}) << check;
    EXPECT_NE(not_judged(r, check).find("profiled without ProfilerActivity.CUDA"), std::string::npos) << check;
  }
  // The host half of the timeline checks is judged, the device half not.
  for (const char* check : {xb::checks::kDurationsPositive, xb::checks::kLaneOrder}) {
    EXPECT_EQ(r.status_of(check), xb::CheckStatus::Passed) << check;
    EXPECT_NE(not_judged(r, check).find("records no device activity"), std::string::npos) << check;
  }
  EXPECT_EQ(summary(r).rfind("PASSED", 0), 0u) << summary(r);
}

TEST(TorchClasses, CudaOnlyProfileWithoutHostRangesPasses) {
  // activities=[ProfilerActivity.CUDA]: no op, no External id, no GPU span; every row judged.
  const auto r = derived("cuda_only");
  EXPECT_TRUE(r.passed()) << summary(r);
  EXPECT_EQ(r.counts().not_judged, 0u) << summary(r);
  EXPECT_EQ(r.status_of(xb::checks::kTableRows), xb::CheckStatus::Passed);
  EXPECT_EQ(r.status_of(xb::checks::kFlows), xb::CheckStatus::Passed);
}

TEST(TorchClasses, LegacyProfilerDeviceColumnsNotJudgedCpuColumnsAre) {
  const auto r = derived("legacy");
  EXPECT_TRUE(r.passed()) << summary(r);
  EXPECT_EQ(r.counts().failed, 0u);
  EXPECT_EQ(r.status_of(xb::checks::kTableRows), xb::CheckStatus::Passed);
  EXPECT_NE(not_judged(r, xb::checks::kTableRows).find("legacy profiler"), std::string::npos);
  EXPECT_NE(not_judged(r, xb::checks::kTableTotals).find("legacy profiler"), std::string::npos);
  EXPECT_NE(not_judged(r, xb::checks::kAnnotationSpan).find("legacy profiler"), std::string::npos);
  // A changed CPU cell is still found.
  std::ifstream in(kDerived / "legacy.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find("708.233us");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, "709.233us");
  const auto bad = validate(kDerived / "legacy.json.gz", write("legacy_changed.txt", text));
  EXPECT_EQ(bad.status_of(xb::checks::kTableRows), xb::CheckStatus::Failed) << summary(bad);
}

/// torch.autograd.profiler's own JSON, as profiler_util.py EventList.export_chrome_trace writes
/// it (where Kineto is unavailable): a bare array of the FunctionEvents, relative microseconds,
/// no category; one "cpu_to_cuda" flow start per legacy kernel.
const std::string kEventListTrace =
    R"j([{"name": "ProfilerStep#1", "ph": "X", "ts": 10.5, "dur": 100.25, "tid": 11, "pid": "CPU functions", "args": {}}, )j"
    R"j({"name": "aten::mm", "ph": "X", "ts": 20.0, "dur": 50.0, "tid": 11, "pid": "CPU functions", "args": {}}, )j"
    R"j({"name": "aten::mm", "ph": "s", "ts": 20.0, "tid": 11, "pid": "CPU functions", "id": 0, "cat": "cpu_to_cuda", "args": {}}, )j"
    R"j({"name": "aten::add", "ph": "X", "ts": 80.0, "dur": 1e1, "tid": 11, "pid": "CPU functions", "args": {}}])j";

TEST(TorchClasses, EventListJsonIsReadAndItsLegacyDeviceColumnsNotJudged) {
  std::vector<std::string> header = kCpuHeader;
  header.insert(header.end() - 1, {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"});
  const std::string text = table(18,
                                 {header,
                                  {"ProfilerStep*", "40.15%", "40.250us", "100.00%", "100.250us", "100.250us",
                                   "-3.000us", "-42.86%", "4.000us", "4.000us", "1"},
                                  {"aten::mm", "49.88%", "50.000us", "49.88%", "50.000us", "50.000us", "5.000us",
                                   "71.43%", "5.000us", "5.000us", "1"},
                                  {"aten::add", "9.98%", "10.000us", "9.98%", "10.000us", "10.000us", "2.000us",
                                   "28.57%", "2.000us", "2.000us", "1"}},
                                 {"Self CPU time total: 100.250us", "Self CUDA time total: 7.000us"});
  const auto r = validate(write("eventlist.json", kEventListTrace), write("eventlist.txt", text));
  EXPECT_TRUE(r.passed()) << summary(r);
  EXPECT_EQ(r.status_of(xb::checks::kTableRows), xb::CheckStatus::Passed) << summary(r);
  EXPECT_NE(not_judged(r, xb::checks::kTableRows).find("legacy profiler"), std::string::npos);
  EXPECT_NE(not_judged(r, xb::checks::kKernelStats).find("EventList.export_chrome_trace"), std::string::npos);
  // Its CPU columns are judged: ProfilerStep*'s Self CPU is its time less its two children's.
  std::string bad = text;
  bad.replace(bad.find("40.250us"), 8, "41.250us");
  EXPECT_EQ(validate(write("eventlist.json", kEventListTrace), write("eventlist_bad.txt", bad))
                .status_of(xb::checks::kTableRows),
            xb::CheckStatus::Failed);
}

// ---------------------------------------------------------------------------------------------
// PyTorch's arithmetic

/// A Kineto trace of one op whose runtime call an overhead event outlasts: both are the op's
/// children and their durations exceed its own, so PyTorch's Self CPU is -40 us.
const std::string kNegativeSelfTrace =
    R"j({"schemaVersion": 1, "traceEvents": [)j"
    R"j({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1000.000, "dur": 100.000, "args": {"External id": 7}},)j"
    R"j({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1005.000, "dur": 90.000, "args": {"External id": 7, "cbid": 211, "correlation": 99}},)j"
    R"j({"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": 0, "ts": 1050.000, "dur": 50.000},)j"
    R"j({"ph": "X", "cat": "Trace", "ts": 900.000, "dur": 400.000, "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}]})j";

std::string negative_self_table() {
  return table(27,
               {kCpuHeader,
                {"aten::mm", "-40.00%", "-40.000us", "100.00%", "100.000us", "100.000us", "1"},
                {"cudaLaunchKernel", "90.00%", "90.000us", "90.00%", "90.000us", "90.000us", "1"},
                {"Activity Buffer Request", "50.00%", "50.000us", "50.00%", "50.000us", "50.000us", "1"}},
               {"Self CPU time total: 100.000us"});
}

TEST(TorchClasses, NegativeSelfCpuIsSummedAsPyTorchDoes) {
  const auto r = validate(write("negative.json", kNegativeSelfTrace), write("negative.txt", negative_self_table()));
  EXPECT_EQ(r.status_of(xb::checks::kTableRows), xb::CheckStatus::Passed) << summary(r);
  EXPECT_EQ(r.status_of(xb::checks::kTableTotals), xb::CheckStatus::Passed) << summary(r);
  EXPECT_TRUE(r.passed()) << summary(r);
}

/// Three overhead events inside one op each take its 5 us kernel again: the overhead row's Self
/// CUDA is 15 us, 300% of the Self CUDA total.
const std::string kOverheadTrace =
    R"j({"schemaVersion": 1, "traceEvents": [)j"
    R"j({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1000.000, "dur": 100.000, "args": {"External id": 7}},)j"
    R"j({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1005.000, "dur": 10.000, "args": {"External id": 7, "cbid": 211, "correlation": 99}},)j"
    R"j({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1030.000, "dur": 5.000, "args": {"External id": 7, "device": 0, "stream": 7, "correlation": 99}},)j"
    R"j({"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": 0, "ts": 1020.000, "dur": 5.000},)j"
    R"j({"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": 0, "ts": 1040.000, "dur": 5.000},)j"
    R"j({"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": 0, "ts": 1060.000, "dur": 5.000}]})j";

std::string overhead_table() {
  std::vector<std::string> header = kCpuHeader;
  header.insert(header.end() - 1, {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"});
  return table(
      27,
      {header,
       {"aten::mm", "75.00%", "75.000us", "100.00%", "100.000us", "100.000us", "5.000us", "100.00%", "20.000us",
        "20.000us", "1"},
       {"Activity Buffer Request", "15.00%", "15.000us", "15.00%", "15.000us", "5.000us", "15.000us", "300.00%",
        "15.000us", "5.000us", "3"},
       {"k", "0.00%", "0.000us", "0.00%", "0.000us", "0.000us", "5.000us", "100.00%", "5.000us", "5.000us", "1"},
       {"cudaLaunchKernel", "10.00%", "10.000us", "10.00%", "10.000us", "10.000us", "0.000us", "0.00%", "0.000us",
        "0.000us", "1"}},
      {"Self CPU time total: 100.000us", "Self CUDA time total: 5.000us"});
}

TEST(TorchClasses, OverheadRowAbove100PercentIsTheDoubleCount) {
  const auto r = validate(write("overhead.json", kOverheadTrace), write("overhead.txt", overhead_table()));
  bool pct = false;
  for (const auto& x : r.checks) {
    if (x.status != xb::CheckStatus::Failed) continue;
    EXPECT_EQ(x.cause, xb::causes::kOverheadDoubleCount) << x.check << " " << x.subject << ": " << x.message;
    if (x.check == xb::checks::kTableTotals && x.expected == "Self CUDA % <= 100%") pct = true;
  }
  EXPECT_TRUE(pct) << summary(r);
  EXPECT_EQ(summary(r).rfind("PYTORCH DEFECTS: kernels counted twice under overhead events", 0), 0u) << summary(r);
}

TEST(TorchClasses, KernelsWithoutExternalIdCountInTheAnnotationAroundTheirLaunch) {
  const auto r = derived("triton_direct");
  EXPECT_TRUE(r.passed()) << summary(r);
  EXPECT_EQ(r.status_of(xb::checks::kAnnotationSpan), xb::CheckStatus::Passed);
  EXPECT_TRUE(not_judged(r, xb::checks::kAnnotationSpan).empty());
  EXPECT_EQ(xb::causes::files_agree_despite(""), false);
}

// ---------------------------------------------------------------------------------------------
// A PyTorch defect named

TEST(TorchClasses, NonAsciiNameWrittenUnknownIsNamedAndTheRowJudged) {
  const auto r = derived("non_ascii");
  std::set<std::string> subjects;
  for (const auto& x : r.checks) {
    if (x.status != xb::CheckStatus::Failed) continue;
    EXPECT_EQ(x.cause, xb::causes::kNameWrittenUnknown) << x.subject << ": " << x.message;
    subjects.insert(x.subject);
  }
  EXPECT_EQ(subjects.size(), 2u) << summary(r);  // the annotation's CPU and GPU-span rows
  EXPECT_EQ(r.status_of(xb::checks::kAnnotationSpan), xb::CheckStatus::Passed);
  const std::string s = summary(r);
  EXPECT_EQ(s.rfind("FAILED: 2 findings: non-ASCII name written \"unknown\" in the trace by Kineto", 0), 0u) << s;
  // Still judged under its table name: a changed cell of that row is found.
  std::ifstream in(kDerived / "non_ascii.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find("124.696us");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, "124.796us");
  const auto bad = validate(kDerived / "non_ascii.json", write("non_ascii_changed.txt", text));
  bool cell = false;
  for (const auto& x : bad.checks)
    if (x.status == xb::CheckStatus::Failed && x.check == xb::checks::kTableRows && x.cause.empty() &&
        x.found == "Self CPU = 124.796us")
      cell = true;
  EXPECT_TRUE(cell) << summary(bad);
}

}  // namespace
