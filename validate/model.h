// The validator's model of one validation (internal to validate/, not installed): every trace
// indexed by role and id (View), what the primary trace implies for each table row (Derived), the
// table's rows matched to it (RowMatch), and the whole (Model). validate/model.cpp indexes and
// derives, validate/model_match.cpp matches the table and prepare()s the whole;
// validate/checks.h declares the checks that read it. Every index is a flat array or a dense id
// map, so a million-kernel session validates in a few seconds on one core (docs/performance.md).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "validate/counters_reader.h"
#include "validate/events_reader.h"
#include "validate/table_reader.h"
#include "validate/trace_reader.h"

namespace xb::vd {

inline constexpr std::uint32_t kNone = 0xFFFFFFFFu;

/// Phase timing on stderr when XB_VALIDATE_TIMING is set (for the benchmark's diagnosis).
class Phase {
 public:
  explicit Phase(const char* name)
      : name_(name), on_(std::getenv("XB_VALIDATE_TIMING") != nullptr), t0_(std::chrono::steady_clock::now()) {}
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

// ---------------------------------------------------------------------------------------------
// Id maps: correlation ids and External ids are dense integers in practice (CUPTI and PyTorch
// count them up), so a flat array indexed by id - min is the common case; sparse ids fall back to
// a sorted array.

class IdIndex {
 public:
  /// Builds from (id, value) pairs in file order; the first value of an id wins.
  void build(std::vector<std::pair<std::uint64_t, std::uint32_t>> items) {
    build_from(
        items.size(), [&](std::size_t i) { return items[i]; }, &items);
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
    auto a = std::lower_bound(sorted_.begin(), sorted_.end(), id,
                              [](const Item& x, std::uint64_t v) { return x.first < v; });
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
  std::vector<std::uint32_t> dev, api, rng, span, sync, ovh;  // event indices by role
  IdIndex dev_corr, api_corr, rng_ext, xcorr;                 // xcorr: correlation -> index in t->ext_corr
  std::vector<std::uint32_t> parent;                          // per event: parent range's event index (ranges)
  std::string parent_source;
  /// Name ids of async ranges (PyTorch's is_async: start and end on different threads, e.g. the
  /// nccl:* events the NCCL watchdog ends). The trace does not say which they are; the table does
  /// (its CPU total % of an async row is the integer 0). An async range has no parent and no
  /// children, Self CPU 0 and CPU total its duration (profiler_util.py _populate_cpu_children,
  /// FunctionEvent.self_cpu_time_total).
  std::set<std::uint32_t> async_names;
  bool is_async(std::uint32_t i) const { return !async_names.empty() && async_names.count(ev(i).name) != 0; }

  const TraceEvent& ev(std::uint32_t i) const { return t->events[i]; }
  const std::string& file() const { return t->file; }
  bool has_flows() const { return !t->flows.empty(); }

  /// What this trace can show (establish_evidence, before any check runs): "" when it records
  /// device activity or launches none; else why it records none though its API calls launch
  /// device work (a PyTorch profile without ProfilerActivity.CUDA). Checks that need device
  /// records are then not judged, saying this.
  std::string no_device;
  /// User annotations (record_function ranges) by (lane, start): span_annotation's index.
  std::vector<std::uint32_t> annot_by_start;
};

/// Indexes a trace's events by role and by correlation / External id.
void index_view(View& v, const TraceData& t);

/// A runtime or driver API call that puts work on the device (a launch, memcpy or memset; by
/// name: "cudaLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch", "cudaMemcpyAsync", ...).
bool launches_device_work(const std::string& api);

/// Kineto's rule for which GPU span a device activity extends (validate/model_kineto.cpp): the
/// user annotation (record_function, cat user_annotation) innermost around its launch call, on
/// the launch call's own thread, whatever the call's External id names. kNone when none holds
/// it; without a launch call in the trace, the innermost annotation of its attributed range.
/// Needs build_parents and index_annotations first.
std::uint32_t span_annotation(const View& v, const TraceEvent& activity);

/// Builds View::annot_by_start (span_annotation's index) once the async ranges are known.
void index_annotations(View& v);

/// The External id a trace gives correlation `c` (the host range its API call was made in):
/// externalCorrelations when the trace has them, else the API call's "External id". `known` is
/// false when the trace says nothing; `ambiguous` when externalCorrelations name several ids.
std::uint64_t corr_ext(const View& v, std::uint64_t c, bool& known, bool& ambiguous);

/// The host range (event index) a device activity is attributed to, through its correlation id;
/// its own "External id" only when the trace has no map for the correlation. kNone when none.
std::uint32_t attributed_range(const View& v, const TraceEvent& d);

/// The host range an API call was made in (kNone when none or unknown).
std::uint32_t api_range(const View& v, const TraceEvent& a);

/// Range parents: "Parent id" args when the trace has them, else the other trace's (same
/// External ids), else the innermost enclosing range on the same lane by time.
void build_parents(View& v, const View* other);

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
  /// Device time PyTorch adds to this row through overhead events (Kineto's "overhead"
  /// category), which take the External id of the op around them and so collect its kernels a
  /// second time: on the overhead row (Self CUDA, CUDA total) and the rows above it (CUDA total).
  std::int64_t ovh_self_cuda = 0, ovh_cuda_total = 0;
  std::uint32_t ovh_event = kNone, ovh_kernel = kNone;  ///< an example (event indices), for messages
  /// The row's first event in PyTorch's event list (by start, the longer first): key_averages
  /// adds events in that order, so the rows' unsorted order is their first events' and a row's
  /// cpu_parent (top_level_events_only) is its first event's (profiler.py
  /// _parse_kineto_results sorts function_events; profiler_util.py FunctionEventAvg.add).
  std::int64_t first_start = std::numeric_limits<std::int64_t>::max(), first_end = 0;
  std::uint32_t first_ev = kNone;  ///< event index
  bool first_has_parent = false;   ///< that event has a CPU parent: not a top-level row
  /// Takes an event of the row into account for first_*.
  void seen(std::int64_t start, std::int64_t end, std::uint32_t ev, bool has_parent) {
    if (start > first_start || (start == first_start && (end < first_end || (end == first_end && ev >= first_ev))))
      return;
    first_start = start;
    first_end = end;
    first_ev = ev;
    first_has_parent = has_parent;
  }
  /// PyTorch's value of the row for a sort key of key_averages().table(sort_by=...): its own
  /// figures, overhead events' double count included (PyTorch sorts on what it prints).
  double cuda_total_pt() const { return static_cast<double>(cuda_total + ovh_cuda_total); }
  double self_cuda_pt() const { return static_cast<double>(self_cuda + ovh_self_cuda); }
};

/// A row of key_averages(group_by_input_shape=True): (kind, display name, shapes), the shapes a
/// NameTable id of input_shapes_text() ("[]" for events without Input Dims).
struct GroupKey {
  TraceCat cat;
  std::uint32_t name, shapes;
  bool operator<(const GroupKey& o) const {
    return cat != o.cat ? cat < o.cat : name != o.name ? name < o.name : shapes < o.shapes;
  }
  RowKey row() const { return {cat, name}; }
};

/// Device-work spans of one annotation instance on one lane.
struct SpanAcc {
  std::uint32_t range, lane;
  std::int64_t first, last;
};

struct Derived {
  std::unordered_map<RowKey, Expected, RowKeyHash> rows;  ///< by (kind, display name)
  std::vector<std::uint32_t> disp;                        ///< name id -> display name id
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
  std::size_t unattributed = 0;      ///< device activities with no host range
  /// Row keys of single "ProfilerStep#N" ranges: kept so that a table listing steps one by one
  /// matches too, but not required (PyTorch and crossbench merge them into "ProfilerStep*").
  std::set<RowKey> aliases;
  /// Rows whose expected figures rest on a construct the model does not cover -> what it is.
  /// table_rows reports a disagreement on such a row as not judged, never as failed.
  std::unordered_map<RowKey, std::string, RowKeyHash> unmodelled;
  /// parent display-name links of host rows: child key -> set of parent keys.
  std::unordered_map<RowKey, std::set<RowKey>, RowKeyHash> parents;
  /// key_averages(group_by_input_shape=True)'s rows (derive with group_by_shapes): host ranges
  /// by their Input Dims, every other row as one group of shapes "[]" (no_shapes).
  std::map<GroupKey, Expected> groups;
  std::uint32_t no_shapes = kNone;  ///< NameTable id of "[]"
  /// PyTorch's footers over every row (_build_table), printed or not: the Self CPU time total
  /// is the sum of every CPU event's Self CPU, which telescopes to the durations of the CPU
  /// events without a CPU parent (async ones have none); the Self CUDA time total sums the
  /// device rows (kernels, memcpy, memset; GPU spans are left out).
  std::int64_t self_cpu_total = 0, self_cuda_total = 0;
};

/// True for a single step range's name, "ProfilerStep#<digits>".
bool is_profiler_step(const std::string& s);

/// What the trace implies for each table row, annotation and span; with `group_by_shapes`, also
/// each row of key_averages(group_by_input_shape=True) (Derived::groups).
Derived derive(const View& v, NameTable& names, bool group_by_shapes = false);

// ---------------------------------------------------------------------------------------------
// Table rows matched to the trace

struct RowMatch {
  bool matched = false;
  bool ambiguous = false;
  /// The row's name holds a character Kineto's JSON export does not write (kineto_renames): it
  /// stands for the trace's "unknown" events of its kind (key), judged under its table name.
  bool renamed = false;
  RowKey key{TraceCat::Kernel, kNone};
  std::string note;  ///< why unmatched/ambiguous, or how a cut name was matched
  /// A table with an Input Shapes column: the group's shapes (NameTable id) when its cell names
  /// one group of `key`; kNone otherwise (shapes_note says why).
  std::uint32_t shapes = kNone;
  std::string shapes_note;
};

/// Device activities and annotation GPU spans: the rows with device time only.
bool device_side(TraceCat c);

/// Matches every table row to a (kind, display name) of the trace. table.json rows carry their
/// kind; text rows are matched by name (exact, or by prefix for a name cut with "..."), on the
/// host side when the row has CPU time, on the device side when it has only device time; a row
/// whose name Kineto writes as "unknown" to the trace's "unknown" events (match_renamed_rows).
std::vector<RowMatch> match_rows(const TableData& tb, const Derived* d, NameTable& names);

/// True when Kineto's JSON export writes `name` as "unknown": a byte that is not printable ASCII
/// (any non-ASCII UTF-8, a control character; libkineto output_json.cpp
/// sanitizeForNonReadableChars, std::isprint per byte).
bool kineto_renames(const std::string& name);

/// The text rows match_rows left unmatched whose names Kineto writes as "unknown", matched to
/// the trace's "unknown" events of their side (host rows to host kinds, device-only rows to
/// device kinds), RowMatch::renamed set. Several rows of one kind share those events: all are
/// ambiguous (their figures cannot be told apart), keyed to them.
void match_renamed_rows(const TableData& tb, const Derived& d, NameTable& names, std::vector<RowMatch>& out);

// ---------------------------------------------------------------------------------------------
// The model of one validation

struct Model {
  NameTable names;
  std::vector<TraceData> traces;  // [0] primary (A), [1] second (B)
  std::vector<View> views;
  std::optional<TableData> table;
  std::optional<EventsData> events;
  std::optional<CountersFile> counters;  // counters.json of a run folder, when it has one
  Derived derived;                       // from views[0]
  std::vector<RowMatch> matches;         // per table row
  /// The table's rows are judged group by group (an Input Shapes column, a PyTorch trace with
  /// Input Dims): matches[i].shapes names each row's group in derived.groups.
  bool by_shapes = false;
  /// The figures a matched row is judged against: its group's when by_shapes, else its name's.
  const Expected* expected(const RowMatch& mt) const;
  /// "" unless the table's device columns are the legacy profiler's per-op cudaEvent times,
  /// which no trace carries (establish_evidence); then why. Its CPU columns are still judged.
  std::string legacy_device;
  const View& A() const { return views[0]; }
  const View* B() const { return views.size() > 1 ? &views[1] : nullptr; }
};

/// What the files can show, established before any check runs (issue 29's rule;
/// docs/validator.md "What the files can show"): per trace whether it records device activity
/// (View::no_device) and whether the table's device columns are the legacy profiler's
/// (Model::legacy_device). Needs the traces indexed and the table read.
void establish_evidence(Model& m);

/// The reason every trace gives for recording no device activity (View::no_device), or "" when
/// one of them records device activity or launches none: checks that need device records are
/// then not judged with it.
std::string no_device_reason(const Model& m);

/// Indexes the traces, establishes what they can show, finds range parents, derives the
/// expected rows and matches the table.
void prepare(Model& m);

}  // namespace xb::vd
