// The CUDA SampleDevice (bench/core/measure.h): cudaEvent pairs, the blocking kernel, the L2
// flush and the spin delay on one stream. The only CUDA code of the sampling core.
#include <cmath>
#include <stdexcept>
#include <string>

#include "bench/core/measure.h"
#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/spin_delay.h"

namespace xb {
namespace {

class CudaSampleDevice final : public SampleDevice {
 public:
  CudaSampleDevice(cudaStream_t stream, BlockingKernel* blocking, const DeviceBuffer* flush)
      : stream_(stream), blocking_(blocking), flush_(flush) {}

  bool blocking() const override { return blocking_ != nullptr; }
  void hold() override {
    if (blocking_ != nullptr) blocking_->block(stream_);
  }
  void flush_l2() override {
    if (flush_ == nullptr) throw std::logic_error("cold-mode sample without an L2 flush buffer");
    XB_CUDA(cudaMemsetAsync(flush_->get(), 0x5a, flush_->bytes(), stream_));
  }
  void record_start() override { start_.record(stream_); }
  void record_stop() override { stop_.record(stream_); }
  void delay(std::int64_t ns) override { enqueue_spin_delay(stream_, ns); }
  std::int64_t release_and_wait_ns() override {
    if (blocking_ != nullptr) blocking_->release();
    stop_.synchronize();
    if (blocking_ != nullptr && blocking_->timed_out()) {
      throw std::runtime_error("blocking kernel timed out before the host released it");
    }
    const auto ns = static_cast<std::int64_t>(std::llround(static_cast<double>(stop_.elapsed_ms_since(start_)) * 1e6));
    if (ns <= 0) throw std::runtime_error("non-positive cudaEvent interval (" + std::to_string(ns) + " ns)");
    return ns;
  }
  void abandon() noexcept override {
    if (blocking_ != nullptr) blocking_->release();
    XB_CUDA_NOTHROW(cudaStreamSynchronize(stream_));
  }

 private:
  cudaStream_t stream_;
  BlockingKernel* blocking_;
  const DeviceBuffer* flush_;
  Event start_, stop_;
};

}  // namespace

std::unique_ptr<SampleDevice> make_cuda_sample_device(cudaStream_t stream, BlockingKernel* blocking,
                                                      const DeviceBuffer* flush) {
  return std::make_unique<CudaSampleDevice>(stream, blocking, flush);
}

}  // namespace xb
