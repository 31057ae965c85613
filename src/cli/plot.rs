//! `metalsim plot`: draw a trace file's plots (PNG and SVG).

use std::path::PathBuf;

use clap::Args;
use metalsim_traces::Trace;

use super::Failure;

/// Arguments of `metalsim plot`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// The trace file (`metalsim run --trace FILE`).
    pub trace: PathBuf,
    /// The folder to draw into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Runs `metalsim plot`: occupancy, bandwidth per level, SIMD efficiency, issue mix, core
/// heat map and per-line cost, each as PNG and SVG.
pub fn plot(args: &PlotArgs) -> Result<(), Failure> {
    let trace = Trace::read_file(&args.trace)?;
    for p in metalsim_traces::write_plots(&trace, &args.out)? {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}
