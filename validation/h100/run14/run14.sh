# Run 14 on the device (the `run` tool), from the repository root: the suite's
# cross-check, with the release binary built from the tree of the time carried as
# out/xcheck22/metalsim.
RUN=14 XCHECK=22 bash validation/h100/suite_run.sh
