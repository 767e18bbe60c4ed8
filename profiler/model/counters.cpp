// Hardware counters, plain side (see counters.h): the metric table, derived figures, counters.json.
#include "profiler/model/counters.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/strict_json.h"
#include "common/text_file.h"

namespace xb {

namespace {

using json = nlohmann::json;

void require_finite(double v, const std::string& what) {
  if (!std::isfinite(v)) throw std::invalid_argument("counters: " + what + " is not finite");
}

}  // namespace

const char* to_string(CounterQuantity q) {
  switch (q) {
    case CounterQuantity::DramReadBytes:
      return "dram_read_bytes";
    case CounterQuantity::DramWriteBytes:
      return "dram_write_bytes";
    case CounterQuantity::SassFlops:
      return "sass_flops";
    case CounterQuantity::TensorFlops:
      return "tensor_flops";
    case CounterQuantity::SmThroughputPct:
      return "sm_throughput_pct";
    case CounterQuantity::DramThroughputPct:
      return "dram_throughput_pct";
    case CounterQuantity::DurationNs:
      return "duration_ns";
  }
  return "unknown";
}

const char* to_string(CounterSource s) { return s == CounterSource::SassMetrics ? "sass_metrics" : "range_profiler"; }

const std::vector<CounterMetric>& counter_metrics() {
  using Q = CounterQuantity;
  constexpr CounterSource kSass = CounterSource::SassMetrics;
  static const std::vector<CounterMetric> metrics = {
      {"dram__bytes_read.sum", Q::DramReadBytes, 1, true},
      {"dram__bytes_write.sum", Q::DramWriteBytes, 1, true},
      {"gpu__time_duration.sum", Q::DurationNs, 1, true},
      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", Q::SmThroughputPct, 1, false},
      {"dram__throughput.avg.pct_of_peak_sustained_elapsed", Q::DramThroughputPct, 1, false},
      // SASS thread instructions with the predicate on: one FLOP each, two for a fused multiply-add.
      // Counted by SASS patching (the SASS metrics API), not by the range profiler's counters.
      {"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", Q::SassFlops, 1, false, kSass},
      {"smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", Q::SassFlops, 1, false, kSass},
      {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", Q::SassFlops, 2, false, kSass},
      {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", Q::SassFlops, 1, false, kSass},
      {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", Q::SassFlops, 1, false, kSass},
      {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", Q::SassFlops, 2, false, kSass},
      {"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", Q::SassFlops, 1, false, kSass},
      {"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", Q::SassFlops, 1, false, kSass},
      {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", Q::SassFlops, 2, false, kSass},
      // Tensor-pipe math operations by source/destination type: already FLOPs (docs/metrics.md).
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", Q::TensorFlops, 1, false},
      {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", Q::TensorFlops, 1, false},
      {"sm__ops_path_tensor_src_fp16_dst_fp16.sum", Q::TensorFlops, 1, false},
      {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", Q::TensorFlops, 1, false},
      {"sm__ops_path_tensor_src_fp64.sum", Q::TensorFlops, 1, false},
  };
  return metrics;
}

CounterFigures derive_figures(const FixtureCounters& fixture) {
  CounterFigures f = derive_figures(fixture.kernels, fixture.calls);
  double sass = 0;
  for (const CounterMetric& m : counter_metrics()) {
    const auto it = fixture.sass.find(m.name);
    if (it == fixture.sass.end() || m.quantity != CounterQuantity::SassFlops) continue;
    if (!std::isfinite(it->second) || it->second < 0) {
      throw std::invalid_argument("derive_figures: " + fixture.name + ": SASS " + m.name +
                                  " is negative or not finite");
    }
    sass += it->second * m.weight;
  }
  f.sass_flops += sass / fixture.calls;
  f.flops = f.sass_flops + f.tensor_flops;
  return f;
}

CounterFigures derive_figures(const std::vector<KernelCounters>& kernels, int calls) {
  if (calls < 1) throw std::invalid_argument("derive_figures: calls must be at least 1");
  CounterFigures f;
  double sm_weighted = 0, dram_weighted = 0, sm_plain = 0, dram_plain = 0;
  for (const KernelCounters& k : kernels) {
    double duration = 0, sm = 0, dram = 0;
    for (const CounterMetric& m : counter_metrics()) {
      const auto it = k.values.find(m.name);
      if (it == k.values.end()) continue;
      const double v = it->second;
      if (!std::isfinite(v) || v < 0) {
        throw std::invalid_argument("derive_figures: range " + k.range + ": " + m.name + " is negative or not finite");
      }
      switch (m.quantity) {
        case CounterQuantity::DramReadBytes:
          f.dram_read_bytes += v;
          break;
        case CounterQuantity::DramWriteBytes:
          f.dram_write_bytes += v;
          break;
        case CounterQuantity::SassFlops:
          f.sass_flops += v * m.weight;
          break;
        case CounterQuantity::TensorFlops:
          f.tensor_flops += v * m.weight;
          break;
        case CounterQuantity::SmThroughputPct:
          sm = v;
          break;
        case CounterQuantity::DramThroughputPct:
          dram = v;
          break;
        case CounterQuantity::DurationNs:
          duration = v;
          break;
      }
    }
    f.duration_ns += duration;
    sm_weighted += sm * duration;
    dram_weighted += dram * duration;
    sm_plain += sm;
    dram_plain += dram;
  }
  const double c = calls;
  f.dram_read_bytes /= c;
  f.dram_write_bytes /= c;
  f.dram_bytes = f.dram_read_bytes + f.dram_write_bytes;
  f.sass_flops /= c;
  f.tensor_flops /= c;
  f.flops = f.sass_flops + f.tensor_flops;
  const double total_ns = f.duration_ns;
  f.duration_ns /= c;
  if (total_ns > 0) {
    f.sm_throughput_pct = sm_weighted / total_ns;
    f.dram_throughput_pct = dram_weighted / total_ns;
  } else if (!kernels.empty()) {
    f.sm_throughput_pct = sm_plain / static_cast<double>(kernels.size());
    f.dram_throughput_pct = dram_plain / static_cast<double>(kernels.size());
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// counters.json

void write_counters_json(const CounterSession& s, std::ostream& out) {
  json doc;
  doc["crossbench"] = {{"format", "counters"}, {"version", 1}, {"created_utc", s.created_utc}};
  // Which pass every number of this file comes from, said in the file itself.
  doc["pass"] = {{"name", "counters"},
                 {"separate_from_timing", true},
                 {"note",
                  "every number in this file comes from the counter pass (CUPTI range profiler on each "
                  "fixture's `calls` back-to-back calls after as many unprofiled warm-up calls, the steady "
                  "state of hot mode, replayed once per pass the metrics need; per_call = totals / calls; "
                  "SASS instruction counts from SASS-patched calls of their own); none of it is in a timed "
                  "sample; times in events.json, table.json and the traces come from the timing pass"}};
  doc["status"] = s.status;
  doc["reason"] = s.reason;
  doc["method"] = s.method;
  doc["library"] = s.library;
  doc["device"] = {{"name", s.gpu_name}, {"chip", s.chip}, {"l2_bytes", s.l2_bytes}};
  doc["passes"] = s.passes;
  doc["sass"] = {{"status", s.sass_status}, {"reason", s.sass_reason}};
  json metrics = json::array();
  for (const CounterMetric& m : counter_metrics()) {
    json j = {{"name", m.name},
              {"quantity", to_string(m.quantity)},
              {"weight", m.weight},
              {"essential", m.essential},
              {"source", to_string(m.source)}};
    const auto rej = s.rejected.find(m.name);
    if (rej != s.rejected.end()) {
      j["accepted"] = false;
      j["reason"] = rej->second;
    } else {
      bool accepted = false;
      for (const std::string& a : s.accepted) accepted = accepted || a == m.name;
      j["accepted"] = accepted;
    }
    metrics.push_back(std::move(j));
  }
  doc["metrics"] = std::move(metrics);
  json fixtures = json::array();
  for (const FixtureCounters& f : s.fixtures) {
    require_finite(f.model_flops, f.name + " model flops");
    require_finite(f.model_bytes, f.name + " model bytes");
    json j = {{"name", f.name},  {"op", f.op},       {"dtype", f.dtype},
              {"size", f.size},  {"calls", f.calls}, {"model", {{"flops", f.model_flops}, {"bytes", f.model_bytes}}},
              {"error", f.error}};
    json kernels = json::array();
    for (const KernelCounters& k : f.kernels) {
      json values = json::object();
      for (const auto& [name, v] : k.values) {
        require_finite(v, f.name + " " + name);
        values[name] = v;
      }
      kernels.push_back({{"range", k.range}, {"values", std::move(values)}});
    }
    j["kernels"] = std::move(kernels);
    json sass = json::object();
    for (const auto& [name, v] : f.sass) {
      require_finite(v, f.name + " SASS " + name);
      sass[name] = v;
    }
    j["sass"] = {{"values", std::move(sass)}, {"error", f.sass_error}};
    if (f.error.empty() && f.calls >= 1) {
      const CounterFigures c = derive_figures(f);
      j["per_call"] = {{"dram_read_bytes", c.dram_read_bytes},
                       {"dram_write_bytes", c.dram_write_bytes},
                       {"dram_bytes", c.dram_bytes},
                       {"sass_flops", c.sass_flops},
                       {"tensor_flops", c.tensor_flops},
                       {"flops", c.flops},
                       {"intensity", c.intensity()},
                       {"duration_ns", c.duration_ns},
                       {"sm_throughput_pct", c.sm_throughput_pct},
                       {"dram_throughput_pct", c.dram_throughput_pct}};
    }
    fixtures.push_back(std::move(j));
  }
  doc["fixtures"] = std::move(fixtures);
  out << doc.dump(1) << "\n";
  if (!out) throw std::runtime_error("counters.json: write failed");
}

namespace {

// counters.json's readers: strict_json.h's, with "counters: " in front of every path; numbers
// here are counts, bytes and times, never negative.
std::string in_counters(const std::string& where) { return "counters: " + where; }
[[noreturn]] void bad(const std::string& where, const std::string& what) {
  strict_json::fail(in_counters(where), what);
}
const json& at(const json& obj, const char* key, const std::string& where) {
  return strict_json::need(obj, key, in_counters(where));
}
std::string get_string(const json& obj, const char* key, const std::string& where) {
  return strict_json::need_string(obj, key, in_counters(where));
}
double get_number(const json& obj, const char* key, const std::string& where) {
  const double d = strict_json::need_number(obj, key, in_counters(where));
  if (d < 0) bad(where + "." + key, "not a finite non-negative number");
  return d;
}
std::int64_t get_int(const json& obj, const char* key, const std::string& where) {
  return strict_json::need_int(obj, key, in_counters(where), std::numeric_limits<std::int64_t>::min(),
                               std::numeric_limits<std::int64_t>::max());
}
const json& get_array(const json& obj, const char* key, const std::string& where) {
  return strict_json::need_array(obj, key, in_counters(where));
}

}  // namespace

CounterSession parse_counters_json(const std::string& text) {
  const json doc = strict_json::parse_json(text, "counters");
  const json& meta = at(doc, "crossbench", "top level");
  if (get_string(meta, "format", "crossbench") != "counters") bad("crossbench.format", "is not \"counters\"");
  if (get_int(meta, "version", "crossbench") != 1) bad("crossbench.version", "is not 1");
  CounterSession s;
  s.created_utc = get_string(meta, "created_utc", "crossbench");
  if (get_string(at(doc, "pass", "top level"), "name", "pass") != "counters") bad("pass.name", "is not \"counters\"");
  s.status = get_string(doc, "status", "top level");
  if (s.status != "collected" && s.status != "unavailable")
    bad("status", "is neither \"collected\" nor \"unavailable\"");
  s.reason = get_string(doc, "reason", "top level");
  s.method = get_string(doc, "method", "top level");
  s.library = get_string(doc, "library", "top level");
  const json& dev = at(doc, "device", "top level");
  s.gpu_name = get_string(dev, "name", "device");
  s.chip = get_string(dev, "chip", "device");
  const std::int64_t l2 = get_int(dev, "l2_bytes", "device");
  if (l2 < 0) bad("device.l2_bytes", "negative");
  s.l2_bytes = static_cast<std::uint64_t>(l2);
  const std::int64_t passes = get_int(doc, "passes", "top level");
  if (passes < 0 || passes > 1000000) bad("passes", "out of range");
  s.passes = static_cast<int>(passes);
  s.sass_reason = "no SASS metrics pass in this file (written before there was one)";
  if (doc.contains("sass")) {  // optional: files written before the SASS metrics pass lack it
    const json& sass = at(doc, "sass", "top level");
    s.sass_status = get_string(sass, "status", "sass");
    if (s.sass_status != "counted" && s.sass_status != "not counted")
      bad("sass.status", "is neither \"counted\" nor \"not counted\"");
    s.sass_reason = get_string(sass, "reason", "sass");
  }
  const json& metrics = get_array(doc, "metrics", "top level");
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const std::string w = "metrics[" + std::to_string(i) + "]";
    const std::string name = get_string(metrics[i], "name", w);
    const json& acc = at(metrics[i], "accepted", w);
    if (!acc.is_boolean()) bad(w + ".accepted", "not a boolean");
    if (acc.get<bool>()) {
      s.accepted.push_back(name);
    } else if (metrics[i].contains("reason")) {
      s.rejected[name] = get_string(metrics[i], "reason", w);
    }
  }
  const json& fixtures = get_array(doc, "fixtures", "top level");
  for (std::size_t i = 0; i < fixtures.size(); ++i) {
    const json& fj = fixtures[i];
    const std::string w = "fixtures[" + std::to_string(i) + "]";
    FixtureCounters f;
    f.name = get_string(fj, "name", w);
    f.op = get_string(fj, "op", w);
    f.dtype = get_string(fj, "dtype", w);
    f.size = get_int(fj, "size", w);
    const std::int64_t calls = get_int(fj, "calls", w);
    if (calls < 1 || calls > 1000000) bad(w + ".calls", "out of range [1, 1000000]");
    f.calls = static_cast<int>(calls);
    const json& model = at(fj, "model", w);
    f.model_flops = get_number(model, "flops", w + ".model");
    f.model_bytes = get_number(model, "bytes", w + ".model");
    f.error = get_string(fj, "error", w);
    const json& kernels = get_array(fj, "kernels", w);
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const std::string wk = w + ".kernels[" + std::to_string(k) + "]";
      KernelCounters kc;
      kc.range = get_string(kernels[k], "range", wk);
      const json& values = at(kernels[k], "values", wk);
      if (!values.is_object()) bad(wk + ".values", "not an object");
      for (auto it = values.begin(); it != values.end(); ++it)
        kc.values[it.key()] = get_number(values, it.key().c_str(), wk + ".values");
      f.kernels.push_back(std::move(kc));
    }
    if (fj.contains("sass")) {
      const json& sass = at(fj, "sass", w);
      const json& values = at(sass, "values", w + ".sass");
      if (!values.is_object()) bad(w + ".sass.values", "not an object");
      for (auto it = values.begin(); it != values.end(); ++it)
        f.sass[it.key()] = get_number(values, it.key().c_str(), w + ".sass.values");
      f.sass_error = get_string(sass, "error", w + ".sass");
    }
    s.fixtures.push_back(std::move(f));
  }
  return s;
}

CounterSession read_counters_json(const std::filesystem::path& path) {
  return parse_text_file(path, parse_counters_json);
}

}  // namespace xb
