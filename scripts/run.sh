#!/usr/bin/env bash
# The main job (README): set-up, build, then `bench` with the given arguments
# (default: --size 64,4096 --warmup). Needs an NVIDIA GPU; without one, try
#   scripts/run.sh --replay results/sessions/h200-small/raw_session.json
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The main job needs bench (and validate, to re-check a run folder); scripts/test.sh builds the rest.
XB_BUILD_TARGETS=${XB_BUILD_TARGETS:-bench validate} source scripts/setup.sh
[ $# -eq 0 ] && set -- --size 64,4096 --warmup
exec "${XB_BUILD_DIR:-build}/bench" "$@"
