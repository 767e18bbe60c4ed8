// The sampling core: the one loop that times any work for every bench command (run, sweep,
// calibrate, qualify, ab, overhead, tune-add). Hot mode (back-to-back calls per sample, batch
// sized automatically), cold mode (L2 flushed and inputs rotated before each one-call sample),
// warm-up until steady, the noise-based stopping rule, NVML before/after, and one profiler step
// per sample holding the cudaEvent interval that the validator pairs with CUPTI's records.
//
// The device is reached only through SampleDevice (the CUDA implementation is
// make_cuda_sample_device), so the loop is tested on the CPU with a fake device and a fake clock
// (tests/cpu/test_measure.cpp). Units: ns for every time, s for wall-clock budgets.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "bench/core/fixture_records.h"
#include "bench/core/sm_clock.h"
#include "bench/core/stopping_rule.h"
#include "bench/core/timing_mode.h"
#include "common/stats.h"
#include "profiler/model/profiler.h"
#include "profiler/model/work_signature.h"

namespace xb {

class BlockingKernel;
class DeviceBuffer;

/// What one sample needs from the device, in the order the core calls it:
/// hold, [flush_l2], record_start, (calls), record_stop, release_and_wait_ns. A sample of a
/// synchronizing launch (SampleSpec::sync) skips hold.
class SampleDevice {
 public:
  virtual ~SampleDevice() = default;
  /// True when hold() queues a blocking kernel (the launch gap then stays outside the interval).
  virtual bool blocking() const = 0;
  /// Holds the stream (blocking kernel) so that everything queued next starts together.
  virtual void hold() = 0;
  /// Overwrites a buffer of at least the L2's size (cold mode), outside the event interval.
  virtual void flush_l2() = 0;
  virtual void record_start() = 0;
  virtual void record_stop() = 0;
  /// A known delay of `ns` on the stream (a spin kernel: bench --slow-fixture).
  virtual void delay(std::int64_t ns) = 0;
  /// Releases the hold (if any), waits for the stop event and returns the start-stop interval, ns.
  /// Throws std::runtime_error when the blocking kernel timed out or the interval is not positive.
  virtual std::int64_t release_and_wait_ns() = 0;
  /// Releases the hold without waiting for anything. Safe to call from another thread while the
  /// sampling thread is inside a launch (launch_synchronizes' watchdog); never throws.
  virtual void release() noexcept = 0;
  /// Waits until everything queued on the stream has run. Throws std::runtime_error (CudaError).
  virtual void synchronize() = 0;
  /// Gives the stream back after a failure (never throws).
  virtual void abandon() noexcept = 0;
  /// What the last sample's blocking kernel read of its SM (kernels/sm_counters.h), taken by
  /// release_and_wait_ns (a few loads of host-mapped memory, after the stop event); nullopt when
  /// that sample was not held, or the device reads none (the default). The sampling loop derives
  /// each held sample's SM clock from them (bench/core/sm_clock.h).
  virtual std::optional<BlockReadings> hold_readings() const { return std::nullopt; }

  // Graph mode (MeasureConfig::graph). The defaults throw std::logic_error: a device that cannot
  // capture refuses graph mode.
  /// Captures what `calls` enqueues on the stream into a CUDA graph without running it, makes it
  /// ready to launch (instantiated and uploaded) and returns its handle, 0, 1, ... Called outside
  /// any sample (nothing held, no event recorded). Throws what `calls` throws or why the capture
  /// failed (the stream is no longer capturing then).
  virtual int capture(const std::function<void()>& calls);
  /// Enqueues one launch of graph `handle` (cudaGraphLaunch) on the stream.
  virtual void replay(int handle);
  /// Destroys every captured graph (never throws); handles start again from 0.
  virtual void drop_graphs() noexcept {}

