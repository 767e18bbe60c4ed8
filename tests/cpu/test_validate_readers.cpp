// The validator's readers and its file mode (`validate --trace ...`): key_averages() text tables
// (units, percentages, cut names, NaN), the streaming trace reader (fast paths against the strict
// scanner, gzip, exact microsecond conversion), unusable input (one-line errors, exit code 2),
// matching cut names to the trace, a table cut by row_limit, and two traces of one session.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <zlib.h>
#include <nlohmann/json.hpp>

#include "bench/core/run_dir.h"
#include "profiler/model/session_io.h"
#include "validate/table_reader.h"
#include "validate/trace_reader.h"
#include "validate/validator.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kTorch = fs::path(XB_TEST_DATA_DIR) / "torch-h200";
const fs::path kSession = fs::path(XB_RESULTS_DIR) / "sessions" / "h200-small-2026-11-29" / "raw_session.json";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string gzip(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("xb_readers_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path put(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// Text tables

const char* kTable =
    "-----------------------------  ------------  ------------  ------------  ------------  ------------  ------------ "
    " "
    "------------  ------------  ------------  ------------  \n"
    "                         Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA "
    "  "
    "Self CUDA %    CUDA total  CUDA time avg    # of Calls  \n"
    "-----------------------------  ------------  ------------  ------------  ------------  ------------  ------------ "
    " "
    "------------  ------------  ------------  ------------  \n"
    "                   aten::mm        40.00%       1.500ms        80.00%       3.000ms       1.500ms       2.000ms   "
    "    "
    "100.00%       2.000ms       1.000ms             2  \n"
    "  void at::native::vectorized...         0.00%       0.000us         0.00%       0.000us       0.000us       "
    "2.000ms       "
    "100.00%       2.000ms       1.000ms             2  \n"
    "                 cuLaunchKernel        60.00%       2.250s        60.00%       2.250s       1.125s       0.000us  "
    "       "
    "0.00%       0.000us       0.000us             2  \n"
    "-----------------------------  ------------  ------------  ------------  ------------  ------------  ------------ "
    " "
    "------------  ------------  ------------  ------------  \n"
    "Self CPU time total: 3.750ms\n"
    "Self CUDA time total: 2.000ms\n";

TEST(TableText, UnitsPercentagesAndCutNamesAreReadExactly) {
  const xb::TableData t = xb::parse_table(kTable, "t.txt");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_FALSE(t.json);
  EXPECT_TRUE(t.has_cpu && t.has_cuda && t.has_pct && t.has_avg);
  EXPECT_FALSE(t.has_stats);
  const auto& mm = t.rows[0];
  EXPECT_EQ(mm.name, "aten::mm");
  EXPECT_EQ(mm.calls, 2);
  EXPECT_DOUBLE_EQ(mm.self_cpu.ns, 1'500'000);
  EXPECT_DOUBLE_EQ(mm.self_cpu.res_ns, 1000);  // "1.500ms": printed to the microsecond
  EXPECT_DOUBLE_EQ(mm.self_cpu_pct.pct, 40.0);
  EXPECT_DOUBLE_EQ(mm.self_cpu_pct.res, 0.01);
  EXPECT_EQ(mm.line, 4u);
  const auto& k = t.rows[1];
  EXPECT_TRUE(k.cut);
  EXPECT_EQ(k.name, "void at::native::vectorized...");
  EXPECT_DOUBLE_EQ(k.self_cpu.ns, 0);
  EXPECT_DOUBLE_EQ(k.self_cpu.res_ns, 1);  // "0.000us"
  const auto& l = t.rows[2];
  EXPECT_DOUBLE_EQ(l.self_cpu.ns, 2.25e9);  // "2.250s"
  EXPECT_DOUBLE_EQ(l.self_cpu.res_ns, 1e6);
  EXPECT_DOUBLE_EQ(t.self_cpu_total.ns, 3'750'000);
  EXPECT_DOUBLE_EQ(t.self_cuda_total.ns, 2'000'000);
  EXPECT_EQ(t.device_label, "CUDA");
}

TEST(TableText, PyTorchAndCrossbenchTablesParse) {
  // PyTorch's header is wider than its column ("CUDA time avg"), which shifts the rest.
  const xb::TableData t = xb::read_table(kTorch / "4096_bf16_addmm.txt");
  ASSERT_EQ(t.rows.size(), 13u);
  EXPECT_EQ(t.rows[0].name, "addmm");
  EXPECT_DOUBLE_EQ(t.rows[0].self_cuda.ns, 683'773);
  EXPECT_DOUBLE_EQ(t.rows[0].self_cuda_pct.pct, 115.70);
  EXPECT_EQ(t.rows[12].name, "cudaDeviceSynchronize");
  EXPECT_EQ(t.rows[12].calls, 1);
  EXPECT_DOUBLE_EQ(t.self_cpu_total.ns, 754'450);
  EXPECT_DOUBLE_EQ(t.self_cuda_total.ns, 591'005);
  // crossbench's table.txt: 120-character names, Median/Min/Max columns.
  const fs::path dir = fs::temp_directory_path() / ("xb_readers_replay_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::ostringstream log;
  ASSERT_EQ(xb::replay_session(kSession, dir, log), 0) << log.str();
  const xb::TableData c = xb::read_table(dir / "table.txt");
  EXPECT_TRUE(c.has_stats);
  EXPECT_GT(c.rows.size(), 10u);
  EXPECT_TRUE(std::any_of(c.rows.begin(), c.rows.end(), [](const xb::TableRowData& r) { return r.cut; }));
  // The crossbench text table validates against crossbench's traces, cut names and all.
  xb::ValidateInputs in;
  in.traces = {dir / "full.json", dir / "trace_only.json"};
  in.table = dir / "table.txt";
  in.events = dir / "events.json";
  const auto r = xb::validate_files(in);
  std::ostringstream s;
  xb::print_summary(r, s);
  EXPECT_TRUE(r.passed()) << s.str();
  EXPECT_EQ(r.status_of(xb::checks::kTableRows), xb::CheckStatus::Passed) << s.str();
  EXPECT_EQ(r.status_of(xb::checks::kVerified), xb::CheckStatus::Passed) << s.str();
  fs::remove_all(dir);
}

TEST(TableText, NaNPercentOnlyWhereTheTotalIsZero) {
  std::string t = kTable;
  // A CPU-only profile prints "NaN" for Self CUDA % when the CUDA total is 0: that is accepted
  // (and checked against the total); NaN as a time is not.
  const std::string bad_time = std::string(t).replace(t.find("1.500ms"), 7, "nanms  ");
  EXPECT_THROW(xb::parse_table(bad_time, "t.txt"), xb::InputError);
  const std::string nan_pct = std::string(t).replace(t.find("100.00%"), 7, "    NaN");
  const xb::TableData d = xb::parse_table(nan_pct, "t.txt");
  EXPECT_TRUE(d.rows[0].self_cuda_pct.nan);
}

TEST(TableText, OtherFormatsAreOneLineErrors) {
  auto msg = [](const std::string& text) {
    try {
      xb::parse_table(text, "dir/x.txt");
    } catch (const xb::InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  for (const std::string& text :
       {std::string("name,calls\naten::mm,2\n"), std::string(""), std::string("\x1f\x8b\x08\x00", 4),
        std::string("{\"rows\": []}"), std::string("{\"crossbench\": {\"format\": \"full\"}}"),
        std::string("{not json"), std::string(kTable).substr(0, 500)}) {
    const std::string m = msg(text);
    EXPECT_EQ(m.rfind("dir/x.txt: ", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_NE(msg("name,calls\n").find("not a key_averages() table"), std::string::npos);
  const std::string no_end =
      std::string(kTable).substr(0, std::string(kTable).rfind("-----------------------------  "));
  EXPECT_NE(msg(no_end).find("no closing"), std::string::npos) << msg(no_end);
}

// ---------------------------------------------------------------------------------------------
// Traces

void expect_same(const xb::TraceData& a, const xb::TraceData& b) {
  ASSERT_EQ(a.events.size(), b.events.size());
  ASSERT_EQ(a.flows.size(), b.flows.size());
  EXPECT_EQ(a.ext_corr, b.ext_corr);
  EXPECT_EQ(a.base_ns, b.base_ns);
  EXPECT_EQ(a.window_start_ns, b.window_start_ns);
  EXPECT_EQ(a.window_end_ns, b.window_end_ns);
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    const auto &x = a.events[i], &y = b.events[i];
    ASSERT_TRUE(x.start_ns == y.start_ns && x.dur_ns == y.dur_ns && x.correlation == y.correlation &&
                x.external_id == y.external_id && x.parent_id() == y.parent_id() && x.name == y.name &&
                x.lane == y.lane && x.cat == y.cat && x.flags == y.flags && x.index == y.index)
        << "event " << i;
  }
  for (std::size_t i = 0; i < a.flows.size(); ++i) {
    const auto &x = a.flows[i], &y = b.flows[i];
    ASSERT_TRUE(x.id == y.id && x.ts_ns == y.ts_ns && x.lane == y.lane && x.start == y.start && x.bp_e == y.bp_e)
        << "flow " << i;
  }
}

TEST(TraceReader, FastPathsReadExactlyWhatTheStrictScannerReads) {
  const fs::path dir = fs::temp_directory_path() / ("xb_readers_fast_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::ostringstream log;
  ASSERT_EQ(xb::replay_session(kSession, dir, log), 0) << log.str();
  std::vector<fs::path> files = {dir / "full.json", dir / "trace_only.json"};
  for (const char* w : {"64_bf16_addmm.json", "4096_bf16_matmul.json"}) files.push_back(kTorch / w);
  for (const auto& f : files) {
    // One shared NameTable per pair, so name ids compare.
    xb::NameTable names;
    const xb::TraceData fast = xb::read_trace(f, names);
    xb::set_fast_paths_for_testing(false);
    const xb::TraceData strict = xb::read_trace(f, names);
    xb::set_fast_paths_for_testing(true);
    SCOPED_TRACE(f.string());
    expect_same(fast, strict);
    // The same text reformatted (whitespace everywhere) reads the same too.
    const json doc = json::parse(slurp(f));
    const xb::TraceData pretty = xb::parse_trace(doc.dump(2), f.filename().string(), names);
    EXPECT_EQ(pretty.events.size(), fast.events.size());
    // And gzipped.
    const xb::TraceData gz = xb::parse_trace(gzip(slurp(f)), f.filename().string() + ".gz", names);
    EXPECT_TRUE(gz.gzip);
    expect_same(fast, gz);
  }
  fs::remove_all(dir);
}

TEST(TraceReader, MicrosecondsConvertExactlyFromTheirText) {
  xb::NameTable names;
  // PyTorch writes absolute microseconds with up to three decimals; 5080739996078.23 us is not
  // exactly representable as a double, but its nanoseconds are.
  const std::string text =
      R"({"baseTimeNanoseconds": 1000, "traceEvents": [)"
      R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5080739996078.23, "dur": 186.816, "args": {"correlation": 1}},)"
      R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.5e3, "dur": 0.0005, "args": {"correlation": 2}},)"
      R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": -0.001, "dur": 1E-3, "args": {"correlation": 3}}]})";
  const xb::TraceData t = xb::parse_trace(text, "t.json", names);
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events[0].start_ns, 5080739996078230 + 1000);
  EXPECT_EQ(t.events[0].dur_ns, 186816);
  EXPECT_EQ(t.events[1].start_ns, 1'500'000 + 1000);
  EXPECT_EQ(t.events[1].dur_ns, 1);  // 0.5 ns rounds half away from zero
  EXPECT_EQ(t.events[2].start_ns, -1 + 1000);
  EXPECT_EQ(t.events[2].dur_ns, 1);
}

std::string trace_error(const std::string& text) {
  xb::NameTable names;
  try {
    xb::parse_trace(text, "dir/t.json", names);
  } catch (const xb::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TraceReader, BadInputIsAOneLineErrorNamingTheFile) {
  const std::string ok =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"correlation": 1}}]})";
  EXPECT_EQ(trace_error(ok), "(no error)");
  struct Case {
    std::string text, says;
  };
  const std::vector<Case> cases = {
      {"not json", "not valid JSON"},
      {ok.substr(0, ok.size() / 2), "truncated"},
      {ok.substr(0, ok.size() - 1), "truncated"},
      {gzip(ok).substr(0, 20), "truncated gzip"},
      {R"({"traceEvents": 5})", "\"traceEvents\" is not an array"},
      // A top-level array is EventList.export_chrome_trace's (TraceData::eventlist): its events
      // need what any host range needs.
      {R"([{"ph": "X"}])", "the top-level array[0]: missing \"name\""},
      {R"({"other": []})", "missing \"traceEvents\""},
      {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": NaN, "dur": 2}]})",
       "NaN/Infinity"},
      {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": -Infinity}]})",
       "NaN/Infinity"},
      {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "dur": 2, "args": {"correlation": 1}}]})",
       "missing \"ts\""},
      {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}]})",
       "args.correlation"},
      {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": "1", "dur": 2}]})",
       "\"ts\" is not a number"},
      {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1e400, "dur": 2, "args": {"correlation": 1}}]})",
       "out of range"},
      {R"({"traceEvents": [{"ph": "X", "name": "\ud800"}]})", "surrogate"},
      {"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"\xff\"}]}", "UTF-8"},
      {"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\tb\"}]}", "control character"},
      {R"({"traceEvents": [01]})", "expected"},
      // Found by fuzzing: crossbench's layout with a value that is not a string, and an event
      // that ends exactly at the end of the input.
      {R"({"traceEvents": [{"ph":"X","cat":Qkernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"correlation":1}}]})",
       "unexpected 'Q'"},
      {R"({"traceEvents":[{"ph":"X","c;at":-8})", "truncated"},
      // Found by fuzzing: an element and its comma at the very end of the input (the fast path
      // used to wait for more input forever), for both arrays the fast paths read.
      {R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"correlation":1}},)",
       "truncated"},
      {"{\"traceEvents\":[{\"ph\":\"X\"},  \n ", "truncated"},
      {R"({"traceEvents":[],"externalCorrelations":[{"correlation":1,"External id":2,"kind":3},)", "truncated"},
      {R"({"traceEvents": []} x)", "after the end"},
      {std::string(300, '[') + std::string(300, ']'), "nesting deeper"},
      {"{\"traceEvents\": [{\"args\": " + std::string(300, '[') + std::string(300, ']') + "}]}", "nesting deeper"},
  };
  for (const Case& c : cases) {
    const std::string m = trace_error(c.text);
    EXPECT_EQ(m.rfind("dir/t.json: ", 0), 0u) << m;
    EXPECT_NE(m.find(c.says), std::string::npos) << "expected '" << c.says << "' in: " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  xb::NameTable names;
  EXPECT_THROW(xb::read_trace("/no/such/trace.json", names), xb::InputError);
  try {
    xb::read_trace(fs::temp_directory_path(), names);
    ADD_FAILURE() << "a directory read as a trace";
  } catch (const xb::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// File mode: cut names, row_limit, two traces

/// A PyTorch-like trace: one op launching kernels `names` (one each), in a ProfilerStep.
json torch_like(const std::vector<std::string>& names) {
  json evs = json::array();
  auto x = [&](const char* cat, const std::string& name, json pid, json tid, double ts, double dur, json args) {
    evs.push_back({{"ph", "X"},
                   {"cat", cat},
                   {"name", name},
                   {"pid", pid},
                   {"tid", tid},
                   {"ts", ts},
                   {"dur", dur},
                   {"args", args}});
  };
  x("user_annotation", "ProfilerStep#1", 10, 10, 100, 200, {{"External id", 1}});
  x("cpu_op", "aten::op", 10, 10, 110, 150, {{"External id", 2}});
  double t = 120;
  std::uint64_t corr = 100;
  for (const auto& n : names) {
    x("cuda_runtime", "cudaLaunchKernel", 10, 10, t, 5, {{"External id", 2}, {"correlation", corr}});
    x("kernel", n, 0, 7, t + 100, 10, {{"External id", 2}, {"correlation", corr}});
    evs.push_back({{"ph", "s"}, {"id", corr}, {"pid", 10}, {"tid", 10}, {"ts", t}, {"cat", "ac2g"}, {"name", "ac2g"}});
    evs.push_back({{"ph", "f"},
                   {"id", corr},
                   {"pid", 0},
                   {"tid", 7},
                   {"ts", t + 100},
                   {"cat", "ac2g"},
                   {"name", "ac2g"},
                   {"bp", "e"}});
    t += 10;
    ++corr;
  }
  evs.push_back({{"ph", "X"},
                 {"cat", "Trace"},
                 {"name", "PyTorch Profiler (0)"},
                 {"pid", "Spans"},
                 {"tid", "PyTorch Profiler"},
                 {"ts", 50},
                 {"dur", 1000},
                 {"args", json::object()}});
  return {{"schemaVersion", 1}, {"baseTimeNanoseconds", 0}, {"traceEvents", evs}};
}

/// The key_averages() text of torch_like(names), with `kernel_rows` as the kernel rows' names.
std::string torch_like_table(const std::vector<std::string>& kernel_rows, std::size_t n_kernels, bool with_op = true) {
  const std::string rule =
      "------------------------------------------  ------------  ------------  ------------  ------------  "
      "------------  "
      "------------  ------------  ------------  ------------  ------------  \n";
  std::string t =
      rule +
      "                                      Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time "
      "avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg    # of Calls  \n" +
      rule;
  const double k = static_cast<double>(n_kernels);
  char line[512];
  const double launch_cpu = 5 * k, op_self = 150 - launch_cpu;
  auto row = [&](const std::string& name, double self_cpu, double cpu_total, double self_cuda, double cuda_total,
                 int calls) {
    const double total_cpu = 50 + op_self + launch_cpu, total_cuda = 10 * k;
    std::snprintf(
        line, sizeof line,
        "%42s  %11.2f%%  %10.3fus  %11.2f%%  %10.3fus  %10.3fus  %10.3fus  %11.2f%%  %10.3fus  %11.3fus  %12d  \n",
        name.c_str(), 100 * self_cpu / total_cpu, self_cpu, 100 * cpu_total / total_cpu, cpu_total, cpu_total / calls,
        self_cuda, 100 * self_cuda / total_cuda, cuda_total, cuda_total / calls, calls);
    t += line;
  };
  row("ProfilerStep*", 50, 200, 0, 10 * k, 1);
  if (with_op) row("aten::op", op_self, 150, 10 * k, 10 * k, 1);
  for (const auto& n : kernel_rows) row(n, 0, 0, 10, 10, 1);
  row("cudaLaunchKernel", launch_cpu, launch_cpu, 0, 0, static_cast<int>(n_kernels));
  std::snprintf(line, sizeof line, "Self CPU time total: %.3fus\nSelf CUDA time total: %.3fus\n",
                50 + op_self + launch_cpu, 10 * k);
  return t + rule + line;
}

class FileMode : public TempDir {
 protected:
  xb::ValidationReport run(const json& trace, const std::string& table) {
    xb::ValidateInputs in;
    in.traces = {put("t.json", trace.dump())};
    in.table = put("t.txt", table);
    return xb::validate_files(in);
  }
  static std::string text(const xb::ValidationReport& r) {
    std::ostringstream s;
    xb::print_summary(r, s);
    return s.str();
  }
};

TEST_F(FileMode, CutNamesMatchByPrefix) {
  const std::vector<std::string> names = {
      "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<float> >(int)",
      "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT"};
  const auto r =
      run(torch_like(names), torch_like_table({"void at::native::vectorized_elementwise_kernel...", names[1]}, 2));
  EXPECT_TRUE(r.passed()) << text(r);
  EXPECT_EQ(r.status_of(xb::checks::kKernelStats), xb::CheckStatus::Passed) << text(r);
  EXPECT_EQ(r.status_of(xb::checks::kTableRows), xb::CheckStatus::Passed) << text(r);
  EXPECT_EQ(r.status_of(xb::checks::kTableTotals), xb::CheckStatus::Passed) << text(r);
  bool prefix_note = false;
  for (const auto* c : r.results_of(xb::checks::kTableRows))
    if (c->message.find("cut names matched by prefix") != std::string::npos) prefix_note = true;
  EXPECT_TRUE(prefix_note) << text(r);
}

TEST_F(FileMode, AmbiguousCutNamesAreReportedNotGuessed) {
  const std::vector<std::string> names = {"void at::native::vectorized_elementwise_kernel<8, float>(int)",
                                          "void at::native::vectorized_elementwise_kernel<4, half>(int)"};
  const std::string cut = "void at::native::vectorized_elementwise_kernel...";
  const auto r = run(torch_like(names), torch_like_table({cut, cut}, 2));
  bool ambiguous = false;
  for (const auto* c : r.results_of(xb::checks::kTableRows))
    if (c->status == xb::CheckStatus::NotJudged && c->message.find("is ambiguous") != std::string::npos &&
        c->message.find("<8, float>") != std::string::npos && c->message.find("<4, half>") != std::string::npos)
      ambiguous = true;
  EXPECT_TRUE(ambiguous) << text(r);
  // Never passed silently: the kernel rows' numbers are not compared (not judged).
  bool kernel_not_run = false;
  for (const auto* c : r.results_of(xb::checks::kKernelStats))
    if (c->status == xb::CheckStatus::NotJudged && c->message.find("ambiguous") != std::string::npos)
      kernel_not_run = true;
  EXPECT_TRUE(kernel_not_run) << text(r);
  // Their kind is still known, so the per-kind sums run.
  EXPECT_EQ(r.status_of(xb::checks::kTableTotals), xb::CheckStatus::Passed) << text(r);
}

TEST_F(FileMode, RowsCutByRowLimitAreAttributedToItButUnexplainedOnesAreNot) {
  const std::vector<std::string> names = {"kernel_a", "kernel_b"};
  // The table sorted by CUDA total and cut after kernel_a (row_limit=3): kernel_b and
  // cudaLaunchKernel sort below its last row, which the trace reproduces (issue 37).
  std::string table = torch_like_table({"kernel_a"}, 2);
  const auto launch = table.find("cudaLaunchKernel");
  table.erase(table.rfind('\n', launch) + 1, table.find('\n', launch) - table.rfind('\n', launch));
  const auto r = run(torch_like(names), table);
  bool cut = false;
  for (const auto* c : r.results_of(xb::checks::kKernelStats))
    if (c->status == xb::CheckStatus::Passed &&
        c->message.find("row_limit=3 (sort_by='cuda_time_total')") != std::string::npos)
      cut = true;
  EXPECT_TRUE(cut) << text(r);
  EXPECT_TRUE(r.passed()) << text(r);
  // The totals sum every row, printed or not (_build_table): judged against the trace.
  bool totals = false;
  for (const auto* c : r.results_of(xb::checks::kTableTotals))
    if (c->status == xb::CheckStatus::Passed && c->subject == "totals") totals = true;
  EXPECT_TRUE(totals) << text(r);
  // Without aten::op, a row near the top by CUDA and CPU total: the table still has fewer rows
  // than the trace has names, so row_limit under a key it does not show (flops, memory without
  // its column, sort_by=None) could have cut it. Never failed on that alone: reported, not passed.
  const auto r2 = run(torch_like(names), torch_like_table(names, 2, false));
  EXPECT_NE(r2.status_of(xb::checks::kTableRows), xb::CheckStatus::Failed) << text(r2);
  bool reported = false;
  for (const auto* c : r2.results_of(xb::checks::kTableRows))
    if (c->status == xb::CheckStatus::NotRun && c->subject.find("aten::op") != std::string::npos &&
        c->message.find("row_limit may have cut") != std::string::npos)
      reported = true;
  EXPECT_TRUE(reported) << text(r2);
}

TEST_F(FileMode, TableNumbersThatDisagreeWithTheTraceFail) {
  const std::vector<std::string> names = {"kernel_a"};
  std::string table = torch_like_table(names, 1);
  const auto at = table.find("    1  \n", table.find("kernel_a"));
  table.replace(at, 8, "    2  \n");  // kernel_a called twice, says the table
  const auto r = run(torch_like(names), table);
  EXPECT_EQ(r.status_of(xb::checks::kKernelStats), xb::CheckStatus::Failed) << text(r);
}

TEST_F(FileMode, TwoTracesOfOneSessionAreCompared) {
  const json a = torch_like({"kernel_a", "kernel_b"});
  xb::ValidateInputs in;
  in.traces = {put("a.json", a.dump()), put("b.json.gz", gzip(a.dump(1)))};
  auto r = xb::validate_files(in);
  EXPECT_TRUE(r.passed()) << text(r);
  for (const auto* c : r.results_of(xb::checks::kAttribution))
    EXPECT_NE(c->status, xb::CheckStatus::NotRun) << c->message;
  // The second export attributes kernel_b to another op: attribution names the activity.
  json b = a;
  for (auto& e : b["traceEvents"])
    if (e.value("name", "") == "kernel_b") e["args"]["External id"] = 1;
  in.traces[1] = put("b2.json", b.dump());
  r = xb::validate_files(in);
  EXPECT_EQ(r.status_of(xb::checks::kAttribution), xb::CheckStatus::Failed) << text(r);
  bool named = false;
  for (const auto* c : r.results_of(xb::checks::kAttribution))
    if (c->status == xb::CheckStatus::Failed && c->subject.find("kernel_b") != std::string::npos) named = true;
  EXPECT_TRUE(named) << text(r);
  EXPECT_THROW(xb::validate_files(xb::ValidateInputs{}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The executable in file mode

int run_exe(const std::string& args, const fs::path& out_dir) {
  const std::string cmd = std::string("\"") + XB_VALIDATE_EXE + "\" " + args + " > \"" +
                          (out_dir / "stdout.txt").string() + "\" 2> \"" + (out_dir / "stderr.txt").string() + "\"";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(TempDir, ExecutableFileModeExitCodes) {
  const std::string data = kTorch.string();
  const std::string trace = "--trace \"" + data + "/64_bf16_add.json\"";
  EXPECT_EQ(run_exe(trace + " --table \"" + data + "/64_bf16_add.txt\" --events \"" + data + "/summary.json\"", dir_),
            0)
      << slurp(dir_ / "stdout.txt") << slurp(dir_ / "stderr.txt");
  const fs::path report = dir_ / "r.json";
  EXPECT_EQ(run_exe("--trace \"" + data + "/4096_bf16_addmm.json\" --table \"" + data +
                        "/4096_bf16_addmm.txt\" --report \"" + report.string() + "\"",
                    dir_),
            1);
  EXPECT_EQ(slurp(dir_ / "stdout.txt").rfind("PYTORCH DEFECTS: ", 0), 0u) << slurp(dir_ / "stdout.txt");
  EXPECT_NE(slurp(dir_ / "stdout.txt").find("\n- annotation GPU span counted as Self CUDA (pytorch#130730): "),
            std::string::npos)
      << slurp(dir_ / "stdout.txt");
  const json doc = json::parse(slurp(report));
  EXPECT_EQ(doc["verdicts"]["annotation_span"], "failed");
  EXPECT_EQ(doc["verdicts"]["no_dropped_records"], "not_run");
  EXPECT_EQ(doc["inputs"]["traces"].size(), 1u);
  // Unusable input: exit 2, one line naming the file.
  const auto bad = [&](const std::string& args, const std::string& file, const std::string& says = "") {
    EXPECT_EQ(run_exe(args, dir_), 2) << args;
    const std::string err = slurp(dir_ / "stderr.txt");
    EXPECT_EQ(err.rfind("validate: error: ", 0), 0u) << err;
    EXPECT_NE(err.find(file), std::string::npos) << err;
    EXPECT_NE(err.find(says), std::string::npos) << err;
    EXPECT_EQ(err.find("json.exception"), std::string::npos) << err;  // not nlohmann's raw text
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  };
  bad("--trace \"" + put("nan.json", R"({"traceEvents": [{"ph": "X", "ts": NaN}]})").string() + "\"", "nan.json");
  bad("--trace \"" + put("cut.json", slurp(kTorch / "64_bf16_add.json").substr(0, 3000)).string() + "\"", "cut.json",
      "cut.json: not valid JSON: unexpected end of input (the file is truncated) at byte 3000");
  // The files read through nlohmann (events.json, table.json) say it the same way.
  bad(trace + " --events \"" + put("cut-events.json", slurp(kTorch / "summary.json").substr(0, 200)).string() + "\"",
      "cut-events.json", "cut-events.json: not valid JSON: truncated at byte 200");
  bad(trace + " --events \"" + put("bad-events.json", "{\"runs\": [1,,2]}").string() + "\"", "bad-events.json",
      "bad-events.json: not valid JSON: syntax error while parsing value - unexpected ','; expected '[', '{', or a "
      "literal at byte 12");
  bad(trace + " --table \"" + put("cut-table.json", "{\"crossbench\": {\"format\": \"table\"").string() + "\"",
      "cut-table.json", "cut-table.json: not valid JSON: truncated at byte 33");
  bad(trace + " --table \"" + put("t.csv", "name,calls\n").string() + "\"", "t.csv");
  bad(trace + " --table \"" + data + "/64_bf16_add.json\"", "64_bf16_add.json");
  bad("--trace \"" + (dir_ / "missing.json").string() + "\"", "missing.json");
  bad(trace + " --events \"" + data + "/64_bf16_add.txt\"", "64_bf16_add.txt");
  bad("--no-such-option", "--no-such-option");  // CLI11's parse errors: the same one prefixed line
  bad(trace + " --report", "--report");
  EXPECT_EQ(run_exe(trace + " " + trace + " " + trace, dir_), 2);     // at most two traces
  EXPECT_EQ(run_exe("", dir_), 2);                                    // nothing to validate
  EXPECT_EQ(run_exe("\"" + dir_.string() + "\" " + trace, dir_), 2);  // both modes
}

}  // namespace
