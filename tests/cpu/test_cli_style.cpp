// One command-line style (common/cli_style.h) across bench, its subcommands and validate, through
// the executables: --help and --version answered the same way by every command, usage lines that
// list every flag, "did you mean" for a mistyped flag; validate on a folder that is not a run
// folder; a run folder's validation.json never replaced silently. No GPU needed.
#include <gtest/gtest.h>

#include "common/cli_style.h"

#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../common/run_command.h"

namespace xb {
namespace {

namespace fs = std::filesystem;
using testing::run_command;

struct Command {
  std::string argv;    ///< the executable and subcommand
  std::string header;  ///< the help's first line starts with this
};

std::vector<Command> commands() {
  const std::string bench = XB_BENCH_EXE;
  std::vector<Command> list{{bench, "bench: "}, {std::string(XB_VALIDATE_EXE), "validate: "}};
  for (const char* sub : {"sweep", "calibrate", "qualify", "compare", "ab", "overhead"}) {
    list.push_back({bench + " " + sub, std::string("bench ") + sub + ": "});
  }
  return list;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CliStyle, EveryCommandAnswersVersionTheSameWay) {
  for (const Command& c : commands()) {
    const auto [code, text] = run_command(c.argv + " --version");
    EXPECT_EQ(code, 0) << c.argv << ": " << text;
    EXPECT_EQ(text, "crossbench " XB_VERSION_TEXT "\n") << c.argv;
  }
}

TEST(CliStyle, EveryCommandAnswersHelpWithOneHeaderAndAUsageLineListingEveryFlag) {
  const std::regex flag(R"(--[a-z][a-z0-9-]*)");
  for (const Command& c : commands()) {
    const auto [code, text] = run_command(c.argv + " --help");
    ASSERT_EQ(code, 0) << c.argv << ": " << text;
    EXPECT_EQ(text.rfind(c.header, 0), 0u) << c.argv << " help starts: " << text.substr(0, 80);
    const std::size_t usage = text.find("Usage: ");
    ASSERT_NE(usage, std::string::npos) << c.argv;
    // The usage block runs to the first blank line; every flag the help describes is in it.
    const std::size_t usage_end = text.find("\n\n", usage);
    const std::string usage_text = text.substr(usage, usage_end - usage);
    const std::string body = text.substr(usage_end);
    std::set<std::string> described;
    for (std::sregex_iterator it(body.begin(), body.end(), flag), end; it != end; ++it) {
      // Flags named inside a description ("--trace FILE" in validate's) are listed too; only
      // options of this command appear at a line's start.
      const std::size_t line_start = body.rfind('\n', static_cast<std::size_t>(it->position())) + 1;
      if (body.find_first_not_of(' ', line_start) == static_cast<std::size_t>(it->position()))
        described.insert(it->str());
    }
    EXPECT_GE(described.size(), 2u) << c.argv;
    for (const std::string& f : described) {
      EXPECT_NE(usage_text.find("[" + f), std::string::npos) << c.argv << ": usage lacks " << f << "\n" << usage_text;
      // One name for one kind of value in every command (LIST, DIR, FILE, PCT, ...), not CLI11's TEXT.
      const std::string type = cli::house_type_name(f);
      if (!type.empty()) {
        EXPECT_NE(usage_text.find("[" + f + " " + type + "]"), std::string::npos)
            << c.argv << ": " << f << " is not named " << type << "\n"
            << usage_text;
      }
    }
    // Every help ends with the command's exit codes.
    EXPECT_NE(text.find("\nexit codes: 0 "), std::string::npos) << c.argv << " help lacks its exit codes";
  }
}

TEST(CliStyle, AMistypedFlagGetsDidYouMean) {
  const std::string bench = XB_BENCH_EXE;
  const std::string validate = XB_VALIDATE_EXE;
  const std::vector<std::pair<std::string, std::string>> cases{
      {bench + " --warmpu", "did you mean --warmup?"},
      {bench + " sweep --sizes 64", "did you mean --size?"},
      {bench + " overhead --brekdown", "did you mean --breakdown?"},
      {validate + " --trcae t.json", "did you mean --trace?"},
  };
  for (const auto& [cmd, hint] : cases) {
    const auto [code, text] = run_command(cmd);
    EXPECT_EQ(code, 2) << cmd << ": " << text;
    EXPECT_NE(text.find(hint), std::string::npos) << cmd << ": " << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << cmd << ": one line: " << text;
  }
  // Nothing near: no guess.
  const auto [code, text] = run_command(bench + " sweep --zzzzzzzz");
  EXPECT_EQ(code, 2);
  EXPECT_EQ(text.find("did you mean"), std::string::npos) << text;
}

class ValidateFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("xb_cli_style_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ValidateFolder, NotARunFolderSaysSoAndSuggestsReplayWhereARawSessionIs) {
  const std::string validate = XB_VALIDATE_EXE;
  const fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  {
    const auto [code, text] = run_command(validate + " " + empty.string());
    EXPECT_EQ(code, 2) << text;
    EXPECT_NE(text.find("is not a crossbench run folder (no table.json, trace_only.json, full.json, events.json)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("--trace"), std::string::npos) << text;
  }
  const fs::path raw = dir_ / "raw";
  fs::create_directories(raw);
  fs::copy_file(fs::path(XB_RESULTS_DIR) / "sessions/h200-small-2026-11-29/raw_session.json", raw / "raw_session.json");
  {
    const auto [code, text] = run_command(validate + " " + raw.string());
    EXPECT_EQ(code, 2) << text;
    EXPECT_NE(text.find("bench --replay " + (raw / "raw_session.json").string()), std::string::npos) << text;
  }
  EXPECT_FALSE(fs::exists(raw / "validation.json"));
  EXPECT_FALSE(fs::exists(empty / "validation.json"));
}

TEST_F(ValidateFolder, ARunFoldersValidationIsNeverReplacedSilently) {
  const std::string validate = XB_VALIDATE_EXE;
  const fs::path run = dir_ / "run";
  {
    const auto [code, text] = run_command(std::string(XB_BENCH_EXE) + " --replay " + XB_RESULTS_DIR +
                                          "/sessions/h200-small-2026-11-29/raw_session.json --out " + run.string());
    ASSERT_TRUE(code == 0 || code == 1) << text;
    ASSERT_TRUE(fs::exists(run / "validation.json")) << text;
  }
  const fs::path report = run / "validation.json";
  const std::string written = read(report);
  // The same validation again, a second later (another creation time): the file is left as it is.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  {
    const auto [code, text] = run_command(validate + " " + run.string());
    EXPECT_TRUE(code == 0 || code == 1) << text;
    EXPECT_NE(text.find("(unchanged: the same validation)"), std::string::npos) << text;
    EXPECT_EQ(read(report), written);
  }
  // The same folder spelled otherwise (a trailing slash; relative from its parent, with "./"): the
  // same validation, the file left as it is.
  for (const std::string& spelling : {run.string() + "/", std::string("./run"), std::string("run//")}) {
    const auto [code, text] = run_command("cd " + dir_.string() + " && " + validate + " " + spelling);
    EXPECT_TRUE(code == 0 || code == 1) << spelling << ": " << text;
    EXPECT_NE(text.find("(unchanged: the same validation)"), std::string::npos) << spelling << ": " << text;
    EXPECT_EQ(text.find("run//"), std::string::npos) << spelling << ": " << text;
    EXPECT_EQ(read(report), written) << spelling;
  }
  // Another validation in the file (as a committed folder validated by an older validator): refused.
  std::string other = written;
  const std::size_t verdict = other.find("\"verdict\"");
  ASSERT_NE(verdict, std::string::npos);
  other.insert(verdict, "\"edited\": true, ");
  { std::ofstream(report, std::ios::binary) << other; }
  {
    const auto [code, text] = run_command(validate + " " + run.string());
    EXPECT_EQ(code, 2) << text;
    EXPECT_NE(text.find(report.string() + " holds another validation"), std::string::npos) << text;
    EXPECT_NE(text.find("--force"), std::string::npos) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    EXPECT_EQ(read(report), other);
  }
  // Elsewhere: allowed, the folder's file untouched.
  {
    const auto [code, text] = run_command(validate + " " + run.string() + " --report " + (dir_ / "v.json").string());
    EXPECT_TRUE(code == 0 || code == 1) << text;
    EXPECT_TRUE(fs::exists(dir_ / "v.json"));
    EXPECT_EQ(read(report), other);
  }
  // --force rewrites it.
  {
    const auto [code, text] = run_command(validate + " " + run.string() + " --force");
    EXPECT_TRUE(code == 0 || code == 1) << text;
    EXPECT_EQ(read(report).find("\"edited\""), std::string::npos);
  }
}

}  // namespace
}  // namespace xb
