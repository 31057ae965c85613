#!/usr/bin/env python3
"""Reads probe 18's warp records (`<kernel>.probe.bin.gz`: per warp the SM clock at
entry, after its first store and after its last, and its SM) and prints, per kernel:
the kernel's span on the SMs, the warps resident at once on an SM (mean over the span),
of them those before their first store and those between their first and last store,
and the median and 10th/90th percentiles of the two waits, in SM cycles.

    python3 validation/h100/probe18/analyse.py validation/h100/probe18 [KERNEL ...]
"""
import gzip
import os
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


def main():
    folder = sys.argv[1]
    for k in sys.argv[2:] or ["float_ops", "int_ops"]:
        raw = gzip.open(os.path.join(folder, f"{k}.probe.bin.gz")).read()
        per_sm = defaultdict(list)
        for i in range(len(raw) // 32):
            t0, t1, t2, sm = struct.unpack_from("<4Q", raw, 32 * i)
            if t0 and t1 and t2:
                per_sm[sm].append((t0, t1, t2))
        report(k, per_sm)


if __name__ == "__main__":
    main()
