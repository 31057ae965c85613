//! `metalsim crosscheck`: measure a suite on the NVIDIA GPU here (or read a measurement
//! file), simulate every kernel on the same inputs, compare, and write the results.
//!
//! Files written under the output folder: `work/<name>/` (each generated program with
//! its inputs, outputs, `measurement.json` and `ncu.csv`), `measured.json` (the
//! measurement file of the run, the same format `--measured` reads), `table.md`,
//! `results.json`, `scatter.png` and `scatter.svg`.

use std::path::{Component, Path, PathBuf};
use std::process::Child;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use metalsim_isa::{Function, Module};
use metalsim_launch::{Launch, LaunchSpec};
use serde::{Deserialize, Serialize};

use crate::bundle::write_bundle;
use crate::compare::compare_buffer;
use crate::gpu::{self, BuildVariant, Toolchain};
use crate::measurement::{Counters, FORMAT, Measurement, MeasurementFile, OtherBuild};
use crate::plot;
use crate::report::{self, CounterCheck, Row, SimCounters, Summary};
use crate::suite::{self, Entry};

/// What the caller provides: the compiler and the simulator (the CLI owns both, so the
/// module compiled here is exactly the one `metalsim run` simulates).
pub trait Backend: Sync {
    /// Compiles a kernel file to the ISA.
    fn compile(&self, kernel: &Path) -> Result<Module, String>;
    /// Simulates one dispatch.
    fn simulate(&self, module: &Module, launch: &Launch) -> Result<Simulated, String>;
    /// The model simulated, for the table's header.
    fn model(&self) -> String;
}

/// What a simulation gave.
#[derive(Clone, Debug)]
pub struct Simulated {
    /// Simulated time, microseconds.
    pub time_us: f64,
    /// Final buffer contents, in `launch.buffers` order.
    pub buffers: Vec<Vec<u8>>,
    /// Counters.
    pub counters: SimCounters,
}

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where results go.
    pub out: PathBuf,
    /// Compare this measurement file instead of measuring.
    pub measured: Option<PathBuf>,
    /// Only these entries (all when empty).
    pub only: Vec<String>,
    /// Untimed launches before the timed ones.
    pub warmup: u32,
    /// Timed launches (the median is the time).
    pub repeats: u32,
    /// Builds at once.
    pub jobs: usize,
    /// Memory the simulator's buffers may take.
    pub memory_limit: u64,
    /// Builds of every kernel besides the main one, measured alike (GPU mode).
    pub other_builds: Vec<BuildVariant>,
}

/// Why the cross-check could not run at all (a kernel that fails is a row, not this).
#[derive(Debug, thiserror::Error)]
pub enum CrosscheckError {
    /// No NVIDIA GPU or toolchain here.
    #[error("{0}")]
    NoGpu(String),
    /// Bad arguments, suite or measurement file.
    #[error("{0}")]
    BadInput(String),
}

/// The run's results.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Results {
    /// The device measured.
    pub device: String,
    /// The model simulated.
    pub model: String,
    /// The summary (absent when nothing could be compared).
    #[serde(skip_deserializing)]
    pub summary: Option<Summary>,
    /// The counters held to the tolerance, and the kernels off it.
    #[serde(skip_deserializing)]
    pub counters: Vec<CounterCheck>,
    /// The Markdown table.
    pub table: String,
}

