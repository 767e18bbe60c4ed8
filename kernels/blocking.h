// nvbench-style blocking kernel (nvbench/blocking_kernel.cuh): a 1-thread kernel that holds a
// stream until the host releases it, so that work enqueued behind it is launched back to back and
// launch overhead stays out of the measured region. A timeout (read from %globaltimer) guarantees
// it never hangs: if the host never releases it, it records the timeout and returns.
//
// Use: block(s); enqueue the timed work on s; release(); synchronize s; check timed_out().
//
// It also reads the SM's counters (kernels/sm_counters.h) when it starts spinning and when it sees
// the release, into host-mapped memory: the harness derives each sample's SM clock from them
// (bench/core/sm_clock.h). Both readings are taken while the stream is held, before anything timed
// starts: no kernel is added to the stream, and nothing runs inside the timed interval.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/cuda_raii.h"
#include "kernels/sm_counters.h"

namespace xb {

/// Owns two host-mapped (cudaHostAlloc(cudaHostAllocMapped)) int flags, `release` and
/// `timed_out`, which the device kernel reads/writes over the bus, and the host-mapped
/// BlockReadings it writes. One BlockingKernel blocks at
/// most one stream at a time. Not thread-safe; move-only.
class BlockingKernel {
 public:
  /// Default timeout of block(): 10 s, as nvbench's default (--blocking-kernel-timeout).
  static constexpr std::int64_t kDefaultTimeoutNs = 10'000'000'000;

  /// Allocates the flags, then launches the kernel once with the release flag already set and
  /// synchronizes, which loads the module (CUDA's lazy loading) outside any timed region.
  /// Throws CudaError.
  BlockingKernel();
  /// Releases a pending block() first, so that freeing the flags never waits for a timeout.
  ~BlockingKernel();
  BlockingKernel(BlockingKernel&&) noexcept = default;
  /// Releases this object's pending block(), if any, then takes over `other`'s flags.
  BlockingKernel& operator=(BlockingKernel&& other) noexcept;
  BlockingKernel(const BlockingKernel&) = delete;
  BlockingKernel& operator=(const BlockingKernel&) = delete;

  /// Resets both flags and enqueues the spinning kernel on `stream`. The kernel returns when
  /// release() is called or, failing that, once `timeout_ns` nanoseconds of %globaltimer have
  /// passed since it started; then timed_out() turns true. Call only when no kernel of this object
  /// is still pending (after the previous release() and a synchronize of its stream).
  /// Throws CudaError on launch failure, std::invalid_argument for timeout_ns < 0 and
  /// std::logic_error on a moved-from object.
  void block(cudaStream_t stream, std::int64_t timeout_ns = kDefaultTimeoutNs);

  /// Sets the release flag (full fence, then a volatile store), letting the kernel return.
  /// No effect on a moved-from object.
  void release() noexcept;

  /// True if the last block() ended by its timeout instead of release(). Valid once the stream
  /// has been synchronized after release().
  bool timed_out() const noexcept;

  /// The last block()'s readings of its SM (six loads of host-mapped memory): `start` when it
  /// began spinning, `release` when it saw release() (`written` 0 when it timed out instead, or
  /// on a moved-from object). Valid once the stream has been synchronized after release().
  BlockReadings readings() const noexcept;

 private:
  void clear_readings() noexcept;  ///< both readings' `written` to 0 (before a launch)

  PinnedHostBuffer release_flag_;    // int: 0 = hold, 1 = released
  PinnedHostBuffer timed_out_flag_;  // int: written 1 by the device on timeout
  PinnedHostBuffer readings_;        // BlockReadings, written by the device
};

namespace detail {
/// Enqueues the 1-thread spinning kernel on `stream` (kernel in blocking.cu). `release_flag` and
/// `timed_out_flag` are device addresses of host-mapped ints, `readings` of host-mapped
/// BlockReadings (the kernel writes `start` on entry, `release` on release). Throws CudaError on
/// launch failure.
void launch_blocking_kernel(const int* release_flag, int* timed_out_flag, BlockReadings* readings,
                            std::int64_t timeout_ns, cudaStream_t stream);
}  // namespace detail

}  // namespace xb
