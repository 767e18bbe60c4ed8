// `bench qualify --aggregate` on recorded qualifications: the H200's qualify.json of 2026-11-29
// (results/h200/qualify-2026-11-29/pass-qualify.json) copied into a fleet of nodes, one node's
// copy turned into a regression, one node with two devices. Checks the per-node verdicts, the
// three reports read back (markdown, JUnit XML counts, JSON), the exit codes through the real
// executable, and bad input (one line, exit 2, nothing written).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/qualify/qualify_aggregate.h"
#include "profiler/model/session_io.h"
#include "tests/common/run_command.h"

namespace xb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kPass = fs::path(XB_RESULTS_DIR) / "h200" / "qualify-2026-11-29" / "pass-qualify.json";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A fleet: fleet/node-a (pass), fleet/node-b (its first fixture regressed by 12.5%), fleet/node-c
/// with device-0 and device-1 (pass; device-1 records a host name), all of the recorded qualify.json.
class QualifyAggregate : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("xb-qualify-aggregate-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    const json pass = json::parse(read(kPass));
    put("fleet/node-a", pass);
    json slow = pass;
    slow["result"] = "regression";
    slow["exit_code"] = 1;
    slow["fixtures"][0]["verdict"] = "regression";
    slow["fixtures"][0]["delta_pct"] = 12.5;
    slow["fixtures"][0]["reason"] = "slower by more than 10%, significant (p < 0.01)";
    put("fleet/node-b", slow);
    put("fleet/node-c/device-0", pass);
    json named = pass;
    named["host"] = "gpu-node-c";
    named["environment"]["gpu_pci_bus_id"] = "00000000:19:00.0";
    put("fleet/node-c/device-1", named);
  }
  void TearDown() override { fs::remove_all(root_); }

  void put(const std::string& dir, const json& doc) {
    fs::create_directories(root_ / dir);
    std::ofstream(root_ / dir / "qualify.json") << doc.dump(1);
  }

  fs::path root_;
};

TEST_F(QualifyAggregate, VerdictPerNode) {
  const FleetReport r = aggregate_qualifications(collect_qualifications({root_ / "fleet"}), "2026-12-02T00:00:00Z");
  ASSERT_EQ(r.entries.size(), 4u);
  EXPECT_EQ(r.entries[0].label, "fleet/node-a");
  EXPECT_EQ(r.entries[2].label, "fleet/node-c/device-0");
  EXPECT_EQ(r.entries[2].node, "fleet/node-c");  // no host recorded: the node's folder
  EXPECT_EQ(r.entries[3].node, "gpu-node-c");    // the host qualify.json names
  EXPECT_EQ(r.entries[3].gpu_pci_bus_id, "00000000:19:00.0");
  EXPECT_EQ(r.entries[0].gpu_pci_bus_id, "");  // written before the bus id was recorded
  ASSERT_EQ(r.nodes.size(), 4u);
  EXPECT_EQ(r.nodes[0].node, "fleet/node-a");
  EXPECT_EQ(r.nodes[0].result, "pass");
  EXPECT_EQ(r.nodes[1].result, "regression");
  EXPECT_EQ(r.nodes[1].exit_code, 1);
  EXPECT_EQ(r.result, "regression");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.suite, "h200-gate");
  const FleetFixture& first = r.fixtures.front();
  EXPECT_EQ(first.key, "add/bf16/64 (hot)");
  EXPECT_EQ(first.regression, 1u);
  EXPECT_EQ(first.unchanged, 3u);
  EXPECT_EQ(first.worst_verdict, "regression");
  EXPECT_EQ(first.worst_label, "fleet/node-b");
  ASSERT_TRUE(first.max_delta_pct.has_value());
  EXPECT_DOUBLE_EQ(*first.max_delta_pct, 12.5);

  std::ostringstream md, xml, js;
  write_fleet_markdown(r, md);
  write_fleet_junit(r, xml);
  write_fleet_json(r, js);
  EXPECT_NE(md.str().find("**Result: regression** (exit 1): 4 node(s), 4 qualification(s)"), std::string::npos)
      << md.str();
  EXPECT_NE(md.str().find("| fleet/node-b | regression | fleet/node-b |"), std::string::npos) << md.str();
  // JUnit: 4 qualifications x (9 fixtures + validation) test cases, one failure (node-b's regression).
  EXPECT_NE(
      xml.str().find(
          "<testsuites name=\"crossbench fleet qualification h200-gate\" tests=\"40\" failures=\"1\" errors=\"0\""),
      std::string::npos)
      << xml.str().substr(0, 400);
  EXPECT_NE(xml.str().find("<testsuite name=\"node.fleet/node-b\" tests=\"10\" failures=\"1\""), std::string::npos);
  const json doc = json::parse(js.str());
  EXPECT_EQ(doc["crossbench"]["format"], "qualify-aggregate");
  EXPECT_EQ(doc["result"], "regression");
  EXPECT_EQ(doc["nodes"][1]["result"], "regression");
  EXPECT_EQ(doc["qualifications"][1]["counts"]["regression"], 1);
  EXPECT_EQ(doc["fixtures"][0]["delta_pct"]["max"], 12.5);
}

