// The per-sample SM clock (bench/core/sm_clock.h): the arithmetic from the blocking kernel's
// readings, its rules (same SM, window length, host gap, last sample), the records' round trip
// through raw_session.json and events.json, the clock range in events.json and summary.md, and
// qualify's note when the clocks of a run and its baseline differ. The sampling loop's part is in
// test_measure.cpp (MeasureSmClock).
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/fixture_json.h"
#include "bench/core/fixture_records.h"
#include "bench/core/run_dir.h"
#include "bench/core/sm_clock.h"
#include "bench/gate/gate.h"
#include "bench/qualify/qualify_files.h"
#include "common/errors.h"
#include "test_model_session.h"

namespace xb {
namespace {

using nlohmann::json;

SmCounters at(std::uint64_t ns, double mhz, std::uint32_t smid = 7, std::uint64_t clock0 = 123'456'789) {
  SmCounters c;
  c.globaltimer_ns = ns;
  c.clock64 = clock0 + static_cast<std::uint64_t>(static_cast<double>(ns) * mhz / 1000.0);
  c.smid = smid;
  c.written = 1;
  return c;
}

TEST(SmClock, CyclesOverNanosecondsInMhz) {
  SmClockAbsent why;
  // 1'000'000 cycles over 500'000 ns = 2 GHz = 2000 MHz.
  SmCounters a = at(1'000'000, 0), b = at(1'500'000, 0);
  b.clock64 = a.clock64 + 1'000'000;
  EXPECT_DOUBLE_EQ(*window_sm_clock_mhz(a, b, 400'000, why), 2000.0);
  // Rounded to 0.1 MHz: 1'755'049 cycles over 1 ms = 1755.049 MHz.
  b = at(2'000'000, 0);
  b.clock64 = a.clock64 + 1'755'049;
  EXPECT_DOUBLE_EQ(*window_sm_clock_mhz(a, b, 900'000, why), 1755.0);
  EXPECT_EQ(why.total(), 0);
}

TEST(SmClock, RulesThatLeaveASampleWithoutAClock) {
  const SmCounters from = at(10'000'000, 1980);
  SmClockAbsent why;
  // Another SM: its clock64 has another origin.
  EXPECT_FALSE(window_sm_clock_mhz(from, at(10'500'000, 1980, 8), 400'000, why));
  EXPECT_EQ(why.other_sm, 1);
  // A window of 199 us (the timer's 1-us steps would be over 1% of it).
  EXPECT_FALSE(window_sm_clock_mhz(from, at(10'199'000, 1980), 150'000, why));
  EXPECT_EQ(why.short_window, 1);
  // The window exactly the limit (200 us) is kept; 2x the event interval is kept, more is not.
  EXPECT_TRUE(window_sm_clock_mhz(from, at(10'200'000, 1980), 100'000, why));
  EXPECT_FALSE(window_sm_clock_mhz(from, at(10'600'000, 1980), 299'999, why));
  EXPECT_EQ(why.host_gap, 1);
  // A reading not written (a timed-out kernel) or counters that did not advance.
  SmCounters unwritten = at(10'500'000, 1980);
  unwritten.written = 0;
  EXPECT_FALSE(window_sm_clock_mhz(from, unwritten, 400'000, why));
  EXPECT_FALSE(window_sm_clock_mhz(from, from, 400'000, why));
  EXPECT_EQ(why.unreadable, 2);
  EXPECT_EQ(why.total(), 5);
}

TEST(SmClock, ConsecutiveSamplesAndTheLast) {
  // Samples of 400 us with a 20-us host gap; sample 2's next kernel runs on another SM.
  std::vector<BlockReadings> r;
  std::vector<std::int64_t> ev;
  std::uint64_t t = 1'000'000;
  const double mhz[] = {1980, 1755, 1600, 1700};
  for (int i = 0; i < 4; ++i) {
    BlockReadings b;
    b.start = at(t - 5'000, mhz[i], i == 3 ? 9 : 7);
    b.release = at(t, mhz[i], i == 3 ? 9 : 7);
    r.push_back(b);
    ev.push_back(400'000);
    t += 420'000;
  }
  // (The clocks of windows across two of these lines are not checked: which samples have one is.)
  const SampleClocks c = sample_sm_clocks(r, ev);
  ASSERT_EQ(c.mhz.size(), 4u);
  ASSERT_TRUE(c.mhz[0] && c.mhz[1]);
  EXPECT_FALSE(c.mhz[2]);  // the next kernel on SM 9
  EXPECT_FALSE(c.mhz[3]);  // the last
  EXPECT_EQ(c.absent.other_sm, 1);
  EXPECT_EQ(c.absent.last, 1);
  // Steady clocks give exactly their value.
  std::vector<BlockReadings> steady;
  for (std::uint64_t k = 0; k < 3; ++k) {
    const std::uint64_t t0 = 1'000'000 + k * 500'000;
    steady.push_back({at(t0 - 1'000, 1980), at(t0, 1980)});
  }
  const SampleClocks s = sample_sm_clocks(steady, {450'000, 450'000, 450'000});
  EXPECT_DOUBLE_EQ(*s.mhz[0], 1980.0);
  EXPECT_DOUBLE_EQ(*s.mhz[1], 1980.0);
  EXPECT_TRUE(sample_sm_clocks({}, {}).mhz.empty());
  EXPECT_THROW(sample_sm_clocks(steady, {1}), std::invalid_argument);
}

TEST(SmClock, RangeAndDifference) {
  EXPECT_FALSE(sm_clock_range({}));
  EXPECT_FALSE(sm_clock_range({std::nullopt, std::nullopt}));
  const auto r = sm_clock_range({1600.0, std::nullopt, 1980.0, 1755.0});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->samples, 3u);
  EXPECT_DOUBLE_EQ(r->min_mhz, 1600);
  EXPECT_DOUBLE_EQ(r->median_mhz, 1755);
  EXPECT_DOUBLE_EQ(r->max_mhz, 1980);
  const SmClockRange a{10, 1950, 1980, 1980}, b{10, 1900, 1950, 1960}, c{10, 1700, 1755, 1800};
  EXPECT_FALSE(sm_clocks_differ(a, b, 0.02));  // 1.5%
  EXPECT_TRUE(sm_clocks_differ(a, c, 0.02));
}

/// A hot fixture of 5 samples with clocks recorded, one absent per reason kind used.
FixtureInfo clocked_fixture() {
  FixtureInfo f;
  f.name = "matmul/bf16/4096";
  f.op = "matmul";
  f.dtype = "bf16";
  f.size = 4096;
  f.flops = 1.37e11;
  f.bytes = 1e8;
  f.verified = true;
  f.timing.mode = TimingMode::Hot;
  f.timing.stopping = StoppingSettings{0.005, 10, 0.5, 3};
  f.timing.confidence = 0.95;
  f.timing.stop = StopReason::Converged;
  f.timing.sampling_s = 0.6;
  f.timing.samples_ns = {180000, 181000, 179500, 182000, 180500};
  f.timing.sample_sm_clock_mhz = {1755.2, std::nullopt, 1740.0, 1980.0, std::nullopt};
  f.timing.sm_clock_absent.other_sm = 1;
  f.timing.sm_clock_absent.last = 1;
  return f;
}

RawSession session_with(const std::vector<FixtureInfo>& fixtures) {
  RawSession s = testing::sample_session();
  s.fixtures.clear();
  for (const FixtureInfo& f : fixtures) s.fixtures.push_back(fixture_block(f));
  return s;
}

TEST(SmClockRecords, RoundTripThroughTheSessionWithNulls) {
  const FixtureInfo f = clocked_fixture();
  const json j = fixture_json(f);
  EXPECT_EQ(j["timing"]["sample_sm_clock_mhz"], json::parse("[1755.2, null, 1740.0, 1980.0, null]"));
  EXPECT_EQ(j["timing"]["sm_clock_absent"]["other_sm"], 1);
  const FixtureInfo back = read_fixtures(session_with({f})).at(0);
  EXPECT_EQ(back.timing.sample_sm_clock_mhz, f.timing.sample_sm_clock_mhz);
  EXPECT_EQ(back.timing.sm_clock_absent.total(), 2);
  EXPECT_EQ(json(fixture_json(back)), j);
  // Not recorded: no key, and read back empty.
  FixtureInfo plain = f;
  plain.timing.sample_sm_clock_mhz.clear();
  plain.timing.sm_clock_absent = {};
  const json pj = fixture_json(plain);
  EXPECT_FALSE(pj["timing"].contains("sample_sm_clock_mhz"));
  EXPECT_FALSE(pj["timing"].contains("sm_clock_absent"));
  EXPECT_TRUE(read_fixtures(session_with({plain})).at(0).timing.sample_sm_clock_mhz.empty());
}

TEST(SmClockRecords, TheReaderChecksTheClocks) {
  const auto refused = [](const std::function<void(json&)>& edit) {
    json j = fixture_json(clocked_fixture());
    edit(j["timing"]);
    RawSession s = testing::sample_session();
    s.fixtures = {FixtureBlock{"matmul/bf16/4096", j.dump()}};
    try {
      read_fixtures(s);
    } catch (const InputError&) {
      return true;
    }
    return false;
  };
  EXPECT_TRUE(refused([](json& t) { t["sample_sm_clock_mhz"].erase(0); }));     // one value short
  EXPECT_TRUE(refused([](json& t) { t["sample_sm_clock_mhz"][0] = -5; }));      // not positive
  EXPECT_TRUE(refused([](json& t) { t["sample_sm_clock_mhz"][0] = "1980"; }));  // not a number
  EXPECT_TRUE(refused([](json& t) { t.erase("sm_clock_absent"); }));            // reasons missing
  EXPECT_TRUE(refused([](json& t) { t["sm_clock_absent"]["other_sm"] = 2; }));  // 3 reasons, 2 nulls
  EXPECT_TRUE(refused([](json& t) { t["sm_clock_absent"]["last"] = 2; }));      // at most one last
  EXPECT_FALSE(refused([](json&) {}));
}

TEST(SmClockRecords, EventsJsonStatsAndSummaryShowTheRange) {
  FixtureInfo plain = clocked_fixture();
  plain.name = "add/bf16/64";
  plain.op = "add";
  plain.size = 64;
  plain.timing.sample_sm_clock_mhz.clear();
  plain.timing.sm_clock_absent = {};
  const RawSession s = session_with({clocked_fixture(), plain});
  std::ostringstream events;
  write_events_json(s, events);
  const json doc = json::parse(events.str());
  const json& clocked = doc["fixtures"][0];
  EXPECT_EQ(clocked["stats"]["sm_clock"],
            json::parse(R"({"samples": 3, "min_mhz": 1740.0, "median_mhz": 1755.2, "max_mhz": 1980.0})"));
  EXPECT_FALSE(doc["fixtures"][1]["stats"].contains("sm_clock"));  // not recorded: no key
  EXPECT_EQ(sm_clock_text(clocked_fixture().timing),
            "1740.0 / 1755.2 / 1980.0 MHz (min / median / max) over 3 of 5 samples; absent: 1 on another SM, 1 last");
  EXPECT_EQ(sm_clock_text(plain.timing), "");
  FixtureTiming none = clocked_fixture().timing;
  none.sample_sm_clock_mhz = {std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  none.sm_clock_absent = {};
  none.sm_clock_absent.host_gap = 4;
  none.sm_clock_absent.last = 1;
  EXPECT_EQ(sm_clock_text(none),
            "none measured in its 5 samples; absent: 4 window over 2x the sample (the host's "
            "gap), 1 last");
}

TEST(SmClockGate, QualifySaysWhenTheClocksDiffer) {
  FixtureRecord now = record_of(clocked_fixture()), base = now;
  ASSERT_TRUE(now.sm_clock);
  GateRules rules;
  EXPECT_EQ(sm_clock_difference(now, base, rules), "");
  base.sm_clock = SmClockRange{40, 1950, 1980, 1980};
  EXPECT_EQ(sm_clock_difference(now, base, rules),
            "SM clock per sample differs: median 1755 MHz (1740..1980) against the baseline's 1980 MHz (1950..1980), "
            "-11.4%");
  const GateResult g = gate_fixture(now, &base, "NVIDIA H200", rules);
  EXPECT_NE(g.note.find("SM clock per sample differs"), std::string::npos) << g.note;
  // Either side without per-sample clocks: nothing said.
  base.sm_clock.reset();
  EXPECT_EQ(sm_clock_difference(now, base, rules), "");
}

TEST(SmClockGate, TheBaselineKeepsTheRange) {
  Baseline b;
  b.created_utc = "2026-12-05T00:00:00Z";
  b.suite = "small";
  b.environment.gpu_name = "NVIDIA H200";
  b.fixtures = {record_of(clocked_fixture())};
  std::ostringstream out;
  write_baseline_json(b, out);
  const Baseline again = parse_baseline(out.str());
  ASSERT_TRUE(again.fixtures.at(0).sm_clock);
  EXPECT_DOUBLE_EQ(again.fixtures[0].sm_clock->median_mhz, 1755.2);
  EXPECT_EQ(again.fixtures[0].sm_clock->samples, 3u);
  b.fixtures[0].sm_clock.reset();  // not recorded: no key
  std::ostringstream plain;
  write_baseline_json(b, plain);
  EXPECT_EQ(plain.str().find("\"sm_clock\""), std::string::npos);
  EXPECT_FALSE(parse_baseline(plain.str()).fixtures.at(0).sm_clock);
}

}  // namespace
}  // namespace xb
