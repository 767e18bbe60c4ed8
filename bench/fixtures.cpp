#include "bench/fixtures.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>

#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
#include "profiler/table.h"

namespace xb {
namespace {

}  // namespace

TimedCall timed_call(Workload& w, Profiler& prof, BlockingKernel& blocking, const Event& start,
                     const Event& stop, const std::string& annotation, const std::string& op_name) {
  blocking.block(w.stream());
  const std::uint64_t step = prof.begin_step();
  start.record(w.stream());
  {
    ScopedRange annotate(prof, annotation, RangeCategory::UserAnnotation);
    ScopedRange op(prof, op_name, RangeCategory::CpuOp);
    w.enqueue();
  }
  stop.record(w.stream());
  blocking.release();
  stop.synchronize();
  if (blocking.timed_out()) {
    throw std::runtime_error("blocking kernel timed out before the host released it");
  }
  const auto ns = static_cast<std::int64_t>(
      std::llround(static_cast<double>(stop.elapsed_ms_since(start)) * 1e6));
  if (ns <= 0) {
    throw std::runtime_error("non-positive cudaEvent interval (" + std::to_string(ns) + " ns)");
  }
  if (step != 0) prof.add_step_timing({annotation, prof.step_number(), step, ns});
  prof.end_step();
  return {ns, step != 0};
}

namespace {

/// Warm-up until steady: windows of 10 event-timed calls, stop when two consecutive window
/// medians differ by under 1% after at least 200 ms, or after 3 s (reported as not steady).
struct WarmupResult {
  int calls = 0;
  double seconds = 0;
  bool steady = false;
};

WarmupResult warm_up(Workload& w, const Event& start, const Event& stop) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  WarmupResult r;
  double previous = -1;
  for (;;) {
    std::vector<std::int64_t> window;
    for (int i = 0; i < 10; ++i) {
      start.record(w.stream());
      w.enqueue();
      stop.record(w.stream());
      stop.synchronize();
      float ms = 0;
      XB_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      window.push_back(static_cast<std::int64_t>(std::llround(static_cast<double>(ms) * 1e6)));
      ++r.calls;
    }
    const double median = median_of(window);
    r.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    if (previous > 0 && r.seconds >= 0.2 && std::fabs(median - previous) <= 0.01 * previous) {
      r.steady = true;
      return r;
    }
    if (r.seconds >= 3.0) return r;
    previous = median;
  }
}

void run_fixture(benchmark::State& state, BenchContext& ctx, Op op, DType dtype, std::int64_t n) {
  const std::string op_name = to_string(op);
  const std::string name = fixture_name(op_name, to_string(dtype), n);
  FixtureInfo info;
  info.name = name;
  info.op = op_name;
  info.dtype = to_string(dtype);
  info.size = n;
  info.flops = op_flops(op, n);
  info.bytes = op_bytes(op, dtype, n);
  const bool first = ctx.recorded.insert(name).second;
  try {
    auto w = make_workload(op, dtype, n, ctx.stream);
    const Verification v = w->verify();
    info.verified = v.passed;
    // A NaN or infinite error (non-finite output) is stored as DBL_MAX: JSON has no NaN.
    info.max_rel_error = std::isfinite(v.rel_error) ? v.rel_error : std::numeric_limits<double>::max();
    if (!v.passed) {
      const std::string msg = fmt::format("{}: wrong result: relative error {:.3e} > tolerance {:.1e} ({})",
                                          name, v.rel_error, v.tolerance, v.detail);
      ctx.errors.push_back(msg);
      if (first) ctx.profiler->add_fixture(info);
      state.SkipWithError(msg.c_str());
      return;
    }
    Event start, stop;
    if (ctx.warmup) {
      const WarmupResult wr = warm_up(*w, start, stop);
      state.counters["warmup_calls"] = wr.calls;
      if (!wr.steady) {
        std::cerr << "bench: note: " << name << " not steady after " << wr.seconds << " s of warm-up\n";
      }
    }
    ctx.profiler->begin_fixture(ctx.schedule);
    const std::string cpu_op = "xb::" + op_name;
    std::vector<std::int64_t> active;
    for (auto _ : state) {
      const TimedCall call = timed_call(*w, *ctx.profiler, *ctx.blocking, start, stop, name, cpu_op);
      if (call.recorded) active.push_back(call.event_ns);
      state.SetIterationTime(static_cast<double>(call.event_ns) * 1e-9);
    }
    // Median of the recorded (active) calls, computed by us from the raw samples.
    const double median_ns = median_of(active);
    if (median_ns <= 0) throw std::runtime_error("no positive cudaEvent time recorded");
    // TFLOP/s = flops / (median_ns * 1e-9 s) / 1e12 = flops / median_ns / 1e3; GB/s = bytes / ns.
    state.counters["event_median_us"] = median_ns / 1e3;
    state.counters["TFLOP/s"] = info.flops / median_ns / 1e3;
    state.counters["GB/s"] = info.bytes / median_ns;
    if (first) ctx.profiler->add_fixture(info);
  } catch (const std::exception& e) {
    const std::string msg = name + ": " + e.what();
    ctx.errors.push_back(msg);
    if (first) ctx.profiler->add_fixture(info);
    state.SkipWithError(msg.c_str());
  }
}

}  // namespace

std::string fixture_name(const std::string& op, const std::string& dtype, std::int64_t n) {
  return fmt::format("{}/{}/{}", op, dtype, n);
}

void register_fixtures(const BenchOptions& options, BenchContext& context) {
  for (const std::string& op_text : options.ops) {
    for (const std::string& dtype_text : options.dtypes) {
      for (std::int64_t n : options.sizes) {
        const Op op = parse_op(op_text);
        const DType dtype = parse_dtype(dtype_text);
        BenchContext* ctx = &context;
        benchmark::RegisterBenchmark(fixture_name(op_text, dtype_text, n).c_str(),
                                     [ctx, op, dtype, n](benchmark::State& state) {
                                       run_fixture(state, *ctx, op, dtype, n);
                                     })
            ->Iterations(context.schedule.total())
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

}  // namespace xb
