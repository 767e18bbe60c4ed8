#!/usr/bin/env bash
# Issue 17 (CUDA graph mode) on the H200 machine, through the device tool:
#   bash tools/lab/h200_graph.sh
# Builds build-h200, runs the graph GPU tests and the whole gpu label, bench eager and --graph
# (matmul, add, addmm at 64 and 4096, --warmup) with validation, counts kernels / graph launches
# in the table and both traces, runs a user's saxpy (installed package) with --graph, and records
# a small graph session (add, 64) for the CPU replay test. $OUT: checks.txt, graph_counts.txt,
# logs and graph-results.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-graph
h200_machine "$OUT/machine.txt"
h200_build_or_exit "$OUT/build.log" 40
B=build-h200
if [ "${XB_SKIP_GPU_TESTS:-0}" != 1 ]; then  # tools/lab/h200_final.sh runs the gpu label once for all
  timeout 120 $B/tests/xb_gpu_tests --gtest_filter='*GraphMode*' > "$W/graph_gpu_tests.txt" 2>&1
  check "xb_gpu_tests *GraphMode*" "exit $?, $(grep -E 'PASSED|FAILED' "$W/graph_gpu_tests.txt" | head -2 | tr '\n' ' ')"
  timeout 300 ctest --test-dir $B -L gpu --output-on-failure > "$W/ctest_gpu.txt" 2>&1
  check "ctest -L gpu" "exit $?, $(grep -E 'tests passed' "$W/ctest_gpu.txt")"
fi
for m in graph eager; do
  f=; [ $m = graph ] && f=--graph
  timeout 120 $B/bench --op matmul,add,addmm --size 64,4096 --warmup $f --out "$W/$m" > "$W/$m.log" 2>&1
  rc=$?
  timeout 60 $B/validate "$W/$m" > "$W/validate_$m.txt" 2>&1
  check "bench --op matmul,add,addmm --size 64,4096 --warmup $f" "exit $rc, validate exit $?"
done
python3 - "$W" > "$OUT/graph_counts.txt" 2>&1 <<'EOF'
import json, sys
o = sys.argv[1]
for m in ("graph", "eager"):
    ev = json.load(open(f"{o}/{m}/events.json"))
    calls = sum(s["launches"] for f in ev["fixtures"] for s in f["steps"])
    steps = sum(len(f["steps"]) for f in ev["fixtures"])
    rows = json.load(open(f"{o}/{m}/table.json"))["rows"]
    n = lambda p: sum(r["calls"] for r in rows if p(r))
    print(m, "steps", steps, "calls", calls, "table kernels", n(lambda r: r["kind"] == "kernel"),
          "memcpys", n(lambda r: r["kind"] == "gpu_memcpy"), "cudaGraphLaunch", n(lambda r: r["name"] == "cudaGraphLaunch"),
          "cudaLaunchKernel", n(lambda r: r["name"] == "cudaLaunchKernel"))
    for t in ("full.json", "trace_only.json"):
        k = [e for e in json.load(open(f"{o}/{m}/{t}"))["traceEvents"] if e.get("cat") == "kernel"]
        print("  ", t, "kernels", len(k), "with graph node id", sum("graph node id" in e.get("args", {}) for e in k))
    for f in ev["fixtures"]:
        print("    ", f["name"], "graph", f["timing"].get("graph", False), "median_ns per call", round(f["stats"]["median_ns"], 1))
EOF
check "graph_counts.txt written" "exit $?"
prefix=$W/prefix
{ cmake --install $B --prefix "$prefix" && cmake -S examples/benchmark_my_kernel -B "$W/exb" -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release && cmake --build "$W/exb"; } > "$W/example_build.log" 2>&1
timeout 120 "$W/exb/saxpy" --size 4096,16777216 --graph --warmup --out "$W/saxpy-graph" > "$W/saxpy_graph.log" 2>&1
rc=$?
timeout 60 $B/validate "$W/saxpy-graph" > "$W/validate_saxpy_graph.txt" 2>&1
check "user saxpy --graph (installed package)" "exit $rc, validate exit $?"
timeout 60 $B/bench --op add --size 64 --graph --wait-steps 1 --warmup-steps 1 --active-steps 3 --min-time 0.05 \
  --max-time 0.5 --out "$W/session" > "$W/session.log" 2>&1
check "small graph session for the CPU replay test" "exit $?"
tar czf "$OUT/graph-results.tar.gz" --exclude='full.json' --exclude='trace_only.json' --exclude='graph/raw_session.json' \
  --exclude='eager/raw_session.json' --exclude='saxpy-graph/raw_session.json' -C "$W" graph eager saxpy-graph \
  session graph_gpu_tests.txt ctest_gpu.txt graph.log eager.log validate_graph.txt validate_eager.txt example_build.log \
  saxpy_graph.log validate_saxpy_graph.txt session.log 2>/dev/null
echo; cat "$OUT/checks.txt"; cat "$OUT/graph_counts.txt"
