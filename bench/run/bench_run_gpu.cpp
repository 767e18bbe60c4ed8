// One `bench` run (see bench_run.h); moved here from bench/main/main.cpp so that `bench qualify` can
// run it once per mode of a suite.
#include "bench/run/bench_run.h"

#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <iostream>
#include <set>

#include "bench/core/counter_pass.h"
#include "bench/core/device.h"
#include "bench/core/device_failure.h"
#include "bench/core/gpu_meta.h"
#include "bench/core/interrupt.h"
#include "bench/core/run_dir.h"
#include "bench/run/console_reporter.h"
#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/spin_delay.h"
#include "kernels/workload.h"
#include "profiler/adapters/cupti_source.h"
#include "profiler/adapters/nvtx_mirror.h"
#include "profiler/model/profiler.h"
#include "profiler/model/session_io.h"

namespace xb {
namespace {

namespace fs = std::filesystem;

/// Bytes in GiB, for messages.
double gib(std::size_t bytes) { return static_cast<double>(bytes) / 1073741824.0; }

/// Fails with UsageError when there is no usable device or a fixture cannot fit in its memory.
/// `program`: the program as it was invoked (argv0: build/bench, a user's ./saxpy), so that the
/// advice's --replay command runs as printed.
void check_device(const std::vector<FixtureSpec>& fixtures, const std::string& program) {
  require_cuda_device("to try crossbench without a GPU, replay a recorded H200 session: " + program +
                      " --replay FILE (the crossbench repository has results/sessions/h200-small/raw_session.json)");
  std::size_t free_bytes = 0, total_bytes = 0;
  XB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  for (const FixtureSpec& f : fixtures) {
    const BenchmarkDef* def = find_benchmark(f.op);
    if (def == nullptr || !def->device_bytes) continue;
    const auto need = static_cast<std::size_t>(def->device_bytes(Point{f.op, f.dtype, f.size}));
    if (need > free_bytes) {
      throw UsageError(
          fmt::format("size {} does not fit: {} needs {:.2f} GiB of device memory, {:.2f} GiB free of {:.2f} GiB",
                      f.size, fixture_name(f.op, f.dtype, f.size), gib(need), gib(free_bytes), gib(total_bytes)));
    }
  }
}

/// Fails with UsageError when a per-fixture setting names no fixture of the plan, or a fixture
/// appears twice.
void check_plan(const BenchPlan& plan) {
  if (plan.fixtures.empty()) throw UsageError("no fixture to run");
  std::set<std::string> names;
  for (const FixtureSpec& f : plan.fixtures) {
    const std::string name = fixture_name(f.op, f.dtype, f.size);
    if (!names.insert(name).second) throw UsageError("fixture " + name + " is listed twice in one run");
  }
  for (const auto& entry : plan.stopping) {
    if (names.count(entry.first) == 0) {
      throw UsageError("a stopping rule names " + entry.first + ", which is not a fixture of this run");
    }
  }
  for (const auto& [name, us] : plan.delay_us) {
    if (names.count(name) == 0)
      throw UsageError("--slow-fixture names " + name + ", which is not a fixture of this run");
    if (!(us > 0) || us * 1e3 > static_cast<double>(kMaxSpinDelayNs)) {
      throw UsageError(
          fmt::format("--slow-fixture {}: delay {} us is outside (0, {}] us", name, us, kMaxSpinDelayNs / 1000));
    }
  }
}

/// Clears Google Benchmark's registrations (they point at this run's context) on every exit.
struct ClearRegistrations {
  ~ClearRegistrations() { benchmark::ClearRegisteredBenchmarks(); }
};

/// True when the user's Google Benchmark flags ask for --benchmark_list_tests: the flag alone or
/// with a value Google Benchmark reads as true (its IsTruthyFlagValue, benchmark 1.7 to 1.9: not
/// "0", "f", "n", "false", "no", "off", any case; the last occurrence wins).
bool lists_tests(const std::vector<std::string>& benchmark_args) {
  const std::string flag = "--benchmark_list_tests";
  bool on = false;
  for (const std::string& a : benchmark_args) {
    if (a == flag) {
      on = true;
    } else if (a.rfind(flag + "=", 0) == 0) {
      std::string v = a.substr(flag.size() + 1);
      for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      on = !v.empty() && v != "0" && v != "f" && v != "n" && v != "false" && v != "no" && v != "off";
    }
  }
  return on;
}

/// Google Benchmark's flags: the user's --benchmark_* flags, plus (when `json_out` is given and the
/// user named no --benchmark_out) JSON output into `*json_out`. Returns whether the user named
/// one. Throws UsageError for a flag Google Benchmark does not know; called before the run folder
/// exists, so a mistyped flag leaves nothing behind.
bool init_google_benchmark(const std::vector<std::string>& benchmark_args, const fs::path* json_out,
                           const char* argv0) {
  std::vector<std::string> gb_args{argv0 != nullptr ? argv0 : "bench"};
  bool user_out = false;
  for (const std::string& a : benchmark_args) {
    user_out = user_out || a.rfind("--benchmark_out=", 0) == 0;
    gb_args.push_back(a);
  }
  if (!user_out && json_out != nullptr) {
    gb_args.push_back("--benchmark_out=" + json_out->string());
    gb_args.push_back("--benchmark_out_format=json");
  }
  std::vector<char*> gb_argv;
  for (std::string& a : gb_args) gb_argv.push_back(a.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (gb_argc > 1) throw UsageError(std::string("unrecognized Google Benchmark flag '") + gb_argv[1] + "'");
  return user_out;
}

/// --graph with a benchmark that declares .sync(): UsageError (a synchronizing call cannot be
/// captured into a CUDA graph).
void refuse_graph_of_sync(const BenchPlan& plan) {
  for (const FixtureSpec& f : plan.fixtures) {
    const BenchmarkDef* def = find_benchmark(f.op);
    if (def != nullptr && def->sync) {
      throw UsageError("--graph: " + f.op +
                       " declares .sync(), and a synchronizing call cannot be captured into a CUDA graph");
    }
  }
}

/// The sampling core's settings from the options, the plan's per-fixture stopping rules and
/// --slow-fixture delays (each said on the console).
void configure_measure(BenchContext& ctx, const BenchOptions& opt, const BenchPlan& plan) {
  MeasureConfig& m = ctx.measure;
  m.schedule = Schedule{opt.wait_steps, opt.warmup_steps, opt.active_steps};
  m.warmup = opt.warmup;
  m.mode = opt.mode;
  m.batch = opt.batch;
  m.graph = opt.graph;
  m.work_signature = opt.work_signature;
  static_cast<StoppingSettings&>(m.stopping) = opt.stopping;
  m.check_interrupt = throw_if_interrupted;
  ctx.stopping_by_fixture = plan.stopping;
  for (const auto& [name, us] : plan.delay_us) {
    ctx.delay_ns_by_fixture[name] = std::llround(us * 1e3);
    std::cout << fmt::format(
        "note: {} is slowed down on purpose: a {} us spin kernel after every call (--slow-fixture)\n", name, us);
  }
}

/// Cold mode: the flush buffer, twice the L2 (ctx.l2_bytes); one memset first loads the memset
/// kernel (lazy loading) outside any sample. The copy bandwidth (the better of cudaMemcpyAsync
/// and our copy kernel) bounds every cold-mode rate: ctx.copy. Throws CudaError.
DeviceBuffer prepare_cold_mode(BenchContext& ctx, cudaStream_t stream) {
  DeviceBuffer flush(2 * ctx.l2_bytes);
  XB_CUDA(cudaMemsetAsync(flush.get(), 0, flush.bytes(), stream));
  XB_CUDA(cudaStreamSynchronize(stream));
  ctx.copy = measure_copy_bandwidth(stream);
  std::cout << fmt::format(
      "cold mode: L2 {} MiB, flush buffer {} MiB, device-to-device copy {:.0f} GB/s "
      "(cudaMemcpyAsync {:.0f} GB/s, copy kernel {:.0f} GB/s; the better bounds cold rates)\n",
      ctx.l2_bytes >> 20, flush.bytes() >> 20, ctx.copy.best_bytes_per_ns(), ctx.copy.memcpy_bytes_per_ns,
      ctx.copy.kernel_bytes_per_ns);
  return flush;
}

/// The GPU's facts as (key, value) pairs: benchmark.json's context, beside Google Benchmark's
/// host facts (tools/compare.py and other readers of that file then know what it ran on), and the
/// first lines of the console (ConsoleReporter). Throws CudaError.
std::vector<std::pair<std::string, std::string>> gpu_context_of(const GpuMetaRecorder& gpu_meta, int device) {
  const GpuStaticInfo info = gpu_meta.nvml().static_info();
  cudaDeviceProp prop{};
  XB_CUDA(cudaGetDeviceProperties(&prop, device));
  return {{"gpu_name", prop.name},
          {"gpu_uuid", info.uuid.empty() ? "unknown (" + info.source + ")" : info.uuid},
          // Which board of the node (the UUID says which board, the bus id where it sits): with
          // --devices each device's benchmark.json names its own.
          {"gpu_pci_bus_id", info.pci_bus_id.empty() ? "unknown" : info.pci_bus_id},
          {"gpu_driver", info.driver_version.empty() ? "unknown" : info.driver_version},
          {"gpu_sm_clock_max_mhz", std::to_string(info.sm_clock_max_mhz)},
          {"gpu_mem_clock_max_mhz", std::to_string(info.mem_clock_max_mhz)},
          {"gpu_power_limit_w", fmt::format("{:.0f}", info.power_limit_w)}};
}

/// Adds the GPU's facts to benchmark.json's context once per process: Google Benchmark keeps the
/// context across runs and warns about a key added twice (bench qualify runs twice).
void add_gpu_context_once(const std::vector<std::pair<std::string, std::string>>& gpu_context) {
  static bool context_added = false;
  if (context_added) return;
  context_added = true;
  for (const auto& [key, value] : gpu_context) benchmark::AddCustomContext(key, value);
}

/// bench --benchmark_list_tests: Google Benchmark prints the names of the plan's fixtures (after
/// --benchmark_filter) and runs nothing, so neither a GPU nor a run folder is needed: the fixtures
/// are registered against an empty context that nothing calls.
int list_fixtures(const BenchPlan& plan, const std::vector<std::string>& benchmark_args, const char* argv0) {
  init_google_benchmark(benchmark_args, nullptr, argv0);
  BenchContext unused;
  const ClearRegistrations clear_registrations;
  register_fixtures(plan.fixtures, unused);
  benchmark::RunSpecifiedBenchmarks(benchmark::CreateDefaultDisplayReporter());
  return 0;
}

}  // namespace

BenchPlan plan_from_options(const BenchOptions& options) {
  BenchPlan plan;
  plan.fixtures = fixture_specs(options);
  plan.delay_us = options.slow_fixtures_us;
  return plan;
}

namespace {

/// Runs the registered fixtures through Google Benchmark with bench's console table (or the
/// reporter --benchmark_format asks for).
void run_registered_fixtures(const BenchOptions& opt,
                             const std::vector<std::pair<std::string, std::string>>& gpu_context) {
  // The display reporter is passed in, not left to RunSpecifiedBenchmarks: given none, it wraps
  // the process-wide static that CreateDefaultDisplayReporter returns in a unique_ptr and deletes
  // it on return (src/benchmark.cc of benchmark 1.7.1 to 1.9.x; google/benchmark#2240: the API
  // expects one run per process), so a second run in one process (crossbench.bench from Python,
  // bench qualify with two modes) used the freed reporter: "free(): invalid pointer" or a
  // segfault in FindBenchmarks, right after opening --benchmark_out. The static one still
  // honours --benchmark_format and --benchmark_color; the file reporter is made per run.
  // bench's own console table (console_reporter.h: no DEBUG line from the system's library,
  // per-call CPU and calls timed, plain counters) unless --benchmark_format asks for json or csv.
  bool gb_console = true;
  for (const std::string& a : opt.benchmark_args) {
    if (a.rfind("--benchmark_format=", 0) == 0) gb_console = a == "--benchmark_format=console";
  }
  ConsoleReporter console(gpu_context);
  benchmark::RunSpecifiedBenchmarks(gb_console ? &console : benchmark::CreateDefaultDisplayReporter());
}

}  // namespace

int run_bench(const BenchOptions& opt, const BenchPlan& plan, const char* argv0) {
  const fs::path dir = opt.out.empty() ? default_run_dir() : opt.out;
  if (opt.replay) return replay_session(*opt.replay, dir, std::cout);
  // Everything that needs no GPU first (the plan, the folder, the flags), so that a bad input is
  // reported as such on any machine; then the device.
  check_plan(plan);
  if (lists_tests(opt.benchmark_args)) return list_fixtures(plan, opt.benchmark_args, argv0);
  if (opt.graph) refuse_graph_of_sync(plan);
  check_run_dir(dir);
  wait_deadline_s();  // a bad XB_WAIT_DEADLINE_S is bad input: said before anything is written

  const fs::path gb_partial = dir / ".benchmark.json.partial";
  const bool user_out = init_google_benchmark(opt.benchmark_args, &gb_partial, argv0);
  check_device(plan.fixtures, argv0 != nullptr && *argv0 != '\0' ? std::string(argv0) : program_name(argv0));
  // Event-only mode (--no-cupti): the same fixtures and events, no CUPTI; validation then reports
  // the CUPTI checks as not run. The source comes before the run folder, so a missing CUPTI library,
  // or CUPTI held by another tool, stops the run with nothing written.
  std::unique_ptr<ActivitySource> source = opt.cupti ? make_cupti_source() : make_null_source();
  create_run_dir(dir);
  // Until recording starts the folder holds only its claim: a failure before then (CUDA set-up,
  // CUPTI refusing to start) takes the folder back, so nothing is left behind.
  RunDirClaim claim(dir);

  std::optional<Stream> own_stream;
  if (!plan.stream) own_stream.emplace();
  const cudaStream_t stream = plan.stream ? *plan.stream : own_stream->get();
  BlockingKernel blocking;
  Profiler profiler(std::move(source));
  profiler.set_mirror(make_nvtx_mirror());  // Nsight Systems shows the same ranges
  BenchContext ctx;
  ctx.profiler = &profiler;
  ctx.stream = stream;
  configure_measure(ctx, opt, plan);
  if (!plan.delay_us.empty()) warm_up_spin_delay(stream);  // lazy loading outside any sample
  int device = 0, l2 = 0;
  XB_CUDA(cudaGetDevice(&device));
  XB_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  ctx.l2_bytes = static_cast<std::size_t>(l2);
  DeviceBuffer flush;
  if (opt.mode == TimingMode::Cold) flush = prepare_cold_mode(ctx, stream);
  const std::unique_ptr<SampleDevice> sample_device = make_cuda_sample_device(
      stream, opt.blocking ? &blocking : nullptr, opt.mode == TimingMode::Cold ? &flush : nullptr);
  ctx.device = sample_device.get();
  // NVML: the GPU's facts and clocks at the start and end of the recording (meta.gpu), and a
  // snapshot before and after each fixture's sampling (throttle flags).
  const GpuMetaRecorder gpu_meta;
  ctx.measure.read_gpu = [&gpu_meta] { return to_clock_sample(gpu_meta.nvml().snapshot()); };
  ctx.measure.power_limit_w = gpu_meta.nvml().static_info().power_limit_w;
  const std::vector<std::pair<std::string, std::string>> gpu_context = gpu_context_of(gpu_meta, device);
  add_gpu_context_once(gpu_context);
  const ClearRegistrations clear_registrations;
  register_fixtures(plan.fixtures, ctx);

  // From here a SIGINT/SIGTERM stops between samples; every completed fixture is still written.
  install_interrupt_handlers();
  profiler.start();
  claim.keep();
  run_registered_fixtures(opt, gpu_context);
  // After a device fault or hang (a fixture recorded it: device_failures) the device cannot be
  // waited for; everything below but the counter pass needs no working context (CUPTI's records
  // delivered so far are kept, NVML reads the board, the files and the validator are host work).
  const bool device_lost = ctx.device_failures.failure().has_value();
  if (!device_lost) XB_CUDA(cudaDeviceSynchronize());
  RawSession raw = profiler.stop();
  raw.meta.created_utc = utc_time("%Y-%m-%dT%H:%M:%SZ");
  raw.meta.cublas_version = static_cast<int>(cublasLtGetVersion());
  gpu_meta.fill(raw.meta);
  if (!opt.command.empty()) attach_command(raw.meta, opt.command);
  // No benchmark::Shutdown(): it deletes the custom context (AddCustomContext above, once per
  // process) without forgetting the pointer, so the next run in this process would print freed
  // memory into benchmark.json and delete it again. The map lives until the process ends.
  if (!user_out && fs::exists(gb_partial)) fs::rename(gb_partial, dir / "benchmark.json");

  write_run_outputs(raw, dir);
  // The counter pass (--counters): after everything timed, a pass of its own, since its kernel
  // replay perturbs timing; counters.json says which pass its numbers come from.
  if (opt.counters && interrupt_signal() == 0 && !device_lost)
    run_counter_pass_on_gpu(plan.fixtures, ctx.stream, dir, std::cout);
  release_run_dir(dir);
  std::cout << "\nrun folder: " << dir.string() << "\n";
  const int code = validate_and_report(dir, std::cout);
  for (const std::string& e : ctx.errors) std::cerr << "bench: fixture failed: " << e << "\n";
  // The one line (run_command prints it; Python raises it): the fixture, the error, what did not
  // run, where the rest is.
  if (device_lost) {
    std::cout.flush();
    throw RunEndedByDevice(ctx.device_failures, dir.string(), program_name(argv0),
                           opt.command.empty() ? std::string(argv0 != nullptr ? argv0 : "") : opt.command);
  }
  if (const int sig = interrupt_signal(); sig != 0) {
    std::cerr << "bench: interrupted by signal " << sig << ": completed fixtures are in " << dir.string() << "\n";
    return interrupted_exit_code(sig);
  }
  return ctx.errors.empty() ? code : 1;
}

}  // namespace xb
