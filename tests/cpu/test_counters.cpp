// The counter pass without a GPU (issue 18): the FLOP weights and per-call figures, counters.json
// written and read back, the pass loop with a fake collector (its own pass: one unprofiled call,
// then the profiled ones; an unavailable collector is one line, never an exception), and the
// validator's model_vs_counters on the SYNTHETIC counter session tests/data/counters-synthetic
// (made-up values shaped like the H200's; see its README) beside a replayed H200 run folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/core/counter_pass.h"
#include "bench/core/run_dir.h"
#include "profiler/model/counters.h"
#include "profiler/model/profiler.h"
#include "profiler/model/session_io.h"
#include "validate/counters_reader.h"
#include "validate/validator.h"

namespace fs = std::filesystem;

namespace {

const fs::path kSynthetic = fs::path(XB_TEST_DATA_DIR) / "counters-synthetic" / "counters.json";

xb::KernelCounters kernel(std::map<std::string, double> values) {
  xb::KernelCounters k;
  k.range = "0";
  k.values = std::move(values);
  return k;
}

TEST(Counters, FlopWeightsAndPerCallFigures) {
  const auto k1 = kernel({{"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 100},
                          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 10},
                          {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 3},
                          {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1000},
                          {"dram__bytes_read.sum", 600},
                          {"dram__bytes_write.sum", 200},
                          {"gpu__time_duration.sum", 300},
                          {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50},
                          {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 10},
                          {"not_a_metric_of_ours.sum", 1e9}});
  const auto k2 = kernel({{"dram__bytes_read.sum", 200},
                          {"gpu__time_duration.sum", 100},
                          {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 10},
                          {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 90}});
  const xb::CounterFigures f = xb::derive_figures({k1, k2}, 2);
  EXPECT_DOUBLE_EQ(f.sass_flops, (100 + 2 * 10 + 2 * 3) / 2.0);
  EXPECT_DOUBLE_EQ(f.tensor_flops, 1000 / 2.0);
  EXPECT_DOUBLE_EQ(f.flops, f.sass_flops + f.tensor_flops);
  EXPECT_DOUBLE_EQ(f.dram_read_bytes, 400);
  EXPECT_DOUBLE_EQ(f.dram_write_bytes, 100);
  EXPECT_DOUBLE_EQ(f.dram_bytes, 500);
  EXPECT_DOUBLE_EQ(f.duration_ns, 200);
  EXPECT_DOUBLE_EQ(f.sm_throughput_pct, (50 * 300 + 10 * 100) / 400.0);  // duration-weighted
  EXPECT_DOUBLE_EQ(f.dram_throughput_pct, (10 * 300 + 90 * 100) / 400.0);
  EXPECT_DOUBLE_EQ(f.intensity(), f.flops / 500);
  EXPECT_THROW(xb::derive_figures({k1}, 0), std::invalid_argument);
  EXPECT_THROW(xb::derive_figures({kernel({{"dram__bytes_read.sum", -1}})}, 1), std::invalid_argument);
  EXPECT_DOUBLE_EQ(xb::derive_figures({}, 1).intensity(), 0);
}

TEST(Counters, EveryMetricHasAQuantityAndTheEssentialOnesAreBytesAndTime) {
  int essential = 0;
  for (const auto& m : xb::counter_metrics()) {
    EXPECT_GT(m.weight, 0) << m.name;
    if (m.essential) ++essential;
    const bool fma = m.name.find("fma_pred_on") != std::string::npos;
    if (m.quantity == xb::CounterQuantity::SassFlops) {
      EXPECT_EQ(m.weight, fma ? 2 : 1) << m.name;
    }
  }
  EXPECT_EQ(essential, 3);
}

TEST(Counters, JsonRoundTripAndStrictReader) {
  xb::CounterSession s;
  s.created_utc = "2026-12-01T00:00:00Z";
  s.method = "fake";
  s.library = "none";
  s.gpu_name = "test GPU";
  s.chip = "GH100";
  s.l2_bytes = 52428800;
  s.passes = 7;
  s.accepted = {"dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"};
  s.rejected["sm__ops_path_tensor_src_fp64.sum"] = "cuptiProfilerHostGetMetricProperties: invalid metric";
  xb::FixtureCounters f;
  f.name = "add/bf16/64";
  f.op = "add";
  f.dtype = "bf16";
  f.size = 64;
  f.model_flops = 4096;
  f.model_bytes = 24576;
  f.kernels.push_back(kernel({{"dram__bytes_read.sum", 16384}, {"gpu__time_duration.sum", 2048.5}}));
  f.sass["smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"] = 777;
  s.sass_status = "counted";
  s.fixtures.push_back(f);
  xb::FixtureCounters failed = f;
  failed.name = "add/bf16/128";
  failed.kernels.clear();
  failed.error = "boom";
  failed.sass.clear();
  failed.sass_error = "not counted: boom";
  s.fixtures.push_back(failed);
  std::ostringstream out;
  xb::write_counters_json(s, out);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["pass"]["name"], "counters");
  EXPECT_TRUE(doc["pass"]["separate_from_timing"].get<bool>());
  EXPECT_DOUBLE_EQ(doc["fixtures"][0]["per_call"]["dram_bytes"].get<double>(), 16384);
  EXPECT_FALSE(doc["fixtures"][1].contains("per_call"));
  EXPECT_DOUBLE_EQ(doc["fixtures"][0]["per_call"]["sass_flops"].get<double>(), 777) << "SASS totals in the figures";
  EXPECT_EQ(doc["sass"]["status"], "counted");
  for (const auto& m : doc["metrics"]) {
    const bool sass = m["name"].get<std::string>().rfind("smsp__sass_", 0) == 0;
    EXPECT_EQ(m["source"], sass ? "sass_metrics" : "range_profiler") << m["name"];
  }
  const xb::CounterSession back = xb::parse_counters_json(out.str());
  EXPECT_EQ(back.status, "collected");
  EXPECT_EQ(back.chip, "GH100");
  EXPECT_EQ(back.l2_bytes, 52428800u);
  EXPECT_EQ(back.passes, 7);
  EXPECT_EQ(back.accepted, s.accepted);
  EXPECT_EQ(back.rejected, s.rejected);
  ASSERT_EQ(back.fixtures.size(), 2u);
  EXPECT_EQ(back.fixtures[0].kernels[0].values, f.kernels[0].values);
  EXPECT_EQ(back.fixtures[1].error, "boom");
  EXPECT_EQ(back.sass_status, "counted");
  EXPECT_EQ(back.fixtures[0].sass, f.sass);
  EXPECT_EQ(back.fixtures[1].sass_error, "not counted: boom");

