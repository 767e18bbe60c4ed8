// The validator (validate/validator.h): parse the run folder's files once into compact records,
// then run the named checks over them.
#include "validate/validator.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "profiler/atomic_file.h"
#include "profiler/session_io.h"
#include "profiler/units.h"

namespace xb {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Status, report

const char* to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::Passed: return "passed";
    case CheckStatus::Failed: return "failed";
    case CheckStatus::NotRun: return "not_run";
  }
  return "unknown";
}

CheckStatus check_status_from_string(const std::string& name) {
  if (name == "passed") return CheckStatus::Passed;
  if (name == "failed") return CheckStatus::Failed;
  if (name == "not_run") return CheckStatus::NotRun;
  throw std::invalid_argument("unknown check status: " + name);
}

bool ValidationReport::passed() const {
  return std::none_of(checks.begin(), checks.end(),
                      [](const CheckResult& r) { return r.status == CheckStatus::Failed; });
}

CheckCounts ValidationReport::counts() const {
  CheckCounts c;
  for (const auto& r : checks) {
    switch (r.status) {
      case CheckStatus::Passed: ++c.passed; break;
      case CheckStatus::Failed: ++c.failed; break;
      case CheckStatus::NotRun: ++c.not_run; break;
    }
  }
  return c;
}

std::vector<const CheckResult*> ValidationReport::results_of(const std::string& check) const {
  std::vector<const CheckResult*> out;
  for (const auto& r : checks)
    if (r.check == check) out.push_back(&r);
  return out;
}

CheckStatus ValidationReport::status_of(const std::string& check) const {
  bool any_pass = false;
  for (const auto& r : checks) {
    if (r.check != check) continue;
    if (r.status == CheckStatus::Failed) return CheckStatus::Failed;
    if (r.status == CheckStatus::Passed) any_pass = true;
  }
  return any_pass ? CheckStatus::Passed : CheckStatus::NotRun;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Parsed files

/// Trace event categories the checks use; everything else is skipped while parsing.
enum class Cat : std::uint8_t { Kernel, Memcpy, Memset, Runtime, Driver, UserAnnotation, CpuOp, Other };

Cat cat_from(const std::string& s) {
  if (s == "kernel") return Cat::Kernel;
  if (s == "gpu_memcpy") return Cat::Memcpy;
  if (s == "gpu_memset") return Cat::Memset;
  if (s == "cuda_runtime") return Cat::Runtime;
  if (s == "cuda_driver") return Cat::Driver;
  if (s == "user_annotation") return Cat::UserAnnotation;
  if (s == "cpu_op") return Cat::CpuOp;
  return Cat::Other;
}

const char* cat_name(Cat c) {
  switch (c) {
    case Cat::Kernel: return "kernel";
    case Cat::Memcpy: return "gpu_memcpy";
    case Cat::Memset: return "gpu_memset";
    case Cat::Runtime: return "cuda_runtime";
    case Cat::Driver: return "cuda_driver";
    case Cat::UserAnnotation: return "user_annotation";
    case Cat::CpuOp: return "cpu_op";
    case Cat::Other: break;
  }
  return "other";
}

bool is_device(Cat c) { return c == Cat::Kernel || c == Cat::Memcpy || c == Cat::Memset; }
bool is_api(Cat c) { return c == Cat::Runtime || c == Cat::Driver; }
bool is_range(Cat c) { return c == Cat::UserAnnotation || c == Cat::CpuOp; }
bool is_device_kind(const std::string& k) {
  return k == "kernel" || k == "gpu_memcpy" || k == "gpu_memset";
}
bool is_range_kind(const std::string& k) { return k == "user_annotation" || k == "cpu_op"; }

/// One "X" event of a used category. Times are absolute ns (baseTimeNanoseconds + ts).
struct Ev {
  Cat cat = Cat::Other;
  std::string name;
  std::int64_t start_ns = 0;
  std::int64_t dur_ns = 0;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::uint64_t correlation = 0;  ///< device activities and API calls
  std::uint64_t external_id = 0;  ///< 0 = none
  std::uint64_t parent_id = 0;    ///< trace_only ranges: "Parent id" (0 = none)
  bool has_parent = false;        ///< the event carried a "Parent id" arg
  std::int64_t end_ns() const { return start_ns + dur_ns; }
};

/// One ac2g flow endpoint.
struct Flow {
  bool start = false;  ///< "s" (true) or "f"
  std::uint64_t id = 0;
  std::int64_t ts_ns = 0;  ///< absolute
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  bool bp_e = false;  ///< "bp": "e"
};

struct Trace {
  std::string file;  ///< file name, for subjects
  json meta;
  std::int64_t base_ns = 0;
  std::vector<Ev> events;  ///< every used "X" event, in file order
  std::vector<const Ev*> device, api, ranges;  ///< into `events`, by role
  std::vector<Flow> flows;
  /// trace_only: correlation -> external ids of its externalCorrelations entries.
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> ext_corr;
};

struct Row {
  std::string name, kind;
  std::int64_t calls = 0, self_cpu_ns = 0, cpu_total_ns = 0, self_cuda_ns = 0, cuda_total_ns = 0;
  double self_cpu_pct = 0, cpu_total_pct = 0, self_cuda_pct = 0, median_ns = 0;
  std::int64_t min_ns = 0, max_ns = 0;
};

struct TableFile {
  std::string file;
  json meta;
  std::int64_t self_cpu_total_ns = 0, self_cuda_total_ns = 0;
  std::vector<Row> rows;
};

struct Step {
  std::int64_t step = 0;
  std::uint64_t range_id = 0;
  std::int64_t event_ns = 0;
};

struct Fixture {
  std::string name;
  bool verified = false;
  double max_rel_error = 0;
  bool has_median = false;
  double median_ns = 0;
  std::vector<Step> steps;
};

struct EventsFile {
  std::string file;
  json meta;
  std::vector<Fixture> fixtures;
};

struct RunData {
  TableFile table;
  Trace trace_only;
  Trace full;
  EventsFile events;
};

// ---------------------------------------------------------------------------------------------
// JSON access with InputError messages that name the file and the place.

/// Where a value sits: "<path>: <array>[<index>]" or "<path>" for top-level keys.
struct Where {
  const std::string& path;
  const char* array = nullptr;
  std::size_t index = 0;
};

[[noreturn]] void bad(const Where& w, const std::string& what) {
  if (w.array) throw InputError(fmt::format("{}: {}[{}]: {}", w.path, w.array, w.index, what));
  throw InputError(fmt::format("{}: {}", w.path, what));
}

const json& field(const json& obj, const char* key, const Where& w) {
  auto it = obj.find(key);
  if (it == obj.end()) bad(w, fmt::format("missing \"{}\"", key));
  return *it;
}

const json* find_field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

double as_num(const json& v, const char* key, const Where& w) {
  if (!v.is_number()) bad(w, fmt::format("\"{}\" is not a number", key));
  return v.get<double>();
}

std::int64_t as_i64(const json& v, const char* key, const Where& w) {
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      bad(w, fmt::format("\"{}\" is out of range", key));
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) return static_cast<std::int64_t>(d);
  }
  bad(w, fmt::format("\"{}\" is not an integer", key));
}

