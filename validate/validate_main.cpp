// validate RUN_DIR [--report FILE]: checks that a run folder's table, traces and event times agree
// (validate/validator.h), prints a short summary and writes validation.json.
// Exit status: 0 every check passed (or could not run), 1 a check failed, 2 unusable input or usage.
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "profiler/session_io.h"
#include "validate/validator.h"

int main(int argc, char** argv) {
  CLI::App app{"Checks that a crossbench run folder's table.json, trace_only.json, full.json and "
               "events.json agree; writes validation.json",
               "validate"};
  std::string run_dir;
  std::string report_path;
  app.add_option("RUN_DIR", run_dir, "run folder to validate")->required();
  app.add_option("--report", report_path, "where to write the report (default RUN_DIR/validation.json)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help/--version are "successes" (exit 0); every real parse error is a usage error: 2.
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    const xb::ValidationReport report = xb::validate_run_dir(run_dir);
    xb::print_summary(report, std::cout);
    const auto written = xb::write_report_json(report, report_path.empty() ? std::filesystem::path(run_dir)
                                                                           : std::filesystem::path(report_path));
    std::cout << "report: " << written.string() << '\n';
    return report.passed() ? 0 : 1;
  } catch (const xb::InputError& e) {
    std::cerr << "validate: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "validate: error: " << e.what() << '\n';
    return 2;
  }
}
