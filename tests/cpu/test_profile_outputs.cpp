// write_profile_outputs (profiler/exporters/outputs.h), the one call a user of the installed library makes
// after Profiler::stop(), writes the same table and traces as bench (bench/core/run_dir.h) for the
// recorded H200 session, plus a raw_session.json that reads back to the same session.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "bench/core/run_dir.h"
#include "profiler/exporters/outputs.h"
#include "profiler/model/session_io.h"

namespace xb {
namespace {

namespace fs = std::filesystem;

std::string text_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(ProfileOutputs, SameFilesAsBenchForTheRecordedSession) {
  const RawSession raw =
      read_raw_session(fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small-2026-11-29" / "raw_session.json");
  const fs::path base = fs::temp_directory_path() / ("xb-profile-outputs-" + std::to_string(::getpid()));
  fs::remove_all(base);
  const fs::path ours = base / "nested" / "out";  // created, parents included
  write_profile_outputs(raw, ours);
  fs::create_directories(base / "bench");
  write_run_outputs(raw, base / "bench");
  for (const char* name : {"table.txt", "table.json", "trace_only.json", "full.json", "raw_session.json"}) {
    ASSERT_TRUE(fs::is_regular_file(ours / name)) << name;
    EXPECT_EQ(text_of(ours / name), text_of(base / "bench" / name)) << name;
  }
  EXPECT_FALSE(fs::exists(ours / "events.json")) << "events.json is bench's (fixtures and cudaEvent times)";
  const RawSession back = read_raw_session(ours / "raw_session.json");
  EXPECT_EQ(back.records.size(), raw.records.size());
  EXPECT_EQ(back.ranges.size(), raw.ranges.size());
  fs::remove_all(base);
}

TEST(ProfileOutputs, AnInconsistentSessionWritesNothing) {
  RawSession raw;
  HostRange r;
  r.id = 1;
  r.parent_id = 7;  // no such range
  r.name = "orphan";
  r.start_ns = 10;
  r.end_ns = 5;  // ends before it starts
  raw.ranges.push_back(r);
  const fs::path dir = fs::temp_directory_path() / ("xb-profile-outputs-bad-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  EXPECT_THROW(write_profile_outputs(raw, dir), std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace xb
