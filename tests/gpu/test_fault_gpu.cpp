// A fault ends the run cleanly (issue 36 item 5), on the GPU: a user's program against xb::main
// (fault_program.cu) runs three fixtures whose middle one writes to an illegal address, or spins
// forever on a flag nobody sets (the wait's deadline shortened to 3 s with XB_WAIT_DEADLINE_S).
// Either way: exit code 1 within a bounded time, exactly one line on stderr naming the fixture,
// the failure, the fixture not run and the run folder; the first fixture's files written and the
// folder validated (PASSED); no follow-on error ("malloc:", a destructor's "failed:") anywhere.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu_test.h"

namespace fs = std::filesystem;

namespace {

struct Ran {
  bool exited = false;  ///< ended by itself (not killed at the time limit)
  int code = -1;
  double seconds = 0;
  std::string out, err;
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs the fault program with `args` and `env` ("NAME=value"), stdout and stderr to files; kills
/// it after `limit_s` seconds.
Ran run_program(const std::vector<std::string>& args, const std::vector<std::string>& env, const fs::path& base,
                double limit_s) {
  const fs::path out = base / "stdout.txt", err = base / "stderr.txt";
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (std::freopen(out.c_str(), "w", stdout) == nullptr || std::freopen(err.c_str(), "w", stderr) == nullptr)
      _exit(126);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));  // the child's own copy
    std::string exe = XB_FAULT_PROGRAM;
    std::vector<std::string> copy = args;
    std::vector<char*> argv{exe.data()};
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  Ran r;
  int status = 0;
  for (;;) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      r.exited = WIFEXITED(status);
      r.code = r.exited ? WEXITSTATUS(status) : -1;
      break;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.out = read_all(out);
  r.err = read_all(err);
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

nlohmann::json fixture_of(const fs::path& dir, const std::string& name) {
  const nlohmann::json events = nlohmann::json::parse(std::ifstream(dir / "events.json"));
  for (const auto& f : events.at("fixtures"))
    if (f.at("name") == name) return f;
  return nullptr;
}

/// Runs ok, `middle`, last and checks what every ending by a device failure shares; returns the
/// one line naming the middle fixture.
std::string check_run(const std::string& middle, const std::vector<std::string>& env, double limit_s,
                      const std::string& tag) {
  const fs::path base = fs::temp_directory_path() / ("xb_fault_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(base);
  fs::create_directories(base);
  const fs::path dir = base / "run";
  const Ran r = run_program({"--op", "fault_ok," + middle + ",fault_last", "--size", "64", "--min-time", "0.1",
                             "--max-time", "0.3", "--active-steps", "5", "--out", dir.string()},
                            env, base, limit_s);
  const std::string all = "stdout:\n" + r.out + "\nstderr:\n" + r.err;
  EXPECT_TRUE(r.exited) << "still running after " << limit_s << " s (killed)\n" << all;
  EXPECT_EQ(r.code, 1) << all;
  // Exactly one line names the failed fixture; no follow-on error.
  std::string line;
  int naming = 0;
  for (const std::string& l : lines_of(r.err)) {
    if (l.find(middle + "/fp32/64") != std::string::npos) {
      ++naming;
      line = l;
    }
    EXPECT_EQ(l.find("malloc:"), std::string::npos) << l;
    EXPECT_EQ(l.find(" failed: "), std::string::npos) << "a follow-on error: " << l;
    EXPECT_EQ(l.find("error:"), std::string::npos) << l;
    EXPECT_EQ(l.find("fixture failed"), std::string::npos) << l;
  }
  EXPECT_EQ(naming, 1) << all;
  EXPECT_EQ(line.rfind("xb_fault_program: " + middle + "/fp32/64: ", 0), 0u) << line;
  EXPECT_NE(line.find("so 1 fixture did not run (fault_last/fp32/64); the 1 fixture before it is written to " +
                      dir.string() + " and validated; "),
            std::string::npos)
      << line;
  // The first fixture whole, the folder validated; the others recorded with their reasons.
  for (const char* f : {"events.json", "raw_session.json", "table.json", "table.txt", "trace_only.json", "full.json",
                        "validation.json", "summary.md"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << f << "\n" << all;
  }
  if (!fs::exists(dir / "events.json") || !fs::exists(dir / "validation.json")) return line;
  const nlohmann::json ok = fixture_of(dir, "fault_ok/fp32/64");
  EXPECT_TRUE(ok.is_object() && ok.contains("stats") && !ok.contains("error")) << ok.dump();
  const nlohmann::json last = fixture_of(dir, "fault_last/fp32/64");
  EXPECT_TRUE(last.is_object() && last.value("error", "").rfind("not run: ", 0) == 0) << last.dump();
  const nlohmann::json validation = nlohmann::json::parse(std::ifstream(dir / "validation.json"));
  EXPECT_TRUE(validation.value("passed", false)) << validation.value("verdict", "") << "\n" << all;
  EXPECT_NE(r.out.find("PASSED"), std::string::npos) << all;
  fs::remove_all(base);
  return line;
}

using xb::testing::GpuTest;

TEST_F(GpuTest, AFaultInTheMiddleFixtureEndsTheRunWithTheFirstWrittenAndValidated) {
  const std::string line = check_run("fault_oob", {}, 120, "oob");
  EXPECT_NE(line.find(": device fault: cudaErrorIllegalAddress: "), std::string::npos) << line;
  EXPECT_NE(line.find("; the CUDA context is lost, so "), std::string::npos) << line;
  EXPECT_NE(line.find("; find the fault with compute-sanitizer "), std::string::npos) << line;
}

TEST_F(GpuTest, AHungKernelEndsTheRunAfterTheDeadlineTheSameWay) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string line = check_run("fault_hang", {"XB_WAIT_DEADLINE_S=3"}, 120, "hang");
  EXPECT_NE(line.find(": a call did not finish within 3 s (a hung kernel?); the device stays busy with it, so "),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("; find where it hangs with cuda-gdb --args "), std::string::npos) << line;
  // Well within the test's own limit: the deadline, the first fixture (under a second of sampling),
  // start-up and the validation.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
}

}  // namespace
