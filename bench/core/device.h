// Device checks and warm-up shared by every bench command: is there a usable GPU, does a buffer
// fit in its memory, take it off its idle clocks.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include <cuda_runtime_api.h>

namespace xb {

/// Throws UsageError (exit 2) when no CUDA device is usable: "no CUDA device found (<why>);
/// <advice>", where <why> says in words when no driver is installed or the driver is older than
/// the runtime (both CUDA versions), else names the CUDA error.
void require_cuda_device(const std::string& advice = "this command needs an NVIDIA GPU");

/// Why no CUDA device is usable, in the words require_cuda_device uses ("no NVIDIA driver is
/// installed", "the NVIDIA driver supports CUDA 12.4, older than this build's runtime, CUDA 13.0",
/// else the CUDA error), or "" when one is. Clears the CUDA error it may leave. No exception.
std::string cuda_device_missing();

/// The number of CUDA devices this process sees (under its CUDA_VISIBLE_DEVICES), for --devices all.
/// Throws UsageError as require_cuda_device when there is none.
int cuda_device_count();

/// Runs `enqueue` back to back on `stream` until `ms` of wall time have passed (at least 2 calls),
/// in batches sized from the time per call seen so far (1 to 256), synchronizing after each
/// batch: a warm-up that takes the GPU off its idle clocks. Returns the calls. Throws CudaError.
int warm_up_for(cudaStream_t stream, double ms, const std::function<void()>& enqueue);

/// Throws UsageError when `need` bytes exceed the current device's free memory; `what` names the
/// buffer or point in the message.
void require_device_memory(std::size_t need, const std::string& what);

}  // namespace xb
