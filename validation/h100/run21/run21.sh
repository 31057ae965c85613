# Run 21 on the device (the `run` tool), from the repository root: the suite's
# cross-check and every program's SASS, with the release binary built from the tree
# of the time carried as out/xcheck32/metalsim.
RUN=21 XCHECK=32 SASS=1 bash validation/h100/suite_run.sh
