# Probe 18 on the device (the `run` tool), from the repository root, with the release
# binary carried as out/xcheck32/metalsim (run 21's) and the instrumented programs as
# out/p18/<kernel>_t.cu: `float_ops` and `int_ops` cross-checked as in the suite (which
# leaves each program's kernel.cu and inputs in /tmp/x18/work/<kernel>/), then each
# built again with probe18/instrument.py's records (the SM clock of every warp at entry,
# after its first store and after its last; python3 validation/h100/probe18/instrument.py
# kernel.cu out/p18/<kernel>_t.cu made them here, from `metalsim emit cuda` of the same
# kernel and spec), run on the same inputs, profiled for DRAM bytes (to see whether the
# records changed the program's merges) and disassembled.
set -x
export PATH=$PWD/out/xcheck32:$PATH
O=$OUT/probe18
mkdir -p $O /tmp/p18
cp validation/crosscheck/float_ops.metal validation/crosscheck/float_ops.toml \
   validation/crosscheck/int_ops.metal validation/crosscheck/int_ops.toml /tmp/p18/
metalsim crosscheck /tmp/p18 --model models/chips/h100.toml --out /tmp/x18 > $O/crosscheck18.log 2>&1
cp /tmp/x18/table.md /tmp/x18/results.json $O/
for k in float_ops int_ops; do
  d=/tmp/x18/work/$k
  diff <(sed -n '/^extern "C" __global__/,/^}/p' $d/kernel.cu) \
       <(sed -n '/^extern "C" __global__/,/^}/p' out/p18/${k}_t.cu) > $O/$k-instrumented.diff
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -o /tmp/${k}_t out/p18/${k}_t.cu
  /tmp/${k}_t $d --warmup 2 --repeats 5 > $O/$k-run.txt 2>&1
  gzip -c $d/probe.bin > $O/$k.probe.bin.gz
  ncu --csv --print-units base --clock-control none \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
      /tmp/${k}_t $d --once > $O/$k-ncu.csv 2>&1
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/k.cubin out/p18/${k}_t.cu \
    && cuobjdump -sass /tmp/k.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/${k}_t.sass.txt
done
cd $OUT && tar czf probe18.tgz probe18 && rm -rf $OUT/probe18
ls -la $OUT
