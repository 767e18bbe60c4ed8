// derive() (validate/model.h): what the primary trace implies for each table row, one phase per
// method of Derivation (host ranges and API calls nesting, overhead events, the same-name folds,
// device activities and annotation spans, the overhead events' double-counted kernels, range rows
// and input-shape groups). validate/model_match.cpp matches the table's rows to it.
#include "validate/model.h"

#include <fmt/format.h>

namespace xb::vd {

namespace {

/// A CPU event of one thread's timeline and the parent the model gives it (event indices; kNone:
/// none).
struct Nested {
  std::uint32_t ev, parent;
};

/// PyTorch's nesting of one thread's CPU events (profiler_util.py
/// EventList._populate_cpu_children): by start, the longer first, each event is the child of
/// the top of a stack of open events if it starts before the top's end and does not end after
/// it; otherwise the top is closed and the next one tried. Returns the events whose parent under
/// that rule differs from the model's, each with PyTorch's parent.
std::vector<Nested> stack_differences(const View& v, std::vector<Nested> nodes) {
  std::sort(nodes.begin(), nodes.end(), [&](const Nested& a, const Nested& b) {
    const TraceEvent &x = v.ev(a.ev), &y = v.ev(b.ev);
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.end_ns() != y.end_ns()) return x.end_ns() > y.end_ns();
    return a.ev < b.ev;
  });
  std::vector<Nested> out;
  std::vector<std::uint32_t> stack;
  for (const Nested& n : nodes) {
    const TraceEvent& e = v.ev(n.ev);
    while (!stack.empty() && (e.start_ns >= v.ev(stack.back()).end_ns() || e.end_ns() > v.ev(stack.back()).end_ns()))
      stack.pop_back();
    const std::uint32_t parent = stack.empty() ? kNone : stack.back();
    if (parent != n.parent) out.push_back({n.ev, parent});
    stack.push_back(n.ev);
  }
  return out;
}

/// Kineto writes each gpu_user_annotation span 1 ns wider at both ends than the device work it
/// covers; PyTorch's table uses the unwidened span (observed on all 18 spans of
/// tests/data/torch-h200; tests/torch_oracle/key_averages.py ANNOTATION_EXPORT_WIDENING_NS).
constexpr std::int64_t kSpanWideningNs = 2;

/// An overhead event: on the main thread, under the innermost range or API call holding its
/// start (nest_range, nest_api: an index into View::api); op: the range whose External id it took.
struct Ovh {
  std::uint32_t ev, nest_range = kNone, nest_api = kNone, op = kNone;
};

/// One derive(): the state its phases share, one method per phase, run in order by run().
class Derivation {
 public:
  Derivation(const View& view, NameTable& name_table, bool by_shapes)
      : v(view),
        names(name_table),
        group_by_shapes(by_shapes),
        kineto(view.t->format.empty()),
        nr(view.rng.size()),
        slot(view.t->events.size(), kNone),
        child(nr, 0),
        self_cuda(nr, 0),
        cuda_total(nr, 0),
        first_dev(nr, kNone),
        api_parent(view.api.size(), kNone),
        api_lane(view.api.size(), kNone),
        api_op(view.api.size(), kNone),
        api_outer(view.api.size(), kNone),
        api_child(view.api.size(), 0),
        nchild(kineto ? nr : 0, 0),
        top(nr),
        folded(nr, 0),
        api_folded(view.api.size(), 0),
        ovh_slot(group_by_shapes ? nr : 0, 0) {
    const std::uint32_t step_row = names.intern("ProfilerStep*");
    d.disp.resize(names.size());
    for (std::uint32_t i = 0; i < d.disp.size(); ++i) d.disp[i] = is_profiler_step(names.str(i)) ? step_row : i;
    d.annot.resize(names.size());
    for (std::uint32_t k = 0; k < nr; ++k) slot[v.rng[k]] = k;
  }

  Derived run() {
    order_ranges_by_start();
    find_main_lane();
    link_api_calls();
    nest_api_calls();
    nest_overheads();
    if (kineto && moved_calls_cross()) mark_stack_differences();
    fold_ranges();
    fold_api_calls();
    add_api_rows();
    add_device_activities();
    add_span_rows();
    add_overhead_kernels();
    add_range_rows();
    // Every other row (API calls, overhead events, device activities, GPU spans) is one group of
    // shapes "[]": only ops carry Input Dims.
    if (group_by_shapes)
      for (const auto& [k, e] : d.rows)
        if (!is_range(k.first)) d.groups[{k.first, k.second, d.no_shapes}] = e;
    return std::move(d);
  }

