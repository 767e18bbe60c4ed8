// Replay of a session recorded on the H200 by tests/nvtx/test_nvtx_gpu.cpp (results/sessions/
// h200-nvtx): user NVTX ranges ("user_block" in the default domain, "mylib::inner" in a domain of
// its own) recorded through CUPTI, inside crossbench's ProfilerStep and xb::add ranges. The event
// model, the table and both exports must attribute every kernel to its innermost NVTX range, and
// the validator must pass on the regenerated files.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "../common/validate_outputs.h"
#include "profiler/exporters/table.h"
#include "profiler/model/event_model.h"
#include "profiler/model/profiler.h"
#include "profiler/model/session_io.h"

namespace xb {
namespace {

namespace fs = std::filesystem;

RawSession recorded() {
  return read_raw_session(fs::path(XB_RESULTS_DIR) / "sessions" / "h200-nvtx" / "raw_session.json");
}

TEST(NvtxSession, UserRangesNestUnderTheProfilersRangesAndOwnTheirKernels) {
  const RawSession raw = recorded();
  const Session s = build_session(raw);
  std::map<std::uint64_t, const HostRange*> by_id;
  for (const HostRange& r : s.ranges) by_id[r.id] = &r;
  int blocks = 0, inners = 0;
  for (const HostRange& r : s.ranges) {
    if (r.name != "user_block" && r.name != "mylib::inner") {
      EXPECT_LT(r.id, kSourceRangeIdBase) << r.name;  // crossbench's own: never recorded twice
      continue;
    }
    EXPECT_GE(r.id, kSourceRangeIdBase) << r.name;
    ASSERT_TRUE(by_id.count(r.parent_id)) << r.name;
    const HostRange& parent = *by_id[r.parent_id];
    EXPECT_EQ(parent.name, r.name == "user_block" ? "xb::add" : "user_block");
    EXPECT_LE(parent.start_ns, r.start_ns);
    EXPECT_GE(parent.end_ns, r.end_ns);
    blocks += r.name == "user_block";
    inners += r.name == "mylib::inner";
  }
  EXPECT_EQ(blocks, 3);
  EXPECT_EQ(inners, 3);
  int kernels = 0;
  std::map<std::string, int> owner_count;
  for (const DeviceActivity& a : s.device) {
    if (a.kind != DeviceActivityKind::Kernel) continue;
    ++kernels;
    ASSERT_TRUE(by_id.count(a.external_id)) << a.name;
    ++owner_count[by_id[a.external_id]->name];
  }
  EXPECT_EQ(kernels, 6);
  EXPECT_EQ(owner_count["user_block"], 3);
  EXPECT_EQ(owner_count["mylib::inner"], 3);

  const Table table = build_table(s);
  std::map<std::string, const TableRow*> row;
  for (const TableRow& r : table.rows) row[r.name] = &r;
  ASSERT_TRUE(row.count("user_block") && row.count("mylib::inner") && row.count("xb::add"));
  EXPECT_EQ(row["user_block"]->calls, 3);
  EXPECT_EQ(row["user_block"]->cuda_total_ns, table.self_cuda_total_ns);  // all six kernels
  EXPECT_EQ(row["xb::add"]->cuda_total_ns, table.self_cuda_total_ns);
  EXPECT_EQ(row["user_block"]->self_cuda_ns + row["mylib::inner"]->cuda_total_ns, table.self_cuda_total_ns);
}

TEST(NvtxSession, RegeneratedFilesValidate) {
  const RawSession raw = recorded();
  const fs::path dir = fs::temp_directory_path() / ("xb-nvtx-session-" + std::to_string(::getpid()));
  EXPECT_EQ(testing::validate_outputs(raw, dir), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace xb
