// The counter pass loop and its table (see counter_pass.h). Plain C++.
#include "bench/core/counter_pass.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "profiler/profiler.h"

namespace xb {

CounterSession run_counter_pass(const std::vector<CounterJob>& jobs, const CollectorFactory& make_collector,
                                const std::function<void()>& sync, int calls) {
  if (calls < 1) throw std::invalid_argument("run_counter_pass: calls must be at least 1");
  CounterSession s;
  std::unique_ptr<CounterCollector> collector;
  try {
    collector = make_collector();
  } catch (const ProfilerError& e) {
    s.status = "unavailable";
    s.reason = e.what();
  }
  if (collector) collector->describe(s);
  for (const CounterJob& job : jobs) {
    FixtureCounters f = job.fixture;
    f.calls = calls;
    f.kernels.clear();
    if (!collector) {
      f.error = "no counter pass: " + s.reason;
      s.fixtures.push_back(std::move(f));
      continue;
    }
    try {
      const std::function<void()> call = job.make_call();
      call();  // outside the collection: module loading, cuBLASLt heuristics, first-touch
      sync();
      collector->begin();
      try {
        for (int i = 0; i < calls; ++i) call();
      } catch (...) {
        try {
          collector->end();
        } catch (...) {
        }
        throw;
      }
      f.kernels = collector->end();
      if (f.kernels.empty()) f.error = "the call launched no kernel the range profiler saw";
    } catch (const std::exception& e) {
      f.kernels.clear();
      f.error = e.what();
    }
    s.fixtures.push_back(std::move(f));
  }
  return s;
}

double relative_to_model(double measured, double model) {
  if (model == 0) return measured == 0 ? 0.0 : 1.0;
  return measured / model - 1.0;
}

void print_counter_table(const CounterSession& s, std::ostream& out) {
  if (s.status != "collected") {
    out << "counters: not collected: " << s.reason << "\n";
    return;
  }
  out << fmt::format("counters ({} replay passes per kernel; from the counter pass, not the timed samples):\n", s.passes);
  out << fmt::format("{:<28} {:>12} {:>12} {:>8} {:>14} {:>14} {:>8} {:>10} {:>6} {:>6}\n", "fixture", "model MB",
                     "DRAM MB", "diff", "model GFLOP", "counted GFLOP", "diff", "FLOP/B", "SM%", "DRAM%");
  for (const FixtureCounters& f : s.fixtures) {
    if (!f.error.empty()) {
      out << fmt::format("{:<28} error: {}\n", f.name, f.error);
      continue;
    }
    const CounterFigures c = derive_figures(f.kernels, f.calls);
    out << fmt::format("{:<28} {:>12.3f} {:>12.3f} {:>+7.2f}% {:>14.4f} {:>14.4f} {:>+7.2f}% {:>10.3f} {:>6.1f} {:>6.1f}\n",
                       f.name, f.model_bytes / 1e6, c.dram_bytes / 1e6, 100 * relative_to_model(c.dram_bytes, f.model_bytes),
                       f.model_flops / 1e9, c.flops / 1e9, 100 * relative_to_model(c.flops, f.model_flops), c.intensity(),
                       c.sm_throughput_pct, c.dram_throughput_pct);
  }
  if (!s.rejected.empty()) {
    std::string names;
    for (const auto& [name, why] : s.rejected) names += (names.empty() ? "" : ", ") + name;
    out << "counters: metrics this GPU does not offer (left out): " << names << "\n";
  }
}

}  // namespace xb