 private:
  std::uint32_t disp(std::uint32_t name) const { return name < d.disp.size() ? d.disp[name] : name; }

  /// Row accumulator with a one-entry cache (consecutive events mostly share a row).
  Expected& row(TraceCat cat, std::uint32_t name) {
    const RowKey k{cat, disp(name)};
    if (!last_row || k != last_key) {
      last_row = &d.rows[k];
      last_key = k;
    }
    return *last_row;
  }

  /// Ranges per lane by start, to find the innermost range around a time.
  void order_ranges_by_start() {
    if (!(kineto && (!v.ovh.empty() || !v.api.empty()))) return;
    for (std::uint32_t i : v.rng)
      if (!v.is_async(i)) by_start.push_back(i);
    std::sort(by_start.begin(), by_start.end(), [&](std::uint32_t a, std::uint32_t b) {
      const TraceEvent &x = v.ev(a), &y = v.ev(b);
      if (x.lane != y.lane) return x.lane < y.lane;
      if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
      return x.end_ns() > y.end_ns();
    });
  }

  /// Innermost range on `lane` holding [t0, t1] (t1 < 0: the point t0, end excluded).
  std::uint32_t range_around(std::uint32_t lane, std::int64_t t0, std::int64_t t1) const {
    auto it = std::upper_bound(by_start.begin(), by_start.end(), std::make_pair(lane, t0),
                               [&](const std::pair<std::uint32_t, std::int64_t>& q, std::uint32_t i) {
                                 const TraceEvent& e = v.ev(i);
                                 return q.first != e.lane ? q.first < e.lane : q.second < e.start_ns;
                               });
    while (it != by_start.begin()) {
      --it;
      const TraceEvent& e = v.ev(*it);
      if (e.lane != lane) return kNone;
      std::uint32_t r = *it;
      for (int guard = 0; r != kNone && guard < 512; ++guard) {
        const TraceEvent& x = v.ev(r);
        const bool holds = t1 < 0 ? (x.start_ns <= t0 && t0 < x.end_ns()) : (x.start_ns <= t0 && t1 <= x.end_ns());
        if (holds) return r;
        r = v.parent[r];
      }
      // not nested in its predecessor's chain: look further back only past ranges that ended
      // (a partial overlap); one step back is enough for properly nested traces
      if (e.end_ns() <= t0) return kNone;
    }
    return kNone;
  }

  /// The main thread (the process's, tid == pid; else the first range's thread).
  void find_main_lane() {
    if (!kineto) return;
    // ranges first, then API calls (a trace of worker threads whose ops were not recorded has
    // API calls alone)
    for (const std::vector<std::uint32_t>* host : {&v.rng, &v.api}) {
      for (std::uint32_t i : *host) {
        const TraceLane& l = v.t->lanes[v.ev(i).lane];
        if (l.pid_text.empty() && l.tid_text.empty() && l.pid == l.tid) {
          main_lane = v.ev(i).lane;
          break;
        }
      }
      if (main_lane != kNone) break;
    }
    if (main_lane == kNone && !v.rng.empty()) main_lane = v.ev(v.rng[0]).lane;
  }

  /// API calls: a linked one belongs to its op (its thread); an unlinked one (no External id) of
  /// a PyTorch trace nests by time on the MAIN thread's timeline, whichever thread CUPTI saw it
  /// on (PyTorch's FunctionEvent.thread for it is the profiling thread's: observed on every
  /// export of tests/data/torch-matrix, families threads and dataloader).
  void link_api_calls() {
    for (std::size_t j = 0; j < v.api.size(); ++j) {
      const TraceEvent& a = v.ev(v.api[j]);
      std::uint32_t r = api_range(v, a);
      api_op[j] = r;
      api_lane[j] = r != kNone ? v.ev(r).lane : a.lane;
      if (r == kNone && kineto && !a.has(TraceEvent::kHasExternal) && main_lane != kNone) api_lane[j] = main_lane;
      // In PyTorch's tree an API call is a child of the innermost event around it in time on its
      // thread (_populate_cpu_children), not of the op its External id names: a cudaGraphLaunch
      // made under '## Call CompiledFxGraph' but linked to 'Torch-Compiled Region' (torch.compile
      // reduce-overhead) counts in the annotation's children. Its kernels still go by External id.
      if (kineto) r = range_around(api_lane[j], a.start_ns, a.end_ns());
      api_parent[j] = r;
    }
  }

