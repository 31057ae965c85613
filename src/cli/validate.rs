//! `metalsim validate`: runs the validation suite, kernels that reproduce published
//! measurements of Apple GPUs, and prints per data point what was measured, what metalsim
//! simulates and the error (`docs/validation.md` explains the suite and its format).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::{Args, ValueEnum};
use metalsim_isa::Module;
use metalsim_launch::LaunchSpec;
use metalsim_models::Gpu;
use metalsim_sim::RunOptions;
use serde::Deserialize;

use super::{CompileArgs, Failure, load_module, run::memory_limit};

/// Output format of the table.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal.
    #[default]
    Text,
    /// A Markdown table (as `docs/validation.md` quotes it).
    Markdown,
    /// JSON for programs.
    Json,
}

/// Arguments of `metalsim validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The points file.
    #[arg(default_value = "validation/points.toml")]
    pub points: PathBuf,
    /// Only the points whose id contains this text (ratio points bring the points they
    /// compare).
    #[arg(long)]
    pub only: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Simulations to run at once (default: the machine's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// The unit of a data point, which says how a simulation becomes a value.
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    /// Nanoseconds per step: the time of `run` less that of `base`, over `per` steps.
    #[serde(rename = "ns")]
    Ns,
    /// Cycles per step: the cycles of `run` less those of `base`, over `per` steps.
    #[serde(rename = "cycles")]
    Cycles,
    /// Microseconds: the time of `run` times `scale`.
    #[serde(rename = "us")]
    Us,
    /// Milliseconds: the time of `run` times `scale`.
    #[serde(rename = "ms")]
    Ms,
    /// `bytes` over the time of `run` times `scale`.
    #[serde(rename = "GB/s")]
    GbPerS,
    /// `flops` over the time of `run` times `scale`.
    #[serde(rename = "TFLOPS")]
    Tflops,
    /// The simulated value of the first point of `ratio` over that of the second.
    #[serde(rename = "x")]
    Ratio,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Cycles => "cycles",
            Unit::Us => "us",
            Unit::Ms => "ms",
            Unit::GbPerS => "GB/s",
            Unit::Tflops => "TFLOPS",
            Unit::Ratio => "x",
        }
    }
}

/// One simulation: a kernel, its launch spec with changes, and the model it runs on.
#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Sim {
    /// The kernel file (`.metal`, or `.isa` for the ISA text format), relative to the
    /// points file.
    kernel: String,
    /// The launch spec, relative to the points file.
    spec: String,
    /// Macros for the kernel, `NAME` or `NAME=VALUE` (as `-D`).
    #[serde(default)]
    defines: Vec<String>,
    /// Replaces the spec's `threads` (and drops `threadgroups`).
    threads: Option<Vec<u32>>,
    /// Replaces the spec's `threadgroups` (and drops `threads`).
    threadgroups: Option<Vec<u32>>,
    /// Replaces the spec's `threadgroup`.
    threadgroup: Option<Vec<u32>>,
    /// Per buffer name, keys that replace the spec's (`count`, `init`).
    #[serde(default)]
    buffers: BTreeMap<String, toml::Table>,
}

