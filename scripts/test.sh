#!/usr/bin/env bash
# The test command (README, .ci/run): set-up, build, then every test. GPU tests (ctest label
# `gpu`) skip with "no CUDA device" where there is none.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
# The plot test (ctest plot_sweep) needs matplotlib for python3: install it with pip when missing.
# Where pip cannot (no pip, no network, an externally managed Python), the test is skipped and says why.
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import matplotlib" >/dev/null 2>&1; then
  echo "test: installing matplotlib for the plot test (python3 -m pip install --quiet matplotlib)"
  python3 -m pip install --quiet --disable-pip-version-check --retries 2 --timeout 20 matplotlib ||
    echo "test: note: could not install matplotlib; the plot_sweep test will be skipped" >&2
fi
ctest --test-dir "${XB_BUILD_DIR:-build}" --output-on-failure -j "${XB_JOBS:-$(nproc)}" "$@"
