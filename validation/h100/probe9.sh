# The probe before run 10 (the `run` tool, from the repository root, with the release
# binary of the tree of the time carried as out/xcheck18/metalsim). Committed as:
# partial_probe.txt, device-probe9.txt, probe9/*.
set -x
export PATH=$PWD/out/xcheck18:$PATH
V=validation/h100
O=$OUT/probe9
mkdir -p $O/sass
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,ecc.mode.current --format=csv; nvcc --version | tail -2; } > $O/device-probe9.txt 2>&1
# What bounds the L2's room for partly written sectors (partial_probe.cu's header).
nvcc -O3 -arch=sm_90 -o /tmp/pp $V/partial_probe.cu > $O/partial_probe.nvcc.txt 2>&1
ncu --csv --print-units base --cache-control all --clock-control none \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum /tmp/pp > $O/partial_probe.txt 2>&1
# int_ops and float_ops at other grid sizes (outputs of 12.6, 25.2 and 50.3 MB; 17.8,
# 35.7 and 71.3 MB), beside simd_reduce, through the cross-check.
mkdir -p /tmp/k9 && cp validation/crosscheck/int_ops.* validation/crosscheck/float_ops.* validation/crosscheck/simd_reduce.* /tmp/k9/
for f in 4 2; do
  n=$((524288 / f))
  sed -e "s/524288/$n/g" -e "s/12582912/$((12582912 / f))/" /tmp/k9/int_ops.toml > "/tmp/k9/int_ops@1_$f.toml"
  sed -e "s/524288/$n/g" -e "s/6291456/$((6291456 / f))/" -e "s/2097152/$((2097152 / f))/" -e "s/1572864/$((1572864 / f))/" /tmp/k9/float_ops.toml > "/tmp/k9/float_ops@1_$f.toml"
done
sed -e "s/524288/1048576/g" -e "s/6291456/12582912/" -e "s/2097152/4194304/" -e "s/1572864/3145728/" /tmp/k9/float_ops.toml > "/tmp/k9/float_ops@2.toml"
cp /tmp/k9/*.toml $O/
metalsim crosscheck /tmp/k9 --model models/chips/h100.toml --out /tmp/xc9 > $O/crosscheck9.log 2>&1
cp /tmp/xc9/table.md /tmp/xc9/results.json /tmp/xc9/measured.json $O/ 2>/dev/null
mkdir -p $O/ncu && for d in /tmp/xc9/work/*/; do n=$(basename $d); cp $d/ncu.csv "$O/ncu/$n.csv"; done
for k in int_ops float_ops; do
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/$k.cubin /tmp/xc9/work/$k/kernel.cu && cuobjdump -sass /tmp/$k.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/sass/$k.sass.txt
done
# simd_reduce's buffer address pinned in the entry block by an empty asm that reads and
# writes it ("+l"), by a self-move, and by a null check that traps.
K=/tmp/xc9/work/simd_reduce/kernel.cu
cp $K $O/sass/sr_plain.cu
sed 's/v1 = (uint64_t)ms_buf1;/v1 = (uint64_t)ms_buf1; asm volatile("" : "+l"(v1));/' $K > $O/sass/sr_pin.cu
sed 's/v1 = (uint64_t)ms_buf1;/v1 = (uint64_t)ms_buf1; asm volatile("mov.b64 %0, %0;" : "+l"(v1));/' $K > $O/sass/sr_selfmov.cu
sed 's/v1 = (uint64_t)ms_buf1;/v1 = (uint64_t)ms_buf1; asm volatile("{ .reg .pred p; setp.eq.u64 p, %0, 0; @p trap; }" :: "l"(v1));/' $K > $O/sass/sr_trap.cu
for v in plain pin selfmov trap; do
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -cubin -o /tmp/sr_$v.cubin $O/sass/sr_$v.cu > $O/sass/sr_$v.nvcc.txt 2>&1 && cuobjdump -sass /tmp/sr_$v.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > $O/sass/sr_$v.sass.txt
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -o /tmp/sr_$v $O/sass/sr_$v.cu >> $O/sass/sr_$v.nvcc.txt 2>&1 && ncu --csv --print-units base --clock-control none --metrics smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,gpu__time_duration.sum /tmp/sr_$v /tmp/xc9/work/simd_reduce --once > $O/sass/sr_$v.ncu.csv 2>&1
  /tmp/sr_$v /tmp/xc9/work/simd_reduce --warmup 5 --repeats 50 > $O/sass/sr_$v.timing.txt 2>&1 && cp /tmp/xc9/work/simd_reduce/measurement.json $O/sass/sr_$v.measurement.json
done
find $OUT -size +20M -delete
ls -laR $O
