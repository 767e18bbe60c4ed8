// Host side of BlockingKernel (see blocking.h).
#include "kernels/blocking.h"

#include <atomic>
#include <stdexcept>
#include <string>
#include <utility>

namespace xb {

BlockingKernel::BlockingKernel()
    : release_flag_(sizeof(int), /*mapped=*/true),
      timed_out_flag_(sizeof(int), /*mapped=*/true),
      readings_(sizeof(BlockReadings), /*mapped=*/true) {
  *static_cast<volatile int*>(release_flag_.get()) = 1;
  *static_cast<volatile int*>(timed_out_flag_.get()) = 0;
  clear_readings();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  Stream warmup;
  detail::launch_blocking_kernel(release_flag_.device_ptr<int>(), timed_out_flag_.device_ptr<int>(),
                                 readings_.device_ptr<BlockReadings>(), kDefaultTimeoutNs, warmup.get());
  warmup.synchronize();
}

BlockingKernel::~BlockingKernel() { release(); }

BlockingKernel& BlockingKernel::operator=(BlockingKernel&& other) noexcept {
  if (this != &other) {
    release();
    release_flag_ = std::move(other.release_flag_);
    timed_out_flag_ = std::move(other.timed_out_flag_);
    readings_ = std::move(other.readings_);
  }
  return *this;
}

void BlockingKernel::block(cudaStream_t stream, std::int64_t timeout_ns) {
  if (timeout_ns < 0) {
    throw std::invalid_argument("BlockingKernel::block: timeout_ns " + std::to_string(timeout_ns) + " < 0");
  }
  if (release_flag_.get() == nullptr) {
    throw std::logic_error("BlockingKernel::block on a moved-from object");
  }
  *static_cast<volatile int*>(release_flag_.get()) = 0;
  *static_cast<volatile int*>(timed_out_flag_.get()) = 0;
  clear_readings();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  detail::launch_blocking_kernel(release_flag_.device_ptr<int>(), timed_out_flag_.device_ptr<int>(),
                                 readings_.device_ptr<BlockReadings>(), timeout_ns, stream);
}

void BlockingKernel::clear_readings() noexcept {
  auto* r = static_cast<volatile BlockReadings*>(readings_.get());
  r->start.written = 0;
  r->release.written = 0;
}

void BlockingKernel::release() noexcept {
  if (release_flag_.get() == nullptr) return;  // moved from
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *static_cast<volatile int*>(release_flag_.get()) = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool BlockingKernel::timed_out() const noexcept {
  if (timed_out_flag_.get() == nullptr) return false;  // moved from
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return *static_cast<const volatile int*>(timed_out_flag_.get()) != 0;
}

BlockReadings BlockingKernel::readings() const noexcept {
  if (readings_.get() == nullptr) return {};  // moved from
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const auto* r = static_cast<const volatile BlockReadings*>(readings_.get());
  const auto copy = [](const volatile SmCounters& c) {
    SmCounters out;
    out.clock64 = c.clock64;
    out.globaltimer_ns = c.globaltimer_ns;
    out.smid = c.smid;
    out.written = c.written;
    return out;
  };
  return BlockReadings{copy(r->start), copy(r->release)};
}

}  // namespace xb
