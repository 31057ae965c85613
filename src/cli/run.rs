//! `metalsim run`: compile, resolve the launch spec, simulate, report, write outputs.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use metalsim_launch::LaunchSpec;
use metalsim_sim::{Progress, RunOptions, RunOutcome, Severity};
use metalsim_traces::{
    CacheReport, FaultReport, FindingReport, LevelReport, MemorySummary, OccupancyReport, Report,
    SamplingReport,
};

use super::{CompileArgs, Failure, load_module_specialized, specialization};

mod mlx;
mod trace;

/// How much of the timing model runs.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// The full cycle-approximate model.
    #[default]
    Full,
    /// Outputs and instruction counts only (faster).
    Off,
    /// Every threadgroup runs (outputs and instruction counts exact), windows of them are
    /// timed in full and the rest of the time is extrapolated, with an error bound.
    Sampled,
}

/// Scheduling policies of the SIMD-group schedulers.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// Keep issuing from the SIMD-group that issued last while it can, else the oldest.
    GreedyThenOldest,
    /// Take the next ready SIMD-group after the one that issued last, in turn.
    LooseRoundRobin,
}

/// Arguments of `metalsim run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The kernel file (.metal).
    pub kernel: PathBuf,
    /// The launch spec (TOML): kernel name, grid, threadgroup size, buffers. Optional
    /// when MLX mode's flags (`--mlx-name` ...) describe the launch.
    #[arg(long)]
    pub spec: Option<PathBuf>,
    /// MLX mode's flags.
    #[command(flatten)]
    pub mlx: mlx::MlxArgs,
    /// The GPU model: a built-in name (see `metalsim models`) or a model file (.toml).
    #[arg(long, default_value = "m1")]
    pub model: String,
    /// Write `report.json` and every output buffer as `<name>.npy` into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Timing model: `full` (default), `sampled` (a timed sample of the threadgroups,
    /// the time extrapolated with an error bound) or `off`.
    #[arg(long, value_enum, default_value_t)]
    pub timing: Timing,
    /// How each SIMD-group scheduler picks among its ready SIMD-groups (default: the
    /// model's, greedy-then-oldest for the built-in chips).
    #[arg(long, value_enum)]
    pub scheduler: Option<Scheduler>,
    /// Stop the kernel after this many SIMD-group instructions (a runaway-loop guard).
    #[arg(long, value_name = "N")]
    pub max_instructions: Option<u64>,
    /// Worker threads (default: one per core). Outputs, counters, findings and the
    /// report are bit-identical for every number; today only `--timing off` runs in
    /// parallel (a timed run uses one thread).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub workers: Option<u32>,
    /// Run every math function in its precise variant (as `-fno-fast-math` compiles
    /// them); by default they use Metal's fast variants, except calls to
    /// `metal::precise::` functions.
    #[arg(long)]
    pub precise: bool,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write the trace file: the model, the summary, the binned counters, the per-line
    /// and per-instruction tables, the sources and the ISA, in one JSON file that
    /// `metalsim tui`, `plot` and `export` read (see docs/trace.md).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Write Chrome trace-event JSON (open it in ui.perfetto.dev): a track per core with
    /// its threadgroups over time, counter tracks for occupancy and bandwidth.
    #[arg(long, value_name = "FILE")]
    pub perfetto: Option<PathBuf>,
    /// Draw the plots (occupancy, bandwidth, SIMD efficiency, issue mix, core heat map,
    /// per-line cost; PNG and SVG) into this folder.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Record one SIMD-group step by step for the TUI's teaching view: its threadgroup's
    /// position in the grid (`X`, `X,Y` or `X,Y,Z`) then the SIMD-group's index in it, e.g.
    /// `--record-simdgroup 0,0,1` for SIMD-group 1 of threadgroup (0, 0). Goes into the
    /// trace file (`--trace`, `--tui`).
    #[arg(long, value_name = "TG,SG", value_parser = parse_record_simdgroup)]
    pub record_simdgroup: Option<([u32; 3], u32)>,
    /// Open the terminal UI on this run when it ends (see docs/tui.md).
    #[arg(long)]
    pub tui: bool,
    /// Do not record the profile of a timed run (the report then has no issue, stalls,
    /// memory levels, limiter or costliest lines).
    #[arg(long, conflicts_with_all = ["trace", "perfetto", "plots", "tui", "record_simdgroup"])]
    pub no_profile: bool,
    /// With an MLX-form spec (`[mlx]`), print the generated kernel source to stderr, as
    /// MLX's `verbose=True` does.
    #[arg(long)]
    pub verbose: bool,
    /// Compiler options.
    #[command(flatten)]
    pub compile: CompileArgs,
}

