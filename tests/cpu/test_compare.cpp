// `bench compare` on the CPU (issue 39): the Hodges-Lehmann shift against brute force, the verdict
// rules, and the whole comparison on run folders recorded on the H200 (results/h200/core-2026-12-01)
// and folders derived from them here, deterministically: identical runs give SAME; a known delay
// added to one fixture's samples (what `bench --slow-fixture NAME=US` adds: a spin kernel of US
// microseconds after each call) gives SLOWER with the shift inside its interval, and nothing else
// moves; noise alone (two draws from one recorded distribution, fixed seed) stays under the stated
// false-positive rate; mismatched metadata is named and makes the shift AMBIGUOUS; runs not
// validated are not claimed; the executable's exit codes and files.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/compare/compare_report.h"
#include "bench/compare/shift.h"
#include "common/errors.h"

#include "tests/common/run_command.h"

namespace xb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kRunA = fs::path(XB_RESULTS_DIR) / "h200" / "core-2026-12-01" / "bench";
const fs::path kRerecorded = fs::path(XB_RESULTS_DIR) / "h200" / "core-2026-12-01" / "rerecord-fcb2b60" / "bench";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// A scratch folder per test process, removed at exit.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("xb-compare-test-" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};
const fs::path& scratch() {
  static const Scratch s;
  return s.dir;
}

/// A copy of run folder `src` (events.json, validation.json, summary.md) as `name`, with
/// `edit` applied to events.json's document.
fs::path derive(const fs::path& src, const std::string& name, const std::function<void(json&)>& edit = nullptr) {
  const fs::path dst = scratch() / name;
  fs::remove_all(dst);
  fs::create_directories(dst);
  for (const char* f : {"validation.json", "summary.md"}) fs::copy_file(src / f, dst / f);
  json events = json::parse(read(src / "events.json"));
  if (edit) edit(events);
  write(dst / "events.json", events.dump(1));
  return dst;
}

json& fixture_named(json& events, const std::string& name) {
  for (json& f : events["fixtures"]) {
    if (f["name"] == name) return f;
  }
  throw std::runtime_error("no fixture " + name);
}

/// What --slow-fixture NAME=US does to a fixture's samples: US microseconds more per call.
void add_delay(json& events, const std::string& name, double us) {
  for (json& s : fixture_named(events, name)["timing"]["samples_ns"]) s = s.get<double>() + us * 1000;
}

const FixtureComparison& find(const CompareOutcome& o, const std::string& name) {
  for (const FixtureComparison& f : o.fixtures) {
    if (f.name == name) return f;
  }
  throw std::runtime_error("no comparison of " + name);
}

CompareOutcome compare_dirs(const fs::path& a, const fs::path& b, const GateRules& rules = {}) {
  return compare_runs(read_run_folder(a), read_run_folder(b), rules, "2026-12-05T00:00:00Z");
}

// --------------------------------------------------------------------------------------------
// The estimator

TEST(CompareShift, KthPairwiseDifferenceMatchesBruteForce) {
  std::mt19937_64 rng(39);
  for (int round = 0; round < 40; ++round) {
    std::uniform_int_distribution<int> size(1, 60), value(0, round % 2 == 0 ? 5 : 100000);  // ties, then none
    std::vector<double> x(static_cast<std::size_t>(size(rng))), y(static_cast<std::size_t>(size(rng)));
    for (double& v : x) v = value(rng) * 0.37;
    for (double& v : y) v = value(rng) * 0.37 + 1.5;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    std::vector<double> all;
    for (double xi : x)
      for (double yj : y) all.push_back(yj - xi);
    std::sort(all.begin(), all.end());
    for (std::uint64_t k : {std::uint64_t{1}, std::uint64_t{all.size() / 3 + 1}, std::uint64_t{all.size() / 2 + 1},
                            std::uint64_t{all.size()}}) {
      EXPECT_EQ(kth_pairwise_difference(x, y, k), all[k - 1]) << "round " << round << " k " << k;
    }
  }
  EXPECT_THROW(kth_pairwise_difference({1.0}, {2.0}, 2), std::invalid_argument);
}

