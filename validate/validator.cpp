// The validator (validate/validator.h): read the files once into compact records
// (validate/trace_reader.h, table_reader.h, events_reader.h), index them, then run the named
// checks. Every index is a flat array or a dense id map, so a million-kernel session validates in
// a few seconds on one core (README, "Performance").
#include "validate/validator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "profiler/atomic_file.h"
#include "profiler/session_io.h"
#include "profiler/stats.h"
#include "profiler/units.h"
#include "validate/events_reader.h"
#include "validate/table_reader.h"
#include "validate/trace_reader.h"

namespace xb {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Status, report

const char* to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::Passed: return "passed";
    case CheckStatus::Failed: return "failed";
    case CheckStatus::NotRun: return "not_run";
    case CheckStatus::Noisy: return "noisy";
  }
  return "unknown";
}

CheckStatus check_status_from_string(const std::string& name) {
  if (name == "passed") return CheckStatus::Passed;
  if (name == "failed") return CheckStatus::Failed;
  if (name == "not_run") return CheckStatus::NotRun;
  if (name == "noisy") return CheckStatus::Noisy;
  throw std::invalid_argument("unknown check status: " + name);
}

const std::vector<std::string>& all_checks() {
  static const std::vector<std::string> names = {
      checks::kKernelStats,      checks::kTableRows,          checks::kTableTotals,    checks::kAnnotationSpan,
      checks::kAttribution,      checks::kFlows,              checks::kNoDroppedRecords, checks::kDurationsPositive,
      checks::kStreamOverlap,    checks::kLaunchBeforeKernel, checks::kRecordingWindow, checks::kLaneOrder,
      checks::kEventVsCupti,     checks::kVerified};
  return names;
}

bool ValidationReport::passed() const {
  return std::none_of(checks.begin(), checks.end(),
                      [](const CheckResult& r) { return r.status == CheckStatus::Failed; });
}

CheckCounts ValidationReport::counts() const {
  CheckCounts c;
  for (const auto& r : checks) {
    switch (r.status) {
      case CheckStatus::Passed: ++c.passed; break;
      case CheckStatus::Failed: ++c.failed; break;
      case CheckStatus::NotRun: ++c.not_run; break;
      case CheckStatus::Noisy: ++c.noisy; break;
    }
  }
  return c;
}

std::vector<const CheckResult*> ValidationReport::results_of(const std::string& check) const {
  std::vector<const CheckResult*> out;
  for (const auto& r : checks)
    if (r.check == check) out.push_back(&r);
  return out;
}

CheckStatus ValidationReport::status_of(const std::string& check) const {
  bool any_pass = false, any_noisy = false;
  for (const auto& r : checks) {
    if (r.check != check) continue;
    if (r.status == CheckStatus::Failed) return CheckStatus::Failed;
    if (r.status == CheckStatus::Passed) any_pass = true;
    if (r.status == CheckStatus::Noisy) any_noisy = true;
  }
  return any_noisy ? CheckStatus::Noisy : any_pass ? CheckStatus::Passed : CheckStatus::NotRun;
}

namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFFu;

/// Phase timing on stderr when XB_VALIDATE_TIMING is set (for the benchmark's diagnosis).
class Phase {
 public:
  explicit Phase(const char* name) : name_(name), on_(std::getenv("XB_VALIDATE_TIMING") != nullptr), t0_(std::chrono::steady_clock::now()) {}
  ~Phase() {
    if (on_)
      std::fprintf(stderr, "validate: %-24s %8.3f s\n", name_,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
  }
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  const char* name_;
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};

std::string num(double d) { return fmt::format("{}", d); }

/// ns as microseconds with three decimals ("591.005 us"), fractional ns kept.
std::string us(double ns) {
  if (std::fabs(ns - std::round(ns)) < 1e-9) return format_us(static_cast<std::int64_t>(std::llround(ns))) + " us";
  return fmt::format("{:.3f} us", ns / 1000.0);
}

// ---------------------------------------------------------------------------------------------
// Id maps: correlation ids and External ids are dense integers in practice (CUPTI and PyTorch
// count them up), so a flat array indexed by id - min is the common case; sparse ids fall back to
// a sorted array.

class IdIndex {
 public:
  /// Builds from (id, value) pairs in file order; the first value of an id wins.
  void build(std::vector<std::pair<std::uint64_t, std::uint32_t>> items) {
    build_from(items.size(), [&](std::size_t i) { return items[i]; }, &items);
  }
  /// Same, with the pairs produced by get(i) for i < n (no intermediate array when dense).
  template <class Get>
  void build_from(std::size_t n, Get&& get, std::vector<std::pair<std::uint64_t, std::uint32_t>>* owned = nullptr) {
    if (n == 0) return;
    std::uint64_t lo = get(0).first, hi = lo;
    for (std::size_t i = 1; i < n; ++i) {
      const std::uint64_t id = get(i).first;
      lo = std::min(lo, id);
      hi = std::max(hi, id);
    }
    build_from(n, lo, hi, get, owned);
  }
  /// Same, with the smallest and largest id known.
  template <class Get>
  void build_from(std::size_t n, std::uint64_t lo, std::uint64_t hi, Get&& get,
                  std::vector<std::pair<std::uint64_t, std::uint32_t>>* owned = nullptr) {
    n_ = n;
    if (n == 0) return;
    if (hi - lo < 4 * static_cast<std::uint64_t>(n) + 1024) {
      dense_ = true;
      base_ = lo;
      first_.assign(static_cast<std::size_t>(hi - lo + 1), kNone);
      count_.assign(first_.size(), 0);
      for (std::size_t i = 0; i < n; ++i) {
        const auto [id, v] = get(i);
        const std::size_t k = static_cast<std::size_t>(id - lo);
        if (count_[k] == 0) first_[k] = v;
        if (count_[k] != 255) ++count_[k];
      }
    } else {
      dense_ = false;
      std::vector<Item> items;
      if (owned) {
        items = std::move(*owned);
      } else {
        items.reserve(n);
        for (std::size_t i = 0; i < n; ++i) items.push_back(get(i));
      }
      std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.first < b.first; });
      sorted_ = std::move(items);
    }
  }
  std::uint32_t count(std::uint64_t id) const {
    if (dense_) {
      if (id < base_ || id - base_ >= first_.size()) return 0;
      return count_[static_cast<std::size_t>(id - base_)];  // 255 means "255 or more"
    }
    auto [a, b] = range(id);
    return static_cast<std::uint32_t>(b - a);
  }
  std::uint32_t first(std::uint64_t id) const {
    if (dense_) {
      if (id < base_ || id - base_ >= first_.size()) return kNone;
      return first_[static_cast<std::size_t>(id - base_)];
    }
    auto [a, b] = range(id);
    return a == b ? kNone : a->second;
  }
  /// The value when exactly one item has `id`, else kNone.
  std::uint32_t only(std::uint64_t id) const { return count(id) == 1 ? first(id) : kNone; }
  /// All values of `id` (sparse: in file order; dense: only the first is kept, so use with
  /// count() <= 1 or where the first is what matters).
  template <class F>
  void each(std::uint64_t id, F&& f) const {
    if (dense_) {
      if (std::uint32_t v = first(id); v != kNone) f(v);
      return;
    }
    auto [a, b] = range(id);
    for (auto it = a; it != b; ++it) f(it->second);
  }
  std::size_t size() const { return n_; }

 private:
  using Item = std::pair<std::uint64_t, std::uint32_t>;
  std::pair<std::vector<Item>::const_iterator, std::vector<Item>::const_iterator> range(std::uint64_t id) const {
    auto a = std::lower_bound(sorted_.begin(), sorted_.end(), id, [](const Item& x, std::uint64_t v) { return x.first < v; });
    auto b = a;
    while (b != sorted_.end() && b->first == id) ++b;
    return {a, b};
  }
  bool dense_ = true;
  std::uint64_t base_ = 0;
  std::size_t n_ = 0;
  std::vector<std::uint32_t> first_;
  std::vector<std::uint8_t> count_;  ///< saturates at 255
  std::vector<Item> sorted_;
};

// ---------------------------------------------------------------------------------------------
// One trace, indexed

struct View {
  const TraceData* t = nullptr;
  std::vector<std::uint32_t> dev, api, rng, span, sync;  // event indices by role
  IdIndex dev_corr, api_corr, rng_ext, xcorr;             // xcorr: correlation -> index in t->ext_corr
  std::vector<std::uint32_t> parent;                      // per event: parent range's event index (ranges)
  std::string parent_source;

  const TraceEvent& ev(std::uint32_t i) const { return t->events[i]; }
  const std::string& file() const { return t->file; }
  bool has_flows() const { return !t->flows.empty(); }
};

void index_view(View& v, const TraceData& t) {
  v.t = &t;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t dlo = kMax, dhi = 0, alo = kMax, ahi = 0;
  for (std::uint32_t i = 0; i < t.events.size(); ++i) {
    const TraceEvent& e = t.events[i];
    if (is_device(e.cat)) {
      v.dev.push_back(i);
      dlo = std::min(dlo, e.correlation);
      dhi = std::max(dhi, e.correlation);
    } else if (is_api(e.cat)) {
      v.api.push_back(i);
      alo = std::min(alo, e.correlation);
      ahi = std::max(ahi, e.correlation);
    } else if (is_range(e.cat)) {
      v.rng.push_back(i);
    } else if (e.cat == TraceCat::GpuUserAnnotation) {
      v.span.push_back(i);
    } else {
      v.sync.push_back(i);
    }
  }
  const auto by_corr = [&](const std::vector<std::uint32_t>& idx) {
    return [&t, &idx](std::size_t k) { return std::make_pair(t.events[idx[k]].correlation, idx[k]); };
  };
  v.dev_corr.build_from(v.dev.size(), dlo, dhi, by_corr(v.dev));
  v.api_corr.build_from(v.api.size(), alo, ahi, by_corr(v.api));
  std::vector<std::uint32_t> with_ext;
  with_ext.reserve(v.rng.size());
  for (std::uint32_t i : v.rng)
    if (t.events[i].has(TraceEvent::kHasExternal) && t.events[i].external_id != 0) with_ext.push_back(i);
  v.rng_ext.build_from(with_ext.size(), [&](std::size_t k) { return std::make_pair(t.events[with_ext[k]].external_id, with_ext[k]); });
  if (t.has_ext_corr)
    v.xcorr.build_from(t.ext_corr.size(), [&](std::size_t k) { return std::make_pair(t.ext_corr[k].first, static_cast<std::uint32_t>(k)); });
}

/// The External id a trace gives correlation `c` (the host range its API call was made in):
/// externalCorrelations when the trace has them, else the API call's "External id". `known` is
/// false when the trace says nothing; `ambiguous` when externalCorrelations name several ids.
std::uint64_t corr_ext(const View& v, std::uint64_t c, bool& known, bool& ambiguous) {
  known = false;
  ambiguous = false;
  if (v.t->has_ext_corr) {
    std::uint64_t first = 0;
    bool any = false;
    if (v.xcorr.count(c) > 1) {
      // Dense maps keep the first only: scan for distinct values (rare).
      for (const auto& [cc, x] : v.t->ext_corr) {
        if (cc != c) continue;
        if (!any) first = x;
        else if (x != first) ambiguous = true;
        any = true;
      }
    } else if (std::uint32_t i = v.xcorr.first(c); i != kNone) {
      first = v.t->ext_corr[i].second;
      any = true;
    }
    if (any) {
      known = true;
      return first;
    }
    known = true;  // the map exists and has no entry: no host range
    return 0;
  }
  const std::uint32_t a = v.api_corr.only(c);
  if (a != kNone && v.ev(a).has(TraceEvent::kHasExternal)) {
    known = true;
    return v.ev(a).external_id;
  }
  return 0;
}

/// The host range (event index) a device activity is attributed to, through its correlation id;
/// its own "External id" only when the trace has no map for the correlation. kNone when none.
std::uint32_t attributed_range(const View& v, const TraceEvent& d) {
  bool known = false, amb = false;
  std::uint64_t x = corr_ext(v, d.correlation, known, amb);
  if (!known && d.has(TraceEvent::kHasExternal)) x = d.external_id;
  if (x == 0) return kNone;
  return v.rng_ext.first(x);
}

/// The host range an API call was made in (kNone when none or unknown).
std::uint32_t api_range(const View& v, const TraceEvent& a) {
  if (a.has(TraceEvent::kHasExternal) && !v.t->has_ext_corr) return a.external_id ? v.rng_ext.first(a.external_id) : kNone;
  bool known = false, amb = false;
  const std::uint64_t x = corr_ext(v, a.correlation, known, amb);
  return x ? v.rng_ext.first(x) : kNone;
}

/// Range parents: "Parent id" args when the trace has them, else the other trace's (same
/// External ids), else the innermost enclosing range on the same lane by time.
void build_parents(View& v, const View* other) {
  const TraceData& t = *v.t;
  v.parent.assign(t.events.size(), kNone);
  const bool own = std::any_of(v.rng.begin(), v.rng.end(), [&](std::uint32_t i) { return v.ev(i).has(TraceEvent::kHasParent); });
  const bool theirs = other && std::any_of(other->rng.begin(), other->rng.end(),
                                           [&](std::uint32_t i) { return other->ev(i).has(TraceEvent::kHasParent); });
  if (own || theirs) {
    const View& src = own ? v : *other;
    for (std::uint32_t i : v.rng) {
      const TraceEvent& r = v.ev(i);
      if (!r.has(TraceEvent::kHasExternal) || r.external_id == 0) continue;
      std::uint32_t j = own ? i : src.rng_ext.first(r.external_id);
      if (j == kNone) continue;
      const TraceEvent& s = src.ev(j);
      if (!s.has(TraceEvent::kHasParent) || s.parent_id() == 0 || s.parent_id() == r.external_id) continue;
      v.parent[i] = v.rng_ext.first(s.parent_id());
    }
    v.parent_source = own ? "\"Parent id\" args" : "\"Parent id\" args of " + other->file();
    return;
  }
  std::vector<std::uint32_t> sorted(v.rng);
  std::sort(sorted.begin(), sorted.end(), [&](std::uint32_t a, std::uint32_t b) {
    const TraceEvent &x = v.ev(a), &y = v.ev(b);
    if (x.lane != y.lane) return x.lane < y.lane;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.end_ns() != y.end_ns()) return x.end_ns() > y.end_ns();
    return a < b;
  });
  std::vector<std::uint32_t> stack;
  for (std::uint32_t i : sorted) {
    const TraceEvent& r = v.ev(i);
    while (!stack.empty() && (v.ev(stack.back()).lane != r.lane || v.ev(stack.back()).end_ns() < r.end_ns())) stack.pop_back();
    v.parent[i] = stack.empty() ? kNone : stack.back();
    stack.push_back(i);
  }
  v.parent_source = "time containment on each thread";
}

/// Walks a range and its ancestors (guarding against Parent id cycles).
template <class F>
void for_ancestors(const View& v, std::uint32_t r, F&& f) {
  for (int guard = 0; r != kNone && guard < 512; ++guard) {
    f(r);
    r = v.parent[r];
  }
}

// ---------------------------------------------------------------------------------------------
// What the trace implies for each table row

/// Row key: (kind, display name); kind is the TraceCat of the events it aggregates.
using RowKey = std::pair<TraceCat, std::uint32_t>;
struct RowKeyHash {
  std::size_t operator()(const RowKey& k) const {
    return std::hash<std::uint64_t>()((static_cast<std::uint64_t>(k.first) << 32) | k.second);
  }
};

