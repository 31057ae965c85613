# Run 9 on the device (the `run` tool), from the repository root, with the release
# binary built from the tree of the time carried as out/xcheck17/metalsim. Everything
# that comes back is tarred (the tool returns a limited number of files).
set -x
export PATH=$PWD/out/xcheck17:$PATH
O=$OUT/run9
mkdir -p $O/ncu $O/sass
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-run9.txt 2>&1
( time metalsim crosscheck validation/ --model models/chips/h100.toml --out /tmp/xc ) > $O/crosscheck.log 2>&1
cp /tmp/xc/table.md /tmp/xc/results.json /tmp/xc/measured.json /tmp/xc/scatter.png /tmp/xc/scatter.svg $O/
for d in /tmp/xc/work/*/; do n=$(basename $d); cp $d/ncu.csv $O/ncu/$n.csv; done
# The SASS of simd_reduce's generated program (run 7's translation: its buffer address
# loaded in the one-lane branch), built as the cross-check builds it.
nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/sr.cubin /tmp/xc/work/simd_reduce/kernel.cu && cuobjdump -sass /tmp/sr.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/sass/simd_reduce.sass.txt
cd $OUT && tar czf run9.tgz run9 && rm -rf $OUT/run9
find $OUT -size +20M -delete
ls -la $OUT
