// The sampling core (bench/core/measure.h) without a GPU: a fake SampleDevice whose event
// interval is a known function of the calls queued, a fake clock, and the fake activity source.
// Checks hot batching, cold flush + rotation, the stopping rule, warm-up, step timings, failure
// handling and that the recorded session validates its own step metrics.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/fake_activity_source.h"
#include "bench/core/measure.h"
#include "bench/core/sampling.h"
#include "profiler/model/event_model.h"
#include "profiler/model/step_metrics.h"

namespace xb {
namespace {

using test::FakeSource;

/// A device whose cudaEvent interval is `overhead_ns` + `per_call_ns` x the calls between the
/// events (per_call_ns may change over time through `per_call`), advancing a fake clock.
class FakeDevice : public SampleDevice {
 public:
  double now_s = 0;
  std::int64_t overhead_ns = 2000;
  std::function<std::int64_t(int sample)> per_call = [](int) { return std::int64_t{1000}; };
  bool is_blocking = true;
  int holds = 0, flushes = 0, releases = 0, abandons = 0, samples = 0, calls_in_sample = 0;
  std::vector<std::string> order;  // hold, flush, start, stop, release for the last sample
  std::vector<int> calls_per_sample;

  bool blocking() const override { return is_blocking; }
  void hold() override {
    ++holds;
    order = {"hold"};
    calls_in_sample = 0;
    readings.start = counters();
    std::lock_guard<std::mutex> lock(hold_mutex);
    held = true;
  }
  // The blocking kernel's SM counters (hold_readings): a device time that each sample advances by
  // its interval and a 10-us host gap, counted at sm_clock_mhz on SM smid_of(sample).
  double sm_clock_mhz = 0;  ///< 0: the device reads no counters
  std::function<std::uint32_t(int sample)> smid_of = [](int) { return 3u; };
  std::uint64_t device_ns = 1'000'000;
  BlockReadings readings;
  std::optional<BlockReadings> last_readings;
  SmCounters counters() const {
    SmCounters c;
    c.globaltimer_ns = device_ns;
    c.clock64 = static_cast<std::uint64_t>(static_cast<double>(device_ns) * sm_clock_mhz / 1000.0);
    c.smid = smid_of(samples);
    c.written = 1;
    return c;
  }
  std::optional<BlockReadings> hold_readings() const override {
    if (sm_clock_mhz <= 0) return std::nullopt;
    return last_readings;
  }
  std::function<void()> on_flush;
  void flush_l2() override {
    ++flushes;
    order.push_back("flush");
    if (on_flush) on_flush();
  }
  void record_start() override {
    order.push_back("start");
    calls_in_sample = 0;  // also where no hold came first (a synchronizing launch's sample)
  }
  void record_stop() override { order.push_back("stop"); }
  void delay(std::int64_t) override {}
  std::int64_t release_and_wait_ns() override {
    ++releases;
    order.push_back("release");
    const std::int64_t ns = overhead_ns + per_call(samples) * calls_in_sample;
    readings.release = counters();
    last_readings = readings;
    device_ns += static_cast<std::uint64_t>(ns) + 10'000;
    calls_per_sample.push_back(calls_in_sample);
    ++samples;
    now_s += static_cast<double>(ns) * 1e-9 + 1e-3;  // 1 ms of host time per sample
    return ns;
  }
  void abandon() noexcept override { ++abandons; }
  // launch_synchronizes: a "synchronizing" launch (Rig::sync_launch) waits until the hold is
  // released; released counts release() calls from any thread.
  std::mutex hold_mutex;
  std::condition_variable hold_cv;
  bool held = false;
  int synchronizes = 0, released = 0;
  void release() noexcept override {
    {
      std::lock_guard<std::mutex> lock(hold_mutex);
      held = false;
      ++released;
    }
    hold_cv.notify_all();
  }
  void synchronize() override { ++synchronizes; }

