#!/usr/bin/env python3
"""Reads the `DBG core entry first-store last-store` lines that sim_records.patch makes
`metalsim run` print, and prints what analyse.py prints for the H100's records.

    python3 validation/h100/probe18/sim_stats.py FILE
"""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from analyse import report  # noqa: E402

per_core = defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("DBG "):
        _, c, t0, t1, t2 = line.split()
        if int(t1):
            per_core[int(c)].append((int(t0), int(t1), int(t2)))
report(sys.argv[1], per_core, unit="core", groups="SIMD-groups")