/// A published data point and how to simulate it.
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
struct Point {
    /// A short unique name.
    id: String,
    /// The built-in model it runs on.
    chip: String,
    /// GPU cores, when the measured part has fewer than the model (a binned chip).
    cores: Option<u32>,
    /// What was measured.
    what: String,
    /// Where the measurement is from (`apple-measurements.md` entry and its source).
    source: String,
    /// The measured value; a point without one is shown (a simulation the table
    /// explains, or one a ratio point compares) but has no error.
    measured: Option<f64>,
    /// Its unit.
    unit: Unit,
    /// The simulation.
    run: Option<Sim>,
    /// A simulation whose time (and work) is subtracted from `run`'s, leaving the
    /// steady state between two sizes.
    base: Option<Sim>,
    /// Steps between `base` and `run` (`ns` and `cycles` points).
    per: Option<f64>,
    /// Multiplies the simulated time: the measured work over the simulated work when a
    /// smaller size is simulated.
    scale: Option<f64>,
    /// Bytes moved (`GB/s` points), as the measurement's source counts them: by the
    /// simulated `run` less `base`.
    bytes: Option<f64>,
    /// Floating-point operations (`TFLOPS` points) of `run` less `base`.
    flops: Option<f64>,
    /// The two points compared by a ratio point.
    ratio: Option<[String; 2]>,
    /// The range the source gives for a ratio.
    range: Option<[f64; 2]>,
    /// The figure was used to set a model parameter (so it checks consistency, not
    /// prediction).
    #[serde(default)]
    calibration: bool,
    /// How the simulation differs from the measurement (size, extrapolation).
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PointsFile {
    point: Vec<Point>,
}

/// What one simulation gave.
#[derive(Clone, Copy, Debug)]
struct Outcome {
    cycles: u64,
    time_us: f64,
}

/// One row of the result.
#[derive(Clone, Debug, serde::Serialize)]
struct Row {
    id: String,
    chip: String,
    what: String,
    source: String,
    unit: &'static str,
    measured: Option<f64>,
    simulated: f64,
    error_percent: Option<f64>,
    calibration: bool,
    /// For ratio points: whether the simulation is on the same side of 1 as the
    /// measurement.
    right_direction: Option<bool>,
    note: String,
}

/// Runs `metalsim validate`.
pub fn validate(args: &ValidateArgs) -> Result<(), Failure> {
    let text = std::fs::read_to_string(&args.points)
        .map_err(|e| Failure::BadInput(format!("cannot read {}: {e}", args.points.display())))?;
    let file: PointsFile = toml::from_str(&text)
        .map_err(|e| Failure::BadInput(format!("{}: {e}", args.points.display())))?;
    let dir = args.points.parent().unwrap_or(Path::new(".")).to_path_buf();
    let points = select(&file.point, args.only.as_deref())?;

    // Every distinct simulation once.
    let mut sims: Vec<(Sim, String, Option<u32>)> = Vec::new();
    for p in &points {
        for s in [&p.run, &p.base].into_iter().flatten() {
            let key = (s.clone(), p.chip.clone(), p.cores);
            if !sims.contains(&key) {
                sims.push(key);
            }
        }
    }
    let mut modules: HashMap<(String, Vec<String>), Module> = HashMap::new();
    for (s, _, _) in &sims {
        let key = (s.kernel.clone(), s.defines.clone());
        if let std::collections::hash_map::Entry::Vacant(e) = modules.entry(key) {
            let m = compile(&dir.join(&s.kernel), &s.defines)?;
            e.insert(m);
        }
    }
    let outcomes = run_all(&sims, &modules, &dir, args.jobs)?;
    let outcome_of = |s: &Sim, p: &Point| -> Outcome {
        let i = sims
            .iter()
            .position(|k| k.0 == *s && k.1 == p.chip && k.2 == p.cores)
            .expect("every simulation ran");
        outcomes[i]
    };

    // Values: absolute points first, then ratios of them.
    let mut values: HashMap<String, f64> = HashMap::new();
    for p in points.iter().filter(|p| p.unit != Unit::Ratio) {
        let run = p.run.as_ref().ok_or_else(|| bad(p, "needs `run`"))?;
        let o = outcome_of(run, p);
        let b = p.base.as_ref().map(|s| outcome_of(s, p));
        let scale = p.scale.unwrap_or(1.0);
        let us = (o.time_us - b.map_or(0.0, |b| b.time_us)) * scale;
        let cycles = o.cycles as f64 - b.map_or(0.0, |b| b.cycles as f64);
        if us <= 0.0 {
            return Err(bad(p, "simulates no time: `run` is not longer than `base`"));
        }
        let seconds = us / 1e6;
        let v = match p.unit {
            Unit::Ns => us * 1000.0 / p.per.ok_or_else(|| bad(p, "needs `per`"))?,
            Unit::Cycles => cycles * scale / p.per.ok_or_else(|| bad(p, "needs `per`"))?,
            Unit::Us => us,
            Unit::Ms => us / 1000.0,
            Unit::GbPerS => p.bytes.ok_or_else(|| bad(p, "needs `bytes`"))? / seconds / 1e9,
            Unit::Tflops => p.flops.ok_or_else(|| bad(p, "needs `flops`"))? / seconds / 1e12,
            Unit::Ratio => unreachable!("filtered"),
        };
        values.insert(p.id.clone(), v);
    }
    let mut rows = Vec::new();
    for p in &points {
        let measured = p.measured;
        let (simulated, direction) = if p.unit == Unit::Ratio {
            let [a, b] = p.ratio.as_ref().ok_or_else(|| bad(p, "needs `ratio`"))?;
            let v = |id: &String| {
                values.get(id).copied().ok_or_else(|| {
                    bad(
                        p,
                        &format!("compares `{id}`, which is not an absolute point"),
                    )
                })
            };
            let r = v(a)? / v(b)?;
            (r, measured.map(|m| (r > 1.0) == (m > 1.0)))
        } else {
            (values[&p.id], None)
        };
        let mut note = p.note.clone().unwrap_or_default();
        if let Some([lo, hi]) = p.range {
            let inside = (lo..=hi).contains(&simulated);
            note = format!(
                "source gives {lo}-{hi}: {}{}{note}",
                if inside { "inside" } else { "outside" },
                if note.is_empty() { "" } else { "; " }
            );
        }
        rows.push(Row {
            id: p.id.clone(),
            chip: match p.cores {
                Some(c) => format!("{} ({c}c)", p.chip),
                None => p.chip.clone(),
            },
            what: p.what.clone(),
            source: p.source.clone(),
            unit: p.unit.name(),
            measured,
            simulated,
            error_percent: measured.map(|m| (simulated - m) / m * 100.0),
            calibration: p.calibration,
            right_direction: direction,
            note,
        });
    }
    print_rows(&rows, args.format)?;
    Ok(())
}

fn bad(p: &Point, problem: &str) -> Failure {
    Failure::BadInput(format!("validation point `{}` {problem}", p.id))
}

/// The points to run: those matching `only`, with the points their ratios compare.
fn select(all: &[Point], only: Option<&str>) -> Result<Vec<Point>, Failure> {
    let mut ids: Vec<&str> = Vec::new();
    for p in all {
        if ids.contains(&p.id.as_str()) {
            return Err(Failure::BadInput(format!(
                "validation point `{}` appears twice",
                p.id
            )));
        }
        ids.push(&p.id);
    }
    let wanted = |p: &Point| only.is_none_or(|o| p.id.contains(o));
    let mut keep: Vec<String> = all
        .iter()
        .filter(|p| wanted(p))
        .map(|p| p.id.clone())
        .collect();
    for p in all.iter().filter(|p| wanted(p)) {
        for id in p.ratio.iter().flatten() {
            if !ids.contains(&id.as_str()) {
                return Err(bad(p, &format!("compares `{id}`, which is not a point")));
            }
            if !keep.contains(id) {
                keep.push(id.clone());
            }
        }
    }
    Ok(all
        .iter()
        .filter(|p| keep.contains(&p.id))
        .cloned()
        .collect())
}

/// Compiles a `.metal` file with `defines`, or parses a `.isa` file.
fn compile(path: &Path, defines: &[String]) -> Result<Module, Failure> {
    if path.extension().is_some_and(|e| e == "isa") {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::BadInput(format!("cannot read {}: {e}", path.display())))?;
        metalsim_isa::parse_module(&text)
            .map_err(|e| Failure::BadInput(format!("{}: {e}", path.display())))
    } else {
        let args = CompileArgs {
            define: defines.to_vec(),
            ..CompileArgs::default()
        };
        load_module(path, &args).map(|(m, _)| m)
    }
}

