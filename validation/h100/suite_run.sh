# A cross-check run of the whole suite on the device (the `run` tool), from the
# repository root, with the release binary built from the tree of the time carried as
# out/xcheck$XCHECK/metalsim; with SASS=1 also the SASS of every generated program,
# built as the cross-check builds it; with SPREAD=1 the cross-check also builds every
# kernel with ptxas at -O1 and -O0 (`--compiler-spread`), whose counters go to
# ncu/<kernel>+<build>.csv. Everything that comes back is tarred (the tool
# returns a limited number of files). Runs 14 to 19 ran this text with their numbers
# written in (runN.sh in each run's folder says which).
# Usage: RUN=19 XCHECK=30 SASS=1 SPREAD=1 bash validation/h100/suite_run.sh
set -x
: "${RUN:?}" "${XCHECK:?}"
export PATH=$PWD/out/xcheck$XCHECK:$PATH
O=$OUT/run$RUN
mkdir -p $O/ncu
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; ncu --version | tail -1; } > $O/device-run$RUN.txt 2>&1
( time metalsim crosscheck validation/ --model models/chips/h100.toml --out /tmp/xc ${SPREAD:+--compiler-spread} ) > $O/crosscheck.log 2>&1
cp /tmp/xc/table.md /tmp/xc/results.json /tmp/xc/measured.json /tmp/xc/scatter.png /tmp/xc/scatter.svg $O/
for d in /tmp/xc/work/*/; do n=$(basename $d); cp $d/ncu.csv $O/ncu/$n.csv
  for b in $d/build-*/; do [ -f $b/ncu.csv ] && cp $b/ncu.csv "$O/ncu/$n+$(basename $b | sed 's/^build-//').csv"; done
done
if [ "${SASS:-}" = 1 ]; then
  mkdir -p $O/sass
  for d in /tmp/xc/work/*/; do n=$(basename $d)
    nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/k.cubin $d/kernel.cu && cuobjdump -sass /tmp/k.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > "$O/sass/$n.sass.txt"
  done
fi
cd $OUT && tar czf run$RUN.tgz run$RUN && rm -rf $OUT/run$RUN
find $OUT -size +20M -delete
ls -la $OUT
