//! `metalsim models`: list the built-in GPU models.

use clap::{Args, ValueEnum};

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

/// Runs `metalsim models`.
pub fn models(args: &ModelsArgs) -> Result<(), Failure> {
    let mut rows = Vec::new();
    for name in metalsim_models::builtin_names() {
        let g = metalsim_models::builtin(name)?;
        rows.push(g);
    }
    match args.format {
        Format::Json => {
            let list: Vec<serde_json::Value> = rows
                .iter()
                .map(|g| {
                    serde_json::json!({
                        "name": g.name,
                        "display_name": g.display_name,
                        "cores": g.cores,
                        "clock_mhz": g.clock_mhz,
                        "peak_fp32_tflops": g.peak_fp32_tflops(),
                        "dram_gb_s": g.memory.dram.bandwidth_gb_s,
                    })
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&list)?);
        }
        Format::Text => {
            println!(
                "{:<10} {:<28} {:>5} {:>9} {:>12} {:>10}",
                "name", "GPU", "cores", "clock", "FP32 TFLOPS", "DRAM GB/s"
            );
            for g in rows {
                println!(
                    "{:<10} {:<28} {:>5} {:>5} MHz {:>12.2} {:>10.1}",
                    g.name,
                    g.display_name,
                    g.cores,
                    g.clock_mhz,
                    g.peak_fp32_tflops(),
                    g.memory.dram.bandwidth_gb_s
                );
            }
        }
    }
    Ok(())
}
