// The CUDA SampleDevice (bench/core/measure.h): cudaEvent pairs, the blocking kernel, the L2
// flush, the spin delay and graph mode's captured graphs on one stream. The only CUDA code of the
// sampling core. Its waits give up after wait_deadline_s() (device_failure.h): a hung kernel ends
// the run instead of blocking it forever.
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/core/device_failure.h"
#include "bench/core/measure.h"
#include "kernels/blocking.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_raii.h"
#include "kernels/cuda_wait.h"
#include "kernels/spin_delay.h"

namespace xb {
namespace {

class CudaSampleDevice final : public SampleDevice {
 public:
  CudaSampleDevice(cudaStream_t stream, BlockingKernel* blocking, const DeviceBuffer* flush)
      : stream_(stream), blocking_(blocking), flush_(flush), deadline_s_(wait_deadline_s()) {}

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
    wait_event(stop_.get(), deadline_s_);  // CudaError (a fault), DeviceHang past the deadline
    held_ = false;
    if (held && blocking_->timed_out()) {
      throw std::runtime_error("blocking kernel timed out before the host released it");
    }
    readings_.reset();
    if (held) readings_ = blocking_->readings();  // six loads of host-mapped memory
    const auto ns = static_cast<std::int64_t>(std::llround(static_cast<double>(stop_.elapsed_ms_since(start_)) * 1e6));
    if (ns <= 0) throw std::runtime_error("non-positive cudaEvent interval (" + std::to_string(ns) + " ns)");
    return ns;
  }
  std::optional<BlockReadings> hold_readings() const override { return readings_; }
  void release() noexcept override {
    if (blocking_ != nullptr) blocking_->release();  // a store to host-mapped memory: any thread
  }
  void synchronize() override {
    wait_stream(stream_, deadline_s_);
    held_ = false;
  }
  void abandon() noexcept override {
    release();
    held_ = false;
    // A lost context fails every wait, and a hung device never ends one: nothing to wait for. A
    // fault or hang found here is noted (cuda_check.h) for the fixture's report.
    if (cuda_unusable()) return;
    try {
      wait_stream(stream_, deadline_s_);
    } catch (const std::exception& e) {
      if (!cuda_unusable()) std::fprintf(stderr, "%s\n", e.what());
    }
  }
  ~CudaSampleDevice() override { drop_graphs(); }

  // The work-signature probe's markers: cudaEventRecord calls whose CUPTI records name the streams
  // (profiler/model/work_signature.h derive_work_signature reads them in this order).
  void probe_begin() override {
    marker_handed_.record(stream_);
    marker_legacy_.record(cudaStreamLegacy);
    marker_per_thread_.record(cudaStreamPerThread);
  }
  void probe_end() override {
    marker_handed_.record(stream_);
    wait_device(deadline_s_);  // the call's work may be on any stream
    held_ = false;
  }
  HandedStream handed_stream() const override {
    HandedStream h;
    h.legacy = stream_ == nullptr || stream_ == cudaStreamLegacy;
    // The per-thread default stream is a blocking stream (it synchronizes with the legacy one).
    unsigned int flags = h.legacy || stream_ == cudaStreamPerThread ? cudaStreamDefault : cudaStreamNonBlocking;
    if (flags == cudaStreamNonBlocking && cudaStreamGetFlags(stream_, &flags) != cudaSuccess) {
      cudaGetLastError();             // not left for a later launch check to find
      flags = cudaStreamNonBlocking;  // unknown: taken as non-blocking (no implicit ordering assumed)
    }
    h.blocking = (flags & cudaStreamNonBlocking) == 0;
    return h;
  }

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
    if (!cuda_unusable()) {  // else left to the process's end (cuda_raii.h)
      abandon();             // no replay may still be pending
      if (!cuda_unusable()) {
        for (cudaGraphExec_t g : graphs_) XB_CUDA_NOTHROW(cudaGraphExecDestroy(g));
      }
    }
    graphs_.clear();
  }

 private:
  cudaStream_t stream_;
  BlockingKernel* blocking_;
  const DeviceBuffer* flush_;
  double deadline_s_;                      ///< wait_event / wait_stream give up after this, s (wait_deadline_s)
  bool held_ = false;                      ///< a blocking kernel of hold() may still be pending
  std::optional<BlockReadings> readings_;  ///< the last sample's (hold_readings)
  Event start_, stop_;
  Event marker_handed_{cudaEventDisableTiming}, marker_legacy_{cudaEventDisableTiming},
      marker_per_thread_{cudaEventDisableTiming};
  std::vector<cudaGraphExec_t> graphs_;
};

}  // namespace

std::unique_ptr<SampleDevice> make_cuda_sample_device(cudaStream_t stream, BlockingKernel* blocking,
                                                      const DeviceBuffer* flush) {
  return std::make_unique<CudaSampleDevice>(stream, blocking, flush);
}

}  // namespace xb
