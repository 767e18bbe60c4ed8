// Lab probe (issue 36): what CUPTI records of cross-stream ordering on this GPU and driver:
// CUDA_EVENT records (cudaEventRecord: stream, cudaEventSyncId), SYNCHRONIZATION records of
// cudaStreamWaitEvent (stream, cudaEventSyncId), the stream ids of the legacy and per-thread default
// streams, and how much a fork/join adds to a cudaEvent interval over the CUPTI span of the same
// work (the cross-stream wait latency at a sample's edges). Not part of the product; built and run
// by hand on the H200 (nvcc probe.cu -lcupti).
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#define CK(x)                                                   \
  do {                                                          \
    cudaError_t e_ = (x);                                       \
    if (e_ != cudaSuccess) {                                    \
      std::printf("CUDA %s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(1);                                             \
    }                                                           \
  } while (0)
#define CU(x)                                \
  do {                                       \
    CUptiResult r_ = (x);                    \
    if (r_ != CUPTI_SUCCESS) {               \
      const char* s_;                        \
      cuptiGetResultString(r_, &s_);         \
      std::printf("CUPTI %s: %s\n", #x, s_); \
      std::exit(1);                          \
    }                                        \
  } while (0)

struct Rec {
  int kind;
  unsigned long long start, end, sync_id;
  unsigned corr, stream, type, event;
  const char* name;
};
static std::mutex g_m;
static std::vector<Rec> g_recs;

static void CUPTIAPI req(uint8_t** b, size_t* s, size_t* m) {
  *s = 8 << 20;
  *b = (uint8_t*)aligned_alloc(8, *s);
  *m = 0;
}
static void CUPTIAPI done(CUcontext, uint32_t, uint8_t* b, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  std::lock_guard<std::mutex> l(g_m);
  while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS) {
    Rec x{};
    x.kind = r->kind;
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* k = (CUpti_ActivityKernel10*)r;
        x.start = k->start;
        x.end = k->end;
        x.corr = k->correlationId;
        x.stream = k->streamId;
        x.name = "kernel";
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* k = (CUpti_ActivityMemcpy6*)r;
        x.start = k->start;
        x.end = k->end;
        x.corr = k->correlationId;
        x.stream = k->streamId;
        x.name = "memcpy";
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* k = (CUpti_ActivityMemset4*)r;
        x.start = k->start;
        x.end = k->end;
        x.corr = k->correlationId;
        x.stream = k->streamId;
        x.name = "memset";
        break;
      }
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        auto* k = (CUpti_ActivitySynchronization2*)r;
        x.start = k->start;
        x.end = k->end;
        x.corr = k->correlationId;
        x.stream = k->streamId;
        x.type = k->type;
        x.event = k->cudaEventId;
        x.sync_id = k->cudaEventSyncId;
        x.name = "sync";
        break;
      }
      case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
        auto* k = (CUpti_ActivityCudaEvent2*)r;
        x.corr = k->correlationId;
        x.stream = k->streamId;
        x.event = k->eventId;
        x.sync_id = k->cudaEventSyncId;
        x.start = k->deviceTimestamp;
        x.name = "event_record";
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME: {
        auto* k = (CUpti_ActivityAPI*)r;
        x.start = k->start;
        x.end = k->end;
        x.corr = k->correlationId;
        const char* n = nullptr;
        cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, k->cbid, &n);
        x.name = n ? n : "?";
        break;
      }
      default:
        continue;
    }
    g_recs.push_back(x);
  }
  free(b);
}

__global__ void spin(long long ns) {
  long long t0 = clock64();
  while (clock64() - t0 < ns * 2) {}
}  // ~2 GHz
__global__ void touch(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1.f;
}

static std::vector<Rec> take() {
  CK(cudaDeviceSynchronize());
  CU(cuptiActivityFlushAll(1));
  std::lock_guard<std::mutex> l(g_m);
  auto v = g_recs;
  g_recs.clear();
  return v;
}

