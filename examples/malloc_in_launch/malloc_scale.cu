// A user's benchmark whose launch allocates a scratch buffer, computes into it, copies the result
// out and frees it: cudaMalloc, a kernel, cudaMemcpyAsync, cudaFree. cudaFree waits for the
// device, so the launch cannot be queued behind crossbench's blocking kernel; crossbench detects
// that and times it without the blocking kernel, its times then holding the allocation and the
// host's launch time (bench/core/api.h). Two registrations of the same work:
//   scale           the synchronization is detected (events.json timing.sync "detected")
//   scale_declared  declared with .sync() (timing.sync "declared")
//   scale_growing   a caching allocator's pattern: the scratch buffer is kept between calls and
//                   replaced (cudaFree, cudaMalloc) every 64th call only, so the launch
//                   synchronizes now and then: caught during sampling (timing.sync_found_after)
//   ./malloc_scale --warmup --out run_hot            (then: validate run_hot)
//   ./malloc_scale --mode cold --warmup --out run_cold
//   ./malloc_scale --graph                           refused: a synchronizing call cannot be captured
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

__global__ void scale(std::int64_t n, float a, const float* x, float* y) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    y[i] = a * x[i];
  }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

/// One instance: x (n random floats in [-1, 1)) and y; each call computes y = 2 x through a
/// scratch buffer it allocates and frees itself.
struct Buffers {
  std::int64_t n;
  float* x = nullptr;
  float* y = nullptr;
  std::vector<float> host_x;
  explicit Buffers(std::int64_t size) : n(size), host_x(static_cast<std::size_t>(size)) {
    check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc x");
    check(cudaMalloc(&y, n * sizeof(float)), "cudaMalloc y");
    std::uint32_t s = 777;
    for (float& v : host_x) v = static_cast<float>((s = s * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1.0f;
    check(cudaMemcpy(x, host_x.data(), n * sizeof(float), cudaMemcpyHostToDevice), "copy x");
    // A copy from pageable memory may return before its DMA lands, and bench's stream does not
    // wait for the legacy default stream: finish it before any launch reads the inputs.
    check(cudaDeviceSynchronize(), "inputs copied");
  }
  ~Buffers() {
    cudaFree(x);
    cudaFree(y);
    cudaFree(cached);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  /// scratch = 2 x, then y = scratch, on `stream`.
  void scale_through(float* scratch, cudaStream_t stream) const {
    const int block = 256;
    const auto grid = static_cast<unsigned>(std::min<std::int64_t>((n + block - 1) / block, 132 * 32));
    scale<<<grid, block, 0, stream>>>(n, 2.0f, x, scratch);
    check(cudaGetLastError(), "scale launch");
    check(cudaMemcpyAsync(y, scratch, n * sizeof(float), cudaMemcpyDeviceToDevice, stream), "copy out");
  }

  void launch(cudaStream_t stream) const {
    float* scratch = nullptr;
    check(cudaMalloc(&scratch, n * sizeof(float)), "cudaMalloc scratch");
    scale_through(scratch, stream);
    check(cudaFree(scratch), "cudaFree scratch");  // waits for the device
  }

  /// The same work through a kept scratch buffer, replaced on every 64th call (cudaFree waits for
  /// the device): asynchronous 63 calls in 64.
  void launch_growing(cudaStream_t stream) const {
    if (cached == nullptr || ++calls % 64 == 0) {
      if (cached != nullptr) check(cudaFree(cached), "cudaFree cached scratch");  // waits for the device
      cached = nullptr;
      check(cudaMalloc(&cached, n * sizeof(float)), "cudaMalloc cached scratch");
    }
    scale_through(cached, stream);
  }
  mutable float* cached = nullptr;
  mutable std::int64_t calls = 0;

  /// y poisoned, one call, every element against 2 x (exact in fp32).
  xb::Check verify(cudaStream_t stream, bool growing = false) const {
    check(cudaMemsetAsync(y, 0xff, n * sizeof(float), stream), "poison y");
    if (growing) {
      launch_growing(stream);
    } else {
      launch(stream);
    }
    check(cudaStreamSynchronize(stream), "scale");
    std::vector<float> out(static_cast<std::size_t>(n));
    check(cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost), "read y");
    double err = 0, ref = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double r = 2.0 * host_x[i];
      err += (out[i] - r) * (out[i] - r);
      ref += r * r;
    }
    const double rel = std::sqrt(err / ref);
    return xb::Check{rel == 0, rel, 0, "full check (2 x is exact)"};
  }
};

xb::Instance make(const xb::Point& p) {
  auto b = std::make_shared<Buffers>(p.size);
  return xb::Instance{[b](cudaStream_t s) { b->launch(s); }, [b](cudaStream_t s) { return b->verify(s); }};
}

xb::Instance make_growing(const xb::Point& p) {
  auto b = std::make_shared<Buffers>(p.size);
  return xb::Instance{[b](cudaStream_t s) { b->launch_growing(s); },
                      [b](cudaStream_t s) { return b->verify(s, true); }};
}

double flops(const xb::Point& p) { return static_cast<double>(p.size); }
// Reads x, writes the scratch; reads the scratch, writes y: 16 bytes per element.
double bytes(const xb::Point& p) { return 16.0 * static_cast<double>(p.size); }
double device_bytes(const xb::Point& p) { return 12.0 * static_cast<double>(p.size); }

}  // namespace

XB_BENCHMARK(scale, [](const xb::Point& p, cudaStream_t) { return make(p); })
    .sizes({1 << 20, 1 << 26})
    .flops(flops)
    .bytes(bytes)
    .device_bytes(device_bytes);

XB_BENCHMARK(scale_declared, [](const xb::Point& p, cudaStream_t) { return make(p); })
    .sizes({1 << 20, 1 << 26})
    .flops(flops)
    .bytes(bytes)
    .device_bytes(device_bytes)
    .sync();

XB_BENCHMARK(scale_growing, [](const xb::Point& p, cudaStream_t) { return make_growing(p); })
    .sizes({1 << 20, 1 << 26})
    .flops(flops)
    .bytes(bytes)
    .device_bytes(device_bytes);

int main(int argc, char** argv) { return xb::main(argc, argv); }
