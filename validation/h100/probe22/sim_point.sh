#!/bin/bash
# One simulated point of probes 22 and 24: runs the patched metalsim ($1, built with
# validation/h100/probe18/sim_records.patch) on a kernel ($2) and spec ($3) on the h100
# model with the diagnostic variables given after them (VAR=VALUE ...), and prints
# `DRAM MB|resident before between |time`: the DRAM bytes, the SIMD-groups of a core
# from entry to last store, before their first store and between their first and last
# (probe18/sim_stats.py), and the simulated time.
B=$1 K=$2 S=$3
shift 3
T=$(mktemp -d)
env MS_DBG=1 "$@" $B run $K --spec $S --model models/chips/h100.toml > $T/out 2> $T/dbg
mb=$(grep -oE "[0-9.]+ MB to and from DRAM" $T/out | cut -d' ' -f1)
counts=$(python3 validation/h100/probe18/sim_stats.py $T/dbg | grep "at once" \
         | grep -oE "[0-9.]+ (from|before|between)" | cut -d' ' -f1 | tr '\n' ' ')
echo "$mb|$counts|$(grep -oE '[0-9.]+ us' $T/out | head -1)"
rm -rf $T
