// Tests of kernels/ that need a CUDA device (each skips without one): workloads against the fp64
// reference, the add kernel's vector/tail/unaligned paths bit for bit, the check catching bad
// outputs, the blocking kernel, the random fill and the RAII owners.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "kernels/add.h"
#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/gemm.h"
#include "kernels/random_fill.h"
#include "kernels/reference.h"
#include "kernels/workload.h"
#include "tests/gpu/add_check.h"
#include "tests/gpu/gpu_test.h"

namespace xb {
namespace {

using xb::testing::add_span_name;
using xb::testing::add_spans;
using xb::testing::AddSpan;
using xb::testing::check_add_span;
using xb::testing::GpuTest;
using xb::testing::GpuTestWithParam;
using xb::testing::kAddSpanEveryConfigMax;

// ---- workloads against the host fp64 reference -----------------------------------------------

using WorkloadCase = std::tuple<Op, DType, std::int64_t>;

class WorkloadVerifies : public GpuTestWithParam<WorkloadCase> {};

TEST_P(WorkloadVerifies, MatchesHostReference) {
  const auto [op, dtype, n] = GetParam();
  Stream stream;
  const std::unique_ptr<Workload> workload = make_workload(op, dtype, n, stream.get());
  EXPECT_EQ(workload->op(), op);
  EXPECT_EQ(workload->dtype(), dtype);
  EXPECT_EQ(workload->n(), n);
  EXPECT_EQ(workload->stream(), stream.get());

  const Verification v = workload->verify();
  EXPECT_TRUE(v.passed) << to_string(op) << " " << to_string(dtype) << " n=" << n << ": rel_error " << v.rel_error
                        << " > tolerance " << v.tolerance << " (" << v.detail << ")";
  EXPECT_EQ(v.tolerance, verification_tolerance(op, dtype));
  EXPECT_GT(v.rel_error, -1.0);  // a number, not NaN
  const std::int64_t rows = n <= 256 ? n : 16;
  EXPECT_EQ(v.checked_elements, rows * n);

  // A second call over the same buffers (the benchmark loop) verifies too.
  workload->enqueue();
  XB_CUDA(cudaStreamSynchronize(stream.get()));
  EXPECT_TRUE(workload->verify().passed);
}

std::string case_name(const ::testing::TestParamInfo<WorkloadCase>& info) {
  return std::string(to_string(std::get<0>(info.param))) + "_" + to_string(std::get<1>(info.param)) + "_n" +
         std::to_string(std::get<2>(info.param));
}

// 64 and 256: full checks; 100: rows of 100 elements (200 or 400 bytes, not a multiple of 256);
// 300: the sampled-rows path.
INSTANTIATE_TEST_SUITE_P(AllOpsAllDtypes, WorkloadVerifies,
                         ::testing::Combine(::testing::Values(Op::Matmul, Op::Add, Op::Addmm, Op::AddmmBias1d),
                                            ::testing::Values(DType::BF16, DType::FP16, DType::FP32),
                                            ::testing::Values<std::int64_t>(64, 100, 256, 300)),
                         case_name);

// Odd n: n^2 % 8 == 1, so the add kernel's scalar tail runs.
INSTANTIATE_TEST_SUITE_P(AddTails, WorkloadVerifies,
                         ::testing::Combine(::testing::Values(Op::Add),
                                            ::testing::Values(DType::BF16, DType::FP16, DType::FP32),
                                            ::testing::Values<std::int64_t>(1, 7, 101)),
                         case_name);

// ---- add kernel, bit for bit ----------------------------------------------------------------

class AddKernel : public GpuTestWithParam<AddSpan> {};

// Spans up to 200k elements run under every size class's configuration (the lean kernel's four
// instantiations per shape: with and without the bounds check and the tail, and its fallback to
// the standard V = 1 kernel when the grid is capped; the scalar kernel for unaligned pointers);
// longer ones under the configuration bench picks for them. The rest of the tuning space: the
// lab's tests (tests/gpu/lab/test_add_tuning.cpp).
TEST_P(AddKernel, BitExactOnEveryElementAndWritesNothingElse) {
  const AddSpan s = GetParam();
  const AddLaunchConfig chosen = add_launch_config(s.dtype, s.count);
  EXPECT_GT(chosen.max_blocks, 0);
  EXPECT_EQ(chosen.threads_per_block % 32, 0);
  if (s.count > kAddSpanEveryConfigMax) return check_add_span(s, chosen, launch_add);
  for (const AddLaunchConfig& config : add_size_class_configs()) check_add_span(s, config, launch_add);
}

// bench's configurations: one per size class, in ascending size, each what add_launch_config
// gives inside its class.
TEST_F(GpuTest, AddSizeClassConfigsAreWhatBenchPicks) {
  const std::vector<AddLaunchConfig> classes = add_size_class_configs();
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_EQ(to_string(classes[0]), "v1/t128/default/lean");
  EXPECT_EQ(to_string(classes[1]), "v1/t256/default/lean");
  EXPECT_EQ(to_string(classes[2]), "v1/t256/default/lean/r6");
  const std::int64_t inside[] = {64 * 64, 1024 * 1024, 16384LL * 16384};
  for (std::size_t i = 0; i < classes.size(); ++i) {
    EXPECT_GT(classes[i].max_blocks, 0);
    EXPECT_EQ(to_string(add_launch_config(DType::FP16, inside[i])), to_string(classes[i]));
  }
}

// Configurations launch_add cannot run are refused on every path (vector, unaligned, count 0),
// and so is every configuration of the tuning space that is not a size class's (kernels/add.cu
// does not instantiate its kernels; tools/lab/add_tuning does).
TEST_F(GpuTest, AddRefusesConfigurationsItCannotRun) {
  Stream stream;
  DeviceBuffer buf(4096);
  const auto refused = [&](const AddLaunchConfig& c, const void* a = nullptr, std::int64_t count = 16) {
    EXPECT_THROW(launch_add(DType::FP32, a != nullptr ? a : buf.get(), buf.get(), buf.get(), count, stream.get(), c),
                 std::invalid_argument)
        << to_string(c);
  };
  const AddLaunchConfig small = add_launch_config(DType::FP32, 64 * 64);
  AddLaunchConfig bad = small;
  bad.vectors_per_thread = 3;
  refused(bad);
  refused(bad, buf.get<char>() + 4);  // unaligned: the scalar kernel's path
  refused(bad, nullptr, 0);
  bad = small;
  bad.threads_per_block = 1024;
  refused(bad);
  bad = small;
  bad.kernel = AddKernelVariant::Standard;
  bad.blocks_per_sm = 6;  // a residency cap needs the lean kernel
  refused(bad);
  // The lean kernel exists for v1, 128 or 256 threads, default or plain hints only; a residency
  // cap >= 0 and within what add_residency can request.
  const AddLaunchConfig lean = add_launch_config(DType::FP32, 4096LL * 4096);
  ASSERT_EQ(lean.kernel, AddKernelVariant::Lean);
  for (auto edit :
       {+[](AddLaunchConfig& c) { c.threads_per_block = 64; }, +[](AddLaunchConfig& c) { c.vectors_per_thread = 2; },
        +[](AddLaunchConfig& c) { c.cache = AddCachePolicy::Streaming; },
        +[](AddLaunchConfig& c) { c.blocks_per_sm = -1; }, +[](AddLaunchConfig& c) { c.blocks_per_sm = 40; }}) {
    bad = lean;
    edit(bad);
    refused(bad);
  }
  // The tuning space's own configurations: a standard one, another policy, the lean plain one.
  for (auto edit : {+[](AddLaunchConfig& c) { c.kernel = AddKernelVariant::Standard; },
                    +[](AddLaunchConfig& c) {
                      c.kernel = AddKernelVariant::Standard;
                      c.vectors_per_thread = 2;
                    },
                    +[](AddLaunchConfig& c) {
                      c.kernel = AddKernelVariant::Standard;
                      c.cache = AddCachePolicy::Prefetch256;
                    },
                    +[](AddLaunchConfig& c) { c.cache = AddCachePolicy::Plain; }}) {
    bad = small;
    edit(bad);
    try {
      launch_add(DType::FP32, buf.get(), buf.get(), buf.get(), 16, stream.get(), bad);
      ADD_FAILURE() << to_string(bad) << " ran through bench's launch_add";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("add_size_class_configs"), std::string::npos) << e.what();
    }
  }
}

// The residency cap holds on this GPU: the occupancy API, given the cap's dynamic shared memory
// and carveout hint, lets exactly N blocks of the lean kernel share an SM (bench's class above
// 3072^2 elements: 6 x 256), for every dtype and for caps from 3 to all that fit anyway.
TEST_F(GpuTest, AddResidencyCapHoldsOnThisDevice) {
  const AddLaunchConfig big = add_launch_config(DType::BF16, 4096LL * 4096);
  EXPECT_EQ(to_string(big), "v1/t256/default/lean/r6");
  EXPECT_EQ(to_string(add_launch_config(DType::BF16, 3072LL * 3072)), "v1/t256/default/lean");
  for (DType d : {DType::BF16, DType::FP16, DType::FP32}) {
    SCOPED_TRACE(to_string(d));
    EXPECT_EQ(add_resident_blocks(d, big), 6);
    for (int threads : {128, 256}) {
      AddLaunchConfig c = big;
      c.threads_per_block = threads;
      c.blocks_per_sm = 0;
      const int uncapped = add_resident_blocks(d, c);
      EXPECT_EQ(uncapped, 2048 / threads) << threads;  // the lean kernels' registers never limit
      for (int cap = 3; cap <= uncapped; ++cap) {      // 1 and 2 would need over 48 KB per block: refused below
        c.blocks_per_sm = cap;
        EXPECT_EQ(add_resident_blocks(d, c), cap) << to_string(c);
        const AddResidency r = add_residency(cap, threads);
        EXPECT_EQ(r.capacity_bytes, 100 * 1024);
        EXPECT_GT(r.carveout_percent, 0);
      }
    }
  }
  AddLaunchConfig standard = big;
  standard.kernel = AddKernelVariant::Standard;
  standard.blocks_per_sm = 0;
  EXPECT_THROW(add_resident_blocks(DType::BF16, standard), std::invalid_argument);
  EXPECT_THROW(add_residency(0, 256), std::invalid_argument);
  EXPECT_THROW(add_residency(2, 256), std::invalid_argument);  // 50 KB per block
  EXPECT_THROW(add_residency(9, 256), std::invalid_argument);  // 9 x 256 threads: more than an SM holds
  EXPECT_THROW(add_residency(90, 16), std::invalid_argument);  // 1024 B per block: 91 fit in 100 KB as well
}

INSTANTIATE_TEST_SUITE_P(Spans, AddKernel, ::testing::ValuesIn(add_spans()), add_span_name);

TEST_F(GpuTest, AddZeroCountLaunchesNothing) {
  Stream stream;
  const AddLaunchConfig config = add_launch_config(DType::BF16, 64 * 64);
  EXPECT_NO_THROW(launch_add(DType::BF16, nullptr, nullptr, nullptr, 0, stream.get(), config));
  EXPECT_THROW(launch_add(DType::BF16, nullptr, nullptr, nullptr, -1, stream.get(), config), std::invalid_argument);
}

// ---- the check catches wrong outputs --------------------------------------------------------

// Tensors for verify_against_reference, filled like a workload's.
struct OwnedTensors {
  OwnedTensors(Op op, DType dtype, std::int64_t n, cudaStream_t stream)
      : a(static_cast<std::size_t>(n * n) * dtype_bytes(dtype)),
        b(a.bytes()),
        bias(op == Op::Addmm ? a.bytes() : static_cast<std::size_t>(n) * dtype_bytes(dtype)),
        out(a.bytes()) {
    launch_random_fill(dtype, a.get(), n * n, 21, stream);
    launch_random_fill(dtype, b.get(), n * n, 22, stream);
    const auto bias_count = static_cast<std::int64_t>(bias.bytes() / dtype_bytes(dtype));
    launch_random_fill(dtype, bias.get(), bias_count, 23, stream);
    XB_CUDA(cudaStreamSynchronize(stream));
  }
  WorkloadTensors view() const {
    WorkloadTensors t;
    t.a = a.get();
    t.b = b.get();
    t.bias = bias.get();
    t.out = out.get();
    return t;
  }
  DeviceBuffer a, b, bias, out;
};

TEST_F(GpuTest, UnwrittenOutputFailsAsNaN) {
  // The run enqueues nothing: the poison (0xFF bytes = NaN) stays and must fail the check.
  Stream stream;
  OwnedTensors t(Op::Add, DType::BF16, 64, stream.get());
  const Verification v = verify_against_reference(Op::Add, DType::BF16, 64, t.view(), stream.get(), [] {});
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(std::isnan(v.rel_error));
  EXPECT_NE(v.detail.find("4096 non-finite outputs"), std::string::npos) << v.detail;
}

TEST_F(GpuTest, PartlyWrittenOutputFails) {
  // The real kernel over all but the last element: one poisoned NaN remains.
  Stream stream;
  OwnedTensors t(Op::Add, DType::FP32, 64, stream.get());
  const AddLaunchConfig config = add_launch_config(DType::FP32, 64 * 64);
  const Verification v = verify_against_reference(Op::Add, DType::FP32, 64, t.view(), stream.get(), [&] {
    launch_add(DType::FP32, t.a.get(), t.b.get(), t.out.get(), 64 * 64 - 1, stream.get(), config);
  });
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("1 non-finite outputs, first at [63, 63]"), std::string::npos) << v.detail;
}

