// A known delay on a stream, for testing the qualification gate (`--slow-fixture NAME=US`): a
// 1-thread kernel that spins on %globaltimer (the device's nanosecond timer, as the blocking
// kernel's timeout in kernels/blocking.cu) until the requested time has passed since it started.
// Enqueued right after each workload call of a fixture, it makes every measured call longer by
// about the delay (plus the GPU's gap between two dependent kernels, about 1 us on the H200).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace xb {

/// Longest accepted delay: 1 s.
inline constexpr std::int64_t kMaxSpinDelayNs = 1'000'000'000;

/// Enqueues the spinning kernel on `stream`; it returns once `delay_ns` nanoseconds of
/// %globaltimer have passed since it started (the timer's update period, about 1 us on recent GPUs,
/// bounds how much longer it may spin). Throws std::invalid_argument for delay_ns outside
/// [0, kMaxSpinDelayNs], CudaError on launch failure.
void enqueue_spin_delay(cudaStream_t stream, std::int64_t delay_ns);

/// Enqueues a 0 ns delay and synchronizes `stream`: loads the kernel's module (CUDA's lazy
/// loading) outside any timed region. Throws CudaError.
void warm_up_spin_delay(cudaStream_t stream);

}  // namespace xb
