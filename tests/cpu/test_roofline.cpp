// Roofline arithmetic and regime rules on hand-computed points (bench/core/ceilings.h, bench/sweep/regime.h).
//
// Ceilings used throughout: 740 TFLOP/s (bf16 GEMM) and 4200 GB/s (copy, read + written), about
// what an H200 gives. Hand computations:
//   matmul 4096: FLOPs 2 * 4096^3 = 137438953472, bytes 3 * 4096^2 * 2 = 100663296
//     compute term 137438953472 / 740e3 = 185728.3155 ns; memory term 100663296 / 4200 = 23967.4514 ns
//     intensity 1365.33 FLOP/B; ridge 740e3 / 4200 = 176.19 FLOP/B
//     at a CUPTI time of 190607 ns: 721.0593 TFLOP/s, roofline fraction 185728.3155 / 190607 = 0.974404
//   add 4096: FLOPs 4096^2 = 16777216, bytes 100663296
//     compute term 22.6719 ns; memory term 23967.4514 ns; at 24352 ns: 4133.68 GB/s, fraction 0.984209
//   matmul 64: FLOPs 524288, bytes 24576: compute term 0.7085 ns < memory term 5.8514 ns
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>
#include <stdexcept>

#include "bench/core/ceilings.h"
#include "bench/sweep/regime.h"
#include "profiler/model/session_io.h"