TEST_F(GpuTest, CorruptedGemmRowFails) {
  // The real GEMM, then row 5 of the result overwritten with zeros.
  for (const std::int64_t n : {64, 300}) {  // full check; sampled check (row 0 is sampled)
    const std::int64_t bad_row = n <= 256 ? 5 : 0;
    Stream stream;
    OwnedTensors t(Op::Matmul, DType::BF16, n, stream.get());
    GemmProblem p;
    p.dtype = DType::BF16;
    p.m = p.n = p.k = n;
    p.a = t.a.get();
    p.b = t.b.get();
    p.out = t.out.get();
    const LtGemm gemm(p);
    const std::size_t row_bytes = static_cast<std::size_t>(n) * 2;
    const Verification good = verify_against_reference(Op::Matmul, DType::BF16, n, t.view(), stream.get(),
                                                       [&] { gemm.enqueue(stream.get()); });
    EXPECT_TRUE(good.passed) << good.detail;
    const Verification bad = verify_against_reference(Op::Matmul, DType::BF16, n, t.view(), stream.get(), [&] {
      gemm.enqueue(stream.get());
      XB_CUDA(cudaMemsetAsync(t.out.get<char>() + static_cast<std::size_t>(bad_row) * row_bytes, 0, row_bytes,
                              stream.get()));
    });
    EXPECT_FALSE(bad.passed) << "n=" << n << ": " << bad.detail;
    EXPECT_GT(bad.rel_error, 0.05);  // one zeroed row of 64 (or of 16 sampled): ~1/8 .. 1/4
    EXPECT_NE(bad.detail.find("at [" + std::to_string(bad_row) + ", "), std::string::npos) << bad.detail;
  }
}

