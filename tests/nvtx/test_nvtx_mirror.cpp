// crossbench's ranges as NVTX ranges, without a GPU (label cpu; its own process, because NVTX
// picks its tool once per process). ctest points NVTX_INJECTION64_PATH at a minimal NVTX tool
// (fake_nvtx_tool.cpp), the mechanism Nsight Systems uses, so the test sees exactly the ranges an
// NVTX tool is given.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "profiler/adapters/nvtx_mirror.h"
#include "profiler/model/profiler.h"

namespace {

/// The tool's record of what it saw, looked up in the already loaded tool library.
const std::vector<std::string>& tool_list(const char* symbol) {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  void* lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  using Getter = const std::vector<std::string>* (*)();
  auto get = lib ? reinterpret_cast<Getter>(dlsym(lib, symbol)) : nullptr;
  static const std::vector<std::string> none;
  return get ? *get() : none;
}

}  // namespace

namespace xb {
namespace {

/// Activity source with a steady clock and no records.
class ClockSource final : public ActivitySource {
 public:
  void start() override {}
  std::vector<RawRecord> stop() override { return {}; }
  std::uint64_t dropped_records() const override { return 0; }
  std::int64_t now_ns() const override { return ++t_; }
  void push_external_id(std::uint64_t) override {}
  void pop_external_id() override {}
  void describe(SessionMeta&) const override {}

 private:
  mutable std::int64_t t_ = 0;
};

TEST(NvtxMirror, EveryRecordedRangeIsPushedAndPoppedInTheCrossbenchDomain) {
  const char* tool = std::getenv("NVTX_INJECTION64_PATH");
  ASSERT_TRUE(tool != nullptr && std::string(tool).find("fake_nvtx_tool") != std::string::npos)
      << "run through ctest, which points NVTX_INJECTION64_PATH at the test's NVTX tool";
  Profiler prof(std::make_unique<ClockSource>());
  prof.set_mirror(make_nvtx_mirror());
  prof.start();
  prof.begin_fixture(Schedule{1, 0, 2});  // step 0 waits (nothing recorded), steps 1-2 active
  for (int i = 0; i < 3; ++i) {
    prof.begin_step();
    ScopedRange a(prof, "matmul/bf16/64", RangeCategory::UserAnnotation);
    ScopedRange op(prof, "xb::matmul", RangeCategory::CpuOp);
  }
  prof.end_step();
  const RawSession raw = prof.stop();

  ASSERT_EQ(tool_list("fake_nvtx_domains"), std::vector<std::string>{kNvtxDomain});
  EXPECT_NE(crossbench_nvtx_domain(), nullptr);
  // Exactly the recorded ranges, in order, properly nested: what Nsight Systems would show.
  std::vector<std::string> expected;
  for (int step : {1, 2}) {
    expected.push_back("push crossbench/ProfilerStep#" + std::to_string(step));
    expected.push_back("push crossbench/matmul/bf16/64");
    expected.push_back("push crossbench/xb::matmul");
    expected.push_back("pop crossbench");
    expected.push_back("pop crossbench");
    expected.push_back("pop crossbench");
  }
  const std::vector<std::string>& log = tool_list("fake_nvtx_log");
  EXPECT_EQ(log, expected);
  ASSERT_EQ(raw.ranges.size(), 6u);
  for (const HostRange& r : raw.ranges) {
    EXPECT_NE(std::find(log.begin(), log.end(), "push crossbench/" + r.name), log.end()) << r.name;
  }
}

TEST(NvtxMirror, NoMirrorPushesNothing) {
  const std::size_t before = tool_list("fake_nvtx_log").size();
  Profiler prof(std::make_unique<ClockSource>());
  prof.start();
  prof.begin_fixture(Schedule{0, 0, 1});
  prof.begin_step();
  { ScopedRange a(prof, "quiet", RangeCategory::UserAnnotation); }
  prof.end_step();
  prof.stop();
  EXPECT_EQ(tool_list("fake_nvtx_log").size(), before);
}

}  // namespace
}  // namespace xb
