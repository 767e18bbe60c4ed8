#!/usr/bin/env python3
"""Whether two PTX files hold the same kernels: the same .entry names with the same bodies, in any
order, once the unnamed namespace's tag is taken out of every name.

nvcc names a kernel in an unnamed namespace (kernels/add_kernels.cuh's) after its translation
unit: `_ZN2xb38_GLOBAL__N__2206b8b9_6_add_cu_5eb70eec15add_lean_kernel...`, where 2206b8b9 hashes
the source file's path and 6_add_cu_5eb70eec names the file. So the same kernel compiled in
kernels/add.cu in two checkouts, or in add.cu and tools/lab/add_tuning/add_tuning.cu, differs
only there; this script replaces the tag (with its length prefix) by `ANON`. A branch label
names the function's place in the file ($L__BB<function>_<block>): where the kernels come in
another order (add_tuning.cu instantiates them in launch order, the old add.cu started with
add_resident_blocks' few), the labels are renumbered, so `<function>` is taken out too. Then the
entries are compared.

Usage: compare_add_ptx.py BEFORE.ptx AFTER.ptx. Prints the entry counts and each difference;
exit 0 when the entries and their bodies are identical, 1 otherwise, 2 on bad usage.
Used once for the move of the add kernel's tuning space out of kernels/ (tools/lab/README.md).
"""
import re
import sys

TAG = re.compile(r"\d+_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]{8}")
LABEL = re.compile(r"\$L__BB\d+_")


def entries(ptx):
    """{normalized entry name: normalized text from its parameters to its closing brace}."""
    ptx = LABEL.sub("$L__BB_", TAG.sub("ANON", ptx))
    out = {}
    for m in re.finditer(r"^\.(?:visible )?\.?entry\s+(\S+)\(", ptx, re.M):
        end = ptx.find("\n}", m.end())
        out[m.group(1)] = ptx[m.end():end if end >= 0 else len(ptx)]
    return out


def main(argv):
    if len(argv) != 3:
        print("usage: compare_add_ptx.py BEFORE.ptx AFTER.ptx", file=sys.stderr)
        return 2
    before, after = (entries(open(p).read()) for p in argv[1:])
    bad = [f"only in {argv[1]}: {n}" for n in sorted(set(before) - set(after))]
    bad += [f"only in {argv[2]}: {n}" for n in sorted(set(after) - set(before))]
    bad += [f"body differs: {n}" for n in sorted(set(before) & set(after)) if before[n] != after[n]]
    print(f"{len(before)} entries in {argv[1]}, {len(after)} in {argv[2]}; "
          f"{len(set(before) & set(after))} in both, {len(bad)} difference(s)")
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
