// The harness's records in a session (bench/core/fixture_records.h): their JSON (fixture_json.h),
// attaching them to a RawSession as client blocks, and reading them back strictly with
// common/strict_json.h's accessors, as raw_session.json's reader reads its own keys, so that a bad
// fixture is reported in the same words as a bad record ("raw_session: fixtures[2]: missing key
// \"op\"").
#include "bench/core/fixture_records.h"
#include "bench/core/fixture_json.h"

#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "common/strict_json.h"
#include "profiler/model/session_io.h"

namespace xb {
namespace {

using nlohmann::json;
namespace sj = strict_json;

void check_finite(double value, const std::string& what) {
  if (!std::isfinite(value)) throw std::invalid_argument(what + " is not finite (JSON has no NaN/Inf)");
}

/// The compact text raw_session.json has always written these blocks in.
std::string compact(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

GpuClockSample parse_gpu_sample(const json& j, const std::string& w) {
  GpuClockSample g;
  g.valid = sj::need_bool(j, "valid", w);
  if (j.contains("error")) g.error = sj::need_string(j, "error", w);
  g.sm_clock_mhz = sj::need_integer<int>(j, "sm_clock_mhz", w);
  g.mem_clock_mhz = sj::need_integer<int>(j, "mem_clock_mhz", w);
  g.temperature_c = sj::need_integer<int>(j, "temperature_c", w);
  g.power_w = sj::need_number(j, "power_w", w);
  g.throttle_reasons = sj::need_integer<std::uint64_t>(j, "throttle_reasons", w);
  g.throttled = sj::need_bool(j, "throttled", w);
  return g;
}

/// timing.sample_sm_clock_mhz (one positive number or null per sample) and timing.sm_clock_absent
/// (the reasons, counted: as many as the nulls).
void parse_sample_clocks(const json& j, FixtureTiming& t, const std::string& w) {
  const json& clocks = sj::need_array(j, "sample_sm_clock_mhz", w);
  if (clocks.size() != t.samples_ns.size())
    sj::fail(w, fmt::format("timing sample_sm_clock_mhz holds {} values for {} samples", clocks.size(),
                            t.samples_ns.size()));
  int nulls = 0;
  for (const json& c : clocks) {
    if (c.is_null()) {
      t.sample_sm_clock_mhz.emplace_back();
      ++nulls;
    } else if (c.is_number() && std::isfinite(c.get<double>()) && c.get<double>() > 0) {
      t.sample_sm_clock_mhz.emplace_back(c.get<double>());
    } else {
      sj::fail(w, "timing sample_sm_clock_mhz holds a value that is neither a positive number nor null");
    }
  }
  const json& absent = sj::need_object(j, "sm_clock_absent", w);
  const std::string wa = w + ": timing sm_clock_absent";
  SmClockAbsent& a = t.sm_clock_absent;
  a.other_sm = sj::need_integer<int>(absent, "other_sm", wa);
  a.host_gap = sj::need_integer<int>(absent, "host_gap", wa);
  a.short_window = sj::need_integer<int>(absent, "short_window", wa);
  a.unreadable = sj::need_integer<int>(absent, "unreadable", wa);
  a.last = sj::need_integer<int>(absent, "last", wa);
  if (a.other_sm < 0 || a.host_gap < 0 || a.short_window < 0 || a.unreadable < 0 || a.last < 0 || a.last > 1 ||
      a.total() != nulls)
    sj::fail(wa, fmt::format("counts must be non-negative (last 0 or 1) and add up to the {} null clocks", nulls));
}

FixtureTiming parse_fixture_timing(const json& j, const std::string& w) {
  FixtureTiming t;
  const std::string mode = sj::need_string(j, "mode", w);
  t.mode = timing_mode_named(mode);
  if (!t.mode) sj::fail(w, "timing mode must be \"hot\" or \"cold\", not \"" + mode + "\"");
  t.blocking = sj::need_bool(j, "blocking", w);
  if (j.contains("graph")) t.graph = sj::need_bool(j, "graph", w);  // optional: false before graph mode
  if (j.contains("sync")) {  // optional: absent for launches that do not synchronize
    t.sync = sj::need_string(j, "sync", w);
    if (t.sync != "declared" && t.sync != "detected")
      sj::fail(w, "timing sync must be \"declared\" or \"detected\", not \"" + t.sync + "\"");
  }
  if (j.contains("sync_declared")) t.sync_declared = sj::need_bool(j, "sync_declared", w);  // optional: false
  if (j.contains("sync_found_after")) {                                                     // optional: 0
    t.sync_found_after = sj::need_integer<std::int64_t>(j, "sync_found_after", w);
    if (t.sync_found_after < 1 || t.sync.empty())
      sj::fail(w, "timing sync_found_after must be at least 1, and only beside a sync");
  }
  t.launches_per_sample = sj::need_integer<int>(j, "launches_per_sample", w);
  t.rotation = sj::need_integer<int>(j, "rotation", w);
  t.stopping.max_noise_fraction = sj::need_number(j, "max_noise", w);
  // Optional: absent in sessions recorded before the median's interval stopped sampling (RSD rule).
  if (j.contains("confidence")) {
    t.confidence = sj::need_number(j, "confidence", w);
    if (!(t.confidence > 0 && t.confidence < 1)) sj::fail(w, "timing confidence must be in (0, 1)");
  }
  t.stopping.min_samples = sj::need_integer<int>(j, "min_samples", w);
  t.stopping.min_time_s = sj::need_number(j, "min_time_s", w);
  t.stopping.max_time_s = sj::need_number(j, "max_time_s", w);
  // Optional: absent when no minimum batch length applied (and before the rule had one).
  if (j.contains("batch_min_s")) {
    t.batch_min_s = sj::need_number(j, "batch_min_s", w);
    if (!(t.batch_min_s > 0) || !std::isfinite(t.batch_min_s)) sj::fail(w, "timing batch_min_s must be positive");
  }
  const std::string stop = sj::need_string(j, "stop", w);
  t.stop = stop_reason_named(stop);  // "" (no stop recorded: a fixture of another's samples) stays none
  if (!t.stop && !stop.empty()) sj::fail(w, "timing stop must be \"converged\" or \"timed out\", not \"" + stop + "\"");
  t.sampling_s = sj::need_number(j, "sampling_s", w);
  const json& samples = sj::need_array(j, "samples_ns", w);
  t.samples_ns.reserve(samples.size());
  for (const json& v : samples) {
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      sj::fail(w, "samples_ns holds a value that is not a finite number");
    t.samples_ns.push_back(v.get<double>());
  }
  t.warmed_up = sj::need_bool(j, "warmed_up", w);
  t.cold_start = sj::need_bool(j, "cold_start", w);
  t.early_slowdown = sj::need_number(j, "early_slowdown", w);
  t.gpu_before = parse_gpu_sample(sj::need(j, "gpu_before", w), w);
  t.gpu_after = parse_gpu_sample(sj::need(j, "gpu_after", w), w);
  // Optional: absent where not recorded (graph mode, --no-blocking, a launch that synchronizes,
  // sessions recorded before 2026-12-05).
  if (j.contains("sample_sm_clock_mhz")) parse_sample_clocks(j, t, w);
  return t;
}

/// A fixture's "work" when its file has none (recorded before the probe existed).
constexpr const char* kWorkNotRecordedBefore = "the session was recorded before the work-signature probe (2026-12-04)";

WorkSignature parse_work(const json& j, const std::string& w) {
  WorkSignature s;
  s.recorded = sj::need_bool(j, "recorded", w);
  if (!s.recorded) {
    s.why = sj::need_string(j, "why", w);
    return s;
  }
  s.handed_stream_id = sj::need_integer<std::uint32_t>(j, "handed_stream", w);
  if (j.contains("legacy_stream"))
    s.legacy_stream_id = sj::need_integer<std::uint32_t>(j, "legacy_stream", w);  // optional: 0
  if (j.contains("per_thread_stream"))
    s.per_thread_stream_id = sj::need_integer<std::uint32_t>(j, "per_thread_stream", w);
  s.streams = sj::need_integer<int>(j, "streams", w);
  s.cross_stream_waits = sj::need_integer<int>(j, "cross_stream_waits", w);
  if (j.contains("probe_s")) s.probe_s = sj::need_number(j, "probe_s", w);  // optional: 0
  if (j.contains("stream_ordered_allocations"))                             // optional: 0
    s.stream_ordered_allocations = sj::need_integer<int>(j, "stream_ordered_allocations", w);
  const json& items = sj::need_array(j, "items", w);
  for (const json& i : items) {
    WorkItem item;
    try {
      item.kind = raw_kind_from_string(sj::need_string(i, "kind", w));
      item.role = stream_role_from_string(sj::need_string(i, "where", w));
    } catch (const std::invalid_argument& e) {
      sj::fail(w, std::string("work item: ") + e.what());
    }
    if (item.kind != RawKind::Kernel && item.kind != RawKind::Memcpy && item.kind != RawKind::Memset)
      sj::fail(w, "work item kind must be kernel, memcpy or memset");
    item.name = sj::need_string(i, "name", w);
    item.stream_id = sj::need_integer<std::uint32_t>(i, "stream", w);
    item.after_start = sj::need_bool(i, "after_start", w);
    item.before_end = sj::need_bool(i, "before_end", w);
    item.bytes = sj::need_integer<std::uint64_t>(i, "bytes", w);
    item.duration_ns = sj::need_integer<std::int64_t>(i, "duration_ns", w);
    s.items.push_back(std::move(item));
  }
  s.recorded = true;
  return s;
}

FixtureInfo parse_fixture(const json& j, const std::string& w) {
  FixtureInfo f;
  f.name = sj::need_string(j, "name", w);
  f.op = sj::need_string(j, "op", w);
  f.dtype = sj::need_string(j, "dtype", w);
  f.size = sj::need_integer<std::int64_t>(j, "size", w);
  f.flops = sj::need_number(j, "flops", w);
  f.bytes = sj::need_number(j, "bytes", w);
  f.verified = sj::need_bool(j, "verified", w);
  f.max_rel_error = sj::need_number(j, "max_rel_error", w);
  if (j.contains("reference")) f.has_reference = sj::need_bool(j, "reference", w);
  if (j.contains("timing")) f.timing = parse_fixture_timing(j.at("timing"), w);
  if (j.contains("error")) f.error = sj::need_string(j, "error", w);
  // Optional: absent in sessions recorded before the work-signature probe.
  if (j.contains("work")) {
    f.work = parse_work(j.at("work"), w + ".work");
  } else {
    f.work.why = kWorkNotRecordedBefore;
  }
  if (j.contains("graph_replay_items")) f.graph_replay_items = sj::need_integer<int>(j, "graph_replay_items", w);
  return f;
}

/// What raw_session.json's reader has always checked of a fixture's values.
void check_fixture(const FixtureInfo& f, std::size_t i, const std::string& file) {
  const auto bad = [&](const std::string& what) { throw InputError(file + ": " + what); };
  if (f.timing.mode) {
    const FixtureTiming& t = f.timing;
    if (t.launches_per_sample < 1 || t.rotation < 1) {
      bad(fmt::format("fixtures[{}]: timing launches_per_sample and rotation must be at least 1", i));
    }
    for (double v : t.samples_ns) {
      if (!(v > 0)) bad(fmt::format("fixtures[{}]: timing sample {} ns is not positive", i, v));
    }
  }
  if (f.size < 1 || !(f.flops >= 0) || !(f.bytes >= 0) || !(f.max_rel_error >= 0)) {
    bad(fmt::format("fixtures[{}]: size, flops, bytes and max_rel_error must be non-negative (size >= 1)", i));
  }
}

/// A block's text as JSON. The profiler wrote or checked it, so only a client that filled the
/// session by hand can make this fail.
json block_json(const std::string& text, const std::string& where) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) sj::fail(where, "is not JSON");
  return j;
}

}  // namespace

