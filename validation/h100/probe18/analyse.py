#!/usr/bin/env python3
"""Reads probe 18's warp records (`<kernel>.probe.bin.gz`: per warp the SM clock at
entry, after its first store and after its last, and its SM) and prints, per kernel:
the kernel's span on the SMs, the warps resident at once on an SM (mean over the span),
of them those before their first store and those between their first and last store,
and the median and 10th/90th percentiles of the two waits, in SM cycles; then how the
warps' first stores follow their entries: for pairs of warps of one SM that entered more
than 200 cycles apart, the share whose first stores came in the same order, apart for
pairs of one scheduler (warp index mod 4) and of two; and the median spread of the
first stores of the four warps of one block.

    python3 validation/h100/probe18/analyse.py validation/h100/probe18 [KERNEL ...]
"""
import gzip
import os
import random
import struct
import sys
from collections import defaultdict


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def report(label, per_unit, unit="SM", groups="warps"):
    """Prints the figures for `per_unit`: per SM (or core), a list of (entry, first
    store, last store) clocks of its warps (or SIMD-groups)."""
    span = resident = before = between = 0
    for ws in per_unit.values():
        span += max(w[2] for w in ws) - min(w[0] for w in ws)
        resident += sum(w[2] - w[0] for w in ws)
        before += sum(w[1] - w[0] for w in ws)
        between += sum(w[2] - w[1] for w in ws)
    n = len(per_unit)
    waits = [w[1] - w[0] for ws in per_unit.values() for w in ws]
    stores = [w[2] - w[1] for ws in per_unit.values() for w in ws]
    print(f"{label}: {len(waits)} {groups} on {n} {unit}s, {span / n:.0f} cycles per {unit} "
          f"from its first entry to its last store")
    print(f"  at once per {unit} (mean over that span): {resident / span:.1f} from entry to "
          f"last store, {before / span:.1f} before the first store, {between / span:.1f} "
          f"between the first and the last")
    for name, xs in (("entry to first store", waits), ("first to last store", stores)):
        print(f"  {name}: median {pct(xs, 0.5)}, 10th {pct(xs, 0.1)}, 90th {pct(xs, 0.9)} cycles")


def order(label, per_unit, seed=1, pairs=3000):
    """Prints how first stores follow entries for `per_unit`: per SM (or core), a list
    of (entry, first store, scheduler, block) of its warps."""
    rng = random.Random(seed)
    agree = {True: [0, 0], False: [0, 0]}
    spreads = []
    for ws in per_unit.values():
        for _ in range(pairs):
            a, b = rng.sample(ws, 2)
            if abs(a[0] - b[0]) <= 200:
                continue
            k = agree[a[2] == b[2]]
            k[0] += (a[0] < b[0]) == (a[1] < b[1])
            k[1] += 1
        blocks = defaultdict(list)
        for w in ws:
            blocks[w[3]].append(w[1])
        spreads += [max(f) - min(f) for f in blocks.values() if len(f) == 4]
    same, other = agree[True], agree[False]
    print(f"  first stores in the order of entry: {same[0] / same[1]:.3f} of pairs of one "
          f"scheduler, {other[0] / other[1]:.3f} of two; spread of a block's first stores: "
          f"median {pct(spreads, 0.5)} cycles")


def records(path):
    """The complete records of a `.probe.bin.gz` file: (warp index, entry, second clock,
    last store, SM) for every warp that wrote all three clocks."""
    raw = gzip.open(path).read()
    for i in range(len(raw) // 32):
        t0, t1, t2, sm = struct.unpack_from("<4Q", raw, 32 * i)
        if t0 and t1 and t2:
            yield i, t0, t1, t2, sm


def main():
    folder = sys.argv[1]
    for k in sys.argv[2:] or ["float_ops", "int_ops"]:
        per_sm = defaultdict(list)
        firsts = defaultdict(list)
        for i, t0, t1, t2, sm in records(os.path.join(folder, f"{k}.probe.bin.gz")):
            per_sm[sm].append((t0, t1, t2))
            # The cross-check's blocks are of four warps (128 threads).
            firsts[sm].append((t0, t1, i % 4, i // 4))
        report(k, per_sm)
        order(k, firsts)


if __name__ == "__main__":
    main()
