// A user's program against xb::main for the fault and hang tests (test_fault_gpu.cpp): four
// benchmarks of one float each call, run as `xb_fault_program --op fault_ok,fault_oob,fault_last`
// (or fault_hang in the middle). fault_oob's kernel writes to address 0x8, an illegal address
// (cudaErrorIllegalAddress, a sticky error: the context is lost); fault_hang's kernel spins on a
// host-mapped flag that nothing sets, so its call never finishes (XB_WAIT_DEADLINE_S shortens the
// wait). fault_ok and fault_last are ordinary kernels.
#include <cstdint>
#include <memory>

#include <cuda_runtime.h>

#include "bench/core/api.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"

namespace {

__global__ void touch(float* out) { out[threadIdx.x] += 1.0f; }

// Guarded: the store happens only when `go` is set, so the compiler keeps it and a reader sees
// that the fault is on purpose.
__global__ void store_to(int* address, int go) {
  if (go != 0) *address = 1;
}

__global__ void spin_until(const volatile int* flag) {
  while (*flag == 0) {}
}

/// An instance of an ordinary benchmark: one kernel on 32 floats.
xb::Instance ordinary(const xb::Point&, cudaStream_t) {
  auto buffer = std::make_shared<xb::DeviceBuffer>(32 * sizeof(float));
  XB_CUDA(cudaMemset(buffer->get(), 0, buffer->bytes()));
  xb::Instance i;
  i.launch = [buffer](cudaStream_t s) {
    touch<<<1, 32, 0, s>>>(buffer->get<float>());
    XB_CUDA_LAST();
  };
  return i;
}

}  // namespace

XB_BENCHMARK(fault_ok, ordinary).bytes([](const xb::Point&) { return 256.0; });

XB_BENCHMARK(fault_oob, [](const xb::Point&, cudaStream_t) {
  xb::Instance i;
  i.launch = [](cudaStream_t s) {
    store_to<<<1, 1, 0, s>>>(reinterpret_cast<int*>(std::uintptr_t{0x8}), 1);
    XB_CUDA_LAST();
  };
  return i;
});

XB_BENCHMARK(fault_hang, [](const xb::Point&, cudaStream_t) {
  auto flag = std::make_shared<xb::PinnedHostBuffer>(sizeof(int), /*mapped=*/true);
  *static_cast<volatile int*>(flag->get()) = 0;  // never set
  xb::Instance i;
  i.launch = [flag](cudaStream_t s) {
    spin_until<<<1, 1, 0, s>>>(flag->device_ptr<int>());
    XB_CUDA_LAST();
  };
  return i;
});

XB_BENCHMARK(fault_last, ordinary).bytes([](const xb::Point&) { return 256.0; });

int main(int argc, char** argv) { return xb::main(argc, argv); }
