// `bench sweep` / `bench calibrate` without a GPU: size specs and command lines, measurements taken
// from a hand-built sweep session, the writers, bad input at the executable (one line, exit 2,
// nothing written), and the committed synthetic sweep (results/sweeps/synthetic-h200) that the
// plot test reads: it must be exactly what the writers produce today.
#include <gtest/gtest.h>

#include "../common/run_command.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/calibrate/calibrate_args.h"
#include "bench/cli/cli.h"
#include "bench/sweep/regime.h"
#include "bench/sweep/sweep.h"
#include "common/atomic_file.h"
#include "kernels/workload.h"
#include "profiler/model/session_io.h"
#include "test_model_session.h"

namespace xb {
namespace {

namespace fs = std::filesystem;
using testing::api;
using testing::device;
using testing::ext;
using testing::range;

std::vector<std::int64_t> sizes(std::initializer_list<std::int64_t> v) { return v; }

TEST(SizeSpec, ListsAndPowerOfTwoRanges) {
  EXPECT_EQ(parse_size_spec("64:16384:x2"), sizes({64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(parse_size_spec("64,1000,4096"), sizes({64, 1000, 4096}));
  EXPECT_EQ(parse_size_spec("96:384:x2,1000"), sizes({96, 192, 384, 1000}));
  EXPECT_EQ(parse_size_spec("5:5:x2"), sizes({5}));
  EXPECT_EQ(parse_size_spec("1:1048576:x2").size(), 21u);
}

struct BadSpec {
  std::string text;
  std::string needle;
};

/// gtest (and ctest's test names, through gtest_discover_tests) print a case as its text.
void PrintTo(const BadSpec& c, std::ostream* os) { *os << c.text; }

class SizeSpecBad : public ::testing::TestWithParam<BadSpec> {};

TEST_P(SizeSpecBad, IsAUsageErrorNamingTheItem) {
  try {
    parse_size_spec(GetParam().text);
    FAIL() << "accepted '" << GetParam().text << "'";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().needle), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Table, SizeSpecBad,
                         ::testing::Values(BadSpec{"64:10:x2", "end 10 is below start 64"}, BadSpec{"0:64:x2", "'0'"},
                                           BadSpec{"64:16384:x3", "'x3'"}, BadSpec{"64:16384:2", "'2'"},
                                           BadSpec{"64:1000:x2", "not start 64 times a power of two"},
                                           BadSpec{"64:128", "START:END:x2"}, BadSpec{"64:128:x2:x2", "START:END:x2"},
                                           BadSpec{"a:128:x2", "'a'"}, BadSpec{"64:-128:x2", "'-128'"},
                                           BadSpec{"64:2097152:x2", "too large"},
                                           BadSpec{"64,64:256:x2", "duplicate size 64"}, BadSpec{"", "empty"},
                                           BadSpec{"64,,128", "empty"}, BadSpec{"0", "'0'"}, BadSpec{":64:x2", "''"}),
                         [](const ::testing::TestParamInfo<BadSpec>& spec) {
                           return "case" + std::to_string(spec.index);
                         });

std::optional<SweepOptions> sweep_args(std::vector<std::string> args) {
  args.insert(args.begin(), "sweep");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_sweep_args(static_cast<int>(argv.size()), argv.data());
}

std::optional<CalibrateOptions> calibrate_args(std::vector<std::string> args) {
  args.insert(args.begin(), "calibrate");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_calibrate_args(static_cast<int>(argv.size()), argv.data());
}

TEST(SweepCli, DefaultsAndOptions) {
  const auto d = sweep_args({});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->sizes, parse_size_spec("64:16384:x2"));
  EXPECT_EQ(d->ops.size(), 4u);
  EXPECT_EQ(d->dtypes, std::vector<std::string>{"bf16"});
  EXPECT_EQ(d->busy_threshold, 0.5);
  EXPECT_FALSE(d->ceilings);
  const auto o = sweep_args({"--size",           "64:256:x2", "--size",        "1000",   "--op",        "add,matmul",
                             "--dtype",          "fp16",      "--ceilings",    "c.json", "--out",       "/tmp/s",
                             "--active-steps",   "3",         "--eager-calls", "5",      "--warmup-ms", "0",
                             "--busy-threshold", "0.8"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->sizes, sizes({64, 128, 256, 1000}));
  EXPECT_EQ(o->ops, (std::vector<std::string>{"add", "matmul"}));
  EXPECT_EQ(o->dtypes, std::vector<std::string>{"fp16"});
  EXPECT_EQ(o->ceilings, std::optional<fs::path>("c.json"));
  EXPECT_EQ(o->out, "/tmp/s");
  EXPECT_EQ(o->active_steps, 3);
  EXPECT_EQ(o->eager_calls, 5);
  EXPECT_EQ(o->warmup_ms, 0);
  EXPECT_EQ(o->busy_threshold, 0.8);
}

TEST(SweepCli, BadInputIsAUsageError) {
  const std::vector<std::vector<std::string>> bad{
      {"--size", "64:10:x2"},      {"--size", ""},        {"--op", "conv"},
      {"--dtype", "fp8"},          {"--op", "add,add"},   {"--active-steps", "0"},
      {"--eager-calls", "0"},      {"--warmup-ms", "-1"}, {"--busy-threshold", "0"},
      {"--busy-threshold", "1.5"}, {"--ceilings", ""},    {"--nonsense"},
      {"--wait-steps", "-1"}};
  for (const auto& args : bad) {
    EXPECT_THROW(sweep_args(args), UsageError) << args[0];
  }
}

TEST(CalibrateCli, DefaultsAndBadInput) {
  const auto d = calibrate_args({});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->dtypes, (std::vector<std::string>{"bf16", "fp16", "fp32"}));
  EXPECT_EQ(d->gemm_sizes, sizes({4096, 8192}));
  EXPECT_EQ(d->copy_mib, 1024);
  const auto o = calibrate_args({"--dtype", "bf16", "--gemm-size", "2048:8192:x2", "--copy-mib", "64", "--calls", "5"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->gemm_sizes, sizes({2048, 4096, 8192}));
  EXPECT_EQ(o->copy_mib, 64);
  for (const auto& args : std::vector<std::vector<std::string>>{{"--dtype", "int8"},
                                                                {"--gemm-size", "0"},
                                                                {"--gemm-size", "64:10:x2"},
                                                                {"--copy-mib", "0"},
                                                                {"--calls", "2"},
                                                                {"--warmup-ms", "99999999"}}) {
    EXPECT_THROW(calibrate_args(args), UsageError) << args[0];
  }
}

// A sweep session by hand. Times in ns after testing::kBase.
//  add/bf16/64, timed step A (ProfilerStep#5, id 1): cpu_op id 3 [3000, 15000] makes cuKernelGetName
//    [4000, 4200] and cudaLaunchKernel [4100, 10100] (overlapping: union 6100) and cudaGetLastError
//    [10500, 10700] (200): host API 6300, host op 12000; kernel 1000; event 3000. A cudaEventRecord
//    in the step, outside the cpu_op, does not count.
//  timed step B (ProfilerStep#6, id 4): cpu_op id 6 [62000, 70000], one launch [63000, 68000]: host
//    API 5000, host op 8000; kernel 1200; event 3400.
//  -> medians (mean of two): kernel 1100, event 3200, host API 5650, host op 10000.
//  eager (ProfilerStep#4, id 7): annotation id 8 [201000, 230000], 3 cpu_ops; kernels [209000,
//    210000], [218000, 219000], [229000, 231000]: device 4000, window 231000 - 201000 = 30000, calls 3.
//  matmul/bf16/64: verified = false, no steps: not measured.
RawSession sweep_session() {
  RawSession s;
  s.meta.created_utc = "2026-11-29T00:00:00Z";
  s.meta.window_start_ns = testing::kBase;
  s.meta.window_end_ns = testing::kBase + 400000;
  auto& r = s.records;
  auto launch = [&](std::uint32_t corr, std::uint64_t ext_id, const char* name, std::int64_t a, std::int64_t b) {
    r.push_back(ext(corr, ext_id));
    r.push_back(api(RawKind::Runtime, name, 211, corr, a, b));
  };
  launch(20, 3, "cuKernelGetName", 4000, 4200);
  r.back().kind = RawKind::Driver;
  launch(21, 3, "cudaLaunchKernel", 4100, 10100);
  launch(22, 3, "cudaGetLastError", 10500, 10700);
  launch(23, 1, "cudaEventRecord", 1000, 1500);
  r.push_back(device(RawKind::Kernel, 21, 30000, 31000, "add_kernel"));
  launch(30, 6, "cudaLaunchKernel", 63000, 68000);
  r.push_back(device(RawKind::Kernel, 30, 90000, 91200, "add_kernel"));
  launch(40, 9, "cudaLaunchKernel", 203000, 208000);
  launch(41, 10, "cudaLaunchKernel", 212000, 217000);
  launch(42, 11, "cudaLaunchKernel", 221000, 226000);
  launch(43, 7, "cudaStreamSynchronize", 230500, 231500);
  r.push_back(device(RawKind::Kernel, 40, 209000, 210000, "add_kernel"));
  r.push_back(device(RawKind::Kernel, 41, 218000, 219000, "add_kernel"));
  r.push_back(device(RawKind::Kernel, 42, 229000, 231000, "add_kernel"));
  const auto ann = RangeCategory::UserAnnotation;
  const auto op = RangeCategory::CpuOp;
  s.ranges = {range(1, 0, "ProfilerStep#5", ann, 0, 50000),
              range(2, 1, "add/bf16/64", ann, 2000, 20000),
              range(3, 2, "xb::add", op, 3000, 15000),
              range(4, 0, "ProfilerStep#6", ann, 60000, 110000),
              range(5, 4, "add/bf16/64", ann, 61000, 80000),
              range(6, 5, "xb::add", op, 62000, 70000),
              range(7, 0, "ProfilerStep#4", ann, 200000, 300000),
              range(8, 7, "eager:add/bf16/64", ann, 201000, 230000),
              range(9, 8, "xb::add", op, 202000, 210000),
              range(10, 8, "xb::add", op, 211000, 219000),
              range(11, 8, "xb::add", op, 220000, 228000)};
  s.event_timings = {StepTiming{"add/bf16/64", 5, 1, 3000}, StepTiming{"add/bf16/64", 6, 4, 3400}};
  FixtureInfo add{"add/bf16/64", "add", "bf16", 64, 4096, 24576, true, 0.0017, {}, "", true, {}, -1};
  FixtureInfo mm{"matmul/bf16/64", "matmul", "bf16", 64, 524288, 24576, false, 0.5, {}, "", true, {}, -1};
  s.fixtures = {fixture_block(add), fixture_block(mm)};
  return s;
}

TEST(MeasurePoints, HandBuiltSession) {
  const std::vector<PointMeasurement> m = measure_points(sweep_session());
  ASSERT_EQ(m.size(), 2u);
  const PointMeasurement& a = m[0];
  EXPECT_EQ(a.fixture, "add/bf16/64");
  EXPECT_TRUE(a.measured);
  EXPECT_EQ(a.steps, 2);
  EXPECT_EQ(a.kernel_ns, 1100);
  EXPECT_EQ(a.event_ns, 3200);
  EXPECT_EQ(a.host_api_ns, 5650);
  EXPECT_EQ(a.host_op_ns, 10000);
  EXPECT_EQ(a.eager_calls, 3);
  EXPECT_EQ(a.eager_device_ns, 4000);
  EXPECT_EQ(a.eager_window_ns, 30000);
  EXPECT_EQ(a.flops, 4096);
  EXPECT_EQ(a.bytes, 24576);
  const PointMeasurement& b = m[1];
  EXPECT_FALSE(b.measured);
  EXPECT_NE(b.note.find("wrong result"), std::string::npos) << b.note;

  // busy 4000 / 30000 = 0.1333 < 0.5: overhead-bound.
  const PointMetrics p = evaluate_point(a, Roof{740, 4200}, RegimeRules{});
  EXPECT_NEAR(p.busy, 4000.0 / 30000.0, 1e-15);
  EXPECT_EQ(p.regime, Regime::Overhead);
}

Calibration synthetic_calibration();

// The point's graph fixture: ProfilerStep#7 (id 12) > "graph:add/bf16/64" (13) > xb::add (14) >
// one cudaGraphLaunch (correlation 50) whose graph ran the step's 2 calls as 2 kernels of 600 and
// 400 ns; event 1600 ns. Per call: kernel (600 + 400) / 2 = 500, event 800; it saves 1 - 800 / 3200.
RawSession sweep_session_with_graph() {
  RawSession s = sweep_session();
  s.records.push_back(ext(50, 14));
  s.records.push_back(api(RawKind::Runtime, "cudaGraphLaunch", 311, 50, 302000, 303000));
  s.records.push_back(device(RawKind::Kernel, 50, 310000, 310600, "add_kernel"));
  s.records.push_back(device(RawKind::Kernel, 50, 310700, 311100, "add_kernel"));
  s.records[s.records.size() - 2].graph_node_id = 1;
  s.records.back().graph_node_id = 2;
  const auto ann = RangeCategory::UserAnnotation;
  s.ranges.push_back(range(12, 0, "ProfilerStep#7", ann, 300000, 350000));
  s.ranges.push_back(range(13, 12, "graph:add/bf16/64", ann, 301000, 320000));
  s.ranges.push_back(range(14, 13, "xb::add", RangeCategory::CpuOp, 301500, 304000));
  s.event_timings.push_back(StepTiming{"graph:add/bf16/64", 7, 12, 1600, 2});
  FixtureInfo g = read_fixtures(s)[0];
  g.name = "graph:add/bf16/64";
  g.timing.mode = TimingMode::Hot;
  g.timing.graph = true;
  g.timing.launches_per_sample = 2;
  s.fixtures.push_back(fixture_block(g));
  return s;
}

TEST(MeasurePoints, GraphFixtureIsPartOfItsEagerPoint) {
  const std::vector<PointMeasurement> m = measure_points(sweep_session_with_graph());
  ASSERT_EQ(m.size(), 2u) << "a graph fixture is not a point of its own";
  const PointMeasurement& a = m[0];
  EXPECT_EQ(a.fixture, "add/bf16/64");
  EXPECT_EQ(a.event_ns, 3200);  // the eager figures are unchanged
  EXPECT_EQ(a.graph_steps, 1);
  EXPECT_EQ(a.graph_kernel_ns, 500);
  EXPECT_EQ(a.graph_event_ns, 800);
  EXPECT_EQ(m[1].graph_steps, 0);

  SweepReport r;
  r.calibration = synthetic_calibration();
  analyse(r, m);
  std::ostringstream js, csv, md;
  write_sweep_json(r, js);
  write_sweep_csv(r, csv);
  write_sweep_markdown(r, md);
  const auto doc = nlohmann::json::parse(js.str());
  EXPECT_EQ(doc["points"][0]["graph_event_ns"], 800.0);
  EXPECT_EQ(doc["points"][0]["graph_kernel_ns"], 500.0);
  EXPECT_DOUBLE_EQ(doc["points"][0]["graph_saving"].get<double>(), 0.75);
  EXPECT_TRUE(doc["points"][1]["graph_event_ns"].is_null());
  EXPECT_NE(csv.str().find(",overhead-bound,0.800,0.500\n"), std::string::npos) << csv.str();
  // Gaps: eager 3200 - 1100 = 2100, graph 800 - 500 = 300: 1800 ns saved per call, 56% of 3200.
  EXPECT_DOUBLE_EQ(doc["points"][0]["graph_launch_saving_ns"].get<double>(), 1800.0);
  EXPECT_NE(md.str().find("| add/bf16/64 | 3.200 | 0.800 | 1.100 | 0.500 | 2.100 | 0.300 | 1.800 | 56% |"),
            std::string::npos)
      << md.str();
}

TEST(MeasurePoints, MissingEagerWindowIsAnInputError) {
  RawSession s = sweep_session();
  s.ranges[7].name = "something else";
  EXPECT_THROW(measure_points(s), InputError);
}

TEST(MeasurePoints, StepWithoutDeviceActivityIsAnInputError) {
  RawSession s = sweep_session();
  s.records.erase(
      std::remove_if(s.records.begin(), s.records.end(),
                     [](const RawRecord& r) { return r.kind == RawKind::Kernel && r.correlation_id == 30; }),
      s.records.end());
  EXPECT_THROW(measure_points(s), InputError);
}

// ---------------------------------------------------------------------------------------------
// The synthetic sweep: a simple model of an H200 (ceilings 4200 GB/s and 740 TFLOP/s, host launch
// costs and kernel efficiencies in the range results/h200 shows). Made up; labelled synthetic
// everywhere it is written.

Calibration synthetic_calibration() {
  Calibration c;
  c.created_utc = "synthetic";
  c.gpu_name = "NVIDIA H200";
  c.pci_bus_id = "synthetic";
  c.compute_major = 9;
  c.sm_count = 132;
  c.total_global_mem = 150109880320ull;
  c.driver_version = "synthetic";
  c.cuda_driver_version = 13000;
  c.cuda_runtime_version = 13000;
  c.cublas_version = 130100;
  c.clock_source = "synthetic";
  c.sm_clock_max_mhz = 1980;
  c.mem_clock_max_mhz = 3201;
  c.memory_bus_width_bits = 6144;
  c.copy.buffer_bytes = 1ull << 30;
  c.copy.moved_bytes = 2ull << 30;
  c.copy.calls = 20;
  c.copy.median_ns = std::round(static_cast<double>(c.copy.moved_bytes) / 4200.0);
  c.copy.min_ns = c.copy.median_ns - 1000;
  c.copy.gbps = static_cast<double>(c.copy.moved_bytes) / c.copy.median_ns;
  GemmCeiling g{"bf16", 8192, 20, std::round(op_flops(Op::Matmul, 8192) / 740e3), 0, 0};
  g.min_ns = g.median_ns - 5000;
  g.tflops = op_flops(Op::Matmul, 8192) / g.median_ns / 1e3;
  c.gemm.push_back(g);
  c.notes = "SYNTHETIC: made-up ceilings for tests and plots, not measured";
  return c;
}

SweepReport synthetic_report() {
  SweepReport r;
  r.created_utc = "synthetic";
  r.synthetic = true;
  r.notes =
      "Made by tests/cpu/test_sweep.cpp (synthetic_report) from a simple model of an H200: ceilings "
      "4200 GB/s and 740 TFLOP/s, host API time per call 6.7-16 us, kernel efficiency rising with size. "
      "Used by the plot test in CI. Not a measurement.";
  r.meta.created_utc = "synthetic";
  r.meta.cuda_driver_version = 13000;
  r.meta.cuda_runtime_version = 13000;
  r.meta.cupti_version = 130001;
  r.meta.cublas_version = 130100;
  r.calibration = synthetic_calibration();
  r.settings.sizes = parse_size_spec("64:16384:x2");
  const Roof roof = r.calibration.roof("bf16");
  std::vector<PointMeasurement> ms;
  for (const std::string& op_name : r.settings.ops) {
    const Op op = parse_op(op_name);
    for (std::int64_t n : r.settings.sizes) {
      const double nn = static_cast<double>(n);
      PointMeasurement m;
      m.fixture = op_name + "/bf16/" + std::to_string(n);
      m.op = op_name;
      m.dtype = "bf16";
      m.n = n;
      m.flops = op_flops(op, n);
      m.bytes = op_bytes(op, DType::BF16, n);
      m.verified = true;
      m.max_rel_error = op == Op::Add ? 1.8e-3 : 1.65e-3;
      m.measured = true;
      m.steps = r.settings.active_steps;
      const double bound = roofline_bound_ns(m.flops, m.bytes, roof);
      double kernel = 0, api_ns = 7600;
      if (op == Op::Add) {
        kernel = 900 + bound / (0.98 * nn / (nn + 200));
        api_ns = 6700;
      } else {
        kernel = 1800 + roofline_bound_ns(op_flops(Op::Matmul, n), 3 * nn * nn * 2, roof) / (0.97 * nn / (nn + 160));
        if (op == Op::Addmm) {
          kernel += 800 + 4 * nn * nn / (4200 * 0.85);  // the bias copy: 2 n^2 bytes read + written
          api_ns += 8500;
        } else if (op == Op::AddmmBias1d) {
          kernel *= 1.02;
        }
      }
      m.kernel_ns = std::round(kernel);
      m.event_ns = std::round(kernel + 2400);
      m.host_api_ns = api_ns;
      m.host_op_ns = api_ns + 2500;
      const double cadence = std::max(m.kernel_ns + 700, m.host_op_ns + 1500);
      m.eager_calls = static_cast<int>(std::clamp(1e8 / m.kernel_ns, 3.0, 20.0));
      m.eager_device_ns = m.eager_calls * m.kernel_ns;
      m.eager_window_ns = std::round(5000 + (m.eager_calls - 1) * cadence + m.kernel_ns);
      ms.push_back(m);
      PointRunInfo info;
      const double rows = n <= 256 ? nn : 16;
      info.verification = n <= 256 ? "full check (synthetic)" : "sampled 16 rows (synthetic)";
      info.verify_s = std::round((op == Op::Add ? rows * nn * 20e-9 : rows * nn * nn * 1e-9) * 1e3) / 1e3;
      info.tolerance = op == Op::Add ? 4e-3 : 1e-2;
      info.warmup_calls = static_cast<int>(std::max(2.0, std::round(20e6 / std::max(m.kernel_ns, m.host_op_ns))));
      r.run_info[m.fixture] = info;
    }
  }
  analyse(r, ms);
  return r;
}

TEST(SweepWriters, SyntheticReportReadsBack) {
  const SweepReport r = synthetic_report();
  ASSERT_EQ(r.points.size(), 36u);
  // The model lands where the issue expects an H200 to: 64 overhead-bound for every op, GEMMs from
  // 4096 compute-bound, add memory-bound at large sizes.
  for (const PointMetrics& p : r.points) {
    if (p.m.n == 64) {
      EXPECT_EQ(p.regime, Regime::Overhead) << p.m.fixture;
    }
    if (p.m.op != "add" && p.m.n >= 4096) {
      EXPECT_EQ(p.regime, Regime::Compute) << p.m.fixture;
    }
    if (p.m.op == "add" && p.m.n >= 4096) {
      EXPECT_EQ(p.regime, Regime::Memory) << p.m.fixture;
    }
  }
  std::ostringstream json_text, csv, md, table;
  write_sweep_json(r, json_text);
  write_sweep_csv(r, csv);
  write_sweep_markdown(r, md);
  print_sweep_table(r, table);
  const auto doc = nlohmann::json::parse(json_text.str());
  EXPECT_EQ(doc["crossbench"]["format"], "sweep");
  EXPECT_EQ(doc["crossbench"]["synthetic"], true);
  ASSERT_EQ(doc["points"].size(), 36u);
  EXPECT_EQ(doc["points"][0]["fixture"], "matmul/bf16/64");
  EXPECT_EQ(doc["points"][0]["regime"], "overhead-bound");
  EXPECT_DOUBLE_EQ(doc["ceilings"]["gemm_tflops"]["bf16"].get<double>(), r.calibration.gemm_tflops("bf16"));
  EXPECT_EQ(doc["ceilings"]["datasheet"]["bandwidth_gbps"], 4800);
  EXPECT_EQ(doc["crossovers"].size(), 4u);
  EXPECT_TRUE(doc["validation"]["passed"].is_null());
  // CSV: header + one line per point, every line with the header's number of fields.
  std::istringstream lines(csv.str());
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  ASSERT_EQ(rows.size(), 37u);
  const auto fields = [](const std::string& l) { return std::count(l.begin(), l.end(), ',') + 1; };
  for (const std::string& row : rows) EXPECT_EQ(fields(row), fields(rows[0])) << row;
  EXPECT_EQ(rows[0].rfind("fixture,op,dtype,n,status,", 0), 0u);
  EXPECT_NE(md.str().find("SYNTHETIC DATA"), std::string::npos);
  EXPECT_NE(md.str().find("| matmul/bf16/64 | yes"), std::string::npos) << md.str();
  EXPECT_NE(table.str().find("crossover (first size not overhead-bound):"), std::string::npos);
}

TEST(SweepWriters, FailedPointsAreNullsNotNumbers) {
  SweepReport r;
  r.calibration = synthetic_calibration();
  r.settings.sizes = {64};
  PointMeasurement m;
  m.fixture = "add/bf16/64";
  m.op = "add";
  m.dtype = "bf16";
  m.n = 64;
  m.flops = 4096;
  m.bytes = 24576;
  m.max_rel_error = -1;  // non-finite outputs
  m.note = "wrong result (non-finite outputs)";
  analyse(r, {m});
  std::ostringstream json_text, csv;
  write_sweep_json(r, json_text);
  write_sweep_csv(r, csv);
  const auto doc = nlohmann::json::parse(json_text.str());
  EXPECT_EQ(doc["points"][0]["status"], "failed");
  EXPECT_TRUE(doc["points"][0]["kernel_ns"].is_null());
  EXPECT_TRUE(doc["points"][0]["max_rel_error"].is_null());
  EXPECT_EQ(doc["points"][0]["regime"], "not measured");
  EXPECT_TRUE(doc["crossovers"][0]["size"].is_null());
  EXPECT_NE(csv.str().find(",not measured,,\n"), std::string::npos) << csv.str();
}

/// The committed synthetic sweep is what the writers produce today. To regenerate it (after a
/// deliberate change to the model or the format):
///   XB_REGENERATE_SYNTHETIC_SWEEP=1 build/xb_tests --gtest_filter=SweepWriters.CommittedSyntheticSweep
TEST(SweepWriters, CommittedSyntheticSweep) {
  const fs::path dir = fs::path(XB_RESULTS_DIR) / "sweeps" / "synthetic-h200";
  const SweepReport r = synthetic_report();
  if (const char* regen = std::getenv("XB_REGENERATE_SYNTHETIC_SWEEP"); regen != nullptr && std::string(regen) == "1") {
    fs::create_directories(dir);
    write_file_atomic(dir / "sweep.json", [&](std::ostream& o) { write_sweep_json(r, o); });
    write_file_atomic(dir / "sweep.csv", [&](std::ostream& o) { write_sweep_csv(r, o); });
    write_file_atomic(dir / "sweep.md", [&](std::ostream& o) { write_sweep_markdown(r, o); });
    write_file_atomic(dir / "ceilings.json", [&](std::ostream& o) { write_calibration_json(r.calibration, o); });
    GTEST_SKIP() << "regenerated " << dir.string();
  }
  std::ostringstream now;
  write_sweep_json(r, now);
  const auto committed = nlohmann::json::parse(read_text_file(dir / "sweep.json"));
  EXPECT_EQ(committed, nlohmann::json::parse(now.str()))
      << dir.string()
      << "/sweep.json differs from what the writers produce; regenerate it with "
         "XB_REGENERATE_SYNTHETIC_SWEEP=1 build/xb_tests --gtest_filter=SweepWriters.CommittedSyntheticSweep";
  // And the committed ceilings file parses.
  EXPECT_EQ(read_calibration(dir / "ceilings.json").gpu_name, "NVIDIA H200");
}

// ---------------------------------------------------------------------------------------------
// The executable.

TEST(BenchSweepExe, BadInputExitsTwoWithOneLineAndWritesNothing) {
  const fs::path out = fs::temp_directory_path() / "xb_sweep_bad_out";
  fs::remove_all(out);
  for (const std::string args :
       {"sweep --size 64:10:x2", "sweep --size 0:64:x2", "sweep --size 64:16384:x3", "sweep --size 64:100:x2",
        "sweep --op conv", "sweep --busy-threshold 2", "sweep --ceilings /nonexistent/ceilings.json --size 64",
        "calibrate --gemm-size 64:10:x2", "calibrate --dtype fp8", "calibrate --calls 1"}) {
    const auto [code, text] = testing::run_command(std::string(XB_BENCH_EXE) + " " + args + " --out " + out.string());
    EXPECT_EQ(code, 2) << args << ": " << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << args << ": " << text;
    // The subcommand's errors name it: "bench sweep: error: ...".
    const std::string sub = args.substr(0, args.find(' '));
    EXPECT_EQ(text.rfind("bench " + sub + ": error: ", 0), 0u) << text;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}

TEST(BenchSweepExe, CeilingsWithoutTheDtypeIsAnError) {
  const fs::path dir = fs::temp_directory_path() / "xb_sweep_ceilings";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "out";
  const std::string ceilings = (fs::path(XB_RESULTS_DIR) / "sweeps" / "synthetic-h200" / "ceilings.json").string();
  const auto [code, text] = testing::run_command(
      std::string(XB_BENCH_EXE) + " sweep --dtype fp32 --size 64 --ceilings " + ceilings + " --out " + out.string());
  EXPECT_EQ(code, 2) << text;
  EXPECT_NE(text.find("no GEMM ceiling for fp32"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

TEST(BenchSweepExe, NoDeviceIsAClearErrorWithExitTwo) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
    GTEST_SKIP() << "a CUDA device is present; this test covers machines without one";
  }
  const fs::path out = fs::temp_directory_path() / "xb_sweep_nodev_out";
  fs::remove_all(out);
  for (const std::string args : {"sweep --size 64", "calibrate"}) {
    const auto [code, text] = testing::run_command(std::string(XB_BENCH_EXE) + " " + args + " --out " + out.string());
    EXPECT_EQ(code, 2) << text;
    EXPECT_NE(text.find("no CUDA device"), std::string::npos) << text;
    EXPECT_FALSE(fs::exists(out));
  }
}

}  // namespace
}  // namespace xb
