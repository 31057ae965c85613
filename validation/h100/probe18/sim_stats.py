#!/usr/bin/env python3
"""Reads the `DBG core entry first-store last-store scheduler` lines that
sim_records.patch makes `metalsim run` print, and prints what analyse.py prints for the
H100's records (a threadgroup's SIMD-groups are told apart from others by their core and
entry).

    python3 validation/h100/probe18/sim_stats.py FILE
"""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from analyse import order, report  # noqa: E402

per_core = defaultdict(list)
firsts = defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("DBG "):
        c, t0, t1, t2, s = (int(x) for x in line.split()[1:])
        if t1:
            per_core[c].append((t0, t1, t2))
            firsts[c].append((t0, t1, s, t0))
report(sys.argv[1], per_core, unit="core", groups="SIMD-groups")
order(sys.argv[1], firsts)
