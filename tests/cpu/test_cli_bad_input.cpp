// Bad input to the real `bench` executable, table-driven (issue 8): every case must exit with code
// 2, print exactly one line on stderr ("bench: error: ...", "bench sweep: error: ...", naming the bad item, never the
// no-device message that valid arguments get on a machine without a GPU) and nothing on stdout,
// and write nothing: each case runs in a sandbox folder (its working directory, so the default
// results/runs/<time> would land there too) whose whole tree, with sizes and modification times,
// must be the same afterwards.
//
// Sizes that do not fit in device memory need a GPU: tests/gpu/test_profiler_gpu.cpp
// (BenchRefusesSizesThatDoNotFitInDeviceMemory).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace xb {
namespace {

namespace fs = std::filesystem;

/// One bad command line. "{dir}" in an argument stands for the sandbox folder.
struct BadInput {
  const char* name;                  ///< gtest name
  std::vector<std::string> args;     ///< bench's arguments
  std::vector<std::string> needles;  ///< each must appear in the error line
  /// Prepares the sandbox (files the case refers to); runs before the "before" snapshot.
  std::function<void(const fs::path&)> setup = nullptr;
};

/// gtest prints a failing case by its name.
void PrintTo(const BadInput& c, std::ostream* os) { *os << c.name; }

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const fs::path kSession = fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small-2026-11-29" / "raw_session.json";

void existing_run(const fs::path& d) { write_text(d / "old_run" / "table.txt", "an earlier run\n"); }
void a_file(const fs::path& d) { write_text(d / "a_file", "not a folder\n"); }
void corrupt_session(const fs::path& d) { write_text(d / "corrupt.json", read_text(kSession).substr(0, 4000)); }
void wrong_format(const fs::path& d) {
  write_text(d / "events.json", "{\"crossbench\": {\"format\": \"events\", \"version\": 1}, \"fixtures\": []}\n");
}
void newer_version(const fs::path& d) {
  write_text(d / "v2.json", "{\"crossbench\": {\"format\": \"raw_session\", \"version\": 2}}\n");
}
void empty_file(const fs::path& d) { write_text(d / "empty.json", ""); }

// Every kind of bad input. Needles are what the one line must name.
const std::vector<BadInput>& cases() {
  static const std::vector<BadInput> all = {
      // Sizes.
      {"SizeZero", {"--size", "0"}, {"'0'"}},
      {"SizeNegative", {"--size=-5"}, {"'-5'", "negative"}},
      {"SizeNegativeInList", {"--size", "64,-1"}, {"'-1'"}},
      {"SizeNonNumeric", {"--size", "abc"}, {"'abc'"}},
      {"SizeFraction", {"--size", "1.5"}, {"'1.5'"}},
      {"SizeHex", {"--size", "0x40"}, {"'0x40'"}},
      {"SizeOverflowsInt64", {"--size", "99999999999999999999999"}, {"99999999999999999999999", "too large"}},
      {"SizeAboveLimit", {"--size", "2000000"}, {"'2000000'", "too large"}},
      {"SizeDuplicate", {"--size", "64,256,64"}, {"duplicate size '64'"}},
      {"SizeDuplicateAcrossFlags", {"--size", "64", "--size", "64"}, {"duplicate size '64'"}},
      {"SizeEmptyList", {"--size", ""}, {"empty", "size"}},
      {"SizeEmptyItem", {"--size", "64,,128"}, {"empty", "size"}},
      {"SizeTrailingComma", {"--size", "64,"}, {"empty", "size"}},
      {"SizeMissingValue", {"--size"}, {"--size"}},
      // Ops, dtypes, modes.
      {"OpUnknown", {"--op", "conv"}, {"'conv'"}},
      {"OpEmptyList", {"--op", ""}, {"empty", "op"}},
      {"OpDuplicate", {"--op", "add,add"}, {"duplicate op 'add'"}},
      {"OpWrongCase", {"--op", "MatMul"}, {"'MatMul'"}},
      {"DtypeUnknown", {"--dtype", "fp8"}, {"'fp8'"}},
      {"DtypeEmptyList", {"--dtype", ""}, {"empty", "dtype"}},
      {"DtypeDuplicate", {"--dtype", "bf16,fp16,bf16"}, {"duplicate dtype 'bf16'"}},
      {"ModeUnknown", {"--mode", "warm"}, {"'warm'"}},
      // Schedule.
      {"ActiveStepsZero", {"--active-steps", "0"}, {"--active-steps"}},
      {"ActiveStepsNonNumeric", {"--active-steps", "many"}, {"--active-steps"}},
      {"ActiveStepsOverflowsInt", {"--active-steps", "99999999999"}, {"--active-steps"}},
      {"ActiveStepsTooMany", {"--active-steps", "100001"}, {"--active-steps"}},
      {"WaitStepsNegative", {"--wait-steps=-1"}, {"--wait-steps"}},
      {"WarmupStepsTooMany", {"--warmup-steps", "100001"}, {"--warmup-steps"}},
      // Unknown flags, Google Benchmark flags.
      {"UnknownFlag", {"--sizes", "64"}, {"--sizes"}},
      {"UnexpectedPositional", {"64"}, {"64"}},
      {"UnknownBenchmarkFlag", {"--benchmark_nonsense=1"}, {"--benchmark_nonsense"}},
      {"BadBenchmarkFlagValue", {"--benchmark_repetitions=abc"}, {"--benchmark_repetitions"}},
      {"BadBenchmarkFormat", {"--benchmark_format=xml"}, {"--benchmark_format"}},
      {"BadBenchmarkMinTime", {"--benchmark_min_time=abc"}, {"--benchmark_min_time"}},
      // Conflicting flags.
      {"ReplayWithSize", {"--replay", "{dir}/x.json", "--size", "64"}, {"--replay", "--size"}},
      {"ReplayWithWarmup", {"--replay", "{dir}/x.json", "--warmup"}, {"--replay", "--warmup"}},
      {"ReplayWithMode", {"--replay", "{dir}/x.json", "--mode", "cold"}, {"--replay", "--mode"}},
      {"ReplayWithBenchmarkFlag", {"--replay", "{dir}/x.json", "--benchmark_filter=add"}, {"--benchmark_filter"}},
      {"ColdModeWithBatch", {"--mode", "cold", "--batch", "4"}, {"--batch"}},
      // Output folder.
      {"OutEmpty", {"--out", ""}, {"empty --out"}},
      {"OutUnderProc", {"--out", "/proc/xb-bench-out"}, {"/proc/xb-bench-out"}},
      {"OutUnderAFile", {"--out", "{dir}/a_file/run"}, {"{dir}/a_file/run", "not a folder"}, a_file},
      {"OutIsAFile", {"--out", "{dir}/a_file"}, {"{dir}/a_file", "not a folder"}, a_file},
      {"OutExistsNotEmpty", {"--out", "{dir}/old_run"}, {"{dir}/old_run", "not empty"}, existing_run},
      {"ReplayOutExistsNotEmpty",
       {"--replay", kSession.string(), "--out", "{dir}/old_run"},
       {"{dir}/old_run", "not empty"},
       existing_run},
      {"ReplayOutUnderProc", {"--replay", kSession.string(), "--out", "/proc/xb-bench-out"}, {"/proc/xb-bench-out"}},
      // Replay input.
      {"ReplayEmptyName", {"--replay", ""}, {"empty --replay"}},
      {"ReplayMissingFile", {"--replay", "{dir}/missing.json"}, {"{dir}/missing.json", "cannot open"}},
      {"ReplayAFolder", {"--replay", "{dir}"}, {"{dir}", "a directory"}},
      {"ReplayEmptyFile", {"--replay", "{dir}/empty.json"}, {"{dir}/empty.json"}, empty_file},
      {"ReplayTruncatedFile",
       {"--replay", "{dir}/corrupt.json"},
       {"{dir}/corrupt.json: raw_session: not valid JSON: truncated at byte 4000"},
       corrupt_session},
      {"ReplayWrongFormat", {"--replay", "{dir}/events.json"}, {"{dir}/events.json", "raw_session"}, wrong_format},
      {"ReplayNewerVersion", {"--replay", "{dir}/v2.json"}, {"{dir}/v2.json", "version 2"}, newer_version},
      {"ReplayAChromeTrace",
       {"--replay", (fs::path(XB_TEST_DATA_DIR) / "torch-h200" / "64_bf16_add.json").string()},
       {"64_bf16_add.json: a Chrome trace", "not a raw_session.json", "validate --trace"}},
      // Subcommands.
      {"SweepSizeZero", {"sweep", "--size", "0"}, {"'0'"}},
      {"SweepCeilingsMissing", {"sweep", "--ceilings", "{dir}/missing.json"}, {"{dir}/missing.json"}},
      {"SweepOutExistsNotEmpty", {"sweep", "--out", "{dir}/old_run"}, {"{dir}/old_run", "not empty"}, existing_run},
      {"CalibrateUnknownFlag", {"calibrate", "--nonsense"}, {"--nonsense"}},
      {"CalibrateOutExistsNotEmpty",
       {"calibrate", "--out", "{dir}/old_run"},
       {"{dir}/old_run", "not empty"},
       existing_run},
      {"OverheadRepsZero", {"overhead", "--breakdown", "--reps", "0"}, {"--reps"}},
      {"OverheadUnknownOp", {"overhead", "--op", "conv"}, {"conv"}},
      {"OverheadSizeList", {"overhead", "--size", "64,128"}, {"'64,128'", "positive integer"}},
#ifdef XB_LAB  // bench tune-add ships with -DXB_LAB=ON only
      {"TuneAddSizeZero", {"tune-add", "--size", "0"}, {"'0'"}},
      {"TuneAddUnknownDtype", {"tune-add", "--dtype", "int8"}, {"int8"}},
      {"TuneAddLaunchesZero", {"tune-add", "--launches", "0"}, {"--launches"}},
      {"TuneAddPassesTooMany", {"tune-add", "--passes", "101"}, {"--passes"}},
      {"TuneAddEmptyOut", {"tune-add", "--out", ""}, {"--out"}},
      {"TuneAddOutFolderMissing", {"tune-add", "--out", "{dir}/no/such.json"}, {"{dir}/no", "does not exist"}},
#endif
      {"OverheadOutIsAFolder", {"overhead", "--out", "{dir}"}, {"{dir}", "is a folder"}},
      {"AbOneOp", {"ab", "--op", "matmul"}, {"--op", "two"}},
      {"AbNoOp", {"ab"}, {"--op"}},
      {"AbSameOpTwice", {"ab", "--op", "matmul,matmul"}, {"matmul"}},
      {"AbNegativeWarmup", {"ab", "--op", "matmul,add", "--warmup-s", "-1"}, {"--warmup-s"}},
      {"AbBadDtype", {"ab", "--op", "matmul,add", "--dtype", "fp8"}, {"fp8"}},
      {"AbTwoDtypes", {"ab", "--op", "matmul,add", "--dtype", "bf16,fp16"}, {"--dtype", "one dtype"}},
  };
  return all;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// Single-quotes an argument for sh.
std::string quoted(const std::string& arg) { return "'" + replace_all(arg, "'", "'\\''") + "'"; }

/// Every path under `root`: files with mode, size and modification time, folders with their
/// mode (a folder's own time changes when bench proves it can create folders there, with a probe
/// folder it removes at once: bench/core/run_dir.h check_run_dir).
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    struct stat st {};
    ::lstat(it->path().c_str(), &st);
    std::string what = std::to_string(st.st_mode);
    if (!S_ISDIR(st.st_mode)) {
      what += " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
              std::to_string(st.st_mtim.tv_nsec);
    }
    out[fs::relative(it->path(), root).string()] = what;
  }
  return out;
}

