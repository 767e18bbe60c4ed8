// The `validate` command as functions (validate_cli.h); moved from validate_main.cpp so that the
// Python package runs the same code in-process.
#include "validate/validate_cli.h"

#include <exception>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "common/atomic_file.h"
#include "common/cli_style.h"
#include "common/strict_json.h"
#include "common/text_file.h"

#include <nlohmann/json.hpp>

namespace xb {
namespace {

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

/// True where `c` may precede a path inside a message: the path is a whole token there, not part
/// of a longer name ("run" in "run/full.json", never in "rerun/full.json").
bool path_border(char c) { return c == ' ' || c == '\'' || c == '"' || c == '(' || c == ',' || c == ':'; }

/// `text` with every occurrence of the folder `dir` as a path replaced by "<RUN_DIR>": the whole
/// string, a path inside it ("run/full.json") or the verdict's closing " - run". A word that only
/// reads like the folder is left alone ("1 result not run" where the folder is "run").
std::string without_dir(const std::string& text, const std::string& dir) {
  if (dir.empty()) return text;
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = text.find(dir); at != std::string::npos; at = text.find(dir, at + 1)) {
    const std::size_t end = at + dir.size();
    const bool starts = at == 0 || path_border(text[at - 1]);
    const bool closing = end == text.size() && (at == 0 || (at >= 3 && text.compare(at - 3, 3, " - ") == 0));
    const bool ends = closing || (end < text.size() && text[end] == '/');
    if (!starts || !ends || at < from) continue;
    out.append(text, from, at - from).append("<RUN_DIR>");
    from = end;
  }
  return out.append(text, from, std::string::npos);
}

/// Every string in `j` without_dir(dir).
void erase_dir(nlohmann::json& j, const std::string& dir) {
  if (j.is_string()) {
    j = without_dir(j.get<std::string>(), dir);
  } else if (j.is_structured()) {
    for (auto& v : j) erase_dir(v, dir);
  }
}

/// The report as JSON without its creation time (crossbench.created_utc) and without the run
/// folder's name as it was spelled (run_dir, and that spelling inside the verdict, messages and
/// input paths: "out/run", "./out/run" and "/abs/out/run" are one folder): two validations of the
/// same files compare equal.
nlohmann::json comparable(nlohmann::json doc) {
  if (!doc.is_object()) return doc;
  if (doc.contains("crossbench") && doc["crossbench"].is_object()) doc["crossbench"].erase("created_utc");
  const std::string dir =
      doc.contains("run_dir") && doc["run_dir"].is_string() ? doc["run_dir"].get<std::string>() : "";
  doc.erase("run_dir");
  erase_dir(doc, dir);
  return doc;
}

/// `dir` without trailing separators ("out/run/" is "out/run"), so that messages name
/// RUN_DIR/full.json, never RUN_DIR//full.json.
fs::path without_trailing_separator(fs::path dir) {
  while (!dir.empty() && !dir.has_filename() && dir.has_relative_path()) dir = dir.parent_path();
  return dir;
}

}  // namespace

