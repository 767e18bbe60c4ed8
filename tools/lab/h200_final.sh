#!/usr/bin/env bash
# The session's closing H200 evidence in one device call (build once, the gpu label once):
#   bash tools/lab/h200_final.sh
# = h200_core.sh core (build, ctest -L gpu, bench --size 64,4096 --warmup, the sweep),
#   h200_core.sh user with XB_SKIP_CMDS=1 (the installed-package saxpy, hot and cold),
#   h200_graph.sh with XB_SKIP_GPU_TESTS=1 (eager vs --graph, counts, a small graph session),
#   tools/lab/h200_python_package.sh (pip install of the package, then crossbench.bench and
#   crossbench.check_profile on a real torch.profiler run).
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
bash tools/lab/h200_python_package.sh "$OUT" > "$OUT/console.log" 2>&1
printf '%-60s %s\n' "tools/lab/h200_python_package.sh (pip install, bench, check_profile)" "exit $?" >> "$top/checks.txt"
cat "$OUT/checks.txt" >> "$top/checks.txt" 2>/dev/null
tar czf "$top/final.tar.gz" -C "$top" core user graph torch
rm -rf "$top/core" "$top/user" "$top/graph" "$top/torch"
cat "$top/checks.txt"
