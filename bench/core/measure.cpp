// The sampling core (see measure.h). Plain C++: the device is behind SampleDevice.
#include "bench/core/measure.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "bench/core/sampling.h"

namespace xb {

Seconds steady_seconds() {
  return [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
}

Seconds thread_cpu_seconds() {
  return [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
}

int SampleDevice::capture(const std::function<void()>&) {
  throw std::logic_error("this device cannot capture CUDA graphs");
}

void SampleDevice::replay(int) { throw std::logic_error("this device cannot replay CUDA graphs"); }

TimedCall timed_sample(const std::function<void()>& launch, Profiler& prof, SampleDevice& dev,
                       const std::string& annotation, const std::string& op_name, const SampleSpec& spec) {
  if (spec.launches < 1) throw std::invalid_argument("timed_sample: launches must be at least 1");
  if (!spec.sync) dev.hold();  // a synchronizing launch would wait for the hold: none
  std::uint64_t step = 0;
  std::int64_t ns = 0;
  try {
    // The flush goes before the start event and before the step: its memset is neither timed nor
    // attributed to the step (nvbench's l2flush does the same). Inside the step, the CUPTI span the
    // validator pairs with the event interval would start at the memset.
    if (spec.flush) dev.flush_l2();
    step = prof.begin_step();
    dev.record_start();
    {
      ScopedRange annotate(prof, annotation, RangeCategory::UserAnnotation);
      if (spec.graph) {
        ScopedRange op(prof, op_name, RangeCategory::CpuOp);
        launch();  // one cudaGraphLaunch of all the calls: its kernels belong to this range
      } else {
        for (int i = 0; i < spec.launches; ++i) {
          {
            ScopedRange op(prof, op_name, RangeCategory::CpuOp);
            launch();
          }
          if (spec.delay_ns > 0) {
            ScopedRange delay(prof, "xb::delay", RangeCategory::CpuOp);
            dev.delay(spec.delay_ns);
          }
        }
      }
    }
    dev.record_stop();
    ns = dev.release_and_wait_ns();
  } catch (...) {
    dev.abandon();  // never leave the stream held by a pending blocking kernel
    prof.end_step();
    throw;
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

bool launch_synchronizes(const std::function<void()>& launch, SampleDevice& dev, double wait_s) {
  dev.hold();
  std::mutex m;
  std::condition_variable cv;
  bool returned = false, released = false;
  // The watchdog, not the launch, runs on the second thread: the launch stays on the caller's
  // thread (a Python callable needs the GIL its caller holds; CUDA's thread-local capture and
  // context state stay the same as in every sample).
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(m);
    if (!cv.wait_for(lock, std::chrono::duration<double>(wait_s), [&] { return returned; })) {
      released = true;
      dev.release();
    }
  });
  const auto finish = [&] {
    {
      std::lock_guard<std::mutex> lock(m);
      returned = true;
    }
    cv.notify_all();
    watchdog.join();
  };
  try {
    launch();
  } catch (...) {
    finish();
    dev.abandon();
    throw;
  }
  finish();
  dev.release();
  dev.synchronize();
  return released;
}

bool gpu_settled(const GpuClockSample& g, double power_limit_w) {
  constexpr std::uint64_t kSwPowerCap = 0x4;  // nvml.h nvmlClocksEventReasonSwPowerCap
  if (!g.valid || !(power_limit_w > 0)) return true;
  return g.power_w < 0.95 * power_limit_w || (g.throttle_reasons & kSwPowerCap) != 0;
}

namespace {

GpuClockSample read_gpu(const MeasureConfig& cfg) {
  if (!cfg.read_gpu) {
    GpuClockSample g;
    g.error = "NVML not available";
    return g;
  }
  return cfg.read_gpu();
}

struct WarmupResult {
  int samples = 0;
  double seconds = 0;
  bool steady = false;
};

/// Warm-up until steady (WarmupConfig). The power check matters for GEMMs on the H200: they start
/// at the 1980 MHz boost clock, stable for about a second, until the 700 W cap pulls the clock to
/// about 1575 MHz and the time up by 12% (results/h200/timing-2026-11-29).
template <class Sample>
WarmupResult warm_up(Sample&& sample, const MeasureConfig& cfg) {
  const WarmupConfig& w = cfg.warmup_config;
  const double t0 = cfg.now();
  WarmupResult r;
  double previous = -1;
  for (;;) {
    std::vector<double> window;
    const double w0 = cfg.now();
    while (window.size() < 3 || cfg.now() - w0 < w.window_s) {
      window.push_back(sample());
      ++r.samples;
    }
    const double median = compute_stats(window).median;
    r.seconds = cfg.now() - t0;
    if (previous > 0 && r.seconds >= w.min_s && std::fabs(median - previous) <= w.tolerance * previous &&
        gpu_settled(read_gpu(cfg), cfg.power_limit_w)) {
      r.steady = true;
      return r;
    }
    if (r.seconds >= w.max_s) return r;
    previous = median;
  }
}

}  // namespace

Measurement measure(const std::vector<std::function<void()>>& launches, Profiler& prof, SampleDevice& dev,
                    const std::string& annotation, const std::string& op_name, const MeasureConfig& cfg) {
  if (launches.empty()) throw std::invalid_argument("measure: no instance to launch");
  if (cfg.mode != "hot" && cfg.mode != "cold") throw std::invalid_argument("measure: mode must be hot or cold");
  auto interrupt = [&] {
    if (cfg.check_interrupt) cfg.check_interrupt();
  };
  Measurement m;
  FixtureTiming& t = m.timing;
  t.mode = cfg.mode;
  // Setup calls: every copy once, unblocked, then the stream synchronized. One-time work (cuBLAS
  // workspaces and handles, lazy module loading, autotuning, allocator growth) happens here, not
  // behind the blocking kernel, where a first call that synchronizes would stall. The last call's
  // host time (the first may be the slow one) scales the detection's wait.
  double call_host_s = 0;
  for (const auto& launch : launches) {
    interrupt();
    const double c0 = cfg.now();
    launch();
    dev.synchronize();
    call_host_s = cfg.now() - c0;
  }
  if (cfg.sync) {
    t.sync = "declared";
  } else if (cfg.detect_sync && dev.blocking()) {
    interrupt();
    const double wait_s = std::max(kSyncDetectMinWaitS, kSyncDetectWaitFactor * call_host_s);
    if (launch_synchronizes(launches.front(), dev, wait_s)) t.sync = "detected";
  }
  if (!t.sync.empty() && cfg.graph) {
    throw std::invalid_argument(
        fmt::format("its launch synchronizes with the device ({}), and a synchronizing call "
                    "cannot be captured into a CUDA graph: run it without --graph",
                    t.sync == "declared" ? "declared .sync()" : "detected"));
  }
  t.blocking = dev.blocking() && t.sync.empty();
  t.rotation = static_cast<int>(launches.size());
  t.max_noise = cfg.stopping.max_noise;
  t.confidence = cfg.stopping.confidence;
  t.min_samples = cfg.stopping.min_samples;
  t.min_time_s = cfg.stopping.min_time_s;
  t.max_time_s = cfg.stopping.max_time_s;
  SampleSpec spec;
  const bool cold = cfg.mode == "cold";
  spec.flush = cold;
  spec.delay_ns = cfg.delay_ns;
  spec.sync = !t.sync.empty();
  // Cold mode: one flush, then every instance once (sampling.h, kColdCallsPerSample), through one
  // function that takes the next instance on each call.
  std::size_t next_instance = 0;
  const std::vector<std::function<void()>> cold_cycle{[&] { launches[next_instance++ % launches.size()](); }};
  if (cold) spec.launches = static_cast<int>(launches.size());
  if (cfg.mode == "hot") {
    if (cfg.batch > 0) {
      spec.launches = cfg.batch;
    } else {
      // Probe: median of three unrecorded single-launch samples sizes the batch.
      std::vector<double> probe;
      prof.begin_fixture(Schedule{3, 0, 1});
      SampleSpec single = spec;
      single.launches = 1;
      for (int i = 0; i < 3; ++i) {
        interrupt();
        probe.push_back(
            static_cast<double>(timed_sample(launches[0], prof, dev, annotation, "probe", single).event_ns));
      }
      spec.launches = auto_batch(compute_stats(probe).median);
    }
  }
  t.launches_per_sample = spec.launches;
  t.graph = cfg.graph;
  // Graph mode: one graph per instance of its whole sample, captured outside every step (the
  // capture's API calls fall outside the recorded windows); the samples below replay them.
  struct DropGraphs {
    SampleDevice& dev;
    ~DropGraphs() { dev.drop_graphs(); }
  } drop_graphs{dev};
  std::vector<std::function<void()>> replays;
  const auto& eager = cold ? cold_cycle : launches;
  if (cfg.graph) {
    for (const auto& launch : eager) {
      const int handle = dev.capture([&] {
        for (int i = 0; i < spec.launches; ++i) {
          launch();
          if (spec.delay_ns > 0) dev.delay(spec.delay_ns);
        }
      });
      replays.push_back([&dev, handle] { dev.replay(handle); });
    }
    spec.graph = true;
  }
  const auto& calls = cfg.graph ? replays : eager;
  if (cfg.warmup) {
    std::size_t k = 0;
    prof.begin_fixture(Schedule{std::numeric_limits<int>::max() / 2, 0, 1});  // nothing recorded
    const WarmupResult wr = warm_up(
        [&] {
          interrupt();
          const auto& launch = calls[k++ % calls.size()];
          return static_cast<double>(timed_sample(launch, prof, dev, annotation, op_name, spec).event_ns) /
                 spec.launches;
        },
        cfg);
    m.warmup_s = wr.seconds;
    t.warmed_up = wr.steady;
  }
  // A power or thermal limit holding the clock, seen before or during sampling, makes the median
  // interval's batches at least kDriftBatchS long (StoppingRule::set_batch_min_s).
  StoppingRule rule(cfg.stopping);
  const auto watch_clock = [&](const GpuClockSample& g) {
    if (g.valid && g.throttled) rule.set_batch_min_s(kDriftBatchS);
  };
  t.gpu_before = read_gpu(cfg);
  watch_clock(t.gpu_before);

  prof.begin_fixture(cfg.schedule);
  const double t0 = cfg.now();
  const double cpu0 = cfg.cpu_now ? cfg.cpu_now() : 0.0;
  const int scheduled = cfg.schedule.total();
  double next_poll = kGpuPollS;
  for (std::size_t i = 0;; ++i) {
    interrupt();
    const TimedCall call = timed_sample(calls[i % calls.size()], prof, dev, annotation, op_name, spec);
    const double per_launch = static_cast<double>(call.event_ns) / spec.launches;
    t.samples_ns.push_back(per_launch);
    const double elapsed = cfg.now() - t0;
    if (elapsed >= next_poll) {
      watch_clock(read_gpu(cfg));
      next_poll = elapsed + kGpuPollS;
    }
    rule.add(per_launch, elapsed);
    if (rule.state() != StoppingRule::State::Continue && static_cast<int>(i + 1) >= scheduled) break;
  }
  t.sampling_s = cfg.now() - t0;
  m.sampling_cpu_s = cfg.cpu_now ? cfg.cpu_now() - cpu0 : 0.0;
  m.calls = static_cast<std::int64_t>(t.samples_ns.size()) * spec.launches;
  t.gpu_after = read_gpu(cfg);
  watch_clock(t.gpu_after);
  t.batch_min_s = rule.config().batch_min_s;
  t.stop = to_string(rule.state());
  m.stats = compute_stats(t.samples_ns);
  m.converged = rule.state() == StoppingRule::State::Converged;
  t.early_slowdown = early_slowdown(t.samples_ns);
  t.cold_start = !t.warmed_up && std::fabs(t.early_slowdown) > 0.02;
  return m;
}

}  // namespace xb
