// A corpus of user code (issue 36 item 6): each pattern is one way a user's launch may enqueue its
// work, registered as a benchmark of its own (xb::register_benchmark), with the outcome crossbench
// must give for it in examples/user_patterns/patterns.json (expected.json, README.md). Every
// pattern computes y = 2 x on n x n fp32 elements (x random in [-1, 1), so 2 x is exact), and its
// verify checks that against the host whatever stream the work ran on (it synchronizes the device),
// so what a run shows is crossbench's judgement of the launch, never a wrong result.
//
// This file is built twice (CMakeLists.txt): user_patterns as nvcc builds by default (the legacy
// default stream) and user_patterns_ptds with --default-stream per-thread, each registering the
// patterns patterns.json lists for it (the generated user_patterns_list.h).
//   ./user_patterns --op side_joined --size 64,4096 --out run            (then: validate run)
//   ./user_patterns --op default_stream_kernel --graph                  refused: work off the stream
//   ./user_patterns --list-patterns                                      the registered patterns (JSON)
//   XB_USER_PATTERNS_HANG=1 ./user_patterns --op hang                    registers `hang` too
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/core/api.h"

#if defined(XB_PATTERNS_PTDS) != defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error "user_patterns_ptds must be compiled with nvcc --default-stream per-thread, user_patterns without it"
#endif

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}

__global__ void twice(std::int64_t n, const float* x, float* y) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    y[i] = 2.0f * x[i];
  }
}

/// out[0] = y[0] + y[n - 1]: a second, small kernel of the call (capture_skips_kernel).
__global__ void checksum(std::int64_t n, const float* y, float* out) { out[0] = y[0] + y[n - 1]; }

/// y = 2 x, and thread 0 writes one float at y[bad_index]: an index bug that leaves the allocation.
__global__ void twice_and_write_at(std::int64_t n, const float* x, float* y, std::int64_t bad_index) {
  const std::int64_t first = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  for (std::int64_t i = first; i < n; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) y[i] = 2.0f * x[i];
  if (first == 0) y[bad_index] = 1.0f;
}

/// Spins until *flag is non-zero (host-mapped memory the host never writes here) or limit_ns of
/// %globaltimer have passed, so that even a harness that never gives up frees the GPU in the end.
__global__ void spin_until(const volatile int* flag, std::uint64_t limit_ns) {
  std::uint64_t t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (*flag == 0 && t - t0 < limit_ns);
}

constexpr int kBlock = 256;
unsigned grid_for(std::int64_t n) {
  return static_cast<unsigned>(std::min<std::int64_t>((n + kBlock - 1) / kBlock, 132 * 32));
}

/// Resources a pattern needs beyond the buffers, side stream and events every instance has.
enum Needs : unsigned { kNone = 0, kCublas = 1, kFlag = 2 };

/// One instance: x (n random floats in [-1, 1)), y, a small stats buffer, 4 pinned host floats, a
/// non-blocking side stream with fork/join events, and, where the pattern needs them, a cuBLAS
/// handle and a host-mapped flag.
struct Work {
  std::int64_t side_len;  // bench's size n: the matrix is n x n
  std::int64_t n;         // elements: side_len^2
  int device = 0;
  float* x = nullptr;
  float* y = nullptr;
  float* stats = nullptr;        // 4 floats of device memory
  float* host_pinned = nullptr;  // 4 floats of pinned host memory
  float host_pageable[4] = {};
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  cublasHandle_t blas = nullptr;
  int* flag_host = nullptr;  // host-mapped int, never set
  int* flag_device = nullptr;
  std::vector<float> host_x;

