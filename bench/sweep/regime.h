// The regime rules behind `bench sweep`: where a point's time goes, from its GPU busy fraction and
// the roofline of its dtype (the ceilings and the roofline arithmetic: bench/core/ceilings.h). Plain C++ (no CUDA):
// tested on the CPU with hand-computed points. Formulas, units and thresholds are documented in docs/metrics.md
// ("Sweeps").
//
// Units: times in ns; rates in 10^12 FLOP/s (TFLOP/s) and 10^9 B/s (GB/s, which is bytes per ns);
// intensity in FLOP per byte.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/core/ceilings.h"

namespace xb {

/// Where a point's time goes (docs/metrics.md, "Regime"):
enum class Regime {
  Overhead,     ///< GPU busy fraction under the threshold: the host/launch path sets the pace
  Memory,       ///< busy enough, and the memory term of the roofline is the larger
  Compute,      ///< busy enough, and the compute term is the larger (or equal)
  NotMeasured,  ///< the point failed (wrong result, error): no timing
};
/// "overhead-bound", "memory-bound", "compute-bound", "not measured".
const char* to_string(Regime regime);

/// Thresholds of the regime rules.
struct RegimeRules {
  /// A point is overhead-bound when its GPU busy fraction is below this: by default 0.5, i.e. the
  /// GPU idles for more of the back-to-back window than it works.
  double busy_threshold = 0.5;
};

/// The rule: busy < rules.busy_threshold -> Overhead; else compute_ns >= memory_ns -> Compute;
/// else Memory. Throws std::invalid_argument for a busy fraction outside [0, 1.5] or negative
/// times (busy may exceed 1 by clock skew between host and device timestamps; above 1.5 the input
/// is wrong), or a threshold outside (0, 1].
Regime classify(double busy, double compute_ns, double memory_ns, const RegimeRules& rules);

/// Everything measured for one sweep point (op x dtype x size), per call. Produced by
/// measure_points (bench/sweep/sweep.h) from a recorded session.
struct PointMeasurement {
  std::string fixture;  ///< "<op>/<dtype>/<n>"
  std::string op;
  std::string dtype;
  std::int64_t n = 0;
  double flops = 0;  ///< per call, docs/metrics.md
  double bytes = 0;  ///< per call: each input read once, each output written once
  bool verified = false;
  double max_rel_error = 0;    ///< -1 when the output held non-finite values
  bool measured = false;       ///< false: no timing (failed point); the fields below are 0
  std::string note;            ///< why not measured, or "" when measured
  int steps = 0;               ///< active (recorded) timed steps
  double kernel_ns = 0;        ///< CUPTI device time per call, median over the active steps
  double event_ns = 0;         ///< cudaEvent time per call, median over the active steps
  double host_api_ns = 0;      ///< CUDA API time inside the op's cpu_op range, median
  double host_op_ns = 0;       ///< wall time of the op's cpu_op range (all host work), median
  int eager_calls = 0;         ///< calls in the back-to-back (eager) window
  double eager_window_ns = 0;  ///< eager window wall time
  double eager_device_ns = 0;  ///< device time inside the eager window
  int graph_steps = 0;         ///< active steps of the graph fixture (0: not measured in graph mode)
  double graph_event_ns = 0;   ///< cudaEvent time per call, CUDA-graph replay, median (0: none)
  double graph_kernel_ns = 0;  ///< CUPTI device time per call, CUDA-graph replay, median (0: none)
};

/// A point with its derived metrics.
struct PointMetrics {
  PointMeasurement m;
  Roof roof;                     ///< ceilings used
  double busy = 0;               ///< eager_device_ns / eager_window_ns
  double intensity = 0;          ///< flops / bytes, FLOP/B
  double tflops = 0;             ///< achieved: flops / kernel_ns / 1e3
  double gbps = 0;               ///< achieved: bytes / kernel_ns
  double compute_ns = 0;         ///< compute_time_ns
  double memory_ns = 0;          ///< memory_time_ns
  double bound_ns = 0;           ///< roofline_bound_ns
  double roofline_fraction = 0;  ///< bound_ns / kernel_ns (1 = on the roof)
  Regime regime = Regime::NotMeasured;
};

/// Derives every metric of a measured point (formulas in bench/core/ceilings.h's functions and
/// docs/metrics.md). An unmeasured point gets Regime::NotMeasured and zeros. Throws
/// std::invalid_argument for a measured point with kernel_ns <= 0, eager_window_ns <= 0,
/// eager_device_ns < 0, flops or bytes <= 0, or an invalid roof.
PointMetrics evaluate_point(const PointMeasurement& m, const Roof& roof, const RegimeRules& rules);

/// The crossover of one op and dtype: the first size, ascending, whose regime is not
/// overhead-bound (measured points only).
struct Crossover {
  std::string op;
  std::string dtype;
  std::optional<std::int64_t> size;                    ///< none: every measured size is overhead-bound
  std::optional<std::int64_t> largest_overhead_above;  ///< a larger size that is overhead-bound
                                                       ///< again (non-monotonic sweep), if any
  std::string regime_at_crossover;                     ///< regime of `size` ("" when none)
};

/// One Crossover per (op, dtype), in order of first appearance in `points`.
std::vector<Crossover> find_crossovers(const std::vector<PointMetrics>& points);

}  // namespace xb
