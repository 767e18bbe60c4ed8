// A device fault or hung call ends the run cleanly (issue 36 item 5), without a GPU: which CUDA
// errors lose the context (is_sticky), the process-wide note that quiets the no-throw checks,
// what a fixture's exception means (device_failure), the bookkeeping of the fixtures before and
// after it, the one line, the deadline's setting, and, through the sampling core with a fake
// device that faults or hangs in the second of three fixtures, that the first fixture's run folder
// is written whole and validates while the third is recorded as not run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "../common/fake_activity_source.h"
#include "bench/core/device_failure.h"
#include "bench/core/fixture_records.h"
#include "bench/core/measure.h"
#include "bench/core/run_dir.h"
#include "common/errors.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_wait.h"

namespace xb {
namespace {

namespace fs = std::filesystem;
using test::FakeSource;

/// Forgets the process-wide note of a lost context or hung device (kernels/cuda_check.h) when a
/// test starts and ends, so that no test sees another's.
struct ForgetCudaLoss {
  ForgetCudaLoss() { clear(); }
  ~ForgetCudaLoss() { clear(); }
  static void clear() {
    detail::g_cuda_loss.sticky.store(cudaSuccess);
    detail::g_cuda_loss.hung_s.store(0);
  }
};

TEST(DeviceFailure, StickyErrorsAreTheOnesThatLoseTheContext) {
  for (cudaError_t e :
       {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorIllegalInstruction, cudaErrorMisalignedAddress,
        cudaErrorHardwareStackError, cudaErrorAssert, cudaErrorECCUncorrectable, cudaErrorInvalidPc,
        cudaErrorInvalidAddressSpace, cudaErrorLaunchTimeout, cudaErrorContained, cudaErrorTensorMemoryLeak,
        cudaErrorExternalDevice}) {
    EXPECT_TRUE(is_sticky(e)) << cudaGetErrorName(e);
  }
  for (cudaError_t e : {cudaSuccess, cudaErrorNotReady, cudaErrorMemoryAllocation, cudaErrorInvalidValue,
                        cudaErrorLaunchOutOfResources, cudaErrorNoDevice, cudaErrorInvalidConfiguration}) {
    EXPECT_FALSE(is_sticky(e)) << cudaGetErrorName(e);
  }
}

TEST(DeviceFailure, XbCudaCarriesTheCodeAndNotesAStickyOne) {
  const ForgetCudaLoss forget;
  try {
    XB_CUDA(cudaErrorInvalidValue);
    FAIL() << "no throw";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), cudaErrorInvalidValue);
    EXPECT_NE(std::string(e.what()).find("cudaErrorInvalidValue"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cuda_context_lost(), cudaSuccess);
  EXPECT_FALSE(cuda_unusable());
  try {
    XB_CUDA(cudaErrorIllegalAddress);
    FAIL() << "no throw";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), cudaErrorIllegalAddress);
  }
  EXPECT_EQ(cuda_context_lost(), cudaErrorIllegalAddress);
  EXPECT_TRUE(cuda_unusable());
  note_cuda_status(cudaErrorLaunchFailure);  // the first sticky error is the one kept
  EXPECT_EQ(cuda_context_lost(), cudaErrorIllegalAddress);
  EXPECT_EQ(CudaError("a check of our own").code(), cudaSuccess);
}

TEST(DeviceFailure, NoThrowChecksStayQuietOnceTheContextIsLost) {
  const ForgetCudaLoss forget;
  ::testing::internal::CaptureStderr();
  XB_CUDA_NOTHROW(cudaErrorInvalidValue);  // an ordinary failure is still printed
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("cudaErrorInvalidValue"), std::string::npos);
  ::testing::internal::CaptureStderr();
  XB_CUDA_NOTHROW(cudaErrorIllegalAddress);  // the fault itself: noted, left to the fixture's report
  XB_CUDA_NOTHROW(cudaErrorInvalidValue);    // a follow-on error of a destructor
  XB_CUBLAS_NOTHROW(CUBLAS_STATUS_EXECUTION_FAILED);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(cuda_context_lost(), cudaErrorIllegalAddress);
}

