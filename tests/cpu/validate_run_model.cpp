// The validator tests' hand-written run folder (validate_run_model.h): the model and its files.
#include "tests/cpu/validate_run_model.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

namespace xb::test_model {

Model default_model() {
  Model m;
  m.fixtures = {{"matmul/bf16/64", "matmul", true, {}, "", "hot", true, false, false, ""},
                {"add/bf16/64", "add", true, {}, "", "hot", true, false, false, ""}};
  auto add_step = [&](MFixture& f, std::int64_t step, int k, const std::string& kernel, std::int64_t kdur,
                      bool driver) {
    const std::int64_t t0 = 100000LL * k;
    const std::uint64_t sid = 10u * k + 1, oid = 10u * k + 2, cid = 10u * k + 3;
    m.ranges.push_back({sid, 0, "ProfilerStep#" + std::to_string(step), "user_annotation", t0, t0 + 60000});
    m.ranges.push_back({oid, sid, f.op, "user_annotation", t0 + 1000, t0 + 50000});
    m.ranges.push_back({cid, oid, "aten::" + f.op, "cpu_op", t0 + 2000, t0 + 40000});
    const std::uint64_t c1 = 100u * k + 1, c2 = 100u * k + 2;
    m.api.push_back({"cuda_runtime", "cudaMemsetAsync", t0 + 3000, t0 + 5000, c1, cid, 51});
    if (driver)
      m.api.push_back({"cuda_driver", "cuLaunchKernelEx", t0 + 8000, t0 + 12000, c2, cid, 652});
    else
      m.api.push_back({"cuda_runtime", "cudaLaunchKernel", t0 + 8000, t0 + 12000, c2, cid, 211});
    m.acts.push_back({"gpu_memset", "Memset (Device)", t0 + 6000, t0 + 7000, c1});
    m.acts.push_back({"kernel", kernel, t0 + 13000, t0 + 13000 + kdur, c2});
    f.steps.push_back({step, sid});
  };
  add_step(m.fixtures[0], 3, 1, "gemm_kernel", 20000, false);
  add_step(m.fixtures[0], 4, 2, "gemm_kernel", 20101, false);
  add_step(m.fixtures[1], 5, 3, "add_kernel", 9000, false);
  add_step(m.fixtures[1], 6, 4, "add_kernel", 9001, true);
  m.api.push_back({"cuda_runtime", "cudaDeviceSynchronize", 500000, 510000, 999, 0, 165});
  return m;
}

namespace {

json meta(const Model& m, const char* format) {
  return {{"format", format},
          {"version", 1},
          {"created_utc", "2026-11-29T08:00:00Z"},
          {"dropped_records", m.dropped},
          {"discarded_by_schedule", 12},
          {"window_start_ns", m.base},
          {"window_end_ns", m.base + 1000000},
          {"cuda_driver_version", 13000},
          {"cuda_runtime_version", 13000},
          {"cupti_version", 130001},
          {"cublas_version", 130000},
          {"activity_source", m.activity_source},
          {"schedule", {{"wait", 1}, {"warmup", 1}, {"active", 2}}}};
}

double us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

double median(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const std::size_t n = v.size();
  return n % 2 ? static_cast<double>(v[n / 2])
               : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2;
}

const MApi* launch_of(const Model& m, std::uint64_t corr) {
  for (const auto& a : m.api)
    if (a.corr == corr) return &a;
  return nullptr;
}

json build_table(const Model& m) {
  struct Acc {
    std::string name, kind;
    std::int64_t calls = 0, self_cpu = 0, cpu_total = 0, self_cuda = 0, cuda_total = 0;
    std::vector<std::int64_t> per_call;
  };
  std::map<std::pair<std::string, std::string>, Acc> rows;
  auto row = [&](const std::string& kind, const std::string& name) -> Acc& {
    Acc& a = rows[{kind, name}];
    a.name = name;
    a.kind = kind;
    return a;
  };
  std::map<std::uint64_t, const MRange*> by_id;
  for (const auto& r : m.ranges) by_id[r.id] = &r;
  auto in_subtree = [&](std::uint64_t ext, std::uint64_t root) {
    for (std::uint64_t cur = ext; cur != 0; cur = by_id.count(cur) ? by_id[cur]->parent : 0)
      if (cur == root) return true;
    return false;
  };
  std::int64_t cuda_total = 0;
  for (const auto& a : m.acts) {
    Acc& r = row(a.cat, a.name);
    ++r.calls;
    r.self_cuda += a.end - a.start;
    r.cuda_total += a.end - a.start;
    r.per_call.push_back(a.end - a.start);
    cuda_total += a.end - a.start;
  }
  for (const auto& rg : m.ranges) {
    Acc& r = row(rg.cat, rg.name);
    ++r.calls;
    const std::int64_t dur = rg.end - rg.start;
    std::int64_t children = 0;
    for (const auto& c : m.ranges)
      if (c.parent == rg.id) children += c.end - c.start;
    for (const auto& c : m.api)
      if (c.ext == rg.id) children += c.end - c.start;
    r.cpu_total += dur;
    r.self_cpu += dur - children;
    r.per_call.push_back(dur);
    for (const auto& a : m.acts) {
      const MApi* l = launch_of(m, a.corr);
      if (!l || l->ext == 0) continue;
      if (l->ext == rg.id) r.self_cuda += a.end - a.start;
      if (in_subtree(l->ext, rg.id)) r.cuda_total += a.end - a.start;
    }
  }
  for (const auto& c : m.api) {
    Acc& r = row(c.cat, c.name);
    ++r.calls;
    r.self_cpu += c.end - c.start;
    r.cpu_total += c.end - c.start;
    r.per_call.push_back(c.end - c.start);
  }
  std::int64_t cpu_total = 0;
  for (const auto& [k, r] : rows) cpu_total += r.self_cpu;
  std::vector<const Acc*> sorted;
  for (const auto& [k, r] : rows) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](const Acc* a, const Acc* b) {
    if (a->cuda_total != b->cuda_total) return a->cuda_total > b->cuda_total;
    return a->name < b->name;
  });
  auto pct = [](std::int64_t x, std::int64_t total) {
    return total ? 100.0 * static_cast<double>(x) / static_cast<double>(total) : 0.0;
  };
  json out = json::array();
  for (const Acc* r : sorted) {
    const double calls = static_cast<double>(r->calls);
    out.push_back({{"name", r->name},
                   {"kind", r->kind},
                   {"calls", r->calls},
                   {"self_cpu_ns", r->self_cpu},
                   {"cpu_total_ns", r->cpu_total},
                   {"self_cuda_ns", r->self_cuda},
                   {"cuda_total_ns", r->cuda_total},
                   {"self_cpu_pct", pct(r->self_cpu, cpu_total)},
                   {"cpu_total_pct", pct(r->cpu_total, cpu_total)},
                   {"self_cuda_pct", pct(r->self_cuda, cuda_total)},
                   {"cpu_time_avg_ns", static_cast<double>(r->cpu_total) / calls},
                   {"cuda_time_avg_ns", static_cast<double>(r->cuda_total) / calls},
                   {"median_ns", median(r->per_call)},
                   {"min_ns", *std::min_element(r->per_call.begin(), r->per_call.end())},
                   {"max_ns", *std::max_element(r->per_call.begin(), r->per_call.end())}});
  }
  return {{"crossbench", meta(m, "table")},
          {"self_cpu_total_ns", cpu_total},
          {"self_cuda_total_ns", cuda_total},
          {"rows", out}};
}

