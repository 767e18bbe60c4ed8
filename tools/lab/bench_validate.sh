#!/usr/bin/env bash
# The validator's speed benchmark (docs/performance.md; not a test): builds, then runs
# build/validate_bench, which writes a synthetic session of 100,000 and 1,000,000 kernels with the
# real exporters and times `validate` on each, pinned to one CPU, with its peak memory.
# Arguments go to validate_bench: [--kernels N] [--repeat R] [--dir DIR] [--keep].
# Source: tests/perf/validate_bench.cpp (tests/perf/CMakeLists.txt builds it into the top of the build folder).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/setup.sh
exec "${XB_BUILD_DIR:-build}/validate_bench" "$@"
