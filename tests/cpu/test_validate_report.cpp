// Validator tests on hand-written run folders (validate_run_model.h): unusable input, the report
// files and the `validate` executable's exit codes.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "profiler/model/session_io.h"
#include "tests/cpu/validate_run_model.h"
#include "validate/validator.h"

namespace {

using namespace xb::test_model;  // NOLINT(google-build-using-namespace): the model's vocabulary

// ---------------------------------------------------------------------------------------------
// Unusable input

TEST_F(ValidateTest, MissingFileIsInputError) {
  write(build(default_model()));
  fs::remove(dir_ / "full.json");
  try {
    xb::validate_run_dir(dir_);
    FAIL() << "no InputError";
  } catch (const xb::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("full.json"), std::string::npos) << e.what();
  }
}

TEST_F(ValidateTest, NotJsonIsInputError) {
  write(build(default_model()));
  std::ofstream(dir_ / "events.json") << "{\"crossbench\": ";
  try {
    xb::validate_run_dir(dir_);
    FAIL() << "no InputError";
  } catch (const xb::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("events.json"), std::string::npos) << what;
    EXPECT_NE(what.find("not valid JSON"), std::string::npos) << what;
  }
}

TEST_F(ValidateTest, WrongShapeIsInputError) {
  Files f = build(default_model());
  event(f.full, "kernel", 102).erase("ts");
  write(f);
  try {
    xb::validate_run_dir(dir_);
    FAIL() << "no InputError";
  } catch (const xb::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("full.json: traceEvents["), std::string::npos) << what;
    EXPECT_NE(what.find("\"ts\""), std::string::npos) << what;
  }
}

TEST_F(ValidateTest, SwappedFilesAreInputError) {
  Files f = build(default_model());
  std::swap(f.full, f.trace_only);
  write(f);
  EXPECT_THROW(xb::validate_run_dir(dir_), xb::InputError);
  EXPECT_THROW(xb::validate_run_dir(dir_ / "no_such_dir"), xb::InputError);
}

// ---------------------------------------------------------------------------------------------
// Report output

TEST(CheckStatusTest, NamesRoundTrip) {
  for (auto s : {xb::CheckStatus::Passed, xb::CheckStatus::Failed, xb::CheckStatus::NotRun, xb::CheckStatus::NotClaimed,
                 xb::CheckStatus::NotJudged})
    EXPECT_EQ(xb::check_status_from_string(xb::to_string(s)), s);
  EXPECT_STREQ(xb::to_string(xb::CheckStatus::NotRun), "not_run");
  // "noisy" names a fixture that missed its precision target; reports before 2026-12-05 used it
  // for event_vs_cupti's unclaimed results, and still read as such.
  EXPECT_STREQ(xb::to_string(xb::CheckStatus::NotClaimed), "not_claimed");
  EXPECT_EQ(xb::check_status_from_string("noisy"), xb::CheckStatus::NotClaimed);
  EXPECT_THROW(xb::check_status_from_string("ok"), std::invalid_argument);
}

TEST_F(ValidateTest, ReportJsonFollowsTheFormat) {
  Model m = default_model();
  m.fixtures[1].verified = false;
  const auto r = validate(build(m));
  const fs::path written = xb::write_report_json(r, dir_);
  EXPECT_EQ(written, dir_ / "validation.json");
  std::ifstream in(written);
  const json doc = json::parse(in);
  EXPECT_EQ(doc["crossbench"]["format"], "validation");
  EXPECT_EQ(doc["crossbench"]["version"], 1);
  EXPECT_EQ(doc["crossbench"]["dropped_records"], 0);
  EXPECT_EQ(doc["passed"], false);
  EXPECT_EQ(doc["run_dir"], dir_.string());
  EXPECT_TRUE(doc["tolerances"]["event_vs_cupti"].is_string());
  EXPECT_EQ(doc["summary"]["failed"], 1);
  // + the failure + model_vs_counters not run (no counter pass)
  EXPECT_EQ(doc["summary"]["passed"].get<std::size_t>() + 2, doc["checks"].size());
  EXPECT_EQ(doc["summary"]["not_run"], 1);
  bool found = false;
  for (const auto& c : doc["checks"]) {
    for (const char* k : {"check", "status", "subject", "expected", "found", "message"})
      EXPECT_TRUE(c.contains(k)) << k;
    if (c["status"] == "failed") {
      EXPECT_EQ(c["check"], "verified");
      EXPECT_EQ(c["subject"], "add/bf16/64");
      EXPECT_EQ(c["expected"], "verified: true");
      found = true;
    }
  }
  EXPECT_TRUE(found);

  const fs::path other = dir_ / "elsewhere.json";
  EXPECT_EQ(xb::write_report_json(r, other), other);
  EXPECT_TRUE(fs::exists(other));
}

