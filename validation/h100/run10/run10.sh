# Run 10 on the device (the `run` tool), from the repository root, with the release
# binary built from the tree of the time carried as out/xcheck18/metalsim. Everything
# that comes back is tarred (the tool returns a limited number of files).
set -x
export PATH=$PWD/out/xcheck18:$PATH
O=$OUT/run10
mkdir -p $O/ncu $O/sass
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-run10.txt 2>&1
( time metalsim crosscheck validation/ --model models/chips/h100.toml --out /tmp/xc ) > $O/crosscheck.log 2>&1
cp /tmp/xc/table.md /tmp/xc/results.json /tmp/xc/measured.json /tmp/xc/scatter.png /tmp/xc/scatter.svg $O/
for d in /tmp/xc/work/*/; do n=$(basename $d); cp $d/ncu.csv $O/ncu/$n.csv; done
# The SASS of every generated program, built as the cross-check builds it (item 3 of
# "Where the model is still wrong": gemm_tiled8/16's loads and bank conflicts).
for d in /tmp/xc/work/*/; do n=$(basename $d)
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/k.cubin $d/kernel.cu && cuobjdump -sass /tmp/k.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > "$O/sass/$n.sass.txt"
done
# Where the tiled and SIMD-group-matrix multiplies' warps wait (item 3 and 1).
mkdir -p $O/stalls
for n in gemm_tiled8 gemm_tiled16 gemm_simdgroup; do
  ncu --csv --print-units base --clock-control none --section WarpStateStats --section SchedulerStats --section Occupancy /tmp/xc/work/$n/kernel /tmp/xc/work/$n --once > $O/stalls/$n.csv 2>&1
done
cd $OUT && tar czf run10.tgz run10 && rm -rf $OUT/run10
find $OUT -size +20M -delete
ls -la $OUT