namespace xb {
namespace {

constexpr Roof kRoof{740, 4200};

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

TEST(Roofline, GemmTermsByHand) {
  const double flops = 137438953472.0, bytes = 100663296.0;
  EXPECT_LT(rel(compute_time_ns(flops, kRoof), 185728.3155027027), 1e-12);
  EXPECT_LT(rel(memory_time_ns(bytes, kRoof), 23967.45142857143), 1e-12);
  EXPECT_LT(rel(roofline_bound_ns(flops, bytes, kRoof), 185728.3155027027), 1e-12);
  EXPECT_LT(rel(kRoof.ridge_intensity(), 176.1904761904762), 1e-12);
  // Above the ridge the attainable rate is the peak; below it, intensity x bandwidth.
  EXPECT_DOUBLE_EQ(attainable_tflops(1365.3333333333333, kRoof), 740.0);
  EXPECT_LT(rel(attainable_tflops(1.0 / 6.0, kRoof), 0.7), 1e-12);  // 4200 GB/s / 6 = 0.7 TFLOP/s
  EXPECT_LT(rel(attainable_tflops(kRoof.ridge_intensity(), kRoof), 740.0), 1e-12);
}

TEST(Roofline, BadInputsThrow) {
  EXPECT_THROW(compute_time_ns(1, Roof{0, 4200}), std::invalid_argument);
  EXPECT_THROW(memory_time_ns(1, Roof{740, -1}), std::invalid_argument);
  EXPECT_THROW(compute_time_ns(-1, kRoof), std::invalid_argument);
  EXPECT_THROW(memory_time_ns(std::numeric_limits<double>::quiet_NaN(), kRoof), std::invalid_argument);
  EXPECT_THROW(Roof{}.ridge_intensity(), std::invalid_argument);
  EXPECT_THROW(attainable_tflops(-2, kRoof), std::invalid_argument);
}

TEST(Regime, Rules) {
  const RegimeRules rules;                                   // busy threshold 0.5
  EXPECT_EQ(classify(0.2, 10, 1, rules), Regime::Overhead);  // overhead wins over both terms
  EXPECT_EQ(classify(0.49999, 1, 10, rules), Regime::Overhead);
  EXPECT_EQ(classify(0.5, 1, 10, rules), Regime::Memory);  // the threshold itself is not overhead
  EXPECT_EQ(classify(0.99, 10, 1, rules), Regime::Compute);
  EXPECT_EQ(classify(0.99, 5, 5, rules), Regime::Compute);  // a tie counts as compute-bound
  EXPECT_EQ(classify(0.7, 5, 5.0001, rules), Regime::Memory);
  EXPECT_EQ(classify(0.7, 10, 1, RegimeRules{0.8}), Regime::Overhead);
  EXPECT_STREQ(to_string(Regime::Overhead), "overhead-bound");
  EXPECT_STREQ(to_string(Regime::Memory), "memory-bound");
  EXPECT_STREQ(to_string(Regime::Compute), "compute-bound");
  EXPECT_STREQ(to_string(Regime::NotMeasured), "not measured");
}

TEST(Regime, BadInputsThrow) {
  EXPECT_THROW(classify(-0.1, 1, 1, RegimeRules{}), std::invalid_argument);
  EXPECT_THROW(classify(1.6, 1, 1, RegimeRules{}), std::invalid_argument);
  EXPECT_THROW(classify(std::numeric_limits<double>::quiet_NaN(), 1, 1, RegimeRules{}), std::invalid_argument);
  EXPECT_THROW(classify(0.9, -1, 1, RegimeRules{}), std::invalid_argument);
  EXPECT_THROW(classify(0.9, 1, 1, RegimeRules{0}), std::invalid_argument);
  EXPECT_THROW(classify(0.9, 1, 1, RegimeRules{1.5}), std::invalid_argument);
}

PointMeasurement point(const std::string& op, std::int64_t n, double flops, double bytes, double kernel_ns,
                       double eager_device_ns, double eager_window_ns) {
  PointMeasurement m;
  m.fixture = op + "/bf16/" + std::to_string(n);
  m.op = op;
  m.dtype = "bf16";
  m.n = n;
  m.flops = flops;
  m.bytes = bytes;
  m.verified = true;
  m.measured = true;
  m.steps = 10;
  m.kernel_ns = kernel_ns;
  m.event_ns = kernel_ns + 2400;
  m.eager_calls = 20;
  m.eager_device_ns = eager_device_ns;
  m.eager_window_ns = eager_window_ns;
  return m;
}

TEST(EvaluatePoint, Matmul4096IsComputeBound) {
  // 20 calls of 190607 ns in a 3830000 ns window: busy 3812140 / 3830000 = 0.995337.
  const PointMetrics p = evaluate_point(
      point("matmul", 4096, 137438953472.0, 100663296.0, 190607, 20 * 190607.0, 3830000), kRoof, RegimeRules{});
  EXPECT_LT(rel(p.busy, 0.9953368146214099), 1e-12);
  EXPECT_LT(rel(p.intensity, 1365.3333333333333), 1e-12);
  EXPECT_LT(rel(p.tflops, 721.0593182411978), 1e-12);
  EXPECT_LT(rel(p.gbps, 100663296.0 / 190607), 1e-12);
  EXPECT_LT(rel(p.compute_ns, 185728.3155027027), 1e-12);
  EXPECT_LT(rel(p.memory_ns, 23967.45142857143), 1e-12);
  EXPECT_LT(rel(p.bound_ns, 185728.3155027027), 1e-12);
  EXPECT_LT(rel(p.roofline_fraction, 0.9744044841097268), 1e-12);
  EXPECT_EQ(p.regime, Regime::Compute);
}

TEST(EvaluatePoint, Add4096IsMemoryBound) {
  // 20 calls of 24352 ns, each followed by a 700 ns gap: busy 487040 / 501040 = 0.972058.
  const PointMetrics p =
      evaluate_point(point("add", 4096, 16777216.0, 100663296.0, 24352, 20 * 24352.0, 501040), kRoof, RegimeRules{});
  EXPECT_LT(rel(p.busy, 487040.0 / 501040.0), 1e-12);
  EXPECT_LT(rel(p.gbps, 4133.676741130092), 1e-12);
  EXPECT_LT(rel(p.compute_ns, 22.671913513513513), 1e-12);
  EXPECT_LT(rel(p.roofline_fraction, 0.9842087478881172), 1e-12);
  EXPECT_EQ(p.regime, Regime::Memory);
}

TEST(EvaluatePoint, Matmul64IsOverheadBoundThoughItsTermsSayMemory) {
  // Kernel 1920 ns, host launches every 9500 ns: busy 20 * 1920 / 190000 = 0.202105.
  const PointMetrics p =
      evaluate_point(point("matmul", 64, 524288, 24576, 1920, 20 * 1920.0, 190000), kRoof, RegimeRules{});
  EXPECT_LT(rel(p.busy, 0.20210526315789473), 1e-12);
  EXPECT_GT(p.memory_ns, p.compute_ns);  // 5.85 ns > 0.71 ns: below the ridge
  EXPECT_LT(rel(p.roofline_fraction, 5.851428571428571 / 1920), 1e-12);
  EXPECT_EQ(p.regime, Regime::Overhead);
}

TEST(EvaluatePoint, UnmeasuredAndInvalidPoints) {
  PointMeasurement m = point("add", 64, 4096, 24576, 0, 0, 0);
  m.measured = false;
  m.note = "wrong result";
  const PointMetrics p = evaluate_point(m, kRoof, RegimeRules{});
  EXPECT_EQ(p.regime, Regime::NotMeasured);
  EXPECT_EQ(p.busy, 0);
  EXPECT_THROW(evaluate_point(point("add", 64, 4096, 24576, 0, 1, 10), kRoof, RegimeRules{}), std::invalid_argument);
  EXPECT_THROW(evaluate_point(point("add", 64, 4096, 24576, 900, 1, 0), kRoof, RegimeRules{}), std::invalid_argument);
  EXPECT_THROW(evaluate_point(point("add", 64, 0, 24576, 900, 1, 10), kRoof, RegimeRules{}), std::invalid_argument);
  EXPECT_THROW(evaluate_point(point("add", 64, 4096, 24576, 900, 1, 10), Roof{}, RegimeRules{}), std::invalid_argument);
}

PointMetrics with_regime(const std::string& op, const std::string& dtype, std::int64_t n, Regime r) {
  PointMetrics p;
  p.m.op = op;
  p.m.dtype = dtype;
  p.m.n = n;
  p.m.measured = r != Regime::NotMeasured;
  p.regime = r;
  return p;
}

TEST(Crossover, FirstSizeNotOverheadBoundInAscendingOrder) {
  const std::vector<PointMetrics> points{
      with_regime("matmul", "bf16", 4096, Regime::Compute),  // out of order on purpose
      with_regime("matmul", "bf16", 64, Regime::Overhead),
      with_regime("matmul", "bf16", 1024, Regime::Compute),
      with_regime("matmul", "bf16", 256, Regime::Overhead),
      with_regime("add", "bf16", 64, Regime::Overhead),
      with_regime("add", "bf16", 128, Regime::NotMeasured),  // ignored
      with_regime("add", "bf16", 2048, Regime::Memory),
      with_regime("add", "bf16", 4096, Regime::Overhead),  // overhead-bound again: flagged
      with_regime("add", "bf16", 8192, Regime::Memory),
      with_regime("addmm", "bf16", 64, Regime::Overhead),
      with_regime("matmul", "fp16", 64, Regime::Compute),
  };
  const std::vector<Crossover> x = find_crossovers(points);
  ASSERT_EQ(x.size(), 4u);
  EXPECT_EQ(x[0].op, "matmul");
  EXPECT_EQ(x[0].dtype, "bf16");
  EXPECT_EQ(x[0].size, std::optional<std::int64_t>(1024));
  EXPECT_EQ(x[0].regime_at_crossover, "compute-bound");
  EXPECT_FALSE(x[0].largest_overhead_above);
  EXPECT_EQ(x[1].op, "add");
  EXPECT_EQ(x[1].size, std::optional<std::int64_t>(2048));
  EXPECT_EQ(x[1].regime_at_crossover, "memory-bound");
  EXPECT_EQ(x[1].largest_overhead_above, std::optional<std::int64_t>(4096));
  EXPECT_EQ(x[2].op, "addmm");
  EXPECT_FALSE(x[2].size);
  EXPECT_EQ(x[2].regime_at_crossover, "");
  EXPECT_EQ(x[3].dtype, "fp16");
  EXPECT_EQ(x[3].size, std::optional<std::int64_t>(64));
}

TEST(Datasheet, KnownAndUnknownGpus) {
  const DatasheetFigures h200 = datasheet_for("NVIDIA H200");
  ASSERT_TRUE(h200.known);
  EXPECT_EQ(h200.bandwidth_gbps, 4800);
  EXPECT_EQ(h200.tflops.at("bf16"), 989);
  EXPECT_EQ(h200.tflops.at("fp32"), 67);
  EXPECT_TRUE(datasheet_for("NVIDIA H100 80GB HBM3").known);
  EXPECT_FALSE(datasheet_for("NVIDIA GeForce RTX 4090").known);
}

Calibration sample_calibration() {
  Calibration c;
  c.created_utc = "2026-11-29T10:00:00Z";
  c.gpu_name = "NVIDIA H200";
  c.pci_bus_id = "00000000:3B:00.0";
  c.compute_major = 9;
  c.sm_count = 132;
  c.total_global_mem = 150109880320ull;
  c.driver_version = "580.159.04";
  c.cuda_driver_version = 13000;
  c.cuda_runtime_version = 13000;
  c.cublas_version = 130100;
  c.clock_source = "nvml";
  c.sm_clock_max_mhz = 1980;
  c.mem_clock_max_mhz = 3201;
  c.memory_bus_width_bits = 6144;
  c.clocks.push_back(ClockReading{"idle", 345, 3201, 36});
  c.copy = CopyCeiling{1u << 30, 2u << 30, 20, 511000, 509000, 2147483648.0 / 511000};
  c.gemm.push_back(GemmCeiling{"bf16", 4096, 20, 190000, 189000, 137438953472.0 / 190000 / 1e3});
  c.gemm.push_back(GemmCeiling{"bf16", 8192, 20, 1480000, 1470000, 1099511627776.0 / 1480000 / 1e3});
  c.gemm.push_back(GemmCeiling{"fp32", 4096, 20, 2900000, 2890000, 137438953472.0 / 2900000 / 1e3});
  return c;
}

TEST(Calibration, CeilingsAreTheBestSizeAndTheCopy) {
  const Calibration c = sample_calibration();
  // bf16: 8192 gives 742.9 TFLOP/s, 4096 gives 723.4: the best is the ceiling.
  EXPECT_LT(rel(c.gemm_tflops("bf16"), 1099511627776.0 / 1480000 / 1e3), 1e-12);
  EXPECT_LT(rel(c.bandwidth_gbps(), 4202.52), 1e-5);
  EXPECT_THROW(c.gemm_tflops("fp16"), std::invalid_argument);
  const Roof r = c.roof("fp32");
  EXPECT_LT(rel(r.peak_tflops, 47.3927), 1e-5);
  // 2 x 3201 MHz x 6144 bit / 8 = 4916.7 GB/s.
  EXPECT_LT(rel(c.clock_bandwidth_gbps(), 4916.736), 1e-9);
  Calibration none;
  EXPECT_EQ(none.clock_bandwidth_gbps(), 0);
  EXPECT_THROW(none.bandwidth_gbps(), std::invalid_argument);
}

TEST(Calibration, JsonRoundTrip) {
  const Calibration c = sample_calibration();
  std::ostringstream out;
  write_calibration_json(c, out);
  const Calibration back = parse_calibration_json(out.str());
  EXPECT_EQ(back.gpu_name, c.gpu_name);
  EXPECT_EQ(back.pci_bus_id, c.pci_bus_id);
  EXPECT_EQ(back.compute_major, 9);
  EXPECT_EQ(back.driver_version, "580.159.04");
  EXPECT_EQ(back.sm_clock_max_mhz, 1980);
  ASSERT_EQ(back.clocks.size(), 1u);
  EXPECT_EQ(back.clocks[0].sm_mhz, 345);
  EXPECT_EQ(back.copy.moved_bytes, c.copy.moved_bytes);
  EXPECT_DOUBLE_EQ(back.copy.gbps, c.copy.gbps);
  ASSERT_EQ(back.gemm.size(), 3u);
  EXPECT_DOUBLE_EQ(back.gemm_tflops("bf16"), c.gemm_tflops("bf16"));
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["crossbench"]["format"], "ceilings");
  EXPECT_EQ(doc["datasheet"]["bandwidth_gbps"], 4800);
  EXPECT_DOUBLE_EQ(doc["ceilings"]["gemm_tflops"]["bf16"].get<double>(), c.gemm_tflops("bf16"));

