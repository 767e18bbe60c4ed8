// A kernel pair on one stream, launched with and without programmatic dependent launch (PDL,
// cudaLaunchAttributeProgrammaticStreamSerialization, compute capability >= 9.0), for
// tools/lab/pdl_overlap/probe.py: does Kineto's trace show the second kernel starting before the
// first one ends when PDL is on, and never when it is off? Built as a shared library and called
// through ctypes inside a torch.profiler session, so the records are Kineto's own.
#include <cuda_runtime.h>
#include <cstdio>

namespace {

__global__ void producer(float* x, int n, int spins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // Let the dependent grid start early (its prologue overlaps our tail).
  cudaTriggerProgrammaticLaunchCompletion();
  float v = i < n ? x[i] : 0.f;
  for (int k = 0; k < spins; ++k) v = v * 0.999f + 0.001f;
  if (i < n) x[i] = v;
}

__global__ void consumer(float* x, float* y, int n, int spins) {
  float acc = 0.f;
  for (int k = 0; k < spins; ++k) acc = acc * 0.5f + 1.f;  // prologue work before the wait
  cudaGridDependencySynchronize();                         // the producer's writes are visible
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + acc;
}

float* g_x = nullptr;
float* g_y = nullptr;
int g_n = 0;

int check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "pdl_pair: %s: %s\n", what, cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

}  // namespace

extern "C" int pdl_setup(int n) {
  g_n = n;
  if (check(cudaMalloc(&g_x, n * sizeof(float)), "cudaMalloc x")) return 1;
  if (check(cudaMalloc(&g_y, n * sizeof(float)), "cudaMalloc y")) return 1;
  if (check(cudaMemset(g_x, 0, n * sizeof(float)), "cudaMemset")) return 1;
  return check(cudaDeviceSynchronize(), "sync");
}

// Launches producer then consumer on `stream` (a
// cudaStream_t passed as an integer, PyTorch's current stream), the consumer with PDL when pdl != 0.
extern "C" int pdl_launch(unsigned long long stream, int pdl, int spins) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  dim3 block(256), grid((g_n + 255) / 256);
  producer<<<grid, block, 0, s>>>(g_x, g_n, spins);
  if (check(cudaGetLastError(), "producer launch")) return 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = pdl ? 1 : 0;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return check(cudaLaunchKernelEx(&cfg, consumer, g_x, g_y, g_n, spins), "consumer launch");
}

extern "C" int pdl_sync() { return check(cudaDeviceSynchronize(), "sync"); }
