// crossbench._core's compare_command: `bench compare`'s own code (bench/compare/compare_report.h)
// in this process, behind `python -m crossbench compare`. Built only with the CUDA toolkit, as the
// bench functions are: compare reads run folders through the harness's records, whose library
// (xb_bench_core) is configured only then (bench/python/CMakeLists.txt).
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "bench/compare/compare_report.h"
#include "bench/python/functions.h"

namespace nb = nanobind;

namespace xb {
namespace {

/// `bench compare ARGS` (args[0] the program name): (exit status, stdout text, stderr text).
std::tuple<int, std::string, std::string> compare_args(const std::vector<std::string>& args) {
  return run_in_process(args, "compare", compare_main);
}

}  // namespace

void add_compare_functions(nb::module_& m) {
  m.def("compare_command", &compare_args, nb::arg("args"),
        "bench compare's command line in this process: (exit status, stdout text, stderr text); use python -m "
        "crossbench compare.");
}

}  // namespace xb
