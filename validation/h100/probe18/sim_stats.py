#!/usr/bin/env python3
"""Reads the `DBG core entry first-store last-store` lines that sim_records.patch makes
`metalsim run` print, and prints what analyse.py prints for the H100's records: the
SIMD-groups resident at once per core (mean over the span from a core's first to its last
store), before their first store and between their first and last, and the two waits.

    python3 validation/h100/probe18/sim_stats.py FILE
"""
import sys
from collections import defaultdict


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


per_core = defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("DBG "):
        _, c, t0, t1, t2 = line.split()
        if int(t1):
            per_core[int(c)].append((int(t0), int(t1), int(t2)))
span = resident = before = between = 0
for ws in per_core.values():
    span += max(w[2] for w in ws) - min(w[0] for w in ws)
    resident += sum(w[2] - w[0] for w in ws)
    before += sum(w[1] - w[0] for w in ws)
    between += sum(w[2] - w[1] for w in ws)
n = len(per_core)
waits = [w[1] - w[0] for ws in per_core.values() for w in ws]
stores = [w[2] - w[1] for ws in per_core.values() for w in ws]
print(f"{sum(map(len, per_core.values()))} SIMD-groups on {n} cores, {span / n:.0f} cycles "
      f"from a core's first SIMD-group to its last store")
print(f"  at once per core (mean over that span): {resident / span:.1f} from entry to last "
      f"store, {before / span:.1f} before the first store, {between / span:.1f} between the "
      f"first and the last")
for name, xs in (("entry to first store", waits), ("first to last store", stores)):
    print(f"  {name}: median {pct(xs, 0.5)}, 10th {pct(xs, 0.1)}, 90th {pct(xs, 0.9)} cycles")