TEST_F(GpuTest, SingleWrongElementFails) {
  // The real add, then one element replaced by a value off by 0.5 (bf16 exact).
  Stream stream;
  OwnedTensors t(Op::Add, DType::BF16, 64, stream.get());
  const AddLaunchConfig config = add_launch_config(DType::BF16, 64 * 64);
  const Verification v = verify_against_reference(Op::Add, DType::BF16, 64, t.view(), stream.get(), [&] {
    launch_add(DType::BF16, t.a.get(), t.b.get(), t.out.get(), 64 * 64, stream.get(), config);
    XB_CUDA(cudaStreamSynchronize(stream.get()));
    const std::vector<double> row = copy_rows_to_host(t.out.get(), DType::BF16, 64, 17, 18);
    const __nv_bfloat16 wrong = __float2bfloat16_rn(static_cast<float>(row[9]) + 0.5f);
    XB_CUDA(cudaMemcpy(t.out.get<__nv_bfloat16>() + 17 * 64 + 9, &wrong, sizeof wrong, cudaMemcpyHostToDevice));
  });
  // ||ref|| ~ sqrt(4096 * 2/3) ~ 52, so one 0.5 error is ~1e-2 relative, above bf16's 4e-3.
  EXPECT_FALSE(v.passed) << v.detail;
  EXPECT_NE(v.detail.find("at [17, 9]"), std::string::npos) << v.detail;
}