json sample_stats_json(const SampleStats& st) {
  return {{"count", st.count},  {"median_ns", st.median}, {"min_ns", st.min}, {"max_ns", st.max},
          {"mean_ns", st.mean}, {"stddev_ns", st.stddev}, {"mad_ns", st.mad}, {"q1_ns", st.q1},
          {"q3_ns", st.q3},     {"rsd", st.rsd()}};
}

json gpu_sample_json(const GpuClockSample& g) {
  check_finite(g.power_w, "GPU power");
  json j{{"valid", g.valid},
         {"sm_clock_mhz", g.sm_clock_mhz},
         {"mem_clock_mhz", g.mem_clock_mhz},
         {"temperature_c", g.temperature_c},
         {"power_w", g.power_w},
         {"throttle_reasons", g.throttle_reasons},
         {"throttled", g.throttled}};
  if (!g.error.empty()) j["error"] = g.error;
  return j;
}

json gpu_meta_json(const GpuMeta& g) {
  check_finite(g.power_limit_w, "GPU power limit");
  return json{{"source", g.source},
              {"error", g.error},
              {"uuid", g.uuid},
              {"pci_bus_id", g.pci_bus_id},
              {"driver_version", g.driver_version},
              {"power_limit_w", g.power_limit_w},
              {"sm_clock_max_mhz", g.sm_clock_max_mhz},
              {"mem_clock_max_mhz", g.mem_clock_max_mhz},
              {"at_start", gpu_sample_json(g.at_start)},
              {"at_end", gpu_sample_json(g.at_end)}};
}

