// The two halves of crossbench._core (bench/python/module.cpp): the check functions, built
// everywhere (plain C++: the validator), and the bench functions, built only with the CUDA toolkit
// (XB_CUDA, the top-level CMakeLists.txt).
#pragma once

#include <nanobind/nanobind.h>

#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace xb {

/// A command's main with its output streams: validate_command, compare_main.
using CommandMain = int (*)(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

/// Runs `command` on `args` (args[0] the program's name, for --help and "NAME: error: ..."; `name`
/// when `args` is empty) in this process without the GIL: (exit status, stdout text, stderr text).
std::tuple<int, std::string, std::string> run_in_process(const std::vector<std::string>& args, const char* name,
                                                         CommandMain command);

/// Adds validate_command(args) and check(...) (check_functions.cpp) to the module.
void add_check_functions(nanobind::module_& m);

/// Adds run(...) and device_error() (bench_functions.cpp) to the module.
void add_bench_functions(nanobind::module_& m);

/// Adds compare_command(args) (compare_functions.cpp) to the module; built with the bench functions.
void add_compare_functions(nanobind::module_& m);

}  // namespace xb
