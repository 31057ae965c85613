# Run 13 on the device (the `run` tool), from the repository root, with the release
# binary built from the tree of the time carried as out/xcheck21/metalsim. Everything
# that comes back is tarred (the tool returns a limited number of files).
set -x
export PATH=$PWD/out/xcheck21:$PATH
O=$OUT/run13
mkdir -p $O/ncu
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; ncu --version | tail -1; } > $O/device-run13.txt 2>&1
( time metalsim crosscheck validation/ --model models/chips/h100.toml --out /tmp/xc ) > $O/crosscheck.log 2>&1
cp /tmp/xc/table.md /tmp/xc/results.json /tmp/xc/measured.json /tmp/xc/scatter.png /tmp/xc/scatter.svg $O/
for d in /tmp/xc/work/*/; do n=$(basename $d); cp $d/ncu.csv $O/ncu/$n.csv; done
# The divergence kernel's executed instructions per SASS instruction (Nsight Compute's
# source page): where the idle lane slots beyond the ISA's are.
for n in divergence@2 divergence@32; do
  d=/tmp/xc/work/$n; cu=$(ls $d/*.cu | head -1)
  ncu --section SourceCounters --page source --csv --print-source sass --clock-control none \
      ${cu%.cu} $d --once > $O/$n-source.csv 2> $O/$n-source.err
done
cd $OUT && tar czf run13.tgz run13 && rm -rf $OUT/run13
find $OUT -size +20M -delete
ls -la $OUT
