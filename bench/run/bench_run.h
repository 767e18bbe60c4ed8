// One `bench` run on the GPU as a reusable function: runs a list of fixtures through Google
// Benchmark with the blocking kernel, records them with CUPTI, writes the run folder and validates
// it. The plain `bench` command runs it once; `bench qualify` once per mode of its suite.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/cli/cli.h"
#include "bench/core/fixtures.h"
#include "bench/core/stopping_rule.h"
#include "common/stats.h"

namespace xb {

/// What one run measures beyond `BenchOptions`' run-wide settings.
struct BenchPlan {
  std::vector<FixtureSpec> fixtures;  ///< in run order; each name at most once
  /// Per fixture name: a stopping rule replacing the run-wide one (BenchOptions' --max-noise, ...).
  std::map<std::string, StoppingRule::Config> stopping;
  /// Per fixture name: a known delay in microseconds added to every call (--slow-fixture).
  std::map<std::string, double> delay_us;
  /// The stream the instances enqueue on and the core times (blocking kernel, events, L2 flush);
  /// empty: a stream of the run's own. crossbench.bench from Python passes the caller's current
  /// stream, which may be the legacy default stream (0), hence the optional.
  std::optional<cudaStream_t> stream;
};

/// The plan of a plain `bench` command: op x dtype x size of `options` and its --slow-fixture
/// delays, no per-fixture stopping rules.
BenchPlan plan_from_options(const BenchOptions& options);

/// Runs `plan` with the run-wide settings of `options` (mode, warm-up, schedule, stopping rule,
/// blocking, CUPTI, --benchmark_* flags) into `options.out` (default results/runs/<UTC time>-<pid>),
/// or replays options.replay. Prints Google Benchmark's table, the run folder and the validation
/// summary to stdout, failed fixtures to stderr. Returns 0 when every fixture ran and validation
/// passed, else 1. Throws UsageError (no device, a fixture that does not fit in device memory, a
/// delay naming no fixture of the plan, a bad --benchmark_* flag, a bad XB_WAIT_DEADLINE_S, an
/// unusable folder) before the folder is created, InputError / ProfilerError / CudaError as the
/// pieces it calls do, and RunEndedByDevice (bench/core/device_failure.h) when a device fault or
/// a hung call ended the run: the fixtures before it written and validated, the rest not run.
/// May be called more than once in one process (Google Benchmark's registrations are cleared).
int run_bench(const BenchOptions& options, const BenchPlan& plan, const char* argv0);

/// The plain run of bench's command line over the registered benchmarks: parse_bench_args (with
/// `help_footer` ending --help), then run_bench. Returns the exit code; throws as run_bench.
/// `bench_executable`: the caller is bench's main, which dispatches its commands (sweep, qualify,
/// ...) and --devices before calling this (bench/main/main.cpp); --help then lists --devices.
/// Otherwise (xb::main: a user's program, linked with the measuring core alone) --devices and a
/// first argument that is not an option are refused with a UsageError saying that they are
/// commands of the bench executable.
int run_main(int argc, char** argv, const std::string& help_footer, bool bench_executable = false);

/// Runs `command` under the exit-code policy of every bench command: UsageError and InputError
/// print "<program>: error: <what>" and give 2, ProfilerError the same with "CUPTI: " (and, with
/// `cupti_hint`, the --no-cupti advice), RunEndedByDevice its line as it is and 1, any other
/// std::exception 1. <program> is argv0's file name. After a hung call (cuda_hung_s) it does not
/// return: it flushes stdout and stderr and ends the process with std::_Exit(code), since the
/// CUDA runtime's teardown would wait for the hung kernel forever.
int run_command(const char* argv0, bool cupti_hint, const std::function<int()>& command);

}  // namespace xb
