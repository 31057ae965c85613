#!/usr/bin/env python3
"""Where a program's warps wait, store by store: the share of all warp-state samples
(Nsight Compute's source page, probe 20) or of all SIMD-group cycles (the simulation's
per-instruction table, `metalsim run --trace T` then `metalsim export --out DIR T`)
spent at each device store, numbered in program order, at the loads, at the other
instructions, and at the end waiting for the stores to drain.

    python3 validation/h100/probe20/stores.py --ncu validation/h100/probe20/io_pure-source.csv
    python3 validation/h100/probe20/stores.py --sim DIR/instructions.csv
"""
import csv
import sys


def source(path):
    """The SASS instructions of Nsight Compute's source page at `path`, in program
    order: (instruction text, its warp-state samples, its row by column name)."""
    rows = list(csv.reader(open(path)))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    for r in rows[head + 1:]:
        row = dict(zip(rows[head], r))
        yield row["Source"].strip(), int(row["Warp Stall Sampling (All Samples)"]), row


def ncu(path):
    for src, samples, row in source(path):
        kind = "store" if src.startswith("STG") else "load" if src.startswith("LDG") else \
            "drain" if int(row["stall_drain"]) * 2 > samples else "other"
        yield kind, samples


SIM = ["issue_cycles", "stall_memory", "stall_alu", "stall_barrier", "stall_pipeline",
       "stall_not_selected", "stall_control", "stall_drain"]


def sim(path):
    for r in csv.DictReader(open(path)):
        text = r["text"]
        kind = "store" if "st.device" in text else "load" if "ld.device" in text else \
            "drain" if int(r["stall_drain"]) * 2 > sum(int(r[k]) for k in SIM) else "other"
        yield kind, sum(int(r[k]) for k in SIM)


def main():
    rows = list((ncu if sys.argv[1] == "--ncu" else sim)(sys.argv[2]))
    total = sum(n for _, n in rows)
    share = {"load": 0, "other": 0, "drain": 0}
    stores = []
    for kind, n in rows:
        if kind == "store":
            stores.append(n)
        else:
            share[kind] += n
    print(f"{sys.argv[2]}: {len(stores)} stores")
    print("  at each store (%): " + " ".join(f"{100 * n / total:.1f}" for n in stores))
    print(f"  at stores {100 * sum(stores) / total:.1f}%, loads {100 * share['load'] / total:.1f}%, "
          f"other instructions {100 * share['other'] / total:.1f}%, draining at the end "
          f"{100 * share['drain'] / total:.1f}%")


if __name__ == "__main__":
    main()
