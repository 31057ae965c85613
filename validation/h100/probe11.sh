# Probe 11 on the device (the `run` tool), from the repository root: the clock after
# every store of every warp (store_trace_probe.cu), with each launch's DRAM bytes under
# Nsight Compute. Committed as validation/h100/probe11/ (docs/validation.md, "Probe 11").
set -x
V=validation/h100
O=$OUT/probe11
mkdir -p $O/sass
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-probe11.txt 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/stp $V/store_trace_probe.cu > $O/nvcc.txt 2>&1
nvcc -O3 -arch=sm_90 -cubin -o /tmp/stp.cubin $V/store_trace_probe.cu && cuobjdump -sass /tmp/stp.cubin | grep -E 'Function|^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/sass/store_trace_probe.sass.txt
ncu --csv --print-units base --cache-control all --clock-control none \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum /tmp/stp $O > $O/store_trace_probe.txt 2>&1
cd $OUT && tar czf probe11.tgz probe11 && rm -rf probe11
ls -la $OUT