struct Result {
  int code = -1;
  std::string out, err;
};

/// Runs `exe` (bench by default) in `cwd` with stdout and stderr captured apart (60 s limit: a
/// case that slipped through to a real benchmark on a GPU machine must not hang the suite).
Result run_bench(const fs::path& cwd, const std::vector<std::string>& args, const char* exe = XB_BENCH_EXE) {
  const fs::path out_file = cwd.parent_path() / "stdout.txt", err_file = cwd.parent_path() / "stderr.txt";
  std::string cmd = "cd " + quoted(cwd.string()) + " && exec timeout 60 " + quoted(exe);
  for (const std::string& a : args) cmd += " " + quoted(a);
  cmd += " >" + quoted(out_file.string()) + " 2>" + quoted(err_file.string()) + " </dev/null";
  Result r;
  const int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out_file);
  r.err = read_text(err_file);
  fs::remove(out_file);
  fs::remove(err_file);
  return r;
}

class BenchBadInput : public ::testing::TestWithParam<BadInput> {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("xb_cli_bad-" + std::to_string(::getpid()) + "-" + GetParam().name);
    fs::remove_all(root_);
    sandbox_ = root_ / "sandbox";
    fs::create_directories(sandbox_ / "cwd");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_, sandbox_;
};

TEST_P(BenchBadInput, ExitsTwoWithOneLineNamingItAndWritesNothing) {
  const BadInput& c = GetParam();
  if (c.setup) c.setup(sandbox_);
  std::vector<std::string> args;
  for (const std::string& a : c.args) args.push_back(replace_all(a, "{dir}", sandbox_.string()));
  const auto before = snapshot(sandbox_);

  const Result r = run_bench(sandbox_ / "cwd", args);

  std::string shown;
  for (const std::string& a : args) shown += " " + quoted(a);
  SCOPED_TRACE("bench" + shown);
  EXPECT_EQ(r.code, 2) << "stderr: " << r.err << "stdout: " << r.out;
  EXPECT_EQ(r.out, "") << "nothing on stdout";
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.back(), '\n') << r.err;
  // A subcommand's errors name it ("bench sweep: error: ..."), the plain bench's "bench: error: ...".
  const std::set<std::string> subcommands{"sweep", "calibrate", "qualify", "compare", "ab", "overhead", "tune-add"};
  const bool sub = !args.empty() && subcommands.count(args[0]) > 0;
  EXPECT_EQ(r.err.rfind(sub ? "bench " + args[0] + ": error: " : std::string("bench: error: "), 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("no CUDA device"), std::string::npos)
      << "the bad input must be reported before the device check: " << r.err;
  for (const std::string& n : c.needles) {
    const std::string needle = replace_all(n, "{dir}", sandbox_.string());
    EXPECT_NE(r.err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << r.err;
  }
  EXPECT_EQ(snapshot(sandbox_), before) << "bench wrote or changed something";
  EXPECT_FALSE(fs::exists("/proc/xb-bench-out"));
}

INSTANTIATE_TEST_SUITE_P(Table, BenchBadInput, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<BadInput>& p) { return std::string(p.param.name); });

