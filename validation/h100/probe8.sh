# The probe before run 8 (the `run` tool, from the repository root, with the release
# binary of the tree of the time carried as out/xcheck17/metalsim). Committed as:
# store_queue_probe.txt, device-probe8.txt, int_ops-stalls.csv, sass/probe8/*.
set -x
export PATH=$PWD/out/xcheck17:$PATH
V=validation/h100
O=$OUT/probe8
mkdir -p $O/sass
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-probe8.txt 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/sq $V/store_queue_probe.cu && /tmp/sq > $O/store_queue_probe.txt 2>&1
# int_ops and simd_reduce through the cross-check, then int_ops' warp states under ncu.
mkdir -p /tmp/k8 && cp validation/crosscheck/int_ops.* validation/crosscheck/simd_reduce.* /tmp/k8/
metalsim crosscheck /tmp/k8 --model models/chips/h100.toml --out /tmp/xc8 > $O/crosscheck8.log 2>&1
cp /tmp/xc8/table.md $O/ 2>/dev/null
ncu --csv --print-units base --clock-control none --section WarpStateStats --section Occupancy --section SchedulerStats /tmp/xc8/work/int_ops/kernel /tmp/xc8/work/int_ops --once > $O/int_ops-stalls.csv 2>&1
ncu --csv --print-units base --clock-control none --metrics smsp__warps_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warps_issue_stalled_drain_per_warp_active.pct,smsp__warps_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warps_issue_stalled_membar_per_warp_active.pct /tmp/xc8/work/int_ops/kernel /tmp/xc8/work/int_ops --once > $O/int_ops-stall-metrics.csv 2>&1
# simd_reduce's buffer address: where does ptxas put it with each way of reading it?
K=/tmp/xc8/work/simd_reduce/kernel.cu
cp $K $O/sass/sr_plain.cu
sed 's/v1 = (uint64_t)ms_buf1;/asm volatile("mov.b64 %0, %1;" : "=l"(v1) : "l"(ms_buf1));/' $K > $O/sass/sr_asm.cu
sed 's/v1 = (uint64_t)ms_buf1;/{ volatile uint64_t ms_v = (uint64_t)ms_buf1; v1 = ms_v; }/' $K > $O/sass/sr_volatile.cu
sed 's/v1 = (uint64_t)ms_buf1;/asm volatile("ld.param.u64 %0, [ms_kernel_simd_reduce_param_2];" : "=l"(v1));/' $K > $O/sass/sr_ldparam.cu
sed 's/v1 = (uint64_t)ms_buf1;/v1 = (uint64_t)ms_buf1; asm volatile("" :: "l"(v1) : "memory");/' $K > $O/sass/sr_use.cu
for v in plain asm volatile ldparam use; do
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/sr_$v.cubin $O/sass/sr_$v.cu > $O/sass/sr_$v.nvcc.txt 2>&1 && cuobjdump -sass /tmp/sr_$v.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/sass/sr_$v.sass.txt
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -o /tmp/sr_$v $O/sass/sr_$v.cu >> $O/sass/sr_$v.nvcc.txt 2>&1 && ncu --csv --print-units base --clock-control none --metrics smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,gpu__time_duration.sum /tmp/sr_$v /tmp/xc8/work/simd_reduce --once > $O/sass/sr_$v.ncu.csv 2>&1
done
rm -f $O/sass/*.cu.tmp
ls -laR $O
