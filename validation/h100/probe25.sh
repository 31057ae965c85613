# Probe 25 on the device (the `run` tool), from the repository root: gate_probe.cu's
# four launches (W = 24 and 12 words a thread, each at two output sizes), its records
# of one run (`<launch>.gate.bin.gz`) and of a second run (`rep/`), the DRAM bytes of
# every launch under Nsight Compute (caches flushed before each) and probe 20's
# warp-state sampling per SASS instruction of each launch alone
# (docs/validation.md, "Probe 25"; read with `python3 validation/h100/probe25/gates.py
# validation/h100/probe25`).
set -x
V=validation/h100
O=$OUT/probe25
mkdir -p $O/rep /tmp/p25/rep
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv > $O/clocks.txt 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/p25/gp $V/gate_probe.cu > $O/nvcc.txt 2>&1
nvcc -O3 -arch=sm_90 -cubin -o /tmp/p25/gp.cubin $V/gate_probe.cu \
  && cuobjdump -sass /tmp/p25/gp.cubin | grep -E 'Function|^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/gate_probe.sass.txt
/tmp/p25/gp /tmp/p25 > $O/run.txt 2>&1
/tmp/p25/gp /tmp/p25/rep >> $O/run.txt 2>&1
for f in /tmp/p25/*.gate.bin; do gzip -c $f > $O/$(basename $f).gz; done
for f in /tmp/p25/rep/*.gate.bin; do gzip -c $f > $O/rep/$(basename $f).gz; done
ncu --csv --print-units base --cache-control all --clock-control none \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second \
    /tmp/p25/gp /tmp/p25 > $O/dram.csv 2>&1
SRC="--section SourceCounters --page source --csv --print-source sass --clock-control none --warp-sampling-interval 0"
i=0
for n in w24_n512k w12_n1m w12_n512k w24_n256k; do
  ncu $SRC --launch-skip $i --launch-count 1 /tmp/p25/gp /tmp/p25 > $O/$n-source.csv 2> $O/$n-source.err
  i=$((i + 1))
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv >> $O/clocks.txt 2>&1
cd $OUT && tar czf probe25.tgz probe25 && rm -rf $OUT/probe25
ls -la $OUT
