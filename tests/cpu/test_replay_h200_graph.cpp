// A CUDA-graph session recorded on the H200 (bench --op add --size 64 --graph; results/sessions/
// h200-graph/README.md) replayed without a GPU: every kernel belongs to its step's one
// cudaGraphLaunch and to the op range around it, the table and both exports hold steps x calls
// kernels, CUPTI's graph node ids survive, and the replayed folder validates.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/core/fixture_records.h"
#include "bench/core/run_dir.h"
#include "profiler/model/event_model.h"
#include "profiler/model/session_io.h"

namespace xb {
namespace {

namespace fs = std::filesystem;

const fs::path kGraphSession = fs::path(XB_RESULTS_DIR) / "sessions" / "h200-graph" / "raw_session.json";

TEST(ReplayH200Graph, EveryKernelBelongsToItsStepsGraphLaunchAndTheFolderValidates) {
  const RawSession raw = read_recorded_session(kGraphSession);
  ASSERT_EQ(raw.fixtures.size(), 1u);
  EXPECT_TRUE(read_fixtures(raw)[0].timing.graph);
  ASSERT_EQ(raw.event_timings.size(), 3u);
  std::int64_t calls = 0;
  for (const StepTiming& t : raw.event_timings) calls += t.launches;

  const Session s = build_session(raw);
  std::map<std::uint64_t, std::string> range_name;
  for (const HostRange& r : s.ranges) range_name[r.id] = r.name;
  std::set<std::uint32_t> graph_launches;
  std::int64_t kernels = 0;
  for (const DeviceActivity& a : s.device) {
    if (a.kind != DeviceActivityKind::Kernel) continue;
    ++kernels;
    ASSERT_GE(a.launch, 0) << a.name;
    const ApiCall& launch = s.api[static_cast<std::size_t>(a.launch)];
    EXPECT_EQ(launch.name, "cudaGraphLaunch");
    graph_launches.insert(launch.correlation_id);
    EXPECT_EQ(range_name[a.external_id], "xb::add");
    ASSERT_NE(a.raw, nullptr);
    EXPECT_NE(a.raw->graph_node_id, 0u);
  }
  EXPECT_EQ(kernels, calls) << "steps x calls per step";
  EXPECT_EQ(graph_launches.size(), raw.event_timings.size()) << "one graph launch per recorded step";

  const fs::path dir = fs::temp_directory_path() / "xb_replay_h200_graph";
  fs::remove_all(dir);
  std::ostringstream log;
  ASSERT_EQ(replay_session(kGraphSession, dir, log), 0) << log.str();
  for (const char* trace : {"full.json", "trace_only.json"}) {
    nlohmann::json doc;
    std::ifstream(dir / trace) >> doc;
    std::int64_t in_trace = 0, with_node = 0;
    for (const auto& e : doc.at("traceEvents")) {
      if (e.value("cat", "") != "kernel") continue;
      ++in_trace;
      if (e.contains("args") && e.at("args").contains("graph node id")) ++with_node;
    }
    EXPECT_EQ(in_trace, calls) << trace;
    EXPECT_EQ(with_node, in_trace) << trace;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace xb
