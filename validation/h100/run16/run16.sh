# Run 16 on the device (the `run` tool), from the repository root: the suite's cross-check,
# with the release binary built from the tree of the time carried as
# out/xcheck27/metalsim.
RUN=16 XCHECK=27 bash validation/h100/suite_run.sh
