// What `bench qualify` concludes and writes (docs/qualify.md, docs/formats.md "Qualification"):
// the gate over the run folders, the baseline it updates, and three reports of one outcome:
// qualify.md (people), qualify.xml (JUnit: CI dashboards), qualify.json (programs). Plain C++;
// writers take a std::ostream so tests parse their output back.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/gate/gate.h"
#include "bench/gate/report_format.h"
#include "bench/qualify/qualify_files.h"

namespace xb {

/// One qualification's outcome: everything the reports show.
struct QualifyOutcome {
  std::string created_utc;
  std::string host;  ///< the machine's host name (gethostname): the node in a fleet report
  std::string suite_name;
  std::filesystem::path suite_file;
  std::filesystem::path baseline_file;
  bool update_baseline = false;  ///< the baseline was (to be) written, not compared
  bool baseline_written = false;
  std::string baseline_note;                           ///< why the baseline was not written, or what it holds
  std::optional<RunEnvironment> baseline_environment;  ///< none with --update-baseline
  std::string baseline_created_utc;
  RunEnvironment environment;                      ///< of this run
  std::vector<EnvironmentDifference> differences;  ///< baseline vs this run
  bool mismatch_allowed = false;                   ///< refusing differences were let through (--allow-mismatch)
  std::string warning;                             ///< the mismatch line when allowed ("" otherwise)
  GateRules rules;
  std::map<std::string, double> slow_fixtures_us;
  std::vector<LoadedRun> runs;       ///< one per mode, with their validation
  std::vector<GateResult> fixtures;  ///< in suite order
  std::vector<std::string> notes;    ///< e.g. baseline fixtures the suite does not list
  int exit_code = 0;

  bool validation_failed() const;
  /// "pass", "regression", "failed" (a fixture or a validation failed) or "inconclusive".
  std::string result() const;
};

/// Gates every suite fixture of `runs` against `baseline` (null: --update-baseline): finds each
/// suite fixture's record in the runs (by key), gates it (gate_fixture), and sets the exit code
/// (qualify_exit_code). Throws InputError when a suite fixture is in no run folder, or (baseline
/// given) not in the baseline, or when the runs' environments differ from each other.
QualifyOutcome evaluate_qualification(const Suite& suite, const Baseline* baseline, std::vector<LoadedRun> runs,
                                      const GateRules& rules);

/// The baseline made from the runs' fixtures of the suite, in suite order, and the first run's
/// environment. Throws std::invalid_argument for a fixture without samples.
Baseline baseline_from_runs(const Suite& suite, const std::vector<LoadedRun>& runs, const std::string& created_utc);

/// qualify.md: result, mismatch warning first when there is one, environment against the baseline,
/// the fixture table (fixture, mode, class, threshold, baseline median, now, delta %, delta us,
/// p-value, verdict, reason), run folders with their validation, the rules.
void write_qualify_markdown(const QualifyOutcome& outcome, std::ostream& out);

/// qualify.xml (JUnit): <testsuites> holding one <testsuite name="qualify"> with a testcase
/// "baseline_environment" and one per fixture (classname "qualify.<mode>", name the fixture), and
/// one <testsuite name="validation.<run>"> per run folder with one testcase per validation check
/// (per fixture for event_vs_cupti and verified). Regression: <failure type="regression">;
/// failed fixture: <error type="failed">; inconclusive: <skipped>; failed check: <failure>;
/// not-run or noisy check: <skipped>. Counts on every <testsuite> and <testsuites>; text escaped
/// for XML 1.0 (&<>"' as entities; control characters other than tab, LF, CR dropped).
void write_qualify_junit(const QualifyOutcome& outcome, std::ostream& out);

/// qualify.json: crossbench {format "qualify", version 1, created_utc}, host, result, exit_code, warning,
/// suite, baseline, environment, differences, rules, slow_fixtures, runs, fixtures, counts.
void write_qualify_json(const QualifyOutcome& outcome, std::ostream& out);

/// Writes qualify.md, qualify.xml and qualify.json into `dir` (atomically each).
void write_qualify_reports(const QualifyOutcome& outcome, const std::filesystem::path& dir);

/// The end of `bench qualify`, once the run folders exist (live runs or --from-run): compares the
/// runs' environment with the baseline's (a refusing difference throws UsageError with
/// mismatch_line unless options.allow_mismatch), gates every suite fixture, writes the baseline
/// atomically with --update-baseline (only when every fixture ran and every run folder validated),
/// writes the three reports into `dir` and prints the summary to `log`. Returns the exit code.
/// Throws InputError as evaluate_qualification does.
int finish_qualification(const QualifyOptions& options, const Suite& suite, const Baseline* baseline,
                         std::vector<LoadedRun> runs, const std::filesystem::path& dir, std::ostream& log);

/// A short summary for the terminal: one line per fixture that is not unchanged, the counts, the
/// result and the report files.
void print_qualify_summary(const QualifyOutcome& outcome, const std::filesystem::path& dir, std::ostream& out);

}  // namespace xb
