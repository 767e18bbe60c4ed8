// The `validate` command as functions (validate_cli.h); moved from validate_main.cpp so that the
// Python package runs the same code in-process.
#include "validate/validate_cli.h"

#include <exception>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "profiler/atomic_file.h"
#include "profiler/session_io.h"

namespace xb {
namespace {

namespace fs = std::filesystem;

/// One line, at most 1000 characters: error messages never span lines.
std::string one_line(std::string s) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  if (s.size() > 1000) s = s.substr(0, 997) + "...";
  return s;
}

}  // namespace

ValidateOutcome run_validate(const ValidateRequest& rq, std::ostream& out) {
  if (rq.run_dir.empty() == rq.traces.empty()) {
    throw std::invalid_argument(rq.run_dir.empty() ? "give a run folder (validate RUN_DIR) or --trace FILE (see --help)"
                                                   : "give either a run folder or --trace files, not both");
  }
  if (!rq.run_dir.empty() && (!rq.table.empty() || !rq.events.empty()))
    throw std::invalid_argument("--table and --events go with --trace; a run folder has its own");
  if (rq.traces.size() > 2) throw std::invalid_argument("at most two --trace files (two exports of one session)");

  const bool writes_report = !rq.run_dir.empty() || !rq.report.empty();
  const fs::path report_dest = rq.report.empty() ? rq.run_dir : rq.report;
  // Every destination first: a bad --markdown must not leave validation.json rewritten. (A missing
  // run folder is validate_run_dir's to report.)
  if (writes_report && (!rq.report.empty() || fs::is_directory(rq.run_dir))) {
    try {
      probe_file_destination(report_json_path(report_dest));
    } catch (const std::exception& e) {
      // A read-only run folder (a mounted or committed one) can still be validated elsewhere.
      throw std::runtime_error(std::string(e.what()) + (rq.report.empty() ? " (--report FILE writes it elsewhere)" : ""));
    }
  }
  if (!rq.markdown.empty()) probe_file_destination(rq.markdown);

  ValidateOutcome outcome;
  if (!rq.run_dir.empty()) {
    outcome.report = validate_run_dir(rq.run_dir);
  } else {
    ValidateInputs in;
    in.traces = rq.traces;
    in.table = rq.table;
    in.events = rq.events;
    outcome.report = validate_files(in);
  }
  print_summary(outcome.report, out);
  if (writes_report) {
    outcome.report_written = write_report_json(outcome.report, report_dest);
    out << "report: " << outcome.report_written.string() << '\n';
  }
  if (!rq.markdown.empty()) {
    std::string heading = rq.title;
    if (heading.empty()) {
      for (const auto& t : rq.traces) heading += (heading.empty() ? "" : ", ") + t.filename().string();
      if (!rq.run_dir.empty()) heading = rq.run_dir.string();
    }
    write_file_atomic(rq.markdown, [&](std::ostream& md) { write_markdown(outcome.report, heading, md); });
  }
  outcome.exit_code = outcome.report.passed() ? 0 : 1;
  return outcome;
}

int validate_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  const std::string program = argc > 0 && argv[0] != nullptr && *argv[0] != '\0' ? argv[0] : "validate";
  const auto error = [&](const std::string& what) {
    err << program << ": error: " << one_line(what) << '\n';
    return 2;
  };
  try {
    CLI::App app{"Checks that a crossbench run folder's table.json, trace_only.json, full.json and events.json "
                 "agree (writes validation.json), or that PyTorch profiler exports agree: " +
                     program + " --trace FILE [--trace FILE] [--table FILE] [--events FILE] [--report FILE]",
                 program};
    ValidateRequest rq;
    std::string run_dir, report, markdown, table, events;
    std::vector<std::string> traces;
    app.add_option("RUN_DIR", run_dir, "run folder to validate");
    app.add_option("--trace", traces,
                   "Chrome/Kineto trace (export_chrome_trace; .json or .json.gz); give a second one of the same session "
                   "(e.g. a trace-only export) to compare them");
    app.add_option("--table", table, "key_averages().table() text, or a crossbench table.json");
    app.add_option("--events", events, "cudaEvent times: crossbench events.json or a reference summary.json");
    app.add_option("--report", report, "where to write the JSON report (default RUN_DIR/validation.json; none for --trace)");
    app.add_option("--markdown", markdown, "also write a markdown section of the verdicts to this file");
    app.add_option("--title", rq.title, "heading of the markdown section (default: the inputs)");
    app.set_version_flag("--version", std::string("crossbench ") + XB_VERSION);
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      out << app.help();
      return 0;
    } catch (const CLI::CallForVersion& e) {
      out << e.what() << "\n";
      return 0;
    } catch (const CLI::ParseError& e) {
      // Every real parse error is a usage error: one line, exit 2 (as bench's).
      return error(e.what());
    }
    rq.run_dir = run_dir;
    for (const auto& t : traces) rq.traces.emplace_back(t);
    rq.table = table;
    rq.events = events;
    rq.report = report;
    rq.markdown = markdown;
    return run_validate(rq, out).exit_code;
  } catch (const std::exception& e) {  // InputError, std::invalid_argument, std::runtime_error
    return error(e.what());
  }
}

}  // namespace xb
