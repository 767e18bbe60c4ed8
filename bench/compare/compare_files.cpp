// Inputs of `bench compare` (see compare_files.h; docs/compare.md).
#include "bench/compare/compare_files.h"

#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "bench/cli/cli.h"
#include "bench/core/fixture_json.h"
#include "bench/core/run_dir.h"
#include "common/errors.h"
#include "common/strict_json.h"
#include "profiler/model/session_io.h"

namespace xb {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using namespace strict_json;

/// The recording window of a file's crossbench block: the same in every file of one recording,
/// whenever each was written (a replay's validation.json is written later, with a later created_utc).
std::pair<std::int64_t, std::int64_t> recording_window(const json& meta, const std::string& where) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  return {need_int(meta, "window_start_ns", where, 0, kMax), need_int(meta, "window_end_ns", where, 0, kMax)};
}

/// events.json: its recording time and window, CUDA versions and fixtures.
void read_events(const fs::path& path, RunFolder& r) {
  const std::string where = path.string();
  const json doc = parse_json(read_text_file(path), where);
  check_header(doc, "events", where);
  const json& meta = need_object(doc, "crossbench", where);
  r.created_utc = need_string(meta, "created_utc", where + ": crossbench");
  r.window_ns = recording_window(meta, where + ": crossbench");
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  r.environment.cuda_driver_version = static_cast<int>(need_int(meta, "cuda_driver_version", where, 0, kIntMax));
  r.environment.cuda_runtime_version = static_cast<int>(need_int(meta, "cuda_runtime_version", where, 0, kIntMax));
  r.environment.cublas_version = static_cast<int>(need_int(meta, "cublas_version", where, 0, kIntMax));
  r.environment.cupti_version = static_cast<std::uint32_t>(need_int(meta, "cupti_version", where, 0, 0xffffffffLL));
  const json& fixtures = need_array(doc, "fixtures", where);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < fixtures.size(); ++i) {
    RunFixture f;
    const FixtureInfo info = parse_fixture_json(fixtures[i], i, where);
    f.record = record_of(info);
    f.graph = info.timing.graph;
    if (!seen.insert(f.key()).second) fail(where, fmt::format("fixture {} is listed twice", f.key()));
    r.fixtures.push_back(std::move(f));
  }
}

/// The environment beyond events.json's versions: raw_session.json's meta, else summary.md's GPU line.
void read_environment(const fs::path& dir, RunFolder& r) {
  std::error_code ec;
  if (fs::is_regular_file(dir / "raw_session.json", ec)) {
    const RunEnvironment versions = r.environment;
    r.environment = environment_of(read_recorded_session(dir / "raw_session.json").meta);
    r.environment_source = "raw_session.json";
    if (r.environment.cuda_runtime_version <= 0) r.environment.cuda_runtime_version = versions.cuda_runtime_version;
    return;
  }
  r.environment_source = "events.json and summary.md";
  r.not_recorded = {"driver", "power limit", "maximum clocks", "GPU PCI bus id"};
  if (fs::is_regular_file(dir / "summary.md", ec)) {
    if (const auto gpu = summary_gpu_line(read_text_file(dir / "summary.md"))) {
      r.environment.gpu_name = gpu->first;
      r.environment.gpu_uuid = gpu->second;
      return;
    }
  }
  r.not_recorded.insert(r.not_recorded.begin(), "GPU name");
}

/// validation.json: present, of the recording events.json is of, and passed.
void read_validation(const fs::path& dir, RunFolder& r) {
  const fs::path path = dir / "validation.json";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    r.validation = "no validation.json (the folder was never validated: validate " + dir.string() + ")";
    return;
  }
  const std::string where = path.string();
  const json doc = parse_json(read_text_file(path), where);
  check_header(doc, "validation", where);
  const auto window = recording_window(need_object(doc, "crossbench", where), where + ": crossbench");
  const bool passed = need_bool(doc, "passed", where);
  std::string counts;
  if (doc.contains("summary") && doc["summary"].is_object()) {
    const json& s = doc["summary"];
    const auto n = [&](const char* k) {
      return s.contains(k) && s[k].is_number_integer() ? s[k].get<long long>() : 0LL;
    };
    counts = fmt::format(" ({} passed, {} failed, {} noisy, {} not run)", n("passed"), n("failed"), n("noisy"),
                         n("not_run"));
  }
  if (window != r.window_ns) {
    r.validation =
        fmt::format("validation.json is of another recording (window {}..{} ns against events.json's {}..{})",
                    window.first, window.second, r.window_ns.first, r.window_ns.second);
    return;
  }
  r.validated = passed;
  r.validation = (passed ? "passed" : "FAILED") + counts;
}

}  // namespace

