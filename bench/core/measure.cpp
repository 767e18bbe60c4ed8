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
#include <optional>
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

namespace {

using Launch = std::function<void()>;

/// One fixture's measurement, phase by phase; measure() runs the phases in order. Holds what they
/// share: the timing record being filled, the sample spec, the hold watch (from the sync check on)
/// and whether a later synchronizing launch restarted the sampling.
class FixtureMeasurement {
 public:
  FixtureMeasurement(const std::vector<Launch>& launches, Profiler& prof, SampleDevice& dev,
                     const std::string& annotation, const MeasureConfig& cfg)
      : launches_(launches), prof_(prof), dev_(dev), annotation_(annotation), cfg_(cfg), t_(m_.timing) {
    t_.mode = cfg.mode;
  }

  /// Setup calls: every copy once, unblocked, then the stream synchronized. One-time work (cuBLAS
  /// workspaces and handles, lazy module loading, autotuning, allocator growth) happens here, not
  /// behind the blocking kernel, where a first call that synchronizes would stall. The last call's
  /// host time (the first may be the slow one) scales the detection's wait.
  void setup_calls() {
    for (const auto& launch : launches_) {
      interrupt();
      const double c0 = cfg_.now();
      launch();
      dev_.synchronize();
      call_host_s_ = cfg_.now() - c0;
    }
  }

  /// The work signature: what one call enqueues and whether the events on the handed stream see
  /// all of it (profiler/model/work_signature.h). Work they cannot see is refused here, before any
  /// sample: its event times would be of other work than the call's. Throws WorkRefused.
  void probe_signature() {
    if (!cfg_.work_signature) {
      m_.work.why = "not probed (--no-work-signature)";
      return;
    }
    if (prof_.can_probe()) interrupt();
    m_.work = probe_work(launches_.front(), prof_, dev_);
    if (const std::string why = work_refusal(m_.work); !why.empty()) throw WorkRefused(why, m_.work);
  }

  /// Declared or not, the launch is checked against the blocking kernel: a declaration that does
  /// not hold (the launch synchronized only in its setup call) gets the same method as any launch.
  /// Then the record's method and stopping settings, and the sample spec. Every held eager sample
  /// from here on is watched: a launch that synchronizes later (a cache that grows, an allocator
  /// that maps more memory) voids its sample, and the fixture goes on without the blocking kernel.
  void check_sync() {
    if (cfg_.sync && cfg_.graph) throw refuse_graph("declared .sync()");
    t_.sync_declared = cfg_.sync;
    if (dev_.blocking()) {
      interrupt();
      if (launch_synchronizes(launches_.front(), dev_, sync_wait_s(call_host_s_))) t_.sync = sync_kind();
    } else if (cfg_.sync) {
      t_.sync = sync_kind();  // --no-blocking: nothing to check against; unblocked anyway
    }
    t_.blocking = dev_.blocking() && t_.sync.empty();
    t_.rotation = static_cast<int>(launches_.size());
    t_.stopping = cfg_.stopping;  // the user's settings (StoppingSettings), the rule's own beside them
    t_.confidence = cfg_.stopping.confidence;
    spec_.flush = cold();
    spec_.delay_ns = cfg_.delay_ns;
    spec_.sync = !t_.sync.empty();
    watch_.emplace(dev_);
    spec_.watch = &*watch_;
  }

  /// Calls per sample: cold mode one flush, then every instance once (sampling.h,
  /// kColdCallsPerSample); hot mode --batch, or the median of three unrecorded single-launch
  /// samples sizes the batch (auto_batch).
  void size_batch() {
    if (cold()) spec_.launches = static_cast<int>(launches_.size());
    if (cfg_.mode == TimingMode::Hot) {
      if (cfg_.batch > 0) {
        spec_.launches = cfg_.batch;
      } else {
        std::vector<double> probe;
        prof_.begin_fixture(Schedule{3, 0, 1});
        for (int i = 0; i < 3; ++i) {
          interrupt();
          probe.push_back(static_cast<double>(sample(launches_[0], 1, "probe").event_ns));
        }
        spec_.launches = auto_batch(compute_stats(probe).median);
      }
    }
    if (!t_.sync.empty() && cfg_.graph) throw refuse_graph("detected");
    t_.launches_per_sample = spec_.launches;
    t_.graph = cfg_.graph;
  }

