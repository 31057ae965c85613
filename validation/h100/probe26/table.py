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


def counters(path):
    """The metrics of one ncu CSV, by name."""
    rows = [l for l in open(path) if l.startswith('"')]
    out = {}
    for r in csv.DictReader(rows):
        try:
            out[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            pass
    return out


def regs_of(operand):
    """The registers an operand names: `R8.64` is R8 and R9, `R4` is R4."""
    m = re.match(r"\[?(?:desc\[UR\d+\])?\[?R(\d+)(\.64)?", operand.strip())
    if not m:
        return set()
    base = int(m.group(1))
    return {base, base + 1} if m.group(2) else {base}


def rewritten_stores(path):
    """(stores, stores one of whose registers, address or data, is written again later in
    straight-line order) in the segment of the SASS with the most stores (a program's
    kernel, not its helpers): a rough static count of where a warp may wait for a store
    to read its registers (branches are read in address order)."""
    segments, insts = [], []
    for line in open(path):
        m = re.search(r"/\*([0-9a-f]{4})\*/\s+(.*?);", line)
        if not m:
            continue
        if m.group(1) == "0000" and insts:
            segments.append(insts)
            insts = []
        insts.append(m.group(2).strip())
    segments.append(insts)
    insts = max(segments, key=lambda seg: sum(1 for i in seg if "STG" in i))
    stores = rewritten = 0
    for k, ins in enumerate(insts):
        body = re.sub(r"^@!?U?P\d+\s+", "", ins)
        if not body.startswith("STG"):
            continue
        stores += 1
        ops = body.split(None, 1)[1].split(",")
        # `STG.E desc[UR4][R8.64+0x4], R7`: the address, then the data.
        addr = ",".join(ops[:-1])
        m = re.search(r"\]\[(R\d+(?:\.64)?)", addr) or re.search(r"\[(R\d+(?:\.64)?)", addr)
        regs = regs_of(m.group(1)) if m else set()
        width = {".64": 2, ".128": 4}.get(next((w for w in (".64", ".128") if w in body.split()[0]), ""), 1)
        d = re.match(r"\s*R(\d+)", ops[-1])
        if d:
            regs |= {int(d.group(1)) + j for j in range(width)}
        for later in insts[k + 1:]:
            if later == "EXIT":
                break
            lb = re.sub(r"^@!?U?P\d+\s+", "", later)
            parts = lb.split(None, 1)
            if len(parts) < 2 or parts[0].startswith(("ST", "BRA", "BSYNC", "BSSY", "CALL", "RET", "R2UR")):
                continue
            dest = regs_of(parts[1].split(",")[0])
            if "SETP" in parts[0]:
                continue
            if ".64" in parts[0] or parts[0].startswith("IMAD.WIDE") or parts[0].startswith("LDC.64"):
                dest = {r + j for r in dest for j in (0, 1)}
            if dest & regs:
                rewritten += 1
                break
    return stores, rewritten


def sass_functions(path):
    """The SASS file's functions by name, each written to a file of its own under /tmp
    so that `rewritten_stores` reads one at a time."""
    out, name, lines = {}, None, []
    for line in open(path):
        m = re.search(r"Function : (\S+)", line)
        if m:
            if name:
                out[name] = lines
            name, lines = m.group(1), []
        elif name:
            lines.append(line)
    if name:
        out[name] = lines
    paths = {}
    for n, ls in out.items():
        tmp = f"/tmp/probe26-{os.getpid()}-{n}.sass"
        open(tmp, "w").writelines(ls)
        paths[n] = tmp
    return paths


def pinned(folder):
    """Probe 26b (rewrite_probe.cu): each launch's registers, warps active, DRAM MB and
    duration, and the stores of its SASS with a register written again."""
    print("| ptxas | kernel | registers | warps active % | stores, rewritten | DRAM MB | µs |")
    print("|---|---|---:|---:|---|---:|---:|")
    for lvl in ("O0", "O3"):
        sass = sass_functions(os.path.join(folder, f"rewrite_probe-{lvl}.sass.txt"))
        rows = [l for l in open(os.path.join(folder, f"ncu-{lvl}.csv")) if l.startswith('"')]
        launches = {}
        for r in csv.DictReader(rows):
            key = (r["ID"], r["Kernel Name"])
            launches.setdefault(key, {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
        for (_, kname), c in sorted(launches.items(), key=lambda kv: int(kv[0][0])):
            variant = "fresh" if "<1>" in kname or "true" in kname else "rewrite"
            mangled = "_Z14fo_pure_pinnedILb1EEvPKfPf" if variant == "fresh" else "_Z14fo_pure_pinnedILb0EEvPKfPf"
            st = rewritten_stores(sass[mangled]) if mangled in sass else (0, 0)
            mb = (c["dram__bytes_read.sum"] + c["dram__bytes_write.sum"]) / 1e6
            print(f"| -{lvl} | {variant} | {int(c['launch__registers_per_thread'])} | "
                  f"{c['sm__warps_active.avg.pct_of_peak_sustained_active']:.1f} | {st[0]}, {st[1]} | "
                  f"{mb:.1f} | {c['gpu__time_duration.sum'] / 1000:.2f} |")
    for p in sass.values():
        os.remove(p)


def main():
    folders = sys.argv[1:]
    if len(folders) == 1 and os.path.exists(os.path.join(folders[0], "ncu-O0.csv")):
        pinned(folders[0])
        return
    print("| launch | build | registers | stores, rewritten | DRAM MB (passes) | time µs | outputs |")
    print("|---|---|---:|---|---|---:|---|")
    for k in KERNELS:
        ref = None
        for v in VARIANTS:
            drams, regs, t, same = [], None, None, None
            for f in folders:
                for rep in (1, 2):
                    p = os.path.join(f, "ncu", f"{k}.{v}.{rep}.csv")
                    if os.path.exists(p):
                        c = counters(p)
                        if "dram__bytes_read.sum" in c:
                            drams.append((c["dram__bytes_read.sum"] + c["dram__bytes_write.sum"]) / 1e6)
                            regs = int(c.get("launch__registers_per_thread", 0))
                tp = os.path.join(f, "time", f"{k}.{v}.json")
                if os.path.exists(tp):
                    j = json.load(open(tp))
                    t = j.get("median_us", j.get("time_us"))
                mp = os.path.join(f, "time", f"{k}.{v}.md5")
                if os.path.exists(mp):
                    sums = sorted(l.split()[0] for l in open(mp))
                    if v == "base":
                        ref = sums
                    same = sums == ref
            sp = [os.path.join(f, "sass", f"{k}.{v}.sass.txt") for f in folders]
            sp = [p for p in sp if os.path.exists(p)]
            st = rewritten_stores(sp[-1]) if sp else (0, 0)
            if not drams:
                continue
            tt = f"{t:.2f}" if isinstance(t, float) else str(t)
            print(f"| {k} | {v} | {regs} | {st[0]}, {st[1]} | {', '.join(f'{d:.1f}' for d in drams)} | {tt} | {'same' if same else 'differ' if same is not None else '?'} |")


if __name__ == "__main__":
    main()