std::uint64_t as_u64(const json& v, const char* key, const Where& w) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  std::int64_t i = as_i64(v, key, w);
  if (i < 0) bad(w, fmt::format("\"{}\" is negative", key));
  return static_cast<std::uint64_t>(i);
}

const std::string& as_str(const json& v, const char* key, const Where& w) {
  if (!v.is_string()) bad(w, fmt::format("\"{}\" is not a string", key));
  return v.get_ref<const std::string&>();
}

bool as_bool(const json& v, const char* key, const Where& w) {
  if (!v.is_boolean()) bad(w, fmt::format("\"{}\" is not a boolean", key));
  return v.get<bool>();
}

const json& req_array(const json& obj, const char* key, const Where& w) {
  const json& v = field(obj, key, w);
  if (!v.is_array()) bad(w, fmt::format("\"{}\" is not an array", key));
  return v;
}

/// Reads a file, checking first that it exists (InputError "<path>: missing").
std::string read_input(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path.string() + ": missing (no such file)");
  return read_text_file(path);
}

/// Parses JSON text into `doc` (an object); `cb` may filter values while parsing.
void parse_json(const std::string& text, const fs::path& path, json& doc, const json::parser_callback_t& cb = nullptr) {
  try {
    doc = json::parse(text, cb);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not JSON: {}", path.string(), e.what()));
  }
  if (!doc.is_object()) throw InputError(path.string() + ": top level is not a JSON object");
}

json read_json(const fs::path& path) {
  const std::string text = read_input(path);
  json doc;
  parse_json(text, path, doc);
  return doc;
}

/// Moves the "crossbench" block out of `doc`, checking its format tag, version and
/// dropped_records.
json take_meta(json& doc, const std::string& path, const char* format) {
  Where w{path};
  auto it = doc.find("crossbench");
  if (it == doc.end() || !it->is_object()) bad(w, "no \"crossbench\" metadata block");
  Where wm{path, nullptr, 0};
  const std::string& f = as_str(field(*it, "format", wm), "crossbench.format", wm);
  if (f != format) bad(w, fmt::format("crossbench.format is \"{}\", expected \"{}\"", f, format));
  if (const json* v = find_field(*it, "version"); v && as_i64(*v, "crossbench.version", wm) != 1)
    bad(w, fmt::format("unsupported crossbench.version {}", v->dump()));
  as_u64(field(*it, "dropped_records", wm), "crossbench.dropped_records", wm);
  return std::move(*it);
}

std::uint64_t dropped_of(const json& meta) { return meta.at("dropped_records").get<std::uint64_t>(); }

/// Converts one traceEvents[] entry; events of unused categories are skipped. Times stay
/// relative to baseTimeNanoseconds (parse_trace adds it once the whole file is read).
void add_trace_event(Trace& t, const json& e, const Where& w) {
  if (!e.is_object()) bad(w, "not an object");
  const std::string& ph = as_str(field(e, "ph", w), "ph", w);
  const json* cat_v = find_field(e, "cat");
  if (!cat_v || !cat_v->is_string()) return;
  const std::string& cat = cat_v->get_ref<const std::string&>();
  if (ph == "X") {
    const Cat c = cat_from(cat);
    if (c == Cat::Other) return;
    Ev ev;
    ev.cat = c;
    ev.name = as_str(field(e, "name", w), "name", w);
    ev.start_ns = us_to_ns(as_num(field(e, "ts", w), "ts", w));
    ev.dur_ns = us_to_ns(as_num(field(e, "dur", w), "dur", w));
    ev.pid = as_i64(field(e, "pid", w), "pid", w);
    ev.tid = as_i64(field(e, "tid", w), "tid", w);
    const json* args = find_field(e, "args");
    if (is_device(c) || is_api(c)) {
      if (!args) bad(w, fmt::format("{} event without \"args\"", cat));
      ev.correlation = as_u64(field(*args, "correlation", w), "args.correlation", w);
    }
    if (args) {
      if (const json* x = find_field(*args, "External id")) ev.external_id = as_u64(*x, "args.External id", w);
      if (is_range(c)) {
        if (const json* x = find_field(*args, "Parent id")) {
          ev.parent_id = as_u64(*x, "args.Parent id", w);
          ev.has_parent = true;
        }
      }
    }
    if (is_range(c) && ev.external_id == 0) bad(w, fmt::format("{} event without \"External id\"", cat));
    t.events.push_back(std::move(ev));
  } else if ((ph == "s" || ph == "f") && cat == "ac2g") {
    Flow f;
    f.start = ph == "s";
    f.id = as_u64(field(e, "id", w), "id", w);
    f.ts_ns = us_to_ns(as_num(field(e, "ts", w), "ts", w));
    f.pid = as_i64(field(e, "pid", w), "pid", w);
    f.tid = as_i64(field(e, "tid", w), "tid", w);
    const json* bp = find_field(e, "bp");
    f.bp_e = bp && bp->is_string() && bp->get_ref<const std::string&>() == "e";
    t.flows.push_back(f);
  }
}

/// Reads a Chrome trace in one pass: the entries of the top-level arrays ("traceEvents",
/// "externalCorrelations", ...) are converted as the parser completes them and then dropped, so
/// the trace is never held as a JSON tree. (Dropping them also matters for speed: nlohmann's
/// callback parser scans the enclosing container after every object it keeps.)
Trace parse_trace(const fs::path& path, const char* format, bool with_ext_corr) {
  const std::string p = path.string();
  const std::string text = read_input(path);
  Trace t;
  t.file = path.filename().string();
  t.events.reserve(text.size() / 256);  // a trace event takes 150-400 bytes of text

  using E = json::parse_event_t;
  enum class Array { None, Events, ExtCorr, Other };
  Array array = Array::None;
  std::string top_key;
  bool saw_events = false;
  std::size_t index = 0;
  json doc;
  parse_json(text, path, doc, [&](int depth, E ev, json& parsed) {
    if (depth == 1) {
      if (ev == E::key) {
        top_key = parsed.get<std::string>();
      } else if (ev == E::array_start) {
        array = top_key == "traceEvents" ? Array::Events
                : top_key == "externalCorrelations" ? Array::ExtCorr
                                                    : Array::Other;
        saw_events = saw_events || array == Array::Events;
        index = 0;
      } else if (ev == E::array_end) {
        array = Array::None;
      }
      return true;
    }
    if (depth != 2 || array == Array::None) return true;
    if (ev == E::object_end) {
      const Where w{p, array == Array::Events ? "traceEvents" : "externalCorrelations", index++};
      if (array == Array::Events) {
        add_trace_event(t, parsed, w);
      } else if (array == Array::ExtCorr && with_ext_corr) {
        const auto c = as_u64(field(parsed, "correlation", w), "correlation", w);
        const auto x = as_u64(field(parsed, "External id", w), "External id", w);
        t.ext_corr[c].push_back(x);
      }
      return false;  // converted (or not needed): drop it from the tree
    }
    if ((ev == E::value || ev == E::array_end) && array != Array::Other)
      bad(Where{p, array == Array::Events ? "traceEvents" : "externalCorrelations", index}, "not an object");
    return true;
  });

  t.meta = take_meta(doc, p, format);
  Where top{p};
  if (!saw_events) {
    field(doc, "traceEvents", top);
    bad(top, "\"traceEvents\" is not an array");
  }
  if (const json* ec = find_field(doc, "externalCorrelations"); ec && !ec->is_array())
    bad(top, "\"externalCorrelations\" is not an array");
  t.base_ns = as_i64(field(doc, "baseTimeNanoseconds", top), "baseTimeNanoseconds", top);
  for (Ev& e : t.events) e.start_ns += t.base_ns;
  for (Flow& f : t.flows) f.ts_ns += t.base_ns;

  // Index by role; t.events no longer grows, so the pointers stay valid.
  for (const Ev& e : t.events) {
    if (is_device(e.cat)) t.device.push_back(&e);
    else if (is_api(e.cat)) t.api.push_back(&e);
    else t.ranges.push_back(&e);
  }
  return t;
}

