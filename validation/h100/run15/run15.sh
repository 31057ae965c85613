# Run 15 on the device (the `run` tool), from the repository root: the suite's
# cross-check, with the release binary built from the tree of the time carried as
# out/xcheck24/metalsim.
RUN=15 XCHECK=24 bash validation/h100/suite_run.sh