json x_event(const std::string& cat, const std::string& name, std::int64_t pid, std::int64_t tid, std::int64_t start,
             std::int64_t end, json args) {
  return {{"ph", "X"},  {"cat", cat},      {"name", name},           {"pid", pid},
          {"tid", tid}, {"ts", us(start)}, {"dur", us(end - start)}, {"args", std::move(args)}};
}

json lane_names(const Model& m) {
  return json::array(
      {{{"ph", "M"}, {"name", "process_name"}, {"pid", m.pid}, {"args", {{"name", "bench"}}}},
       {{"ph", "M"}, {"name", "process_name"}, {"pid", m.device}, {"args", {{"name", "GPU 0"}}}},
       {{"ph", "M"}, {"name", "thread_name"}, {"pid", m.device}, {"tid", 7}, {"args", {{"name", "stream 7"}}}}});
}

json act_args(const Model& m, const MAct& a) {
  return {{"device", m.device}, {"context", 1}, {"stream", a.stream}, {"correlation", a.corr}};
}

json build_trace_only(const Model& m) {
  json evs = lane_names(m);
  for (const auto& a : m.acts)
    evs.push_back(x_event(a.cat, a.name, m.device, a.stream, a.start, a.end, act_args(m, a)));
  for (const auto& c : m.api)
    evs.push_back(x_event(c.cat, c.name, m.pid, m.tid, c.start, c.end, {{"cbid", c.cbid}, {"correlation", c.corr}}));
  for (const auto& r : m.ranges) {
    json args = {{"External id", r.id}};
    if (m.parent_ids) args["Parent id"] = r.parent;
    evs.push_back(x_event(r.cat, r.name, m.pid, m.tid, r.start, r.end, args));
  }
  evs.push_back(x_event("cuda_sync", "Stream Synchronize", m.device, 7, 505000, 509000, {{"correlation", 999}}));
  json ext = json::array();
  for (const auto& c : m.api)
    if (c.ext != 0) ext.push_back({{"correlation", c.corr}, {"External id", c.ext}, {"kind", 1}});
  return {{"schemaVersion", 1},
          {"crossbench", meta(m, "trace_only")},
          {"deviceProperties", json::array({{{"id", 0}, {"name", "NVIDIA H200"}}})},
          {"displayTimeUnit", "ms"},
          {"baseTimeNanoseconds", m.base},
          {"traceEvents", evs},
          {"externalCorrelations", ext}};
}