TEST_F(ValidateTest, SummaryNamesFailedChecks) {
  Model m = default_model();
  m.dropped = 3;
  const std::string s = dump_report(validate(build(m)));
  // The verdict first, then the failures grouped by cause (here: by check), then the counts.
  EXPECT_EQ(s.rfind("FAILED: ", 0), 0u) << s;
  EXPECT_NE(s.find("\n- the profiler dropped records: "), std::string::npos) << s;
  EXPECT_NE(s.find("[no_dropped_records]\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\n  - table.json: expected crossbench.dropped_records = 0, found 3\n"), std::string::npos) << s;
  EXPECT_NE(s.find("results: "), std::string::npos) << s;
  EXPECT_NE(s.find(" failed"), std::string::npos) << s;
}

// ---------------------------------------------------------------------------------------------
// The executable

#ifdef XB_VALIDATE_EXE
int run_exe(const std::string& args, const fs::path& out_dir) {
  const std::string cmd = std::string("\"") + XB_VALIDATE_EXE + "\" " + args + " > \"" +
                          (out_dir / "stdout.txt").string() + "\" 2> \"" + (out_dir / "stderr.txt").string() + "\"";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(ValidateTest, ExecutableExitCodes) {
  const fs::path logs = dir_ / "logs";
  fs::create_directories(logs);
  const fs::path run = dir_ / "run";
  fs::create_directories(run);
  auto put = [&](const Files& f) {
    std::ofstream(run / "table.json") << f.table.dump();
    std::ofstream(run / "trace_only.json") << f.trace_only.dump();
    std::ofstream(run / "full.json") << f.full.dump();
    std::ofstream(run / "events.json") << f.events.dump();
  };

  put(build(default_model()));
  EXPECT_EQ(run_exe("\"" + run.string() + "\"", logs), 0) << slurp(logs / "stdout.txt") << slurp(logs / "stderr.txt");
  EXPECT_TRUE(fs::exists(run / "validation.json"));

  Model m = default_model();
  m.fixtures[0].verified = false;
  put(build(m));
  const fs::path report = dir_ / "custom.json";
  EXPECT_EQ(run_exe("\"" + run.string() + "\" --report \"" + report.string() + "\"", logs), 1);
  EXPECT_TRUE(fs::exists(report));
  EXPECT_EQ(slurp(logs / "stdout.txt").rfind("FAILED: 1 finding: results did not match the host reference", 0), 0u)
      << slurp(logs / "stdout.txt");
  EXPECT_NE(slurp(logs / "stdout.txt").find("[verified]"), std::string::npos) << slurp(logs / "stdout.txt");

  // A destination that cannot be written: exit 2 before anything is written, so the run folder's
  // validation.json stays as it was (not rewritten by a command that then fails).
  const std::string before = slurp(run / "validation.json");
  std::ofstream(run / "validation.json") << "{\"earlier\": true}\n";
  EXPECT_EQ(
      run_exe("\"" + run.string() + "\" --markdown \"" + (dir_ / "no-such-folder" / "x.md").string() + "\"", logs), 2);
  EXPECT_EQ(slurp(run / "validation.json"), "{\"earlier\": true}\n") << "rewritten by a failed command";
  EXPECT_EQ(slurp(logs / "stdout.txt"), "") << "no verdict printed before the usage error";
  EXPECT_NE(slurp(logs / "stderr.txt").find("cannot write"), std::string::npos) << slurp(logs / "stderr.txt");
  EXPECT_EQ(
      run_exe("\"" + run.string() + "\" --report \"" + (dir_ / "no-such-folder" / "r.json").string() + "\"", logs), 2);
  EXPECT_EQ(slurp(run / "validation.json"), "{\"earlier\": true}\n");
  EXPECT_EQ(run_exe("\"" + run.string() + "\" --markdown \"" + run.string() + "\"", logs), 2)
      << "a folder as --markdown";
  EXPECT_NE(slurp(logs / "stderr.txt").find("is a folder"), std::string::npos) << slurp(logs / "stderr.txt");
  // The run folder's validation.json cannot be written (here: a folder of that name; a read-only
  // run folder is the real case, which root's tests cannot make): exit 2 before validating,
  // saying where else to write it.
  fs::remove(run / "validation.json");
  fs::create_directories(run / "validation.json");
  EXPECT_EQ(run_exe("\"" + run.string() + "\"", logs), 2);
  EXPECT_EQ(slurp(logs / "stdout.txt"), "");
  EXPECT_NE(slurp(logs / "stderr.txt").find("it is a folder (--report FILE writes it elsewhere)"), std::string::npos)
      << slurp(logs / "stderr.txt");
  fs::remove_all(run / "validation.json");
  std::ofstream(run / "validation.json") << before;

  fs::remove(run / "events.json");
  EXPECT_EQ(run_exe("\"" + run.string() + "\"", logs), 2);
  const std::string err = slurp(logs / "stderr.txt");
  EXPECT_EQ(err.rfind("validate: error: ", 0), 0u) << err;
  EXPECT_NE(err.find("events.json"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

  EXPECT_EQ(run_exe("", logs), 2);                                  // RUN_DIR missing
  EXPECT_EQ(run_exe("\"" + run.string() + "\" --bogus", logs), 2);  // unknown option
  EXPECT_EQ(run_exe("--help", logs), 0);
}
#endif

}  // namespace
