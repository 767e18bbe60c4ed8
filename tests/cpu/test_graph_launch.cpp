// CUDA graph launches without a GPU (issue 17): a fake source emits, per step, one
// cudaGraphLaunch API record and the graph's N kernels under its one correlation id, K times.
// The event model, the table and both exports must give K x N kernels, every one attributed to
// its launch and to the op range around it, with one ac2g "s" per launch and one "f" per kernel,
// the graph node ids kept, and the written folder must validate. A duplicated kernel of an
// ordinary launch must still fail (tests/cpu/test_validate_faults.cpp keeps that mutation too).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../common/fake_activity_source.h"
#include "../common/validate_outputs.h"
#include "bench/core/fixture_records.h"
#include "profiler/exporters/table.h"
#include "profiler/model/event_model.h"
#include "profiler/model/profiler.h"
#include "profiler/model/session_io.h"

namespace xb {
namespace {

using test::FakeSource;

constexpr int kReplays = 3;  // K
constexpr int kNodes = 4;    // N

/// K steps, each: annotation > op range > one cudaGraphLaunch of an N-kernel graph.
RawSession graph_session(FakeSource** out_src = nullptr) {
  auto owned = std::make_unique<FakeSource>();
  FakeSource* src = owned.get();
  if (out_src != nullptr) *out_src = src;
  Profiler prof(std::move(owned));
  prof.start();
  prof.begin_fixture(Schedule{0, 0, kReplays});
  FixtureInfo info;
  info.name = "add/fp32/64";
  info.op = "add";
  info.dtype = "fp32";
  info.size = 64;
  prof.add_fixture(fixture_block(info));
  for (int i = 0; i < kReplays; ++i) {
    const std::uint64_t step = prof.begin_step();
    src->clock += 10;
    {
      ScopedRange fixture(prof, "add/fp32/64", RangeCategory::UserAnnotation);
      ScopedRange op(prof, "xb::add", RangeCategory::CpuOp);
      src->graph_launch("add_kernel", kNodes, 7);
    }
    src->clock += 500;  // every kernel ends inside the step
    StepTiming t;
    t.fixture = "add/fp32/64";
    t.step = prof.step_number();
    t.range_id = step;
    t.event_ns = 400;
    t.launches = kNodes;
    prof.add_step_timing(t);
    prof.end_step();
  }
  return prof.stop();
}

TEST(GraphLaunch, EveryKernelOfAReplayBelongsToItsLaunchAndItsRanges) {
  const RawSession raw = graph_session();
  const Session s = build_session(raw);
  ASSERT_EQ(s.api.size(), static_cast<std::size_t>(kReplays));
  ASSERT_EQ(s.device.size(), static_cast<std::size_t>(kReplays * kNodes));
  std::map<std::uint64_t, std::string> range_name;
  for (const HostRange& r : s.ranges) range_name[r.id] = r.name;
  for (const DeviceActivity& a : s.device) {
    ASSERT_GE(a.launch, 0);
    const ApiCall& launch = s.api[static_cast<std::size_t>(a.launch)];
    EXPECT_EQ(launch.name, "cudaGraphLaunch");
    EXPECT_EQ(launch.correlation_id, a.correlation_id);
    EXPECT_EQ(range_name[a.external_id], "xb::add");
    ASSERT_NE(a.raw, nullptr);
    EXPECT_GE(a.raw->graph_node_id, 1u);
    EXPECT_EQ(a.raw->graph_id, 7u);
  }
  for (const ApiCall& c : s.api) EXPECT_EQ(c.device_work, kNodes);

  const Table table = build_table(s);
  std::map<std::string, const TableRow*> row;  // key: kind + " " + name
  for (const TableRow& r : table.rows) row[r.kind + " " + r.name] = &r;
  ASSERT_TRUE(row.count("kernel add_kernel"));
  const TableRow& kernel = *row["kernel add_kernel"];
  EXPECT_EQ(kernel.calls, kReplays * kNodes);
  ASSERT_TRUE(row.count("cpu_op xb::add"));
  const TableRow& op = *row["cpu_op xb::add"];
  EXPECT_EQ(op.calls, kReplays);
  // The op owns all its graph's kernels, counted once.
  EXPECT_EQ(op.cuda_total_ns, kernel.cuda_total_ns);
  EXPECT_EQ(kernel.cuda_total_ns, std::int64_t{kReplays * kNodes * 50});
}

TEST(GraphLaunch, BothExportsHoldEveryKernelWithOneFlowStartPerLaunchAndValidate) {
  const RawSession raw = graph_session();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "xb_test_graph_launch";
  EXPECT_EQ(testing::validate_outputs(raw, dir), "");
  for (const char* file : {"full.json", "trace_only.json"}) {
    SCOPED_TRACE(file);
    std::ifstream in(dir / file);
    const nlohmann::json trace = nlohmann::json::parse(in);
    int kernels = 0, starts = 0, ends = 0;
    std::set<std::uint64_t> nodes;
    for (const nlohmann::json& e : trace.at("traceEvents")) {
      if (e.value("cat", "") == "kernel") {
        ++kernels;
        ASSERT_TRUE(e.at("args").contains("graph node id"));
        nodes.insert(e.at("args").at("graph node id").get<std::uint64_t>());
        EXPECT_EQ(e.at("args").at("graph id"), 7);
      }
      if (e.value("cat", "") == "ac2g") (e.at("ph") == "s" ? starts : ends) += 1;
    }
    EXPECT_EQ(kernels, kReplays * kNodes);
    EXPECT_EQ(nodes.size(), static_cast<std::size_t>(kNodes));
    if (std::string(file) == "full.json") {
      EXPECT_EQ(starts, kReplays);
      EXPECT_EQ(ends, kReplays * kNodes);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(GraphLaunch, GraphIdsRoundTripThroughRawSessionAndOldSessionsReadZero) {
  const RawSession raw = graph_session();
  std::ostringstream text;
  write_raw_session(raw, text);
  EXPECT_NE(text.str().find("\"graph_node_id\":"), std::string::npos);
  const RawSession back = parse_raw_session(text.str());
  ASSERT_EQ(back.records.size(), raw.records.size());
  for (std::size_t i = 0; i < raw.records.size(); ++i) {
    EXPECT_EQ(back.records[i].graph_node_id, raw.records[i].graph_node_id);
    EXPECT_EQ(back.records[i].graph_id, raw.records[i].graph_id);
  }
  // An eager kernel writes neither key, and a session without them reads 0.
  RawSession eager = raw;
  for (RawRecord& r : eager.records) r.graph_node_id = r.graph_id = 0;
  std::ostringstream eager_text;
  write_raw_session(eager, eager_text);
  EXPECT_EQ(eager_text.str().find("graph_"), std::string::npos);
  for (const RawRecord& r : parse_raw_session(eager_text.str()).records) EXPECT_EQ(r.graph_node_id, 0u);
}

/// The graph session with every kernel node after the first of each replay moved to start
/// `overlap_ns` before its predecessor ends (CUPTI's timestamps of consecutive graph nodes, as seen
/// on the H200).
RawSession overlapping_graph_session(std::int64_t overlap_ns) {
  RawSession raw = graph_session();
  std::map<std::uint32_t, std::int64_t> last_end;  // per correlation id
  for (RawRecord& r : raw.records) {
    if (r.kind != RawKind::Kernel) continue;
    auto it = last_end.find(r.correlation_id);
    if (it != last_end.end()) {
      const std::int64_t d = r.end_ns - r.start_ns;
      r.start_ns = it->second - overlap_ns;
      r.end_ns = r.start_ns + d;
    }
    last_end[r.correlation_id] = r.end_ns;
  }
  return raw;
}

TEST(GraphLaunch, NodesOfOneReplayMayOverlapByTensOfNanosecondsButNoMore) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "xb_test_graph_overlap";
  // 40 ns, as the H200 mostly shows (32 to 96 ns; the fake kernels last 50 ns, so larger
  // overlaps inside the allowance are not expressible here): validates.
  EXPECT_EQ(testing::validate_outputs(overlapping_graph_session(40), dir), "");
  // 5 us: not a timestamp effect; the stream check fails.
  const std::string summary = testing::validate_outputs(overlapping_graph_session(5000), dir);
  EXPECT_NE(summary.find("stream_overlap"), std::string::npos) << summary;
  std::filesystem::remove_all(dir);
}

/// One step whose op range makes `launches` ordinary launches (cudaLaunchKernel) of one kernel each.
RawSession eager_session(int launches) {
  auto owned = std::make_unique<FakeSource>();
  FakeSource* src = owned.get();
  Profiler prof(std::move(owned));
  prof.start();
  prof.begin_fixture(Schedule{0, 0, 1});
  prof.begin_step();
  {
    ScopedRange op(prof, "xb::add", RangeCategory::CpuOp);
    for (int i = 0; i < launches; ++i) src->launch("add_kernel");
  }
  src->clock += 500;
  prof.end_step();
  return prof.stop();
}

TEST(GraphLaunch, TwoOrdinaryLaunchesMayNotOverlapAtAll) {
  RawSession raw = eager_session(2);
  // The second kernel starts 40 ns before the first ends: fine inside one graph, wrong here.
  std::vector<RawRecord*> kernels;
  for (RawRecord& r : raw.records) {
    if (r.kind == RawKind::Kernel) kernels.push_back(&r);
  }
  ASSERT_EQ(kernels.size(), 2u);
  const std::int64_t d = kernels[1]->end_ns - kernels[1]->start_ns;
  kernels[1]->start_ns = kernels[0]->end_ns - 40;
  kernels[1]->end_ns = kernels[1]->start_ns + d;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "xb_test_eager_overlap";
  const std::string summary = testing::validate_outputs(raw, dir);
  EXPECT_NE(summary.find("stream_overlap"), std::string::npos) << summary;
  std::filesystem::remove_all(dir);
}

TEST(GraphLaunch, ADuplicatedKernelOfAnOrdinaryLaunchStillFails) {
  RawSession raw = eager_session(1);
  // A second kernel with the cudaLaunchKernel's correlation id: only a graph launch may own several.
  for (std::size_t i = 0; i < raw.records.size(); ++i) {
    if (raw.records[i].kind != RawKind::Kernel) continue;
    RawRecord dup = raw.records[i];
    dup.start_ns = dup.end_ns + 10;
    dup.end_ns = dup.start_ns + 50;
    raw.records.push_back(dup);
    break;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "xb_test_graph_launch_dup";
  const std::string summary = testing::validate_outputs(raw, dir);
  EXPECT_NE(summary.find("attribution"), std::string::npos) << summary;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace xb
