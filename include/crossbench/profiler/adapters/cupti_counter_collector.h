// The CUPTI counter collector: the adapter behind the event model's CounterCollector seam
// (profiler/model/counters.h), in profiler/adapters/cupti_counters.cpp. No CUDA or CUPTI headers
// here.
#pragma once

#include <memory>
#include <ostream>

#include "profiler/model/counters.h"

namespace xb {

/// The CUPTI counter collector on CUDA device `device` (profiler/adapters/cupti_counters.cpp): CUPTI's range
/// profiler (cupti_range_profiler.h), auto range and user replay (the caller's `before_pass`
/// before each pass, the counter pass's warm-up calls), metrics evaluated with the profiler host API
/// (cupti_profiler_host.h); the SASS instruction counters from CUPTI's SASS metrics API
/// (profiler/adapters/cupti_sass_metrics.cpp) in a pass of their own, unless XB_COUNTERS_SASS=0. libcupti is loaded at
/// run time as for the activity profiler (profiler/adapters/cupti_api.h). Metrics the chip does not know are left out
/// and listed in `rejected`. Throws ProfilerError with one line saying why when it cannot collect: the library or its
/// range profiler functions missing, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (profiling restricted to admin users), an
/// unsupported device, or none of the essential metrics accepted. With `log` non-null it writes every CUPTI call's
/// result and each metric accepted or rejected to it.
std::unique_ptr<CounterCollector> make_cupti_counter_collector(int device, std::ostream* log = nullptr);

}  // namespace xb
