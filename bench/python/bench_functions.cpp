// crossbench._core's bench functions, behind crossbench.bench (bench/python/crossbench/_bench.py;
// docs/python.md); built only with the CUDA toolkit (module.cpp). It runs Python callables through the plain `bench`
// run itself (run_bench: the sampling core, the CUPTI profiler, the run folder and its validation): each name is a
// benchmark of the public API (bench/core/api.h) whose instances call a callable. Nothing here
// knows PyTorch: the stream arrives as an integer (cudaStream_t) from the Python side.
//
// The callables run on the calling thread with the GIL held (run_bench is synchronous and Google
// Benchmark runs a one-thread benchmark on the calling thread), between the blocking kernel's hold
// and its release, exactly where a C++ benchmark's launch runs.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/core/api.h"
#include "bench/core/device.h"
#include "bench/core/device_failure.h"
#include "bench/core/interrupt.h"
#include "bench/core/options.h"
#include "bench/python/functions.h"
#include "bench/run/bench_run.h"
#include "kernels/cuda_check.h"
#include "profiler/model/profiler.h"
#include "profiler/model/session_io.h"

namespace nb = nanobind;

namespace xb {
namespace {

/// The callables of the run in progress for one registered name, and its per-call figures.
/// The registry keeps its entries for the life of the process, so each name is registered once and
/// its factory finds the current callables here; they are dropped after every run (CallablesGuard),
/// so no Python object outlives the run in C++ (nor the interpreter at exit).
struct PyBenchmark {
  std::size_t registry_index = 0;
  std::vector<nb::object> callables;
  std::size_t next = 0;  ///< the callable the next instance gets (cold mode: rotation)
  double flops = 0;      ///< per call
  double bytes = 0;      ///< per call
  /// The first Python exception a callable raised during the run, re-raised after it.
  std::optional<nb::python_error> error;
};

std::map<std::string, PyBenchmark>& py_benchmarks() {
  static auto* benchmarks = new std::map<std::string, PyBenchmark>();  // never destroyed: see above
  return *benchmarks;
}

/// Registers `name` once; later calls find the registration.
PyBenchmark& benchmark_for(const std::string& name) {
  auto& all = py_benchmarks();
  if (auto it = all.find(name); it != all.end()) return it->second;
  if (find_benchmark(name) != nullptr)
    throw nb::value_error(("name '" + name + "' is taken by a benchmark of this process").c_str());
  Registration reg = register_benchmark(name, [name](const Point&, cudaStream_t) {
    PyBenchmark& b = py_benchmarks().at(name);
    nb::object fn = b.callables.at(b.next++ % b.callables.size());
    Instance instance;
    instance.launch = [fn, name](cudaStream_t) {
      try {
        fn();  // the result (e.g. a tensor) is dropped at once: its memory goes back to the caller's allocator
      } catch (nb::python_error& e) {
        PyBenchmark& owner = py_benchmarks().at(name);
        if (!owner.error) owner.error.emplace(e);
        throw std::runtime_error(std::string("the callable raised ") + e.what());
      }
    };
    return instance;  // no verify: the files say "reference": false, `verified` is not run
  });
  reg.dtypes({"bf16", "fp16", "fp32"})
      .flops([name](const Point&) { return py_benchmarks().at(name).flops; })
      .bytes([name](const Point&) { return py_benchmarks().at(name).bytes; });
  PyBenchmark& b = all[name];
  b.registry_index = registered_benchmarks().size() - 1;  // register_benchmark appends
  return b;
}

/// Drops the run's callables (and a stored exception) on every way out of run().
struct CallablesGuard {
  PyBenchmark& b;
  ~CallablesGuard() {
    b.callables.clear();
    b.error.reset();
    b.next = 0;
  }
};

/// Puts back the caller's SIGINT/SIGTERM handlers (Python's) that run_bench replaced.
struct InterruptGuard {
  ~InterruptGuard() { restore_interrupt_handlers(); }
};

/// What run_bench prints to std::cout (Google Benchmark's table, the run folder, the validation
/// summary) goes into `text` while it lives; std::cout's own buffer comes back at the end.
struct CoutCapture {
  std::ostringstream text;
  std::streambuf* saved = std::cout.rdbuf(text.rdbuf());
  ~CoutCapture() { std::cout.rdbuf(saved); }
};

/// The Python program as a command line (sys.executable and sys.argv), for the compute-sanitizer or
/// cuda-gdb advice of a device failure's line; "python3 <your script>" when it cannot be told.
std::string python_command() {
  std::vector<std::string> words;
  try {
    const nb::module_ sys = nb::module_::import_("sys");
    words.push_back(nb::cast<std::string>(nb::str(sys.attr("executable"))));
    for (nb::handle a : nb::borrow<nb::list>(sys.attr("argv"))) words.push_back(nb::cast<std::string>(nb::str(a)));
  } catch (const std::exception&) {
    words.clear();
  }
  if (words.size() == 2 && words[1].empty()) words.pop_back();  // interactive: sys.argv == ['']
  if (words.size() < 2 || words[0].empty()) return "python3 <your script>";
  return shell_command(words);
}

/// The device of this process after a device fault or hung call (cuda_check.h): "" while usable,
/// else why nothing can run on it any more.
std::string device_lost() {
  if (const double s = cuda_hung_s(); s > 0) {
    std::ostringstream text;
    text << "a call of an earlier run did not finish within " << s
         << " s, and the device stays busy with it: nothing can run on it in this process (torch's work neither); "
            "start a new Python process";
    return text.str();
  }
  if (const cudaError_t e = cuda_context_lost(); e != cudaSuccess) {
    return std::string("the CUDA context of this process was lost in an earlier run (") + cudaGetErrorName(e) +
           "): nothing can run on the device in this process (torch's work neither); start a new Python process";
  }
  return "";
}

/// Everything crossbench.bench passes down; the Python side has checked types and ranges.
struct RunArgs {
  std::vector<nb::object> callables;
  std::string name, dtype, mode, out;
  std::int64_t size = 1;
  std::uintptr_t stream = 0;
  bool warmup = true, cupti = true, sync = false;
  double flops = 0, bytes = 0;
  int batch = 0, wait_steps = 1, warmup_steps = 2, active_steps = 20;
  StoppingSettings stopping;
};

/// Runs one fixture (name/dtype/size) of `a.callables` and returns {"exit_code", "run_dir",
/// "cupti" (whether CUPTI recorded), "note" (why not, in one line, or ""), "log" (what bench
/// prints: Google Benchmark's table, the validation summary)}. Raises RuntimeError
/// "no CUDA device found (...)" without a usable GPU, ValueError for bad input, the callable's own
/// exception when it raised, KeyboardInterrupt after Ctrl-C (the run folder is still written), and
/// RuntimeError with the device failure's line (docs/python.md) after a device fault or a call that
/// did not finish within the deadline, or when an earlier one left the process's CUDA unusable.
nb::dict run(const RunArgs& a) {
  if (a.callables.empty()) throw nb::value_error("no callable to time");
  try {
    require_cuda_device("crossbench.bench times GPU work");
  } catch (const UsageError& e) {
    throw std::runtime_error(e.what());
  }
  if (const std::string why = device_lost(); !why.empty()) throw std::runtime_error("crossbench: " + why);
  const auto stream = reinterpret_cast<cudaStream_t>(a.stream);
  // No call of the callables here: the sampling core's setup calls (measure.h: each instance's
  // first call unblocked, then the stream synchronized) do the one-time work (lazy loading, Triton's
  // JIT, allocator growth, cuBLAS workspaces), and a callable that synchronizes is detected there
  // or declared with sync=True.

  PyBenchmark& b = benchmark_for(a.name);
  const CallablesGuard guard{b};
  b.callables = a.callables;
  b.flops = a.flops;
  b.bytes = a.bytes;
  // Cold mode: the callables are the instances used in turn (one: no rotation, only the L2 flush).
  // sync=True: the callables synchronize with the device (BenchmarkDef::sync).
  Registration(b.registry_index).rotation(static_cast<int>(a.callables.size())).sync(a.sync);

  BenchOptions opt;
  const std::optional<TimingMode> mode = timing_mode_named(a.mode);
  if (!mode) throw nb::value_error(("mode must be 'hot' or 'cold', not '" + a.mode + "'").c_str());
  opt.mode = *mode;
  opt.warmup = a.warmup;
  opt.batch = a.batch;
  opt.stopping = a.stopping;
  opt.wait_steps = a.wait_steps;
  opt.warmup_steps = a.warmup_steps;
  opt.active_steps = a.active_steps;
  opt.cupti = a.cupti;
  opt.out = a.out;
  BenchPlan plan;
  plan.fixtures.push_back(FixtureSpec{a.name, a.dtype, a.size});
  plan.stream = stream;

  std::string note, log;
  int code = 0;
  {
    const InterruptGuard restore;
    CoutCapture capture;
    struct KeepLog {  // the log also when run_bench throws
      CoutCapture& c;
      std::string& log;
      ~KeepLog() { log = c.text.str(); }
    } keep_log{capture, log};
    try {
      try {
        code = run_bench(opt, plan, "crossbench");
      } catch (const ProfilerError& e) {
        // CUPTI refused before anything was written (another tool holds it, or no library): the
        // same run with cudaEvents alone; the validation reports every CUPTI check as not run.
        if (!opt.cupti) throw;
        note =
            std::string("CUPTI unavailable (") + e.what() + "): timed with cudaEvents alone, the CUPTI checks not run";
        opt.cupti = false;
        code = run_bench(opt, plan, "crossbench");
      }
    } catch (const UsageError& e) {
      throw nb::value_error(e.what());
    } catch (const InputError& e) {
      throw nb::value_error(e.what());
    } catch (const RunEndedByDevice& e) {
      // No std::_Exit here (bench's is in run_command): the process lives on, its CUDA context,
      // torch's too, unusable; the callable's own exception, if any, is the fault's echo.
      throw std::runtime_error(e.line("crossbench", python_command()));
    }
    if (interrupt_signal() != 0) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw nb::python_error();
    }
  }
  if (b.error) throw nb::python_error(*b.error);
  nb::dict result;
  result["exit_code"] = code;
  result["run_dir"] = opt.out.string();
  result["cupti"] = opt.cupti;
  result["note"] = note;
  result["log"] = log;
  return result;
}

}  // namespace

