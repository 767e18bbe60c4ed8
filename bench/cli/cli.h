// Command line of `bench` (parsing and checking only; no GPU, no files touched).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace xb {

/// Bad command-line input; `bench` prints "bench: error: <what>" and exits with code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Everything `bench` was asked to do.
struct BenchOptions {
  /// Sizes n, each 1..kMaxSize; empty (no --size): each benchmark's own sizes, else kDefaultSizes.
  std::vector<std::int64_t> sizes;
  /// Registered benchmarks to run (bench/core/api.h); empty (no --op): every registered one.
  std::vector<std::string> ops;
  /// dtypes; empty (no --dtype): each benchmark's first dtype (bf16 for crossbench's own ops).
  std::vector<std::string> dtypes;
  bool warmup = false;          ///< run each fixture until steady before recording
  int wait_steps = 1;           ///< schedule: steps not recorded
  int warmup_steps = 2;         ///< schedule: steps recorded then discarded
  int active_steps = 20;        ///< schedule: recorded steps (ProfilerStep#N)
  std::string mode = "hot";     ///< "hot": back-to-back launches per sample; "cold": L2 flushed before each sample
  int batch = 0;                ///< hot mode: launches per sample (0 = enough for ~kHotBatchTargetNs of GPU time)
  double max_noise_pct = 0.5;   ///< stopping rule: target relative standard deviation of the samples, percent
  int min_samples = 10;         ///< stopping rule: at least this many samples
  double min_time_s = 0.5;      ///< stopping rule: at least this many seconds of sampling
  double max_time_s = 3.0;      ///< stopping rule: at most this many seconds of sampling per fixture
  bool blocking = true;         ///< hold the stream with the blocking kernel while a sample is enqueued
  bool cupti = true;            ///< record with the CUPTI profiler (false: event-only mode)
  std::filesystem::path out;    ///< run folder; empty = results/runs/<UTC time>
  std::optional<std::filesystem::path> replay;  ///< regenerate outputs from a raw session
  std::vector<std::string> benchmark_args;      ///< --benchmark_* flags passed to Google Benchmark
  /// --slow-fixture NAME=US: a known delay of US microseconds added to every call of fixture NAME
  /// (a spin kernel after each workload call; for testing `bench qualify`'s gate).
  std::map<std::string, double> slow_fixtures_us;
};

/// Sizes run when neither --size nor the benchmark names any.
inline const std::vector<std::int64_t> kDefaultSizes{64, 4096};

/// Largest size any benchmark accepts on the command line (a user's benchmark may count elements:
/// 2^40 leaves n * 16 bytes within int64). A benchmark may take less (BenchmarkDef::max_size);
/// whether a size fits in device memory is checked separately, against the GPU in use.
constexpr std::int64_t kMaxSize = std::int64_t{1} << 40;

/// Largest size of crossbench's own ops (n x n): n fits cuBLAS's 32-bit dimensions and n^2
/// elements fit int64 with room to spare. Sweeps and suites, which run only those ops, use it.
constexpr std::int64_t kMaxSquareSize = 1 << 20;

/// Most launches per hot-mode sample. Everything of one sample is queued behind the blocking
/// kernel before the host releases it; CUDA's launch queue holds about a thousand pending
/// launches (nvbench caps its batches for the same reason), and an addmm launch is two calls.
constexpr int kMaxBatch = 256;

/// Splits "a,b,,c" at `sep` into {"a", "b", "", "c"} (a trailing separator gives a last "").
std::vector<std::string> split_list(const std::string& text, char sep = ',');
/// Joins repeated option values with commas.
std::string join_list(const std::vector<std::string>& values);

/// Parses one size: a decimal integer in [1, kMaxSize]. Throws UsageError naming the item.
std::int64_t parse_size(const std::string& item);

/// Parses repeated and/or comma-separated op (dtype) names. Throws UsageError on an unknown,
/// duplicate or empty name.
std::vector<std::string> parse_op_list(const std::vector<std::string>& values);
std::vector<std::string> parse_dtype_list(const std::vector<std::string>& values);

/// Parses a comma-separated size list: each item a decimal integer in [1, kMaxSize], no
/// duplicates. Throws UsageError naming the offending item.
std::vector<std::int64_t> parse_size_list(const std::string& text);

/// Checks an --out FILE argument before any measurement: not empty, not a folder, and its folder
/// exists (the file itself is written atomically at the end). Throws UsageError naming it.
void check_out_file(const std::string& path);

/// Longest --slow-fixture delay, us (the spin kernel's limit, kernels/spin_delay.h: 1 s).
constexpr double kMaxSlowFixtureUs = 1e6;

/// Parses one --slow-fixture item "op/dtype/size=US": a known op, dtype and size, and a decimal
/// number of microseconds in (0, kMaxSlowFixtureUs]. Returns {"op/dtype/size", US}. Throws
/// UsageError naming the item and what is wrong.
std::pair<std::string, double> parse_slow_fixture(const std::string& item);

/// Parses argv with a command's CLI11 `app`, as `bench` and each of its subcommands do: on --help
/// prints the help on stdout and returns false; on bad input (a CLI11 ParseError) throws
/// UsageError with CLI11's message, first passed through `tidy` when one is given. Returns true
/// when argv was parsed.
bool parse_command_line(CLI::App& app, int argc, const char* const* argv,
                        std::string (*tidy)(std::string) = nullptr);

/// Parses argv. Throws UsageError on any bad input (unknown flag, op, dtype, bad size, ...).
/// Returns std::nullopt when --help or --version was printed. `footer` ends the help text (bench:
/// its subcommands). The program's name in the help is argv[0]'s file name.
std::optional<BenchOptions> parse_bench_args(int argc, const char* const* argv, const std::string& footer = "");

}  // namespace xb
