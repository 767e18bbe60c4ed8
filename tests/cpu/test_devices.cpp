// `--devices` without a GPU (bench/main/): the list and its bad input, CUDA_VISIBLE_DEVICES for
// each child, the devices compared side by side through qualify's gate on recorded H200 samples
// (one device's medians perturbed to show the flag), the orchestration with a fake child (bench and
// qualify layouts, exit codes, nothing left after a usage error), and the per-device layout through
// the real executable on the recorded H200 session (`bench --replay FILE --devices 0,1`).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli/cli.h"
#include "bench/core/options.h"
#include "bench/core/run_dir.h"
#include "bench/main/devices.h"
#include "bench/qualify/device_compare.h"
#include "bench/qualify/qualify_files.h"
#include "profiler/model/session_io.h"
#include "tests/common/run_command.h"

namespace xb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSession = fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small-2026-11-29" / "raw_session.json";
const fs::path kWarm1 = fs::path(XB_TEST_DATA_DIR) / "qualify" / "h200-warm-1.json";
const fs::path kWarm2 = fs::path(XB_TEST_DATA_DIR) / "qualify" / "h200-warm-2.json";
const fs::path kPassQualify = fs::path(XB_RESULTS_DIR) / "h200" / "qualify-2026-11-29" / "pass-qualify.json";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A fresh temporary folder, removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("xb-devices-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// ---- the list ---------------------------------------------------------------------------------

TEST(DevicesList, ParsesIndicesAndAll) {
  EXPECT_TRUE(parse_device_list("all").all);
  EXPECT_EQ(parse_device_list("0").indices, (std::vector<int>{0}));
  EXPECT_EQ(parse_device_list("2,0,7").indices, (std::vector<int>{2, 0, 7}));
  EXPECT_EQ(resolve_devices(parse_device_list("all"), 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(resolve_devices(parse_device_list("all"), 1), (std::vector<int>{0}));
  EXPECT_EQ(resolve_devices(parse_device_list("0"), 1), resolve_devices(parse_device_list("all"), 1));
  EXPECT_EQ(resolve_devices(parse_device_list("5"), -1), (std::vector<int>{5}));  // count unknown (replay)
}

TEST(DevicesList, BadInputNamesTheItem) {
  const auto message = [](const std::string& text, int count) {
    try {
      resolve_devices(parse_device_list(text), count);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("", 2).find("empty --devices"), std::string::npos);
  EXPECT_NE(message("a", 2).find("'a' is not a device index"), std::string::npos);
  EXPECT_NE(message("-1", 2).find("'-1'"), std::string::npos);
  EXPECT_NE(message("0,,1", 2).find("''"), std::string::npos);
  EXPECT_NE(message("0,", 2).find("''"), std::string::npos);
  EXPECT_NE(message("1,1", 2).find("device 1 is listed twice"), std::string::npos);
  EXPECT_NE(message("99999", 2).find("'99999'"), std::string::npos);
  EXPECT_NE(message("ALL", 2).find("'ALL'"), std::string::npos);
  EXPECT_NE(message("3", 2).find("this machine has 2 CUDA device(s) (0..1)"), std::string::npos);
  EXPECT_NE(message("all", 0).find("no CUDA device"), std::string::npos);
}

TEST(DevicesList, TakeOption) {
  std::vector<std::string> args{"--size", "64", "--devices", "0,1", "--out=o", "--warmup"};
  EXPECT_EQ(take_option(args, "--devices"), std::optional<std::string>("0,1"));
  EXPECT_EQ(take_option(args, "--out"), std::optional<std::string>("o"));
  EXPECT_EQ(args, (std::vector<std::string>{"--size", "64", "--warmup"}));
  EXPECT_FALSE(take_option(args, "--devices").has_value());
  std::vector<std::string> twice{"--devices", "0", "--devices=1"};
  EXPECT_THROW(take_option(twice, "--devices"), UsageError);
  std::vector<std::string> bare{"--size", "64", "--devices"};
  EXPECT_THROW(take_option(bare, "--devices"), UsageError);
  EXPECT_TRUE(has_devices_option({"--devices=all"}));
  EXPECT_FALSE(has_devices_option({"--devicesx", "1"}));
}

TEST(DevicesList, ChildVisibleDevicesFollowsTheParents) {
  EXPECT_EQ(child_visible_devices(1, nullptr), "1");
  EXPECT_EQ(child_visible_devices(1, "2,3"), "3");  // a Slurm allocation of GPUs 2 and 3
  EXPECT_EQ(child_visible_devices(0, "GPU-aaa,GPU-bbb"), "GPU-aaa");
  EXPECT_THROW(child_visible_devices(1, "2"), UsageError);
  EXPECT_THROW(child_visible_devices(0, ""), UsageError);
}

// ---- side by side -----------------------------------------------------------------------------

/// A device whose fixtures are a recorded H200 baseline's (every sample of each fixture).
DeviceOutcome device_from(const fs::path& baseline, int index) {
  const Baseline b = read_baseline(baseline);
  DeviceOutcome d;
  d.index = index;
  d.visible_devices = std::to_string(index);
  d.dir = "device-" + std::to_string(index);
  d.loaded = true;
  d.run_folders = 1;
  d.environment = b.environment;
  d.fixtures = b.fixtures;
  return d;
}

const DeviceCell& cell_of(const DevicesReport& r, const std::string& key, std::size_t device) {
  for (const FixtureAcross& row : r.fixtures) {
    if (row.key == key) return row.cells.at(device);
  }
  throw std::runtime_error("no fixture " + key);
}

TEST(DevicesCompare, OneSlowGpuAmongThreeIsFlaggedAndOnlyIt) {
  // Two back-to-back H200 runs and a third device: the second run with add/bf16/4096 10% slower.
  std::vector<DeviceOutcome> devices{device_from(kWarm1, 0), device_from(kWarm2, 1), device_from(kWarm2, 2)};
  for (FixtureRecord& f : devices[2].fixtures) {
    if (f.name != "add/bf16/4096") continue;
    for (double& x : f.samples_ns) x *= 1.10;
  }
  const DevicesReport r = compare_devices("bench", devices);
  const std::string add = "add/bf16/4096 (hot)";
  EXPECT_EQ(cell_of(r, add, 2).status, "slower") << cell_of(r, add, 2).reason;
  EXPECT_EQ(cell_of(r, add, 2).slower, 2u);
  EXPECT_NEAR(cell_of(r, add, 2).delta, 0.10, 0.01);
  EXPECT_EQ(cell_of(r, add, 0).status, "consistent") << cell_of(r, add, 0).reason;
  EXPECT_EQ(cell_of(r, add, 1).status, "consistent") << cell_of(r, add, 1).reason;
  // addmm_bias1d differs by 0.35% between the runs: within the gate on every device.
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(cell_of(r, "addmm_bias1d/bf16/4096 (hot)", i).status, "consistent");
  // warm-1's matmul missed its noise target: inconclusive, never flagged.
  EXPECT_EQ(cell_of(r, "matmul/bf16/4096 (hot)", 0).status, "inconclusive");
  EXPECT_EQ(r.status, (std::vector<std::string>{"inconclusive", "inconclusive", "off"}));
  EXPECT_EQ(devices_result(r), "off");
  EXPECT_EQ(r.exit_code, 1);

  std::ostringstream md, js;
  write_devices_markdown(r, md);
  write_devices_json(r, js);
  EXPECT_NE(md.str().find("| 2 | 2 | NVIDIA H200 |"), std::string::npos) << md.str();
  EXPECT_NE(md.str().find("slower**"), std::string::npos) << md.str();
  const json doc = json::parse(js.str());
  EXPECT_EQ(doc["crossbench"]["format"], "devices");
  EXPECT_EQ(doc["result"], "off");
  EXPECT_EQ(doc["devices"][2]["status"], "off");
  EXPECT_EQ(doc["devices"][0]["gpu_uuid"], devices[0].environment.gpu_uuid);
  EXPECT_EQ(doc["fixtures"][1]["key"], add);
  EXPECT_EQ(doc["fixtures"][1]["devices"][2]["status"], "slower");
}

TEST(DevicesCompare, SameSamplesAreConsistentAndOneDeviceIsAlone) {
  const DevicesReport same = compare_devices("bench", {device_from(kWarm2, 0), device_from(kWarm2, 1)});
  EXPECT_EQ(same.status, (std::vector<std::string>{"consistent", "consistent"}));
  EXPECT_EQ(same.exit_code, 0);
  const DevicesReport alone = compare_devices("bench", {device_from(kWarm2, 0)});
  EXPECT_EQ(alone.status, (std::vector<std::string>{"alone"}));
  EXPECT_EQ(cell_of(alone, "add/bf16/4096 (hot)", 0).status, "alone");
  EXPECT_EQ(alone.exit_code, 0);
}

TEST(DevicesCompare, TwoDevicesThatDifferAreBothFlagged) {
  std::vector<DeviceOutcome> devices{device_from(kWarm2, 0), device_from(kWarm2, 1)};
  for (FixtureRecord& f : devices[1].fixtures) {
    if (f.name == "add/bf16/4096") {
      for (double& x : f.samples_ns) x *= 0.90;
    }
  }
  const DevicesReport r = compare_devices("bench", devices);
  EXPECT_EQ(cell_of(r, "add/bf16/4096 (hot)", 0).status, "slower");
  EXPECT_EQ(cell_of(r, "add/bf16/4096 (hot)", 1).status, "faster");
  EXPECT_EQ(r.status, (std::vector<std::string>{"off", "off"}));
}

TEST(DevicesCompare, AFailedDeviceFailsTheReport) {
  DeviceOutcome broken;
  broken.index = 1;
  broken.exit_code = 1;
  broken.error = "no folder";
  const DevicesReport r = compare_devices("bench", {device_from(kWarm2, 0), broken});
  EXPECT_EQ(r.status[1], "failed");
  EXPECT_EQ(cell_of(r, "add/bf16/4096 (hot)", 1).status, "missing");
  EXPECT_EQ(devices_result(r), "failed");
  EXPECT_EQ(r.exit_code, 1);
}

// ---- the orchestration with a fake child ------------------------------------------------------

/// A child that replays the recorded H200 session into its --out folder (what `bench` does on a
/// device, without one); for qualify, into OUT/run-hot plus a copy of a recorded qualify.json.
ChildRunner fake_child(std::vector<std::string>* visible_seen, bool qualify, int regress_device = -1) {
  return [=](const std::vector<std::string>& args, const std::string& visible) {
    visible_seen->push_back(visible);
    const fs::path out = args.at(args.size() - 1);
    EXPECT_EQ(args.at(args.size() - 2), "--out");
    std::ostringstream log;
    if (!qualify) return replay_session(kSession, out, log);
    create_run_dir(out);
    (void)replay_session(kSession, out / "run-hot", log);
    json q = json::parse(read(kPassQualify));
    q["host"] = "node-a";
    if (std::to_string(regress_device) == visible) {
      q["result"] = "regression";
      q["exit_code"] = 1;
      q["fixtures"][0]["verdict"] = "regression";
      q["fixtures"][0]["delta_pct"] = 12.5;
    }
    std::ofstream(out / "qualify.json") << q.dump(1);
    release_run_dir(out);
    return q["exit_code"].get<int>();
  };
}

TEST(DevicesRun, BenchLayoutOneFolderPerDevice) {
  TempDir tmp("bench-layout");
  std::vector<std::string> seen;
  std::ostringstream log;
  const fs::path out = tmp.path / "run";
  const int code = run_on_devices(
      DevicesCommand::Bench, "bench", {"--replay", kSession.string(), "--devices", "0,1", "--out", out.string()},
      [] { return 0; }, fake_child(&seen, false), log);
  EXPECT_EQ(seen, (std::vector<std::string>{"0", "1"}));
  for (const char* f : {"device-0/raw_session.json", "device-0/validation.json", "device-0/summary.md",
                        "device-1/raw_session.json", "device-1/validation.json", "devices.md", "devices.json"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f << "\n" << log.str();
  }
  const json doc = json::parse(read(out / "devices.json"));
  EXPECT_EQ(doc["command"], "bench");
  ASSERT_EQ(doc["devices"].size(), 2u);
  EXPECT_EQ(doc["devices"][1]["dir"], (out / "device-1").string());
  EXPECT_EQ(doc["devices"][0]["gpu_uuid"], "GPU-2d017484-5452-a946-bb56-8ecd7638a017");
  EXPECT_EQ(doc["devices"][0]["gpu_pci_bus_id"], "0000:00:06.0");
  // The same session on both devices: nothing is off.
  EXPECT_NE(doc["result"], "off");
  EXPECT_NE(doc["result"], "failed");
  EXPECT_EQ(code, 0) << log.str();
}

TEST(DevicesRun, EachChildsCommandIsShownAsAShellCommand) {
  TempDir tmp("shown command");  // a space in the path: the --out word is quoted
  std::vector<std::string> seen;
  std::ostringstream log;
  const fs::path out = tmp.path / "run";
  ASSERT_EQ(
      run_on_devices(
          DevicesCommand::Bench, "bench", {"--replay", kSession.string(), "--devices", "0,1", "--out", out.string()},
          [] { return 0; }, fake_child(&seen, false), log),
      0)
      << log.str();
  const std::string want =
      "CUDA_VISIBLE_DEVICES=1): " +
      xb::shell_command({"bench", "--replay", kSession.string(), "--out", (out / "device-1").string()}) + "\n";
  EXPECT_NE(log.str().find(want), std::string::npos) << want << "\n" << log.str();
  EXPECT_NE(log.str().find(" --out '" + (out / "device-1").string() + "'\n"), std::string::npos) << log.str();
  EXPECT_EQ(log.str().find(",--out,"), std::string::npos) << log.str();
}

TEST(ShellCommand, QuotesOnlyTheWordsThatNeedIt) {
  EXPECT_EQ(
      xb::shell_command({"bench", "--replay", "results/x/raw_session.json", "--devices", "0,1", "--sizes=64:4096:x2"}),
      "bench --replay results/x/raw_session.json --devices 0,1 --sizes=64:4096:x2");
  EXPECT_EQ(xb::shell_command({"bench", "--out", "/tmp/a b", "it's", "", "$HOME", "a*", "x;y"}),
            "bench --out '/tmp/a b' 'it'\\''s' '' '$HOME' 'a*' 'x;y'");
  EXPECT_EQ(xb::shell_command({}), "");
}

TEST(DevicesRun, AllOnOneGpuIsTheSameLayoutAsDeviceZero) {
  TempDir tmp("all-vs-0");
  std::vector<std::string> seen_all, seen_0;
  std::ostringstream log;
  const auto names = [](const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(fs::relative(e.path(), dir).string());
    std::sort(out.begin(), out.end());
    return out;
  };
  // bench (not a replay) with a device count of 1: --devices all asks for it, --devices 0 checks against it.
  ASSERT_EQ(
      run_on_devices(
          DevicesCommand::Bench, "bench", {"--size", "64", "--devices", "all", "--out", (tmp.path / "a").string()},
          [] { return 1; }, fake_child(&seen_all, false), log),
      0)
      << log.str();
  ASSERT_EQ(run_on_devices(
                DevicesCommand::Bench, "bench", {"--size", "64", "--devices", "0", "--out", (tmp.path / "z").string()},
                [] { return 1; }, fake_child(&seen_0, false), log),
            0)
      << log.str();
  EXPECT_EQ(seen_all, seen_0);
  EXPECT_EQ(names(tmp.path / "a"), names(tmp.path / "z"));
  EXPECT_EQ(json::parse(read(tmp.path / "a" / "devices.json"))["devices"][0]["status"], "alone");
}

TEST(DevicesRun, QualifyPerDeviceMergesIntoOneFleetReport) {
  TempDir tmp("qualify");
  std::vector<std::string> seen;
  std::ostringstream log;
  const fs::path out = tmp.path / "q";
  const fs::path suite = fs::path(XB_RESULTS_DIR) / "suites" / "h200-gate.json";
  const fs::path baseline = fs::path(XB_RESULTS_DIR) / "baselines" / "h200.json";
  const int code = run_on_devices(
      DevicesCommand::Qualify, "bench",
      {"--suite", suite.string(), "--baseline", baseline.string(), "--devices", "all", "--out", out.string()},
      [] { return 2; }, fake_child(&seen, true, 1), log);
  EXPECT_EQ(seen, (std::vector<std::string>{"0", "1"}));
  for (const char* f : {"device-0/qualify.json", "device-1/run-hot/raw_session.json", "devices.md", "devices.json",
                        "aggregate.md", "aggregate.xml", "aggregate.json"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f << "\n" << log.str();
  }
  const json agg = json::parse(read(out / "aggregate.json"));
  EXPECT_EQ(agg["result"], "regression");
  ASSERT_EQ(agg["nodes"].size(), 1u);  // both devices on host node-a
  EXPECT_EQ(agg["nodes"][0]["node"], "node-a");
  EXPECT_EQ(agg["qualifications"][1]["label"], "device-1");
  EXPECT_EQ(agg["qualifications"][1]["result"], "regression");
  const json dev = json::parse(read(out / "devices.json"));
  EXPECT_EQ(dev["devices"][1]["qualify_result"], "regression");
  EXPECT_EQ(code, 1) << log.str();
}

TEST(DevicesRun, BadInputWritesNothing) {
  TempDir tmp("bad");
  std::vector<std::string> seen;
  std::ostringstream log;
  const fs::path out = tmp.path / "never";
  const auto run = [&](DevicesCommand c, std::vector<std::string> args, int count = 2) {
    args.insert(args.end(), {"--out", out.string()});
    try {
      run_on_devices(
          c, "bench", args, [count] { return count; }, fake_child(&seen, false), log);
    } catch (const UsageError& e) {
      return std::string(e.what());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const fs::path suite = fs::path(XB_RESULTS_DIR) / "suites" / "h200-gate.json";
  const fs::path baseline = fs::path(XB_RESULTS_DIR) / "baselines" / "h200.json";
  EXPECT_NE(run(DevicesCommand::Bench, {"--devices", "0,0"}).find("listed twice"), std::string::npos);
  EXPECT_NE(run(DevicesCommand::Bench, {"--devices", "2"}).find("this machine has 2"), std::string::npos);
  EXPECT_NE(run(DevicesCommand::Bench, {"--devices", "0", "--size", "0"}).find("size '0'"), std::string::npos);
  EXPECT_NE(run(DevicesCommand::Bench, {"--devices", "0", "--benchmark_out=x.json"}).find("--benchmark_out"),
            std::string::npos);
  EXPECT_NE(run(DevicesCommand::Sweep, {"--devices", "0", "--bogus"}).find("--bogus"), std::string::npos);
  EXPECT_NE(run(DevicesCommand::Qualify,
                {"--devices", "0", "--suite", suite.string(), "--baseline", baseline.string(), "--update-baseline"})
                .find("--update-baseline"),
            std::string::npos);
  EXPECT_NE(
      run(DevicesCommand::Qualify, {"--devices", "0", "--suite", suite.string(), "--baseline", "/nonexistent.json"})
          .find("nonexistent.json"),
      std::string::npos);
  EXPECT_NE(run(DevicesCommand::Bench, {"--devices", "all"}, 0).find("no CUDA device"), std::string::npos);
  EXPECT_TRUE(seen.empty());
  EXPECT_FALSE(fs::exists(out));
  // A child that fails with a usage error before writing anything (the first device): exit 2,
  // the folder is taken back.
  const int code = run_on_devices(
      DevicesCommand::Bench, "bench", {"--devices", "0,1", "--out", out.string()}, [] { return 2; },
      [](const std::vector<std::string>&, const std::string&) { return 2; }, log);
  EXPECT_EQ(code, 2);
  EXPECT_FALSE(fs::exists(out));
}

// ---- the real executable ----------------------------------------------------------------------

TEST(DevicesExe, ReplayPerDeviceThroughTheExecutable) {
  TempDir tmp("exe");
  const fs::path out = tmp.path / "run";
  const auto [code, text] = testing::run_command(std::string(XB_BENCH_EXE) + " --replay " + kSession.string() +
                                                 " --devices 0,1 --out " + out.string());
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("== device 1 (2 of 2, CUDA_VISIBLE_DEVICES=1)"), std::string::npos) << text;
  EXPECT_NE(text.find("devices side by side (bench)"), std::string::npos) << text;
  for (const char* f : {"device-0/full.json", "device-1/validation.json", "devices.md", "devices.json"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f;
  }
  EXPECT_FALSE(fs::exists(out / "device-2"));
  // Each device folder is a whole run folder: validate accepts it.
  const auto [vcode, vtext] = testing::run_command(std::string(XB_VALIDATE_EXE) + " " + (out / "device-1").string());
  EXPECT_EQ(vcode, 0) << vtext;

  // Bad input: one line, exit 2, nothing written.
  const fs::path never = tmp.path / "never";
  for (const std::string& bad : {std::string(" --replay ") + kSession.string() + " --devices 0,x",
                                 std::string(" --replay ") + kSession.string() + " --devices 0 --size 64",
                                 std::string(" qualify --devices 0 --suite /nonexistent.json --baseline x.json")}) {
    const auto [c, t] = testing::run_command(std::string(XB_BENCH_EXE) + bad + " --out " + never.string());
    EXPECT_EQ(c, 2) << bad << "\n" << t;
    EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 1) << bad << "\n" << t;
    EXPECT_FALSE(fs::exists(never)) << bad;
  }
}

}  // namespace
}  // namespace xb
