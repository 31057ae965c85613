# Probe 26 on the device (the `run` tool), from the repository root, with the release
# binary of the tree carried as out/p26/metalsim: how much the H100's DRAM bytes for
# float_ops, int_ops and probe 10's store patterns depend on ptxas's register allocation
# and schedule alone. Each launch's generated CUDA (the cross-check's, unchanged) is
# built again with a register budget (-maxrregcount) or a lower ptxas optimisation
# level, and each build is timed with the program's CUDA events, its outputs' checksums
# kept, and profiled twice under Nsight Compute (caches flushed before each)
# (docs/validation.md, "Probe 26"). Arguments: the launches to take. The run was two
# calls, `float_ops int_ops` and then `fo_pure io_pure fo_sincos_first`; the second found
# the first's work folders on the still-warm machine and so measured all five again.
# Their folders are validation/h100/probe26/call1 and call2; read them with
# `python3 validation/h100/probe26/table.py validation/h100/probe26/call1 validation/h100/probe26/call2`.
set -x
ONLY=$(echo "$@" | tr ' ' ',')
export PATH=$PWD/out/p26:$PATH
O=$OUT/probe26
mkdir -p $O/sass $O/ncu $O/time /tmp/k26 /tmp/b26
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,ecc.mode.current --format=csv > $O/device.txt 2>&1
nvcc --version | tail -2 >> $O/device.txt
cp validation/crosscheck/float_ops.* validation/crosscheck/int_ops.* /tmp/k26/
for k in fo_pure io_pure fo_sincos_first; do
  cp validation/h100/probe10/kernels/$k.metal validation/h100/probe10/specs/$k.toml /tmp/k26/
done
( time metalsim crosscheck /tmp/k26 --model models/chips/h100.toml --out /tmp/xc26 --only $ONLY ) > $O/crosscheck.log 2>&1
cp /tmp/xc26/table.md $O/table-$1.md; cp /tmp/xc26/measured.json $O/measured-$1.json
M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__inst_executed.sum
BASE="-O3 -arch=sm_90 --fmad=false -std=c++17 -w"
VARIANTS="base: r16:-maxrregcount=16 r24:-maxrregcount=24 p0:--ptxas-options=-O0 p1:--ptxas-options=-O1 p0r16:--ptxas-options=-O0,-maxrregcount=16"
for d in /tmp/xc26/work/*/; do
  n=$(basename $d)
  for v in $VARIANTS; do
    name=${v%%:*}; flags=$(echo ${v#*:} | tr ',' ' ')
    nvcc $BASE $flags -o /tmp/b26/$n.$name $d/kernel.cu > $O/time/$n.$name.nvcc.txt 2>&1 || continue
    cuobjdump -sass /tmp/b26/$n.$name | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/sass/$n.$name.sass.txt
    /tmp/b26/$n.$name $d --warmup 5 --repeats 30 && cp $d/measurement.json $O/time/$n.$name.json
    md5sum $d/outputs/* > $O/time/$n.$name.md5
    for rep in 1 2; do
      ncu --csv --print-units base --clock-control none --metrics $M /tmp/b26/$n.$name $d --once > $O/ncu/$n.$name.$rep.csv 2>&1
    done
  done
done
cd $OUT && tar czf probe26-$1.tgz probe26 && rm -rf $OUT/probe26