json build_full(const Model& m) {
  json evs = lane_names(m);
  for (const auto& r : m.ranges)
    evs.push_back(x_event(r.cat, r.name, m.pid, m.tid, r.start, r.end, {{"External id", r.id}}));
  for (const auto& c : m.api)
    evs.push_back(x_event(c.cat, c.name, m.pid, m.tid, c.start, c.end,
                          {{"External id", c.ext}, {"cbid", c.cbid}, {"correlation", c.corr}}));
  for (const auto& a : m.acts) {
    const MApi* l = launch_of(m, a.corr);
    json args = act_args(m, a);
    args["External id"] = l ? l->ext : 0;
    evs.push_back(x_event(a.cat, a.name, m.device, a.stream, a.start, a.end, args));
    if (!l) continue;
    evs.push_back({{"ph", "s"},
                   {"id", a.corr},
                   {"pid", m.pid},
                   {"tid", m.tid},
                   {"ts", us(l->start)},
                   {"cat", "ac2g"},
                   {"name", "ac2g"}});
    evs.push_back({{"ph", "f"},
                   {"id", a.corr},
                   {"pid", m.device},
                   {"tid", a.stream},
                   {"ts", us(a.start)},
                   {"cat", "ac2g"},
                   {"name", "ac2g"},
                   {"bp", "e"}});
  }
  // gpu_user_annotation: per user_annotation range, first start to last end of the device work
  // launched anywhere under it (as the real exporter writes them; annotation_span checks it).
  std::map<std::uint64_t, std::uint64_t> parent;
  for (const auto& r : m.ranges) parent[r.id] = r.parent;
  for (const auto& r : m.ranges) {
    if (r.cat != "user_annotation") continue;
    std::int64_t first = INT64_MAX, last = INT64_MIN;
    for (const auto& a : m.acts) {
      const MApi* l = launch_of(m, a.corr);
      for (std::uint64_t cur = l ? l->ext : 0; cur != 0; cur = parent[cur])
        if (cur == r.id) {
          first = std::min(first, a.start);
          last = std::max(last, a.end);
          break;
        }
    }
    if (first <= last)
      evs.push_back(x_event("gpu_user_annotation", r.name, m.device, 7, first, last, {{"External id", r.id}}));
  }
  evs.push_back(x_event("cuda_sync", "Stream Synchronize", m.device, 7, 505000, 509000, {{"correlation", 999}}));
  return {{"schemaVersion", 1},
          {"crossbench", meta(m, "full")},
          {"deviceProperties", json::array({{{"id", 0}, {"name", "NVIDIA H200"}}})},
          {"distributedInfo", {{"backend", "nccl"}, {"rank", 0}, {"world_size", 1}}},
          {"displayTimeUnit", "ms"},
          {"baseTimeNanoseconds", m.base},
          {"traceEvents", evs}};
}

