// The counter pass loop and its table (see counter_pass.h). Plain C++.
#include "bench/core/counter_pass.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "profiler/model/profiler.h"
#include "validate/validator.h"

namespace xb {

CounterSession run_counter_pass(const std::vector<CounterJob>& jobs, const CollectorFactory& make_collector,
                                const std::function<void()>& sync, int calls, const std::function<void()>& idle,
                                const std::function<void()>& between_calls) {
  if (calls < 1) throw std::invalid_argument("run_counter_pass: calls must be at least 1");
  CounterSession s;
  std::unique_ptr<CounterCollector> collector;
  try {
    collector = make_collector();
  } catch (const ProfilerError& e) {
    s.status = "unavailable";
    s.reason = e.what();
  }
  // Makes the job's call, runs it once outside any collection and returns what runs `calls` calls.
  auto prepared = [&](const CounterJob& job) -> std::function<void()> {
    const std::function<void()> call = job.make_call();
    call();  // outside the collection: module loading, cuBLASLt heuristics, first-touch
    sync();
    return [call, calls, &between_calls] {
      for (int i = 0; i < calls; ++i) {
        if (i > 0 && between_calls) between_calls();
        call();
      }
    };
  };
  // Before each replay pass, outside the range: the caller's idle time, if any (the device is
  // idle here), then `calls` warm-up calls, so that the first profiled call finds the L2 as a call
  // in the middle of a hot-mode batch does (no flush).
  const auto warm_up = [&sync, &idle](const std::function<void()>& work) {
    return [&sync, &idle, work] {
      if (idle) idle();
      work();
      sync();
    };
  };
  for (const CounterJob& job : jobs) {
    FixtureCounters f = job.fixture;
    f.calls = calls;
    f.kernels.clear();
    if (!collector) {
      f.error = "no counter pass: " + s.reason;
      f.sass_error = f.error;
      s.fixtures.push_back(std::move(f));
      continue;
    }
    try {
      const std::function<void()> work = prepared(job);
      f.kernels = collector->collect(work, warm_up(work));
      if (f.kernels.empty()) {
        f.error = "the call launched no kernel the range profiler saw";
      } else if (f.kernels.size() % static_cast<std::size_t>(calls) != 0) {
        f.error = fmt::format("{} kernels in {} calls: not the same kernels in every call", f.kernels.size(), calls);
        f.kernels.clear();
      }
    } catch (const std::exception& e) {
      f.kernels.clear();
      f.error = e.what();
    }
    s.fixtures.push_back(std::move(f));
  }
  if (!collector) {
    s.sass_reason = "no counter pass: " + s.reason;
    return s;
  }
  // The SASS metrics pass: its own, after range profiling (patched kernels run slower and
  // differently; nothing of it may reach the range profiler's numbers).
  const std::string why_not = collector->prepare_sass();
  s.sass_status = why_not.empty() ? "counted" : "not counted";
  s.sass_reason = why_not;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    FixtureCounters& f = s.fixtures[i];
    if (!why_not.empty()) {
      f.sass_error = "not counted: " + why_not;
      continue;
    }
    if (!f.error.empty()) {
      f.sass_error = "not counted: " + f.error;
      continue;
    }
    try {
      f.sass = collector->collect_sass(prepared(jobs[i]));
    } catch (const std::exception& e) {
      f.sass.clear();
      f.sass_error = e.what();
    }
  }
  collector->describe(s);
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
  const int calls = s.fixtures.empty() ? 0 : s.fixtures.front().calls;
  out << fmt::format(
      "counters (per call: {} back-to-back calls after {} warm-up calls, {} replay passes; from the "
      "counter pass, not the timed samples):\n",
      calls, calls, s.passes);
  out << fmt::format("{:<28} {:>12} {:>12} {:>8} {:>14} {:>14} {:>8} {:>10} {:>6} {:>6}\n", "fixture", "model MB",
                     "DRAM MB", "diff", "useful GFLOP", "executed GFLOP", "diff", "FLOP/B", "SM%", "DRAM%");
  // Useful FLOPs are the model's (2 n^3 for a GEMM); the counters see every FLOP executed,
  // including the padding of a GEMM's last CTA tiles (tile quantization, docs/metrics.md): a
  // fixture beyond model_vs_counters' tolerance gets a line after the table.
  std::string excess;
  for (const FixtureCounters& f : s.fixtures) {
    if (!f.error.empty()) {
      out << fmt::format("{:<28} error: {}\n", f.name, f.error);
      continue;
    }
    const CounterFigures c = derive_figures(f);
    const double flops_diff = relative_to_model(c.flops, f.model_flops);
    out << fmt::format(
        "{:<28} {:>12.3f} {:>12.3f} {:>+7.2f}% {:>14.4f} {:>14.4f} {:>+7.2f}% {:>10.3f} {:>6.1f} {:>6.1f}\n", f.name,
        f.model_bytes / 1e6, c.dram_bytes / 1e6, 100 * relative_to_model(c.dram_bytes, f.model_bytes),
        f.model_flops / 1e9, c.flops / 1e9, 100 * flops_diff, c.intensity(), c.sm_throughput_pct,
        c.dram_throughput_pct);
    if (f.model_flops > 0 && flops_diff > ValidateOptions{}.counters_flops_tol) {
      excess += fmt::format(
          "counters: {} executes {:+.3f}% more FLOPs than the model's useful ones (for a GEMM whose CTA "
          "tile does not divide n, the tile padding: model_vs_counters compares the tile-padded model)\n",
          f.name, 100 * flops_diff);
    }
  }
  out << excess;
  if (s.sass_status != "counted") {
    out << "counters: SASS FLOPs not counted (FLOPs are tensor-pipe only): " << s.sass_reason << "\n";
  } else {
    for (const FixtureCounters& f : s.fixtures) {
      if (f.error.empty() && !f.sass_error.empty())
        out << "counters: " << f.name << ": SASS FLOPs not counted: " << f.sass_error << "\n";
    }
  }
  if (!s.rejected.empty()) {
    std::string names;
    for (const auto& [name, why] : s.rejected) names += (names.empty() ? "" : ", ") + name;
    out << "counters: metrics this GPU does not offer (left out): " << names << "\n";
  }
}

}  // namespace xb
