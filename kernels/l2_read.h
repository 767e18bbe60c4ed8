// A read-only L2 flush: reads a buffer larger than the L2 with ordinary caching loads, so that
// every line the L2 held before is evicted (dirty ones written back now) and the L2 is left
// holding clean lines of this buffer. The counter pass (bench/core/counter_pass_gpu.cpp) runs it
// before each replay pass: a memset flush (SampleDevice::flush_l2) leaves the L2 full of dirty
// lines whose write-back the next kernel's dram__bytes_write would count.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace xb {

/// Enqueues a kernel on `stream` that loads every 16-byte vector of the device buffer `buf`
/// (`bytes` bytes, 16-byte aligned) and writes one word to `sink` (a device pointer to one
/// unsigned int) only when the loaded words XOR to a value no buffer filled with one byte value
/// gives (so the loads cannot be dropped and nothing else is written). bytes < 16 launches nothing.
/// Throws CudaError if the launch fails, std::invalid_argument for a misaligned `buf`.
void launch_l2_read(const void* buf, std::size_t bytes, unsigned int* sink, cudaStream_t stream);

}  // namespace xb
