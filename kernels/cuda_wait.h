// Waits for the device with a deadline: cudaEventSynchronize and cudaStreamSynchronize block
// forever when a kernel never finishes (a hung kernel: a spin on a flag nobody sets, a deadlock
// between blocks), and so would the whole run. These poll instead (cudaEventQuery /
// cudaStreamQuery) and give up after a stated limit, so that a hung call ends the run the way a
// device fault does (docs/bench.md "A fault or a hang"), with the fixtures before it written.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace xb {

/// A wait for the device gave up: the work it waited for did not finish within `limit_s()`
/// seconds. The device stays busy with it (it may never finish), so nothing may wait for the
/// device or free device memory afterwards (cuda_unusable(), cuda_check.h, is true).
class DeviceHang : public std::runtime_error {
 public:
  DeviceHang(const std::string& what, double limit_s) : std::runtime_error(what), limit_s_(limit_s) {}
  /// The limit the wait gave up after, s.
  double limit_s() const noexcept { return limit_s_; }

 private:
  double limit_s_;
};

/// Waits until `event` has completed, at most `deadline_s` seconds (> 0): polls cudaEventQuery,
/// spinning for the first second as cudaEventSynchronize does by default (the host notices the
/// end as soon), then every millisecond; once done, one cudaEventSynchronize (it returns at once)
/// checks the event as before. Throws CudaError with the event's error (a sticky one is noted:
/// cuda_context_lost), or DeviceHang past the deadline (noted: cuda_hung_s).
void wait_event(cudaEvent_t event, double deadline_s);

/// wait_event for everything queued on `stream` (cudaStreamQuery, then cudaStreamSynchronize).
void wait_stream(cudaStream_t stream, double deadline_s);

/// wait_event for everything queued on the device, on any stream (the work-signature probe: a
/// call's work may be anywhere). CUDA has no query for the whole device: cudaDeviceSynchronize
/// runs on a thread of its own, which is left blocked (detached) past the deadline.
void wait_device(double deadline_s);

}  // namespace xb
