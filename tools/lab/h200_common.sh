# shellcheck shell=bash
# What the scripts/h200*.sh scripts share (they run on the H200 machine through the device tool);
# each sources it first:
#   source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
# Sets -u and pipefail (not -e: a script goes on after a failed step and reports it), moves to the
# repository root, creates $OUT (default /tmp/xb-out; the device tool brings back what lands there)
# and puts the CUDA 13.0 toolkit first on PATH and LD_LIBRARY_PATH. Not a script of its own.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
OUT=${OUT:-/tmp/xb-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda-13.0/bin:$PATH

# h200_workdir DIR [SUB...]: the script's scratch folder W=DIR, emptied, with DIR/SUB for each SUB
# (and $OUT again, should it lie inside DIR).
h200_workdir() {
  W=$1
  shift
  local dirs=("$W") sub
  for sub in "$@"; do dirs+=("$W/$sub"); done
  rm -rf "$W" && mkdir -p "$OUT" "${dirs[@]}"
}

# h200_build LOG LINES: builds build-h200 with 16 jobs (scripts/setup.sh; XB_BUILD_DIR and XB_JOBS
# stay exported for what the script runs next), its output in LOG. When the build fails, prints
# LOG's last LINES lines and returns 1.
h200_build() {
  local log=$1 lines=$2
  export XB_BUILD_DIR=build-h200 XB_JOBS=16
  if ! bash scripts/setup.sh > "$log" 2>&1; then
    tail -"$lines" "$log"
    return 1
  fi
}
