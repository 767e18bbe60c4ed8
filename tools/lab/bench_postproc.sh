#!/usr/bin/env bash
# The post-processing speed benchmark (docs/performance.md; issue 7; not a test): builds, then
# runs build/postproc_bench, which times build_session, the table and both trace exporters on
# synthetic sessions of 50,000 to 1,000,000 kernels, each repetition in a fresh process pinned to
# one CPU, and prints the figures and a markdown table (seconds, best / median).
# Arguments go to postproc_bench: [--sizes N,N,...] [--repeat R] [--cpu C] [--dir DIR].
# Source: tests/perf/postproc_bench.cpp (tests/perf/CMakeLists.txt builds it into the top of the build folder).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/setup.sh
exec "${XB_BUILD_DIR:-build}/postproc_bench" "$@"
