#!/usr/bin/env bash
# Formats crossbench's C++ and CUDA sources with clang-format and the repository's .clang-format.
#   tools/format.sh            rewrite the tracked sources in place
#   tools/format.sh --check    list the files that do not follow it; exit 1 if any (ctest format_check)
# clang-format's output differs between major versions; the check runs with the one CI has
# (Debian's clang-format 14) and skips (exit 77) where none is installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cf=${CLANG_FORMAT:-clang-format}
if ! command -v "$cf" >/dev/null 2>&1; then
  echo "SKIPPED: $cf not found (Debian/Ubuntu: apt-get install clang-format)"
  exit 77
fi
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | grep -v '^tests/fuzz/corpus/')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'format: %d of %d files do not follow .clang-format (%s): %s\n' "${#bad[@]}" "${#files[@]}" \
      "$("$cf" --version | head -1)" "${bad[*]:0:20}"
    echo "format: tools/format.sh rewrites them"
    exit 1
  fi
  echo "format: ${#files[@]} files follow .clang-format ($("$cf" --version | head -1))"
  exit 0
fi
"$cf" -i "${files[@]}"
echo "format: ${#files[@]} files formatted"
