// Inputs of `bench qualify` (see qualify_files.h; formats in docs/formats.md, "Qualification").
#include "bench/qualify/qualify_files.h"

#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "bench/cli/cli.h"
#include "bench/core/fixture_json.h"
#include "bench/core/fixture_plan.h"
#include "bench/core/fixture_records.h"
#include "bench/core/run_dir.h"
#include "common/stats.h"
#include "common/strict_json.h"
#include "kernels/workload.h"
#include "profiler/model/session_io.h"

namespace xb {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using namespace strict_json;

TimingMode check_mode(const std::string& mode, const std::string& where) {
  const std::optional<TimingMode> m = timing_mode_named(mode);
  if (!m) fail(where, fmt::format("unknown mode {} (choose hot or cold)", quote_input(mode)));
  return *m;
}

/// Reads the optional stopping keys of `obj` into `s`.
void read_stopping(const json& obj, StoppingSettings& s, const std::string& where) {
  if (!obj.is_object()) fail(where, "\"stopping\" is not an object");
  only_keys(obj, {"max_noise_pct", "min_samples", "min_time_s", "max_time_s"}, where);
  if (obj.contains("max_noise_pct")) {
    const double pct = need_number(obj, "max_noise_pct", where);
    if (!(pct > 0 && pct <= 100)) fail(where, "max_noise_pct must be in (0, 100]");
    s.max_noise_fraction = pct / 100;
  }
  if (obj.contains("min_samples")) s.min_samples = static_cast<int>(need_int(obj, "min_samples", where, 10, 1000000));
  if (obj.contains("min_time_s")) s.min_time_s = need_number(obj, "min_time_s", where);
  if (obj.contains("max_time_s")) s.max_time_s = need_number(obj, "max_time_s", where);
  if (!(s.min_time_s >= 0 && s.min_time_s <= 600)) fail(where, "min_time_s must be in [0, 600]");
  if (!(s.max_time_s > 0 && s.max_time_s <= 3600)) fail(where, "max_time_s must be in (0, 3600]");
  if (s.max_time_s < s.min_time_s) fail(where, "max_time_s must be at least min_time_s");
}

GpuClockSample parse_sample(const json& obj, const std::string& where) {
  if (!obj.is_object()) fail(where, "not an object");
  GpuClockSample s;
  s.valid = need_bool(obj, "valid", where);
  constexpr std::int64_t kBig = 1'000'000;
  s.sm_clock_mhz = static_cast<int>(need_int(obj, "sm_clock_mhz", where, -1, kBig));
  s.mem_clock_mhz = static_cast<int>(need_int(obj, "mem_clock_mhz", where, -1, kBig));
  s.temperature_c = static_cast<int>(need_int(obj, "temperature_c", where, -1000, kBig));
  s.power_w = need_number(obj, "power_w", where);
  const json& mask = need(obj, "throttle_reasons", where);
  if (!mask.is_number_unsigned() && !(mask.is_number_integer() && mask.get<std::int64_t>() >= 0)) {
    fail(where, "\"throttle_reasons\" is not a non-negative integer");
  }
  s.throttle_reasons = mask.get<std::uint64_t>();
  s.throttled = need_bool(obj, "throttled", where);
  if (obj.contains("error")) s.error = need_string(obj, "error", where);
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Suite

std::string SuiteFixture::name() const { return fixture_name(op, dtype, size); }
std::string SuiteFixture::key() const { return name() + " (" + to_string(mode) + ")"; }

std::vector<TimingMode> Suite::modes() const {
  std::vector<TimingMode> out;
  for (const SuiteFixture& f : fixtures) {
    if (std::find(out.begin(), out.end(), f.mode) == out.end()) out.push_back(f.mode);
  }
  return out;
}

Suite parse_suite(std::string_view text) {
  const std::string where = "suite";
  const json doc = parse_json(text, where);
  check_header(doc, "suite", where);
  only_keys(doc, {"crossbench", "name", "description", "warmup", "stopping", "fixtures"}, where);
  Suite s;
  s.name = need_string(doc, "name", where);
  if (s.name.empty()) fail(where, "\"name\" is empty");
  if (doc.contains("description")) s.description = need_string(doc, "description", where);
  if (doc.contains("warmup")) s.warmup = need_bool(doc, "warmup", where);
  StoppingSettings defaults;
  if (doc.contains("stopping")) read_stopping(doc["stopping"], defaults, where + ": stopping");
  const json& fixtures = need_array(doc, "fixtures", where);
  if (fixtures.empty()) fail(where, "\"fixtures\" is empty");
  if (fixtures.size() > 10000) fail(where, fmt::format("{} fixtures (at most 10000)", fixtures.size()));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < fixtures.size(); ++i) {
    const std::string at = fmt::format("{}: fixtures[{}]", where, i);
    const json& f = fixtures[i];
    if (!f.is_object()) fail(at, "not an object");
    only_keys(f, {"op", "dtype", "size", "mode", "stopping"}, at);
    SuiteFixture sf;
    sf.op = need_string(f, "op", at);
    sf.dtype = need_string(f, "dtype", at);
    try {
      parse_op(sf.op);
    } catch (const std::invalid_argument&) {
      fail(at, fmt::format("unknown op {} (choose matmul, add, addmm, addmm_bias1d)", quote_input(sf.op)));
    }
    try {
      parse_dtype(sf.dtype);
    } catch (const std::invalid_argument&) {
      fail(at, fmt::format("unknown dtype {} (choose bf16, fp16, fp32)", quote_input(sf.dtype)));
    }
    sf.size = need_int(f, "size", at, 1, kMaxSquareSize);
    sf.mode = check_mode(need_string(f, "mode", at), at);
    sf.stopping = defaults;
    if (f.contains("stopping")) read_stopping(f["stopping"], sf.stopping, at + ": stopping");
    if (!seen.insert(sf.key()).second) fail(at, fmt::format("{} is listed twice", sf.key()));
    s.fixtures.push_back(std::move(sf));
  }
  return s;
}

Suite read_suite(const fs::path& path) {
  const std::string text = read_text_file(path);
  try {
    return parse_suite(text);
  } catch (const InputError& e) {
    throw InputError(path.string() + ": " + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Baseline

const FixtureRecord* Baseline::find(const std::string& key) const {
  for (const FixtureRecord& f : fixtures) {
    if (f.key() == key) return &f;
  }
  return nullptr;
}

void write_baseline_json(const Baseline& b, std::ostream& out) {
  const RunEnvironment& e = b.environment;
  const json header{{"format", "baseline"}, {"version", 1}, {"created_utc", b.created_utc}};
  const json env = environment_json(e, /*full_clocks=*/true);
  out << "{\"crossbench\": " << header.dump() << ",\n \"suite\": " << json(b.suite).dump()
      << ",\n \"environment\": " << env.dump() << ",\n \"fixtures\": [";
  for (std::size_t i = 0; i < b.fixtures.size(); ++i) {
    const FixtureRecord& f = b.fixtures[i];
    if (f.samples_ns.empty()) throw std::invalid_argument("baseline: fixture " + f.key() + " has no samples");
    std::vector<double> samples;
    samples.reserve(f.samples_ns.size());
    for (double x : f.samples_ns) {
      if (!std::isfinite(x)) throw std::invalid_argument("baseline: fixture " + f.key() + " has a non-finite sample");
      samples.push_back(std::round(x * 1000) / 1000);
    }
    const SampleStats st = compute_stats(samples);
    json fj{{"name", f.name},
            {"op", f.op},
            {"dtype", f.dtype},
            {"size", f.size},
            {"mode", to_string(f.mode)},
            {"flops", f.flops},
            {"bytes", f.bytes},
            {"launches_per_sample", f.launches_per_sample},
            {"warmed_up", f.warmed_up},
            {"stop", to_string(f.stop)},
            {"max_noise", f.max_noise},
            {"sampling_s", f.sampling_s},
            {"throttled", f.gpu_before.throttled || f.gpu_after.throttled},
            {"gpu_before", gpu_sample_json(f.gpu_before)},
            {"gpu_after", gpu_sample_json(f.gpu_after)},
            {"stats", sample_stats_json(st)}};
    if (f.batch_min_s > 0) fj["batch_min_s"] = f.batch_min_s;           // optional: absent means none
    if (f.sm_clock) fj["sm_clock"] = sm_clock_range_json(*f.sm_clock);  // optional: absent means not recorded
    std::string head = fj.dump();
    head.pop_back();  // the closing brace: samples follow
    out << (i == 0 ? "\n  " : ",\n  ") << head << ",\n   \"samples_ns\": " << json(samples).dump() << "}";
  }
  out << "\n ]}\n";
}

namespace {

/// A baseline fixture's "sm_clock" (optional: its run recorded per-sample SM clocks).
SmClockRange parse_sm_clock(const json& j, const std::string& at) {
  SmClockRange r;
  r.samples = static_cast<std::size_t>(need_int(j, "samples", at, 1, std::numeric_limits<std::int64_t>::max()));
  r.min_mhz = need_number(j, "min_mhz", at);
  r.median_mhz = need_number(j, "median_mhz", at);
  r.max_mhz = need_number(j, "max_mhz", at);
  if (!(r.min_mhz > 0 && r.min_mhz <= r.median_mhz && r.median_mhz <= r.max_mhz))
    fail(at, "min_mhz <= median_mhz <= max_mhz, all positive, does not hold");
  return r;
}

}  // namespace

Baseline parse_baseline(std::string_view text) {
  const std::string where = "baseline";
  const json doc = parse_json(text, where);
  check_header(doc, "baseline", where);
  Baseline b;
  b.created_utc = need_string(need(doc, "crossbench", where), "created_utc", where + ": crossbench");
  b.suite = need_string(doc, "suite", where);
  const std::string ew = where + ": environment";
  const json& env = need_object(doc, "environment", where);
  RunEnvironment& e = b.environment;
  e.gpu_name = need_string(env, "gpu_name", ew);
  if (e.gpu_name.empty()) fail(ew, "\"gpu_name\" is empty");
  e.gpu_uuid = need_string(env, "gpu_uuid", ew);
  if (env.contains("gpu_pci_bus_id")) e.gpu_pci_bus_id = need_string(env, "gpu_pci_bus_id", ew);
  e.driver_version = need_string(env, "driver_version", ew);
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  e.cuda_driver_version = static_cast<int>(need_int(env, "cuda_driver_version", ew, 0, kIntMax));
  e.cuda_runtime_version = static_cast<int>(need_int(env, "cuda_runtime_version", ew, 0, kIntMax));
  e.cublas_version = static_cast<int>(need_int(env, "cublas_version", ew, 0, kIntMax));
  e.cupti_version = static_cast<std::uint32_t>(need_int(env, "cupti_version", ew, 0, 0xffffffffLL));
  e.power_limit_w = need_number(env, "power_limit_w", ew);
  e.sm_clock_max_mhz = static_cast<int>(need_int(env, "sm_clock_max_mhz", ew, -1, kIntMax));
  e.mem_clock_max_mhz = static_cast<int>(need_int(env, "mem_clock_max_mhz", ew, -1, kIntMax));
  e.clocks_at_start = parse_sample(need(env, "clocks_at_start", ew), ew + ": clocks_at_start");
  e.clocks_at_end = parse_sample(need(env, "clocks_at_end", ew), ew + ": clocks_at_end");

  const json& fixtures = need_array(doc, "fixtures", where);
  if (fixtures.empty()) fail(where, "\"fixtures\" is empty");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < fixtures.size(); ++i) {
    const std::string at = fmt::format("{}: fixtures[{}]", where, i);
    const json& f = fixtures[i];
    if (!f.is_object()) fail(at, "not an object");
    FixtureRecord r;
    r.name = need_string(f, "name", at);
    r.op = need_string(f, "op", at);
    r.dtype = need_string(f, "dtype", at);
    r.size = need_int(f, "size", at, 1, kMaxSquareSize);
    if (r.name != fixture_name(r.op, r.dtype, r.size)) {
      fail(at, fmt::format("name {} is not op/dtype/size ({}/{}/{})", quote_input(r.name), r.op, r.dtype, r.size));
    }
    r.mode = check_mode(need_string(f, "mode", at), at);
    r.flops = need_number(f, "flops", at);
    r.bytes = need_number(f, "bytes", at);
    if (r.flops < 0 || r.bytes < 0) fail(at, "flops and bytes must not be negative");
    r.launches_per_sample = static_cast<int>(need_int(f, "launches_per_sample", at, 1, 1000000));
    r.warmed_up = need_bool(f, "warmed_up", at);
    const std::string stop = need_string(f, "stop", at);
    r.stop = stop_reason_named(stop);
    if (!r.stop) fail(at, fmt::format("stop {} is not \"converged\" or \"timed out\"", quote_input(stop)));
    r.max_noise = need_number(f, "max_noise", at);
    r.sampling_s = need_number(f, "sampling_s", at);
    if (f.contains("batch_min_s")) {  // optional: recorded where a power or thermal limit held the clock
      r.batch_min_s = need_number(f, "batch_min_s", at);
      if (!(r.batch_min_s > 0)) fail(at, "batch_min_s must be positive");
    }
    if (f.contains("sm_clock")) r.sm_clock = parse_sm_clock(need_object(f, "sm_clock", at), at + ": sm_clock");
    r.gpu_before = parse_sample(need(f, "gpu_before", at), at + ": gpu_before");
    r.gpu_after = parse_sample(need(f, "gpu_after", at), at + ": gpu_after");
    const json& samples = need_array(f, "samples_ns", at);
    if (samples.empty()) fail(at, "\"samples_ns\" is empty");
    r.samples_ns.reserve(samples.size());
    for (std::size_t k = 0; k < samples.size(); ++k) {
      if (!samples[k].is_number()) fail(at, fmt::format("samples_ns[{}] is not a number", k));
      const double x = samples[k].get<double>();
      if (!std::isfinite(x) || !(x > 0))
        fail(at, fmt::format("samples_ns[{}] = {} is not a positive finite number", k, x));
      r.samples_ns.push_back(x);
    }
    const json& stats = need_object(f, "stats", at);
    const std::int64_t count = need_int(stats, "count", at + ": stats", 0, std::numeric_limits<std::int64_t>::max());
    if (static_cast<std::size_t>(count) != r.samples_ns.size()) {
      fail(at, fmt::format("stats.count {} is not the number of samples ({})", count, r.samples_ns.size()));
    }
    const double median = need_number(stats, "median_ns", at + ": stats");
    const double actual = compute_stats(r.samples_ns).median;
    if (std::fabs(median - actual) > 1e-6 * std::fabs(actual) + 1e-9) {
      fail(at, fmt::format("stats.median_ns {} is not the median of the samples ({})", median, actual));
    }
    if (!seen.insert(r.key()).second) fail(at, fmt::format("{} is listed twice", r.key()));
    b.fixtures.push_back(std::move(r));
  }
  return b;
}

Baseline read_baseline(const fs::path& path) {
  const std::string text = read_text_file(path);
  try {
    return parse_baseline(text);
  } catch (const InputError& e) {
    throw InputError(path.string() + ": " + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Run folders

LoadedRun load_run(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir.string() + ": not a run folder");
  LoadedRun r;
  r.dir = dir;
  r.label = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
  const RawSession raw = read_recorded_session(dir / "raw_session.json");
  r.meta = raw.meta;
  for (const FixtureInfo& f : read_fixtures(raw)) r.fixtures.push_back(record_of(f));
  r.validation = validate_run_dir(dir);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Command line

std::optional<QualifyOptions> parse_qualify_args(int argc, const char* const* argv) {
  QualifyOptions opt;
  CLI::App app{"bench qualify: runs a suite, validates every run folder and gates each fixture against a baseline"};
  app.name("bench qualify");
  app.footer(
      "exit codes: 0 all pass, 1 regression or validation failure, 2 usage or input error (one line, nothing "
      "written), 3 inconclusive only");
  std::string suite, baseline, out;
  std::vector<std::string> slow, from;
  double threshold = 0;
  std::vector<std::string> aggregate;
  std::string devices;
  app.add_option(
      "--suite", suite,
      "suite file (JSON, docs/formats.md), e.g. results/suites/release.json (required, except with --aggregate)");
  app.add_option(
      "--baseline", baseline,
      "baseline file to compare against (or to write, with --update-baseline) (required, except with --aggregate)");
  app.add_option("--out", out, "folder for the run folders and reports (default results/qualify/<UTC time>-<pid>)");
  app.add_flag("--allow-mismatch", opt.allow_mismatch,
               "compare against a baseline from another GPU, driver, CUDA or cuBLAS version (every report says so)");
  app.add_flag("--update-baseline", opt.update_baseline,
               "write the baseline from this run (atomically) instead of comparing");
  app.add_option("--threshold", threshold,
                 "regression threshold, percent, for every fixture (default: 3 for compute- and memory-bound, 10 for "
                 "overhead-bound)");
  app.add_option("--slow-fixture", slow, "add a US microsecond delay to every call of fixture NAME (tests the gate)");
  app.add_option("--from-run", from, "gate these existing run folders instead of running the suite (repeatable)");
  app.add_option("--devices", devices,
                 "qualify each device in its own process into OUT/device-N, then compare the devices side by "
                 "side (devices.md) and merge their reports (aggregate.md, .xml, .json)");
  app.add_option("--aggregate", aggregate,
                 "merge qualifications (qualify.json files, or folders searched for them: one per node or device) into "
                 "one report with a verdict per node (aggregate.md, .xml, .json in --out); runs nothing");
  if (!parse_command_line(app, argc, argv, one_line)) return std::nullopt;
  if (!aggregate.empty()) {
    for (const char* flag : {"--suite", "--baseline", "--allow-mismatch", "--update-baseline", "--threshold",
                             "--slow-fixture", "--from-run"}) {
      if (app.count(flag) > 0)
        throw UsageError(std::string("--aggregate merges recorded qualifications; it takes no ") + flag);
    }
    for (const std::string& d : aggregate) {
      if (d.empty()) throw UsageError("empty --aggregate path");
      opt.aggregate.emplace_back(d);
    }
    if (app.count("--out") > 0 && out.empty()) throw UsageError("empty --out folder");
    opt.out = out;
    return opt;
  }
  if (app.count("--suite") == 0) throw UsageError("--suite is required");
  if (app.count("--baseline") == 0) throw UsageError("--baseline is required");
  if (suite.empty()) throw UsageError("empty --suite file name");
  if (baseline.empty()) throw UsageError("empty --baseline file name");
  if (app.count("--out") > 0 && out.empty()) throw UsageError("empty --out folder");
  opt.suite = suite;
  opt.baseline = baseline;
  opt.out = out;
  if (app.count("--threshold") > 0) {
    if (!(threshold > 0 && threshold <= 100)) throw UsageError("--threshold must be in (0, 100] percent");
    opt.threshold_pct = threshold;
  }
  for (const std::string& item : slow) {
    auto [name, us] = parse_slow_fixture(item);
    if (!opt.slow_fixtures_us.emplace(name, us).second) throw UsageError("--slow-fixture names " + name + " twice");
  }
  for (const std::string& d : from) {
    if (d.empty()) throw UsageError("empty --from-run folder");
    opt.from_runs.emplace_back(d);
  }
  if (opt.update_baseline && !opt.slow_fixtures_us.empty()) {
    throw UsageError("--slow-fixture cannot be recorded into a baseline (--update-baseline): it is a deliberate delay");
  }
  if (!opt.from_runs.empty() && !opt.slow_fixtures_us.empty()) {
    throw UsageError("--slow-fixture needs a live run; --from-run gates folders already recorded");
  }
  return opt;
}

fs::path default_qualify_dir() {
  return fs::path("results") / "qualify" / (utc_time("%Y%m%d-%H%M%S") + "-" + std::to_string(::getpid()));
}

}  // namespace xb