struct Expected {
  std::int64_t calls = 0;
  std::int64_t self_cpu = 0, cpu_total = 0, self_cuda = 0, cuda_total = 0;
};

/// Device-work spans of one annotation instance on one lane.
struct SpanAcc {
  std::uint32_t range, lane;
  std::int64_t first, last;
};

struct Derived {
  std::unordered_map<RowKey, Expected, RowKeyHash> rows;  ///< by (kind, display name)
  std::vector<std::uint32_t> disp;                         ///< name id -> display name id
  /// Per annotation display name: device time under it (each activity once), its instances'
  /// spans (first start to last end per lane) and the device time launched directly in it.
  struct Annot {
    std::int64_t kernels = 0;        ///< device time in the subtree of its ranges (each activity once)
    std::int64_t spans = 0;          ///< spans over that device time, per range and lane
    std::int64_t direct = 0;         ///< device time launched directly in its ranges
    std::int64_t inner_kernels = 0;  ///< device time whose innermost annotation it is (Kineto)
    std::int64_t inner_spans = 0;    ///< Kineto's spans: over that device time, per range and lane
    std::int64_t n_spans = 0, n_inner = 0;
  };
  std::vector<Annot> annot;          ///< by display name id
  std::vector<SpanAcc> spans;        ///< kernel-derived spans per (annotation range, lane), subtree
  std::vector<SpanAcc> inner_spans;  ///< same, innermost annotation only (Kineto's)
  std::size_t unattributed = 0;  ///< device activities with no host range
  /// Row keys of single "ProfilerStep#N" ranges: kept so that a table listing steps one by one
  /// matches too, but not required (PyTorch and crossbench merge them into "ProfilerStep*").
  std::set<RowKey> aliases;
  /// parent display-name links of host rows: child key -> set of parent keys.
  std::unordered_map<RowKey, std::set<RowKey>, RowKeyHash> parents;
};

bool is_profiler_step(const std::string& s) {
  constexpr std::string_view kStep = "ProfilerStep#";
  return s.size() > kStep.size() && s.compare(0, kStep.size(), kStep) == 0 &&
         s.find_first_not_of("0123456789", kStep.size()) == std::string::npos;
}

