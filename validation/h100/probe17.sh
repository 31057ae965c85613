# Probe 17 on the device (the `run` tool), from the repository root, with the release
# binary of the tree of the time carried as out/xcheck27/metalsim. Committed as
# validation/h100/probe17/ (docs/validation.md, "Probe 17"): where the kernels the
# model is furthest from after run 16 spend their time, with the programs of run 16
# (built for their launch's geometry): Nsight Compute's stall reasons per issued
# instruction, L1 and shared-memory wavefronts, L1 hit rate, for gemm_tiled8,
# gemm_tiled16, gemm_naive, gather, softmax and triad.
set -x
export PATH=$PWD/out/xcheck27:$PATH
O=$OUT/probe17
mkdir -p $O/ncu /tmp/k17
for k in gemm_tiled8 gemm_tiled16 gemm_naive gather softmax triad; do cp validation/crosscheck/$k.* /tmp/k17/; done
( time metalsim crosscheck /tmp/k17 --model models/chips/h100.toml --out /tmp/xc17 ) > $O/crosscheck17.log 2>&1
for d in /tmp/xc17/work/*/; do n=$(basename $d)
  ncu --csv --print-units base --clock-control none \
      --metrics "regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,regex:^l1tex__data_pipe_lsu_wavefronts_mem_(shared|lg)_cmd_(read|write)\.sum$,l1tex__t_sector_hit_rate.pct,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,gpu__time_duration.sum" \
      $d/kernel $d --once > $O/ncu/$n.csv 2>&1
done
cp /tmp/xc17/table.md $O/
cd $OUT && tar czf probe17.tgz probe17 && rm -rf probe17
ls -la $OUT
