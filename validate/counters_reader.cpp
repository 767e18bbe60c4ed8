// The validator's counters.json reader and per-call figures (validate/counters_reader.h): its own
// code, not the profiler's (profiler/model/counters.cpp), so that the checker of the counter pass
// shares no bug with the pass's writer; the JSON accessors are common/'s (common/strict_json.h).
#include "validate/counters_reader.h"

#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/strict_json.h"
#include "common/text_file.h"

namespace xb::vd {

namespace {

using json = nlohmann::json;
namespace sj = strict_json;

// Every `where` below starts "counters: " (the file's name in every message); the numbers are
// counts, bytes, weights and times, never negative.
const char* const kTop = "counters: top level";
double non_negative(const json& obj, const char* key, const std::string& where) {
  const double d = sj::need_number(obj, key, where);
  if (d < 0) sj::fail(where + "." + key, "not a finite non-negative number");
  return d;
}
std::int64_t int64(const json& obj, const char* key, const std::string& where) {
  return sj::need_int(obj, key, where, std::numeric_limits<std::int64_t>::min(),
                      std::numeric_limits<std::int64_t>::max());
}

constexpr const char* kQuantities[] = {"dram_read_bytes",   "dram_write_bytes",    "sass_flops", "tensor_flops",
                                       "sm_throughput_pct", "dram_throughput_pct", "duration_ns"};

/// The header, the pass, the status and the device (the validator keeps status, reason, L2 size).
void parse_header(const json& doc, CountersFile& s) {
  const json& meta = sj::need(doc, "crossbench", kTop);
  if (sj::need_string(meta, "format", "counters: crossbench") != "counters")
    sj::fail("counters: crossbench.format", "is not \"counters\"");
  if (int64(meta, "version", "counters: crossbench") != 1) sj::fail("counters: crossbench.version", "is not 1");
  sj::need_string(meta, "created_utc", "counters: crossbench");
  if (sj::need_string(sj::need(doc, "pass", kTop), "name", "counters: pass") != "counters")
    sj::fail("counters: pass.name", "is not \"counters\"");
  s.status = sj::need_string(doc, "status", kTop);
  if (s.status != "collected" && s.status != "unavailable")
    sj::fail("counters: status", "is neither \"collected\" nor \"unavailable\"");
  s.reason = sj::need_string(doc, "reason", kTop);
  sj::need_string(doc, "method", kTop);
  sj::need_string(doc, "library", kTop);
  const json& dev = sj::need(doc, "device", kTop);
  sj::need_string(dev, "name", "counters: device");
  sj::need_string(dev, "chip", "counters: device");
  const std::int64_t l2 = int64(dev, "l2_bytes", "counters: device");
  if (l2 < 0) sj::fail("counters: device.l2_bytes", "negative");
  s.l2_bytes = static_cast<std::uint64_t>(l2);
  const std::int64_t passes = int64(doc, "passes", kTop);
  if (passes < 0 || passes > 1000000) sj::fail("counters: passes", "out of range");
  if (doc.contains("sass")) {  // optional: files written before the SASS metrics pass lack it
    const json& sass = sj::need(doc, "sass", kTop);
    const std::string status = sj::need_string(sass, "status", "counters: sass");
    if (status != "counted" && status != "not counted")
      sj::fail("counters: sass.status", "is neither \"counted\" nor \"not counted\"");
    sj::need_string(sass, "reason", "counters: sass");
  }
}

/// "metrics": each with its name, whether accepted (and why not), its quantity and weight.
void parse_metrics(const json& doc, CountersFile& s) {
  const json& metrics = sj::need_array(doc, "metrics", kTop);
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const std::string w = "counters: metrics[" + std::to_string(i) + "]";
    CountersMetric m;
    m.name = sj::need_string(metrics[i], "name", w);
    const json& acc = sj::need(metrics[i], "accepted", w);
    if (!acc.is_boolean()) sj::fail(w + ".accepted", "not a boolean");
    if (!acc.get<bool>() && metrics[i].contains("reason")) sj::need_string(metrics[i], "reason", w);
    m.quantity = sj::need_string(metrics[i], "quantity", w);
    bool known = false;
    for (const char* q : kQuantities) known = known || m.quantity == q;
    if (!known) sj::fail(w + ".quantity", "unknown quantity " + sj::quote_input(m.quantity));
    m.weight = non_negative(metrics[i], "weight", w);
    s.metrics.push_back(std::move(m));
  }
}

/// A metric-name -> value object, every value finite and non-negative.
std::map<std::string, double> parse_values(const json& obj, const char* key, const std::string& where) {
  const json& values = sj::need(obj, key, where);
  if (!values.is_object()) sj::fail(where + "." + key, "not an object");
  std::map<std::string, double> out;
  for (auto it = values.begin(); it != values.end(); ++it)
    out[it.key()] = non_negative(values, it.key().c_str(), where + "." + key);
  return out;
}

CountersFixture parse_fixture(const json& fj, const std::string& w) {
  CountersFixture f;
  f.name = sj::need_string(fj, "name", w);
  f.op = sj::need_string(fj, "op", w);
  f.dtype = sj::need_string(fj, "dtype", w);
  f.size = int64(fj, "size", w);
  const std::int64_t calls = int64(fj, "calls", w);
  if (calls < 1 || calls > 1000000) sj::fail(w + ".calls", "out of range [1, 1000000]");
  f.calls = static_cast<int>(calls);
  const json& model = sj::need(fj, "model", w);
  f.model_flops = non_negative(model, "flops", w + ".model");
  f.model_bytes = non_negative(model, "bytes", w + ".model");
  f.error = sj::need_string(fj, "error", w);
  const json& kernels = sj::need_array(fj, "kernels", w);
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const std::string wk = w + ".kernels[" + std::to_string(k) + "]";
    CountersKernel kc;
    kc.range = sj::need_string(kernels[k], "range", wk);
    kc.values = parse_values(kernels[k], "values", wk);
    f.kernels.push_back(std::move(kc));
  }
  if (fj.contains("sass")) {
    const json& sass = sj::need(fj, "sass", w);
    f.sass = parse_values(sass, "values", w + ".sass");
    f.sass_error = sj::need_string(sass, "error", w + ".sass");
  }
  return f;
}

}  // namespace