/// The launch spec of `s`, with its changes applied.
fn spec_of(s: &Sim, dir: &Path) -> Result<LaunchSpec, Failure> {
    let path = dir.join(&s.spec);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Failure::BadInput(format!("cannot read {}: {e}", path.display())))?;
    let mut table: toml::Table =
        toml::from_str(&text).map_err(|e| Failure::BadInput(format!("{}: {e}", path.display())))?;
    let dims =
        |v: &[u32]| toml::Value::Array(v.iter().map(|&d| toml::Value::Integer(d as i64)).collect());
    if let Some(t) = &s.threads {
        table.remove("threadgroups");
        table.insert("threads".into(), dims(t));
    }
    if let Some(t) = &s.threadgroups {
        table.remove("threads");
        table.insert("threadgroups".into(), dims(t));
    }
    if let Some(t) = &s.threadgroup {
        table.insert("threadgroup".into(), dims(t));
    }
    for (name, keys) in &s.buffers {
        let buffers = table.get_mut("buffer").and_then(|b| b.as_array_mut());
        let target = buffers.and_then(|bs| {
            bs.iter_mut()
                .filter_map(|b| b.as_table_mut())
                .find(|b| b.get("name").and_then(|n| n.as_str()) == Some(name))
        });
        let Some(target) = target else {
            return Err(Failure::BadInput(format!(
                "{}: changes buffer `{name}`, which the spec does not have",
                path.display()
            )));
        };
        for (k, v) in keys {
            target.insert(k.clone(), v.clone());
        }
    }
    let text = toml::to_string(&table).map_err(|e| Failure::BadInput(e.to_string()))?;
    let spec_dir = path.parent().unwrap_or(Path::new("."));
    LaunchSpec::from_str(&text, spec_dir, &path.display().to_string()).map_err(Failure::from)
}

