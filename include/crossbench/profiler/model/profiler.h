// The profiler front end: host ranges (record_function-like annotations and CPU ops), a
// wait/warmup/active step schedule, and the collection of raw activity records from an
// ActivitySource. The CUPTI source is make_cupti_source() (profiler/adapters/cupti_source.h); tests inject
// a fake one. No CUDA or CUPTI headers here.
//
// Units: nanoseconds on the activity source's clock (cuptiGetTimestamp for CUPTI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/model/raw_records.h"

namespace xb {

/// A profiler that cannot start or collect (CUPTI missing, already in use by another tool, ...).
struct ProfilerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Where activity records come from. The CUPTI adapter implements it; CPU tests fake it.
class ActivitySource {
 public:
  virtual ~ActivitySource() = default;
  /// Enables collection. Throws ProfilerError on failure.
  virtual void start() = 0;
  /// Flushes every buffer, disables collection and returns the records in delivery order.
  virtual std::vector<RawRecord> stop() = 0;
  /// Records the source lost (buffer full or refused), so far.
  virtual std::uint64_t dropped_records() const = 0;
  /// Current time on the records' clock, ns.
  virtual std::int64_t now_ns() const = 0;
  /// Pushes/pops the external id that API calls made on this thread are tagged with (a CUPTI call
  /// each: about 0.1-0.3 us per pair on an H200 host, results/h200/core-2026-12-01). The profiler
  /// does not use them for its own ranges (see enter_range); `bench overhead --breakdown` does.
  virtual void push_external_id(std::uint64_t id) = 0;
  virtual void pop_external_id() = 0;
  /// The profiler opened range `id` on the calling thread / closed its innermost one. Nothing is
  /// pushed to CUPTI: the profiler ties API records to its ranges by time when it stops
  /// (attribute_api_by_time). A source that tracks ranges (innermost_range) notes them. Must not
  /// throw. Default: nothing.
  virtual void enter_range(std::uint64_t /*id*/) {}
  virtual void exit_range() {}
  /// Fills versions and device properties into the session metadata.
  virtual void describe(SessionMeta& meta) const = 0;
  /// Host ranges the source recorded itself, taken after stop(): the CUPTI source records the
  /// NVTX push/pop ranges of the user's code (any domain but "crossbench") as user annotations,
  /// with ids from kSourceRangeIdBase up, pushed as external ids like the profiler's own. A range
  /// still open at stop() ends at the stop time. Default: none.
  virtual std::vector<HostRange> take_ranges() { return {}; }
  /// Id of the innermost range open on the calling thread as the source sees it (its own NVTX
  /// ranges and those noted by enter_range or push_external_id), 0 when it does not track them. The
  /// profiler makes it the parent of a new range, so a profiler range opened inside a user's
  /// NVTX range nests under it.
  virtual std::uint64_t innermost_range() const { return 0; }
  /// Work-signature probe (profiler/model/work_signature.h): begin_probe() marks where the records of
  /// one probed call start (and turns on what the probe needs beyond the session's kinds, CUPTI's
  /// CUDA_EVENT records); end_probe() flushes every buffer (the caller has waited until the device
  /// is idle) and returns the records delivered since, with the event records, or why it cannot
  /// (available false). can_probe() says beforehand whether it can, so that no call is made for
  /// nothing. Must not throw. Default: cannot probe.
  virtual bool can_probe() const { return false; }
  virtual void begin_probe() {}
  virtual ProbeRecords end_probe() {
    ProbeRecords p;
    p.why = "this activity source records no device activity (event-only mode)";
    return p;
  }
};

/// First id of the host ranges an ActivitySource records itself (2^40; the profiler numbers its
/// own ranges from 1, so the two never meet; below 2^53, so ids stay exact in JSON readers that
/// use doubles).
inline constexpr std::uint64_t kSourceRangeIdBase = std::uint64_t{1} << 40;

/// Mirrors each recorded host range into another tool's range API (profiler/adapters/nvtx_mirror.h: NVTX,
/// so Nsight Systems shows crossbench's ranges). push/pop are called on the profiler's thread,
/// innermost first, and must not throw.
class RangeMirror {
 public:
  virtual ~RangeMirror() = default;
  virtual void push(const std::string& name) noexcept = 0;
  virtual void pop() noexcept = 0;
};

/// torch.profiler.schedule-like step schedule: per fixture, `wait` steps are not recorded,
/// `warmup` steps run with collection on but are discarded, `active` steps are recorded, each
/// inside a "ProfilerStep#N" user annotation.
struct Schedule {
  int wait = 1;
  int warmup = 1;
  int active = 5;
  int total() const { return wait + warmup + active; }
};

/// Result of filtering records to the active steps.
struct ScheduleFilter {
  std::vector<RawRecord> kept;
  std::uint64_t discarded = 0;
};

/// Keeps API records that start inside one of `windows` ([start_ns, end_ns] pairs), and the
/// device, synchronization and external-correlation records whose correlation id belongs to a
/// kept API record; everything else is counted as discarded. Windows need not be sorted.
ScheduleFilter filter_to_windows(std::vector<RawRecord> records,
                                 std::vector<std::pair<std::int64_t, std::int64_t>> windows);

/// Ties the CUDA runtime and driver API records made on `thread_id` to the innermost of the
/// profiler's `ranges` (all opened on that thread, properly nested, in begin order) whose interval
/// [start_ns, end_ns) holds the record's start_ns: the attribution CUPTI external ids would give
/// if each range's id were pushed, without a CUPTI call per range (issue 19). Both sides use
/// CUPTI's clock (ActivitySource::now_ns): a range's start is read before its first call starts
/// and its end after its last call returns, so a call that starts at a range's end came after it.
/// For a record tied to range P:
///  - with no ExternalCorrelation record of `external_kind` for its correlation id, one is
///    inserted just before the API record (where CUPTI delivers it);
///  - with one naming range S (a source range, e.g. the user's NVTX range pushed as an external
///    id), S is kept when it lies inside P (P is among its ancestors in `ranges` and
///    `source_ranges`), else it is replaced by P (P was opened inside S).
/// Records on other threads, and records outside every range, are left as they are. Returns the
/// records in their order, with the inserted ones.
std::vector<RawRecord> attribute_api_by_time(std::vector<RawRecord> records, const std::vector<HostRange>& ranges,
                                             std::uint32_t thread_id, const std::vector<HostRange>& source_ranges,
                                             std::uint32_t external_kind);

/// The external correlation kind the profiler's and the CUPTI source's ids use
/// (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0).
inline constexpr std::uint32_t kProfilerExternalKind = 3;

/// Keeps the source-recorded ranges (ActivitySource::take_ranges) that overlap one of `windows`
/// (closed intervals); a kept range whose parent was dropped gets parent_id 0. Order is kept.
std::vector<HostRange> filter_ranges_to_windows(std::vector<HostRange> ranges,
                                                std::vector<std::pair<std::int64_t, std::int64_t>> windows);

/// Collects one session. Not thread-safe: ranges and steps are opened from one host thread.
class Profiler {
 public:
  /// Takes ownership of the source. Throws std::invalid_argument for a null source.
  explicit Profiler(std::unique_ptr<ActivitySource> source);
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  /// Starts collection and the recording window. Throws ProfilerError.
  void start();
  /// Ends the window, flushes and returns the session, filtered to the active steps.
  RawSession stop();