// ---- GEMM owner -----------------------------------------------------------------------------

TEST_F(GpuTest, GemmNonSquareAndBias) {
  // out[m,n] = a[m,k] b[k,n] + bias[n], m != n != k, checked against a host loop.
  const std::int64_t m = 48, n = 80, k = 112;
  Stream stream;
  DeviceBuffer a(m * k * 4), b(k * n * 4), bias(n * 4), out(m * n * 4);
  launch_random_fill(DType::FP32, a.get(), m * k, 31, stream.get());
  launch_random_fill(DType::FP32, b.get(), k * n, 32, stream.get());
  launch_random_fill(DType::FP32, bias.get(), n, 33, stream.get());
  GemmProblem p;
  p.dtype = DType::FP32;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = a.get();
  p.b = b.get();
  p.out = out.get();
  p.bias = bias.get();
  const LtGemm gemm(p);
  EXPECT_LE(gemm.algo_workspace_bytes(), kGemmWorkspaceBytes);
  gemm.enqueue(stream.get());
  stream.synchronize();
  const auto ha = copy_rows_to_host(a.get(), DType::FP32, k, 0, m);
  const auto hb = copy_rows_to_host(b.get(), DType::FP32, n, 0, k);
  const auto hbias = copy_rows_to_host(bias.get(), DType::FP32, n, 0, 1);
  const auto hout = copy_rows_to_host(out.get(), DType::FP32, n, 0, m);
  double diff2 = 0, ref2 = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double ref = hbias[static_cast<std::size_t>(j)];
      for (std::int64_t q = 0; q < k; ++q) {
        ref += ha[static_cast<std::size_t>(i * k + q)] * hb[static_cast<std::size_t>(q * n + j)];
      }
      const double d = hout[static_cast<std::size_t>(i * n + j)] - ref;
      diff2 += d * d;
      ref2 += ref * ref;
    }
  }
  EXPECT_LT(std::sqrt(diff2 / ref2), 1e-5);  // fp32, no TF32
}

