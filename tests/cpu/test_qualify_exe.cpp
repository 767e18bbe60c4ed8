// `bench qualify` through the real executable, without a GPU: the recorded H200 session
// (results/sessions/h200-small-2026-11-29) is replayed into a run folder, and `--from-run` gates it. Covers the
// exit codes (0 pass, 1 regression, 2 usage or input error with one line on stderr and nothing
// written, 3 inconclusive only), --update-baseline, the refusal of a baseline from another GPU and
// --allow-mismatch's warning in every report.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/qualify/qualify_files.h"
#include "profiler/model/session_io.h"
#include "tests/common/run_command.h"

namespace xb {
namespace {

namespace fs = std::filesystem;

const fs::path kSession = fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small-2026-11-29" / "raw_session.json";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

struct Result {
  int code = -1;
  std::string out, err;
};

/// One test folder with the replayed H200 session and suites over its fixtures.
class QualifyExe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("xb-qualify-exe-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    const auto [code, text] = testing::run_command(std::string(XB_BENCH_EXE) + " --replay " + kSession.string() +
                                                   " --out " + (root_ / "run").string());
    ASSERT_EQ(code, 0) << text;
    // matmul/bf16/64, matmul/bf16/256, addmm/bf16/64 converged; add/bf16/64 missed its noise target.
    write(root_ / "clean.json", suite({"matmul/bf16/64", "matmul/bf16/256", "addmm/bf16/64"}));
    write(root_ / "with-noisy.json", suite({"matmul/bf16/64", "add/bf16/64"}));
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static std::string suite(const std::vector<std::string>& names) {
    nlohmann::json fixtures = nlohmann::json::array();
    for (const std::string& n : names) {
      const auto a = n.find('/'), b = n.rfind('/');
      fixtures.push_back({{"op", n.substr(0, a)},
                          {"dtype", n.substr(a + 1, b - a - 1)},
                          {"size", std::stoi(n.substr(b + 1))},
                          {"mode", "hot"}});
    }
    return nlohmann::json{
        {"crossbench", {{"format", "suite"}, {"version", 1}}}, {"name", "h200-small"}, {"fixtures", fixtures}}
        .dump();
  }

  /// Runs `bench qualify ARGS --from-run <replayed run>` (unless `from_run` is false).
  static Result qualify(const std::string& args, bool from_run = true) {
    const fs::path out = root_ / "stdout.txt", err = root_ / "stderr.txt";
    const std::string cmd = "{ " + std::string(XB_BENCH_EXE) + " qualify " + args +
                            (from_run ? " --from-run " + (root_ / "run").string() : std::string()) + " >" +
                            out.string() + " 2>" + err.string() + "; }";
    Result r;
    r.code = testing::run_command(cmd).first;
    r.out = read(out);
    r.err = read(err);
    return r;
  }

  /// A baseline of the clean suite, written once by --update-baseline.
  static fs::path clean_baseline() {
    const fs::path b = root_ / "baselines" / "clean.json";
    if (!fs::exists(b)) {
      const Result r = qualify("--suite " + (root_ / "clean.json").string() + " --baseline " + b.string() +
                               " --update-baseline --out " + (root_ / "q-update").string());
      EXPECT_EQ(r.code, 0) << r.out << r.err;
    }
    return b;
  }