MedianInterval fixture_median_interval(const FixtureTiming& t) {
  return median_interval(t.samples_ns, t.confidence > 0 ? t.confidence : 0.95,
                         batches_in_span(t.sampling_s, t.batch_min_s));
}

std::string sync_note(const FixtureTiming& t) {
  const std::string how = t.sync == "declared" ? "declared .sync()" : "detected";
  if (t.sync.empty()) {
    return t.sync_declared ? "is declared .sync(), but its launch did not wait for the device after its setup call: "
                             "timed behind the blocking kernel like any asynchronous launch (a later call that "
                             "synchronizes would be caught and the rest timed without it)"
                           : "";
  }
  if (t.sync_found_after > 0) {
    return fmt::format(
        "synchronized with the device in a launch after {} calls that did not ({}): the samples so far were "
        "dropped and the rest timed without the blocking kernel, so its times include the host's launch overhead",
        t.sync_found_after, how);
  }
  return fmt::format(
      "synchronizes with the device in its launch ({}): timed without the blocking kernel, so its times "
      "include the host's launch overhead",
      t.sync == "declared" ? "declared .sync(), and it waited for the blocking kernel"
                           : "detected: the call waited for the blocking kernel");
}

json sm_clock_range_json(const SmClockRange& r) {
  return {{"samples", r.samples}, {"min_mhz", r.min_mhz}, {"median_mhz", r.median_mhz}, {"max_mhz", r.max_mhz}};
}

