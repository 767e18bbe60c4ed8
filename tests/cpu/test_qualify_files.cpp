// The inputs and reports of `bench qualify` (bench/qualify/qualify_files.h, bench/qualify/qualify_report.h): the
// suite and baseline readers (strict, one-line errors), the baseline round trip, the environment
// mismatch rule, the shipped suites, and the three reports, with the JUnit XML parsed back by a
// small strict XML reader (well-formedness, entities, counts).
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli/cli.h"
#include "bench/core/stopping_rule.h"
#include "bench/gate/gate.h"
#include "bench/qualify/qualify_files.h"
#include "bench/qualify/qualify_report.h"
#include "kernels/nvml_probe.h"
#include "profiler/model/session_io.h"

namespace xb {
namespace {

namespace fs = std::filesystem;
const std::string kData = std::string(XB_TEST_DATA_DIR) + "/qualify";

// ---- a minimal strict XML reader --------------------------------------------------------------

struct XmlNode {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<XmlNode> children;
  std::string text;
  std::vector<const XmlNode*> all(const std::string& n) const {
    std::vector<const XmlNode*> out;
    for (const XmlNode& c : children) {
      if (c.name == n) out.push_back(&c);
    }
    return out;
  }
};

/// XML 1.0 subset: prolog, elements, attributes in either quote, the five entities and numeric
/// references, comments. Throws std::runtime_error on anything ill-formed: unbalanced tags, a raw
/// '<' or '&' in text or attributes, an unknown entity, a control character, duplicate attributes,
/// trailing content.
class XmlReader {
 public:
  explicit XmlReader(const std::string& s) : s_(s) {}
  XmlNode document() {
    skip_ws();
    if (s_.compare(i_, 5, "<?xml") == 0) {
      const std::size_t end = s_.find("?>", i_);
      if (end == std::string::npos) fail("unterminated prolog");
      i_ = end + 2;
    }
    skip_ws();
    XmlNode root = element();
    skip_ws();
    if (i_ != s_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("XML: " + what + " at offset " + std::to_string(i_));
  }
  void skip_ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  std::string name() {
    const std::size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == ':' ||
                              s_[i_] == '-' || s_[i_] == '.')) {
      ++i_;
    }
    if (i_ == start) fail("expected a name");
    return s_.substr(start, i_ - start);
  }
  std::string decode(const std::string& raw) const {
    std::string out;
    for (std::size_t k = 0; k < raw.size(); ++k) {
      const auto c = static_cast<unsigned char>(raw[k]);
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') fail("control character in text");
      if (raw[k] == '<') fail("raw '<' in text");
      if (raw[k] != '&') {
        out += raw[k];
        continue;
      }
      const std::size_t semi = raw.find(';', k);
      if (semi == std::string::npos) fail("unterminated entity");
      const std::string ent = raw.substr(k + 1, semi - k - 1);
      if (ent == "amp")
        out += '&';
      else if (ent == "lt")
        out += '<';
      else if (ent == "gt")
        out += '>';
      else if (ent == "quot")
        out += '"';
      else if (ent == "apos")
        out += '\'';
      else if (ent.size() > 1 && ent[0] == '#')
        out += '?';
      else
        fail("unknown entity &" + ent + ";");
      k = semi;
    }
    return out;
  }
  XmlNode element() {
    if (s_[i_] != '<') fail("expected '<'");
    ++i_;
    XmlNode n;
    n.name = name();
    for (;;) {
      skip_ws();
      if (i_ >= s_.size()) fail("unterminated tag");
      if (s_.compare(i_, 2, "/>") == 0) {
        i_ += 2;
        return n;
      }
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      const std::string key = name();
      skip_ws();
      if (s_[i_] != '=') fail("expected '='");
      ++i_;
      skip_ws();
      const char q = s_[i_];
      if (q != '"' && q != '\'') fail("unquoted attribute");
      const std::size_t end = s_.find(q, i_ + 1);
      if (end == std::string::npos) fail("unterminated attribute");
      if (!n.attrs.emplace(key, decode(s_.substr(i_ + 1, end - i_ - 1))).second) fail("duplicate attribute " + key);
      i_ = end + 1;
    }
    for (;;) {
      if (i_ >= s_.size()) fail("unterminated element " + n.name);
      if (s_.compare(i_, 2, "</") == 0) {
        i_ += 2;
        if (name() != n.name) fail("mismatched end tag of " + n.name);
        skip_ws();
        if (s_[i_] != '>') fail("expected '>'");
        ++i_;
        return n;
      }
      if (s_.compare(i_, 4, "<!--") == 0) {
        const std::size_t end = s_.find("-->", i_);
        if (end == std::string::npos) fail("unterminated comment");
        i_ = end + 3;
        continue;
      }
      if (s_[i_] == '<') {
        n.children.push_back(element());
        continue;
      }
      const std::size_t end = s_.find('<', i_);
      if (end == std::string::npos) fail("unterminated element " + n.name);
      n.text += decode(s_.substr(i_, end - i_));
      i_ = end;
    }
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

XmlNode parse_xml(const std::string& text) { return XmlReader(text).document(); }

TEST(XmlReader, RejectsIllFormedDocuments) {
  EXPECT_NO_THROW(parse_xml("<?xml version=\"1.0\"?>\n<a x='1'><b/>t&amp;t</a>\n"));
  for (const char* bad : {"<a><b></a>", "<a>x & y</a>", "<a x=\"1\" x=\"2\"/>", "<a>&nbsp;</a>", "<a/><b/>", "<a x=1/>",
                          "<a>\x01</a>", "<a"}) {
    EXPECT_THROW(parse_xml(bad), std::runtime_error) << bad;
  }
}

// ---- suite ----------------------------------------------------------------------------------

std::string suite_text(const std::string& fixtures, const std::string& extra = "") {
  return R"({"crossbench": {"format": "suite", "version": 1}, "name": "t", )" + extra + R"("fixtures": [)" + fixtures +
         "]}";
}

TEST(Suite, ParsesAndResolvesStoppingRules) {
  const Suite s = parse_suite(suite_text(
      R"({"op": "matmul", "dtype": "bf16", "size": 64, "mode": "hot"},
         {"op": "matmul", "dtype": "bf16", "size": 4096, "mode": "hot", "stopping": {"max_noise_pct": 8, "min_time_s": 3, "max_time_s": 4}},
         {"op": "add", "dtype": "fp16", "size": 1024, "mode": "cold"})",
      R"("description": "d", "warmup": false, "stopping": {"max_noise_pct": 1, "min_samples": 20}, )"));
  ASSERT_EQ(s.fixtures.size(), 3u);
  EXPECT_EQ(s.name, "t");
  EXPECT_FALSE(s.warmup);
  EXPECT_EQ(s.fixtures[0].key(), "matmul/bf16/64 (hot)");
  EXPECT_DOUBLE_EQ(s.fixtures[0].stopping.max_noise_fraction, 0.01);
  EXPECT_EQ(s.fixtures[0].stopping.min_samples, 20);
  EXPECT_DOUBLE_EQ(s.fixtures[1].stopping.max_noise_fraction, 0.08);
  EXPECT_EQ(s.fixtures[1].stopping.min_samples, 20);  // the suite's, not overridden
  EXPECT_DOUBLE_EQ(s.fixtures[1].stopping.min_time_s, 3);
  EXPECT_EQ(s.modes(), (std::vector<TimingMode>{TimingMode::Hot, TimingMode::Cold}));
}

TEST(Suite, RejectsBadInputWithOneLine) {
  const std::string ok = R"({"op": "add", "dtype": "bf16", "size": 64, "mode": "hot"})";
  struct Bad {
    std::string text, needle;
  };
  const std::vector<Bad> cases = {
      {"", "not valid JSON"},
      {"{\"crossbench\": {\"format\": \"suite\", \"version\": 1},\n \"name\": \"x\", \"fixtures\": [\n",
       "not valid JSON"},
      {"[]", "not a JSON object"},
      {R"({"crossbench": {"format": "baseline", "version": 1}, "name": "t", "fixtures": []})", "crossbench.format"},
      {R"({"crossbench": {"format": "suite", "version": 2}, "name": "t", "fixtures": []})", "version 2"},
      {suite_text(""), "\"fixtures\" is empty"},
      {suite_text(ok, R"("nmae": "x", )"), "unknown key 'nmae'"},
      {suite_text(R"({"op": "matmull", "dtype": "bf16", "size": 64, "mode": "hot"})"),
       "fixtures[0]: unknown op 'matmull'"},
      {suite_text(R"({"op": "add", "dtype": "fp8", "size": 64, "mode": "hot"})"), "unknown dtype 'fp8'"},
      {suite_text(R"({"op": "add", "dtype": "bf16", "size": 0, "mode": "hot"})"), "\"size\" = 0 is out of range"},
      {suite_text(R"({"op": "add", "dtype": "bf16", "size": 64.5, "mode": "hot"})"), "\"size\" is not an integer"},
      {suite_text(R"({"op": "add", "dtype": "bf16", "size": "64", "mode": "hot"})"), "\"size\" is not an integer"},
      {suite_text(R"({"op": "add", "dtype": "bf16", "size": 99999999999999999999, "mode": "hot"})"), "size"},
      {suite_text(R"({"op": "add", "dtype": "bf16", "size": 64, "mode": "warm"})"), "unknown mode 'warm'"},
      {suite_text(R"({"op": "add", "dtype": "bf16", "size": 64})"), "missing key \"mode\""},
      {suite_text(ok + "," + ok), "add/bf16/64 (hot) is listed twice"},
      {suite_text(R"({"op": "add", "dtype": "bf16", "size": 64, "mode": "hot", "stopping": {"max_noise_pct": 0}})"),
       "max_noise_pct"},
      {suite_text(
           R"({"op": "add", "dtype": "bf16", "size": 64, "mode": "hot", "stopping": {"min_time_s": 5, "max_time_s": 1}})"),
       "max_time_s must be at least min_time_s"},
      {suite_text(ok, R"("stopping": {"min_samples": 3}, )"), "\"min_samples\" = 3 is out of range"},
      {suite_text(ok, R"("warmup": "yes", )"), "\"warmup\" is not true or false"},
      {suite_text(ok, R"("name": "", )"), "name"},
  };
  for (const Bad& c : cases) {
    try {
      parse_suite(c.text);
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(c.needle), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << "not one line: " << what;
      EXPECT_EQ(what.rfind("suite", 0), 0u) << what;
    }
  }
}

TEST(Suite, ShippedSuitesParse) {
  const Suite release = read_suite(fs::path(XB_RESULTS_DIR) / "suites" / "release.json");
  EXPECT_EQ(release.fixtures.size(), 32u);  // 4 ops x 4 sizes x 2 dtypes
  std::map<std::string, int> per_op;
  for (const SuiteFixture& f : release.fixtures) {
    ++per_op[f.op];
    EXPECT_EQ(f.mode, TimingMode::Hot);
    EXPECT_TRUE(f.dtype == "bf16" || f.dtype == "fp16");
    EXPECT_TRUE(f.size == 64 || f.size == 1024 || f.size == 4096 || f.size == 8192);
  }
  EXPECT_EQ(per_op.size(), 4u);
  EXPECT_TRUE(release.warmup);
  const Suite smoke = read_suite(fs::path(XB_RESULTS_DIR) / "suites" / "smoke.json");
  EXPECT_LE(smoke.fixtures.size(), 4u);
  const Suite h200 = read_suite(fs::path(XB_RESULTS_DIR) / "suites" / "h200-gate.json");
  for (const SuiteFixture& f : h200.fixtures) {
    bool in_release = false;
    for (const SuiteFixture& r : release.fixtures) in_release = in_release || r.key() == f.key();
    EXPECT_TRUE(in_release) << f.key() << " is not a release fixture";
  }
  try {
    read_suite(fs::path(kData) / "missing.json");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json"), std::string::npos);
  }
}

// ---- baseline -------------------------------------------------------------------------------

TEST(Baseline, RoundTripAndRealFile) {
  const Baseline b = read_baseline(kData + "/h200-warm-2.json");
  EXPECT_EQ(b.environment.gpu_name, "NVIDIA H200");
  EXPECT_EQ(b.environment.driver_version, "580.159.04");
  EXPECT_EQ(b.environment.cublas_version, 130100);
  ASSERT_EQ(b.fixtures.size(), 3u);
  const FixtureRecord* mm = b.find("matmul/bf16/4096 (hot)");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->samples_ns.size(), 784u);
  EXPECT_EQ(mm->gpu_after.throttle_reasons, clocks_event::kSwPowerCap);
  std::ostringstream out;
  write_baseline_json(b, out);
  const Baseline again = parse_baseline(out.str());
  ASSERT_EQ(again.fixtures.size(), b.fixtures.size());
  for (std::size_t i = 0; i < b.fixtures.size(); ++i) {
    EXPECT_EQ(again.fixtures[i].key(), b.fixtures[i].key());
    EXPECT_EQ(again.fixtures[i].samples_ns, b.fixtures[i].samples_ns);  // already at 0.001 ns
    EXPECT_EQ(again.fixtures[i].stop, b.fixtures[i].stop);
    EXPECT_EQ(again.fixtures[i].gpu_before.sm_clock_mhz, b.fixtures[i].gpu_before.sm_clock_mhz);
  }
  EXPECT_EQ(again.environment.gpu_uuid, b.environment.gpu_uuid);
  EXPECT_EQ(again.environment.cupti_version, b.environment.cupti_version);
  // The interval's minimum batch length (power-capped fixtures since 2026-12-04) round-trips; a
  // baseline recorded before has none.
  EXPECT_DOUBLE_EQ(mm->batch_min_s, 0);
  Baseline capped = b;
  capped.fixtures[0].batch_min_s = 0.5;
  std::ostringstream out2;
  write_baseline_json(capped, out2);
  EXPECT_DOUBLE_EQ(parse_baseline(out2.str()).fixtures[0].batch_min_s, 0.5);
  EXPECT_DOUBLE_EQ(parse_baseline(out2.str()).fixtures[1].batch_min_s, 0);
}

TEST(Baseline, RejectsBadInputWithOneLine) {
  const nlohmann::json good = nlohmann::json::parse(read_text_file(kData + "/h200-warm-2.json"));
  struct Bad {
    std::string name;
    std::function<void(nlohmann::json&)> edit;
    std::string needle;
  };
  const std::vector<Bad> cases = {
      {"wrong format", [](nlohmann::json& j) { j["crossbench"]["format"] = "suite"; }, "crossbench.format"},
      {"no environment", [](nlohmann::json& j) { j.erase("environment"); }, "missing key \"environment\""},
      {"no gpu name", [](nlohmann::json& j) { j["environment"].erase("gpu_name"); },
       "environment: missing key \"gpu_name\""},
      {"cublas text", [](nlohmann::json& j) { j["environment"]["cublas_version"] = "13.1"; },
       "\"cublas_version\" is not an integer"},
      {"empty samples", [](nlohmann::json& j) { j["fixtures"][0]["samples_ns"] = nlohmann::json::array(); },
       "fixtures[0]: \"samples_ns\" is empty"},
      {"negative sample", [](nlohmann::json& j) { j["fixtures"][1]["samples_ns"][3] = -5; },
       "fixtures[1]: samples_ns[3]"},
      {"count off", [](nlohmann::json& j) { j["fixtures"][0]["stats"]["count"] = 3; }, "stats.count 3"},
      {"median edited", [](nlohmann::json& j) { j["fixtures"][0]["stats"]["median_ns"] = 1.0; }, "stats.median_ns"},
      {"name mismatch", [](nlohmann::json& j) { j["fixtures"][0]["name"] = "add/bf16/64"; }, "is not op/dtype/size"},
      {"bad stop", [](nlohmann::json& j) { j["fixtures"][0]["stop"] = "done"; }, "stop 'done'"},
      {"bad mask", [](nlohmann::json& j) { j["fixtures"][0]["gpu_before"]["throttle_reasons"] = -1; },
       "throttle_reasons"},
      {"duplicate", [](nlohmann::json& j) { j["fixtures"].push_back(j["fixtures"][0]); }, "listed twice"},
      {"batch length", [](nlohmann::json& j) { j["fixtures"][0]["batch_min_s"] = 0; }, "batch_min_s must be positive"},
  };
  for (const Bad& c : cases) {
    nlohmann::json j = good;
    c.edit(j);
    try {
      parse_baseline(j.dump());
      ADD_FAILURE() << "accepted: " << c.name;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(c.needle), std::string::npos) << c.name << ": " << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  EXPECT_THROW(parse_baseline("{\"crossbench\": 1"), InputError);
  EXPECT_THROW(parse_baseline(std::string("\0\xff", 2)), InputError);
}

// ---- environment ----------------------------------------------------------------------------

RunEnvironment h200_env() {
  RunEnvironment e;
  e.gpu_name = "NVIDIA H200";
  e.gpu_uuid = "GPU-1";
  e.driver_version = "580.159.04";
  e.cuda_driver_version = 13000;
  e.cuda_runtime_version = 13000;
  e.cublas_version = 130100;
  e.cupti_version = 130001;
  e.power_limit_w = 700;
  e.sm_clock_max_mhz = 1980;
  e.mem_clock_max_mhz = 3201;
  return e;
}

TEST(Environment, MismatchRefusesOnGpuDriverAndLibraries) {
  const RunEnvironment base = h200_env();
  EXPECT_TRUE(compare_environments(base, base).empty());
  EXPECT_EQ(mismatch_line(compare_environments(base, base), "b.json"), "");

  RunEnvironment other = base;
  other.gpu_name = "NVIDIA H100 80GB HBM3";
  other.cublas_version = 130200;
  other.gpu_uuid = "GPU-2";
  const auto diffs = compare_environments(base, other);
  ASSERT_EQ(diffs.size(), 3u);
  EXPECT_TRUE(diffs[0].refuses);
  EXPECT_TRUE(diffs[1].refuses);
  EXPECT_FALSE(diffs[2].refuses);  // another board of the same model is only a note
  const std::string line = mismatch_line(diffs, "results/baselines/h200.json");
  EXPECT_NE(line.find("results/baselines/h200.json"), std::string::npos);
  EXPECT_NE(line.find("GPU name 'NVIDIA H200' (baseline) vs 'NVIDIA H100 80GB HBM3' (this run)"), std::string::npos)
      << line;
  EXPECT_NE(line.find("cuBLAS version '130100' (baseline) vs '130200'"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);

  // Only a UUID or power limit differs: reported, not refused.
  RunEnvironment board = base;
  board.gpu_uuid = "GPU-3";
  board.power_limit_w = 600;
  EXPECT_EQ(compare_environments(base, board).size(), 2u);
  EXPECT_EQ(mismatch_line(compare_environments(base, board), "b"), "");
  // Unknown values (no NVML) are not compared.
  RunEnvironment blind = base;
  blind.driver_version = "";
  blind.gpu_uuid = "";
  EXPECT_TRUE(compare_environments(base, blind).empty());
}

// ---- options --------------------------------------------------------------------------------

std::optional<QualifyOptions> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "qualify");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_qualify_args(static_cast<int>(argv.size()), argv.data());
}

TEST(QualifyOptions, ParsesAndRejects) {
  const auto o = parse({"--suite", "s.json", "--baseline", "b.json", "--threshold", "5", "--slow-fixture",
                        "matmul/bf16/4096=20", "--allow-mismatch", "--out", "q"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->suite, "s.json");
  EXPECT_DOUBLE_EQ(*o->threshold_pct, 5);
  EXPECT_DOUBLE_EQ(o->slow_fixtures_us.at("matmul/bf16/4096"), 20);
  EXPECT_TRUE(o->allow_mismatch);
  EXPECT_FALSE(o->update_baseline);
  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"--baseline", "b.json"},
           {"--suite", "s.json"},
           {"--suite", "s.json", "--baseline", "b.json", "--threshold", "0"},
           {"--suite", "s.json", "--baseline", "b.json", "--threshold", "101"},
           {"--suite", "s.json", "--baseline", "b.json", "--slow-fixture", "matmul/bf16/4096"},
           {"--suite", "s.json", "--baseline", "b.json", "--slow-fixture", "conv/bf16/64=5"},
           {"--suite", "s.json", "--baseline", "b.json", "--slow-fixture", "add/bf16/64=-5"},
           {"--suite", "s.json", "--baseline", "b.json", "--slow-fixture", "add/bf16/64=5", "--update-baseline"},
           {"--suite", "s.json", "--baseline", "b.json", "--slow-fixture", "add/bf16/64=5", "--from-run", "r"},
           {"--suite", "s.json", "--baseline", "b.json", "--unknown"},
       }) {
    EXPECT_THROW(parse(bad), UsageError);
  }
}