/// The model of a point: a built-in chip, with fewer cores for a binned part.
fn model(chip: &str, cores: Option<u32>) -> Result<Gpu, Failure> {
    let mut gpu = metalsim_models::builtin(chip)?;
    if let Some(c) = cores {
        if c == 0 || c > gpu.cores {
            return Err(Failure::BadInput(format!(
                "{chip} has {} cores; a binned part cannot have {c}",
                gpu.cores
            )));
        }
        gpu.cores = c;
    }
    Ok(gpu)
}

/// Runs every simulation, `jobs` at a time; their outcomes in order.
fn run_all(
    sims: &[(Sim, String, Option<u32>)],
    modules: &HashMap<(String, Vec<String>), Module>,
    dir: &Path,
    jobs: Option<usize>,
) -> Result<Vec<Outcome>, Failure> {
    let jobs = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, sims.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Outcome, String>>>> = Mutex::new(vec![None; sims.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((sim, chip, cores)) = sims.get(i) else {
                        break;
                    };
                    let started = std::time::Instant::now();
                    let module = &modules[&(sim.kernel.clone(), sim.defines.clone())];
                    let r = simulate(sim, chip, *cores, module, dir);
                    eprintln!(
                        "  {} {} on {chip}{}: {} ({:.1} s)",
                        sim.kernel,
                        sim.spec,
                        cores.map(|c| format!(" ({c} cores)")).unwrap_or_default(),
                        match &r {
                            Ok(o) => format!("{:.1} us", o.time_us),
                            Err(e) => format!("failed: {e}"),
                        },
                        started.elapsed().as_secs_f64()
                    );
                    if let Ok(mut all) = results.lock() {
                        all[i] = Some(r);
                    }
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| Failure::BadInput("a simulation panicked".into()))?;
    results
        .into_iter()
        .map(|r| match r {
            Some(Ok(o)) => Ok(o),
            Some(Err(e)) => Err(Failure::BadInput(e)),
            None => Err(Failure::BadInput("a simulation did not run".into())),
        })
        .collect()
}

fn simulate(
    sim: &Sim,
    chip: &str,
    cores: Option<u32>,
    module: &Module,
    dir: &Path,
) -> Result<Outcome, String> {
    let gpu = model(chip, cores).map_err(|e| describe(&e))?;
    let spec = spec_of(sim, dir).map_err(|e| describe(&e))?;
    let f = module
        .function(&spec.kernel)
        .ok_or_else(|| format!("{}: no kernel `{}`", sim.kernel, spec.kernel))?;
    let launch = spec.resolve(f, memory_limit()).map_err(|e| e.to_string())?;
    let options = RunOptions {
        timing: true,
        ..RunOptions::default()
    };
    let out = metalsim_sim::run(module, &spec.kernel, &launch, &gpu, &options)
        .map_err(|e| e.to_string())?;
    if let Some(f) = out.fault {
        return Err(format!("{} faulted: {}", sim.kernel, f.message));
    }
    Ok(Outcome {
        cycles: out.stats.cycles,
        time_us: gpu.cycles_to_us(out.stats.cycles),
    })
}

fn describe(f: &Failure) -> String {
    match f {
        Failure::BadInput(m) => m.clone(),
        Failure::KernelFault => "kernel fault".into(),
    }
}

/// Mean absolute percentage error of the measured rows among some, and their count.
fn mape<'a>(rows: impl Iterator<Item = &'a Row>) -> (Option<f64>, usize) {
    let errors: Vec<f64> = rows.filter_map(|r| r.error_percent.map(f64::abs)).collect();
    let n = errors.len();
    ((n > 0).then(|| errors.iter().sum::<f64>() / n as f64), n)
}

