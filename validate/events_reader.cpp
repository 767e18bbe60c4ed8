// cudaEvent timings reader (validate/events_reader.h).
#include "validate/events_reader.h"

#include <algorithm>

#include <cmath>

#include <fmt/format.h>

#include "common/errors.h"
#include "common/strict_json.h"
#include "validate/json_scan.h"

namespace xb {

namespace {

using json = nlohmann::json;

/// Error helper: "<label>: <where><what>".
struct Bad {
  const std::string& label;
  [[noreturn]] void operator()(const std::string& what) const { throw InputError(label + ": " + what); }
};

double number(const json& obj, const char* key, const std::string& where, const Bad& bad) {
  auto it = obj.find(key);
  if (it == obj.end()) bad(fmt::format("{}missing \"{}\"", where, key));
  if (!it->is_number()) bad(fmt::format("{}\"{}\" is not a number", where, key));
  const double v = it->get<double>();
  if (!std::isfinite(v)) bad(fmt::format("{}\"{}\" is not finite", where, key));
  return v;
}

std::int64_t integer(const json& obj, const char* key, const std::string& where, const Bad& bad) {
  auto it = obj.find(key);
  if (it == obj.end()) bad(fmt::format("{}missing \"{}\"", where, key));
  if (it->is_number_unsigned()) {
    if (it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      bad(fmt::format("{}\"{}\" is out of range", where, key));
    return static_cast<std::int64_t>(it->get<std::uint64_t>());
  }
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<std::int64_t>(d);
  }
  bad(fmt::format("{}\"{}\" is not an integer", where, key));
}

/// A fixture's "timing" block: mode, graph, stop, sync and whether NVML saw throttling.
void read_timing(const json& t, const std::string& where, const Bad& bad, EventFixture& fix) {
  if (!t.is_object()) bad(where + "\"timing\" is not an object");
  auto text = [&](const char* key) {
    auto v = t.find(key);
    if (v == t.end() || !v->is_string()) bad(where + "timing.\"" + key + "\" is missing or not a string");
    return v->get<std::string>();
  };
  fix.mode = text("mode");
  if (auto g = t.find("graph"); g != t.end() && g->is_boolean()) fix.graph = g->get<bool>();
  fix.stop = text("stop");
  if (auto y = t.find("sync"); y != t.end()) {
    if (!y->is_string() || (*y != "declared" && *y != "detected"))
      bad(where + "timing.\"sync\" is not \"declared\" or \"detected\"");
    fix.sync = y->get<std::string>();
  }
  for (const char* g : {"gpu_before", "gpu_after"}) {
    if (auto s = t.find(g); s != t.end() && s->is_object()) {
      if (auto th = s->find("throttled"); th != s->end() && th->is_boolean() && th->get<bool>()) fix.throttled = true;
    }
  }
}

/// A fixture's "work" block (the work signature): recorded or why not, its streams, waits,
/// allocations, default-stream ids and items (each ordered after the start and before the end?).
void read_work(const json& w, const std::string& where, const Bad& bad, EventFixture& fix) {
  if (!w.is_object()) bad(where + "\"work\" is not an object");
  fix.has_work = true;
  auto r = w.find("recorded");
  if (r == w.end() || !r->is_boolean()) bad(where + "work.\"recorded\" is missing or not a boolean");
  fix.work_recorded = r->get<bool>();
  const auto text = [&](const char* key) {
    auto v = w.find(key);
    if (v == w.end() || !v->is_string()) bad(where + "work.\"" + key + "\" is missing or not a string");
    return v->get<std::string>();
  };
  // A CUPTI stream id (32 bits).
  const auto stream_id = [&](const json& obj, const char* key, const std::string& at) {
    const std::int64_t id = integer(obj, key, at, bad);
    if (id < 0 || id > 0xffffffffLL) bad(at + "\"" + key + "\" is out of range");
    return static_cast<std::uint32_t>(id);
  };
  if (!fix.work_recorded) {
    fix.work_why = text("why");
  } else {
    fix.work_summary = text("summary");
    fix.work_streams = static_cast<int>(integer(w, "streams", where + "work.", bad));
    fix.work_cross_stream_waits = static_cast<int>(integer(w, "cross_stream_waits", where + "work.", bad));
    if (w.contains("stream_ordered_allocations"))
      fix.work_allocations = static_cast<int>(integer(w, "stream_ordered_allocations", where + "work.", bad));
    for (const char* key : {"legacy_stream", "per_thread_stream"}) {
      if (w.contains(key)) fix.work_default_stream_ids.push_back(stream_id(w, key, where + "work."));
    }
    auto items = w.find("items");
    if (items == w.end() || !items->is_array()) bad(where + "work.\"items\" is missing or not an array");
    fix.work_covered = true;
    for (const json& item : *items) {
      if (!item.is_object()) bad(where + "work.items[] entry is not an object");
      for (const char* key : {"after_start", "before_end"}) {
        auto b = item.find(key);
        if (b == item.end() || !b->is_boolean()) bad(where + "work.items[]." + key + " is missing or not a boolean");
        fix.work_covered = fix.work_covered && b->get<bool>();
      }
      const std::uint32_t id = stream_id(item, "stream", where + "work.items[].");
      if (std::find(fix.work_stream_ids.begin(), fix.work_stream_ids.end(), id) == fix.work_stream_ids.end())
        fix.work_stream_ids.push_back(id);
      ++fix.work_items;
    }
  }
}

/// A fixture's "steps": step number, range id, event time and launches of each.
void read_steps(const json& j, const std::string& where, const Bad& bad, EventFixture& fix) {
  auto steps = j.find("steps");
  if (steps == j.end() || !steps->is_array()) bad(where + "\"steps\" is missing or not an array");
  for (const json& s : *steps) {
    if (!s.is_object()) bad(where + "steps[] entry is not an object");
    EventStep st;
    st.step = integer(s, "step", where + "steps[].", bad);
    const std::int64_t id = integer(s, "range_id", where + "steps[].", bad);
    if (id < 0) bad(where + "steps[].\"range_id\" is negative");
    st.range_id = static_cast<std::uint64_t>(id);
    st.event_ns = integer(s, "event_ns", where + "steps[].", bad);
    if (s.contains("launches")) {
      const std::int64_t launches = integer(s, "launches", where + "steps[].", bad);
      if (launches < 1 || launches > 1000000) bad(where + "steps[].\"launches\" is not in 1..1000000");
      st.launches = static_cast<int>(launches);
    }
    fix.steps.push_back(st);
  }
}

EventsData parse_per_step(json& doc, const std::string& label, const Bad& bad) {
  EventsData ev;
  ev.kind = EventsData::Kind::PerStep;
  auto meta = doc.find("crossbench");
  if (meta == doc.end() || !meta->is_object()) bad("no \"crossbench\" metadata block");
  auto f = meta->find("format");
  if (f == meta->end() || !f->is_string()) bad("crossbench.format is missing");
  if (*f != "events") bad(fmt::format("crossbench.format is \"{}\", expected \"events\"", f->get<std::string>()));
  if (auto v = meta->find("version"); v != meta->end() && !(v->is_number_integer() && v->get<std::int64_t>() == 1))
    bad(fmt::format("unsupported crossbench.version {}", v->dump()));
  ev.meta = *meta;
  auto fx = doc.find("fixtures");
  if (fx == doc.end()) bad("missing \"fixtures\"");
  if (!fx->is_array()) bad("\"fixtures\" is not an array");
  for (std::size_t i = 0; i < fx->size(); ++i) {
    const json& j = (*fx)[i];
    const std::string where = fmt::format("fixtures[{}]: ", i);
    if (!j.is_object()) bad(where + "not an object");
    EventFixture fix;
    auto name = j.find("name");
    if (name == j.end() || !name->is_string()) bad(where + "\"name\" is missing or not a string");
    fix.name = name->get<std::string>();
    auto verified = j.find("verified");
    if (verified == j.end() || !verified->is_boolean()) bad(where + "\"verified\" is missing or not a boolean");
    fix.verified = verified->get<bool>();
    if (auto r = j.find("reference"); r != j.end()) {
      if (!r->is_boolean()) bad(where + "\"reference\" is not a boolean");
      fix.has_reference = r->get<bool>();
    }
    if (auto m = j.find("max_rel_error"); m != j.end() && m->is_number()) fix.max_rel_error = m->get<double>();
    // "step_median_ns" (the median of steps[].event_ns); files written before 2026-12-01 call it "median_ns".
    const char* median_key = j.contains("step_median_ns") ? "step_median_ns" : "median_ns";
    if (auto m = j.find(median_key); m != j.end() && !m->is_null()) {
      fix.median_ns = number(j, median_key, where, bad);
      fix.has_median = true;
    }
    if (auto e = j.find("error"); e != j.end()) {
      if (!e->is_string()) bad(where + "\"error\" is not a string");
      fix.error = e->get<std::string>();
    }
    if (auto t = j.find("timing"); t != j.end()) read_timing(*t, where, bad, fix);
    if (auto w = j.find("work"); w != j.end()) read_work(*w, where, bad, fix);
    if (j.contains("graph_replay_items"))
      fix.graph_replay_items = static_cast<int>(integer(j, "graph_replay_items", where, bad));
    read_steps(j, where, bad, fix);
    ev.fixtures.push_back(std::move(fix));
  }
  (void)label;
  return ev;
}

EventsData parse_summary(json& doc, const Bad& bad) {
  EventsData ev;
  ev.kind = EventsData::Kind::OtherCalls;
  const json& runs = doc["runs"];
  if (!runs.is_array()) bad("\"runs\" is not an array");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json& r = runs[i];
    const std::string where = fmt::format("runs[{}]: ", i);
    if (!r.is_object()) bad(where + "not an object");
    EventRun run;
    run.n = integer(r, "n", where, bad);
    auto op = r.find("op");
    if (op == r.end() || !op->is_string()) bad(where + "\"op\" is missing or not a string");
    run.op = op->get<std::string>();
    auto e = r.find("event");
    if (e == r.end() || !e->is_object()) bad(where + "\"event\" is missing or not an object");
    run.median_ns = number(*e, "median_us", where + "event.", bad) * 1000.0;
    if (e->contains("min_us")) run.min_ns = number(*e, "min_us", where + "event.", bad) * 1000.0;
    if (e->contains("max_us")) run.max_ns = number(*e, "max_us", where + "event.", bad) * 1000.0;
    ev.runs.push_back(std::move(run));
  }
  return ev;
}

}  // namespace

EventsData parse_events(std::string_view text, const std::string& label) {
  const Bad bad{label};
  json doc = strict_json::parse_json(text, label);
  if (!doc.is_object()) bad("top level is not a JSON object");
  EventsData ev;
  if (doc.contains("crossbench") || !doc.contains("runs"))
    ev = parse_per_step(doc, label, bad);
  else
    ev = parse_summary(doc, bad);
  ev.path = label;
  ev.file = std::filesystem::path(label).filename().string();
  return ev;
}

EventsData read_events(const std::filesystem::path& path) {
  const std::string p = path.string();
  return parse_events(scan::read_input(p), p);
}

}  // namespace xb
