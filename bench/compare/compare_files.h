// The inputs of `bench compare` (docs/compare.md): two run folders, as `bench`, a user's program
// through xb::main or crossbench.bench write them (docs/formats.md), and its command line. Plain
// C++ (no CUDA). Readers are strict and throw InputError with one line naming the file and what is
// wrong.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/compare/compare.h"
#include "bench/gate/environment.h"

namespace xb {

/// One run folder as compare reads it: events.json's fixtures (every folder has it), the
/// environment (raw_session.json's meta where the folder has it, else events.json's versions and
/// summary.md's GPU line), and validation.json's verdict.
struct RunFolder {
  std::filesystem::path dir;
  std::string created_utc;  ///< events.json crossbench.created_utc
  /// events.json crossbench.window_start_ns, window_end_ns: the recording's identity across its files
  std::pair<std::int64_t, std::int64_t> window_ns{0, 0};
  RunEnvironment environment;
  /// Where the environment came from: "raw_session.json", or "events.json and summary.md".
  std::string environment_source;
  /// Facts of the environment this folder does not hold (without raw_session.json: "driver",
  /// "power limit", "maximum clocks"): not compared, and named.
  std::vector<std::string> not_recorded;
  std::vector<RunFixture> fixtures;
  bool validated = false;  ///< validation.json present, of this recording (the same window_ns), and passed
  std::string validation;  ///< "passed (N results passed)", "FAILED (...)", "no validation.json", ...
  /// The fixture with this key, or null.
  const RunFixture* find(const std::string& key) const;
};

/// Reads a run folder. Throws InputError when it is not a folder, has no events.json, or a file
/// it reads is malformed (events.json strictly: crossbench.format "events", version 1, each
/// fixture as raw_session.json's reader checks it, timing.sample_sm_clock_mhz included: when
/// present, one positive number or null per samples_ns entry). A missing or failed validation.json is no
/// error: the folder reads as not validated.
RunFolder read_run_folder(const std::filesystem::path& dir);

/// The GPU line of summary.md ("- GPU: NAME (UUID)" or "- GPU: NAME"): name and UUID; nullopt
/// when the text has none.
std::optional<std::pair<std::string, std::string>> summary_gpu_line(const std::string& summary_md);

/// Differences between run A's and run B's environments (qualify's compare_environments, A as the
/// baseline), with `explains` set for those that can explain a shift (RunDifference).
std::vector<RunDifference> run_differences(const RunEnvironment& a, const RunEnvironment& b);

/// `bench compare` options.
struct CompareOptions {
  std::filesystem::path a, b;
  std::filesystem::path out;                     ///< "" = results/compare/<UTC time>-<pid>
  std::optional<double> threshold_pct;           ///< --threshold: every fixture's threshold
  std::optional<double> overhead_threshold_pct;  ///< --overhead-threshold: overhead-bound fixtures'
};

/// Parses `bench compare ARGS` (argv[0] = "compare"). Throws UsageError on bad input (not two run
/// folders, a threshold outside (0, 100], --threshold with --overhead-threshold). Returns nullopt
/// when --help was printed.
std::optional<CompareOptions> parse_compare_args(int argc, const char* const* argv);

/// Default output folder: results/compare/<UTC yyyymmdd-hhmmss>-<pid>.
std::filesystem::path default_compare_dir();

}  // namespace xb
