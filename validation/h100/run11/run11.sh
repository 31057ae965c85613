# Run 11 on the device (the `run` tool), from the repository root, with the release
# binary built from the tree of the time carried as out/xcheck19/metalsim. Everything
# that comes back is tarred (the tool returns a limited number of files).
set -x
export PATH=$PWD/out/xcheck19:$PATH
O=$OUT/run11
mkdir -p $O/ncu $O/sass
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-run11.txt 2>&1
( time metalsim crosscheck validation/ --model models/chips/h100.toml --out /tmp/xc ) > $O/crosscheck.log 2>&1
cp /tmp/xc/table.md /tmp/xc/results.json /tmp/xc/measured.json /tmp/xc/scatter.png /tmp/xc/scatter.svg $O/
for d in /tmp/xc/work/*/; do n=$(basename $d); cp $d/ncu.csv $O/ncu/$n.csv; cp $d/kernel.cu $O/sass/$n.cu; done
# The SASS of every generated program, built as the cross-check builds it.
for d in /tmp/xc/work/*/; do n=$(basename $d)
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/k.cubin $d/kernel.cu && cuobjdump -sass /tmp/k.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > "$O/sass/$n.sass.txt"
done
cd $OUT && tar czf run11.tgz run11 && rm -rf $OUT/run11
find $OUT -size +20M -delete
ls -la $OUT
