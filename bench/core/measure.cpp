// The sampling core (see measure.h). Plain C++: the device is behind SampleDevice.
#include "bench/core/measure.h"

#include <fmt/format.h>

#include <algorithm>
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

HoldWatch::HoldWatch(SampleDevice& dev) : dev_(dev), thread_([this] { run(); }) {}

HoldWatch::~HoldWatch() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void HoldWatch::arm(double wait_s) {
  {
    std::lock_guard<std::mutex> lock(m_);
    armed_ = true;
    fired_ = false;
    wait_s_ = wait_s;
    ++generation_;
  }
  cv_.notify_all();
}

bool HoldWatch::disarm() {
  std::lock_guard<std::mutex> lock(m_);
  armed_ = false;
  cv_.notify_all();
  return fired_;
}

void HoldWatch::run() {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || armed_; });
    if (stop_) return;
    // Armed: wait for this arm's disarm() (or a new arm, or stop) at most wait_s_; past it,
    // release the hold, then wait for that disarm before watching again.
    const std::uint64_t generation = generation_;
    const auto ended = [this, generation] { return stop_ || !armed_ || generation_ != generation; };
    if (!cv_.wait_for(lock, std::chrono::duration<double>(wait_s_), ended)) {
      fired_ = true;
      dev_.release();  // never throws; any thread (SampleDevice::release)
      cv_.wait(lock, ended);
    }
  }
}

