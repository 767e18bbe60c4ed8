// The shift between two sample sets and its distribution-free interval: the Hodges-Lehmann
// estimator and the interval that inverts the Mann-Whitney U test (bench/gate/gate.h
// mann_whitney_u is the test itself). `bench compare` applies them to log-times, so the shift is a
// ratio (docs/compare.md, "Statistics"). Plain C++, CPU-tested in tests/cpu/test_compare_shift.cpp.
//
// Why these: the estimate and its interval come from the ranks alone, so they need no model of
// the distribution (GPU times are skewed, with rare slow outliers), an outlier moves them by one
// pairwise difference at most, and they are deterministic (a bootstrap would resample at random).
// Sources: Hodges & Lehmann 1963 (Ann. Math. Statist. 34, 598-611); Lehmann, "Nonparametrics:
// Statistical Methods Based on Ranks" (1975), 2.6 and 5.6; Bauer 1972 (JASA 67, 687-690);
// Hollander & Wolfe, "Nonparametric Statistical Methods" (1999), 4.2-4.3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xb {

/// The shift of b against a: delta such that b - delta is distributed as a.
struct Shift {
  std::size_t n1 = 0, n2 = 0;
  /// Hodges-Lehmann estimate: the median of the n1 n2 pairwise differences b_j - a_i (the mean of
  /// the two middle ones for an even count).
  double estimate = 0;
  /// The interval [D_(C), D_(n1 n2 + 1 - C)] of the sorted pairwise differences D (ranks from 1),
  /// C = floor(n1 n2 / 2 + 1/2 - z_{1-alpha/2} sigma), sigma^2 = n1 n2 (n1 + n2 + 1) / 12: the
  /// shifts the two-sided Mann-Whitney test at level alpha does not reject (U's continuity-corrected
  /// normal approximation; without the tie correction, which would only narrow it). At 10 + 10
  /// samples and 99% it is wider than the exact interval (C = 16 against 20): conservative.
  double low = 0, high = 0;
  double confidence = 0;  ///< 1 - alpha
  bool bounded = false;   ///< false: too few samples for the level (C < 1); low, high are then the extreme differences
};

/// Shift of `b` against `a` at `confidence` (e.g. 0.99), in the samples' units. Exact order
/// statistics of the pairwise differences without forming all n1 n2 of them (kth_pairwise_difference). Throws
/// std::invalid_argument for an empty sample, a non-finite value or confidence outside (0, 1).
Shift hodges_lehmann_shift(const std::vector<double>& a, const std::vector<double>& b, double confidence);

/// The k-th smallest (1-based, 1 <= k <= n1 n2) of the differences y_j - x_i of ascending `x` and
/// `y`, computed as y_j - x_i in double (so equal to one of them exactly). Bisection on the value
/// with a two-pointer count of the differences <= d (monotone under IEEE rounding) until at most
/// max(n1 + n2, 64) differences lie in the bracket, which are then gathered and selected
/// (nth_element); O((n1 + n2) log(range / spacing)). Written here because no library the project
/// uses has it (Boost.Math and GSL have the test, not the selection in X + Y). Throws
/// std::invalid_argument for k out of range or an empty input.
double kth_pairwise_difference(const std::vector<double>& x, const std::vector<double>& y, std::uint64_t k);

}  // namespace xb
