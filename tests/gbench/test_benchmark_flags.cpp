// Google Benchmark's own flags still work through `bench`: parse_bench_args (bench/cli/cli.cpp) hands
// every --benchmark_* flag on untouched, and Google Benchmark accepts them and acts on them
// (--benchmark_filter selects fixtures, --benchmark_repetitions repeats them and adds aggregates,
// --benchmark_out writes its JSON where asked).
//
// Without a GPU `bench` stops at its device check before Google Benchmark runs, so this test
// builds Google Benchmark's argv from the parsed options the way bench/main/main.cpp does (its own
// flags, then the default JSON output into the run folder unless the user named one) and runs
// stand-in fixtures registered as bench registers its own: named op/dtype/size, one iteration,
// manual time in microseconds. Its own executable: Google Benchmark's flags are process-global.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/cli/cli.h"

namespace fs = std::filesystem;

namespace xb {
namespace {

BenchOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "bench");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  const auto opt = parse_bench_args(static_cast<int>(argv.size()), argv.data());
  if (!opt) throw std::runtime_error("--help printed");
  return *opt;
}

/// Google Benchmark's argv as bench/main/main.cpp builds it: argv0, the user's --benchmark_* flags in
/// order, then JSON output into the run folder unless the user gave --benchmark_out.
std::vector<std::string> google_benchmark_args(const BenchOptions& opt, const fs::path& default_out) {
  std::vector<std::string> args{"bench"};
  bool user_out = false;
  for (const std::string& a : opt.benchmark_args) {
    user_out = user_out || a.rfind("--benchmark_out=", 0) == 0;
    args.push_back(a);
  }
  if (!user_out) {
    args.push_back("--benchmark_out=" + default_out.string());
    args.push_back("--benchmark_out_format=json");
  }
  return args;
}