std::string sm_clock_text(const FixtureTiming& t) {
  if (t.sample_sm_clock_mhz.empty()) return "";
  const SmClockAbsent& a = t.sm_clock_absent;
  std::string absent;
  const auto add = [&absent](int n, const std::string& why) {
    if (n > 0) absent += fmt::format("{}{} {}", absent.empty() ? "; absent: " : ", ", n, why);
  };
  add(a.other_sm, "on another SM");
  add(a.host_gap, fmt::format("window over {:g}x the sample (the host's gap)", kClockWindowMaxEventFactor));
  add(a.short_window, fmt::format("window under {} us", kClockWindowMinNs / 1000));
  add(a.unreadable, "unreadable");
  add(a.last, "last");
  const std::size_t n = t.sample_sm_clock_mhz.size();
  const auto r = sm_clock_range(t.sample_sm_clock_mhz);
  if (!r) return fmt::format("none measured in its {} samples{}", n, absent);
  return fmt::format("{:.1f} / {:.1f} / {:.1f} MHz (min / median / max) over {} of {} samples{}", r->min_mhz,
                     r->median_mhz, r->max_mhz, r->samples, n, absent);
}

json fixture_timing_json(const FixtureTiming& t) {
  for (double v : {t.stopping.max_noise_fraction, t.confidence, t.stopping.min_time_s, t.stopping.max_time_s,
                   t.sampling_s, t.early_slowdown, t.batch_min_s})
    check_finite(v, "fixture timing");
  for (double v : t.samples_ns) check_finite(v, "fixture timing sample");
  json j{{"mode", t.mode ? to_string(*t.mode) : ""},
         {"blocking", t.blocking},
         {"launches_per_sample", t.launches_per_sample},
         {"rotation", t.rotation},
         {"max_noise", t.stopping.max_noise_fraction},
         {"min_samples", t.stopping.min_samples},
         {"min_time_s", t.stopping.min_time_s},
         {"max_time_s", t.stopping.max_time_s},
         {"stop", to_string(t.stop)},
         {"sampling_s", t.sampling_s},
         {"samples_ns", t.samples_ns},
         {"warmed_up", t.warmed_up},
         {"cold_start", t.cold_start},
         {"early_slowdown", t.early_slowdown},
         {"gpu_before", gpu_sample_json(t.gpu_before)},
         {"gpu_after", gpu_sample_json(t.gpu_after)}};
  if (t.graph) j["graph"] = true;                        // optional key: absent means eager launches
  if (t.confidence > 0) j["confidence"] = t.confidence;  // optional key: absent means the RSD rule
  if (!t.sync.empty()) j["sync"] = t.sync;               // optional key: absent means the launch does not synchronize
  if (t.batch_min_s > 0) j["batch_min_s"] = t.batch_min_s;  // optional key: absent means no minimum batch length
  if (t.sync_declared) j["sync_declared"] = true;           // optional key: absent means not declared
  if (t.sync_found_after > 0) j["sync_found_after"] = t.sync_found_after;  // optional key: absent means 0
  if (!t.sample_sm_clock_mhz.empty()) {                                    // optional keys: absent means not recorded
    json clocks = json::array();
    for (const auto& c : t.sample_sm_clock_mhz) {
      if (c) check_finite(*c, "fixture timing SM clock");
      clocks.push_back(c ? json(*c) : json());
    }
    j["sample_sm_clock_mhz"] = std::move(clocks);
    const SmClockAbsent& a = t.sm_clock_absent;
    j["sm_clock_absent"] = {{"other_sm", a.other_sm},
                            {"host_gap", a.host_gap},
                            {"short_window", a.short_window},
                            {"unreadable", a.unreadable},
                            {"last", a.last}};
  }
  return j;
}