  std::ostringstream md;
  write_calibration_markdown(c, md);
  EXPECT_NE(md.str().find("| copy bandwidth, GB/s (read + written) | 4203 | 4800 | 87.6% |"), std::string::npos)
      << md.str();
  EXPECT_NE(md.str().find("| bf16 GEMM, TFLOP/s (best size) | 742.9 | 989 | 75.1% |"), std::string::npos) << md.str();
}

TEST(Calibration, BadFilesAreInputErrors) {
  std::ostringstream out;
  write_calibration_json(sample_calibration(), out);
  const std::string good = out.str();
  EXPECT_THROW(parse_calibration_json("not json"), InputError);
  EXPECT_THROW(parse_calibration_json("{}"), InputError);
  auto doc = nlohmann::json::parse(good);
  doc["crossbench"]["format"] = "sweep";
  EXPECT_THROW(parse_calibration_json(doc.dump()), InputError);
  doc = nlohmann::json::parse(good);
  doc["copy"].erase("gbps");
  try {
    parse_calibration_json(doc.dump());
    FAIL() << "accepted a file without copy.gbps";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"gbps\""), std::string::npos) << e.what();
  }
  doc = nlohmann::json::parse(good);
  doc["gemm"][0]["tflops"] = "fast";
  EXPECT_THROW(parse_calibration_json(doc.dump()), InputError);
  EXPECT_THROW(read_calibration("/nonexistent/ceilings.json"), InputError);
}

}  // namespace
}  // namespace xb