  static fs::path root_;
};

fs::path QualifyExe::root_;

void expect_one_line_error(const Result& r, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
  EXPECT_EQ(r.err.rfind("bench qualify: error: ", 0), 0u) << r.err;
  for (const std::string& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << n << " not in: " << r.err;
}

TEST_F(QualifyExe, UpdateThenCompareAgainstItselfPasses) {
  const fs::path b = clean_baseline();
  const Baseline base = read_baseline(b);
  EXPECT_EQ(base.environment.gpu_name, "NVIDIA H200");
  EXPECT_EQ(base.fixtures.size(), 3u);
  EXPECT_TRUE(fs::exists(root_ / "q-update" / "qualify.md"));

  const fs::path q = root_ / "q-pass";
  const Result r =
      qualify("--suite " + (root_ / "clean.json").string() + " --baseline " + b.string() + " --out " + q.string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("result: pass (exit 0)"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(read(q / "qualify.json"));
  EXPECT_EQ(j["result"], "pass");
  EXPECT_EQ(j["counts"]["unchanged"], 3);
  EXPECT_TRUE(j["runs"][0]["validation_passed"].get<bool>());
  EXPECT_TRUE(fs::exists(q / "qualify.xml"));
  EXPECT_FALSE(fs::exists(q / ".crossbench-claim"));
}

TEST_F(QualifyExe, NoisyFixtureIsInconclusiveExitThree) {
  const fs::path b = root_ / "baselines" / "noisy.json";
  Result r = qualify("--suite " + (root_ / "with-noisy.json").string() + " --baseline " + b.string() +
                     " --update-baseline --out " + (root_ / "q-noisy-update").string());
  EXPECT_EQ(r.code, 3) << r.out << r.err;  // written, but flagged
  EXPECT_TRUE(fs::exists(b));
  r = qualify("--suite " + (root_ / "with-noisy.json").string() + " --baseline " + b.string() + " --out " +
              (root_ / "q-noisy").string());
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("inconclusive add/bf16/64 (hot)"), std::string::npos) << r.out;
}

TEST_F(QualifyExe, SlowerBaselineSamplesGiveExactlyOneRegression) {
  // The baseline of matmul/bf16/256 made 20% faster: the run is then 25% slower on that fixture only.
  Baseline base = read_baseline(clean_baseline());
  for (FixtureRecord& f : base.fixtures) {
    if (f.name == "matmul/bf16/256") {
      for (double& x : f.samples_ns) x *= 0.8;
    }
  }
  std::ostringstream text;
  write_baseline_json(base, text);
  const fs::path b = root_ / "baselines" / "faster.json";
  write(b, text.str());
  const fs::path q = root_ / "q-regress";
  const Result r =
      qualify("--suite " + (root_ / "clean.json").string() + " --baseline " + b.string() + " --out " + q.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(read(q / "qualify.json"));
  EXPECT_EQ(j["counts"]["regression"], 1);
  for (const auto& f : j["fixtures"]) {
    EXPECT_EQ(f["verdict"], f["name"] == "matmul/bf16/256" ? "regression" : "unchanged") << f["name"];
    if (f["name"] == "matmul/bf16/256") {
      EXPECT_NEAR(f["delta_pct"].get<double>(), 25.0, 0.1);
    }
  }
  EXPECT_NE(read(q / "qualify.xml").find("type=\"regression\""), std::string::npos);
}

TEST_F(QualifyExe, BaselineFromAnotherGpuIsRefusedUnlessAllowed) {
  nlohmann::json j = nlohmann::json::parse(read(clean_baseline()));
  j["environment"]["gpu_name"] = "NVIDIA H100 80GB HBM3";
  const fs::path b = root_ / "baselines" / "h100.json";
  write(b, j.dump());
  const fs::path q = root_ / "q-refused";
  Result r =
      qualify("--suite " + (root_ / "clean.json").string() + " --baseline " + b.string() + " --out " + q.string());
  expect_one_line_error(
      r, {"GPU name 'NVIDIA H100 80GB HBM3' (baseline) vs 'NVIDIA H200' (this run)", b.string(), "--allow-mismatch"});
  EXPECT_FALSE(fs::exists(q)) << "a refused comparison writes nothing";

  const fs::path qa = root_ / "q-allowed";
  r = qualify("--suite " + (root_ / "clean.json").string() + " --baseline " + b.string() + " --allow-mismatch --out " +
              qa.string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("WARNING"), std::string::npos);
  EXPECT_NE(r.out.find("WARNING"), std::string::npos);
  EXPECT_NE(read(qa / "qualify.md").find("WARNING: baseline mismatch"), std::string::npos);
  EXPECT_NE(read(qa / "qualify.xml").find("name=\"WARNING\""), std::string::npos);
  const nlohmann::json rep = nlohmann::json::parse(read(qa / "qualify.json"));
  EXPECT_NE(rep["warning"].get<std::string>().find("NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_TRUE(rep["mismatch_allowed"].get<bool>());
}

TEST_F(QualifyExe, BadInputsExitTwoWithOneLine) {
  const fs::path b = clean_baseline();
  const std::string clean = (root_ / "clean.json").string();
  write(root_ / "not-json.json", "{\"crossbench\": {\"format\": \"suite\",\n");
  write(root_ / "bad-op.json", suite({"conv/bf16/64"}));
  nlohmann::json bad_base = nlohmann::json::parse(read(b));
  bad_base["fixtures"][0].erase("samples_ns");
  write(root_ / "bad-baseline.json", bad_base.dump());
  write(root_ / "bigger.json", suite({"matmul/bf16/64", "addmm_bias1d/bf16/256"}));
  const fs::path q = root_ / "q-bad";
  struct Case {
    std::string args;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {"--suite " + (root_ / "not-json.json").string() + " --baseline " + b.string(),
       {"not-json.json", "not valid JSON"}},
      {"--suite " + (root_ / "bad-op.json").string() + " --baseline " + b.string(),
       {"bad-op.json", "unknown op 'conv'"}},
      {"--suite " + (root_ / "missing.json").string() + " --baseline " + b.string(), {"missing.json", "cannot open"}},
      {"--suite " + clean + " --baseline " + (root_ / "bad-baseline.json").string(),
       {"bad-baseline.json", "missing key \"samples_ns\""}},
      {"--suite " + clean + " --baseline " + (root_ / "nope.json").string(), {"nope.json"}},
      {"--suite " + (root_ / "bigger.json").string() + " --baseline " + b.string(),
       {"no entry for suite fixture addmm_bias1d/bf16/256 (hot)", "--update-baseline"}},
      {"--suite " + clean + " --baseline " + b.string() + " --threshold 0", {"--threshold"}},
      {"--suite " + clean, {"--baseline"}},
      {"--suite " + clean + " --baseline " + b.string() + " --bogus", {"--bogus"}},
  };
  for (const Case& c : cases) {
    const Result r = qualify(c.args + " --out " + q.string());
    SCOPED_TRACE(c.args);
    expect_one_line_error(r, c.needles);
    EXPECT_FALSE(fs::exists(q));
  }
  // Usage errors that do not need the run folders.
  for (const Case& c : std::vector<Case>{
           {"--suite " + clean + " --baseline " + b.string() + " --slow-fixture matmul/bf16/64=5 --update-baseline",
            {"--slow-fixture", "--update-baseline"}},
           {"--suite " + clean + " --baseline " + b.string() + " --slow-fixture add/bf16/8192=5",
            {"add/bf16/8192", "suite"}},
       }) {
    SCOPED_TRACE(c.args);
    expect_one_line_error(qualify(c.args + " --out " + q.string(), false), c.needles);
  }
}

}  // namespace
}  // namespace xb
