#!/usr/bin/env python3
"""Reads probe 13's and 14's warp records (copy_trace_probe.cu: OUTDIR/tgN.bin;
pattern_probe.cu: OUTDIR/PATTERN_tgN.bin; or gzipped as committed) and prints, per
threadgroup size, what a warp and a threadgroup spend their time on, on SMs 0-15.

    python3 validation/h100/probe13.py validation/h100/probe13

Times are SM cycles. Per launch: the load's latency (t1 to t2, the store that reads the
loaded value issuing at t2) and a warp's life (t0 to t2) as percentiles; per threadgroup, the spread of its warps' starts, its life (first
warp's t0 to last warp's t2) and how long its slot waits on its last warp after the
median one has stored; per SM, the warps alive and the loads in flight on average over
the SM's busy time, and the gap between a threadgroup's end and the start of the next
one on the same SM once every slot has been used.
"""
import gzip
import os
import re
import struct
import sys
from collections import defaultdict


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


def summary(values):
    return "mean %6.0f  p10 %6.0f  p50 %6.0f  p90 %6.0f  p99 %6.0f  max %6.0f" % (
        sum(values) / len(values), pct(values, 10), pct(values, 50), pct(values, 90),
        pct(values, 99), max(values))


def mean_alive(intervals, lo, hi):
    """Mean number of the intervals open over [lo, hi]."""
    return sum(max(0, min(b, hi) - max(a, lo)) for a, b in intervals) / max(1, hi - lo)


def rel(t, base):
    d = (t - base) & 0xFFFFFFFF
    return d - (1 << 32) if d >= 1 << 31 else d


def analyse(path, tg):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    per_sm = defaultdict(list)
    for off in range(0, len(data), 32):
        w, sm, slot, t0, t1, t2, _, _ = struct.unpack_from("<8I", data, off)
        per_sm[sm].append((w, slot, t0, t1, t2))
    warps_per_tg = tg // 32
    lat, life, skew, tg_life, tail, gaps = [], [], [], [], [], []
    alive, inflight, tgs_alive = [], [], []
    for sm, recs in sorted(per_sm.items()):
        base = recs[0][2]
        rows = [(w, slot, rel(t0, base), rel(t1, base), rel(t2, base))
                for w, slot, t0, t1, t2 in recs]
        lo = min(r[2] for r in rows)
        hi = max(r[4] for r in rows)
        lat += [r[4] - r[3] for r in rows]
        life += [r[4] - r[2] for r in rows]
        alive.append(mean_alive([(r[2], r[4]) for r in rows], lo, hi))
        inflight.append(mean_alive([(r[3], r[4]) for r in rows], lo, hi))
        groups = defaultdict(list)
        for r in rows:
            groups[r[0] // warps_per_tg].append(r)
        spans = []
        for g in groups.values():
            if len(g) != warps_per_tg:
                continue
            starts = [r[2] for r in g]
            ends = sorted(r[4] for r in g)
            skew.append(max(starts) - min(starts))
            tg_life.append(ends[-1] - min(starts))
            tail.append(ends[-1] - ends[len(ends) // 2])
            spans.append((min(starts), ends[-1]))
        tgs_alive.append(mean_alive(spans, lo, hi))
        # A threadgroup that starts once every slot has been used takes the slot of the
        # earliest-ended threadgroup not yet replaced.
        spans.sort()
        slots = max(1, 2048 // tg)
        ended = sorted(e for _, e in spans[:-slots]) if len(spans) > slots else []
        for (start, _), freed in zip(spans[slots:], ended):
            gaps.append(start - freed)
    print("tg %d: %d SMs, %d warps" % (tg, len(per_sm), len(lat)))
    print("  load latency      " + summary(lat))
    print("  warp life         " + summary(life))
    print("  tg start spread   " + summary(skew))
    print("  tg life           " + summary(tg_life))
    print("  tg tail (last warp after the median one) " + summary(tail))
    if gaps:
        print("  slot gap (end to next start) " + summary(gaps))
    print("  per SM, mean over SMs: warps alive %.1f, loads in flight %.1f, threadgroups alive %.2f"
          % (sum(alive) / len(alive), sum(inflight) / len(inflight), sum(tgs_alive) / len(tgs_alive)))


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "validation/h100/probe13"
    # tgN.bin (probe 13) or PATTERN_tgN.bin (probe 14's pattern_probe.cu), gzipped or not.
    files = []
    for name in os.listdir(folder):
        m = re.fullmatch(r"(?:(\w+)_)?tg(\d+)\.bin(?:\.gz)?", name)
        if m:
            files.append((m.group(1) or "", int(m.group(2)), name))
    for pattern, tg, name in sorted(files):
        if pattern:
            print(pattern, end=" ")
        analyse(os.path.join(folder, name), tg)


if __name__ == "__main__":
    main()
