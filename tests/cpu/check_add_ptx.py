#!/usr/bin/env python3
"""The add kernel's cache policies in its PTX: each policy's 16-byte loads and stores are the ones
kernels/add.h documents for it (issue 19; no GPU needed, only nvcc).

Compiles kernels/add.cu to PTX for sm_90 (the H200's architecture, CMAKE_CUDA_ARCHITECTURES'
default) and checks, for every kernel instantiation that carries an xb::AddCachePolicy (the
mangled name's `AddCachePolicyE<n>E`), that its vector loads (`ld.global*.v4*`) and vector stores
(`st.global*.v4*`) are exactly the policy's. Why a test: "plain" once compiled to the read-only
ld.global.nc through a const __restrict__ pointer, so the tuning space's plain entries measured
the default policy's loads under another name; a compiler change could do that again.

What is instantiated follows the source: kernels/add.cu (bench's add) carries bench's size
classes only (add.cu, "What this file carries"), so only the default policy and no
add_vectorized_kernel with V other than 1 may be there; with --lab (a -DXB_LAB=ON build) the
lab's tools/lab/add_tuning/add_tuning.cu is compiled too, and every policy of the tuning space
and V 1, 2 and 4 must be there.

Usage: check_add_ptx.py NVCC SOURCE_DIR [--lab]
Exit 0 when every instantiation matches, 1 (listing each mismatch) otherwise, 2 on bad use or when
nvcc fails.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

# AddCachePolicy's values (kernels/add.h, in declaration order) -> (vector loads, vector stores),
# each instruction without its element type (.u32, .f32: the compiler's choice).
EXPECTED = {
    0: ("default", {"ld.global.nc.v4"}, {"st.global.v4"}),
    1: ("streaming", {"ld.global.cs.v4"}, {"st.global.cs.v4"}),
    2: ("prefetch256", {"ld.global.nc.L2::256B.v4"}, {"st.global.v4"}),
    3: ("prefetch256-streaming", {"ld.global.nc.L1::no_allocate.L2::256B.v4"}, {"st.global.cs.v4"}),
    4: ("plain", {"ld.global.v4"}, {"st.global.v4"}),
}


def entries(ptx):
    """(mangled name, body) of each .entry in `ptx`."""
    for m in re.finditer(r"\.entry\s+(\S+)\(", ptx):
        end = ptx.find("\n}", m.end())
        yield m.group(1), ptx[m.end():end if end >= 0 else len(ptx)]


def check(ptx):
    """Mismatch lines, and per policy name the number of instantiations checked."""
    bad, seen = [], collections.Counter()
    for name, body in entries(ptx):
        m = re.search(r"AddCachePolicyE(\d)E", name)
        if not m:
            continue
        policy = int(m.group(1))
        if policy not in EXPECTED:
            bad.append(f"{name}: policy value {policy} is not one of kernels/add.h's")
            continue
        label, want_ld, want_st = EXPECTED[policy]
        seen[label] += 1
        got_ld = set(re.findall(r"\bld\.global[\w.:]*?\.v4(?=\.)", body))
        got_st = set(re.findall(r"\bst\.global[\w.:]*?\.v4(?=\.)", body))
        if got_ld != want_ld or got_st != want_st:
            bad.append(f"{label} {name}: loads {sorted(got_ld)} stores {sorted(got_st)}, "
                       f"expected {sorted(want_ld)} and {sorted(want_st)}")
    return bad, seen


def vector_widths(ptx):
    """V of every add_vectorized_kernel<T, V, P> instantiation (its mangled name's `Li<V>E`)."""
    return {int(m.group(1)) for name, _ in entries(ptx)
            for m in [re.search(r"add_vectorized_kernelI\w+?Li(\d)E", name)] if m}


def check_source(nvcc, root, source, lab):
    """Mismatch lines and a summary for one .cu file; None when nvcc fails (reported)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "add.ptx")
        cmd = [nvcc, "-std=c++17", "-O3", "-arch=sm_90", "-ptx", "-I", root, os.path.join(root, source), "-o", out]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"check_add_ptx.py: nvcc failed on {source} ({p.returncode}): {(p.stderr or p.stdout).strip()[:400]}",
                  file=sys.stderr)
            return None
        with open(out) as f:
            ptx = f.read()
    bad, seen = check(ptx)
    widths = vector_widths(ptx)
    if lab and set(seen) != {label for label, _, _ in EXPECTED.values()}:
        bad.append(f"{source}: instantiations found per policy: {dict(seen)}; expected every policy of kernels/add.h")
    if lab and widths != {1, 2, 4}:
        bad.append(f"{source}: add_vectorized_kernel found with V {sorted(widths)}; expected 1, 2 and 4")
    if not lab and set(seen) != {"default"}:
        bad.append(f"{source}: instantiations found per policy: {dict(seen)}; expected the default policy alone "
                   "(bench's size classes; the others are the lab's, tools/lab/add_tuning)")
    if not lab and widths != {1}:
        bad.append(f"{source}: add_vectorized_kernel found with V {sorted(widths)}; expected V = 1 alone "
                   "(bench's fallback)")
    summary = (f"{source} ({'the tuning space' if lab else 'bench size classes only'}): "
               + ", ".join(f"{k} {v}" for k, v in sorted(seen.items())) + f"; add_vectorized_kernel V {sorted(widths)}")
    return bad, summary


def main(argv):
    lab = "--lab" in argv[3:]
    if len(argv) not in (3, 4) or (len(argv) == 4 and not lab):
        print("usage: check_add_ptx.py NVCC SOURCE_DIR [--lab]", file=sys.stderr)
        return 2
    nvcc, root = argv[1], argv[2]
    sources = [("kernels/add.cu", False)] + ([("tools/lab/add_tuning/add_tuning.cu", True)] if lab else [])
    bad, summaries = [], []
    for source, space in sources:
        result = check_source(nvcc, root, source, space)
        if result is None:
            return 2
        bad += result[0]
        summaries.append(result[1])
    for line in bad:
        print(line)
    if bad:
        print(f"{len(bad)} mismatch(es)")
        return 1
    print("check_add_ptx: every policy's vector loads and stores as kernels/add.h says: " + "; ".join(summaries))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
