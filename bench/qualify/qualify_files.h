// The inputs of `bench qualify` (docs/formats.md, "Qualification"): its command line, the suite
// file, the baseline file and the run folders it gates, and the environment check between a run and
// its baseline. Plain C++ (no CUDA). The readers parse from a string, are strict (every required key
// with its type and range) and throw InputError with a one-line message naming what is wrong and
// where ("suite: fixtures[3]: unknown op 'matmull'"); read_* prefix the file name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "bench/core/fixture_records.h"
#include "bench/core/stopping_rule.h"
#include "bench/gate/environment.h"
#include "bench/gate/gate.h"
#include "validate/validator.h"

namespace xb {

// ---------------------------------------------------------------------------------------------
// Suite

/// One fixture of a suite, with its stopping rule resolved (the suite's, overridden by its own).
struct SuiteFixture {
  std::string op, dtype;
  TimingMode mode = TimingMode::Hot;
  std::int64_t size = 0;
  StoppingSettings stopping;  ///< bench/core/stopping_rule.h; the file gives max_noise in percent
  std::string name() const;   ///< "<op>/<dtype>/<size>"
  std::string key() const;    ///< "<name> (<mode>)", as FixtureRecord::key
};

/// A suite file: which fixtures a qualification runs, in which order.
struct Suite {
  std::string name;
  std::string description;
  bool warmup = true;  ///< bench's --warmup for every run of the suite
  std::vector<SuiteFixture> fixtures;
  /// The modes of the suite, in order of first appearance: one run folder each.
  std::vector<TimingMode> modes() const;
};

/// Parses a suite (JSON). Strict: crossbench.format "suite", version 1; keys name (non-empty),
/// fixtures (non-empty array of {op, dtype, size, mode, optional stopping}), optional description,
/// warmup and stopping {max_noise_pct, min_samples, min_time_s, max_time_s} (each optional, ranges as
/// bench's flags); unknown keys are errors (a typo must not be ignored); no fixture twice in one
/// mode; at most 10000 fixtures. Throws InputError("suite: ...").
Suite parse_suite(std::string_view text);
/// Reads and parses a file; throws InputError naming the file.
Suite read_suite(const std::filesystem::path& path);

// ---------------------------------------------------------------------------------------------
// Baseline

/// A stored baseline: the environment and every fixture's raw samples.
struct Baseline {
  std::string created_utc;
  std::string suite;  ///< name of the suite it was recorded from
  RunEnvironment environment;
  std::vector<FixtureRecord> fixtures;
  /// The fixture with this key, or null.
  const FixtureRecord* find(const std::string& key) const;
};

/// Writes the baseline (JSON, docs/formats.md): samples rounded to 0.001 ns, with each fixture's
/// statistics computed from them. Throws std::invalid_argument for a fixture without samples or
/// with a non-finite value.
void write_baseline_json(const Baseline& baseline, std::ostream& out);

/// Parses a baseline. Strict: crossbench.format "baseline", version 1; every key written by
/// write_baseline_json with its type (extra keys are ignored, so later versions can add some;
/// environment.gpu_pci_bus_id is optional: baselines written before it lack it);
/// samples finite and > 0, at least one per fixture; stats.count equal to the number of samples and
/// stats.median_ns equal to their median (1e-6 relative); no fixture key twice. Throws
/// InputError("baseline: ...").
Baseline parse_baseline(std::string_view text);
/// Reads and parses a file; throws InputError naming the file.
Baseline read_baseline(const std::filesystem::path& path);

// ---------------------------------------------------------------------------------------------
// Run folders

/// One run folder as the gate reads it back: its session's environment and fixtures (from
/// raw_session.json) and the validator's report on it.
struct LoadedRun {
  std::string label;  ///< folder name, e.g. "run-hot"
  std::filesystem::path dir;
  SessionMeta meta;
  std::vector<FixtureRecord> fixtures;
  ValidationReport validation;
};

/// Reads raw_session.json of `dir` and validates the folder (validate_run_dir). Throws InputError
/// when the folder or its files are unusable.
LoadedRun load_run(const std::filesystem::path& dir);

// ---------------------------------------------------------------------------------------------
// Command line

/// `bench qualify` options.
struct QualifyOptions {
  std::filesystem::path suite;
  std::filesystem::path baseline;
  std::filesystem::path out;  ///< reports and run folders; "" = results/qualify/<UTC time>-<pid>
  bool allow_mismatch = false;
  bool update_baseline = false;
  std::optional<double> threshold_pct;             ///< --threshold: replaces every fixture's threshold
  std::map<std::string, double> slow_fixtures_us;  ///< --slow-fixture NAME=US
  std::vector<std::filesystem::path> from_runs;    ///< --from-run: gate these folders, run nothing
  /// --aggregate: merge these qualifications (qualify.json files, or folders holding them) into one
  /// fleet report (bench/qualify/qualify_aggregate.h); no suite, baseline or GPU
  std::vector<std::filesystem::path> aggregate;
};

/// Parses `bench qualify ARGS` (argv[0] = "qualify"). Throws UsageError (bench/cli/cli.h) on bad input:
/// a missing --suite or --baseline, --threshold outside (0, 100], a bad --slow-fixture,
/// --slow-fixture with --update-baseline (a baseline must not hold a deliberate delay) or with
/// --from-run, --aggregate with any option but --out. Returns nullopt when --help was printed.
/// --devices is taken by bench/main/devices.h before this parser runs; it is listed for --help.
std::optional<QualifyOptions> parse_qualify_args(int argc, const char* const* argv);

/// Default folder: results/qualify/<UTC yyyymmdd-hhmmss>-<pid>.
std::filesystem::path default_qualify_dir();

}  // namespace xb
