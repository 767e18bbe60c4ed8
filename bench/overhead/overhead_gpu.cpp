// `bench overhead` (see overhead.h).
//
// Why this command keeps its own timing loop instead of the sampling core's timed_sample
// (bench/core/measure.h): what it measures is the HOST's wall time per launch under each profiler
// mode, from the first enqueue to the end of a stream synchronize after the last (CUPTI's API
// callbacks and activity records on the launching thread, the profiler's ranges and external
// ids, the synchronize under CUPTI), measured as tools/lab/vs_torch.py measures PyTorch's profiler
// so that the two compare. The core measures the other thing, on purpose: a cudaEvent interval on
// the device with the launches queued behind the blocking kernel, so that the host's launch path
// stays outside it; the profiling cost this command is about would vanish from that interval
// (and without the blocking kernel the interval would still miss the host work after the last
// launch and the synchronize, at 0.5 us resolution). timed_sample also always drives a Profiler
// (annotation and CPU-op ranges), while the CUPTI-only modes time an ActivitySource with no
// Profiler at all. So the rounds stay here, timed with std::chrono::steady_clock; what does fit
// comes from the core: warm_up_for (bench/core/device.h) takes the GPU off its idle clocks before
// the rounds, and the per-mode figures are compute_stats medians (common/stats.h) over the
// interleaved rounds.
#include "bench/overhead/overhead.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench/cli/cli.h"
#include "bench/core/device.h"
#include "common/atomic_file.h"
#include "common/stats.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
#include "profiler/adapters/cupti_source.h"
#include "profiler/adapters/nvtx_mirror.h"
#include "profiler/model/profiler.h"

