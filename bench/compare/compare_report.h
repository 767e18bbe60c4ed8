// What `bench compare A B` concludes and writes (docs/compare.md): the fixtures paired and
// compared, the differences between the runs, whether the comparison is claimed, and two reports
// of one outcome: compare.md (people) and compare.json (programs; docs/schemas/compare.schema.json).
// Plain C++; writers take a std::ostream so tests parse their output back.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "bench/compare/compare.h"
#include "bench/compare/compare_files.h"

namespace xb {

/// One comparison's outcome: everything the reports show.
struct CompareOutcome {
  std::string created_utc;
  RunFolder a, b;
  std::vector<RunDifference> differences;  ///< the environments' (run_differences)
  GateRules rules;
  /// Both runs validated (validation.json present, of the recording, passed): only then is a
  /// verdict claimed; otherwise every verdict is shown and the outcome is "not claimed".
  bool claimed = false;
  std::string not_claimed_because;                                ///< "" when claimed
  std::vector<FixtureComparison> fixtures;                        ///< in run B's order
  std::vector<std::string> only_in_a, only_in_b;                  ///< keys of fixtures in one run only
  std::vector<std::pair<std::string, std::string>> not_compared;  ///< key, why (failed or no samples)
  bool fixture_failed = false;                                    ///< a fixture of B failed (an error, a wrong result)
  int exit_code = 0;
  /// "same", "faster", "slower", "ambiguous", "failed" (a fixture of B failed) or "not claimed".
  std::string result() const;
};

/// Pairs the fixtures of `a` and `b` by key (RunFixture::key); a fixture whose timing mode differs
/// is paired by name when each run holds that name once (its verdict then names the mode). Compares
/// each pair (compare_fixture) and sets the exit code: 1 when not claimed, a fixture is SLOWER or a
/// fixture of B failed; else 3 when any is AMBIGUOUS; else 0.
CompareOutcome compare_runs(RunFolder a, RunFolder b, const GateRules& rules, const std::string& created_utc);

/// compare.md: the result, why it is not claimed when it is not, the runs and what differs, the
/// fixture table (fixture, class, threshold, medians, shift and its interval, p, SM clocks,
/// verdict, reason), fixtures in one run only or not compared, the rules.
void write_compare_markdown(const CompareOutcome& outcome, std::ostream& out);

/// compare.json: crossbench {format "compare", version 1, created_utc}, result, exit_code,
/// claimed, not_claimed_because, runs {a, b}, differences, rules, fixtures, only_in_a, only_in_b,
/// not_compared, counts (docs/schemas/compare.schema.json).
void write_compare_json(const CompareOutcome& outcome, std::ostream& out);

/// A short summary for the terminal: one line per fixture, the differences, the result and the files.
void print_compare_summary(const CompareOutcome& outcome, const std::filesystem::path& dir, std::ostream& out);

/// `bench compare ARGS` (argv[0] = "compare") with its output on `out` and one-line errors on
/// `err`: reads both folders (a bad one: exit 2, nothing written), compares, writes compare.md and
/// compare.json atomically into the claimed --out folder. Returns the exit code (0, 1, 2, 3; see
/// compare_runs). Never throws (the Python module calls it too).
int compare_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

/// compare_main on std::cout and std::cerr: bench's subcommand.
int compare_command(int argc, const char* const* argv);

}  // namespace xb
