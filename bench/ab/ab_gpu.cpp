#include "bench/ab/ab.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <array>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "bench/cli/cli.h"
#include "bench/core/blocks.h"
#include "bench/core/device.h"
#include "bench/core/fixtures.h"
#include "bench/core/measure.h"
#include "common/atomic_file.h"
#include "common/stats.h"
#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
#include "profiler/adapters/cupti_source.h"
#include "profiler/model/event_model.h"
#include "profiler/model/profiler.h"
#include "profiler/model/step_metrics.h"

namespace xb {

namespace {

/// bench ab's options (ab.h).
struct AbOptions {
  std::vector<std::string> ops;  ///< A, B
  std::int64_t n = 0;
  std::string dtype_name = "bf16";
  int rounds = 30;
  int launches = 10;
  double warmup_s = 2.0;
  std::string out;
};

/// Parses and checks bench ab's command line; std::nullopt after --help. Throws UsageError.
std::optional<AbOptions> parse_ab_args(int argc, const char* const* argv) {
  CLI::App app{"crossbench ab: two workloads compared under the same GPU state, interleaved"};
  app.name("bench ab");
  AbOptions o;
  std::string size_text = "4096";
  app.add_option("--op", o.ops, "the two ops A,B (B is reported relative to A)")->required();
  app.add_option("--size", size_text, "square size n (default 4096)");
  app.add_option("--dtype", o.dtype_name, "dtype (default bf16)");
  app.add_option("--rounds", o.rounds,
                 "rounds of one block of A and one of B, in the order A B, then B A (default 30)");
  app.add_option("--launches", o.launches, "back-to-back calls per block (default 10)");
  app.add_option("--warmup-s", o.warmup_s, "seconds of untimed A and B calls first (default 2)");
  app.add_option("--out", o.out, "also write the figures as JSON to this file");
  if (!parse_command_line(app, argc, argv)) return std::nullopt;
  o.ops = parse_op_list(o.ops);
  if (o.ops.size() != 2) throw UsageError("--op needs exactly two ops, A,B");
  o.n = parse_size(size_text);
  const std::vector<std::string> dtypes = parse_dtype_list({o.dtype_name});
  if (dtypes.size() != 1) throw UsageError("--dtype takes one dtype, not '" + o.dtype_name + "'");
  o.dtype_name = dtypes.front();
  if (o.rounds < 1 || o.rounds > 10000) throw UsageError("--rounds must be in 1..10000");
  if (o.launches < 1 || o.launches > 1000) throw UsageError("--launches must be in 1..1000");
  if (!(o.warmup_s >= 0 && o.warmup_s <= 60)) throw UsageError("--warmup-s must be in 0..60");
  if (app.count("--out") > 0) check_out_file(o.out);
  return o;
}

/// The rounds' figures on stdout (markdown) and, with --out, as JSON written atomically.
void write_ab(const AbOptions& o, const AbRounds& ab, bool blocking) {
  const SampleStats a = compute_stats(ab.device_ns[0]), b = compute_stats(ab.device_ns[1]),
                    q = compute_stats(ab.device_ratio);
  const SampleStats ea = compute_stats(ab.event_ns[0]), eb = compute_stats(ab.event_ns[1]),
                    eq = compute_stats(ab.event_ratio);
  const std::vector<std::string>& ops = o.ops;
  std::cout << fmt::format(
      "| op | size | dtype | device time per call, median us | min us | max us | cudaEvent time per call, median us |\n"
      "| --- | ---: | --- | ---: | ---: | ---: | ---: |\n"
      "| {} (A) | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n| {} (B) | {} | {} | {:.2f} | {:.2f} | {:.2f} | "
      "{:.2f} |\n\n"
      "B / A: median over {} interleaved rounds {:.4f} (min {:.4f}, max {:.4f}); ratio of medians {:.4f}\n"
      "B / A by cudaEvent time: median over rounds {:.4f} (min {:.4f}, max {:.4f}){}\n",
      ops[0], o.n, o.dtype_name, a.median / 1e3, a.min / 1e3, a.max / 1e3, ea.median / 1e3, ops[1], o.n, o.dtype_name,
      b.median / 1e3, b.min / 1e3, b.max / 1e3, eb.median / 1e3, o.rounds, q.median, q.min, q.max, b.median / a.median,
      eq.median, eq.min, eq.max,
      blocking ? ""
               : fmt::format(" (blocks of more than {} calls are not held by the blocking kernel: the event "
                             "times include the host's launch gaps)",
                             kMaxBatch));
  if (o.out.empty()) return;
  const nlohmann::json doc{{"ab",
                            {{"a", ops[0]},
                             {"b", ops[1]},
                             {"size", o.n},
                             {"dtype", o.dtype_name},
                             {"rounds", o.rounds},
                             {"launches", o.launches},
                             {"warmup_s", o.warmup_s},
                             {"blocking", blocking},
                             {"a_median_ns", a.median},
                             {"b_median_ns", b.median},
                             {"a_per_round_ns", ab.device_ns[0]},
                             {"b_per_round_ns", ab.device_ns[1]},
                             {"ratio_median", q.median},
                             {"ratio_min", q.min},
                             {"ratio_max", q.max},
                             {"a_event_median_ns", ea.median},
                             {"b_event_median_ns", eb.median},
                             {"a_event_per_round_ns", ab.event_ns[0]},
                             {"b_event_per_round_ns", ab.event_ns[1]},
                             {"a_span_per_round_ns", ab.span_ns[0]},
                             {"b_span_per_round_ns", ab.span_ns[1]},
                             {"event_ratio_median", eq.median},
                             {"event_ratio_min", eq.min},
                             {"event_ratio_max", eq.max}}}};
  write_file_atomic(o.out, [&](std::ostream& os) { os << doc.dump(1) << '\n'; });
}

}  // namespace

int ab_command(int argc, const char* const* argv) {
  const std::optional<AbOptions> parsed = parse_ab_args(argc, argv);
  if (!parsed) return 0;
  const AbOptions& o = *parsed;
  const std::vector<std::string>& ops = o.ops;
  const std::int64_t n = o.n;
  const std::string& dtype_name = o.dtype_name;
  const int rounds = o.rounds;
  require_cuda_device();
  const DType dtype = parse_dtype(dtype_name);
  std::size_t need = 0;
  for (const std::string& op : ops) need += workload_device_bytes(parse_op(op), dtype, n);
  require_device_memory(need, fmt::format("{} and {} at {} {}", ops[0], ops[1], n, dtype_name));

  // The CUPTI source first: a missing library, or CUPTI held by another tool, stops before any work.
  Profiler profiler(make_cupti_source());
  Stream stream;
  std::unique_ptr<Workload> w[2] = {make_workload(parse_op(ops[0]), dtype, n, stream.get()),
                                    make_workload(parse_op(ops[1]), dtype, n, stream.get())};
  for (auto& x : w) {
    const Verification v = x->verify();
    if (!v.passed) throw std::runtime_error(fmt::format("{}: result check failed: {}", to_string(x->op()), v.detail));
  }
  // A block is queued behind the blocking kernel, so its calls run back to back and the host's
  // launch gaps stay out of the event interval, unless it could fill CUDA's launch queue
  // (kMaxBatch, bench/cli/cli.h: an addmm call is two launches): then it is not held.
  const bool blocking = o.launches <= kMaxBatch;
  BlockingKernel blocker;  // loads its module (lazy loading) outside any block
  const std::unique_ptr<SampleDevice> device =
      make_cuda_sample_device(stream.get(), blocking ? &blocker : nullptr, nullptr);
  warm_up_for(stream.get(), o.warmup_s * 1e3, [&] {
    w[0]->enqueue();
    w[1]->enqueue();
  });

  // One profiler step per block, every one of them recorded; the annotation names the op.
  const std::array<std::string, 2> fixtures{fixture_name(ops[0], dtype_name, n), fixture_name(ops[1], dtype_name, n)};
  SampleSpec spec;
  spec.launches = o.launches;
  profiler.start();
  profiler.begin_fixture(Schedule{0, 0, 2 * rounds});
  for (int r = 0; r < rounds; ++r) {
    for (int j = 0; j < 2; ++j) {
      const int k = ab_op_of(r, j);
      timed_sample([&w, k] { w[k]->enqueue(); }, profiler, *device, fixtures[static_cast<std::size_t>(k)],
                   "xb::" + ops[static_cast<std::size_t>(k)], spec);
    }
  }
  XB_CUDA(cudaStreamSynchronize(stream.get()));
  const RawSession raw = profiler.stop();
  if (raw.meta.dropped_records != 0)
    throw ProfilerError(fmt::format("CUPTI dropped {} records", raw.meta.dropped_records));
  write_ab(o, ab_rounds(step_metrics(build_session(raw)), fixtures, rounds), blocking);
  return 0;
}

}  // namespace xb