/// Runs the cross-check over the suites under `roots` (GPU mode), or over
/// `options.measured`. Writes the files listed in the module docs and returns the
/// results; `log` receives progress lines.
pub fn run_crosscheck(
    roots: &[PathBuf],
    options: &Options,
    backend: &dyn Backend,
    log: &(dyn Fn(&str) + Sync),
) -> Result<Results, CrosscheckError> {
    let bad = |m: String| CrosscheckError::BadInput(m);
    std::fs::create_dir_all(&options.out)
        .map_err(|e| bad(format!("cannot create {}: {e}", options.out.display())))?;
    let measured_path = match &options.measured {
        Some(p) => p.clone(),
        None => {
            let tools = gpu::find_toolchain().map_err(CrosscheckError::NoGpu)?;
            let entries = suite::discover(roots).map_err(bad)?;
            let entries: Vec<Entry> = entries
                .into_iter()
                .filter(|e| options.only.is_empty() || options.only.contains(&e.name))
                .collect();
            if entries.is_empty() {
                return Err(bad(
                    "no kernel with a launch spec beside it was found".into()
                ));
            }
            let file = measure(&entries, &tools, options, backend, log)?;
            let path = options.out.join("measured.json");
            file.save(&path)
                .map_err(|e| bad(format!("cannot write {}: {e}", path.display())))?;
            log(&format!("wrote {}", path.display()));
            path
        }
    };
    let file = MeasurementFile::load(&measured_path).map_err(|e| bad(e.to_string()))?;
    let base = measured_path.parent().unwrap_or(Path::new("."));
    let selected: Vec<&Measurement> = file
        .kernels
        .iter()
        .filter(|m| options.only.is_empty() || options.only.contains(&m.name))
        .collect();
    let rows = simulate_all(&selected, base, options, backend, log);
    let model = backend.model();
    let table = report::table(&rows, &file.device, &model);
    let summary = report::summarize(&rows);
    let results = Results {
        device: file.device.clone(),
        model: model.clone(),
        summary,
        counters: report::check_counters(&rows),
        table: table.clone(),
    };
    let write = |name: &str, text: String| -> Result<(), CrosscheckError> {
        let p = options.out.join(name);
        std::fs::write(&p, text).map_err(|e| bad(format!("cannot write {}: {e}", p.display())))?;
        log(&format!("wrote {}", p.display()));
        Ok(())
    };
    write("table.md", table)?;
    #[derive(Serialize)]
    struct Json<'a> {
        results: &'a Results,
        rows: &'a [Row],
    }
    let json = serde_json::to_string_pretty(&Json {
        results: &results,
        rows: &rows,
    })
    .map_err(|e| bad(e.to_string()))?;
    write("results.json", json + "\n")?;
    let title = format!("{} vs metalsim model `{model}`", file.device);
    match plot::scatter(
        &rows,
        &title,
        &options.out.join("scatter.png"),
        &options.out.join("scatter.svg"),
    ) {
        Ok(()) => log(&format!(
            "wrote {} and scatter.svg",
            options.out.join("scatter.png").display()
        )),
        Err(e) => log(&format!("no plot: {e}")),
    }
    Ok(results)
}

/// Simulates and compares every measured kernel, `options.jobs` at a time (each
/// simulation is deterministic on its own, so the rows do not depend on the job count).
fn simulate_all(
    selected: &[&Measurement],
    base: &Path,
    options: &Options,
    backend: &dyn Backend,
    log: &(dyn Fn(&str) + Sync),
) -> Vec<Row> {
    let next = AtomicUsize::new(0);
    let rows: Mutex<Vec<Option<Row>>> = Mutex::new(vec![None; selected.len()]);
    let log_lock = Mutex::new(());
    std::thread::scope(|s| {
        for _ in 0..options.jobs.clamp(1, selected.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(m) = selected.get(i) else { break };
                    let row = compare_one(m, base, options, backend);
                    {
                        let _guard = log_lock.lock();
                        log(&format!(
                            "simulated {}: {}",
                            m.name,
                            row.simulated_us
                                .map(|t| format!("{t:.2} us"))
                                .unwrap_or_else(|| "failed".into())
                        ));
                    }
                    if let Ok(mut r) = rows.lock() {
                        r[i] = Some(row);
                    }
                }
            });
        }
    });
    rows.into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

/// A kernel compiled and its launch resolved.
fn prepare(
    kernel: &Path,
    spec: &Path,
    backend: &dyn Backend,
    memory_limit: u64,
) -> Result<(Module, String, Launch), String> {
    let module = backend.compile(kernel)?;
    let spec = LaunchSpec::from_file(spec).map_err(|e| e.to_string())?;
    let name = spec.kernel.clone();
    let f = function(&module, &name, kernel)?;
    let launch = spec.resolve(f, memory_limit).map_err(|e| e.to_string())?;
    Ok((module, name, launch))
}

fn function<'m>(module: &'m Module, name: &str, kernel: &Path) -> Result<&'m Function, String> {
    module
        .function(name)
        .ok_or_else(|| format!("{} defines no kernel `{name}`", kernel.display()))
}

/// One program to build and measure: an entry's main build (`variant` none) or another.
#[derive(Clone)]
struct Job<'a> {
    entry: &'a Entry,
    variant: Option<&'a BuildVariant>,
    cu: PathBuf,
}

