// raw_session.json round trip, strict parsing errors, meta block, file reading; the fixtures read
// through the harness's reader (parse_recorded_session), as bench --replay reads them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "bench/core/fixture_records.h"
#include "profiler/model/session_io.h"
#include "profiler/model/session_json.h"
#include "test_model_session.h"

namespace xb {
namespace {

using namespace xb::testing;
using nlohmann::json;

void expect_equal(const RawRecord& a, const RawRecord& b, std::size_t i) {
  SCOPED_TRACE("record " + std::to_string(i));
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.correlation_id, b.correlation_id);
  EXPECT_EQ(a.device_id, b.device_id);
  EXPECT_EQ(a.context_id, b.context_id);
  EXPECT_EQ(a.stream_id, b.stream_id);
  EXPECT_EQ(a.name, b.name);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(a.grid[k], b.grid[k]);
    EXPECT_EQ(a.block[k], b.block[k]);
  }
  EXPECT_EQ(a.registers_per_thread, b.registers_per_thread);
  EXPECT_EQ(a.static_shared_bytes, b.static_shared_bytes);
  EXPECT_EQ(a.dynamic_shared_bytes, b.dynamic_shared_bytes);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.copy_kind, b.copy_kind);
  EXPECT_EQ(a.memset_value, b.memset_value);
  EXPECT_EQ(a.cbid, b.cbid);
  EXPECT_EQ(a.process_id, b.process_id);
  EXPECT_EQ(a.thread_id, b.thread_id);
  EXPECT_EQ(a.return_value, b.return_value);
  EXPECT_EQ(a.sync_type, b.sync_type);
  EXPECT_EQ(a.external_kind, b.external_kind);
  EXPECT_EQ(a.external_id, b.external_id);
}

std::string to_text(const RawSession& s) {
  std::ostringstream out;
  write_raw_session(s, out);
  return out.str();
}

RawSession tricky_session() {
  RawSession s = sample_session();
  s.records[1].return_value = -2;
  s.records[1].thread_id = 0xFFFFFFFFu;
  s.records.back().stream_id = 0xFFFFFFFFu;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE
  RawRecord weird = device(RawKind::Kernel, 99, -50, 0, "my\"kernel<1, 2>\\\n\t\x01 \xC2\xB5s");
  weird.grid[0] = -1;
  s.records.push_back(weird);
  RawRecord memset = device(RawKind::Memset, 98, 0, 1);
  memset.memset_value = 0xABCDEF01u;
  memset.bytes = 1ull << 40;
  s.records.push_back(memset);
  s.records.push_back(ext(97, 0xFFFFFFFFFFFFFFFFull, 5));
  s.ranges[0].name = "Step \"quoted\" <a, b>";
  s.meta.devices.push_back(s.meta.devices[0]);
  s.meta.devices[1].id = 1;
  FixtureInfo f = sample_fixture();
  f.max_rel_error = 1e-300;
  s.fixtures[0] = fixture_block(f);
  attach_gpu_meta(s.meta, GpuMeta{});  // what parse_recorded_session attaches where there is none
  s.event_timings.push_back(StepTiming{"addmm/bf16/64", -1, 1, 1});
  return s;
}

TEST(ModelSessionIo, RoundTrip) {
  const RawSession s = tricky_session();
  const std::string text = to_text(s);
  const RawSession back = parse_recorded_session(text);
  ASSERT_EQ(back.records.size(), s.records.size());
  for (std::size_t i = 0; i < s.records.size(); ++i) expect_equal(back.records[i], s.records[i], i);
  ASSERT_EQ(back.ranges.size(), s.ranges.size());
  for (std::size_t i = 0; i < s.ranges.size(); ++i) {
    EXPECT_EQ(back.ranges[i].id, s.ranges[i].id);
    EXPECT_EQ(back.ranges[i].parent_id, s.ranges[i].parent_id);
    EXPECT_EQ(back.ranges[i].name, s.ranges[i].name);
    EXPECT_EQ(back.ranges[i].category, s.ranges[i].category);
    EXPECT_EQ(back.ranges[i].start_ns, s.ranges[i].start_ns);
    EXPECT_EQ(back.ranges[i].end_ns, s.ranges[i].end_ns);
    EXPECT_EQ(back.ranges[i].process_id, s.ranges[i].process_id);
    EXPECT_EQ(back.ranges[i].thread_id, s.ranges[i].thread_id);
  }
  ASSERT_EQ(back.event_timings.size(), 2u);
  EXPECT_EQ(back.event_timings[0].fixture, "addmm/bf16/64");
  EXPECT_EQ(back.event_timings[0].event_ns, 21500);
  EXPECT_EQ(back.event_timings[1].step, -1);
  const std::vector<FixtureInfo> fixtures = read_fixtures(back);
  ASSERT_EQ(fixtures.size(), 1u);
  EXPECT_EQ(fixtures[0].flops, sample_fixture().flops);
  EXPECT_EQ(fixtures[0].max_rel_error, 1e-300);
  EXPECT_TRUE(fixtures[0].verified);
  const SessionMeta& m = back.meta;
  EXPECT_EQ(m.window_start_ns, kBase);
  EXPECT_EQ(m.discarded_by_schedule, 12u);
  EXPECT_EQ(m.cupti_version, 130001u);
  EXPECT_EQ(m.schedule_active, 1);
  EXPECT_EQ(m.created_utc, s.meta.created_utc);
  ASSERT_EQ(m.devices.size(), 2u);
  EXPECT_EQ(m.devices[0].total_global_mem, 150109880320ull);
  EXPECT_EQ(m.devices[0].l2_cache_bytes, 62914560u);
  EXPECT_EQ(m.devices[1].id, 1u);
  // Writing the parsed session again gives the same text.
  EXPECT_EQ(to_text(back), text);
}

