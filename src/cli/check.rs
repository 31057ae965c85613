//! `metalsim check`: parse and type-check, report diagnostics.

use std::path::PathBuf;

use clap::Args;
use metalsim_isa::ParamKind;

use super::{CompileArgs, Failure, load_module};

/// Arguments of `metalsim check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The kernel file (.metal).
    pub kernel: PathBuf,
    /// Also print every kernel with its bindings.
    #[arg(long)]
    pub list_kernels: bool,
    /// Compiler options.
    #[command(flatten)]
    pub compile: CompileArgs,
}

/// Runs `metalsim check`.
pub fn check(args: &CheckArgs) -> Result<(), Failure> {
    let (module, _) = load_module(&args.kernel, &args.compile)?;
    if args.list_kernels {
        for f in &module.functions {
            println!("{}", f.name);
            for p in &f.params {
                if let Some(n) = p.texture_index() {
                    println!("  [[texture({n})]] {} : {}", p.name, p.type_name);
                    continue;
                }
                if let Some(n) = p.sampler_index() {
                    println!("  [[sampler({n})]] {} : sampler", p.name);
                    continue;
                }
                let what = match p.kind {
                    ParamKind::Buffer => format!(
                        "{} {}{}{}",
                        p.space.name(),
                        if p.readonly && p.space.name() == "device" {
                            "const "
                        } else {
                            ""
                        },
                        p.type_name,
                        if p.is_ref { "&" } else { "*" }
                    ),
                    ParamKind::Threadgroup => format!("threadgroup {}*", p.type_name),
                };
                println!("  [[{}({})]] {} : {}", p.kind.name(), p.index, p.name, what);
            }
        }
    } else {
        let n = module.functions.len();
        eprintln!(
            "{}: ok ({n} kernel{})",
            args.kernel.display(),
            if n == 1 { "" } else { "s" }
        );
    }
    Ok(())
}