/// GPU mode: bundles, builds, timed runs and profiles; the measurement file of it all.
fn measure(
    entries: &[Entry],
    tools: &Toolchain,
    options: &Options,
    backend: &dyn Backend,
    log: &(dyn Fn(&str) + Sync),
) -> Result<MeasurementFile, CrosscheckError> {
    let work = options.out.join("work");
    let mut ready: Vec<Job> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for e in entries {
        let prepared = prepare(&e.kernel, &e.spec, backend, options.memory_limit);
        let variants = std::iter::once(None).chain(options.other_builds.iter().map(Some));
        for variant in variants {
            let dir = bundle_dir(&work, &e.name, variant);
            let result =
                prepared
                    .as_ref()
                    .map_err(Clone::clone)
                    .and_then(|(module, name, launch)| {
                        let f = function(module, name, &e.kernel)?;
                        write_bundle(module, f, launch, &dir).map_err(|x| x.to_string())
                    });
            match result {
                Ok(cu) => ready.push(Job {
                    entry: e,
                    variant,
                    cu,
                }),
                Err(m) => failed.push(format!("{}: {m}", job_name(e, variant))),
            }
        }
    }
    log(&format!("building {} CUDA programs with nvcc", ready.len()));
    let built = build_all(&ready, tools, options.jobs, &mut failed);
    let mut kernels: Vec<Measurement> = Vec::new();
    let mut device = String::from("unknown NVIDIA GPU");
    let here = std::env::current_dir().unwrap_or_default();
    let abs = |p: &Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            here.join(p)
        }
    };
    let out_abs = abs(&options.out);
    for Job {
        entry: e,
        variant,
        cu,
    } in built
    {
        let name = job_name(e, variant);
        // Another build is measured only beside its main one, which comes first.
        let main = kernels.iter().position(|k| k.name == e.name);
        if variant.is_some() && main.is_none() {
            failed.push(format!("{name}: its main build was not measured"));
            continue;
        }
        let dir = cu.parent().unwrap_or(Path::new(".")).to_path_buf();
        log(&format!("running {name}"));
        let (host, counters) = match run_and_profile(&cu, tools, options, log) {
            Ok(r) => r,
            Err(m) => {
                failed.push(format!("{name}: {m}"));
                continue;
            }
        };
        device = host.device.clone();
        if let (Some(v), Some(i)) = (variant, main) {
            let main_dir = bundle_dir(&work, &e.name, None);
            let outputs_identical = match same_outputs(&main_dir, &dir) {
                Ok(same) => Some(same),
                Err(m) => {
                    log(&format!("{name}: outputs not compared: {m}"));
                    None
                }
            };
            kernels[i].other_builds.push(OtherBuild {
                build: v.label.clone(),
                time_us: host.median_us,
                counters,
                outputs_identical,
            });
            continue;
        }
        if let Err(m) = outputs_to_npy(e, backend, options.memory_limit, &dir) {
            failed.push(format!("{name}: {m}"));
            continue;
        }
        kernels.push(Measurement {
            name: e.name.clone(),
            kernel: relative(&abs(&e.kernel), &out_abs),
            spec: relative(&abs(&e.spec), &out_abs),
            time_us: host.median_us,
            times_us: host.times_us,
            counters,
            outputs: Some(relative(&abs(&dir.join("outputs")), &out_abs)),
            other_builds: Vec::new(),
        });
    }
    for f in &failed {
        log(&format!("FAILED {f}"));
    }
    if kernels.is_empty() {
        return Err(CrosscheckError::BadInput(format!(
            "no kernel could be measured:\n{}",
            failed.join("\n")
        )));
    }
    Ok(MeasurementFile {
        format: FORMAT.into(),
        device,
        method: Some(method(options, &failed)),
        kernels,
    })
}

/// Builds every job, `jobs` at a time; those nvcc fails on go to `failed`.
fn build_all<'a>(
    ready: &[Job<'a>],
    tools: &Toolchain,
    jobs: usize,
    failed: &mut Vec<String>,
) -> Vec<Job<'a>> {
    let mut built = Vec::new();
    for chunk in ready.chunks(jobs.max(1)) {
        let children: Vec<std::io::Result<Child>> = chunk
            .iter()
            .map(|j| gpu::start_build(tools, &j.cu, j.variant.map_or(&[], |v| &v.flags)))
            .collect();
        for (j, child) in chunk.iter().zip(children) {
            let result = child
                .and_then(|c| c.wait_with_output())
                .map_err(|x| x.to_string())
                .and_then(|o| {
                    if o.status.success() {
                        Ok(())
                    } else {
                        Err(String::from_utf8_lossy(&o.stderr).into_owned())
                    }
                });
            match result {
                Ok(()) => built.push(j.clone()),
                Err(m) => failed.push(format!(
                    "{}: nvcc failed on {}:\n{m}",
                    job_name(j.entry, j.variant),
                    j.cu.display()
                )),
            }
        }
    }
    built
}