TEST_F(QualifyAggregate, PassingFleetAndInconclusive) {
  const FleetReport pass =
      aggregate_qualifications(collect_qualifications({root_ / "fleet" / "node-a", root_ / "fleet" / "node-c"}), "t");
  EXPECT_EQ(pass.result, "pass");
  EXPECT_EQ(pass.exit_code, 0);
  EXPECT_EQ(pass.entries[0].label, "node-a");
  json inc = json::parse(read(kPass));
  inc["result"] = "inconclusive";
  put("more/node-d", inc);
  const FleetReport r =
      aggregate_qualifications(collect_qualifications({root_ / "fleet" / "node-a", root_ / "more"}), "t");
  EXPECT_EQ(r.result, "inconclusive");
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(QualifyAggregate, BadInputIsOneLine) {
  const auto error = [&](const std::vector<fs::path>& paths) {
    try {
      aggregate_qualifications(collect_qualifications(paths), "t");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({root_ / "nope"}).find("no such file or folder"), std::string::npos);
  fs::create_directories(root_ / "empty");
  EXPECT_NE(error({root_ / "empty"}).find("no qualify.json"), std::string::npos);
  EXPECT_NE(error({root_ / "fleet" / "node-a", root_ / "fleet" / "node-a" / "qualify.json"}).find("given twice"),
            std::string::npos);
  json other = json::parse(read(kPass));
  other["suite"]["name"] = "release";
  put("mixed/node-x", other);
  EXPECT_NE(error({root_ / "fleet" / "node-a", root_ / "mixed"}).find("a fleet report merges one suite"),
            std::string::npos);
  fs::create_directories(root_ / "broken/node-y");
  std::ofstream(root_ / "broken/node-y/qualify.json") << "{\"crossbench\": {\"format\": \"baseline\", \"version\": 1}}";
  const std::string broken = error({root_ / "broken"});
  EXPECT_NE(broken.find("node-y/qualify.json"), std::string::npos) << broken;
  EXPECT_NE(broken.find("expected \"qualify\""), std::string::npos) << broken;
  json bad_verdict = json::parse(read(kPass));
  bad_verdict["fixtures"][2]["verdict"] = "meh";
  put("badverdict/n", bad_verdict);
  EXPECT_NE(error({root_ / "badverdict"}).find("fixtures[2]: \"verdict\" is 'meh'"), std::string::npos);
}

TEST_F(QualifyAggregate, ThroughTheExecutable) {
  const std::string bench = std::string(XB_BENCH_EXE) + " qualify --aggregate ";
  const fs::path out = root_ / "report";
  auto [code, text] = testing::run_command(bench + (root_ / "fleet").string() + " --out " + out.string());
  EXPECT_EQ(code, 1) << text;
  EXPECT_NE(text.find("regression     fleet/node-b"), std::string::npos) << text;
  for (const char* f : {"aggregate.md", "aggregate.xml", "aggregate.json"}) EXPECT_TRUE(fs::exists(out / f)) << f;
  std::tie(code, text) =
      testing::run_command(bench + (root_ / "fleet" / "node-a").string() + " " + (root_ / "fleet" / "node-c").string() +
                           " --out " + (root_ / "ok").string());
  EXPECT_EQ(code, 0) << text;
  // Bad input: one line on stderr, exit 2, nothing written.
  const fs::path never = root_ / "never";
  for (const std::string& bad :
       {bench + (root_ / "nope").string(), bench + (root_ / "fleet").string() + " --suite s.json",
        bench + (root_ / "fleet").string() + " --out " + out.string(),  // not empty
        std::string(XB_BENCH_EXE) + " qualify --aggregate"}) {
    const bool names_out = bad.find("--out") != std::string::npos;
    std::tie(code, text) = testing::run_command(bad + (names_out ? std::string() : " --out " + never.string()));
    EXPECT_EQ(code, 2) << bad << "\n" << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << bad << "\n" << text;
    EXPECT_FALSE(fs::exists(never)) << bad;
  }
}

}  // namespace
}  // namespace xb
