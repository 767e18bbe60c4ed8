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

# h200_build_with_python LOG: builds bench and validate into build-h200 (-DXB_LAB=ON, python3's
# nanobind for the module), then the Python module crossbench._core by name (`ninja -t targets` did
# not list it under the H200's CMake 4.4); LOG holds the output. When bench or validate fails,
# copies LOG into $OUT, checks "build (bench, validate)" FAILED and exits 1; a missing _core is one
# check line (the Python parts are then not run). Exports XB_BUILD_DIR and XB_JOBS.
h200_build_with_python() {
  local log=$1 py3
  py3=$(command -v python3)
  export XB_BUILD_DIR=build-h200 XB_JOBS=16 XB_CMAKE_ARGS="-DXB_LAB=ON -DXB_PYTHON3:FILEPATH=$py3"
  if ! XB_BUILD_TARGETS="bench validate" bash scripts/setup.sh > "$log" 2>&1; then
    tail -40 "$log"
    cp "$log" "$OUT/"
    check "build (bench, validate)" "FAILED"
    exit 1
  fi
  if cmake --build build-h200 -j 16 --target _core >> "$log" 2>&1; then
    check "build (bench, validate, crossbench._core)" "$(( $(date +%s) - t0 )) s"
  else
    check "build (bench, validate; crossbench._core did not build: nanobind missing for python3?)" "$(( $(date +%s) - t0 )) s"
  fi
}
