#!/usr/bin/env python3
"""How far the median of a T-second stretch of a long run lands from the whole run's median, and
whether the median's 95% interval computed on that stretch covers the whole run's median.

    python3 tools/lab/drift_windows.py EVENTS_JSON[.gz]

EVENTS_JSON: a run folder's events.json of long fixtures (tools/lab/h200_drift.sh). For each
fixture and each stretch length T (0.5 to 5 s, consecutive stretches, samples taken as evenly
spaced over timing.sampling_s), prints the stretches' |median / whole median - 1| (median, 95th
percentile, max) and, per way of batching, how many stretch intervals cover the whole run's median
and their median half-width. The interval mirrors common/stats.cpp median_interval (distribution-
free ranks of the median widened by batch means of the indicator [x < median], Student t); the
batchings: "20 batches" (the rule before 2026-12-04: 20 batches of equal count however short) and
"batches >= S s" (batches at least S seconds long, at most 20, at least 2). A nominal 95% interval
covers the whole run's median in about 95% of stretches (the whole run's median is itself known
only to its own interval, and neighbouring stretches are not independent: a guide, not a test).
Standard library only (no numpy on the development machine).
"""
import gzip
import json
import math
import statistics
import sys
from statistics import NormalDist

# Student t 0.975 quantiles, 1 to 19 degrees of freedom (any table of the t distribution).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093]


def interval(s, k):
    """(median, low, high) at 95% with k batches (k < 2: ranks alone)."""
    n = len(s)
    srt = sorted(s)
    med = statistics.median(srt)
    h = NormalDist().inv_cdf(0.975) * math.sqrt(n) / 2
    if k >= 2:
        means = []
        for j in range(k):
            b = s[j * n // k:(j + 1) * n // k]
            means.append(sum(1.0 if x < med else 0.5 if x == med else 0.0 for x in b) / len(b))
        h = max(h, T975[k - 2] * n * statistics.stdev(means) / math.sqrt(k))
    lo_rank = math.floor(n / 2 + 0.5 - h)
    hi_rank = n + 1 - lo_rank
    if lo_rank >= 1 and hi_rank <= n:
        return med, srt[lo_rank - 1], srt[hi_rank - 1]
    return med, srt[0], srt[-1]


def main():
    path = sys.argv[1]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    batchings = [("20 batches", lambda t: 20)] + [
        ("batches >= %.2g s" % b, lambda t, b=b: max(2, min(20, int(t / b)))) for b in (0.25, 0.5, 1.0)]
    for fx in doc["fixtures"]:
        s = fx["timing"]["samples_ns"]
        span = fx["timing"]["sampling_s"]
        whole = statistics.median(s)
        per_s = len(s) / span
        print("%s: %d samples over %.1f s, median %.1f ns, RSD %.2f%%" % (
            fx["name"], len(s), span, whole, 100 * statistics.pstdev(s) / statistics.fmean(s)))
        for t in (0.5, 1, 2, 3, 5):
            m = int(t * per_s)
            k = len(s) // m if m else 0
            if k < 2:
                continue
            stretches = [s[j * m:(j + 1) * m] for j in range(k)]
            err = sorted(abs(statistics.median(x) / whole - 1) for x in stretches)
            print("  T = %.1f s (%d stretches): |median error| median %.2f%%, p95 %.2f%%, max %.2f%%" % (
                t, k, 100 * statistics.median(err), 100 * err[int(0.95 * (k - 1))], 100 * err[-1]))
            for name, batches in batchings:
                cover, hw = 0, []
                for x in stretches:
                    med, lo, hi = interval(x, batches(t))
                    cover += lo <= whole <= hi
                    hw.append(max(hi - med, med - lo) / med)
                print("    %-17s covers %3d of %3d (%3.0f%%), half-width median %.2f%%" % (
                    name, cover, k, 100 * cover / k, 100 * statistics.median(hw)))


if __name__ == "__main__":
    main()
