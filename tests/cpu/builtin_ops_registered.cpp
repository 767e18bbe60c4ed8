// The CPU tests parse bench's command line, which knows the registered benchmarks: register
// crossbench's own ops once, as bench's main() does (bench/main/main.cpp).
#include "bench/run/builtin_ops.h"

namespace {
const bool kRegistered = (xb::register_builtin_ops(), true);
}  // namespace