TableFile parse_table(const fs::path& path) {
  json doc = read_json(path);
  const std::string p = path.string();
  TableFile t;
  t.file = path.filename().string();
  t.meta = take_meta(doc, p, "table");
  Where top{p};
  t.self_cpu_total_ns = as_i64(field(doc, "self_cpu_total_ns", top), "self_cpu_total_ns", top);
  t.self_cuda_total_ns = as_i64(field(doc, "self_cuda_total_ns", top), "self_cuda_total_ns", top);
  const json& rows = req_array(doc, "rows", top);
  t.rows.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& r = rows[i];
    Where w{p, "rows", i};
    if (!r.is_object()) bad(w, "not an object");
    Row row;
    row.name = as_str(field(r, "name", w), "name", w);
    row.kind = as_str(field(r, "kind", w), "kind", w);
    row.calls = as_i64(field(r, "calls", w), "calls", w);
    row.self_cpu_ns = as_i64(field(r, "self_cpu_ns", w), "self_cpu_ns", w);
    row.cpu_total_ns = as_i64(field(r, "cpu_total_ns", w), "cpu_total_ns", w);
    row.self_cuda_ns = as_i64(field(r, "self_cuda_ns", w), "self_cuda_ns", w);
    row.cuda_total_ns = as_i64(field(r, "cuda_total_ns", w), "cuda_total_ns", w);
    row.self_cpu_pct = as_num(field(r, "self_cpu_pct", w), "self_cpu_pct", w);
    row.cpu_total_pct = as_num(field(r, "cpu_total_pct", w), "cpu_total_pct", w);
    row.self_cuda_pct = as_num(field(r, "self_cuda_pct", w), "self_cuda_pct", w);
    row.median_ns = as_num(field(r, "median_ns", w), "median_ns", w);
    row.min_ns = as_i64(field(r, "min_ns", w), "min_ns", w);
    row.max_ns = as_i64(field(r, "max_ns", w), "max_ns", w);
    t.rows.push_back(std::move(row));
  }
  return t;
}

