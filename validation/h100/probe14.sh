# Probe 14 on the device (the `run` tool), from the repository root: `copy` with a
# threadgroup's lines together or scattered, threadgroups of 128 to 1,024 threads, and
# `simd_reduce`, plain and traced (pattern_probe.cu). Committed as
# validation/h100/probe14/ (docs/validation.md, "Probe 14"); read the records with
# `python3 validation/h100/probe13.py validation/h100/probe14`.
set -x
V=validation/h100
O=$OUT/probe14
mkdir -p $O
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-probe14.txt 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/pp $V/pattern_probe.cu > $O/nvcc.txt 2>&1
nvcc -O3 -arch=sm_90 -cubin -o /tmp/pp.cubin $V/pattern_probe.cu && cuobjdump -sass /tmp/pp.cubin | grep -E 'Function|^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/pattern_probe.sass.txt
/tmp/pp $O > $O/pattern_probe.txt 2>&1
cat $O/pattern_probe.txt
python3 $V/probe13.py $O > $O/analysis.txt 2>&1; cat $O/analysis.txt
cd $O && gzip -9 *.bin && cd $OUT && tar czf probe14.tgz probe14 && rm -rf probe14
ls -la $OUT
