"""Probe 26's table: per launch and build, ptxas's registers, the DRAM bytes of each
Nsight Compute pass, the time by CUDA events, whether the outputs match the default
build's, and how many of the SASS's stores have a register they read written again
before the program ends (`python3 table.py FOLDER [FOLDER...]`, a folder per device
call). Given probe 26b's folder (rewrite_probe.cu's launches) it prints that table
instead."""

import csv
import json
import os
import re
import sys

VARIANTS = ["base", "r24", "r16", "p1", "p0", "p0r16"]
KERNELS = ["float_ops", "int_ops", "fo_pure", "io_pure", "fo_sincos_first"]


def metric_rows(path):
    """The rows of an ncu CSV (`--csv --print-units base`): (launch ID, kernel name,
    metric name, value) for every metric with a number."""
    rows = [l for l in open(path) if l.startswith('"')]
    for r in csv.DictReader(rows):
        try:
            value = float(r["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        yield r["ID"], r["Kernel Name"], r["Metric Name"], value


def counters(path):
    """The metrics of an ncu CSV of one launch, by name."""
    return {name: value for _, _, name, value in metric_rows(path)}


def dram_mb(c):
    """MB read and written at DRAM, from a launch's metrics."""
    return (c["dram__bytes_read.sum"] + c["dram__bytes_write.sum"]) / 1e6


def sass_functions(path):
    """The instructions of a SASS listing, one list per function in file order, each as
    (its name where the listing has `Function :` lines, else None, its instructions'
    text without the address and the `;`)."""
    out = []
    for line in open(path):
        f = re.search(r"Function : (\S+)", line)
        m = re.search(r"/\*([0-9a-f]{4})\*/\s+(.*?);", line)
        if f:
            out.append((f.group(1), []))
        elif m:
            if m.group(1) == "0000" and (not out or out[-1][1]):
                out.append((None, []))
            out[-1][1].append(m.group(2).strip())
    return out


def kernel_of(path):
    """The instructions of the function of a SASS listing with the most stores (the
    program's kernel, not its helpers)."""
    return max((insts for _, insts in sass_functions(path)),
               key=lambda insts: sum(1 for i in insts if "STG" in i))


def regs_of(operand):
    """The registers an operand names: `R8.64` is R8 and R9, `R4` is R4."""
    m = re.match(r"\[?(?:desc\[UR\d+\])?\[?R(\d+)(\.64)?", operand.strip())
    if not m:
        return set()
    base = int(m.group(1))
    return {base, base + 1} if m.group(2) else {base}


def without_predicate(ins):
    """An instruction's text without its guard (`@P0 `, `@!UP1 `)."""
    return re.sub(r"^@!?U?P\d+\s+", "", ins)


def store_registers(body):
    """The registers a store (`STG.E desc[UR4][R8.64+0x4], R7`) reads: its address's,
    then its data's, as wide as the store."""
    ops = body.split(None, 1)[1].split(",")
    addr = ",".join(ops[:-1])
    m = re.search(r"\]\[(R\d+(?:\.64)?)", addr) or re.search(r"\[(R\d+(?:\.64)?)", addr)
    regs = regs_of(m.group(1)) if m else set()
    opcode = body.split()[0]
    width = 4 if ".128" in opcode else 2 if ".64" in opcode else 1
    d = re.match(r"\s*R(\d+)", ops[-1])
    if d:
        regs |= {int(d.group(1)) + j for j in range(width)}
    return regs


def written_registers(ins):
    """The registers an instruction writes (none for stores, branches, predicates)."""
    parts = without_predicate(ins).split(None, 1)
    skip = ("ST", "BRA", "BSYNC", "BSSY", "CALL", "RET", "R2UR")
    if len(parts) < 2 or parts[0].startswith(skip) or "SETP" in parts[0]:
        return set()
    dest = regs_of(parts[1].split(",")[0])
    if ".64" in parts[0] or parts[0].startswith(("IMAD.WIDE", "LDC.64")):
        dest = {r + j for r in dest for j in (0, 1)}
    return dest


def rewritten_stores(insts):
    """(stores, stores one of whose registers, address or data, is written again later in
    straight-line order) of a function's instructions: a rough static count of where a
    warp may wait for a store to read its registers (branches are read in address
    order)."""
    stores = rewritten = 0
    for k, ins in enumerate(insts):
        body = without_predicate(ins)
        if not body.startswith("STG"):
            continue
        stores += 1
        regs = store_registers(body)
        for later in insts[k + 1:]:
            if later == "EXIT":
                break
            if written_registers(later) & regs:
                rewritten += 1
                break
    return stores, rewritten


def pinned(folder):
    """Probe 26b (rewrite_probe.cu): each launch's registers, warps active, DRAM MB and
    duration, and the stores of its SASS with a register written again."""
    print("| ptxas | kernel | registers | warps active % | stores, rewritten | DRAM MB | µs |")
    print("|---|---|---:|---:|---|---:|---:|")
    for lvl in ("O0", "O3"):
        sass = dict(sass_functions(os.path.join(folder, f"rewrite_probe-{lvl}.sass.txt")))
        launches = {}
        for launch, kname, name, value in metric_rows(os.path.join(folder, f"ncu-{lvl}.csv")):
            launches.setdefault((int(launch), kname), {})[name] = value
        for (_, kname), c in sorted(launches.items()):
            fresh = "<1>" in kname
            mangled = f"_Z14fo_pure_pinnedILb{int(fresh)}EEvPKfPf"
            st = rewritten_stores(sass[mangled]) if mangled in sass else (0, 0)
            print(f"| -{lvl} | {'fresh' if fresh else 'rewrite'} | "
                  f"{int(c['launch__registers_per_thread'])} | "
                  f"{c['sm__warps_active.avg.pct_of_peak_sustained_active']:.1f} | "
                  f"{st[0]}, {st[1]} | {dram_mb(c):.1f} | "
                  f"{c['gpu__time_duration.sum'] / 1000:.2f} |")


def build(folders, kernel, variant):
    """One build of one launch over the device calls' folders: the DRAM MB of each
    Nsight Compute pass, ptxas's registers, the last call's CUDA-event median (µs), its
    outputs' checksums, and its SASS's (stores, stores with a register written again)."""
    drams, regs, t, sums = [], None, None, None
    for f in folders:
        for rep in (1, 2):
            p = os.path.join(f, "ncu", f"{kernel}.{variant}.{rep}.csv")
            c = counters(p) if os.path.exists(p) else {}
            if "dram__bytes_read.sum" in c:
                drams.append(dram_mb(c))
                regs = int(c["launch__registers_per_thread"])
        tp = os.path.join(f, "time", f"{kernel}.{variant}.json")
        if os.path.exists(tp):
            t = json.load(open(tp))["median_us"]
        mp = os.path.join(f, "time", f"{kernel}.{variant}.md5")
        if os.path.exists(mp):
            sums = sorted(l.split()[0] for l in open(mp))
    sass = [os.path.join(f, "sass", f"{kernel}.{variant}.sass.txt") for f in folders]
    sass = [p for p in sass if os.path.exists(p)]
    stores = rewritten_stores(kernel_of(sass[-1])) if sass else (0, 0)
    return drams, regs, t, sums, stores


def main():
    folders = sys.argv[1:]
    if len(folders) == 1 and os.path.exists(os.path.join(folders[0], "ncu-O0.csv")):
        pinned(folders[0])
        return
    print("| launch | build | registers | stores, rewritten | DRAM MB (passes) | time µs | outputs |")
    print("|---|---|---:|---|---|---:|---|")
    for k in KERNELS:
        ref = build(folders, k, "base")[3]
        for v in VARIANTS:
            drams, regs, t, sums, st = build(folders, k, v)
            if not drams:
                continue
            tt = f"{t:.2f}" if t is not None else "None"
            outputs = "?" if sums is None else "same" if sums == ref else "differ"
            passes = ", ".join(f"{d:.1f}" for d in drams)
            print(f"| {k} | {v} | {regs} | {st[0]}, {st[1]} | {passes} | {tt} | {outputs} |")


if __name__ == "__main__":
    main()
