# Probe 20 on the device (the `run` tool), from the repository root, with the release
# binary carried as out/xcheck34/metalsim (commit f8b24d7's): where the warps of the
# store kernels' own programs wait, from Nsight Compute's warp-state sampling per SASS
# instruction (the source page), without instrumenting them. `float_ops` and `int_ops`
# (the suite's kernels and specs) and probe 10's `io_pure` and `fo_pure` are each
# translated with `metalsim emit cuda --out` and built as the cross-check builds them;
# the source page is taken on one launch, sampling every 2^5 cycles.
set -x
export PATH=$PWD/out/xcheck34:$PATH
O=$OUT/probe20
mkdir -p $O /tmp/p20
C=validation/crosscheck; P=validation/h100/probe10
for x in "float_ops $C/float_ops.metal $C/float_ops.toml" "int_ops $C/int_ops.metal $C/int_ops.toml" \
         "io_pure $P/kernels/io_pure.metal $P/specs/io_pure.toml" "fo_pure $P/kernels/fo_pure.metal $P/specs/fo_pure.toml"; do
  set -- $x
  d=/tmp/p20/$1
  metalsim emit cuda $2 --spec $3 --out $d > /dev/null
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -o $d/kernel $d/kernel.cu
  ncu --section SourceCounters --section WarpStateStats --page source --csv --print-source sass \
      --clock-control none --warp-sampling-interval 0 $d/kernel $d --once > $O/$1-source.csv 2> $O/$1-source.err
  ncu --section WarpStateStats --section Occupancy --csv --print-units base --clock-control none \
      $d/kernel $d --once > $O/$1-stalls.csv 2>&1
done
cd $OUT && tar czf probe20.tgz probe20 && rm -rf $OUT/probe20
ls -la $OUT
