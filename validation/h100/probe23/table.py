#!/usr/bin/env python3
"""Probe 23's table: for each `_timed_reuse` launch of store_trace_probe.cu, the share of
Nsight Compute's warp-state samples at its load, its first store, its other stores
(mean and range), its clock reads (`CS2R ... SR_CLOCKLO`, each writing a register a
store before it reads: mean and range) and its exit (`drain`).

    python3 validation/h100/probe23/table.py validation/h100/probe23
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe20"))
from stores import source  # noqa: E402

folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
print("| launch | load | store 1 | other stores: mean (range) | clock reads: mean (range) | exit |")
print("|---|---:|---:|---|---|---:|")
for w in (8, 12, 16, 20, 24, 32):
    rows = list(source(os.path.join(folder, f"w{w}_timed_reuse-source.csv")))
    total = sum(n for _, n, _ in rows)
    share = lambda keep: [100 * n / total for src, n, row in rows if keep(src, row)]
    loads = share(lambda src, _: src.startswith("LDG"))
    # The burst's stores are the 4-byte ones; the records' stores are STG.E.64.
    stores = share(lambda src, _: src.startswith("STG.E "))
    clocks = share(lambda src, _: "SR_CLOCKLO" in src)
    exits = share(lambda src, row: src.startswith("BRA") and int(row["stall_drain"]) > 0)
    rest = stores[1:]
    print(f"| `w{w}_timed_reuse` | {sum(loads):.1f} | {stores[0]:.1f} | "
          f"{sum(rest) / len(rest):.1f} ({min(rest):.1f}-{max(rest):.1f}) | "
          f"{sum(clocks) / len(clocks):.1f} ({min(clocks):.1f}-{max(clocks):.1f}) | {sum(exits):.1f} |")