  auto bad = [&](const std::string& from, const std::string& to) {
    std::string text = out.str();
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return text;
  };
  EXPECT_THROW(xb::parse_counters_json("not json"), xb::InputError);
  EXPECT_THROW(xb::parse_counters_json(bad("\"counters\"", "\"events\"")), xb::InputError);
  EXPECT_THROW(xb::parse_counters_json(bad("16384", "-16384")), xb::InputError);
  EXPECT_THROW(xb::parse_counters_json(bad("\"collected\"", "\"maybe\"")), xb::InputError);
  EXPECT_THROW(xb::parse_counters_json(bad("\"calls\": 1", "\"calls\": 0")), xb::InputError);
  EXPECT_THROW(xb::parse_counters_json(bad("\"counted\"", "\"perhaps\"")), xb::InputError);
  EXPECT_THROW(xb::parse_counters_json(bad("fadd_pred_on.sum\": 777.0", "fadd_pred_on.sum\": -777.0")), xb::InputError);
}

/// The profiler's reader's message for `text`, or "" when it reads it.
template <typename Parse>
std::string error_of(Parse parse, const std::string& text) {
  try {
    parse(text);
  } catch (const xb::InputError& e) {
    return e.what();
  }
  return "";
}

// The validator reads counters.json with its own reader and derives the figures itself
// (validate/counters_reader.h): on the synthetic session both readers give the same figures to
// the bit, and both reject the same faults with the same message.
TEST(Counters, ValidatorsOwnReaderAgreesWithTheProfilers) {
  std::ifstream in(kSynthetic);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  const xb::CounterSession p = xb::parse_counters_json(text);
  const xb::vd::CountersFile v = xb::vd::parse_counters(text);
  EXPECT_EQ(v.status, p.status);
  EXPECT_EQ(v.l2_bytes, p.l2_bytes);
  ASSERT_EQ(v.fixtures.size(), p.fixtures.size());
  ASSERT_EQ(v.metrics.size(), xb::counter_metrics().size());
  for (std::size_t i = 0; i < v.metrics.size(); ++i) {
    EXPECT_EQ(v.metrics[i].name, xb::counter_metrics()[i].name);
    EXPECT_EQ(v.metrics[i].quantity, xb::to_string(xb::counter_metrics()[i].quantity));
    EXPECT_EQ(v.metrics[i].weight, xb::counter_metrics()[i].weight);
  }
  for (std::size_t i = 0; i < p.fixtures.size(); ++i) {
    if (!p.fixtures[i].error.empty()) continue;
    const xb::CounterFigures a = xb::derive_figures(p.fixtures[i]);
    const xb::vd::CountersFigures b = xb::vd::per_call_figures(v, v.fixtures[i]);
    EXPECT_EQ(b.dram_read_bytes, a.dram_read_bytes) << p.fixtures[i].name;
    EXPECT_EQ(b.dram_write_bytes, a.dram_write_bytes);
    EXPECT_EQ(b.dram_bytes, a.dram_bytes);
    EXPECT_EQ(b.sass_flops, a.sass_flops);
    EXPECT_EQ(b.tensor_flops, a.tensor_flops);
    EXPECT_EQ(b.flops, a.flops);
    EXPECT_EQ(b.duration_ns, a.duration_ns);
    EXPECT_EQ(b.sm_throughput_pct, a.sm_throughput_pct);
    EXPECT_EQ(b.dram_throughput_pct, a.dram_throughput_pct);
  }
  auto swap = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  const auto profiler = [](const std::string& t) { xb::parse_counters_json(t); };
  const auto validator = [](const std::string& t) { xb::vd::parse_counters(t); };
  for (const std::string& bad : {std::string("not json"), swap("\"counters\"", "\"events\""),
                                 swap("\"collected\"", "\"maybe\""), swap("\"calls\": ", "\"calls\": -"),
                                 swap("\"l2_bytes\": ", "\"l2_bytes\": -"), swap("\"kernels\"", "\"kernelz\"")}) {
    const std::string want = error_of(profiler, bad);
    EXPECT_NE(want, "") << bad.substr(0, 80);
    EXPECT_EQ(error_of(validator, bad), want);
  }
  // What only the validator needs: each metric's quantity and weight.
  EXPECT_NE(error_of(validator, swap("\"quantity\": \"dram_read_bytes\"", "\"quantity\": \"bytes\""))
                .find("metrics[0].quantity: unknown quantity"),
            std::string::npos);
  EXPECT_NE(error_of(validator, swap("\"weight\"", "\"wait\"")).find("missing key \"weight\""), std::string::npos);
}

