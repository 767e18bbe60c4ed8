// The validator (validate/validator.h): read the files once into compact records
// (validate/trace_reader.h, table_reader.h, events_reader.h), build the model (validate/model.h),
// then run the named checks (validate/checks.h). The report's status helpers and writers are in
// validate/report.cpp.
#include "validate/validator.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "common/errors.h"
#include "validate/checks.h"
#include "validate/one_profile.h"

namespace xb {

namespace fs = std::filesystem;

namespace vd {

// ---------------------------------------------------------------------------------------------
// Helpers shared by the checks

std::string num(double d) { return fmt::format("{}", d); }

/// ns as microseconds with three decimals ("591.005 us"), fractional ns kept.
std::string us(double ns) {
  if (std::fabs(ns - std::round(ns)) < 1e-9) return format_us(static_cast<std::int64_t>(std::llround(ns))) + " us";
  return fmt::format("{:.3f} us", ns / 1000.0);
}

bool device_not_recorded(const Model& m, CheckLog& log, const std::string& subject) {
  const std::string why = no_device_reason(m);
  if (why.empty()) return false;
  log.not_judged(subject, why);
  return true;
}

}  // namespace vd

using namespace vd;

namespace {

// ---------------------------------------------------------------------------------------------
// Running

template <class F>
void run_check(ValidationReport& report, const char* name, const ValidateOptions& opts, F&& fn) {
  Phase p(name);
  CheckLog log(report, name, opts.max_failures_per_check);
  fn(log);
  log.close();
}

ValidationReport run_all(Model& m, const ValidateOptions& opts) {
  prepare(m);
  ValidationReport report;
  report.figures = json::object();
  report.source_meta = m.A().t->meta;
  json traces = json::array();
  for (const auto& t : m.traces) traces.push_back(t.path);
  report.inputs = {{"traces", traces},
                   {"table", m.table ? json(m.table->path) : json(nullptr)},
                   {"events", m.events ? json(m.events->path) : json(nullptr)}};
  if (m.events)
    for (const EventFixture& f : m.events->fixtures)
      if (!f.stop.empty() && f.stop != "converged") report.noisy_fixtures.push_back(f.name);
  for (const CheckDef& c : check_list())
    if (c.tolerance != nullptr) report.tolerances[c.name] = c.tolerance(opts);

  const bool event_only =
      report.source_meta.is_object() && report.source_meta.value("activity_source", "cupti") == "none";
  if (event_only) {
    // bench --no-cupti: host ranges and cudaEvent times only. Every check that compares activity
    // records is reported as not run, never as passed.
    for (const CheckDef& c : check_list()) {
      run_check(report, c.name, opts, [&](CheckLog& l) {
        if (c.name == std::string(checks::kVerified)) return c.run(m, opts, l, report);
        l.not_run("", "event-only run (bench --no-cupti): no CUPTI activity records to check");
      });
    }
    return report;
  }
  for (const CheckDef& c : check_list())
    run_check(report, c.name, opts, [&](CheckLog& l) { c.run(m, opts, l, report); });
  return report;
}

/// Run-folder files must be crossbench's: a "crossbench" block with the right format, version 1
/// and an integer dropped_records; traces need baseTimeNanoseconds.
void require_meta(const json& meta, const std::string& path, const char* format) {
  auto bad = [&](const std::string& what) { throw InputError(path + ": " + what); };
  if (!meta.is_object()) bad("no \"crossbench\" metadata block");
  auto f = meta.find("format");
  if (f == meta.end() || !f->is_string()) bad("crossbench.format is missing");
  if (*f != format) bad(fmt::format("crossbench.format is \"{}\", expected \"{}\"", f->get<std::string>(), format));
  if (auto v = meta.find("version"); v != meta.end() && !(v->is_number_integer() && v->get<std::int64_t>() == 1))
    bad(fmt::format("unsupported crossbench.version {}", v->dump()));
  auto d = meta.find("dropped_records");
  if (d == meta.end()) bad("missing \"crossbench.dropped_records\"");
  if (!d->is_number_unsigned() && !(d->is_number_integer() && d->get<std::int64_t>() >= 0))
    bad("\"crossbench.dropped_records\" is not a non-negative integer");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ---------------------------------------------------------------------------------------------
// Entry points

ValidationReport validate_run_dir(const fs::path& dir, const ValidateOptions& opts) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(dir.string() + (fs::exists(dir, ec) ? ": not a run folder (for a trace file use --trace FILE)"
                                                         : ": no such run folder"));
  }
  Model m;
  Phase total("validate run folder");
  m.table = read_table(dir / "table.json");
  if (!m.table->json) throw InputError((dir / "table.json").string() + ": not a crossbench table.json");
  TraceData trace_only = [&] {
    Phase p("read trace_only.json");
    return read_trace(dir / "trace_only.json", m.names);
  }();
  require_meta(trace_only.meta, trace_only.path, "trace_only");
  if (!trace_only.has_base) throw InputError(trace_only.path + ": missing \"baseTimeNanoseconds\"");
  TraceData full = [&] {
    Phase p("read full.json");
    return read_trace(dir / "full.json", m.names);
  }();
  require_meta(full.meta, full.path, "full");
  if (!full.has_base) throw InputError(full.path + ": missing \"baseTimeNanoseconds\"");
  m.events = read_events(dir / "events.json");
  if (m.events->kind != EventsData::Kind::PerStep) throw InputError(m.events->path + ": not a crossbench events.json");
  require_meta(m.table->meta, m.table->path, "table");
  require_meta(m.events->meta, m.events->path, "events");
  m.traces.push_back(std::move(full));
  m.traces.push_back(std::move(trace_only));
  require_one_profile(m.traces, &*m.table, &*m.events, m.names);
  if (fs::exists(dir / "counters.json", ec)) m.counters = vd::read_counters(dir / "counters.json");
  ValidationReport report = run_all(m, opts);
  report.run_dir = dir.string();
  return report;
}

ValidationReport validate_files(const ValidateInputs& in, const ValidateOptions& opts) {
  if (in.traces.empty()) throw std::invalid_argument("validate: at least one --trace is required");
  if (in.traces.size() > 2) throw std::invalid_argument("validate: at most two --trace files (one session's exports)");
  Model m;
  for (const auto& p : in.traces) m.traces.push_back(read_trace(p, m.names));
  if (m.traces.size() == 2) {
    // The primary trace: not crossbench's trace_only; else the one with flows; else the first.
    const bool swap = m.traces[0].format == "trace_only" ||
                      (m.traces[1].format != "trace_only" && m.traces[0].flows.empty() && !m.traces[1].flows.empty());
    if (swap) std::swap(m.traces[0], m.traces[1]);
  }
  if (!in.table.empty()) m.table = read_table(in.table);
  if (!in.events.empty()) m.events = read_events(in.events);
  require_one_profile(m.traces, m.table ? &*m.table : nullptr, m.events ? &*m.events : nullptr, m.names);
  return run_all(m, opts);
}

}  // namespace xb
