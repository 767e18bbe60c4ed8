#!/usr/bin/env bash
# The session's closing H200 evidence in one device call (build once, the gpu label once):
#   bash tools/lab/h200_final.sh
# = h200_core.sh core (build, ctest -L gpu, bench --size 64,4096 --warmup, the sweep),
#   h200_core.sh user with XB_SKIP_CMDS=1 (the installed-package saxpy, hot and cold),
#   h200_graph.sh with XB_SKIP_GPU_TESTS=1 (eager vs --graph, counts, a small graph session),
#   scripts/check_torch_profile.py (the Python one-call check on a real torch.profiler run).
# Everything lands in $OUT/final.tar.gz, with $OUT/checks.txt on top.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
top=${OUT:-/tmp/xb-out}
mkdir -p "$top"
for part in core user graph; do
  export OUT=$top/$part
  mkdir -p "$OUT"
  case $part in
    core) bash tools/lab/h200_core.sh core ;;
    user) XB_SKIP_CMDS=1 bash tools/lab/h200_core.sh user ;;
    graph) XB_SKIP_GPU_TESTS=1 bash tools/lab/h200_graph.sh ;;
  esac > "$OUT/console.log" 2>&1
  cat "$OUT/checks.txt" >> "$top/checks.txt" 2>/dev/null
done
export OUT=$top/torch
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
XB_VALIDATE=build-h200/validate timeout 180 python3 scripts/check_torch_profile.py /tmp/xb-torch-check > "$OUT/check_torch_profile.log" 2>&1
printf '%-60s %s\n' "scripts/check_torch_profile.py (torch.profiler on the H200)" "exit $?" >> "$top/checks.txt"
cp -r /tmp/xb-torch-check "$OUT/" 2>/dev/null
cat "$OUT/check_torch_profile.log" | tail -8 >> "$top/checks.txt"
tar czf "$top/final.tar.gz" -C "$top" core user graph torch
rm -rf "$top/core" "$top/user" "$top/graph" "$top/torch"
cat "$top/checks.txt"