Derived derive(const View& v, NameTable& names) {
  Derived d;
  const std::uint32_t step_row = names.intern("ProfilerStep*");
  d.disp.resize(names.size());
  for (std::uint32_t i = 0; i < d.disp.size(); ++i) d.disp[i] = is_profiler_step(names.str(i)) ? step_row : i;
  const auto disp = [&](std::uint32_t name) { return name < d.disp.size() ? d.disp[name] : name; };
  d.annot.resize(names.size());

  /// Row accumulator with a one-entry cache (consecutive events mostly share a row).
  RowKey last_key{TraceCat::Sync, kNone};
  Expected* last_row = nullptr;
  const auto row = [&](TraceCat cat, std::uint32_t name) -> Expected& {
    const RowKey k{cat, disp(name)};
    if (!last_row || k != last_key) {
      last_row = &d.rows[k];
      last_key = k;
    }
    return *last_row;
  };

  // Per range (by its position in v.rng): durations of direct children, device time.
  const std::size_t nr = v.rng.size();
  std::vector<std::uint32_t> slot(v.t->events.size(), kNone);
  for (std::uint32_t k = 0; k < nr; ++k) slot[v.rng[k]] = k;
  std::vector<std::int64_t> child(nr, 0), self_cuda(nr, 0), cuda_total(nr, 0);
  for (std::uint32_t i : v.rng)
    if (v.parent[i] != kNone) child[slot[v.parent[i]]] += v.ev(i).dur_ns;
  for (std::uint32_t i : v.api) {
    const TraceEvent& a = v.ev(i);
    const std::uint32_t r = api_range(v, a);
    if (r != kNone) child[slot[r]] += a.dur_ns;
    Expected& e = row(a.cat, a.name);
    ++e.calls;
    e.self_cpu += a.dur_ns;
    e.cpu_total += a.dur_ns;
  }
  // Device activities: rows, Self CUDA of their range, CUDA total up the tree, annotation spans
  // (every enclosing annotation, and the innermost one only). Consecutive activities mostly
  // share their range and lane, so its ancestor chain and span slots are kept between them.
  std::uint32_t last_range = kNone, last_lane = kNone;
  std::vector<std::uint32_t> chain;        // ancestor slots of last_range
  std::vector<std::uint32_t> chain_annot;  // distinct annotation display names among them
  std::uint32_t inner_name = kNone;        // innermost annotation's display name
  std::vector<std::size_t> span_slots;
  std::size_t inner_slot = static_cast<std::size_t>(-1);
  std::unordered_map<std::uint64_t, std::size_t> slot_of, inner_of;
  for (std::uint32_t i : v.dev) {
    const TraceEvent& a = v.ev(i);
    Expected& e = row(a.cat, a.name);
    ++e.calls;
    e.self_cuda += a.dur_ns;
    e.cuda_total += a.dur_ns;
    const std::uint32_t r = attributed_range(v, a);
    if (r == kNone) {
      ++d.unattributed;
      continue;
    }
    if (r != last_range || a.lane != last_lane) {
      chain.clear();
      chain_annot.clear();
      span_slots.clear();
      inner_slot = static_cast<std::size_t>(-1);
      inner_name = kNone;
      for_ancestors(v, r, [&](std::uint32_t x) {
        chain.push_back(slot[x]);
        const TraceEvent& rx = v.ev(x);
        if (rx.cat != TraceCat::UserAnnotation) return;
        const std::uint32_t dn = disp(rx.name);
        if (std::find(chain_annot.begin(), chain_annot.end(), dn) == chain_annot.end()) chain_annot.push_back(dn);
        const std::uint64_t key = (static_cast<std::uint64_t>(x) << 32) | a.lane;
        auto [it, fresh] = slot_of.emplace(key, d.spans.size());
        if (fresh) d.spans.push_back({x, a.lane, a.start_ns, a.end_ns()});
        span_slots.push_back(it->second);
        if (inner_name == kNone) {
          inner_name = dn;
          auto [jt, jfresh] = inner_of.emplace(key, d.inner_spans.size());
          if (jfresh) d.inner_spans.push_back({x, a.lane, a.start_ns, a.end_ns()});
          inner_slot = jt->second;
        }
      });
      last_range = r;
      last_lane = a.lane;
    }
    self_cuda[chain[0]] += a.dur_ns;
    if (v.ev(r).cat == TraceCat::UserAnnotation) d.annot[disp(v.ev(r).name)].direct += a.dur_ns;
    for (std::uint32_t x : chain) cuda_total[x] += a.dur_ns;
    for (std::uint32_t dn : chain_annot) d.annot[dn].kernels += a.dur_ns;
    if (inner_name != kNone) d.annot[inner_name].inner_kernels += a.dur_ns;
    for (std::size_t s : span_slots) {
      d.spans[s].first = std::min(d.spans[s].first, a.start_ns);
      d.spans[s].last = std::max(d.spans[s].last, a.end_ns());
    }
    if (inner_slot != static_cast<std::size_t>(-1)) {
      d.inner_spans[inner_slot].first = std::min(d.inner_spans[inner_slot].first, a.start_ns);
      d.inner_spans[inner_slot].last = std::max(d.inner_spans[inner_slot].last, a.end_ns());
    }
  }
  for (const SpanAcc& sp : d.spans) {
    Derived::Annot& an = d.annot[disp(v.ev(sp.range).name)];
    an.spans += sp.last - sp.first;
    ++an.n_spans;
  }
  // PyTorch's table shows the innermost annotation's spans as a device row.
  for (const SpanAcc& sp : d.inner_spans) {
    Derived::Annot& an = d.annot[disp(v.ev(sp.range).name)];
    an.inner_spans += sp.last - sp.first;
    ++an.n_inner;
    Expected& e = d.rows[{TraceCat::GpuUserAnnotation, disp(v.ev(sp.range).name)}];
    ++e.calls;
    e.self_cuda += sp.last - sp.first;
    e.cuda_total += sp.last - sp.first;
  }
  for (std::uint32_t k = 0; k < nr; ++k) {
    const std::uint32_t i = v.rng[k];
    const TraceEvent& r = v.ev(i);
    const RowKey key{r.cat, disp(r.name)};
    const bool step = key.second != r.name;
    for (int pass = 0; pass < (step ? 2 : 1); ++pass) {
      const RowKey rk = pass == 0 ? key : RowKey{r.cat, r.name};
      if (pass == 1) d.aliases.insert(rk);
      Expected& e = d.rows[rk];
      ++e.calls;
      e.cpu_total += r.dur_ns;
      e.self_cpu += std::max<std::int64_t>(0, r.dur_ns - child[k]);  // clamped, as crossbench's table
      e.self_cuda += self_cuda[k];
      e.cuda_total += cuda_total[k];
    }
    if (v.parent[i] != kNone) {
      const TraceEvent& p = v.ev(v.parent[i]);
      d.parents[key].insert({p.cat, disp(p.name)});
    } else {
      d.parents[key].insert({TraceCat::Sync, kNone});  // a top-level instance: no single parent
    }
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// Table rows matched to the trace

struct RowMatch {
  bool matched = false;
  bool ambiguous = false;
  RowKey key{TraceCat::Kernel, kNone};
  std::string note;  ///< why unmatched/ambiguous, or how a cut name was matched
};

bool kind_from_string(const std::string& k, TraceCat& out) {
  static const std::pair<const char*, TraceCat> kinds[] = {
      {"kernel", TraceCat::Kernel},         {"gpu_memcpy", TraceCat::Memcpy},   {"gpu_memset", TraceCat::Memset},
      {"cuda_runtime", TraceCat::Runtime},  {"cuda_driver", TraceCat::Driver},  {"user_annotation", TraceCat::UserAnnotation},
      {"cpu_op", TraceCat::CpuOp},          {"gpu_user_annotation", TraceCat::GpuUserAnnotation}};
  for (const auto& [name, cat] : kinds)
    if (k == name) {
      out = cat;
      return true;
    }
  return false;
}

bool device_side(TraceCat c) { return is_device(c) || c == TraceCat::GpuUserAnnotation; }

/// Matches every table row to a (kind, display name) of the trace. table.json rows carry their
/// kind; text rows are matched by name (exact, or by prefix for a name cut with "..."), on the
/// host side when the row has CPU time, on the device side when it has only device time.
std::vector<RowMatch> match_rows(const TableData& tb, const Derived* d, NameTable& names) {
  std::vector<RowMatch> out(tb.rows.size());
  // Display names present in the trace, per kind.
  std::vector<RowKey> keys;
  if (d) {
    keys.reserve(d->rows.size());
    for (const auto& kv : d->rows) keys.push_back(kv.first);
    std::sort(keys.begin(), keys.end());
  }
  for (std::size_t i = 0; i < tb.rows.size(); ++i) {
    const TableRowData& r = tb.rows[i];
    RowMatch& m = out[i];
    if (tb.json) {
      TraceCat c{};
      if (!kind_from_string(r.kind, c)) {
        m.note = fmt::format("unknown kind \"{}\"", r.kind);
        continue;
      }
      m.matched = true;
      m.key = {c, names.intern(r.name)};
      continue;
    }
    if (!d) {
      m.note = "no trace to tell the row's kind";
      continue;
    }
    const bool host = r.self_cpu.ns > 0 || r.cpu_total.ns > 0;
    const bool device = !host && (r.self_cuda.ns > 0 || r.cuda_total.ns > 0);
    const std::string prefix = r.cut ? r.name.substr(0, r.name.size() - 3) : r.name;
    std::vector<RowKey> exact, by_prefix;
    for (const RowKey& k : keys) {
      if (host && device_side(k.first)) continue;
      if (device && !device_side(k.first)) continue;
      const std::string& s = names.str(k.second);
      if (s == r.name) exact.push_back(k);
      else if (r.cut && s.size() > prefix.size() && s.compare(0, prefix.size(), prefix) == 0) by_prefix.push_back(k);
    }
    const std::vector<RowKey>& cand = !exact.empty() ? exact : by_prefix;
    if (cand.empty()) {
      m.note = r.cut ? fmt::format("no {} event name starts with '{}'", host ? "host" : device ? "device" : "", prefix)
                     : "no event of the trace has this name";
      continue;
    }
    if (cand.size() > 1) {
      m.ambiguous = true;
      std::string list;
      for (std::size_t k = 0; k < cand.size() && k < 6; ++k)
        list += fmt::format("{}{} '{}'", k ? ", " : "", to_string(cand[k].first), names.str(cand[k].second));
      if (cand.size() > 6) list += fmt::format(", ... ({} in all)", cand.size());
      m.note = r.cut ? fmt::format("cut name '{}' is ambiguous: it is the prefix of {} trace names: {}", r.name, cand.size(), list)
                     : fmt::format("name '{}' matches events of {} kinds: {}", r.name, cand.size(), list);
      // A unique kind still lets the row count in the per-kind sums.
      if (std::all_of(cand.begin(), cand.end(), [&](const RowKey& k) { return k.first == cand[0].first; }))
        m.key = {cand[0].first, kNone};
      continue;
    }
    m.matched = true;
    m.key = cand[0];
    if (exact.empty()) m.note = fmt::format("cut name matched by prefix to '{}'", names.str(cand[0].second));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The model of one validation

struct Model {
  NameTable names;
  std::vector<TraceData> traces;  // [0] primary (A), [1] second (B)
  std::vector<View> views;
  std::optional<TableData> table;
  std::optional<EventsData> events;
  Derived derived;                 // from views[0]
  std::vector<RowMatch> matches;   // per table row
  const View& A() const { return views[0]; }
  const View* B() const { return views.size() > 1 ? &views[1] : nullptr; }
};

void prepare(Model& m) {
  m.views.resize(m.traces.size());
  {
    Phase p("index");
    for (std::size_t i = 0; i < m.traces.size(); ++i) index_view(m.views[i], m.traces[i]);
  }
  {
    Phase p("parents");
    for (std::size_t i = 0; i < m.views.size(); ++i) {
      const View* other = m.views.size() > 1 ? &m.views[1 - i] : nullptr;
      build_parents(m.views[i], other);
    }
  }
  Phase p("derive");
  m.derived = derive(m.views[0], m.names);
  if (m.table) m.matches = match_rows(*m.table, &m.derived, m.names);
}

// ---------------------------------------------------------------------------------------------
// Collecting results

/// Collects one check's results; caps the number of Failed results.
class CheckLog {
 public:
  CheckLog(ValidationReport& report, const char* check, std::size_t cap) : report_(report), check_(check), cap_(cap) {}

  void fail(std::string subject, std::string expected, std::string found, std::string message) {
    ++failures_;
    if (cap_ != 0 && failures_ > cap_) return;
    add(CheckStatus::Failed, std::move(subject), std::move(expected), std::move(found), std::move(message));
  }
  void pass(std::string subject, std::string message) {
    ++passes_;
    add(CheckStatus::Passed, std::move(subject), "", "", std::move(message));
  }
  /// Something worth saying that is not a failure (a passed result, "note: ..."); does not count
  /// as a pass for pass_if_clean.
  void note(std::string subject, std::string message) {
    add(CheckStatus::Passed, std::move(subject), "", "", "note: " + std::move(message));
  }
  /// The check ran, but on samples that missed their noise target: reported, not passed.
  void noisy(std::string subject, std::string message) {
    add(CheckStatus::Noisy, std::move(subject), "", "", std::move(message));
  }
  void not_run(std::string subject, std::string message) {
    ++not_runs_;
    add(CheckStatus::NotRun, std::move(subject), "", "", std::move(message));
  }
  /// Adds a Passed result when nothing failed (and nothing passed explicitly).
  void pass_if_clean(std::string subject, std::string message) {
    if (failures_ == 0 && passes_ == 0) pass(std::move(subject), std::move(message));
  }
  std::size_t failures() const { return failures_; }
  void close() {
    if (cap_ != 0 && failures_ > cap_)
      add(CheckStatus::Failed, fmt::format("({} more)", failures_ - cap_), "", "",
          fmt::format("{} more failures of {} not listed ({} in all)", failures_ - cap_, check_, failures_));
  }

 private:
  void add(CheckStatus s, std::string subject, std::string expected, std::string found, std::string message) {
    CheckResult r;
    r.check = check_;
    r.subject = std::move(subject);
    r.expected = std::move(expected);
    r.found = std::move(found);
    r.message = std::move(message);
    r.status = s;
    report_.checks.push_back(std::move(r));
  }
  ValidationReport& report_;
  const char* check_;
  std::size_t cap_;
  std::size_t failures_ = 0, passes_ = 0, not_runs_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Helpers shared by the checks

std::string ts_text(const View& v, std::int64_t abs_ns) { return format_us(abs_ns - v.t->base_ns) + " us"; }

std::string act_subject(const Model& m, const TraceEvent& e) {
  return fmt::format("{} '{}' (correlation {})", to_string(e.cat), m.names.str(e.name), e.correlation);
}

std::string describe(const Model& m, const View& v, const TraceEvent& e) {
  const TraceLane& l = v.t->lanes[e.lane];
  return fmt::format("{} '{}' ts {} dur {} ns on {}", to_string(e.cat), m.names.str(e.name), ts_text(v, e.start_ns),
                     e.dur_ns, l.describe());
}

double median_sorted(const std::vector<std::int64_t>& v) {
  if (v.empty()) return 0.0;
  const std::size_t n = v.size();
  if (n % 2 == 1) return static_cast<double>(v[n / 2]);
  return (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2.0;
}

/// Median in O(n) (nth_element); reorders `v`.
double median_inplace(std::vector<std::int64_t>& v) {
  if (v.empty()) return 0.0;
  const std::size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  const double hi = static_cast<double>(v[n / 2]);
  if (n % 2 == 1) return hi;
  const double lo = static_cast<double>(*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2)));
  return (lo + hi) / 2.0;
}

/// |a - b| within the print resolutions of two values (half of each).
bool within(double a, double res_a, double b, double res_b = 0) {
  return std::fabs(a - b) <= (res_a + res_b) / 2.0 + 1e-6;
}

std::string table_value(double ns, double res) {
  if (res <= 0) return num(ns) + " ns";
  return fmt::format("{} ns (printed to {} ns)", num(ns), num(res));
}

/// Column a text table looks sorted by (non-increasing over its rows), for telling rows cut by
/// key_averages().table(row_limit=N) from missing ones. -1 when none.
int sort_column(const TableData& tb) {
  if (tb.json || tb.rows.size() < 2) return -1;
  auto value = [](const TableRowData& r, int c) {
    switch (c) {
      case 0: return r.cuda_total.ns;
      case 1: return r.self_cuda.ns;
      case 2: return r.cpu_total.ns;
      case 3: return r.self_cpu.ns;
      default: return static_cast<double>(r.calls);
    }
  };
  for (int c = 0; c < 5; ++c) {
    bool ok = true, varies = false;
    for (std::size_t i = 1; i < tb.rows.size() && ok; ++i) {
      ok = value(tb.rows[i], c) <= value(tb.rows[i - 1], c) + 1e-9;
      varies = varies || value(tb.rows[i], c) != value(tb.rows[i - 1], c);
    }
    if (ok && varies) return c;
  }
  return -1;
}

/// Reason a (kind, name) of the trace may be absent from a text table: printed with a row_limit
/// and sorted by a column this name's value does not beat. "" when it should have been there.
std::string cut_by_row_limit(const TableData& tb, const Expected& e) {
  const int c = sort_column(tb);
  if (c < 0) return "";
  static const char* const cols[] = {"CUDA total", "Self CUDA", "CPU total", "Self CPU", "# of Calls"};
  const double mine = c == 0 ? static_cast<double>(e.cuda_total) : c == 1 ? static_cast<double>(e.self_cuda)
                    : c == 2 ? static_cast<double>(e.cpu_total) : c == 3 ? static_cast<double>(e.self_cpu)
                             : static_cast<double>(e.calls);
  const TableRowData& last = tb.rows.back();
  const double theirs = c == 0 ? last.cuda_total.ns : c == 1 ? last.self_cuda.ns : c == 2 ? last.cpu_total.ns
                      : c == 3 ? last.self_cpu.ns : static_cast<double>(last.calls);
  if (mine > theirs + 0.5) return "";
  return fmt::format("the table is sorted by {} and this name's ({}) does not exceed its last row's ({}): it was "
                     "probably cut by key_averages().table(row_limit=...)",
                     cols[c], num(mine), num(theirs));
}

/// Rows the trace implies that a text table does not have, and whether each was plausibly cut
/// by row_limit (cut_by_row_limit's reason, "" when it should have been printed).
struct Absent {
  RowKey key;
  std::string cut_reason;
};
std::vector<Absent> absent_rows(const Model& m) {
  std::vector<Absent> out;
  if (!m.table) return out;
  const TableData& tb = *m.table;
  std::set<RowKey> seen;
  for (const RowMatch& mt : m.matches)
    if (mt.matched) seen.insert(mt.key);
  const std::uint32_t steps = m.names.find("ProfilerStep*");
  const bool step_rows = std::any_of(seen.begin(), seen.end(), [&](const RowKey& k) { return m.derived.aliases.count(k) != 0; });
  for (const auto& kv : m.derived.rows) {
    const RowKey& k = kv.first;  // (not a structured binding: lambdas below capture it)
    const Expected& e = kv.second;
    if (seen.count(k) || m.derived.aliases.count(k)) continue;
    if (step_rows && k.first == TraceCat::UserAnnotation && k.second == steps) continue;  // listed step by step
    // GPU-span rows: crossbench's tables never have them, and PyTorch's only for annotations its
    // trace has gpu_user_annotation events of.
    if (k.first == TraceCat::GpuUserAnnotation) {
      const auto shown = [&](std::uint32_t i) {
        const std::uint32_t n = m.A().ev(i).name;
        return (n < m.derived.disp.size() ? m.derived.disp[n] : n) == k.second;
      };
      if (tb.json || !m.A().t->format.empty() || std::none_of(m.A().span.begin(), m.A().span.end(), shown)) continue;
    }
    // An ambiguous cut row stands for one of several names: not absent.
    if (std::any_of(m.matches.begin(), m.matches.end(), [&](const RowMatch& mt) { return mt.ambiguous && mt.key.first == k.first; }) &&
        tb.rows.size() == m.matches.size()) {
      bool covered = false;
      for (std::size_t i = 0; i < tb.rows.size() && !covered; ++i) {
        const auto& r = tb.rows[i];
        if (!m.matches[i].ambiguous || !r.cut) continue;
        const std::string prefix = r.name.substr(0, r.name.size() - 3);
        covered = m.names.str(k.second).compare(0, prefix.size(), prefix) == 0;
      }
      if (covered) continue;
    }
    out.push_back({k, tb.json ? std::string() : cut_by_row_limit(tb, e)});
  }
  std::sort(out.begin(), out.end(), [](const Absent& a, const Absent& b) { return a.key < b.key; });
  return out;
}

// ---------------------------------------------------------------------------------------------
// kernel_stats

struct Stats {
  double count = 0, total = 0, median = 0, min = 0, max = 0, avg = 0;
  double res_total = 0, res_median = 0, res_min = 0, res_max = 0, res_avg = 0;
  bool has_stats = true, has_avg = false;
};

std::map<RowKey, Stats> device_stats(const View& v) {
  std::unordered_map<RowKey, std::vector<std::int64_t>, RowKeyHash> durs;
  RowKey last{TraceCat::Sync, kNone};
  std::vector<std::int64_t>* bucket = nullptr;
  for (std::uint32_t i : v.dev) {
    const TraceEvent& e = v.ev(i);
    const RowKey k{e.cat, e.name};
    if (!bucket || k != last) {
      bucket = &durs[k];
      last = k;
    }
    bucket->push_back(e.dur_ns);
  }
  std::map<RowKey, Stats> out;
  for (auto& [k, d] : durs) {
    Stats s;
    s.count = static_cast<double>(d.size());
    std::int64_t total = 0, lo = d[0], hi = d[0];
    for (auto x : d) {
      total += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    s.total = static_cast<double>(total);
    s.min = static_cast<double>(lo);
    s.max = static_cast<double>(hi);
    s.median = median_inplace(d);
    s.avg = s.total / s.count;
    s.has_avg = true;
    out.emplace(k, s);
  }
  return out;
}

void check_kernel_stats(const Model& m, CheckLog& log) {
  struct Source {
    std::string file;
    std::map<RowKey, Stats> stats;
  };
  std::vector<Source> src;
  if (m.table) {
    const TableData& tb = *m.table;
    Source s{tb.file, {}};
    for (std::size_t i = 0; i < tb.rows.size(); ++i) {
      const TableRowData& r = tb.rows[i];
      const RowMatch& mt = m.matches[i];
      if (!is_device(mt.key.first) || (!mt.matched && !mt.ambiguous)) continue;
      if (mt.ambiguous) {
        log.not_run(tb.where(r), mt.note + "; its count and times are not compared");
        continue;
      }
      const std::string subject = fmt::format("{} '{}'", to_string(mt.key.first), m.names.str(mt.key.second));
      if (s.stats.count(mt.key)) {
        log.fail(subject, fmt::format("one {} row per (name, kind)", tb.file), "duplicate row",
                 fmt::format("{} has the same device row twice", tb.file));
        continue;
      }
      Stats st;
      st.count = static_cast<double>(r.calls);
      st.total = r.self_cuda.ns;
      st.res_total = r.self_cuda.res_ns;
      st.has_stats = tb.has_stats;
      st.median = r.median.ns;
      st.res_median = r.median.res_ns;
      st.min = r.min.ns;
      st.res_min = r.min.res_ns;
      st.max = r.max.ns;
      st.res_max = r.max.res_ns;
      st.has_avg = tb.has_avg && !tb.json;
      st.avg = r.cuda_avg.ns;
      st.res_avg = r.cuda_avg.res_ns;
      s.stats.emplace(mt.key, st);
    }
    src.push_back(std::move(s));
  }
  const std::size_t first_trace = src.size();
  // Traces in file order trace_only, full when both are crossbench's (the historical order).
  std::vector<const View*> views;
  for (const View& v : m.views) views.push_back(&v);
  if (views.size() == 2 && views[1]->t->format == "trace_only") std::swap(views[0], views[1]);
  for (const View* v : views) src.push_back({v->file(), device_stats(*v)});

  std::set<RowKey> keys;
  for (const auto& s : src)
    for (const auto& kv : s.stats) keys.insert(kv.first);
  if (keys.empty()) return log.not_run("", "no device activity (kernel, memcpy, memset) in the table or the traces");

  std::map<RowKey, std::string> absent;  // device names the table lacks -> row_limit reason
  for (const Absent& ab : absent_rows(m))
    if (is_device(ab.key.first)) absent.emplace(ab.key, ab.cut_reason);
  for (const RowKey& k : keys) {
    const std::string subject = fmt::format("{} '{}'", to_string(k.first), m.names.str(k.second));
    const Source* ref = nullptr;
    const Stats* rs = nullptr;
    std::string present, missing;
    for (std::size_t si = 0; si < src.size(); ++si) {
      const Source& s = src[si];
      auto it = s.stats.find(k);
      if (it == s.stats.end() && si == 0 && m.table && first_trace == 1) {
        auto ab = absent.find(k);
        if (ab == absent.end() && !m.table->json) continue;  // an ambiguous cut row stands for it
        if (ab != absent.end() && !ab->second.empty()) {
          log.not_run(subject, fmt::format("not in {}: {}", m.table->file, ab->second));
          continue;
        }
      }
      std::string& list = it == s.stats.end() ? missing : present;
      list += (list.empty() ? "" : ", ") + s.file;
      if (it != s.stats.end() && !ref) {
        ref = &s;
        rs = &it->second;
      }
    }
    if (!missing.empty())
      log.fail(subject, fmt::format("present in {}", [&] {
                 std::string all;
                 for (const auto& s : src) all += (all.empty() ? "" : ", ") + s.file;
                 return all;
               }()),
               fmt::format("missing from {} (present in {})", missing, present),
               "a device activity name is in one file but not another");
    for (const auto& s : src) {
      if (&s == ref) continue;
      auto it = s.stats.find(k);
      if (it == s.stats.end()) continue;
      const Stats& a = *rs;
      const Stats& b = it->second;
      auto cmp = [&](const char* what, double x, double rx, double y, double ry) {
        if (!within(x, rx, y, ry))
          log.fail(subject, fmt::format("{} = {} ({})", what, num(x), ref->file), fmt::format("{} = {} ({})", what, num(y), s.file),
                   fmt::format("{} differs between {} and {}{}", what, ref->file, s.file,
                               rx + ry > 0 ? fmt::format(" beyond the print resolution ({} ns)", num((rx + ry) / 2)) : ""));
      };
      cmp("count", a.count, 0, b.count, 0);
      cmp("total_ns", a.total, a.res_total, b.total, b.res_total);
      if (a.has_stats && b.has_stats) {
        cmp("median_ns", a.median, a.res_median, b.median, b.res_median);
        cmp("min_ns", a.min, a.res_min, b.min, b.res_min);
        cmp("max_ns", a.max, a.res_max, b.max, b.res_max);
      } else if (a.has_avg && b.has_avg) {
        cmp("avg_ns", a.avg, a.res_avg, b.avg, b.res_avg);
      }
    }
  }
  std::string files;
  for (const auto& s : src) files += (files.empty() ? "" : ", ") + s.file;
  const bool stats = !m.table || m.table->has_stats;
  log.pass_if_clean(fmt::format("{} device names", keys.size()),
                    fmt::format("count, total{} identical in {}", stats ? ", median, min and max" : " and average", files));
  if (!m.table) log.not_run("table", "no table given: only the traces were compared");
  if (m.table && !m.table->has_stats)
    log.note("table", fmt::format("{} has no median/min/max columns: count, total and average compared", m.table->file));
  if (m.views.size() < 2) log.not_run("second trace", "one trace given: no second export to compare with");
}

// ---------------------------------------------------------------------------------------------
// table_rows

void check_table_rows(const Model& m, CheckLog& log) {
  if (!m.table) return log.not_run("", "no table given");
  const TableData& tb = *m.table;
  std::set<RowKey> seen;
  std::size_t compared = 0, cut = 0;
  for (std::size_t i = 0; i < tb.rows.size(); ++i) {
    const TableRowData& r = tb.rows[i];
    const RowMatch& mt = m.matches[i];
    const std::string where = tb.where(r);
    if (mt.ambiguous) {
      log.not_run(where, mt.note);
      continue;
    }
    if (!mt.matched) {
      log.fail(where, "events of that name in " + m.A().file(), "none", mt.note);
      continue;
    }
    if (!mt.note.empty()) ++cut;
    if (!seen.insert(mt.key).second) {
      log.fail(where, "one row per (name, kind)", "duplicate row", fmt::format("{} has this row twice", tb.file));
      continue;
    }
    if (is_device(mt.key.first)) continue;  // kernel_stats
    auto ex = m.derived.rows.find(mt.key);
    if (ex == m.derived.rows.end()) {
      log.fail(where, fmt::format("{} events named '{}' in {}", to_string(mt.key.first), m.names.str(mt.key.second), m.A().file()),
               "none", "the row names nothing in the trace");
      continue;
    }
    ++compared;
    const Expected& e = ex->second;
    const std::string subject = fmt::format("{} ({})", where, to_string(mt.key.first));
    auto cmp = [&](const char* col, double found, double res, std::int64_t want) {
      if (!within(found, res, static_cast<double>(want)))
        log.fail(subject, fmt::format("{} = {} ns (from {})", col, want, m.A().file()), fmt::format("{} = {}", col, table_value(found, res)),
                 fmt::format("the row's {} is not what the trace's events add up to", col));
    };
    if (r.calls != e.calls)
      log.fail(subject, fmt::format("# of Calls = {} (events in {})", e.calls, m.A().file()), fmt::format("{}", r.calls),
               "the row's call count is not the number of events");
    if (tb.has_cpu) {
      cmp("Self CPU", r.self_cpu.ns, r.self_cpu.res_ns, e.self_cpu);
      cmp("CPU total", r.cpu_total.ns, r.cpu_total.res_ns, e.cpu_total);
    }
    if (tb.has_cuda) {
      cmp("Self CUDA", r.self_cuda.ns, r.self_cuda.res_ns, e.self_cuda);
      cmp("CUDA total", r.cuda_total.ns, r.cuda_total.res_ns, e.cuda_total);
    }
  }
  // Names of the trace without a row (device names: kernel_stats).
  std::size_t cut_rows = 0;
  for (const Absent& ab : absent_rows(m)) {
    if (is_device(ab.key.first)) continue;
    const std::string subject = fmt::format("{} '{}'", to_string(ab.key.first), m.names.str(ab.key.second));
    if (!ab.cut_reason.empty()) {
      ++cut_rows;
      log.not_run(subject, fmt::format("in {} but not in {}: {}", m.A().file(), tb.file, ab.cut_reason));
      continue;
    }
    log.fail(subject, fmt::format("a row in {}", tb.file), "none", fmt::format("{} has events of this name", m.A().file()));
  }
  log.pass_if_clean(fmt::format("{} rows", tb.rows.size()),
                    fmt::format("every row names events of {}{}; {} host/API/span rows: calls, Self CPU, CPU total, Self "
                                "CUDA and CUDA total equal the trace's (within the table's print resolution)",
                                m.A().file(), cut ? fmt::format(" ({} cut names matched by prefix)", cut) : "", compared));
}

// ---------------------------------------------------------------------------------------------
// table_totals

void check_table_totals(const Model& m, const ValidateOptions& opts, CheckLog& log) {
  if (!m.table) return log.not_run("", "no table given");
  const TableData& tb = *m.table;
  const auto& rows = tb.rows;
  const double cpu_t = tb.self_cpu_total.ns, cpu_res = tb.self_cpu_total.res_ns;
  const double cuda_t = tb.self_cuda_total.ns, cuda_res = tb.self_cuda_total.res_ns;
  auto kind_of = [&](std::size_t i) -> std::optional<TraceCat> {
    const RowMatch& mt = m.matches[i];
    if (mt.matched || mt.ambiguous) return mt.key.first;
    return std::nullopt;
  };
  /// Tolerance of a printed percentage of value v (res rv) over total t (res rt).
  auto pct_tol = [&](const TablePct& p, double v, double rv, double t, double rt) {
    if (tb.json) return opts.pct_tol;
    return p.res / 2 + (t > 0 ? 100.0 * (rv / 2) / t + 100.0 * std::fabs(v) * (rt / 2) / (t * t) : 0) + 1e-9;
  };
  std::size_t unknown = 0;
  double dev_sum = 0, dev_res = 0, dev_pct = 0, dev_pct_tol = 0;
  double rng_sum = 0, rng_res = 0;
  double cpu_sum = 0, cpu_sum_res = 0, cpu_pct = 0, cpu_pct_tol = 0;
  std::size_t dev_rows = 0, rng_rows = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const TableRowData& r = rows[i];
    const std::string where = tb.where(r);
    const auto kind = kind_of(i);
    if (!kind) ++unknown;
    if (tb.has_cpu) {
      cpu_sum += r.self_cpu.ns;
      cpu_sum_res += r.self_cpu.res_ns;
      cpu_pct += r.self_cpu_pct.pct;
      cpu_pct_tol += tb.json ? 0 : r.self_cpu_pct.res / 2;
    }
    if (kind && is_device(*kind)) {
      ++dev_rows;
      dev_sum += r.self_cuda.ns;
      dev_res += r.self_cuda.res_ns;
      dev_pct += r.self_cuda_pct.pct;
      dev_pct_tol += tb.json ? 0 : r.self_cuda_pct.res / 2;
    } else if (kind && is_range(*kind)) {
      ++rng_rows;
      rng_sum += r.self_cuda.ns;
      rng_res += r.self_cuda.res_ns;
    }
    // Per row: percentages of their totals, none above 100.
    auto pct_check = [&](const char* col, const TablePct& p, double v, double rv, double t, double rt, bool has) {
      if (!has) return;
      if (p.nan) {
        if (t != 0)
          log.fail(where, fmt::format("{} = 100 * {} / {}", col, num(v), num(t)), "NaN", fmt::format("{} is NaN though its total is not 0", col));
        return;
      }
      const double tol = pct_tol(p, v, rv, t, rt);
      if (p.pct > 100.0 + tol)
        log.fail(where, fmt::format("{} <= 100%", col), fmt::format("{}% (= 100 x {} / {})", num(p.pct), us(v), us(t)),
                 fmt::format("row above 100%: its {} exceeds the column's total", col == std::string("Self CUDA %") ? "Self CUDA" : col == std::string("Self CPU %") ? "Self CPU" : "CPU total"));
      if (t > 0) {
        const double want = 100.0 * v / t;
        if (std::fabs(want - p.pct) > tol)
          log.fail(where, fmt::format("{} = 100 * {} / {} = {}", col, num(v), num(t), num(want)), fmt::format("{}%", num(p.pct)),
                   fmt::format("{} does not match its value over the total", col));
      }
    };
    if (tb.has_pct) {
      pct_check("Self CPU %", r.self_cpu_pct, r.self_cpu.ns, r.self_cpu.res_ns, cpu_t, cpu_res, tb.has_cpu && tb.has_self_cpu_total);
      pct_check("CPU total %", r.cpu_total_pct, r.cpu_total.ns, r.cpu_total.res_ns, cpu_t, cpu_res, tb.has_cpu && tb.has_self_cpu_total);
      pct_check("Self CUDA %", r.self_cuda_pct, r.self_cuda.ns, r.self_cuda.res_ns, cuda_t, cuda_res, tb.has_cuda && tb.has_self_cuda_total);
    }
    // Averages.
    if (tb.has_avg && r.calls > 0) {
      const double c = static_cast<double>(r.calls);
      if (tb.has_cpu && !within(r.cpu_avg.ns, r.cpu_avg.res_ns, r.cpu_total.ns / c, r.cpu_total.res_ns / c))
        log.fail(where, fmt::format("CPU time avg = {} / {} = {} ns", num(r.cpu_total.ns), r.calls, num(r.cpu_total.ns / c)),
                 table_value(r.cpu_avg.ns, r.cpu_avg.res_ns), "CPU time avg is not CPU total / # of Calls");
      if (tb.has_cuda && !within(r.cuda_avg.ns, r.cuda_avg.res_ns, r.cuda_total.ns / c, r.cuda_total.res_ns / c))
        log.fail(where, fmt::format("CUDA time avg = {} / {} = {} ns", num(r.cuda_total.ns), r.calls, num(r.cuda_total.ns / c)),
                 table_value(r.cuda_avg.ns, r.cuda_avg.res_ns), "CUDA time avg is not CUDA total / # of Calls");
    }
    // Self <= total, and the shape of each kind's row.
    if (tb.has_cpu && r.self_cpu.ns > r.cpu_total.ns + (r.self_cpu.res_ns + r.cpu_total.res_ns) / 2 + 1e-6)
      log.fail(where, fmt::format("Self CPU <= CPU total ({} ns)", num(r.cpu_total.ns)), table_value(r.self_cpu.ns, r.self_cpu.res_ns),
               "Self CPU above CPU total");
    if (tb.has_cuda && r.self_cuda.ns > r.cuda_total.ns + (r.self_cuda.res_ns + r.cuda_total.res_ns) / 2 + 1e-6)
      log.fail(where, fmt::format("Self CUDA <= CUDA total ({} ns)", num(r.cuda_total.ns)),
               table_value(r.self_cuda.ns, r.self_cuda.res_ns), "Self CUDA above CUDA total");
    if (kind && device_side(*kind)) {
      if (tb.has_cuda && !within(r.self_cuda.ns, r.self_cuda.res_ns, r.cuda_total.ns, r.cuda_total.res_ns))
        log.fail(where, fmt::format("CUDA total = Self CUDA = {} ns", num(r.self_cuda.ns)), table_value(r.cuda_total.ns, r.cuda_total.res_ns),
                 "a device row's Self CUDA and CUDA total must be equal");
      if (tb.has_cpu && (r.self_cpu.ns != 0 || r.cpu_total.ns != 0))
        log.fail(where, "CPU columns 0", fmt::format("Self CPU {} ns, CPU total {} ns", num(r.self_cpu.ns), num(r.cpu_total.ns)),
                 "a device row has no CPU time");
    } else if (kind && is_api(*kind)) {
      if (tb.has_cuda && (r.self_cuda.ns != 0 || r.cuda_total.ns != 0))
        log.fail(where, "CUDA columns 0", fmt::format("Self CUDA {} ns, CUDA total {} ns", num(r.self_cuda.ns), num(r.cuda_total.ns)),
                 "an API call row has no device time of its own");
    }
  }
  // A table cut by row_limit lacks rows: its sums cannot reach the totals.
  std::size_t cut = 0;
  for (const Absent& ab : absent_rows(m)) cut += !ab.cut_reason.empty();
  if (cut != 0)
    log.not_run("sums over rows", fmt::format("{} lacks {} rows of the trace that key_averages().table(row_limit=...) "
                                              "probably cut, so sums over its rows are not compared with its totals",
                                              tb.file, cut));
  // Self CUDA per kind of row.
  if (cut == 0 && tb.has_cuda && tb.has_self_cuda_total) {
    if (dev_rows > 0 && !within(dev_sum, dev_res, cuda_t, cuda_res))
      log.fail("Self CUDA over device rows", fmt::format("{} (Self CUDA total)", table_value(cuda_t, cuda_res)),
               fmt::format("{} (sum of {} device rows' Self CUDA)", num(dev_sum), dev_rows),
               "Self CUDA total is not the sum of the device rows (kernels, memcpy, memset)");
    if (dev_rows > 0 && cuda_t > 0 && tb.has_pct && std::fabs(dev_pct - 100.0) > (tb.json ? opts.pct_tol : dev_pct_tol + 1e-9))
      log.fail("Self CUDA % over device rows", fmt::format("100 +- {}", num(tb.json ? opts.pct_tol : dev_pct_tol)), num(dev_pct),
               "device rows' Self CUDA % does not sum to 100");
    if (m.derived.unattributed == 0 && rng_rows > 0) {
      if (!within(rng_sum, rng_res, cuda_t, cuda_res))
        log.fail("Self CUDA over host range rows", fmt::format("{} (Self CUDA total)", table_value(cuda_t, cuda_res)),
                 fmt::format("{} (sum of {} host range rows)", num(rng_sum), rng_rows),
                 "every device activity was launched inside a host range, so the host ranges' Self CUDA must add up to "
                 "the total");
    }
  }
  // Self CPU over all rows.
  if (cut == 0 && tb.has_cpu && tb.has_self_cpu_total) {
    if (!within(cpu_sum, cpu_sum_res, cpu_t, cpu_res))
      log.fail("Self CPU over all rows", fmt::format("{} (Self CPU time total)", table_value(cpu_t, cpu_res)), num(cpu_sum),
               "Self CPU total is not the sum of the rows' Self CPU");
    if (tb.has_pct && cpu_t > 0 && std::fabs(cpu_pct - 100.0) > (tb.json ? opts.pct_tol * 10 : cpu_pct_tol + 1e-9))
      log.fail("Self CPU % over all rows", fmt::format("100 +- {}", num(tb.json ? opts.pct_tol * 10 : cpu_pct_tol)), num(cpu_pct),
               "rows' Self CPU % does not sum to 100");
  }
  // Parent rows' totals >= their children's, with children found through the trace's nesting;
  // only child names whose every instance has one parent name.
  std::map<RowKey, std::vector<std::size_t>> children_of;
  std::map<RowKey, std::size_t> row_of;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (m.matches[i].matched) row_of.emplace(m.matches[i].key, i);
  for (const auto& [child, ps] : m.derived.parents) {
    if (ps.size() != 1 || ps.begin()->second == kNone || *ps.begin() == child) continue;
    auto c = row_of.find(child);
    if (c == row_of.end()) continue;
    children_of[*ps.begin()].push_back(c->second);
  }
  std::size_t links = 0;
  for (const auto& [parent, kids] : children_of) {
    auto p = row_of.find(parent);
    if (p == row_of.end()) continue;
    const TableRowData& pr = rows[p->second];
    double cuda = 0, cuda_r = pr.cuda_total.res_ns, cpu = 0, cpu_r = pr.cpu_total.res_ns;
    std::string names;
    for (std::size_t k : kids) {
      cuda += rows[k].cuda_total.ns;
      cuda_r += rows[k].cuda_total.res_ns;
      cpu += rows[k].cpu_total.ns;
      cpu_r += rows[k].cpu_total.res_ns;
      names += (names.empty() ? "'" : ", '") + rows[k].name + "'";
    }
    links += kids.size();
    if (tb.has_cuda && pr.cuda_total.ns + cuda_r / 2 + 1e-6 < cuda)
      log.fail(fmt::format("{} > {}", tb.where(pr), names), fmt::format("parent CUDA total >= its children's sum, {} ns", num(cuda)),
               table_value(pr.cuda_total.ns, pr.cuda_total.res_ns), "a parent row's CUDA total is below the sum of its children's");
    if (tb.has_cpu && pr.cpu_total.ns + cpu_r / 2 + 1e-6 < cpu)
      log.fail(fmt::format("{} > {}", tb.where(pr), names), fmt::format("parent CPU total >= its children's sum, {} ns", num(cpu)),
               table_value(pr.cpu_total.ns, pr.cpu_total.res_ns), "a parent row's CPU total is below the sum of its children's");
  }
  if (tb.has_cuda && tb.has_self_cuda_total && cuda_t > 0) {
    double span_sum = 0, api_sum = 0, all_sum = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      all_sum += rows[i].self_cuda.ns;
      const auto kind = kind_of(i);
      if (kind && *kind == TraceCat::GpuUserAnnotation) span_sum += rows[i].self_cuda.ns;
      if (kind && is_api(*kind)) api_sum += rows[i].self_cuda.ns;
    }
    auto pc = [&](double x) { return fmt::format("{:.2f}%", 100.0 * x / cuda_t); };
    std::string parts = fmt::format("device rows {} ({}), host range rows {} ({})", us(dev_sum), pc(dev_sum), us(rng_sum), pc(rng_sum));
    if (span_sum > 0) parts += fmt::format(", annotation GPU-span rows {} ({})", us(span_sum), pc(span_sum));
    if (api_sum > 0) parts += fmt::format(", API rows {} ({})", us(api_sum), pc(api_sum));
    log.note("Self CUDA by kind of row", fmt::format("Self CUDA total {}; the column sums to {} over all rows ({}): {}", us(cuda_t),
                                                      us(all_sum), pc(all_sum), parts));
  }
  log.pass_if_clean(tb.file, fmt::format("Self CUDA total = sum of {} device rows{}; Self CPU total = sum of the rows; "
                                         "percentages and averages match their values; no row above 100%; {} parent/child "
                                         "row links ordered",
                                         dev_rows,
                                         m.derived.unattributed == 0 && rng_rows ? " = sum of the host range rows" : "", links));
  if (m.derived.unattributed != 0)
    log.not_run("Self CUDA over host range rows",
                fmt::format("{} device activities in {} have no host range, so host ranges' Self CUDA need not add up "
                            "to the total",
                            m.derived.unattributed, m.A().file()));
  if (unknown != 0) log.note(tb.file, fmt::format("{} rows of unknown kind are left out of the per-kind sums", unknown));
}

// ---------------------------------------------------------------------------------------------
// annotation_span

/// Kernel-derived spans of one trace: per (annotation range, lane), the first start and last end
/// of the device work under it, both for every enclosing annotation (crossbench's spans) and for
/// the innermost one only (Kineto's). Key: range event index << 32 | lane.
struct SpanMaps {
  std::unordered_map<std::uint64_t, std::pair<std::int64_t, std::int64_t>> subtree, inner;
};

SpanMaps kernel_spans(const View& v) {
  SpanMaps s;
  using Span = std::pair<std::int64_t, std::int64_t>;
  std::uint32_t last_range = kNone, last_lane = kNone;
  std::vector<Span*> slots;  // subtree spans of last_range, then its innermost span
  Span* inner = nullptr;
  for (std::uint32_t i : v.dev) {
    const TraceEvent& a = v.ev(i);
    const std::uint32_t r = attributed_range(v, a);
    if (r != last_range || a.lane != last_lane) {
      slots.clear();
      inner = nullptr;
      for_ancestors(v, r, [&](std::uint32_t x) {
        if (v.ev(x).cat != TraceCat::UserAnnotation) return;
        const std::uint64_t key = (static_cast<std::uint64_t>(x) << 32) | a.lane;
        slots.push_back(&s.subtree.emplace(key, Span(a.start_ns, a.end_ns())).first->second);
        if (!inner) inner = &s.inner.emplace(key, Span(a.start_ns, a.end_ns())).first->second;
      });
      last_range = r;
      last_lane = a.lane;
    }
    for (Span* sp : slots) {
      sp->first = std::min(sp->first, a.start_ns);
      sp->second = std::max(sp->second, a.end_ns());
    }
    if (inner) {
      inner->first = std::min(inner->first, a.start_ns);
      inner->second = std::max(inner->second, a.end_ns());
    }
  }
  return s;
}

void check_annotation_span(const Model& m, const ValidateOptions& opts, CheckLog& log) {
  std::size_t rows = 0, spans = 0;
  // (a) Table rows that show an annotation's device time.
  if (m.table) {
    const TableData& tb = *m.table;
    for (std::size_t i = 0; i < tb.rows.size(); ++i) {
      const RowMatch& mt = m.matches[i];
      if (!mt.matched || !tb.has_cuda) continue;
      const TableRowData& r = tb.rows[i];
      const std::string where = tb.where(r);
      const Derived::Annot an = mt.key.second < m.derived.annot.size() ? m.derived.annot[mt.key.second] : Derived::Annot{};
      if (mt.key.first == TraceCat::GpuUserAnnotation) {
        ++rows;
        const double t = r.self_cuda.ns;
        const double k = static_cast<double>(an.inner_kernels);
        const std::string spans_text = fmt::format(
            "its {} GPU spans (first kernel start to last kernel end per call and stream) sum to {}", an.n_inner, us(static_cast<double>(an.inner_spans)));
        if (within(t, r.self_cuda.res_ns, k)) {
          log.pass(where, fmt::format("note: Self CUDA {} equals the device time under the annotation ({}): {}, with no "
                                      "gaps between its kernels; the row still counts a GPU span as Self CUDA, so it "
                                      "double-counts the kernel rows (pytorch#130730)",
                                      us(t), us(k), spans_text));
        } else if (t > k) {
          log.fail(where, fmt::format("Self CUDA <= the device time under the annotation, {}", us(k)),
                   fmt::format("Self CUDA {} ({}% of the Self CUDA total)", us(t),
                               tb.self_cuda_total.ns > 0 ? fmt::format("{:.2f}", 100.0 * t / tb.self_cuda_total.ns) : "-"),
                   fmt::format("annotation GPU span counted as kernel time (pytorch#130730): {}; the kernels, memcpys and "
                               "memsets under it take {}; the row overcounts by {} ({:.2f}%)",
                               spans_text, us(k), us(t - k), k > 0 ? 100.0 * (t - k) / k : 0.0));
        } else {
          log.fail(where, fmt::format("Self CUDA = the device time under the annotation, {}", us(k)), us(t),
                   "the annotation's device row is below the device time under it");
        }
      } else if (mt.key.first == TraceCat::UserAnnotation) {
        ++rows;
        const double t = r.self_cuda.ns;
        const double s = static_cast<double>(an.direct);
        if (t > s + r.self_cuda.res_ns / 2 + 1e-6) {
          const bool is_span = within(t, r.self_cuda.res_ns, static_cast<double>(an.spans)) ||
                               within(t, r.self_cuda.res_ns, static_cast<double>(an.inner_spans));
          log.fail(where, fmt::format("Self CUDA = device time launched directly in the annotation, {}", us(s)), us(t),
                   is_span ? fmt::format("annotation counted as kernel time: the row's Self CUDA is its GPU span (first "
                                         "kernel start to last kernel end, {}), not the time of the kernels under it ({}); "
                                         "overcounted by {}",
                                         us(t), us(static_cast<double>(an.kernels)), us(t - s))
                           : fmt::format("the annotation's Self CUDA exceeds the device time launched in it by {}", us(t - s)));
        }
      }
    }
  }
  // (b) gpu_user_annotation events of each trace against the device work under them.
  for (std::size_t vi = 0; vi < m.views.size(); ++vi) {
    const View& v = m.views[vi];
    if (v.span.empty()) continue;
    const SpanMaps km = kernel_spans(v);
    std::int64_t max_dev = 0;
    for (std::uint32_t i : v.span) {
      const TraceEvent& s = v.ev(i);
      ++spans;
      const std::string subject = fmt::format("{}: gpu_user_annotation '{}' (External id {}) on {}", v.file(), m.names.str(s.name),
                                              s.external_id, v.t->lanes[s.lane].describe());
      const std::uint32_t r = s.external_id ? v.rng_ext.first(s.external_id) : kNone;
      if (r == kNone || v.ev(r).cat != TraceCat::UserAnnotation) {
        log.fail(subject, "a user_annotation range with this External id", "none", "GPU span of no annotation");
        continue;
      }
      const std::uint64_t key = (static_cast<std::uint64_t>(r) << 32) | s.lane;
      std::int64_t best = std::numeric_limits<std::int64_t>::max();
      std::pair<std::int64_t, std::int64_t> want{0, 0};
      for (const auto* map : {&km.subtree, &km.inner}) {
        auto it = map->find(key);
        if (it == map->end()) continue;
        const std::int64_t dev = std::max(std::llabs(s.start_ns - it->second.first), std::llabs(s.end_ns() - it->second.second));
        if (dev < best) {
          best = dev;
          want = it->second;
        }
      }
      if (best == std::numeric_limits<std::int64_t>::max()) {
        log.fail(subject, "device work launched under the annotation on this stream", "none",
                 "GPU span over no device work of its annotation");
        continue;
      }
      max_dev = std::max(max_dev, best);
      if (best > opts.span_tol_ns)
        log.fail(subject, fmt::format("span {} to {} (first start to last end of its device work) +- {} ns", ts_text(v, want.first),
                                      ts_text(v, want.second), opts.span_tol_ns),
                 fmt::format("span {} to {} ({} ns off)", ts_text(v, s.start_ns), ts_text(v, s.end_ns()), best),
                 "the GPU span does not cover exactly the device work under its annotation");
    }
    if (max_dev > 0 && max_dev <= opts.span_tol_ns)
      log.note(v.file(), fmt::format("gpu_user_annotation spans are up to {} ns off the first start / last end of their "
                                     "device work (rounding in the exporter)",
                                     max_dev));
  }
  if (rows == 0 && spans == 0)
    return log.not_run("", "no annotation GPU spans: no gpu_user_annotation events and no annotation row with device time");
  log.pass_if_clean(fmt::format("{} annotation rows, {} GPU span events", rows, spans),
                    "no annotation row shows more device time than the kernels under it; every GPU span covers exactly "
                    "its annotation's device work");
}

// ---------------------------------------------------------------------------------------------
// attribution

void check_attribution(const Model& m, CheckLog& log) {
  const View& A = m.A();
  const View* B = m.B();
  if (A.dev.empty() && (!B || B->dev.empty())) return log.not_run("", "no device activity in the traces");
  std::vector<std::uint64_t> seen_corr;
  std::size_t checked = 0;
  auto launch_text = [&](const View& v) { return fmt::format("1 launch call in {}", v.file()); };
  for (std::uint32_t i : A.dev) {
    const TraceEvent& d = A.ev(i);
    const std::uint64_t c = d.correlation;
    if (A.dev_corr.first(c) != i) continue;  // each correlation id once
    ++checked;
    const auto subject = [&] { return act_subject(m, d); };
    if (auto n = A.dev_corr.count(c); n > 1)
      log.fail(subject(), "one device activity per correlation id", fmt::format("{} in {}", n, A.file()),
               "correlation id shared by several device activities");
    // Launch and host range in A, through the correlation id only.
    const auto nA = A.api_corr.count(c);
    if (nA != 1)
      log.fail(subject(), launch_text(A), fmt::format("{}", nA), fmt::format("cuda_runtime/cuda_driver events with this correlation in {}", A.file()));
    bool knownA = false, ambA = false;
    std::uint64_t xA = corr_ext(A, c, knownA, ambA);
    if (ambA)
      log.fail(subject(), fmt::format("one External id per correlation in {} externalCorrelations", A.file()), "several",
               "ambiguous external correlation");
    if (!knownA && d.has(TraceEvent::kHasExternal)) xA = d.external_id;
    if (knownA && d.has(TraceEvent::kHasExternal) && d.external_id != xA) {
      const std::uint32_t l = A.api_corr.only(c);
      log.fail(subject(), fmt::format("External id {} (the activity's, {})", d.external_id, A.file()),
               l != kNone ? fmt::format("External id {} on launch '{}' ({})", xA, m.names.str(A.ev(l).name), A.file())
                          : fmt::format("External id {} ({} externalCorrelations)", xA, A.file()),
               fmt::format("{}: a device activity and its launch call name different host ranges", A.file()));
    }
    if (xA != 0 && A.rng_ext.count(xA) == 0)
      log.fail(subject(), fmt::format("a user_annotation/cpu_op event with External id {} in {}", xA, A.file()), "none",
               "External id names no host range");
    if (!B) continue;
    // The same activity, launch and host range in B.
    if (auto n = B->dev_corr.count(c); n > 1)
      log.fail(subject(), "one device activity per correlation id", fmt::format("{} in {}", n, B->file()),
               "correlation id shared by several device activities");
    const std::uint32_t j = B->dev_corr.first(c);
    if (j == kNone) {
      log.fail(subject(), "the same activity in " + B->file(), "missing from " + B->file(),
               fmt::format("device activity in {} but not in {}", A.file(), B->file()));
    } else {
      const TraceEvent& e = B->ev(j);
      const TraceLane &la = A.t->lanes[d.lane], &lb = B->t->lanes[e.lane];
      if (e.cat != d.cat || e.name != d.name || e.start_ns != d.start_ns || e.dur_ns != d.dur_ns || la.pid != lb.pid || la.tid != lb.tid)
        log.fail(subject(), B->file() + ": " + describe(m, *B, e), A.file() + ": " + describe(m, A, d),
                 "the same correlation id names different device activities");
    }
    const auto nB = B->api_corr.count(c);
    if (nB != 1)
      log.fail(subject(), launch_text(*B), fmt::format("{}", nB), fmt::format("cuda_runtime/cuda_driver events with this correlation in {}", B->file()));
    const std::uint32_t lA = A.api_corr.only(c), lB = B->api_corr.only(c);
    if (lA != kNone && lB != kNone) {
      const TraceEvent &x = A.ev(lA), &y = B->ev(lB);
      if (x.name != y.name || x.cat != y.cat || x.start_ns != y.start_ns || x.dur_ns != y.dur_ns)
        log.fail(subject(), "launch in " + B->file() + ": " + describe(m, *B, y), "launch in " + A.file() + ": " + describe(m, A, x),
                 "the two traces attribute the activity to different launch calls");
    }
    bool knownB = false, ambB = false;
    std::uint64_t xB = corr_ext(*B, c, knownB, ambB);
    if (ambB)
      log.fail(subject(), fmt::format("one External id per correlation in {} externalCorrelations", B->file()), "several",
               "ambiguous external correlation");
    if (!knownB && j != kNone && B->ev(j).has(TraceEvent::kHasExternal)) xB = B->ev(j).external_id;
    if (knownB && j != kNone && B->ev(j).has(TraceEvent::kHasExternal) && B->ev(j).external_id != xB)
      log.fail(subject(), fmt::format("External id {} (the activity's, {})", B->ev(j).external_id, B->file()),
               fmt::format("External id {} (its launch's, {})", xB, B->file()),
               fmt::format("{}: a device activity and its launch call name different host ranges", B->file()));
    if (xA != xB)
      log.fail(subject(), fmt::format("External id {} ({})", xB, B->file()), fmt::format("External id {} ({})", xA, A.file()),
               "the two traces attribute the activity to different host ranges");
    if (xB != 0 && !B->rng.empty() && B->rng_ext.count(xB) == 0)
      log.fail(subject(), fmt::format("a user_annotation/cpu_op event with External id {} in {}", xB, B->file()), "none",
               "External id names no host range");
  }
  if (B) {
    for (std::uint32_t j : B->dev) {
      const TraceEvent& e = B->ev(j);
      if (B->dev_corr.first(e.correlation) != j || A.dev_corr.count(e.correlation) != 0) continue;
      log.fail(act_subject(m, e), "the same activity in " + A.file(), "missing from " + A.file(),
               fmt::format("device activity in {} but not in {}", B->file(), A.file()));
    }
  }
  log.pass_if_clean(fmt::format("{} device activities", checked),
                    B ? "each has one launch call, the same in both traces, and the same existing host range"
                      : "each has one launch call and an existing host range, the same as its own External id");
  if (!B) log.not_run("second trace", "one trace given: the attribution was not compared with a second export");
}

// ---------------------------------------------------------------------------------------------
// flows

bool launches_device_work(const std::string& api) {
  return api.find("Launch") != std::string::npos || api.find("Memcpy") != std::string::npos ||
         api.find("Memset") != std::string::npos || api.find("memcpy") != std::string::npos ||
         api.find("memset") != std::string::npos;
}

void check_flows(const Model& m, CheckLog& log) {
  std::size_t pairs = 0, traces = 0;
  for (const View& v : m.views) {
    if (!v.has_flows()) continue;
    ++traces;
    std::vector<std::uint32_t> si, fi;
    si.reserve(v.t->flows.size() / 2 + 1);
    fi.reserve(v.t->flows.size() / 2 + 1);
    for (std::uint32_t k = 0; k < v.t->flows.size(); ++k) (v.t->flows[k].start ? si : fi).push_back(k);
    IdIndex s_idx, f_idx;
    s_idx.build_from(si.size(), [&](std::size_t k) { return std::make_pair(v.t->flows[si[k]].id, si[k]); });
    f_idx.build_from(fi.size(), [&](std::size_t k) { return std::make_pair(v.t->flows[fi[k]].id, fi[k]); });
    for (std::uint32_t i : v.dev) {
      const TraceEvent& a = v.ev(i);
      const std::uint64_t c = a.correlation;
      if (v.dev_corr.first(c) != i) continue;
      const auto subject = [&] { return act_subject(m, a); };
      const std::uint32_t l = v.api_corr.only(c);
      const auto ns = s_idx.count(c), nf = f_idx.count(c);
      if (l == kNone) {
        if (ns + nf > 0)
          log.fail(subject(), "no ac2g flow (the activity has no single launch call)", fmt::format("{} \"s\" and {} \"f\"", ns, nf),
                   "flow for an activity without a launch");
        continue;
      }
      const TraceEvent& launch = v.ev(l);
      if (ns != 1 || nf != 1)
        log.fail(subject(), "one ac2g \"s\" and one \"f\" with id = correlation", fmt::format("{} \"s\" and {} \"f\"", ns, nf),
                 v.file() + ": missing or extra ac2g flow events");
      if (ns > 0) {
        const TraceFlow& s = v.t->flows[s_idx.first(c)];
        if (s.ts_ns != launch.start_ns || s.lane != launch.lane)
          log.fail(subject(),
                   fmt::format("\"s\" at ts {} on {} (launch '{}')", ts_text(v, launch.start_ns), v.t->lanes[launch.lane].describe(),
                               m.names.str(launch.name)),
                   fmt::format("\"s\" at ts {} on {}", ts_text(v, s.ts_ns), v.t->lanes[s.lane].describe()),
                   "flow start is not at the launch call");
      }
      if (nf > 0) {
        const TraceFlow& f = v.t->flows[f_idx.first(c)];
        if (f.ts_ns != a.start_ns || f.lane != a.lane || !f.bp_e)
          log.fail(subject(), fmt::format("\"f\" at ts {} on {} with \"bp\": \"e\"", ts_text(v, a.start_ns), v.t->lanes[a.lane].describe()),
                   fmt::format("\"f\" at ts {} on {}{}", ts_text(v, f.ts_ns), v.t->lanes[f.lane].describe(), f.bp_e ? "" : " without \"bp\": \"e\""),
                   "flow end is not at the device activity");
      }
      if (ns == 1 && nf == 1) ++pairs;
    }
    // Flows of no device activity.
    std::vector<std::uint64_t> orphans;
    for (const TraceFlow& f : v.t->flows)
      if (v.dev_corr.count(f.id) == 0) orphans.push_back(f.id);
    std::sort(orphans.begin(), orphans.end());
    orphans.erase(std::unique(orphans.begin(), orphans.end()), orphans.end());
    std::map<std::string, std::size_t> harmless;
    for (std::uint64_t id : orphans) {
      const std::uint32_t l = v.api_corr.first(id);
      if (l == kNone) {
        log.fail(fmt::format("{}: ac2g flow id {}", v.file(), id), "a device activity or API call with this correlation id",
                 "none", "flow that matches no event");
        continue;
      }
      const std::string& name = m.names.str(v.ev(l).name);
      if (launches_device_work(name)) {
        log.fail(fmt::format("{}: {} '{}' (correlation {})", v.file(), to_string(v.ev(l).cat), name, id),
                 "a device activity with this correlation id (the call launches device work)", "none",
                 "ac2g flow start on a launch, memcpy or memset call with no device record");
      } else {
        ++harmless[name];
      }
    }
    for (const auto& [name, count] : harmless)
      log.note(fmt::format("{}: '{}'", v.file(), name),
               fmt::format("{} ac2g flow start(s) on '{}' calls, which launch no device work: no device record expected", count, name));
  }
  if (traces == 0) return log.not_run("", "no ac2g flow events in the traces");
  log.pass_if_clean(fmt::format("{} ac2g flow pairs", pairs), "one \"s\" at each launch call and one \"f\" at each device activity");
}

// ---------------------------------------------------------------------------------------------
// no_dropped_records

void check_dropped(const Model& m, CheckLog& log) {
  struct FileCounts {
    std::string file;
    std::optional<std::uint64_t> dropped, oor;
  };
  std::vector<FileCounts> files;
  auto from_meta = [](const std::string& file, const json& meta) {
    FileCounts f{file, std::nullopt, std::nullopt};
    if (!meta.is_object()) return f;
    auto get = [&](const char* key) -> std::optional<std::uint64_t> {
      auto it = meta.find(key);
      if (it == meta.end() || !it->is_number_integer()) return std::nullopt;
      if (it->is_number_unsigned()) return it->get<std::uint64_t>();
      return it->get<std::int64_t>() < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(it->get<std::int64_t>()));
    };
    f.dropped = get("dropped_records");
    f.oor = get("out_of_range_records");
    return f;
  };
  if (m.table) files.push_back(from_meta(m.table->file, m.table->meta));
  std::vector<const View*> views;
  for (const View& v : m.views) views.push_back(&v);
  if (views.size() == 2 && views[1]->t->format == "trace_only") std::swap(views[0], views[1]);
  for (const View* v : views) {
    FileCounts f = from_meta(v->file(), v->t->meta);
    if (!f.dropped) f.dropped = v->t->dropped_records;
    if (!f.oor) f.oor = v->t->out_of_range_records;
    files.push_back(f);
  }
  if (m.events) files.push_back(from_meta(m.events->file, m.events->meta));
  std::string all, without;
  bool same = true, any = false;
  std::optional<std::uint64_t> first;
  for (const FileCounts& f : files) {
    if (!f.dropped) {
      without += (without.empty() ? "" : ", ") + f.file;
      continue;
    }
    any = true;
    all += fmt::format("{}{} {}", all.empty() ? "" : ", ", f.file, *f.dropped);
    if (!first) first = f.dropped;
    if (*f.dropped != *first) same = false;
    if (*f.dropped != 0)
      log.fail(f.file, "crossbench.dropped_records = 0", fmt::format("{}", *f.dropped),
               "CUPTI dropped activity records: the tables and traces are incomplete");
    if (f.oor && *f.oor != 0)
      log.fail(f.file, "out_of_range_records = 0", fmt::format("{}", *f.oor),
               "records outside the recording window were discarded: the tables and traces are incomplete");
  }
  if (!any)
    return log.not_run("", fmt::format("no dropped-record count in the metadata of {} (Kineto's exports do not record one)", without));
  if (!same)
    log.fail("all files", "the same crossbench.dropped_records in every file", all,
             "the files disagree on dropped records: they come from different sessions");
  const bool any_oor = std::any_of(files.begin(), files.end(), [](const FileCounts& f) { return f.oor.has_value(); });
  log.pass_if_clean("all files", "crossbench.dropped_records: " + all +
                                     (any_oor ? "; out-of-range counts 0" : "; no file records an out-of-range count"));
  if (!without.empty()) log.note(without, "no dropped-record count in this file's metadata");
}

// ---------------------------------------------------------------------------------------------
// Timeline checks

void check_durations(const Model& m, CheckLog& log) {
  std::string counts;
  std::size_t n = 0;
  std::vector<const View*> views;
  for (const View& v : m.views) views.push_back(&v);
  if (views.size() == 2 && views[1]->t->format == "trace_only") std::swap(views[0], views[1]);
  for (const View* v : views) {
    for (const TraceEvent& e : v->t->events) {
      if (e.dur_ns > 0) continue;
      if (is_device(e.cat))
        log.fail(v->file() + ": " + act_subject(m, e), "dur > 0", fmt::format("dur = {} ns", e.dur_ns),
                 "device activity with a non-positive duration");
      else if (e.dur_ns < 0)
        log.fail(fmt::format("{}: {} '{}' (traceEvents[{}])", v->file(), to_string(e.cat), m.names.str(e.name), e.index), "dur >= 0",
                 fmt::format("dur = {} ns", e.dur_ns), "event with a negative duration");
    }
    n += v->dev.size();
    counts += fmt::format("{}{} device activities in {}", counts.empty() ? "" : ", ", v->dev.size(), v->file());
  }
  if (n == 0) return log.not_run("", "no device activity in the traces");
  log.pass_if_clean(counts, "every device activity's duration > 0, no event's < 0");
}

/// Calls visit(lane, event) for the events `evs` of each lane in `less` order. Lanes whose events
/// already come in that order in the file (the usual case) are visited in one pass without
/// copying; the others are collected and sorted.
template <class Less, class Visit>
std::size_t per_lane_in_order(const View& v, const std::vector<std::uint32_t>& evs, Less&& less, Visit&& visit) {
  const std::size_t nl = v.t->lanes.size();
  std::vector<std::uint32_t> last(nl, kNone);
  std::vector<char> sorted(nl, 1);
  std::uint32_t prev_i = kNone;
  for (std::uint32_t i : evs) {
    const std::uint32_t l = v.ev(i).lane;
    const std::uint32_t p = prev_i != kNone && v.ev(prev_i).lane == l ? prev_i : last[l];
    if (p != kNone && less(i, p)) sorted[l] = 0;
    last[l] = i;
    prev_i = i;
  }
  std::size_t used = 0;
  for (std::uint32_t l = 0; l < nl; ++l) used += last[l] != kNone;
  if (std::all_of(sorted.begin(), sorted.end(), [](char c) { return c != 0; })) {
    for (std::uint32_t i : evs) visit(v.ev(i).lane, i);
    return used;
  }
  std::vector<std::vector<std::uint32_t>> rest(nl);
  for (std::uint32_t i : evs) {
    const std::uint32_t l = v.ev(i).lane;
    if (sorted[l]) visit(l, i);
    else rest[l].push_back(i);
  }
  for (std::uint32_t l = 0; l < nl; ++l) {
    if (rest[l].empty()) continue;
    std::sort(rest[l].begin(), rest[l].end(), less);
    for (std::uint32_t i : rest[l]) visit(l, i);
  }
  return used;
}

void check_overlap(const Model& m, CheckLog& log) {
  std::string counts;
  std::size_t total = 0;
  std::vector<const View*> views;
  for (const View& v : m.views) views.push_back(&v);
  if (views.size() == 2 && views[1]->t->format == "trace_only") std::swap(views[0], views[1]);
  for (const View* v : views) {
    std::vector<std::uint32_t> prev(v->t->lanes.size(), kNone);  // per lane: the one ending last so far
    const std::size_t used = per_lane_in_order(
        *v, v->dev,
        [&](std::uint32_t a, std::uint32_t b) {
          const TraceEvent &x = v->ev(a), &y = v->ev(b);
          if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
          if (x.end_ns() != y.end_ns()) return x.end_ns() < y.end_ns();
          return x.correlation < y.correlation;
        },
        [&](std::uint32_t lane, std::uint32_t i) {
          const TraceEvent& e = v->ev(i);
          std::uint32_t& pv = prev[lane];
          if (pv != kNone && e.start_ns < v->ev(pv).end_ns()) {
            const TraceEvent& p = v->ev(pv);
            log.fail(fmt::format("{}: {}: {}", v->file(), v->t->lanes[e.lane].describe(), act_subject(m, e)),
                     fmt::format("start >= {} (end of {})", ts_text(*v, p.end_ns()), act_subject(m, p)),
                     fmt::format("start {} ({} ns overlap)", ts_text(*v, e.start_ns), p.end_ns() - e.start_ns),
                     "two activities on one stream overlap");
          }
          if (pv == kNone || e.end_ns() > v->ev(pv).end_ns()) pv = i;
        });
    total += used;
    counts += fmt::format("{}{} (device, stream) lanes in {}", counts.empty() ? "" : ", ", used, v->file());
  }
  if (total == 0) return log.not_run("", "no device activity in the traces");
  log.pass_if_clean(counts, "the activities on each stream never overlap");
}

json latency_figures(std::vector<std::int64_t> lat) {
  if (lat.empty()) return json::object();
  const std::size_t n = lat.size();
  double sum = 0;
  std::int64_t lo = lat[0], hi = lat[0];
  for (auto x : lat) {
    sum += static_cast<double>(x);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  // Nearest-rank percentiles, selected in O(n).
  auto q = [&](double p) {
    const std::size_t k = static_cast<std::size_t>(std::min<double>(static_cast<double>(n - 1), p * static_cast<double>(n - 1) + 0.5));
    std::nth_element(lat.begin(), lat.begin() + static_cast<std::ptrdiff_t>(k), lat.end());
    return lat[k];
  };
  const std::int64_t p50 = q(0.5), p90 = q(0.9), p99 = q(0.99);
  return {{"count", n},        {"min_ns", lo},  {"p50_ns", p50}, {"p90_ns", p90},
          {"p99_ns", p99},     {"max_ns", hi},  {"mean_ns", sum / static_cast<double>(n)}};
}

void check_launch_before(const Model& m, CheckLog& log, ValidationReport& report) {
  std::string counts;
  std::size_t total = 0;
  std::vector<std::int64_t> latency;  // primary trace
  std::vector<const View*> views;
  for (const View& v : m.views) views.push_back(&v);
  if (views.size() == 2 && views[1]->t->format == "trace_only") std::swap(views[0], views[1]);
  for (const View* v : views) {
    std::size_t n = 0;
    const bool primary = v == &m.A();
    if (primary) latency.reserve(v->dev.size());
    for (std::uint32_t i : v->dev) {
      const TraceEvent& e = v->ev(i);
      const std::uint32_t l = v->api_corr.only(e.correlation);
      if (l == kNone) continue;  // attribution reports it
      ++n;
      const TraceEvent& launch = v->ev(l);
      if (primary) latency.push_back(e.start_ns - launch.start_ns);
      if (e.start_ns < launch.start_ns)
        log.fail(v->file() + ": " + act_subject(m, e),
                 fmt::format("start >= {} (start of launch '{}')", ts_text(*v, launch.start_ns), m.names.str(launch.name)),
                 fmt::format("start {} ({} ns before its launch)", ts_text(*v, e.start_ns), launch.start_ns - e.start_ns),
                 "device activity starts before the call that launched it");
    }
    total += n;
    counts += fmt::format("{}{} launched activities in {}", counts.empty() ? "" : ", ", n, v->file());
  }
  if (total == 0) return log.not_run("", "no device activity with a launch call in the traces");
  const json fig = latency_figures(std::move(latency));
  std::string dist;
  if (!fig.empty())
    dist = fmt::format("; launch latency in {} (activity start - launch call start) over {}: min {} ns, median {} ns, "
                       "p90 {} ns, p99 {} ns, max {} ns",
                       m.A().file(), fig["count"].get<std::size_t>(), fig["min_ns"].get<std::int64_t>(), fig["p50_ns"].get<std::int64_t>(),
                       fig["p90_ns"].get<std::int64_t>(), fig["p99_ns"].get<std::int64_t>(), fig["max_ns"].get<std::int64_t>());
  report.figures[checks::kLaunchBeforeKernel] = {{"file", m.A().file()}, {"launch_latency", fig}};
  log.pass_if_clean(counts, "each starts after its launch call starts" + dist);
  if (log.failures() != 0 && !dist.empty()) log.note(m.A().file(), dist.substr(2));
}

void check_window(const Model& m, CheckLog& log) {
  std::size_t ran = 0;
  std::string counts;
  for (const View& v : m.views) {
    const TraceData& t = *v.t;
    if (!t.has_window) {
      log.not_run(v.file(), "no recording window in its metadata (crossbench.window_start_ns/window_end_ns, or Kineto's "
                            "\"Trace\" span and \"Record Window End\")");
      continue;
    }
    ++ran;
    const std::string window = fmt::format("[{}, {}] ({})", ts_text(v, t.window_start_ns), ts_text(v, t.window_end_ns), t.window_source);
    for (const TraceEvent& e : t.events) {
      if (e.start_ns >= t.window_start_ns && e.end_ns() <= t.window_end_ns) continue;
      log.fail(fmt::format("{}: {} '{}' (traceEvents[{}])", v.file(), to_string(e.cat), m.names.str(e.name), e.index),
               "inside the recording window " + window,
               fmt::format("ts {} to {}", ts_text(v, e.start_ns), ts_text(v, e.end_ns())), "event outside the recording window");
    }
    for (const TraceFlow& f : t.flows) {
      if (f.ts_ns >= t.window_start_ns && f.ts_ns <= t.window_end_ns) continue;
      log.fail(fmt::format("{}: ac2g \"{}\" id {} (traceEvents[{}])", v.file(), f.start ? "s" : "f", f.id, f.index),
               "inside the recording window " + window, fmt::format("ts {}", ts_text(v, f.ts_ns)), "flow event outside the recording window");
    }
    counts += fmt::format("{}{}: {} events and {} flow events inside {}", counts.empty() ? "" : "; ", v.file(), t.events.size(),
                          t.flows.size(), window);
  }
  if (ran == 0) return;
  log.pass_if_clean(counts, "no event outside the recording window");
}

void check_lane_order(const Model& m, CheckLog& log) {
  std::string counts;
  std::size_t total = 0;
  for (const View& v : m.views) {
    const auto by_corr = [&](std::uint32_t a, std::uint32_t b) {
      const TraceEvent &x = v.ev(a), &y = v.ev(b);
      if (x.correlation != y.correlation) return x.correlation < y.correlation;
      return a < b;
    };
    auto run = [&](const std::vector<std::uint32_t>& evs, const char* what) {
      std::vector<std::uint32_t> latest(v.t->lanes.size(), kNone);  // the earlier-launched event that starts latest
      return per_lane_in_order(v, evs, by_corr, [&](std::uint32_t lane, std::uint32_t i) {
        const TraceEvent& e = v.ev(i);
        std::uint32_t& lt = latest[lane];
        if (lt != kNone && e.start_ns < v.ev(lt).start_ns && e.correlation != v.ev(lt).correlation) {
          const TraceEvent& p = v.ev(lt);
          log.fail(fmt::format("{}: {}: {}", v.file(), v.t->lanes[e.lane].describe(), act_subject(m, e)),
                   fmt::format("start >= {} (start of {}, correlation {} < {})", ts_text(v, p.start_ns), act_subject(m, p),
                               p.correlation, e.correlation),
                   fmt::format("start {} ({} ns earlier)", ts_text(v, e.start_ns), p.start_ns - e.start_ns),
                   fmt::format("timestamps not monotonic on the lane: {} in correlation (launch) order start out of order", what));
        }
        if (lt == kNone || e.start_ns >= v.ev(lt).start_ns) lt = i;
      });
    };
    const std::size_t nd = run(v.dev, "device activities"), nh = run(v.api, "API calls");
    total += nd + nh;
    counts += fmt::format("{}{}: {} streams, {} host threads", counts.empty() ? "" : "; ", v.file(), nd, nh);
  }
  if (total == 0) return log.not_run("", "no device activity or API call in the traces");
  log.pass_if_clean(counts, "on every stream and host thread, start times follow correlation (launch) order");
}

// ---------------------------------------------------------------------------------------------
// event_vs_cupti, verified

/// Per step range (event index in A): first start and last end of the device activities under
/// it. `is_step(range)` names the step ranges.
template <class IsStep>
std::unordered_map<std::uint32_t, std::pair<std::int64_t, std::int64_t>> step_spans(const View& v, IsStep&& is_step) {
  std::vector<std::uint32_t> step_of(v.t->events.size(), kNone - 1);  // kNone - 1 = not yet known
  auto find = [&](std::uint32_t r) {
    std::vector<std::uint32_t> chain;
    std::uint32_t result = kNone;
    for (int guard = 0; r != kNone && guard < 512; ++guard) {
      if (step_of[r] != kNone - 1) {
        result = step_of[r];
        break;
      }
      chain.push_back(r);
      if (is_step(r)) {
        result = r;
        break;
      }
      r = v.parent[r];
    }
    for (auto c : chain) step_of[c] = result;
    return result;
  };
  std::unordered_map<std::uint32_t, std::pair<std::int64_t, std::int64_t>> spans;
  std::uint32_t last_r = kNone;
  std::pair<std::int64_t, std::int64_t>* span = nullptr;
  for (std::uint32_t i : v.dev) {
    const TraceEvent& a = v.ev(i);
    const std::uint32_t r = attributed_range(v, a);
    if (r == kNone) continue;
    if (r != last_r) {
      last_r = r;
      const std::uint32_t s = find(r);
      span = s == kNone ? nullptr : &spans.emplace(s, std::make_pair(a.start_ns, a.end_ns())).first->second;
    }
    if (!span) continue;
    span->first = std::min(span->first, a.start_ns);
    span->second = std::max(span->second, a.end_ns());
  }
  return spans;
}

double median_of(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  return median_sorted(v);
}

void check_event_vs_cupti(const Model& m, const ValidateOptions& opts, CheckLog& log, ValidationReport& report) {
  if (!m.events) return log.not_run("", "no event times given (events.json)");
  const View& A = m.A();
  const EventsData& ev = *m.events;
  if (ev.kind == EventsData::Kind::OtherCalls) {
    // Reference medians of calls outside the profiler: find this trace's workload, report both.
    std::set<std::string> annots;
    for (std::uint32_t i : A.rng)
      if (A.ev(i).cat == TraceCat::UserAnnotation && !is_profiler_step(m.names.str(A.ev(i).name))) annots.insert(m.names.str(A.ev(i).name));
    std::vector<const EventRun*> cand;
    for (const EventRun& r : ev.runs)
      if (annots.count(r.op)) cand.push_back(&r);
    if (cand.size() > 1) {
      // Tell sizes apart by the trace's file name ("<n>_<dtype>_<op>.json", as the reference names them).
      const std::string& f = A.file();
      std::vector<const EventRun*> by_name;
      for (const EventRun* r : cand)
        if (f.rfind(std::to_string(r->n) + "_", 0) == 0) by_name.push_back(r);
      cand = by_name;
    }
    if (cand.size() != 1)
      return log.not_run("", fmt::format("cannot tell which run of {} the trace {} is ({} candidates)", ev.file, A.file(), cand.size()));
    const EventRun& run = *cand[0];
    const auto spans = step_spans(A, [&](std::uint32_t r) { return is_profiler_step(m.names.str(A.ev(r).name)); });
    std::vector<std::int64_t> cupti;
    for (const auto& [s, sp] : spans) cupti.push_back(sp.second - sp.first);
    const double cu = median_of(cupti);
    const std::string subject = fmt::format("{} n={}", run.op, run.n);
    report.figures[checks::kEventVsCupti] = {{"workload", subject},
                                             {"event_median_ns_other_calls", run.median_ns},
                                             {"cupti_step_span_median_ns", cu},
                                             {"steps", cupti.size()}};
    return log.not_run(subject, fmt::format("{} holds cudaEvent times of other calls (median {} over calls outside the profiler), "
                                            "not of the {} profiled steps, so the same iterations cannot be compared; for "
                                            "reference: median CUPTI step span {} (first device start to last device end "
                                            "per ProfilerStep), difference {}",
                                            ev.file, us(run.median_ns), cupti.size(), us(cu), us(run.median_ns - cu)));
  }
  const auto& fixtures = ev.fixtures;
  if (fixtures.empty()) return log.not_run("", ev.file + " has no fixtures");
  std::unordered_set<std::uint32_t> step_ranges;
  for (const auto& f : fixtures)
    for (const auto& s : f.steps)
      if (std::uint32_t r = A.rng_ext.first(s.range_id); r != kNone) step_ranges.insert(r);
  const auto spans = step_spans(A, [&](std::uint32_t r) { return step_ranges.count(r) != 0; });
  json fig = json::array();
  for (const auto& f : fixtures) {
    if (!f.error.empty()) {
      log.not_run(f.name, "the fixture failed in the bench: " + f.error);
      continue;
    }
    if (f.steps.empty()) {
      log.not_run(f.name, ev.file + " has no steps for this fixture");
      continue;
    }
    // Per-iteration pairing: each step's cudaEvent interval against the CUPTI span (first device
    // start to last device end) of the activities launched inside that same step, both divided by
    // the step's launches (per call).
    std::vector<std::int64_t> event_ns;
    std::vector<double> event_call, cupti_call, diff_call, abs_diff_call;
    bool usable = true;
    for (const auto& s : f.steps) {
      const std::string subject = fmt::format("{} step {}", f.name, s.step);
      event_ns.push_back(s.event_ns);
      const std::uint32_t r = A.rng_ext.first(s.range_id);
      if (r == kNone) {
        log.fail(subject, fmt::format("a ProfilerStep range with External id {} in {}", s.range_id, A.file()), "none",
                 ev.file + " names a step range that the trace does not have");
        usable = false;
        continue;
      }
      if (A.ev(r).cat != TraceCat::UserAnnotation || !is_profiler_step(m.names.str(A.ev(r).name)))
        log.fail(subject, fmt::format("range {} is a user_annotation 'ProfilerStep#N'", s.range_id),
                 fmt::format("{} '{}'", to_string(A.ev(r).cat), m.names.str(A.ev(r).name)), ev.file + " range_id is not a ProfilerStep range");
      auto sp = spans.find(r);
      if (sp == spans.end()) {
        log.fail(subject, fmt::format("device activity under range {}", s.range_id), "none",
                 "no device activity in the trace is attributed to this step");
        usable = false;
        continue;
      }
      const double n = s.launches;
      const double e = static_cast<double>(s.event_ns) / n;
      const double c = static_cast<double>(sp->second.second - sp->second.first) / n;
      event_call.push_back(e);
      cupti_call.push_back(c);
      diff_call.push_back(e - c);
      abs_diff_call.push_back(std::fabs(e - c));
    }
    const double ev_med = median_of(event_ns);
    if (f.has_median && f.median_ns != ev_med)
      log.fail(f.name + " median_ns", fmt::format("{} (median of steps[].event_ns)", num(ev_med)), num(f.median_ns),
               ev.file + " median_ns is not the median of its steps");
    if (!usable) continue;
    const SampleStats es = compute_stats(event_call), cs = compute_stats(cupti_call), ds = compute_stats(diff_call);
    const double abs_med = compute_stats(abs_diff_call).median;
    const bool cold = f.mode == "cold";
    const double tol = std::max(static_cast<double>(opts.event_abs_tol_ns), opts.event_rel_tol * es.median) +
                       (cold ? static_cast<double>(opts.event_cold_allowance_ns) : 0.0);
    const std::string numbers = fmt::format(
        "{} steps{}: per call, median cudaEvent {} ns, median CUPTI span {} ns; event - CUPTI per step: median {} ns "
        "(quartiles {} .. {}, min {}, max {}), median |event - CUPTI| {} ns ({:.2f}%), tolerance {} ns{}",
        f.steps.size(), f.mode.empty() ? "" : fmt::format(" ({} mode, {} launches per step)", f.mode, f.steps.front().launches),
        num(es.median), num(cs.median), num(ds.median), num(ds.q1), num(ds.q3), num(ds.min), num(ds.max), num(abs_med),
        es.median > 0 ? 100.0 * abs_med / es.median : 0.0, num(tol),
        cold ? fmt::format(" (cold mode: includes the {} ns single-launch allowance)", opts.event_cold_allowance_ns) : "");
    fig.push_back({{"fixture", f.name},
                   {"mode", f.mode},
                   {"steps", f.steps.size()},
                   {"launches_per_step", f.steps.front().launches},
                   {"event_median_ns", es.median},
                   {"cupti_median_ns", cs.median},
                   {"diff_ns", {{"median", ds.median}, {"q1", ds.q1}, {"q3", ds.q3}, {"min", ds.min}, {"max", ds.max}, {"mad", ds.mad}}},
                   {"abs_diff_median_ns", abs_med},
                   {"tolerance_ns", tol},
                   {"noisy", f.stop == "timed out"},
                   {"throttled", f.throttled}});
    if (abs_med > tol)
      log.fail(f.name, fmt::format("median |event - CUPTI| per call within {} ns", num(tol)),
               fmt::format("{} ns", num(abs_med)), numbers);
    else if (f.stop == "timed out")
      log.noisy(f.name, "within tolerance, but the fixture missed its noise target (stopping rule timed out), so "
                        "the agreement is not claimed: " + numbers);
    else
      log.pass(f.name, numbers);
  }
  report.figures[checks::kEventVsCupti] = std::move(fig);
}

void check_verified(const Model& m, CheckLog& log) {
  if (!m.events) return log.not_run("", "no event times given (events.json carries the verification results)");
  if (m.events->kind != EventsData::Kind::PerStep) return log.not_run("", m.events->file + " carries no verification results");
  if (m.events->fixtures.empty()) return log.not_run("", m.events->file + " has no fixtures");
  for (const auto& f : m.events->fixtures) {
    if (f.verified)
      log.pass(f.name, fmt::format("result matched the host reference (max_rel_error {})", num(f.max_rel_error)));
    else
      log.fail(f.name, "verified: true", fmt::format("verified: false (max_rel_error {})", num(f.max_rel_error)),
               "the kernel's result did not match the host reference");
  }
}

// ---------------------------------------------------------------------------------------------
// Running

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

template <class F>
void run_check(ValidationReport& report, const char* name, const ValidateOptions& opts, F&& fn) {
  Phase p(name);
  CheckLog log(report, name, opts.max_failures_per_check);
  fn(log);
  log.close();
}

ValidationReport run_all(Model& m, const ValidateOptions& opts) {
  prepare(m);
  ValidationReport report;
  report.figures = json::object();
  report.source_meta = m.A().t->meta;
  json traces = json::array();
  for (const auto& t : m.traces) traces.push_back(t.path);
  report.inputs = {{"traces", traces},
                   {"table", m.table ? json(m.table->path) : json(nullptr)},
                   {"events", m.events ? json(m.events->path) : json(nullptr)}};
  const std::string res = "text tables: within half the printed resolution (0.5 ns for \"us\" with three decimals, "
                          "500 ns for \"ms\", 0.5 ms for \"s\"); JSON files and traces: exact integer ns";
  report.tolerances[checks::kKernelStats] = "exact: integer ns, median as a double (mean of the two middle values); " + res;
  report.tolerances[checks::kTableRows] = res;
  report.tolerances[checks::kTableTotals] =
      fmt::format("table.json: percentages within +-{} percentage points, ns totals exact; text: each value within half "
                  "its printed resolution, sums within the sum of their terms' half resolutions, percentages within "
                  "half a printed digit plus the rounding of the values they are taken of",
                  num(opts.pct_tol));
  report.tolerances[checks::kAnnotationSpan] =
      fmt::format("table rows within half their printed resolution; trace gpu_user_annotation spans within {} ns of "
                  "their device work's first start and last end",
                  opts.span_tol_ns);
  report.tolerances[checks::kEventVsCupti] = fmt::format(
      "per fixture, pairing each step's cudaEvent interval with the CUPTI span of the same step, both per call "
      "(divided by the step's launches): median over steps of |event - CUPTI| <= max({} ns, {} x median cudaEvent "
      "per call); CUPTI span of a step = first device activity start to last device activity end among activities "
      "whose External id is the step's ProfilerStep range or a range nested in it; a fixture that missed its noise "
      "target is reported noisy, not passed; cold-mode fixtures (one launch per sample) get {} ns more for the GPU "
      "front end's launch and completion latency, which the event interval holds and the kernel span does not",
      opts.event_abs_tol_ns, num(opts.event_rel_tol), opts.event_cold_allowance_ns);
  report.tolerances[checks::kRecordingWindow] = "exact (integer ns)";
  report.tolerances[checks::kLaneOrder] = "exact (integer ns)";

  const bool event_only = report.source_meta.is_object() && report.source_meta.value("activity_source", "cupti") == "none";
  if (event_only) {
    // bench --no-cupti: host ranges and cudaEvent times only. Every check that compares activity
    // records is reported as not run, never as passed.
    for (const std::string& name : all_checks()) {
      if (name == checks::kVerified) {
        run_check(report, checks::kVerified, opts, [&](CheckLog& l) { check_verified(m, l); });
      } else {
        run_check(report, name.c_str(), opts, [&](CheckLog& l) {
          l.not_run("", "event-only run (bench --no-cupti): no CUPTI activity records to check");
        });
      }
    }
    return report;
  }
  run_check(report, checks::kKernelStats, opts, [&](CheckLog& l) { check_kernel_stats(m, l); });
  run_check(report, checks::kTableRows, opts, [&](CheckLog& l) { check_table_rows(m, l); });
  run_check(report, checks::kTableTotals, opts, [&](CheckLog& l) { check_table_totals(m, opts, l); });
  run_check(report, checks::kAnnotationSpan, opts, [&](CheckLog& l) { check_annotation_span(m, opts, l); });
  run_check(report, checks::kAttribution, opts, [&](CheckLog& l) { check_attribution(m, l); });
  run_check(report, checks::kFlows, opts, [&](CheckLog& l) { check_flows(m, l); });
  run_check(report, checks::kNoDroppedRecords, opts, [&](CheckLog& l) { check_dropped(m, l); });
  run_check(report, checks::kDurationsPositive, opts, [&](CheckLog& l) { check_durations(m, l); });
  run_check(report, checks::kStreamOverlap, opts, [&](CheckLog& l) { check_overlap(m, l); });
  run_check(report, checks::kLaunchBeforeKernel, opts, [&](CheckLog& l) { check_launch_before(m, l, report); });
  run_check(report, checks::kRecordingWindow, opts, [&](CheckLog& l) { check_window(m, l); });
  run_check(report, checks::kLaneOrder, opts, [&](CheckLog& l) { check_lane_order(m, l); });
  run_check(report, checks::kEventVsCupti, opts, [&](CheckLog& l) { check_event_vs_cupti(m, opts, l, report); });
  run_check(report, checks::kVerified, opts, [&](CheckLog& l) { check_verified(m, l); });
  return report;
}

/// Run-folder files must be crossbench's: a "crossbench" block with the right format, version 1
/// and an integer dropped_records; traces need baseTimeNanoseconds.
void require_meta(const json& meta, const std::string& path, const char* format) {
  auto bad = [&](const std::string& what) { throw InputError(path + ": " + what); };
  if (!meta.is_object()) bad("no \"crossbench\" metadata block");
  auto f = meta.find("format");
  if (f == meta.end() || !f->is_string()) bad("crossbench.format is missing");
  if (*f != format) bad(fmt::format("crossbench.format is \"{}\", expected \"{}\"", f->get<std::string>(), format));
  if (auto v = meta.find("version"); v != meta.end() && !(v->is_number_integer() && v->get<std::int64_t>() == 1))
    bad(fmt::format("unsupported crossbench.version {}", v->dump()));
  auto d = meta.find("dropped_records");
  if (d == meta.end()) bad("missing \"crossbench.dropped_records\"");
  if (!d->is_number_unsigned() && !(d->is_number_integer() && d->get<std::int64_t>() >= 0))
    bad("\"crossbench.dropped_records\" is not a non-negative integer");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Entry points

ValidationReport validate_run_dir(const fs::path& dir, const ValidateOptions& opts) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir.string() + ": not a directory");
  Model m;
  Phase total("validate run folder");
  m.table = read_table(dir / "table.json");
  if (!m.table->json) throw InputError((dir / "table.json").string() + ": not a crossbench table.json");
  TraceData trace_only = [&] {
    Phase p("read trace_only.json");
    return read_trace(dir / "trace_only.json", m.names);
  }();
  require_meta(trace_only.meta, trace_only.path, "trace_only");
  if (!trace_only.has_base) throw InputError(trace_only.path + ": missing \"baseTimeNanoseconds\"");
  TraceData full = [&] {
    Phase p("read full.json");
    return read_trace(dir / "full.json", m.names);
  }();
  require_meta(full.meta, full.path, "full");
  if (!full.has_base) throw InputError(full.path + ": missing \"baseTimeNanoseconds\"");
  m.events = read_events(dir / "events.json");
  if (m.events->kind != EventsData::Kind::PerStep) throw InputError(m.events->path + ": not a crossbench events.json");
  require_meta(m.table->meta, m.table->path, "table");
  require_meta(m.events->meta, m.events->path, "events");
  m.traces.push_back(std::move(full));
  m.traces.push_back(std::move(trace_only));
  ValidationReport report = run_all(m, opts);
  report.run_dir = dir.string();
  return report;
}

ValidationReport validate_files(const ValidateInputs& in, const ValidateOptions& opts) {
  if (in.traces.empty()) throw std::invalid_argument("validate: at least one --trace is required");
  if (in.traces.size() > 2) throw std::invalid_argument("validate: at most two --trace files (one session's exports)");
  Model m;
  for (const auto& p : in.traces) m.traces.push_back(read_trace(p, m.names));
  if (m.traces.size() == 2) {
    // The primary trace: not crossbench's trace_only; else the one with flows; else the first.
    const bool swap = m.traces[0].format == "trace_only" ||
                      (m.traces[1].format != "trace_only" && m.traces[0].flows.empty() && !m.traces[1].flows.empty());
    if (swap) std::swap(m.traces[0], m.traces[1]);
  }
  if (!in.table.empty()) m.table = read_table(in.table);
  if (!in.events.empty()) m.events = read_events(in.events);
  return run_all(m, opts);
}

json report_json(const ValidationReport& report) {
  json meta = report.source_meta.is_object() ? report.source_meta : json::object();
  meta["format"] = "validation";
  meta["version"] = 1;
  meta["created_utc"] = now_utc();
  if (!meta.contains("dropped_records")) meta["dropped_records"] = nullptr;
  const CheckCounts c = report.counts();
  json checks_j = json::array();
  for (const auto& r : report.checks)
    checks_j.push_back({{"check", r.check},
                        {"status", to_string(r.status)},
                        {"subject", r.subject},
                        {"expected", r.expected},
                        {"found", r.found},
                        {"message", r.message}});
  json tol = json::object();
  for (const auto& [k, v] : report.tolerances) tol[k] = v;
  json verdicts = json::object();
  for (const auto& name : all_checks()) verdicts[name] = to_string(report.status_of(name));
  json doc = json::object();
  doc["crossbench"] = std::move(meta);
  doc["passed"] = report.passed();
  doc["run_dir"] = report.run_dir;
  doc["inputs"] = report.inputs.is_null() ? json::object() : report.inputs;
  doc["tolerances"] = std::move(tol);
  doc["summary"] = {{"passed", c.passed}, {"failed", c.failed}, {"not_run", c.not_run}, {"noisy", c.noisy}};
  doc["verdicts"] = std::move(verdicts);
  doc["figures"] = report.figures.is_null() ? json::object() : report.figures;
  doc["checks"] = std::move(checks_j);
  return doc;
}

void write_report_json(const ValidationReport& report, std::ostream& out) {
  out << report_json(report).dump(1, ' ', false, json::error_handler_t::replace) << '\n';
}

fs::path write_report_json(const ValidationReport& report, const fs::path& dir_or_file) {
  std::error_code ec;
  fs::path path = fs::is_directory(dir_or_file, ec) ? dir_or_file / "validation.json" : dir_or_file;
  write_file_atomic(path, [&](std::ostream& out) { write_report_json(report, out); });
  return path;
}

void print_summary(const ValidationReport& report, std::ostream& out) {
  std::string what = report.run_dir;
  if (what.empty() && report.inputs.is_object() && report.inputs.contains("traces")) {
    for (const auto& t : report.inputs["traces"]) what += (what.empty() ? "" : ", ") + t.get<std::string>();
    if (report.inputs["table"].is_string()) what += ", " + report.inputs["table"].get<std::string>();
    if (report.inputs["events"].is_string()) what += ", " + report.inputs["events"].get<std::string>();
  }
  out << "validation of " << (what.empty() ? "(run)" : what) << ": " << (report.passed() ? "PASSED" : "FAILED") << '\n';
  std::vector<std::string> order;
  for (const auto& r : report.checks)
    if (std::find(order.begin(), order.end(), r.check) == order.end()) order.push_back(r.check);
  std::string passed_list;
  for (const auto& name : order)
    if (report.status_of(name) == CheckStatus::Passed) passed_list += (passed_list.empty() ? "" : ", ") + name;
  if (!passed_list.empty()) out << "  passed: " << passed_list << '\n';
  for (const auto& r : report.checks) {
    if (r.status == CheckStatus::Passed) continue;
    out << "  " << (r.status == CheckStatus::Failed ? "FAILED " : r.status == CheckStatus::Noisy ? "NOISY " : "NOT RUN ") << r.check;
    if (!r.subject.empty()) out << " [" << r.subject << "]";
    if (!r.expected.empty() || !r.found.empty())
      out << ": expected " << r.expected << ", found " << r.found;
    else if (!r.message.empty())
      out << ": " << r.message;
    out << '\n';
  }
  bool event_ran = false;
  for (const auto& r : report.checks) {
    if (r.check != checks::kEventVsCupti || r.status == CheckStatus::NotRun) continue;
    event_ran = true;
    if (r.status == CheckStatus::Passed) out << "  event_vs_cupti [" << r.subject << "]: " << r.message << '\n';
  }
  if (auto t = report.tolerances.find(checks::kEventVsCupti); event_ran && t != report.tolerances.end())
    out << "  tolerance event_vs_cupti: " << t->second << '\n';
  if (report.figures.is_object() && report.figures.contains(checks::kLaunchBeforeKernel)) {
    const json& f = report.figures[checks::kLaunchBeforeKernel]["launch_latency"];
    if (f.is_object() && f.contains("count"))
      out << "  launch latency (" << report.figures[checks::kLaunchBeforeKernel]["file"].get<std::string>() << ", "
          << f["count"].get<std::size_t>() << " activities): min " << f["min_ns"].get<std::int64_t>() << " ns, median "
          << f["p50_ns"].get<std::int64_t>() << " ns, p99 " << f["p99_ns"].get<std::int64_t>() << " ns, max "
          << f["max_ns"].get<std::int64_t>() << " ns\n";
  }
  const CheckCounts c = report.counts();
  out << "results: " << c.passed << " passed, " << c.failed << " failed, " << c.not_run << " not run";
  if (c.noisy > 0) out << ", " << c.noisy << " noisy";
  out << '\n';
}

void write_markdown(const ValidationReport& report, const std::string& title, std::ostream& out) {
  auto cell = [](std::string s) {
    for (auto& ch : s)
      if (ch == '|') ch = '/';
    return s;
  };
  out << "## " << title << "\n\n";
  out << "Verdict: **" << (report.passed() ? "passed" : "FAILED") << "**";
  const CheckCounts c = report.counts();
  out << " (" << c.passed << " results passed, " << c.failed << " failed, " << c.not_run << " not run";
  if (c.noisy > 0) out << ", " << c.noisy << " noisy";
  out << ")\n\n";
  out << "| check | verdict | reason |\n| --- | --- | --- |\n";
  for (const auto& name : all_checks()) {
    const CheckStatus s = report.status_of(name);
    const auto results = report.results_of(name);
    const bool partly = s == CheckStatus::Passed && std::any_of(results.begin(), results.end(), [](const CheckResult* r) {
      return r->status == CheckStatus::NotRun;
    });
    std::string reason;
    auto add = [&](const CheckResult* r, const char* prefix) {
      std::string line = prefix;
      if (!r->subject.empty()) line += "[" + r->subject + "] ";
      if (r->status == CheckStatus::Failed && (!r->expected.empty() || !r->found.empty()))
        line += "expected " + r->expected + ", found " + r->found + (r->message.empty() ? "" : " — " + r->message);
      else
        line += r->message;
      reason += (reason.empty() ? "" : "<br>") + cell(line);
    };
    const auto is_note = [](const CheckResult* r) { return r->status == CheckStatus::Passed && r->message.rfind("note: ", 0) == 0; };
    // Failures first, then notes, then what did not run; passes only when nothing else is said.
    for (const auto* r : results)
      if (r->status == CheckStatus::Failed) add(r, "");
    for (const auto* r : results)
      if (r->status == CheckStatus::Noisy) add(r, "noisy: ");
    for (const auto* r : results)
      if (is_note(r)) add(r, "");
    if (s == CheckStatus::Passed)
      for (const auto* r : results)
        if (r->status == CheckStatus::Passed && !is_note(r)) add(r, "");
    for (const auto* r : results)
      if (r->status == CheckStatus::NotRun) add(r, s == CheckStatus::NotRun ? "" : "not run: ");
    const char* verdict = s == CheckStatus::Failed ? "**FAILED**" : s == CheckStatus::NotRun ? "not run" : s == CheckStatus::Noisy ? "noisy (not passed)" : partly ? "passed (part not run)" : "passed";
    out << "| " << name << " | " << verdict << " | " << reason << " |\n";
  }
  out << '\n';
}

}  // namespace xb
