#include "bench/core/sampling.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/stats.h"

namespace xb {

int auto_batch(double single_ns) {
  if (!(single_ns > 0)) throw std::invalid_argument("auto_batch: call time must be positive");
  const double n = std::ceil(static_cast<double>(kHotBatchTargetNs) / single_ns);
  return static_cast<int>(std::clamp(n, 1.0, static_cast<double>(kMaxBatch)));
}

int rotation_copies(std::size_t working_set_bytes, std::size_t l2_bytes) {
  if (working_set_bytes == 0 || working_set_bytes >= l2_bytes) return 1;
  const std::size_t copies = (2 * l2_bytes + working_set_bytes - 1) / working_set_bytes;
  return static_cast<int>(std::min<std::size_t>(copies, 16));
}

int cold_copies(std::size_t working_set_bytes, std::size_t instance_bytes, std::size_t l2_bytes) {
  const int rotation = rotation_copies(working_set_bytes, l2_bytes);
  if (instance_bytes == 0) return rotation;
  const std::size_t fit = std::max<std::size_t>(kColdMemoryBudget / instance_bytes, 1);
  return static_cast<int>(std::min<std::size_t>(std::max(rotation, kColdCallsPerSample), fit));
}

double early_slowdown(const std::vector<double>& samples_ns) {
  if (samples_ns.size() < 6) return 0;
  const std::size_t head = std::clamp<std::size_t>(samples_ns.size() / 20, 3, 50);
  const double first =
      compute_stats(std::vector<double>(samples_ns.begin(), samples_ns.begin() + static_cast<std::ptrdiff_t>(head)))
          .median;
  const double all = compute_stats(samples_ns).median;
  return all > 0 ? first / all - 1 : 0;
}

}  // namespace xb
