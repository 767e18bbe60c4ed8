# shellcheck shell=bash
# What the tools/lab/h200*.sh scripts share (they run on the H200 machine through the device tool);
# each sources it first:
#   source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
# Sets -u and pipefail (not -e: a script goes on after a failed step and reports it), moves to the
# repository root, creates $OUT (default /tmp/xb-out; the device tool brings back what lands there)
# and puts the CUDA 13.0 toolkit first on PATH and LD_LIBRARY_PATH. Not a script of its own.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
OUT=${OUT:-/tmp/xb-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda-13.0/bin:$PATH
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-13.0}
t0=$(date +%s)

# phase TEXT: prints TEXT after the seconds since the script started.
phase() { echo "[$(( $(date +%s) - t0 )) s] $*"; }

# check NAME RESULT: one acceptance line, printed and appended to $OUT/checks.txt.
check() { printf '%-72s %s\n' "$1" "$2" | tee -a "$OUT/checks.txt"; }

# h200_machine FILE: which machine ran it, into FILE: the time, the commit, the GPU (name, UUID,
# driver, VBIOS, PCI bus, clocks now and at most, temperature, power, ECC mode) and nvcc's version.
h200_machine() {
  {
    date -u +%Y-%m-%dT%H:%M:%SZ
    git log -1 --format='commit %H %s' 2>/dev/null
    nvidia-smi --query-gpu=index,name,uuid,driver_version,vbios_version,pci.bus_id,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,temperature.gpu,power.draw,power.limit,ecc.mode.current \
      --format=csv
    nvcc --version | tail -1
  } > "$1" 2>&1
}

# h200_workdir DIR [SUB...]: the script's scratch folder W=DIR, emptied, with DIR/SUB for each SUB
# (and $OUT again, should it lie inside DIR).
h200_workdir() {
  W=$1
  shift
  local dirs=("$W") sub
  for sub in "$@"; do dirs+=("$W/$sub"); done
  rm -rf "$W" && mkdir -p "$OUT" "${dirs[@]}"
}

# h200_build LOG LINES: builds build-h200 with 16 jobs and the lab targets (-DXB_LAB=ON: bench
# tune-add, xb_add_shim) through scripts/setup.sh (XB_BUILD_DIR and XB_JOBS stay exported for what
# the script runs next), its output in LOG. When the build fails, prints LOG's last LINES lines and
# returns 1.
h200_build() {
  local log=$1 lines=$2
  export XB_BUILD_DIR=build-h200 XB_JOBS=16 XB_CMAKE_ARGS=-DXB_LAB=ON
  # A kept build-h200 configured without the lab targets gets them.
  [ -f build-h200/CMakeCache.txt ] && cmake -S . -B build-h200 -DXB_LAB=ON > "$log" 2>&1
  if ! bash scripts/setup.sh >> "$log" 2>&1; then
    tail -"$lines" "$log"
    return 1
  fi
}

# h200_build_or_exit LOG LINES: h200_build; when the build fails, also copies LOG into $OUT, says
# so and exits the script with 1.
h200_build_or_exit() {
  h200_build "$@" && return 0
  [ "$(dirname "$1")" -ef "$OUT" ] || cp "$1" "$OUT/"
  echo "build failed ($(basename "$1"))"
  exit 1
}
