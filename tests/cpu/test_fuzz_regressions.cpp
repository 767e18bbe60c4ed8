// The fuzzers' committed corpus as plain regression tests (no clang, no libFuzzer needed): every
// file of tests/fuzz/corpus/<target>/ goes through the same reader entry point as
// tests/fuzz/fuzz_<target>.cpp, and must either be read or be refused with the reader's own error
// (xb::InputError; build_session's std::invalid_argument for a raw session it cannot convert).
// Any other exception fails the test; a crash or undefined behaviour fails it under
// scripts/sanitize.sh (ASan + UBSan run these tests), so an input the fuzzers once crashed on
// fails the gate on every run, with or without clang (ctest -R FuzzCorpus). Crashes found by
// scripts/fuzz.sh --open go into tests/fuzz/corpus/<target>/ and are then checked here too.
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "bench/core/ceilings.h"
#include "bench/core/fixture_records.h"
#include "profiler/exporters/table.h"
#include "profiler/exporters/trace_export.h"
#include "profiler/model/event_model.h"
#include "profiler/model/session_io.h"
#include "validate/events_reader.h"
#include "validate/table_reader.h"
#include "validate/trace_reader.h"

namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(XB_TEST_DATA_DIR) / ".." / "fuzz" / "corpus";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Each check mirrors LLVMFuzzerTestOneInput of tests/fuzz/fuzz_<target>.cpp: the reader's own
// error returns normally; anything else escapes (an exception) or is reported with ADD_FAILURE
// (where the fuzz target would abort).

void check_trace(const std::string& input) {
  // fuzz_trace: through the fast paths and through the strict scanner alone; both must agree.
  auto parse = [&](bool fast, bool& ok, std::size_t& events) {
    xb::set_fast_paths_for_testing(fast);
    xb::NameTable names;
    ok = false;
    events = 0;
    try {
      const xb::TraceData d = xb::parse_trace(input, "fuzz.json", names);
      ok = true;
      events = d.events.size();
    } catch (const xb::InputError&) {
    } catch (...) {
      xb::set_fast_paths_for_testing(true);
      throw;
    }
    xb::set_fast_paths_for_testing(true);
  };
  bool fast_ok = false, strict_ok = false;
  std::size_t fast_events = 0, strict_events = 0;
  parse(true, fast_ok, fast_events);
  parse(false, strict_ok, strict_events);
  EXPECT_EQ(fast_ok, strict_ok) << "the fast paths and the strict scanner disagree on accepting it";
  EXPECT_EQ(fast_events, strict_events);
}

void check_table(const std::string& input) {
  try {
    const xb::TableData t = xb::parse_table(input, "fuzz.txt");
    for (const auto& r : t.rows) (void)t.where(r);
  } catch (const xb::InputError&) {}
}

void check_events(const std::string& input) {
  try {
    (void)xb::parse_events(input, "fuzz.json");
  } catch (const xb::InputError&) {}
}

void check_ceilings(const std::string& input) {
  xb::Calibration c;
  try {
    c = xb::parse_calibration_json(input);
  } catch (const xb::InputError&) {
    return;
  }
  std::ostringstream first, second;
  xb::write_calibration_json(c, first);
  xb::write_calibration_json(xb::parse_calibration_json(first.str()), second);
  EXPECT_EQ(first.str(), second.str()) << "what it accepted does not read back the same";
}

void check_raw_session(const std::string& input) {
  xb::RawSession raw;
  try {
    raw = xb::parse_recorded_session(input);  // as bench --replay reads it
  } catch (const xb::InputError&) {
    return;
  }
  xb::check_raw_session(raw);  // accepted once, accepted again
  std::ostringstream first, second;
  xb::write_raw_session(raw, first);
  xb::write_raw_session(xb::parse_recorded_session(first.str()), second);
  EXPECT_EQ(first.str(), second.str()) << "writing what it read is not a fixpoint";
  xb::Session session;
  try {
    session = xb::build_session(raw);
  } catch (const std::invalid_argument&) {
    return;  // replay's input error
  }
  const xb::Table table = xb::build_table(session);
  std::ostringstream table_text, table_json, trace_only, full;
  xb::write_table_text(table, table_text);
  xb::write_table_json(table, raw.meta, table_json);
  xb::write_trace_only(raw, trace_only);
  xb::write_full_trace(session, full);
  xb::NameTable names;
  (void)xb::parse_trace(trace_only.str(), "trace_only.json", names);
  (void)xb::parse_trace(full.str(), "full.json", names);
  (void)xb::parse_table(table_json.str(), "table.json");
}

