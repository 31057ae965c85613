#!/bin/bash
# Probe 22's simulated curve (docs/validation.md, "Probe 22"): for each store kernel, the
# SIMD-groups of a core before their first store and between their first and last, and
# the DRAM MB, under nine store-path rules of the diagnostic patch
# (validation/h100/probe18/sim_records.patch). From the repository root, with the
# patched release binary as $1:
#   git apply validation/h100/probe18/sim_records.patch && cargo build --release
#   bash validation/h100/probe22/curve.sh target/release/metalsim > curve.txt
# Each line: kernel|rule|DRAM MB|resident before between. Three runs at a time.
B=${1:?patched metalsim binary}
P=validation/h100/probe10; C=validation/crosscheck
declare -A K=(
 [float_ops]="$C/float_ops.metal $C/float_ops.toml"
 [int_ops]="$C/int_ops.metal $C/int_ops.toml"
 [int_ops_ptxas]="validation/h100/probe19/int_ops_ptxas.metal $C/int_ops.toml"
 [io_pure]="$P/kernels/io_pure.metal $P/specs/io_pure.toml"
 [fo_pure]="$P/kernels/fo_pure.metal $P/specs/fo_pure.toml"
 [fo_out]="$P/kernels/fo_out.metal $P/specs/fo_out.toml"
 [fo_sincos_first]="$P/kernels/fo_sincos_first.metal $P/specs/fo_sincos_first.toml"
)
RULES=("X=1" "MS_WAR=0" "MS_PERWARP=1 MS_WAR=0" "MS_PERWARP=2 MS_WAR=0" "MS_PERWARP=3 MS_WAR=0"
       "MS_TURN=1" "MS_FIFO=1" "MS_DIST=2 MS_WAR=0" "MS_FREE=2")
one() { # kernel rule-index
  local d counts
  IFS='|' read -r d counts _ <<< "$(bash validation/h100/probe22/sim_point.sh $B ${K[$1]} ${RULES[$2]})"
  echo "$1|${RULES[$2]}|$d|$counts"
}
for k in "${!K[@]}"; do for i in "${!RULES[@]}"; do echo "$k $i"; done; done | \
  (while read k i; do one $k $i & while [ $(jobs -r | wc -l) -ge 3 ]; do sleep 1; done; done; wait) | sort
