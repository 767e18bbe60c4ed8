// Synthetic session for the speed benchmarks (tests/perf/synthetic_session.h).
#include "tests/perf/synthetic_session.h"

#include <algorithm>
#include <cstddef>

#include <fmt/format.h>

#include "bench/core/fixture_records.h"

namespace xb {

RawSession synthetic_session(std::int64_t kernels) {
  constexpr int kOpsPerStep = 10, kKernelsPerOp = 10;
  const std::int64_t steps = (kernels + kOpsPerStep * kKernelsPerOp - 1) / (kOpsPerStep * kKernelsPerOp);
  // Kernel names as PyTorch, cuBLAS and Triton name them: 26 to 243 characters, 114 on average.
  static const char* const kNames[] = {
      "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
      "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
      "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
      "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
      "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
      "nvjet_sm90_tst_64x8_64x16_1x4_h_badd_NNT",
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, "
      "float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
      "unsigned int, float, 4>)",
      "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
      "void xb::(anonymous namespace)::add_vectorized_kernel<__nv_bfloat16>(__nv_bfloat16 const*, "
      "__nv_bfloat16 const*, __nv_bfloat16*, long)",
      "triton_poi_fused_add_mul_0"};
  static const char* const kOps[] = {"matmul", "add", "softmax", "linear"};
  RawSession s;
  s.meta.created_utc = "2026-11-29T00:00:00Z";
  s.meta.window_start_ns = 1'000'000'000'000LL;
  s.meta.process_id = 4242;
  s.meta.schedule_wait = 1;
  s.meta.schedule_warmup = 1;
  s.meta.schedule_active = static_cast<int>(steps);
  s.meta.cuda_driver_version = 13000;
  s.meta.cuda_runtime_version = 13000;
  s.meta.cupti_version = 130001;
  DeviceInfo dev;
  dev.name = "NVIDIA H200 (synthetic)";
  s.meta.devices.push_back(dev);
  for (int f = 0; f < 4; ++f) {
    FixtureInfo fx;
    fx.op = kOps[f];
    fx.dtype = "bf16";
    fx.size = 1024;
    fx.name = fmt::format("{}/bf16/1024", fx.op);
    fx.verified = true;
    fx.max_rel_error = 1e-3;
    s.fixtures.push_back(fixture_block(fx));
  }
  s.records.reserve(static_cast<std::size_t>(steps) * kOpsPerStep * kKernelsPerOp * 3);
  s.ranges.reserve(static_cast<std::size_t>(steps) * (2 + kOpsPerStep));
  std::int64_t t = s.meta.window_start_ns + 1000;  // host clock
  std::int64_t gpu = t;                            // end of the last kernel on the stream
  std::uint64_t id = 1;
  std::uint32_t corr = 1;
  for (std::int64_t k = 0; k < steps; ++k) {
    const std::uint64_t step_id = id++;
    const int fixture = static_cast<int>(k % 4);
    HostRange step{step_id, 0, fmt::format("ProfilerStep#{}", k + 2), RangeCategory::UserAnnotation, t, 0, 4242, 4242};
    const std::uint64_t annot_id = id++;
    HostRange annot{annot_id,
                    step_id,
                    s.fixtures[static_cast<std::size_t>(fixture)].name,
                    RangeCategory::UserAnnotation,
                    t + 500,
                    0,
                    4242,
                    4242};
    t += 1000;
    std::int64_t first_kernel = -1;
    for (int o = 0; o < kOpsPerStep; ++o) {
      const std::uint64_t op_id = id++;
      HostRange op{op_id, annot_id, fmt::format("aten::{}", kOps[(fixture + o) % 4]), RangeCategory::CpuOp, t, 0,
                   4242,  4242};
      t += 300;
      for (int j = 0; j < kKernelsPerOp; ++j) {
        RawRecord x;
        x.kind = RawKind::ExternalCorrelation;
        x.correlation_id = corr;
        x.external_kind = 3;  // CUSTOM0, as the collector pushes
        x.external_id = op_id;
        s.records.push_back(x);
        RawRecord api;
        api.kind = RawKind::Runtime;
        api.name = "cudaLaunchKernel";
        api.cbid = 211;
        api.start_ns = t;
        api.end_ns = t + 2500 + (j * 37) % 900;
        api.correlation_id = corr;
        api.process_id = 4242;
        api.thread_id = 4242;
        s.records.push_back(api);
        RawRecord ker;
        ker.kind = RawKind::Kernel;
        ker.name = kNames[(o * kKernelsPerOp + j + k) % 8];
        ker.start_ns = std::max(gpu, t + 4000) + 200;
        ker.end_ns = ker.start_ns + 1500 + ((j * 7919 + o * 104729 + k * 31) % 20000);
        ker.correlation_id = corr;
        ker.device_id = 0;
        ker.context_id = 1;
        ker.stream_id = 7;
        ker.grid[0] = 132;
        ker.grid[1] = ker.grid[2] = 1;
        ker.block[0] = 256;
        ker.block[1] = ker.block[2] = 1;
        ker.registers_per_thread = 64;
        gpu = ker.end_ns;
        if (first_kernel < 0) first_kernel = ker.start_ns;
        s.records.push_back(ker);
        t = api.end_ns + 400;
        ++corr;
      }
      op.end_ns = t;
      t += 200;
      s.ranges.push_back(op);
    }
    annot.end_ns = t;
    t += 300;
    step.end_ns = t;
    s.ranges.push_back(step);
    s.ranges.push_back(annot);
    s.event_timings.push_back(
        {s.fixtures[static_cast<std::size_t>(fixture)].name, k + 2, step_id, gpu - first_kernel + 1500});
    t = std::max(t, gpu) + 2000;  // the next step starts after this one's kernels
  }
  s.meta.window_end_ns = std::max(t, gpu) + 1000;
  return s;
}

}  // namespace xb
