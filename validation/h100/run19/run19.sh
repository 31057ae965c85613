# Run 19 on the device (the `run` tool), from the repository root: the suite's
# cross-check and every program's SASS, with the release binary built from the tree
# of the time carried as out/xcheck30/metalsim.
RUN=19 XCHECK=30 SASS=1 bash validation/h100/suite_run.sh