TEST(ModelSessionIo, WritesOnlyTheFieldsAKindCarries) {
  const json j = json::parse(to_text(sample_session()));
  EXPECT_EQ(j.at("crossbench").at("format"), "raw_session");
  for (const json& r : j.at("records")) {
    const std::string kind = r.at("kind");
    EXPECT_TRUE(r.contains("correlation_id"));
    EXPECT_EQ(r.contains("grid"), kind == "kernel");
    EXPECT_EQ(r.contains("cbid"), kind == "runtime" || kind == "driver");
    EXPECT_EQ(r.contains("start_ns"), kind != "external_correlation");
    EXPECT_EQ(r.contains("stream_id"),
              kind == "kernel" || kind == "memcpy" || kind == "memset" || kind == "synchronization");
  }
}

/// Parses `text` and returns the InputError message ("" when it did not throw).
std::string parse_error(const std::string& text) {
  try {
    parse_recorded_session(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string mutated(const std::function<void(json&)>& change) {
  json j = json::parse(to_text(sample_session()));
  change(j);
  return j.dump();
}

TEST(ModelSessionIo, ParseErrorsNameTheProblem) {
  EXPECT_NE(parse_error("this is not JSON"), "");
  EXPECT_NE(parse_error(""), "");
  EXPECT_NE(parse_error("[1, 2]"), "");
  EXPECT_NE(parse_error(to_text(sample_session()).substr(0, 500)), "");  // truncated
  // The one plain wording of a malformed file (strict_json::parse_error_text): where it stopped,
  // as a 0-based byte offset, "truncated" at the end of the input, no nlohmann prefix.
  EXPECT_EQ(parse_error(to_text(sample_session()).substr(0, 500)),
            "raw_session: not valid JSON: truncated at byte 500");
  EXPECT_EQ(parse_error(""), "raw_session: not valid JSON: truncated at byte 0");
  EXPECT_EQ(parse_error("{\"a\": tru!}"),
            "raw_session: not valid JSON: syntax error while parsing value - invalid literal at byte 9");
  EXPECT_EQ(parse_error("{\"a\": 1,,}"),
            "raw_session: not valid JSON: syntax error while parsing object key - unexpected ','; expected string "
            "literal at byte 8");

  const std::string missing = parse_error(mutated([](json& j) { j["records"][1].erase("end_ns"); }));
  EXPECT_NE(missing.find("records[1]"), std::string::npos) << missing;
  EXPECT_NE(missing.find("end_ns"), std::string::npos) << missing;

  const std::string wrong_type = parse_error(mutated([](json& j) { j["records"][3]["start_ns"] = "5"; }));
  EXPECT_NE(wrong_type.find("records[3]"), std::string::npos) << wrong_type;

  const std::string negative = parse_error(mutated([](json& j) { j["records"][1]["correlation_id"] = -1; }));
  EXPECT_NE(negative.find("correlation_id"), std::string::npos) << negative;
  const std::string too_big = parse_error(mutated([](json& j) { j["records"][1]["correlation_id"] = 1ull << 32; }));
  EXPECT_NE(too_big.find("out of range"), std::string::npos) << too_big;
  const std::string fractional = parse_error(mutated([](json& j) { j["records"][1]["end_ns"] = 1.5; }));
  EXPECT_NE(fractional.find("end_ns"), std::string::npos) << fractional;

  const std::string kind = parse_error(mutated([](json& j) { j["records"][0]["kind"] = "Kernel"; }));
  EXPECT_NE(kind.find("Kernel"), std::string::npos) << kind;
  EXPECT_NE(parse_error(mutated([](json& j) { j["records"][15]["grid"] = json::array({1, 2}); })), "");
  EXPECT_NE(parse_error(mutated([](json& j) { j["ranges"][0]["category"] = "gpu"; })), "");
  EXPECT_NE(parse_error(mutated([](json& j) { j["meta"].erase("devices"); })).find("devices"), std::string::npos);
  EXPECT_NE(parse_error(mutated([](json& j) { j["meta"]["devices"][0].erase("warp_size"); })).find("warp_size"),
            std::string::npos);
  EXPECT_NE(parse_error(mutated([](json& j) { j.erase("fixtures"); })).find("fixtures"), std::string::npos);
  EXPECT_NE(parse_error(mutated([](json& j) { j["fixtures"][0]["verified"] = 1; })).find("verified"),
            std::string::npos);
  EXPECT_NE(parse_error(mutated([](json& j) { j["crossbench"]["format"] = "table"; })), "");
  EXPECT_NE(parse_error(mutated([](json& j) { j["records"] = json::object(); })).find("records"), std::string::npos);
  EXPECT_NE(parse_error(mutated([](json& j) {
              j["records"][15]["grid"] = json{{"x", 1}};
            })).find("grid"),
            std::string::npos);
  EXPECT_NE(parse_error(mutated([](json& j) { j["records"][15]["grid"][1] = json::array({1}); })).find("grid"),
            std::string::npos);
  EXPECT_NE(parse_error(mutated([](json& j) {
              j["records"][15]["name"] = json{{"x", 1}};
            })).find("name"),
            std::string::npos);
  EXPECT_NE(
      parse_error(mutated([](json& j) { j["records"][2] = 5; })).find("raw_session: records[2]: is not an object"),
      std::string::npos);
  EXPECT_NE(parse_error(mutated([](json& j) { j["ranges"][1] = json::array(); })).find("ranges[1]"), std::string::npos);
  EXPECT_NE(parse_error(mutated([](json& j) { j["ranges"][0].erase("parent_id"); })).find("ranges[0]"),
            std::string::npos);
  // One wording with every strict JSON reader (common/strict_json.h): the object, then the key.
  EXPECT_EQ(parse_error(mutated([](json& j) { j["records"][1]["correlation_id"] = 1ull << 32; })),
            "raw_session: records[1]: \"correlation_id\" = 4294967296 is out of range [0, 4294967295]");
  EXPECT_EQ(parse_error(mutated([](json& j) { j["records"][3]["start_ns"] = "5"; })),
            "raw_session: records[3]: \"start_ns\" is not an integer");
  EXPECT_EQ(parse_error(mutated([](json& j) { j["records"][15]["grid"][1] = 1.5; })),
            "raw_session: records[15]: \"grid\"[1] is not an integer");
  EXPECT_EQ(parse_error(mutated([](json& j) {
              j["records"][15]["grid"] = json::array({1, 2});
            })),
            "raw_session: records[15]: \"grid\" is not an array of 3 integers");
  EXPECT_EQ(parse_error(mutated([](json& j) { j["meta"]["devices"][0].erase("warp_size"); })),
            "raw_session: meta.devices[0]: missing key \"warp_size\"");
  EXPECT_EQ(parse_error(mutated([](json& j) { j["meta"]["dropped_records"] = -1; })),
            "raw_session: meta: \"dropped_records\" = -1 is out of range [0, 18446744073709551615]");
  EXPECT_EQ(parse_error(mutated([](json& j) { j["fixtures"][0]["verified"] = 1; })),
            "raw_session: fixtures[0]: \"verified\" is not true or false");
  EXPECT_EQ(parse_error(mutated([](json& j) { j["event_timings"][0]["fixture"] = 3; })),
            "raw_session: event_timings[0]: \"fixture\" is not a string");
  EXPECT_EQ(parse_error(mutated([](json& j) { j["crossbench"]["version"] = 2; })),
            "raw_session: crossbench.version 2 is not supported (this bench reads version 1)");
  EXPECT_EQ(parse_error("[1, 2]"), "raw_session: is not an object");
  // Unknown extra keys (nested or not) are ignored.
  EXPECT_EQ(parse_error(mutated([](json& j) {
              j["records"][15]["extra"] = json{{"a", json::array({1, {{"b", 2}}})}};
            })),
            "");
  // Unchanged text parses.
  EXPECT_EQ(parse_error(mutated([](json&) {})), "");
}

TEST(ModelSessionIo, RejectsNaNAndInfinity) {
  const std::string text = mutated([](json& j) { j["fixtures"][0]["flops"] = 1.0; });
  std::string nan_text = text;
  nan_text.replace(nan_text.find("\"flops\":1.0"), 11, "\"flops\":NaN");
  EXPECT_NE(parse_error(nan_text), "");
  std::string inf_text = text;
  inf_text.replace(inf_text.find("\"flops\":1.0"), 11, "\"flops\":Infinity");
  EXPECT_NE(parse_error(inf_text), "");
  std::string overflow = text;
  overflow.replace(overflow.find("\"flops\":1.0"), 11, "\"flops\":1e999");
  EXPECT_NE(parse_error(overflow), "");
}

TEST(ModelSessionIo, WriterRefusesNaN) {
  FixtureInfo f = sample_fixture();
  f.max_rel_error = std::nan("");
  EXPECT_THROW(fixture_block(f), std::invalid_argument);  // the harness's JSON refuses it
  RawSession s = sample_session();
  s.fixtures[0].json = "{\"name\": NaN}";  // the profiler writes only JSON
  std::ostringstream out;
  EXPECT_THROW(write_raw_session(s, out), std::invalid_argument);
}

TEST(ModelSessionIo, MetaBlock) {
  const json b = meta_block(sample_session().meta, "full");
  EXPECT_EQ(b.at("format"), "full");
  EXPECT_EQ(b.at("version"), 1);
  for (const char* key : {"created_utc", "dropped_records", "discarded_by_schedule", "window_start_ns", "window_end_ns",
                          "cuda_driver_version", "cuda_runtime_version", "cupti_version", "cublas_version"}) {
    EXPECT_TRUE(b.contains(key)) << key;
  }
  EXPECT_EQ(b.at("schedule"), (json{{"wait", 1}, {"warmup", 1}, {"active", 1}}));
  EXPECT_EQ(b.at("window_start_ns"), kBase);
}

TEST(ModelSessionIo, ReadsFiles) {
  const auto dir = std::filesystem::temp_directory_path() / ("xb_model_io_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "raw_session.json";
  {
    std::ofstream out(path);
    write_raw_session(sample_session(), out);
  }
  EXPECT_EQ(read_raw_session(path).records.size(), sample_session().records.size());
  EXPECT_EQ(read_text_file(path).substr(0, 15), "{\"crossbench\": ");
  try {
    read_raw_session(dir / "missing.json");
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json: cannot open"), std::string::npos) << e.what();
  }
  {
    std::ofstream out(path);
    out << "{\"crossbench\": ";
  }
  try {
    read_raw_session(path);
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_text_file(dir), InputError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace xb

namespace xb {
namespace {

/// Each violation of check_raw_session is an InputError naming it; the sample session passes.
TEST(ModelSessionIo, CheckRejectsInconsistentSessions) {
  EXPECT_NO_THROW(check_raw_session(sample_session()));
  const std::vector<std::pair<std::string, std::function<void(RawSession&)>>> cases = {
      {"ends before it starts", [](RawSession& s) { s.meta.window_end_ns = s.meta.window_start_ns - 1; }},
      {"negative schedule", [](RawSession& s) { s.meta.schedule_active = -3; }},
      {"need 0 <= start <= end",
       [](RawSession& s) {
         for (RawRecord& r : s.records) {
           if (r.kind == RawKind::Kernel) r.end_ns = r.start_ns - 1;
         }
       }},
      // Beyond 2^62 ns the validator's trace reader refuses times: a replay could not be validated.
      {"<= 2^62",
       [](RawSession& s) {
         for (RawRecord& r : s.records) {
           if (r.kind == RawKind::Kernel) r.end_ns = (std::int64_t{1} << 62) + 1;
         }
       }},
      {"<= 2^62", [](RawSession& s) { s.ranges[0].end_ns = (std::int64_t{1} << 62) + 1; }},
      {"window end", [](RawSession& s) { s.meta.window_end_ns = (std::int64_t{1} << 62) + 1; }},
      {"id 0", [](RawSession& s) { s.ranges[0].id = 0; }},
      {"duplicate id", [](RawSession& s) { s.ranges[1].id = s.ranges[0].id; }},
      {"cycle", [](RawSession& s) { s.ranges[0].parent_id = s.ranges[0].id; }},
      {"does not exist", [](RawSession& s) { s.ranges[1].parent_id = 424242; }},
      {"duplicate fixture", [](RawSession& s) { s.fixtures.push_back(s.fixtures[0]); }},
      {"not positive", [](RawSession& s) { s.event_timings[0].event_ns = -5; }},
      {"unknown fixture", [](RawSession& s) { s.event_timings[0].fixture = "nope/bf16/1"; }},
  };
  for (const auto& [needle, mutate] : cases) {
    RawSession s = sample_session();
    mutate(s);
    try {
      check_raw_session(s);
      ADD_FAILURE() << needle << ": accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace xb
