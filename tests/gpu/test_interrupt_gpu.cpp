// Interrupted runs (issue 8): bench gets SIGINT or SIGTERM at 20 random points of a small run;
// every file it leaves parses as JSON, every fixture Google Benchmark reported as finished is in
// events.json with its statistics, and the exit code is 0 (finished first) or 128 + signal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "gpu_test.h"

namespace fs = std::filesystem;

namespace {

struct Child {
  int status = 0;
  std::string out;
};

/// Runs bench with stdout and stderr to a file, sends `sig` after `delay`, waits.
Child run_and_signal(const std::vector<std::string>& args, std::chrono::milliseconds delay, int sig,
                     const fs::path& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::freopen(log.c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), 2);  // stderr into the same log: the test reads bench's error lines
    std::vector<char*> argv;
    std::string exe = XB_BENCH_EXE;
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  std::this_thread::sleep_for(delay);
  kill(pid, sig);
  Child c;
  waitpid(pid, &c.status, 0);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  c.out = ss.str();
  return c;
}

using xb::testing::GpuTest;

TEST_F(GpuTest, InterruptedRunsKeepEveryCompletedFixtureAndValidFiles) {
  std::mt19937 rng(20261129);
  std::uniform_int_distribution<int> delay_ms(50, 6000);
  const fs::path base = fs::temp_directory_path() / ("xb_interrupt_" + std::to_string(getpid()));
  fs::create_directories(base);
  const std::vector<std::string> fixtures{"add/bf16/64", "add/bf16/256", "matmul/bf16/64", "matmul/bf16/256"};
  for (int trial = 0; trial < 20; ++trial) {
    const int sig = trial % 2 == 0 ? SIGINT : SIGTERM;
    const int ms = delay_ms(rng);
    const fs::path out = base / ("run" + std::to_string(trial));
    const Child c = run_and_signal(
        {"--size", "64,256", "--op", "add,matmul", "--min-time", "0.2", "--max-time", "0.5", "--out", out.string()},
        std::chrono::milliseconds(ms), sig, base / ("log" + std::to_string(trial)));
    SCOPED_TRACE("trial " + std::to_string(trial) + ": signal " + std::to_string(sig) + " after " + std::to_string(ms) +
                 " ms");
    // Killed before the handlers were installed (start-up): the default action, nothing half-written.
    if (WIFSIGNALED(c.status)) {
      EXPECT_EQ(WTERMSIG(c.status), sig);
      if (fs::exists(out)) {
        for (const auto& e : fs::directory_iterator(out)) {
          EXPECT_TRUE(e.path().filename().string().rfind('.', 0) == 0 || e.path().extension() != ".json")
              << "a finished-looking file in a run killed at start-up: " << e.path();
        }
      }
      continue;
    }
    ASSERT_TRUE(WIFEXITED(c.status));
    const int code = WEXITSTATUS(c.status);
    EXPECT_TRUE(code == 0 || code == 1 || code == 128 + sig) << "exit code " << code << "\n" << c.out;
    if (!fs::exists(out / "events.json")) continue;  // stopped before the run folder was written
    for (const char* f :
         {"events.json", "raw_session.json", "table.json", "trace_only.json", "full.json", "validation.json"}) {
      std::ifstream in(out / f);
      ASSERT_TRUE(in) << f;
      nlohmann::json doc;
      EXPECT_NO_THROW(doc = nlohmann::json::parse(in)) << f;
      EXPECT_TRUE(doc.is_object()) << f;
    }
    // The run ended through its own path, not an error: summary.md is written last (a fixture
    // abandoned before its first sample once made the summary throw: "statistics of an empty
    // sample set", exit 1, no summary.md; seen on the H200).
    EXPECT_TRUE(fs::exists(out / "summary.md"));
    EXPECT_EQ(c.out.find("bench: error:"), std::string::npos) << c.out;
    const auto events = nlohmann::json::parse(std::ifstream(out / "events.json"));
    std::set<std::string> with_stats;
    for (const auto& f : events["fixtures"]) {
      if (f.contains("stats") && !f.contains("error")) with_stats.insert(f["name"].get<std::string>());
    }
    // Google Benchmark prints a fixture's line when it finishes: each such fixture has its result.
    // A fixture skipped or abandoned because of the signal prints "ERROR OCCURRED" instead.
    std::istringstream lines(c.out);
    for (std::string line; std::getline(lines, line);) {
      for (const std::string& name : fixtures) {
        if (line.rfind(name + "/iterations:1/manual_time ", 0) != 0) continue;
        if (line.find("ERROR OCCURRED") != std::string::npos) {
          EXPECT_EQ(with_stats.count(name), 0u) << name << " reported as not run, yet has a result";
        } else {
          EXPECT_TRUE(with_stats.count(name)) << name << " finished but has no result in events.json";
        }
      }
    }
  }
  fs::remove_all(base);
}

}  // namespace
