# Probe 21 on the device (the `run` tool), from the repository root, with the release
# binary carried as out/xcheck34/metalsim (commit f8b24d7's): probe 20's warp-state
# sampling per SASS instruction on more store programs, for the store path's next
# model to match: probe 11's bursts of W floats a thread as nvcc schedules them
# (`store_trace_probe.cu`, launches w8 to w32, each profiled alone by its launch
# index) and its `_timed` programs (no stored register written again), and the
# suite's one-store kernels `copy`, `triad` and `scale4`.
set -x
export PATH=$PWD/out/xcheck34:$PATH
O=$OUT/probe21
mkdir -p $O /tmp/p21
SRC="--section SourceCounters --page source --csv --print-source sass --clock-control none --warp-sampling-interval 0"
nvcc -O3 -arch=sm_90 -o /tmp/p21/stp validation/h100/store_trace_probe.cu
i=0
for n in w8 w8_timed w8_timed_reuse w12 w12_timed w12_timed_reuse w16 w16_timed w16_timed_reuse \
         w20 w20_timed w20_timed_reuse w24 w24_timed w24_timed_reuse w32 w32_timed w32_timed_reuse; do
  case $n in *_reuse) ;; *) ncu $SRC --launch-skip $i --launch-count 1 /tmp/p21/stp /tmp/p21 \
      > $O/$n-source.csv 2> $O/$n-source.err ;; esac
  i=$((i + 1))
done
C=validation/crosscheck
for k in copy triad scale4; do
  metalsim emit cuda $C/$k.metal --spec $C/$k.toml --out /tmp/p21/$k > /dev/null
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -o /tmp/p21/$k/kernel /tmp/p21/$k/kernel.cu
  ncu $SRC /tmp/p21/$k/kernel /tmp/p21/$k --once > $O/$k-source.csv 2> $O/$k-source.err
done
cd $OUT && tar czf probe21.tgz probe21 && rm -rf $OUT/probe21
ls -la $OUT
