#include "profiler/model/profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace xb {

namespace {

class NullSource final : public ActivitySource {
 public:
  void start() override {}
  std::vector<RawRecord> stop() override { return {}; }
  std::uint64_t dropped_records() const override { return 0; }
  std::int64_t now_ns() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void push_external_id(std::uint64_t) override {}
  void pop_external_id() override {}
  void describe(SessionMeta& meta) const override { meta.activity_source = "none"; }
};

}  // namespace

std::unique_ptr<ActivitySource> make_null_source() { return std::make_unique<NullSource>(); }

ScheduleFilter filter_to_windows(std::vector<RawRecord> records,
                                 std::vector<std::pair<std::int64_t, std::int64_t>> windows) {
  std::sort(windows.begin(), windows.end());
  auto inside = [&](std::int64_t t) {
    // Last window starting at or before t.
    auto it =
        std::upper_bound(windows.begin(), windows.end(), std::make_pair(t, std::numeric_limits<std::int64_t>::max()));
    return it != windows.begin() && t <= std::prev(it)->second;
  };
  std::unordered_set<std::uint32_t> kept_correlations;
  for (const RawRecord& r : records) {
    if ((r.kind == RawKind::Runtime || r.kind == RawKind::Driver) && inside(r.start_ns)) {
      kept_correlations.insert(r.correlation_id);
    }
  }
  ScheduleFilter out;
  out.kept.reserve(records.size());
  for (RawRecord& r : records) {
    bool keep = false;
    if (r.kind == RawKind::Runtime || r.kind == RawKind::Driver) {
      keep = inside(r.start_ns);
    } else {
      keep = kept_correlations.count(r.correlation_id) != 0;
    }
    if (keep) {
      out.kept.push_back(std::move(r));
    } else {
      ++out.discarded;
    }
  }
  return out;
}