TEST(CompareShift, HodgesLehmannOfAKnownShiftAndItsRanks) {
  std::vector<double> a, b;
  for (int i = 0; i < 10; ++i) {
    a.push_back(i * 1.0);
    b.push_back(i * 1.0 + 0.25);
  }
  const Shift s = hodges_lehmann_shift(a, b, 0.95);
  EXPECT_DOUBLE_EQ(s.estimate, 0.25);
  ASSERT_TRUE(s.bounded);
  // C = floor(50 + 1/2 - 1.959964 sqrt(100 * 21 / 12)) = 24 (the exact table's value at 10 + 10,
  // 5% two-sided: 23 + 1): the interval is [D_(24), D_(77)] of the 100 sorted differences.
  std::vector<double> all;
  for (double x : a)
    for (double y : b) all.push_back(y - x);
  std::sort(all.begin(), all.end());
  EXPECT_DOUBLE_EQ(s.low, all[23]);
  EXPECT_DOUBLE_EQ(s.high, all[76]);
  EXPECT_FALSE(hodges_lehmann_shift({1, 2}, {3, 4}, 0.99).bounded);  // too few samples for 99%
  EXPECT_THROW(hodges_lehmann_shift({}, {1}, 0.9), std::invalid_argument);
}

TEST(CompareVerdicts, IntervalAgainstThreshold) {
  EXPECT_EQ(verdict_of_interval(-0.01, 0.02, 0.03), CompareVerdict::Same);
  EXPECT_EQ(verdict_of_interval(0.04, 0.06, 0.03), CompareVerdict::Slower);
  EXPECT_EQ(verdict_of_interval(-0.06, -0.04, 0.03), CompareVerdict::Faster);
  EXPECT_EQ(verdict_of_interval(0.02, 0.04, 0.03), CompareVerdict::Ambiguous);
  EXPECT_EQ(verdict_of_interval(-0.05, 0.05, 0.03), CompareVerdict::Ambiguous);
}

// --------------------------------------------------------------------------------------------
// Recorded run folders

TEST(CompareRuns, IdenticalRunsAreSame) {
  const CompareOutcome o = compare_dirs(kRunA, kRunA);
  ASSERT_EQ(o.fixtures.size(), 8u);
  for (const FixtureComparison& f : o.fixtures) {
    EXPECT_EQ(f.verdict, CompareVerdict::Same) << f.key << ": " << f.reason;
    EXPECT_EQ(f.shift, 0.0) << f.key;
  }
  EXPECT_TRUE(o.claimed);
  EXPECT_TRUE(o.differences.empty());
  EXPECT_EQ(o.result(), "same");
  EXPECT_EQ(o.exit_code, 0);
}

TEST(CompareRuns, TheSameJobRecordedTwiceIsNeverSlowerOrFaster) {
  // Two recordings of the main job at two commits without a change to the kernels, on two H200
  // boards: the power-capped 4096 GEMMs may be AMBIGUOUS, nothing is SLOWER or FASTER.
  const CompareOutcome o = compare_dirs(kRunA, kRerecorded);
  ASSERT_EQ(o.fixtures.size(), 8u);
  for (const FixtureComparison& f : o.fixtures) {
    EXPECT_TRUE(f.verdict == CompareVerdict::Same || f.verdict == CompareVerdict::Ambiguous)
        << f.key << ": " << f.reason;
  }
  // Another board of the same model is named, and explains nothing.
  ASSERT_EQ(o.differences.size(), 1u);
  EXPECT_EQ(o.differences[0].what, "GPU UUID");
  EXPECT_FALSE(o.differences[0].explains);
}

TEST(CompareRuns, AKnownDelayIsSlowerByItsSize) {
  const fs::path slow = derive(kRunA, "slow", [](json& e) { add_delay(e, "add/bf16/4096", 2); });
  const CompareOutcome o = compare_dirs(kRunA, slow);
  for (const FixtureComparison& f : o.fixtures) {
    if (f.name != "add/bf16/4096") {
      EXPECT_EQ(f.verdict, CompareVerdict::Same) << f.key;
      continue;
    }
    EXPECT_EQ(f.verdict, CompareVerdict::Slower) << f.reason;
    const double injected = 2000 / f.median_a_ns;  // +2 us on a 26.2 us call: +7.6%
    EXPECT_GE(injected, f.low);
    EXPECT_LE(injected, f.high);
    EXPECT_NEAR(f.shift, injected, 0.002);
    EXPECT_LT(f.high - f.low, 0.01);
  }
  EXPECT_EQ(o.result(), "slower");
  EXPECT_EQ(o.exit_code, 1);
}

