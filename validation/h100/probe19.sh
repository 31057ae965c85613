# Probe 19 on the device (the `run` tool), from the repository root, with the release
# binary carried as out/xcheck34/metalsim (commit f8b24d7's) and the instrumented
# programs as out/p19/<kernel>_<K>.cu: probe 18's records with the second clock read
# after store K (in source order) instead of the first, for every K of `float_ops` (1 to
# 18) and `int_ops` (1 to 23). They were made here with
#   metalsim emit cuda validation/crosscheck/<kernel>.metal \
#       --spec validation/crosscheck/<kernel>.toml --out /tmp/p19e/<kernel>
#   python3 validation/h100/probe18/instrument.py /tmp/p19e/<kernel>/kernel.cu \
#       out/p19/<kernel>_<K>.cu <K>
# Each runs on the inputs `metalsim emit cuda --out` writes on the device (2 warm-up and
# 5 timed launches; the records are of the last), and a few are profiled for DRAM bytes
# (how much the records changed the program's merges).
set -x
export PATH=$PWD/out/xcheck34:$PATH
O=$OUT/probe19
mkdir -p $O /tmp/p19
for k in float_ops int_ops; do
  metalsim emit cuda validation/crosscheck/$k.metal --spec validation/crosscheck/$k.toml \
    --out /tmp/p19/$k > /dev/null
done
ls out/p19/*.cu | xargs -P 16 -I{} sh -c \
  'b=$(basename {} .cu); nvcc -O3 -arch=sm_90 --fmad=false -std=c++17 -w -o /tmp/p19/bin_$b {}'
for f in out/p19/*.cu; do
  b=$(basename $f .cu)
  d=/tmp/p19/${b%_*}
  /tmp/p19/bin_$b $d --warmup 2 --repeats 5 > $O/$b-run.txt 2>&1
  gzip -c $d/probe.bin > $O/$b.probe.bin.gz
done
for b in float_ops_1 float_ops_6 float_ops_12 float_ops_18 int_ops_1 int_ops_4 int_ops_12 int_ops_23; do
  ncu --csv --print-units base --clock-control none \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
      /tmp/p19/bin_$b /tmp/p19/${b%_*} --once > $O/$b-ncu.csv 2>&1
done
cd $OUT && tar czf probe19.tgz probe19 && rm -rf $OUT/probe19
ls -la $OUT