std::vector<RawRecord> attribute_api_by_time(std::vector<RawRecord> records, const std::vector<HostRange>& ranges,
                                             std::uint32_t thread_id, const std::vector<HostRange>& source_ranges,
                                             std::uint32_t external_kind) {
  if (ranges.empty()) return records;
  // The API records on the thread, by start time (delivery order is nearly that already).
  std::vector<std::size_t> api;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const RawRecord& r = records[i];
    if ((r.kind == RawKind::Runtime || r.kind == RawKind::Driver) && r.thread_id == thread_id) api.push_back(i);
  }
  std::stable_sort(api.begin(), api.end(),
                   [&](std::size_t a, std::size_t b) { return records[a].start_ns < records[b].start_ns; });
  // Sweep: ranges begin in order and nest, so the open ones form a stack whose top is the
  // innermost range holding time t once those that ended before t are popped.
  std::unordered_map<std::uint32_t, std::uint64_t> range_of;  // correlation id -> range id
  std::vector<const HostRange*> open;
  std::size_t next = 0;
  for (std::size_t i : api) {
    const std::int64_t t = records[i].start_ns;
    while (next < ranges.size() && ranges[next].start_ns <= t) {
      while (!open.empty() && open.back()->end_ns <= ranges[next].start_ns) open.pop_back();
      open.push_back(&ranges[next++]);
    }
    while (!open.empty() && open.back()->end_ns <= t) open.pop_back();
    if (!open.empty()) range_of[records[i].correlation_id] = open.back()->id;
  }
  if (range_of.empty()) return records;

  std::unordered_map<std::uint64_t, std::uint64_t> parent;  // every range's parent, both kinds
  for (const HostRange& r : ranges) parent[r.id] = r.parent_id;
  for (const HostRange& r : source_ranges) parent[r.id] = r.parent_id;
  const auto inside = [&](std::uint64_t s, std::uint64_t p) {  // s lies inside p
    for (std::size_t hops = 0; s != 0 && hops <= parent.size(); ++hops) {
      const auto it = parent.find(s);
      if (it == parent.end()) return false;
      s = it->second;
      if (s == p) return true;
    }
    return false;
  };
  std::unordered_set<std::uint32_t> tagged;  // correlation ids that already carry an external id
  for (RawRecord& r : records) {
    if (r.kind != RawKind::ExternalCorrelation || r.external_kind != external_kind) continue;
    const auto it = range_of.find(r.correlation_id);
    if (it == range_of.end()) continue;
    tagged.insert(r.correlation_id);
    if (r.external_id != it->second && !inside(r.external_id, it->second)) r.external_id = it->second;
  }
  std::vector<RawRecord> out;
  out.reserve(records.size() + range_of.size() - tagged.size());
  for (RawRecord& r : records) {
    if ((r.kind == RawKind::Runtime || r.kind == RawKind::Driver) && r.thread_id == thread_id &&
        tagged.count(r.correlation_id) == 0) {
      const auto it = range_of.find(r.correlation_id);
      if (it != range_of.end()) {
        RawRecord ext;
        ext.kind = RawKind::ExternalCorrelation;
        ext.correlation_id = r.correlation_id;
        ext.external_kind = external_kind;
        ext.external_id = it->second;
        out.push_back(std::move(ext));
        tagged.insert(r.correlation_id);
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<HostRange> filter_ranges_to_windows(std::vector<HostRange> ranges,
                                                std::vector<std::pair<std::int64_t, std::int64_t>> windows) {
  std::sort(windows.begin(), windows.end());
  // Prefix maximum of window ends: a range [s, e] overlaps some window iff, among the windows
  // starting at or before e, the latest end is >= s.
  std::vector<std::int64_t> max_end(windows.size());
  for (std::size_t i = 0; i < windows.size(); ++i) {
    max_end[i] = i == 0 ? windows[i].second : std::max(max_end[i - 1], windows[i].second);
  }
  auto overlaps = [&](const HostRange& r) {
    const auto it = std::upper_bound(windows.begin(), windows.end(),
                                     std::make_pair(r.end_ns, std::numeric_limits<std::int64_t>::max()));
    if (it == windows.begin()) return false;
    return max_end[static_cast<std::size_t>(it - windows.begin()) - 1] >= r.start_ns;
  };
  std::vector<HostRange> kept;
  std::unordered_set<std::uint64_t> ids;
  for (HostRange& r : ranges) {
    if (!overlaps(r)) continue;
    ids.insert(r.id);
    kept.push_back(std::move(r));
  }
  for (HostRange& r : kept) {
    if (r.parent_id != 0 && r.parent_id >= kSourceRangeIdBase && ids.count(r.parent_id) == 0) r.parent_id = 0;
  }
  return kept;
}

std::size_t activity_buffer_bytes(std::size_t outstanding, std::size_t buffer_bytes, std::size_t max_buffers,
                                  std::size_t overflow_buffers) {
  if (outstanding < max_buffers) return buffer_bytes;
  return outstanding < max_buffers + overflow_buffers ? kOverflowBufferBytes : 0;
}

Profiler::Profiler(std::unique_ptr<ActivitySource> source) : source_(std::move(source)) {
  if (!source_) throw std::invalid_argument("Profiler: null activity source");
  pid_ = static_cast<std::uint32_t>(::getpid());
  tid_ = static_cast<std::uint32_t>(::syscall(SYS_gettid));
}

Profiler::~Profiler() = default;

void Profiler::begin_probe() {
  probe_start_ns_ = source_->now_ns();
  if (started_) source_->begin_probe();
}

ProbeRecords Profiler::end_probe() {
  const std::int64_t end = source_->now_ns();
  ProbeRecords records;
  if (started_) {
    records = source_->end_probe();
  } else {
    records.why = "the profiler is not recording";
  }
  records.window_start_ns = probe_start_ns_;
  records.window_end_ns = end;
  records.thread_id = static_cast<std::uint32_t>(::syscall(SYS_gettid));
  return records;
}

void Profiler::start() {
  source_->start();
  started_ = true;
  window_start_ns_ = source_->now_ns();
}

RawSession Profiler::stop() {
  if (!started_) throw std::logic_error("Profiler::stop called before start");
  if (in_step_) end_step();
  RawSession session;
  session.meta.window_start_ns = window_start_ns_;
  session.meta.window_end_ns = source_->now_ns();
  std::vector<RawRecord> records = source_->stop();
  started_ = false;
  std::vector<HostRange> source_ranges = source_->take_ranges();
  records = attribute_api_by_time(std::move(records), ranges_, tid_, source_ranges, kProfilerExternalKind);
  ScheduleFilter filtered = filter_to_windows(std::move(records), windows_);
  session.records = std::move(filtered.kept);
  session.meta.discarded_by_schedule = filtered.discarded;
  session.meta.dropped_records = source_->dropped_records();
  session.meta.process_id = pid_;
  session.meta.schedule_wait = schedule_.wait;
  session.meta.schedule_warmup = schedule_.warmup;
  session.meta.schedule_active = schedule_.active;
  source_->describe(session.meta);
  session.ranges = std::move(ranges_);
  for (HostRange& r : filter_ranges_to_windows(std::move(source_ranges), windows_)) {
    session.ranges.push_back(std::move(r));
  }
  session.event_timings = std::move(timings_);
  session.fixtures = std::move(fixtures_);
  ranges_.clear();
  timings_.clear();
  fixtures_.clear();
  windows_.clear();
  return session;
}

void Profiler::begin_fixture(const Schedule& schedule) {
  if (schedule.wait < 0 || schedule.warmup < 0 || schedule.active < 1) {
    throw std::invalid_argument("schedule needs wait >= 0, warmup >= 0, active >= 1");
  }
  if (in_step_) end_step();
  schedule_ = schedule;
  fixture_step_ = -1;
}

std::uint64_t Profiler::begin_step() {
  if (in_step_) end_step();
  ++fixture_step_;
  ++step_number_;
  in_step_ = true;
  step_active_ = started_ && fixture_step_ >= schedule_.wait + schedule_.warmup && fixture_step_ < schedule_.total();
  step_range_ = 0;
  if (step_active_) {
    reserve_ranges();
    step_range_ = begin_range("ProfilerStep#" + std::to_string(step_number_), RangeCategory::UserAnnotation);
  }
  return step_range_;
}

void Profiler::end_step() {
  if (!in_step_) return;
  if (step_active_) {
    while (!open_.empty() && open_.back().id != step_range_) end_range(open_.back().id);
    const std::size_t index = open_.back().index;
    end_range(step_range_);
    windows_.emplace_back(ranges_[index].start_ns, ranges_[index].end_ns);
  }
  in_step_ = false;
  step_active_ = false;
  step_range_ = 0;
}

void Profiler::reserve_ranges() {
  // Room for kRangeHeadroom more ranges before the step starts, in memory already written once
  // (resize then shrink back), so that begin_range neither reallocates nor page-faults inside a
  // step: both would land on the launches being profiled (bench overhead). Growth stays
  // geometric, so the cost is amortized O(1) per range.
  constexpr std::size_t kRangeHeadroom = 4096;
  if (ranges_.capacity() - ranges_.size() >= kRangeHeadroom) return;
  const std::size_t n = ranges_.size();
  ranges_.reserve(std::max(2 * ranges_.capacity(), n + kRangeHeadroom));
  ranges_.resize(ranges_.capacity());
  ranges_.resize(n);
}

std::uint64_t Profiler::begin_range(const std::string& name, RangeCategory category) {
  if (!(in_step_ && step_active_)) return 0;
  HostRange range;
  range.id = next_id_++;
  const std::uint64_t source_parent = source_->innermost_range();
  range.parent_id = source_parent != 0 ? source_parent : open_.empty() ? 0 : open_.back().id;
  range.name = name;
  range.category = category;
  range.process_id = pid_;
  range.thread_id = tid_;
  range.start_ns = source_->now_ns();
  ranges_.push_back(std::move(range));
  open_.push_back({ranges_.size() - 1, ranges_.back().id});
  source_->enter_range(ranges_.back().id);
  if (mirror_) mirror_->push(name);
  return ranges_.back().id;
}

void Profiler::end_range(std::uint64_t id) {
  if (id == 0) return;
  if (open_.empty() || open_.back().id != id) {
    throw std::logic_error("Profiler::end_range: range " + std::to_string(id) + " is not the innermost open range");
  }
  if (mirror_) mirror_->pop();
  source_->exit_range();
  ranges_[open_.back().index].end_ns = source_->now_ns();
  open_.pop_back();
}

}  // namespace xb