TEST(SlowFixture, ParsesNameAndDelay) {
  EXPECT_EQ(parse_slow_fixture("add/bf16/8192=10"), (std::pair<std::string, double>{"add/bf16/8192", 10}));
  EXPECT_EQ(parse_slow_fixture("matmul/fp16/064=2.5").first, "matmul/fp16/64");
  for (const char* bad : {"add/bf16/8192", "add/bf16=5", "add/bf16/0=5", "add/bf16/64=", "add/bf16/64=0",
                          "add/bf16/64=1e3", "add/bf16/64=2000000", "add/bf16/64=1.2.3"}) {
    EXPECT_THROW(parse_slow_fixture(bad), UsageError) << bad;
  }
}

// ---- reports --------------------------------------------------------------------------------

CheckResult result(const char* check, const std::string& subject, CheckStatus status, const std::string& message) {
  CheckResult r;
  r.check = check;
  r.subject = subject;
  r.status = status;
  r.message = message;
  return r;
}

/// An outcome with one of each verdict and a run folder with a failed, a not-claimed and a not-run check,
/// and text that needs escaping everywhere.
QualifyOutcome sample_outcome(bool warning) {
  const Baseline b = read_baseline(kData + "/h200-warm-1.json");
  const Baseline n = read_baseline(kData + "/h200-warm-2.json");
  QualifyOutcome o;
  o.created_utc = "2026-11-29T12:00:00Z";
  o.suite_name = "weird <suite> & \"name\" 'x'\x01";
  o.suite_file = "s.json";
  o.baseline_file = "b.json";
  o.environment = n.environment;
  o.baseline_environment = b.environment;
  if (warning) {
    o.warning = "baseline b.json was recorded on another GPU or software: GPU name 'A' (baseline) vs 'B' (this run)";
    o.mismatch_allowed = true;
    o.differences = {{"GPU name", "A", "B", true}};
  }
  for (const FixtureRecord& f : n.fixtures)
    o.fixtures.push_back(gate_fixture(f, b.find(f.key()), "NVIDIA H200", o.rules));
  FixtureRecord slowed = *n.find("add/bf16/4096 (hot)");
  slowed.name = "add/bf16/4096<slow>";
  for (double& x : slowed.samples_ns) x += 10'000;
  o.fixtures.push_back(gate_fixture(slowed, b.find("add/bf16/4096 (hot)"), "NVIDIA H200", o.rules));
  FixtureRecord failed = slowed;
  failed.name = "add/bf16/64";
  failed.error = "wrong result: \"NaN\" & <garbage>";
  o.fixtures.push_back(gate_fixture(failed, b.find("add/bf16/4096 (hot)"), "NVIDIA H200", o.rules));
  LoadedRun run;
  run.label = "run-hot";
  run.dir = "q/run-hot";
  run.validation.checks = {
      result(checks::kKernelStats, "", CheckStatus::Passed, "8 device names agree"),
      result(checks::kTableRows, "ampere_<gemm>&", CheckStatus::Failed, "row differs"),
      result(checks::kTableRows, "other", CheckStatus::Failed, "row differs too"),
      result(checks::kEventVsCupti, "matmul/bf16/4096", CheckStatus::NotClaimed, "pairs unstable"),
      result(checks::kEventVsCupti, "add/bf16/4096", CheckStatus::Passed, "within 1%"),
      result(checks::kFlows, "", CheckStatus::NotRun, "no flows in this trace"),
  };
  o.runs.push_back(run);
  o.exit_code = qualify_exit_code(o.fixtures, o.validation_failed());
  return o;
}

