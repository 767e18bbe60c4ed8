#include "bench/sweep/regime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace xb {

const char* to_string(Regime regime) {
  switch (regime) {
    case Regime::Overhead:
      return "overhead-bound";
    case Regime::Memory:
      return "memory-bound";
    case Regime::Compute:
      return "compute-bound";
    case Regime::NotMeasured:
      return "not measured";
  }
  return "not measured";
}

Regime classify(double busy, double compute_ns, double memory_ns, const RegimeRules& rules) {
  if (!(rules.busy_threshold > 0 && rules.busy_threshold <= 1)) {
    throw std::invalid_argument(fmt::format("busy threshold {} is not in (0, 1]", rules.busy_threshold));
  }
  if (!(busy >= 0 && busy <= 1.5)) {
    throw std::invalid_argument(fmt::format("GPU busy fraction {} is not in [0, 1.5]", busy));
  }
  if (!(compute_ns >= 0) || !(memory_ns >= 0) || !std::isfinite(compute_ns) || !std::isfinite(memory_ns)) {
    throw std::invalid_argument("roofline terms must be finite and >= 0");
  }
  if (busy < rules.busy_threshold) return Regime::Overhead;
  return compute_ns >= memory_ns ? Regime::Compute : Regime::Memory;
}

PointMetrics evaluate_point(const PointMeasurement& m, const Roof& roof, const RegimeRules& rules) {
  PointMetrics p;
  p.m = m;
  p.roof = roof;
  roof.ridge_intensity();  // throws std::invalid_argument unless both ceilings are > 0
  if (!m.measured) return p;
  const std::string who = m.fixture.empty() ? std::string("point") : m.fixture;
  if (!(m.flops > 0) || !(m.bytes > 0) || !std::isfinite(m.flops) || !std::isfinite(m.bytes)) {
    throw std::invalid_argument(who + ": flops and bytes must be > 0");
  }
  if (!(m.kernel_ns > 0) || !std::isfinite(m.kernel_ns)) {
    throw std::invalid_argument(who + ": CUPTI kernel time must be > 0");
  }
  if (!(m.eager_window_ns > 0) || !std::isfinite(m.eager_window_ns)) {
    throw std::invalid_argument(who + ": eager window must be > 0 ns");
  }
  if (!(m.eager_device_ns >= 0) || !std::isfinite(m.eager_device_ns)) {
    throw std::invalid_argument(who + ": eager device time must be >= 0");
  }
  p.busy = m.eager_device_ns / m.eager_window_ns;
  p.intensity = m.flops / m.bytes;
  p.tflops = m.flops / m.kernel_ns / 1e3;  // FLOP/ns / 1e3 = TFLOP/s
  p.gbps = m.bytes / m.kernel_ns;          // B/ns = GB/s
  p.compute_ns = compute_time_ns(m.flops, roof);
  p.memory_ns = memory_time_ns(m.bytes, roof);
  p.bound_ns = std::max(p.compute_ns, p.memory_ns);
  p.roofline_fraction = p.bound_ns / m.kernel_ns;
  p.regime = classify(p.busy, p.compute_ns, p.memory_ns, rules);
  return p;
}

std::vector<Crossover> find_crossovers(const std::vector<PointMetrics>& points) {
  std::vector<Crossover> out;
  auto find = [&](const std::string& op, const std::string& dtype) -> Crossover& {
    for (Crossover& c : out) {
      if (c.op == op && c.dtype == dtype) return c;
    }
    out.push_back(Crossover{op, dtype, std::nullopt, std::nullopt, ""});
    return out.back();
  };
  // Group, then walk each group in ascending size.
  std::map<std::pair<std::string, std::string>, std::vector<const PointMetrics*>> groups;
  for (const PointMetrics& p : points) {
    find(p.m.op, p.m.dtype);
    if (p.regime != Regime::NotMeasured) groups[{p.m.op, p.m.dtype}].push_back(&p);
  }
  for (Crossover& c : out) {
    auto& group = groups[{c.op, c.dtype}];
    std::stable_sort(group.begin(), group.end(),
                     [](const PointMetrics* a, const PointMetrics* b) { return a->m.n < b->m.n; });
    for (const PointMetrics* p : group) {
      if (!c.size) {
        if (p->regime != Regime::Overhead) {
          c.size = p->m.n;
          c.regime_at_crossover = to_string(p->regime);
        }
      } else if (p->regime == Regime::Overhead) {
        c.largest_overhead_above = p->m.n;
      }
    }
  }
  return out;
}

}  // namespace xb
