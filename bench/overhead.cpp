#include "bench/overhead.h"

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench/calibrate.h"
#include "bench/cli.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
#include "profiler/atomic_file.h"
#include "profiler/nvtx_mirror.h"
#include "profiler/profiler.h"
#include "profiler/stats.h"

namespace xb {
namespace {

struct OverheadOptions {
  std::vector<std::string> ops{"matmul", "add", "addmm", "addmm_bias1d"};
  std::int64_t size = 64;
  int launches = 100;
  int reps = 30;
  std::string out;
};

/// Median wall time (ns) of `reps` timed loops of `launches` enqueues of `w`, each inside a CPU-op
/// range of `prof` inside one step per loop (the ranges record only while `prof` is started).
double time_loops(Workload& w, Profiler& prof, const OverheadOptions& o, const std::string& op_name) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> ns;
  prof.begin_fixture(Schedule{0, 0, o.reps + 1});
  for (int r = 0; r <= o.reps; ++r) {  // loop 0 is a warm-up, not counted
    XB_CUDA(cudaStreamSynchronize(w.stream()));
    prof.begin_step();
    const auto t0 = Clock::now();
    for (int i = 0; i < o.launches; ++i) {
      ScopedRange range(prof, op_name, RangeCategory::CpuOp);
      w.enqueue();
    }
    XB_CUDA(cudaStreamSynchronize(w.stream()));
    const auto t1 = Clock::now();
    prof.end_step();
    if (r > 0) ns.push_back(static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
  }
  return compute_stats(ns).median;
}

}  // namespace

int overhead_command(int argc, const char* const* argv) {
  OverheadOptions o;
  CLI::App app{"crossbench overhead: host cost of recording with the CUPTI profiler"};
  app.name("bench overhead");
  std::vector<std::string> ops;
  app.add_option("--op", ops, "comma-separated ops (default all)");
  app.add_option("--size", o.size, "square size n (default 64)");
  app.add_option("--launches", o.launches, "launches per timed loop (default 100)");
  app.add_option("--reps", o.reps, "timed loops per mode; the median is reported (default 30)");
  app.add_option("--out", o.out, "also write the figures as JSON to this file");
  if (!parse_command_line(app, argc, argv)) return 0;
  if (!ops.empty()) o.ops = parse_op_list(ops);
  o.size = parse_size(std::to_string(o.size));
  if (o.launches < 1 || o.launches > 100000) throw UsageError("--launches must be in 1..100000");
  if (o.reps < 1 || o.reps > 10000) throw UsageError("--reps must be in 1..10000");
  if (app.count("--out") > 0 && o.out.empty()) throw UsageError("empty --out file name");
  require_cuda_device();

  Stream stream;
  nlohmann::json rows = nlohmann::json::array();
  std::cout << "| op | size | launches | off us | CUPTI only us | full profiler us | CUPTI only / off | full / off |\n"
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const std::string& op_name : o.ops) {
    auto w = make_workload(parse_op(op_name), DType::BF16, o.size, stream.get());
    const std::string cpu_op = "xb::" + op_name;
    // Off: no profiler started, so ranges are no-ops and no CUPTI activity is enabled.
    double off_ns = 0, cupti_ns = 0, full_ns = 0;
    {
      Profiler off(make_null_source());
      off_ns = time_loops(*w, off, o, cpu_op);
    }
    // CUPTI only: activity collection on, launches outside any recorded step (no ranges). One
    // CUPTI session at a time per process: each profiler is gone before the next one starts.
    {
      Profiler cupti_only(make_cupti_source());
      cupti_only.start();
      Profiler idle(make_null_source());  // drives the loop without recording ranges
      cupti_ns = time_loops(*w, idle, o, cpu_op);
      cupti_only.stop();
    }
    // Full: CUPTI plus a recorded step, a CPU-op range and an external id per launch.
    std::size_t kernels = 0;
    std::uint64_t dropped = 0;
    {
      Profiler full(make_cupti_source());
      full.set_mirror(make_nvtx_mirror());  // as bench runs it
      full.start();
      full_ns = time_loops(*w, full, o, cpu_op);
      const RawSession session = full.stop();
      for (const RawRecord& r : session.records) kernels += r.kind == RawKind::Kernel ? 1 : 0;
      dropped = session.meta.dropped_records;
    }
    std::cout << fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.3f} | {:.3f} |\n", op_name, o.size,
                             o.launches, off_ns / 1e3, cupti_ns / 1e3, full_ns / 1e3, cupti_ns / off_ns, full_ns / off_ns);
    rows.push_back({{"op", op_name},
                    {"size", o.size},
                    {"launches", o.launches},
                    {"reps", o.reps},
                    {"off_ns", off_ns},
                    {"cupti_only_ns", cupti_ns},
                    {"full_ns", full_ns},
                    {"cupti_only_ratio", cupti_ns / off_ns},
                    {"full_ratio", full_ns / off_ns},
                    {"kernels_recorded", kernels},
                    {"dropped_records", dropped}});
  }
  if (!o.out.empty()) {
    write_file_atomic(o.out, [&](std::ostream& out) { out << nlohmann::json{{"overhead", rows}}.dump(1) << '\n'; });
  }
  return 0;
}

}  // namespace xb
