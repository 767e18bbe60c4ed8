#include "bench/ab.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "bench/calibrate.h"
#include "bench/cli.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
#include "profiler/atomic_file.h"
#include "profiler/profiler.h"
#include "profiler/stats.h"

namespace xb {

namespace {
/// CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 (cupti_activity.h): the kind the CUPTI source pushes.
constexpr std::uint32_t kExternalKindCustom0 = 3;
}  // namespace

std::map<std::uint64_t, std::vector<double>> device_durations_by_external_id(const std::vector<RawRecord>& records) {
  std::map<std::uint32_t, std::uint64_t> external_of;
  for (const RawRecord& r : records) {
    if (r.kind == RawKind::ExternalCorrelation && r.external_kind == kExternalKindCustom0) {
      external_of[r.correlation_id] = r.external_id;
    }
  }
  std::map<std::uint64_t, std::vector<double>> out;
  for (const RawRecord& r : records) {
    if (r.kind != RawKind::Kernel && r.kind != RawKind::Memcpy && r.kind != RawKind::Memset) continue;
    const auto it = external_of.find(r.correlation_id);
    if (it != external_of.end()) out[it->second].push_back(static_cast<double>(r.end_ns - r.start_ns));
  }
  return out;
}

int ab_command(int argc, const char* const* argv) {
  CLI::App app{"crossbench ab: two workloads compared under the same GPU state, interleaved"};
  app.name("bench ab");
  std::vector<std::string> ops;
  std::string size_text = "4096";
  std::string dtype_name = "bf16";
  int rounds = 30;
  int launches = 10;
  double warmup_s = 2.0;
  std::string out;
  app.add_option("--op", ops, "the two ops A,B (B is reported relative to A)")->required();
  app.add_option("--size", size_text, "square size n (default 4096)");
  app.add_option("--dtype", dtype_name, "dtype (default bf16)");
  app.add_option("--rounds", rounds, "rounds of one block of A and one of B, in the order A B, then B A (default 30)");
  app.add_option("--launches", launches, "back-to-back calls per block (default 10)");
  app.add_option("--warmup-s", warmup_s, "seconds of untimed A and B calls first (default 2)");
  app.add_option("--out", out, "also write the figures as JSON to this file");
  if (!parse_command_line(app, argc, argv)) return 0;
  ops = parse_op_list(ops);
  if (ops.size() != 2) throw UsageError("--op needs exactly two ops, A,B");
  const std::int64_t n = parse_size(size_text);
  const std::vector<std::string> dtypes = parse_dtype_list({dtype_name});
  if (dtypes.size() != 1) throw UsageError("--dtype takes one dtype, not '" + dtype_name + "'");
  dtype_name = dtypes.front();
  if (rounds < 1 || rounds > 10000) throw UsageError("--rounds must be in 1..10000");
  if (launches < 1 || launches > 1000) throw UsageError("--launches must be in 1..1000");
  if (!(warmup_s >= 0 && warmup_s <= 60)) throw UsageError("--warmup-s must be in 0..60");
  if (app.count("--out") > 0) check_out_file(out);
  require_cuda_device();
  const DType dtype = parse_dtype(dtype_name);
  std::size_t need = 0;
  for (const std::string& op : ops) need += workload_device_bytes(parse_op(op), dtype, n);
  require_device_memory(need, fmt::format("{} and {} at {} {}", ops[0], ops[1], n, dtype_name));

  Stream stream;
  std::unique_ptr<Workload> w[2] = {make_workload(parse_op(ops[0]), dtype, n, stream.get()),
                                    make_workload(parse_op(ops[1]), dtype, n, stream.get())};
  for (auto& x : w) {
    const Verification v = x->verify();
    if (!v.passed) throw std::runtime_error(fmt::format("{}: result check failed: {}", to_string(x->op()), v.detail));
  }
  warm_up_for(stream.get(), warmup_s * 1e3, [&] {
    w[0]->enqueue();
    w[1]->enqueue();
  });

  // External id of round r's block of op k: 1 + 2r + k.
  auto source = make_cupti_source();
  source->start();
  for (int r = 0; r < rounds; ++r) {
    for (int j = 0; j < 2; ++j) {
      const int k = r % 2 == 0 ? j : 1 - j;
      source->push_external_id(static_cast<std::uint64_t>(1 + 2 * r + k));
      for (int i = 0; i < launches; ++i) w[k]->enqueue();
      source->pop_external_id();
    }
    stream.synchronize();
  }
  const std::vector<RawRecord> records = source->stop();
  if (source->dropped_records() != 0) throw ProfilerError(fmt::format("CUPTI dropped {} records", source->dropped_records()));
  const auto by_id = device_durations_by_external_id(records);
  std::vector<double> per_call[2], ratio;
  for (int r = 0; r < rounds; ++r) {
    double t[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const auto it = by_id.find(static_cast<std::uint64_t>(1 + 2 * r + k));
      if (it == by_id.end() || it->second.size() < static_cast<std::size_t>(launches)) {
        throw ProfilerError(fmt::format("round {}: {} has {} device activities for {} calls", r, ops[k],
                                        it == by_id.end() ? 0 : it->second.size(), launches));
      }
      for (double d : it->second) t[k] += d;
      t[k] /= launches;
      per_call[k].push_back(t[k]);
    }
    ratio.push_back(t[1] / t[0]);
  }
  const SampleStats a = compute_stats(per_call[0]), b = compute_stats(per_call[1]), q = compute_stats(ratio);
  std::cout << fmt::format(
      "| op | size | dtype | device time per call, median us | min us | max us |\n| --- | ---: | --- | ---: | ---: | ---: |\n"
      "| {} (A) | {} | {} | {:.2f} | {:.2f} | {:.2f} |\n| {} (B) | {} | {} | {:.2f} | {:.2f} | {:.2f} |\n\n"
      "B / A: median over {} interleaved rounds {:.4f} (min {:.4f}, max {:.4f}); ratio of medians {:.4f}\n",
      ops[0], n, dtype_name, a.median / 1e3, a.min / 1e3, a.max / 1e3, ops[1], n, dtype_name, b.median / 1e3,
      b.min / 1e3, b.max / 1e3, rounds, q.median, q.min, q.max, b.median / a.median);
  if (!out.empty()) {
    const nlohmann::json doc{{"ab",
                              {{"a", ops[0]},
                               {"b", ops[1]},
                               {"size", n},
                               {"dtype", dtype_name},
                               {"rounds", rounds},
                               {"launches", launches},
                               {"warmup_s", warmup_s},
                               {"a_median_ns", a.median},
                               {"b_median_ns", b.median},
                               {"a_per_round_ns", per_call[0]},
                               {"b_per_round_ns", per_call[1]},
                               {"ratio_median", q.median},
                               {"ratio_min", q.min},
                               {"ratio_max", q.max}}}};
    write_file_atomic(out, [&](std::ostream& os) { os << doc.dump(1) << '\n'; });
  }
  return 0;
}

}  // namespace xb
