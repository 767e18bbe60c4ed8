#include "bench/core/fixtures.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

#include "bench/core/device.h"
#include "bench/core/device_failure.h"
#include "bench/core/interrupt.h"
#include "bench/core/noise_causes.h"
#include "kernels/blocking.h"
#include "kernels/copy.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/random_fill.h"
#include "kernels/spin_delay.h"
#include "kernels/workload.h"
#include "profiler/exporters/table.h"

namespace xb {

Measurement measure_unrecorded(cudaStream_t stream, const std::function<void()>& enqueue, const std::string& name,
                               const MeasureConfig& cfg) {
  if (cfg.mode != TimingMode::Hot)
    throw std::invalid_argument("measure_unrecorded: hot mode only (no L2 flush buffer)");
  BlockingKernel blocking;  // its module is loaded here, outside any sample
  const std::unique_ptr<SampleDevice> device = make_cuda_sample_device(stream, &blocking, nullptr);
  // Never started: every step is inactive, so nothing is recorded and no CUPTI is needed.
  Profiler prof(make_null_source());
  // timed_sample gives the stream back (blocking kernel released, stream synchronized) before
  // anything it throws leaves measure().
  return measure({enqueue}, prof, *device, name, name, cfg);
}

Measurement measure_copy(cudaStream_t stream, std::size_t bytes, CopyPath path, double warmup_ms,
                         const MeasureConfig& cfg) {
  if (bytes == 0) throw std::invalid_argument("measure_copy: no bytes to copy");
  DeviceBuffer src(bytes), dst(bytes);
  // Non-constant data, so that no path can profit from compressible or repeated contents.
  launch_random_fill(DType::FP32, src.get(), static_cast<std::int64_t>(bytes / sizeof(float)), 0xC0B1, stream);
  std::function<void()> copy;
  if (path == CopyPath::Memcpy) {
    copy = [&] { XB_CUDA(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream)); };
  } else {
    copy = [&] { launch_copy(src.get(), dst.get(), bytes, stream); };
  }
  warm_up_for(stream, warmup_ms, copy);  // also synchronizes the fill
  return measure_unrecorded(stream, copy, path == CopyPath::Memcpy ? "xb::copy_memcpy" : "xb::copy_kernel", cfg);
}

CopyBandwidth measure_copy_bandwidth(cudaStream_t stream) {
  constexpr std::size_t kBytes = 256u << 20;
  MeasureConfig cfg;
  cfg.schedule = Schedule{0, 0, 20};
  cfg.stopping.min_samples = 20;
  cfg.stopping.min_time_s = 0;
  cfg.stopping.max_time_s = 1.0;
  const auto bytes_per_ns = [&](CopyPath path) {
    const Measurement m = measure_copy(stream, kBytes, path, 0, cfg);
    return 2.0 * static_cast<double>(kBytes) / m.stats.min;  // release_and_wait_ns: every sample > 0
  };
  CopyBandwidth bw;
  bw.memcpy_bytes_per_ns = bytes_per_ns(CopyPath::Memcpy);
  bw.kernel_bytes_per_ns = bytes_per_ns(CopyPath::Kernel);
  return bw;
}

