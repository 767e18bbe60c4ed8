// model_vs_counters (docs/validator.md): the roofline's model of each fixture's bytes and FLOPs
// against the hardware counters of the run's counter pass (counters.json). The per-call figures
// are recomputed from the raw metric values (derive_figures: range profiler kernels and SASS
// totals), not read from the file.
#include <cmath>
#include <string>

#include "validate/checks.h"

namespace xb::vd {

void check_model_vs_counters(const Model& m, const ValidateOptions& opts, CheckLog& log) {
  if (!m.counters) {
    log.not_run("", m.events ? "no counter pass in this run folder (bench --counters writes counters.json)"
                             : "needs a crossbench run folder with a counter pass (bench --counters writes "
                               "counters.json); these files are not one");
    return;
  }
  const CounterSession& s = *m.counters;
  if (s.status != "collected") {
    log.not_run("", "the counter pass was unavailable: " + s.reason);
    return;
  }
  for (const FixtureCounters& f : s.fixtures) {
    if (!f.error.empty()) {
      log.not_run(f.name, "no counters: " + f.error);
      continue;
    }
    const CounterFigures c = derive_figures(f);
    const double model_intensity = f.model_bytes > 0 ? f.model_flops / f.model_bytes : 0.0;
    const bool memory_bound = f.model_bytes > 0 && model_intensity <= opts.counters_memory_max_intensity;
    const bool fits_l2 = static_cast<double>(s.l2_bytes) > f.model_bytes;
    const bool compute_bound = f.model_flops > 0 && model_intensity >= opts.counters_compute_min_intensity;
    bool compared = false;
    if (memory_bound && !fits_l2) {
      compared = true;
      const double d = c.dram_bytes / f.model_bytes - 1.0;
      const std::string text = fmt::format("DRAM bytes {} (read {} + written {}) vs model {}: {:+.2f}%", num(c.dram_bytes),
                                           num(c.dram_read_bytes), num(c.dram_write_bytes), num(f.model_bytes), 100 * d);
      if (std::fabs(d) <= opts.counters_bytes_tol) {
        log.pass(f.name, text);
      } else {
        log.fail(f.name, fmt::format("{} B within {}%", num(f.model_bytes), num(100 * opts.counters_bytes_tol)),
                 fmt::format("{} B ({:+.2f}%)", num(c.dram_bytes), 100 * d), text);
      }
    }
    if (compute_bound) {
      compared = true;
      const double d = c.flops / f.model_flops - 1.0;
      const std::string sass = f.sass_error.empty() ? num(c.sass_flops) : "not counted";
      const std::string text = fmt::format("FLOPs {} (tensor pipe {} + SASS {}) vs model {}: {:+.3f}%", num(c.flops),
                                           num(c.tensor_flops), sass, num(f.model_flops), 100 * d);
      if (std::fabs(d) <= opts.counters_flops_tol) {
        log.pass(f.name, text);
      } else {
        // More tensor work than 2 n^3 is a finding, not a counting fault: on the H200 cuBLASLt's
        // bf16 GEMMs at 8192 and 16384 execute 1/64 more tensor operations, and Nsight Compute
        // counts the same to the operation (docs/metrics.md, "Hardware counters").
        const std::string why = d > 0 && c.tensor_flops > f.model_flops
                                    ? fmt::format("; the counters show the kernel doing {:+.3f}% more tensor work than the "
                                                  "model's FLOPs (measured, not a counting fault: on the H200 Nsight "
                                                  "Compute counts the same)",
                                                  100 * (c.tensor_flops / f.model_flops - 1.0))
                                    : std::string();
        log.fail(f.name, fmt::format("{} FLOP within {}%", num(f.model_flops), num(100 * opts.counters_flops_tol)),
                 fmt::format("{} FLOP ({:+.3f}%)", num(c.flops), 100 * d), text + why);
      }
    }
    if (!compared) {
      std::string why;
      if (memory_bound) {
        why = fmt::format("memory-bound by the model, but its {} B fit in the {} B L2 (no DRAM traffic to compare)",
                          num(f.model_bytes), s.l2_bytes);
      } else {
        why = fmt::format("model intensity {} FLOP/B is neither memory-bound (<= {}) nor compute-bound (>= {})",
                          num(model_intensity), num(opts.counters_memory_max_intensity),
                          num(opts.counters_compute_min_intensity));
      }
      log.not_run(f.name, "not compared: " + why);
    }
  }
}

}  // namespace xb::vd
