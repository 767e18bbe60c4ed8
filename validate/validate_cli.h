// The `validate` command as functions: its command line (validate_command), and what one
// invocation does once parsed (run_validate). The `validate` executable (validate_main.cpp) and
// the Python package (crossbench.check_files, crossbench-validate, python -m crossbench validate;
// bench/python) call the same code, so they print the same verdict and return the same exit code.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "validate/validator.h"

namespace xb {

/// One `validate` invocation, parsed: either a run folder or one or two traces with an optional
/// table and event times (validate --help).
struct ValidateRequest {
  std::filesystem::path run_dir;              ///< a crossbench run folder ("" with traces)
  std::vector<std::filesystem::path> traces;  ///< Chrome/Kineto traces, .json or .json.gz (none with run_dir)
  std::filesystem::path table;                ///< key_averages().table() text or table.json; "" = none
  std::filesystem::path events;               ///< events.json or a reference summary.json; "" = none
  /// Where the JSON report goes (a folder: <folder>/validation.json). "": RUN_DIR/validation.json
  /// for a run folder, no report for traces.
  std::filesystem::path report;
  std::filesystem::path markdown;  ///< also write a markdown section here; "" = none
  std::string title;               ///< the markdown section's heading; "": the inputs
  /// Rewrite RUN_DIR/validation.json even when it holds another validation (never silently: without
  /// it, another verdict is refused and the same one leaves the file as it is).
  bool force = false;
};

/// What run_validate did.
struct ValidateOutcome {
  ValidationReport report;
  std::filesystem::path report_written;  ///< the validation.json written ("" when none)
  int exit_code = 0;                     ///< 0 every check that ran passed, 1 a check failed
};

/// Validates what `request` names, prints the summary (print_summary, then "report: PATH" when a
/// report is written) to `out`, writes the JSON report and the markdown section atomically, and
/// returns the outcome. Every destination is probed before anything is validated, so a bad one
/// leaves an existing report untouched. Throws std::invalid_argument for a request `validate`
/// refuses (no input, a run folder and traces, --table with a run folder, more than two traces),
/// InputError (common/errors.h) for unusable input, std::runtime_error for a destination
/// that cannot be written. Every message is one line.
ValidateOutcome run_validate(const ValidateRequest& request, std::ostream& out);

/// The `validate` command line (validate --help): parses argv (argv[0] is the program's name, used
/// in --help and in "NAME: error: ..."), runs run_validate and returns the exit status: 0 every
/// check that ran passed, 1 a check failed, 2 usage error or unusable input (one line on `err`).
/// --help and --version print to `out` and return 0. Never throws.
int validate_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace xb