int count_kind(const XmlNode& suite, const std::string& kind) {
  int n = 0;
  for (const XmlNode* c : suite.all("testcase")) n += static_cast<int>(c->all(kind).size());
  return n;
}

TEST(Reports, JUnitParsesBackWithMatchingCounts) {
  for (bool warning : {false, true}) {
    const QualifyOutcome o = sample_outcome(warning);
    std::ostringstream out;
    write_qualify_junit(o, out);
    const XmlNode root = parse_xml(out.str());
    ASSERT_EQ(root.name, "testsuites");
    const auto suites = root.all("testsuite");
    ASSERT_EQ(suites.size(), 2u);
    int tests = 0, failures = 0, errors = 0, skipped = 0;
    for (const XmlNode* s : suites) {
      const int t = static_cast<int>(s->all("testcase").size());
      EXPECT_EQ(std::stoi(s->attrs.at("tests")), t) << s->attrs.at("name");
      EXPECT_EQ(std::stoi(s->attrs.at("failures")), count_kind(*s, "failure"));
      EXPECT_EQ(std::stoi(s->attrs.at("errors")), count_kind(*s, "error"));
      EXPECT_EQ(std::stoi(s->attrs.at("skipped")), count_kind(*s, "skipped"));
      tests += t;
      failures += count_kind(*s, "failure");
      errors += count_kind(*s, "error");
      skipped += count_kind(*s, "skipped");
    }
    EXPECT_EQ(std::stoi(root.attrs.at("tests")), tests);
    EXPECT_EQ(std::stoi(root.attrs.at("failures")), failures);
    EXPECT_EQ(std::stoi(root.attrs.at("errors")), errors);
    EXPECT_EQ(std::stoi(root.attrs.at("skipped")), skipped);
    // Escaping: the suite name comes back exactly, less the control character.
    EXPECT_EQ(root.attrs.at("name"), "crossbench qualify weird <suite> & \"name\" 'x'");

    // The gate suite: environment + one testcase per fixture.
    const XmlNode& gate = *suites[0];
    EXPECT_EQ(gate.attrs.at("name"), "qualify");
    ASSERT_EQ(gate.all("testcase").size(), 1 + o.fixtures.size());
    EXPECT_EQ(gate.all("testcase")[0]->attrs.at("name"), "baseline_environment");
    std::map<std::string, const XmlNode*> by_name;
    for (const XmlNode* c : gate.all("testcase")) by_name[c->attrs.at("name")] = c;
    EXPECT_EQ(by_name.at("add/bf16/4096<slow>")->all("failure").at(0)->attrs.at("type"), "regression");
    EXPECT_EQ(by_name.at("add/bf16/64")->all("error").size(), 1u);
    EXPECT_NE(by_name.at("add/bf16/64")->all("error").at(0)->attrs.at("message").find("\"NaN\" & <garbage>"),
              std::string::npos);
    EXPECT_EQ(by_name.at("matmul/bf16/4096")->all("skipped").size(), 1u);  // inconclusive (warm-1 noisy)
    EXPECT_TRUE(by_name.at("add/bf16/4096")->all("failure").empty());
    EXPECT_EQ(failures, 1 + 1);  // the regression and the failed table_rows check
    EXPECT_EQ(errors, 1);
    // With --allow-mismatch the warning is in the properties, a skipped environment case and
    // every fixture's output.
    const bool env_skipped = !by_name.at("baseline_environment")->all("skipped").empty();
    EXPECT_EQ(env_skipped, warning);
    if (warning) {
      EXPECT_NE(out.str().find("<property name=\"WARNING\""), std::string::npos);
      for (const XmlNode* c : gate.all("testcase")) {
        if (c->attrs.at("name") == "baseline_environment") continue;
        ASSERT_FALSE(c->all("system-out").empty()) << c->attrs.at("name");
        EXPECT_NE(c->all("system-out")[0]->text.find("WARNING"), std::string::npos);
      }
    }

    // The validation suite: one case per check (all_checks), per fixture for event_vs_cupti.
    const XmlNode& val = *suites[1];
    EXPECT_EQ(val.attrs.at("name"), "validation.run-hot");
    std::map<std::string, const XmlNode*> checks_by_name;
    for (const XmlNode* c : val.all("testcase")) checks_by_name[c->attrs.at("name")] = c;
    EXPECT_EQ(checks_by_name.size(), val.all("testcase").size());        // names unique
    EXPECT_EQ(val.all("testcase").size(), all_checks().size() - 1 + 2);  // event_vs_cupti twice
    const XmlNode* rows = checks_by_name.at("table_rows");
    ASSERT_EQ(rows->all("failure").size(), 1u);
    EXPECT_NE(rows->all("failure")[0]->attrs.at("message").find("2 failures; first: ampere_<gemm>&"),
              std::string::npos);
    EXPECT_EQ(checks_by_name.at("event_vs_cupti [matmul/bf16/4096]")->all("skipped").size(), 1u);
    EXPECT_TRUE(checks_by_name.at("event_vs_cupti [add/bf16/4096]")->all("skipped").empty());
    EXPECT_EQ(checks_by_name.at("flows")->all("skipped").size(), 1u);
    EXPECT_EQ(checks_by_name.at("kernel_stats")->all("failure").size(), 0u);
  }
}

