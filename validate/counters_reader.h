// The validator's own reader of counters.json (docs/formats.md) and its own derivation of the
// per-call figures, for the model_vs_counters check: it never calls the profiler's reader or
// figures (profiler/model/counters.h), so a bug there is not shared by the file's writer and its
// checker. The figures apply the quantity and weight each metric is declared with in the file's
// "metrics" list (what the counter pass says it counted), not a table of the validator's.
//
// Units: bytes, FLOPs (a fused multiply-add counts 2), ns, percent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace xb::vd {

/// What one metric's value contributes to, as counters.json declares it.
struct CountersMetric {
  std::string name;      ///< e.g. "dram__bytes_read.sum"
  std::string quantity;  ///< "dram_read_bytes", "dram_write_bytes", "sass_flops", "tensor_flops",
                         ///< "sm_throughput_pct", "dram_throughput_pct" or "duration_ns"
  double weight = 1;     ///< FLOPs per counted instruction or operation (the FLOP quantities)
};

/// One kernel's raw values (one CUPTI range).
struct CountersKernel {
  std::string range;                     ///< the range's name, for messages
  std::map<std::string, double> values;  ///< metric name -> value
};

/// One fixture's counter pass.
struct CountersFixture {
  std::string name;  ///< "<op>/<dtype>/<n>"
  std::string op;
  std::string dtype;
  std::int64_t size = 0;
  int calls = 1;           ///< calls profiled back to back; per-call figures are totals / calls
  double model_flops = 0;  ///< the roofline's FLOPs per call
  double model_bytes = 0;  ///< the roofline's bytes per call
  std::string error;       ///< why there are no counters ("" = collected)
  std::vector<CountersKernel> kernels;
  std::map<std::string, double> sass;  ///< SASS metrics pass: metric -> total over the calls
  std::string sass_error;              ///< why there are no SASS counts ("" = counted)
};

/// counters.json as the validator reads it.
struct CountersFile {
  std::string status;                   ///< "collected" or "unavailable"
  std::string reason;                   ///< why unavailable
  std::uint64_t l2_bytes = 0;           ///< the device's L2 size
  std::vector<CountersMetric> metrics;  ///< in the file's order
  std::vector<CountersFixture> fixtures;
};

/// Per-call figures of one fixture.
struct CountersFigures {
  double dram_read_bytes = 0;
  double dram_write_bytes = 0;
  double dram_bytes = 0;           ///< read + written
  double sass_flops = 0;           ///< SASS counters x weights (range profiler values and SASS totals)
  double tensor_flops = 0;         ///< tensor-pipe counters x weights
  double flops = 0;                ///< sass_flops + tensor_flops
  double duration_ns = 0;          ///< sum of the kernels' durations
  double sm_throughput_pct = 0;    ///< duration-weighted mean over the kernels
  double dram_throughput_pct = 0;  ///< duration-weighted mean over the kernels
};

/// Parses counters.json text. Requires crossbench.format == "counters", version 1, the keys the
/// counter pass writes with their JSON types (each metric with its quantity and weight), finite,
/// non-negative numbers; the file's own per-call figures are not read (per_call_figures recomputes
/// them). Throws InputError (common/errors.h) "counters: <where>: <what>".
CountersFile parse_counters(const std::string& text);

/// Reads and parses a file; throws InputError naming the file.
CountersFile read_counters(const std::filesystem::path& path);

/// Per-call figures of `fixture`: over its kernels, each declared metric's value x weight summed
/// into its quantity, the SASS totals (x weight) added to sass_flops, all divided by `calls`; the
/// throughputs as the duration-weighted mean over the kernels (the plain mean when no duration
/// was counted). Values of metrics `file` does not declare are ignored.
CountersFigures per_call_figures(const CountersFile& file, const CountersFixture& fixture);

}  // namespace xb::vd
