//! `metalsim export`: a trace file's tables as CSV.

use std::path::PathBuf;

use clap::Args;
use metalsim_traces::Trace;

use super::Failure;

/// Arguments of `metalsim export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The trace file (`metalsim run --trace FILE`).
    pub trace: PathBuf,
    /// The folder to write into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Runs `metalsim export`: `bins.csv` (the binned counters), `cores.csv` (per core per
/// bin), `lines.csv` and `instructions.csv` (see docs/trace.md).
pub fn export(args: &ExportArgs) -> Result<(), Failure> {
    let trace = Trace::read_file(&args.trace)?;
    for p in metalsim_traces::write_csv(&trace, &args.out)? {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}
