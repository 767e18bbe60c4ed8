// What the blocking kernel (kernels/blocking.h) reads of the SM it runs on, in plain C++ (no CUDA),
// so that the host's arithmetic on it (bench/core/sm_clock.h) builds and is tested without the
// toolkit.
#pragma once

#include <cstdint>

namespace xb {

/// One reading of an SM's own counters by one thread: %clock64 (the SM's cycle counter, counting
/// at its clock whether or not it runs warps), %globaltimer (ns, common to all SMs) and %smid
/// (the SM's index). The counters of two SMs are not synchronized: a difference of clock64 means
/// cycles only between readings of one SM.
struct SmCounters {
  std::uint64_t clock64 = 0;         ///< SM cycles since an arbitrary origin of that SM
  std::uint64_t globaltimer_ns = 0;  ///< ns since an arbitrary origin, the same on every SM
  std::uint32_t smid = 0;            ///< SM index the reading came from
  std::uint32_t written = 0;         ///< 1 once the kernel wrote this reading; 0: not (yet) written
};

/// The blocking kernel's two readings: when it starts spinning (the stream is held from then)
/// and when it sees the release (the timed work starts behind it).
struct BlockReadings {
  SmCounters start;
  SmCounters release;
};

}  // namespace xb