  // The work-signature probe (probe_work). Defaults: no markers (the probe then finds none and
  // records no signature, saying why), a non-blocking stream.
  /// Records an event on the stream, then on the legacy default stream, then on the per-thread
  /// default stream (their CUPTI records name those streams' ids), before the probed call.
  virtual void probe_begin() {}
  /// Records an event on the stream after the probed call, then waits until the whole device is
  /// idle (the call's work may be on any stream). Throws std::runtime_error (CudaError).
  virtual void probe_end() {}
  /// Whether the stream is the legacy default stream, and whether it is a blocking stream.
  virtual HandedStream handed_stream() const { return {}; }
};

/// The CUDA SampleDevice on `stream`: cudaEvent pairs, `blocking` (null: --no-blocking) and
/// `flush` (null: no cold mode) owned by the caller and outliving the device.
std::unique_ptr<SampleDevice> make_cuda_sample_device(cudaStream_t stream, BlockingKernel* blocking,
                                                      const DeviceBuffer* flush);

/// Watches a held stream while the host launches into it: arm(wait_s) before the launches,
/// disarm() after. If they have not returned `wait_s` seconds after arm(), the watch's own thread
/// releases the hold (SampleDevice::release), so a launch that waits for the device (it
/// synchronizes) returns instead of stalling until the blocking kernel times out (10 s), and
/// disarm() says so. One thread for the watch's lifetime: a watched sample costs a lock and a
/// notify, not a thread. Not copyable; arm() and disarm() from one thread, in turn.
class HoldWatch {
 public:
  explicit HoldWatch(SampleDevice& dev);
  ~HoldWatch();
  HoldWatch(const HoldWatch&) = delete;
  HoldWatch& operator=(const HoldWatch&) = delete;
  /// Starts watching: the hold is released if disarm() has not come within `wait_s` seconds.
  void arm(double wait_s);
  /// Stops watching; true when the hold was released meanwhile (the launches did not return in time).
  bool disarm();

