// PyTorch's own exports recorded on the H200 (tests/data/torch-h200): re-runs the validator on
// all six workloads (trace, text table and summary.json each) and compares the verdict of every
// check, and the subjects of its failures, with the committed report
// (results/torch-h200-validation/<workload>.json, written by tools/lab/torch_validation.sh).
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "validate/validator.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kData = fs::path(XB_TEST_DATA_DIR) / "torch-h200";
const fs::path kReport = fs::path(XB_RESULTS_DIR) / "torch-h200-validation";

xb::ValidationReport validate(const std::string& w) {
  xb::ValidateInputs in;
  in.traces = {kData / (w + ".json")};
  in.table = kData / (w + ".txt");
  in.events = kData / "summary.json";
  return xb::validate_files(in);
}

std::string summary(const xb::ValidationReport& r) {
  std::ostringstream s;
  xb::print_summary(r, s);
  return s.str();
}

class TorchH200 : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchH200, VerdictsMatchTheCommittedReport) {
  const std::string w = GetParam();
  const auto r = validate(w);
  std::ifstream in(kReport / (w + ".json"));
  ASSERT_TRUE(in) << "no committed report " << (kReport / (w + ".json")) << " (run tools/lab/torch_validation.sh)";
  const json committed = json::parse(in);
  for (const auto& check : xb::all_checks()) {
    // A PyTorch export has no counter pass and no work signature: reports committed before
    // model_vs_counters or work_signature existed lack them, and they can only be not run.
    if ((check == xb::checks::kModelVsCounters || check == xb::checks::kWorkSignature) &&
        !committed["verdicts"].contains(check)) {
      EXPECT_EQ(r.status_of(check), xb::CheckStatus::NotRun);
      continue;
    }
    ASSERT_TRUE(committed["verdicts"].contains(check)) << check;
    EXPECT_EQ(xb::to_string(r.status_of(check)), committed["verdicts"][check].get<std::string>())
        << w << " " << check << "\n"
        << summary(r);
  }
  // The same failures, about the same rows and events.
  std::multiset<std::pair<std::string, std::string>> now, then;
  for (const auto& c : r.checks)
    if (c.status == xb::CheckStatus::Failed) now.insert({c.check, c.subject});
  for (const auto& c : committed["checks"])
    if (c["status"] == "failed") then.insert({c["check"].get<std::string>(), c["subject"].get<std::string>()});
  EXPECT_EQ(now, then) << w << "\n" << summary(r);
}

INSTANTIATE_TEST_SUITE_P(Workloads, TorchH200,
                         ::testing::Values("64_bf16_matmul", "64_bf16_add", "64_bf16_addmm", "4096_bf16_matmul",
                                           "4096_bf16_add", "4096_bf16_addmm"));

/// pytorch#130730 on real data: the "addmm" annotation's GPU row counts its span (683.773 us) as
/// Self CUDA, 92.768 us more than the kernels, memcpys and memsets under it (591.005 us).
TEST(TorchH200Facts, AddmmAnnotationSpanIsReportedWithItsNumbers) {
  const auto r = validate("4096_bf16_addmm");
  EXPECT_EQ(r.status_of(xb::checks::kAnnotationSpan), xb::CheckStatus::Failed);
  bool found = false;
  for (const auto* c : r.results_of(xb::checks::kAnnotationSpan)) {
    if (c->status != xb::CheckStatus::Failed) continue;
    found = true;
    EXPECT_NE(c->subject.find("line 4 'addmm'"), std::string::npos) << c->subject;
    EXPECT_NE(c->found.find("683.773 us"), std::string::npos) << c->found;
    EXPECT_NE(c->expected.find("591.005 us"), std::string::npos) << c->expected;
    EXPECT_NE(c->message.find("92.768 us"), std::string::npos) << c->message;
  }
  EXPECT_TRUE(found) << summary(r);
  // Everything that can be checked on one trace and its table agrees otherwise.
  for (const char* ok : {xb::checks::kKernelStats, xb::checks::kTableRows, xb::checks::kAttribution, xb::checks::kFlows,
                         xb::checks::kDurationsPositive, xb::checks::kStreamOverlap, xb::checks::kLaunchBeforeKernel,
                         xb::checks::kRecordingWindow, xb::checks::kLaneOrder})
    EXPECT_EQ(r.status_of(ok), xb::CheckStatus::Passed) << ok << "\n" << summary(r);
  // What PyTorch's files cannot support is not run, never passed.
  for (const char* nr : {xb::checks::kNoDroppedRecords, xb::checks::kEventVsCupti, xb::checks::kVerified})
    EXPECT_EQ(r.status_of(nr), xb::CheckStatus::NotRun) << nr;
}

/// Where the annotation's span equals its kernels (one kernel per call), the row passes with a note.
TEST(TorchH200Facts, SpanEqualToKernelTimePassesWithANote) {
  const auto r = validate("64_bf16_matmul");
  EXPECT_EQ(r.status_of(xb::checks::kAnnotationSpan), xb::CheckStatus::Passed) << summary(r);
  bool note = false;
  for (const auto* c : r.results_of(xb::checks::kAnnotationSpan))
    if (c->message.find("note: Self CUDA 5.760 us equals the device time under the annotation") != std::string::npos)
      note = true;
  EXPECT_TRUE(note) << summary(r);
}

}  // namespace
