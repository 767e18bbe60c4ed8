#!/usr/bin/env bash
# Re-records the replay a newcomer runs first (results/sessions/h200-small: README, "No GPU?") on the
# H200 with the README's command and the current stopping and pairing rules. Runs a bench built on the
# development machine (CUDA 13.0 toolkit, no GPU) and carried in .xbdev/ (git-excluded): .xbdev/bench
# and the shared libraries the device's system lacks in the same ABI (.xbdev/lib: Debian's
# libbenchmark and libfmt), so the call needs no build on the device (its device time was short).
#   tools/lab/h200_demo.sh        ($OUT: machine.txt, h200-small/ run folder, h200-small.log, checks.txt)
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
export LD_LIBRARY_PATH=$PWD/.xbdev/lib:$LD_LIBRARY_PATH
h200_machine "$OUT/machine.txt"
phase "bench (carried) --size 64,256 ... (the h200-small command)"
.xbdev/bench --size 64,256 --wait-steps 1 --warmup-steps 1 --active-steps 3 --min-time 0.05 --max-time 0.5 \
  --batch 8 --out "$OUT/h200-small" > "$OUT/h200-small.log" 2>&1
rc=$?
check "h200-small re-recorded (exit 0, validated)" "exit $rc"
grep -E "^(PASSED|FAILED|PYTORCH)" "$OUT/h200-small.log" | tee -a "$OUT/checks.txt"
phase done
