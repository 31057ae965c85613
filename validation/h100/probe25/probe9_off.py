#!/usr/bin/env python3
"""How far simulated DRAM reads are from probe 9's measured ones: reads the output of
`partial_probe_sim.py` (FILE, one line per launch) and the measured launches in
validation/h100/partial_probe.txt (those without a delay or a tail), pairs each
simulated launch with the measured one of the same size, stride and words and the
nearest thread count, and prints the launches paired and the MB off in all.

    python3 validation/h100/probe25/probe9_off.py validation/h100/probe25/probe9-sim.txt
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def measured():
    """MB read from HBM per launch (MiB, stride, words, threads), without delay or tail."""
    lines = open(os.path.join(HERE, "..", "partial_probe.txt")).read().splitlines()
    launches = [l for l in lines if re.match(r"^(never|complete|idle) mib=", l)]
    reads = {}
    for l in lines:
        m = re.match(r'^"(\d+)",.*"dram__bytes_read.sum","byte","([\d,]+)"', l)
        if m:
            reads[int(m.group(1))] = int(m.group(2).replace(",", "")) / 1e6
    out = {}
    for i, l in enumerate(launches):
        d = dict(kv.split("=") for kv in l.split()[1:])
        if l.startswith("idle") or d["delay"] != "0" or d["tail"] != "0":
            continue
        out[tuple(int(d[k]) for k in ("mib", "stride", "words", "threads"))] = reads[i]
    return out


def simulated(path):
    out = {}
    for l in open(path):
        m = re.match(r"(\d+) MiB stride (\d+) words (\d+) threads (\d+): read ([\d.]+) MB", l)
        if m:
            out[tuple(int(x) for x in m.groups()[:4])] = float(m.group(5))
    return out


def main():
    meas = measured()
    for path in sys.argv[1:]:
        off = n = 0
        for k, v in simulated(path).items():
            cands = [mk for mk in meas if mk[:3] == k[:3]]
            if cands:
                mk = min(cands, key=lambda c: abs(c[3] - k[3]))
                off += abs(v - meas[mk])
                n += 1
        print(f"{path}: {n} launches, {off:.1f} MB off in all, of {sum(meas.values()):.1f} MB measured")


if __name__ == "__main__":
    main()
