#include "bench/fixtures.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "bench/interrupt.h"
#include "kernels/copy.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/random_fill.h"
#include "kernels/spin_delay.h"
#include "kernels/workload.h"
#include "profiler/table.h"

namespace xb {

namespace {

/// Fastest of `calls` - `untimed` calls of `enqueue`, ns: all `calls` are queued back to back with
/// a cudaEvent before the first and after each, so that consecutive events time one call on the
/// device; only the first interval holds the host's launch gap (and lazy loading).
double best_back_to_back_ns(cudaStream_t stream, int calls, int untimed, const std::function<void()>& enqueue,
                            const char* what) {
  std::vector<Event> events(static_cast<std::size_t>(calls) + 1);
  events[0].record(stream);
  for (int i = 0; i < calls; ++i) {
    enqueue();
    events[static_cast<std::size_t>(i) + 1].record(stream);
  }
  events.back().synchronize();
  double best_ns = std::numeric_limits<double>::max();
  for (int i = untimed; i < calls; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const double ns = static_cast<double>(events[k + 1].elapsed_ms_since(events[k])) * 1e6;
    if (!(ns > 0)) throw std::runtime_error(fmt::format("copy bandwidth ({}): event interval of {} ns", what, ns));
    best_ns = std::min(best_ns, ns);
  }
  return best_ns;
}

}  // namespace

CopyBandwidth measure_copy_bandwidth(cudaStream_t stream) {
  constexpr std::size_t kBytes = 256u << 20;
  constexpr int kCalls = 25, kUntimed = 5;
  DeviceBuffer src(kBytes), dst(kBytes);
  // Non-constant data, so that no path can profit from compressible or repeated contents.
  launch_random_fill(DType::FP32, src.get(), static_cast<std::int64_t>(kBytes / sizeof(float)), 0xC0B1, stream);
  const double memcpy_ns = best_back_to_back_ns(stream, kCalls, kUntimed, [&] {
    XB_CUDA(cudaMemcpyAsync(dst.get(), src.get(), kBytes, cudaMemcpyDeviceToDevice, stream));
  }, "cudaMemcpyAsync");
  const double kernel_ns = best_back_to_back_ns(stream, kCalls, kUntimed, [&] {
    launch_copy(src.get(), dst.get(), kBytes, stream);
  }, "copy kernel");
  CopyBandwidth bw;
  bw.memcpy_bytes_per_ns = 2.0 * static_cast<double>(kBytes) / memcpy_ns;
  bw.kernel_bytes_per_ns = 2.0 * static_cast<double>(kBytes) / kernel_ns;
  return bw;
}

TimedCall timed_sample(Workload& w, Profiler& prof, BlockingKernel* blocking, const Event& start,
                       const Event& stop, const std::string& annotation, const std::string& op_name,
                       const SampleSpec& spec) {
  if (spec.launches < 1) throw std::invalid_argument("timed_sample: launches must be at least 1");
  if (spec.blocking && blocking == nullptr) throw std::invalid_argument("timed_sample: blocking without a kernel");
  if (spec.blocking) blocking->block(w.stream());
  if (spec.flush != nullptr) {
    // L2 flush: overwrite a buffer of at least the L2 size (nvbench's l2flush does the same
    // with cudaMemsetAsync), outside the event interval and the profiler step.
    XB_CUDA(cudaMemsetAsync(spec.flush->get(), 0x5a, spec.flush->bytes(), w.stream()));
  }
  const std::uint64_t step = prof.begin_step();
  start.record(w.stream());
  {
    ScopedRange annotate(prof, annotation, RangeCategory::UserAnnotation);
    for (int i = 0; i < spec.launches; ++i) {
      {
        ScopedRange op(prof, op_name, RangeCategory::CpuOp);
        w.enqueue();
      }
      if (spec.delay_ns > 0) {
        ScopedRange delay(prof, "xb::delay", RangeCategory::CpuOp);
        enqueue_spin_delay(w.stream(), spec.delay_ns);
      }
    }
  }
  stop.record(w.stream());
  if (spec.blocking) blocking->release();
  stop.synchronize();
  if (spec.blocking && blocking->timed_out()) {
    throw std::runtime_error("blocking kernel timed out before the host released it");
  }
  const auto ns = static_cast<std::int64_t>(
      std::llround(static_cast<double>(stop.elapsed_ms_since(start)) * 1e6));
  if (ns <= 0) {
    throw std::runtime_error("non-positive cudaEvent interval (" + std::to_string(ns) + " ns)");
  }
  if (step != 0) {
    StepTiming t;
    t.fixture = annotation;
    t.step = prof.step_number();
    t.range_id = step;
    t.event_ns = ns;
    t.launches = spec.launches;
    prof.add_step_timing(std::move(t));
  }
  prof.end_step();
  return {ns, step != 0};
}

TimedCall timed_call(Workload& w, Profiler& prof, BlockingKernel& blocking, const Event& start,
                     const Event& stop, const std::string& annotation, const std::string& op_name) {
  return timed_sample(w, prof, &blocking, start, stop, annotation, op_name, SampleSpec{});
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Warm-up until steady (--warmup): the fixture's own samples, unrecorded, in windows of at
/// least 0.25 s; steady once two consecutive window medians differ by under 0.5% after at least
/// 0.5 s AND the GPU's power state has settled (`settled()`, see gpu_settled); at most 5 s
/// (reported as not steady). The power check matters for GEMMs on the H200: they start at the
/// 1980 MHz boost clock, stable for about a second, until the 700 W cap pulls the clock to about
/// 1575 MHz and the time up by 12% (results/h200/timing-2026-11-29).
struct WarmupResult {
  int samples = 0;
  double seconds = 0;
  bool steady = false;
};

template <class Sample, class Settled>
WarmupResult warm_up(Sample&& sample, Settled&& settled) {
  const auto t0 = Clock::now();
  WarmupResult r;
  double previous = -1;
  for (;;) {
    std::vector<double> window;
    const auto w0 = Clock::now();
    while (window.size() < 3 || seconds_since(w0) < 0.25) {
      window.push_back(sample());
      ++r.samples;
    }
    const double median = compute_stats(window).median;
    r.seconds = seconds_since(t0);
    if (previous > 0 && r.seconds >= 0.5 && std::fabs(median - previous) <= 0.005 * previous && settled()) {
      r.steady = true;
      return r;
    }
    if (r.seconds >= 5.0) return r;
    previous = median;
  }
}

/// The GPU's power state is settled unless it draws at least 95% of its power limit without the
/// power cap engaged yet (NVML SwPowerCap): then the clock is about to drop. True without NVML.
bool gpu_settled(const GpuClockSample& g, double power_limit_w) {
  constexpr std::uint64_t kSwPowerCap = 0x4;  // nvml.h nvmlClocksEventReasonSwPowerCap
  if (!g.valid || !(power_limit_w > 0)) return true;
  return g.power_w < 0.95 * power_limit_w || (g.throttle_reasons & kSwPowerCap) != 0;
}

GpuClockSample read_gpu(const BenchContext& ctx) {
  if (!ctx.read_gpu) {
    GpuClockSample g;
    g.error = "NVML not available";
    return g;
  }
  return ctx.read_gpu();
}

/// The workloads one fixture samples from: one, or `rotation_copies` copies in cold mode.
std::vector<std::unique_ptr<Workload>> make_workloads(const BenchContext& ctx, Op op, DType dtype, std::int64_t n) {
  std::vector<std::unique_ptr<Workload>> ws;
  ws.push_back(make_workload(op, dtype, n, ctx.stream));
  if (ctx.mode == "cold") {
    // Working set: the bytes one call touches at least (op_bytes), not the GEMM workspace.
    const int copies = rotation_copies(static_cast<std::size_t>(op_bytes(op, dtype, n)), ctx.l2_bytes);
    for (int i = 1; i < copies; ++i) ws.push_back(make_workload(op, dtype, n, ctx.stream));
  }
  return ws;
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
  if (interrupt_signal() != 0) {
    state.SkipWithError((name + ": not run: the run was interrupted").c_str());
    return;
  }
  const bool first = ctx.recorded.insert(name).second;
  auto fail = [&](const std::string& why) {
    const std::string msg = name + ": " + why;
    ctx.errors.push_back(msg);
    info.error = why;
    if (first) ctx.profiler->add_fixture(info);
    state.SkipWithError(msg.c_str());
  };
  try {
    auto ws = make_workloads(ctx, op, dtype, n);
    Workload& w0 = *ws.front();
    const Verification v = w0.verify();
    info.verified = v.passed;
    // A NaN or infinite error (non-finite output) is stored as DBL_MAX: JSON has no NaN.
    info.max_rel_error = std::isfinite(v.rel_error) ? v.rel_error : std::numeric_limits<double>::max();
    if (!v.passed) {
      return fail(fmt::format("wrong result: relative error {:.3e} > tolerance {:.1e} ({})", v.rel_error,
                              v.tolerance, v.detail));
    }
    Event start, stop;
    const auto own_rule = ctx.stopping_by_fixture.find(name);
    const StoppingRule::Config stopping = own_rule != ctx.stopping_by_fixture.end() ? own_rule->second : ctx.stopping;
    FixtureTiming& t = info.timing;
    t.mode = ctx.mode;
    t.blocking = ctx.blocking != nullptr;
    t.rotation = static_cast<int>(ws.size());
    t.max_noise = stopping.max_noise;
    t.min_samples = stopping.min_samples;
    t.min_time_s = stopping.min_time_s;
    t.max_time_s = stopping.max_time_s;
    const std::string cpu_op = "xb::" + op_name;
    SampleSpec spec;
    spec.blocking = ctx.blocking != nullptr;
    spec.flush = ctx.mode == "cold" ? ctx.flush : nullptr;
    const auto delay = ctx.delay_ns_by_fixture.find(name);
    spec.delay_ns = delay != ctx.delay_ns_by_fixture.end() ? delay->second : 0;
    if (ctx.mode == "hot") {
      if (ctx.batch > 0) {
        spec.launches = ctx.batch;
      } else {
        // Probe: median of three unrecorded single-launch samples sizes the batch.
        std::vector<std::int64_t> probe;
        Profiler& prof = *ctx.profiler;
        prof.begin_fixture(Schedule{3, 0, 1});
        const SampleSpec single{1, spec.blocking, nullptr, spec.delay_ns};
        for (int i = 0; i < 3; ++i) probe.push_back(timed_sample(w0, prof, ctx.blocking, start, stop, name, "probe", single).event_ns);
        spec.launches = auto_batch(median_of(probe));
      }
    }
    t.launches_per_sample = spec.launches;
    if (ctx.warmup) {
      std::size_t k = 0;
      ctx.profiler->begin_fixture(Schedule{std::numeric_limits<int>::max() / 2, 0, 1});  // nothing recorded
      const WarmupResult wr = warm_up(
          [&] {
            throw_if_interrupted();
            Workload& w = *ws[k++ % ws.size()];
            return static_cast<double>(
                       timed_sample(w, *ctx.profiler, ctx.blocking, start, stop, name, cpu_op, spec).event_ns) /
                   spec.launches;
          },
          [&] { return gpu_settled(read_gpu(ctx), ctx.power_limit_w); });
      state.counters["warmup_s"] = wr.seconds;
      t.warmed_up = wr.steady;
      if (!wr.steady) std::cerr << fmt::format("bench: note: {} not steady after {:.1f} s of warm-up\n", name, wr.seconds);
    }
    t.gpu_before = read_gpu(ctx);

    ctx.profiler->begin_fixture(ctx.schedule);
    StoppingRule rule(stopping);
    const auto t0 = Clock::now();
    const int scheduled = ctx.schedule.total();
    for (auto _ : state) {
      for (std::size_t i = 0;; ++i) {
        throw_if_interrupted();
        Workload& w = *ws[i % ws.size()];
        const TimedCall call = timed_sample(w, *ctx.profiler, ctx.blocking, start, stop, name, cpu_op, spec);
        const double per_launch = static_cast<double>(call.event_ns) / spec.launches;
        t.samples_ns.push_back(per_launch);
        rule.add(per_launch, seconds_since(t0));
        if (rule.state() != StoppingRule::State::Continue && static_cast<int>(i + 1) >= scheduled) break;
      }
      t.sampling_s = seconds_since(t0);
      const SampleStats st = compute_stats(t.samples_ns);
      state.SetIterationTime(st.median * 1e-9);
    }
    t.gpu_after = read_gpu(ctx);
    t.stop = to_string(rule.state());
    const SampleStats st = compute_stats(t.samples_ns);
    t.early_slowdown = early_slowdown(t.samples_ns);
    t.cold_start = !t.warmed_up && std::fabs(t.early_slowdown) > 0.02;
    // TFLOP/s = flops / (median_ns * 1e-9 s) / 1e12 = flops / median_ns / 1e3; GB/s = bytes / ns.
    state.counters["median_us"] = st.median / 1e3;
    state.counters["rsd_pct"] = st.rsd() * 100;
    state.counters["samples"] = static_cast<double>(st.count);
    state.counters["launches_per_sample"] = spec.launches;
    state.counters["TFLOP/s"] = info.flops / st.median / 1e3;
    state.counters["GB/s"] = info.bytes / st.median;
    state.counters["noisy"] = rule.state() == StoppingRule::State::Converged ? 0 : 1;
    state.counters["throttled"] = (t.gpu_before.throttled || t.gpu_after.throttled) ? 1 : 0;
    if (rule.state() != StoppingRule::State::Converged) {
      std::cerr << fmt::format("bench: note: {} noise target {:.2f}% not met after {:.1f} s (RSD {:.2f}%, {} samples)\n",
                               name, t.max_noise * 100, t.sampling_s, st.rsd() * 100, st.count);
    }
    if (t.cold_start) {
      std::cerr << fmt::format("bench: note: {} is cold: not warmed up, and its first samples ran {:+.1f}% off "
                               "the median (clocks, caches or lazy loading still settling; use --warmup)\n",
                               name, t.early_slowdown * 100);
    }
    if (first) ctx.profiler->add_fixture(info);
    // The bound is the better of cudaMemcpyAsync and our copy kernel, each its fastest call, so
    // the 1% only absorbs cudaEventElapsedTime's resolution (about 0.5 us: 0.4% of the bound's
    // 512 MiB call on the H200, about 125 us, and 0.5% of the fastest cold sample it bounds,
    // an 8192^2 add at about 95 us), not a slower reference path.
    constexpr double kCopyBoundTolerance = 0.01;
    const double bound = ctx.copy.best_bytes_per_ns();
    if (ctx.mode == "cold" && bound > 0 && info.bytes / st.median > (1 + kCopyBoundTolerance) * bound) {
      return fail(fmt::format("cold-mode rate {:.0f} GB/s is more than 1% above the measured device-to-device copy "
                              "bandwidth {:.0f} GB/s (cudaMemcpyAsync {:.0f}, copy kernel {:.0f}): the L2 flush "
                              "is not working", info.bytes / st.median, bound, ctx.copy.memcpy_bytes_per_ns,
                              ctx.copy.kernel_bytes_per_ns));
    }
  } catch (const Interrupted& i) {
    // Abandoned mid-fixture: its recorded steps stay in the session (their files stay valid), the
    // fixture says why it has no result, and the run exits with 128 + signal (bench_run.cpp).
    info.error = "abandoned: the run was interrupted by signal " + std::to_string(i.signal);
    info.timing.samples_ns.clear();
    if (first) ctx.profiler->add_fixture(info);
    state.SkipWithError((name + ": " + info.error).c_str());
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

}  // namespace

std::string fixture_name(const std::string& op, const std::string& dtype, std::int64_t n) {
  return fmt::format("{}/{}/{}", op, dtype, n);
}

std::vector<FixtureSpec> fixture_specs(const BenchOptions& options) {
  std::vector<FixtureSpec> specs;
  for (const std::string& op : options.ops) {
    for (const std::string& dtype : options.dtypes) {
      for (std::int64_t n : options.sizes) specs.push_back({op, dtype, n});
    }
  }
  return specs;
}

void register_fixtures(const std::vector<FixtureSpec>& fixtures, BenchContext& context) {
  for (const FixtureSpec& f : fixtures) {
    const Op op = parse_op(f.op);
    const DType dtype = parse_dtype(f.dtype);
    const std::int64_t n = f.size;
    BenchContext* ctx = &context;
    benchmark::RegisterBenchmark(fixture_name(f.op, f.dtype, n).c_str(),
                                 [ctx, op, dtype, n](benchmark::State& state) {
                                   run_fixture(state, *ctx, op, dtype, n);
                                 })
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

void register_fixtures(const BenchOptions& options, BenchContext& context) {
  register_fixtures(fixture_specs(options), context);
}

}  // namespace xb