const RunFixture* RunFolder::find(const std::string& key) const {
  for (const RunFixture& f : fixtures) {
    if (f.key() == key) return &f;
  }
  return nullptr;
}

std::optional<std::pair<std::string, std::string>> summary_gpu_line(const std::string& summary_md) {
  const std::string head = "- GPU: ";
  std::size_t at = 0;
  while (at < summary_md.size()) {
    const std::size_t end = std::min(summary_md.find('\n', at), summary_md.size());
    std::string line = summary_md.substr(at, end - at);
    at = end + 1;
    if (line.rfind(head, 0) != 0) continue;
    line = line.substr(head.size());
    std::string uuid;
    const std::size_t open = line.rfind(" (GPU-");
    if (open != std::string::npos && line.back() == ')') {
      uuid = line.substr(open + 2, line.size() - open - 3);
      line = line.substr(0, open);
    }
    if (line.empty()) return std::nullopt;
    return std::make_pair(line, uuid);
  }
  return std::nullopt;
}

RunFolder read_run_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir.string() + ": not a run folder (no such folder)");
  if (!fs::is_regular_file(dir / "events.json", ec))
    throw InputError(dir.string() +
                     ": not a run folder (no events.json: bench, xb::main and crossbench.bench write one)");
  RunFolder r;
  r.dir = dir;
  read_events(dir / "events.json", r);
  read_environment(dir, r);
  read_validation(dir, r);
  return r;
}

std::vector<RunDifference> run_differences(const RunEnvironment& a, const RunEnvironment& b) {
  std::vector<RunDifference> out;
  for (const EnvironmentDifference& d : compare_environments(a, b)) {
    const bool explains = d.refuses || d.what == "power limit" || d.what.rfind("max ", 0) == 0;
    out.push_back({d.what, d.baseline, d.now, explains});
  }
  return out;
}

std::optional<CompareOptions> parse_compare_args(int argc, const char* const* argv) {
  CompareOptions opt;
  CLI::App app{
      "bench compare A B: is run B faster or slower than run A? Per fixture in both run folders, the shift of B "
      "against A with its interval and one verdict: SAME, FASTER, SLOWER or AMBIGUOUS (docs/compare.md)"};
  app.name("bench compare");
  app.footer(
      "exit codes: 0 nothing slower or ambiguous, 1 a fixture slower or failed, or a run not validated (not "
      "claimed), 2 usage or input error (one line, nothing written), 3 ambiguous only");
  std::string run_a, run_b;
  std::string out;
  double threshold = 0, overhead = 0;
  app.add_option("RUN_A", run_a, "run A: the run folder before the change")->required();
  app.add_option("RUN_B", run_b, "run B: the run folder after the change")->required();
  app.add_option("--out", out, "folder for compare.md and compare.json (default results/compare/<UTC time>-<pid>)");
  app.add_option(
      "--threshold", threshold,
      "the threshold of every fixture, percent (default: 3 for compute- and memory-bound, 10 for overhead-bound, "
      "at least 5 where both runs were power-capped)");
  app.add_option("--overhead-threshold", overhead,
                 "the threshold of overhead-bound fixtures only, percent (default 10)");
  if (!parse_command_line(app, argc, argv, one_line)) return std::nullopt;
  if (run_a.empty() || run_b.empty()) throw UsageError("empty run folder name");
  opt.a = run_a;
  opt.b = run_b;
  if (app.count("--out") > 0 && out.empty()) throw UsageError("empty --out folder");
  opt.out = out;
  if (app.count("--threshold") > 0 && app.count("--overhead-threshold") > 0)
    throw UsageError("--threshold sets every fixture's threshold; give it or --overhead-threshold, not both");
  if (app.count("--threshold") > 0) {
    if (!(threshold > 0 && threshold <= 100)) throw UsageError("--threshold must be in (0, 100] percent");
    opt.threshold_pct = threshold;
  }
  if (app.count("--overhead-threshold") > 0) {
    if (!(overhead > 0 && overhead <= 100)) throw UsageError("--overhead-threshold must be in (0, 100] percent");
    opt.overhead_threshold_pct = overhead;
  }
  return opt;
}

fs::path default_compare_dir() {
  return fs::path("results") / "compare" / (utc_time("%Y%m%d-%H%M%S") + "-" + std::to_string(::getpid()));
}

}  // namespace xb