TimedCall timed_sample(const std::function<void()>& launch, Profiler& prof, SampleDevice& dev,
                       const std::string& annotation, const std::string& op_name, const SampleSpec& spec) {
  if (spec.launches < 1) throw std::invalid_argument("timed_sample: launches must be at least 1");
  if (!spec.sync) dev.hold();  // a synchronizing launch would wait for the hold: none
  HoldWatch* const watch = spec.sync || spec.graph ? nullptr : spec.watch;
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
        if (watch != nullptr) watch->arm(spec.watch_s);
        try {
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
        } catch (...) {
          if (watch != nullptr) watch->disarm();
          throw;
        }
        if (watch != nullptr && watch->disarm()) {
          throw LaunchSynchronized(
              fmt::format("a launch of {} waited for the device while the stream was held", annotation));
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

WorkSignature probe_work(const std::function<void()>& call, Profiler& prof, SampleDevice& dev) {
  if (!prof.can_probe()) {  // no call is made for nothing
    WorkSignature s;
    s.why = prof.recording() ? "the activity source cannot probe a call (event-only mode, a session recording only "
                               "some activity kinds, or a CUPTI older than CUDA 12.8's, without cudaEventSyncId)"
                             : "the profiler is not recording";
    return s;
  }
  const auto t0 = std::chrono::steady_clock::now();
  prof.begin_probe();
  try {
    dev.probe_begin();
    call();
    dev.probe_end();
  } catch (...) {
    prof.end_probe();  // closes the probe window; its records are dropped
    dev.abandon();
    throw;
  }
  WorkSignature s = derive_work_signature(prof.end_probe(), dev.handed_stream());
  s.probe_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

double sync_wait_s(double host_s) { return std::max(kSyncDetectMinWaitS, kSyncDetectWaitFactor * host_s); }

bool launch_synchronizes(const std::function<void()>& launch, SampleDevice& dev, double wait_s) {
  // The watch, not the launch, runs on the second thread: the launch stays on the caller's thread
  // (a Python callable needs the GIL its caller holds; CUDA's thread-local capture and context
  // state stay the same as in every sample).
  HoldWatch watch(dev);
  dev.hold();
  watch.arm(wait_s);
  try {
    launch();
  } catch (...) {
    watch.disarm();
    dev.abandon();
    throw;
  }
  const bool released = watch.disarm();
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
  if (cfg.mode != TimingMode::Hot && cfg.mode != TimingMode::Cold)
    throw std::invalid_argument("measure: mode must be hot or cold");
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
  // The work signature: what one call enqueues and whether the events on the handed stream see
  // all of it (profiler/work_signature.h). Work they cannot see is refused here, before any sample:
  // its event times would be of other work than the call's.
  if (cfg.work_signature) {
    if (prof.can_probe()) interrupt();
    m.work = probe_work(launches.front(), prof, dev);
    if (const std::string why = work_refusal(m.work); !why.empty()) throw WorkRefused(why, m.work);
  } else {
    m.work.why = "not probed (--no-work-signature)";
  }
  const auto refuse_graph = [](const char* how) {
    return std::invalid_argument(
        fmt::format("its launch synchronizes with the device ({}), and a synchronizing call "
                    "cannot be captured into a CUDA graph: run it without --graph",
                    how));
  };
  if (cfg.sync && cfg.graph) throw refuse_graph("declared .sync()");
  // Declared or not, the launch is checked against the blocking kernel: a declaration that does
  // not hold (the launch synchronized only in its setup call) gets the same method as any launch.
  t.sync_declared = cfg.sync;
  const char* const sync_kind = cfg.sync ? "declared" : "detected";
  if (dev.blocking()) {
    interrupt();
    if (launch_synchronizes(launches.front(), dev, sync_wait_s(call_host_s))) t.sync = sync_kind;
  } else if (cfg.sync) {
    t.sync = sync_kind;  // --no-blocking: nothing to check against; unblocked anyway
  }
  t.blocking = dev.blocking() && t.sync.empty();
  t.rotation = static_cast<int>(launches.size());
  t.max_noise = cfg.stopping.max_noise_fraction;
  t.confidence = cfg.stopping.confidence;
  t.min_samples = cfg.stopping.min_samples;
  t.min_time_s = cfg.stopping.min_time_s;
  t.max_time_s = cfg.stopping.max_time_s;
  SampleSpec spec;
  const bool cold = cfg.mode == TimingMode::Cold;
  spec.flush = cold;
  spec.delay_ns = cfg.delay_ns;
  spec.sync = !t.sync.empty();
  // Every held eager sample from here on is watched: a launch that synchronizes later (a cache
  // that grows, an allocator that maps more memory) voids its sample, and the fixture goes on
  // without the blocking kernel (`restarted` tells the sampling loop to start again).
  HoldWatch watch(dev);
  spec.watch = &watch;
  std::int64_t held_calls = 0;  // calls of held samples that completed
  bool restarted = false;
  const auto sample = [&](const std::function<void()>& launch, int calls, const std::string& op) {
    SampleSpec s = spec;
    s.launches = calls;
    s.watch_s = std::min(kSyncWatchMaxWaitS, sync_wait_s(call_host_s * calls));
    try {
      const TimedCall c = timed_sample(launch, prof, dev, annotation, op, s);
      if (!s.sync) held_calls += calls;
      return c;
    } catch (const LaunchSynchronized&) {
      t.sync = sync_kind;
      t.sync_found_after = std::max<std::int64_t>(1, held_calls);
      t.blocking = false;
      spec.sync = s.sync = true;
      restarted = true;
      return timed_sample(launch, prof, dev, annotation, op, s);
    }
  };
  // Cold mode: one flush, then every instance once (sampling.h, kColdCallsPerSample), through one
  // function that takes the next instance on each call.
  std::size_t next_instance = 0;
  const std::vector<std::function<void()>> cold_cycle{[&] { launches[next_instance++ % launches.size()](); }};
  if (cold) spec.launches = static_cast<int>(launches.size());
  if (cfg.mode == TimingMode::Hot) {
    if (cfg.batch > 0) {
      spec.launches = cfg.batch;
    } else {
      // Probe: median of three unrecorded single-launch samples sizes the batch.
      std::vector<double> probe;
      prof.begin_fixture(Schedule{3, 0, 1});
      for (int i = 0; i < 3; ++i) {
        interrupt();
        probe.push_back(static_cast<double>(sample(launches[0], 1, "probe").event_ns));
      }
      spec.launches = auto_batch(compute_stats(probe).median);
    }
  }
  if (!t.sync.empty() && cfg.graph) throw refuse_graph("detected");
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
    // Graph mode times the same work as eager mode: one replay must enqueue what the calls it
    // holds enqueue eagerly (work that ran at capture time, or outside the capture, is missing).
    if (m.work.recorded) {
      WorkSignature unit = m.work;
      if (spec.delay_ns > 0) {  // the graph also holds the spin delay after each call
        unit = probe_work(
            [&] {
              launches.front()();
              dev.delay(spec.delay_ns);
            },
            prof, dev);
      }
      const WorkSignature replay = probe_work(replays.front(), prof, dev);
      if (replay.recorded && unit.recorded) {
        m.graph_replay_items = static_cast<int>(replay.items.size());
        if (const std::string why = graph_refusal(unit, spec.launches, replay); !why.empty())
          throw WorkRefused(why, m.work, m.graph_replay_items);
      }
    }
  }
  const auto& calls = cfg.graph ? replays : eager;
  if (cfg.warmup) {
    std::size_t k = 0;
    prof.begin_fixture(Schedule{std::numeric_limits<int>::max() / 2, 0, 1});  // nothing recorded
    const WarmupResult wr = warm_up(
        [&] {
          interrupt();
          const auto& launch = calls[k++ % calls.size()];
          return static_cast<double>(sample(launch, spec.launches, op_name).event_ns) / spec.launches;
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
  double t0 = cfg.now();
  double cpu0 = cfg.cpu_now ? cfg.cpu_now() : 0.0;
  const int scheduled = cfg.schedule.total();
  double next_poll = kGpuPollS;
  for (std::size_t i = 0;; ++i) {
    interrupt();
    restarted = false;
    const TimedCall call = sample(calls[i % calls.size()], spec.launches, op_name);
    if (restarted) {
      // A launch synchronized: the held samples so far are another method's. Start again (the
      // profiler's schedule goes on: the steps recorded so far keep their own timings).
      t.samples_ns.clear();
      const double batch_min_s = rule.config().batch_min_s;
      rule = StoppingRule(cfg.stopping);
      rule.set_batch_min_s(batch_min_s);
      t0 = cfg.now();
      cpu0 = cfg.cpu_now ? cfg.cpu_now() : 0.0;
      next_poll = kGpuPollS;
    }
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
