#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
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
  const std::int64_t lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
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

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal quantile: p must be in (0, 1)");
  // Phi(x) = erfc(-x / sqrt 2) / 2 is increasing: bisect on [-40, 40] (Phi is 0 or 1 beyond).
  double lo = -40, hi = 40;
  while (hi - lo > 1e-12) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double student_t_quantile(double p, double dof) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("t quantile: p must be in (0, 1)");
  if (!(dof >= 1)) throw std::invalid_argument("t quantile: needs at least 1 degree of freedom");
  if (dof < 4) {
    if (dof != std::floor(dof)) throw std::invalid_argument("t quantile: under 4 degrees of freedom, an integer");
    // A & S 26.7.3, the distribution function for 1, 2 and 3 degrees of freedom.
    constexpr double kPi = 3.14159265358979323846;
    const auto cdf = [dof](double t) {
      if (dof == 1) return 0.5 + std::atan(t) / kPi;
      if (dof == 2) return 0.5 + t / (2 * std::sqrt(2 + t * t));
      const double x = t / std::sqrt(3.0);
      return 0.5 + (std::atan(x) + x / (1 + x * x)) / kPi;
    };
    const double q = std::max(p, 1 - p);  // symmetric: bisect on the upper half
    double lo = 0, hi = 1;
    while (cdf(hi) < q) hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
      const double mid = 0.5 * (lo + hi);
      (cdf(mid) < q ? lo : hi) = mid;
    }
    const double t = 0.5 * (lo + hi);
    return p >= 0.5 ? t : -t;
  }
  const double z = normal_quantile(p);
  const double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
  const double g1 = (z3 + z) / 4;
  const double g2 = (5 * z5 + 16 * z3 + 3 * z) / 96;
  const double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384;
  const double g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
  return z + g1 / dof + g2 / (dof * dof) + g3 / (dof * dof * dof) + g4 / (dof * dof * dof * dof);
}

double MedianInterval::half_width() const {
  if (!bounded) return std::numeric_limits<double>::infinity();
  const double w = std::max(median - low, high - median);
  if (median == 0) return w == 0 ? 0 : std::numeric_limits<double>::infinity();
  return w / std::fabs(median);
}

std::size_t batches_in_span(double span_s, double batch_min_s) {
  if (!(batch_min_s > 0)) return kNoBatchLimit;
  if (!(span_s > 0)) return 0;
  return static_cast<std::size_t>(std::floor(span_s / batch_min_s));
}

MedianInterval median_interval(const std::vector<double>& samples, double confidence, std::size_t max_batches) {
  if (samples.empty()) throw std::invalid_argument("median interval of an empty sample set");
  if (!(confidence > 0 && confidence < 1)) throw std::invalid_argument("median interval: confidence must be in (0, 1)");
  for (double s : samples) {
    if (!std::isfinite(s)) throw std::invalid_argument("median interval of a non-finite sample");
  }
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  MedianInterval r;
  r.count = samples.size();
  r.confidence = confidence;
  r.median = quantile_sorted(sorted, 0.5);
  const double n = static_cast<double>(r.count);
  const double alpha = 1 - confidence;
  const double independent_sd = std::sqrt(n) / 2;  // sd of Binomial(n, 1/2)
  double h = normal_quantile(1 - alpha / 2) * independent_sd;
  r.effective_samples = n;
  // Batch means of the indicator [x < median] (1/2 at a tie), batches in time order.
  constexpr std::size_t kMaxBatches = 20, kMinBatch = 5, kMinBatches = 5;
  const bool span_limited = max_batches != kNoBatchLimit;
  const std::size_t k = std::min({kMaxBatches, r.count / kMinBatch, max_batches});
  if (span_limited && k < 2) {
    // The span holds under two batches of the drift's length: it cannot show the drift.
    r.effective_samples = std::min(1.0, n);
    r.bounded = false;
    r.low = sorted.front();
    r.high = sorted.back();
    return r;
  }
  if (k >= (span_limited ? 2 : kMinBatches)) {
    r.batches = k;
    std::vector<double> means(k);
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t begin = j * r.count / k, end = (j + 1) * r.count / k;
      double below = 0;
      for (std::size_t i = begin; i < end; ++i)
        below += samples[i] < r.median ? 1.0 : samples[i] == r.median ? 0.5 : 0.0;
      means[j] = below / static_cast<double>(end - begin);
    }
    double mean = 0;
    for (double m : means) mean += m;
    mean /= static_cast<double>(k);
    double ss = 0;
    for (double m : means) ss += (m - mean) * (m - mean);
    const double kd = static_cast<double>(k);
    const double batch_sd = n * std::sqrt(ss / (kd - 1)) / std::sqrt(kd);  // sd of the count below
    h = std::max(h, student_t_quantile(1 - alpha / 2, kd - 1) * batch_sd);
    const double inflation = std::max(1.0, (batch_sd * batch_sd) / (independent_sd * independent_sd));
    r.effective_samples = n / inflation;
  }
  // Symmetric ranks, continuity-corrected: P(B <= l - 1) <= alpha / 2 for B ~ N(n/2, sd) (at h's
  // independent value these are the exact binomial ranks for n = 10, 20 and 100: x(2)..x(9),
  // x(6)..x(15), x(40)..x(61)).
  const double l = std::floor(n / 2 + 0.5 - h), u = n + 1 - l;
  r.bounded = l >= 1 && u <= n;
  r.low = r.bounded ? sorted[static_cast<std::size_t>(l) - 1] : sorted.front();
  r.high = r.bounded ? sorted[static_cast<std::size_t>(u) - 1] : sorted.back();
  return r;
}

SampleStats compute_stats(const std::vector<std::int64_t>& samples) {
  return compute_stats(std::vector<double>(samples.begin(), samples.end()));
}

}  // namespace xb