// ---- blocking kernel ------------------------------------------------------------------------

TEST_F(GpuTest, BlockingKernelHoldsStreamUntilReleased) {
  Stream stream;
  BlockingKernel blocker;
  for (int round = 0; round < 3; ++round) {
    blocker.block(stream.get());
    Event done;
    done.record(stream.get());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(cudaEventQuery(done.get()), cudaErrorNotReady) << "round " << round;
    blocker.release();
    stream.synchronize();
    EXPECT_FALSE(blocker.timed_out()) << "round " << round;
  }
}

TEST_F(GpuTest, BlockingKernelTimesOutWithoutRelease) {
  Stream stream;
  BlockingKernel blocker;
  const auto start = std::chrono::steady_clock::now();
  blocker.block(stream.get(), 50'000'000);  // 50 ms, never released
  stream.synchronize();
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(blocker.timed_out());
  EXPECT_GE(waited, std::chrono::milliseconds(45));
  EXPECT_LT(waited, std::chrono::seconds(5));
  // Usable again after a timeout.
  blocker.block(stream.get());
  blocker.release();
  stream.synchronize();
  EXPECT_FALSE(blocker.timed_out());
  EXPECT_THROW(blocker.block(stream.get(), -1), std::invalid_argument);
}

TEST_F(GpuTest, BlockingKernelDestructorReleases) {
  Stream stream;
  const auto start = std::chrono::steady_clock::now();
  {
    BlockingKernel blocker;
    blocker.block(stream.get());  // 10 s timeout, never released explicitly
    BlockingKernel moved(std::move(blocker));
    EXPECT_FALSE(blocker.timed_out());  // NOLINT(bugprone-use-after-move): documented state
    EXPECT_THROW(blocker.block(stream.get()), std::logic_error);
  }
  stream.synchronize();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// ---- random fill ----------------------------------------------------------------------------

class RandomFill : public GpuTestWithParam<DType> {};

TEST_P(RandomFill, UniformInMinusOneOneNotConstant) {
  const DType dtype = GetParam();
  constexpr std::int64_t kCount = 1 << 20;
  Stream stream;
  DeviceBuffer x(kCount * dtype_bytes(dtype)), y(x.bytes()), z(x.bytes());
  launch_random_fill(dtype, x.get(), kCount, 7, stream.get());
  launch_random_fill(dtype, y.get(), kCount, 7, stream.get());
  launch_random_fill(dtype, z.get(), kCount, 8, stream.get());
  stream.synchronize();
  const auto hx = copy_rows_to_host(x.get(), dtype, kCount, 0, 1);
  const auto hy = copy_rows_to_host(y.get(), dtype, kCount, 0, 1);
  const auto hz = copy_rows_to_host(z.get(), dtype, kCount, 0, 1);

  double sum = 0, sum2 = 0;
  std::int64_t zeros = 0;
  std::set<double> distinct;
  for (const double v : hx) {
    ASSERT_GE(v, -1.0);
    ASSERT_LT(v, 1.0);
    sum += v;
    sum2 += v * v;
    zeros += v == 0.0 ? 1 : 0;
    distinct.insert(v);
  }
  const double mean = sum / kCount;
  const double variance = sum2 / kCount - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.005);            // U(-1,1): mean 0, sd of the mean 0.00056
  EXPECT_NEAR(variance, 1.0 / 3.0, 0.005);  // U(-1,1): variance 1/3
  EXPECT_LT(zeros, kCount / 1000);
  // Distinct values that 1M uniform draws can reach: bf16 ~3000 (128 per binade), fp16 ~20000
  // (1024 per binade), fp32 nearly 1M.
  const std::size_t min_distinct = dtype == DType::BF16 ? 2000 : dtype == DType::FP16 ? 10000 : 500000;
  EXPECT_GT(distinct.size(), min_distinct);
  EXPECT_EQ(hx, hy) << "same seed, same values";
  std::int64_t equal = 0;
  for (std::size_t i = 0; i < hx.size(); ++i) equal += hx[i] == hz[i] ? 1 : 0;
  EXPECT_LT(equal, kCount / 100) << "different seeds must give different tensors";
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, RandomFill, ::testing::Values(DType::BF16, DType::FP16, DType::FP32),
                         [](const ::testing::TestParamInfo<DType>& dtype_info) {
                           return std::string(to_string(dtype_info.param));
                         });

