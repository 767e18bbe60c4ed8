// Hardening on a real GPU (issue 8): many profiler sessions in one process, and dropped CUPTI
// records. Skips without a device.
//
// - ThousandSessionsAgreeAndDoNotGrow: 1000 sessions of a few add launches in one process. Per
//   session the raw records, the table and the two traces (written in memory and read back with
//   the validator's readers) hold the same number of kernels; every kernel starts after its launch
//   call; each session's records lie after the previous session's (no clock going back or
//   records leaking between sessions); resident memory grows by less than 1 MB from session 10
//   to session 1000.
// - DroppedRecordsReachEveryExportAndFailValidation: a 4 KiB CUPTI buffer limit and 100,000 add
//   launches: the drop is counted, written into raw_session.json, trace_only.json, full.json and
//   table.json metadata, and the validator's no_dropped_records check fails saying so.
#include <gtest/gtest.h>

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "gpu_test.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
#include "profiler/adapters/cupti_source.h"
#include "profiler/exporters/table.h"
#include "profiler/exporters/trace_export.h"
#include "profiler/model/event_model.h"
#include "profiler/model/profiler.h"
#include "profiler/model/session_io.h"
#include "validate/table_reader.h"
#include "validate/trace_reader.h"
#include "validate/validator.h"

namespace xb {
namespace {

using xb::testing::GpuTest;
namespace fs = std::filesystem;

/// Resident set size of this process (VmRSS of /proc/self/status), kB; -1 when unreadable.
long vm_rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

/// Resident memory after returning free heap pages to the system, so that only memory still in
/// use counts (a leak is never free, so trimming cannot hide one).
long settled_rss_kb() {
  ::malloc_trim(0);
  return vm_rss_kb();
}

std::size_t count_kernels(const TraceData& t) {
  return static_cast<std::size_t>(
      std::count_if(t.events.begin(), t.events.end(), [](const TraceEvent& e) { return e.cat == TraceCat::Kernel; }));
}

/// Earliest start and latest end of everything with a timestamp in a session.
std::pair<std::int64_t, std::int64_t> time_span(const RawSession& raw) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  for (const RawRecord& r : raw.records) {
    if (r.kind == RawKind::ExternalCorrelation) continue;
    lo = std::min(lo, r.start_ns);
    hi = std::max(hi, r.end_ns);
  }
  for (const HostRange& r : raw.ranges) {
    lo = std::min(lo, r.start_ns);
    hi = std::max(hi, r.end_ns);
  }
  return {lo, hi};
}

TEST_F(GpuTest, ThousandSessionsAgreeAndDoNotGrow) {
  constexpr int kSessions = 1000;
  constexpr int kLaunches = 4;   // add kernels per session
  constexpr int kBaseline = 10;  // memory is measured from this session on
  Stream stream;
  auto add = make_workload(Op::Add, DType::FP32, 64, stream.get());
  add->enqueue();  // loads the kernel before any session
  stream.synchronize();

  const auto t0 = std::chrono::steady_clock::now();
  std::int64_t previous_end = std::numeric_limits<std::int64_t>::min();
  std::int64_t previous_window_end = std::numeric_limits<std::int64_t>::min();
  long rss_baseline_kb = -1;
  for (int s = 1; s <= kSessions; ++s) {
    SCOPED_TRACE("session " + std::to_string(s));
    RawSession raw;
    {
      Profiler prof(make_cupti_source());
      prof.start();
      prof.begin_fixture(Schedule{0, 0, 1});
      ASSERT_NE(prof.begin_step(), 0u);
      {
        ScopedRange range(prof, "xb::add", RangeCategory::CpuOp);
        for (int i = 0; i < kLaunches; ++i) add->enqueue();
      }
      stream.synchronize();
      prof.end_step();
      raw = prof.stop();
    }
    ASSERT_EQ(raw.meta.dropped_records, 0u);

    // The same kernels in the raw records, the event model, the table and both traces.
    const auto raw_kernels = static_cast<std::size_t>(std::count_if(
        raw.records.begin(), raw.records.end(), [](const RawRecord& r) { return r.kind == RawKind::Kernel; }));
    ASSERT_EQ(raw_kernels, static_cast<std::size_t>(kLaunches));
    const Session session = build_session(raw);
    const Table table = build_table(session);
    std::int64_t table_kernels = 0;
    for (const TableRow& row : table.rows) {
      if (row.kind == "kernel") table_kernels += row.calls;
    }
    ASSERT_EQ(table_kernels, kLaunches);
    std::ostringstream trace_only, full, table_json;
    write_trace_only(raw, trace_only);
    write_full_trace(session, full);
    write_table_json(table, raw.meta, table_json);
    NameTable names;
    const TraceData t_only = parse_trace(trace_only.str(), "trace_only.json", names);
    const TraceData t_full = parse_trace(full.str(), "full.json", names);
    ASSERT_EQ(count_kernels(t_only), raw_kernels);
    ASSERT_EQ(count_kernels(t_full), raw_kernels);
    const TableData t_table = parse_table(table_json.str(), "table.json");
    std::int64_t read_kernels = 0;
    for (const TableRowData& row : t_table.rows) {
      if (row.kind == "kernel") read_kernels += row.calls;
    }
    ASSERT_EQ(read_kernels, kLaunches);

    // Every kernel starts after its launch call, inside the session's window.
    for (const DeviceActivity& a : session.device) {
      ASSERT_GE(a.launch, 0) << a.name << ": no launch call";
      ASSERT_GE(a.start_ns, session.api[static_cast<std::size_t>(a.launch)].start_ns) << a.name;
      ASSERT_GE(a.start_ns, raw.meta.window_start_ns) << a.name;
      ASSERT_LE(a.end_ns, raw.meta.window_end_ns) << a.name;
    }

    // No drift or leak between sessions: this session's records all lie after the previous one's.
    const auto [lo, hi] = time_span(raw);
    ASSERT_GT(lo, previous_end) << "session " << s << " has a record at " << lo
                                << " ns, before the previous session's last at " << previous_end << " ns";
    ASSERT_GT(raw.meta.window_start_ns, previous_window_end) << "recording windows overlap";
    ASSERT_GE(lo, raw.meta.window_start_ns);
    ASSERT_LE(hi, raw.meta.window_end_ns);
    previous_end = hi;
    previous_window_end = raw.meta.window_end_ns;

    if (s == kBaseline) rss_baseline_kb = settled_rss_kb();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long rss_end_kb = settled_rss_kb();
  ASSERT_GT(rss_baseline_kb, 0) << "cannot read VmRSS from /proc/self/status";
  std::cout << "[          ] " << kSessions << " sessions in " << seconds << " s; VmRSS after session " << kBaseline
            << ": " << rss_baseline_kb << " kB, after session " << kSessions << ": " << rss_end_kb << " kB ("
            << (rss_end_kb - rss_baseline_kb) << " kB)\n";
  EXPECT_LT(rss_end_kb - rss_baseline_kb, 1024)
      << "resident memory grew by 1 MB or more over " << (kSessions - kBaseline) << " sessions";
  EXPECT_LT(seconds, 60.0) << "1000 sessions should take well under a minute";
}

TEST_F(GpuTest, DroppedRecordsReachEveryExportAndFailValidation) {
  constexpr int kLaunches = 100000;
  Stream stream;
  auto add = make_workload(Op::Add, DType::FP32, 64, stream.get());
  add->enqueue();
  stream.synchronize();
  RawSession raw;
  {
    // One 4 KiB buffer at a time: a few dozen records fit, CUPTI must drop the rest and count them.
    Profiler prof(make_cupti_source(4096, 1, kCuptiAllKinds, 0));
    prof.start();
    prof.begin_fixture(Schedule{0, 0, 1});
    prof.begin_step();
    {
      ScopedRange range(prof, "xb::add", RangeCategory::CpuOp);
      for (int i = 0; i < kLaunches; ++i) add->enqueue();
    }
    stream.synchronize();
    prof.end_step();
    raw = prof.stop();
  }
  const std::uint64_t dropped = raw.meta.dropped_records;
  ASSERT_GT(dropped, 0u) << "CUPTI dropped nothing with a 4 KiB buffer limit";
  std::cout << "[          ] " << kLaunches << " launches: " << raw.records.size() << " records kept, " << dropped
            << " dropped\n";

  const fs::path dir = fs::temp_directory_path() / ("xb_gpu_dropped-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Session session = build_session(raw);
  const Table table = build_table(session);
  auto write = [&](const char* name, auto&& fn) {
    std::ofstream out(dir / name, std::ios::binary);
    fn(out);
    ASSERT_TRUE(out.good()) << name;
  };
  write("raw_session.json", [&](std::ostream& o) { write_raw_session(raw, o); });
  write("trace_only.json", [&](std::ostream& o) { write_trace_only(raw, o); });
  write("full.json", [&](std::ostream& o) { write_full_trace(session, o); });
  write("table.json", [&](std::ostream& o) { write_table_json(table, raw.meta, o); });

  // Every export carries the count.
  EXPECT_EQ(read_raw_session(dir / "raw_session.json").meta.dropped_records, dropped);
  NameTable names;
  for (const char* trace : {"trace_only.json", "full.json"}) {
    const TraceData t = read_trace(dir / trace, names);
    ASSERT_TRUE(t.dropped_records.has_value()) << trace;
    EXPECT_EQ(*t.dropped_records, dropped) << trace;
  }
  const TableData t = read_table(dir / "table.json");
  ASSERT_TRUE(t.meta.is_object());
  EXPECT_EQ(t.meta.value("dropped_records", std::uint64_t{0}), dropped);

  // The validator fails, saying why.
  ValidateInputs in;
  in.traces = {dir / "full.json", dir / "trace_only.json"};
  in.table = dir / "table.json";
  const ValidationReport report = validate_files(in);
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.status_of(checks::kNoDroppedRecords), CheckStatus::Failed);
  bool says_so = false;
  for (const CheckResult* r : report.results_of(checks::kNoDroppedRecords)) {
    if (r->status == CheckStatus::Failed && r->message.find("dropped") != std::string::npos &&
        r->found == std::to_string(dropped)) {
      says_so = true;
    }
  }
  EXPECT_TRUE(says_so) << "no no_dropped_records failure naming the count " << dropped;
  std::ostringstream summary;
  print_summary(report, summary);
  EXPECT_NE(summary.str().find("dropped"), std::string::npos) << summary.str();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace xb
