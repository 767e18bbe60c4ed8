// A small hand-built RawSession shared by the test_model_*.cpp tests. Every number is chosen so the
// expected table values can be computed by hand (see the comments); times are ns after kBase.
#pragma once

#include <cstdint>
#include <string>

#include "bench/core/fixture_records.h"
#include "profiler/model/raw_records.h"

namespace xb::testing {

constexpr std::int64_t kBase = 1'000'000'000;  // meta.window_start_ns
constexpr std::uint32_t kPid = 100;
constexpr std::uint32_t kTid = 101;
constexpr std::uint32_t kCustom0 = 3;  // CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0
constexpr const char* kNvjet = "nvjet_sm90_tst_256x128_64x4_1x2_h_badd_coopA_NNT";
constexpr const char* kAddMangled = "_ZN2xb10add_kernelIfEEvPKT_S3_PS1_i";
constexpr const char* kAddDemangled = "void xb::add_kernel<float>(float const*, float const*, float*, int)";

/// The sample session's one fixture, as the harness records it (bench/core/fixture_records.h).
inline FixtureInfo sample_fixture() {
  FixtureInfo f;
  f.name = "addmm/bf16/64";
  f.op = "addmm";
  f.dtype = "bf16";
  f.size = 64;
  f.flops = 528384;
  f.bytes = 49152;
  f.verified = true;
  f.max_rel_error = 0.00123;
  return f;
}

inline RawRecord api(RawKind kind, const std::string& name, std::uint32_t cbid, std::uint32_t corr, std::int64_t start,
                     std::int64_t end) {
  RawRecord r;
  r.kind = kind;
  r.name = name;
  r.cbid = cbid;
  r.correlation_id = corr;
  r.start_ns = kBase + start;
  r.end_ns = kBase + end;
  r.process_id = kPid;
  r.thread_id = kTid;
  return r;
}

inline RawRecord device(RawKind kind, std::uint32_t corr, std::int64_t start, std::int64_t end,
                        const std::string& name = "") {
  RawRecord r;
  r.kind = kind;
  r.name = name;
  r.correlation_id = corr;
  r.start_ns = kBase + start;
  r.end_ns = kBase + end;
  r.device_id = 0;
  r.context_id = 1;
  r.stream_id = 7;
  if (kind == RawKind::Kernel) {
    r.grid[0] = 2, r.grid[1] = 66, r.grid[2] = 1;
    r.block[0] = 384, r.block[1] = 1, r.block[2] = 1;
    r.registers_per_thread = 168;
    r.static_shared_bytes = 100;
    r.dynamic_shared_bytes = 213088;
  }
  return r;
}

inline RawRecord ext(std::uint32_t corr, std::uint64_t id, std::uint32_t kind = kCustom0) {
  RawRecord r;
  r.kind = RawKind::ExternalCorrelation;
  r.correlation_id = corr;
  r.external_kind = kind;
  r.external_id = id;
  return r;
}

inline HostRange range(std::uint64_t id, std::uint64_t parent, const std::string& name, RangeCategory cat,
                       std::int64_t start, std::int64_t end) {
  HostRange r;
  r.id = id;
  r.parent_id = parent;
  r.name = name;
  r.category = cat;
  r.start_ns = kBase + start;
  r.end_ns = kBase + end;
  r.process_id = kPid;
  r.thread_id = kTid;
  return r;
}

/// ProfilerStep#3 (id 1, 100000 ns) > addmm (id 2, 88000 ns) > xb::addmm (id 3, cpu_op, 57000 ns).
/// xb::addmm makes 4 API calls (18000 ns) launching a memcpy (1000), a memset (200), nvjet (18000)
/// and the add kernel (2000). The step itself makes a sync call (4000) and a launch (1000) of
/// kernel(float*) (500). Expected: self CPU 39000 / 31000 / 7000; self CPU total 100000; self
/// CUDA total 21700.
inline RawSession sample_session() {
  RawSession s;
  s.meta.created_utc = "2026-01-01T00:00:00Z";
  s.meta.window_start_ns = kBase;
  s.meta.window_end_ns = kBase + 200'000;
  s.meta.dropped_records = 0;
  s.meta.discarded_by_schedule = 12;
  s.meta.cuda_driver_version = 13000;
  s.meta.cuda_runtime_version = 13000;
  s.meta.cupti_version = 130001;
  s.meta.cublas_version = 130000;
  s.meta.process_id = kPid;
  s.meta.schedule_wait = 1;
  s.meta.schedule_warmup = 1;
  s.meta.schedule_active = 1;
  DeviceInfo d;
  d.id = 0;
  d.name = "NVIDIA H200";
  d.total_global_mem = 150109880320ull;
  d.compute_major = 9;
  d.num_sms = 132;
  d.max_threads_per_block = 1024;
  d.max_threads_per_multiprocessor = 2048;
  d.regs_per_block = 65536;
  d.regs_per_multiprocessor = 65536;
  d.warp_size = 32;
  d.shared_mem_per_block = 49152;
  d.shared_mem_per_block_optin = 232448;
  d.shared_mem_per_multiprocessor = 233472;
  d.l2_cache_bytes = 62914560;
  s.meta.devices.push_back(d);

  auto& r = s.records;
  // Delivery order as CUPTI would hand it out: external correlation before its API record.
  r.push_back(ext(10, 3));
  r.push_back(api(RawKind::Runtime, "cudaMemcpyAsync", 41, 10, 4000, 9000));
  r.push_back(ext(11, 3));
  r.push_back(api(RawKind::Runtime, "cudaMemsetAsync", 51, 11, 10000, 12000));
  r.push_back(ext(12, 999, 2));  // OPENACC: must lose to the CUSTOM0 record below
  r.push_back(ext(12, 3));
  r.push_back(api(RawKind::Driver, "cuLaunchKernelEx", 652, 12, 13000, 20000));
  r.push_back(ext(13, 3));
  r.push_back(api(RawKind::Runtime, "cudaLaunchKernel", 211, 13, 21000, 25000));
  r.push_back(ext(15, 1));
  r.push_back(api(RawKind::Runtime, "cudaLaunchKernel", 211, 15, 92000, 93000));
  r.push_back(ext(14, 1));
  r.push_back(api(RawKind::Runtime, "cudaStreamSynchronize", 131, 14, 95000, 99000));
  RawRecord memcpy = device(RawKind::Memcpy, 10, 30000, 31000);
  memcpy.bytes = 4096;
  memcpy.copy_kind = 8;
  r.push_back(memcpy);
  RawRecord memset = device(RawKind::Memset, 11, 31000, 31200);
  memset.bytes = 4;
  r.push_back(memset);
  r.push_back(device(RawKind::Kernel, 12, 32000, 50000, kNvjet));
  r.push_back(device(RawKind::Kernel, 13, 50000, 52000, kAddMangled));
  r.push_back(device(RawKind::Kernel, 15, 96000, 96500, "_Z6kernelPf"));
  RawRecord sync = device(RawKind::Synchronization, 14, 95500, 98900);
  sync.sync_type = 3;
  r.push_back(sync);

  s.ranges.push_back(range(1, 0, "ProfilerStep#3", RangeCategory::UserAnnotation, 1000, 101000));
  s.ranges.push_back(range(2, 1, "addmm", RangeCategory::UserAnnotation, 2000, 90000));
  s.ranges.push_back(range(3, 2, "xb::addmm", RangeCategory::CpuOp, 3000, 60000));

  s.event_timings.push_back(StepTiming{"addmm/bf16/64", 3, 1, 21500});
  s.fixtures.push_back(fixture_block(sample_fixture()));  // as the harness attaches it
  return s;
}

}  // namespace xb::testing