/// Runs a built program (`kernel.cu`'s executable) with the timing flags, then once
/// under Nsight Compute when it is here (`ncu.csv` beside the program): its own
/// timings and the counters.
fn run_and_profile(
    cu: &Path,
    tools: &Toolchain,
    options: &Options,
    log: &(dyn Fn(&str) + Sync),
) -> Result<(HostMeasurement, Counters), String> {
    let dir = cu.parent().unwrap_or(Path::new("."));
    let exe = cu.with_extension("");
    gpu::run_program(&exe, dir, options.warmup, options.repeats)?;
    let host = HostMeasurement::load(&dir.join("measurement.json"))?;
    let counters = match &tools.ncu {
        Some(ncu) => match gpu::profile(ncu, &exe, dir) {
            Ok((c, csv)) => {
                let _ = std::fs::write(dir.join("ncu.csv"), csv);
                c
            }
            Err(m) => {
                log(&format!("{}: no counters: {m}", dir.display()));
                Counters::default()
            }
        },
        None => Counters::default(),
    };
    Ok((host, counters))
}

/// The measurement file's `method`: how the numbers were taken, and what failed.
fn method(options: &Options, failed: &[String]) -> String {
    let builds = if options.other_builds.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = options
            .other_builds
            .iter()
            .map(|v| format!("{} ({})", v.label, v.flags.join(" ")))
            .collect();
        format!(
            "; each kernel also built as {}, timed and profiled alike, its outputs compared \
             byte for byte with the main build's",
            list.join(" and ")
        )
    };
    format!(
        "CUDA C++ generated from the ISA, nvcc {}; median of {} CUDA-event timings after {} \
         warm-up launches, each on restored buffers after a 256 MiB L2 flush (written, \
         then read, so the L2 holds only clean lines); counters from one launch under \
         Nsight Compute (--clock-control none){builds}{}",
        gpu::NVCC_FLAGS.join(" "),
        options.repeats,
        options.warmup,
        if failed.is_empty() {
            String::new()
        } else {
            format!("; not measured: {}", failed.join(" | ").replace('\n', " "))
        }
    )
}

/// The folder of an entry's generated program: `work/<name>/` for the main build,
/// `work/<name>/build-<label>/` (the label's spaces as `_`) for another.
fn bundle_dir(work: &Path, name: &str, variant: Option<&BuildVariant>) -> PathBuf {
    let dir = work.join(name);
    match variant {
        None => dir,
        Some(v) => dir.join(format!("build-{}", v.label.replace(' ', "_"))),
    }
}

/// An entry's name in the log, with the build when it is not the main one.
fn job_name(e: &Entry, variant: Option<&BuildVariant>) -> String {
    match variant {
        None => e.name.clone(),
        Some(v) => format!("{} ({})", e.name, v.label),
    }
}

