# The probes before run 7 (the `run` tool, from the repository root, with the binary of
# HEAD carried as out/xcheck16/metalsim). Committed as: matrix_probe.txt, ecc_probe.txt,
# device-probe7.txt; sass/sr0.sass.txt as sass/simd_reduce-integer-address.sass.txt,
# sass/sr1.sass.txt as sass/simd_reduce-pointer-address.sass.txt, sass/gemm_simdgroup.sass.txt
# as sass/gemm_simdgroup-integer-address.sass.txt (sr2, a third variant, did not come back).
set -x
export PATH=$PWD/out/xcheck16:$PATH
V=validation/h100
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv > $OUT/device-probe7.txt 2>&1
nvcc -O3 -arch=sm_90 --fmad=false -o /tmp/mp $V/matrix_probe.cu && /tmp/mp > $OUT/matrix_probe.txt 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/ecc $V/ecc_probe.cu && ncu --csv --print-units base --cache-control all --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum /tmp/ecc > $OUT/ecc_probe.txt 2>&1
mkdir -p $OUT/sass
metalsim emit cuda validation/crosscheck/simd_reduce.metal --spec validation/crosscheck/simd_reduce.toml > $OUT/sass/sr0.cu
sed 's/v13 = v1 + (uint64_t)v12 \* 4ull;/v13 = (uint64_t)((float*)v1 + v12);/' $OUT/sass/sr0.cu > $OUT/sass/sr1.cu
sed 's/v13 = v1 + (uint64_t)v12 \* 4ull;/v13 = (uint64_t)((float*)v1 + v12); __builtin_assume(v13 != 0);/; s/((float\*)(v13))\[0\] = v6;/((float*)v1)[v12] = v6;/' $OUT/sass/sr0.cu > $OUT/sass/sr2.cu
for i in 0 1 2; do nvcc -O3 -arch=sm_90 --fmad=false -cubin -o /tmp/sr$i.cubin $OUT/sass/sr$i.cu && cuobjdump -sass /tmp/sr$i.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $OUT/sass/sr$i.sass.txt; done
metalsim emit cuda validation/crosscheck/gemm_simdgroup.metal --spec validation/crosscheck/gemm_simdgroup.toml > /tmp/gs.cu && nvcc -O3 -arch=sm_90 --fmad=false -cubin -o /tmp/gs.cubin /tmp/gs.cu && cuobjdump -sass /tmp/gs.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $OUT/sass/gemm_simdgroup.sass.txt
ls -la $OUT $OUT/sass
