// Graph mode end to end (issue 17): `bench --graph` captures each fixture's batch into a CUDA
// graph and replays it once per sample. The run must validate, every recorded step must hold one
// cudaGraphLaunch, and the table must count steps x calls kernels (add and matmul at 64 launch one
// kernel per call), every kernel with CUPTI's graph node id. Skips without a device.
#include <gtest/gtest.h>

#include "../common/run_command.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../common/json_file.h"
#include "gpu_test.h"

namespace xb {
namespace {

using xb::testing::GpuTest;
using xb::testing::read_json;

void check_graph_run(const std::string& flags, const std::filesystem::path& out) {
  std::filesystem::remove_all(out);
  const auto [code, text] =
      xb::testing::run_command(std::string(XB_BENCH_EXE) + " " + flags + " --out " + out.string());
  ASSERT_EQ(code, 0) << text;
  EXPECT_TRUE(read_json(out / "validation.json").at("passed").get<bool>()) << text;

  // Each document in a local: a range-for over a member of a temporary reads freed memory (the
  // temporary dies before the loop body; C++23 changes that). The first H200 run counted 0 steps.
  std::int64_t steps = 0, calls = 0;
  const nlohmann::json events = read_json(out / "events.json");
  for (const auto& f : events.at("fixtures")) {
    ASSERT_TRUE(f.contains("timing")) << f.dump(1);
    EXPECT_TRUE(f["timing"].value("graph", false)) << f["name"];
    for (const auto& s : f.at("steps")) {
      ++steps;
      calls += s.at("launches").get<std::int64_t>();
    }
  }
  ASSERT_GT(steps, 0);
  std::int64_t kernels = 0, graph_launches = 0, kernel_launches = 0;
  const nlohmann::json table = read_json(out / "table.json");
  for (const auto& r : table.at("rows")) {
    if (r.at("kind") == "kernel") kernels += r.at("calls").get<std::int64_t>();
    if (r.at("name") == "cudaGraphLaunch") graph_launches += r.at("calls").get<std::int64_t>();
    if (r.at("name") == "cudaLaunchKernel") kernel_launches += r.at("calls").get<std::int64_t>();
  }
  EXPECT_EQ(kernels, calls) << "table kernels vs steps x calls";
  EXPECT_EQ(graph_launches, steps) << "one cudaGraphLaunch per recorded step";
  EXPECT_EQ(kernel_launches, 0) << "no eager launch inside a recorded step";

  std::int64_t with_node = 0, trace_kernels = 0;
  const nlohmann::json full = read_json(out / "full.json");
  for (const auto& e : full.at("traceEvents")) {
    if (e.value("cat", "") != "kernel") continue;
    ++trace_kernels;
    if (e.at("args").contains("graph node id")) ++with_node;
  }
  EXPECT_EQ(trace_kernels, calls);
  EXPECT_EQ(with_node, trace_kernels);
  std::filesystem::remove_all(out);
}

TEST_F(GpuTest, GraphModeHotRunValidatesWithStepsTimesCallsKernels) {
  check_graph_run("--op add,matmul --size 64 --graph --active-steps 5",
                  std::filesystem::temp_directory_path() / "xb_gpu_graph_hot");
}

TEST_F(GpuTest, GraphModeColdRunValidates) {
  check_graph_run("--op add --dtype bf16 --size 1024 --graph --mode cold --active-steps 3",
                  std::filesystem::temp_directory_path() / "xb_gpu_graph_cold");
}

}  // namespace
}  // namespace xb
