# Probe 15 on the device (the `run` tool), from the repository root, with the release
# binary of the tree of the time carried as out/xcheck25/metalsim. Committed as
# validation/h100/probe15/ (docs/validation.md, "Probe 15"): what one contended device
# atomic request costs by its shape (atomics_probe.cu's `requests`, with its histogram
# cases again), and where `atomics_private` and `gemm_naive` spend their time under
# Nsight Compute (warp states, scheduler, memory tables, the L2's atomic counters).
set -x
export PATH=$PWD/out/xcheck25:$PATH
V=validation/h100
O=$OUT/probe15
mkdir -p $O/ncu /tmp/k15
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; ncu --version | tail -1; } > $O/device-probe15.txt 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/ap $V/atomics_probe.cu > $O/nvcc.txt 2>&1
/tmp/ap requests > $O/atomics_requests.txt 2>&1
/tmp/ap > $O/atomics_probe.txt 2>&1
cp validation/crosscheck/atomics_private.* validation/crosscheck/atomics_global.* validation/crosscheck/gemm_naive.* /tmp/k15/
( time metalsim crosscheck /tmp/k15 --model models/chips/h100.toml --out /tmp/xc15 ) > $O/crosscheck15.log 2>&1
cp /tmp/xc15/table.md $O/
for n in atomics_private atomics_global gemm_naive; do
  ncu --csv --print-units base --clock-control none --section WarpStateStats --section SchedulerStats \
      --section MemoryWorkloadAnalysis_Tables --section Occupancy \
      --metrics lts__t_requests_op_red.sum,lts__t_requests_op_atom.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed_op_global_red.sum \
      /tmp/xc15/work/$n/kernel /tmp/xc15/work/$n --once > $O/ncu/$n.csv 2>&1
done
cd $OUT && tar czf probe15.tgz probe15 && rm -rf probe15
ls -la $OUT