TEST(BenchBadInputTable, CoversAtLeastTwentyKinds) { EXPECT_GE(cases().size(), 20u); }

// `validate` on files that are not of one profile (issue 37 item 5): exit 2, one line naming the
// files, nothing on stdout and nothing written (--report, --markdown, a run folder's
// validation.json), never findings that blame PyTorch.
const fs::path kTorch = fs::path(XB_TEST_DATA_DIR) / "torch-h200";
const fs::path kE2e = fs::path(XB_RESULTS_DIR) / "h200" / "2026-11-29-e2e";

/// A copy of a crossbench run folder whose events.json is of another recording (its window
/// starts 1 ms later).
void run_with_other_events(const fs::path& d) {
  for (const char* f : {"table.json", "trace_only.json", "full.json"}) write_text(d / "run" / f, read_text(kE2e / f));
  std::string ev = read_text(kE2e / "events.json");
  const std::string key = "\"window_start_ns\": ";
  const auto at = ev.find(key);
  const auto end = ev.find_first_of(",}", at);
  ev.replace(at + key.size(), end - at - key.size(),
             std::to_string(std::stoll(ev.substr(at + key.size(), end - at - key.size())) + 1000000));
  write_text(d / "run" / "events.json", ev);
}

const std::vector<BadInput>& validate_cases() {
  static const std::vector<BadInput> all = {
      {"TableOfAnotherProfile",
       {"--trace", (kTorch / "64_bf16_add.json").string(), "--table", (kTorch / "4096_bf16_add.txt").string(),
        "--report", "{dir}/v.json", "--markdown", "{dir}/v.md"},
       {"4096_bf16_add.txt is not a table of 64_bf16_add.json's profile", "0 agree", "give the table"}},
      {"TableOfAnotherWorkload",
       {"--trace", (kTorch / "64_bf16_matmul.json").string(), "--table", (kTorch / "64_bf16_add.txt").string()},
       {"64_bf16_add.txt is not a table of 64_bf16_matmul.json's profile", "0 agree"}},
      {"TracesOfTwoSessions",
       {"--trace", (kTorch / "64_bf16_add.json").string(), "--trace", (kTorch / "64_bf16_matmul.json").string()},
       {"64_bf16_add.json and 64_bf16_matmul.json are not of one profiling session"}},
      {"TableGivenAsTrace",
       {"--trace", (kTorch / "64_bf16_add.txt").string(), "--table", (kTorch / "64_bf16_add.json").string()},
       {"64_bf16_add.txt: a PyTorch key_averages().table() text, not a trace: pass it with --table"}},
      {"RunFolderWithAnotherRunsEvents",
       {"{dir}/run"},
       {"full.json and events.json are not of one recording", "1000000 ns apart"},
       run_with_other_events},
  };
  return all;
}

class ValidateBadInput : public BenchBadInput {};

TEST_P(ValidateBadInput, ExitsTwoWithOneLineNamingTheFilesAndWritesNothing) {
  const BadInput& c = GetParam();
  if (c.setup) c.setup(sandbox_);
  std::vector<std::string> args;
  for (const std::string& a : c.args) args.push_back(replace_all(a, "{dir}", sandbox_.string()));
  const auto before = snapshot(sandbox_);
  const Result r = run_bench(sandbox_ / "cwd", args, XB_VALIDATE_EXE);
  EXPECT_EQ(r.code, 2) << "stderr: " << r.err << "stdout: " << r.out;
  EXPECT_EQ(r.out, "") << "nothing on stdout";
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("validate: error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("pytorch#"), std::string::npos) << r.err;
  for (const std::string& n : c.needles) EXPECT_NE(r.err.find(n), std::string::npos) << n << " in: " << r.err;
  EXPECT_EQ(snapshot(sandbox_), before) << "validate wrote or changed something";
}

INSTANTIATE_TEST_SUITE_P(NotOneProfile, ValidateBadInput, ::testing::ValuesIn(validate_cases()),
                         [](const ::testing::TestParamInfo<BadInput>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace xb