namespace xb {
namespace {

struct OverheadOptions {
  std::vector<std::string> ops{"matmul", "add", "addmm", "addmm_bias1d"};
  std::int64_t size = 64;
  int launches = 100;
  int reps = 30;
  std::string out;
};

/// Wall time (ns) of one loop of `launches` calls of `launch`, from just before the first to the
/// end of a stream synchronize after the last.
template <typename Launch>
double time_loop(Workload& w, int launches, Launch&& launch) {
  using Clock = std::chrono::steady_clock;
  XB_CUDA(cudaStreamSynchronize(w.stream()));
  const auto t0 = Clock::now();
  for (int i = 0; i < launches; ++i) launch();
  XB_CUDA(cudaStreamSynchronize(w.stream()));
  const auto t1 = Clock::now();
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
}

/// A way to run the loop: the profiler off, CUPTI with some activity kinds, or the full profiler.
struct Mode {
  const char* name;
  enum Kind { Off, Cupti, Full } kind;
  unsigned kinds = 0;         ///< CuptiKindBits (Cupti)
  bool external_ids = false;  ///< push/pop an external id around each launch (Cupti)
};

constexpr Mode kOff{"off", Mode::Off};
constexpr Mode kCuptiOnly{"all activity kinds (CUPTI only)", Mode::Cupti, kCuptiAllKinds};
constexpr Mode kFull{"full profiler", Mode::Full, kCuptiAllKinds};
// --breakdown: between "off" and "CUPTI only", adding one kind at a time.
constexpr Mode kBreakdown[] = {
    {"kernel", Mode::Cupti, kCuptiKernel | kCuptiNvtx},
    {"kernel+runtime", Mode::Cupti, kCuptiKernel | kCuptiRuntime | kCuptiNvtx},
    {"kernel+runtime+driver", Mode::Cupti, kCuptiKernel | kCuptiRuntime | kCuptiDriver | kCuptiNvtx},
};
constexpr Mode kWithExternalIds{"all activity kinds + external id per launch", Mode::Cupti, kCuptiAllKinds, true};

/// One round of `mode`: set-up (a CUPTI session, the profiler), one untimed loop, one timed loop,
/// tear-down. Returns the timed loop's wall time (ns). "off" and the full profiler open the CPU-op
/// range per launch, as the fixtures do (it records only under the full profiler); the CUPTI-only
/// modes call the workload alone. Throws ProfilerError when CUPTI dropped records.
double run_round(const Mode& mode, Workload& w, int launches, const std::string& cpu_op) {
  if (mode.kind == Mode::Off || mode.kind == Mode::Full) {
    Profiler prof(mode.kind == Mode::Off ? make_null_source() : make_cupti_source());
    if (mode.kind == Mode::Full) {
      prof.set_mirror(make_nvtx_mirror());  // as bench runs it
      prof.start();
    }
    prof.begin_fixture(Schedule{0, 0, 2});
    double ns = 0;
    for (int step = 0; step < 2; ++step) {  // step 0 untimed
      prof.begin_step();
      ns = time_loop(w, launches, [&] {
        ScopedRange range(prof, cpu_op, RangeCategory::CpuOp);
        w.enqueue();
      });
      prof.end_step();
    }
    if (mode.kind == Mode::Full) {
      const RawSession session = prof.stop();
      if (session.meta.dropped_records != 0) throw ProfilerError("CUPTI dropped records during bench overhead");
    }
    return ns;
  }
  auto source = make_cupti_source(8u << 20, 256, mode.kinds);
  ActivitySource& s = *source;
  s.start();
  std::uint64_t id = 0;
  double ns = 0;
  for (int loop = 0; loop < 2; ++loop) {  // loop 0 untimed
    ns = mode.external_ids ? time_loop(w, launches,
                                       [&] {
                                         s.push_external_id(++id);
                                         w.enqueue();
                                         s.pop_external_id();
                                       })
                           : time_loop(w, launches, [&] { w.enqueue(); });
  }
  s.stop();
  if (s.dropped_records() != 0) throw ProfilerError("CUPTI dropped records during bench overhead");
  return ns;
}

constexpr double kWarmMs = 500;  ///< untimed launches before the rounds: the GPU leaves idle clocks

}  // namespace

int overhead_command(int argc, const char* const* argv) {
  OverheadOptions o;
  CLI::App app{"crossbench overhead: host cost of recording with the CUPTI profiler"};
  app.name("bench overhead");
  std::vector<std::string> ops;
  bool breakdown = false;
  app.add_option("--op", ops, "comma-separated ops (default all)");
  std::string size_text = std::to_string(o.size);
  app.add_option("--size", size_text, "square size n (default 64)");
  app.add_option("--launches", o.launches, "launches per timed loop (default 100)");
  app.add_option("--reps", o.reps, "rounds; each mode's median over them is reported (default 30)");
  app.add_option("--out", o.out, "also write the figures as JSON to this file");
  app.add_flag("--breakdown", breakdown,
               "also time CUPTI with subsets of its activity kinds (kernel; + runtime; + driver) and with "
               "an external id per launch, to show where the cost goes");
  if (!parse_command_line(app, argc, argv)) return 0;
  if (!ops.empty()) o.ops = parse_op_list(ops);
  o.size = parse_size(size_text);
  if (o.launches < 1 || o.launches > 100000) throw UsageError("--launches must be in 1..100000");
  if (o.reps < 1 || o.reps > 10000) throw UsageError("--reps must be in 1..10000");
  if (app.count("--out") > 0) check_out_file(o.out);
  require_cuda_device();

  std::vector<Mode> modes{kOff};
  if (breakdown) modes.insert(modes.end(), std::begin(kBreakdown), std::end(kBreakdown));
  modes.push_back(kCuptiOnly);
  if (breakdown) modes.push_back(kWithExternalIds);
  modes.push_back(kFull);

  Stream stream;
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::vector<double>> medians;  // [op][mode]
  for (const std::string& op_name : o.ops) {
    auto w = make_workload(parse_op(op_name), DType::BF16, o.size, stream.get());
    const std::string cpu_op = "xb::" + op_name;
    warm_up_for(w->stream(), kWarmMs, [&] { w->enqueue(); });
    // Rounds interleave the modes, so that a drift of the GPU's clock or the host's load during
    // the measurement reaches every mode alike.
    std::vector<std::vector<double>> ns(modes.size());
    for (int r = 0; r < o.reps; ++r) {
      for (std::size_t m = 0; m < modes.size(); ++m) ns[m].push_back(run_round(modes[m], *w, o.launches, cpu_op));
    }
    std::vector<double> med;
    for (const auto& v : ns) med.push_back(compute_stats(v).median);
    medians.push_back(med);
    nlohmann::json row{{"op", op_name},
                       {"size", o.size},
                       {"launches", o.launches},
                       {"reps", o.reps},
                       {"off_ns", med.front()},
                       {"full_ns", med.back()},
                       {"full_ratio", med.back() / med.front()}};
    nlohmann::json by_mode = nlohmann::json::array();
    for (std::size_t m = 0; m < modes.size(); ++m) {
      by_mode.push_back({{"mode", modes[m].name},
                         {"median_ns", med[m]},
                         {"ratio", med[m] / med.front()},
                         {"min_ns", compute_stats(ns[m]).min},
                         {"max_ns", compute_stats(ns[m]).max}});
      if (&modes[m] != &modes.front() && std::string(modes[m].name) == kCuptiOnly.name) {
        row["cupti_only_ns"] = med[m];
        row["cupti_only_ratio"] = med[m] / med.front();
        row["full_over_cupti_only"] = med.back() / med[m];  // what the profiler adds to CUPTI's own cost
      }
    }
    row["modes"] = by_mode;
    rows.push_back(row);
  }
  std::cout << "| op | size | launches | off us | CUPTI only us | full profiler us | CUPTI only / off | full / off | "
               "full / CUPTI only |\n"
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const nlohmann::json& row : rows) {
    std::cout << fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.3f} | {:.3f} | {:.3f} |\n",
                             row["op"].get<std::string>(), o.size, o.launches, row["off_ns"].get<double>() / 1e3,
                             row["cupti_only_ns"].get<double>() / 1e3, row["full_ns"].get<double>() / 1e3,
                             row["cupti_only_ratio"].get<double>(), row["full_ratio"].get<double>(),
                             row["full_over_cupti_only"].get<double>());
  }
  // Per mode: its median, its ratio over off, and what it adds per launch over the mode before.
  std::cout << "\n| op | mode | median us | / off | added per launch over the row above, us |\n"
               "| --- | --- | ---: | ---: | ---: |\n";
  for (std::size_t k = 0; k < o.ops.size(); ++k) {
    for (std::size_t m = 0; m < modes.size(); ++m) {
      const double t = medians[k][m];
      std::cout << fmt::format(
          "| {} | {} | {:.1f} | {:.3f} | {} |\n", o.ops[k], modes[m].name, t / 1e3, t / medians[k][0],
          m == 0 ? std::string() : fmt::format("{:+.2f}", (t - medians[k][m - 1]) / 1e3 / o.launches));
    }
  }
  if (!o.out.empty()) {
    write_file_atomic(o.out, [&](std::ostream& out) { out << nlohmann::json{{"overhead", rows}}.dump(1) << '\n'; });
  }
  return 0;
}

}  // namespace xb
