# Probe 23 on the device (the `run` tool), from the repository root: probe 20's
# warp-state sampling per SASS instruction on probe 11's `_timed_reuse` launches of
# `store_trace_probe.cu` (each clock read written into the register the store before it
# reads, so that a warp has one store in flight), which probe 21 left out: whether the
# wait for a store to take its data falls on the write (the clock read) or on the stores
# (docs/validation.md, "Probe 23"). Each launch is profiled alone by its launch index,
# and the SASS is kept.
set -x
O=$OUT/probe23
mkdir -p $O /tmp/p23
SRC="--section SourceCounters --page source --csv --print-source sass --clock-control none --warp-sampling-interval 0"
nvcc -O3 -arch=sm_90 -o /tmp/p23/stp validation/h100/store_trace_probe.cu
cuobjdump -sass /tmp/p23/stp | grep -E '^\s+/\*[0-9a-f]{4}\*/|Function' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/stp.sass.txt
i=0
for n in w8 w8_timed w8_timed_reuse w12 w12_timed w12_timed_reuse w16 w16_timed w16_timed_reuse \
         w20 w20_timed w20_timed_reuse w24 w24_timed w24_timed_reuse w32 w32_timed w32_timed_reuse; do
  case $n in *_reuse) ncu $SRC --launch-skip $i --launch-count 1 /tmp/p23/stp /tmp/p23 \
      > $O/$n-source.csv 2> $O/$n-source.err ;; esac
  i=$((i + 1))
done
cd $OUT && tar czf probe23.tgz probe23 && rm -rf $OUT/probe23
ls -la $OUT
