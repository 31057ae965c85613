//! `metalsim asm`: print the ISA.

use std::path::PathBuf;

use clap::Args;

use super::{CompileArgs, Failure, load_module};

/// Arguments of `metalsim asm`.
#[derive(Args, Debug)]
pub struct AsmArgs {
    /// The kernel file (.metal).
    pub kernel: PathBuf,
    /// Print only this kernel.
    #[arg(long)]
    pub kernel_name: Option<String>,
    /// Compiler options.
    #[command(flatten)]
    pub compile: CompileArgs,
}

/// Runs `metalsim asm`.
pub fn asm(args: &AsmArgs) -> Result<(), Failure> {
    let (mut module, _) = load_module(&args.kernel, &args.compile)?;
    if let Some(name) = &args.kernel_name {
        if module.function(name).is_none() {
            return Err(Failure::BadInput(format!(
                "no kernel named `{name}` in {}",
                args.kernel.display()
            )));
        }
        module.functions.retain(|f| &f.name == name);
    }
    print!("{module}");
    Ok(())
}
