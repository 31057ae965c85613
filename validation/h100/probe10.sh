# Probe 10 on the device (the `run` tool), from the repository root, with the release
# binary of the tree of the time carried as out/xcheck21/metalsim. Committed as
# validation/h100/probe10/ (docs/validation.md, "Probe 10"). The first call ran the
# kernels/ part; the second (this script as it is) both, kernels/ again and grid/.
set -x
export PATH=$PWD/out/xcheck21:$PATH
O=$OUT/probe10
mkdir -p $O/sass $O/ncu $O/grid
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-probe10.txt 2>&1
# float_ops and int_ops beside variants of their store patterns (probe10/kernels/*.metal).
( time metalsim crosscheck validation/h100/probe10/kernels --model models/chips/h100.toml --out /tmp/xc10 ) > $O/crosscheck10.log 2>&1
cp /tmp/xc10/table.md /tmp/xc10/results.json /tmp/xc10/measured.json $O/ 2>/dev/null
for d in /tmp/xc10/work/*/; do n=$(basename $d); cp $d/ncu.csv "$O/ncu/$n.csv"; \
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/$n.cubin $d/kernel.cu && cuobjdump -sass /tmp/$n.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/sass/$n.sass.txt; done
# The pure patterns at other output sizes (probe10/grid/).
( time metalsim crosscheck validation/h100/probe10/grid --model models/chips/h100.toml --out /tmp/xc10g ) > $O/grid/crosscheck10g.log 2>&1
cp /tmp/xc10g/table.md /tmp/xc10g/results.json /tmp/xc10g/measured.json $O/grid/ 2>/dev/null
for d in /tmp/xc10g/work/*/; do n=$(basename $d); cp $d/ncu.csv "$O/grid/$n.ncu.csv"; done
cd $OUT && tar czf probe10.tgz probe10 && rm -rf probe10
find $OUT -size +20M -delete
ls -la $OUT
