// Replays a session recorded on the H200 (results/sessions/h200-small-2026-11-29, `bench --size 64,256
// --active-steps 3`) through the event model, the table and both exporters, parses every output
// back and runs the validator on the files, as `bench --replay` does.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/core/fixture_records.h"
#include "bench/core/run_dir.h"
#include "common/stats.h"
#include "common/units.h"
#include "profiler/model/event_model.h"
#include "profiler/model/session_io.h"
#include "validate/validator.h"

namespace xb {
namespace {

namespace fs = std::filesystem;

const fs::path kSession = fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small-2026-11-29" / "raw_session.json";

nlohmann::json load(const fs::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

/// A temporary path unique to this process (tests may run concurrently).
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

TEST(ReplayH200, RecordedSessionIsRealAndComplete) {
  const RawSession raw = read_recorded_session(kSession);
  ASSERT_FALSE(raw.meta.devices.empty());
  EXPECT_EQ(raw.meta.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(raw.meta.dropped_records, 0u);
  EXPECT_EQ(raw.fixtures.size(), 8u);  // 4 ops x sizes 64, 256
  for (const FixtureInfo& f : read_fixtures(raw)) EXPECT_TRUE(f.verified) << f.name;
  const Session s = build_session(raw);
  ASSERT_FALSE(s.device.empty());
  for (const DeviceActivity& a : s.device) {
    EXPECT_GE(a.launch, 0) << a.name << " has no launch";
    EXPECT_NE(a.external_id, 0u) << a.name << " has no annotation";
    EXPECT_GT(a.duration_ns(), 0);
    EXPECT_GE(a.start_ns, s.api[static_cast<std::size_t>(a.launch)].start_ns);
  }
  EXPECT_TRUE(s.duplicate_correlations.empty());
}

TEST(ReplayH200, OutputsParseBackAgreeAndValidate) {
  const fs::path dir = fresh_dir("xb_replay_h200");
  std::ostringstream log;
  ASSERT_EQ(replay_session(kSession, dir, log), 0) << log.str();
  for (const char* f :
       {"raw_session.json", "events.json", "table.json", "trace_only.json", "full.json", "validation.json"}) {
    EXPECT_NO_THROW(load(dir / f)) << f;
  }
  // Per kernel name, counts and total ns from the raw records equal the three outputs'.
  const RawSession raw = read_raw_session(kSession);
  std::map<std::string, std::pair<int, std::int64_t>> expected;
  for (const RawRecord& r : raw.records) {
    if (r.kind != RawKind::Kernel) continue;
    auto& e = expected[demangle(r.name)];
    ++e.first;
    e.second += r.end_ns - r.start_ns;
  }
  ASSERT_FALSE(expected.empty());
  for (const char* trace : {"trace_only.json", "full.json"}) {
    std::map<std::string, std::pair<int, std::int64_t>> found;
    const nlohmann::json doc = load(dir / trace);
    for (const auto& ev : doc["traceEvents"]) {
      if (ev.value("cat", "") != "kernel") continue;
      auto& e = found[ev["name"].get<std::string>()];
      ++e.first;
      e.second += us_to_ns(ev["dur"].get<double>());
    }
    EXPECT_EQ(found, expected) << trace;
  }
  std::map<std::string, std::pair<int, std::int64_t>> table;
  double device_pct = 0;
  const nlohmann::json table_doc = load(dir / "table.json");
  for (const auto& row : table_doc["rows"]) {
    const std::string kind = row["kind"];
    if (kind == "kernel" || kind == "gpu_memcpy" || kind == "gpu_memset") {
      device_pct += row["self_cuda_pct"].get<double>();
    }
    if (kind != "kernel") continue;
    table[row["name"]] = {row["calls"].get<int>(), row["self_cuda_ns"].get<std::int64_t>()};
  }
  EXPECT_EQ(table, expected);
  EXPECT_NEAR(device_pct, 100.0, 1e-6);
  // The validator read the files: every check ran and passed.
  const auto report = load(dir / "validation.json");
  EXPECT_TRUE(report["passed"].get<bool>());
  EXPECT_EQ(report["summary"]["failed"].get<int>(), 0);
  // model_vs_counters: no counter pass; work_signature: recorded before the probe (2026-11-29).
  EXPECT_EQ(report["summary"]["not_run"].get<int>(), 2);
  EXPECT_EQ(report["verdicts"]["work_signature"], "not_run");
  EXPECT_EQ(report["verdicts"]["model_vs_counters"], "not_run");
}

// summary.md states per-call figures: each step's event and CUPTI time divided by its launches
// (the session's steps hold 8 calls each), and TFLOP/s and GB/s from the per-call CUPTI time.
TEST(ReplayH200, SummaryFiguresArePerCall) {
  const fs::path dir = fresh_dir("xb_replay_h200_summary");
  std::ostringstream log;
  replay_session(kSession, dir, log);
  const RawSession raw = read_raw_session(kSession);
  std::ifstream in(dir / "summary.md");
  std::map<std::string, std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(cell.substr(1, cell.size() - 2));
    rows[cells[0]] = cells;
  }
  int checked = 0;
  for (const FixtureInfo& f : read_fixtures(raw)) {
    ASSERT_TRUE(rows.count(f.name)) << f.name;
    const std::vector<std::string>& r = rows[f.name];
    // fixture, verified, samples, spread, median known to, target met, event, span, event - span,
    // kernel sum, TFLOP/s, GB/s
    ASSERT_EQ(r.size(), 12u) << f.name;
    const MedianInterval ci = median_interval(f.timing.samples_ns);  // the session predates the level: 95%
    EXPECT_EQ(r[4], ci.bounded ? fmt::format("+-{:.3f}% (95%)", ci.half_width() * 100) : "unbounded (95%)") << f.name;
    std::vector<double> per_call;
    int launches = 0;
    for (const StepTiming& t : raw.event_timings) {
      if (t.fixture != f.name) continue;
      per_call.push_back(static_cast<double>(t.event_ns) / t.launches);
      launches = t.launches;
    }
    ASSERT_FALSE(per_call.empty()) << f.name;
    EXPECT_GT(launches, 1) << f.name << ": the session should batch calls, or this test shows nothing";
    std::sort(per_call.begin(), per_call.end());
    const std::size_t n = per_call.size();
    const double event_us = (n % 2 ? per_call[n / 2] : (per_call[n / 2 - 1] + per_call[n / 2]) / 2) / 1e3;
    const double shown_event_us = std::stod(r[6]), span_us = std::stod(r[7]), cupti_us = std::stod(r[9]);
    EXPECT_NEAR(shown_event_us, event_us, 0.0006) << f.name;
    EXPECT_NEAR(std::stod(r[8]), shown_event_us - span_us, 0.0011) << f.name;
    EXPECT_GT(cupti_us, 0) << f.name;
    EXPECT_LE(cupti_us, span_us + 0.0005) << f.name << ": the activities' own time per call within their span";
    EXPECT_LE(span_us, shown_event_us) << f.name << ": device span per call within the event interval per call";
    EXPECT_EQ(std::stoul(r[2]), f.timing.samples_ns.size()) << f.name;
    EXPECT_NEAR(std::stod(r[10]), f.flops / (cupti_us * 1e3) / 1e3, 0.06 + 1e-3 * std::stod(r[10])) << f.name;
    EXPECT_NEAR(std::stod(r[11]), f.bytes / (cupti_us * 1e3), 0.06 + 1e-3 * std::stod(r[11])) << f.name;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
  // A replay says so, and of what: the recording command when the session has one (meta.run).
  std::ifstream again(dir / "summary.md");
  const std::string text((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("- **replay** of `" + std::string(kSession) + "`"), std::string::npos) << text;
  const std::string command = read_command(raw.meta);
  EXPECT_NE(text.find(command.empty() ? std::string("recorded by a command the session does not name")
                                      : "recorded by `" + command + "`"),
            std::string::npos)
      << text;
  fs::remove_all(dir);
}

TEST(ReplayH200, TheNewcomersReplayShowsEveryResultClaimedUnderTheCurrentRules) {
  // results/sessions/h200-small: the replay the README runs first, recorded on the H200 with the
  // median-interval stopping rule (timing.confidence) and the paired event-vs-CUPTI rule.
  const fs::path session = fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small" / "raw_session.json";
  const RawSession raw = read_recorded_session(session);
  ASSERT_EQ(raw.fixtures.size(), 8u);
  for (const FixtureInfo& f : read_fixtures(raw)) {
    EXPECT_TRUE(f.verified) << f.name;
    EXPECT_GT(f.timing.confidence, 0) << f.name << " was recorded under the RSD rule";
  }
  const fs::path dir = fresh_dir("xb_replay_h200_newcomer");
  std::ostringstream log;
  ASSERT_EQ(replay_session(session, dir, log), 0) << log.str();
  const nlohmann::json v = load(dir / "validation.json");
  EXPECT_TRUE(v["passed"].get<bool>());
  EXPECT_EQ(v["verdict"].get<std::string>().rfind("PASSED", 0), 0u) << v["verdict"];
  ASSERT_EQ(v["figures"]["event_vs_cupti"].size(), 8u);
  for (const auto& f : v["figures"]["event_vs_cupti"]) EXPECT_TRUE(f["claimed"].get<bool>()) << f["fixture"];
  std::ifstream in(dir / "summary.md");
  const std::string summary((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(summary.find("**replay** of"), std::string::npos);
  EXPECT_NE(summary.find("recorded by `build-h200/bench --size 64,256"), std::string::npos);
}

TEST(ReplayH200, DroppedRecordsInTheSessionFailValidation) {
  RawSession raw = read_raw_session(kSession);
  raw.meta.dropped_records = 7;
  const fs::path dir = fresh_dir("xb_replay_h200_dropped");
  fs::create_directories(dir);
  write_run_outputs(raw, dir);
  const ValidationReport report = validate_run_dir(dir);
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.status_of(checks::kNoDroppedRecords), CheckStatus::Failed);
}

TEST(ReplayH200, ReplayRefusesANonEmptyOutputFolderAndBadFiles) {
  const fs::path dir = fresh_dir("xb_replay_h200_busy");
  fs::create_directories(dir);
  std::ofstream(dir / "keep.txt") << "precious";
  std::ostringstream log;
  EXPECT_ANY_THROW(replay_session(kSession, dir, log));
  EXPECT_TRUE(fs::exists(dir / "keep.txt"));
  EXPECT_FALSE(fs::exists(dir / "table.json"));
  const fs::path bad = fresh_dir("xb_not_json.json");
  std::ofstream(bad) << "{\"records\": [";
  const fs::path bad_out = fresh_dir("xb_replay_bad");
  EXPECT_THROW(replay_session(bad, bad_out, log), InputError);
  EXPECT_FALSE(fs::exists(bad_out));
  fs::remove(bad);
}

}  // namespace
}  // namespace xb
