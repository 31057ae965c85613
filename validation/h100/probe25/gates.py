#!/usr/bin/env python3
"""Reads probe 25's warp records (`<launch>.gate.bin.gz`, gate_probe.cu: per warp the
SM clock at entry, after its load issued, after its first store and after its last,
the global timer at entry and after the last store, and its SM) and prints per launch:
- the SM clock's rate, from each warp's clock and global-timer spans;
- the warps of an SM at once (mean over the middle 60% of the SM's busy time) before
  their first store and between their first and last store, and the median times
  from entry to load issue, load issue to first store, first to last store;
- for the load issues, the first stores and the last stores, the period (3,000-40,000
  SM cycles) at which their times on each SM line up best, and how well they line up
  at it and at 16,384 cycles (the mean resultant length over the SMs: 1 when every
  event of an SM falls at the same phase, about 0 when they are spread), events of the
  SM's first 60,000 cycles left out (its first threadgroups all enter at once);
- for the first stores, how well the phases of different SMs agree in global time
  (the resultant length of the SMs' mean phases at the best period): near 1 if one
  clock for the whole GPU opens the gate, lower if each SM has its own.

    python3 validation/h100/probe25/gates.py validation/h100/probe25 [LAUNCH ...]

With --records, it reads probe 18's records instead (`<kernel>.probe.bin.gz`: the clock at
entry, after the first store and after the last, and the SM; probes 18, 22 and 24) and
prints how well each launch's first and last stores line up at 16,384 cycles:

    python3 validation/h100/probe25/gates.py --records validation/h100/probe24 w24_d24 ...

With --sim, it reads the `DBG` lines that probe 18's diagnostic patch makes `metalsim run`
print (per SIMD-group: core, entry, first store, last store) and prints the same for
the simulation, by core:

    python3 validation/h100/probe25/gates.py --sim FILE ...
"""
import gzip
import math
import os
import statistics
import struct
import sys
from collections import defaultdict

LAUNCHES = ["w24_n512k", "w12_n1m", "w12_n512k", "w24_n256k"]
SKIP = 60000


def records(path):
    """Per SM, the records (t0, tl, t1, t2, g0, g2) of the warps that wrote them."""
    raw = gzip.open(path).read()
    per = defaultdict(list)
    for k in range(len(raw) // 64):
        t0, tl, t1, t2, g0, g2, sm, _ = struct.unpack_from("<8Q", raw, 64 * k)
        if t0 and t1 and t2:
            per[sm].append((t0, tl, t1, t2, g0, g2))
    return per


def resultant(xs, period):
    sx = sum(math.cos(2 * math.pi * x / period) for x in xs)
    sy = sum(math.sin(2 * math.pi * x / period) for x in xs)
    return math.hypot(sx, sy) / len(xs), math.atan2(sy, sx)


def lineup(per, idx, period):
    rs = []
    for ws in per.values():
        base = min(w[0] for w in ws)
        xs = [w[idx] - base for w in ws if w[idx] - base > SKIP]
        if len(xs) >= 5:
            rs.append(resultant(xs, period)[0])
    return statistics.mean(rs) if rs else 0.0


def best_period(per, idx):
    return max(((lineup(per, idx, p), p) for p in range(3000, 40001, 100)), default=(0, 0))


def steady(per):
    mids, befs = [], []
    for ws in per.values():
        lo = min(w[0] for w in ws)
        hi = max(w[3] for w in ws)
        a, b = lo + 0.2 * (hi - lo), lo + 0.8 * (hi - lo)
        mids.append(sum(max(0, min(b, w[3]) - max(a, w[2])) for w in ws) / (b - a))
        befs.append(sum(max(0, min(b, w[2]) - max(a, w[0])) for w in ws) / (b - a))
    return statistics.mean(mids), statistics.mean(befs)


def global_phases(per, period, ghz):
    """The SMs' mean phases of their first stores in global time (the global timer at
    entry plus the SM cycles since, at the SM clock's rate)."""
    phases = []
    for ws in per.values():
        base = min(w[0] for w in ws)
        xs = [w[4] * ghz + (w[2] - w[0]) for w in ws if w[2] - base > SKIP]
        if len(xs) >= 5:
            phases.append(resultant(xs, period)[1])
    sx = sum(math.cos(p) for p in phases)
    sy = sum(math.sin(p) for p in phases)
    return math.hypot(sx, sy) / len(phases)


def probe18_lineups(folder, names):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe18"))
    from analyse import records as probe18_records

    for name in names:
        per = defaultdict(list)
        for _, t0, t1, t2, sm in probe18_records(os.path.join(folder, f"{name}.probe.bin.gz")):
            # In this module's record order: entry, (no load clock), first, last.
            per[sm].append((t0, t0, t1, t2))
        print(f"{name}: first stores lined up at 16,384: {lineup(per, 2, 16384):.2f}, "
              f"last stores {lineup(per, 3, 16384):.2f}")


def sim_lineups(paths):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe18"))
    from sim_stats import dbg_records

    for path in paths:
        per = defaultdict(list)
        for c, t0, t1, t2, _ in dbg_records(path):
            per[c].append((t0, t0, t1, t2))
        print(f"{path}: first stores lined up at 16,384: {lineup(per, 2, 16384):.2f}, "
              f"last stores {lineup(per, 3, 16384):.2f}")


def main():
    if sys.argv[1] == "--records":
        probe18_lineups(sys.argv[2], sys.argv[3:])
        return
    if sys.argv[1] == "--sim":
        sim_lineups(sys.argv[2:])
        return
    folder = sys.argv[1]
    for name in sys.argv[2:] or LAUNCHES:
        per = records(os.path.join(folder, f"{name}.gate.bin.gz"))
        ws = [w for v in per.values() for w in v]
        ghz = statistics.median((w[3] - w[0]) / (w[5] - w[4]) for w in ws if w[5] > w[4] + 2000)
        mid, bef = steady(per)
        med = lambda f: statistics.median(f(w) for w in ws)  # noqa: E731
        print(f"{name}: {len(ws)} warps on {len(per)} SMs, SM clock {ghz:.3f} GHz")
        print(f"  at once per SM: {bef:.1f} before the first store, {mid:.1f} between first "
              f"and last; medians: entry to load issue {med(lambda w: w[1] - w[0]):.0f}, "
              f"load issue to first store {med(lambda w: w[2] - w[1]):.0f}, "
              f"first to last store {med(lambda w: w[3] - w[2]):.0f} cycles")
        for label, idx in (("load issues", 1), ("first stores", 2), ("last stores", 3)):
            r, p = best_period(per, idx)
            print(f"  {label}: best period {p} cycles ({p / ghz / 1000:.2f} us), lined up "
                  f"{r:.2f}; at 16,384: {lineup(per, idx, 16384):.2f}")
        r, p = best_period(per, 2)
        print(f"  first stores' phases of different SMs in global time at {p}: "
              f"{global_phases(per, p, ghz):.2f}")


if __name__ == "__main__":
    main()
