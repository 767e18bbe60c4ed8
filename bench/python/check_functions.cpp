// crossbench._core's check functions, behind crossbench.check_files, crossbench.check_profile and
// the crossbench-validate command (bench/python/crossbench/_check.py): the `validate` command's own
// code (validate/validate_cli.h) called in-process, so the verdict and the exit code are the
// executable's. Plain C++: built with or without the CUDA toolkit.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <exception>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "bench/python/functions.h"
#include "validate/validate_cli.h"

namespace nb = nanobind;

namespace xb {

std::tuple<int, std::string, std::string> run_in_process(const std::vector<std::string>& args, const char* name,
                                                         CommandMain command) {
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  if (argv.empty()) argv.push_back(name);
  std::ostringstream out, err;
  int code = 0;
  {
    const nb::gil_scoped_release unlocked;  // plain C++ (no Python object): other Python threads run
    code = command(static_cast<int>(argv.size()), argv.data(), out, err);
  }
  return {code, out.str(), err.str()};
}

namespace {

/// `validate ARGS...` in this process: args[0] is the program's name (in --help and in
/// "NAME: error: ..."). Returns (exit status, what it printed to stdout, what it printed to stderr).
std::tuple<int, std::string, std::string> validate_args(const std::vector<std::string>& args) {
  return run_in_process(args, "validate", validate_command);
}

/// Validates files as `validate --trace T [--trace T2] [--table F] [--events F] [--report R]
/// [--markdown M] [--title S]` would (empty strings: not given). Returns (exit status 0 or 1,
/// the printed summary, validation.json's document as JSON text, the report written or "").
/// Raises ValueError with validate's one-line message where it would exit 2.
std::tuple<int, std::string, std::string, std::string> check(const std::vector<std::string>& traces,
                                                             const std::string& table, const std::string& events,
                                                             const std::string& report, const std::string& markdown,
                                                             const std::string& title) {
  ValidateRequest rq;
  for (const std::string& t : traces) rq.traces.emplace_back(t);
  rq.table = table;
  rq.events = events;
  rq.report = report;
  rq.markdown = markdown;
  rq.title = title;
  std::ostringstream out;
  std::string error;
  ValidateOutcome outcome;
  {
    const nb::gil_scoped_release unlocked;
    try {
      outcome = run_validate(rq, out);
    } catch (const std::exception& e) {  // InputError, std::invalid_argument, std::runtime_error: validate's exit 2
      error = e.what();
    }
  }
  if (!error.empty()) throw nb::value_error(error.c_str());
  return {outcome.exit_code, out.str(),
          report_json(outcome.report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
          outcome.report_written.string()};
}

}  // namespace

void add_check_functions(nb::module_& m) {
  m.def("validate_command", &validate_args, nb::arg("args"),
        "validate's command line in this process: (exit status, stdout text, stderr text); use crossbench-validate.");
  m.def("check", &check, nb::arg("traces"), nb::arg("table"), nb::arg("events"), nb::arg("report"), nb::arg("markdown"),
        nb::arg("title"),
        "Validates exported files as validate --trace does: (exit status, summary, validation.json text, report path); "
        "use crossbench.check_files.");
}

}  // namespace xb