  // Graph mode: a capture counts the calls it sees (Rig::launch records nothing while capturing,
  // as a real capture runs nothing); a replay records one cudaGraphLaunch and its kernels.
  FakeSource* src = nullptr;
  bool capturing = false;
  int captures = 0, replays = 0, drops = 0;
  std::vector<int> graph_calls;  // calls captured per graph handle
  int capture(const std::function<void()>& calls) override {
    ++captures;
    capturing = true;
    const int before = calls_in_sample;
    calls_in_sample = 0;
    calls();
    capturing = false;
    graph_calls.push_back(calls_in_sample);
    calls_in_sample = before;
    return static_cast<int>(graph_calls.size()) - 1;
  }
  void replay(int handle) override {
    ++replays;
    const int n = graph_calls.at(static_cast<std::size_t>(handle));
    src->graph_launch("kernel", n, static_cast<std::uint32_t>(handle) + 1);
    calls_in_sample += n;
  }
  void drop_graphs() noexcept override {
    ++drops;
    graph_calls.clear();
  }
};

struct Rig {
  FakeSource* src = nullptr;
  std::unique_ptr<Profiler> prof;
  FakeDevice dev;
  MeasureConfig cfg;
  Rig() {
    auto owned = std::make_unique<FakeSource>();
    src = owned.get();
    prof = std::make_unique<Profiler>(std::move(owned));
    prof->start();
    dev.src = src;
    cfg.now = [this] { return dev.now_s; };
    cfg.schedule = Schedule{1, 1, 5};
    cfg.stopping.min_samples = 10;
    cfg.stopping.min_time_s = 0;
    cfg.stopping.max_time_s = 2;
    cfg.stopping.max_noise_fraction = 0.005;
  }
  /// A launch that records one kernel of 1000 ns in the fake source and counts the call.
  std::function<void()> launch(int* count = nullptr) {
    return [this, count] {
      if (!dev.capturing) src->launch("kernel");
      ++dev.calls_in_sample;
      if (count != nullptr) ++*count;
    };
  }
};

TEST(Measure, HotModeBatchesCallsAndRecordsEveryActiveStep) {
  Rig r;
  r.cfg.batch = 4;
  const Measurement m = measure({r.launch()}, *r.prof, r.dev, "k/fp32/64", "xb::k", r.cfg);
  EXPECT_EQ(m.timing.mode, TimingMode::Hot);
  EXPECT_EQ(m.timing.launches_per_sample, 4);
  EXPECT_TRUE(m.timing.blocking);
  EXPECT_TRUE(m.converged);
  EXPECT_EQ(m.timing.stop, StopReason::Converged);
  // Every sample: (2000 + 4 x 1000) / 4 = 1500 ns per call.
  ASSERT_GE(m.timing.samples_ns.size(), 10u);
  for (double s : m.timing.samples_ns) EXPECT_DOUBLE_EQ(s, 1500.0);
  EXPECT_DOUBLE_EQ(m.stats.median, 1500.0);
  EXPECT_EQ(r.dev.flushes, 0);
  EXPECT_EQ(r.dev.order, (std::vector<std::string>{"hold", "start", "stop", "release"}));
  for (int c : r.dev.calls_per_sample) EXPECT_EQ(c, 4);
  const RawSession raw = r.prof->stop();
  // Only the schedule's active steps are recorded (wait 1, warmup 1, active 5), each with its 4
  // calls; the samples the stopping rule adds after them are timed, not recorded.
  ASSERT_EQ(raw.event_timings.size(), 5u);
  for (const StepTiming& t : raw.event_timings) {
    EXPECT_EQ(t.fixture, "k/fp32/64");
    EXPECT_EQ(t.launches, 4);
    EXPECT_EQ(t.event_ns, 6000);
  }
  // Step metrics divide by the batch: one kernel of 50 ns per call in the fake source.
  const Session s = build_session(raw);
  const std::vector<StepMetrics> steps = step_metrics(s);
  ASSERT_EQ(steps.size(), raw.event_timings.size());
  for (const StepMetrics& st : steps) {
    EXPECT_EQ(st.activities, 4u);
    EXPECT_DOUBLE_EQ(st.device_per_call_ns(), 50.0);
    EXPECT_DOUBLE_EQ(st.event_per_call_ns(), 1500.0);
  }
}

TEST(Measure, HotModeWithoutBatchProbesThreeSingleCallsAndSizesTheBatch) {
  Rig r;
  r.dev.overhead_ns = 0;
  r.dev.per_call = [](int) { return std::int64_t{4000}; };
  const Measurement m = measure({r.launch()}, *r.prof, r.dev, "k/fp32/64", "xb::k", r.cfg);
  EXPECT_EQ(m.timing.launches_per_sample, auto_batch(4000));
  ASSERT_GE(r.dev.calls_per_sample.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.dev.calls_per_sample[static_cast<std::size_t>(i)], 1);
  EXPECT_EQ(r.dev.calls_per_sample[3], auto_batch(4000));
  // The probe is not recorded.
  const RawSession raw = r.prof->stop();
  for (const StepTiming& t : raw.event_timings) EXPECT_EQ(t.launches, auto_batch(4000));
}

TEST(Measure, ColdModeFlushesBeforeTheStartEventAndRotatesInstances) {
  Rig r;
  r.cfg.mode = TimingMode::Cold;
  // The flush is outside every profiler range: its memset must not join the step's CUPTI span,
  // which the validator pairs with the event interval (seen on the H200: 28 us off per sample).
  int outside = 0;
  r.dev.on_flush = [&] { outside += r.src->stack.empty() ? 1 : 0; };
  int counts[3] = {0, 0, 0};
  const Measurement m =
      measure({r.launch(&counts[0]), r.launch(&counts[1]), r.launch(&counts[2])}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_EQ(m.timing.mode, TimingMode::Cold);
  // One flush, then each instance once: every call finds its inputs outside the L2, and the
  // event pair's fixed cost is spread over the 3 calls.
  EXPECT_EQ(m.timing.launches_per_sample, 3);
  EXPECT_EQ(m.timing.rotation, 3);
  EXPECT_EQ(r.dev.flushes, r.dev.samples);
  EXPECT_EQ(outside, r.dev.flushes);
  EXPECT_EQ(r.dev.order, (std::vector<std::string>{"hold", "flush", "start", "stop", "release"}));
  for (int c : r.dev.calls_per_sample) EXPECT_EQ(c, 3);
  // Besides the samples: each instance's setup call, and the first instance's detection call.
  EXPECT_EQ(counts[0], r.dev.samples + 2);
  EXPECT_EQ(counts[1], r.dev.samples + 1);
  EXPECT_EQ(counts[2], r.dev.samples + 1);
}

TEST(Measure, ColdModeWithOneInstanceIsOneCallPerSample) {
  Rig r;
  r.cfg.mode = TimingMode::Cold;
  int count = 0;
  const Measurement m = measure({r.launch(&count)}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_EQ(m.timing.launches_per_sample, 1);
  EXPECT_EQ(count, r.dev.samples + 2);  // + the setup call and the detection's
  EXPECT_EQ(r.dev.flushes, r.dev.samples);
}

TEST(Measure, GraphModeCapturesOncePerInstanceAndReplaysOncePerSample) {
  Rig r;
  r.cfg.batch = 4;
  r.cfg.graph = true;
  int count = 0;
  const Measurement m = measure({r.launch(&count)}, *r.prof, r.dev, "k/fp32/64", "xb::k", r.cfg);
  EXPECT_TRUE(m.timing.graph);
  EXPECT_EQ(m.timing.launches_per_sample, 4);
  EXPECT_EQ(r.dev.captures, 1);
  EXPECT_EQ(count, 2 + 4);  // the setup and detection calls, then the calls run only while captured
  EXPECT_EQ(r.dev.replays, r.dev.samples);
  EXPECT_EQ(r.dev.drops, 1);
  for (int c : r.dev.calls_per_sample) EXPECT_EQ(c, 4);
  for (double s : m.timing.samples_ns) EXPECT_DOUBLE_EQ(s, 1500.0);  // per call, as in eager mode
  EXPECT_EQ(r.dev.order, (std::vector<std::string>{"hold", "start", "stop", "release"}));
  const RawSession raw = r.prof->stop();
  ASSERT_EQ(raw.event_timings.size(), 5u);
  for (const StepTiming& t : raw.event_timings) EXPECT_EQ(t.launches, 4);  // calls, not replays
  // Each step: one cudaGraphLaunch owning its 4 kernels, all under the step's op range.
  const Session s = build_session(raw);
  ASSERT_GE(s.api.size(), 5u);
  ASSERT_EQ(s.device.size(), 4 * s.api.size());
  for (const ApiCall& c : s.api) {
    EXPECT_EQ(c.name, "cudaGraphLaunch");
    EXPECT_EQ(c.device_work, 4);
  }
  // The schedule's warm-up step runs with collection on but records no range: its kernels have no
  // external id; the 5 active steps' 20 kernels have their op range's.
  std::size_t in_ranges = 0;
  for (const DeviceActivity& a : s.device) {
    ASSERT_GE(a.launch, 0);
    EXPECT_EQ(a.external_id, s.api[static_cast<std::size_t>(a.launch)].external_id);
    in_ranges += a.external_id != 0 ? 1 : 0;
  }
  EXPECT_EQ(in_ranges, 20u);
  const std::vector<StepMetrics> steps = step_metrics(s);
  ASSERT_EQ(steps.size(), 5u);
  for (const StepMetrics& st : steps) {
    EXPECT_EQ(st.activities, 4u);
    EXPECT_DOUBLE_EQ(st.event_per_call_ns(), 1500.0);
  }
}

TEST(Measure, GraphModeColdCapturesOneCallOfEachCopyAndFlushesOutsideTheGraph) {
  Rig r;
  r.cfg.mode = TimingMode::Cold;
  r.cfg.graph = true;
  int counts[2] = {0, 0};
  const Measurement m = measure({r.launch(&counts[0]), r.launch(&counts[1])}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_TRUE(m.timing.graph);
  EXPECT_EQ(m.timing.launches_per_sample, 2);
  EXPECT_EQ(r.dev.captures, 1);  // one graph: a call of each instance
  EXPECT_EQ(counts[0], 2 + 1);   // setup and detection calls, then one captured call
  EXPECT_EQ(counts[1], 1 + 1);
  EXPECT_EQ(r.dev.replays, r.dev.samples);
  EXPECT_EQ(r.dev.flushes, r.dev.samples);
  EXPECT_EQ(r.dev.order, (std::vector<std::string>{"hold", "flush", "start", "stop", "release"}));
  for (int c : r.dev.calls_per_sample) EXPECT_EQ(c, 2);
}

TEST(Measure, GraphModeProbesEagerlyThenCapturesTheSizedBatch) {
  Rig r;
  r.cfg.graph = true;
  r.cfg.warmup = true;
  r.dev.overhead_ns = 0;
  r.dev.per_call = [](int) { return std::int64_t{4000}; };
  const Measurement m = measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_EQ(m.timing.launches_per_sample, auto_batch(4000));
  ASSERT_EQ(r.dev.graph_calls.size(), 0u);  // dropped at the end
  EXPECT_EQ(r.dev.captures, 1);
  EXPECT_EQ(r.dev.replays, r.dev.samples - 3);  // the three probe samples ran eagerly
  for (std::size_t i = 0; i < r.dev.calls_per_sample.size(); ++i) {
    EXPECT_EQ(r.dev.calls_per_sample[i], i < 3 ? 1 : auto_batch(4000));
  }
}

TEST(Measure, GraphModeDropsItsGraphsWhenASampleFailsAndNeedsACapableDevice) {
  Rig r;
  r.cfg.batch = 2;
  r.cfg.graph = true;
  r.cfg.check_interrupt = [&] {
    if (r.dev.samples == 3) throw std::runtime_error("interrupted");
  };
  EXPECT_THROW(measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg), std::runtime_error);
  EXPECT_EQ(r.dev.drops, 1);
  EXPECT_TRUE(r.dev.graph_calls.empty());

  struct EagerOnly : SampleDevice {
    bool blocking() const override { return false; }
    void hold() override {}
    void flush_l2() override {}
    void record_start() override {}
    void record_stop() override {}
    void delay(std::int64_t) override {}
    std::int64_t release_and_wait_ns() override { return 1000; }
    void abandon() noexcept override {}
    void release() noexcept override {}
    void synchronize() override {}
  } eager;
  Rig q;
  q.cfg.batch = 1;
  q.cfg.graph = true;
  EXPECT_THROW(measure({q.launch()}, *q.prof, eager, "k", "xb::k", q.cfg), std::logic_error);
}

/// A launch that synchronizes with the device: it waits while the fake device's hold is in place.
std::function<void()> sync_launch(Rig& r, int* count = nullptr) {
  return [&r, count] {
    std::unique_lock<std::mutex> lock(r.dev.hold_mutex);
    r.dev.hold_cv.wait(lock, [&] { return !r.dev.held; });
    r.src->launch("kernel");
    ++r.dev.calls_in_sample;
    if (count != nullptr) ++*count;
  };
}

TEST(Measure, LaunchSynchronizesTellsAWaitingLaunchFromAnAsynchronousOne) {
  Rig r;
  EXPECT_FALSE(launch_synchronizes(r.launch(), r.dev, 5.0));  // returns at once: no 5 s wait
  EXPECT_EQ(r.dev.released, 1);                               // released after the launch returned
  EXPECT_EQ(r.dev.synchronizes, 1);
  int calls = 0;
  EXPECT_TRUE(launch_synchronizes(sync_launch(r, &calls), r.dev, 0.01));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r.dev.released, 3);  // the watchdog's release, then the one after the launch
  EXPECT_EQ(r.dev.synchronizes, 2);
  EXPECT_THROW(launch_synchronizes([] { throw std::runtime_error("launch failed"); }, r.dev, 5.0), std::runtime_error);
  EXPECT_EQ(r.dev.abandons, 1);  // the stream given back
}

TEST(Measure, HoldWatchReleasesOnlyALaunchThatOverstaysItsArm) {
  FakeDevice dev;
  HoldWatch watch(dev);
  // Disarmed in time: nothing released (an hour's wait: no race with the clock).
  for (int i = 0; i < 100; ++i) {
    watch.arm(3600);
    EXPECT_FALSE(watch.disarm());
  }
  EXPECT_EQ(dev.released, 0);
  // Overstayed: the watch releases the hold once; wait for that release, however late it comes.
  watch.arm(0.001);
  {
    std::unique_lock<std::mutex> lock(dev.hold_mutex);
    dev.hold_cv.wait(lock, [&] { return dev.released > 0; });
  }
  EXPECT_TRUE(watch.disarm());
  EXPECT_EQ(dev.released, 1);
  // The next arm starts clean: no release carried over from the last one.
  watch.arm(3600);
  EXPECT_FALSE(watch.disarm());
  EXPECT_EQ(dev.released, 1);
}

TEST(Measure, SetupCallsRunEveryInstanceUnblockedBeforeAnySample) {
  Rig r;
  r.cfg.mode = TimingMode::Cold;
  std::vector<std::string> log;
  std::vector<std::function<void()>> launches;
  for (int i = 0; i < 3; ++i) {
    launches.push_back([&r, &log, i] {
      log.push_back(std::string(r.dev.held ? "held " : "free ") + std::to_string(i));
      ++r.dev.calls_in_sample;
    });
  }
  const Measurement m = measure(launches, *r.prof, r.dev, "k", "xb::k", r.cfg);
  ASSERT_GE(log.size(), 4u);
  EXPECT_EQ((std::vector<std::string>(log.begin(), log.begin() + 4)),
            (std::vector<std::string>{"free 0", "free 1", "free 2", "held 0"}));  // setup, then the detection
  EXPECT_GE(r.dev.synchronizes, 2);  // after the setup calls and after the detection
  EXPECT_TRUE(m.timing.sync.empty());
  EXPECT_TRUE(m.timing.blocking);
}

TEST(Measure, ADetectedSynchronizingLaunchIsSampledWithoutTheBlockingKernel) {
  Rig r;
  r.cfg.batch = 2;
  const Measurement m = measure({sync_launch(r)}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_EQ(m.timing.sync, "detected");
  EXPECT_FALSE(m.timing.blocking);
  EXPECT_EQ(r.dev.holds, 1);  // the detection's only: no sample held the stream
  EXPECT_GE(m.timing.samples_ns.size(), 10u);
  for (int c : r.dev.calls_per_sample) EXPECT_EQ(c, 2);
  EXPECT_EQ(m.calls, static_cast<std::int64_t>(m.timing.samples_ns.size()) * 2);
}

TEST(Measure, ADeclaredSynchronizingLaunchIsCheckedOnceThenNeverHeldAndGraphModeRefusesIt) {
  Rig r;
  r.cfg.batch = 1;
  r.cfg.sync = true;
  const Measurement m = measure({sync_launch(r)}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_EQ(m.timing.sync, "declared");
  EXPECT_TRUE(m.timing.sync_declared);
  EXPECT_EQ(m.timing.sync_found_after, 0);
  EXPECT_FALSE(m.timing.blocking);
  EXPECT_EQ(r.dev.holds, 1);  // the check after the setup call: no sample held the stream
  EXPECT_NE(sync_note(m.timing).find("declared .sync(), and it waited"), std::string::npos) << sync_note(m.timing);

  Rig d;  // graph mode refuses a declared launch before running it
  d.cfg.batch = 1;
  d.cfg.sync = true;
  d.cfg.graph = true;
  int calls = 0;
  try {
    measure({d.launch(&calls)}, *d.prof, d.dev, "k", "xb::k", d.cfg);
    FAIL() << "graph mode took a declared synchronizing launch";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("declared .sync()"), std::string::npos) << e.what();
  }
  EXPECT_EQ(d.dev.captures, 0);

  Rig g;
  g.cfg.batch = 1;
  g.cfg.graph = true;
  try {
    measure({sync_launch(g)}, *g.prof, g.dev, "k", "xb::k", g.cfg);
    FAIL() << "graph mode took a synchronizing launch";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be captured into a CUDA graph"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("detected"), std::string::npos) << e.what();
  }
  EXPECT_EQ(g.dev.captures, 0);
}

TEST(Measure, ADeclaredLaunchThatDoesNotSynchronizeIsTimedAsAnUndeclaredOne) {
  // cublasSgemm (legacy API) synchronizes in its first call only: declared or not, every sample
  // after the setup call is held, and both registrations get the same samples.
  const auto run = [](bool declared) {
    Rig r;
    r.cfg.batch = 2;
    r.cfg.sync = declared;
    r.dev.per_call = [](int i) { return std::int64_t{1000 + 10 * (i % 7)}; };
    Measurement m = measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg);
    EXPECT_EQ(r.dev.holds, 1 + static_cast<int>(m.timing.samples_ns.size())) << declared;  // check + samples
    return m;
  };
  const Measurement declared = run(true), undeclared = run(false);
  EXPECT_TRUE(declared.timing.sync.empty());
  EXPECT_TRUE(declared.timing.blocking);
  EXPECT_TRUE(declared.timing.sync_declared);
  EXPECT_FALSE(undeclared.timing.sync_declared);
  EXPECT_EQ(declared.timing.samples_ns, undeclared.timing.samples_ns);
  EXPECT_NE(sync_note(declared.timing).find("did not wait for the device after its setup call"), std::string::npos);
  EXPECT_EQ(sync_note(undeclared.timing), "");
}

TEST(Measure, ALaunchThatSynchronizesLaterIsCaughtAndTheFixtureGoesOnUnblocked) {
  // Asynchronous for its first 12 calls (setup and check included), then it waits for the
  // device (an allocator that maps more memory): the held sample it stalls is voided by the
  // watch, and the fixture starts sampling again without the blocking kernel; nothing fails.
  Rig r;
  r.cfg.batch = 2;
  int n = 0;
  const auto late = [&r, &n] {
    if (++n > 12) {
      std::unique_lock<std::mutex> lock(r.dev.hold_mutex);
      r.dev.hold_cv.wait(lock, [&] { return !r.dev.held; });
    }
    r.src->launch("kernel");
    ++r.dev.calls_in_sample;
  };
  const Measurement m = measure({late}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_EQ(m.timing.sync, "detected");
  EXPECT_FALSE(m.timing.blocking);
  EXPECT_EQ(m.timing.sync_found_after, 10);    // 5 held samples of 2 calls (setup and check: 2 calls)
  EXPECT_GE(m.timing.samples_ns.size(), 10u);  // all of them taken after the switch
  EXPECT_EQ(m.calls, static_cast<std::int64_t>(m.timing.samples_ns.size()) * 2);
  EXPECT_EQ(r.dev.abandons, 1);  // the voided sample gave the stream back
  EXPECT_NE(sync_note(m.timing).find("after 10 calls that did not"), std::string::npos) << sync_note(m.timing);
  // Active steps (the schedule's 3rd to 7th samples): three held ones before the switch kept their
  // timings, the voided one has none, the rest come from unblocked samples.
  const RawSession raw = r.prof->stop();
  EXPECT_EQ(raw.event_timings.size(), 4u);
}

TEST(Measure, NoisySamplesStopAtMaxTimeAndSayTheTargetWasMissed) {
  Rig r;
  r.cfg.batch = 1;
  r.dev.per_call = [](int i) { return std::int64_t{i % 2 == 0 ? 1000 : 1500}; };  // RSD ~ 20%
  const Measurement m = measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_FALSE(m.converged);
  EXPECT_EQ(m.timing.stop, StopReason::TimedOut);
  EXPECT_GE(m.timing.sampling_s, r.cfg.stopping.max_time_s);
  EXPECT_LT(m.timing.sampling_s, r.cfg.stopping.max_time_s + 0.01);
}

TEST(Measure, WarmupRunsUntilSteadyAndRecordsNothing) {
  Rig r;
  r.cfg.batch = 2;
  r.cfg.warmup = true;
  // Slow for the first 300 samples (clocks ramping), then steady.
  r.dev.per_call = [](int i) { return std::int64_t{i < 300 ? 3000 - 5 * i : 1000}; };
  const Measurement m = measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_TRUE(m.timing.warmed_up);
  EXPECT_GE(m.warmup_s, r.cfg.warmup_config.min_s);
  EXPECT_LT(m.warmup_s, r.cfg.warmup_config.max_s);
  EXPECT_FALSE(m.timing.cold_start);
  for (double s : m.timing.samples_ns) EXPECT_DOUBLE_EQ(s, 2000.0);  // (2000 + 2 x 1000) / 2
  const RawSession raw = r.prof->stop();
  EXPECT_EQ(raw.event_timings.size(), 5u);  // the schedule's active steps; warm-up samples: none
}

TEST(Measure, WarmupWaitsForThePowerCapAndGivesUpAtMaxTime) {
  Rig r;
  r.cfg.batch = 1;
  r.cfg.warmup = true;
  r.cfg.power_limit_w = 700;
  r.cfg.read_gpu = [] {
    GpuClockSample g;
    g.valid = true;
    g.power_w = 690;  // >= 95% of the limit, power cap not engaged: about to throttle
    return g;
  };
  const Measurement m = measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_FALSE(m.timing.warmed_up);
  EXPECT_GE(m.warmup_s, r.cfg.warmup_config.max_s);
  EXPECT_TRUE(m.timing.gpu_before.valid);
}

TEST(Measure, APowerCapSeenDuringSamplingLengthensTheIntervalBatches) {
  // NVML reports the software power cap from the third read on (gpu_before, then polls every
  // kGpuPollS of sampling): the fixture's interval batches become kDriftBatchS long.
  Rig r;
  r.cfg.batch = 1;
  r.dev.per_call = [](int i) { return std::int64_t{i % 2 == 0 ? 1000 : 1500}; };  // runs to max-time
  int reads = 0;
  r.cfg.read_gpu = [&reads] {
    GpuClockSample g;
    g.valid = true;
    g.throttled = ++reads >= 3;
    g.throttle_reasons = g.throttled ? 0x4 : 0;
    return g;
  };
  const Measurement m = measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  EXPECT_GE(reads, 3);
  EXPECT_DOUBLE_EQ(m.timing.batch_min_s, kDriftBatchS);
  // The recorded interval is the rule's: batches over the span at that length.
  EXPECT_EQ(fixture_median_interval(m.timing).batches,
            std::min<std::size_t>(batches_in_span(m.timing.sampling_s, kDriftBatchS), 20));
  // Never throttled: no minimum.
  Rig quiet;
  quiet.cfg.batch = 1;
  quiet.cfg.read_gpu = [] {
    GpuClockSample g;
    g.valid = true;
    return g;
  };
  EXPECT_DOUBLE_EQ(measure({quiet.launch()}, *quiet.prof, quiet.dev, "k", "xb::k", quiet.cfg).timing.batch_min_s, 0);
}

TEST(Measure, AFailingLaunchGivesTheStreamBackAndClosesTheStep) {
  Rig r;
  r.cfg.batch = 2;
  int calls = 0;
  const auto bad = [&] {
    if (++calls == 7) throw std::runtime_error("launch failed");
    r.src->launch("kernel");
  };
  EXPECT_THROW(measure({bad}, *r.prof, r.dev, "k", "xb::k", r.cfg), std::runtime_error);
  EXPECT_EQ(r.dev.abandons, 1);
  EXPECT_EQ(r.dev.holds, r.dev.releases + 2);  // the detection's hold and the failed sample's
  EXPECT_TRUE(r.src->stack.empty());           // every range closed, the step ended
  EXPECT_NO_THROW(r.prof->stop());
}

TEST(Measure, InterruptCheckStopsBeforeTheNextSample) {
  Rig r;
  r.cfg.batch = 1;
  int checks = 0;
  r.cfg.check_interrupt = [&] {
    if (++checks == 7) throw std::runtime_error("interrupted");  // 2 checks: the setup call, the detection
  };
  EXPECT_THROW(measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg), std::runtime_error);
  EXPECT_EQ(r.dev.samples, 4);
  EXPECT_EQ(r.dev.abandons, 0);
}

TEST(Measure, RejectsBadInput) {
  Rig r;
  EXPECT_THROW(measure({}, *r.prof, r.dev, "k", "xb::k", r.cfg), std::invalid_argument);
  r.cfg.mode = static_cast<TimingMode>(7);  // no such mode
  EXPECT_THROW(measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg), std::invalid_argument);
  SampleSpec zero;
  zero.launches = 0;
  EXPECT_THROW(timed_sample(r.launch(), *r.prof, r.dev, "k", "xb::k", zero), std::invalid_argument);
}

}  // namespace
}  // namespace xb

