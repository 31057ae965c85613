#!/usr/bin/env python3
"""Reads probe 19's records (`<kernel>_<K>.probe.bin.gz`: per warp the SM clock at entry,
after store K in source order and after its last store, and its SM; one program per K)
and prints, per kernel and K: the median cycles from a warp's entry to store K and from
store K to its last store, and the warps of an SM (mean over the kernel's span on it)
that have not yet passed store K and that are between store K and their last.

    python3 validation/h100/probe19/analyse.py validation/h100/probe19 [KERNEL ...]

With --sim FILE KERNEL it reads instead the `DBGS core entry store1 store2 ...` lines
that probe 18's sim_records.patch makes `metalsim run` print (every store of every
SIMD-group, in the order they issued), and prints the same table for the simulation.
"""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe18"))
from analyse import pct, records  # noqa: E402


def row(k, per_unit):
    """One line for store `k`: `per_unit` maps an SM (or core) to (entry, store k, last
    store) clocks of its warps."""
    span = before = after = 0
    for ws in per_unit.values():
        span += max(w[2] for w in ws) - min(w[0] for w in ws)
        before += sum(w[1] - w[0] for w in ws)
        after += sum(w[2] - w[1] for w in ws)
    ws = [w for ws in per_unit.values() for w in ws]
    return (f"{k:>3} {pct([w[1] - w[0] for w in ws], 0.5):>8} "
            f"{pct([w[2] - w[1] for w in ws], 0.5):>8} {before / span:>7.1f} {after / span:>7.1f}")


HEADER = "  K  entry→K   K→last  before K  K→last (warps of an SM at once)"


def h100(folder, kernel):
    print(f"{kernel} (H100)\n{HEADER}")
    k = 1
    while os.path.exists(path := os.path.join(folder, f"{kernel}_{k}.probe.bin.gz")):
        per_sm = defaultdict(list)
        for _, t0, t1, t2, sm in records(path):
            per_sm[sm].append((t0, t1, t2))
        print(row(k, per_sm))
        k += 1


def sim(path, kernel):
    warps = defaultdict(list)
    for line in open(path):
        if line.startswith("DBGS "):
            c, t0, *stores = (int(x) for x in line.split()[1:])
            if stores:
                warps[c].append((t0, stores))
    n = min(len(s) for ws in warps.values() for _, s in ws)
    print(f"{kernel} (simulated)\n{HEADER}")
    for k in range(1, n):
        print(row(k, {c: [(t0, s[k - 1], s[-1]) for t0, s in ws] for c, ws in warps.items()}))


def main():
    if sys.argv[1] == "--sim":
        sim(sys.argv[2], sys.argv[3])
        return
    for kernel in sys.argv[2:] or ["float_ops", "int_ops"]:
        h100(sys.argv[1], kernel)


if __name__ == "__main__":
    main()
