#include "bench/sweep/sweep.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "bench/cli/cli.h"
#include "kernels/workload.h"
#include "profiler/exporters/table.h"
#include "profiler/model/event_model.h"
#include "profiler/model/session_io.h"
#include "profiler/model/step_metrics.h"

namespace xb {
namespace {

using json = nlohmann::json;

}  // namespace

std::optional<SweepOptions> parse_sweep_args(int argc, const char* const* argv) {
  SweepOptions opt;
  CLI::App app{
      "crossbench sweep: ops x sizes x dtypes, each point measured (CUPTI, cudaEvent, host API time, "
      "GPU busy fraction) and placed on the roofline of ceilings measured on this GPU"};
  app.name("bench sweep");
  std::vector<std::string> sizes, ops, dtypes;
  std::string out, ceilings;
  app.add_option("--size", sizes,
                 "sizes: list and/or power-of-two ranges, e.g. 64:16384:x2 or 64,1000,4096 "
                 "(default 64:16384:x2)");
  app.add_option("--op", ops, "comma-separated ops: matmul,add,addmm,addmm_bias1d (default all)");
  app.add_option("--dtype", dtypes, "comma-separated dtypes: bf16,fp16,fp32 (default bf16)");
  app.add_option("--ceilings", ceilings, "ceilings.json from `bench calibrate` (default: calibrate first)");
  app.add_option("--out", out, "run folder to create (default results/runs/<UTC time>-<pid>)");
  app.add_option("--wait-steps", opt.wait_steps, "timed schedule: unrecorded steps per point (default 1)");
  app.add_option("--warmup-steps", opt.warmup_steps, "timed schedule: recorded-then-discarded steps (default 1)");
  app.add_option("--active-steps", opt.active_steps, "timed schedule: recorded steps per point (default 10)");
  app.add_option("--eager-calls", opt.eager_calls,
                 "back-to-back calls in the eager window (default 20; fewer when they would pass 100 ms, at least 3)");
  app.add_option("--warmup-ms", opt.warmup_ms, "back-to-back warm-up per point, ms (default 20)");
  app.add_option("--busy-threshold", opt.busy_threshold,
                 "GPU busy fraction under which a point is overhead-bound (default 0.5)");
  // main.cpp hands a sweep with --devices to bench/main/devices.h before this parser sees it;
  // the option is here for --help.
  std::string devices;
  app.add_option("--devices", devices,
                 "sweep each device in its own process into OUT/device-N, validated, and compare the "
                 "devices side by side (OUT/devices.md, devices.json)");
  bool no_graph = false;
  app.add_flag("--no-graph", no_graph,
               "skip the CUDA-graph timing of each point (default: every point is also timed with its batch "
               "replayed as one CUDA graph, beside the eager launches)");
  app.add_flag("--counters", opt.counters,
               "after the points, a counter pass of its own (CUPTI range profiler, 16 back-to-back calls per point, "
               "replayed): measured "
               "DRAM bytes and FLOPs per point in counters.json, beside the model on the roofline plot");
  if (!parse_command_line(app, argc, argv)) return std::nullopt;
  opt.sizes =
      parse_size_spec(sizes.empty() ? (app.count("--size") > 0 ? std::string() : "64:16384:x2") : join_list(sizes));
  if (!ops.empty()) opt.ops = parse_op_list(ops);
  if (!dtypes.empty()) opt.dtypes = parse_dtype_list(dtypes);
  if (opt.wait_steps < 0) throw UsageError("--wait-steps must be >= 0");
  if (opt.warmup_steps < 0) throw UsageError("--warmup-steps must be >= 0");
  if (opt.active_steps < 1 || opt.active_steps > 100000) throw UsageError("--active-steps must be in 1..100000");
  if (opt.eager_calls < 1 || opt.eager_calls > 100000) throw UsageError("--eager-calls must be in 1..100000");
  if (!(opt.warmup_ms >= 0 && opt.warmup_ms <= 60000)) throw UsageError("--warmup-ms must be in 0..60000");
  if (!(opt.busy_threshold > 0 && opt.busy_threshold <= 1)) throw UsageError("--busy-threshold must be in (0, 1]");
  if (!out.empty()) opt.out = out;
  opt.graph = !no_graph;
  if (app.count("--ceilings") > 0) {
    if (ceilings.empty()) throw UsageError("--ceilings needs a file");
    opt.ceilings = std::filesystem::path(ceilings);
  }
  return opt;
}

std::string eager_annotation(const std::string& fixture) { return "eager:" + fixture; }

std::string graph_fixture(const std::string& fixture) { return "graph:" + fixture; }

double graph_launch_saving_ns(const PointMeasurement& m) {
  return (m.event_ns - m.kernel_ns) - (m.graph_event_ns - m.graph_kernel_ns);
}

// ---------------------------------------------------------------------------------------------
// Measurements from a recorded sweep session.

namespace {

/// Length of the union of [start, end) intervals, ns.
std::int64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>> v) {
  std::sort(v.begin(), v.end());
  std::int64_t total = 0;
  std::int64_t cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [s, e] : v) {
    if (e <= s) continue;
    if (!open || s > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      open = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

}  // namespace

namespace {

/// The session's host side, indexed: API calls by the cpu_op range they were made in, cpu_op
/// ranges by their step, the eager windows by annotation name.
struct HostIndex {
  std::unordered_map<std::uint64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> api_by_op;
  std::unordered_map<std::uint64_t, std::vector<const HostRange*>> ops_by_step;
  std::unordered_map<std::string, const HostRange*> eager_by_name;
};

HostIndex host_index(const Session& s, const StepIndex& index) {
  HostIndex h;
  std::unordered_map<std::uint64_t, const HostRange*> by_id;
  for (const HostRange& r : s.ranges) by_id[r.id] = &r;
  for (const ApiCall& c : s.api) {
    auto it = by_id.find(c.external_id);
    if (it == by_id.end() || it->second->category != RangeCategory::CpuOp) continue;
    h.api_by_op[c.external_id].emplace_back(c.start_ns, c.end_ns);
  }
  for (const HostRange& r : s.ranges) {
    if (r.category == RangeCategory::CpuOp) h.ops_by_step[index.root(r.id)].push_back(&r);
    if (r.category == RangeCategory::UserAnnotation && r.name.rfind("eager:", 0) == 0) h.eager_by_name[r.name] = &r;
  }
  return h;
}

/// Host time per call of each of `fixture`'s timed steps, ns: the union of its API calls inside
/// the op ranges, and the op ranges' summed length.
std::pair<std::vector<double>, std::vector<double>> host_per_call(HostIndex& h, const std::vector<StepMetrics>& steps,
                                                                  const std::string& fixture) {
  std::vector<double> host_api, host_op;
  for (const StepMetrics& t : step_metrics_of(steps, fixture)) {
    std::vector<std::pair<std::int64_t, std::int64_t>> calls;
    std::int64_t op_ns = 0;
    for (const HostRange* op : h.ops_by_step[t.range_id]) {
      op_ns += op->end_ns - op->start_ns;
      const auto& c = h.api_by_op[op->id];
      calls.insert(calls.end(), c.begin(), c.end());
    }
    host_api.push_back(static_cast<double>(union_length(std::move(calls))) / t.launches);
    host_op.push_back(static_cast<double>(op_ns) / t.launches);
  }
  return {std::move(host_api), std::move(host_op)};
}

}  // namespace

std::vector<PointMeasurement> measure_points(const RawSession& raw) {
  const Session s = build_session(raw);
  const StepIndex index(s.ranges);
  const std::vector<StepMetrics> steps = step_metrics(s);
  const auto device = device_by_step(s, index);  // the eager windows' steps
  HostIndex host = host_index(s, index);
  auto& ops_by_step = host.ops_by_step;
  auto& eager_by_name = host.eager_by_name;

  // Per call medians of a fixture's active steps: CUPTI device time and cudaEvent time.
  const auto per_call = [&](const std::string& fixture) {
    std::vector<double> kernel, event;
    for (const StepMetrics& t : step_metrics_of(steps, fixture)) {
      if (t.activities == 0) {
        throw InputError(fmt::format("{}: step {} (range {}) has no device activity", fixture, t.step, t.range_id));
      }
      kernel.push_back(t.device_per_call_ns());
      event.push_back(t.event_per_call_ns());
    }
    return std::make_pair(std::move(kernel), std::move(event));
  };
  const std::vector<FixtureInfo> fixtures = read_fixtures(raw);
  std::unordered_map<std::string, const FixtureInfo*> graph_by_name;
  for (const FixtureInfo& f : fixtures) {
    if (f.timing.graph) graph_by_name[f.name] = &f;
  }

  std::vector<PointMeasurement> out;
  for (const FixtureInfo& f : fixtures) {
    if (f.timing.graph) continue;  // attached to its eager point below
    PointMeasurement m;
    m.fixture = f.name;
    m.op = f.op;
    m.dtype = f.dtype;
    m.n = f.size;
    m.flops = f.flops;
    m.bytes = f.bytes;
    m.verified = f.verified;
    m.max_rel_error = f.max_rel_error;
    // Per call: a timed step of the sampling core holds a batch of calls (hot mode).
    const auto [kernel, event] = per_call(f.name);
    const auto [host_api, host_op] = host_per_call(host, steps, f.name);
    if (!f.verified) {
      m.note = f.max_rel_error < 0 ? "wrong result (non-finite outputs)"
                                   : fmt::format("wrong result (relative error {:.3e})", f.max_rel_error);
      out.push_back(std::move(m));
      continue;
    }
    if (kernel.empty()) {
      m.note = "no timed steps recorded";
      out.push_back(std::move(m));
      continue;
    }
    auto eager = eager_by_name.find(eager_annotation(f.name));
    if (eager == eager_by_name.end()) {
      throw InputError(f.name + ": no eager window (annotation '" + eager_annotation(f.name) + "')");
    }
    const HostRange& ann = *eager->second;
    const std::uint64_t step = index.root(ann.id);
    auto dev = device.find(step);
    if (dev == device.end()) throw InputError(f.name + ": the eager window has no device activity");
    m.measured = true;
    m.steps = static_cast<int>(kernel.size());
    m.kernel_ns = compute_stats(kernel).median;
    m.event_ns = compute_stats(event).median;
    m.host_api_ns = compute_stats(host_api).median;
    m.host_op_ns = compute_stats(host_op).median;
    m.eager_calls = static_cast<int>(ops_by_step[step].size());
    m.eager_device_ns = static_cast<double>(dev->second.sum_ns);
    m.eager_window_ns = static_cast<double>(std::max(ann.end_ns, dev->second.last_ns) - ann.start_ns);
    const auto graph = graph_by_name.find(graph_fixture(f.name));
    if (graph != graph_by_name.end() && graph->second->verified) {
      const auto [graph_kernel, graph_event] = per_call(graph->first);
      if (!graph_kernel.empty()) {
        m.graph_steps = static_cast<int>(graph_kernel.size());
        m.graph_kernel_ns = compute_stats(graph_kernel).median;
        m.graph_event_ns = compute_stats(graph_event).median;
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

void analyse(SweepReport& report, const std::vector<PointMeasurement>& measurements) {
  report.points.clear();
  for (const PointMeasurement& m : measurements) {
    report.points.push_back(evaluate_point(m, report.calibration.roof(m.dtype), report.rules));
  }
  report.crossovers = find_crossovers(report.points);
}

// ---------------------------------------------------------------------------------------------
// Writers.

namespace {

json finite(double v, const std::string& what) {
  if (!std::isfinite(v)) throw std::invalid_argument(what + " is not finite");
  return v;
}

json point_json(const SweepReport& r, const PointMetrics& p) {
  const PointMeasurement& m = p.m;
  json j = {
      {"fixture", m.fixture},
      {"op", m.op},
      {"dtype", m.dtype},
      {"n", m.n},
      {"status", m.measured ? "ok" : "failed"},
      {"note", m.note},
      {"verified", m.verified},
      {"max_rel_error", m.max_rel_error < 0 ? json(nullptr) : finite(m.max_rel_error, m.fixture + " max_rel_error")},
      {"flops", finite(m.flops, m.fixture + " flops")},
      {"bytes", finite(m.bytes, m.fixture + " bytes")},
      {"intensity", finite(m.flops / m.bytes, m.fixture + " intensity")},
      {"peak_tflops", finite(p.roof.peak_tflops, "peak")},
      {"bandwidth_gbps", finite(p.roof.bandwidth_gbps, "bandwidth")}};
  auto info = r.run_info.find(m.fixture);
  if (info != r.run_info.end()) {
    j["verification"] = info->second.verification;
    j["verify_s"] = finite(info->second.verify_s, "verify_s");
    j["tolerance"] = finite(info->second.tolerance, "tolerance");
    j["warmup_calls"] = info->second.warmup_calls;
    if (!info->second.error.empty()) j["note"] = info->second.error;
  }
  const char* keys[] = {"steps",       "kernel_ns",        "event_ns",        "host_api_ns",       "host_op_ns",
                        "eager_calls", "eager_window_ns",  "eager_device_ns", "gpu_busy",          "tflops",
                        "gbps",        "compute_bound_ns", "memory_bound_ns", "roofline_bound_ns", "roofline_fraction"};
  if (!m.measured) {
    for (const char* k : keys) j[k] = nullptr;
  } else {
    j["steps"] = m.steps;
    j["kernel_ns"] = finite(m.kernel_ns, "kernel_ns");
    j["event_ns"] = finite(m.event_ns, "event_ns");
    j["host_api_ns"] = finite(m.host_api_ns, "host_api_ns");
    j["host_op_ns"] = finite(m.host_op_ns, "host_op_ns");
    j["eager_calls"] = m.eager_calls;
    j["eager_window_ns"] = finite(m.eager_window_ns, "eager_window_ns");
    j["eager_device_ns"] = finite(m.eager_device_ns, "eager_device_ns");
    j["gpu_busy"] = finite(p.busy, "gpu_busy");
    j["tflops"] = finite(p.tflops, "tflops");
    j["gbps"] = finite(p.gbps, "gbps");
    j["compute_bound_ns"] = finite(p.compute_ns, "compute_bound_ns");
    j["memory_bound_ns"] = finite(p.memory_ns, "memory_bound_ns");
    j["roofline_bound_ns"] = finite(p.bound_ns, "roofline_bound_ns");
    j["roofline_fraction"] = finite(p.roofline_fraction, "roofline_fraction");
  }
  if (m.measured && m.graph_steps > 0) {
    j["graph_steps"] = m.graph_steps;
    j["graph_event_ns"] = finite(m.graph_event_ns, "graph_event_ns");
    j["graph_kernel_ns"] = finite(m.graph_kernel_ns, "graph_kernel_ns");
    j["graph_saving"] = finite(1 - m.graph_event_ns / m.event_ns, "graph_saving");
    j["graph_launch_saving_ns"] = finite(graph_launch_saving_ns(m), "graph_launch_saving_ns");
  } else {
    for (const char* k :
         {"graph_steps", "graph_event_ns", "graph_kernel_ns", "graph_saving", "graph_launch_saving_ns"}) {
      j[k] = nullptr;
    }
  }
  j["regime"] = to_string(p.regime);
  return j;
}

std::string us(double ns) { return fmt::format("{:.3f}", ns / 1e3); }

/// A fraction as a percentage: no decimals from 10%, one below ("0.3%").
std::string pct(double fraction) {
  const double v = 100 * fraction;
  return v >= 10 ? fmt::format("{:.0f}%", v) : fmt::format("{:.1f}%", v);
}

/// "1.23e+05"-free compact number for tables.
std::string compact(double v) {
  if (v == 0) return "0";
  if (std::fabs(v) >= 100) return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 10) return fmt::format("{:.1f}", v);
  if (std::fabs(v) >= 0.1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

std::vector<std::string> dtypes_of(const SweepReport& r) {
  std::vector<std::string> out;
  for (const PointMetrics& p : r.points) {
    if (std::find(out.begin(), out.end(), p.m.dtype) == out.end()) out.push_back(p.m.dtype);
  }
  return out;
}

}  // namespace

void write_sweep_json(const SweepReport& r, std::ostream& out) {
  const Calibration& c = r.calibration;
  const DatasheetFigures d = datasheet_for(c.gpu_name);
  json gemm = json::object();
  for (const std::string& dtype : dtypes_of(r)) gemm[dtype] = finite(c.gemm_tflops(dtype), "gemm ceiling");
  json clocks = json::array();
  for (const ClockReading& k : c.clocks) {
    clocks.push_back(
        {{"when", k.when}, {"sm_mhz", k.sm_mhz}, {"mem_mhz", k.mem_mhz}, {"temperature_c", k.temperature_c}});
  }
  json points = json::array();
  for (const PointMetrics& p : r.points) points.push_back(point_json(r, p));
  json crossovers = json::array();
  for (const Crossover& x : r.crossovers) {
    crossovers.push_back(
        {{"op", x.op},
         {"dtype", x.dtype},
         {"size", x.size ? json(*x.size) : json(nullptr)},
         {"regime", x.regime_at_crossover},
         {"overhead_again_at", x.largest_overhead_above ? json(*x.largest_overhead_above) : json(nullptr)}});
  }
  std::vector<std::int64_t> sizes = r.settings.sizes;
  json doc = {
      {"crossbench",
       {{"format", "sweep"},
        {"version", 1},
        {"created_utc", r.created_utc},
        {"synthetic", r.synthetic},
        {"dropped_records", r.meta.dropped_records},
        {"cuda_driver_version", r.meta.cuda_driver_version},
        {"cuda_runtime_version", r.meta.cuda_runtime_version},
        {"cupti_version", r.meta.cupti_version},
        {"cublas_version", r.meta.cublas_version}}},
      {"notes", r.notes},
      {"device",
       {{"name", c.gpu_name},
        {"driver_version", c.driver_version},
        {"compute_capability", fmt::format("{}.{}", c.compute_major, c.compute_minor)},
        {"sm_count", c.sm_count}}},
      {"ceilings",
       {{"source", "bench calibrate, " + c.created_utc},
        {"bandwidth_gbps", finite(c.bandwidth_gbps(), "bandwidth ceiling")},
        {"gemm_tflops", gemm},
        {"datasheet", d.known ? json{{"source", d.source}, {"bandwidth_gbps", d.bandwidth_gbps}, {"tflops", d.tflops}}
                              : json(nullptr)},
        {"clocks",
         {{"source", c.clock_source},
          {"sm_max_mhz", c.sm_clock_max_mhz},
          {"mem_max_mhz", c.mem_clock_max_mhz},
          {"readings", clocks}}}}},
      {"rules",
       {{"busy_threshold", finite(r.rules.busy_threshold, "busy threshold")},
        {"overhead_bound", "gpu_busy < busy_threshold"},
        {"compute_bound", "gpu_busy >= busy_threshold and compute_bound_ns >= memory_bound_ns"},
        {"memory_bound", "gpu_busy >= busy_threshold and compute_bound_ns < memory_bound_ns"},
        {"crossover", "first size, ascending, whose regime is not overhead-bound"}}},
      {"settings",
       {{"sizes", sizes},
        {"ops", r.settings.ops},
        {"dtypes", r.settings.dtypes},
        {"wait_steps", r.settings.wait_steps},
        {"warmup_steps", r.settings.warmup_steps},
        {"active_steps", r.settings.active_steps},
        {"eager_calls", r.settings.eager_calls},
        {"graph", r.settings.graph},
        {"warmup_ms", finite(r.settings.warmup_ms, "warmup_ms")}}},
      {"points", points},
      {"crossovers", crossovers},
      {"validation",
       {{"passed", r.validation_passed ? json(*r.validation_passed) : json(nullptr)},
        {"summary", r.validation_summary}}},
      {"elapsed_s", finite(r.elapsed_s, "elapsed_s")}};
  out << doc.dump(1) << '\n';
}

void write_sweep_csv(const SweepReport& r, std::ostream& out) {
  out << "fixture,op,dtype,n,status,verified,max_rel_error,flops,bytes,intensity_flop_per_byte,steps,kernel_us,"
         "event_us,host_api_us,host_op_us,eager_calls,eager_window_us,eager_device_us,gpu_busy,tflops,gbps,"
         "peak_tflops,bandwidth_gbps,compute_bound_us,memory_bound_us,roofline_bound_us,roofline_fraction,regime,"
         "graph_event_us,graph_kernel_us\n";
  for (const PointMetrics& p : r.points) {
    const PointMeasurement& m = p.m;
    out << fmt::format(
        "{},{},{},{},{},{},{},{},{},{},", m.fixture, m.op, m.dtype, m.n, m.measured ? "ok" : "failed",
        m.verified ? "true" : "false", m.max_rel_error < 0 ? std::string() : fmt::format("{:.6g}", m.max_rel_error),
        fmt::format("{:.0f}", m.flops), fmt::format("{:.0f}", m.bytes), fmt::format("{:.6g}", m.flops / m.bytes));
    if (m.measured) {
      out << fmt::format("{},{},{},{},{},{},{},{},{:.4f},{:.4g},{:.4g},{:.4g},{:.4g},{:.6g},{:.6g},{:.6g},{:.4g},",
                         m.steps, us(m.kernel_ns), us(m.event_ns), us(m.host_api_ns), us(m.host_op_ns), m.eager_calls,
                         us(m.eager_window_ns), us(m.eager_device_ns), p.busy, p.tflops, p.gbps, p.roof.peak_tflops,
                         p.roof.bandwidth_gbps, p.compute_ns / 1e3, p.memory_ns / 1e3, p.bound_ns / 1e3,
                         p.roofline_fraction);
    } else {
      out << fmt::format(",,,,,,,,,,,{:.4g},{:.4g},,,,,", p.roof.peak_tflops, p.roof.bandwidth_gbps);
    }
    out << to_string(p.regime);
    if (m.measured && m.graph_steps > 0) {
      out << ',' << us(m.graph_event_ns) << ',' << us(m.graph_kernel_ns) << '\n';
    } else {
      out << ",,\n";
    }
  }
}

void write_sweep_markdown(const SweepReport& r, std::ostream& out) {
  const Calibration& c = r.calibration;
  const DatasheetFigures d = datasheet_for(c.gpu_name);
  out << "# crossbench sweep\n\n";
  if (r.synthetic) {
    out << "**SYNTHETIC DATA: made up by a model for tests and plots; not measured on any GPU.**\n\n";
  }
  if (!r.notes.empty()) out << r.notes << "\n\n";
  out << fmt::format("- GPU: {} (compute capability {}.{}, {} SMs), driver {}\n", c.gpu_name, c.compute_major,
                     c.compute_minor, c.sm_count, c.driver_version.empty() ? "unknown" : c.driver_version);
  out << fmt::format("- recorded: {}; CUDA driver {}, runtime {}, CUPTI {}, cuBLAS {}; dropped records: {}\n",
                     r.created_utc, r.meta.cuda_driver_version, r.meta.cuda_runtime_version, r.meta.cupti_version,
                     r.meta.cublas_version, r.meta.dropped_records);
  out << fmt::format(
      "- per point: warm-up {} ms; timed schedule wait {}, warmup {}, active {}; eager window up to {} "
      "back-to-back calls; sweep wall time {:.1f} s\n",
      r.settings.warmup_ms, r.settings.wait_steps, r.settings.warmup_steps, r.settings.active_steps,
      r.settings.eager_calls, r.elapsed_s);
  if (r.validation_passed) {
    out << fmt::format("- validation (validation.json): {}{}\n", *r.validation_passed ? "PASSED" : "FAILED",
                       r.validation_summary.empty() ? "" : ", " + r.validation_summary);
  }
  out << "\n## Ceilings (measured by `bench calibrate`, " << c.created_utc << ")\n\n";
  out << "| ceiling | measured | datasheet | measured / datasheet |\n| --- | ---: | ---: | ---: |\n";
  const auto ratio = [](double a, double b) {
    return b > 0 ? fmt::format("{:.1f}%", 100.0 * a / b) : std::string("-");
  };
  out << fmt::format("| copy bandwidth, GB/s (read + written) | {:.0f} | {} | {} |\n", c.bandwidth_gbps(),
                     d.known ? fmt::format("{:.0f}", d.bandwidth_gbps) : "-",
                     ratio(c.bandwidth_gbps(), d.bandwidth_gbps));
  for (const std::string& dtype : dtypes_of(r)) {
    const auto it = d.tflops.find(dtype);
    const double sheet = it == d.tflops.end() ? 0.0 : it->second;
    out << fmt::format("| {} GEMM, TFLOP/s | {:.1f} | {} | {} |\n", dtype, c.gemm_tflops(dtype),
                       sheet > 0 ? fmt::format("{:.0f}", sheet) : "-", ratio(c.gemm_tflops(dtype), sheet));
  }
  if (d.known) out << "\nDatasheet: " << d.source << ".\n";
  out << "\n## Points\n\n";
  out << "Times per call in us. GPU busy: device time / wall time of the eager (back-to-back) window. "
         "Roofline: bound time / CUPTI kernel time.\n\n";
  out << "| point | verified | CUPTI kernel | cudaEvent | host API | GPU busy | FLOP/B | TFLOP/s | GB/s | of roofline "
         "| regime |\n";
  out << "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n";
  for (const PointMetrics& p : r.points) {
    const PointMeasurement& m = p.m;
    const std::string verified =
        m.verified ? (m.max_rel_error >= 0 ? fmt::format("yes ({:.1e})", m.max_rel_error) : "yes") : "**NO**";
    if (!m.measured) {
      auto info = r.run_info.find(m.fixture);
      const std::string why = info != r.run_info.end() && !info->second.error.empty() ? info->second.error : m.note;
      out << fmt::format("| {} | {} | - | - | - | - | {} | - | - | - | not measured: {} |\n", m.fixture, verified,
                         compact(m.flops / m.bytes), why);
      continue;
    }
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", m.fixture, verified,
                       us(m.kernel_ns), us(m.event_ns), us(m.host_api_ns), pct(p.busy), compact(p.intensity),
                       compact(p.tflops), compact(p.gbps), pct(p.roofline_fraction), to_string(p.regime));
  }
  if (std::any_of(r.points.begin(), r.points.end(), [](const PointMetrics& p) { return p.m.graph_steps > 0; })) {
    out << "\n## Eager launches vs CUDA graph\n\n"
           "Per call, us, hot mode (a batch of calls behind the blocking kernel): launched one by one, or "
           "captured once into a CUDA graph and replayed with one cudaGraphLaunch per sample (measured after "
           "the eager steps). Gap: cudaEvent time - CUPTI kernel time, what the GPU spends per call outside "
           "the op's own kernels; launch cost saved = eager gap - graph gap, which a drift of the GPU's clock "
           "between the two measurements (a GEMM under its power cap) does not move, unlike the totals.\n\n"
           "| point | cudaEvent eager | cudaEvent graph | CUPTI kernel eager | CUPTI kernel graph | gap eager | "
           "gap graph | launch cost saved | of the eager time |\n"
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const PointMetrics& p : r.points) {
      const PointMeasurement& m = p.m;
      if (!m.measured || m.graph_steps == 0) continue;
      const double saved = graph_launch_saving_ns(m);
      out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", m.fixture, us(m.event_ns),
                         us(m.graph_event_ns), us(m.kernel_ns), us(m.graph_kernel_ns), us(m.event_ns - m.kernel_ns),
                         us(m.graph_event_ns - m.graph_kernel_ns), us(saved), pct(saved / m.event_ns));
    }
  }
  out << "\n## Crossover\n\nFirst size, ascending, whose regime is no longer overhead-bound.\n\n";
  out << "| op | dtype | crossover size | regime there | note |\n| --- | --- | ---: | --- | --- |\n";
  for (const Crossover& x : r.crossovers) {
    out << fmt::format(
        "| {} | {} | {} | {} | {} |\n", x.op, x.dtype, x.size ? std::to_string(*x.size) : "none",
        x.size ? x.regime_at_crossover : "every size overhead-bound",
        x.largest_overhead_above ? fmt::format("overhead-bound again at {}", *x.largest_overhead_above) : "");
  }
  out << fmt::format(
      "\n## Rules\n\n- overhead-bound: GPU busy < {:.2f} (the GPU idles for more of the back-to-back window than it "
      "works)\n- otherwise compute-bound when FLOPs / peak >= bytes / bandwidth, else memory-bound\n"
      "- formulas: docs/metrics.md, \"Sweeps\"\n",
      r.rules.busy_threshold);
  out << "\n## Plots\n\n(made by `python3 scripts/plot_sweep.py` beside sweep.json)\n\n"
         "![time vs size](time_vs_size.png)\n\n![roofline](roofline.png)\n\n![GPU busy vs size](busy_vs_size.png)\n";
}

void print_sweep_table(const SweepReport& r, std::ostream& out) {
  out << fmt::format("{:<26} {:>11} {:>11} {:>11} {:>12} {:>6} {:>9} {:>9} {:>6}  {}\n", "point", "kernel us",
                     "event us", "graph us", "host API us", "busy", "TFLOP/s", "GB/s", "roof", "regime");
  for (const PointMetrics& p : r.points) {
    const PointMeasurement& m = p.m;
    if (!m.measured) {
      out << fmt::format("{:<26} {:>11} {:>11} {:>11} {:>12} {:>6} {:>9} {:>9} {:>6}  not measured: {}\n", m.fixture,
                         "-", "-", "-", "-", "-", "-", "-", "-", m.note);
      continue;
    }
    out << fmt::format("{:<26} {:>11.3f} {:>11.3f} {:>11} {:>12.3f} {:>6} {:>9.1f} {:>9.1f} {:>6}  {}\n", m.fixture,
                       m.kernel_ns / 1e3, m.event_ns / 1e3, m.graph_steps > 0 ? us(m.graph_event_ns) : "-",
                       m.host_api_ns / 1e3, pct(p.busy), p.tflops, p.gbps, pct(p.roofline_fraction),
                       to_string(p.regime));
  }
  out << "crossover (first size not overhead-bound):";
  for (const Crossover& x : r.crossovers) {
    out << fmt::format(" {}/{} {}", x.op, x.dtype,
                       x.size ? fmt::format("{} ({})", *x.size, x.regime_at_crossover) : std::string("none"));
    if (x.largest_overhead_above) out << fmt::format(" [overhead-bound again at {}]", *x.largest_overhead_above);
    out << ';';
  }
  out << '\n';
  const Calibration& c = r.calibration;
  out << fmt::format("ceilings: copy {:.0f} GB/s", c.bandwidth_gbps());
  for (const std::string& dtype : dtypes_of(r))
    out << fmt::format(", {} GEMM {:.1f} TFLOP/s", dtype, c.gemm_tflops(dtype));
  out << '\n';
}

}  // namespace xb