fn print_rows(rows: &[Row], format: Format) -> Result<(), Failure> {
    let (all, n_all) = mape(rows.iter());
    let (predicted, n_pred) = mape(rows.iter().filter(|r| !r.calibration));
    let chips: Vec<&str> = {
        let mut c: Vec<&str> = rows
            .iter()
            .filter(|r| r.measured.is_some())
            .map(|r| r.chip.split(' ').next().unwrap_or(""))
            .collect();
        c.sort();
        c.dedup();
        c
    };
    let wrong: Vec<&str> = rows
        .iter()
        .filter(|r| r.right_direction == Some(false))
        .map(|r| r.id.as_str())
        .collect();
    let pct = |m: Option<f64>| m.map_or("n/a".to_string(), |m| format!("{m:.1}%"));
    let summary = format!(
        "{n_all} measured points on {} chips: MAPE {}; the {n_pred} not used for calibration: MAPE {}; ratio points in the wrong direction: {}",
        chips.len(),
        pct(all),
        pct(predicted),
        if wrong.is_empty() {
            "none".to_string()
        } else {
            wrong.join(", ")
        }
    );
    let num = |v: f64| {
        if v.abs() >= 100.0 {
            format!("{v:.0}")
        } else if v.abs() >= 10.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.2}")
        }
    };
    match format {
        Format::Json => {
            let v = serde_json::json!({
                "points": rows,
                "mape_percent": all,
                "mape_percent_not_calibration": predicted,
                "chips": chips,
                "wrong_direction": wrong,
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Markdown => {
            println!("| id | chip | what | unit | measured | simulated | error |");
            println!("|---|---|---|---|---:|---:|---:|");
            for r in rows {
                let mark = if r.calibration { " (cal.)" } else { "" };
                let dir = match r.right_direction {
                    Some(true) => ", right direction",
                    Some(false) => ", WRONG direction",
                    None => "",
                };
                println!(
                    "| {}{mark} | {} | {} | {} | {} | {} | {}{dir} |",
                    r.id,
                    r.chip,
                    r.what,
                    r.unit,
                    r.measured.map_or("-".to_string(), num),
                    num(r.simulated),
                    r.error_percent
                        .map_or("-".to_string(), |e| format!("{e:+.1}%"))
                );
            }
            println!("\n{summary}");
        }
        Format::Text => {
            println!(
                "{:<30} {:<14} {:>6} {:>9} {:>9} {:>8}  what",
                "id", "chip", "unit", "measured", "simulated", "error"
            );
            for r in rows {
                let mark = if r.calibration { "*" } else { " " };
                let dir = match r.right_direction {
                    Some(true) => " (right direction)",
                    Some(false) => " (WRONG direction)",
                    None => "",
                };
                println!(
                    "{:<30} {:<14} {:>6} {:>9} {:>9} {:>8}{mark} {}{dir}{}",
                    r.id,
                    r.chip,
                    r.unit,
                    r.measured.map_or("-".to_string(), num),
                    num(r.simulated),
                    r.error_percent
                        .map_or("-".to_string(), |e| format!("{e:+.1}%")),
                    r.what,
                    if r.note.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", r.note)
                    }
                );
            }
            println!("{summary}\n(* = the measurement set a model parameter)");
        }
    }
    Ok(())
}
