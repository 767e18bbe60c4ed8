// Step metrics (see step_metrics.h).
#include "profiler/model/step_metrics.h"

#include <algorithm>

namespace xb {

StepIndex::StepIndex(const std::vector<HostRange>& ranges) {
  for (const HostRange& r : ranges) by_id_[r.id] = &r;
}

std::uint64_t StepIndex::root(std::uint64_t range_id) const {
  if (auto m = memo_.find(range_id); m != memo_.end()) return m->second;
  std::uint64_t cur = range_id;
  for (std::size_t guard = 0; guard <= by_id_.size(); ++guard) {
    auto it = by_id_.find(cur);
    if (it == by_id_.end()) {
      cur = cur == range_id ? 0 : cur;
      break;
    }
    if (it->second->parent_id == 0 || by_id_.count(it->second->parent_id) == 0) break;
    cur = it->second->parent_id;
  }
  memo_[range_id] = cur;
  return cur;
}

std::unordered_map<std::uint64_t, StepDevice> device_by_step(const Session& session, const StepIndex& index) {
  std::unordered_map<std::uint64_t, StepDevice> by_step;
  for (const DeviceActivity& a : session.device) {
    if (a.external_id == 0) continue;
    const std::uint64_t step = index.root(a.external_id);
    if (step == 0) continue;
    StepDevice& d = by_step[step];
    d.first_ns = d.count == 0 ? a.start_ns : std::min(d.first_ns, a.start_ns);
    d.last_ns = d.count == 0 ? a.end_ns : std::max(d.last_ns, a.end_ns);
    d.sum_ns += a.duration_ns();
    ++d.count;
  }
  return by_step;
}

std::vector<StepMetrics> step_metrics(const Session& session) {
  const auto by_step = device_by_step(session, StepIndex(session.ranges));
  std::vector<StepMetrics> out;
  out.reserve(session.event_timings.size());
  for (const StepTiming& t : session.event_timings) {
    StepMetrics m;
    m.fixture = t.fixture;
    m.step = t.step;
    m.range_id = t.range_id;
    m.launches = std::max(t.launches, 1);
    m.event_ns = t.event_ns;
    if (auto it = by_step.find(t.range_id); it != by_step.end()) {
      m.device_sum_ns = it->second.sum_ns;
      m.device_span_ns = it->second.last_ns - it->second.first_ns;
      m.activities = it->second.count;
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<StepMetrics> step_metrics_of(const std::vector<StepMetrics>& all, const std::string& fixture) {
  std::vector<StepMetrics> out;
  for (const StepMetrics& m : all) {
    if (m.fixture == fixture) out.push_back(m);
  }
  return out;
}

}  // namespace xb
