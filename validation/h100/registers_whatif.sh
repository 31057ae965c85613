#!/usr/bin/env bash
# What the two tiled GEMMs take on the `h100` model at the occupancy the H100's programs
# have (docs/validation.md, "Where the model is still wrong", item 3). ptxas gave them
# 62 and 39 registers per thread (run 14's registers column), which lets an SM hold 4
# threadgroups of 256 threads and 24 of 64; the simulator counts 16 registers per thread.
# Since run 16 gemm_tiled8's program has 32 registers, which limit it to nothing, so its
# case here is run 14's and run 15's program only.
# The model's register file is lowered so that its 16 registers per thread give the same
# limits (16 x 4 bytes x 1024 threads, x 1536), and nothing else changes.
# Usage: bash validation/h100/registers_whatif.sh [METALSIM]   (no GPU needed)
set -euo pipefail
cd "$(dirname "$0")/../.."
metalsim=${1:-target/release/metalsim}
tmp=$(mktemp -d)
for case in "gemm_tiled16 65536" "gemm_tiled8 98304"; do
  set -- $case
  sed "s/^register_file_bytes = 262144$/register_file_bytes = $2/" models/chips/h100.toml > "$tmp/h100-$1.toml"
  grep -q "^register_file_bytes = $2$" "$tmp/h100-$1.toml"
  echo "== $1, register file $2 bytes"
  "$metalsim" run "validation/crosscheck/$1.metal" --spec "validation/crosscheck/$1.toml" \
    --model "$tmp/h100-$1.toml" --out "$tmp/$1" 2>"$tmp/$1.log" | grep -E "^  (time|occupancy) "
done
rm -rf "$tmp"