TEST(CompareRuns, NoiseAloneStaysUnderTheFalsePositiveRate) {
  // Two sample sets drawn independently from one recorded distribution: no true shift. With a
  // near-zero threshold a verdict other than SAME or AMBIGUOUS means the interval missed zero,
  // which the Mann-Whitney interval at 99% does in at most 1% of draws (the hull with the medians'
  // intervals only widens it); with the default threshold it must never happen.
  const RunFolder run = read_run_folder(kRunA);
  const RunFixture* source = run.find("add/bf16/4096 (hot)");
  ASSERT_NE(source, nullptr);
  std::mt19937_64 rng(20261205);
  std::uniform_int_distribution<std::size_t> pick(0, source->record.samples_ns.size() - 1);
  const auto draw = [&](std::size_t n) {
    RunFixture f = *source;
    f.record.samples_ns.clear();
    for (std::size_t i = 0; i < n; ++i) f.record.samples_ns.push_back(source->record.samples_ns[pick(rng)]);
    f.record.sampling_s = 0;  // independent draws: no time order to widen for
    f.record.batch_min_s = 0;
    return f;
  };
  GateRules strict;
  strict.threshold_override = 1e-9;
  const int draws = 1000;
  int strict_positives = 0, default_positives = 0, hodges_lehmann_misses = 0;
  for (int i = 0; i < draws; ++i) {
    const RunFixture a = draw(100), b = draw(100);
    const FixtureComparison c = compare_fixture(a, b, "NVIDIA H200", {}, strict);
    const CompareVerdict s = c.verdict;
    hodges_lehmann_misses += (c.shift_low > 0 || c.shift_high < 0) ? 1 : 0;
    const CompareVerdict d = compare_fixture(a, b, "NVIDIA H200", {}, GateRules{}).verdict;
    strict_positives += (s == CompareVerdict::Slower || s == CompareVerdict::Faster) ? 1 : 0;
    default_positives += (d == CompareVerdict::Slower || d == CompareVerdict::Faster) ? 1 : 0;
  }
  // The binomial bound: P(X >= 22) < 0.001 for X ~ Binomial(1000, 0.01).
  double tail = 0;
  for (int k = 22; k <= draws; ++k)
    tail += std::exp(std::lgamma(draws + 1.0) - std::lgamma(k + 1.0) - std::lgamma(draws - k + 1.0) +
                     k * std::log(0.01) + (draws - k) * std::log(0.99));
  ASSERT_LT(tail, 0.001);
  std::cout << "noise alone, " << draws << " draws of 100 + 100 samples: " << strict_positives
            << " intervals missed zero (99% stated; the Hodges-Lehmann interval alone: " << hodges_lehmann_misses
            << "), " << default_positives << " SLOWER or FASTER at the default thresholds\n";
  EXPECT_LT(hodges_lehmann_misses, 22);
  EXPECT_LT(strict_positives, 22);
  EXPECT_EQ(default_positives, 0);
}

TEST(CompareRuns, MismatchedMetadataIsNamedAndExplainsTheShift) {
  const fs::path other = derive(kRunA, "other-cublas", [](json& e) {
    e["crossbench"]["cublas_version"] = 130200;
    add_delay(e, "add/bf16/4096", 2);
  });
  const CompareOutcome o = compare_dirs(kRunA, other);
  ASSERT_FALSE(o.differences.empty());
  EXPECT_EQ(o.differences[0].what, "cuBLAS version");
  EXPECT_TRUE(o.differences[0].explains);
  const FixtureComparison& f = find(o, "add/bf16/4096");
  EXPECT_EQ(f.comparison, CompareVerdict::Slower);
  EXPECT_EQ(f.verdict, CompareVerdict::Ambiguous);
  EXPECT_NE(f.reason.find("cuBLAS version differs"), std::string::npos) << f.reason;
  EXPECT_EQ(find(o, "add/bf16/64").verdict, CompareVerdict::Same);  // SAME stays SAME, the difference named
  std::ostringstream md;
  write_compare_markdown(o, md);
  EXPECT_NE(md.str().find("cuBLAS version: '130100' in A, '130200' in B (**can explain**)"), std::string::npos);
}

