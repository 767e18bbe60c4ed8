// The CUPTI profiler and bench on a real GPU: records kernels, memcpy, memset, runtime/driver
// calls, synchronization and external correlation, joins them in the event model, and the
// bench executable's device-dependent errors. Skips without a device.
#include <gtest/gtest.h>

#include "../common/run_command.h"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "gpu_test.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/workload.h"
#include "profiler/adapters/cupti_source.h"
#include "profiler/model/event_model.h"
#include "profiler/model/profiler.h"

namespace xb {
namespace {

using xb::testing::GpuTest;

TEST_F(GpuTest, CuptiRecordsEveryKindAndTheModelJoinsThem) {
  Stream stream;
  auto add = make_workload(Op::Add, DType::BF16, 256, stream.get());
  auto addmm = make_workload(Op::Addmm, DType::BF16, 256, stream.get());  // memcpy + GEMM
  Profiler prof(make_cupti_source());
  prof.start();
  prof.begin_fixture(Schedule{1, 1, 3});
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t step = prof.begin_step();
    {
      ScopedRange a(prof, "work", RangeCategory::UserAnnotation);
      ScopedRange op(prof, "xb::add", RangeCategory::CpuOp);
      add->enqueue();
      addmm->enqueue();
    }
    stream.synchronize();
    EXPECT_EQ(step != 0, i >= 2);
    prof.end_step();
  }
  XB_CUDA(cudaDeviceSynchronize());
  const RawSession raw = prof.stop();
  EXPECT_EQ(raw.meta.dropped_records, 0u);
  EXPECT_GT(raw.meta.discarded_by_schedule, 0u);  // wait and warmup steps
  ASSERT_FALSE(raw.meta.devices.empty());
  std::set<RawKind> kinds;
  for (const RawRecord& r : raw.records) kinds.insert(r.kind);
  for (RawKind k : {RawKind::Kernel, RawKind::Memcpy, RawKind::Runtime, RawKind::Driver, RawKind::Synchronization,
                    RawKind::ExternalCorrelation}) {
    EXPECT_TRUE(kinds.count(k)) << "no " << to_string(k) << " record";
  }
  const Session s = build_session(raw);
  int kernels = 0, memcpys = 0;
  for (const DeviceActivity& a : s.device) {
    kernels += a.kind == DeviceActivityKind::Kernel;
    memcpys += a.kind == DeviceActivityKind::Memcpy;
    ASSERT_GE(a.launch, 0) << a.name;
    EXPECT_GE(a.start_ns, s.api[static_cast<std::size_t>(a.launch)].start_ns) << a.name;
    EXPECT_GT(a.duration_ns(), 0) << a.name;
    EXPECT_NE(a.external_id, 0u) << a.name;
    EXPECT_GE(a.start_ns, raw.meta.window_start_ns);
    EXPECT_LE(a.end_ns, raw.meta.window_end_ns);
  }
  EXPECT_EQ(kernels, 3 * 2);  // 3 active steps x (add kernel + GEMM)
  EXPECT_EQ(memcpys, 3);      // addmm's bias copy
  EXPECT_EQ(raw.ranges.size(), 3u * 3u);
}

TEST_F(GpuTest, DroppedRecordsAreCountedWithATinyBufferLimit) {
  Stream stream;
  auto add = make_workload(Op::Add, DType::FP32, 64, stream.get());
  // One 4 KiB buffer at a time: thousands of launches cannot fit, CUPTI must drop and count.
  Profiler prof(make_cupti_source(4096, 1, kCuptiAllKinds, 0));
  prof.start();
  prof.begin_fixture(Schedule{0, 0, 1});
  prof.begin_step();
  for (int i = 0; i < 20000; ++i) add->enqueue();
  stream.synchronize();
  prof.end_step();
  const RawSession raw = prof.stop();
  EXPECT_GT(raw.meta.dropped_records, 0u);
}

TEST_F(GpuTest, BenchRefusesSizesThatDoNotFitInDeviceMemory) {
  const auto out = std::filesystem::temp_directory_path() / "xb_gpu_too_big";
  std::filesystem::remove_all(out);
  const auto [code, text] =
      xb::testing::run_command(std::string(XB_BENCH_EXE) + " --size 64,300000 --op add --out " + out.string());
  EXPECT_EQ(code, 2) << text;
  EXPECT_NE(text.find("does not fit"), std::string::npos) << text;
  EXPECT_NE(text.find("GiB free"), std::string::npos) << text;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(GpuTest, BenchEndToEndSmallRunValidates) {
  const auto out = std::filesystem::temp_directory_path() / "xb_gpu_e2e";
  std::filesystem::remove_all(out);
  const auto [code, text] = xb::testing::run_command(
      std::string(XB_BENCH_EXE) + " --size 64 --dtype bf16,fp16,fp32 --active-steps 3 --out " + out.string());
  EXPECT_EQ(code, 0) << text;
  for (const char* f : {"benchmark.json", "events.json", "raw_session.json", "table.txt", "table.json",
                        "trace_only.json", "full.json", "validation.json", "summary.md"}) {
    EXPECT_TRUE(std::filesystem::exists(out / f)) << f;
  }
}

TEST_F(GpuTest, CuptiSourceRecordsOnlyTheKindsAskedFor) {
  Stream stream;
  auto add = make_workload(Op::Add, DType::BF16, 256, stream.get());
  auto count_kinds = [&](unsigned kinds) {
    auto source = make_cupti_source(8u << 20, 256, kinds);
    source->start();
    for (int i = 0; i < 5; ++i) add->enqueue();
    stream.synchronize();
    std::map<RawKind, int> n;
    for (const RawRecord& r : source->stop()) ++n[r.kind];
    return n;
  };
  std::map<RawKind, int> kernel_only = count_kinds(kCuptiKernel);
  EXPECT_EQ(kernel_only[RawKind::Kernel], 5);
  EXPECT_EQ(kernel_only[RawKind::Runtime], 0);
  EXPECT_EQ(kernel_only[RawKind::Driver], 0);
  std::map<RawKind, int> with_runtime = count_kinds(kCuptiKernel | kCuptiRuntime);
  EXPECT_EQ(with_runtime[RawKind::Kernel], 5);
  EXPECT_GE(with_runtime[RawKind::Runtime], 5);  // a cudaLaunchKernel per kernel
  EXPECT_EQ(with_runtime[RawKind::Driver], 0);
  std::map<RawKind, int> all = count_kinds(kCuptiAllKinds);
  EXPECT_EQ(all[RawKind::Kernel], 5);
  EXPECT_GE(all[RawKind::Runtime], 5);
}

TEST_F(GpuTest, BenchTuneAddAndOverheadBreakdownWriteTheirFigures) {
  const auto dir = std::filesystem::temp_directory_path() / "xb_gpu_tune";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
#ifdef XB_LAB  // bench tune-add ships with -DXB_LAB=ON only
  {
    const auto [code, text] = xb::testing::run_command(
        std::string(XB_BENCH_EXE) + " tune-add --dtype fp16 --size 64,100 --launches 2 --passes 2 --out " +
        (dir / "tune.json").string());
    ASSERT_EQ(code, 0) << text;
    EXPECT_NE(text.find("v1/t128/default/lean (bench)"), std::string::npos) << text;  // 64^2, 100^2 <= 256^2
    nlohmann::json doc;
    std::ifstream(dir / "tune.json") >> doc;
    ASSERT_EQ(doc["tune_add"].size(), 2u);
    for (const auto& r : doc["tune_add"]) {
      EXPECT_EQ(r["configs"].size(), 83u);  // the 75 standard configurations and the 8 lean ones
      EXPECT_EQ(r["chosen"], "v1/t128/default/lean");
      EXPECT_GE(r["chosen_over_fastest"].get<double>(), 1.0);
      double previous = 0;
      for (const auto& c : r["configs"]) {  // fastest first, every median a real duration
        EXPECT_GT(c["median_ns"].get<double>(), 0.0);
        EXPECT_GE(c["median_ns"].get<double>(), previous);
        previous = c["median_ns"].get<double>();
      }
    }
  }
#endif
  {
    const auto [code, text] = xb::testing::run_command(
        std::string(XB_BENCH_EXE) + " overhead --breakdown --op add,matmul --reps 3 --launches 5 --out " +
        (dir / "overhead.json").string());
    ASSERT_EQ(code, 0) << text;
    nlohmann::json doc;
    std::ifstream(dir / "overhead.json") >> doc;
    ASSERT_EQ(doc["overhead"].size(), 2u);
    for (const auto& r : doc["overhead"]) {
      ASSERT_EQ(r["modes"].size(), 7u);
      EXPECT_EQ(r["modes"][0]["mode"], "off");
      EXPECT_EQ(r["modes"][6]["mode"], "full profiler");
      EXPECT_DOUBLE_EQ(r["full_ratio"].get<double>(), r["full_ns"].get<double>() / r["off_ns"].get<double>());
      for (const auto& m : r["modes"]) EXPECT_GT(m["median_ns"].get<double>(), 0.0);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_F(GpuTest, BenchAbInterleavesTwoWorkloads) {
  const auto file = std::filesystem::temp_directory_path() / "xb_gpu_ab.json";
  std::filesystem::remove(file);
  const auto [code, text] = xb::testing::run_command(
      std::string(XB_BENCH_EXE) + " ab --op matmul,addmm --size 256 --rounds 4 --launches 3 --warmup-s 0 --out " +
      file.string());
  ASSERT_EQ(code, 0) << text;
  EXPECT_NE(text.find("B / A: median over 4 interleaved rounds"), std::string::npos) << text;
  nlohmann::json doc;
  std::ifstream(file) >> doc;
  const auto& ab = doc["ab"];
  EXPECT_EQ(ab["a"], "matmul");
  EXPECT_EQ(ab["b"], "addmm");
  ASSERT_EQ(ab["a_per_round_ns"].size(), 4u);
  ASSERT_EQ(ab["b_per_round_ns"].size(), 4u);
  // addmm is a copy plus a GEMM of the same shape: both counted, so it takes longer per call.
  EXPECT_GT(ab["b_median_ns"].get<double>(), ab["a_median_ns"].get<double>());
  EXPECT_GT(ab["ratio_median"].get<double>(), 1.0);
  EXPECT_LE(ab["ratio_min"].get<double>(), ab["ratio_median"].get<double>());
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace xb