  /// The calls the samples time: the instances eagerly (cold mode: one function that takes the
  /// next instance on each call), or in graph mode one graph per instance of its whole sample,
  /// captured outside every step (the capture's API calls fall outside the recorded windows) and
  /// checked to enqueue the same work as the calls it holds (WorkRefused when it does not: work
  /// that ran at capture time, or outside the capture, is missing).
  const std::vector<Launch>& sampled_calls() {
    drop_graphs_.emplace(dev_);
    cold_cycle_ = {[this] { launches_[next_instance_++ % launches_.size()](); }};
    const auto& eager = cold() ? cold_cycle_ : launches_;
    if (!cfg_.graph) return eager;
    for (const auto& launch : eager) {
      const int handle = dev_.capture([&] {
        for (int i = 0; i < spec_.launches; ++i) {
          launch();
          if (spec_.delay_ns > 0) dev_.delay(spec_.delay_ns);
        }
      });
      replays_.push_back([this, handle] { dev_.replay(handle); });
    }
    spec_.graph = true;
    if (m_.work.recorded) {
      WorkSignature unit = m_.work;
      if (spec_.delay_ns > 0) {  // the graph also holds the spin delay after each call
        unit = probe_work(
            [&] {
              launches_.front()();
              dev_.delay(spec_.delay_ns);
            },
            prof_, dev_);
      }
      const WorkSignature replay = probe_work(replays_.front(), prof_, dev_);
      if (replay.recorded && unit.recorded) {
        m_.graph_replay_items = static_cast<int>(replay.items.size());
        if (const std::string why = graph_refusal(unit, spec_.launches, replay); !why.empty())
          throw WorkRefused(why, m_.work, m_.graph_replay_items);
      }
    }
    return replays_;
  }

  /// --warmup: samples, unrecorded, until the event time is steady (warm_up).
  void warm_up_calls(const std::vector<Launch>& calls, const std::string& op_name) {
    if (!cfg_.warmup) return;
    std::size_t k = 0;
    prof_.begin_fixture(Schedule{std::numeric_limits<int>::max() / 2, 0, 1});  // nothing recorded
    const WarmupResult wr = warm_up(
        [&] {
          interrupt();
          const auto& launch = calls[k++ % calls.size()];
          return static_cast<double>(sample(launch, spec_.launches, op_name).event_ns) / spec_.launches;
        },
        cfg_);
    m_.warmup_s = wr.seconds;
    t_.warmed_up = wr.steady;
  }

  /// The recorded samples, until the stopping rule stops and the profiler's schedule is done; then
  /// the record's figures. A power or thermal limit holding the clock, seen before or during
  /// sampling, makes the median interval's batches at least kDriftBatchS long
  /// (StoppingRule::set_batch_min_s).
  Measurement sample_until_stop(const std::vector<Launch>& calls, const std::string& op_name) {
    StoppingRule rule(cfg_.stopping);
    const auto watch_clock = [&](const GpuClockSample& g) {
      if (g.valid && g.throttled) rule.set_batch_min_s(kDriftBatchS);
    };
    t_.gpu_before = read_gpu(cfg_);
    watch_clock(t_.gpu_before);

    prof_.begin_fixture(cfg_.schedule);
    double t0 = cfg_.now();
    double cpu0 = cfg_.cpu_now ? cfg_.cpu_now() : 0.0;
    const int scheduled = cfg_.schedule.total();
    double next_poll = kGpuPollS;
    for (std::size_t i = 0;; ++i) {
      interrupt();
      restarted_ = false;
      const TimedCall call = sample(calls[i % calls.size()], spec_.launches, op_name);
      if (restarted_) {
        // A launch synchronized: the held samples so far are another method's. Start again (the
        // profiler's schedule goes on: the steps recorded so far keep their own timings).
        t_.samples_ns.clear();
        const double batch_min_s = rule.config().batch_min_s;
        rule = StoppingRule(cfg_.stopping);
        rule.set_batch_min_s(batch_min_s);
        t0 = cfg_.now();
        cpu0 = cfg_.cpu_now ? cfg_.cpu_now() : 0.0;
        next_poll = kGpuPollS;
        clock_readings_.clear();
        clock_event_ns_.clear();
      }
      keep_clock_reading(call);
      const double per_launch = static_cast<double>(call.event_ns) / spec_.launches;
      t_.samples_ns.push_back(per_launch);
      const double elapsed = cfg_.now() - t0;
      if (elapsed >= next_poll) {
        watch_clock(read_gpu(cfg_));
        next_poll = elapsed + kGpuPollS;
      }
      rule.add(per_launch, elapsed);
      if (rule.state() != StoppingRule::State::Continue && static_cast<int>(i + 1) >= scheduled) break;
    }
    t_.sampling_s = cfg_.now() - t0;
    m_.sampling_cpu_s = cfg_.cpu_now ? cfg_.cpu_now() - cpu0 : 0.0;
    m_.calls = static_cast<std::int64_t>(t_.samples_ns.size()) * spec_.launches;
    t_.gpu_after = read_gpu(cfg_);
    watch_clock(t_.gpu_after);
    t_.batch_min_s = rule.config().batch_min_s;
    t_.stop = stop_reason_of(rule.state());
    m_.stats = compute_stats(t_.samples_ns);
    m_.converged = rule.state() == StoppingRule::State::Converged;
    if (clocks_recorded()) {
      SampleClocks c = sample_sm_clocks(clock_readings_, clock_event_ns_);
      t_.sample_sm_clock_mhz = std::move(c.mhz);
      t_.sm_clock_absent = c.absent;
    }
    t_.early_slowdown = early_slowdown(t_.samples_ns);
    t_.cold_start = !t_.warmed_up && std::fabs(t_.early_slowdown) > 0.02;
    return std::move(m_);
  }