json build_events(const Model& m) {
  std::map<std::uint64_t, std::uint64_t> parent;
  for (const auto& r : m.ranges) parent[r.id] = r.parent;
  json fixtures = json::array();
  for (const auto& f : m.fixtures) {
    json steps = json::array();
    std::vector<std::int64_t> ev;
    for (const auto& s : f.steps) {
      std::int64_t first = INT64_MAX, last = INT64_MIN;
      for (const auto& a : m.acts) {
        const MApi* l = launch_of(m, a.corr);
        if (!l) continue;
        for (std::uint64_t cur = l->ext; cur != 0; cur = parent[cur])
          if (cur == s.range_id) {
            first = std::min(first, a.start);
            last = std::max(last, a.end);
            break;
          }
      }
      const std::int64_t event_ns = last - first + s.event_extra_ns;
      ev.push_back(event_ns);
      steps.push_back({{"step", s.step}, {"range_id", s.range_id}, {"event_ns", event_ns}});
      if (s.launches != 1) steps.back()["launches"] = s.launches;
    }
    json timing = f.stop.empty() ? json() : json{{"mode", f.mode}, {"stop", f.stop}};
    fixtures.push_back({{"name", f.name},
                        {"op", f.op},
                        {"dtype", "bf16"},
                        {"size", 64},
                        {"flops", 524288.0},
                        {"bytes", 24576.0},
                        {"verified", f.verified},
                        {"max_rel_error", f.verified ? 0.002 : 0.5},
                        {"steps", steps},
                        {"median_ns", median(ev)}});
    if (!timing.is_null()) fixtures.back()["timing"] = timing;
    if (!f.reference) fixtures.back()["reference"] = false;
    if (!f.error.empty()) fixtures.back()["error"] = f.error;
    if (!f.no_work) {
      const auto item = [](const char* where, std::uint32_t stream, bool covered) {
        return json{{"kind", "kernel"},       {"name", "_Z6kernelPf"}, {"stream", stream}, {"where", where},
                    {"after_start", covered}, {"before_end", covered}, {"bytes", 0},       {"duration_ns", 1000}};
      };
      // The model's device activities run on stream 7 (MAct::stream): the handed stream.
      json items = json::array({item("handed stream", 7, true)});
      if (f.work_off_stream) items.push_back(item("legacy default stream", 9, false));
      fixtures.back()["work"] = {{"recorded", true},
                                 {"handed_stream", 7},
                                 {"legacy_stream", 9},
                                 {"per_thread_stream", 10},
                                 {"streams", items.size()},
                                 {"cross_stream_waits", 0},
                                 {"covered", !f.work_off_stream},
                                 {"summary", "1 kernel on the handed stream"},
                                 {"items", items}};
    }
  }
  return {{"crossbench", meta(m, "events")}, {"fixtures", fixtures}};
}

}  // namespace

Files build(const Model& m) { return {build_table(m), build_trace_only(m), build_full(m), build_events(m)}; }

/// The "X" event of category `cat` whose args.correlation is `corr`.
json& event(json& trace, const std::string& cat, std::uint64_t corr) {
  for (auto& e : trace["traceEvents"])
    if (e.value("ph", "") == "X" && e.value("cat", "") == cat && e.contains("args") &&
        e["args"].value("correlation", std::uint64_t{0}) == corr)
      return e;
  throw std::runtime_error("test: no such event");
}

void erase_events(json& trace, const std::function<bool(const json&)>& pred) {
  auto& evs = trace["traceEvents"];
  json kept = json::array();
  for (auto& e : evs)
    if (!pred(e)) kept.push_back(e);
  evs = std::move(kept);
}

json& table_row(json& table, const std::string& kind, const std::string& name) {
  for (auto& r : table["rows"])
    if (r["kind"] == kind && r["name"] == name) return r;
  throw std::runtime_error("test: no such row");
}

std::string dump_report(const xb::ValidationReport& r) {
  std::ostringstream os;
  xb::print_summary(r, os);
  return os.str();
}

}  // namespace xb::test_model
