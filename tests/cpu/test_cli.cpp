// bench's command line: every kind of bad input gives a UsageError naming the value; the bench
// executable turns it into one line on stderr, exit code 2, and writes nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include "../common/run_command.h"

#include <cuda_runtime_api.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/cli/cli.h"
#include "bench/core/fixture_plan.h"

namespace xb {
namespace {

std::optional<BenchOptions> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "bench");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_bench_args(static_cast<int>(argv.size()), argv.data());
}

TEST(Cli, Defaults) {
  const auto opt = parse({});
  ASSERT_TRUE(opt);
  // Empty lists mean "each benchmark's own": every registered op, its first dtype, its sizes
  // (crossbench's own ops have none, so kDefaultSizes).
  EXPECT_TRUE(opt->sizes.empty());
  EXPECT_TRUE(opt->ops.empty());
  EXPECT_TRUE(opt->dtypes.empty());
  EXPECT_FALSE(opt->warmup);
  const std::vector<FixtureSpec> specs = fixture_specs(*opt);
  ASSERT_EQ(specs.size(), 8u);  // 4 ops x bf16 x {64, 4096}
  EXPECT_EQ(specs.front().op, "matmul");
  EXPECT_EQ(specs.front().dtype, "bf16");
  EXPECT_EQ(specs.front().size, 64);
  EXPECT_EQ(specs.back().op, "addmm_bias1d");
  EXPECT_EQ(specs.back().size, 4096);
}

TEST(Cli, BuiltinOpsTakeSizesUpToTheirSquareLimit) {
  // The command line takes any size up to kMaxSize (a user's benchmark may count elements); the
  // built-in ops are n x n and stop at kMaxSquareSize, before anything runs.
  auto opt = parse({"--size", "2000000", "--op", "add"});
  ASSERT_TRUE(opt);
  try {
    fixture_specs(*opt);
    FAIL() << "size 2000000 accepted for add";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'2000000' is too large for add (at most 1048576)"), std::string::npos)
        << e.what();
  }
  opt = parse({"--size", "1048576", "--op", "add"});
  ASSERT_TRUE(opt);
  EXPECT_EQ(fixture_specs(*opt).size(), 1u);
}

TEST(Cli, ListsAndFlags) {
  const auto opt = parse({"--size", "64,256", "--op", "add", "--dtype", "fp16,fp32", "--warmup", "--out", "/tmp/x",
                          "--active-steps", "3", "--benchmark_filter=add"});
  ASSERT_TRUE(opt);
  EXPECT_EQ(opt->sizes, (std::vector<std::int64_t>{64, 256}));
  EXPECT_EQ(opt->ops, std::vector<std::string>{"add"});
  EXPECT_EQ(opt->dtypes, (std::vector<std::string>{"fp16", "fp32"}));
  EXPECT_TRUE(opt->warmup);
  EXPECT_EQ(opt->active_steps, 3);
  EXPECT_EQ(opt->out, "/tmp/x");
  EXPECT_EQ(opt->benchmark_args, std::vector<std::string>{"--benchmark_filter=add"});
}

struct BadCase {
  std::vector<std::string> args;
  std::string needle;  // must appear in the message
};

/// gtest (and ctest's test names, through gtest_discover_tests) print a case as its arguments,
/// not as the struct's bytes.
void PrintTo(const BadCase& c, std::ostream* os) {
  for (std::size_t i = 0; i < c.args.size(); ++i) *os << (i > 0 ? " " : "") << c.args[i];
}

class CliBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(CliBad, IsAUsageErrorNamingTheValue) {
  try {
    parse(GetParam().args);
    FAIL() << "accepted bad input";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().needle), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, CliBad,
    ::testing::Values(
        BadCase{{"--size", "0"}, "'0'"}, BadCase{{"--size=-1"}, "'-1'"}, BadCase{{"--size", "abc"}, "'abc'"},
        BadCase{{"--size", "64,abc"}, "'abc'"}, BadCase{{"--size", "99999999999999999999999"}, "too large"},
        BadCase{{"--size", "2000000000000"}, "too large"}, BadCase{{"--size", "64,64"}, "duplicate size '64'"},
        BadCase{{"--size", ""}, "empty"}, BadCase{{"--size", "64,,128"}, "empty"}, BadCase{{"--size", "1.5"}, "'1.5'"},
        BadCase{{"--op", "conv"}, "'conv'"}, BadCase{{"--op", "add,add"}, "duplicate op"},
        BadCase{{"--dtype", "fp8"}, "'fp8'"}, BadCase{{"--dtype", ""}, "empty"},
        BadCase{{"--active-steps", "0"}, "--active-steps"}, BadCase{{"--wait-steps", "-2"}, "--wait-steps"},
        BadCase{{"--nonsense"}, "nonsense"}, BadCase{{"--replay", "x.json", "--size", "64"}, "--replay"},
        BadCase{{"--replay", "x.json", "--warmup"}, "--warmup"},
        BadCase{{"--replay", "x.json", "--benchmark_filter=x"}, "--benchmark_filter"},
        BadCase{{"--replay", ""}, "empty --replay"}, BadCase{{"--out", ""}, "empty --out"},
        BadCase{{"--warmup-steps", "100001"}, "--warmup-steps"}),
    [](const ::testing::TestParamInfo<BadCase>& param) { return "case" + std::to_string(param.index); });

TEST(BenchExe, BadInputExitsTwoWithOneLineAndWritesNothing) {
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("xb_cli_bad_out-" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  for (const std::string args : {"--size 0", "--size -1", "--size abc", "--op conv", "--dtype fp8"}) {
    const auto [code, text] =
        xb::testing::run_command(std::string(XB_BENCH_EXE) + " " + args + " --out " + out.string());
    EXPECT_EQ(code, 2) << args << ": " << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << args << ": " << text;
    EXPECT_EQ(text.rfind("bench: error: ", 0), 0u) << text;
    EXPECT_FALSE(std::filesystem::exists(out)) << args;
  }
}

TEST(BenchExe, NoDeviceIsAClearErrorWithExitTwo) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
    GTEST_SKIP() << "a CUDA device is present; this test covers machines without one";
  }
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("xb_cli_nodev_out-" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  const auto [code, text] = xb::testing::run_command(std::string(XB_BENCH_EXE) + " --size 64 --out " + out.string());
  EXPECT_EQ(code, 2) << text;
  EXPECT_NE(text.find("no CUDA device"), std::string::npos) << text;
  // The advice's command as invoked (the path run, not only its file name), so it runs as printed.
  EXPECT_NE(text.find(std::string(XB_BENCH_EXE) + " --replay"), std::string::npos) << text;
  EXPECT_FALSE(std::filesystem::exists(out));
  // Why, in words: no driver at all, or a driver older than the runtime (with both versions).
  int driver = 0;
  cudaDriverGetVersion(&driver);
  EXPECT_NE(text.find(driver == 0 ? "no NVIDIA driver is installed" : "older than this build's runtime"),
            std::string::npos)
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "one line: " << text;
}

}  // namespace
}  // namespace xb
