#!/usr/bin/env python3
"""Probe 18's instrumentation of a cross-check program (`kernel.cu` as `metalsim
crosscheck` generates it): each warp's lane 0 records the SM clock at the kernel's entry,
after its first store to device memory and after its last one (in program order: the
kernels probed, `float_ops` and `int_ops`, run their stores in one block), and its SM,
into a device array that the host writes to DIR/probe.bin after the timed launches (so
the records are of the last one, which followed a flush of the L2).

    python3 instrument.py KERNEL.cu OUT.cu [K]

With K (probe 19), the second record is after the K-th store instead of the first.
"""
import re
import sys

MAX_WARPS = 1 << 16

src = open(sys.argv[1]).read()
start = src.index('extern "C" __global__')
body = src.index("{", start) + 1
end = src.index("\n}\n", body)
kernel = src[body:end]
stores = [m for m in re.finditer(r"^\s*\(\((?:float|int32_t|uint32_t|ms_f16|int16_t|uint16_t)\*\)\(v\d+\)\)\[0\] = [^;]+;$", kernel, re.M)]
if len(stores) < 2:
    sys.exit(f"{sys.argv[1]}: found {len(stores)} device stores")
at = int(sys.argv[3]) if len(sys.argv) > 3 else 1
if not 1 <= at < len(stores):
    sys.exit(f"{sys.argv[1]}: store {at} of {len(stores)} is not one before the last")
first, last = stores[at - 1], stores[-1]
kernel = (kernel[: last.end()] + "\n    ms_t2 = clock64();" + kernel[last.end():])
kernel = (kernel[: first.end()] + "\n    ms_t1 = clock64();" + kernel[first.end():])
entry = ("\n    unsigned long long ms_t0 = clock64(), ms_t1 = 0, ms_t2 = 0;")
record = ("if ((threadIdx.x & 31u) == 0) { unsigned ms_sm; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(ms_sm));"
          " size_t w = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;"
          f" if (w < {MAX_WARPS}) {{ ms_probe_rec[4 * w] = ms_t0; ms_probe_rec[4 * w + 1] = ms_t1;"
          " ms_probe_rec[4 * w + 2] = ms_t2; ms_probe_rec[4 * w + 3] = ms_sm; } } return;")
kernel = re.sub(r"\breturn;", record, kernel)
src = src[:body] + entry + kernel + src[end:]
src = src.replace('extern "C" __global__', f"__device__ unsigned long long ms_probe_rec[{4 * MAX_WARPS}];\n" + 'extern "C" __global__', 1)
dump = (f"    {{ std::vector<unsigned long long> r({4 * MAX_WARPS});"
        " MS_CHECK(cudaMemcpyFromSymbol(r.data(), ms_probe_rec, r.size() * 8));"
        " ms_write(dir + \"/probe.bin\", r.data(), r.size() * 8); }\n")
anchor = "    std::vector<double> sorted = times;\n"
assert anchor in src
src = src.replace(anchor, dump + anchor, 1)
open(sys.argv[2], "w").write(src)
print(f"{sys.argv[1]}: {len(stores)} stores, records after store {at} and the last")