bool is_recorded_before_probe(const WorkSignature& work) {
  return !work.recorded && work.why == kWorkNotRecordedBefore;
}

json work_signature_json(const WorkSignature& s) {
  if (!s.recorded) return json{{"recorded", false}, {"why", s.why}};
  json items = json::array();
  for (const WorkItem& w : s.items) {
    items.push_back({{"kind", to_string(w.kind)},
                     {"name", w.name},
                     {"stream", w.stream_id},
                     {"where", to_string(w.role)},
                     {"after_start", w.after_start},
                     {"before_end", w.before_end},
                     {"bytes", w.bytes},
                     {"duration_ns", w.duration_ns}});
  }
  return json{{"recorded", true},
              {"handed_stream", s.handed_stream_id},
              {"legacy_stream", s.legacy_stream_id},
              {"per_thread_stream", s.per_thread_stream_id},
              {"streams", s.streams},
              {"cross_stream_waits", s.cross_stream_waits},
              {"stream_ordered_allocations", s.stream_ordered_allocations},
              {"probe_s", s.probe_s},
              {"covered", s.covered()},
              {"summary", s.summary()},
              {"items", std::move(items)}};
}

json fixture_json(const FixtureInfo& f) {
  check_finite(f.flops, "fixture " + f.name + " flops");
  check_finite(f.bytes, "fixture " + f.name + " bytes");
  check_finite(f.max_rel_error, "fixture " + f.name + " max_rel_error");
  json fj{{"name", f.name},   {"op", f.op},       {"dtype", f.dtype},       {"size", f.size},
          {"flops", f.flops}, {"bytes", f.bytes}, {"verified", f.verified}, {"max_rel_error", f.max_rel_error}};
  if (!f.has_reference) fj["reference"] = false;  // written only when false: older files read as true
  if (f.timing.mode) fj["timing"] = fixture_timing_json(f.timing);
  // Optional keys: a fixture that failed before its probe (or a file from before it) has none.
  if (f.work.recorded || (!f.work.why.empty() && !is_recorded_before_probe(f.work)))
    fj["work"] = work_signature_json(f.work);
  if (f.graph_replay_items >= 0) fj["graph_replay_items"] = f.graph_replay_items;
  if (!f.error.empty()) fj["error"] = f.error;
  return fj;
}

