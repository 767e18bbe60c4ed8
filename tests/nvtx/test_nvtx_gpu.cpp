// NVTX both ways on a real GPU (label gpu; its own process, because NVTX picks its tool once per
// process at the first NVTX call):
// - NVTX ranges pushed by the user's code are recorded through CUPTI and become user annotations
//   that own the kernels launched inside them, in the table and both exports, and validate;
// - crossbench's own ranges, mirrored into the "crossbench" NVTX domain, are not recorded twice.
// Skips without a device.
#include <gtest/gtest.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "../common/validate_outputs.h"
#include "../gpu/gpu_test.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
#include "profiler/adapters/cupti_source.h"
#include "profiler/adapters/nvtx_mirror.h"
#include "profiler/exporters/table.h"
#include "profiler/model/event_model.h"
#include "profiler/model/profiler.h"

namespace xb {
namespace {

using xb::testing::GpuTest;

const HostRange* find_range(const RawSession& raw, const std::string& name) {
  for (const HostRange& r : raw.ranges) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST_F(GpuTest, UserNvtxRangesBecomeAnnotationsThatOwnTheirKernels) {
  // The source must exist before the process's first NVTX call (it points NVTX at CUPTI).
  Profiler prof(make_cupti_source());
  const char* injection = std::getenv("NVTX_INJECTION64_PATH");
  ASSERT_NE(injection, nullptr);
  ASSERT_NE(std::string(injection).find("cupti"), std::string::npos) << injection;
  prof.set_mirror(make_nvtx_mirror());

  Stream stream;
  auto add = make_workload(Op::Add, DType::BF16, 1024, stream.get());
  nvtxRangePushA("outside any step");  // not recorded: no active step yet
  prof.start();
  nvtxDomainHandle_t user_domain = nvtxDomainCreateA("mylib");
  prof.begin_fixture(Schedule{0, 0, 3});
  for (int i = 0; i < 3; ++i) {
    prof.begin_step();
    {
      ScopedRange op(prof, "xb::add", RangeCategory::CpuOp);
      nvtxRangePushA("user_block");
      add->enqueue();
      {
        nvtxEventAttributes_t attr{};
        attr.version = NVTX_VERSION;
        attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
        attr.message.ascii = "mylib::inner";
        nvtxDomainRangePushEx(user_domain, &attr);
        add->enqueue();
        nvtxDomainRangePop(user_domain);
      }
      nvtxRangePop();
    }
    stream.synchronize();
    prof.end_step();
  }
  XB_CUDA(cudaDeviceSynchronize());
  const RawSession raw = prof.stop();
  nvtxRangePop();  // "outside any step"
  // NVTX's only tool is crossbench's own CUPTI here, so the mirror stayed quiet (nothing would
  // see its ranges); tests/nvtx/test_nvtx_mirror.cpp checks the mirror with a real NVTX tool.
  EXPECT_EQ(crossbench_nvtx_domain(), nullptr);

  // Ranges: 3 x (ProfilerStep, xb::add) from the profiler, 3 x (user_block, mylib::inner) from NVTX,
  // and no NVTX copy of the profiler's own ranges.
  int user_blocks = 0, inners = 0, steps = 0;
  for (const HostRange& r : raw.ranges) {
    user_blocks += r.name == "user_block";
    inners += r.name == "mylib::inner";
    steps += r.name.rfind("ProfilerStep#", 0) == 0;
    EXPECT_NE(r.name, "outside any step");
  }
  EXPECT_EQ(user_blocks, 3);
  EXPECT_EQ(inners, 3);
  EXPECT_EQ(steps, 3);
  EXPECT_EQ(raw.ranges.size(), 12u);

  const HostRange* block = find_range(raw, "user_block");
  ASSERT_NE(block, nullptr);
  EXPECT_GE(block->id, kSourceRangeIdBase);
  const HostRange* parent = nullptr;
  for (const HostRange& r : raw.ranges) {
    if (r.id == block->parent_id) parent = &r;
  }
  ASSERT_NE(parent, nullptr);
  EXPECT_EQ(parent->name, "xb::add");  // nested under the profiler's range it was opened in
  EXPECT_LE(parent->start_ns, block->start_ns);
  EXPECT_GE(parent->end_ns, block->end_ns);

  // Every kernel belongs to the innermost range: user_block (first add) or mylib::inner (second).
  const Session s = build_session(raw);
  std::map<std::uint64_t, std::string> name_of;
  for (const HostRange& r : s.ranges) name_of[r.id] = r.name;
  int in_block = 0, in_inner = 0;
  for (const DeviceActivity& a : s.device) {
    if (a.kind != DeviceActivityKind::Kernel) continue;
    const std::string& owner = name_of[a.external_id];
    in_block += owner == "user_block";
    in_inner += owner == "mylib::inner";
  }
  EXPECT_EQ(in_block, 3);
  EXPECT_EQ(in_inner, 3);

  // Table: user_block's CUDA total is its own kernels plus mylib::inner's.
  const Table table = build_table(s);
  const TableRow* block_row = nullptr;
  const TableRow* inner_row = nullptr;
  for (const TableRow& row : table.rows) {
    if (row.name == "user_block") block_row = &row;
    if (row.name == "mylib::inner") inner_row = &row;
  }
  ASSERT_NE(block_row, nullptr);
  ASSERT_NE(inner_row, nullptr);
  EXPECT_EQ(block_row->calls, 3);
  std::int64_t kernel_ns = 0;
  for (const DeviceActivity& a : s.device) kernel_ns += a.kind == DeviceActivityKind::Kernel ? a.duration_ns() : 0;
  EXPECT_EQ(block_row->cuda_total_ns, kernel_ns);
  EXPECT_GT(inner_row->cuda_total_ns, 0);
  EXPECT_LT(inner_row->cuda_total_ns, kernel_ns);

  // The three outputs agree: the validator passes on the written files.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "xb_nvtx_gpu_test";
  EXPECT_EQ(xb::testing::validate_outputs(raw, dir), "");
  for (const char* file : {"full.json", "trace_only.json", "table.json"}) {
    std::ifstream f(dir / file);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("user_block"), std::string::npos) << file;
    EXPECT_NE(text.find("mylib::inner"), std::string::npos) << file;
  }
  if (const char* keep = std::getenv("XB_NVTX_KEEP")) {  // evidence for results/ (tools/lab/h200.sh)
    std::filesystem::copy(dir, keep,
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  }
  std::filesystem::remove_all(dir);
}

// Each session holds CUPTI's one callback subscription only while it records (so that another
// profiler in the process, such as PyTorch's, can subscribe after it): later sessions in the same
// process subscribe again and still see the user's NVTX ranges. Runs after the test above.
TEST_F(GpuTest, EverySessionSubscribesAgainAndSeesUserNvtxRanges) {
  Stream stream;
  auto add = make_workload(Op::Add, DType::BF16, 64, stream.get());
  for (int session = 0; session < 2; ++session) {
    Profiler prof(make_cupti_source());
    prof.start();
    prof.begin_fixture(Schedule{0, 0, 1});
    prof.begin_step();
    nvtxRangePushA("again");
    add->enqueue();
    nvtxRangePop();
    stream.synchronize();
    prof.end_step();
    const RawSession raw = prof.stop();
    const HostRange* again = find_range(raw, "again");
    ASSERT_NE(again, nullptr) << "session " << session;
    const Session s = build_session(raw);
    int owned = 0;
    for (const DeviceActivity& a : s.device)
      owned += a.kind == DeviceActivityKind::Kernel && a.external_id == again->id;
    EXPECT_EQ(owned, 1) << "session " << session;
  }
}

}  // namespace
}  // namespace xb
