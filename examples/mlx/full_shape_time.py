#!/usr/bin/env python3
"""Simulated time of the grid-sample kernels at the MLX document's shapes, extrapolated.

The document times x (8, 1024, 1024, 64) and grid (8, 256, 256, 2) on an M1 Max. This
script runs both kernels at x (8, 1024/k, 1024/k, 64) and grid (8, 256/k, 256/k, 2):
the same sampling density (a sample every 4 pixels), the same channel count, 1/k^2 of the
threads, and multiplies the simulated time by k^2 (the work and the memory traffic scale
with the number of sampling points). Every figure it prints at the full shape is an
extrapolation and says so.

    python3 examples/mlx/full_shape_time.py METALSIM [--model m1-max] [--scale 8 4]
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

SPEC = """[mlx]
name = "{name}"
input_names = {inputs}
output_names = {outputs}
template = {{ T = "float" }}
grid = [{threads}, 1, 1]
threadgroup = [256, 1, 1]
output_shapes = {shapes}
output_dtypes = {dtypes}
{extra}
[mlx.inputs]
x = "x.npy"
grid = "grid.npy"
cotangent = "cotangent.npy"
"""


def spec(path, name, inputs, outputs, threads, shapes, extra=""):
    text = SPEC.format(
        name=name,
        inputs=json.dumps(inputs),
        outputs=json.dumps(outputs),
        threads=threads,
        shapes=json.dumps(shapes),
        dtypes=json.dumps(["float"] * len(outputs)),
        extra=extra,
    )
    if "cotangent" not in inputs:
        text = text.replace('cotangent = "cotangent.npy"\n', "")
    with open(path, "w") as f:
        f.write(text)


def run(metalsim, body, spec_path, model):
    out = subprocess.run(
        [metalsim, "run", os.path.join(HERE, body), "--spec", spec_path,
         "--model", model, "--json"],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("metalsim")
    p.add_argument("--model", default="m1-max")
    p.add_argument("--scale", type=int, nargs="+", default=[8, 4])
    a = p.parse_args()
    rng = np.random.default_rng(0)
    B, C = 8, 64
    for k in a.scale:
        H = W = 1024 // k
        gH = gW = 256 // k
        with tempfile.TemporaryDirectory() as d:
            np.save(f"{d}/x.npy", rng.standard_normal((B, H, W, C), dtype=np.float32))
            np.save(f"{d}/grid.npy", rng.uniform(-1, 1, (B, gH, gW, 2)).astype(np.float32))
            np.save(f"{d}/cotangent.npy", rng.standard_normal((B, gH, gW, C), dtype=np.float32))
            points = B * gH * gW
            spec(f"{d}/fwd.toml", "grid_sample", ["x", "grid"], ["out"], points * C,
                 [[B, gH, gW, C]])
            spec(f"{d}/bwd.toml", "grid_sample_grad", ["x", "grid", "cotangent"],
                 ["x_grad", "grid_grad"], points * 32 * ((C + 31) // 32),
                 [[B, H, W, C], [B, gH, gW, 2]], "atomic_outputs = true\ninit_value = 0\n")
            for label, body, s in [("forward", "grid_sample.body.metal", "fwd.toml"),
                                   ("backward", "grid_sample_grad.body.metal", "bwd.toml")]:
                r = run(a.metalsim, body, f"{d}/{s}", a.model)
                ms = r["time_us"] / 1e3
                print(f"{label:8} x ({B}, {H}, {W}, {C}) grid ({B}, {gH}, {gW}, 2) on "
                      f"{r['model']}: simulated {ms:.3f} ms; full shape extrapolated "
                      f"x{k * k}: {ms * k * k:.2f} ms")


if __name__ == "__main__":
    main()