  /// Starts the schedule of a new fixture (step counting restarts its phases; step numbers
  /// keep increasing across fixtures, so each ProfilerStep#N name is unique in a session).
  void begin_fixture(const Schedule& schedule);
  /// Begins the next step. Returns the ProfilerStep range id when the step is active, else 0.
  std::uint64_t begin_step();
  /// Ends the current step (closes its ProfilerStep range when active).
  void end_step();
  /// Number of the current (or last) step.
  std::int64_t step_number() const { return step_number_; }
  /// Whether the current step is active (recorded).
  bool step_active() const { return in_step_ && step_active_; }

  /// Opens a host range; recorded only inside an active step (returns 0 otherwise, and the
  /// matching end_range(0) is a no-op). API calls made inside it on this thread are tied to it
  /// by time at stop() (attribute_api_by_time), as a CUPTI external id would tie them.
  std::uint64_t begin_range(const std::string& name, RangeCategory category);
  /// Closes the innermost open range; `id` must be the value begin_range returned.
  /// Throws std::logic_error when ranges are not closed innermost-first.
  void end_range(std::uint64_t id);

  /// Attaches the client's record of a fixture (exported verbatim) and cudaEvent step timings to
  /// the session.
  void add_fixture(FixtureBlock fixture) { fixtures_.push_back(std::move(fixture)); }
  void add_step_timing(StepTiming timing) { timings_.push_back(std::move(timing)); }

  std::int64_t now_ns() const { return source_->now_ns(); }

