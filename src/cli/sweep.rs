//! `metalsim sweep`: run every combination of threadgroup sizes, template arguments,
//! function constants, spec files and models on the same inputs, check that their outputs
//! agree, and rank them; or write those runs as shell commands for a cluster
//! (`--emit-jobs`) and join their folders afterwards (`sweep merge`).
//!
//! Every variant runs as its own `metalsim run` process (the same pipeline, the same
//! report), from a folder holding its spec, so that a sweep on one machine and the same
//! sweep spread over many give the same folders and so the same table.

pub mod plan;
pub mod plot;
pub mod table;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use clap::{Args, Subcommand, ValueEnum};
use metalsim_launch::LaunchSpec;

use super::{CompileArgs, Failure};
use plan::{BaseSpec, Variant, Vary};

/// How the table is printed.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns.
    #[default]
    Text,
    /// A JSON array, one object per variant.
    Json,
    /// CSV, one column per varied parameter.
    Csv,
}

/// Arguments of `metalsim sweep`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SweepArgs {
    /// `merge DIR...`: join the folders of a sweep run elsewhere.
    #[command(subcommand)]
    pub merge: Option<MergeCommand>,
    /// The kernel file (.metal).
    pub kernel: Option<PathBuf>,
    /// The launch spec; several, comma-separated, make the spec a varied parameter (one
    /// kernel per spec, say: naive and tiled).
    #[arg(long, value_delimiter = ',')]
    pub spec: Vec<PathBuf>,
    /// `KEY=V1,V2,...`: a parameter to vary: `threadgroup` (`8x8`), `template.NAME` or
    /// `constants.NAME`. Repeat for a cartesian product.
    #[arg(long, value_name = "KEY=V1,V2")]
    pub vary: Vec<String>,
    /// GPU models, comma-separated (see `metalsim models`).
    #[arg(long, value_delimiter = ',', default_value = "m1")]
    pub model: Vec<String>,
    /// The folder that gets one folder per variant (spec, report, outputs, log).
    #[arg(long, value_name = "DIR", default_value = "sweep-out")]
    pub out: PathBuf,
    /// Instead of running, write one `metalsim run` command per variant into FILE (for
    /// GNU parallel or a Slurm array); join the results with `sweep merge DIR`.
    #[arg(long, value_name = "FILE")]
    pub emit_jobs: Option<PathBuf>,
    /// The program the emitted commands call.
    #[arg(long, value_name = "PROGRAM", default_value = "metalsim")]
    pub program: String,
    /// Variants run at once (default: the machine's cores).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Shared with `merge`.
    #[command(flatten)]
    pub output: OutputArgs,
    /// Compiler options, passed on to every run.
    #[command(flatten)]
    pub compile: CompileArgs,
}

/// How the results are shown (sweep and merge).
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// `text` (default), `json` or `csv`.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Where the plot goes (default: `DIR/sweep.png`, the first folder's for merge).
    #[arg(long, value_name = "FILE.png")]
    pub plot: Option<PathBuf>,
}

/// `sweep merge`.
#[derive(Subcommand, Debug)]
pub enum MergeCommand {
    /// Join variant folders (or folders of them) into the sweep's table and plot.
    Merge(MergeArgs),
}

