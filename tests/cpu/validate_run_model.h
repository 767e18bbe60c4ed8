// The validator tests' run folder, written by hand (docs/formats.md): a tiny session model
// (ranges, API calls, device activities, fixtures; times in ns from Model::base) written out as
// table.json, trace_only.json, full.json and events.json, helpers that corrupt those files, and the
// ValidateTest fixture that validates them in a fresh folder. Used by test_validate_checks.cpp (one
// case per check) and test_validate_report.cpp (input errors, the report, the executable).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "validate/validator.h"

namespace xb::test_model {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct MRange {
  std::uint64_t id, parent;
  std::string name, cat;
  std::int64_t start, end;
};
struct MApi {
  std::string cat, name;
  std::int64_t start, end;
  std::uint64_t corr, ext;
  std::uint32_t cbid;
};
struct MAct {
  std::string cat, name;
  std::int64_t start, end;
  std::uint64_t corr;
  std::uint32_t stream = 7;
};
struct MStep {
  std::int64_t step;
  std::uint64_t range_id;
  std::int64_t event_extra_ns = 300;  ///< event_ns = CUPTI span of the step + this
  int launches = 1;                   ///< written as steps[].launches when not 1
};
struct MFixture {
  std::string name, op;
  bool verified = true;
  std::vector<MStep> steps;
  std::string stop;  ///< written as timing.stop (with `mode`) when not empty
  std::string mode = "hot";
  bool reference = true;  ///< false: written as "reference": false (the benchmark gave no verify)
  /// events.json "work": by default one kernel on the handed stream, between the events; set
  /// `work_off_stream` for a second one on the legacy default stream (not between them), `error`
  /// for the fixture's failure (a refusal), `no_work` for a file without the key.
  bool work_off_stream = false, no_work = false;
  std::string error;
};

struct Model {
  std::int64_t base = 1'000'000'000;
  std::uint32_t pid = 100, tid = 200, device = 0;
  std::vector<MRange> ranges;
  std::vector<MApi> api;
  std::vector<MAct> acts;
  std::vector<MFixture> fixtures;
  std::uint64_t dropped = 0;
  std::string activity_source = "cupti";
  bool parent_ids = true;  ///< write "Parent id" in trace_only.json
};

/// The four files of a run folder, as JSON.
struct Files {
  json table, trace_only, full, events;
};

/// Two fixtures, two steps each. Step k: ProfilerStep#s > op annotation > aten:: cpu_op, which
/// launches a memset and a kernel on stream 7. Fixture "add" launches through the driver API on
/// its second step. One cudaDeviceSynchronize outside every range launches nothing.
Model default_model();

/// The files the profiler would write for `m`, consistent with each other.
Files build(const Model& m);

/// The "X" event of category `cat` whose args.correlation is `corr` (throws std::runtime_error
/// when there is none).
json& event(json& trace, const std::string& cat, std::uint64_t corr);

/// `trace` without the events for which `pred` holds.
void erase_events(json& trace, const std::function<bool(const json&)>& pred);

/// The table row of `kind` named `name` (throws std::runtime_error when there is none).
json& table_row(json& table, const std::string& kind, const std::string& name);

/// The report as validate prints it, for failure messages.
std::string dump_report(const xb::ValidationReport& r);

class ValidateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("xb_validate_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void write(const Files& f) {
    auto put = [&](const char* name, const json& j) { std::ofstream(dir_ / name) << j.dump(1) << '\n'; };
    put("table.json", f.table);
    put("trace_only.json", f.trace_only);
    put("full.json", f.full);
    put("events.json", f.events);
  }

  xb::ValidationReport validate(const Files& f, const xb::ValidateOptions& opts = {}) {
    write(f);
    return xb::validate_run_dir(dir_, opts);
  }

  /// `check` has at least one Failed result.
  static void expect_failed(const xb::ValidationReport& r, const char* check) {
    EXPECT_EQ(r.status_of(check), xb::CheckStatus::Failed) << check << "\n" << dump_report(r);
    EXPECT_FALSE(r.passed());
  }

  /// Exactly the named checks failed; every other check passed.
  static void expect_only_failed(const xb::ValidationReport& r, std::initializer_list<const char*> failed) {
    const std::set<std::string> want(failed.begin(), failed.end());
    for (const char* c : kAll) {
      const auto s = r.status_of(c);
      if (want.count(c))
        EXPECT_EQ(s, xb::CheckStatus::Failed) << c << "\n" << dump_report(r);
      else
        EXPECT_EQ(s, xb::CheckStatus::Passed) << c << "\n" << dump_report(r);
    }
  }

  static constexpr const char* kAll[] = {
      xb::checks::kKernelStats,        xb::checks::kAttribution,       xb::checks::kFlows,
      xb::checks::kNoDroppedRecords,   xb::checks::kDurationsPositive, xb::checks::kStreamOverlap,
      xb::checks::kLaunchBeforeKernel, xb::checks::kTableTotals,       xb::checks::kEventVsCupti,
      xb::checks::kVerified,           xb::checks::kTableRows,         xb::checks::kAnnotationSpan,
      xb::checks::kRecordingWindow,    xb::checks::kLaneOrder};

  fs::path dir_;
};

}  // namespace xb::test_model
