// The validator's counters.json reader and per-call figures (validate/counters_reader.h): its own
// code, not the profiler's (profiler/model/counters.cpp), so that the checker of the counter pass
// shares no bug with the pass's writer; the JSON accessors are common/'s (common/strict_json.h).
#include "validate/counters_reader.h"

#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/strict_json.h"
#include "common/text_file.h"

namespace xb::vd {

namespace {

using json = nlohmann::json;

// strict_json.h's accessors with "counters: " in front of every path; the numbers are counts,
// bytes, weights and times, never negative.
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

constexpr const char* kQuantities[] = {"dram_read_bytes",   "dram_write_bytes",    "sass_flops", "tensor_flops",
                                       "sm_throughput_pct", "dram_throughput_pct", "duration_ns"};

/// The header, the pass, the status and the device (the validator keeps status, reason, L2 size).
void parse_header(const json& doc, CountersFile& s) {
  const json& meta = at(doc, "crossbench", "top level");
  if (get_string(meta, "format", "crossbench") != "counters") bad("crossbench.format", "is not \"counters\"");
  if (get_int(meta, "version", "crossbench") != 1) bad("crossbench.version", "is not 1");
  get_string(meta, "created_utc", "crossbench");
  if (get_string(at(doc, "pass", "top level"), "name", "pass") != "counters") bad("pass.name", "is not \"counters\"");
  s.status = get_string(doc, "status", "top level");
  if (s.status != "collected" && s.status != "unavailable")
    bad("status", "is neither \"collected\" nor \"unavailable\"");
  s.reason = get_string(doc, "reason", "top level");
  get_string(doc, "method", "top level");
  get_string(doc, "library", "top level");
  const json& dev = at(doc, "device", "top level");
  get_string(dev, "name", "device");
  get_string(dev, "chip", "device");
  const std::int64_t l2 = get_int(dev, "l2_bytes", "device");
  if (l2 < 0) bad("device.l2_bytes", "negative");
  s.l2_bytes = static_cast<std::uint64_t>(l2);
  const std::int64_t passes = get_int(doc, "passes", "top level");
  if (passes < 0 || passes > 1000000) bad("passes", "out of range");
  if (doc.contains("sass")) {  // optional: files written before the SASS metrics pass lack it
    const json& sass = at(doc, "sass", "top level");
    const std::string status = get_string(sass, "status", "sass");
    if (status != "counted" && status != "not counted")
      bad("sass.status", "is neither \"counted\" nor \"not counted\"");
    get_string(sass, "reason", "sass");
  }
}

/// "metrics": each with its name, whether accepted (and why not), its quantity and weight.
void parse_metrics(const json& doc, CountersFile& s) {
  const json& metrics = get_array(doc, "metrics", "top level");
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const std::string w = "metrics[" + std::to_string(i) + "]";
    CountersMetric m;
    m.name = get_string(metrics[i], "name", w);
    const json& acc = at(metrics[i], "accepted", w);
    if (!acc.is_boolean()) bad(w + ".accepted", "not a boolean");
    if (!acc.get<bool>() && metrics[i].contains("reason")) get_string(metrics[i], "reason", w);
    m.quantity = get_string(metrics[i], "quantity", w);
    bool known = false;
    for (const char* q : kQuantities) known = known || m.quantity == q;
    if (!known) bad(w + ".quantity", "unknown quantity " + strict_json::quote_input(m.quantity));
    m.weight = get_number(metrics[i], "weight", w);
    s.metrics.push_back(std::move(m));
  }
}

/// A metric-name -> value object, every value finite and non-negative.
std::map<std::string, double> parse_values(const json& obj, const char* key, const std::string& where) {
  const json& values = at(obj, key, where);
  if (!values.is_object()) bad(where + "." + key, "not an object");
  std::map<std::string, double> out;
  for (auto it = values.begin(); it != values.end(); ++it)
    out[it.key()] = get_number(values, it.key().c_str(), where + "." + key);
  return out;
}

CountersFixture parse_fixture(const json& fj, const std::string& w) {
  CountersFixture f;
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
    CountersKernel kc;
    kc.range = get_string(kernels[k], "range", wk);
    kc.values = parse_values(kernels[k], "values", wk);
    f.kernels.push_back(std::move(kc));
  }
  if (fj.contains("sass")) {
    const json& sass = at(fj, "sass", w);
    f.sass = parse_values(sass, "values", w + ".sass");
    f.sass_error = get_string(sass, "error", w + ".sass");
  }
  return f;
}

}  // namespace

CountersFile parse_counters(const std::string& text) {
  const json doc = strict_json::parse_json(text, "counters");
  CountersFile s;
  parse_header(doc, s);
  parse_metrics(doc, s);
  const json& fixtures = get_array(doc, "fixtures", "top level");
  for (std::size_t i = 0; i < fixtures.size(); ++i)
    s.fixtures.push_back(parse_fixture(fixtures[i], "fixtures[" + std::to_string(i) + "]"));
  return s;
}

CountersFile read_counters(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  try {
    return parse_counters(text);
  } catch (const InputError& e) {
    throw InputError(path.string() + ": " + e.what());
  }
}

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
