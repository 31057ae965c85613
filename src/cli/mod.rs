//! Subcommands, one module each, and what they share: loading and compiling a kernel file.

pub mod asm;
pub mod check;
pub mod crosscheck;
pub mod emit;
pub mod export;
pub mod models;
pub mod plot;
pub mod run;
pub mod sweep;
pub mod tui;
pub mod validate;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use metalsim_frontend::{
    CompileOptions, FileId, SourceMap, SpecValue, Specialization, compile, has_errors, render,
};
use metalsim_isa::Module;

/// Runs Metal Shading Language compute kernels on modeled Apple GPUs.
#[derive(Parser, Debug)]
#[command(name = "metalsim", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compile a kernel and simulate one dispatch described by a launch spec.
    Run(run::RunArgs),
    /// Parse and type-check a kernel file; print diagnostics only.
    Check(check::CheckArgs),
    /// Print the ISA a kernel file lowers to.
    Asm(asm::AsmArgs),
    /// List the built-in GPU models.
    Models(models::ModelsArgs),
    /// Reproduce published measurements of Apple GPUs and print the error of each.
    Validate(validate::ValidateArgs),
    /// Translate a kernel for another GPU (`emit cuda`: CUDA C++ from the ISA).
    Emit(emit::EmitArgs),
    /// Run a suite of kernels on a real GPU (or read a measurement file) and compare it
    /// with the simulation: outputs, time and counters, as a table and a plot.
    Crosscheck(crosscheck::CrosscheckArgs),
    /// Run a kernel over combinations of threadgroup sizes, template arguments, function
    /// constants and models; check that the outputs agree; rank the variants.
    Sweep(sweep::SweepArgs),
    /// Explore a trace file in the terminal: overview, timeline, source and ISA costs, and
    /// one recorded SIMD-group step by step.
    Tui(tui::TuiArgs),
    /// Draw a trace file's plots (occupancy, bandwidth, SIMD efficiency, issue mix, core
    /// heat map, per-line cost) as PNG and SVG.
    Plot(plot::PlotArgs),
    /// Write a trace file's binned counters and per-line and per-instruction tables as CSV.
    Export(export::ExportArgs),
}

/// How a command failed.
#[derive(Debug)]
pub enum Failure {
    /// Bad input: exit code 2. The message (possibly empty when diagnostics were already
    /// printed) goes to stderr.
    BadInput(String),
    /// The kernel faulted while running: exit code 1 (already reported).
    KernelFault,
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::BadInput(e.to_string())
    }
}

/// Compiler options shared by every command that reads MSL.
#[derive(Args, Debug, Clone, Default)]
pub struct CompileArgs {
    /// Add a folder to the `#include "..."` search path.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Define a macro: `-D NAME` or `-D NAME=VALUE`.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Run the kernel as lowered, without the ISA optimizer.
    #[arg(long = "no-opt")]
    pub unoptimized: bool,
    /// The Metal language version `__METAL_VERSION__` says: `3.2` (or `320`); 3.2 when not
    /// given.
    #[arg(long = "metal-version", value_name = "VERSION", value_parser = parse_metal_version)]
    pub metal_version: Option<u32>,
}

/// `3.2` or `320` → 320, the value of `__METAL_VERSION__`.
fn parse_metal_version(s: &str) -> Result<u32, String> {
    let v = match s.split_once('.') {
        Some((major, minor)) => match (major.parse::<u32>(), minor.parse::<u32>()) {
            (Ok(major), Ok(minor)) if minor < 10 => major * 100 + minor * 10,
            _ => u32::MAX,
        },
        None => s.parse::<u32>().unwrap_or(u32::MAX),
    };
    if (100..=499).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "`{s}` is not a Metal language version (write it as `3.2` or `320`)"
        ))
    }
}

impl CompileArgs {
    fn options(&self) -> CompileOptions {
        CompileOptions {
            include_dirs: self.include.clone(),
            defines: self
                .define
                .iter()
                .map(|d| match d.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (d.clone(), None),
                })
                .chain(
                    self.metal_version
                        .map(|v| ("__METAL_VERSION__".to_string(), Some(v.to_string()))),
                )
                .collect(),
            specialization: Default::default(),
            unoptimized: self.unoptimized,
        }
    }
}

/// Reads and compiles a kernel file, printing its diagnostics to stderr. Fails (exit 2)
/// when it has errors.
pub fn load_module(path: &Path, args: &CompileArgs) -> Result<(Module, SourceMap), Failure> {
    load_module_specialized(path, args, Specialization::default())
}

/// A launch spec's value as the frontend takes it.
fn spec_value(v: &metalsim_launch::SpecValue) -> SpecValue {
    match v {
        metalsim_launch::SpecValue::Bool(b) => SpecValue::Bool(*b),
        metalsim_launch::SpecValue::Int(i) => SpecValue::Int(*i),
        metalsim_launch::SpecValue::Float(f) => SpecValue::Float(*f),
        metalsim_launch::SpecValue::Type(t) => SpecValue::Type(t.clone()),
        metalsim_launch::SpecValue::List(items) => {
            SpecValue::List(items.iter().map(spec_value).collect())
        }
    }
}

/// The function constant values and template arguments a launch spec gives.
pub fn specialization(spec: &metalsim_launch::LaunchSpec) -> Specialization {
    Specialization {
        function_constants: Some(
            spec.constants
                .iter()
                .map(|(k, v)| (k.clone(), spec_value(v)))
                .collect(),
        ),
        kernel_template: Some((
            spec.kernel.clone(),
            spec.template
                .iter()
                .map(|(k, v)| (k.clone(), spec_value(v)))
                .collect(),
        )),
    }
}

/// [`load_module`] with function constant values and template arguments.
pub fn load_module_specialized(
    path: &Path,
    args: &CompileArgs,
    specialization: Specialization,
) -> Result<(Module, SourceMap), Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::BadInput(format!("cannot read {}: {e}", path.display())))?;
    let mut sources = SourceMap::new();
    let id = sources.add(path.display().to_string(), Some(path), text);
    let mut options = args.options();
    options.specialization = specialization;
    match compile_reporting(&mut sources, id, &options) {
        Ok(m) => Ok((m, sources)),
        Err(n) => Err(Failure::BadInput(format!(
            "{} has {n} error{}",
            path.display(),
            if n == 1 { "" } else { "s" }
        ))),
    }
}

/// Compiles a file already in `sources`, printing its diagnostics to stderr; the module,
/// or the number of errors.
pub fn compile_reporting(
    sources: &mut SourceMap,
    id: FileId,
    options: &CompileOptions,
) -> Result<Module, usize> {
    let (module, diags) = compile(sources, id, options);
    if !diags.is_empty() {
        eprint!(
            "{}",
            render(&diags, sources, std::io::stderr().is_terminal())
        );
    }
    match module {
        Some(m) if !has_errors(&diags) => Ok(m),
        _ => Err(diags.iter().filter(|d| d.is_error()).count()),
    }
}