void add_bench_functions(nb::module_& m) {
  m.def(
      "run",
      [](std::vector<nb::object> callables, std::string name, std::string dtype, std::int64_t size,
         std::uintptr_t stream, std::string mode, bool warmup, double flops, double bytes, std::string out, bool cupti,
         int batch, double max_noise_pct, int min_samples, double min_time_s, double max_time_s, int wait_steps,
         int warmup_steps, int active_steps, bool sync) {
        RunArgs a;
        a.callables = std::move(callables);
        a.name = std::move(name);
        a.dtype = std::move(dtype);
        a.size = size;
        a.stream = stream;
        a.mode = std::move(mode);
        a.warmup = warmup;
        a.flops = flops;
        a.bytes = bytes;
        a.out = std::move(out);
        a.cupti = cupti;
        a.batch = batch;
        a.stopping.max_noise_fraction = max_noise_pct / 100;
        a.stopping.min_samples = min_samples;
        a.stopping.min_time_s = min_time_s;
        a.stopping.max_time_s = max_time_s;
        a.wait_steps = wait_steps;
        a.warmup_steps = warmup_steps;
        a.active_steps = active_steps;
        a.sync = sync;
        return run(a);
      },
      nb::arg("callables"), nb::arg("name"), nb::arg("dtype"), nb::arg("size"), nb::arg("stream"), nb::arg("mode"),
      nb::arg("warmup"), nb::arg("flops"), nb::arg("bytes"), nb::arg("out"), nb::arg("cupti"), nb::arg("batch"),
      nb::arg("max_noise_pct"), nb::arg("min_samples"), nb::arg("min_time_s"), nb::arg("max_time_s"),
      nb::arg("wait_steps"), nb::arg("warmup_steps"), nb::arg("active_steps"), nb::arg("sync"),
      "Runs the callables as one fixture through bench's run; crossbench.bench is the documented entry point.");
  m.def(
      "stopping_defaults",
      []() {
        const StoppingSettings d;
        nb::dict out;
        out["max_noise_pct"] = d.max_noise_fraction * 100;
        out["min_samples"] = d.min_samples;
        out["min_time_s"] = d.min_time_s;
        out["max_time_s"] = d.max_time_s;
        return out;
      },
      "The stopping rule's defaults (bench/core/stopping_rule.h StoppingSettings): max_noise_pct (percent), "
      "min_samples, min_time_s, max_time_s (s); crossbench.bench's None means these.");
  m.def(
      "device_error",
      []() -> std::string {
        try {
          require_cuda_device("crossbench.bench times GPU work");
        } catch (const UsageError& e) {
          return e.what();
        }
        return "";
      },
      "The one-line reason no CUDA device is usable, or '' when one is.");
}

}  // namespace xb
