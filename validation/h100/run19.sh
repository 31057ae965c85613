# Run 19 on the device (the `run` tool), from the repository root, with the release
# binary built from the tree of the time carried as out/xcheck30/metalsim. Everything
# that comes back is tarred (the tool returns a limited number of files).
set -x
export PATH=$PWD/out/xcheck30:$PATH
O=$OUT/run19
mkdir -p $O/ncu
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; ncu --version | tail -1; } > $O/device-run19.txt 2>&1
( time metalsim crosscheck validation/ --model models/chips/h100.toml --out /tmp/xc ) > $O/crosscheck.log 2>&1
cp /tmp/xc/table.md /tmp/xc/results.json /tmp/xc/measured.json /tmp/xc/scatter.png /tmp/xc/scatter.svg $O/
for d in /tmp/xc/work/*/; do n=$(basename $d); cp $d/ncu.csv $O/ncu/$n.csv; done
# The SASS of every generated program, built as the cross-check builds it.
mkdir -p $O/sass
for d in /tmp/xc/work/*/; do n=$(basename $d)
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/k.cubin $d/kernel.cu && cuobjdump -sass /tmp/k.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > "$O/sass/$n.sass.txt"
done
cd $OUT && tar czf run19.tgz run19 && rm -rf $OUT/run19
find $OUT -size +20M -delete
ls -la $OUT
