// Both Chrome trace exporters: output parses back and holds the expected events.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/units.h"
#include "profiler/exporters/trace_export.h"
#include "test_model_session.h"

namespace xb {
namespace {

using namespace xb::testing;
using nlohmann::json;

json trace_only_json(const RawSession& raw) {
  std::ostringstream out;
  write_trace_only(raw, out);
  return json::parse(out.str());
}

json full_json(const Session& s) {
  std::ostringstream out;
  write_full_trace(s, out);
  return json::parse(out.str());
}

/// Absolute ns of a trace timestamp.
std::int64_t abs_ns(const json& trace, const json& ts) {
  return trace.at("baseTimeNanoseconds").get<std::int64_t>() + us_to_ns(ts.get<double>());
}

std::vector<json> events(const json& trace, const std::string& ph, const std::string& cat = "") {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  }
  return out;
}

/// name -> sorted list of durations (ns) of device X events.
std::map<std::string, std::vector<std::int64_t>> device_durations(const json& trace) {
  std::map<std::string, std::vector<std::int64_t>> out;
  for (const char* cat : {"kernel", "gpu_memcpy", "gpu_memset"}) {
    for (const json& e : events(trace, "X", cat)) {
      out[e.at("name").get<std::string>()].push_back(us_to_ns(e.at("dur").get<double>()));
    }
  }
  for (auto& [name, list] : out) std::sort(list.begin(), list.end());
  return out;
}

RawSession session_with_awkward_names() {
  RawSession raw = sample_session();
  raw.records.push_back(ext(40, 2));
  raw.records.push_back(api(RawKind::Runtime, "cudaLaunchKernel", 211, 40, 60000, 61000));
  raw.records.push_back(device(RawKind::Kernel, 40, 62000, 62100, "my\"kernel<1, 2>\\ \x01 \xC2\xB5s \xFF"));
  raw.ranges[2].name = "xb::addmm \"quoted\" <a, b>";
  return raw;
}

TEST(ModelTraceExport, TraceOnlyHoldsRawRecords) {
  const RawSession raw = sample_session();
  const json t = trace_only_json(raw);
  EXPECT_EQ(t.at("schemaVersion"), 1);
  EXPECT_EQ(t.at("crossbench").at("format"), "trace_only");
  EXPECT_EQ(t.at("displayTimeUnit"), "ms");
  EXPECT_EQ(t.at("baseTimeNanoseconds"), kBase);
  EXPECT_FALSE(t.contains("distributedInfo"));
  ASSERT_EQ(t.at("deviceProperties").size(), 1u);
  const json& dev = t["deviceProperties"][0];
  EXPECT_EQ(dev.at("name"), "NVIDIA H200");
  EXPECT_EQ(dev.at("totalGlobalMem"), 150109880320ull);
  EXPECT_EQ(dev.at("sharedMemPerBlockOptin"), 232448);
  EXPECT_EQ(dev.at("numSms"), 132);

  EXPECT_EQ(events(t, "X", "kernel").size(), 3u);
  EXPECT_EQ(events(t, "X", "gpu_memcpy").size(), 1u);
  EXPECT_EQ(events(t, "X", "gpu_memset").size(), 1u);
  EXPECT_EQ(events(t, "X", "cuda_runtime").size(), 5u);
  EXPECT_EQ(events(t, "X", "cuda_driver").size(), 1u);
  EXPECT_EQ(events(t, "X", "cuda_sync").size(), 1u);
  EXPECT_EQ(events(t, "X", "user_annotation").size(), 2u);
  EXPECT_EQ(events(t, "X", "cpu_op").size(), 1u);
  EXPECT_EQ(events(t, "X", "gpu_user_annotation").size(), 0u);
  EXPECT_TRUE(events(t, "s").empty());
  EXPECT_TRUE(events(t, "f").empty());

  for (const json& e : events(t, "X", "kernel")) {
    EXPECT_EQ(e.at("pid"), 0);
    EXPECT_EQ(e.at("tid"), 7);
    EXPECT_FALSE(e.at("args").contains("External id"));
    if (e.at("args").at("correlation") == 12) {
      EXPECT_EQ(e.at("name"), kNvjet);
      EXPECT_EQ(abs_ns(t, e.at("ts")), kBase + 32000);
      EXPECT_EQ(us_to_ns(e.at("dur").get<double>()), 18000);
      EXPECT_EQ(e["args"].at("grid"), json::array({2, 66, 1}));
      EXPECT_EQ(e["args"].at("block"), json::array({384, 1, 1}));
      EXPECT_EQ(e["args"].at("shared memory"), 213188);
      EXPECT_EQ(e["args"].at("registers per thread"), 168);
      EXPECT_EQ(e["args"].at("context"), 1);
    }
  }
  const json memcpy = events(t, "X", "gpu_memcpy")[0];
  EXPECT_EQ(memcpy.at("name"), "Memcpy DtoD (Device -> Device)");
  EXPECT_DOUBLE_EQ(memcpy.at("args").at("memory bandwidth (GB/s)").get<double>(), 4096.0 / 1000.0);
  const json range = events(t, "X", "cpu_op")[0];
  EXPECT_EQ(range.at("args").at("External id"), 3);
  EXPECT_EQ(range.at("args").at("Parent id"), 2);
  EXPECT_EQ(range.at("pid"), kPid);
  EXPECT_EQ(range.at("tid"), kTid);
  const json launch = events(t, "X", "cuda_driver")[0];
  EXPECT_EQ(launch.at("args").at("cbid"), 652);
  EXPECT_EQ(launch.at("args").at("correlation"), 12);

  const json& ext = t.at("externalCorrelations");
  ASSERT_EQ(ext.size(), 7u);
  EXPECT_EQ(ext[2], (json{{"correlation", 12}, {"External id", 999}, {"kind", 2}}));
}

TEST(ModelTraceExport, FullTraceLayout) {
  const RawSession raw = sample_session();
  const Session s = build_session(raw);
  const json f = full_json(s);
  EXPECT_EQ(f.at("crossbench").at("format"), "full");
  EXPECT_EQ(f.at("distributedInfo"), (json{{"rank", 0}, {"world_size", 1}}));
  EXPECT_EQ(f.at("cupti_version"), f.at("crossbench").at("cupti_version"));
  EXPECT_FALSE(f.contains("externalCorrelations"));
  EXPECT_EQ(f.at("baseTimeNanoseconds"), kBase);

  // One ac2g pair per device activity, tied to the launch and to the activity.
  const auto starts = events(f, "s", "ac2g");
  const auto finishes = events(f, "f", "ac2g");
  ASSERT_EQ(starts.size(), s.device.size());
  ASSERT_EQ(finishes.size(), s.device.size());
  std::map<std::uint32_t, json> start_by_id, finish_by_id;
  for (const json& e : starts) start_by_id[e.at("id").get<std::uint32_t>()] = e;
  for (const json& e : finishes) finish_by_id[e.at("id").get<std::uint32_t>()] = e;
  for (const DeviceActivity& a : s.device) {
    const ApiCall& launch = s.api[static_cast<std::size_t>(a.launch)];
    const json& st = start_by_id.at(a.correlation_id);
    const json& fi = finish_by_id.at(a.correlation_id);
    EXPECT_EQ(abs_ns(f, st.at("ts")), launch.start_ns);
    EXPECT_EQ(st.at("pid"), kPid);
    EXPECT_EQ(st.at("tid"), kTid);
    EXPECT_EQ(st.at("name"), "ac2g");
    EXPECT_FALSE(st.contains("bp"));
    EXPECT_EQ(abs_ns(f, fi.at("ts")), a.start_ns);
    EXPECT_EQ(fi.at("pid"), 0);
    EXPECT_EQ(fi.at("tid"), 7);
    EXPECT_EQ(fi.at("bp"), "e");
  }

  // External ids on every event that has one.
  for (const json& e : events(f, "X", "kernel")) {
    const std::uint32_t corr = e.at("args").at("correlation");
    EXPECT_EQ(e.at("args").at("External id"), corr == 15 ? 1 : 3) << corr;
  }
  for (const json& e : events(f, "X", "cuda_runtime")) EXPECT_TRUE(e.at("args").contains("External id"));
  EXPECT_EQ(events(f, "X", "cuda_driver")[0].at("args").at("External id"), 3);
  EXPECT_EQ(events(f, "X", "cpu_op")[0].at("args"), (json{{"External id", 3}}));
  const auto syncs = events(f, "X", "cuda_sync");
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0].at("name"), "Stream Synchronize");
  EXPECT_EQ(syncs[0].at("pid"), 0);
  EXPECT_EQ(syncs[0].at("tid"), 7);
  EXPECT_EQ(syncs[0].at("args").at("External id"), 1);

  // gpu_user_annotation spans = first-to-last device activity under each annotation.
  const auto spans = events(f, "X", "gpu_user_annotation");
  ASSERT_EQ(spans.size(), 2u);
  std::map<std::string, json> span_by_name;
  for (const json& e : spans) span_by_name[e.at("name").get<std::string>()] = e;
  const json& addmm = span_by_name.at("addmm");
  EXPECT_EQ(abs_ns(f, addmm.at("ts")), kBase + 30000);
  EXPECT_EQ(us_to_ns(addmm.at("dur").get<double>()), 22000);
  EXPECT_EQ(addmm.at("args").at("External id"), 2);
  EXPECT_EQ(addmm.at("pid"), 0);
  EXPECT_EQ(addmm.at("tid"), 7);
  const json& step = span_by_name.at("ProfilerStep#3");
  EXPECT_EQ(abs_ns(f, step.at("ts")), kBase + 30000);
  EXPECT_EQ(abs_ns(f, step.at("ts")) + us_to_ns(step.at("dur").get<double>()), kBase + 96500);

  // Lane names.
  std::map<std::pair<std::string, std::string>, std::string> names;  // (meta name, lane) -> value
  for (const json& e : events(f, "M")) {
    if (e.at("name") == "process_name" || e.at("name") == "thread_name") {
      names[{e.at("name"), e.at("pid").dump() + "/" + e.at("tid").dump()}] = e.at("args").at("name");
    }
  }
  EXPECT_EQ((names[{"process_name", "0/0"}]), "GPU 0");
  EXPECT_EQ((names[{"thread_name", "0/7"}]), "stream 7");
  EXPECT_EQ((names[{"process_name", "100/0"}]), "crossbench");
  EXPECT_EQ((names[{"thread_name", "100/101"}]), "thread 101 (crossbench)");
}