/// Memory the buffers may take: under half of what the machine has available, since the
/// simulator holds the initial and the working copy.
pub(crate) fn memory_limit() -> u64 {
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    available.unwrap_or(8 << 30) * 2 / 5
}

/// Runs the simulation on a worker thread while this one shows a progress bar
/// (threadgroups done of all, with an ETA) on standard error, once the run has taken a
/// second and only when standard error is a terminal.
fn run_showing_progress(
    module: &metalsim_isa::Module,
    kernel: &str,
    launch: &metalsim_launch::Launch,
    gpu: &metalsim_models::Gpu,
    options: &RunOptions,
) -> Result<RunOutcome, metalsim_sim::SimError> {
    if !std::io::stderr().is_terminal() {
        return metalsim_sim::run(module, kernel, launch, gpu, options);
    }
    let progress = Progress::new();
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("simulator".into())
            // The main thread's usual stack, as the simulator would have had there.
            .stack_size(8 << 20)
            .spawn_scoped(scope, || {
                metalsim_sim::run_with_progress(
                    module,
                    kernel,
                    launch,
                    gpu,
                    options,
                    Some(&progress),
                )
            });
        // Without a second thread, run here, without the bar.
        let Ok(worker) = spawned else {
            return metalsim_sim::run(module, kernel, launch, gpu, options);
        };
        let started = Instant::now();
        let mut bar: Option<ProgressBar> = None;
        while !worker.is_finished() {
            std::thread::sleep(Duration::from_millis(50));
            if bar.is_none() && started.elapsed() >= Duration::from_secs(1) {
                let b = ProgressBar::new(progress.total()).with_elapsed(started.elapsed());
                b.set_style(
                    ProgressStyle::with_template(
                        "{elapsed_precise} [{bar:40}] {pos}/{len} threadgroups, {msg}",
                    )
                    .expect("the template is valid")
                    .progress_chars("=> "),
                );
                bar = Some(b);
            }
            if let Some(b) = &bar {
                let (done, total) = (progress.done(), progress.total());
                b.set_length(total);
                b.set_position(done);
                b.set_message(eta(started.elapsed(), done, total));
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        match worker.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The estimated time left when `done` of `total` threadgroups took `elapsed`, assuming
/// the rest go at the same pace.
fn eta(elapsed: Duration, done: u64, total: u64) -> String {
    if done == 0 || done >= total {
        return "ETA unknown".to_string();
    }
    let left = elapsed.as_secs_f64() * (total - done) as f64 / done as f64;
    format!(
        "ETA {}",
        indicatif::HumanDuration(Duration::from_secs_f64(left))
    )
}

/// Runs `metalsim run`.
pub fn run(args: &RunArgs) -> Result<(), Failure> {
    let mut gpu = metalsim_models::load(&args.model)?;
    if let Some(policy) = args.scheduler {
        gpu.scheduler_policy = match policy {
            Scheduler::GreedyThenOldest => metalsim_models::SchedulerPolicy::GreedyThenOldest,
            Scheduler::LooseRoundRobin => metalsim_models::SchedulerPolicy::LooseRoundRobin,
        };
    }
    let mlx_spec = mlx::read_if_mlx(args)?;
    let (module, spec) = match &mlx_spec {
        Some(m) => mlx::compile(m, args)?,
        None => {
            let spec = LaunchSpec::from_file(mlx::spec_path(args)?)?;
            let (module, _) =
                load_module_specialized(&args.kernel, &args.compile, specialization(&spec))?;
            (module, spec)
        }
    };
    let kernel_name = spec.kernel.clone();
    let Some(function) = module.function(&kernel_name) else {
        let names: Vec<&str> = module.functions.iter().map(|f| f.name.as_str()).collect();
        return Err(Failure::BadInput(format!(
            "{}: the spec names kernel `{kernel_name}`, but {} defines {}",
            spec.origin,
            args.kernel.display(),
            if names.is_empty() {
                "no kernels".to_string()
            } else {
                names.join(", ")
            }
        )));
    };
    let wants_trace = args.trace.is_some()
        || args.perfetto.is_some()
        || args.plots.is_some()
        || args.tui
        || args.record_simdgroup.is_some();
    if wants_trace && args.timing != Timing::Full {
        return Err(Failure::BadInput(format!(
            "--trace, --perfetto, --plots, --tui and --record-simdgroup need the timing model \
             of every threadgroup: leave out --timing {}",
            timing_name(args.timing)
        )));
    }
    let launch = spec.resolve(function, memory_limit())?;
    if let Some(which) = args.record_simdgroup {
        check_record_simdgroup(which, &launch)?;
    }
    let options = RunOptions {
        timing: args.timing != Timing::Off,
        max_instructions: args.max_instructions,
        precise_math: args.precise,
        // Every timed run is profiled: the report's issue, stalls, memory levels, limiter
        // and costliest lines come from the profile.
        profile: args.timing != Timing::Off && !args.no_profile,
        sampling: (args.timing == Timing::Sampled).then(metalsim_sim::SamplingPlan::default),
        record_simdgroup: args.record_simdgroup,
        workers: args.workers.map_or(0, |n| n as usize),
    };
    let started = Instant::now();
    let mut outcome = run_showing_progress(&module, &kernel_name, &launch, &gpu, &options)?;
    let wall = started.elapsed();
    let mut report = make_report(&outcome, &launch, &gpu, &kernel_name, args.timing);
    let model = trace::model_info(&gpu);
    let sources = trace::sources(&module);
    let profile = outcome.profile.take();
    if let Some(p) = &profile {
        summarize(&mut report, &outcome, &gpu, p, &model, &sources);
    }
    if args.json {
        print_report(&(report.to_json() + "\n"));
    } else {
        print_report(&report.to_text());
        let rate = outcome.stats.simd_instructions as f64 / wall.as_secs_f64().max(1e-9);
        eprintln!(
            "simulated in {:.2} s ({:.1} M SIMD-group instructions/s)",
            wall.as_secs_f64(),
            rate / 1e6
        );
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::BadInput(format!("cannot create {}: {e}", dir.display())))?;
        let report_path = dir.join("report.json");
        std::fs::write(&report_path, report.to_json() + "\n").map_err(|e| {
            Failure::BadInput(format!("cannot write {}: {e}", report_path.display()))
        })?;
        let written = match &mlx_spec {
            Some(m) => m.write_outputs(&launch, &outcome.buffers, dir)?,
            None => metalsim_launch::write_outputs(&launch, &outcome.buffers, dir)?,
        };
        eprintln!("wrote {}", report_path.display());
        for p in written {
            eprintln!("wrote {}", p.display());
        }
    }
    if wants_trace {
        let Some(profile) = profile else {
            return Err(Failure::BadInput(
                "the simulator returned no profile for this run, so there is no trace to write"
                    .to_string(),
            ));
        };
        let t = trace::build(
            &module,
            &kernel_name,
            model,
            &report,
            profile,
            sources,
            outcome.recording.take(),
        );
        let written = trace::write(
            &t,
            args.trace.as_deref(),
            args.perfetto.as_deref(),
            args.plots.as_deref(),
        )?;
        for p in written {
            eprintln!("wrote {}", p.display());
        }
        if args.record_simdgroup.is_some() && t.recording.is_none() {
            eprintln!(
                "warning: --record-simdgroup {}: no such SIMD-group in this dispatch, nothing recorded",
                format_record_simdgroup(args.record_simdgroup)
            );
        }
        if args.tui {
            metalsim_tui::run(t)
                .map_err(|e| Failure::BadInput(format!("the terminal UI failed: {e}")))?;
        }
    }
    if let Some(f) = &outcome.fault {
        eprintln!(
            "kernel fault: {} at {} in thread {:?} (threadgroup {:?}, SIMD-group {}, lane {}): {}",
            f.kind.name(),
            f.location,
            f.thread,
            f.threadgroup,
            f.simdgroup,
            f.lane,
            f.message
        );
        return Err(Failure::KernelFault);
    }
    let errors = outcome
        .findings
        .iter()
        .filter(|f| f.severity() == Severity::Error)
        .count();
    if errors > 0 {
        eprintln!(
            "the sanitizer found {errors} error{} (listed in the report)",
            if errors == 1 { "" } else { "s" }
        );
        return Err(Failure::KernelFault);
    }
    Ok(())
}

fn make_report(
    o: &RunOutcome,
    launch: &metalsim_launch::Launch,
    gpu: &metalsim_models::Gpu,
    kernel: &str,
    timing: Timing,
) -> Report {
    let s = &o.stats;
    let time_us = gpu.cycles_to_us(s.cycles);
    // A sampled run's DRAM bytes are its timed windows'.
    let measured_us = match o.sampling.as_ref().filter(|p| !p.timed_fully) {
        Some(p) => gpu.cycles_to_us(p.timed_cycles),
        None => time_us,
    };
    let by_class: BTreeMap<String, u64> = s
        .instructions_by_class
        .iter()
        .map(|(c, n)| (c.name().to_string(), *n))
        .collect();
    let findings = o
        .findings
        .iter()
        .map(|f| {
            let first = &f.first;
            let (file, line, column) = split_location(&first.location);
            FindingReport {
                kind: first.kind.name().to_string(),
                severity: f.severity().name().to_string(),
                message: first.message.clone(),
                file,
                line,
                column,
                thread: first.thread,
                threadgroup: first.threadgroup,
                simdgroup: first.simdgroup,
                lane: first.lane,
                address: first.address,
                buffer: first.buffer.clone(),
                offset: first.offset,
                count: f.count,
            }
        })
        .collect();
    let fault = o.fault.as_ref().map(|f| {
        let (file, line, column) = split_location(&f.location);
        FaultReport {
            kind: f.kind.name().to_string(),
            message: f.message.clone(),
            file,
            line,
            column,
            thread: f.thread,
            threadgroup: f.threadgroup,
            lane: f.lane,
        }
    });
    Report {
        kernel: kernel.to_string(),
        model: gpu.name.clone(),
        cycles: s.cycles,
        time_us,
        threadgroups: s.threadgroups,
        simdgroups: s.simdgroups,
        simd_instructions: s.simd_instructions,
        thread_instructions: s.thread_instructions,
        simd_efficiency: if s.simd_instructions == 0 {
            0.0
        } else {
            s.thread_instructions as f64 / (32.0 * s.simd_instructions as f64)
        },
        grid: launch.threads_per_grid(),
        threadgroup_size: launch.threadgroup,
        timing: timing_name(timing).into(),
        instructions_by_class: by_class,
        memory: MemorySummary {
            device_bytes_read: s.device_bytes_read,
            device_bytes_written: s.device_bytes_written,
            dram_bytes: s.dram_bytes,
            dram_gb_per_s: if measured_us > 0.0 {
                s.dram_bytes as f64 / (measured_us * 1e3)
            } else {
                0.0
            },
            ..MemorySummary::default()
        },
        fault,
        findings,
        occupancy: o.timing.as_ref().map(|t| OccupancyReport {
            theoretical: t.occupancy.theoretical,
            achieved: t.occupancy.achieved,
            limiter: t.occupancy.limiter.name().to_string(),
            threadgroups_per_core: t.occupancy.threadgroups_per_core,
            registers_per_thread: t.occupancy.registers_per_thread,
        }),
        caches: o.timing.as_ref().map(|t| {
            let level = |l: &metalsim_sim::LevelCounters| LevelReport {
                hits: l.hits,
                misses: l.misses,
            };
            CacheReport {
                l1: level(&t.l1),
                l2: level(&t.l2),
                slc: level(&t.slc),
                bank_conflict_replays: t.bank_conflict_replays,
            }
        }),
        sampling: o.sampling.as_ref().map(|p| sampling_report(p, s, gpu)),
        ..Report::default()
    }
}

/// `--timing`'s value as the user writes it.
fn timing_name(timing: Timing) -> &'static str {
    match timing {
        Timing::Full => "full",
        Timing::Off => "off",
        Timing::Sampled => "sampled",
    }
}

/// The report's account of a sampled run.
fn sampling_report(
    p: &metalsim_sim::Sampling,
    s: &metalsim_sim::Stats,
    gpu: &metalsim_models::Gpu,
) -> SamplingReport {
    SamplingReport {
        timed_fully: p.timed_fully,
        bound_cycles: p.bound_cycles,
        bound_us: gpu.cycles_to_us(p.bound_cycles),
        bound_percent: p.bound_cycles as f64 * 100.0 / s.cycles.max(1) as f64,
        threadgroups_timed: p.threadgroups_timed,
        timed_percent: p.threadgroups_timed as f64 * 100.0 / s.threadgroups.max(1) as f64,
        windows: p.windows,
        wave: p.wave,
        timed_cycles: p.timed_cycles,
        classes: p.classes,
        unmeasured_classes: p.unmeasured_classes,
        unmeasured_threadgroups: p.unmeasured_threadgroups,
        rate_samples: p.rate_samples.clone(),
        dram_bound: p.dram_bound,
    }
}

/// Fills the report's profile sections from `profile`. A sampled run's profile is its
/// first window's, so its utilisations are figured over that window's cycles.
fn summarize(
    report: &mut Report,
    o: &RunOutcome,
    gpu: &metalsim_models::Gpu,
    profile: &metalsim_traces::Profile,
    model: &metalsim_traces::ModelInfo,
    sources: &[metalsim_traces::SourceFile],
) {
    let Some(p) = o.sampling.as_ref().filter(|p| !p.timed_fully) else {
        metalsim_traces::summarize(report, profile, model, sources);
        return;
    };
    let (cycles, time_us) = (report.cycles, report.time_us);
    report.cycles = p.first_window_cycles;
    report.time_us = gpu.cycles_to_us(p.first_window_cycles);
    metalsim_traces::summarize(report, profile, model, sources);
    (report.cycles, report.time_us) = (cycles, time_us);
}

/// `file:line:col` into its parts (the file name may itself contain colons).
fn split_location(loc: &str) -> (String, u32, u32) {
    let mut parts = loc.rsplitn(3, ':');
    let col = parts.next().and_then(|c| c.parse().ok());
    let line = parts.next().and_then(|l| l.parse().ok());
    match (parts.next(), line, col) {
        (Some(file), Some(line), Some(col)) => (file.to_string(), line, col),
        _ => (loc.to_string(), 0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_scales_the_elapsed_time_by_the_work_left() {
        assert_eq!(eta(Duration::from_secs(10), 1, 4), "ETA 30 seconds");
        assert_eq!(eta(Duration::from_secs(10), 0, 4), "ETA unknown");
        assert_eq!(eta(Duration::from_secs(10), 4, 4), "ETA unknown");
    }
}

/// Prints the report on standard output. A reader that closed the pipe early (`| head`)
/// is not an error: the outputs and the trace are still written.
fn print_report(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Parses `--record-simdgroup`: one to three threadgroup coordinates, then the SIMD-group.
fn parse_record_simdgroup(text: &str) -> Result<([u32; 3], u32), String> {
    let numbers = text
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<u32>()
                .map_err(|_| format!("`{p}` is not a non-negative integer"))
        })
        .collect::<Result<Vec<u32>, String>>()?;
    match numbers.as_slice() {
        [tg @ .., sg] if (1..=3).contains(&tg.len()) => {
            let mut position = [0; 3];
            position[..tg.len()].copy_from_slice(tg);
            Ok((position, *sg))
        }
        _ => Err(
            "expected `X,SG`, `X,Y,SG` or `X,Y,Z,SG`: the threadgroup's position, then \
             the SIMD-group's index in it"
                .to_string(),
        ),
    }
}

/// Refuses a `--record-simdgroup` that names a threadgroup outside the grid or a
/// SIMD-group beyond the threadgroup's size.
fn check_record_simdgroup(
    (position, sg): ([u32; 3], u32),
    launch: &metalsim_launch::Launch,
) -> Result<(), Failure> {
    let tg = launch.threadgroup;
    let groups = launch.threadgroups_per_grid();
    let simdgroups = (tg.iter().map(|&d| d as u64).product::<u64>()).div_ceil(32);
    let flag = format_record_simdgroup(Some((position, sg)));
    if (0..3).any(|d| position[d] >= groups[d]) {
        return Err(Failure::BadInput(format!(
            "--record-simdgroup {flag}: threadgroup {position:?} is outside the grid of {groups:?} threadgroups"
        )));
    }
    if sg as u64 >= simdgroups {
        return Err(Failure::BadInput(format!(
            "--record-simdgroup {flag}: a threadgroup of {tg:?} threads has {simdgroups} SIMD-group(s), numbered from 0"
        )));
    }
    Ok(())
}

/// `--record-simdgroup`'s value as the user would write it.
fn format_record_simdgroup(v: Option<([u32; 3], u32)>) -> String {
    v.map_or_else(String::new, |(tg, sg)| {
        format!("{},{},{},{sg}", tg[0], tg[1], tg[2])
    })
}

#[cfg(test)]
mod record_flag_tests {
    use super::parse_record_simdgroup;

    #[test]
    fn record_simdgroup_takes_one_to_three_coordinates_then_the_simdgroup() {
        assert_eq!(parse_record_simdgroup("3,1"), Ok(([3, 0, 0], 1)));
        assert_eq!(parse_record_simdgroup("1,2,0"), Ok(([1, 2, 0], 0)));
        assert_eq!(parse_record_simdgroup("1, 2, 3, 4"), Ok(([1, 2, 3], 4)));
        assert!(parse_record_simdgroup("5").is_err());
        assert!(parse_record_simdgroup("1,2,3,4,5").is_err());
        assert!(parse_record_simdgroup("a,1").unwrap_err().contains("`a`"));
    }
}
