// The harness's records in a session (bench/core/fixture_records.h): the GPU's facts and the
// fixtures travel through the profiler as client blocks (metadata "gpu", fixture blocks) and come
// out byte for byte as they did when the profiler knew their types. The golden files in
// tests/data/harness-session/ were written by the profiler before the split (commit 08599239, the
// same session built with its typed RawSession::fixtures and SessionMeta::gpu); README there.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/core/fixture_json.h"
#include "bench/core/fixture_records.h"
#include "bench/core/run_dir.h"
#include "profiler/exporters/outputs.h"
#include "profiler/model/session_io.h"
#include "test_model_session.h"

namespace xb {
namespace {

namespace fs = std::filesystem;
using namespace xb::testing;

// --- golden session: the same code built the golden files with the old typed fields -----------
GpuMeta golden_gpu() {
  GpuMeta g;
  g.source = "nvml";
  g.error = "nvmlDeviceGetEnforcedPowerLimit returned 3; \"quoted\" \xC2\xB5";
  g.uuid = "GPU-12345678-abcd-ef01-2345-6789abcdef01";
  g.pci_bus_id = "0000:19:00.0";
  g.driver_version = "580.159.04";
  g.power_limit_w = 698.125;
  g.sm_clock_max_mhz = 1980;
  g.mem_clock_max_mhz = 3201;
  g.at_start.valid = true;
  g.at_start.sm_clock_mhz = 345;
  g.at_start.mem_clock_mhz = 3201;
  g.at_start.temperature_c = 31;
  g.at_start.power_w = 74.5;
  g.at_start.throttle_reasons = 0x1;
  g.at_end.valid = false;
  g.at_end.error = "nvmlDeviceGetPowerUsage returned 3";
  g.at_end.sm_clock_mhz = 1545;
  g.at_end.power_w = -1;
  g.at_end.throttle_reasons = 0x8000000000000004ull;
  g.at_end.throttled = true;
  return g;
}

std::vector<FixtureInfo> golden_fixtures() {
  FixtureInfo a;  // the sample session's fixture, sampled hot
  a.name = "addmm/bf16/64";
  a.op = "addmm";
  a.dtype = "bf16";
  a.size = 64;
  a.flops = 528384;
  a.bytes = 49152;
  a.verified = true;
  a.max_rel_error = 0.00123;
  a.timing.mode = TimingMode::Hot;
  a.timing.launches_per_sample = 8;
  a.timing.stopping = StoppingSettings{0.005, 10, 0.5, 3};
  a.timing.stop = StopReason::Converged;
  a.timing.sampling_s = 0.51234;
  a.timing.samples_ns = {2687.5, 2690.125, 2701, 1e-3, 3.0e9};
  a.timing.warmed_up = true;
  a.timing.early_slowdown = -0.0012;
  a.timing.gpu_before = golden_gpu().at_start;
  a.timing.gpu_after = golden_gpu().at_end;
  FixtureInfo b;  // cold, graph, no reference, failed
  b.name = "saxpy/fp32/1048576";
  b.op = "saxpy";
  b.dtype = "fp32";
  b.size = 1048576;
  b.flops = 2097152;
  b.bytes = 12582912;
  b.max_rel_error = 0;
  b.has_reference = false;
  b.timing.mode = TimingMode::Cold;
  b.timing.blocking = false;
  b.timing.graph = true;
  b.timing.rotation = 4;
  b.timing.stop = StopReason::TimedOut;
  b.timing.samples_ns = {1234.5};
  b.timing.cold_start = true;
  b.error = "interrupted: \"SIGINT\"\n";
  FixtureInfo c;  // failed before sampling: no timing block
  c.name = "matmul/fp16/8192";
  c.op = "matmul";
  c.dtype = "fp16";
  c.size = 8192;
  c.flops = 1.099511627776e12;
  c.bytes = 402653184;
  c.error = "out of memory";
  return {a, b, c};
}
// --- end of golden session ---------------------------------------------------------------------

/// The sample session with the golden GPU facts and fixtures attached as the harness does.
RawSession golden_session() {
  RawSession s = sample_session();
  s.fixtures.clear();
  attach_gpu_meta(s.meta, golden_gpu());
  for (const FixtureInfo& f : golden_fixtures()) s.fixtures.push_back(fixture_block(f));
  return s;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const fs::path kGolden = fs::path(XB_TEST_DATA_DIR) / "harness-session";

TEST(HarnessRecords, FilesAreByteForByteWhatTheTypedProfilerWrote) {
  const fs::path dir = fs::temp_directory_path() / ("xb_harness_golden-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  write_profile_outputs(golden_session(), dir);
  for (const char* name : {"raw_session.json", "trace_only.json", "full.json", "table.txt", "table.json"}) {
    SCOPED_TRACE(name);
    const std::string expected = read_file(kGolden / name);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(read_file(dir / name), expected);
  }
  // A replay reads the golden session back and writes it again unchanged.
  const RawSession back = read_recorded_session(kGolden / "raw_session.json");
  std::ostringstream again;
  write_raw_session(back, again);
  EXPECT_EQ(again.str(), read_file(kGolden / "raw_session.json"));
  fs::remove_all(dir);
}

TEST(HarnessRecords, ReadBackEqualsWhatWasAttached) {
  const RawSession back = parse_recorded_session([] {
    std::ostringstream o;
    write_raw_session(golden_session(), o);
    return o.str();
  }());
  const std::vector<FixtureInfo> fixtures = read_fixtures(back);
  const std::vector<FixtureInfo> want = golden_fixtures();
  ASSERT_EQ(fixtures.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(nlohmann::json(fixture_json(fixtures[i])), fixture_json(want[i])) << want[i].name;
  }
  EXPECT_FALSE(fixtures[1].has_reference);
  EXPECT_TRUE(fixtures[1].timing.graph);
  EXPECT_FALSE(fixtures[2].timing.mode.has_value());
  EXPECT_EQ(gpu_meta_json(read_gpu_meta(back.meta)), gpu_meta_json(golden_gpu()));
}

TEST(HarnessRecords, TheProfilerSeesOnlyBlocks) {
  // parse_raw_session (the profiler) keeps the harness's parts as text it never reads.
  const RawSession raw = parse_raw_session(read_file(kGolden / "raw_session.json"));
  ASSERT_EQ(raw.meta.metadata.size(), 1u);
  EXPECT_EQ(raw.meta.metadata[0].key, "gpu");
  EXPECT_EQ(nlohmann::json::parse(raw.meta.metadata[0].json), gpu_meta_json(golden_gpu()));
  ASSERT_EQ(raw.fixtures.size(), 3u);
  EXPECT_EQ(raw.fixtures[1].name, "saxpy/fp32/1048576");
  EXPECT_EQ(nlohmann::json::parse(raw.fixtures[1].json), fixture_json(golden_fixtures()[1]));
}

TEST(HarnessRecords, ReaderChecksTheFixtureValues) {
  const auto error_of = [](FixtureInfo f) -> std::string {
    RawSession s = sample_session();
    s.fixtures = {FixtureBlock{f.name, nlohmann::json(fixture_json(f)).dump()}};
    try {
      read_fixtures(s);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(sample_fixture()), "");
  FixtureInfo f = sample_fixture();
  f.flops = -1;
  EXPECT_EQ(error_of(f),
            "raw_session: fixtures[0]: size, flops, bytes and max_rel_error must be non-negative (size >= 1)");
  f = sample_fixture();
  f.size = 0;
  EXPECT_NE(error_of(f).find("non-negative (size >= 1)"), std::string::npos);
  f = golden_fixtures()[0];
  f.timing.rotation = 0;
  EXPECT_NE(error_of(f).find("fixtures[0]: timing launches_per_sample and rotation must be at least 1"),
            std::string::npos);
  f = golden_fixtures()[0];
  f.timing.samples_ns.push_back(0);
  EXPECT_NE(error_of(f).find("fixtures[0]: timing sample 0 ns is not positive"), std::string::npos);
  // A block that is not the harness's shape: the profiler's words for a bad key.
  RawSession s = sample_session();
  s.fixtures = {FixtureBlock{"x", "{\"name\":\"x\"}"}};
  try {
    read_fixtures(s);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "raw_session: fixtures[0]: missing key \"op\"");
  }
}

TEST(HarnessRecords, SyncAndBatchFieldsRoundTripAndAreChecked) {
  const auto read_back = [](const FixtureInfo& f) {
    RawSession s = sample_session();
    s.fixtures = {FixtureBlock{f.name, nlohmann::json(fixture_json(f)).dump()}};
    return read_fixtures(s).at(0);
  };
  FixtureInfo f = golden_fixtures()[0];
  f.timing.sync = "detected";
  f.timing.blocking = false;
  f.timing.sync_declared = true;
  f.timing.sync_found_after = 12;
  f.timing.batch_min_s = 0.5;
  const FixtureInfo back = read_back(f);
  EXPECT_EQ(back.timing.sync, "detected");
  EXPECT_TRUE(back.timing.sync_declared);
  EXPECT_EQ(back.timing.sync_found_after, 12);
  EXPECT_DOUBLE_EQ(back.timing.batch_min_s, 0.5);
  EXPECT_EQ(nlohmann::json(fixture_json(back)), nlohmann::json(fixture_json(f)));
  // Absent keys: the defaults (files written before 2026-12-04).
  const FixtureInfo plain = read_back(golden_fixtures()[0]);
  EXPECT_FALSE(plain.timing.sync_declared);
  EXPECT_EQ(plain.timing.sync_found_after, 0);
  EXPECT_DOUBLE_EQ(plain.timing.batch_min_s, 0);
  // A count of calls without a sync, or a batch length that is not positive: refused.
  nlohmann::json j = fixture_json(golden_fixtures()[0]);
  j["timing"]["sync_found_after"] = 3;
  RawSession s = sample_session();
  s.fixtures = {FixtureBlock{f.name, j.dump()}};
  EXPECT_THROW(read_fixtures(s), InputError);
  j = fixture_json(golden_fixtures()[0]);
  j["timing"]["batch_min_s"] = -0.5;
  s.fixtures = {FixtureBlock{f.name, j.dump()}};
  EXPECT_THROW(read_fixtures(s), InputError);
}

TEST(HarnessRecords, MetadataKeysAreTheClients) {
  SessionMeta meta;
  EXPECT_THROW(set_metadata(meta, "devices", "{}"), std::invalid_argument);      // the profiler's key
  EXPECT_THROW(set_metadata(meta, "traceEvents", "[]"), std::invalid_argument);  // a trace's key
  EXPECT_THROW(set_metadata(meta, "", "1"), std::invalid_argument);
  EXPECT_THROW(set_metadata(meta, "mine", "{not json"), std::invalid_argument);
  set_metadata(meta, "zeta", "1");
  set_metadata(meta, "alpha", "{\"a\":[1,2]}");
  set_metadata(meta, "zeta", "2");  // replaces
  ASSERT_EQ(meta.metadata.size(), 2u);
  EXPECT_EQ(meta.metadata[0].key, "alpha");  // key order, as raw_session.json's "meta" has them
  EXPECT_EQ(meta.metadata[1].json, "2");
  ASSERT_NE(find_metadata(meta, "alpha"), nullptr);
  EXPECT_EQ(find_metadata(meta, "beta"), nullptr);
  // Read back from raw_session.json, another client's block passes through, in the same order.
  RawSession s = sample_session();
  s.meta.metadata = meta.metadata;
  std::ostringstream text;
  write_raw_session(s, text);
  const RawSession back = parse_raw_session(text.str());
  ASSERT_EQ(back.meta.metadata.size(), 2u);
  EXPECT_EQ(back.meta.metadata[0].json, "{\"a\":[1,2]}");
  std::ostringstream again;
  write_raw_session(back, again);
  EXPECT_EQ(again.str(), text.str());
}

}  // namespace
}  // namespace xb