EventsFile parse_events(const fs::path& path) {
  json doc = read_json(path);
  const std::string p = path.string();
  EventsFile ev;
  ev.file = path.filename().string();
  ev.meta = take_meta(doc, p, "events");
  Where top{p};
  const json& fx = req_array(doc, "fixtures", top);
  ev.fixtures.reserve(fx.size());
  for (std::size_t i = 0; i < fx.size(); ++i) {
    const json& f = fx[i];
    Where w{p, "fixtures", i};
    if (!f.is_object()) bad(w, "not an object");
    Fixture fix;
    fix.name = as_str(field(f, "name", w), "name", w);
    fix.verified = as_bool(field(f, "verified", w), "verified", w);
    if (const json* m = find_field(f, "max_rel_error"); m && m->is_number()) fix.max_rel_error = m->get<double>();
    if (const json* m = find_field(f, "median_ns"); m && !m->is_null()) {
      fix.median_ns = as_num(*m, "median_ns", w);
      fix.has_median = true;
    }
    const json& steps = req_array(f, "steps", w);
    fix.steps.reserve(steps.size());
    for (const json& s : steps) {
      if (!s.is_object()) bad(w, "steps[] entry is not an object");
      Step st;
      st.step = as_i64(field(s, "step", w), "steps[].step", w);
      st.range_id = as_u64(field(s, "range_id", w), "steps[].range_id", w);
      st.event_ns = as_i64(field(s, "event_ns", w), "steps[].event_ns", w);
      fix.steps.push_back(st);
    }
    ev.fixtures.push_back(std::move(fix));
  }
  return ev;
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the checks

/// Collects one check's results; caps the number of Failed results.
class CheckLog {
 public:
  CheckLog(ValidationReport& report, const char* check, std::size_t cap)
      : report_(report), check_(check), cap_(cap) {}

  void fail(std::string subject, std::string expected, std::string found, std::string message) {
    ++failures_;
    if (cap_ != 0 && failures_ > cap_) return;
    add(CheckStatus::Failed, std::move(subject), std::move(expected), std::move(found), std::move(message));
  }
  void pass(std::string subject, std::string message) {
    ++passes_;
    add(CheckStatus::Passed, std::move(subject), "", "", std::move(message));
  }
  void not_run(std::string subject, std::string message) {
    add(CheckStatus::NotRun, std::move(subject), "", "", std::move(message));
  }
  /// Adds a Passed result when nothing failed (and nothing passed explicitly).
  void pass_if_clean(std::string subject, std::string message) {
    if (failures_ == 0 && passes_ == 0) pass(std::move(subject), std::move(message));
  }
  std::size_t failures() const { return failures_; }
  /// Summarises the failures beyond the cap.
  void close() {
    if (cap_ != 0 && failures_ > cap_)
      add(CheckStatus::Failed, fmt::format("({} more)", failures_ - cap_), "", "",
          fmt::format("{} more failures of {} not listed ({} in all)", failures_ - cap_, check_, failures_));
  }

 private:
  void add(CheckStatus s, std::string subject, std::string expected, std::string found, std::string message) {
    CheckResult r;
    r.check = check_;
    r.subject = std::move(subject);
    r.expected = std::move(expected);
    r.found = std::move(found);
    r.message = std::move(message);
    r.status = s;
    report_.checks.push_back(std::move(r));
  }
  ValidationReport& report_;
  const char* check_;
  std::size_t cap_;
  std::size_t failures_ = 0;
  std::size_t passes_ = 0;
};

/// Correlation id -> first event with it, and how many events carry it.
struct CorrIndex {
  std::unordered_map<std::uint64_t, std::pair<const Ev*, std::uint32_t>> map;
  explicit CorrIndex(const std::vector<const Ev*>& evs) {
    map.reserve(evs.size());
    for (const Ev* e : evs) {
      auto [it, fresh] = map.try_emplace(e->correlation, e, 0u);
      (void)fresh;
      ++it->second.second;
    }
  }
  std::uint32_t count(std::uint64_t c) const {
    auto it = map.find(c);
    return it == map.end() ? 0u : it->second.second;
  }
  const Ev* first(std::uint64_t c) const {
    auto it = map.find(c);
    return it == map.end() ? nullptr : it->second.first;
  }
  /// The event when exactly one carries `c`.
  const Ev* only(std::uint64_t c) const {
    auto it = map.find(c);
    return it == map.end() || it->second.second != 1 ? nullptr : it->second.first;
  }
};

/// Timestamp relative to the trace's base, as trace microseconds ("12.345 us").
std::string ts_text(const Trace& t, std::int64_t abs_ns) { return format_us(abs_ns - t.base_ns) + " us"; }

std::string act_subject(const Ev& e) {
  return fmt::format("{} '{}' (correlation {})", cat_name(e.cat), e.name, e.correlation);
}

std::string describe(const Trace& t, const Ev& e) {
  return fmt::format("{} '{}' ts {} dur {} ns on pid {} tid {}", cat_name(e.cat), e.name,
                     ts_text(t, e.start_ns), e.dur_ns, e.pid, e.tid);
}

double median_sorted(const std::vector<std::int64_t>& v) {
  if (v.empty()) return 0.0;
  std::size_t n = v.size();
  if (n % 2 == 1) return static_cast<double>(v[n / 2]);
  return (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2.0;
}

double median_of(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  return median_sorted(v);
}

std::string num(double d) { return fmt::format("{}", d); }

/// Parent range id of every trace_only range: its "Parent id" arg, or, when the trace carries
/// none, the innermost enclosing range on the same (pid, tid) by time containment.
std::unordered_map<std::uint64_t, std::uint64_t> range_parents(const Trace& t) {
  std::unordered_map<std::uint64_t, std::uint64_t> parent;
  parent.reserve(t.ranges.size());
  bool any_parent_arg =
      std::any_of(t.ranges.begin(), t.ranges.end(), [](const Ev* r) { return r->has_parent; });
  if (any_parent_arg) {
    for (const Ev* r : t.ranges) parent[r->external_id] = r->parent_id;
    return parent;
  }
  std::vector<const Ev*> sorted(t.ranges);
  std::sort(sorted.begin(), sorted.end(), [](const Ev* a, const Ev* b) {
    if (a->pid != b->pid) return a->pid < b->pid;
    if (a->tid != b->tid) return a->tid < b->tid;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
    if (a->end_ns() != b->end_ns()) return a->end_ns() > b->end_ns();
    return a->external_id < b->external_id;
  });
  std::vector<const Ev*> stack;
  for (const Ev* r : sorted) {
    while (!stack.empty() && (stack.back()->pid != r->pid || stack.back()->tid != r->tid ||
                              stack.back()->end_ns() < r->end_ns()))
      stack.pop_back();
    parent[r->external_id] = stack.empty() ? 0 : stack.back()->external_id;
    stack.push_back(r);
  }
  return parent;
}

// ---------------------------------------------------------------------------------------------
// Checks

struct Stats {
  std::int64_t count = 0, total = 0, min = 0, max = 0;
  double median = 0;
};

using Key = std::pair<std::string, std::string>;  // (kind, name)

std::map<Key, Stats> device_stats(const Trace& t) {
  std::map<Key, std::vector<std::int64_t>> durs;
  for (const Ev* e : t.device) durs[{cat_name(e->cat), e->name}].push_back(e->dur_ns);
  std::map<Key, Stats> out;
  for (auto& [k, v] : durs) {
    std::sort(v.begin(), v.end());
    Stats s;
    s.count = static_cast<std::int64_t>(v.size());
    for (auto d : v) s.total += d;
    s.min = v.front();
    s.max = v.back();
    s.median = median_sorted(v);
    out.emplace(k, s);
  }
  return out;
}

void check_kernel_stats(const RunData& d, CheckLog& log) {
  struct Source {
    const std::string* file;
    std::map<Key, Stats> stats;
  };
  std::vector<Source> src(3);
  src[0].file = &d.table.file;
  src[1] = {&d.trace_only.file, device_stats(d.trace_only)};
  src[2] = {&d.full.file, device_stats(d.full)};
  for (const Row& r : d.table.rows) {
    if (!is_device_kind(r.kind)) continue;
    Key k{r.kind, r.name};
    if (src[0].stats.count(k)) {
      log.fail(fmt::format("{} '{}'", r.kind, r.name), "one table.json row per (name, kind)",
               "duplicate row", "table.json has the same device row twice");
      continue;
    }
    if (r.self_cuda_ns != r.cuda_total_ns)
      log.fail(fmt::format("{} '{}'", r.kind, r.name), fmt::format("cuda_total_ns = self_cuda_ns = {}", r.self_cuda_ns),
               fmt::format("cuda_total_ns = {}", r.cuda_total_ns),
               "table.json: a device row's Self CUDA and CUDA total must be equal");
    src[0].stats.emplace(k, Stats{r.calls, r.self_cuda_ns, r.min_ns, r.max_ns, r.median_ns});
  }

  std::set<Key> keys;
  for (const auto& s : src)
    for (const auto& kv : s.stats) keys.insert(kv.first);
  if (keys.empty()) {
    log.not_run("", "no device activity (kernel, memcpy, memset) in table.json, trace_only.json or full.json");
    return;
  }

  for (const Key& k : keys) {
    std::string subject = fmt::format("{} '{}'", k.first, k.second);
    const Source* ref = nullptr;
    const Stats* ref_stats = nullptr;
    std::string present, missing;
    for (const auto& s : src) {
      auto it = s.stats.find(k);
      std::string& list = it == s.stats.end() ? missing : present;
      list += (list.empty() ? "" : ", ") + *s.file;
      if (it != s.stats.end() && !ref) {
        ref = &s;
        ref_stats = &it->second;
      }
    }
    if (!missing.empty())
      log.fail(subject, "present in table.json, trace_only.json and full.json",
               fmt::format("missing from {} (present in {})", missing, present),
               "a device activity name is in one file but not another");
    for (const auto& s : src) {
      if (&s == ref) continue;
      auto it = s.stats.find(k);
      if (it == s.stats.end()) continue;
      const Stats& a = *ref_stats;
      const Stats& b = it->second;
      auto cmp_i = [&](const char* what, std::int64_t x, std::int64_t y) {
        if (x != y)
          log.fail(subject, fmt::format("{} = {} ({})", what, x, *ref->file), fmt::format("{} = {} ({})", what, y, *s.file),
                   fmt::format("{} differs between {} and {}", what, *ref->file, *s.file));
      };
      cmp_i("count", a.count, b.count);
      cmp_i("total_ns", a.total, b.total);
      if (a.median != b.median)
        log.fail(subject, fmt::format("median_ns = {} ({})", num(a.median), *ref->file),
                 fmt::format("median_ns = {} ({})", num(b.median), *s.file),
                 fmt::format("median_ns differs between {} and {}", *ref->file, *s.file));
      cmp_i("min_ns", a.min, b.min);
      cmp_i("max_ns", a.max, b.max);
    }
  }
  log.pass_if_clean(fmt::format("{} device names", keys.size()),
                    "count, total, median, min and max identical in table.json, trace_only.json and full.json");
}

void check_attribution(const RunData& d, CheckLog& log) {
  const Trace& T = d.trace_only;
  const Trace& F = d.full;
  if (T.device.empty() && F.device.empty()) {
    log.not_run("", "no device activity in trace_only.json or full.json");
    return;
  }
  CorrIndex devT(T.device), devF(F.device), apiT(T.api), apiF(F.api);
  std::unordered_set<std::uint64_t> rangesT, rangesF;
  rangesT.reserve(T.ranges.size());
  rangesF.reserve(F.ranges.size());
  for (const Ev* r : T.ranges) rangesT.insert(r->external_id);
  for (const Ev* r : F.ranges) rangesF.insert(r->external_id);

  std::unordered_set<std::uint64_t> seen;
  seen.reserve(F.device.size());
  std::size_t checked = 0;
  for (const Ev* df : F.device) {
    const std::uint64_t c = df->correlation;
    if (!seen.insert(c).second) continue;
    ++checked;
    const std::string subject = act_subject(*df);
    if (auto n = devF.count(c); n > 1)
      log.fail(subject, "one device activity per correlation id", fmt::format("{} in full.json", n),
               "correlation id shared by several device activities");
    if (auto n = devT.count(c); n > 1)
      log.fail(subject, "one device activity per correlation id", fmt::format("{} in trace_only.json", n),
               "correlation id shared by several device activities");
    const Ev* dt = devT.first(c);
    if (!dt) {
      log.fail(subject, "the same activity in trace_only.json", "missing from trace_only.json",
               "device activity in full.json but not in trace_only.json");
    } else if (dt->cat != df->cat || dt->name != df->name || dt->start_ns != df->start_ns ||
               dt->dur_ns != df->dur_ns || dt->pid != df->pid || dt->tid != df->tid) {
      log.fail(subject, "trace_only.json: " + describe(T, *dt), "full.json: " + describe(F, *df),
               "the same correlation id names different device activities");
    }

    // Launch call: exactly one in each trace, and the same call.
    auto nlT = apiT.count(c), nlF = apiF.count(c);
    if (nlT != 1)
      log.fail(subject, "1 launch call in trace_only.json", fmt::format("{}", nlT),
               "cuda_runtime/cuda_driver events with this correlation in trace_only.json");
    if (nlF != 1)
      log.fail(subject, "1 launch call in full.json", fmt::format("{}", nlF),
               "cuda_runtime/cuda_driver events with this correlation in full.json");
    const Ev* lT = apiT.only(c);
    const Ev* lF = apiF.only(c);
    if (lT && lF &&
        (lT->name != lF->name || lT->cat != lF->cat || lT->start_ns != lF->start_ns || lT->dur_ns != lF->dur_ns))
      log.fail(subject, "launch in trace_only.json: " + describe(T, *lT), "launch in full.json: " + describe(F, *lF),
               "the two traces attribute the activity to different launch calls");

    // External id (annotation / op).
    std::uint64_t xT = 0;
    if (auto it = T.ext_corr.find(c); it != T.ext_corr.end()) {
      std::set<std::uint64_t> ids(it->second.begin(), it->second.end());
      if (ids.size() > 1) {
        std::string list;
        for (auto id : ids) list += (list.empty() ? "" : ", ") + std::to_string(id);
        log.fail(subject, "one External id per correlation in trace_only.json externalCorrelations",
                 "External ids " + list, "ambiguous external correlation");
      }
      xT = *ids.begin();
    }
    const std::uint64_t xF = df->external_id;
    if (xT != xF)
      log.fail(subject, fmt::format("External id {} (trace_only.json externalCorrelations)", xT),
               fmt::format("External id {} (full.json)", xF),
               "the two traces attribute the activity to different host ranges");
    if (lF && lF->external_id != xF)
      log.fail(subject, fmt::format("External id {} (the activity's, full.json)", xF),
               fmt::format("External id {} on launch '{}' (full.json)", lF->external_id, lF->name),
               "full.json: a device activity and its launch call name different host ranges");
    if (xF != 0 && !rangesF.count(xF))
      log.fail(subject, fmt::format("a user_annotation/cpu_op event with External id {} in full.json", xF),
               "none", "External id names no host range");
    if (xT != 0 && !rangesT.count(xT))
      log.fail(subject, fmt::format("a user_annotation/cpu_op event with External id {} in trace_only.json", xT),
               "none", "External id names no host range");
  }
  for (const Ev* dt : T.device) {
    if (seen.count(dt->correlation)) continue;
    seen.insert(dt->correlation);
    log.fail(act_subject(*dt), "the same activity in full.json", "missing from full.json",
             "device activity in trace_only.json but not in full.json");
  }
  log.pass_if_clean(fmt::format("{} device activities", checked),
                    "each has one launch call, the same in both traces, and the same existing host range");
}

void check_flows(const RunData& d, CheckLog& log) {
  const Trace& F = d.full;
  if (F.device.empty()) {
    log.not_run("", "no device activity in full.json");
    return;
  }
  struct Ends {
    std::uint32_t s = 0, f = 0;
    const Flow* first_s = nullptr;
    const Flow* first_f = nullptr;
  };
  std::unordered_map<std::uint64_t, Ends> flows;
  flows.reserve(F.flows.size());
  for (const Flow& f : F.flows) {
    Ends& e = flows[f.id];
    if (f.start) {
      if (e.s++ == 0) e.first_s = &f;
    } else if (e.f++ == 0) {
      e.first_f = &f;
    }
  }
  CorrIndex devF(F.device), apiF(F.api);
  std::unordered_set<std::uint64_t> seen;
  seen.reserve(F.device.size());
  std::size_t pairs = 0;
  for (const Ev* a : F.device) {
    const std::uint64_t c = a->correlation;
    if (!seen.insert(c).second) continue;
    const std::string subject = act_subject(*a);
    const Ev* launch = apiF.only(c);
    auto it = flows.find(c);
    const Ends none;
    const Ends& e = it == flows.end() ? none : it->second;
    if (!launch) {
      if (e.s + e.f > 0)
        log.fail(subject, "no ac2g flow (the activity has no single launch call)",
                 fmt::format("{} \"s\" and {} \"f\"", e.s, e.f), "flow for an activity without a launch");
      continue;
    }
    if (e.s != 1 || e.f != 1) {
      log.fail(subject, "one ac2g \"s\" and one \"f\" with id = correlation",
               fmt::format("{} \"s\" and {} \"f\"", e.s, e.f), "full.json: missing or extra ac2g flow events");
    }
    if (e.first_s && (e.first_s->ts_ns != launch->start_ns || e.first_s->pid != launch->pid ||
                      e.first_s->tid != launch->tid))
      log.fail(subject,
               fmt::format("\"s\" at ts {} on pid {} tid {} (launch '{}')", ts_text(F, launch->start_ns), launch->pid,
                           launch->tid, launch->name),
               fmt::format("\"s\" at ts {} on pid {} tid {}", ts_text(F, e.first_s->ts_ns), e.first_s->pid,
                           e.first_s->tid),
               "flow start is not at the launch call");
    if (e.first_f && (e.first_f->ts_ns != a->start_ns || e.first_f->pid != a->pid || e.first_f->tid != a->tid ||
                      !e.first_f->bp_e))
      log.fail(subject,
               fmt::format("\"f\" at ts {} on pid {} tid {} with \"bp\": \"e\"", ts_text(F, a->start_ns), a->pid, a->tid),
               fmt::format("\"f\" at ts {} on pid {} tid {}{}", ts_text(F, e.first_f->ts_ns), e.first_f->pid,
                           e.first_f->tid, e.first_f->bp_e ? "" : " without \"bp\": \"e\""),
               "flow end is not at the device activity");
    if (e.s == 1 && e.f == 1) ++pairs;
  }
  std::vector<std::uint64_t> orphans;
  for (const auto& kv : flows)
    if (!devF.count(kv.first)) orphans.push_back(kv.first);
  std::sort(orphans.begin(), orphans.end());
  for (auto id : orphans)
    log.fail(fmt::format("ac2g flow id {}", id), "a device activity with this correlation id", "none",
             "full.json: flow that matches no device activity");
  log.pass_if_clean(fmt::format("{} ac2g flow pairs", pairs),
                    "one \"s\" at each launch call and one \"f\" at each device activity");
}

void check_dropped(const RunData& d, CheckLog& log) {
  const std::pair<const std::string*, const json*> files[] = {{&d.table.file, &d.table.meta},
                                                              {&d.trace_only.file, &d.trace_only.meta},
                                                              {&d.full.file, &d.full.meta},
                                                              {&d.events.file, &d.events.meta}};
  std::string all;
  bool same = true;
  const std::uint64_t first = dropped_of(*files[0].second);
  for (const auto& [file, meta] : files) {
    const std::uint64_t n = dropped_of(*meta);
    all += fmt::format("{}{} {}", all.empty() ? "" : ", ", *file, n);
    if (n != first) same = false;
    if (n != 0)
      log.fail(*file, "crossbench.dropped_records = 0", fmt::format("{}", n),
               "CUPTI dropped activity records: the tables and traces are incomplete");
  }
  if (!same)
    log.fail("all files", "the same crossbench.dropped_records in every file", all,
             "the files disagree on dropped records: they come from different sessions");
  log.pass_if_clean("all files", "crossbench.dropped_records: " + all);
}

void check_durations(const RunData& d, CheckLog& log) {
  const std::size_t n = d.trace_only.device.size() + d.full.device.size();
  for (const Trace* t : {&d.trace_only, &d.full}) {
    for (const Ev* e : t->device) {
      if (e->dur_ns <= 0)
        log.fail(t->file + ": " + act_subject(*e), "dur > 0", fmt::format("dur = {} ns", e->dur_ns),
                 "device activity with a non-positive duration");
    }
  }
  if (n == 0) return log.not_run("", "no device activity in trace_only.json or full.json");
  log.pass_if_clean(fmt::format("{} device activities in trace_only.json, {} in full.json", d.trace_only.device.size(),
                                d.full.device.size()),
                    "every duration > 0");
}

void check_overlap(const RunData& d, CheckLog& log) {
  std::size_t lanes_n[2] = {0, 0};
  for (const Trace* t : {&d.trace_only, &d.full}) {
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const Ev*>> lanes;
    for (const Ev* e : t->device) lanes[{e->pid, e->tid}].push_back(e);
    lanes_n[t == &d.full] = lanes.size();
    for (auto& [lane, evs] : lanes) {
      std::sort(evs.begin(), evs.end(), [](const Ev* a, const Ev* b) {
        if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
        if (a->end_ns() != b->end_ns()) return a->end_ns() < b->end_ns();
        return a->correlation < b->correlation;
      });
      const Ev* prev = nullptr;  // the one ending last so far
      for (const Ev* e : evs) {
        if (prev && e->start_ns < prev->end_ns())
          log.fail(fmt::format("{}: device {} stream {}: {}", t->file, lane.first, lane.second, act_subject(*e)),
                   fmt::format("start >= {} (end of {})", ts_text(*t, prev->end_ns()), act_subject(*prev)),
                   fmt::format("start {} ({} ns overlap)", ts_text(*t, e->start_ns), prev->end_ns() - e->start_ns),
                   "two activities on one stream overlap");
        if (!prev || e->end_ns() > prev->end_ns()) prev = e;
      }
    }
  }
  if (lanes_n[0] + lanes_n[1] == 0) return log.not_run("", "no device activity in trace_only.json or full.json");
  log.pass_if_clean(fmt::format("{} (device, stream) lanes in trace_only.json, {} in full.json", lanes_n[0], lanes_n[1]),
                    "the activities on each stream never overlap");
}

void check_launch_before(const RunData& d, CheckLog& log) {
  std::size_t n[2] = {0, 0};
  for (const Trace* t : {&d.trace_only, &d.full}) {
    CorrIndex api(t->api);
    for (const Ev* e : t->device) {
      const Ev* l = api.only(e->correlation);
      if (!l) continue;  // attribution reports it
      ++n[t == &d.full];
      if (e->start_ns < l->start_ns)
        log.fail(t->file + ": " + act_subject(*e),
                 fmt::format("start >= {} (start of launch '{}')", ts_text(*t, l->start_ns), l->name),
                 fmt::format("start {} ({} ns before its launch)", ts_text(*t, e->start_ns), l->start_ns - e->start_ns),
                 "device activity starts before the call that launched it");
    }
  }
  if (n[0] + n[1] == 0) return log.not_run("", "no device activity with a launch call in trace_only.json or full.json");
  log.pass_if_clean(fmt::format("{} launched activities in trace_only.json, {} in full.json", n[0], n[1]),
                    "each starts after its launch call starts");
}

void check_table_totals(const RunData& d, const ValidateOptions& opts, CheckLog& log) {
  const TableFile& tb = d.table;
  const double tol = opts.pct_tol;
  std::int64_t device_sum = 0, range_self_cuda = 0;
  double device_pct = 0;
  std::size_t device_rows = 0;
  std::map<Key, const Row*> rows;
  for (const Row& r : tb.rows) {
    rows.emplace(Key{r.kind, r.name}, &r);
    const std::string subject = fmt::format("{} '{}'", r.kind, r.name);
    if (is_device_kind(r.kind)) {
      ++device_rows;
      device_sum += r.self_cuda_ns;
      device_pct += r.self_cuda_pct;
    }
    if (is_range_kind(r.kind)) range_self_cuda += r.self_cuda_ns;
    if (r.self_cuda_pct > 100.0 + tol)
      log.fail(subject, "Self CUDA % <= 100", fmt::format("{}%", num(r.self_cuda_pct)), "row above 100% of Self CUDA");
    if (r.self_cpu_pct > 100.0 + tol)
      log.fail(subject, "Self CPU % <= 100", fmt::format("{}%", num(r.self_cpu_pct)), "row above 100% of Self CPU");
    if (tb.self_cuda_total_ns > 0) {
      double want = 100.0 * static_cast<double>(r.self_cuda_ns) / static_cast<double>(tb.self_cuda_total_ns);
      if (std::fabs(want - r.self_cuda_pct) > tol)
        log.fail(subject, fmt::format("Self CUDA % = 100 * {} / {} = {}", r.self_cuda_ns, tb.self_cuda_total_ns, num(want)),
                 fmt::format("{}%", num(r.self_cuda_pct)), "Self CUDA % does not match Self CUDA / total");
    }
  }
  if (tb.self_cuda_total_ns != device_sum)
    log.fail("self_cuda_total_ns", fmt::format("{} (sum of device rows' self_cuda_ns)", device_sum),
             fmt::format("{}", tb.self_cuda_total_ns), "Self CUDA total is not the sum of the device rows");
  if (device_rows > 0 && tb.self_cuda_total_ns > 0 && std::fabs(device_pct - 100.0) > tol)
    log.fail("Self CUDA % over device rows", fmt::format("100 +- {}", num(tol)), num(device_pct),
             "device rows' Self CUDA % does not sum to 100");

  // Host ranges' Self CUDA adds up to the total when every device activity has an External id.
  std::size_t unattributed = 0;
  for (const Ev* e : d.full.device)
    if (e->external_id == 0) ++unattributed;
  if (unattributed == 0) {
    if (range_self_cuda != tb.self_cuda_total_ns)
      log.fail("Self CUDA over host range rows", fmt::format("{} (self_cuda_total_ns)", tb.self_cuda_total_ns),
               fmt::format("{}", range_self_cuda),
               "every device activity is inside a host range, so host ranges' Self CUDA must add up to the total");
  }

  // Parent rows' CUDA total >= child rows': parent links from trace_only's range nesting, by
  // (kind, name); checked for children whose ranges all have one parent name.
  auto parents = range_parents(d.trace_only);
  std::unordered_map<std::uint64_t, const Ev*> by_id;
  by_id.reserve(d.trace_only.ranges.size());
  for (const Ev* r : d.trace_only.ranges) by_id.emplace(r->external_id, r);
  std::map<Key, std::set<Key>> parent_names;
  for (const Ev* r : d.trace_only.ranges) {
    auto pit = parents.find(r->external_id);
    if (pit == parents.end() || pit->second == 0) continue;
    auto p = by_id.find(pit->second);
    if (p == by_id.end()) continue;
    parent_names[{cat_name(r->cat), r->name}].insert({cat_name(p->second->cat), p->second->name});
  }
  std::size_t links = 0;
  for (const auto& [child, ps] : parent_names) {
    if (ps.size() != 1 || *ps.begin() == child) continue;
    auto c = rows.find(child);
    auto p = rows.find(*ps.begin());
    if (c == rows.end() || p == rows.end()) continue;
    ++links;
    if (p->second->cuda_total_ns < c->second->cuda_total_ns)
      log.fail(fmt::format("{} '{}' > {} '{}'", p->first.first, p->first.second, child.first, child.second),
               fmt::format("parent CUDA total >= child's {} ns", c->second->cuda_total_ns),
               fmt::format("{} ns", p->second->cuda_total_ns), "a parent range's CUDA total is below its child's");
  }
  log.pass_if_clean("table.json",
                    fmt::format("Self CUDA total = sum of {} device rows; percentages add up; {} parent/child row "
                                "links ordered{}",
                                device_rows, links,
                                unattributed == 0 ? "; host ranges' Self CUDA adds up to the total" : ""));
  if (unattributed != 0)
    log.not_run("Self CUDA over host range rows",
                fmt::format("{} device activities in full.json have no External id, so host ranges' Self CUDA "
                            "need not add up to the total",
                            unattributed));
}

void check_event_vs_cupti(const RunData& d, const ValidateOptions& opts, CheckLog& log) {
  const auto& fixtures = d.events.fixtures;
  if (fixtures.empty()) return log.not_run("", "events.json has no fixtures");

  std::unordered_map<std::uint64_t, const Ev*> full_ranges;
  full_ranges.reserve(d.full.ranges.size());
  for (const Ev* r : d.full.ranges) full_ranges.emplace(r->external_id, r);
  std::unordered_set<std::uint64_t> step_ids;
  for (const auto& f : fixtures)
    for (const auto& s : f.steps) step_ids.insert(s.range_id);

  // Range id -> step range id it is (or is nested in), memoised; 0 = none.
  auto parents = range_parents(d.trace_only);
  std::unordered_map<std::uint64_t, std::uint64_t> step_of;
  step_of.reserve(parents.size());
  auto find_step = [&](std::uint64_t id) {
    std::vector<std::uint64_t> chain;
    std::uint64_t result = 0;
    std::uint64_t cur = id;
    for (std::size_t guard = 0; cur != 0 && guard <= parents.size(); ++guard) {
      if (auto m = step_of.find(cur); m != step_of.end()) {
        result = m->second;
        break;
      }
      chain.push_back(cur);
      if (step_ids.count(cur)) {
        result = cur;
        break;
      }
      auto p = parents.find(cur);
      cur = p == parents.end() ? 0 : p->second;
    }
    for (auto c : chain) step_of[c] = result;
    return result;
  };

  struct Span {
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
    std::int64_t last = std::numeric_limits<std::int64_t>::min();
    std::size_t n = 0;
  };
  std::unordered_map<std::uint64_t, Span> spans;
  for (const Ev* e : d.full.device) {
    if (e->external_id == 0) continue;
    std::uint64_t s = find_step(e->external_id);
    if (s == 0) continue;
    Span& sp = spans[s];
    sp.first = std::min(sp.first, e->start_ns);
    sp.last = std::max(sp.last, e->end_ns());
    ++sp.n;
  }

  for (const auto& f : fixtures) {
    if (f.steps.empty()) {
      log.not_run(f.name, "events.json has no steps for this fixture");
      continue;
    }
    std::vector<std::int64_t> event_ns, cupti_ns;
    event_ns.reserve(f.steps.size());
    cupti_ns.reserve(f.steps.size());
    bool usable = true;
    for (const auto& s : f.steps) {
      const std::string subject = fmt::format("{} step {}", f.name, s.step);
      event_ns.push_back(s.event_ns);
      auto r = full_ranges.find(s.range_id);
      if (r == full_ranges.end()) {
        log.fail(subject, fmt::format("a ProfilerStep range with External id {} in full.json", s.range_id), "none",
                 "events.json names a step range that full.json does not have");
        usable = false;
        continue;
      }
      if (r->second->cat != Cat::UserAnnotation || r->second->name.rfind("ProfilerStep#", 0) != 0)
        log.fail(subject, fmt::format("range {} is a user_annotation 'ProfilerStep#N'", s.range_id),
                 fmt::format("{} '{}'", cat_name(r->second->cat), r->second->name),
                 "events.json range_id is not a ProfilerStep range");
      auto sp = spans.find(s.range_id);
      if (sp == spans.end()) {
        log.fail(subject, fmt::format("device activity under range {}", s.range_id), "none",
                 "no device activity in full.json is attributed to this step");
        usable = false;
        continue;
      }
      cupti_ns.push_back(sp->second.last - sp->second.first);
    }
    const double ev_med = median_of(event_ns);
    if (f.has_median && f.median_ns != ev_med)
      log.fail(f.name + " median_ns", fmt::format("{} (median of steps[].event_ns)", num(ev_med)), num(f.median_ns),
               "events.json median_ns is not the median of its steps");
    if (!usable) continue;
    const double cu_med = median_of(cupti_ns);
    const double diff = std::fabs(ev_med - cu_med);
    const double tol = std::max(static_cast<double>(opts.event_abs_tol_ns), opts.event_rel_tol * ev_med);
    const std::string numbers =
        fmt::format("{} steps: median cudaEvent {} ns, median CUPTI span {} ns, |diff| {} ns ({:.2f}%), tolerance {} ns",
                    f.steps.size(), num(ev_med), num(cu_med), num(diff), ev_med > 0 ? 100.0 * diff / ev_med : 0.0,
                    num(tol));
    if (diff <= tol)
      log.pass(f.name, numbers);
    else
      log.fail(f.name, fmt::format("median CUPTI span within {} ns of median cudaEvent {} ns", num(tol), num(ev_med)),
               fmt::format("median CUPTI span {} ns (|diff| {} ns)", num(cu_med), num(diff)), numbers);
  }
}

void check_verified(const RunData& d, CheckLog& log) {
  if (d.events.fixtures.empty()) return log.not_run("", "events.json has no fixtures");
  for (const auto& f : d.events.fixtures) {
    if (f.verified)
      log.pass(f.name, fmt::format("result matched the host reference (max_rel_error {})", num(f.max_rel_error)));
    else
      log.fail(f.name, "verified: true", fmt::format("verified: false (max_rel_error {})", num(f.max_rel_error)),
               "the kernel's result did not match the host reference");
  }
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

template <class F>
void run_check(ValidationReport& report, const char* name, const ValidateOptions& opts, F&& fn) {
  CheckLog log(report, name, opts.max_failures_per_check);
  fn(log);
  log.close();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Entry points

ValidationReport validate_run_dir(const fs::path& dir, const ValidateOptions& opts) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir.string() + ": not a directory");
  RunData d;
  d.table = parse_table(dir / "table.json");
  d.trace_only = parse_trace(dir / "trace_only.json", "trace_only", true);
  d.full = parse_trace(dir / "full.json", "full", false);
  d.events = parse_events(dir / "events.json");

  ValidationReport report;
  report.run_dir = dir.string();
  report.source_meta = d.full.meta;
  report.tolerances[checks::kKernelStats] = "exact: integer ns, median as a double (mean of the two middle values)";
  report.tolerances[checks::kTableTotals] =
      fmt::format("percentages within +-{} percentage points; ns totals exact", num(opts.pct_tol));
  report.tolerances[checks::kEventVsCupti] = fmt::format(
      "per fixture |median cudaEvent step time - median CUPTI step span| <= max({} ns, {} x median cudaEvent); "
      "CUPTI span of a step = first device activity start to last device activity end among activities whose "
      "External id is the step's ProfilerStep range or a range nested in it",
      opts.event_abs_tol_ns, num(opts.event_rel_tol));

  run_check(report, checks::kKernelStats, opts, [&](CheckLog& l) { check_kernel_stats(d, l); });
  run_check(report, checks::kAttribution, opts, [&](CheckLog& l) { check_attribution(d, l); });
  run_check(report, checks::kFlows, opts, [&](CheckLog& l) { check_flows(d, l); });
  run_check(report, checks::kNoDroppedRecords, opts, [&](CheckLog& l) { check_dropped(d, l); });
  run_check(report, checks::kDurationsPositive, opts, [&](CheckLog& l) { check_durations(d, l); });
  run_check(report, checks::kStreamOverlap, opts, [&](CheckLog& l) { check_overlap(d, l); });
  run_check(report, checks::kLaunchBeforeKernel, opts, [&](CheckLog& l) { check_launch_before(d, l); });
  run_check(report, checks::kTableTotals, opts, [&](CheckLog& l) { check_table_totals(d, opts, l); });
  run_check(report, checks::kEventVsCupti, opts, [&](CheckLog& l) { check_event_vs_cupti(d, opts, l); });
  run_check(report, checks::kVerified, opts, [&](CheckLog& l) { check_verified(d, l); });
  return report;
}

json report_json(const ValidationReport& report) {
  json meta = report.source_meta.is_object() ? report.source_meta : json::object();
  meta["format"] = "validation";
  meta["version"] = 1;
  meta["created_utc"] = now_utc();
  const CheckCounts c = report.counts();
  json checks_j = json::array();
  for (const auto& r : report.checks)
    checks_j.push_back({{"check", r.check},
                        {"status", to_string(r.status)},
                        {"subject", r.subject},
                        {"expected", r.expected},
                        {"found", r.found},
                        {"message", r.message}});
  json tol = json::object();
  for (const auto& [k, v] : report.tolerances) tol[k] = v;
  json doc = json::object();
  doc["crossbench"] = std::move(meta);
  doc["passed"] = report.passed();
  doc["run_dir"] = report.run_dir;
  doc["tolerances"] = std::move(tol);
  doc["summary"] = {{"passed", c.passed}, {"failed", c.failed}, {"not_run", c.not_run}};
  doc["checks"] = std::move(checks_j);
  return doc;
}

void write_report_json(const ValidationReport& report, std::ostream& out) {
  out << report_json(report).dump(1) << '\n';
}

fs::path write_report_json(const ValidationReport& report, const fs::path& dir_or_file) {
  std::error_code ec;
  fs::path path = fs::is_directory(dir_or_file, ec) ? dir_or_file / "validation.json" : dir_or_file;
  write_file_atomic(path, [&](std::ostream& out) { write_report_json(report, out); });
  return path;
}

void print_summary(const ValidationReport& report, std::ostream& out) {
  out << "validation of " << (report.run_dir.empty() ? "(run)" : report.run_dir) << ": "
      << (report.passed() ? "PASSED" : "FAILED") << '\n';
  // Checks in report order, each once.
  std::vector<std::string> order;
  for (const auto& r : report.checks)
    if (std::find(order.begin(), order.end(), r.check) == order.end()) order.push_back(r.check);
  std::string passed_list;
  for (const auto& name : order)
    if (report.status_of(name) == CheckStatus::Passed)
      passed_list += (passed_list.empty() ? "" : ", ") + name;
  if (!passed_list.empty()) out << "  passed: " << passed_list << '\n';
  for (const auto& r : report.checks) {
    if (r.status == CheckStatus::Passed) continue;
    out << "  " << (r.status == CheckStatus::Failed ? "FAILED " : "NOT RUN ") << r.check;
    if (!r.subject.empty()) out << " [" << r.subject << "]";
    if (!r.expected.empty() || !r.found.empty())
      out << ": expected " << r.expected << ", found " << r.found;
    else if (!r.message.empty())
      out << ": " << r.message;
    out << '\n';
  }
  bool event_ran = false;
  for (const auto& r : report.checks) {
    if (r.check != checks::kEventVsCupti || r.status == CheckStatus::NotRun) continue;
    event_ran = true;
    if (r.status == CheckStatus::Passed) out << "  event_vs_cupti [" << r.subject << "]: " << r.message << '\n';
  }
  if (auto t = report.tolerances.find(checks::kEventVsCupti); event_ran && t != report.tolerances.end())
    out << "  tolerance event_vs_cupti: " << t->second << '\n';
  const CheckCounts c = report.counts();
  out << "results: " << c.passed << " passed, " << c.failed << " failed, " << c.not_run << " not run\n";
}

}  // namespace xb