  /// An API call inside another one of the same thread (a driver call under a runtime call) is
  /// that call's child: its parent's Self CPU excludes it and the range around them counts the
  /// outer call only (profiler_util.py EventList._populate_cpu_children nests every CPU event of
  /// a thread).
  void nest_api_calls() {
    if (!(kineto && v.api.size() > 1)) return;
    std::vector<std::uint32_t> order(v.api.size());
    for (std::uint32_t j = 0; j < order.size(); ++j) order[j] = j;
    std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
      const TraceEvent &a = v.ev(v.api[x]), &b = v.ev(v.api[y]);
      if (api_lane[x] != api_lane[y]) return api_lane[x] < api_lane[y];
      if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
      return a.end_ns() > b.end_ns();
    });
    std::vector<std::uint32_t> stack;
    for (std::uint32_t j : order) {
      const TraceEvent& a = v.ev(v.api[j]);
      while (!stack.empty() &&
             (api_lane[stack.back()] != api_lane[j] || v.ev(v.api[stack.back()]).end_ns() < a.end_ns()))
        stack.pop_back();
      // nested only when the outer call is inside the same range (or both in none)
      if (!stack.empty() && api_parent[stack.back()] == api_parent[j]) {
        api_outer[j] = stack.back();
        api_child[stack.back()] += a.dur_ns;
      }
      stack.push_back(j);
    }
  }

  /// Overhead events: on the main thread (the process's, tid == pid), under the innermost range
  /// or API call holding their start; their id is the External id of the op there.
  void nest_overheads() {
    if (!(kineto && !v.ovh.empty())) return;
    std::vector<std::uint32_t> apis;  // API calls of the main lane, by start
    for (std::uint32_t j = 0; j < v.api.size(); ++j)
      if (api_lane[j] == main_lane) apis.push_back(j);
    std::sort(apis.begin(), apis.end(),
              [&](std::uint32_t a, std::uint32_t b) { return v.ev(v.api[a]).start_ns < v.ev(v.api[b]).start_ns; });
    for (std::uint32_t i : v.ovh) {
      const TraceEvent& o = v.ev(i);
      Ovh ov;
      ov.ev = i;
      const std::uint32_t r = main_lane == kNone ? kNone : range_around(main_lane, o.start_ns, -1);
      std::uint32_t api = kNone;
      auto it = std::upper_bound(apis.begin(), apis.end(), o.start_ns,
                                 [&](std::int64_t t, std::uint32_t j) { return t < v.ev(v.api[j]).start_ns; });
      if (it != apis.begin()) {
        const TraceEvent& a = v.ev(v.api[*(it - 1)]);
        if (a.start_ns <= o.start_ns && o.start_ns < a.end_ns() && (r == kNone || a.start_ns >= v.ev(r).start_ns))
          api = *(it - 1);
      }
      if (api != kNone) {
        ov.op = v.ev(v.api[api]).has(TraceEvent::kHasExternal) ? api_op[api] : kNone;
        if (o.end_ns() <= v.ev(v.api[api]).end_ns()) ov.nest_api = api;
      } else {
        ov.op = r;
      }
      if (ov.nest_api == kNone) {
        std::uint32_t x = r;
        while (x != kNone && !(v.ev(x).start_ns <= o.start_ns && o.end_ns() <= v.ev(x).end_ns())) x = v.parent[x];
        ov.nest_range = x;
      }
      if (ov.nest_api != kNone) api_child[ov.nest_api] += o.dur_ns;
      ovhs.push_back(ov);
      Expected& e = row(o.cat, o.name);
      ++e.calls;
      e.self_cpu += o.dur_ns;
      e.cpu_total += o.dur_ns;
      e.seen(o.start_ns, o.end_ns(), i, ov.nest_range != kNone || ov.nest_api != kNone);
      if (ov.nest_range == kNone && ov.nest_api == kNone) d.self_cpu_total += o.dur_ns;
    }
  }

  /// API calls of other threads, moved onto the main thread's timeline, that partly overlap an
  /// event there: PyTorch's one stack per thread may then nest events otherwise than the model
  /// (a call that starts inside an op and ends after it closes the op for the events after it).
  /// Whether such a call exists.
  bool moved_calls_cross() const {
    // Events of the main timeline (its ranges, API calls and overhead events), by start and by
    // end: the ones that partly overlap a moved call start inside it and end after it, or start
    // before it and end inside it; two binary searches find them (no scan of every pair).
    std::vector<std::uint32_t> by_s, by_e;
    for (std::uint32_t i : v.rng)
      if (v.ev(i).lane == main_lane) by_s.push_back(i);
    for (std::size_t j = 0; j < v.api.size(); ++j)
      if (api_lane[j] == main_lane) by_s.push_back(v.api[j]);
    for (const Ovh& ov : ovhs) by_s.push_back(ov.ev);
    by_e = by_s;
    std::sort(by_s.begin(), by_s.end(),
              [&](std::uint32_t x, std::uint32_t y) { return v.ev(x).start_ns < v.ev(y).start_ns; });
    std::sort(by_e.begin(), by_e.end(),
              [&](std::uint32_t x, std::uint32_t y) { return v.ev(x).end_ns() < v.ev(y).end_ns(); });
    bool crossed = false;
    for (std::size_t j = 0; j < v.api.size() && !crossed; ++j) {
      const TraceEvent& a = v.ev(v.api[j]);
      if (a.lane == api_lane[j] || by_s.empty()) continue;
      // starts inside a, ends after it
      auto it = std::upper_bound(by_s.begin(), by_s.end(), a.start_ns,
                                 [&](std::int64_t t, std::uint32_t x) { return t < v.ev(x).start_ns; });
      for (; it != by_s.end() && v.ev(*it).start_ns < a.end_ns() && !crossed; ++it)
        crossed = *it != v.api[j] && v.ev(*it).end_ns() > a.end_ns();
      // starts before a, ends inside it
      auto jt = std::upper_bound(by_e.begin(), by_e.end(), a.start_ns,
                                 [&](std::int64_t t, std::uint32_t x) { return t < v.ev(x).end_ns(); });
      for (; jt != by_e.end() && v.ev(*jt).end_ns() < a.end_ns() && !crossed; ++jt)
        crossed = *jt != v.api[j] && v.ev(*jt).start_ns < a.start_ns;
    }
    return crossed;
  }

  /// Where such calls exist (moved_calls_cross), the main thread's events are nested by
  /// PyTorch's rule too, and the rows of every event whose parent differs (with their ancestors)
  /// are not judged.
  void mark_stack_differences() {
    std::vector<Nested> nodes;
    for (std::uint32_t i : v.rng)
      if (v.ev(i).lane == main_lane && !v.is_async(i)) nodes.push_back({i, v.parent[i]});
    for (std::size_t j = 0; j < v.api.size(); ++j)
      if (api_lane[j] == main_lane)
        nodes.push_back({v.api[j], api_outer[j] != kNone ? v.api[api_outer[j]] : api_parent[j]});
    for (const Ovh& ov : ovhs) nodes.push_back({ov.ev, ov.nest_api != kNone ? v.api[ov.nest_api] : ov.nest_range});
    std::unordered_map<std::uint32_t, std::uint32_t> up;  // the model's parents
    for (const Nested& n : nodes) up.emplace(n.ev, n.parent);
    const auto mark_chain = [&](std::uint32_t x, const std::string& why) {
      for (int guard = 0; x != kNone && guard < 512; ++guard) {
        d.unmodelled[{v.ev(x).cat, disp(v.ev(x).name)}] = why;
        const auto it = up.find(x);
        x = it == up.end() ? kNone : it->second;
      }
    };
    const auto label = [&](std::uint32_t x) {
      return x == kNone ? std::string("no parent") : fmt::format("'{}'", names.str(v.ev(x).name));
    };
    for (const Nested& n : stack_differences(v, nodes)) {
      const std::uint32_t model = up[n.ev];
      const std::string why = fmt::format(
          "PyTorch's one stack of CPU events per thread nests '{}' under {} where the model has {} (API calls of "
          "other threads share the main thread's timeline and partly overlap its events)",
          names.str(v.ev(n.ev).name), label(n.parent), label(model));
      mark_chain(n.ev, why);
      mark_chain(n.parent, why);
      mark_chain(model, why);
    }
  }

  /// The same-name fold: children per range (ranges, API calls, overhead events), then a range
  /// whose parent has its display name and only that child is folded into it (top: the range
  /// that stands for it). Then the durations of each range's direct children (ranges, overhead
  /// events; API calls in add_api_rows).
  void fold_ranges() {
    for (std::uint32_t k = 0; k < nr; ++k) top[k] = k;
    if (kineto) {
      for (std::uint32_t i : v.rng)
        if (v.parent[i] != kNone) ++nchild[slot[v.parent[i]]];
      for (std::size_t j = 0; j < v.api.size(); ++j)
        if (api_parent[j] != kNone && api_outer[j] == kNone) ++nchild[slot[api_parent[j]]];
      for (const Ovh& ov : ovhs)
        if (ov.nest_range != kNone) ++nchild[slot[ov.nest_range]];
      std::vector<std::uint32_t> order(v.rng);
      std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const TraceEvent &x = v.ev(a), &y = v.ev(b);
        if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
        return x.end_ns() > y.end_ns();
      });
      for (std::uint32_t i : order) {
        const std::uint32_t p = v.parent[i];
        if (p == kNone) continue;
        if (disp(v.ev(p).name) == disp(v.ev(i).name) && nchild[slot[p]] == 1) {
          folded[slot[i]] = 1;
          top[slot[i]] = top[slot[p]];
        }
      }
    }
    for (std::uint32_t i : v.rng)
      if (v.parent[i] != kNone && !folded[slot[i]]) child[top[slot[v.parent[i]]]] += v.ev(i).dur_ns;
    for (const Ovh& ov : ovhs)
      if (ov.nest_range != kNone) child[top[slot[ov.nest_range]]] += v.ev(ov.ev).dur_ns;
  }

  /// The range that stands for range `r` after the same-name fold (kNone for kNone).
  std::uint32_t top_of(std::uint32_t r) const { return r == kNone ? kNone : v.rng[top[slot[r]]]; }

  /// The same-name fold among API calls (calls of several threads share the main thread's
  /// timeline, so one cuLaunchKernelEx can hold another): a call whose outer call has its name
  /// and no other child disappears; the outer call takes its children (_remove_dup_nodes).
  void fold_api_calls() {
    if (!kineto) return;
    std::vector<std::uint32_t> nkids(v.api.size(), 0), top_api(v.api.size());
    for (std::uint32_t j = 0; j < v.api.size(); ++j) {
      top_api[j] = j;
      if (api_outer[j] != kNone) ++nkids[api_outer[j]];
    }
    for (const Ovh& ov : ovhs)
      if (ov.nest_api != kNone) ++nkids[ov.nest_api];
    std::vector<std::uint32_t> order;
    for (std::uint32_t j = 0; j < v.api.size(); ++j)
      if (api_outer[j] != kNone) order.push_back(j);
    std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
      const TraceEvent &a = v.ev(v.api[x]), &b = v.ev(v.api[y]);
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns() > b.end_ns();
    });
    for (std::uint32_t j : order) {
      const std::uint32_t p = top_api[api_outer[j]];
      if (disp(v.ev(v.api[p]).name) != disp(v.ev(v.api[j]).name) || nkids[p] != 1) continue;
      api_folded[j] = 1;
      top_api[j] = p;
      nkids[p] = nkids[j];
      api_child[p] = api_child[j];
    }
  }

  /// API calls' rows, and their durations as children of the range around them.
  void add_api_rows() {
    for (std::size_t j = 0; j < v.api.size(); ++j) {
      const TraceEvent& a = v.ev(v.api[j]);
      const std::uint32_t r = api_parent[j];
      if (r != kNone && api_outer[j] == kNone) child[top[slot[r]]] += a.dur_ns;
      if (api_folded[j]) continue;
      Expected& e = row(a.cat, a.name);
      ++e.calls;
      e.self_cpu += a.dur_ns - api_child[j];
      e.cpu_total += a.dur_ns;
      e.seen(a.start_ns, a.end_ns(), v.api[j], r != kNone || api_outer[j] != kNone);
      if (r == kNone && api_outer[j] == kNone) d.self_cpu_total += a.dur_ns;
    }
  }

  /// The innermost annotation's span (Kineto's GPU-span rows): of a PyTorch trace, the annotation
  /// around the launch call on its thread (span_annotation, Kineto's rule), which also takes
  /// device work launched without an External id; of crossbench's, the attributed range's.
  void add_inner(std::uint32_t x, const TraceEvent& a) {
    if (x == kNone) return;
    d.annot[disp(v.ev(x).name)].inner_kernels += a.dur_ns;
    const std::uint64_t key = (static_cast<std::uint64_t>(x) << 32) | a.lane;
    auto [it, fresh] = inner_of.emplace(key, d.inner_spans.size());
    if (fresh) d.inner_spans.push_back({x, a.lane, a.start_ns, a.end_ns()});
    SpanAcc& sp = d.inner_spans[it->second];
    sp.first = std::min(sp.first, a.start_ns);
    sp.last = std::max(sp.last, a.end_ns());
  }

  /// Device activities: rows, Self CUDA of their range, CUDA total up the tree, annotation spans
  /// (every enclosing annotation; and the innermost one only, which for a PyTorch trace follows
  /// Kineto's rule, add_inner). Consecutive activities mostly share their range and lane, so its
  /// ancestor chain and span slots are kept between them.
  void add_device_activities() {
    std::uint32_t last_range = kNone, last_lane = kNone;
    std::vector<std::uint32_t> chain;        // ancestor slots of last_range
    std::vector<std::uint32_t> chain_annot;  // distinct annotation display names among them
    std::uint32_t inner_range = kNone;       // innermost annotation among them (crossbench's traces)
    std::vector<std::size_t> span_slots;
    std::unordered_map<std::uint64_t, std::size_t> slot_of;
    for (std::uint32_t i : v.dev) {
      const TraceEvent& a = v.ev(i);
      Expected& e = row(a.cat, a.name);
      ++e.calls;
      e.self_cuda += a.dur_ns;
      e.cuda_total += a.dur_ns;
      e.seen(a.start_ns, a.end_ns(), i, false);
      d.self_cuda_total += a.dur_ns;
      if (kineto) add_inner(span_annotation(v, a), a);
      const std::uint32_t r = attributed_range(v, a);
      if (r == kNone) {
        ++d.unattributed;
        continue;
      }
      if (r != last_range || a.lane != last_lane) {
        chain.clear();
        chain_annot.clear();
        span_slots.clear();
        inner_range = kNone;
        for_ancestors(v, r, [&](std::uint32_t x) {
          if (!folded[slot[x]]) chain.push_back(slot[x]);
          const TraceEvent& rx = v.ev(x);
          if (rx.cat != TraceCat::UserAnnotation) return;
          const std::uint32_t dn = disp(rx.name);
          if (std::find(chain_annot.begin(), chain_annot.end(), dn) == chain_annot.end()) chain_annot.push_back(dn);
          const std::uint64_t key = (static_cast<std::uint64_t>(x) << 32) | a.lane;
          auto [it, fresh] = slot_of.emplace(key, d.spans.size());
          if (fresh) d.spans.push_back({x, a.lane, a.start_ns, a.end_ns()});
          span_slots.push_back(it->second);
          if (inner_range == kNone) inner_range = x;
        });
        last_range = r;
        last_lane = a.lane;
      }
      if (!kineto) add_inner(inner_range, a);
      if (chain.empty()) continue;
      self_cuda[chain[0]] += a.dur_ns;
      if (first_dev[chain[0]] == kNone) first_dev[chain[0]] = i;
      if (v.ev(r).cat == TraceCat::UserAnnotation) d.annot[disp(v.ev(r).name)].direct += a.dur_ns;
      for (std::uint32_t x : chain) cuda_total[x] += a.dur_ns;
      for (std::uint32_t dn : chain_annot) d.annot[dn].kernels += a.dur_ns;
      for (std::size_t s : span_slots) {
        d.spans[s].first = std::min(d.spans[s].first, a.start_ns);
        d.spans[s].last = std::max(d.spans[s].last, a.end_ns());
      }
    }
  }

  /// Annotation spans per annotation, and the GPU-span rows.
  void add_span_rows() {
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
      if (kineto && !v.span.empty()) continue;  // the trace's own span events make the rows (below)
      Expected& e = d.rows[{TraceCat::GpuUserAnnotation, disp(v.ev(sp.range).name)}];
      ++e.calls;
      e.self_cuda += sp.last - sp.first;
      e.cuda_total += sp.last - sp.first;
    }
    // A PyTorch trace's gpu_user_annotation events ARE its GPU-span rows (one FunctionEvent each,
    // profiler.py _parse_kineto_results), whatever device work the correlation ids tie to them:
    // each span's interval as written, less Kineto's 1 ns widening at each end (kSpanWideningNs).
    if (kineto)
      for (std::uint32_t i : v.span) {
        const TraceEvent& sp = v.ev(i);
        Expected& e = d.rows[{TraceCat::GpuUserAnnotation, disp(sp.name)}];
        const std::int64_t dur = std::max<std::int64_t>(0, sp.dur_ns - kSpanWideningNs);
        ++e.calls;
        e.self_cuda += dur;
        e.cuda_total += dur;
        e.seen(sp.start_ns + kSpanWideningNs / 2, sp.start_ns + kSpanWideningNs / 2 + dur, i, false);
      }
  }

  /// Overhead events: PyTorch collects the kernels of the op whose External id they took a second
  /// time, on the overhead row and on every row above it (not what the trace has: ovh_*); per
  /// range too (ovh_slot), for its input-shape group.
  void add_overhead_kernels() {
    for (const Ovh& ov : ovhs) {
      if (ov.op == kNone) continue;
      const std::uint32_t k = top[slot[ov.op]];
      const std::int64_t extra = self_cuda[k];
      if (extra == 0) continue;
      const TraceEvent& o = v.ev(ov.ev);
      Expected& e = d.rows[{o.cat, disp(o.name)}];
      e.ovh_self_cuda += extra;
      e.ovh_cuda_total += extra;
      if (e.ovh_event == kNone) e.ovh_event = ov.ev, e.ovh_kernel = first_dev[k];
      const auto mark = [&](const TraceEvent& x) {
        Expected& ex = d.rows[{x.cat, disp(x.name)}];
        ex.ovh_cuda_total += extra;
        if (ex.ovh_event == kNone) ex.ovh_event = ov.ev, ex.ovh_kernel = first_dev[k];
      };
      std::uint32_t up = ov.nest_range;
      if (ov.nest_api != kNone) {
        mark(v.ev(v.api[ov.nest_api]));
        up = api_parent[ov.nest_api];
      }
      for_ancestors(v, top_of(up), [&](std::uint32_t x) {
        if (folded[slot[x]]) return;
        mark(v.ev(x));
        if (group_by_shapes) ovh_slot[slot[x]] += extra;
      });
    }
  }

  /// Ranges' rows (and a ProfilerStep#N's under its own name too, an alias), their parents' rows
  /// and, with group_by_shapes, their input-shape groups.
  void add_range_rows() {
    // key_averages(group_by_input_shape=True): ranges keyed also by their Input Dims.
    if (group_by_shapes) d.no_shapes = names.intern("[]");
    std::vector<std::uint32_t> shapes_of(group_by_shapes ? nr : 0, d.no_shapes);
    if (group_by_shapes)
      for (const auto& [ev, sh] : v.t->input_shapes)
        if (slot[ev] != kNone) shapes_of[slot[ev]] = sh;
    for (std::uint32_t k = 0; k < nr; ++k) {
      const std::uint32_t i = v.rng[k];
      if (folded[k]) continue;
      const TraceEvent& r = v.ev(i);
      const RowKey key{r.cat, disp(r.name)};
      const bool step = key.second != r.name;
      for (int pass = 0; pass < (step ? 2 : 1); ++pass) {
        const RowKey rk = pass == 0 ? key : RowKey{r.cat, r.name};
        if (pass == 1) d.aliases.insert(rk);
        Expected& e = d.rows[rk];
        ++e.calls;
        e.cpu_total += r.dur_ns;
        if (!v.is_async(i)) {
          // Self CPU = duration less the direct children's. PyTorch does not clamp it
          // (profiler_util.py FunctionEvent.self_cpu_time_total: cpu_time_total - sum of the
          // children's): an overhead event that starts inside an op's runtime call and ends after it
          // is the op's child beside that call (_populate_cpu_children pops the call), so their
          // durations can exceed the op's and its Self CPU goes negative; the row sums it as it is.
          // crossbench's own table clamps at 0.
          e.self_cpu += kineto ? r.dur_ns - child[k] : std::max<std::int64_t>(0, r.dur_ns - child[k]);
          if (pass == 0 && v.parent[i] == kNone) d.self_cpu_total += r.dur_ns;
        }
        e.self_cuda += self_cuda[k];
        e.cuda_total += cuda_total[k];
        e.seen(r.start_ns, r.end_ns(), i, v.parent[i] != kNone);
      }
      if (group_by_shapes) add_shape_group(k, key, shapes_of[k]);
      if (v.parent[i] != kNone) {
        const TraceEvent& p = v.ev(top_of(v.parent[i]));
        d.parents[key].insert({p.cat, disp(p.name)});
      } else {
        d.parents[key].insert({TraceCat::Sync, kNone});  // a top-level instance: no single parent
      }
    }
  }

  /// Range slot `k` (row `key`) into its input-shape group.
  void add_shape_group(std::uint32_t k, const RowKey& key, std::uint32_t shapes) {
    const std::uint32_t i = v.rng[k];
    const TraceEvent& r = v.ev(i);
    Expected& g = d.groups[{key.first, key.second, shapes}];
    ++g.calls;
    g.cpu_total += r.dur_ns;
    if (!v.is_async(i)) g.self_cpu += kineto ? r.dur_ns - child[k] : std::max<std::int64_t>(0, r.dur_ns - child[k]);
    g.self_cuda += self_cuda[k];
    g.cuda_total += cuda_total[k];
    g.ovh_cuda_total += ovh_slot[k];
    g.seen(r.start_ns, r.end_ns(), i, v.parent[i] != kNone);
    if (g.ovh_event == kNone && ovh_slot[k] != 0) {
      const Expected& e = d.rows[key];
      g.ovh_event = e.ovh_event;
      g.ovh_kernel = e.ovh_kernel;
    }
  }

  const View& v;
  NameTable& names;
  const bool group_by_shapes;
  Derived d;
  // PyTorch's own traces (Kineto; crossbench's carry a format) get PyTorch's tree rules
  // (profiler_util.py EventList._populate_cpu_children, _remove_dup_nodes; profiler.py
  // _parse_kineto_results): API calls without an External id nest by time under the range
  // around them; overhead events nest by time on the main thread; a range whose parent has its
  // name and no other child is folded into it.
  const bool kineto;
  // Per range (by its position in v.rng, its slot): durations of direct children, device time.
  const std::size_t nr;
  std::vector<std::uint32_t> slot;  // event index -> slot (kNone: not a range)
  std::vector<std::int64_t> child, self_cuda, cuda_total;
  std::vector<std::uint32_t> first_dev;  // a device activity launched directly in it
  std::vector<std::uint32_t> by_start;   // order_ranges_by_start
  std::uint32_t main_lane = kNone;       // find_main_lane
  // Per API call (by its position in v.api): the range around it in PyTorch's tree, its
  // timeline, the op its External id names, the API call around it, its children's durations.
  std::vector<std::uint32_t> api_parent, api_lane, api_op;
  std::vector<std::uint32_t> api_outer;  // the API call around it
  std::vector<std::int64_t> api_child;
  std::vector<std::uint32_t> nchild;  // children per range slot (fold_ranges)
  std::vector<Ovh> ovhs;              // nest_overheads
  std::vector<std::uint32_t> top;     // the slot that stands for each range slot (fold_ranges)
  std::vector<char> folded;
  std::vector<char> api_folded;
  std::vector<std::int64_t> ovh_slot;  // per range, for its group (add_overhead_kernels)
  RowKey last_key{TraceCat::Sync, kNone};
  Expected* last_row = nullptr;
  std::unordered_map<std::uint64_t, std::size_t> inner_of;  // add_inner's span per (range, lane)
};

}  // namespace

Derived derive(const View& v, NameTable& names, bool group_by_shapes) {
  return Derivation(v, names, group_by_shapes).run();
}

}  // namespace xb::vd