/// Whether two builds' programs wrote the same raw output buffers (`outputs/*.bin`
/// under their folders), byte for byte.
fn same_outputs(a: &Path, b: &Path) -> Result<bool, String> {
    let list = |dir: &Path| -> Result<Vec<PathBuf>, String> {
        let dir = dir.join("outputs");
        let read = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut names: Vec<PathBuf> = read
            .filter_map(|d| d.ok().map(|d| d.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .filter_map(|p| p.file_name().map(PathBuf::from))
            .collect();
        names.sort();
        Ok(names)
    };
    let names = list(a)?;
    if names != list(b)? {
        return Ok(false);
    }
    for n in &names {
        let read = |dir: &Path| {
            let p = dir.join("outputs").join(n);
            std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))
        };
        if read(a)? != read(b)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// What the generated host program writes.
#[derive(Deserialize)]
struct HostMeasurement {
    device: String,
    median_us: f64,
    times_us: Vec<f64>,
}

impl HostMeasurement {
    fn load(path: &Path) -> Result<HostMeasurement, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Turns the program's raw output buffers into `<name>.npy` files.
fn outputs_to_npy(
    e: &Entry,
    backend: &dyn Backend,
    memory_limit: u64,
    dir: &Path,
) -> Result<(), String> {
    let (_, _, launch) = prepare(&e.kernel, &e.spec, backend, memory_limit)?;
    let outputs = dir.join("outputs");
    let mut bytes = Vec::new();
    for b in &launch.buffers {
        if b.output {
            let p = outputs.join(format!("{}.bin", b.index));
            bytes.push(std::fs::read(&p).map_err(|x| format!("cannot read {}: {x}", p.display()))?);
        } else {
            bytes.push(b.bytes.clone());
        }
    }
    metalsim_launch::write_outputs(&launch, &bytes, &outputs)
        .map(|_| ())
        .map_err(|x| x.to_string())
}

/// Simulates one measured kernel and compares.
fn compare_one(m: &Measurement, base: &Path, options: &Options, backend: &dyn Backend) -> Row {
    let mut row = Row {
        name: m.name.clone(),
        outputs_match: None,
        output_details: vec![],
        measured_us: m.time_us,
        simulated_us: None,
        simulation_error: None,
        measured: m.counters.clone(),
        simulated: SimCounters::default(),
        other_builds: m.other_builds.clone(),
    };
    let (kernel, spec) = (base.join(&m.kernel), base.join(&m.spec));
    let prepared = prepare(&kernel, &spec, backend, options.memory_limit);
    let (module, _, launch) = match prepared {
        Ok(p) => p,
        Err(e) => {
            row.simulation_error = Some(e);
            return row;
        }
    };
    let sim = match backend.simulate(&module, &launch) {
        Ok(s) => s,
        Err(e) => {
            row.simulation_error = Some(e);
            return row;
        }
    };
    row.simulated_us = Some(sim.time_us);
    row.simulated = sim.counters.clone();
    if let Some(dir) = &m.outputs {
        let dir = base.join(dir);
        if !dir.is_dir() {
            row.output_details
                .push(format!("outputs folder {} is not here", dir.display()));
            return row;
        }
        let mut all = true;
        for (b, final_bytes) in launch.buffers.iter().zip(&sim.buffers) {
            if !b.output {
                continue;
            }
            let p = dir.join(format!("{}.npy", b.name));
            let verdict = match metalsim_launch::read_npy(&p, b.elem) {
                Ok((count, real)) if count == b.count => {
                    compare_buffer(b.elem, b.count, &real, final_bytes)
                }
                Ok((count, _)) => crate::compare::BufferMatch {
                    matches: false,
                    detail: format!("{count} elements measured, {} simulated", b.count),
                },
                Err(e) => crate::compare::BufferMatch {
                    matches: false,
                    detail: e.to_string(),
                },
            };
            all &= verdict.matches;
            row.output_details
                .push(format!("{}: {}", b.name, verdict.detail));
        }
        row.outputs_match = Some(all);
    }
    row
}

/// `path` relative to the folder `base` (both absolute), with `..` where they part.
pub fn relative(path: &Path, base: &Path) -> PathBuf {
    fn norm(p: &Path) -> Vec<Component<'_>> {
        let mut v = Vec::new();
        for c in p.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir if matches!(v.last(), Some(Component::Normal(_))) => {
                    v.pop();
                }
                c => v.push(c),
            }
        }
        v
    }
    let (p, b) = (norm(path), norm(base));
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c.as_os_str());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        let check = |p: &str, b: &str, want: &str| {
            assert_eq!(relative(Path::new(p), Path::new(b)), PathBuf::from(want));
        };
        check(
            "/r/validation/crosscheck/a.metal",
            "/r/validation/h100",
            "../crosscheck/a.metal",
        );
        check("/r/x/work/k/outputs", "/r/x", "work/k/outputs");
        check("/r/./a/../b.toml", "/r", "b.toml");
    }

    #[test]
    fn other_builds_live_beside_the_main_one() {
        let v = BuildVariant {
            label: "ptxas -O1".into(),
            flags: vec!["--ptxas-options=-O1".into()],
        };
        let work = Path::new("/o/work");
        assert_eq!(
            bundle_dir(work, "copy", None),
            PathBuf::from("/o/work/copy")
        );
        assert_eq!(
            bundle_dir(work, "copy", Some(&v)),
            PathBuf::from("/o/work/copy/build-ptxas_-O1")
        );
        assert_eq!(crate::gpu::ptxas_spread()[0], v);
    }

    #[test]
    fn builds_are_compared_byte_for_byte() {
        let dir = std::env::temp_dir().join(format!("metalsim-same-{}", std::process::id()));
        let write = |build: &str, name: &str, bytes: &[u8]| {
            let d = dir.join(build).join("outputs");
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(name), bytes).unwrap();
        };
        write("a", "1.bin", &[1, 2, 3]);
        write("a", "1.npy", &[9]);
        write("b", "1.bin", &[1, 2, 3]);
        write("c", "1.bin", &[1, 2, 4]);
        write("d", "1.bin", &[1, 2, 3]);
        write("d", "2.bin", &[0]);
        let same = |x: &str| same_outputs(&dir.join("a"), &dir.join(x));
        assert_eq!(same("b"), Ok(true));
        assert_eq!(same("c"), Ok(false));
        assert_eq!(same("d"), Ok(false));
        assert!(same("missing").unwrap_err().contains("missing/outputs"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
