#!/usr/bin/env python3
"""Probe 23's table: for each `_timed_reuse` launch of store_trace_probe.cu, the share of
Nsight Compute's warp-state samples at its load, its first store, its other stores
(mean and range), its clock reads (`CS2R ... SR_CLOCKLO`, each writing a register a
store before it reads: mean and range) and its exit (`drain`).

    python3 validation/h100/probe23/table.py validation/h100/probe23
"""
import csv
import os
import sys

folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
print("| launch | load | store 1 | other stores: mean (range) | clock reads: mean (range) | exit |")
print("|---|---:|---:|---|---|---:|")
for w in (8, 12, 16, 20, 24, 32):
    lines = open(os.path.join(folder, f"w{w}_timed_reuse-source.csv")).read().splitlines()
    start = next(j for j, l in enumerate(lines) if l.startswith('"Address'))
    rows = list(csv.DictReader(lines[start:]))
    total = sum(float(r["Warp Stall Sampling (All Samples)"] or 0) for r in rows)
    pct = lambda r: 100 * float(r["Warp Stall Sampling (All Samples)"] or 0) / total
    src = lambda r: r["Source"].strip()
    loads = [pct(r) for r in rows if src(r).startswith("LDG")]
    # The burst's stores are the 4-byte ones; the records' stores are STG.E.64.
    stores = [pct(r) for r in rows if src(r).startswith("STG.E ")]
    clocks = [pct(r) for r in rows if "SR_CLOCKLO" in src(r)]
    exits = [pct(r) for r in rows if src(r).startswith("BRA") and float(r["stall_drain"] or 0) > 0]
    rest = stores[1:]
    print(f"| `w{w}_timed_reuse` | {sum(loads):.1f} | {stores[0]:.1f} | "
          f"{sum(rest) / len(rest):.1f} ({min(rest):.1f}-{max(rest):.1f}) | "
          f"{sum(clocks) / len(clocks):.1f} ({min(clocks):.1f}-{max(clocks):.1f}) | {sum(exits):.1f} |")
