// Hodges-Lehmann shift and its Mann-Whitney interval (see shift.h).
#include "bench/compare/shift.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/stats.h"

namespace xb {

namespace {

/// Pairs (i, j) with y_j - x_i <= d: for each x_i the y_j up to a pointer that only moves right,
/// since y_j - x_i <= d implies y_j - x_{i'} <= d for x_{i'} >= x_i (monotone rounding).
std::uint64_t count_at_most(const std::vector<double>& x, const std::vector<double>& y, double d) {
  std::uint64_t count = 0;
  std::size_t j = 0;
  for (double xi : x) {
    while (j < y.size() && y[j] - xi <= d) ++j;
    count += j;
  }
  return count;
}

}  // namespace

double kth_pairwise_difference(const std::vector<double>& x, const std::vector<double>& y, std::uint64_t k) {
  if (x.empty() || y.empty()) throw std::invalid_argument("kth_pairwise_difference: empty sample");
  const std::uint64_t total = static_cast<std::uint64_t>(x.size()) * y.size();
  if (k < 1 || k > total) throw std::invalid_argument("kth_pairwise_difference: k out of range");
  // count(lo) < k <= count(hi): the k-th difference lies in (lo, hi].
  double hi = y.back() - x.front();                             // the largest difference: count = total
  double lo = std::nextafter(y.front() - x.back(), -INFINITY);  // below the smallest: count = 0
  std::uint64_t count_lo = 0, count_hi = total;
  const std::uint64_t few = std::max<std::uint64_t>(x.size() + y.size(), 64);
  while (count_hi - count_lo > few) {
    const double mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi)) return hi;  // no value between: the tied differences at hi hold rank k
    const std::uint64_t c = count_at_most(x, y, mid);
    if (c >= k) {
      hi = mid;
      count_hi = c;
    } else {
      lo = mid;
      count_lo = c;
    }
  }
  // Few differences left in (lo, hi]: gather them (for each x_i, the y_j in (lo + x_i, hi + x_i],
  // two pointers that only move right) and select the one of rank k - count(lo) among them.
  std::vector<double> between;
  between.reserve(static_cast<std::size_t>(count_hi - count_lo));
  std::size_t first = 0, last = 0;
  for (double xi : x) {
    while (first < y.size() && y[first] - xi <= lo) ++first;
    while (last < y.size() && y[last] - xi <= hi) ++last;
    for (std::size_t j = first; j < last; ++j) between.push_back(y[j] - xi);
  }
  const auto nth = between.begin() + static_cast<std::ptrdiff_t>(k - count_lo - 1);
  std::nth_element(between.begin(), nth, between.end());
  return *nth;
}

Shift hodges_lehmann_shift(const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  if (a.empty() || b.empty()) throw std::invalid_argument("hodges_lehmann_shift: empty sample");
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("hodges_lehmann_shift: confidence not in (0, 1)");
  std::vector<double> x = a, y = b;
  for (double v : x)
    if (!std::isfinite(v)) throw std::invalid_argument("hodges_lehmann_shift: non-finite sample");
  for (double v : y)
    if (!std::isfinite(v)) throw std::invalid_argument("hodges_lehmann_shift: non-finite sample");
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  Shift s;
  s.n1 = x.size();
  s.n2 = y.size();
  s.confidence = confidence;
  const std::uint64_t total = static_cast<std::uint64_t>(s.n1) * s.n2;
  s.estimate = total % 2 == 1
                   ? kth_pairwise_difference(x, y, total / 2 + 1)
                   : (kth_pairwise_difference(x, y, total / 2) + kth_pairwise_difference(x, y, total / 2 + 1)) / 2;
  const double n1 = static_cast<double>(s.n1), n2 = static_cast<double>(s.n2);
  const double sigma = std::sqrt(n1 * n2 * (n1 + n2 + 1) / 12);
  const double z = normal_quantile(1 - (1 - confidence) / 2);
  const double c = std::floor(n1 * n2 / 2 + 0.5 - z * sigma);
  s.bounded = c >= 1;
  const std::uint64_t rank = s.bounded ? static_cast<std::uint64_t>(c) : 1;
  s.low = kth_pairwise_difference(x, y, rank);
  s.high = kth_pairwise_difference(x, y, total + 1 - rank);
  return s;
}

}  // namespace xb
