# Run 17 on the device (the `run` tool), from the repository root: the suite's cross-check,
# with the release binary built from the tree of the time carried as
# out/xcheck28/metalsim.
RUN=17 XCHECK=28 bash validation/h100/suite_run.sh
