// model_vs_counters (docs/validator.md): the roofline's model of each fixture's bytes and FLOPs
// against the hardware counters of the run's counter pass (counters.json). The per-call figures
// are recomputed from the raw metric values by the validator's own reader (per_call_figures,
// validate/counters_reader.h: range profiler kernels and SASS totals), not read from the file. A GEMM whose counted
// FLOPs differ from the useful 2 n^3 is compared once more with the work its CTA tile executes (tile quantization,
// validate/gemm_tile.h), the tile read from the kernel names the timing pass recorded for that fixture.
#include <cmath>
#include <set>
#include <string>
#include <unordered_map>

#include "validate/checks.h"
#include "validate/gemm_tile.h"

namespace xb::vd {

FixtureKernelNames fixture_kernel_names(const Model& m) {
  FixtureKernelNames out;
  if (!m.events || m.events->kind != EventsData::Kind::PerStep || m.views.empty()) return out;
  const View& A = m.A();
  // Each fixture's step ranges, then each kernel's step through its attributed range's ancestors.
  std::unordered_map<std::uint32_t, std::size_t> fixture_of_step;  // step range event -> fixture index
  const auto& fixtures = m.events->fixtures;
  for (std::size_t i = 0; i < fixtures.size(); ++i)
    for (const EventStep& s : fixtures[i].steps)
      if (const std::uint32_t r = A.rng_ext.first(s.range_id); r != kNone) fixture_of_step.emplace(r, i);
  std::vector<std::set<std::uint32_t>> seen(fixtures.size());  // name ids already listed
  for (std::uint32_t i : A.dev) {
    const TraceEvent& k = A.ev(i);
    if (k.cat != TraceCat::Kernel) continue;
    std::size_t fixture = fixtures.size();
    for_ancestors(A, attributed_range(A, k), [&](std::uint32_t r) {
      if (fixture != fixtures.size()) return;
      if (auto it = fixture_of_step.find(r); it != fixture_of_step.end()) fixture = it->second;
    });
    if (fixture == fixtures.size() || !seen[fixture].insert(k.name).second) continue;
    out[fixtures[fixture].name].push_back(m.names.str(k.name));
  }
  return out;
}

namespace {

/// bench's built-in GEMM ops (bench/run/builtin_ops.cpp; kernels/workload.h): n x n x n for size
/// n. A user's benchmark has a shape the validator does not know, so no tile-padded model.
bool square_gemm_op(const std::string& op) { return op == "matmul" || op == "addmm" || op == "addmm_bias1d"; }

/// The tile-padded model of one fixture, or why there is none.
struct TileModel {
  std::string why_not;  ///< "" when the model applies
  std::string kernel;   ///< the GEMM kernel whose name gave the tile
  CtaTile tile;
  double useful = 0;    ///< 2 n^3
  double executed = 0;  ///< 2 pad(n, tm) pad(n, tn) pad(n, tk)
  double model = 0;     ///< the fixture's model with its 2 n^3 replaced by `executed`
  double waste_pct() const { return useful > 0 ? 100.0 * (executed - useful) / useful : 0.0; }
};

TileModel tile_model(const CountersFixture& f, const FixtureKernelNames& kernels) {
  TileModel t;
  if (!square_gemm_op(f.op)) {
    t.why_not = fmt::format("'{}' is not one of bench's n x n x n GEMMs, so its shape is unknown", f.op);
    return t;
  }
  const auto it = kernels.find(f.name);
  if (it == kernels.end() || it->second.empty()) {
    t.why_not = "the timing pass recorded no kernel for this fixture";
    return t;
  }
  std::vector<std::pair<std::string, CtaTile>> tiled;
  for (const std::string& k : it->second)
    if (auto tile = cta_tile_from_kernel_name(k)) tiled.emplace_back(k, *tile);
  if (tiled.empty()) {
    t.why_not = fmt::format(
        "no CTA tile in the name of its kernel{} ({}: neither nvjet's tst_<M>x<N>_<K>x<stages> nor "
        "CUTLASS/xmma's tilesize<M>x<N>x<K>)",
        it->second.size() > 1 ? "s" : "", it->second.front());
    return t;
  }
  for (const auto& [k, tile] : tiled) {
    if (tile.m != tiled.front().second.m || tile.n != tiled.front().second.n || tile.k != tiled.front().second.k) {
      t.why_not =
          fmt::format("its kernels have different CTA tiles ({} {}, {} {}): which one the counter pass ran is unknown",
                      tiled.front().first, tiled.front().second.text(), k, tile.text());
      return t;
    }
  }
  t.kernel = tiled.front().first;
  t.tile = tiled.front().second;
  const std::int64_t n = f.size;
  t.useful = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  t.executed = tile_padded_gemm_flops(n, n, n, t.tile);
  t.model = f.model_flops - t.useful + t.executed;
  return t;
}

/// "executed 2 x 8320 x 8192 x 8192 = 1116691496960 FLOP (CTA tile 320x128x64 of <kernel>), useful
/// 2 n^3 = 1099511627776, tile-quantization waste +1.5625%".
std::string tile_text(const TileModel& t, std::int64_t n) {
  return fmt::format(
      "executed 2 x {} x {} x {} = {} FLOP (CTA tile {} of {}), useful 2 n^3 = {}, tile-quantization "
      "waste {:+.4f}% of the useful FLOPs",
      pad_to_tile(n, t.tile.m), pad_to_tile(n, t.tile.n), pad_to_tile(n, t.tile.k), num(t.executed), t.tile.text(),
      t.kernel, num(t.useful), t.waste_pct());
}

}  // namespace

void check_model_vs_counters(const CountersFile& s, const FixtureKernelNames& kernels, const ValidateOptions& opts,
                             CheckLog& log, json* figures) {
  if (s.status != "collected") {
    log.not_run("", "the counter pass was unavailable: " + s.reason);
    return;
  }
  json fig = json::array();
  for (const CountersFixture& f : s.fixtures) {
    if (!f.error.empty()) {
      log.not_run(f.name, "no counters: " + f.error);
      continue;
    }
    const CountersFigures c = per_call_figures(s, f);
    const double model_intensity = f.model_bytes > 0 ? f.model_flops / f.model_bytes : 0.0;
    const bool memory_bound = f.model_bytes > 0 && model_intensity <= opts.counters_memory_max_intensity;
    const bool fits_l2 = static_cast<double>(s.l2_bytes) > f.model_bytes;
    const bool compute_bound = f.model_flops > 0 && model_intensity >= opts.counters_compute_min_intensity;
    bool compared = false;
    if (memory_bound && !fits_l2) {
      compared = true;
      const double d = c.dram_bytes / f.model_bytes - 1.0;
      const std::string text =
          fmt::format("DRAM bytes {} (read {} + written {}) vs model {}: {:+.2f}%", num(c.dram_bytes),
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
      const TileModel t = tile_model(f, kernels);
      const double de = t.why_not.empty() ? c.flops / t.model - 1.0 : 0.0;
      if (t.why_not.empty()) {
        fig.push_back({{"fixture", f.name},
                       {"kernel", t.kernel},
                       {"cta_tile", t.tile.text()},
                       {"useful_flops", t.useful},
                       {"executed_flops", t.executed},
                       {"tile_quantization_waste_pct", t.waste_pct()},
                       {"counted_flops", c.flops},
                       {"vs_useful_pct", 100 * d},
                       {"vs_executed_pct", 100 * de}});
      }
      if (std::fabs(d) <= opts.counters_flops_tol) {
        log.pass(f.name,
                 t.why_not.empty() && t.executed == t.useful
                     ? fmt::format("{}; CTA tile {} of {} divides n (no tile padding)", text, t.tile.text(), t.kernel)
                     : text);
      } else if (t.why_not.empty() && std::fabs(de) <= opts.counters_flops_tol) {
        // The kernel's tiles run whole on the padded edge (tile quantization): the counters agree
        // with the work the kernel executes, and the model's 2 n^3 is the useful part of it.
        log.pass(f.name,
                 fmt::format("passed against the tile-padded model: FLOPs {} vs {} executed: {:+.3f}% ({}); vs the "
                             "useful model {}: {:+.3f}%",
                             num(c.flops), num(t.model), 100 * de, tile_text(t, f.size), num(f.model_flops), 100 * d));
      } else {
        // Neither the useful nor the tile-padded model explains the count. More tensor work than
        // the model is still a finding, not a counting fault: Nsight Compute counts the H200's
        // tensor operations to the operation as crossbench does (docs/metrics.md, "Hardware counters").
        const std::string why = d > 0 && c.tensor_flops > f.model_flops
                                    ? fmt::format(
                                          "; the counters show the kernel doing {:+.3f}% more tensor work than the "
                                          "model's FLOPs (measured, not a counting fault: on the H200 Nsight "
                                          "Compute counts the same)",
                                          100 * (c.tensor_flops / f.model_flops - 1.0))
                                    : std::string();
        const std::string tiled = t.why_not.empty()
                                      ? fmt::format(
                                            "; the tile-padded model does not explain it either: {} vs {} executed, "
                                            "{:+.3f}% ({})",
                                            num(c.flops), num(t.model), 100 * de, tile_text(t, f.size))
                                      : "; no tile-padded model: " + t.why_not;
        log.fail(f.name, fmt::format("{} FLOP within {}%", num(f.model_flops), num(100 * opts.counters_flops_tol)),
                 fmt::format("{} FLOP ({:+.3f}%)", num(c.flops), 100 * d), text + why + tiled);
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
  if (figures != nullptr && !fig.empty()) *figures = std::move(fig);
}

void check_model_vs_counters(const Model& m, const ValidateOptions& opts, CheckLog& log, ValidationReport& report) {
  if (!m.counters) {
    log.not_run("", m.events ? "no counter pass beside this events.json (bench --counters writes counters.json)"
                             : "needs a crossbench run folder with a counter pass (bench --counters writes "
                               "counters.json); these files are not one");
    return;
  }
  json fig;
  check_model_vs_counters(*m.counters, fixture_kernel_names(m), opts, log, &fig);
  if (!fig.is_null()) report.figures[checks::kModelVsCounters] = std::move(fig);
}

}  // namespace xb::vd