  Work(std::int64_t size, unsigned needs, std::uint32_t seed)
      : side_len(size), n(size * size), host_x(static_cast<std::size_t>(size * size)) {
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc x");
    check(cudaMalloc(&y, n * sizeof(float)), "cudaMalloc y");
    check(cudaMalloc(&stats, 4 * sizeof(float)), "cudaMalloc stats");
    check(cudaMallocHost(&host_pinned, 4 * sizeof(float)), "cudaMallocHost");
    check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "cudaStreamCreateWithFlags side");
    check(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), "cudaEventCreate fork");
    check(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), "cudaEventCreate join");
    if (needs & kCublas) check(cublasCreate(&blas), "cublasCreate");
    if (needs & kFlag) {
      check(cudaHostAlloc(&flag_host, sizeof(int), cudaHostAllocMapped), "cudaHostAlloc flag");
      *flag_host = 0;
      check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_device), flag_host, 0), "flag device pointer");
    }
    for (float& v : host_x) v = static_cast<float>((seed = seed * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1.0f;
    check(cudaMemcpy(x, host_x.data(), n * sizeof(float), cudaMemcpyHostToDevice), "copy x");
    check(cudaMemset(stats, 0, 4 * sizeof(float)), "clear stats");
    // A copy from pageable memory may return before its DMA lands, and bench's stream does not
    // wait for the default stream: finish it before any launch reads the inputs.
    check(cudaDeviceSynchronize(), "inputs copied");
  }
  ~Work() {
    if (flag_host != nullptr) *static_cast<volatile int*>(flag_host) = 1;  // releases a spinning kernel
    cudaDeviceSynchronize();
    if (blas != nullptr) cublasDestroy(blas);
    cudaEventDestroy(fork);
    cudaEventDestroy(join);
    cudaStreamDestroy(side);
    cudaFreeHost(flag_host);
    cudaFreeHost(host_pinned);
    cudaFree(stats);
    cudaFree(y);
    cudaFree(x);
  }
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  /// y = 2 x on `stream`.
  void twice_on(cudaStream_t stream) const { twice_into(y, stream); }
  void twice_into(float* out, cudaStream_t stream) const {
    twice<<<grid_for(n), kBlock, 0, stream>>>(n, x, out);
    check(cudaGetLastError(), "twice launch");
  }
  /// fn() on a std::thread of its own (on this instance's device), joined; its exception rethrown.
  template <class Fn>
  void on_other_thread(Fn fn) const {
    std::exception_ptr error;
    std::thread worker([&] {
      try {
        check(cudaSetDevice(device), "cudaSetDevice (worker thread)");
        fn();
      } catch (...) {
        error = std::current_exception();
      }
    });
    worker.join();
    if (error) std::rethrow_exception(error);
  }
};

}  // namespace

