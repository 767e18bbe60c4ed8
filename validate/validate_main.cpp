// validate RUN_DIR [--report FILE] [--force]
// validate --trace FILE [--trace FILE] [--table FILE] [--events FILE] [--report FILE] [--markdown FILE]
//
// Checks that a run folder's table, traces and event times agree, or that PyTorch profiler exports
// (Chrome traces from export_chrome_trace, plain or .json.gz, and the key_averages().table() text)
// agree (validate/validator.h, docs/validator.md); prints a short summary (print_summary: a
// one-line verdict first, findings grouped by cause; docs/validator.md "What it prints") and writes
// the JSON report. Exit status: 0 every check that ran passed, 1 a check failed, 2 unusable input or usage
// (one line on stderr naming the file and what is wrong).
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "profiler/atomic_file.h"
#include "profiler/session_io.h"
#include "validate/cli_style.h"
#include "validate/validator.h"

#include <nlohmann/json.hpp>

namespace {

/// One line, at most 1000 characters: error messages never span lines.
std::string one_line(std::string s) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  if (s.size() > 1000) s = s.substr(0, 997) + "...";
  return s;
}

int error(const std::string& what) {
  std::cerr << "validate: error: " << one_line(what) << '\n';
  return 2;
}

namespace fs = std::filesystem;

/// Why RUN_DIR cannot be validated as a run folder, or empty when it is one: it must be a folder
/// holding the files bench writes (table.json, trace_only.json, full.json, events.json).
std::string not_a_run_folder(const fs::path& dir) {
  if (!fs::exists(dir)) return "";  // validate_run_dir names the missing folder
  if (!fs::is_directory(dir)) {
    return dir.string() + " is a file, not a run folder (a PyTorch export? validate --trace FILE [--table FILE])";
  }
  std::string missing;
  for (const char* name : {"table.json", "trace_only.json", "full.json", "events.json"}) {
    if (!fs::exists(dir / name)) missing += std::string(missing.empty() ? "" : ", ") + name;
  }
  if (missing.empty()) return "";
  std::string what = dir.string() + " is not a crossbench run folder (no " + missing + ")";
  if (fs::exists(dir / "raw_session.json")) {
    what += "; it holds a raw_session.json: bench --replay " + (dir / "raw_session.json").string() +
            " --out NEW_DIR regenerates a run folder from it";
  } else {
    what += "; PyTorch exports are checked with validate --trace FILE [--table FILE]";
  }
  return what;
}

