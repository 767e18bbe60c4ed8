// Benchmarks a kernel of your own with crossbench's whole timing method, cross-checked by CUPTI
// (find_package(crossbench), crossbench::bench; docs/own-kernel.md). Run it as you run bench:
//   ./saxpy --size 4096,16777216 --warmup --out my_run      (then: validate my_run)
//   ./saxpy --mode cold --size 1048576
// It writes the same run folder as bench (benchmark.json, events.json, raw_session.json, table,
// both traces, validation.json, summary.md) and validates it before it exits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "bench/core/api.h"

namespace {

__global__ void saxpy(std::int64_t n, float a, const float* x, float* y) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    y[i] = a * x[i] + y[i];
  }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

/// One instance's buffers: x and y of n floats, random values in [-1, 1).
struct Buffers {
  std::int64_t n;
  float* x = nullptr;
  float* y = nullptr;
  explicit Buffers(std::int64_t size) : n(size) {
    check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc x");
    check(cudaMalloc(&y, n * sizeof(float)), "cudaMalloc y");
    std::vector<float> h(static_cast<std::size_t>(n));
    std::uint32_t s = 12345;
    for (float& v : h) v = static_cast<float>((s = s * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1.0f;
    check(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy x");
    check(cudaMemcpy(y, h.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy y");
    // A copy from pageable memory may return before its DMA lands, and bench's stream does not
    // wait for the legacy default stream: finish it before any launch reads the inputs.
    check(cudaDeviceSynchronize(), "inputs copied");
  }
  ~Buffers() {
    cudaFree(x);
    cudaFree(y);
  }
  void launch(cudaStream_t stream) const {
    const int block = 256;
    const auto grid = static_cast<unsigned>(std::min<std::int64_t>((n + block - 1) / block, 132 * 32));
    saxpy<<<grid, block, 0, stream>>>(n, 2.0f, x, y);
    check(cudaGetLastError(), "saxpy launch");
  }
  /// y = 2 x + y once from known y, against a host reference.
  xb::Check verify(cudaStream_t stream) const {
    std::vector<float> hx(static_cast<std::size_t>(n)), hy(hx.size()), out(hx.size());
    check(cudaMemcpy(hx.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost), "read x");
    check(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost), "read y");
    launch(stream);
    check(cudaStreamSynchronize(stream), "saxpy");
    check(cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost), "read out");
    double err = 0, ref = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double r = 2.0 * hx[i] + hy[i];
      err += (out[i] - r) * (out[i] - r);
      ref += r * r;
    }
    const double rel = std::sqrt(err / ref);
    return xb::Check{rel <= 1e-6, rel, 1e-6, "full check"};
  }
};

}  // namespace

// One call: 2 FLOPs per element; reads x and y, writes y: 12 bytes per element.
XB_BENCHMARK(saxpy,
             [](const xb::Point& p, cudaStream_t) {
               auto b = std::make_shared<Buffers>(p.size);
               return xb::Instance{[b](cudaStream_t s) { b->launch(s); }, [b](cudaStream_t s) { return b->verify(s); }};
             })
    .dtypes({"fp32"})
    .sizes({4096, 1 << 24})
    .flops([](const xb::Point& p) { return 2.0 * static_cast<double>(p.size); })
    .bytes([](const xb::Point& p) { return 12.0 * static_cast<double>(p.size); })
    .device_bytes([](const xb::Point& p) { return 8.0 * static_cast<double>(p.size); });

int main(int argc, char** argv) { return xb::main(argc, argv); }
