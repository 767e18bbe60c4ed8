#!/usr/bin/env python3
"""One line on a bench run folder: how many event-vs-CUPTI results were claimed and how many
fixtures converged, from its validation.json and events.json.

    python3 tools/lab/run_claims.py RUN_DIR      ->  "8 of 8 claimed, 7 of 8 converged"

A folder without those files (a failed run) prints "no figures: <why>", never hides it. Used by
h200_trust.sh and h200_walltime.sh.
"""
import json
import sys


def main():
    run = sys.argv[1]
    try:
        with open(run + "/validation.json") as f:
            fig = json.load(f)["figures"]["event_vs_cupti"]
        with open(run + "/events.json") as f:
            ev = json.load(f)["fixtures"]
    except (OSError, ValueError, KeyError) as e:
        print("no figures: %s" % e)
        return
    claimed = sum(1 for x in fig if x.get("claimed"))
    conv = sum(1 for x in ev if x.get("timing", {}).get("stop") == "converged")
    print("%d of %d claimed, %d of %d converged" % (claimed, len(fig), conv, len(ev)))


if __name__ == "__main__":
    main()
