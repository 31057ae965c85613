# Run 22 on the device (the `run` tool), from the repository root: the suite's
# cross-check (its programs are run 20's, so no SASS), with the release binary built from the tree
# of the time carried as out/xcheck33/metalsim.
RUN=22 XCHECK=33 bash validation/h100/suite_run.sh
