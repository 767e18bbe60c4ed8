// What ends a run early: a device fault (a sticky CUDA error: the process's CUDA context is lost)
// or a call that never finished (a hung kernel) in one fixture. That fixture is recorded with its
// error, the fixtures after it are not run (nothing can run on the device any more), the ones
// before it are written to the run folder and validated, and one line says all of it
// (docs/bench.md "A fault or a hang"). Plain C++ (the CUDA error names come from the runtime's
// tables, no device needed); the fixtures (fixtures.cpp) and the run (bench_run_gpu.cpp) use it.
#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace xb {

/// How long the sampling device (make_cuda_sample_device) waits for the device before it takes
/// the call for hung, s: six times the blocking kernel's own 10-s timeout, and far above any
/// sample crossbench makes (an auto batch is about 0.5 ms of device time, a drift batch 0.5 s,
/// the longest --slow-fixture delay 1 s per call), so only a call that never finishes reaches
/// it, while a hung run still ends within about a minute.
constexpr double kWaitDeadlineS = 60;
/// The environment variable that sets another deadline, s (the GPU tests shorten it; a fixture
/// whose one sample holds more than a minute of device time needs it longer).
inline constexpr const char* kWaitDeadlineEnv = "XB_WAIT_DEADLINE_S";
/// The largest deadline XB_WAIT_DEADLINE_S may set, s (one day).
constexpr double kMaxWaitDeadlineS = 86400;

/// The deadline of the sampling device's waits, s: XB_WAIT_DEADLINE_S when set (a number of
/// seconds in (0, kMaxWaitDeadlineS]), else kWaitDeadlineS. Throws UsageError for another value.
double wait_deadline_s();

/// The device failure that ended a run, in one fixture.
struct DeviceFailure {
  std::string fixture;     ///< the fixture it happened in, e.g. "saxpy/fp32/4096"
  bool hang = false;       ///< a call did not finish within limit_s; else a device fault
  std::string error_name;  ///< fault: cudaGetErrorName, e.g. "cudaErrorIllegalAddress"
  std::string error_text;  ///< fault: cudaGetErrorString, e.g. "an illegal memory access was encountered"
  double limit_s = 0;      ///< hang: the deadline the wait gave up after, s
  /// The fixture's own error (events.json "error"): "device fault: <name>: <text>" or "a call did
  /// not finish within <N> s (a hung kernel?)".
  std::string what() const;
};

/// The device failure that `e`, thrown out of fixture `fixture`, means, or nullopt for an ordinary
/// failure: a DeviceHang (kernels/cuda_wait.h), a CudaError with a sticky code (is_sticky,
/// kernels/cuda_check.h), or any exception once this process's context is lost or its device hung
/// (cuda_context_lost, cuda_hung_s: a library's or Python's own error about a fault that one of
/// crossbench's checks noted).
std::optional<DeviceFailure> device_failure(const std::exception& e, const std::string& fixture);

/// The run's fixtures against its device failure: which fixtures started before it, which were
/// not run after it. Not thread-safe (the fixtures run one after the other).
class DeviceFailures {
 public:
  /// Fixture `name` is about to run: "" when it may, else why it may not ("not run: the CUDA
  /// context was lost in <fixture>" or "not run: the device hung in <fixture>"), and `name` is
  /// then counted as not run.
  std::string admit(const std::string& name);
  /// Records the run's failure (the first one counts; later ones are ignored).
  void record(DeviceFailure failure);
  /// The failure, once recorded.
  const std::optional<DeviceFailure>& failure() const { return failure_; }
  /// Fixtures not run because of it, in run order, each once.
  const std::vector<std::string>& not_run() const { return not_run_; }
  /// Fixtures started before the failing one (each once).
  std::size_t before() const { return before_; }
  /// The one line that reports the failure (docs/bench.md), for `program` (its name, e.g. "bench"),
  /// the run folder `dir` and the command line that ran (`command`, for compute-sanitizer or
  /// cuda-gdb). Throws std::logic_error when no failure is recorded.
  std::string line(const std::string& program, const std::string& dir, const std::string& command) const;

 private:
  std::vector<std::string> started_;
  std::optional<DeviceFailure> failure_;
  std::size_t before_ = 0;
  std::vector<std::string> not_run_;
};

/// Thrown by run_bench (bench/run/bench_run.h) once a device failure ended the run, after the
/// fixtures before it are written and validated. what() is DeviceFailures::line for the program
/// and command line of the run; the process's CUDA context cannot be used any more.
class RunEndedByDevice : public std::runtime_error {
 public:
  RunEndedByDevice(DeviceFailures failures, std::string dir, const std::string& program, const std::string& command)
      : std::runtime_error(failures.line(program, dir, command)),
        failures_(std::move(failures)),
        dir_(std::move(dir)) {}
  /// The same line for another program name and command (crossbench.bench: Python's).
  std::string line(const std::string& program, const std::string& command) const {
    return failures_.line(program, dir_, command);
  }
  /// A call did not finish (the device stays busy with it); else a device fault.
  bool hang() const { return failures_.failure() && failures_.failure()->hang; }

 private:
  DeviceFailures failures_;
  std::string dir_;
};

}  // namespace xb
