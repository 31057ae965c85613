# Run 17 on the device (the `run` tool), from the repository root, with the release
# binary built from the tree of the time carried as out/xcheck28/metalsim. Everything
# that comes back is tarred (the tool returns a limited number of files).
set -x
export PATH=$PWD/out/xcheck28:$PATH
O=$OUT/run17
mkdir -p $O/ncu
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; ncu --version | tail -1; } > $O/device-run17.txt 2>&1
( time metalsim crosscheck validation/ --model models/chips/h100.toml --out /tmp/xc ) > $O/crosscheck.log 2>&1
cp /tmp/xc/table.md /tmp/xc/results.json /tmp/xc/measured.json /tmp/xc/scatter.png /tmp/xc/scatter.svg $O/
for d in /tmp/xc/work/*/; do n=$(basename $d); cp $d/ncu.csv $O/ncu/$n.csv; done
cd $OUT && tar czf run17.tgz run17 && rm -rf $OUT/run17
find $OUT -size +20M -delete
ls -la $OUT
