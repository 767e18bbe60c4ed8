"""The work-signature probe's cost to the main job (tools/lab/h200_signature_cost.sh): reads the
runs table (round, arm, exit code, wall ms, run folder) and prints a markdown report: each run, the
median wall time per arm and their ratio, and per run with the probe the probe's own time
(events.json fixtures[].work.probe_s, summed) as a fraction of its wall time."""
import json
import os
import statistics
import sys


def verdict(run_dir):
    try:
        with open(os.path.join(run_dir, "validation.json")) as f:
            return json.load(f).get("verdict", "?")[:90]
    except OSError:
        return "(no validation.json)"


def probe_s(run_dir):
    try:
        with open(os.path.join(run_dir, "events.json")) as f:
            fixtures = json.load(f)["fixtures"]
    except OSError:
        return None
    return sum(fx.get("work", {}).get("probe_s", 0.0) for fx in fixtures)


def main(path):
    rows = [line.rstrip("\n").split("\t") for line in open(path) if line.strip()]
    print("| round | arm | exit | wall s | probe s | probe / wall | verdict |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | --- |")
    walls = {"with": [], "without": []}
    fractions = []
    for rnd, arm, rc, wall, run_dir in rows:
        wall = float(wall) / 1e3
        walls[arm].append(wall)
        p = probe_s(run_dir) if arm == "with" else None
        frac = "" if p is None else f"{100 * p / wall:.2f}%"
        if p is not None:
            fractions.append(p / wall)
        print(f"| {rnd} | {arm} | {rc} | {wall:.2f} | {'' if p is None else f'{p:.3f}'} | {frac} | {verdict(run_dir)} |")
    print()
    if walls["with"] and walls["without"]:
        mw, mo = statistics.median(walls["with"]), statistics.median(walls["without"])
        print(f"median wall time: with the probe {mw:.2f} s, without {mo:.2f} s, ratio {mw / mo:.3f}")
    if fractions:
        print(f"the probe's own time: {100 * min(fractions):.2f}% to {100 * max(fractions):.2f}% of a run's wall time")


if __name__ == "__main__":
    main(sys.argv[1])