TEST(DeviceFailure, ClassifiesWhatAFixtureThrew) {
  const ForgetCudaLoss forget;
  const std::optional<DeviceFailure> fault =
      device_failure(CudaError("x.cpp:1: cudaEventQuery(event) failed", cudaErrorIllegalAddress), "k/fp32/64");
  ASSERT_TRUE(fault);
  EXPECT_FALSE(fault->hang);
  EXPECT_EQ(fault->fixture, "k/fp32/64");
  EXPECT_EQ(fault->error_name, "cudaErrorIllegalAddress");
  EXPECT_EQ(fault->what(),
            std::string("device fault: cudaErrorIllegalAddress: ") + cudaGetErrorString(cudaErrorIllegalAddress));
  const std::optional<DeviceFailure> hang = device_failure(DeviceHang("the event did not complete", 2.5), "k");
  ASSERT_TRUE(hang);
  EXPECT_TRUE(hang->hang);
  EXPECT_EQ(hang->what(), "a call did not finish within 2.5 s (a hung kernel?)");
  // Ordinary failures are the fixture's own.
  EXPECT_FALSE(device_failure(CudaError("out of memory", cudaErrorMemoryAllocation), "k"));
  EXPECT_FALSE(device_failure(std::runtime_error("the callable raised ValueError"), "k"));
  // Once a check noted a fault (a library's or Python's own exception, the fault found by a query),
  // any exception is the fault; a hang, noted, likewise.
  note_cuda_status(cudaErrorLaunchFailure);
  const std::optional<DeviceFailure> noted = device_failure(std::runtime_error("CUBLAS_STATUS_EXECUTION_FAILED"), "k");
  ASSERT_TRUE(noted);
  EXPECT_EQ(noted->error_name, "cudaErrorLaunchFailure");
  ForgetCudaLoss::clear();
  note_cuda_hang(60);
  const std::optional<DeviceFailure> hung = device_failure(std::runtime_error("anything"), "k");
  ASSERT_TRUE(hung);
  EXPECT_TRUE(hung->hang);
  EXPECT_EQ(hung->limit_s, 60);
}

DeviceFailure fault_in(const std::string& fixture) {
  DeviceFailure f;
  f.fixture = fixture;
  f.error_name = "cudaErrorIllegalAddress";
  f.error_text = "an illegal memory access was encountered";
  return f;
}

TEST(DeviceFailure, FixturesAfterTheFailureAreNotRunAndTheLineSaysSo) {
  DeviceFailures d;
  EXPECT_EQ(d.admit("a/fp32/64"), "");
  EXPECT_EQ(d.admit("b/fp32/64"), "");
  EXPECT_EQ(d.admit("c/fp32/64"), "");
  d.record(fault_in("c/fp32/64"));
  d.record(fault_in("a/fp32/64"));  // the first failure counts
  EXPECT_EQ(d.admit("d/fp32/64"), "not run: the CUDA context was lost in c/fp32/64");
  EXPECT_EQ(d.admit("e/fp32/64"), "not run: the CUDA context was lost in c/fp32/64");
  EXPECT_EQ(d.admit("d/fp32/64"), "not run: the CUDA context was lost in c/fp32/64");  // a repetition: once
  EXPECT_EQ(d.before(), 2u);
  EXPECT_EQ(d.not_run(), (std::vector<std::string>{"d/fp32/64", "e/fp32/64"}));
  EXPECT_EQ(d.line("bench", "results/runs/x", "build/bench --op a,b,c,d,e --size 64"),
            "bench: c/fp32/64: device fault: cudaErrorIllegalAddress: an illegal memory access was encountered; "
            "the CUDA context is lost, so 2 fixtures did not run (d/fp32/64, e/fp32/64); the 2 fixtures before it "
            "are written to results/runs/x and validated; find the fault with compute-sanitizer build/bench --op "
            "a,b,c,d,e --size 64");
}

