#!/usr/bin/env python3
"""Run a metalsim kernel and launch spec on a real Apple GPU and record a measurement.

Needs macOS, Python 3.9+, NumPy and PyObjC's Metal bindings (`pip install numpy
pyobjc-framework-Metal`). It cannot run in metalsim's CI (no Mac there); see README.md.

    metalsim emit cuda KERNEL.metal --spec SPEC.toml --out BUNDLE   # inputs + launch.json
    python3 tools/metal/run_metal.py KERNEL.metal SPEC.toml BUNDLE --measurement measured.json
    metalsim crosscheck --measured measured.json --model m2-pro

The bundle gives the exact input bytes metalsim simulates (`BUNDLE/inputs/<binding>.bin`)
and the dispatch (`BUNDLE/launch.json`). This script compiles KERNEL.metal with the
Metal compiler (default options: fast math on, as metalsim assumes), runs the dispatch
once for the outputs (`BUNDLE/outputs/<name>.npy`), then times `--warmup` untimed and
`--repeats` timed dispatches, each on freshly restored writable buffers, one command
buffer each, with the GPU's own timestamps (GPUStartTime/GPUEndTime). The median goes
into the measurement file (docs/validation.md, "The measurement file"), whose entry for
this kernel is added or replaced.
"""

import argparse
import json
import os
import statistics
import sys

import numpy as np

FORMAT = "metalsim-measurement/1"


def load_bundle(bundle):
    """The launch description and each buffer's input bytes, by binding index."""
    with open(os.path.join(bundle, "launch.json")) as f:
        launch = json.load(f)
    data = {}
    for b in launch["buffers"]:
        path = os.path.join(bundle, "inputs", "%d.bin" % b["index"])
        with open(path, "rb") as f:
            raw = f.read()
        if len(raw) != b["bytes"]:
            sys.exit("%s: expected %d bytes, found %d" % (path, b["bytes"], len(raw)))
        data[b["index"]] = raw
    return launch, data


def output_array(bundle, buffer, raw):
    """The output bytes as an array shaped like the input `.npy` metalsim wrote."""
    template = np.load(os.path.join(bundle, "inputs", buffer["name"] + ".npy"))
    if template.nbytes != len(raw):
        sys.exit(
            "buffer %s: %d bytes on the GPU but %d in its .npy layout (padded vector types "
            "such as float3 are not supported by this harness)"
            % (buffer["name"], len(raw), template.nbytes)
        )
    return np.frombuffer(raw, dtype=template.dtype).reshape(template.shape)


def relative(path, base_dir):
    return os.path.relpath(os.path.abspath(path), os.path.abspath(base_dir))


def update_measurement(path, device, entry):
    """Adds `entry` to the measurement file at `path`, replacing one of the same name."""
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
        if doc.get("format") != FORMAT:
            sys.exit("%s is not a %s file" % (path, FORMAT))
        if doc.get("device") != device:
            sys.exit("%s holds measurements of %s, not %s" % (path, doc.get("device"), device))
    else:
        doc = {
            "format": FORMAT,
            "device": device,
            "method": "tools/metal/run_metal.py: median of GPUStartTime/GPUEndTime of one "
            "command buffer per dispatch, after warm-up dispatches, on restored buffers",
            "kernels": [],
        }
    doc["kernels"] = [k for k in doc["kernels"] if k["name"] != entry["name"]] + [entry]
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernel", help="the kernel file (.metal), self-contained")
    ap.add_argument("spec", help="the launch spec (.toml) the bundle was made from")
    ap.add_argument("bundle", help="the folder `metalsim emit cuda --out` wrote")
    ap.add_argument("--measurement", default="measured.json", help="the file to add to")
    ap.add_argument("--name", help="the entry's name (default: the spec's file name)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    if args.repeats < 1 or args.warmup < 0:
        sys.exit("--repeats must be at least 1 and --warmup at least 0")

    import Metal  # PyObjC; imported here so that --help works anywhere

    launch, data = load_bundle(args.bundle)
    device = Metal.MTLCreateSystemDefaultDevice()
    if device is None:
        sys.exit("no Metal device")
    with open(args.kernel) as f:
        source = f.read()
    library, error = device.newLibraryWithSource_options_error_(
        source, Metal.MTLCompileOptions.new(), None
    )
    if library is None:
        sys.exit("the Metal compiler refused %s: %s" % (args.kernel, error))
    function = library.newFunctionWithName_(launch["kernel"])
    if function is None:
        sys.exit("%s defines no kernel %s" % (args.kernel, launch["kernel"]))
    pipeline, error = device.newComputePipelineStateWithFunction_error_(function, None)
    if pipeline is None:
        sys.exit("no pipeline for %s: %s" % (launch["kernel"], error))

    shared = Metal.MTLResourceStorageModeShared
    buffers = {}
    for b in launch["buffers"]:
        raw = data[b["index"]]
        buffers[b["index"]] = device.newBufferWithLength_options_(max(len(raw), 1), shared)

    def restore():
        for b in launch["buffers"]:
            raw = data[b["index"]]
            if raw:
                buffers[b["index"]].contents().as_buffer(len(raw))[:] = raw

    grid = Metal.MTLSizeMake(*launch["threads_per_grid"])
    groups = Metal.MTLSizeMake(*launch["threadgroups_per_grid"])
    group = Metal.MTLSizeMake(*launch["threads_per_threadgroup"])
    queue = device.newCommandQueue()

    def dispatch():
        """One dispatch in its own command buffer; its GPU time in microseconds."""
        cb = queue.commandBuffer()
        enc = cb.computeCommandEncoder()
        enc.setComputePipelineState_(pipeline)
        for index, buf in buffers.items():
            enc.setBuffer_offset_atIndex_(buf, 0, index)
        for index, length in launch["threadgroup_memory"]:
            enc.setThreadgroupMemoryLength_atIndex_(length, index)
        if launch["grid_kind"] == "threads":
            enc.dispatchThreads_threadsPerThreadgroup_(grid, group)
        else:
            enc.dispatchThreadgroups_threadsPerThreadgroup_(groups, group)
        enc.endEncoding()
        cb.commit()
        cb.waitUntilCompleted()
        if cb.error() is not None:
            sys.exit("the dispatch failed: %s" % cb.error())
        return (cb.GPUEndTime() - cb.GPUStartTime()) * 1e6

    restore()
    dispatch()
    out_dir = os.path.join(args.bundle, "outputs")
    os.makedirs(out_dir, exist_ok=True)
    for b in launch["buffers"]:
        if b["output"]:
            raw = bytes(buffers[b["index"]].contents().as_buffer(len(data[b["index"]])))
            np.save(os.path.join(out_dir, b["name"] + ".npy"), output_array(args.bundle, b, raw))
    for _ in range(args.warmup):
        restore()
        dispatch()
    times = []
    for _ in range(args.repeats):
        restore()
        times.append(dispatch())

    base = os.path.dirname(os.path.abspath(args.measurement))
    name = args.name or os.path.splitext(os.path.basename(args.spec))[0]
    entry = {
        "name": name,
        "kernel": relative(args.kernel, base),
        "spec": relative(args.spec, base),
        "time_us": statistics.median(times),
        "times_us": times,
        "outputs": relative(out_dir, base),
    }
    update_measurement(args.measurement, device.name(), entry)
    print("%s on %s: median %.2f us over %d dispatches" % (name, device.name(), entry["time_us"], len(times)))


if __name__ == "__main__":
    main()