const std::map<std::string, std::function<void(const std::string&)>>& checks() {
  static const std::map<std::string, std::function<void(const std::string&)>> m = {{"trace", check_trace},
                                                                                   {"table", check_table},
                                                                                   {"events", check_events},
                                                                                   {"ceilings", check_ceilings},
                                                                                   {"raw_session", check_raw_session}};
  return m;
}

std::vector<fs::path> files_of(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

class FuzzCorpusFiles : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzCorpusFiles, EveryFileIsReadOrRefusedWithTheReadersError) {
  const fs::path dir = kCorpus / GetParam();
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  const auto files = files_of(dir);
  ASSERT_FALSE(files.empty()) << dir << " is empty";
  const auto& check = checks().at(GetParam());
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    const std::string input = slurp(f);
    try {
      check(input);
    } catch (const std::exception& e) {
      ADD_FAILURE() << f << ": unexpected exception (not the reader's own error): " << e.what();
    } catch (...) {
      ADD_FAILURE() << f << ": unexpected non-standard exception";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Readers, FuzzCorpusFiles,
                         ::testing::Values("trace", "table", "events", "ceilings", "raw_session"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Every fuzz target has a corpus and a check here, so a new target cannot be left out.
TEST(FuzzCorpus, EveryTargetHasACorpusAndACheck) {
  const fs::path fuzz_dir = kCorpus.parent_path();
  for (const auto& e : fs::directory_iterator(fuzz_dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("fuzz_", 0) != 0 || e.path().extension() != ".cpp") continue;
    const std::string target = name.substr(5, name.size() - 5 - 4);
    EXPECT_TRUE(checks().count(target)) << name << ": add a check for it in " << __FILE__;
    EXPECT_TRUE(fs::is_directory(kCorpus / target)) << "tests/fuzz/corpus/" << target << " is missing";
  }
  for (const auto& e : fs::directory_iterator(kCorpus))
    EXPECT_TRUE(checks().count(e.path().filename().string())) << e.path() << ": no check for this corpus";
}

// The reproducer of the UBSan report at validate/json_scan.cpp:718 (a "ts" of 19 integer digits
// overflowed int64 in the plain-decimal fast path): the trace is refused with an error, not UB.
TEST(FuzzCorpus, NineteenDigitTimestampIsAnErrorNotAnOverflow) {
  const std::string input = slurp(kCorpus / "trace" / "regress-json_scan-ts-19-digits-overflow.json");
  ASSERT_FALSE(input.empty());
  for (bool fast : {true, false}) {
    xb::set_fast_paths_for_testing(fast);
    xb::NameTable names;
    EXPECT_THROW((void)xb::parse_trace(input, "fuzz.json", names), xb::InputError) << "fast paths " << fast;
  }
  xb::set_fast_paths_for_testing(true);
  // The number alone, in an otherwise valid trace: read exactly where it fits in ns, refused where not.
  xb::NameTable names;
  const std::string ok =
      R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"k","pid":0,"tid":1,"ts":999999999999999.999,"dur":1}]})";
  EXPECT_NO_THROW((void)xb::parse_trace(ok, "ok.json", names));
  for (const char* ts : {"9299999999999999457.214", "1234567890123456789", "12345678901234567890.5"}) {
    const std::string bad =
        std::string(R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"k","pid":0,"tid":1,"ts":)") + ts +
        R"(,"dur":1}]})";
    for (bool fast : {true, false}) {
      xb::set_fast_paths_for_testing(fast);
      EXPECT_THROW((void)xb::parse_trace(bad, "bad.json", names), xb::InputError) << ts << " fast paths " << fast;
    }
    xb::set_fast_paths_for_testing(true);
  }
}

}  // namespace