ValidateOutcome run_validate(const ValidateRequest& given, std::ostream& out) {
  ValidateRequest rq = given;
  rq.run_dir = without_trailing_separator(rq.run_dir);
  if (rq.run_dir.empty() == rq.traces.empty()) {
    throw std::invalid_argument(rq.run_dir.empty() ? "give a run folder (validate RUN_DIR) or --trace FILE (see --help)"
                                                   : "give either a run folder or --trace files, not both");
  }
  if (!rq.run_dir.empty() && (!rq.table.empty() || !rq.events.empty()))
    throw std::invalid_argument("--table and --events go with --trace; a run folder has its own");
  if (rq.traces.size() > 2) throw std::invalid_argument("at most two --trace files (two exports of one session)");
  if (rq.force && rq.run_dir.empty())
    throw std::invalid_argument("--force goes with a run folder (it rewrites RUN_DIR/validation.json)");
  if (!rq.run_dir.empty()) {
    const std::string why = not_a_run_folder(rq.run_dir);
    if (!why.empty()) throw std::invalid_argument(why);
  }

  const bool writes_report = !rq.run_dir.empty() || !rq.report.empty();
  const fs::path report_dest = rq.report.empty() ? rq.run_dir : rq.report;
  // Every destination first: a bad --markdown must not leave validation.json rewritten. (A missing
  // run folder is validate_run_dir's to report.)
  if (writes_report && (!rq.report.empty() || fs::is_directory(rq.run_dir))) {
    try {
      probe_file_destination(report_json_path(report_dest));
    } catch (const std::exception& e) {
      // A read-only run folder (a mounted or committed one) can still be validated elsewhere.
      throw std::runtime_error(std::string(e.what()) +
                               (rq.report.empty() ? " (--report FILE writes it elsewhere)" : ""));
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
  // A run folder's validation.json (a committed one above all) is never replaced silently: the
  // same verdict and findings leave it as it is; another one needs --force or --report.
  bool unchanged = false;
  if (writes_report && rq.report.empty()) {
    const fs::path existing = report_json_path(report_dest);
    if (fs::exists(existing)) {
      std::ostringstream fresh;
      write_report_json(outcome.report, fresh);
      nlohmann::json old_doc;
      try {
        old_doc = nlohmann::json::parse(read_text_file(existing));
      } catch (const std::exception&) {
        old_doc = nullptr;  // unreadable: it differs
      }
      unchanged = comparable(old_doc) == comparable(nlohmann::json::parse(fresh.str()));
      if (!unchanged && !rq.force)
        throw std::runtime_error(existing.string() + " holds another validation than this one (" +
                                 std::string(outcome.report.passed() ? "PASSED" : "FAILED") +
                                 "); --force rewrites it, --report FILE writes this one elsewhere");
    }
  }
  print_summary(outcome.report, out);
  if (unchanged) {
    outcome.report_written = report_json_path(report_dest);
    out << "report: " << outcome.report_written.string() << " (unchanged: the same validation)\n";
  } else if (writes_report) {
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
    // One line, at most 1000 characters (a message may quote a long path): never spans lines.
    err << program << ": error: " << strict_json::one_line(what, 1000) << '\n';
    return 2;
  };
  try {
    CLI::App app{
        "Checks that a crossbench run folder's table.json, trace_only.json, full.json and events.json "
        "agree (writes validation.json), or that PyTorch profiler exports agree: " +
            program + " --trace FILE [--trace FILE] [--table FILE] [--events FILE] [--report FILE]",
        program};
    ValidateRequest rq;
    std::string run_dir, report, markdown, table, events;
    std::vector<std::string> traces;
    app.add_option("RUN_DIR", run_dir, "run folder to validate")->type_name("DIR");
    app.add_option(
        "--trace", traces,
        "Chrome/Kineto trace (export_chrome_trace; .json or .json.gz); give a second one of the same session "
        "(e.g. a trace-only export) to compare them");
    app.add_option("--table", table, "key_averages().table() text, or a crossbench table.json");
    app.add_option("--events", events, "cudaEvent times: crossbench events.json or a reference summary.json");
    app.add_option("--report", report,
                   "where to write the JSON report (default RUN_DIR/validation.json; none for --trace)");
    app.add_option("--markdown", markdown, "also write a markdown section of the verdicts to this file");
    app.add_option("--title", rq.title, "heading of the markdown section (default: the inputs)");
    app.add_flag("--force", rq.force,
                 "rewrite RUN_DIR/validation.json even when it holds another verdict (a committed run folder's is "
                 "kept otherwise)");
    cli::apply_style(app, XB_VERSION,
                     "0 passed, 1 a check failed, 2 unusable input: a file missing, unreadable or not of one "
                     "profile, a destination that cannot be written (one line, nothing written)");
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
      return error(cli::parse_error_message(app, e, argc, argv));
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
