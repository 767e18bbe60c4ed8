// The CUDA SampleDevice (bench/core/measure.h): cudaEvent pairs, the blocking kernel, the L2
// flush, the spin delay and graph mode's captured graphs on one stream. The only CUDA code of the
// sampling core.
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

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
    if (blocking_ == nullptr) return;
    blocking_->block(stream_);
    held_ = true;
  }
  void flush_l2() override {
    if (flush_ == nullptr) throw std::logic_error("cold-mode sample without an L2 flush buffer");
    XB_CUDA(cudaMemsetAsync(flush_->get(), 0x5a, flush_->bytes(), stream_));
  }
  void record_start() override { start_.record(stream_); }
  void record_stop() override { stop_.record(stream_); }
  void delay(std::int64_t ns) override { enqueue_spin_delay(stream_, ns); }
  std::int64_t release_and_wait_ns() override {
    const bool held = held_;
    release();
    stop_.synchronize();
    held_ = false;
    if (held && blocking_->timed_out()) {
      throw std::runtime_error("blocking kernel timed out before the host released it");
    }
    const auto ns = static_cast<std::int64_t>(std::llround(static_cast<double>(stop_.elapsed_ms_since(start_)) * 1e6));
    if (ns <= 0) throw std::runtime_error("non-positive cudaEvent interval (" + std::to_string(ns) + " ns)");
    return ns;
  }
  void release() noexcept override {
    if (blocking_ != nullptr) blocking_->release();  // a store to host-mapped memory: any thread
  }
  void synchronize() override {
    XB_CUDA(cudaStreamSynchronize(stream_));
    held_ = false;
  }
  void abandon() noexcept override {
    release();
    XB_CUDA_NOTHROW(cudaStreamSynchronize(stream_));
    held_ = false;
  }
  ~CudaSampleDevice() override { drop_graphs(); }

  int capture(const std::function<void()>& calls) override {
    // Thread-local capture: only this thread's unsafe calls (cudaMalloc, synchronization) break
    // it, not CUPTI's or NVML's threads. A call that allocates lazily on first use fails here:
    // the fixture's verification and the batch probe have already run it eagerly.
    XB_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
      calls();
    } catch (...) {
      // End the capture (the stream is usable again) and drop what was captured.
      if (cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph != nullptr) cudaGraphDestroy(graph);
      cudaGetLastError();
      throw;
    }
    XB_CUDA(cudaStreamEndCapture(stream_, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    XB_CUDA_NOTHROW(cudaGraphDestroy(graph));
    XB_CUDA(made);
    graphs_.push_back(exec);
    // Upload now, so the first timed replay does not pay for it.
    XB_CUDA(cudaGraphUpload(exec, stream_));
    XB_CUDA(cudaStreamSynchronize(stream_));
    return static_cast<int>(graphs_.size() - 1);
  }
  void replay(int handle) override {
    if (handle < 0 || static_cast<std::size_t>(handle) >= graphs_.size())
      throw std::logic_error("replay of an unknown graph");
    XB_CUDA(cudaGraphLaunch(graphs_[static_cast<std::size_t>(handle)], stream_));
  }
  void drop_graphs() noexcept override {
    if (graphs_.empty()) return;
    XB_CUDA_NOTHROW(cudaStreamSynchronize(stream_));  // no replay may still be pending
    for (cudaGraphExec_t g : graphs_) XB_CUDA_NOTHROW(cudaGraphExecDestroy(g));
    graphs_.clear();
  }

 private:
  cudaStream_t stream_;
  BlockingKernel* blocking_;
  const DeviceBuffer* flush_;
  bool held_ = false;  ///< a blocking kernel of hold() may still be pending
  Event start_, stop_;
  std::vector<cudaGraphExec_t> graphs_;
};

}  // namespace

std::unique_ptr<SampleDevice> make_cuda_sample_device(cudaStream_t stream, BlockingKernel* blocking,
                                                      const DeviceBuffer* flush) {
  return std::make_unique<CudaSampleDevice>(stream, blocking, flush);
}

}  // namespace xb