TEST(Reports, MarkdownAndJsonCarryVerdictsAndWarning) {
  const QualifyOutcome o = sample_outcome(true);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.result(), "failed");
  std::ostringstream md;
  write_qualify_markdown(o, md);
  const std::string m = md.str();
  EXPECT_EQ(m.find("> **WARNING: baseline mismatch"), m.find("\n\n") + 2) << "the warning comes first:\n" << m;
  EXPECT_NE(m.find("| fixture | mode | class | threshold | baseline median (us) | now (us) | delta % | delta (us) | "
                   "p-value | verdict |"),
            std::string::npos);
  EXPECT_NE(m.find("| add/bf16/4096<slow> | hot | memory-bound | 5% | 26.375 |"), std::string::npos) << m;
  EXPECT_NE(m.find("**regression**"), std::string::npos);
  EXPECT_NE(m.find("**FAILED**"), std::string::npos);  // the run folder's validation

  std::ostringstream js;
  write_qualify_json(o, js);
  const nlohmann::json j = nlohmann::json::parse(js.str());
  EXPECT_EQ(j["crossbench"]["format"], "qualify");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["result"], "failed");
  EXPECT_NE(j["warning"].get<std::string>().find("another GPU"), std::string::npos);
  EXPECT_EQ(j["fixtures"].size(), o.fixtures.size());
  EXPECT_EQ(j["counts"]["regression"], 1);
  EXPECT_EQ(j["counts"]["failed"], 1);
  for (const auto& f : j["fixtures"]) {
    if (f["name"] == "add/bf16/4096<slow>") {
      EXPECT_EQ(f["verdict"], "regression");
      EXPECT_NEAR(f["delta_ns"].get<double>(), 10'000, 100);
      EXPECT_LT(f["p_value"].get<double>(), 1e-10);
    }
    if (f["name"] == "add/bf16/64") {
      EXPECT_EQ(f["verdict"], "failed");
      EXPECT_TRUE(f["now_median_ns"].is_null());
    }
  }
  EXPECT_FALSE(j["runs"][0]["validation_passed"].get<bool>());
}

}  // namespace
}  // namespace xb
