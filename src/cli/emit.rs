//! `metalsim emit cuda`: CUDA C++ generated from the lowered ISA of a kernel.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use metalsim_crosscheck::{bundle, cuda};
use metalsim_launch::LaunchSpec;

use super::{CompileArgs, Failure, load_module, run::memory_limit};

/// Arguments of `metalsim emit`.
#[derive(Args, Debug)]
pub struct EmitArgs {
    /// The target language.
    #[command(subcommand)]
    pub target: EmitTarget,
}

/// What `metalsim emit` can write.
#[derive(Subcommand, Debug)]
pub enum EmitTarget {
    /// CUDA C++ for an NVIDIA GPU, from the same ISA `metalsim run` simulates.
    Cuda(CudaArgs),
}

/// Arguments of `metalsim emit cuda`.
#[derive(Args, Debug)]
pub struct CudaArgs {
    /// The kernel file (.metal).
    pub kernel: PathBuf,
    /// A launch spec: adds a host `main` that runs this dispatch and times it.
    #[arg(long)]
    pub spec: Option<PathBuf>,
    /// Write `kernel.cu`, the resolved input buffers (`inputs/<binding>.bin` and
    /// `inputs/<name>.npy`) and `launch.json` into this folder instead of printing
    /// (needs `--spec`).
    #[arg(long, value_name = "DIR", requires = "spec")]
    pub out: Option<PathBuf>,
    /// The kernel to translate when the file defines several (without `--spec`).
    #[arg(long)]
    pub kernel_name: Option<String>,
    /// Compiler options.
    #[command(flatten)]
    pub compile: CompileArgs,
}

/// Runs `metalsim emit`.
pub fn emit(args: &EmitArgs) -> Result<(), Failure> {
    let EmitTarget::Cuda(args) = &args.target;
    let (module, _) = load_module(&args.kernel, &args.compile)?;
    let names = || -> String {
        module
            .functions
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(spec_path) = &args.spec else {
        let f = match &args.kernel_name {
            Some(n) => module.function(n),
            None if module.functions.len() == 1 => module.functions.first(),
            None => {
                return Err(Failure::BadInput(format!(
                    "{} defines {}; name one with --kernel-name",
                    args.kernel.display(),
                    if module.functions.is_empty() {
                        "no kernels".to_string()
                    } else {
                        names()
                    }
                )));
            }
        };
        let f = f.ok_or_else(|| {
            Failure::BadInput(format!(
                "no kernel named `{}` in {} (it defines {})",
                args.kernel_name.as_deref().unwrap_or(""),
                args.kernel.display(),
                names()
            ))
        })?;
        print!("{}", cuda::emit_kernel(&module, f)?);
        return Ok(());
    };
    let spec = LaunchSpec::from_file(spec_path)?;
    let f = module.function(&spec.kernel).ok_or_else(|| {
        Failure::BadInput(format!(
            "{}: the spec names kernel `{}`, but {} defines {}",
            spec_path.display(),
            spec.kernel,
            args.kernel.display(),
            names()
        ))
    })?;
    let launch = spec.resolve(f, memory_limit())?;
    match &args.out {
        Some(dir) => {
            let cu = bundle::write_bundle(&module, f, &launch, dir)?;
            eprintln!(
                "wrote {}, {} and {}",
                cu.display(),
                dir.join("inputs").display(),
                dir.join("launch.json").display()
            );
            eprintln!(
                "build: nvcc {} -o {} {}",
                metalsim_crosscheck::gpu::NVCC_FLAGS.join(" "),
                cu.with_extension("").display(),
                cu.display()
            );
            eprintln!("{}", cuda::HOST_USAGE);
        }
        None => print!("{}", cuda::emit_program(&module, f, &launch)?),
    }
    Ok(())
}
