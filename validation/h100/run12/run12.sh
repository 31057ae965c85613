# Run 12 on the device (the `run` tool), from the repository root, with the release
# binary built from the tree of the time carried as out/xcheck20/metalsim. Everything
# that comes back is tarred (the tool returns a limited number of files).
set -x
export PATH=$PWD/out/xcheck20:$PATH
O=$OUT/run12
mkdir -p $O/ncu
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-run12.txt 2>&1
( time metalsim crosscheck validation/ --model models/chips/h100.toml --out /tmp/xc ) > $O/crosscheck.log 2>&1
cp /tmp/xc/table.md /tmp/xc/results.json /tmp/xc/measured.json /tmp/xc/scatter.png /tmp/xc/scatter.svg $O/
for d in /tmp/xc/work/*/; do n=$(basename $d); cp $d/ncu.csv $O/ncu/$n.csv; done
# The programs are run 11's (the CUDA translation did not change): no SASS here.
cd $OUT && tar czf run12.tgz run12 && rm -rf $OUT/run12
find $OUT -size +20M -delete
ls -la $OUT
