//! `metalsim models`: list the built-in GPU models.

use clap::{Args, ValueEnum};
use metalsim_models::Gpu;

use super::Failure;

/// Output format.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// A table for people.
    #[default]
    Text,
    /// JSON for programs.
    Json,
}

/// Arguments of `metalsim models`.
#[derive(Args, Debug)]
pub struct ModelsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// One model as JSON.
fn to_json(g: &Gpu) -> serde_json::Value {
    serde_json::json!({
        "name": g.name,
        "display_name": g.display_name,
        "family": g.family,
        "cores": g.cores,
        "clock_mhz": g.clock_mhz,
        "peak_fp32_tflops": g.peak_fp32_tflops(),
        "dram_gb_s": g.memory.dram.bandwidth_gb_s,
        "slc_bytes": g.memory.slc.size_bytes,
        "l2_bytes": g.memory.l2.size_bytes,
        "dynamic_caching": g.occupancy.dynamic_caching,
    })
}

/// Runs `metalsim models`.
pub fn models(args: &ModelsArgs) -> Result<(), Failure> {
    let mut rows = Vec::new();
    for name in metalsim_models::builtin_names() {
        rows.push(metalsim_models::builtin(name)?);
    }
    match args.format {
        Format::Json => {
            let list: Vec<serde_json::Value> = rows.iter().map(to_json).collect();
            println!("{}", serde_json::to_string_pretty(&list)?);
        }
        Format::Text => {
            println!(
                "{:<9} {:<31} {:<7} {:>5} {:>9} {:>11} {:>9} {:>7}",
                "name", "GPU", "family", "cores", "clock", "FP32 TFLOPS", "DRAM GB/s", "SLC MB"
            );
            for g in rows {
                println!(
                    "{:<9} {:<31} {:<7} {:>5} {:>5} MHz {:>11.2} {:>9.1} {:>7}",
                    g.name,
                    g.display_name,
                    g.family,
                    g.cores,
                    g.clock_mhz,
                    g.peak_fp32_tflops(),
                    g.memory.dram.bandwidth_gb_s,
                    g.memory.slc.size_bytes >> 20
                );
            }
        }
    }
    Ok(())
}