 private:
  /// Graphs captured for the fixture are dropped when its measurement ends, however it ends.
  struct DropGraphs {
    explicit DropGraphs(SampleDevice& d) : dev(d) {}
    DropGraphs(const DropGraphs&) = delete;
    DropGraphs& operator=(const DropGraphs&) = delete;
    ~DropGraphs() { dev.drop_graphs(); }
    SampleDevice& dev;
  };

  void interrupt() const {
    if (cfg_.check_interrupt) cfg_.check_interrupt();
  }
  /// Per-sample SM clocks are recorded for eager samples held by the blocking kernel, when the
  /// device reads its counters (SampleDevice::hold_readings), for every sample kept.
  bool clocks_recorded() const {
    return t_.blocking && !cfg_.graph && clocks_read_ && clock_readings_.size() == t_.samples_ns.size();
  }
  /// Keeps the readings of the sample just taken (its blocking kernel's), with its event interval.
  void keep_clock_reading(const TimedCall& call) {
    if (!t_.blocking || cfg_.graph || !clocks_read_) return;
    const std::optional<BlockReadings> r = dev_.hold_readings();
    if (!r) {
      clocks_read_ = false;  // a device that reads no counters: no clocks for this fixture
      return;
    }
    clock_readings_.push_back(*r);
    clock_event_ns_.push_back(call.event_ns);
  }
  bool cold() const { return cfg_.mode == TimingMode::Cold; }
  const char* sync_kind() const { return cfg_.sync ? "declared" : "detected"; }
  static std::invalid_argument refuse_graph(const char* how) {
    return std::invalid_argument(
        fmt::format("its launch synchronizes with the device ({}), and a synchronizing call "
                    "cannot be captured into a CUDA graph: run it without --graph",
                    how));
  }

  /// One timed sample of `calls` calls. A launch found to synchronize while held voids the sample:
  /// the fixture goes on without the blocking kernel, this sample is taken again so, and
  /// `restarted_` tells the sampling loop to start over.
  TimedCall sample(const Launch& launch, int calls, const std::string& op) {
    SampleSpec s = spec_;
    s.launches = calls;
    s.watch_s = std::min(kSyncWatchMaxWaitS, sync_wait_s(call_host_s_ * calls));
    try {
      const TimedCall c = timed_sample(launch, prof_, dev_, annotation_, op, s);
      if (!s.sync) held_calls_ += calls;
      return c;
    } catch (const LaunchSynchronized&) {
      t_.sync = sync_kind();
      t_.sync_found_after = std::max<std::int64_t>(1, held_calls_);
      t_.blocking = false;
      spec_.sync = s.sync = true;
      restarted_ = true;
      return timed_sample(launch, prof_, dev_, annotation_, op, s);
    }
  }

  const std::vector<Launch>& launches_;
  Profiler& prof_;
  SampleDevice& dev_;
  const std::string& annotation_;
  const MeasureConfig& cfg_;
  Measurement m_;
  FixtureTiming& t_;
  double call_host_s_ = 0;
  SampleSpec spec_;
  std::int64_t held_calls_ = 0;  ///< calls of held samples that completed
  bool restarted_ = false;
  std::size_t next_instance_ = 0;
  std::vector<Launch> cold_cycle_, replays_;
  std::vector<BlockReadings> clock_readings_;  ///< of the recorded samples, in order (keep_clock_reading)
  std::vector<std::int64_t> clock_event_ns_;   ///< their whole event intervals, ns
  bool clocks_read_ = true;                    ///< false once the device gave no reading
  std::optional<HoldWatch> watch_;
  std::optional<DropGraphs> drop_graphs_;  ///< after watch_: destroyed first
};

}  // namespace

Measurement measure(const std::vector<Launch>& launches, Profiler& prof, SampleDevice& dev,
                    const std::string& annotation, const std::string& op_name, const MeasureConfig& cfg) {
  if (launches.empty()) throw std::invalid_argument("measure: no instance to launch");
  if (cfg.mode != TimingMode::Hot && cfg.mode != TimingMode::Cold)
    throw std::invalid_argument("measure: mode must be hot or cold");
  FixtureMeasurement f(launches, prof, dev, annotation, cfg);
  f.setup_calls();
  f.probe_signature();
  f.check_sync();
  f.size_batch();
  const std::vector<Launch>& calls = f.sampled_calls();
  f.warm_up_calls(calls, op_name);
  return f.sample_until_stop(calls, op_name);
}

}  // namespace xb