// The patterns: one call of each, as a user's launch would write it. Names and expectations:
// patterns.json. External linkage: a program registers only the patterns its list names.
namespace patterns {

void on_stream(Work& w, cudaStream_t s) { w.twice_on(s); }

void default_stream_kernel(Work& w, cudaStream_t) {
  twice<<<grid_for(w.n), kBlock>>>(w.n, w.x, w.y);  // no stream argument: the default stream
  check(cudaGetLastError(), "twice launch (default stream)");
}

void legacy_stream_explicit(Work& w, cudaStream_t) { w.twice_on(cudaStreamLegacy); }

void per_thread_stream(Work& w, cudaStream_t) { w.twice_on(cudaStreamPerThread); }

void sync_memcpy_readback(Work& w, cudaStream_t s) {
  w.twice_on(s);
  check(cudaMemcpy(w.host_pageable, w.y, sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy y[0] to the host");
}

void memset_no_stream(Work& w, cudaStream_t s) {
  w.twice_on(s);
  check(cudaMemset(w.stats, 0, sizeof(float)), "cudaMemset stats");
}

void memcpy_async_stream0(Work& w, cudaStream_t s) {
  w.twice_on(s);
  check(cudaMemcpyAsync(w.stats, w.y, sizeof(float), cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync on stream 0");
}

void side_unjoined(Work& w, cudaStream_t s) {
  check(cudaEventRecord(w.fork, s), "record fork");
  check(cudaStreamWaitEvent(w.side, w.fork, 0), "side waits for the fork");
  w.twice_on(w.side);
}

void side_joined(Work& w, cudaStream_t s) {
  side_unjoined(w, s);
  check(cudaEventRecord(w.join, w.side), "record join");
  check(cudaStreamWaitEvent(s, w.join, 0), "handed stream waits for the join");
}

void side_not_forked_joined(Work& w, cudaStream_t s) {
  w.twice_on(w.side);
  check(cudaEventRecord(w.join, w.side), "record join");
  check(cudaStreamWaitEvent(s, w.join, 0), "handed stream waits for the join");
}

void other_thread_on_handed(Work& w, cudaStream_t s) {
  w.on_other_thread([&w, s] { w.twice_on(s); });
}

void other_thread_own_stream(Work& w, cudaStream_t) {
  w.on_other_thread([&w] { w.twice_on(w.side); });
}

/// y = 2 x + 0 x through cublasSgeam (x and y as n x n column-major matrices).
void sgeam_twice(const Work& w) {
  const float two = 2.0f, zero = 0.0f;
  const auto m = static_cast<int>(w.side_len);
  check(cublasSgeam(w.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, &two, w.x, m, &zero, w.x, m, w.y, m), "cublasSgeam");
}

void cublas_handed_stream(Work& w, cudaStream_t s) {
  check(cublasSetStream(w.blas, s), "cublasSetStream (handed stream)");
  sgeam_twice(w);
}

void cublas_other_stream(Work& w, cudaStream_t) {
  // The handle was bound once, when the instance was made (make_instance): to its own stream.
  sgeam_twice(w);
}

void malloc_in_launch(Work& w, cudaStream_t s) {
  float* scratch = nullptr;
  check(cudaMalloc(&scratch, w.n * sizeof(float)), "cudaMalloc scratch");
  w.twice_into(scratch, s);
  check(cudaMemcpyAsync(w.y, scratch, w.n * sizeof(float), cudaMemcpyDeviceToDevice, s), "copy scratch to y");
  check(cudaFree(scratch), "cudaFree scratch");  // waits for the device
}

void readback_on_stream(Work& w, cudaStream_t s) {
  w.twice_on(s);
  check(cudaMemcpyAsync(w.host_pinned, w.y, sizeof(float), cudaMemcpyDeviceToHost, s), "copy y[0] to pinned memory");
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize (handed stream)");
}

void malloc_async_on_stream(Work& w, cudaStream_t s) {
  void* scratch = nullptr;
  check(cudaMallocAsync(&scratch, w.n * sizeof(float), s), "cudaMallocAsync scratch");
  w.twice_into(static_cast<float*>(scratch), s);
  check(cudaMemcpyAsync(w.y, scratch, w.n * sizeof(float), cudaMemcpyDeviceToDevice, s), "copy scratch to y");
  check(cudaFreeAsync(scratch, s), "cudaFreeAsync scratch");
}

void capture_skips_kernel(Work& w, cudaStream_t s) {
  w.twice_on(s);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(s, &status), "cudaStreamIsCapturing");
  if (status == cudaStreamCaptureStatusNone) {  // "the checksum is only for eager runs"
    checksum<<<1, 1, 0, s>>>(w.n, w.y, w.stats);
    check(cudaGetLastError(), "checksum launch");
  }
}

void fault_oob(Work& w, cudaStream_t s) {
  // y[bad_index] is address 64: below every mapping, so the write faults on every system.
  const auto bad_index = -static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(w.y) / sizeof(float)) + 16;
  twice_and_write_at<<<grid_for(w.n), kBlock, 0, s>>>(w.n, w.x, w.y, bad_index);
  check(cudaGetLastError(), "twice_and_write_at launch");
}

void hang(Work& w, cudaStream_t s) {
  spin_until<<<1, 1, 0, s>>>(w.flag_device, 120ull * 1000 * 1000 * 1000);
  check(cudaGetLastError(), "spin_until launch");
}

}  // namespace patterns

namespace {

/// One row of the program's table (user_patterns_list.h, generated from patterns.json).
struct Pattern {
  const char* name;
  void (*launch)(Work&, cudaStream_t);
  const char* env;  // "" or "NAME=VALUE": registered only when the environment has it
  bool verify;      // false: no verify (the first call faults or hangs)
  unsigned needs;
};

const Pattern kPatterns[] = {
#define XB_PATTERN(name, env, verify, needs) {#name, &patterns::name, env, verify, needs},
#include "user_patterns_list.h"
#undef XB_PATTERN
};

#ifdef XB_PATTERNS_PTDS
constexpr const char* kProgram = "user_patterns_ptds";
constexpr const char* kDefaultStream = "per-thread default stream";
#else
constexpr const char* kProgram = "user_patterns";
constexpr const char* kDefaultStream = "legacy default stream";
#endif

bool env_allows(const char* env) {
  if (env[0] == '\0') return true;
  const std::string want(env);
  const auto eq = want.find('=');
  const char* value = std::getenv(want.substr(0, eq).c_str());
  return value != nullptr && want.substr(eq + 1) == value;
}

/// One call from known inputs: y poisoned, the pattern once, the device synchronized (the pattern
/// may have left the handed stream), every element of y against 2 x (exact in fp32).
xb::Check verify(const Pattern& p, Work& w, cudaStream_t s) {
  check(cudaMemsetAsync(w.y, 0xff, w.n * sizeof(float), s), "poison y");
  check(cudaStreamSynchronize(s), "poison y");
  p.launch(w, s);
  check(cudaDeviceSynchronize(), std::string(p.name).append(": one call").c_str());
  std::vector<float> out(static_cast<std::size_t>(w.n));
  check(cudaMemcpyAsync(out.data(), w.y, w.n * sizeof(float), cudaMemcpyDeviceToHost, s), "read y");
  check(cudaStreamSynchronize(s), "read y");
  double err = 0, ref = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double r = 2.0 * w.host_x[i];
    err += (out[i] - r) * (out[i] - r);
    ref += r * r;
  }
  const double rel = std::sqrt(err / ref);
  return xb::Check{rel == 0, rel, 0, "full check (2 x is exact)"};
}

xb::Instance make_instance(const Pattern& p, const xb::Point& point) {
  static std::uint32_t seed = 36;
  auto w = std::make_shared<Work>(point.size, p.needs, seed++);
  if (std::strcmp(p.name, "cublas_other_stream") == 0) {
    check(cublasSetStream(w->blas, w->side), "cublasSetStream (own stream)");
  }
  if (std::strcmp(p.name, "malloc_async_on_stream") == 0) {
    // Keep what the pool maps between calls (NVIDIA's advice for cudaMallocAsync), so that no
    // call has to map memory again after a synchronization.
    cudaMemPool_t pool = nullptr;
    check(cudaDeviceGetDefaultMemPool(&pool, w->device), "cudaDeviceGetDefaultMemPool");
    std::uint64_t keep = UINT64_MAX;
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "release threshold");
  }
  const auto launch = p.launch;
  xb::Instance instance{[w, launch](cudaStream_t s) { launch(*w, s); }, nullptr};
  if (p.verify) instance.verify = [w, &p](cudaStream_t s) { return verify(p, *w, s); };
  return instance;
}

void register_patterns() {
  for (const Pattern& p : kPatterns) {
    if (!env_allows(p.env)) continue;
    xb::register_benchmark(p.name, [&p](const xb::Point& point, cudaStream_t) { return make_instance(p, point); })
        .dtypes({"fp32"})
        .sizes({64, 4096})
        .flops([](const xb::Point& q) { return static_cast<double>(q.size) * static_cast<double>(q.size); })
        // Reads x, writes y: 8 bytes per element.
        .bytes([](const xb::Point& q) { return 8.0 * static_cast<double>(q.size) * static_cast<double>(q.size); })
        .device_bytes(
            [](const xb::Point& q) { return 12.0 * static_cast<double>(q.size) * static_cast<double>(q.size); })
        // Cold mode: four instances in turn (the L2 is flushed before every sample anyway); the
        // L2-spanning default would make thousands at size 64, each with a stream and events.
        .rotation(4);
  }
}

/// --list-patterns: the program, where its default stream goes, and the patterns it registered.
int list_patterns() {
  std::printf("{\"program\": \"%s\", \"default_stream\": \"%s\", \"patterns\": [", kProgram, kDefaultStream);
  const char* sep = "";
  for (const xb::BenchmarkDef& b : xb::registered_benchmarks()) {
    std::printf("%s\"%s\"", sep, b.name.c_str());
    sep = ", ";
  }
  std::printf("]}\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  register_patterns();
  if (argc == 2 && std::strcmp(argv[1], "--list-patterns") == 0) return list_patterns();
  return xb::main(argc, argv);
}
