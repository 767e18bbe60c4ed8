// crossbench's public measuring API: benchmark a CUDA kernel of your own with crossbench's whole
// timing method (blocking kernel, hot and cold modes, warm-up to steady state, the noise-based
// stopping rule, NVML clocks, cudaEvent pairs) cross-checked by its CUPTI profiler, and get the
// same validated run folder as `bench` (docs/own-kernel.md).
//
//   #include "bench/core/api.h"
//   XB_BENCHMARK(saxpy, [](const xb::Point& p, cudaStream_t s) {
//     auto buf = std::make_shared<MyBuffers>(p.size);        // owned by the instance
//     return xb::Instance{[buf](cudaStream_t st) { saxpy<<<grid, 256, 0, st>>>(...); },
//                         [buf](cudaStream_t st) { return buf->check(st); }};
//   }).dtypes({"fp32"}).flops([](const xb::Point& p) { return 2.0 * p.size; })
//     .bytes([](const xb::Point& p) { return 12.0 * p.size; });
//   int main(int argc, char** argv) { return xb::main(argc, argv); }
//
// The program then takes bench's own command line (--size, --op, --dtype, --mode, --warmup,
// --out, the stopping-rule flags, --benchmark_*). Nothing here needs CUDA beyond cudaStream_t.
// Units: sizes are the benchmark's own problem size n; FLOPs and bytes are per call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace xb {

/// One point of a benchmark's axes: the benchmark, its dtype name and its size n.
struct Point {
  std::string op;         ///< the benchmark's name, e.g. "saxpy"
  std::string dtype;      ///< one of the benchmark's dtypes, e.g. "fp32"
  std::int64_t size = 0;  ///< problem size n (crossbench's own ops: n x n tensors)
};

/// Outcome of a verification callback; a failed check fails the fixture (exit code 1).
struct Check {
  bool passed = false;
  double rel_error = 0;  ///< e.g. ||out - ref||_2 / ||ref||_2
  double tolerance = 0;  ///< the bound rel_error was held to
  std::string detail;    ///< e.g. "full check" or "sampled 16 rows"
};

/// One instance of a benchmark at one point, with buffers of its own (captured by the callables,
/// e.g. through a std::shared_ptr). Hot mode uses one instance; cold mode creates several and uses
/// them in turn (input rotation), so that no call finds its inputs in the L2.
struct Instance {
  /// Enqueues one call on `stream`. Required. May throw; the fixture then fails with the
  /// exception's message. Best without synchronization (the harness times the stream, behind a
  /// blocking kernel that keeps the host's launch time out of the interval). A launch that
  /// synchronizes with the device (cudaFree, cudaMalloc on some paths, a library call that waits)
  /// is found, after its setup call or on any later call, and timed without the blocking kernel
  /// from then on, its times then holding the host's launch time; nothing fails for it. The first
  /// call of every instance runs unblocked and synchronized before anything is timed (one-time
  /// setup).
  std::function<void(cudaStream_t stream)> launch;
  /// Optional: poisons the output, runs one call on `stream`, synchronizes and compares with a
  /// reference. Run once per fixture before any timing. Without it the run says so: the files
  /// carry "reference": false and the validator reports the `verified` check as not run for it.
  std::function<Check(cudaStream_t stream)> verify;
};

/// Creates an instance at `point` whose work goes to `stream` (the harness's stream).
using Factory = std::function<Instance(const Point& point, cudaStream_t stream)>;
/// A per-point figure: FLOPs per call, bytes per call, device bytes per instance.
using PointFigure = std::function<double(const Point& point)>;

/// A registered benchmark: its name, axes, per-call work and factory.
struct BenchmarkDef {
  std::string name;
  Factory make;
  std::vector<std::string> dtypes{"fp32"};  ///< the first is the default when --dtype is not given
  std::vector<std::int64_t> sizes;          ///< default sizes; empty: --size's default (64, 4096)
  PointFigure flops;                        ///< floating-point operations per call (TFLOP/s, roofline); empty: 0
  PointFigure bytes;                        ///< minimum bytes moved per call (GB/s; cold-mode rotation); empty: 0
  PointFigure device_bytes;   ///< device memory one instance allocates (checked before any run); empty: unchecked
  std::int64_t max_size = 0;  ///< largest size it takes (checked before any run); 0: the command line's limit
  /// Cold mode: instances made and used in turn (input rotation); 0: enough to span twice the L2
  /// from `bytes` (1 without bytes). crossbench.bench sets it to the number of callables given.
  int rotation = 0;
  /// Declared: the launch synchronizes with the device (nvbench's exec_tag::sync). Checked like
  /// any launch (timed without the blocking kernel where it does synchronize, behind it where it
  /// does not, saying so); bench --graph refuses it.
  bool sync = false;
};

/// Builder for a registered benchmark (register_benchmark, XB_BENCHMARK). Copies refer to the
/// same registry entry.
class Registration {
 public:
  explicit Registration(std::size_t index) : index_(index) {}
  Registration& dtypes(std::vector<std::string> names);
  Registration& sizes(std::vector<std::int64_t> sizes);
  Registration& flops(PointFigure f);
  Registration& bytes(PointFigure f);
  Registration& device_bytes(PointFigure f);
  Registration& max_size(std::int64_t n);
  /// Cold mode's instance count (BenchmarkDef::rotation); throws std::invalid_argument for n < 0.
  Registration& rotation(int n);
  /// Declares that the launch synchronizes with the device (BenchmarkDef::sync, nvbench's
  /// exec_tag::sync): recorded (events.json timing.sync_declared) and checked like any launch, so
  /// a declared and an undeclared registration of the same work are timed alike; --graph refuses
  /// a declared fixture before running it.
  Registration& sync(bool on = true);
  const BenchmarkDef& def() const;

 private:
  std::size_t index_;
};

/// Adds a benchmark to the process-wide registry. Throws std::invalid_argument for an empty or
/// already registered name, a name with '/' or ',' in it, or an empty factory.
Registration register_benchmark(const std::string& name, Factory make);

/// Every registered benchmark, in registration order.
const std::vector<BenchmarkDef>& registered_benchmarks();

/// The registered benchmark called `name`, or nullptr.
const BenchmarkDef* find_benchmark(const std::string& name);

/// Runs the registered benchmarks with `bench`'s command line (build/bench --help lists it):
/// records them, writes the run folder and validates it. Returns the exit code: 0 success, 1 a
/// fixture or the validation failed, 2 bad input (one line on stderr, nothing written).
int main(int argc, char** argv);

}  // namespace xb

#define XB_DETAIL_CONCAT2(a, b) a##b
#define XB_DETAIL_CONCAT(a, b) XB_DETAIL_CONCAT2(a, b)
/// Registers a benchmark at static-initialization time: XB_BENCHMARK(name, factory) followed by
/// optional builder calls (.dtypes(...).flops(...)...). `name` is a plain identifier.
#define XB_BENCHMARK(name, ...)                                                                       \
  static ::xb::Registration XB_DETAIL_CONCAT(xb_benchmark_registration_, __LINE__) [[maybe_unused]] = \
      ::xb::register_benchmark(#name, __VA_ARGS__)
