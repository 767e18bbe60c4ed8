// A device fault or hang ends the run (see device_failure.h).
#include "bench/core/device_failure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "common/errors.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_wait.h"

namespace xb {

double wait_deadline_s() {
  const char* text = std::getenv(kWaitDeadlineEnv);
  if (text == nullptr || *text == '\0') return kWaitDeadlineS;
  char* end = nullptr;
  errno = 0;
  const double s = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !std::isfinite(s) || !(s > 0) || s > kMaxWaitDeadlineS) {
    throw UsageError(
        fmt::format("{}={}: not a number of seconds in (0, {}]", kWaitDeadlineEnv, text, kMaxWaitDeadlineS));
  }
  return s;
}

std::string DeviceFailure::what() const {
  if (hang) return fmt::format("a call did not finish within {} s (a hung kernel?)", limit_s);
  return fmt::format("device fault: {}: {}", error_name, error_text);
}

namespace {

DeviceFailure fault(const std::string& fixture, cudaError_t code) {
  DeviceFailure f;
  f.fixture = fixture;
  f.error_name = cudaGetErrorName(code);
  f.error_text = cudaGetErrorString(code);
  return f;
}

DeviceFailure hang(const std::string& fixture, double limit_s) {
  DeviceFailure f;
  f.fixture = fixture;
  f.hang = true;
  f.limit_s = limit_s;
  return f;
}

/// "1 fixture" / "2 fixtures".
std::string fixtures(std::size_t n) { return fmt::format("{} fixture{}", n, n == 1 ? "" : "s"); }

/// At most this many names in the line; the rest are counted.
constexpr std::size_t kMaxNames = 10;

std::string names(const std::vector<std::string>& all) {
  if (all.empty()) return "none";
  const std::size_t shown = std::min(all.size(), kMaxNames);
  std::string out = fmt::format("{}", fmt::join(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(shown), ", "));
  if (shown < all.size()) out += fmt::format(" and {} more", all.size() - shown);
  return out;
}

}  // namespace

std::optional<DeviceFailure> device_failure(const std::exception& e, const std::string& fixture) {
  if (const auto* h = dynamic_cast<const DeviceHang*>(&e)) return hang(fixture, h->limit_s());
  if (const auto* c = dynamic_cast<const CudaError*>(&e); c != nullptr && is_sticky(c->code()))
    return fault(fixture, c->code());
  if (const double s = cuda_hung_s(); s > 0) return hang(fixture, s);
  if (const cudaError_t lost = cuda_context_lost(); lost != cudaSuccess) return fault(fixture, lost);
  return std::nullopt;
}

std::string DeviceFailures::admit(const std::string& name) {
  const bool seen = std::find(started_.begin(), started_.end(), name) != started_.end();
  if (!failure_) {
    if (!seen) started_.push_back(name);
    return "";
  }
  if (std::find(not_run_.begin(), not_run_.end(), name) == not_run_.end() && name != failure_->fixture)
    not_run_.push_back(name);
  return failure_->hang ? "not run: the device hung in " + failure_->fixture
                        : "not run: the CUDA context was lost in " + failure_->fixture;
}

void DeviceFailures::record(DeviceFailure failure) {
  if (failure_) return;
  const auto it = std::find(started_.begin(), started_.end(), failure.fixture);
  before_ = static_cast<std::size_t>(it - started_.begin());
  failure_ = std::move(failure);
}

std::string DeviceFailures::line(const std::string& program, const std::string& dir, const std::string& command) const {
  if (!failure_) throw std::logic_error("DeviceFailures::line without a failure");
  const DeviceFailure& f = *failure_;
  const std::string cmd = command.empty() ? program : command;
  const std::string rest =
      fmt::format("so {} did not run ({}); the {} before it {} written to {} and validated", fixtures(not_run_.size()),
                  names(not_run_), fixtures(before_), before_ == 1 ? "is" : "are", dir);
  if (f.hang) {
    return fmt::format(
        "{}: {}: {}; the device stays busy with it, {}; find where it hangs with cuda-gdb --args {}, or set {} above "
        "{} if the call only takes long",
        program, f.fixture, f.what(), rest, cmd, kWaitDeadlineEnv, f.limit_s);
  }
  return fmt::format("{}: {}: {}; the CUDA context is lost, {}; find the fault with compute-sanitizer {}", program,
                     f.fixture, f.what(), rest, cmd);
}

}  // namespace xb
