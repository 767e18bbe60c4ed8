#!/usr/bin/env bash
# The pip package on the H200 (evidence for "pip install, then time a torch callable with
# crossbench.bench and check a torch.profiler profile with crossbench.check_profile"):
#   bash tools/lab/h200_python_package.sh [OUT]        (from the repository root; OUT: $OUT, else ./h200-python-package)
# 1. pip install bench/python (the H200's python3 has scikit-build-core and nanobind: no network,
#    --no-build-isolation --no-deps; --target, since Ubuntu 24.04's system Python refuses plain
#    installs, PEP 668) into a work folder, with the CUDA toolkit (crossbench.bench built);
# 2. from that folder (not the source tree): examples/python/check_and_time.py times torch's bf16
#    matmul and add with crossbench.bench and checks torch.profiler profiles with
#    crossbench.check_profile and crossbench.handler;
# 3. the console script crossbench-validate and python -m crossbench validate on the exported
#    profile: the same verdict and exit code as check_profile's.
# OUT gets checks.txt (one line per step), machine.txt, pip_install.log, check_and_time.log,
# console.txt and run/ (summary.json, profile/ and handler/ with their validation.json and .md, the
# bench_* run folders without their traces). About 2 minutes (the pip build: 1 minute on 16 cores).
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=$(mkdir -p "${1:-${OUT:-h200-python-package}}" && cd "${1:-${OUT:-h200-python-package}}" && pwd)
W=/tmp/xb-python-package
rm -rf "$W" && mkdir -p "$W"
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-13.0}
export PATH="$CUDA_HOME/bin:$PATH"
: > "$OUT/checks.txt"
check() { printf '%-64s %s\n' "$1" "$2" | tee -a "$OUT/checks.txt"; }
{ git -C "$repo" log -1 --format='commit %H %s'; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import sys, torch, nanobind, scikit_build_core; print('python', sys.version.split()[0], 'torch', torch.__version__,
'nanobind', nanobind.__version__, 'scikit-build-core', scikit_build_core.__version__)"; nvcc --version | tail -2; } > "$OUT/machine.txt" 2>&1

t0=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) timeout 400 python3 -m pip install -v --no-build-isolation --no-deps --target "$W/site" \
  -C build-dir="$W/skbuild" "$repo/bench/python" > "$OUT/pip_install.log" 2>&1
rc=$?
check "pip install bench/python ($(( $(date +%s) - t0 )) s)" "exit $rc"
[ $rc -eq 0 ] || { tail -30 "$OUT/pip_install.log"; exit 1; }

cd "$W"  # the installed package, not the source tree
export PYTHONPATH="$W/site"
timeout 300 python3 -u "$repo/examples/python/check_and_time.py" "$W/run" > "$OUT/check_and_time.log" 2>&1
rc=$?
check "examples/python/check_and_time.py (bench + check_profile + handler)" "exit $rc"
grep -E '^(crossbench |torch |bench: |check_profile: |crossbench .*step_)' "$OUT/check_and_time.log" | tee -a "$OUT/checks.txt"

P="$W/run/profile"
if [ -f "$P/trace.json" ]; then
  python3 -c "import crossbench, json; v = crossbench.check_files('$P/trace.json', '$P/table.txt'); print(json.dumps([v.verdict, v.exit_code]))" \
    > "$W/api.txt" 2>&1
  { echo "\$ crossbench-validate --trace trace.json --table table.txt"; "$W/site/bin/crossbench-validate" --trace "$P/trace.json" --table "$P/table.txt"
    echo "exit $?"; echo "\$ python3 -m crossbench validate --trace trace.json --table table.txt"
    python3 -m crossbench validate --trace "$P/trace.json" --table "$P/table.txt"; echo "exit $?"; } > "$OUT/console.txt" 2>&1
  cli=$(sed -n 2p "$OUT/console.txt"); cli_rc=$(grep -m1 '^exit ' "$OUT/console.txt" | cut -d' ' -f2)
  same=$(python3 -c "import json, sys; v, c = json.load(open('$W/api.txt')); print('same' if [v, c] == [sys.argv[1], int(sys.argv[2])] else 'DIFFERENT')" "$cli" "$cli_rc")
  check "crossbench-validate vs check_files on the exported profile" "$same (exit $cli_rc): $cli"
fi
mkdir -p "$OUT/run"
[ -d "$W/run" ] && tar -C "$W/run" --exclude='full.json' --exclude='trace_only.json' --exclude='raw_session.json' -cf - . | tar -C "$OUT/run" -xf -
check "files" "$(find "$OUT" -type f | wc -l) in $OUT"