TEST(DeviceFailure, TheLineOfAHangAndOfAFailureWithNothingAround) {
  DeviceFailures d;
  EXPECT_EQ(d.admit("a"), "");
  EXPECT_EQ(d.admit("b"), "");
  DeviceFailure h;
  h.fixture = "b";
  h.hang = true;
  h.limit_s = 60;
  d.record(h);
  EXPECT_EQ(d.admit("c"), "not run: the device hung in b");
  EXPECT_EQ(d.line("saxpy", "out", "./saxpy --size 4096"),
            "saxpy: b: a call did not finish within 60 s (a hung kernel?); the device stays busy with it, so 1 "
            "fixture did not run (c); the 1 fixture before it is written to out and validated; find where it hangs "
            "with cuda-gdb --args ./saxpy --size 4096, or set XB_WAIT_DEADLINE_S above 60 if the call only takes "
            "long");
  DeviceFailures alone;
  EXPECT_EQ(alone.admit("only"), "");
  alone.record(fault_in("only"));
  EXPECT_EQ(alone.line("bench", "dir", ""),
            "bench: only: device fault: cudaErrorIllegalAddress: an illegal memory access was encountered; the CUDA "
            "context is lost, so 0 fixtures did not run (none); the 0 fixtures before it are written to dir and "
            "validated; find the fault with compute-sanitizer bench");
  EXPECT_THROW(DeviceFailures().line("bench", "dir", ""), std::logic_error);
  const RunEndedByDevice ended(alone, "dir", "bench", "bench --op only");
  EXPECT_EQ(std::string(ended.what()).rfind("bench: only: device fault: ", 0), 0u);
  EXPECT_EQ(ended.line("crossbench", "python3 t.py").rfind("crossbench: only: ", 0), 0u);
  EXPECT_NE(ended.line("crossbench", "python3 t.py").find("compute-sanitizer python3 t.py"), std::string::npos);
  EXPECT_FALSE(ended.hang());
}

TEST(DeviceFailure, NotRunNamesAreCappedInTheLine) {
  DeviceFailures d;
  d.admit("k");
  d.record(fault_in("k"));
  for (int i = 0; i < 13; ++i) d.admit("f" + std::to_string(i));
  const std::string line = d.line("bench", "dir", "bench");
  EXPECT_NE(line.find("so 13 fixtures did not run (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 and 3 more)"),
            std::string::npos)
      << line;
}

/// Sets an environment variable for one scope.
struct Env {
  std::string name;
  Env(const char* n, const char* value) : name(n) {
    if (value == nullptr) {
      unsetenv(n);
    } else {
      setenv(n, value, 1);
    }
  }
  ~Env() { unsetenv(name.c_str()); }
};

TEST(DeviceFailure, TheDeadlineIsSixtySecondsOrTheEnvironmentsNumber) {
  {
    const Env unset(kWaitDeadlineEnv, nullptr);
    EXPECT_EQ(wait_deadline_s(), 60);
  }
  {
    const Env empty(kWaitDeadlineEnv, "");
    EXPECT_EQ(wait_deadline_s(), 60);
  }
  {
    const Env set(kWaitDeadlineEnv, "2.5");
    EXPECT_EQ(wait_deadline_s(), 2.5);
  }
  for (const char* bad : {"0", "-1", "abc", "2s", "nan", "inf", "1e9"}) {
    const Env set(kWaitDeadlineEnv, bad);
    try {
      wait_deadline_s();
      ADD_FAILURE() << bad << " accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("XB_WAIT_DEADLINE_S=") + bad + ": not a number of seconds in (0, 86400]");
    }
  }
}

