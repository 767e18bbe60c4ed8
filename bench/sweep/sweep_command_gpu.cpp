// `bench sweep` (see sweep_command.h; the analysis and writers are in sweep.h, plain C++).
#include "bench/sweep/sweep_command.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/cli/cli.h"
#include "bench/core/ceilings.h"
#include "bench/core/counter_pass.h"
#include "bench/core/device.h"
#include "bench/core/fixtures.h"
#include "bench/core/interrupt.h"
#include "bench/core/measure.h"
#include "bench/core/run_dir.h"
#include "bench/sweep/regime.h"
#include "bench/sweep/sweep.h"
#include "common/atomic_file.h"
#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
#include "profiler/adapters/cupti_source.h"
#include "profiler/adapters/nvtx_mirror.h"
#include "profiler/exporters/table.h"
#include "profiler/model/profiler.h"
#include "profiler/model/session_io.h"

namespace xb {
namespace {

namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

/// Longest wall time the eager window aims for; calls are cut to fit (at least 3).
constexpr double kEagerBudgetMs = 100;
/// Longest sampling per point, s: the stopping rule stops here when the noise target is not met.
constexpr double kSweepMaxSamplingS = 1.0;

struct PointPlan {
  Op op;
  DType dtype;
  std::int64_t n;
  std::string name;
  double predicted_s;  ///< for the progress estimate only
};

/// Rough cost of one point, s, for the "time left" estimate (scaled by what the finished points
/// actually took): setup, host verification (16 sampled rows x n^2 multiply-adds for GEMMs at about
/// 1 ns each; every row up to n = 256) and the GPU calls at 70% of the roofline bound (10 us at least).
double predict_seconds(Op op, DType dtype, std::int64_t n, const SweepOptions& o, const Calibration& cal) {
  const double bound_ns = roofline_bound_ns(op_flops(op, n), op_bytes(op, dtype, n), cal.roof(to_string(dtype)));
  const double call_s = std::max(bound_ns / 0.7, 10e3) * 1e-9;
  const int eager =
      std::max(std::min(o.eager_calls, 3), std::min(o.eager_calls, static_cast<int>(kEagerBudgetMs * 1e-3 / call_s)));
  const int calls = (o.graph ? 2 : 1) * (o.wait_steps + o.warmup_steps + o.active_steps) + eager + 1;
  const double rows = n <= 256 ? static_cast<double>(n) : 16.0;
  const double nn = static_cast<double>(n);
  const double verify_s = op == Op::Add ? rows * nn * 20e-9 : rows * nn * nn * 1e-9 + nn * nn * 4e-10;
  return 0.01 + o.warmup_ms * 1e-3 + calls * (call_s + 40e-6) + verify_s;
}

struct PointResult {
  PointRunInfo info;
  double event_median_ns = 0;
  double graph_median_ns = 0;  ///< 0: not measured in graph mode
  int eager_calls = 0;
};

/// Runs one point; records its fixture in the profiler whatever happens. Never throws for a
/// failure of the point itself (it is reported in the result); CUDA errors that poison the
/// context surface at the next point or at the final synchronization.
PointResult run_point(const PointPlan& p, const SweepOptions& o, Profiler& prof, SampleDevice& dev,
                      cudaStream_t stream) {
  PointResult r;
  FixtureInfo info;
  info.name = p.name;
  info.op = to_string(p.op);
  info.dtype = to_string(p.dtype);
  info.size = p.n;
  info.flops = op_flops(p.op, p.n);
  info.bytes = op_bytes(p.op, p.dtype, p.n);
  try {
    auto w = make_workload(p.op, p.dtype, p.n, stream);
    const auto t_verify = steady::now();
    const Verification v = w->verify();
    r.info.verify_s = seconds_since(t_verify);
    r.info.verification = v.detail;
    r.info.tolerance = v.tolerance;
    info.verified = v.passed;
    info.max_rel_error = std::isfinite(v.rel_error) ? v.rel_error : -1.0;  // JSON has no NaN
    if (!v.passed) {
      r.info.error = fmt::format("wrong result: relative error {:.3e} > tolerance {:.1e} ({})", v.rel_error,
                                 v.tolerance, v.detail);
      prof.add_fixture(fixture_block(info));
      return r;
    }
    // Warm-up: back to back until warmup_ms have passed (at least 2 calls).
    const auto t_warm = steady::now();
    r.info.warmup_calls = warm_up_for(stream, o.warmup_ms, [&] { w->enqueue(); });
    const double per_call_ms = seconds_since(t_warm) * 1e3 / r.info.warmup_calls;
    const std::string cpu_op = std::string("xb::") + to_string(p.op);

    // Eager window: the op enqueued back to back, as an eager framework loop would, one cpu_op
    // range per call; synchronized once, after the window's annotation closes.
    r.eager_calls = o.eager_calls;
    if (r.eager_calls * per_call_ms > kEagerBudgetMs) {
      r.eager_calls = std::max(std::min(3, o.eager_calls), static_cast<int>(kEagerBudgetMs / per_call_ms));
    }
    prof.begin_fixture(Schedule{0, 0, 1});
    prof.begin_step();
    {
      ScopedRange annotate(prof, eager_annotation(p.name), RangeCategory::UserAnnotation);
      for (int i = 0; i < r.eager_calls; ++i) {
        ScopedRange op(prof, cpu_op, RangeCategory::CpuOp);
        w->enqueue();
      }
    }
    XB_CUDA(cudaStreamSynchronize(stream));
    prof.end_step();

    // Timed samples: the sampling core in hot mode, as `bench` (a batch of calls per sample
    // behind the blocking kernel, so the launch latency stays outside the event interval), with
    // the sweep's schedule and a short stopping rule.
    MeasureConfig cfg;
    cfg.schedule = Schedule{o.wait_steps, o.warmup_steps, o.active_steps};
    cfg.stopping.min_samples = std::max(2, o.active_steps);
    cfg.stopping.min_time_s = 0;
    cfg.stopping.max_time_s = kSweepMaxSamplingS;
    cfg.check_interrupt = throw_if_interrupted;
    const Measurement m = measure({[&] { w->enqueue(); }}, prof, dev, p.name, cpu_op, cfg);
    info.timing = m.timing;
    info.work = m.work;
    r.event_median_ns = m.stats.median;
    prof.add_fixture(fixture_block(info));
    if (o.graph) {
      // The same timed schedule with each sample's batch replayed as one CUDA graph: a fixture of
      // its own ("graph:<fixture>"), so the validator checks its attribution like any other.
      FixtureInfo g = info;
      g.name = graph_fixture(p.name);
      g.timing = FixtureTiming{};
      try {
        cfg.graph = true;
        const Measurement gm = measure({[&] { w->enqueue(); }}, prof, dev, g.name, cpu_op, cfg);  // drops its graphs
        g.timing = gm.timing;
        g.work = gm.work;
        g.graph_replay_items = gm.graph_replay_items;
        r.graph_median_ns = gm.stats.median;
      } catch (const std::exception& e) {
        XB_CUDA_NOTHROW(cudaStreamSynchronize(stream));
        r.info.error = std::string("graph mode: ") + e.what();
        g.verified = false;
        g.error = r.info.error;
      }
      prof.add_fixture(fixture_block(g));
    }
  } catch (const std::exception& e) {
    r.info.error = e.what();
    info.verified = false;
    XB_CUDA_NOTHROW(cudaStreamSynchronize(stream));
    prof.add_fixture(fixture_block(info));
  }
  return r;
}

std::string duration_text(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  return fmt::format("{}m{:02d}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}

/// Checks everything that can be checked before the folder is created: device, ceilings file,
/// memory of every point. Returns the given calibration, if any.
std::optional<Calibration> preflight(const SweepOptions& opt) {
  std::optional<Calibration> given;
  if (opt.ceilings) {
    given = read_calibration(*opt.ceilings);
    for (const std::string& dtype : opt.dtypes) {
      try {
        given->gemm_tflops(dtype);
      } catch (const std::invalid_argument&) {
        throw UsageError(fmt::format("{} has no GEMM ceiling for {}; run bench calibrate --dtype {}",
                                     opt.ceilings->string(), dtype, dtype));
      }
    }
  }
  require_cuda_device();
  if (given) {
    int device = 0;
    XB_CUDA(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    XB_CUDA(cudaGetDeviceProperties(&prop, device));
    if (given->gpu_name != prop.name) {
      throw UsageError(fmt::format("{} was measured on {}, but this GPU is {}; run bench calibrate here",
                                   opt.ceilings->string(), given->gpu_name, prop.name));
    }
  }
  if (!given) {  // the calibration run_calibration will do
    const CalibrateOptions co;
    require_device_memory(2 * (static_cast<std::size_t>(co.copy_mib) << 20),
                          fmt::format("the {} MiB copy", co.copy_mib));
    for (const std::string& dtype : opt.dtypes) {
      for (std::int64_t n : co.gemm_sizes) {
        require_device_memory(workload_device_bytes(Op::Matmul, parse_dtype(dtype), n),
                              fmt::format("GEMM {} {}", dtype, n));
      }
    }
  }
  for (const std::string& op : opt.ops) {
    for (const std::string& dtype : opt.dtypes) {
      for (std::int64_t n : opt.sizes) {
        require_device_memory(workload_device_bytes(parse_op(op), parse_dtype(dtype), n),
                              "size " + std::to_string(n) + ": " + fixture_name(op, dtype, n));
      }
    }
  }
  return given;
}

/// Every point of the sweep (op x dtype x size, in that order) with its predicted seconds.
std::vector<PointPlan> plan_points(const SweepOptions& opt, const Calibration& cal) {
  std::vector<PointPlan> plan;
  for (const std::string& op : opt.ops) {
    for (const std::string& dtype : opt.dtypes) {
      for (std::int64_t n : opt.sizes) {
        const Op o = parse_op(op);
        const DType d = parse_dtype(dtype);
        plan.push_back({o, d, n, fixture_name(op, dtype, n), predict_seconds(o, d, n, opt, cal)});
      }
    }
  }
  return plan;
}

/// Runs every point of `plan` in one profiler session (started here, stopped by the caller), each
/// with one progress line on stdout and its facts in report.run_info. Returns the failed points'
/// "name: error" lines.
std::vector<std::string> run_points(const std::vector<PointPlan>& plan, const SweepOptions& opt, Profiler& profiler,
                                    SampleDevice& device, cudaStream_t stream, SweepReport& report) {
  profiler.start();
  const auto t_points = steady::now();
  double predicted_done = 0, predicted_left = 0;
  for (const PointPlan& p : plan) predicted_left += p.predicted_s;
  std::vector<std::string> errors;
  const int width = static_cast<int>(std::to_string(plan.size()).size());
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PointPlan& p = plan[i];
    std::cout << fmt::format("[{:>{}}/{}] {:<26}", i + 1, width, plan.size(), p.name) << std::flush;
    const PointResult r = run_point(p, opt, profiler, device, stream);
    report.run_info[p.name] = r.info;
    predicted_done += p.predicted_s;
    predicted_left -= p.predicted_s;
    const double elapsed = seconds_since(t_points);
    const double scale = std::clamp(elapsed / std::max(predicted_done, 1e-9), 0.2, 5.0);
    std::string what;
    if (!r.info.error.empty()) {
      what = "FAILED: " + r.info.error;
      errors.push_back(p.name + ": " + r.info.error);
    } else {
      what = fmt::format(
          "verified ({:.1f} s), event median {:>10.3f} us{}, eager x{}", r.info.verify_s, r.event_median_ns / 1e3,
          r.graph_median_ns > 0 ? fmt::format(" (graph {:.3f} us)", r.graph_median_ns / 1e3) : "", r.eager_calls);
    }
    std::cout << fmt::format(" {}  | {} elapsed, about {} left\n", what, duration_text(elapsed),
                             duration_text(std::max(0.0, predicted_left) * scale))
              << std::flush;
  }
  return errors;
}

/// Validation of the run folder (as `bench`): validation.json and summary.md, its verdict and
/// summary line into `report`; the validator's log printed only when it failed. Returns its exit code.
int validate_sweep(const fs::path& dir, SweepReport& report) {
  std::ostringstream vlog;
  const int vcode = validate_and_report(dir, vlog);
  report.validation_passed = vcode == 0;
  try {
    const auto v = nlohmann::json::parse(read_text_file(dir / "validation.json"));
    const auto& s = v.at("summary");
    report.validation_summary = fmt::format("{} passed, {} failed, {} not run", s.at("passed").get<int>(),
                                            s.at("failed").get<int>(), s.at("not_run").get<int>());
  } catch (const std::exception& e) {
    report.validation_summary = std::string("validation.json summary unreadable: ") + e.what();
  }
  if (vcode != 0) std::cout << vlog.str();
  return vcode;
}

}  // namespace

int sweep_command(int argc, const char* const* argv) {
  const auto t0 = steady::now();
  const auto parsed = parse_sweep_args(argc, argv);
  if (!parsed) return 0;
  const SweepOptions& opt = *parsed;
  const fs::path dir = opt.out.empty() ? default_run_dir() : opt.out;
  check_run_dir(dir);  // a bad --out is reported before the device checks
  const std::optional<Calibration> given = preflight(opt);
  create_run_dir(dir);

  SweepReport report;
  if (given) {
    report.calibration = *given;
    std::cout << "sweep: ceilings from " << opt.ceilings->string() << " (" << given->created_utc << ")\n";
  } else {
    CalibrateOptions co;
    co.dtypes = opt.dtypes;
    std::cout << "sweep: no --ceilings given; calibrating first\n";
    report.calibration = run_calibration(co, std::cout);
  }
  const Calibration& cal = report.calibration;
  write_file_atomic(dir / "ceilings.json", [&](std::ostream& o) { write_calibration_json(cal, o); });
  write_file_atomic(dir / "calibration.md", [&](std::ostream& o) { write_calibration_markdown(cal, o); });

  const std::vector<PointPlan> plan = plan_points(opt, cal);
  Stream stream;
  BlockingKernel blocking;
  const std::unique_ptr<SampleDevice> device = make_cuda_sample_device(stream.get(), &blocking, nullptr);
  Profiler profiler(make_cupti_source());
  profiler.set_mirror(make_nvtx_mirror());
  const std::vector<std::string> errors = run_points(plan, opt, profiler, *device, stream.get(), report);
  XB_CUDA(cudaDeviceSynchronize());
  RawSession raw = profiler.stop();
  raw.meta.created_utc = utc_time("%Y-%m-%dT%H:%M:%SZ");
  raw.meta.cublas_version = static_cast<int>(cublasLtGetVersion());
  attach_gpu_meta(raw.meta, GpuMeta{});  // the sweep reads no NVML facts: meta.gpu says "not recorded"
  write_run_outputs(raw, dir);
  if (opt.counters && interrupt_signal() == 0) {
    // The counter pass, after every timed point (its kernel replay perturbs timing).
    std::vector<FixtureSpec> specs;
    for (const PointPlan& p : plan) specs.push_back({to_string(p.op), to_string(p.dtype), p.n});
    std::cout << "\n";
    run_counter_pass_on_gpu(specs, stream.get(), dir, std::cout);
  }

  const int vcode = validate_sweep(dir, report);

  report.created_utc = raw.meta.created_utc;
  report.meta = raw.meta;
  report.rules.busy_threshold = opt.busy_threshold;
  report.settings = opt;
  report.elapsed_s = seconds_since(t0);
  analyse(report, measure_points(raw));
  write_file_atomic(dir / "sweep.json", [&](std::ostream& o) { write_sweep_json(report, o); });
  write_file_atomic(dir / "sweep.csv", [&](std::ostream& o) { write_sweep_csv(report, o); });
  write_file_atomic(dir / "sweep.md", [&](std::ostream& o) { write_sweep_markdown(report, o); });
  release_run_dir(dir);

  std::cout << "\n";
  print_sweep_table(report, std::cout);
  std::cout << fmt::format("validation: {} ({})\nsweep folder: {} ({} in all)\n",
                           *report.validation_passed ? "PASSED" : "FAILED", report.validation_summary, dir.string(),
                           duration_text(report.elapsed_s));
  for (const std::string& e : errors) std::cerr << "bench: point failed: " << e << "\n";
  return errors.empty() && vcode == 0 ? 0 : 1;
}

}  // namespace xb
