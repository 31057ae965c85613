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

def dbg_records(path):
    """The `DBG` lines of `path` of SIMD-groups that stored: (core, entry, first store,
    last store, scheduler) each."""
    for line in open(path):
        if line.startswith("DBG "):
            c, t0, t1, t2, s = (int(x) for x in line.split()[1:])
            if t1:
                yield c, t0, t1, t2, s


def main():
    per_core = defaultdict(list)
    firsts = defaultdict(list)
    for c, t0, t1, t2, s in dbg_records(sys.argv[1]):
        per_core[c].append((t0, t1, t2))
        firsts[c].append((t0, t1, s, t0))
    report(sys.argv[1], per_core, unit="core", groups="SIMD-groups")
    order(sys.argv[1], firsts)


if __name__ == "__main__":
    main()