namespace xb {
namespace {

/// Held samples long enough for a clock (400 us each), on a device counting 1500 MHz.
Rig& clocked(Rig& r) {
  r.cfg.batch = 4;
  r.dev.per_call = [](int) { return std::int64_t{100'000}; };
  r.dev.sm_clock_mhz = 1500;
  return r;
}

TEST(MeasureSmClock, EveryHeldSampleButTheLastGetsItsClock) {
  Rig r;
  const Measurement m = measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", clocked(r).cfg);
  const FixtureTiming& t = m.timing;
  ASSERT_EQ(t.sample_sm_clock_mhz.size(), t.samples_ns.size());
  for (std::size_t i = 0; i + 1 < t.samples_ns.size(); ++i) {
    ASSERT_TRUE(t.sample_sm_clock_mhz[i]) << i;
    EXPECT_DOUBLE_EQ(*t.sample_sm_clock_mhz[i], 1500.0) << i;
  }
  EXPECT_FALSE(t.sample_sm_clock_mhz.back());
  EXPECT_EQ(t.sm_clock_absent.last, 1);
  EXPECT_EQ(t.sm_clock_absent.total(), 1);
}

TEST(MeasureSmClock, AWindowAcrossTwoSmsIsAbsent) {
  Rig r;
  clocked(r).dev.smid_of = [](int sample) { return static_cast<std::uint32_t>(sample / 2); };  // moves every 2nd
  const Measurement m = measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg);
  const FixtureTiming& t = m.timing;
  ASSERT_EQ(t.sample_sm_clock_mhz.size(), t.samples_ns.size());
  EXPECT_GT(t.sm_clock_absent.other_sm, 0);
  EXPECT_EQ(t.sm_clock_absent.total(),
            std::count(t.sample_sm_clock_mhz.begin(), t.sample_sm_clock_mhz.end(), std::nullopt));
}

TEST(MeasureSmClock, NoneInGraphModeWithoutBlockingOrWithoutReadings) {
  {
    Rig r;
    clocked(r).cfg.graph = true;
    EXPECT_TRUE(measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg).timing.sample_sm_clock_mhz.empty());
  }
  {
    Rig r;
    clocked(r).dev.is_blocking = false;
    EXPECT_TRUE(measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg).timing.sample_sm_clock_mhz.empty());
  }
  {
    Rig r;
    clocked(r).dev.sm_clock_mhz = 0;  // a device that reads no counters
    const Measurement m = measure({r.launch()}, *r.prof, r.dev, "k", "xb::k", r.cfg);
    EXPECT_TRUE(m.timing.sample_sm_clock_mhz.empty());
    EXPECT_EQ(m.timing.sm_clock_absent.total(), 0);
  }
}

}  // namespace
}  // namespace xb