CountersFile parse_counters(const std::string& text) {
  const json doc = sj::parse_json(text, "counters");
  CountersFile s;
  parse_header(doc, s);
  parse_metrics(doc, s);
  const json& fixtures = sj::need_array(doc, "fixtures", kTop);
  for (std::size_t i = 0; i < fixtures.size(); ++i)
    s.fixtures.push_back(parse_fixture(fixtures[i], "counters: fixtures[" + std::to_string(i) + "]"));
  return s;
}

CountersFile read_counters(const std::filesystem::path& path) { return parse_text_file(path, parse_counters); }

CountersFigures per_call_figures(const CountersFile& file, const CountersFixture& fixture) {
  CountersFigures f;
  double sm_weighted = 0, dram_weighted = 0, sm_plain = 0, dram_plain = 0;
  for (const CountersKernel& k : fixture.kernels) {
    double duration = 0, sm = 0, dram = 0;
    for (const CountersMetric& m : file.metrics) {
      const auto it = k.values.find(m.name);
      if (it == k.values.end()) continue;
      const double v = it->second;
      if (m.quantity == "dram_read_bytes")
        f.dram_read_bytes += v;
      else if (m.quantity == "dram_write_bytes")
        f.dram_write_bytes += v;
      else if (m.quantity == "sass_flops")
        f.sass_flops += v * m.weight;
      else if (m.quantity == "tensor_flops")
        f.tensor_flops += v * m.weight;
      else if (m.quantity == "sm_throughput_pct")
        sm = v;
      else if (m.quantity == "dram_throughput_pct")
        dram = v;
      else if (m.quantity == "duration_ns")
        duration = v;
    }
    f.duration_ns += duration;
    sm_weighted += sm * duration;
    dram_weighted += dram * duration;
    sm_plain += sm;
    dram_plain += dram;
  }
  const double c = fixture.calls;
  f.dram_read_bytes /= c;
  f.dram_write_bytes /= c;
  f.dram_bytes = f.dram_read_bytes + f.dram_write_bytes;
  f.sass_flops /= c;
  f.tensor_flops /= c;
  const double total_ns = f.duration_ns;
  f.duration_ns /= c;
  if (total_ns > 0) {
    f.sm_throughput_pct = sm_weighted / total_ns;
    f.dram_throughput_pct = dram_weighted / total_ns;
  } else if (!fixture.kernels.empty()) {
    f.sm_throughput_pct = sm_plain / static_cast<double>(fixture.kernels.size());
    f.dram_throughput_pct = dram_plain / static_cast<double>(fixture.kernels.size());
  }
  // The SASS metrics pass's totals over the calls (SASS patching counts per instruction).
  double sass = 0;
  for (const CountersMetric& m : file.metrics) {
    const auto it = fixture.sass.find(m.name);
    if (it != fixture.sass.end() && m.quantity == "sass_flops") sass += it->second * m.weight;
  }
  f.sass_flops += sass / c;
  f.flops = f.sass_flops + f.tensor_flops;
  return f;
}

}  // namespace xb::vd
