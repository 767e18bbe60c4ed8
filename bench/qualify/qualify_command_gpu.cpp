// `bench qualify` (see qualify_command.h).
#include "bench/qualify/qualify_command.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <iostream>
#include <optional>
#include <set>

#include "bench/cli/cli.h"
#include "bench/core/device.h"
#include "bench/core/gpu_meta.h"
#include "bench/core/run_dir.h"
#include "bench/qualify/qualify_aggregate.h"
#include "bench/qualify/qualify_report.h"
#include "bench/run/bench_run.h"
#include "kernels/cuda_check.h"
#include "kernels/nvml_probe.h"
#include "profiler/model/session_io.h"

namespace xb {

namespace fs = std::filesystem;

RunEnvironment probe_environment() {
  int device = 0;
  XB_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  XB_CUDA(cudaGetDeviceProperties(&prop, device));
  // The session meta a recording would carry, read back as a recorded one is (environment_of).
  SessionMeta meta;
  meta.devices.emplace_back().name = prop.name;
  XB_CUDA(cudaDriverGetVersion(&meta.cuda_driver_version));
  XB_CUDA(cudaRuntimeGetVersion(&meta.cuda_runtime_version));
  meta.cublas_version = static_cast<int>(cublasLtGetVersion());
  // No clock snapshots: the environments are compared without them (compare_environments).
  const Nvml nvml(cuda_device_pci_bus_id(device));
  attach_gpu_meta(meta, to_gpu_meta(nvml.static_info(), GpuSnapshot{}, GpuSnapshot{}));
  return environment_of(meta);
}

namespace {

/// Throws UsageError when `now` differs from the baseline's environment in a refusing way and
/// --allow-mismatch was not given.
void refuse_mismatch(const QualifyOptions& opt, const Baseline& baseline, const RunEnvironment& now) {
  const std::string line = mismatch_line(compare_environments(baseline.environment, now), opt.baseline.string());
  if (line.empty()) return;
  if (!opt.allow_mismatch) throw UsageError(line + "; rerun with --allow-mismatch to compare anyway");
  std::cerr << "bench: WARNING: " << line << " (--allow-mismatch: comparing anyway; every report says so)\n";
}

}  // namespace

int qualify_command(int argc, const char* const* argv) {
  const std::optional<QualifyOptions> parsed = parse_qualify_args(argc, argv);
  if (!parsed) return 0;
  const QualifyOptions& opt = *parsed;
  if (!opt.aggregate.empty()) {
    return qualify_aggregate_command(opt.aggregate, opt.out.empty() ? default_qualify_dir() : opt.out, std::cout);
  }

  // Inputs first: a bad suite, baseline or --out costs no GPU time and writes nothing.
  const Suite suite = read_suite(opt.suite);
  std::set<std::string> names;
  for (const SuiteFixture& f : suite.fixtures) names.insert(f.name());
  for (const auto& slow : opt.slow_fixtures_us) {
    if (names.count(slow.first) == 0) {
      throw UsageError("--slow-fixture names " + slow.first + ", which is not a fixture of the suite");
    }
  }
  std::optional<Baseline> baseline;
  if (opt.update_baseline) {
    std::error_code ec;
    if (fs::is_directory(opt.baseline, ec)) throw UsageError("--baseline " + opt.baseline.string() + " is a folder");
  } else {
    baseline = read_baseline(opt.baseline);
    for (const SuiteFixture& f : suite.fixtures) {
      if (baseline->find(f.key()) == nullptr) {
        throw InputError(fmt::format("{}: no entry for suite fixture {}; record one with --update-baseline",
                                     opt.baseline.string(), f.key()));
      }
    }
  }
  const fs::path dir = opt.out.empty() ? default_qualify_dir() : opt.out;
  check_run_dir(dir);

  std::vector<LoadedRun> runs;
  if (opt.from_runs.empty()) {
    require_cuda_device(
        "bench qualify runs its suite on the GPU (--from-run RUN_DIR gates recorded run folders without one)");
  }
  for (const fs::path& d : opt.from_runs) runs.push_back(load_run(d));
  if (baseline) refuse_mismatch(opt, *baseline, runs.empty() ? probe_environment() : environment_of(runs.front().meta));
  create_run_dir(dir);
  // A qualification that fails from here gives its claim back: the folder is removed when nothing
  // was written into it, and otherwise keeps what was (each run folder is whole or absent).
  RunDirClaim claim(dir);
  if (opt.from_runs.empty()) {
    for (const TimingMode mode : suite.modes()) {
      BenchOptions bo;
      bo.mode = mode;
      bo.warmup = suite.warmup;
      bo.out = dir / (std::string("run-") + to_string(mode));
      BenchPlan plan;
      for (const SuiteFixture& f : suite.fixtures) {
        if (f.mode != mode) continue;
        plan.fixtures.push_back({f.op, f.dtype, f.size});
        StoppingRule::Config rule;
        static_cast<StoppingSettings&>(rule) = f.stopping;
        plan.stopping[f.name()] = rule;
        const auto slow = opt.slow_fixtures_us.find(f.name());
        if (slow != opt.slow_fixtures_us.end()) plan.delay_us[f.name()] = slow->second;
      }
      std::cout << fmt::format("qualify: suite {}: {} fixture(s) in {} mode into {}\n", suite.name,
                               plan.fixtures.size(), to_string(mode), bo.out.string());
      // The exit code is not needed: the gate reads the folder back (fixture errors, validation).
      (void)run_bench(bo, plan, "bench");
      runs.push_back(load_run(bo.out));
    }
  }
  if (suite.warmup && !opt.from_runs.empty()) {
    // --from-run gates folders as recorded: say when they were not measured the way the suite asks.
    std::size_t cold = 0, total = 0;
    for (const LoadedRun& r : runs) {
      for (const FixtureRecord& f : r.fixtures) {
        ++total;
        cold += f.warmed_up ? 0 : 1;
      }
    }
    if (cold > 0) {
      std::cerr << fmt::format(
          "qualify: note: {} of {} fixture(s) in the --from-run folders were recorded without a "
          "steady warm-up, which suite {} asks for (\"warmup\": true); their verdicts compare "
          "unlike measurements\n",
          cold, total, suite.name);
    }
  }
  const int code = finish_qualification(opt, suite, baseline ? &*baseline : nullptr, std::move(runs), dir, std::cout);
  claim.keep();
  release_run_dir(dir);
  return code;
}

}  // namespace xb