// ---- RAII owners ----------------------------------------------------------------------------

TEST_F(GpuTest, OwnersMoveAndRelease) {
  DeviceBuffer buffer(1024);
  void* const p = buffer.get();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u);
  DeviceBuffer moved(std::move(buffer));
  EXPECT_EQ(moved.get(), p);
  EXPECT_EQ(moved.bytes(), 1024u);
  EXPECT_EQ(buffer.get(), nullptr);  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(buffer.bytes(), 0u);
  moved = DeviceBuffer(16);
  EXPECT_EQ(moved.bytes(), 16u);

  Stream s1;
  Stream s2(std::move(s1));
  EXPECT_EQ(s1.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_NE(s2.get(), nullptr);

  PinnedHostBuffer mapped(64, /*mapped=*/true);
  EXPECT_NE(mapped.get(), nullptr);
  EXPECT_NE(mapped.device_ptr(), nullptr);
  PinnedHostBuffer plain(64);
  EXPECT_EQ(plain.device_ptr(), nullptr);

  Event start, stop;
  start.record(s2.get());
  stop.record(s2.get());
  stop.synchronize();
  EXPECT_GE(stop.elapsed_ms_since(start), 0.0f);

  CublasLtHandle handle;
  MatmulDesc desc(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  MatrixLayout layout(CUDA_R_16BF, 8, 8, 8);
  MatmulPreference pref;
  EXPECT_NE(handle.get(), nullptr);
  EXPECT_NE(desc.get(), nullptr);
  EXPECT_NE(layout.get(), nullptr);
  EXPECT_NE(pref.get(), nullptr);
}

TEST_F(GpuTest, FailedCallThrowsWithCallText) {
  void* p = nullptr;
  try {
    XB_CUDA(cudaMalloc(&p, std::size_t{1} << 62));  // 4 EiB: cudaErrorMemoryAllocation
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test_kernels.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaMalloc(&p, std::size_t{1} << 62) failed: cudaErrorMemoryAllocation"), std::string::npos)
        << what;
  }
  (void)cudaGetLastError();
}

}  // namespace
}  // namespace xb
