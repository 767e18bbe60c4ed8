// Profiles a kernel of your own with crossbench (find_package(crossbench), crossbench::profiler):
// 7 steps, the first unrecorded, the next discarded, 5 recorded as ProfilerStep#N with an
// annotation; writes table.txt/.json, trace_only.json, full.json and raw_session.json into argv[1].
#include <cstdio>
#include <cuda_runtime.h>
#include "profiler/outputs.h"
#include "profiler/profiler.h"

__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) try {
  const int n = 1 << 24;
  float *x = nullptr, *y = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&y, n * sizeof(float)) != cudaSuccess)
    return std::fprintf(stderr, "no usable CUDA device\n"), 1;
  xb::Profiler profiler(xb::make_cupti_source());
  profiler.start();
  profiler.begin_fixture(xb::Schedule{1, 1, 5});  // wait, warmup, active steps
  for (int step = 0; step < 7; ++step) {
    profiler.begin_step();
    {
      xb::ScopedRange range(profiler, "saxpy", xb::RangeCategory::UserAnnotation);
      saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    }
    cudaDeviceSynchronize();
    profiler.end_step();
  }
  const char* dir = argc > 1 ? argv[1] : "profile_my_kernel_out";
  xb::write_profile_outputs(profiler.stop(), dir);
  std::printf("wrote %s/table.txt, table.json, trace_only.json, full.json, raw_session.json\n", dir);
  return cudaFree(x) == cudaSuccess && cudaFree(y) == cudaSuccess ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "profile_my_kernel: %s\n", e.what());
  return 1;
}
