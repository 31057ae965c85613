# Probe 24 on the device (the `run` tool), from the repository root: inflight_probe.cu's
# launches (W = 12 and 24 words a thread, at most D stores in flight per warp), with
# probe 18's records of one launch each (`<launch>.probe.bin.gz`, read by
# `python3 validation/h100/probe18/analyse.py validation/h100/probe24 LAUNCH ...`), the
# DRAM bytes of every launch under Nsight Compute (caches flushed before each) and
# probe 20's warp-state sampling per SASS instruction of each launch alone
# (docs/validation.md, "Probe 24").
set -x
V=validation/h100
O=$OUT/probe24
mkdir -p $O /tmp/p24
nvcc -O3 -arch=sm_90 -o /tmp/p24/ifp $V/inflight_probe.cu > $O/nvcc.txt 2>&1
nvcc -O3 -arch=sm_90 -cubin -o /tmp/p24/ifp.cubin $V/inflight_probe.cu \
  && cuobjdump -sass /tmp/p24/ifp.cubin | grep -E 'Function|^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/inflight_probe.sass.txt
/tmp/p24/ifp /tmp/p24 > $O/run.txt 2>&1
for f in /tmp/p24/*.probe.bin; do gzip -c $f > $O/$(basename $f).gz; done
ncu --csv --print-units base --cache-control all --clock-control none \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
    /tmp/p24/ifp /tmp/p24 > $O/dram.csv 2>&1
SRC="--section SourceCounters --page source --csv --print-source sass --clock-control none --warp-sampling-interval 0"
i=0
for n in w12_d1 w12_d2 w12_d4 w12_d12 w24_d1 w24_d2 w24_d4 w24_d8 w24_d24; do
  ncu $SRC --launch-skip $i --launch-count 1 /tmp/p24/ifp /tmp/p24 > $O/$n-source.csv 2> $O/$n-source.err
  i=$((i + 1))
done
cd $OUT && tar czf probe24.tgz probe24 && rm -rf $OUT/probe24
ls -la $OUT
