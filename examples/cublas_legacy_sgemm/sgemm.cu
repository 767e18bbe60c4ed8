// A user's benchmark of cuBLAS's classic handle API: every call sets the stream and runs
// cublasSgemm (C = A B, n x n fp32), as code written before cuBLASLt does. Such a call may wait for
// the device (cuBLAS allocating or switching its workspace); crossbench runs each instance's first
// call unblocked, detects a launch that still synchronizes, and then times it without the blocking
// kernel (bench/core/api.h). Two registrations of the same work:
//   sgemm           the synchronization, if any, is detected (events.json timing.sync "detected")
//   sgemm_declared  declared up front with .sync() (timing.sync "declared"), nvbench's exec_tag::sync
//   ./sgemm --warmup --out run_hot                  (then: validate run_hot)
//   ./sgemm --mode cold --warmup --out run_cold
//   ./sgemm --op sgemm_declared --graph             refused in one line: a synchronizing call
//                                                   cannot be captured into a CUDA graph
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/core/api.h"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}

/// One instance: a cuBLAS handle and column-major n x n matrices A, B (random in [-1, 1)) and C.
struct Sgemm {
  std::int64_t n;
  cublasHandle_t handle = nullptr;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  std::vector<float> host_a, host_b;

  Sgemm(std::int64_t size, std::uint32_t seed) : n(size) {
    const std::size_t count = static_cast<std::size_t>(n * n);
    check(cublasCreate(&handle), "cublasCreate");
    check(cudaMalloc(&a, count * sizeof(float)), "cudaMalloc A");
    check(cudaMalloc(&b, count * sizeof(float)), "cudaMalloc B");
    check(cudaMalloc(&c, count * sizeof(float)), "cudaMalloc C");
    host_a.resize(count);
    host_b.resize(count);
    std::uint32_t s = seed;
    auto next = [&s] { return static_cast<float>((s = s * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1.0f; };
    for (float& v : host_a) v = next();
    for (float& v : host_b) v = next();
    check(cudaMemcpy(a, host_a.data(), count * sizeof(float), cudaMemcpyHostToDevice), "copy A");
    check(cudaMemcpy(b, host_b.data(), count * sizeof(float), cudaMemcpyHostToDevice), "copy B");
    // A copy from pageable memory may return before its DMA lands, and bench's stream does not
    // wait for the legacy default stream: finish it before any launch reads the inputs.
    check(cudaDeviceSynchronize(), "inputs copied");
  }
  ~Sgemm() {
    cublasDestroy(handle);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  Sgemm(const Sgemm&) = delete;
  Sgemm& operator=(const Sgemm&) = delete;

  void launch(cudaStream_t stream) const {
    const float one = 1.0f, zero = 0.0f;
    const int m = static_cast<int>(n);
    check(cublasSetStream(handle, stream), "cublasSetStream");
    check(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a, m, b, m, &zero, c, m), "cublasSgemm");
  }

  /// C poisoned, one call, then 16 rows of C against a double-precision host reference.
  xb::Check verify(cudaStream_t stream) const {
    const std::size_t count = static_cast<std::size_t>(n * n);
    check(cudaMemsetAsync(c, 0xff, count * sizeof(float), stream), "poison C");
    launch(stream);
    check(cudaStreamSynchronize(stream), "sgemm");
    std::vector<float> out(count);
    check(cudaMemcpy(out.data(), c, count * sizeof(float), cudaMemcpyDeviceToHost), "read C");
    double err = 0, ref = 0;
    const std::int64_t rows = std::min<std::int64_t>(n, 16);
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = r * (n / rows);                 // rows spread over C
      std::vector<double> row(static_cast<std::size_t>(n));  // row i of A (column-major storage)
      for (std::int64_t k = 0; k < n; ++k) row[k] = host_a[k * n + i];
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (std::int64_t k = 0; k < n; ++k) sum += row[k] * host_b[j * n + k];
        const double d = out[j * n + i] - sum;
        err += d * d;
        ref += sum * sum;
      }
    }
    const double rel = std::sqrt(err / ref);
    constexpr double kTol = 1e-5;  // fp32 accumulation over k = n <= 4096: about 1e-6 seen
    return xb::Check{rel <= kTol, rel, kTol, "sampled " + std::to_string(rows) + " rows"};
  }
};

xb::Instance make(const xb::Point& p) {
  static std::uint32_t seed = 2024;
  auto g = std::make_shared<Sgemm>(p.size, seed++);
  return xb::Instance{[g](cudaStream_t s) { g->launch(s); }, [g](cudaStream_t s) { return g->verify(s); }};
}

double flops(const xb::Point& p) { return 2.0 * std::pow(static_cast<double>(p.size), 3); }
// Reads A and B, writes C (beta = 0): 3 n^2 floats.
double bytes(const xb::Point& p) { return 12.0 * static_cast<double>(p.size) * static_cast<double>(p.size); }

}  // namespace

XB_BENCHMARK(sgemm, [](const xb::Point& p, cudaStream_t) { return make(p); })
    .sizes({512, 4096})
    .flops(flops)
    .bytes(bytes)
    .device_bytes(bytes);

XB_BENCHMARK(sgemm_declared, [](const xb::Point& p, cudaStream_t) { return make(p); })
    .sizes({512, 4096})
    .flops(flops)
    .bytes(bytes)
    .device_bytes(bytes)
    .sync();

int main(int argc, char** argv) { return xb::main(argc, argv); }
