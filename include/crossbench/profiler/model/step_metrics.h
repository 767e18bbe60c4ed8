// Step metrics: for each active profiler step of a session, what the harness timed (the cudaEvent
// interval and its number of calls) and what CUPTI recorded inside the step. The one place where
// "which step does this record belong to" and "device time per call" are computed; summary.md,
// the sweep and bench ab read them from here. (The validator derives the same figures from the
// exported files on its own: it is the independent check of these numbers.)
//
// Units: ns. A step's device activities are those whose launch was made inside the step's
// ProfilerStep range or any range nested in it (the activity's external id).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/model/event_model.h"

namespace xb {

/// The outermost enclosing range of a range id: the ProfilerStep of a launch's innermost range.
class StepIndex {
 public:
  explicit StepIndex(const std::vector<HostRange>& ranges);
  /// Outermost range enclosing `range_id` (itself when it has no parent); 0 for an unknown id.
  std::uint64_t root(std::uint64_t range_id) const;

 private:
  std::unordered_map<std::uint64_t, const HostRange*> by_id_;
  mutable std::unordered_map<std::uint64_t, std::uint64_t> memo_;
};

/// The device work launched inside one step (any ProfilerStep range, recorded with event times
/// or not, e.g. the sweep's eager window): ns.
struct StepDevice {
  std::int64_t sum_ns = 0;    ///< sum of the kernel, memcpy and memset durations
  std::int64_t first_ns = 0;  ///< earliest start
  std::int64_t last_ns = 0;   ///< latest end
  std::size_t count = 0;      ///< device activities
};

/// Per outermost range (step) id: the device work whose launch lies inside it. Activities without
/// an external id, or whose range is unknown, belong to no step.
std::unordered_map<std::uint64_t, StepDevice> device_by_step(const Session& session, const StepIndex& index);

/// One active step (a StepTiming) with the device work recorded inside it.
struct StepMetrics {
  std::string fixture;
  std::int64_t step = 0;            ///< ProfilerStep number
  std::uint64_t range_id = 0;       ///< the ProfilerStep range
  int launches = 1;                 ///< calls between the events (hot mode: the batch)
  std::int64_t event_ns = 0;        ///< cudaEvent interval of the whole step
  std::int64_t device_sum_ns = 0;   ///< sum of the step's kernel, memcpy and memset durations
  std::int64_t device_span_ns = 0;  ///< first activity start to last activity end (0: no activity)
  std::size_t activities = 0;       ///< device activities in the step
  double event_per_call_ns() const { return static_cast<double>(event_ns) / launches; }
  double device_per_call_ns() const { return static_cast<double>(device_sum_ns) / launches; }
  double span_per_call_ns() const { return static_cast<double>(device_span_ns) / launches; }
};

/// The metrics of every StepTiming of `session`, in its order. `launches` below 1 counts as 1.
std::vector<StepMetrics> step_metrics(const Session& session);

/// The metrics of `fixture`'s steps only.
std::vector<StepMetrics> step_metrics_of(const std::vector<StepMetrics>& all, const std::string& fixture);

}  // namespace xb