/// The report as JSON without its creation time (crossbench.created_utc) and the folder's name as
/// given (run_dir: "out/run" and "./out/run" are one folder): two validations of the same files
/// compare equal.
nlohmann::json comparable(nlohmann::json doc) {
  if (!doc.is_object()) return doc;
  if (doc.contains("crossbench") && doc["crossbench"].is_object()) doc["crossbench"].erase("created_utc");
  doc.erase("run_dir");
  return doc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Checks that a crossbench run folder's table.json, trace_only.json, full.json and events.json "
               "agree (writes validation.json), or that PyTorch profiler exports agree: "
               "validate --trace FILE [--trace FILE] [--table FILE] [--events FILE] [--report FILE]",
               "validate"};
  std::string run_dir, report_path, markdown_path, table, events, title;
  std::vector<std::string> traces;
  app.add_option("RUN_DIR", run_dir, "run folder to validate");
  app.add_option("--trace", traces,
                 "Chrome/Kineto trace (export_chrome_trace; .json or .json.gz); give a second one of the same session "
                 "(e.g. a trace-only export) to compare them");
  app.add_option("--table", table, "key_averages().table() text, or a crossbench table.json");
  app.add_option("--events", events, "cudaEvent times: crossbench events.json or a reference summary.json");
  app.add_option("--report", report_path, "where to write the JSON report (default RUN_DIR/validation.json; none for --trace)");
  app.add_option("--markdown", markdown_path, "also write a markdown section of the verdicts to this file");
  app.add_option("--title", title, "heading of the markdown section (default: the inputs)");
  bool force = false;
  app.add_flag("--force", force,
               "rewrite RUN_DIR/validation.json even when it holds another verdict (a committed run folder's is "
               "kept otherwise)");
  xb::cli::apply_style(app, XB_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    // Every real parse error is a usage error: one line, exit 2 (as bench's).
    return error(xb::cli::parse_error_message(app, e, argc, argv));
  }
  if (run_dir.empty() == traces.empty()) {
    return error(run_dir.empty() ? "give a run folder (validate RUN_DIR) or --trace FILE (see --help)"
                                 : "give either a run folder or --trace files, not both");
  }
  if (!run_dir.empty() && (!table.empty() || !events.empty()))
    return error("--table and --events go with --trace; a run folder has its own");
  if (traces.size() > 2) return error("at most two --trace files (two exports of one session)");
  if (force && run_dir.empty()) return error("--force goes with a run folder (it rewrites RUN_DIR/validation.json)");
  if (!run_dir.empty()) {
    const std::string why = not_a_run_folder(run_dir);
    if (!why.empty()) return error(why);
  }

  const bool writes_report = !run_dir.empty() || !report_path.empty();
  const std::filesystem::path report_dest = report_path.empty() ? std::filesystem::path(run_dir) : std::filesystem::path(report_path);
  // Every destination first: a bad --markdown must not leave validation.json rewritten. (A missing
  // run folder is validate_run_dir's to report.)
  if (writes_report && (!report_path.empty() || std::filesystem::is_directory(run_dir))) {
    try {
      xb::probe_file_destination(xb::report_json_path(report_dest));
    } catch (const std::exception& e) {
      // A read-only run folder (a mounted or committed one) can still be validated elsewhere.
      return error(std::string(e.what()) + (report_path.empty() ? " (--report FILE writes it elsewhere)" : ""));
    }
  }
  if (!markdown_path.empty()) {
    try {
      xb::probe_file_destination(markdown_path);
    } catch (const std::exception& e) {
      return error(e.what());
    }
  }
  try {
    xb::ValidationReport report;
    if (!run_dir.empty()) {
      report = xb::validate_run_dir(run_dir);
    } else {
      xb::ValidateInputs in;
      for (const auto& t : traces) in.traces.emplace_back(t);
      in.table = table;
      in.events = events;
      report = xb::validate_files(in);
    }
    // A run folder's validation.json (a committed one above all) is never replaced silently:
    // the same verdict and findings leave it as it is; another one needs --force or --report.
    bool unchanged = false;
    if (writes_report && report_path.empty()) {
      const fs::path existing = xb::report_json_path(report_dest);
      if (fs::exists(existing)) {
        std::ostringstream fresh;
        xb::write_report_json(report, fresh);
        nlohmann::json old_doc;
        try {
          old_doc = nlohmann::json::parse(xb::read_text_file(existing));
        } catch (const std::exception&) {
          old_doc = nullptr;  // unreadable: it differs
        }
        unchanged = comparable(old_doc) == comparable(nlohmann::json::parse(fresh.str()));
        if (!unchanged && !force) {
          return error(existing.string() + " holds another validation than this one (" + std::string(report.passed() ? "PASSED" : "FAILED") +
                       "); --force rewrites it, --report FILE writes this one elsewhere");
        }
      }
    }
    xb::print_summary(report, std::cout);
    if (unchanged) {
      std::cout << "report: " << xb::report_json_path(report_dest).string() << " (unchanged: the same validation)\n";
    } else if (writes_report) {
      const auto written = xb::write_report_json(report, report_dest);
      std::cout << "report: " << written.string() << '\n';
    }
    if (!markdown_path.empty()) {
      std::string heading = title;
      if (heading.empty()) {
        for (const auto& t : traces) heading += (heading.empty() ? "" : ", ") + std::filesystem::path(t).filename().string();
        if (!run_dir.empty()) heading = run_dir;
      }
      xb::write_file_atomic(markdown_path, [&](std::ostream& out) { xb::write_markdown(report, heading, out); });
    }
    return report.passed() ? 0 : 1;
  } catch (const xb::InputError& e) {
    return error(e.what());
  } catch (const std::exception& e) {
    return error(e.what());
  }
}