/// benchmark::Initialize on `args`; returns what it left unconsumed (bench reports those as
/// unrecognized Google Benchmark flags). Google Benchmark's flags are process-global and ctest
/// runs each test in its own process; so that the whole executable also passes in one process,
/// the flags these tests set are first put back to Google Benchmark's defaults (later flags win).
std::vector<std::string> initialize(std::vector<std::string> args) {
  const std::vector<std::string> defaults{"--benchmark_filter=.", "--benchmark_repetitions=1",
                                          "--benchmark_report_aggregates_only=false",
                                          "--benchmark_out=", "--benchmark_out_format=json"};
  args.insert(args.begin() + 1, defaults.begin(), defaults.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  return std::vector<std::string>(argv.begin() + 1, argv.begin() + argc);
}

/// Stand-ins for bench's fixtures (bench/core/fixtures_gpu.cpp register_fixtures): same naming and options.
void register_stand_ins() {
  static bool registered = false;
  if (registered) return;
  registered = true;
  const std::map<std::string, double> fixtures{
      {"matmul/bf16/64", 4.4e-6}, {"add/bf16/64", 3.3e-6}, {"add/bf16/4096", 24.3e-6}};
  for (const auto& [name, seconds] : fixtures) {
    const double s = seconds;
    benchmark::RegisterBenchmark(name.c_str(),
                                 [s](benchmark::State& state) {
                                   for (auto _ : state) state.SetIterationTime(s);
                                   state.counters["GB/s"] = 1.0;
                                 })
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

std::size_t run_quietly() {
  std::ostringstream sink;
  benchmark::ConsoleReporter console;
  console.SetOutputStream(&sink);
  console.SetErrorStream(&sink);
  return benchmark::RunSpecifiedBenchmarks(&console);
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return nlohmann::json::parse(in);
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("xb-gbench-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(GoogleBenchmarkFlags, PassThroughTheParserInOrder) {
  const BenchOptions opt =
      parse({"--benchmark_filter=^add/", "--size", "64", "--benchmark_repetitions=3", "--op", "add",
             "--benchmark_out=/tmp/gb.json", "--benchmark_out_format=json", "--benchmark_min_time=0.01"});
  EXPECT_EQ(opt.benchmark_args, (std::vector<std::string>{"--benchmark_filter=^add/", "--benchmark_repetitions=3",
                                                          "--benchmark_out=/tmp/gb.json", "--benchmark_out_format=json",
                                                          "--benchmark_min_time=0.01"}));
  EXPECT_EQ(opt.sizes, std::vector<std::int64_t>{64});
  EXPECT_EQ(opt.ops, std::vector<std::string>{"add"});
}

TEST(GoogleBenchmarkFlags, NeedTheirValueAfterAnEqualsSign) {
  // Google Benchmark reads only --benchmark_x=value; the value as a separate word is no flag of
  // bench's either, so it is a usage error rather than silently dropped.
  EXPECT_THROW(parse({"--benchmark_repetitions", "3"}), UsageError);
  EXPECT_THROW(parse({"--benchmark_filter", "add"}), UsageError);
}

TEST(GoogleBenchmarkFlags, AreAllConsumedByGoogleBenchmark) {
  const BenchOptions opt =
      parse({"--benchmark_filter=add/bf16/64", "--benchmark_repetitions=3", "--benchmark_out=/tmp/never-written.json",
             "--benchmark_out_format=json", "--benchmark_report_aggregates_only=true"});
  EXPECT_TRUE(initialize(google_benchmark_args(opt, "/tmp/unused.json")).empty());
  EXPECT_EQ(benchmark::GetBenchmarkFilter(), "add/bf16/64");
}

TEST(GoogleBenchmarkFlags, AMistypedFlagIsLeftForBenchToReport) {
  // bench/main/main.cpp turns anything Initialize leaves into "unrecognized Google Benchmark flag".
  const BenchOptions opt = parse({"--benchmark_filtr=add"});
  EXPECT_EQ(initialize(google_benchmark_args(opt, "/tmp/unused.json")),
            std::vector<std::string>{"--benchmark_filtr=add"});
}

TEST(GoogleBenchmarkFlags, FilterRepetitionsAndOutTakeEffect) {
  const fs::path dir = temp_dir("flags");
  const fs::path out = dir / "gb.json";
  const BenchOptions opt = parse({"--benchmark_filter=^add/", "--benchmark_repetitions=3",
                                  "--benchmark_out=" + out.string(), "--benchmark_out_format=json"});
  register_stand_ins();
  ASSERT_TRUE(initialize(google_benchmark_args(opt, dir / "default.json")).empty());
  EXPECT_EQ(run_quietly(), 2u);  // add/bf16/64 and add/bf16/4096
  EXPECT_FALSE(fs::exists(dir / "default.json")) << "the user's --benchmark_out replaces the default";

  const nlohmann::json doc = read_json(out);
  std::map<std::string, std::set<int>> repetitions;
  std::map<std::string, std::set<std::string>> aggregates;
  for (const auto& b : doc.at("benchmarks")) {
    const std::string run_name = b.at("run_name").get<std::string>();
    EXPECT_EQ(run_name.rfind("add/", 0), 0u) << run_name << " passed --benchmark_filter=^add/";
    EXPECT_EQ(b.at("repetitions").get<int>(), 3);
    EXPECT_EQ(b.at("time_unit").get<std::string>(), "us");
    if (b.at("run_type") == "iteration") {
      repetitions[run_name].insert(b.at("repetition_index").get<int>());
    } else {
      aggregates[run_name].insert(b.at("aggregate_name").get<std::string>());
    }
  }
  ASSERT_EQ(repetitions.size(), 2u);
  for (const auto& [name, indices] : repetitions) {
    EXPECT_EQ(indices, (std::set<int>{0, 1, 2})) << name;
    EXPECT_TRUE(aggregates[name].count("mean") && aggregates[name].count("median") && aggregates[name].count("stddev"))
        << name;
  }
  fs::remove_all(dir);
}

TEST(GoogleBenchmarkFlags, WithoutBenchmarkOutTheJsonGoesToTheRunFolder) {
  const fs::path dir = temp_dir("default");
  const BenchOptions opt = parse({"--benchmark_filter=matmul"});
  register_stand_ins();
  ASSERT_TRUE(initialize(google_benchmark_args(opt, dir / ".benchmark.json.partial")).empty());
  EXPECT_EQ(run_quietly(), 1u);
  const nlohmann::json doc = read_json(dir / ".benchmark.json.partial");
  ASSERT_EQ(doc.at("benchmarks").size(), 1u);
  EXPECT_EQ(doc["benchmarks"][0].at("name").get<std::string>(), "matmul/bf16/64/iterations:1/manual_time");
  EXPECT_TRUE(doc.at("context").contains("executable"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace xb