TEST(ModelTraceExport, ExportersAgreeOnDeviceWork) {
  const RawSession raw = session_with_awkward_names();
  const json t = trace_only_json(raw);
  const json f = full_json(build_session(raw));
  const auto only = device_durations(t);
  const auto full = device_durations(f);
  EXPECT_EQ(only, full);
  EXPECT_EQ(only.at(kAddDemangled), (std::vector<std::int64_t>{2000}));
  EXPECT_EQ(only.at("Memset (Device)"), (std::vector<std::int64_t>{200}));
  // Escaped names survive; the invalid byte becomes U+FFFD.
  EXPECT_EQ(only.count("my\"kernel<1, 2>\\ \x01 \xC2\xB5s \xEF\xBF\xBD"), 1u);
  bool found_range = false;
  for (const json& e : events(f, "X", "cpu_op")) found_range |= e.at("name") == "xb::addmm \"quoted\" <a, b>";
  EXPECT_TRUE(found_range);
  // Host events agree too.
  EXPECT_EQ(events(t, "X", "cuda_runtime").size(), events(f, "X", "cuda_runtime").size());
  EXPECT_EQ(events(t, "X", "user_annotation").size(), events(f, "X", "user_annotation").size());
}

TEST(ModelTraceExport, TimestampsAreExactText) {
  RawSession raw;
  raw.meta.window_start_ns = 1'790'857'026'000'000'000LL;
  RawRecord k = device(RawKind::Kernel, 1, 0, 0, "k");
  k.start_ns = raw.meta.window_start_ns + 5'080'739'996'078'231LL;
  k.end_ns = k.start_ns + 1;
  raw.records.push_back(k);
  RawRecord early = device(RawKind::Kernel, 2, 0, 0, "early");
  early.start_ns = raw.meta.window_start_ns - 5;  // before the window: negative ts
  early.end_ns = raw.meta.window_start_ns + 10;
  raw.records.push_back(early);
  std::ostringstream out;
  write_trace_only(raw, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("\"ts\":5080739996078.231,\"dur\":0.001"), std::string::npos);
  EXPECT_NE(text.find("\"ts\":-0.005,\"dur\":0.015"), std::string::npos);
  const json t = json::parse(text);
  for (const json& e : events(t, "X", "kernel")) {
    const std::int64_t start = abs_ns(t, e.at("ts"));
    EXPECT_TRUE(start == k.start_ns || start == early.start_ns) << start;
  }
}

TEST(ModelTraceExport, EmptySessionsAreValid) {
  const RawSession raw;
  const json t = trace_only_json(raw);
  EXPECT_TRUE(t.at("traceEvents").empty());
  EXPECT_TRUE(t.at("externalCorrelations").empty());
  const json f = full_json(build_session(raw));
  EXPECT_TRUE(f.at("traceEvents").empty());
  EXPECT_TRUE(f.at("deviceProperties").empty());
}

}  // namespace
}  // namespace xb
