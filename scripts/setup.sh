#!/usr/bin/env bash
# Installs missing Debian/Ubuntu packages and configures + builds crossbench into build/.
# Sourced by scripts/run.sh and scripts/test.sh; usable alone: scripts/setup.sh
# XB_BUILD_TARGETS: what to build (default: everything; scripts/run.sh builds bench and validate only).
# XB_CMAKE_ARGS: more -D options for the first configure (e.g. -DXB_LAB=ON: the lab targets, tools/lab/README.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=()
# Tools: any install on PATH will do (pip's cmake and ninja count).
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
# Libraries: the distribution's -dev packages.
for p in libbenchmark-dev libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev zlib1g-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# CMakeLists.txt needs CMake 3.24 (Ubuntu 22.04's is 3.22): an older one is replaced by PyPI's.
cmake_ok() {
  local v
  v=$(cmake --version 2>/dev/null | head -1 | awk '{print $3}')
  [ -n "$v" ] && [ "$(printf '%s\n3.24\n' "$v" | sort -V | head -1)" = 3.24 ]
}
if ! cmake_ok; then
  echo "setup: cmake $(cmake --version | head -1 | awk '{print $3}') is older than 3.24; installing PyPI's cmake (python3 -m pip)"
  python3 -m pip install --quiet --user "cmake>=3.24" 2>/dev/null || python3 -m pip install --quiet "cmake>=3.24" || true
  export PATH="$HOME/.local/bin:$PATH"
  hash -r
  if ! cmake_ok; then
    echo "setup: error: CMake 3.24 or newer is required (python3 -m pip install cmake, or Kitware's apt repository)" >&2
    exit 2
  fi
fi

cuda_root=${CUDA_HOME:-/usr/local/cuda}
if ! command -v nvcc >/dev/null 2>&1; then
  if [ -x "$cuda_root/bin/nvcc" ]; then export PATH="$cuda_root/bin:$PATH"; else
    echo "setup: error: the CUDA Toolkit (nvcc, CUPTI, cuBLAS) is required; install CUDA 13 and set CUDA_HOME" >&2
    exit 2
  fi
fi
# libcupti lives beside the toolkit's other libraries on some installs, under extras/ on others.
for d in "$cuda_root/targets/x86_64-linux/lib" "$cuda_root/extras/CUPTI/lib64"; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done

build_dir=${XB_BUILD_DIR:-build}
jobs=${XB_JOBS:-$(nproc)}
# A build folder configured without the GPU parts (cmake -DXB_CUDA=OFF, validate alone) has no
# target bench: configure it again with XB_CUDA=AUTO, saying so, rather than fail in ninja.
if [ -f "$build_dir/CMakeCache.txt" ] && grep -q '^XB_CUDA:STRING=OFF$' "$build_dir/CMakeCache.txt"; then
  echo "setup: $build_dir was configured with -DXB_CUDA=OFF (validate only); configuring it again with XB_CUDA=AUTO"
  # shellcheck disable=SC2086  # XB_CMAKE_ARGS: more -D options, space-separated (e.g. -DXB_LAB=ON)
  cmake -S . -B "$build_dir" -DXB_CUDA=AUTO ${XB_CMAKE_ARGS:-}
fi
if [ ! -f "$build_dir/build.ninja" ]; then
  # shellcheck disable=SC2086  # XB_CMAKE_ARGS: more -D options, space-separated (e.g. -DXB_LAB=ON)
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${XB_CMAKE_ARGS:-}
fi
# shellcheck disable=SC2086  # a space-separated list of targets
cmake --build "$build_dir" -j "$jobs" ${XB_BUILD_TARGETS:+--target $XB_BUILD_TARGETS}