/// A device whose samples take `interval_ns` per call, in step with the fake source's kernels;
/// `fault_at` > 0: the sample of that number (1, 2, ...) throws from release_and_wait_ns what
/// `failure` throws, as the CUDA device does when the stop event's wait finds a fault or runs past
/// its deadline.
class FaultingDevice : public SampleDevice {
 public:
  FakeSource* src = nullptr;
  int calls = 0, samples = 0, fault_at = 0, abandons = 0;
  std::function<void()> failure;
  std::function<void()> on_synchronize;
  bool blocking() const override { return false; }
  void hold() override {}
  void flush_l2() override {}
  void record_start() override { calls = 0; }
  void record_stop() override {}
  void delay(std::int64_t) override {}
  std::int64_t release_and_wait_ns() override {
    src->clock += 1000;  // time goes on: the next sample's kernels after this one's
    if (++samples == fault_at) failure();
    return 300 * calls;  // CUPTI sees 50 ns per call: well within the 500-ns tolerance
  }
  void release() noexcept override {}
  void synchronize() override {
    if (on_synchronize) on_synchronize();
  }
  void abandon() noexcept override { ++abandons; }
};

/// One fixture as run_fixture (bench/core/fixtures_gpu.cpp) runs it: admitted, measured, its block
/// added; a device failure recorded, any other failure the fixture's own.
void run_one(const std::string& name, Profiler& prof, FaultingDevice& dev, FakeSource& src, DeviceFailures& failures,
             std::vector<std::string>& errors) {
  FixtureInfo info;
  info.name = name;
  info.op = name.substr(0, name.find('/'));
  info.dtype = "fp32";
  info.size = 64;
  if (const std::string why = failures.admit(name); !why.empty()) {
    info.error = why;  // as run_fixture: nothing made, so whether it has a reference is not known
    prof.add_fixture(fixture_block(info));
    return;
  }
  info.has_reference = false;
  MeasureConfig cfg;
  double now = 0;
  cfg.now = [&now] { return now += 0.001; };
  cfg.batch = 1;
  cfg.schedule = Schedule{0, 0, 5};
  cfg.stopping.min_samples = 5;
  cfg.stopping.min_time_s = 0;
  cfg.stopping.max_time_s = 1;
  const auto launch = [&] {
    src.launch("k_" + info.op);
    ++dev.calls;
  };
  try {
    const Measurement m = measure({launch}, prof, dev, name, "xb::" + info.op, cfg);
    info.timing = m.timing;
  } catch (const std::exception& e) {
    const std::optional<DeviceFailure> lost = device_failure(e, name);
    if (!lost) {
      info.error = e.what();
      errors.push_back(name + ": " + e.what());
    } else {
      info.error = lost->what();
      failures.record(*lost);
    }
  }
  prof.add_fixture(fixture_block(info));
}

struct RunResult {
  std::string line;
  std::vector<std::string> errors;
  fs::path dir;
  int validation = -1;
  std::string report;
};

