# Run 23 on the device (the `run` tool), from the repository root: the suite's
# cross-check with every kernel also built with ptxas at -O1 and -O0
# (`--compiler-spread`), with the release binary built from the tree of the time
# carried as out/xcheck34/metalsim.
RUN=23 XCHECK=34 SPREAD=1 bash validation/h100/suite_run.sh