/// Per-sample clocks as a blocking-mode run records them: `mhz` for every sample but every fifth
/// (on another SM) and the last (no later reading), which are null, with their reasons counted.
void set_sample_clocks(json& fixture, double mhz) {
  json& t = fixture["timing"];
  const std::size_t n = t["samples_ns"].size();
  json clocks = json::array();
  int other_sm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool absent = i + 1 == n || i % 5 == 4;
    if (absent && i + 1 != n) ++other_sm;
    clocks.push_back(absent ? json() : json(mhz));
  }
  t["sample_sm_clock_mhz"] = clocks;
  t["sm_clock_absent"] = {{"other_sm", other_sm}, {"host_gap", 0}, {"short_window", 0}, {"unreadable", 0}, {"last", 1}};
}

TEST(CompareRuns, AnSmClockDifferenceExplainsAShift) {
  // B ran 7% slower at a 7% lower SM clock (per-sample clocks recorded in both, some null).
  const auto clocks = [](double mhz) {
    return [mhz](json& e) {
      json& f = fixture_named(e, "add/bf16/4096");
      if (mhz < 1980) add_delay(e, "add/bf16/4096", 2);
      set_sample_clocks(f, mhz);
    };
  };
  const fs::path a = derive(kRunA, "clock-a", clocks(1980));
  const fs::path b = derive(kRunA, "clock-b", clocks(1840));
  const FixtureComparison f = find(compare_dirs(a, b), "add/bf16/4096");
  EXPECT_EQ(f.clock_source, "per-sample");
  EXPECT_EQ(f.comparison, CompareVerdict::Slower);
  EXPECT_EQ(f.verdict, CompareVerdict::Ambiguous);
  EXPECT_NE(f.reason.find("SM clock 1980 MHz in A, 1840 MHz in B"), std::string::npos) << f.reason;
}

TEST(CompareRuns, PerSampleClocksInOneRunOnlyFallBackToNvml) {
  const fs::path a =
      derive(kRunA, "clock-one", [](json& e) { set_sample_clocks(fixture_named(e, "add/bf16/4096"), 1980); });
  const FixtureComparison f = find(compare_dirs(a, kRunA), "add/bf16/4096");
  EXPECT_NE(f.clock_source, "per-sample");
}

TEST(CompareRuns, ADifferentTimingModeIsPairedAndNamed) {
  const fs::path cold = derive(kRunA, "cold", [](json& e) {
    fixture_named(e, "add/bf16/4096")["timing"]["mode"] = "cold";
    add_delay(e, "add/bf16/4096", 2);
  });
  const FixtureComparison f = find(compare_dirs(kRunA, cold), "add/bf16/4096");
  EXPECT_EQ(f.mode_a, "hot");
  EXPECT_EQ(f.mode_b, "cold");
  EXPECT_EQ(f.verdict, CompareVerdict::Ambiguous);
  EXPECT_NE(f.reason.find("timing mode differs"), std::string::npos) << f.reason;
}

TEST(CompareRuns, RunsNotValidatedAreNotClaimed) {
  const fs::path failed = derive(kRunA, "failed");
  json v = json::parse(read(failed / "validation.json"));
  v["passed"] = false;
  write(failed / "validation.json", v.dump());
  CompareOutcome o = compare_dirs(kRunA, failed);
  EXPECT_FALSE(o.claimed);
  EXPECT_EQ(o.result(), "not claimed");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.not_claimed_because.find("B FAILED"), std::string::npos) << o.not_claimed_because;
  EXPECT_EQ(o.fixtures.size(), 8u);  // the verdicts are still shown

  fs::remove(failed / "validation.json");
  o = compare_dirs(failed, kRunA);
  EXPECT_FALSE(o.claimed);
  EXPECT_NE(o.not_claimed_because.find("A no validation.json"), std::string::npos) << o.not_claimed_because;
}

TEST(CompareRuns, AValidationOfAnotherRecordingIsNotClaimed) {
  const fs::path other = derive(kRunA, "other-validation");
  json v = json::parse(read(other / "validation.json"));
  v["crossbench"]["window_start_ns"] = v["crossbench"]["window_start_ns"].get<std::int64_t>() + 1;
  write(other / "validation.json", v.dump());
  const CompareOutcome o = compare_dirs(kRunA, other);
  EXPECT_FALSE(o.claimed);
  EXPECT_NE(o.not_claimed_because.find("B validation.json is of another recording"), std::string::npos)
      << o.not_claimed_because;
}

