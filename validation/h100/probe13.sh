# Probe 13 on the device (the `run` tool), from the repository root: `copy` with
# threadgroups of 128 to 1,024 threads, timed plain and traced (copy_trace_probe.cu),
# and HBM's loaded latency under read, copy and write streams (mix_latency_probe.cu).
# Committed as validation/h100/probe13/ (docs/validation.md, "Probe 13"); read the
# records with `python3 validation/h100/probe13.py validation/h100/probe13`.
set -x
V=validation/h100
O=$OUT/probe13
mkdir -p $O
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-probe13.txt 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/ctp $V/copy_trace_probe.cu > $O/nvcc.txt 2>&1
nvcc -O3 -arch=sm_90 -cubin -o /tmp/ctp.cubin $V/copy_trace_probe.cu && cuobjdump -sass /tmp/ctp.cubin | grep -E 'Function|^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/copy_trace_probe.sass.txt
/tmp/ctp $O > $O/copy_trace_probe.txt 2>&1
cat $O/copy_trace_probe.txt
python3 $V/probe13.py $O > $O/analysis.txt 2>&1; cat $O/analysis.txt
nvcc -O3 -arch=sm_90 -o /tmp/mlp $V/mix_latency_probe.cu >> $O/nvcc.txt 2>&1
/tmp/mlp > $O/mix_latency_probe.txt 2>&1; cat $O/mix_latency_probe.txt
cd $OUT && tar czf probe13.tgz probe13 && rm -rf probe13
ls -la $OUT
