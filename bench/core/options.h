// What a bench run is asked to do, and the limits every command shares: the measuring layer's
// vocabulary, which the command line (bench/cli/cli.h) fills in. Plain C++.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/core/stopping_rule.h"
#include "bench/core/timing_mode.h"
#include "common/errors.h"  // UsageError

namespace xb {

/// Everything `bench` was asked to do.
struct BenchOptions {
  /// Sizes n, each 1..kMaxSize; empty (no --size): each benchmark's own sizes, else kDefaultSizes.
  std::vector<std::int64_t> sizes;
  /// Registered benchmarks to run (bench/core/api.h); empty (no --op): every registered one.
  std::vector<std::string> ops;
  /// dtypes; empty (no --dtype): each benchmark's first dtype (bf16 for crossbench's own ops).
  std::vector<std::string> dtypes;
  bool warmup = false;                ///< run each fixture until steady before recording
  int wait_steps = 1;                 ///< schedule: steps not recorded
  int warmup_steps = 2;               ///< schedule: steps recorded then discarded
  int active_steps = 20;              ///< schedule: recorded steps (ProfilerStep#N)
  TimingMode mode = TimingMode::Hot;  ///< hot: back-to-back launches per sample; cold: L2 flushed before each sample
  int batch = 0;                      ///< hot mode: launches per sample (0 = enough for ~kHotBatchTargetNs of GPU time)
  /// The command line as given (argv joined with spaces), recorded in raw_session.json's meta "run"
  /// so that a replay can name the command it replays.
  std::string command;
  StoppingSettings stopping;  ///< the stopping rule (bench/core/stopping_rule.h)
  bool blocking = true;       ///< hold the stream with the blocking kernel while a sample is enqueued
  bool cupti = true;          ///< record with the CUPTI profiler (false: event-only mode)
  bool graph = false;         ///< capture each fixture's sample into a CUDA graph once and replay it per sample
  /// Probe what one call enqueues and refuse work the events cannot see (bench/core/measure.h
  /// probe_work); false: --no-work-signature, to measure the probe's own cost.
  bool work_signature = true;
  /// After the timing pass, a counter pass of its own (CUPTI range profiler, kernel replay):
  /// counters.json, model vs measured bytes and FLOPs (docs/metrics.md, "Hardware counters").
  bool counters = false;
  std::filesystem::path out;                    ///< run folder; empty = results/runs/<UTC time>-<pid>
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

}  // namespace xb