/// Arguments of `metalsim sweep merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Sweep folders, or single variants' folders.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// How to show the results.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs `metalsim sweep`.
pub fn sweep(args: &SweepArgs) -> Result<(), Failure> {
    if let Some(MergeCommand::Merge(m)) = &args.merge {
        return report(&m.dirs, &m.output, &m.dirs[0]);
    }
    let Some(kernel) = &args.kernel else {
        return Err(Failure::BadInput(
            "sweep needs a kernel file (or `sweep merge DIR...`)".into(),
        ));
    };
    if !kernel.is_file() {
        return Err(Failure::BadInput(format!(
            "cannot read {}",
            kernel.display()
        )));
    }
    if args.spec.is_empty() {
        return Err(Failure::BadInput("sweep needs --spec FILE".into()));
    }
    for m in &args.model {
        metalsim_models::load(m)?;
    }
    let specs = args
        .spec
        .iter()
        .map(|p| {
            Ok(BaseSpec {
                path: p.clone(),
                spec: LaunchSpec::from_file(p)?,
            })
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let varies = args
        .vary
        .iter()
        .map(|v| Vary::parse(v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::BadInput)?;
    let variants = plan::variants(&specs, &varies, &args.model).map_err(Failure::BadInput)?;
    let out = std::path::absolute(&args.out)?;
    let kernel = std::path::absolute(kernel)?;
    let compile = compile_flags(&args.compile);
    let mut commands = Vec::new();
    for v in &variants {
        let dir = out.join(&v.info.name);
        prepare(v, &dir)?;
        commands.push(plan::run_arguments(&kernel, &dir, &v.info.model, &compile));
    }
    if let Some(file) = &args.emit_jobs {
        let text: String = commands
            .iter()
            .map(|c| plan::shell_line(&args.program, c) + "\n")
            .collect();
        std::fs::write(file, text)
            .map_err(|e| Failure::BadInput(format!("cannot write {}: {e}", file.display())))?;
        eprintln!(
            "wrote {} commands to {}; run them, then `metalsim sweep merge {}`",
            commands.len(),
            file.display(),
            out.display()
        );
        return Ok(());
    }
    run_all(&variants, &commands, &out, args.jobs)?;
    report(std::slice::from_ref(&out), &args.output, &out)
}

/// The compiler flags as `metalsim run` takes them.
fn compile_flags(c: &CompileArgs) -> Vec<OsString> {
    let mut f: Vec<OsString> = Vec::new();
    for i in &c.include {
        f.push("-I".into());
        f.push(std::path::absolute(i).unwrap_or_else(|_| i.clone()).into());
    }
    for d in &c.define {
        f.push("-D".into());
        f.push(d.into());
    }
    if c.unoptimized {
        f.push("--no-opt".into());
    }
    if let Some(v) = c.metal_version {
        f.push("--metal-version".into());
        f.push(v.to_string().into());
    }
    f
}

/// Writes the variant's folder: `spec.toml` and `variant.json`, clearing what an earlier
/// run left there.
fn prepare(v: &Variant, dir: &Path) -> Result<(), Failure> {
    let fail = |p: &Path, e: std::io::Error| Failure::BadInput(format!("{}: {e}", p.display()));
    std::fs::create_dir_all(dir).map_err(|e| fail(dir, e))?;
    for stale in ["report.json", "run.log"] {
        let p = dir.join(stale);
        if p.exists() {
            std::fs::remove_file(&p).map_err(|e| fail(&p, e))?;
        }
    }
    let spec = dir.join("spec.toml");
    std::fs::write(&spec, v.spec.to_toml()).map_err(|e| fail(&spec, e))?;
    let info = dir.join("variant.json");
    let json = serde_json::to_string_pretty(&v.info)?;
    std::fs::write(&info, json + "\n").map_err(|e| fail(&info, e))?;
    Ok(())
}

/// Runs every variant as a `metalsim run` process, `jobs` at a time, each one's output in
/// its folder's `run.log`. A failed run is not an error here: the table flags it.
fn run_all(
    variants: &[Variant],
    commands: &[Vec<OsString>],
    out: &Path,
    jobs: Option<usize>,
) -> Result<(), Failure> {
    let exe = std::env::current_exe()?;
    let jobs = jobs
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .clamp(1, variants.len().max(1));
    eprintln!(
        "running {} variants, {jobs} at a time, in {}",
        variants.len(),
        out.display()
    );
    let next = Mutex::new(0usize);
    let spawn_error: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap_or_else(|p| p.into_inner());
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some(v) = variants.get(i) else { break };
                    let dir = out.join(&v.info.name);
                    let result = Command::new(&exe).args(&commands[i]).output();
                    match result {
                        Ok(o) => {
                            let mut log = o.stderr;
                            log.extend_from_slice(&o.stdout);
                            let _ = std::fs::write(dir.join("run.log"), log);
                            eprintln!(
                                "{} {}",
                                if o.status.success() { "done" } else { "FAILED" },
                                v.info.name
                            );
                        }
                        Err(e) => {
                            *spawn_error.lock().unwrap_or_else(|p| p.into_inner()) =
                                Some(format!("cannot start {}: {e}", exe.display()));
                        }
                    }
                }
            });
        }
    });
    match spawn_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(Failure::BadInput(e)),
        None => Ok(()),
    }
}

/// Reads the variant folders under `dirs` and prints the table; draws the plot.
fn report(dirs: &[PathBuf], output: &OutputArgs, plot_dir: &Path) -> Result<(), Failure> {
    let loaded = table::load(dirs).map_err(Failure::BadInput)?;
    let rows = table::rows(&loaded);
    match output.format {
        Format::Text => print!("{}", table::to_text(&rows)),
        Format::Json => println!("{}", table::to_json(&rows)),
        Format::Csv => print!("{}", table::to_csv(&rows).map_err(Failure::BadInput)?),
    }
    let png = output
        .plot
        .clone()
        .unwrap_or_else(|| plot_dir.join("sweep.png"));
    let mut kernels: Vec<String> = Vec::new();
    for l in &loaded {
        if let Ok(r) = &l.report
            && !kernels.contains(&r.kernel)
        {
            kernels.push(r.kernel.clone());
        }
    }
    let title = format!("sweep of {}: simulated time", kernels.join(", "));
    match plot::draw(&rows, &title, &png) {
        Ok(()) => eprintln!("wrote {}", png.display()),
        Err(e) => eprintln!("no plot: {e}"),
    }
    Ok(())
}
