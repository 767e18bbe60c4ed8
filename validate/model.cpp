// Builds the validator's model (validate/model.h): read once into compact records, index them
// and nest the host ranges; validate/model_derive.cpp derives what the primary trace implies for
// each table row and validate/model_match.cpp matches the table's rows to it.
#include "validate/model.h"

#include <limits>

namespace xb::vd {

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
    } else if (e.cat == TraceCat::Overhead) {
      v.ovh.push_back(i);
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
  v.rng_ext.build_from(with_ext.size(),
                       [&](std::size_t k) { return std::make_pair(t.events[with_ext[k]].external_id, with_ext[k]); });
  if (t.has_ext_corr)
    v.xcorr.build_from(t.ext_corr.size(), [&](std::size_t k) {
      return std::make_pair(t.ext_corr[k].first, static_cast<std::uint32_t>(k));
    });
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
        if (!any)
          first = x;
        else if (x != first)
          ambiguous = true;
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
  if (a.has(TraceEvent::kHasExternal) && !v.t->has_ext_corr)
    return a.external_id ? v.rng_ext.first(a.external_id) : kNone;
  bool known = false, amb = false;
  const std::uint64_t x = corr_ext(v, a.correlation, known, amb);
  return x ? v.rng_ext.first(x) : kNone;
}

/// Range parents: "Parent id" args when the trace has them, else the other trace's (same
/// External ids), else the innermost enclosing range on the same lane by time.
void build_parents(View& v, const View* other) {
  const TraceData& t = *v.t;
  v.parent.assign(t.events.size(), kNone);
  const bool own =
      std::any_of(v.rng.begin(), v.rng.end(), [&](std::uint32_t i) { return v.ev(i).has(TraceEvent::kHasParent); });
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
    if (v.is_async(i)) continue;  // no parent, never a parent
    while (!stack.empty() && (v.ev(stack.back()).lane != r.lane || v.ev(stack.back()).end_ns() < r.end_ns()))
      stack.pop_back();
    v.parent[i] = stack.empty() ? kNone : stack.back();
    stack.push_back(i);
  }
  v.parent_source = "time containment on each thread";
}

bool is_profiler_step(const std::string& s) {
  constexpr std::string_view kStep = "ProfilerStep#";
  return s.size() > kStep.size() && s.compare(0, kStep.size(), kStep) == 0 &&
         s.find_first_not_of("0123456789", kStep.size()) == std::string::npos;
}

}  // namespace xb::vd
