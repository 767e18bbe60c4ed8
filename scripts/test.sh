#!/usr/bin/env bash
# The test command (README, .ci/run): set-up, build, then every test. GPU tests (ctest label
# `gpu`) skip with "no CUDA device" where there is none.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
ctest --test-dir "${XB_BUILD_DIR:-build}" --output-on-failure -j "${XB_JOBS:-$(nproc)}" "$@"