int main(int argc, char** argv) {
  const bool events = argc < 2;  // any argument: CUDA_EVENT records off
  CU(cuptiActivityRegisterCallbacks(req, done));
  for (auto k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                 CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME})
    CU(cuptiActivityEnable(k));
  if (events) CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CUDA_EVENT));
  std::printf("CUDA_EVENT records %s\n", events ? "on" : "off");
  cudaStream_t S, side, blk;
  CK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  CK(cudaStreamCreate(&blk));
  unsigned long long idS = 0, idSide = 0, idLegacy = 0, idPt = 0;
  CK(cudaStreamGetId(S, &idS));
  CK(cudaStreamGetId(side, &idSide));
  CK(cudaStreamGetId(cudaStreamLegacy, &idLegacy));
  CK(cudaStreamGetId(cudaStreamPerThread, &idPt));
  std::printf("cudaStreamGetId: S %llu side %llu legacy %llu per-thread %llu\n", idS, idSide, idLegacy, idPt);
  float* d;
  float h = 0;
  CK(cudaMalloc(&d, 1 << 20));
  cudaEvent_t a, b, l, p, f, j;
  for (auto* e : {&a, &b, &l, &p, &f, &j}) CK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  touch<<<1, 32, 0, S>>>(d, 32);
  spin<<<1, 1, 0, S>>>(10);
  CK(cudaDeviceSynchronize());
  take();
  CK(cudaEventRecord(a, S));
  CK(cudaEventRecord(l, cudaStreamLegacy));
  CK(cudaEventRecord(p, cudaStreamPerThread));
  CK(cudaEventRecord(f, S));
  CK(cudaStreamWaitEvent(side, f, 0));
  touch<<<1, 32, 0, side>>>(d, 32);
  CK(cudaEventRecord(j, side));
  CK(cudaStreamWaitEvent(S, j, 0));
  touch<<<1, 32>>>(d, 32);
  CK(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost));
  CK(cudaMemsetAsync(d, 0, 64, 0));
  touch<<<1, 32, 0, blk>>>(d, 32);
  touch<<<1, 32, 0, cudaStreamPerThread>>>(d, 32);
  CK(cudaEventRecord(b, S));
  auto v = take();
  std::sort(v.begin(), v.end(), [](const Rec& x, const Rec& y) { return x.corr < y.corr; });
  for (auto& r : v)
    std::printf("corr %u %-22s stream %u type %u event %u sync_id %llu start %llu end %llu\n", r.corr, r.name, r.stream,
                r.type, r.event, r.sync_id, r.start, r.end);

  // Latency: event interval minus CUPTI span, single stream vs fork/join, S held by a spin kernel.
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  for (int mode = 0; mode < 3; ++mode) {
    std::vector<double> diffs;
    for (int it = 0; it < 200; ++it) {
      spin<<<1, 1, 0, S>>>(300000);
      CK(cudaEventRecord(t0, S));
      if (mode == 0) {
        touch<<<64, 256, 0, S>>>(d, 16384);
      } else {
        CK(cudaEventRecord(f, S));
        CK(cudaStreamWaitEvent(side, f, 0));
        touch<<<64, 256, 0, side>>>(d, 16384);
        if (mode == 2) touch<<<64, 256, 0, S>>>(d + 16384, 16384);
        CK(cudaEventRecord(j, side));
        CK(cudaStreamWaitEvent(S, j, 0));
      }
      CK(cudaEventRecord(t1, S));
      CK(cudaEventSynchronize(t1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, t0, t1));
      auto recs = take();
      unsigned long long lo = ~0ull, hi = 0;
      for (auto& r : recs)
        if (r.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && r.end - r.start < 150000) {
          lo = std::min(lo, r.start);
          hi = std::max(hi, r.end);
        }
      diffs.push_back(ms * 1e6 - double(hi - lo));
    }
    std::sort(diffs.begin(), diffs.end());
    std::printf("mode %s: event - span ns: median %.0f q1 %.0f q3 %.0f min %.0f max %.0f\n",
                mode == 0   ? "single"
                : mode == 1 ? "forkjoin"
                            : "forkjoin+S",
                diffs[100], diffs[50], diffs[150], diffs[0], diffs[199]);
  }
  return 0;
}
