// The two halves of crossbench._core (bench/python/module.cpp): the check functions, built
// everywhere (plain C++: the validator), and the bench functions, built only with the CUDA toolkit
// (XB_CUDA, the top-level CMakeLists.txt).
#pragma once

#include <nanobind/nanobind.h>

namespace xb {

/// Adds validate_command(args) and check(...) (check_functions.cpp) to the module.
void add_check_functions(nanobind::module_& m);

/// Adds run(...) and device_error() (bench_functions.cpp) to the module.
void add_bench_functions(nanobind::module_& m);

/// Adds compare_command(args) (compare_functions.cpp) to the module; built with the bench functions.
void add_compare_functions(nanobind::module_& m);

}  // namespace xb