/// Three fixtures a, b, c; `arm` makes the device fail in b.
RunResult run_three(const std::string& tag, const std::function<void(FaultingDevice&)>& arm) {
  auto owned = std::make_unique<FakeSource>();
  FakeSource* src = owned.get();
  Profiler prof(std::move(owned));
  prof.start();
  DeviceFailures failures;
  RunResult r;
  for (const char* name : {"a/fp32/64", "b/fp32/64", "c/fp32/64"}) {
    FaultingDevice dev;
    dev.src = src;
    if (std::string(name) == "b/fp32/64") arm(dev);
    run_one(name, prof, dev, *src, failures, r.errors);
  }
  const RawSession raw = prof.stop();
  r.dir = fs::temp_directory_path() / ("xb_device_failure_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(r.dir);
  fs::create_directories(r.dir);
  write_run_outputs(raw, r.dir);
  std::ostringstream report;
  r.validation = validate_and_report(r.dir, report);
  r.report = report.str();
  if (failures.failure()) r.line = failures.line("bench", r.dir.string(), "bench --op a,b,c");
  return r;
}

nlohmann::json fixture_of(const fs::path& dir, const std::string& name) {
  const nlohmann::json events = nlohmann::json::parse(std::ifstream(dir / "events.json"));
  for (const auto& f : events.at("fixtures"))
    if (f.at("name") == name) return f;
  return nullptr;
}

TEST(DeviceFailure, AFaultInTheSecondFixtureKeepsTheFirstWrittenAndValidatedAndSkipsTheThird) {
  const ForgetCudaLoss forget;
  const RunResult r = run_three("fault", [](FaultingDevice& dev) {
    dev.fault_at = 3;
    dev.failure = [] { XB_CUDA(cudaErrorIllegalAddress); };  // as wait_event throws it
  });
  EXPECT_TRUE(r.errors.empty());  // nothing blamed on another fixture
  EXPECT_EQ(r.line.rfind("bench: b/fp32/64: device fault: cudaErrorIllegalAddress: ", 0), 0u) << r.line;
  EXPECT_NE(r.line.find("so 1 fixture did not run (c/fp32/64); the 1 fixture before it is written to"),
            std::string::npos)
      << r.line;
  // The first fixture whole: its samples, its recorded steps in every file, and the validation.
  const nlohmann::json a = fixture_of(r.dir, "a/fp32/64");
  ASSERT_TRUE(a.is_object());
  EXPECT_FALSE(a.contains("error"));
  EXPECT_TRUE(a.contains("stats"));
  for (const char* f : {"raw_session.json", "events.json", "table.json", "table.txt", "trace_only.json", "full.json",
                        "validation.json", "summary.md"}) {
    EXPECT_TRUE(fs::exists(r.dir / f)) << f;
  }
  EXPECT_NE(std::ifstream(r.dir / "table.txt").peek(), EOF);
  EXPECT_EQ(r.validation, 0) << r.report;
  const nlohmann::json b = fixture_of(r.dir, "b/fp32/64");
  ASSERT_TRUE(b.is_object());
  EXPECT_EQ(b.value("error", ""),
            std::string("device fault: cudaErrorIllegalAddress: ") + cudaGetErrorString(cudaErrorIllegalAddress));
  const nlohmann::json c = fixture_of(r.dir, "c/fp32/64");
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c.value("error", ""), "not run: the CUDA context was lost in b/fp32/64");
  fs::remove_all(r.dir);
}

TEST(DeviceFailure, AHangInTheSetupCallEndsTheRunTheSameWay) {
  const ForgetCudaLoss forget;
  const RunResult r = run_three("hang", [](FaultingDevice& dev) {
    // The setup call's synchronize runs past its deadline (cuda_wait.h throws DeviceHang there).
    dev.on_synchronize = [] {
      note_cuda_hang(2);
      throw DeviceHang("the work queued on the stream did not complete within 2 s", 2);
    };
  });
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.line.rfind("bench: b/fp32/64: a call did not finish within 2 s (a hung kernel?); the device stays busy "
                         "with it, so 1 fixture did not run (c/fp32/64); the 1 fixture before it is written to ",
                         0),
            0u)
      << r.line;
  EXPECT_EQ(r.validation, 0) << r.report;
  EXPECT_EQ(fixture_of(r.dir, "c/fp32/64").value("error", ""), "not run: the device hung in b/fp32/64");
  EXPECT_TRUE(fixture_of(r.dir, "a/fp32/64").contains("stats"));
  fs::remove_all(r.dir);
}

TEST(DeviceFailure, AnOrdinaryFailureIsTheFixturesOwnAndTheRunGoesOn) {
  const ForgetCudaLoss forget;
  const RunResult r = run_three("ordinary", [](FaultingDevice& dev) {
    dev.fault_at = 2;
    dev.failure = [] { throw std::runtime_error("non-positive cudaEvent interval (0 ns)"); };
  });
  EXPECT_EQ(r.line, "");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], "b/fp32/64: non-positive cudaEvent interval (0 ns)");
  EXPECT_TRUE(fixture_of(r.dir, "c/fp32/64").contains("stats"));
  fs::remove_all(r.dir);
}

TEST(DeviceFailure, WaitsRefuseANonPositiveDeadline) {
  EXPECT_THROW(wait_stream(nullptr, 0), std::invalid_argument);
  EXPECT_THROW(wait_event(nullptr, -1), std::invalid_argument);
}

}  // namespace
}  // namespace xb
