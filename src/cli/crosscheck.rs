//! `metalsim crosscheck`: the suite on a real GPU (or a measurement file) against the
//! simulator, as a table, summary statistics and a scatter plot.

use std::path::{Path, PathBuf};

use clap::Args;
use metalsim_crosscheck::report::SimCounters;
use metalsim_crosscheck::{Backend, CrosscheckError, Options, Simulated, run_crosscheck};
use metalsim_isa::Module;
use metalsim_launch::Launch;
use metalsim_models::Gpu;
use metalsim_sim::RunOptions;

use super::{CompileArgs, Failure, load_module, run::memory_limit};

/// Arguments of `metalsim crosscheck`.
#[derive(Args, Debug)]
pub struct CrosscheckArgs {
    /// Folders (searched recursively) of kernels `NAME.metal` with launch specs
    /// `NAME.toml` beside them.
    #[arg(default_value = "validation/crosscheck")]
    pub dirs: Vec<PathBuf>,
    /// Compare this measurement file (from `tools/`, an earlier run, or written by hand;
    /// `docs/validation.md` gives the format) instead of measuring on an NVIDIA GPU.
    #[arg(long, value_name = "FILE")]
    pub measured: Option<PathBuf>,
    /// The GPU model to simulate: a built-in name or a model file (.toml).
    #[arg(long, default_value = "m1")]
    pub model: String,
    /// Where results go (see the list in `docs/validation.md`).
    #[arg(long, value_name = "DIR", default_value = "crosscheck-out")]
    pub out: PathBuf,
    /// Only these kernels (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Untimed launches before the timed ones.
    #[arg(long, default_value_t = 5)]
    pub warmup: u32,
    /// Timed launches; the median is the measured time.
    #[arg(long, default_value_t = 30)]
    pub repeats: u32,
    /// nvcc builds and simulations to run at once (default: the machine's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Also build every kernel with ptxas at -O1 and -O0 (the same PTX), time and
    /// profile those builds alike, and report how far each counter moves with the
    /// compiler alone (the table's "Builds" section; docs/validation.md). A
    /// measurement file brings its own builds (`other_builds`).
    #[arg(long, conflicts_with = "measured")]
    pub compiler_spread: bool,
}

struct Cli {
    gpu: Gpu,
}

impl Backend for Cli {
    fn compile(&self, kernel: &Path) -> Result<Module, String> {
        load_module(kernel, &CompileArgs::default())
            .map(|(m, _)| m)
            .map_err(|f| match f {
                Failure::BadInput(m) => m,
                Failure::KernelFault => format!("{} does not compile", kernel.display()),
            })
    }

    fn simulate(&self, module: &Module, launch: &Launch) -> Result<Simulated, String> {
        let options = RunOptions {
            timing: true,
            max_instructions: None,
            precise_math: false,
            ..Default::default()
        };
        let o = metalsim_sim::run(module, &launch.kernel, launch, &self.gpu, &options)
            .map_err(|e| e.to_string())?;
        if let Some(f) = &o.fault {
            return Err(format!(
                "kernel fault: {} at {}: {}",
                f.kind.name(),
                f.location,
                f.message
            ));
        }
        let s = &o.stats;
        let ratio = |hits: u64, misses: u64| {
            (hits + misses > 0).then(|| hits as f64 / (hits + misses) as f64)
        };
        let t = o.timing.as_ref();
        Ok(Simulated {
            time_us: self.gpu.cycles_to_us(s.cycles),
            buffers: o.buffers,
            counters: SimCounters {
                achieved_occupancy: t.map(|t| t.occupancy.achieved),
                dram_bytes: Some(s.dram_bytes as f64),
                l2_hit_rate: t.and_then(|t| ratio(t.l2.hits, t.l2.misses)),
                simd_efficiency: (s.simd_instructions > 0)
                    .then(|| s.thread_instructions as f64 / (32.0 * s.simd_instructions as f64)),
                bank_conflicts: t.map(|t| t.bank_conflict_replays as f64),
                simd_instructions: Some(s.simd_instructions as f64),
                registers_per_thread: t.map(|t| t.occupancy.registers_per_thread),
            },
        })
    }

    fn model(&self) -> String {
        self.gpu.name.clone()
    }
}

/// Runs `metalsim crosscheck`.
pub fn crosscheck(args: &CrosscheckArgs) -> Result<(), Failure> {
    let gpu = metalsim_models::load(&args.model)?;
    let options = Options {
        out: args.out.clone(),
        measured: args.measured.clone(),
        only: args.only.clone(),
        warmup: args.warmup,
        repeats: args.repeats.max(1),
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        memory_limit: memory_limit(),
        other_builds: if args.compiler_spread {
            metalsim_crosscheck::gpu::ptxas_spread()
        } else {
            Vec::new()
        },
    };
    let log = |line: &str| eprintln!("{line}");
    match run_crosscheck(&args.dirs, &options, &Cli { gpu }, &log) {
        Ok(results) => {
            print!("{}", results.table);
            Ok(())
        }
        Err(CrosscheckError::NoGpu(m)) | Err(CrosscheckError::BadInput(m)) => {
            Err(Failure::BadInput(m))
        }
    }
}
