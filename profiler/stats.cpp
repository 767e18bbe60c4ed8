#include "profiler/stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace xb {

double quantile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) throw std::invalid_argument("quantile of an empty sample set");
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument("quantile p must be in [0, 1]");
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double median_of(std::vector<std::int64_t> values) {
  if (values.empty()) return 0.0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const std::int64_t upper = values[mid];
  if (values.size() % 2 == 1) return static_cast<double>(upper);
  const std::int64_t lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  // Mean without overflow: lower + (upper - lower) / 2, exact to .5.
  return static_cast<double>(lower) + static_cast<double>(upper - lower) / 2.0;
}

SampleStats compute_stats(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("statistics of an empty sample set");
  for (double s : samples) {
    if (!std::isfinite(s)) throw std::invalid_argument("statistics of a non-finite sample");
  }
  std::sort(samples.begin(), samples.end());
  SampleStats st;
  st.count = samples.size();
  st.min = samples.front();
  st.max = samples.back();
  st.median = quantile_sorted(samples, 0.5);
  st.q1 = quantile_sorted(samples, 0.25);
  st.q3 = quantile_sorted(samples, 0.75);
  // Two-pass mean and variance: exact enough for ns-scale samples.
  double sum = 0;
  for (double s : samples) sum += s;
  st.mean = sum / static_cast<double>(st.count);
  double ss = 0;
  for (double s : samples) ss += (s - st.mean) * (s - st.mean);
  st.stddev = st.count > 1 ? std::sqrt(ss / static_cast<double>(st.count - 1)) : 0;
  std::vector<double> dev(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) dev[i] = std::fabs(samples[i] - st.median);
  std::sort(dev.begin(), dev.end());
  st.mad = quantile_sorted(dev, 0.5);
  return st;
}

SampleStats compute_stats(const std::vector<std::int64_t>& samples) {
  return compute_stats(std::vector<double>(samples.begin(), samples.end()));
}

}  // namespace xb
