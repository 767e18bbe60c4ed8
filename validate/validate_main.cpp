// validate RUN_DIR [--report FILE]
// validate --trace FILE [--trace FILE] [--table FILE] [--events FILE] [--report FILE] [--markdown FILE]
//
// Checks that a run folder's table, traces and event times agree, or that PyTorch profiler exports
// (Chrome traces from export_chrome_trace, plain or .json.gz, and the key_averages().table() text)
// agree (validate/validator.h, docs/validator.md); prints a short summary (print_summary: a
// one-line verdict first, findings grouped by cause; docs/validator.md "What it prints") and writes
// the JSON report. Exit status: 0 every check that ran passed, 1 a check failed, 2 unusable input or usage
// (one line on stderr naming the file and what is wrong). The command itself is validate_command
// (validate_cli.h), which the Python package's crossbench-validate runs too.
#include <iostream>
#include <vector>

#include "validate/validate_cli.h"

int main(int argc, char** argv) {
  // The program's name in --help and "validate: error: ..." is "validate", whatever path ran it.
  std::vector<const char*> args(argv, argv + argc);
  if (args.empty()) args.push_back(nullptr);
  args[0] = "validate";
  return xb::validate_command(static_cast<int>(args.size()), args.data(), std::cout, std::cerr);
}
