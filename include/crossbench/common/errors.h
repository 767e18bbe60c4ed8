// The error types every layer shares, in one place: the profiler's readers, the validator's and
// bench's throw them, and each command maps them to its exit code (exit code 2 for bad input).
// Plain C++; no other crossbench header.
#pragma once

#include <stdexcept>

namespace xb {

/// Unusable input (missing file, not JSON, wrong shape): the message names the file or field and
/// what is wrong, on one line. Callers map it to exit code 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Bad command-line input; `bench` prints "bench: error: <what>" and exits with code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace xb
