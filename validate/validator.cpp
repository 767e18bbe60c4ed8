// The validator (validate/validator.h): read the files once into compact records
// (validate/trace_reader.h, table_reader.h, events_reader.h), index them, then run the named
// checks. Every index is a flat array or a dense id map, so a million-kernel session validates in
// a few seconds on one core (README, "Performance").
#include "validate/validator.h"

#include <algorithm>
#include <cmath>
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
  }
  return "unknown";
}

CheckStatus check_status_from_string(const std::string& name) {
  if (name == "passed") return CheckStatus::Passed;
  if (name == "failed") return CheckStatus::Failed;
  if (name == "not_run") return CheckStatus::NotRun;
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
  bool any_pass = false;
  for (const auto& r : checks) {
    if (r.check != check) continue;
    if (r.status == CheckStatus::Failed) return CheckStatus::Failed;
    if (r.status == CheckStatus::Passed) any_pass = true;
  }
  return any_pass ? CheckStatus::Passed : CheckStatus::NotRun;
}

namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFFu;

std::string num(double d) { return fmt::format("{}", d); }

/// ns as microseconds with three decimals ("591.005 us"), fractional ns kept.
std::string us(double ns) {
  if (std::fabs(ns - std::round(ns)) < 1e-9) return format_us(static_cast<std::int64_t>(std::llround(ns))) + " us";
  return fmt::format("{:.4f} us", ns / 1000.0);
}

// ---------------------------------------------------------------------------------------------
// Id maps: correlation ids and External ids are dense integers in practice (CUPTI and PyTorch
// count them up), so a flat array indexed by id - min is the common case; sparse ids fall back to
// a sorted array.

