# Probe 22 on the device (the `run` tool), from the repository root, with the release
# binary carried as out/xcheck35/metalsim (commit df8b0ef's) and the instrumented
# programs as out/p22/<kernel>_t.cu: probe 18's records (every warp's SM clock at entry,
# after its first store and after its last, and its SM) for probe 10's store kernels
# `io_pure`, `fo_pure`, `fo_out` and `fo_sincos_first`, to test the claim that the
# model's DRAM bytes follow from how many warps are between their first and last store
# (docs/validation.md, "Probe 22"). Each kernel is translated with `metalsim emit cuda`
# (which writes its inputs), instrumented here beforehand with
# `python3 validation/h100/probe18/instrument.py /tmp/p22/<k>/kernel.cu out/p22/<k>_t.cu`
# from the same command's output, and run on those inputs; Nsight Compute gives the
# DRAM bytes of the plain and the instrumented program.
set -x
export PATH=$PWD/out/xcheck35:$PATH
O=$OUT/probe22
mkdir -p $O /tmp/p22
P=validation/h100/probe10
M="dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
for k in io_pure fo_pure fo_out fo_sincos_first; do
  d=/tmp/p22/$k
  metalsim emit cuda $P/kernels/$k.metal --spec $P/specs/$k.toml --out $d > /dev/null
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -o $d/kernel $d/kernel.cu
  nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -o $d/kernel_t out/p22/${k}_t.cu
  $d/kernel_t $d --warmup 2 --repeats 5 > $O/$k-run.txt 2>&1
  gzip -c $d/probe.bin > $O/$k.probe.bin.gz
  ncu --csv --print-units base --clock-control none --metrics $M $d/kernel $d --once > $O/$k-plain-ncu.csv 2>&1
  ncu --csv --print-units base --clock-control none --metrics $M $d/kernel_t $d --once > $O/$k-ncu.csv 2>&1
done
cd $OUT && tar czf probe22.tgz probe22 && rm -rf $OUT/probe22
ls -la $OUT