  /// The records of the call that runs between begin_probe() and end_probe() on this thread, for
  /// its work signature (profiler/model/work_signature.h derive_work_signature): between them the caller
  /// records the probe's marker events (SampleDevice::probe_begin / probe_end), makes the call and
  /// waits until the device is idle. Outside any step; never throws: a source that cannot probe
  /// gives available = false and why.
  void begin_probe();
  ProbeRecords end_probe();
  /// Between start() and stop().
  bool recording() const { return started_; }
  /// Recording, with a source that can probe a call's work (ActivitySource::can_probe).
  bool can_probe() const { return started_ && source_->can_probe(); }
  const Schedule& schedule() const { return schedule_; }

  /// Mirrors every recorded range from now on (e.g. make_nvtx_mirror()); nullptr turns it off.
  void set_mirror(std::unique_ptr<RangeMirror> mirror) { mirror_ = std::move(mirror); }

 private:
  struct Open {
    std::size_t index;  // into ranges_
    std::uint64_t id;
  };
  void reserve_ranges();
  std::unique_ptr<ActivitySource> source_;
  std::unique_ptr<RangeMirror> mirror_;
  Schedule schedule_;
  int fixture_step_ = -1;
  std::int64_t step_number_ = -1;
  bool in_step_ = false;
  bool step_active_ = false;
  bool started_ = false;
  std::uint64_t step_range_ = 0;
  std::uint64_t next_id_ = 1;
  std::vector<Open> open_;
  std::vector<HostRange> ranges_;
  std::vector<std::pair<std::int64_t, std::int64_t>> windows_;
  std::vector<StepTiming> timings_;
  std::vector<FixtureBlock> fixtures_;
  std::int64_t window_start_ns_ = 0;
  std::int64_t probe_start_ns_ = 0;
  std::uint32_t pid_ = 0;
  std::uint32_t tid_ = 0;
};

/// RAII host range: `ScopedRange r(prof, "matmul", RangeCategory::UserAnnotation);`
class ScopedRange {
 public:
  ScopedRange(Profiler& profiler, const std::string& name, RangeCategory category)
      : profiler_(profiler), id_(profiler.begin_range(name, category)) {}
  ~ScopedRange() { profiler_.end_range(id_); }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
  Profiler& profiler_;
  std::uint64_t id_;
};

/// Event-only mode's source: no activity records, no external ids, timestamps from
/// std::chrono::steady_clock (ns); describe() sets meta.activity_source = "none". Never throws.
std::unique_ptr<ActivitySource> make_null_source();

/// Activity kinds a CUPTI source enables, as bits. bench always records kCuptiAllKinds;
/// `bench overhead --breakdown` times subsets to show what each costs on the host.
enum CuptiKindBits : unsigned {
  kCuptiKernel = 1u << 0,    ///< CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
  kCuptiMemcpy = 1u << 1,    ///< CUPTI_ACTIVITY_KIND_MEMCPY
  kCuptiMemset = 1u << 2,    ///< CUPTI_ACTIVITY_KIND_MEMSET
  kCuptiRuntime = 1u << 3,   ///< CUPTI_ACTIVITY_KIND_RUNTIME
  kCuptiDriver = 1u << 4,    ///< CUPTI_ACTIVITY_KIND_DRIVER
  kCuptiSync = 1u << 5,      ///< CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
  kCuptiExternal = 1u << 6,  ///< CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION
  kCuptiNvtx = 1u << 7,      ///< the NVTX callback subscription (user ranges), not an activity kind
  kCuptiAllKinds = (1u << 8) - 1,
};

/// The size of the next activity buffer a CUPTI source hands out, bytes, with `outstanding`
/// buffers not yet given back; 0: none (CUPTI then drops records and counts them). The first
/// `max_buffers` are `buffer_bytes`; past them, kOverflowBufferBytes each, up to
/// `overflow_buffers` more. CUPTI keeps an activity buffer per host thread
/// (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, its default) until a flush, so a launch that
/// starts a thread per call asks for one buffer per call: 2,800 in one fixture's recorded steps
/// outran 256 large ones on the H200 (results/h200/user-patterns-2026-12-04).
std::size_t activity_buffer_bytes(std::size_t outstanding, std::size_t buffer_bytes, std::size_t max_buffers,
                                  std::size_t overflow_buffers);
inline constexpr std::size_t kOverflowBufferBytes = 64u << 10;
inline constexpr std::size_t kOverflowBuffers = 16384;  ///< 1 GiB of them at most

}  // namespace xb
