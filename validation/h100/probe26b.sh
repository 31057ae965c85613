# Probe 26b on the device (the `run` tool), from the repository root: rewrite_probe.cu
# built with ptxas -O0 and -O3, its SASS, and each of its launches under Nsight Compute
# (caches flushed before each; docs/validation.md, "Probe 26"). Its folder is
# validation/h100/probe26/pinned; read it with
# `python3 validation/h100/probe26/table.py validation/h100/probe26/pinned`.
set -x
V=validation/h100
O=$OUT/probe26b
mkdir -p $O /tmp/p26b
M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__inst_executed.sum
for lvl in 0 3; do
  nvcc -O3 -arch=sm_90 --ptxas-options=-O$lvl -o /tmp/p26b/rp$lvl $V/rewrite_probe.cu > $O/nvcc-O$lvl.txt 2>&1
  cuobjdump -sass /tmp/p26b/rp$lvl | grep -E 'Function|^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/rewrite_probe-O$lvl.sass.txt
  /tmp/p26b/rp$lvl > $O/run-O$lvl.txt 2>&1
  ncu --csv --print-units base --clock-control none --metrics $M /tmp/p26b/rp$lvl > $O/ncu-O$lvl.csv 2>&1
done
cd $OUT && tar czf probe26b.tgz probe26b && rm -rf $OUT/probe26b