class IdIndex {
 public:
  /// Builds from (id, value) pairs in file order; the first value of an id wins.
  void build(std::vector<std::pair<std::uint64_t, std::uint32_t>> items) {
    n_ = items.size();
    if (items.empty()) return;
    std::uint64_t lo = items[0].first, hi = items[0].first;
    for (const auto& [id, v] : items) {
      lo = std::min(lo, id);
      hi = std::max(hi, id);
    }
    if (hi - lo < 4 * static_cast<std::uint64_t>(items.size()) + 1024) {
      dense_ = true;
      base_ = lo;
      first_.assign(static_cast<std::size_t>(hi - lo + 1), kNone);
      count_.assign(first_.size(), 0);
      for (const auto& [id, v] : items) {
        const std::size_t k = static_cast<std::size_t>(id - lo);
        if (count_[k]++ == 0) first_[k] = v;
      }
    } else {
      dense_ = false;
      std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      sorted_ = std::move(items);
    }
  }
  std::uint32_t count(std::uint64_t id) const {
    if (dense_) {
      if (id < base_ || id - base_ >= first_.size()) return 0;
      return count_[static_cast<std::size_t>(id - base_)];
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
  std::vector<std::uint32_t> first_, count_;
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
  std::vector<std::pair<std::uint64_t, std::uint32_t>> dc, ac, re;
  for (std::uint32_t i = 0; i < t.events.size(); ++i) {
    const TraceEvent& e = t.events[i];
    if (is_device(e.cat)) {
      v.dev.push_back(i);
      dc.emplace_back(e.correlation, i);
    } else if (is_api(e.cat)) {
      v.api.push_back(i);
      ac.emplace_back(e.correlation, i);
    } else if (is_range(e.cat)) {
      v.rng.push_back(i);
      if (e.has(TraceEvent::kHasExternal) && e.external_id != 0) re.emplace_back(e.external_id, i);
    } else if (e.cat == TraceCat::GpuUserAnnotation) {
      v.span.push_back(i);
    } else {
      v.sync.push_back(i);
    }
  }
  v.dev_corr.build(std::move(dc));
  v.api_corr.build(std::move(ac));
  v.rng_ext.build(std::move(re));
  if (t.has_ext_corr) {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> xc;
    xc.reserve(t.ext_corr.size());
    for (std::uint32_t i = 0; i < t.ext_corr.size(); ++i) xc.emplace_back(t.ext_corr[i].first, i);
    v.xcorr.build(std::move(xc));
  }
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
      if (!s.has(TraceEvent::kHasParent) || s.parent_id == 0 || s.parent_id == r.external_id) continue;
      v.parent[i] = v.rng_ext.first(s.parent_id);
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
    std::int64_t kernels = 0, spans = 0, direct = 0;
    std::int64_t n_spans = 0;
  };
  std::unordered_map<std::uint32_t, Annot> annot;
  std::vector<SpanAcc> spans;  ///< kernel-derived spans per (annotation range, lane)
  std::size_t unattributed = 0;  ///< device activities with no host range
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

  // Per range: durations of direct children (ranges and API calls), device time.
  const std::size_t n = v.t->events.size();
  std::vector<std::int64_t> child(n, 0), self_cuda(n, 0), cuda_total(n, 0);
  for (std::uint32_t i : v.rng)
    if (v.parent[i] != kNone) child[v.parent[i]] += v.ev(i).dur_ns;
  for (std::uint32_t i : v.api) {
    const TraceEvent& a = v.ev(i);
    const std::uint32_t r = api_range(v, a);
    if (r != kNone) child[r] += a.dur_ns;
    Expected& e = d.rows[{a.cat, disp(a.name)}];
    ++e.calls;
    e.self_cpu += a.dur_ns;
    e.cpu_total += a.dur_ns;
  }
  // Device activities: rows, Self CUDA of their range, CUDA total up the tree, annotation spans.
  std::uint32_t last_range = kNone, last_lane = kNone;
  std::vector<std::size_t> last_slots;
  std::unordered_map<std::uint64_t, std::size_t> slot_of;
  std::uint32_t annot_names[64];
  for (std::uint32_t i : v.dev) {
    const TraceEvent& a = v.ev(i);
    Expected& e = d.rows[{a.cat, disp(a.name)}];
    ++e.calls;
    e.self_cuda += a.dur_ns;
    e.cuda_total += a.dur_ns;
    const std::uint32_t r = attributed_range(v, a);
    if (r == kNone) {
      ++d.unattributed;
      continue;
    }
    self_cuda[r] += a.dur_ns;
    if (v.ev(r).cat == TraceCat::UserAnnotation) d.annot[disp(v.ev(r).name)].direct += a.dur_ns;
    int n_annot = 0;
    const bool same = r == last_range && a.lane == last_lane;
    if (!same) last_slots.clear();
    for_ancestors(v, r, [&](std::uint32_t x) {
      cuda_total[x] += a.dur_ns;
      const TraceEvent& rx = v.ev(x);
      if (rx.cat != TraceCat::UserAnnotation) return;
      const std::uint32_t dn = disp(rx.name);
      bool seen = false;
      for (int k = 0; k < n_annot; ++k) seen = seen || annot_names[k] == dn;
      if (!seen && n_annot < 64) {
        annot_names[n_annot++] = dn;
        d.annot[dn].kernels += a.dur_ns;
      }
      if (!same) {
        const std::uint64_t key = (static_cast<std::uint64_t>(x) << 32) | a.lane;
        auto [it, fresh] = slot_of.emplace(key, d.spans.size());
        if (fresh) d.spans.push_back({x, a.lane, a.start_ns, a.end_ns()});
        last_slots.push_back(it->second);
      }
    });
    for (std::size_t s : last_slots) {
      d.spans[s].first = std::min(d.spans[s].first, a.start_ns);
      d.spans[s].last = std::max(d.spans[s].last, a.end_ns());
    }
    last_range = r;
    last_lane = a.lane;
  }
  for (const SpanAcc& s : d.spans) {
    Derived::Annot& an = d.annot[disp(v.ev(s.range).name)];
    an.spans += s.last - s.first;
    ++an.n_spans;
    Expected& e = d.rows[{TraceCat::GpuUserAnnotation, disp(v.ev(s.range).name)}];
    ++e.calls;
    e.self_cuda += s.last - s.first;
    e.cuda_total += s.last - s.first;
  }
  for (std::uint32_t i : v.rng) {
    const TraceEvent& r = v.ev(i);
    const RowKey key{r.cat, disp(r.name)};
    Expected& e = d.rows[key];
    ++e.calls;
    e.cpu_total += r.dur_ns;
    e.self_cpu += std::max<std::int64_t>(0, r.dur_ns - child[i]);  // clamped, as crossbench's table
    e.self_cuda += self_cuda[i];
    e.cuda_total += cuda_total[i];
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
  for (std::size_t i = 0; i < m.traces.size(); ++i) index_view(m.views[i], m.traces[i]);
  for (std::size_t i = 0; i < m.views.size(); ++i) {
    const View* other = m.views.size() > 1 ? &m.views[1 - i] : nullptr;
    build_parents(m.views[i], other);
  }
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

const char* row_kind_text(TraceCat c) { return to_string(c); }

