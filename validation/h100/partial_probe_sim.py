#!/usr/bin/env python3
"""Simulates partial_probe.cu's launches without a delay (partial_probe.metal on a model)
and prints the DRAM bytes read and written of each, as docs/validation.md's probe 9
table has them:

    python3 validation/h100/partial_probe_sim.py METALSIM MODEL [MiB,stride,words,threads ...]

threads 0 means every thread the H100 keeps resident (132 SMs x 2048). Without cases it
runs the table's 37."""
import json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NEVER = [(m, s, w, 0) for s, w in [(8, 4), (16, 4), (32, 4), (128, 4), (8, 1), (8, 7), (32, 1)]
         for m in (8, 32, 96)]
COMPLETE = [(m, s, w, t) for s, w in [(8, 8), (24, 24), (12, 12), (32, 8)]
            for m in (16, 48) for t in (0, 132 * 512)]


def main():
    metalsim, model = sys.argv[1], sys.argv[2]
    cases = [tuple(int(x) for x in c.split(",")) for c in sys.argv[3:]] or NEVER + COMPLETE
    work = tempfile.mkdtemp()
    for mib, stride, words, threads in cases:
        items = (mib << 20) // (stride * 4)
        threads = min(threads or 132 * 2048, items)
        threads = (threads + 127) // 128 * 128
        spec = os.path.join(work, "spec.toml")
        with open(spec, "w") as f:
            f.write(f'kernel = "pattern"\nthreads = [{threads}, 1, 1]\n'
                    f'threadgroup = [128, 1, 1]\n\n[[buffer]]\nindex = 0\nname = "out"\n'
                    f'type = "float"\ncount = {(mib << 20) // 4}\ninit = {{ fill = 0 }}\n'
                    f'output = true\n')
        out = os.path.join(work, "out")
        subprocess.run([metalsim, "run", os.path.join(HERE, "partial_probe.metal"),
                        "--spec", spec, "--model", model, "-D", f"ITEMS={items}u",
                        "-D", f"STRIDE={stride}u", "-D", f"WORDS={words}u", "--out", out],
                       check=True, capture_output=True)
        with open(os.path.join(out, "report.json")) as f:
            dram = json.load(f)["memory"]["levels"][-1]
        print(f"{mib} MiB stride {stride} words {words} threads {threads}: "
              f"read {dram['read_bytes'] / 1e6:.2f} MB, written {dram['write_bytes'] / 1e6:.2f} MB",
              flush=True)


if __name__ == "__main__":
    main()
