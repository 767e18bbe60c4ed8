// Waits for the device with a deadline (see cuda_wait.h).
#include "kernels/cuda_wait.h"

#include <chrono>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "kernels/cuda_check.h"

namespace xb {
namespace {

using Clock = std::chrono::steady_clock;

/// How long a wait spins before it sleeps between queries. Spinning is what cudaEventSynchronize
/// does by default (cudaDeviceScheduleAuto, with fewer CUDA contexts than cores), so a sample's
/// wait costs the host what it did; past a second (no auto batch is that long: they aim at 0.5 ms
/// of device time, a drift batch at 0.5 s) a millisecond's lateness is under 0.1% of the wait.
constexpr std::chrono::seconds kSpin{1};
constexpr std::chrono::milliseconds kSleep{1};

/// Calls `query` until it returns anything but cudaErrorNotReady, at most `deadline_s` seconds;
/// returns its last status (cudaErrorNotReady: past the deadline).
template <class Query>
cudaError_t poll(Query&& query, double deadline_s) {
  const Clock::time_point start = Clock::now();
  for (;;) {
    const cudaError_t status = query();
    if (status != cudaErrorNotReady) return status;
    const Clock::duration waited = Clock::now() - start;
    if (std::chrono::duration<double>(waited).count() >= deadline_s) return cudaErrorNotReady;
    if (waited >= kSpin) std::this_thread::sleep_for(kSleep);
  }
}

[[noreturn]] void hang(const char* what, double deadline_s) {
  note_cuda_hang(deadline_s);
  std::ostringstream text;
  text << what << " did not complete within " << deadline_s << " s";
  throw DeviceHang(text.str(), deadline_s);
}

void check_deadline(double deadline_s) {
  if (!(deadline_s > 0))
    throw std::invalid_argument("wait deadline " + std::to_string(deadline_s) + " s is not positive");
}

}  // namespace

void wait_event(cudaEvent_t event, double deadline_s) {
  check_deadline(deadline_s);
  const cudaError_t status = poll([event] { return cudaEventQuery(event); }, deadline_s);
  if (status == cudaErrorNotReady) hang("the event", deadline_s);
  // The event's error, e.g. a kernel's fault (a sticky one is noted by throw_cuda_error).
  if (status != cudaSuccess) detail::throw_cuda_error(status, "cudaEventQuery(event)", __FILE__, __LINE__);
  XB_CUDA(cudaEventSynchronize(event));
}

void wait_stream(cudaStream_t stream, double deadline_s) {
  check_deadline(deadline_s);
  const cudaError_t status = poll([stream] { return cudaStreamQuery(stream); }, deadline_s);
  if (status == cudaErrorNotReady) hang("the work queued on the stream", deadline_s);
  if (status != cudaSuccess) detail::throw_cuda_error(status, "cudaStreamQuery(stream)", __FILE__, __LINE__);
  XB_CUDA(cudaStreamSynchronize(stream));
}

void wait_device(double deadline_s) {
  check_deadline(deadline_s);
  auto done = std::make_shared<std::promise<cudaError_t>>();
  std::future<cudaError_t> status = done->get_future();
  std::thread([done] { done->set_value(cudaDeviceSynchronize()); }).detach();
  if (status.wait_for(std::chrono::duration<double>(deadline_s)) != std::future_status::ready)
    hang("the work queued on the device", deadline_s);
  XB_CUDA(status.get());
}

}  // namespace xb
