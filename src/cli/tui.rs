//! `metalsim tui`: explore a trace file in the terminal.

use std::path::PathBuf;

use clap::Args;
use metalsim_traces::Trace;

use super::Failure;

/// Arguments of `metalsim tui`.
#[derive(Args, Debug)]
pub struct TuiArgs {
    /// The trace file to explore (written by `metalsim run ... --trace FILE`).
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
}

/// Reads the trace (a corrupt, truncated, foreign or newer file is bad input, exit 2) and
/// opens the terminal UI on it.
pub fn tui(args: &TuiArgs) -> Result<(), Failure> {
    let trace = Trace::read_file(&args.trace).map_err(|e| Failure::BadInput(e.to_string()))?;
    metalsim_tui::run(trace).map_err(|e| Failure::BadInput(format!("terminal UI: {e}")))
}