/// A collector that records what the pass does, in order: the range profiler's user replay (two
/// passes, before_pass outside each), then the SASS pass (or the reason it gives for none). It
/// returns one kernel per call the work made in a pass (each reading 10 B), plus `extra_kernels`.
class FakeCollector : public xb::CounterCollector {
 public:
  explicit FakeCollector(std::string* log, std::string sass_why_not = "", int extra_kernels = 0)
      : log_(log), why_not_(std::move(sass_why_not)), extra_(extra_kernels) {}
  std::vector<xb::KernelCounters> collect(const std::function<void()>& work,
                                          const std::function<void()>& before_pass) override {
    std::size_t calls = 0;
    for (int pass = 0; pass < 2; ++pass) {
      before_pass();
      *log_ += "start;";
      const std::size_t at = log_->size();
      work();
      calls = count_calls(log_->substr(at));
      *log_ += "stop;";
    }
    return std::vector<xb::KernelCounters>(calls + static_cast<std::size_t>(extra_),
                                           kernel({{"dram__bytes_read.sum", 10}}));
  }
  std::string prepare_sass() override {
    *log_ += "prepare_sass;";
    return why_not_;
  }
  std::map<std::string, double> collect_sass(const std::function<void()>& work) override {
    *log_ += "sass{";
    work();
    *log_ += "}";
    return {{"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 8},
            {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1}};
  }
  void describe(xb::CounterSession& s) const override {
    s.method = "fake";
    s.passes = 3;
  }

 private:
  static std::size_t count_calls(const std::string& text) {
    std::size_t n = 0;
    for (std::size_t at = text.find("call;"); at != std::string::npos; at = text.find("call;", at + 1)) ++n;
    return n;
  }
  std::string* log_;
  std::string why_not_;
  int extra_;
};

std::vector<xb::CounterJob> jobs(std::string* log) {
  std::vector<xb::CounterJob> out;
  for (const char* name : {"add/bf16/64", "broken/fp32/1"}) {
    xb::CounterJob j;
    j.fixture.name = name;
    const bool broken = std::string(name).rfind("broken", 0) == 0;
    j.make_call = [log, broken]() -> std::function<void()> {
      if (broken) throw std::runtime_error("factory failed");
      return [log] { *log += "call;"; };
    };
    out.push_back(j);
  }
  return out;
}

TEST(CounterPass, KWarmUpCallsBeforeEveryReplayPassOfKCallsThenTheSassPass) {
  std::string log;
  const auto s = xb::run_counter_pass(
      jobs(&log), [&] { return std::make_unique<FakeCollector>(&log); }, [&] { log += "sync;"; }, 2);
  EXPECT_EQ(log,
            "call;sync;"                            // range profiler: the unprofiled call (lazy loading)
            "call;call;sync;start;call;call;stop;"  // pass 1: K = 2 warm-up calls, then K profiled, no flush
            "call;call;sync;start;call;call;stop;"  // pass 2: the same
            "prepare_sass;"
            "call;sync;sass{call;call;}");  // SASS pass: a fresh instance, its own call
  EXPECT_EQ(s.status, "collected");
  EXPECT_EQ(s.method, "fake");
  EXPECT_EQ(s.passes, 3);
  EXPECT_EQ(s.sass_status, "counted");
  ASSERT_EQ(s.fixtures.size(), 2u);
  EXPECT_EQ(s.fixtures[0].calls, 2);
  EXPECT_EQ(s.fixtures[0].kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(xb::derive_figures(s.fixtures[0]).dram_read_bytes, 10) << "per call: the K calls' total / K";
  EXPECT_TRUE(s.fixtures[0].error.empty());
  EXPECT_TRUE(s.fixtures[0].sass_error.empty());
  EXPECT_DOUBLE_EQ(xb::derive_figures(s.fixtures[0]).sass_flops, (8 + 2 * 1) / 2.0) << "per call, FFMA x 2";
  EXPECT_EQ(s.fixtures[1].error, "factory failed");
  EXPECT_NE(s.fixtures[1].sass_error.find("factory failed"), std::string::npos);
  EXPECT_THROW(xb::run_counter_pass(
                   jobs(&log), nullptr, [] {}, 0),
               std::invalid_argument);
}

TEST(CounterPass, IdleTimeComesBeforeTheWarmUpCallsOfEachReplayPass) {
  // The fresh-process probe for the Nsight Compute comparison spaces its passes as ncu's application
  // replay does (run_counter_pass_on_gpu sleeps in `idle`): the device idles before the K warm-up
  // calls of each pass, never between them and the profiled calls, nor in the SASS pass.
  std::string log;
  xb::run_counter_pass(
      jobs(&log), [&] { return std::make_unique<FakeCollector>(&log); }, [&] { log += "sync;"; }, 2,
      [&] { log += "idle;"; });
  EXPECT_EQ(log,
            "call;sync;"
            "idle;call;call;sync;start;call;call;stop;"
            "idle;call;call;sync;start;call;call;stop;"
            "prepare_sass;"
            "call;sync;sass{call;call;}");
}

TEST(CounterPass, BetweenCallsSpacesConsecutiveCallsOfEveryBatch) {
  // For the Nsight Compute comparison of a GEMM that reaches the power limit back to back: the
  // device idles between consecutive calls (warm-up, profiled, SASS), never before a batch's first.
  std::string log;
  xb::run_counter_pass(
      jobs(&log), [&] { return std::make_unique<FakeCollector>(&log); }, [&] { log += "sync;"; }, 2, {},
      [&] { log += "gap;"; });
  EXPECT_EQ(log,
            "call;sync;"
            "call;gap;call;sync;start;call;gap;call;stop;"
            "call;gap;call;sync;start;call;gap;call;stop;"
            "prepare_sass;"
            "call;sync;sass{call;gap;call;}");
}

TEST(CounterPass, DefaultsToKCallsAndRejectsAKernelCountThatIsNotAMultipleOfK) {
  std::string log;
  const auto s = xb::run_counter_pass(
      jobs(&log), [&] { return std::make_unique<FakeCollector>(&log); }, [] {});
  EXPECT_EQ(xb::kCounterCalls, 16);
  EXPECT_EQ(s.fixtures[0].calls, xb::kCounterCalls);
  EXPECT_EQ(s.fixtures[0].kernels.size(), static_cast<std::size_t>(xb::kCounterCalls));
  EXPECT_TRUE(s.fixtures[0].error.empty()) << s.fixtures[0].error;
  log.clear();
  const auto odd = xb::run_counter_pass(
      jobs(&log), [&] { return std::make_unique<FakeCollector>(&log, "", 1); }, [] {}, 2);
  EXPECT_EQ(odd.fixtures[0].error, "3 kernels in 2 calls: not the same kernels in every call");
  EXPECT_TRUE(odd.fixtures[0].kernels.empty());
  EXPECT_NE(odd.fixtures[0].sass_error.find("3 kernels in 2 calls"), std::string::npos) << "no SASS pass for it";
}

TEST(CounterPass, SassNotCountedSaysWhyAndKeepsTheRangeProfilerFigures) {
  std::string log;
  const auto s = xb::run_counter_pass(
      jobs(&log), [&] { return std::make_unique<FakeCollector>(&log, "SASS metrics: none offered"); }, [] {});
  EXPECT_EQ(log.find("sass{"), std::string::npos) << log;
  EXPECT_EQ(s.status, "collected");
  EXPECT_EQ(s.sass_status, "not counted");
  EXPECT_EQ(s.sass_reason, "SASS metrics: none offered");
  EXPECT_EQ(s.fixtures[0].sass_error, "not counted: SASS metrics: none offered");
  EXPECT_DOUBLE_EQ(xb::derive_figures(s.fixtures[0]).dram_read_bytes, 10);
  EXPECT_DOUBLE_EQ(xb::derive_figures(s.fixtures[0]).sass_flops, 0);
  std::ostringstream table;
  xb::print_counter_table(s, table);
  EXPECT_NE(table.str().find("SASS FLOPs not counted (FLOPs are tensor-pipe only): SASS metrics: none offered"),
            std::string::npos)
      << table.str();
}

TEST(CounterPass, AnUnavailableCollectorIsOneLineNotAnException) {
  std::string log;
  const auto s = xb::run_counter_pass(
      jobs(&log),
      []() -> std::unique_ptr<xb::CounterCollector> {
        throw xb::ProfilerError(
            "hardware counters unavailable: cuptiRangeProfilerEnable returned "
            "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
      },
      [] {});
  EXPECT_EQ(log, "") << "nothing launched without a collector";
  EXPECT_EQ(s.status, "unavailable");
  EXPECT_EQ(s.sass_status, "not counted");
  EXPECT_NE(s.reason.find("INSUFFICIENT_PRIVILEGES"), std::string::npos);
  for (const auto& f : s.fixtures) EXPECT_NE(f.error.find("no counter pass"), std::string::npos);
  std::ostringstream table;
  xb::print_counter_table(s, table);
  EXPECT_EQ(table.str(), "counters: not collected: " + s.reason + "\n");
}

TEST(CounterPass, TableShowsModelAndMeasuredSideBySide) {
  const auto s = xb::read_counters_json(kSynthetic);
  std::ostringstream table;
  xb::print_counter_table(s, table);
  EXPECT_NE(table.str().find("add/bf16/4096"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("-0.79%"), std::string::npos) << table.str();  // 99,873,024 B vs 100,663,296
  EXPECT_DOUBLE_EQ(xb::relative_to_model(0, 0), 0);
  EXPECT_DOUBLE_EQ(xb::relative_to_model(5, 0), 1);
  EXPECT_NEAR(xb::relative_to_model(110, 100), 0.1, 1e-12);
}

/// A replayed H200 run folder (no GPU) with the synthetic counters.json beside it, or none.
class ModelVsCounters : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("xb_counters_run_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    std::ostringstream sink;
    xb::replay_session(fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small-2026-11-29" / "raw_session.json", dir_,
                       sink);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void TearDown() override { fs::remove(dir_ / "counters.json"); }

  static xb::ValidationReport validate_with(const std::string* counters) {
    fs::remove(dir_ / "counters.json");
    if (counters != nullptr) std::ofstream(dir_ / "counters.json") << *counters;
    return xb::validate_run_dir(dir_);
  }
  static std::string synthetic() {
    std::ifstream in(kSynthetic);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static fs::path dir_;
};
fs::path ModelVsCounters::dir_;

TEST_F(ModelVsCounters, NotRunWithoutACounterPass) {
  const auto r = validate_with(nullptr);
  EXPECT_EQ(r.status_of(xb::checks::kModelVsCounters), xb::CheckStatus::NotRun);
  EXPECT_NE(r.results_of(xb::checks::kModelVsCounters)[0]->message.find("bench --counters"), std::string::npos);
}

TEST_F(ModelVsCounters, SyntheticSessionPassesWhereTheModelApplies) {
  const std::string text = synthetic();
  const auto r = validate_with(&text);
  EXPECT_EQ(r.status_of(xb::checks::kModelVsCounters), xb::CheckStatus::Passed);
  std::map<std::string, xb::CheckStatus> by_subject;
  for (const auto* c : r.results_of(xb::checks::kModelVsCounters)) by_subject[c->subject] = c->status;
  EXPECT_EQ(by_subject["add/bf16/4096"], xb::CheckStatus::Passed);     // bytes -0.79%
  EXPECT_EQ(by_subject["matmul/bf16/2048"], xb::CheckStatus::Passed);  // FLOPs +0.05%
  EXPECT_EQ(by_subject["add/bf16/1024"], xb::CheckStatus::NotRun);     // 6 MiB fit in the L2
  EXPECT_NE(r.tolerances.at(xb::checks::kModelVsCounters).find("5%"), std::string::npos);
}

TEST_F(ModelVsCounters, BytesOffByMoreThanFivePercentFail) {
  std::string text = synthetic();
  const auto at = text.find("67110656");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 8, "77110656");  // +10 MB read: +9.9%
  const auto r = validate_with(&text);
  EXPECT_EQ(r.status_of(xb::checks::kModelVsCounters), xb::CheckStatus::Failed);
  for (const auto* c : r.results_of(xb::checks::kModelVsCounters)) {
    if (c->status == xb::CheckStatus::Failed) {
      EXPECT_EQ(c->subject, "add/bf16/4096");
    }
  }
}

TEST_F(ModelVsCounters, FlopsOffByMoreThanOnePercentFail) {
  std::string text = synthetic();
  const std::string from = "\"sm__ops_path_tensor_src_bf16_dst_fp32.sum\": 17179869184";
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(),
               "\"sm__ops_path_tensor_src_bf16_dst_fp32.sum\": 8589934592");  // half: ops counted as FMAs
  const auto r = validate_with(&text);
  EXPECT_EQ(r.status_of(xb::checks::kModelVsCounters), xb::CheckStatus::Failed);
  for (const auto* res : r.results_of(xb::checks::kModelVsCounters)) {
    EXPECT_EQ(res->message.find("more tensor work"), std::string::npos) << "fewer FLOPs: no such note";
  }
}

TEST_F(ModelVsCounters, MoreTensorWorkThanTheModelFailsAndSaysTheKernelDidIt) {
  // The H200's bf16 GEMMs at 8192 and 16384: 1/64 more tensor operations than 2 n^3, counted by
  // crossbench and Nsight Compute alike (docs/metrics.md); here on the synthetic 2048 point.
  std::string text = synthetic();
  const std::string from = "\"sm__ops_path_tensor_src_bf16_dst_fp32.sum\": 17179869184";
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "\"sm__ops_path_tensor_src_bf16_dst_fp32.sum\": 17448304640");  // x 65/64
  const auto r = validate_with(&text);
  EXPECT_EQ(r.status_of(xb::checks::kModelVsCounters), xb::CheckStatus::Failed);
  bool noted = false;
  for (const auto* res : r.results_of(xb::checks::kModelVsCounters)) {
    if (res->status != xb::CheckStatus::Failed) continue;
    EXPECT_NE(res->message.find("+1.562%"), std::string::npos) << res->message;
    noted = res->message.find("more tensor work than the model's FLOPs") != std::string::npos;
  }
  EXPECT_TRUE(noted) << "the failure says the counters show extra tensor work";
}

TEST_F(ModelVsCounters, UnavailablePassIsNotRunWithItsReason) {
  std::string text = synthetic();
  const auto at = text.find("\"collected\"");
  text.replace(at, 11, "\"unavailable\"");
  const auto r2 = text.find("\"reason\": \"\"");
  ASSERT_NE(r2, std::string::npos);
  text.replace(r2, 12, "\"reason\": \"profiling restricted to admin users\"");
  const auto r = validate_with(&text);
  EXPECT_EQ(r.status_of(xb::checks::kModelVsCounters), xb::CheckStatus::NotRun);
  EXPECT_NE(r.results_of(xb::checks::kModelVsCounters)[0]->message.find("admin users"), std::string::npos);
  EXPECT_TRUE(r.passed());
}

}  // namespace
