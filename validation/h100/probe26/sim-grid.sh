#!/bin/bash
# Probe 26's simulated side (docs/validation.md, "Probe 26"): MB to and from DRAM of
# float_ops, int_ops, probe 10's fo_pure and io_pure, and their `_o0` versions
# (probe26/kernels: every store's address computed apart, as ptxas -O0 keeps it), on the
# H100 model, with the diagnostic patch's register releases: none (the model), MS_DONE
# (a store's registers held until it is done at the L2), MS_START (until its service
# starts) and MS_EXTRA=X (X cycles past its leaving the path). From the repository root,
# with the patched release binary as $1
# (git apply validation/h100/probe18/sim_records.patch && cargo build --release).
# Output: probe26/sim-grid.txt; MS_EXTRA=X bash validation/h100/probe24/sim.sh BIN
# gives probe 24's table with the same release (probe26/probe24-extra.txt).
B=${1:?patched metalsim binary}
M=models/chips/h100.toml
T=$(mktemp -d)
src() { # kernel: its .metal and .toml
  case $1 in
    *_o0) echo validation/h100/probe26/kernels/$1.metal validation/h100/probe26/specs/$1.toml ;;
    fo_pure|io_pure) echo validation/h100/probe10/kernels/$1.metal validation/h100/probe10/specs/$1.toml ;;
    *) echo validation/crosscheck/$1.metal validation/crosscheck/$1.toml ;;
  esac
}
one() { # setting kernel
  read -r k s <<< "$(src $2)"
  mb=$(env $1 $B run $k --spec $s --model $M --out $T/out-$1-$2 2>&1 | grep -oE "[0-9.]+ MB to and from DRAM" | cut -d' ' -f1)
  echo "$1 $2 $mb" > $T/line-$1-$2
  rm -rf $T/out-$1-$2
}
SETTINGS="MS_NONE=1 MS_DONE=1 MS_START=1 MS_EXTRA=500 MS_EXTRA=1000 MS_EXTRA=2000"
KERNELS="fo_pure_o0 io_pure_o0 fo_pure io_pure float_ops int_ops"
for s in $SETTINGS; do
  for k in $KERNELS; do
    one $s $k &
    while [ $(jobs -r | wc -l) -ge 2 ]; do sleep 1; done
  done
done
wait
for s in $SETTINGS; do for k in $KERNELS; do cat $T/line-$s-$k; done; done
rm -rf $T
