// meta.gpu (the session's NVML facts and clocks at start and end, the harness's metadata block
// "gpu": bench/core/fixture_records.h): raw_session.json round trip, strict reading when present,
// sessions recorded before it still load, and the traces' top-level "gpu" header.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>

#include "bench/core/fixture_json.h"
#include "bench/core/fixture_records.h"
#include "profiler/exporters/trace_export.h"
#include "profiler/model/event_model.h"
#include "profiler/model/session_io.h"
#include "test_model_session.h"

namespace xb {
namespace {

using namespace xb::testing;
using nlohmann::json;

GpuMeta sample_gpu() {
  GpuMeta g;
  g.source = "nvml";
  g.error = "nvmlDeviceGetEnforcedPowerLimit returned 3; \"quoted\"";
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
  g.at_start.throttled = false;
  g.at_end.valid = false;
  g.at_end.error = "nvmlDeviceGetPowerUsage returned 3";
  g.at_end.sm_clock_mhz = 1545;
  g.at_end.mem_clock_mhz = 3201;
  g.at_end.temperature_c = 58;
  g.at_end.power_w = -1;
  g.at_end.throttle_reasons = 0x8000000000000004ull;  // an unknown high bit beside SwPowerCap
  g.at_end.throttled = true;
  return g;
}

RawSession session_with_gpu() {
  RawSession s = sample_session();
  attach_gpu_meta(s.meta, sample_gpu());
  return s;
}

std::string to_text(const RawSession& s) {
  std::ostringstream out;
  write_raw_session(s, out);
  return out.str();
}

void expect_equal(const GpuClockSample& a, const GpuClockSample& b) {
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.sm_clock_mhz, b.sm_clock_mhz);
  EXPECT_EQ(a.mem_clock_mhz, b.mem_clock_mhz);
  EXPECT_EQ(a.temperature_c, b.temperature_c);
  EXPECT_EQ(a.power_w, b.power_w);
  EXPECT_EQ(a.throttle_reasons, b.throttle_reasons);
  EXPECT_EQ(a.throttled, b.throttled);
}

/// The session text with meta.gpu changed by `edit`.
std::string with_gpu(const std::function<void(json&)>& edit) {
  json j = json::parse(to_text(session_with_gpu()));
  edit(j.at("meta").at("gpu"));
  return j.dump();
}

std::string parse_error(const std::string& text) {
  try {
    parse_recorded_session(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelSessionGpuMeta, RoundTrip) {
  const RawSession s = session_with_gpu();
  const std::string text = to_text(s);
  const RawSession back = parse_recorded_session(text);
  const GpuMeta a = read_gpu_meta(back.meta);
  const GpuMeta b = sample_gpu();
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.uuid, b.uuid);
  EXPECT_EQ(a.pci_bus_id, b.pci_bus_id);
  EXPECT_EQ(a.driver_version, b.driver_version);
  EXPECT_EQ(a.power_limit_w, b.power_limit_w);
  EXPECT_EQ(a.sm_clock_max_mhz, b.sm_clock_max_mhz);
  EXPECT_EQ(a.mem_clock_max_mhz, b.mem_clock_max_mhz);
  {
    SCOPED_TRACE("at_start");
    expect_equal(a.at_start, b.at_start);
  }
  {
    SCOPED_TRACE("at_end");
    expect_equal(a.at_end, b.at_end);
  }
  EXPECT_EQ(to_text(back), text);
}

TEST(ModelSessionGpuMeta, DefaultsRoundTrip) {
  // A session whose bench had no NVML reads back as written: -1 values, "not recorded".
  RawSession s = sample_session();
  attach_gpu_meta(s.meta, GpuMeta{});
  EXPECT_EQ(read_gpu_meta(s.meta).source, "not recorded");
  const RawSession back = parse_recorded_session(to_text(s));
  const GpuMeta g = read_gpu_meta(back.meta);
  EXPECT_EQ(g.source, "not recorded");
  EXPECT_EQ(g.power_limit_w, -1);
  EXPECT_EQ(g.sm_clock_max_mhz, -1);
  EXPECT_FALSE(g.at_start.valid);
  EXPECT_EQ(to_text(back), to_text(s));
}

TEST(ModelSessionGpuMeta, OptionalOnRead) {
  json j = json::parse(to_text(session_with_gpu()));
  j.at("meta").erase("gpu");
  EXPECT_EQ(parse_raw_session(j.dump()).meta.metadata.size(), 0u);  // the profiler's view: no block
  const RawSession back = parse_recorded_session(j.dump());
  const GpuMeta g = read_gpu_meta(back.meta);
  EXPECT_EQ(g.source, "not recorded");
  EXPECT_EQ(g.uuid, "");
  EXPECT_EQ(g.power_limit_w, -1);
  // What bench --replay writes: the "not recorded" block, as bench's own runs without NVML.
  ASSERT_NE(find_metadata(back.meta, "gpu"), nullptr);
  EXPECT_EQ(json::parse(find_metadata(back.meta, "gpu")->json), gpu_meta_json(GpuMeta{}));
}

TEST(ModelSessionGpuMeta, RecordedH200SessionCarriesNvmlFacts) {
  const auto path = std::filesystem::path(XB_RESULTS_DIR) / "sessions" / "h200-small-2026-11-29" / "raw_session.json";
  const RawSession s = read_recorded_session(path);
  EXPECT_FALSE(s.records.empty());
  const GpuMeta g = read_gpu_meta(s.meta);
  EXPECT_EQ(g.source, "nvml");
  EXPECT_EQ(g.uuid.rfind("GPU-", 0), 0u) << g.uuid;
  EXPECT_GT(g.power_limit_w, 100);
  EXPECT_TRUE(g.at_start.valid);
  EXPECT_GT(g.at_start.sm_clock_mhz, 0);
}

TEST(ModelSessionGpuMeta, StrictWhenPresent) {
  EXPECT_NE(parse_error(with_gpu([](json& g) { g.erase("uuid"); })).find("meta.gpu: missing key \"uuid\""),
            std::string::npos);
  EXPECT_NE(parse_error(with_gpu([](json& g) { g["power_limit_w"] = "700"; })).find("meta.gpu"), std::string::npos);
  EXPECT_NE(parse_error(with_gpu([](json& g) { g["sm_clock_max_mhz"] = 1.5; })).find("sm_clock_max_mhz"),
            std::string::npos);
  EXPECT_NE(parse_error(with_gpu([](json& g) { g.erase("at_end"); })).find("at_end"), std::string::npos);
  EXPECT_NE(parse_error(with_gpu([](json& g) { g["at_start"].erase("throttled"); })).find("meta.gpu.at_start"),
            std::string::npos);
  EXPECT_NE(parse_error(with_gpu([](json& g) { g["at_end"]["throttle_reasons"] = -1; })).find("throttle_reasons"),
            std::string::npos);
  json j = json::parse(to_text(session_with_gpu()));
  j.at("meta")["gpu"] = json::array();
  EXPECT_NE(parse_error(j.dump()).find("raw_session: meta: \"gpu\" is not an object"), std::string::npos);
}

TEST(ModelSessionGpuMeta, WriterRefusesNaN) {
  SessionMeta meta;
  GpuMeta g = sample_gpu();
  g.power_limit_w = std::nan("");
  EXPECT_THROW(attach_gpu_meta(meta, g), std::invalid_argument);
  g = sample_gpu();
  g.at_end.power_w = INFINITY;
  EXPECT_THROW(attach_gpu_meta(meta, g), std::invalid_argument);
  EXPECT_TRUE(meta.metadata.empty());
}

TEST(ModelSessionGpuMeta, TracesCarryItInTheirHeader) {
  const RawSession raw = session_with_gpu();
  const json expected = gpu_meta_json(sample_gpu());
  std::ostringstream trace_only, full;
  write_trace_only(raw, trace_only);
  write_full_trace(build_session(raw), full);
  for (const std::string& text : {trace_only.str(), full.str()}) {
    const json t = json::parse(text);
    EXPECT_EQ(t.at("gpu"), expected);
    EXPECT_EQ(t.at("gpu").at("uuid"), "GPU-12345678-abcd-ef01-2345-6789abcdef01");
    EXPECT_EQ(t.at("gpu").at("at_end").at("throttle_reasons"), 0x8000000000000004ull);
    EXPECT_EQ(t.at("cupti_version"), 130001);  // Kineto's version keys stay beside it
    // The header precedes the events, next to the version keys.
    EXPECT_LT(text.find("\"gpu\": "), text.find("\"traceEvents\""));
    EXPECT_LT(text.find("\"cupti_version\""), text.find("\"gpu\": "));
  }
}

}  // namespace
}  // namespace xb
