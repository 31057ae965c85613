# Probe 10 on the device (the `run` tool), from the repository root, with the release
# binary of the tree of the time carried as out/xcheck21/metalsim. Committed as
# validation/h100/probe10/ (docs/validation.md, "Probe 10"). The kernels and their specs
# are kept apart (probe10/kernels/, probe10/specs/), so that `metalsim crosscheck
# validation/` does not take them for the suite; this script puts each launch's pair in
# a folder of its own, as the run had them. The run was two calls: the first did the
# kernels part, the second both, kernels again and grid.
set -x
export PATH=$PWD/out/xcheck21:$PATH
P=validation/h100/probe10
O=$OUT/probe10
mkdir -p $O/sass $O/ncu $O/grid/ncu /tmp/k10 /tmp/k10g
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-probe10.txt 2>&1
# float_ops and int_ops beside variants of their store patterns.
cp validation/crosscheck/int_ops.* validation/crosscheck/float_ops.* /tmp/k10/
for k in fo_out fo_pure fo_sincos_first hi_pure io_pure; do cp $P/kernels/$k.metal $P/specs/$k.toml /tmp/k10/; done
( time metalsim crosscheck /tmp/k10 --model models/chips/h100.toml --out /tmp/xc10 ) > $O/crosscheck10.log 2>&1
cp /tmp/xc10/table.md /tmp/xc10/results.json /tmp/xc10/measured.json $O/ 2>/dev/null
for d in /tmp/xc10/work/*/; do n=$(basename $d); cp $d/ncu.csv "$O/ncu/$n.csv"; \
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/$n.cubin $d/kernel.cu && cuobjdump -sass /tmp/$n.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/sass/$n.sass.txt; done
# The pure patterns at other output sizes.
cp $P/kernels/fo_pure.metal $P/kernels/io_pure.metal $P/specs/*@*.toml /tmp/k10g/
( time metalsim crosscheck /tmp/k10g --model models/chips/h100.toml --out /tmp/xc10g ) > $O/grid/crosscheck10g.log 2>&1
cp /tmp/xc10g/table.md /tmp/xc10g/results.json /tmp/xc10g/measured.json $O/grid/ 2>/dev/null
for d in /tmp/xc10g/work/*/; do n=$(basename $d); cp $d/ncu.csv "$O/grid/ncu/$n.csv"; done
cd $OUT && tar czf probe10.tgz probe10 && rm -rf probe10
find $OUT -size +20M -delete
ls -la $OUT
