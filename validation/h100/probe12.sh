# Probe 12 on the device (the `run` tool), from the repository root, with the release
# binary of the tree of the time carried as out/xcheck23/metalsim. Committed as
# validation/h100/probe12/ (docs/validation.md, "Probe 12"): `copy` and `scale4` with
# threadgroups of 64 to 1024 threads, the same data, to tell a cost per threadgroup from
# one per thread. The specs are kept apart from their kernels (probe12/specs/), so that
# `metalsim crosscheck validation/` does not take them for the suite; this script puts
# them beside the suite's kernels in a folder of its own. Probe 16 is the same run with
# the CUDA built for each launch's geometry (`XCHECK=27 NAME=probe16 bash probe12.sh`,
# committed as validation/h100/probe16/).
set -x
NAME=${NAME:-probe12}
export PATH=$PWD/out/xcheck${XCHECK:-23}:$PATH
P=validation/h100/probe12
O=$OUT/$NAME
mkdir -p $O/ncu /tmp/k12
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-probe12.txt 2>&1
cp validation/crosscheck/copy.metal validation/crosscheck/scale4.metal $P/specs/*.toml /tmp/k12/
( time metalsim crosscheck /tmp/k12 --model models/chips/h100.toml --out /tmp/xc12 ) > $O/crosscheck12.log 2>&1
cp /tmp/xc12/table.md /tmp/xc12/results.json /tmp/xc12/measured.json $O/ 2>/dev/null
for d in /tmp/xc12/work/*/; do n=$(basename $d); cp $d/ncu.csv "$O/ncu/$n.csv"; done
cd $OUT && tar czf $NAME.tgz $NAME && rm -rf $NAME
find $OUT -size +20M -delete
ls -la $OUT