 private:
  void run();
  SampleDevice& dev_;
  std::mutex m_;
  std::condition_variable cv_;
  bool armed_ = false, fired_ = false, stop_ = false;
  double wait_s_ = 0;
  std::uint64_t generation_ = 0;  ///< arm() calls: a round ends when it changes
  std::thread thread_;
};

/// Thrown by timed_sample when its launches, watched (SampleSpec::watch), did not return while the
/// stream was held: a launch synchronized with the device. The sample is void: the stream is given
/// back and the step closed without a timing.
struct LaunchSynchronized : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Thrown by measure() before any sample when one call's work signature shows work the events on
/// the handed stream cannot see (work_refusal), or graph mode's replay enqueues other work than
/// the eager calls it holds (graph_refusal). what() is the one-line refusal.
struct WorkRefused : std::runtime_error {
  WorkRefused(const std::string& why, WorkSignature signature, int replay_items = -1)
      : std::runtime_error(why), work(std::move(signature)), graph_replay_items(replay_items) {}
  WorkSignature work;           ///< the eager call's signature
  int graph_replay_items = -1;  ///< device activities of one graph replay; -1: not probed
};

/// The work signature of `call` (profiler/model/work_signature.h): the profiler's probe window around
/// dev.probe_begin(), `call`, dev.probe_end() (which waits until the device is idle), outside any
/// step. Not recorded (recorded = false, why) when the profiler is not recording or its source
/// cannot probe. Throws what `call` or the device throws (the stream given back first).
WorkSignature probe_work(const std::function<void()>& call, Profiler& prof, SampleDevice& dev);

/// One timed sample.
struct SampleSpec {
  int launches = 1;           ///< calls between the events
  bool flush = false;         ///< flush the L2 before the start event (cold mode)
  std::int64_t delay_ns = 0;  ///< > 0: a spin delay after each call, in an "xb::delay" CPU op range
  /// Graph mode: `launch` replays one CUDA graph that holds all `launches` calls (and their
  /// delays): it is called once, in one `op_name` CPU op range; `launches` still counts calls.
  bool graph = false;
  /// The launch synchronizes with the device (MeasureConfig::sync, or launch_synchronizes found
  /// it): no blocking kernel holds the stream, so the interval also holds the host's launch time.
  bool sync = false;
  /// A held (not `sync`) eager sample's launches run under this watch, armed for `watch_s`
  /// seconds: a launch that synchronizes makes timed_sample throw LaunchSynchronized. Null: none.
  HoldWatch* watch = nullptr;
  double watch_s = 0;
};

/// Result of one timed sample.
struct TimedCall {
  std::int64_t event_ns = 0;  ///< cudaEvent interval, ns (all launches of the sample)
  bool recorded = false;      ///< the sample was an active (recorded) profiler step
};

/// One sample inside the profiler's next step: hold, [flush], start event, `spec.launches` calls
/// of `launch` each in its own `op_name` CPU op range inside one `annotation` range (graph mode:
/// one call of `launch`, the graph replay, in one op range), stop event, release. Active steps get a "ProfilerStep#N"
/// range and their StepTiming added to the session. Throws std::invalid_argument for spec.launches < 1, and what
/// `launch` or the device throws (the step is closed and the stream given back first).
TimedCall timed_sample(const std::function<void()>& launch, Profiler& prof, SampleDevice& dev,
                       const std::string& annotation, const std::string& op_name, const SampleSpec& spec);

/// Whether `launch` synchronizes with the device: the stream is held (dev.hold()), `launch` runs on
/// this thread, and a watchdog thread releases the hold if `launch` has not returned after
/// `wait_s` seconds. A launch that returns while the hold is in place enqueued without waiting
/// for the device (false); one that returned only after the watchdog's release waited for the
/// blocking kernel, so it synchronizes (true). The stream is synchronized before it returns, and
/// given back (dev.abandon()) before anything `launch` throws leaves. A launch slower than
/// `wait_s` on the host without synchronizing is taken for a synchronizing one: measure() waits
/// kSyncDetectWaitFactor times a call's unblocked host time, at least kSyncDetectMinWaitS.
/// nvbench declares such benchmarks with exec_tag::sync and checks nothing; this finds the ones
/// not declared, instead of letting the blocking kernel time out (10 s) on every sample.
bool launch_synchronizes(const std::function<void()>& launch, SampleDevice& dev, double wait_s);

/// launch_synchronizes' wait (sync_wait_s): this many times the host time of an unblocked call...
constexpr double kSyncDetectWaitFactor = 10;
/// ... and at least this long, s (well above the host time of an asynchronous launch: 2 to 20 us).
constexpr double kSyncDetectMinWaitS = 0.05;
/// A watched sample's wait (SampleSpec::watch_s) is sync_wait_s of its calls' unblocked host
/// time, at most this, s (well under the blocking kernel's 10-s timeout).
constexpr double kSyncWatchMaxWaitS = 2.0;

/// How long a held launch taking `host_s` seconds unblocked may take before it is taken for one
/// that synchronizes: kSyncDetectWaitFactor x host_s, at least kSyncDetectMinWaitS, s.
double sync_wait_s(double host_s);

/// The median interval's minimum batch length, s, once NVML reports a power or thermal limit
/// holding the clock (GpuClockSample::throttled, before or during sampling): the H200's power
/// controller moves a capped GEMM's clock over about a second, and only batches at least 0.5 s
/// long gave its median's 95% interval about 95% coverage (results/h200/drift-2026-12-04).
constexpr double kDriftBatchS = 0.5;
/// NVML is read this often during sampling, s (each read takes well under a millisecond, between
/// samples, outside every event interval).
constexpr double kGpuPollS = 0.25;

/// Seconds on a monotonic clock; the core's only time source (a fake in the CPU tests).
using Seconds = std::function<double()>;
/// std::chrono::steady_clock in seconds.
Seconds steady_seconds();
/// The calling thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID; Google Benchmark's CPU
/// column measures the same clock).
Seconds thread_cpu_seconds();

/// Warm-up budget: unrecorded samples in windows of at least `window_s` (and 3 samples), until two
/// window medians differ by at most `tolerance` after at least `min_s` and the GPU's power state
/// has settled; at most `max_s` (then not steady). bench --warmup: 0.25, 0.5, 5, 0.5%.
struct WarmupConfig {
  double window_s = 0.25;
  double min_s = 0.5;
  double max_s = 5.0;
  double tolerance = 0.005;
};

/// How one fixture is measured.
struct MeasureConfig {
  TimingMode mode = TimingMode::Hot;  ///< hot: batched calls per sample; cold: flush + one call
  int batch = 0;                      ///< hot mode launches per sample; 0 = auto_batch of a probe
  /// Graph mode (bench --graph): each instance's sample (the batch in hot mode, the one call in
  /// cold mode, with any delays) is captured once into a CUDA graph, after the batch probe and
  /// before the warm-up, outside every profiler step; each sample then replays it with one
  /// cudaGraphLaunch inside the op range. Hold, flush, events and the stopping rule are unchanged.
  bool graph = false;
  /// The launch is declared to synchronize with the device (BenchmarkDef::sync; nvbench's
  /// exec_tag::sync). Graph mode refuses it. It is checked like any launch (measure()): declared
  /// or not, a launch is timed without the blocking kernel when, and from when, it is seen to
  /// synchronize, so a declared and an undeclared registration of the same work get the same
  /// figures; the declaration is recorded (timing.sync_declared) and said where it did not hold.
  bool sync = false;
  bool warmup = false;  ///< warm up until steady before anything is recorded
  /// Probe one call's work signature before sampling and refuse work the events cannot see
  /// (probe_work, WorkRefused); false: bench --no-work-signature (the signature is not recorded).
  bool work_signature = true;
  WarmupConfig warmup_config;
  Schedule schedule;                         ///< wait / warmup / active profiler steps, at least
  StoppingRule::Config stopping;             ///< then until the noise target or max_time_s
  std::int64_t delay_ns = 0;                 ///< --slow-fixture
  std::function<GpuClockSample()> read_gpu;  ///< NVML snapshot; empty: not read
  double power_limit_w = 0;                  ///< NVML enforced power limit, W (0 = unknown)
  std::function<void()> check_interrupt;     ///< called before every sample; throws to stop
  Seconds now = steady_seconds();            ///< the clock of the budgets above
  Seconds cpu_now = thread_cpu_seconds();    ///< the clock of Measurement::sampling_cpu_s
};

/// What measure() found.
struct Measurement {
  FixtureTiming timing;    ///< everything events.json and summary.md report of the sampling
  SampleStats stats;       ///< of timing.samples_ns (per call)
  double warmup_s = 0;     ///< wall time of the warm-up (0 without --warmup)
  bool converged = false;  ///< the noise target was met
  /// Host CPU time of the sampling loop (recorded samples only), s: the harness's own work per
  /// sample (event records, ranges) and CUDA's waits for the stop event, which spin by default.
  double sampling_cpu_s = 0;
  /// Calls timed in the sampling loop: samples x calls per sample.
  std::int64_t calls = 0;
  /// What one call enqueues (probe_work); recorded = false with the reason when not probed.
  WorkSignature work;
  /// Graph mode: device activities one replay enqueued (equal to the calls' work); -1: not probed.
  int graph_replay_items = -1;
};

/// Measures one fixture: `launches[i]` enqueues one call of rotation copy i (one copy in hot
/// mode; cold mode uses them in turn). First every copy's setup call: one call each, unblocked,
/// then the stream synchronized (one-time work: workspaces, module loading, autotuning, outside
/// any blocked sample and any step). Then the work signature of one call (cfg.work_signature:
/// probe_work; WorkRefused for work the events cannot see, and in graph mode for a replay that
/// enqueues other work than the calls it holds). Then, with a blocking device, whether the launch
/// synchronizes (launch_synchronizes), declared (cfg.sync) or not: such a fixture is sampled
/// without the blocking kernel (timing.blocking false, timing.sync "declared" or "detected").
/// Every held eager sample after that is watched (HoldWatch): a launch that synchronizes later
/// (a cache that grows, an allocator that maps more memory) voids its sample, and the fixture's
/// sampling starts again without the blocking kernel (timing.sync_found_after: the calls timed
/// before). Records its steps in `prof` under `annotation` > `op_name`. Throws WorkRefused,
/// std::invalid_argument for graph mode with a synchronizing launch (a synchronizing call cannot
/// be captured), what timed_sample throws, and what `check_interrupt` throws.
Measurement measure(const std::vector<std::function<void()>>& launches, Profiler& prof, SampleDevice& dev,
                    const std::string& annotation, const std::string& op_name, const MeasureConfig& cfg);

/// The GPU's power state is settled unless it draws at least 95% of its power limit without the
/// power cap engaged yet (NVML SwPowerCap): then the clock is about to drop. True without NVML.
bool gpu_settled(const GpuClockSample& g, double power_limit_w);

}  // namespace xb
