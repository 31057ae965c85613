# Probe 15 on the device (the `run` tool), from the repository root, with the release
# binary of the tree of the time carried as out/xcheckNN/metalsim. Committed as
# validation/h100/probe15/ (docs/validation.md, "Probe 15"): what one contended device
# atomic request costs by its shape (atomics_probe.cu's `requests`, with its histogram
# cases again), and where `atomics_private`, `atomics_global` and `gemm_naive` spend
# their time under Nsight Compute (warp states, scheduler, memory tables, the L2's
# atomic counters). Five device calls:
# 1. `XCHECK=25 bash probe15.sh`, with out/xcheck25 (the tree before probe 15's model
#    changes): everything but the L1 part; table.md and crosscheck15.log are that
#    model's.
# 2. `bash probe15.sh l1`, with out/xcheck25 still: the L1 probe's hit rows only; its
#    cross-check failed (the tree's h100.toml had fields that binary does not know).
# 3. The same with two more metrics, still with out/xcheck25: failed the same way,
#    nothing kept.
# 4. The same with out/xcheck26 (device atomics per sector round), tree and binary
#    agreeing: gemm_naive's L1 and stall counters (ncu/gemm_naive-l1.csv,
#    crosscheck-l1.log).
# 5. The same after l1_shape_probe.cu gained its 8 MiB window: l1_shapes.txt is this
#    call's (its hit rows repeat call 2's within 1.5%); its cross-check failed (out/xcheck26
#    predates memory.l1.sector_fill), so call 4's files are kept.
set -x
export PATH=$PWD/out/xcheck${XCHECK:-26}:$PATH
V=validation/h100
O=$OUT/probe15
mkdir -p $O/ncu /tmp/k15
if [ "$1" = l1 ]; then
  nvcc -O3 -arch=sm_90 -o /tmp/l1p $V/l1_shape_probe.cu > $O/nvcc-l1.txt 2>&1
  /tmp/l1p > $O/l1_shapes.txt 2>&1
  cp validation/crosscheck/gemm_naive.* /tmp/k15/
  metalsim crosscheck /tmp/k15 --model models/chips/h100.toml --out /tmp/xc15l1 > $O/crosscheck-l1.log 2>&1
  ncu --csv --print-units base --clock-control none \
      --metrics "regex:^l1tex__(data_pipe_lsu_wavefronts|t_requests|t_sectors|lsuin_requests|m_xbar2l1tex_read).*\.sum$,regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,regex:^sm__inst_executed_pipe_lsu.*\.sum$,l1tex__t_sector_hit_rate.pct,l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct" \
      /tmp/xc15l1/work/gemm_naive/kernel /tmp/xc15l1/work/gemm_naive --once > $O/ncu/gemm_naive-l1.csv 2>&1
  cd $OUT && tar czf probe15-l1.tgz probe15 && rm -rf probe15
  exit 0
fi
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
