# Run 7 on the device (the `run` tool), from the repository root, with the release
# binary built from the tree of the time carried as out/xcheck16/metalsim. Everything
# that comes back is tarred (the tool returns a limited number of files).
set -x
export PATH=$PWD/out/xcheck16:$PATH
O=$OUT/run7
mkdir -p $O/ncu $O/sass
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-run7.txt 2>&1
( time metalsim crosscheck validation/ --model models/chips/h100.toml --out $OUT/xc ) > $O/crosscheck.log 2>&1
cp $OUT/xc/table.md $OUT/xc/results.json $OUT/xc/measured.json $OUT/xc/scatter.png $OUT/xc/scatter.svg $O/
for d in $OUT/xc/work/*/; do n=$(basename $d); cp $d/ncu.csv $O/ncu/$n.csv; done
for k in simd_reduce gemm_simdgroup; do
  cuobjdump -sass $OUT/xc/work/$k/kernel | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/sass/$k.sass.txt
done
# A question for later, not part of the run: does an asm barrier keep the buffer's
# address load (the ISA's buffer_addr) out of simd_reduce's one-lane branch?
sed 's/v1 = (uint64_t)ms_buf1;/asm volatile("mov.b64 %0, %1;" : "=l"(v1) : "l"(ms_buf1));/' $OUT/xc/work/simd_reduce/kernel.cu > /tmp/sr3.cu
nvcc -O3 -arch=sm_90 --fmad=false -cubin -o /tmp/sr3.cubin /tmp/sr3.cu && cuobjdump -sass /tmp/sr3.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/sass/simd_reduce-asm-base.sass.txt
cd $OUT && tar czf run7.tgz run7 && rm -rf $OUT/xc $OUT/run7
ls -la $OUT
