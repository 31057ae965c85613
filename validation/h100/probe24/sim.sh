#!/bin/bash
# Probe 24's simulated counterpart (docs/validation.md, "Probe 24"): probe 10's fo_pure
# (12 words a thread) and io_pure (24) with at most D stores of a SIMD-group in flight
# (the diagnostic patch's MS_DIST=D with MS_WAR=0; "none": MS_WAR=0 alone). From the
# repository root, with the patched release binary as $1
# (git apply validation/h100/probe18/sim_records.patch && cargo build --release).
# Each line: kernel D | DRAM MB | resident before between | time.
B=${1:?patched metalsim binary}
P=validation/h100/probe10
T=$(mktemp -d)
one() { # kernel D
  local d=() mb counts time
  [ "$2" != none ] && d=(MS_DIST=$2)
  IFS='|' read -r mb counts time <<< "$(bash validation/h100/probe22/sim_point.sh $B \
      $P/kernels/$1.metal $P/specs/$1.toml MS_WAR=0 "${d[@]}")"
  echo "$1 $2 | $mb | $counts| $time"
}
for x in "fo_pure 1" "fo_pure 2" "fo_pure 4" "fo_pure none" "io_pure 1" "io_pure 2" "io_pure 4" "io_pure 8" "io_pure none"; do
  one $x > $T/line-${x// /_} &
  while [ $(jobs -r | wc -l) -ge 3 ]; do sleep 1; done
done
wait
for x in "fo_pure 1" "fo_pure 2" "fo_pure 4" "fo_pure none" "io_pure 1" "io_pure 2" "io_pure 4" "io_pure 8" "io_pure none"; do cat $T/line-${x// /_}; done
rm -rf $T