namespace {

/// The instances one fixture samples from: one, or in cold mode BenchmarkDef::rotation of them,
/// else cold_copies (each cold sample calls them all once). The working set is the bytes one call
/// touches at least (BenchmarkDef::bytes), not workspaces; an instance's memory is
/// BenchmarkDef::device_bytes, else that working set.
std::vector<Instance> make_instances(const BenchContext& ctx, const BenchmarkDef& def, const Point& p) {
  std::vector<Instance> out;
  out.push_back(def.make(p, ctx.stream));
  if (ctx.measure.mode == TimingMode::Cold) {
    const double bytes = def.bytes ? def.bytes(p) : 0.0;
    const double instance = def.device_bytes ? def.device_bytes(p) : bytes;
    const int copies = def.rotation > 0 ? def.rotation
                                        : cold_copies(static_cast<std::size_t>(std::max(bytes, 0.0)),
                                                      static_cast<std::size_t>(std::max(instance, 0.0)), ctx.l2_bytes);
    for (int i = 1; i < copies; ++i) out.push_back(def.make(p, ctx.stream));
  }
  for (const Instance& i : out) {
    if (!i.launch) throw std::runtime_error("the benchmark's factory returned an instance without a launch function");
  }
  return out;
}

/// The fixture's facts before it runs: its name, op, dtype, size, flops and bytes per call.
FixtureInfo fixture_facts(const BenchmarkDef& def, const Point& p) {
  FixtureInfo info;
  info.name = fixture_name(p.op, p.dtype, p.size);
  info.op = p.op;
  info.dtype = p.dtype;
  info.size = p.size;
  info.flops = def.flops ? def.flops(p) : 0.0;
  info.bytes = def.bytes ? def.bytes(p) : 0.0;
  return info;
}

/// Checks the first instance against the benchmark's reference, when it gives one, into `info`
/// (has_reference, verified, max_rel_error). Returns why the result is wrong, or "" when it is
/// right or has no reference.
std::string verify_result(FixtureInfo& info, const Instance& first, cudaStream_t stream) {
  info.has_reference = static_cast<bool>(first.verify);
  if (!info.has_reference) return "";
  const Check v = first.verify(stream);
  info.verified = v.passed;
  // A NaN or infinite error (non-finite output) is stored as DBL_MAX: JSON has no NaN.
  info.max_rel_error = std::isfinite(v.rel_error) ? v.rel_error : std::numeric_limits<double>::max();
  if (v.passed) return "";
  return fmt::format("wrong result: relative error {:.3e} > tolerance {:.1e} ({})", v.rel_error, v.tolerance, v.detail);
}

/// The run's measure settings with the fixture's own: its stopping settings and delay where the
/// run gives them (qualify suites, --slow-fixture), its declared sync.
MeasureConfig fixture_measure_config(const BenchContext& ctx, const BenchmarkDef& def, const std::string& name) {
  MeasureConfig cfg = ctx.measure;
  if (const auto own = ctx.stopping_by_fixture.find(name); own != ctx.stopping_by_fixture.end())
    cfg.stopping = own->second;
  if (const auto delay = ctx.delay_ns_by_fixture.find(name); delay != ctx.delay_ns_by_fixture.end())
    cfg.delay_ns = delay->second;
  cfg.sync = def.sync;
  return cfg;
}

/// Google Benchmark's counters of a measured fixture (docs/bench.md), and the console's notes on
/// it: its sync, its warm-up, a median not known to the target or samples that spread, a cold start.
void report_fixture(benchmark::State& state, const FixtureInfo& info, const Measurement& m, bool warmup) {
  const std::string& name = info.name;
  const FixtureTiming& t = info.timing;
  const SampleStats& st = m.stats;
  if (const std::string note = sync_note(t); !note.empty())
    std::cerr << fmt::format("bench: note: {} {}\n", name, note);
  if (warmup) {
    state.counters["warmup_s"] = m.warmup_s;
    if (!t.warmed_up)
      std::cerr << fmt::format("bench: note: {} not steady after {:.1f} s of warm-up\n", name, m.warmup_s);
  }
  // TFLOP/s = flops / (median_ns * 1e-9 s) / 1e12 = flops / median_ns / 1e3; GB/s = bytes / ns.
  state.counters["median_us"] = st.median / 1e3;
  state.counters["rsd_pct"] = st.rsd() * 100;
  // The half-width of the median's interval, percent (-1: too few samples to bound it).
  const MedianInterval ci = fixture_median_interval(t);
  state.counters["median_ci_pct"] = ci.bounded ? ci.half_width() * 100 : -1.0;
  state.counters["samples"] = static_cast<double>(st.count);
  state.counters["launches_per_sample"] = t.launches_per_sample;
  state.counters[kCallsCounter] = static_cast<double>(m.calls);
  state.counters[kCpuPerCallCounter] = m.calls > 0 ? m.sampling_cpu_s * 1e6 / static_cast<double>(m.calls) : 0.0;
  state.counters["sync"] = t.sync.empty() ? 0 : 1;
  state.counters["TFLOP/s"] = info.flops / st.median / 1e3;
  state.counters["GB/s"] = info.bytes / st.median;
  state.counters["noisy"] = m.converged ? 0 : 1;
  state.counters["throttled"] = (t.gpu_before.throttled || t.gpu_after.throttled) ? 1 : 0;
  const std::string known = ci.bounded ? fmt::format("+-{:.3f}%", ci.half_width() * 100) : "unbounded";
  if (!m.converged) {
    std::cerr << fmt::format(
        "bench: note: {} median not known to {:.2f}% after {:.1f} s (median {} at {:.0f}%, "
        "RSD {:.2f}%, {} samples, {:.0f} effective): {}\n",
        name, t.stopping.max_noise_fraction * 100, t.sampling_s, known, ci.confidence * 100, st.rsd() * 100, st.count,
        ci.effective_samples, noise_causes(t).text());
  } else if (st.rsd() > spread_note_rsd(t)) {
    // Converged on the median although the samples spread: say why they spread.
    std::cerr << fmt::format(
        "bench: note: {} samples spread {:.2f}% RSD ({}); median known to {} at {:.0f}% "
        "from {} samples\n",
        name, st.rsd() * 100, noise_causes(t).text(), known, ci.confidence * 100, st.count);
  }
  if (t.cold_start) {
    std::cerr << fmt::format(
        "bench: note: {} is cold: not warmed up, and its first samples ran {:+.1f}% off "
        "the median (clocks, caches or lazy loading still settling; use --warmup)\n",
        name, t.early_slowdown * 100);
  }
}

/// Why a cold-mode fixture's rate cannot be true: above the measured device-to-device copy
/// bandwidth (the L2 flush is not working); "" otherwise (and in hot mode).
std::string copy_bound_error(const BenchContext& ctx, const FixtureInfo& info, double median_ns) {
  // The bound is the better of cudaMemcpyAsync and our copy kernel, each its fastest per-call
  // sample (batches of about 0.5 ms through the sampling core), so the 1% only absorbs
  // cudaEventElapsedTime's resolution (about 0.5 us: 0.5% of the fastest cold sample it bounds,
  // an 8192^2 add at about 95 us), not a slower reference path.
  constexpr double kCopyBoundTolerance = 0.01;
  const double bound = ctx.copy.best_bytes_per_ns();
  if (ctx.measure.mode != TimingMode::Cold || !(bound > 0) ||
      !(info.bytes / median_ns > (1 + kCopyBoundTolerance) * bound)) {
    return "";
  }
  return fmt::format(
      "cold-mode rate {:.0f} GB/s is more than 1% above the measured device-to-device copy "
      "bandwidth {:.0f} GB/s (cudaMemcpyAsync {:.0f}, copy kernel {:.0f}): the L2 flush "
      "is not working",
      info.bytes / median_ns, bound, ctx.copy.memcpy_bytes_per_ns, ctx.copy.kernel_bytes_per_ns);
}

void run_fixture(benchmark::State& state, BenchContext& ctx, const BenchmarkDef& def, const Point& p) {
  FixtureInfo info = fixture_facts(def, p);
  const std::string name = info.name;
  if (interrupt_signal() != 0) {
    state.SkipWithError((name + ": not run: the run was interrupted").c_str());
    return;
  }
  const bool first = ctx.recorded.insert(name).second;
  // After a device fault or hang in an earlier fixture nothing can run on the device: this one is
  // recorded as not run, without touching CUDA (its allocations would only fail, or block, in turn).
  if (const std::string why = ctx.device_failures.admit(name); !why.empty()) {
    info.error = why;
    if (first) ctx.profiler->add_fixture(fixture_block(info));
    state.SkipWithError((name + ": " + why).c_str());
    return;
  }
  auto fail = [&](const std::string& why) {
    const std::string msg = name + ": " + why;
    ctx.errors.push_back(msg);
    info.error = why;
    if (first) ctx.profiler->add_fixture(fixture_block(info));
    state.SkipWithError(msg.c_str());
  };
  std::vector<Instance> instances;  // outside the try: a hang leaves them to the process's end (below)
  try {
    instances = make_instances(ctx, def, p);
    if (const std::string wrong = verify_result(info, instances.front(), ctx.stream); !wrong.empty())
      return fail(wrong);
    std::vector<std::function<void()>> launches;
    for (const Instance& i : instances) launches.push_back([&i, s = ctx.stream] { i.launch(s); });
    const MeasureConfig cfg = fixture_measure_config(ctx, def, name);
    Measurement m;
    for (auto _ : state) {
      m = measure(launches, *ctx.profiler, *ctx.device, name, "xb::" + p.op, cfg);
      state.SetIterationTime(m.stats.median * 1e-9);
    }
    info.timing = m.timing;
    info.work = m.work;
    info.graph_replay_items = m.graph_replay_items;
    report_fixture(state, info, m, cfg.warmup);
    if (first) ctx.profiler->add_fixture(fixture_block(info));
    if (const std::string bad = copy_bound_error(ctx, info, m.stats.median); !bad.empty()) return fail(bad);
  } catch (const WorkRefused& r) {
    // Refused before any sample: the signature goes into the files beside the one-line reason.
    info.work = r.work;
    info.graph_replay_items = r.graph_replay_items;
    fail(r.what());
  } catch (const Interrupted& i) {
    // Abandoned mid-fixture: its recorded steps stay in the session (their files stay valid), the
    // fixture says why it has no result, and the run exits with 128 + signal (bench_run_gpu.cpp).
    info.error = "abandoned: the run was interrupted by signal " + std::to_string(i.signal);
    info.timing.samples_ns.clear();
    if (first) ctx.profiler->add_fixture(fixture_block(info));
    state.SkipWithError((name + ": " + info.error).c_str());
  } catch (const std::exception& e) {
    // A fault that the exception does not carry (a library's or Python's own error type) is still
    // on the stream: a query notes a sticky error without waiting (kernels/cuda_check.h).
    note_cuda_status(cudaStreamQuery(ctx.stream));
    const std::optional<DeviceFailure> lost = device_failure(e, name);
    if (!lost) return fail(e.what());
    // The device is lost or hung: this fixture's error, the rest of the run not run (admit above),
    // the run folder written and the one line printed at the end (bench_run_gpu.cpp), not here.
    info.error = lost->what();
    info.timing.samples_ns.clear();
    if (first) ctx.profiler->add_fixture(fixture_block(info));
    ctx.device_failures.record(*lost);
    state.SkipWithError((name + ": " + info.error).c_str());
    // A hung kernel still runs: an instance's destructor that frees device memory (cudaFree waits
    // for the device) would block the run forever, before its folder is written. Left, on purpose,
    // to the process's end.
    if (lost->hang) static_cast<void>(new std::vector<Instance>(std::move(instances)));
  }
}

}  // namespace

void register_fixtures(const std::vector<FixtureSpec>& fixtures, BenchContext& context) {
  for (const FixtureSpec& f : fixtures) {
    const BenchmarkDef* def = find_benchmark(f.op);
    if (def == nullptr) throw UsageError("unknown op '" + f.op + "'");
    BenchContext* ctx = &context;
    const Point point{f.op, f.dtype, f.size};
    benchmark::RegisterBenchmark(fixture_name(f.op, f.dtype, f.size).c_str(),
                                 [ctx, def, point](benchmark::State& state) { run_fixture(state, *ctx, *def, point); })
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

void register_fixtures(const BenchOptions& options, BenchContext& context) {
  register_fixtures(fixture_specs(options), context);
}

}  // namespace xb
