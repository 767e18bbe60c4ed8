// crossbench._core, the nanobind module behind the package crossbench (bench/python/crossbench;
// docs/python.md): the check functions always, the bench functions where the CUDA toolkit was
// found (XB_HAVE_BENCH, bench/python/CMakeLists.txt). `bench_unavailable` says why bench is absent.
#include <nanobind/nanobind.h>

#include "bench/python/functions.h"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "crossbench's validator and measuring core for Python (use the package crossbench; docs/python.md)";
  m.attr("__version__") = XB_VERSION;  // the CMake project's VERSION (bench/python/CMakeLists.txt)
  xb::add_check_functions(m);
#if XB_HAVE_BENCH
  xb::add_bench_functions(m);
  xb::add_compare_functions(m);
  m.attr("bench_unavailable") = "";
#else
  m.attr("bench_unavailable") =
      "crossbench.bench is not available: this crossbench was built without the CUDA toolkit (no nvcc found, or "
      "XB_CUDA=OFF), so it only checks files; install the CUDA toolkit and reinstall crossbench to time GPU work";
#endif
}