void attach_gpu_meta(SessionMeta& meta, const GpuMeta& gpu) {
  set_metadata(meta, kGpuMetadataKey, compact(gpu_meta_json(gpu)));
}

FixtureBlock fixture_block(const FixtureInfo& fixture) {
  return FixtureBlock{fixture.name, compact(fixture_json(fixture))};
}

void attach_command(SessionMeta& meta, const std::string& command) {
  set_metadata(meta, kRunMetadataKey, compact(json{{"command", command}}));
}

std::string read_command(const SessionMeta& meta) {
  const MetadataBlock* block = find_metadata(meta, kRunMetadataKey);
  if (block == nullptr) return "";
  const json j = block_json(block->json, "raw_session: meta.run");
  if (!j.is_object()) sj::fail("raw_session: meta", "\"run\" is not an object");
  return sj::need_string(j, "command", "raw_session: meta.run");
}

GpuMeta read_gpu_meta(const SessionMeta& meta) {
  const MetadataBlock* block = find_metadata(meta, kGpuMetadataKey);
  // Optional: sessions recorded before NVML metadata have no "gpu" (source stays "not recorded").
  if (block == nullptr) return GpuMeta{};
  const json j = block_json(block->json, "raw_session: meta.gpu");
  if (!j.is_object()) sj::fail("raw_session: meta", "\"gpu\" is not an object");
  const std::string w = "raw_session: meta.gpu";
  GpuMeta g;
  g.source = sj::need_string(j, "source", w);
  g.error = sj::need_string(j, "error", w);
  g.uuid = sj::need_string(j, "uuid", w);
  g.pci_bus_id = sj::need_string(j, "pci_bus_id", w);
  g.driver_version = sj::need_string(j, "driver_version", w);
  g.power_limit_w = sj::need_number(j, "power_limit_w", w);
  g.sm_clock_max_mhz = sj::need_integer<int>(j, "sm_clock_max_mhz", w);
  g.mem_clock_max_mhz = sj::need_integer<int>(j, "mem_clock_max_mhz", w);
  g.at_start = parse_gpu_sample(sj::need_object(j, "at_start", w), "raw_session: meta.gpu.at_start");
  g.at_end = parse_gpu_sample(sj::need_object(j, "at_end", w), "raw_session: meta.gpu.at_end");
  return g;
}

FixtureInfo parse_fixture_json(const json& fixture, std::size_t index, const std::string& file) {
  FixtureInfo f = parse_fixture(fixture, fmt::format("{}: fixtures[{}]", file, index));
  check_fixture(f, index, file);
  return f;
}

std::vector<FixtureInfo> read_fixtures(const RawSession& raw) {
  std::vector<FixtureInfo> fixtures;
  fixtures.reserve(raw.fixtures.size());
  for (std::size_t i = 0; i < raw.fixtures.size(); ++i) {
    fixtures.push_back(
        parse_fixture_json(block_json(raw.fixtures[i].json, fmt::format("raw_session: fixtures[{}]", i)), i));
  }
  return fixtures;
}

RawSession parse_recorded_session(const std::string& text) {
  RawSession raw = parse_raw_session(text);
  const GpuMeta gpu = read_gpu_meta(raw.meta);
  const std::vector<FixtureInfo> fixtures = read_fixtures(raw);
  attach_gpu_meta(raw.meta, gpu);
  for (std::size_t i = 0; i < fixtures.size(); ++i) raw.fixtures[i] = fixture_block(fixtures[i]);
  return raw;
}

RawSession read_recorded_session(const std::filesystem::path& path) {
  return parse_text_file(path, parse_recorded_session);
}

}  // namespace xb