TEST(CompareRuns, AReplayedRunFolderIsClaimedWithItsWholeEnvironment) {
  // A replay validates later than the recording (another created_utc), in the same window; its
  // raw_session.json gives the driver and power limit too.
  const fs::path replay = scratch() / "replay";
  const fs::path session = fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small" / "raw_session.json";
  const auto [code, text] =
      testing::run_command(std::string(XB_BENCH_EXE) + " --replay " + session.string() + " --out " + replay.string());
  ASSERT_EQ(code, 0) << text;
  const CompareOutcome o = compare_dirs(replay, replay);
  EXPECT_TRUE(o.claimed) << o.not_claimed_because;
  EXPECT_EQ(o.a.environment_source, "raw_session.json");
  EXPECT_TRUE(o.a.not_recorded.empty());
  EXPECT_FALSE(o.a.environment.driver_version.empty());
  EXPECT_EQ(o.result(), "same");
}

TEST(CompareRuns, FixturesInOneRunOnlyAreListed) {
  const fs::path fewer = derive(kRunA, "fewer", [](json& e) {
    json& fixtures = e["fixtures"];
    fixtures.erase(fixtures.begin());
  });
  const CompareOutcome o = compare_dirs(kRunA, fewer);
  EXPECT_EQ(o.fixtures.size(), 7u);
  ASSERT_EQ(o.only_in_a.size(), 1u);
  EXPECT_EQ(o.only_in_a[0], "matmul/bf16/64 (hot)");
  EXPECT_EQ(o.exit_code, 0);
}

TEST(CompareFiles, SummaryGpuLineAndBadFolders) {
  const auto gpu = summary_gpu_line("# crossbench run\n\n- GPU: NVIDIA H200 (GPU-5d84)\n- recorded: x\n");
  ASSERT_TRUE(gpu);
  EXPECT_EQ(gpu->first, "NVIDIA H200");
  EXPECT_EQ(gpu->second, "GPU-5d84");
  EXPECT_FALSE(summary_gpu_line("no such line"));
  EXPECT_THROW(read_run_folder(scratch() / "missing"), InputError);
  const fs::path broken = derive(kRunA, "broken");
  write(broken / "events.json", "{\"crossbench\": ");
  EXPECT_THROW(read_run_folder(broken), InputError);
  const fs::path clocks = derive(kRunA, "bad-clocks", [](json& e) {
    fixture_named(e, "add/bf16/64")["timing"]["sample_sm_clock_mhz"] = json::array({1980});
  });
  EXPECT_THROW(read_run_folder(clocks), InputError);
  // Null clocks must be as many as the reasons counted in sm_clock_absent.
  const fs::path miscounted = derive(kRunA, "miscounted-clocks", [](json& e) {
    json& f = fixture_named(e, "add/bf16/64");
    set_sample_clocks(f, 1980);
    f["timing"]["sm_clock_absent"]["last"] = 0;
  });
  EXPECT_THROW(read_run_folder(miscounted), InputError);
}

// --------------------------------------------------------------------------------------------
// The executable

TEST(CompareExe, WritesBothReportsAndExitsByTheResult) {
  const fs::path out = scratch() / "exe-out";
  const auto [code, text] = testing::run_command(std::string(XB_BENCH_EXE) + " compare " + kRunA.string() + " " +
                                                 kRunA.string() + " --out " + out.string());
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("result: same (exit 0)"), std::string::npos) << text;
  const json doc = json::parse(read(out / "compare.json"));
  EXPECT_EQ(doc["crossbench"]["format"], "compare");
  EXPECT_EQ(doc["result"], "same");
  EXPECT_EQ(doc["fixtures"].size(), 8u);
  EXPECT_NE(read(out / "compare.md").find("**Result: same** (exit 0)"), std::string::npos);

  const fs::path slow = derive(kRunA, "exe-slow", [](json& e) { add_delay(e, "add/bf16/4096", 2); });
  EXPECT_EQ(testing::run_command(std::string(XB_BENCH_EXE) + " compare " + kRunA.string() + " " + slow.string() +
                                 " --out " + (scratch() / "exe-slow-out").string())
                .first,
            1);
}

TEST(CompareExe, BadInputIsOneLineAndWritesNothing) {
  const fs::path out = scratch() / "exe-bad";
  for (const std::string& args : {kRunA.string() + " " + (scratch() / "nope").string(), kRunA.string(),
                                  kRunA.string() + " " + kRunA.string() + " --threshold 0"}) {
    const auto [code, text] =
        testing::run_command(std::string(XB_BENCH_EXE) + " compare " + args + " --out " + out.string());
    EXPECT_EQ(code, 2) << args << ": " << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}

}  // namespace
}  // namespace xb
