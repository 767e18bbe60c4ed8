#!/usr/bin/env bash
# Issue 36 item 6 on the H200 machine, through the device tool (from the repository root):
#   bash tools/lab/h200_user_patterns.sh
# The corpus of user code, examples/user_patterns, against its expected outcomes (expected.json,
# generated from patterns.json):
# 1. builds build-h200 (bench, validate and the Python module crossbench._core: the H200's python3
#    has nanobind and torch) through scripts/setup.sh;
# 2. runs tests/gpu/test_user_patterns.py --all: installs build-h200 into a prefix, builds
#    examples/user_patterns against it (find_package(crossbench)), runs every C++ pattern x mode
#    (hot, cold, graph) of both programs, each its own `--op` run with `--size 64,4096 --min-time
#    0.1 --max-time 0.5` (no --warmup), the mixed runs (a fault between two ordinary fixtures; a
#    refusal between two), and every Python pattern x mode (hot, cold) through crossbench.bench at
#    64 and 4096 (fault and hang each in a process of their own, XB_WAIT_DEADLINE_S=5), and compares
#    each outcome with expected.json. It starts no case after the time budget (7 minutes in all,
#    the build included): those are NOT RUN and the check line says so.
# $OUT: checks.txt, machine.txt, user_patterns.md and user_patterns.json (pattern, mode, language,
# expected, got, exit code, the refusal or verdict line, PASS or MISMATCH), corpus.txt (the test's
# output), user-patterns.tgz (every run's stdout/stderr, the run folders without their traces, the
# example's build log). About 5 minutes.
# XB_UP_ARGS: more arguments for test_user_patterns.py, e.g. "--patterns side_joined,py_side_joined"
# or "--language cpp" (default: none, every case).
source "$(dirname "${BASH_SOURCE[0]}")/h200_common.sh" || exit 1
h200_workdir /tmp/xb-user-patterns
: > "$OUT/checks.txt"
h200_machine "$OUT/machine.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" >> "$OUT/machine.txt" 2>&1
python3 -c "import triton; print('triton', triton.__version__)" >> "$OUT/machine.txt" 2>&1

phase "build"
h200_build_with_python "$W/build.log"

phase "corpus"
budget=$(( 420 - ($(date +%s) - t0) ))
# shellcheck disable=SC2086  # XB_UP_ARGS: more arguments, space-separated
timeout $(( budget + 120 )) python3 -u tests/gpu/test_user_patterns.py --all --build-dir build-h200 \
  --python-dir build-h200/python --require-python --work "$W/work" --out "$OUT" --jobs 16 --hang-limit-s 5 \
  --budget-s "$budget" ${XB_UP_ARGS:-} > "$OUT/corpus.txt" 2>&1
rc=$?
check "test_user_patterns.py --all (budget $budget s)" "exit $rc: $(grep -m1 '^test_user_patterns: ' "$OUT/corpus.txt" | cut -c21-120)"
grep -E '^(MISMATCH|NOT RUN|FAIL)' "$OUT/corpus.txt" | head -40
tar czf "$OUT/user-patterns.tgz" --exclude='full.json' --exclude='trace_only.json' --exclude='raw_session.json' \
  -C "$W/work" runs logs build.log 2> /dev/null
phase "done"
echo
cat "$OUT/checks.txt"
