//! What `metalsim run` writes from a profiled run: the trace file (`--trace`), Perfetto
//! JSON (`--perfetto`) and the plots (`--plots`).

use std::path::{Path, PathBuf};

use metalsim_isa::Module;
use metalsim_models::Gpu;
use metalsim_traces::{
    ModelInfo, Peaks, Profile, Report, SimdgroupRecording, SourceFile, TRACE_FORMAT, TRACE_VERSION,
    Trace,
};

use super::Failure;

/// The model as a trace describes it; peaks in GB/s from the model's memory figures.
pub(super) fn model_info(gpu: &Gpu) -> ModelInfo {
    let cores = f64::from(gpu.cores);
    // Bytes per cycle to GB/s at the model's clock.
    let gbps = |bytes_per_cycle: f64| bytes_per_cycle * gpu.clock_mhz / 1e3;
    let m = &gpu.memory;
    let threadgroup_bytes_per_cycle = f64::from(m.threadgroup_ports.unwrap_or(1))
        * f64::from(m.threadgroup_banks)
        * f64::from(m.threadgroup_bank_bytes)
        / f64::from(gpu.issue.threadgroup_memory.max(1));
    ModelInfo {
        name: gpu.name.clone(),
        display_name: gpu.display_name.clone(),
        cores: gpu.cores,
        clock_mhz: gpu.clock_mhz,
        schedulers_per_core: gpu.schedulers_per_core,
        issue_width: if gpu.dual_issue_pipes.is_empty() {
            1
        } else {
            2
        },
        max_simdgroups_per_core: gpu.max_threads_per_core / gpu.simd_width.max(1),
        threadgroup_wavefront_bytes: m.threadgroup_banks * m.threadgroup_bank_bytes,
        peaks: Peaks {
            // `l1` and `l2` figures are per core (its port, its link to L2).
            l1_gb_per_s: gbps(m.l1.bytes_per_cycle * cores),
            l2_gb_per_s: gbps(m.l2.bytes_per_cycle * cores),
            slc_gb_per_s: gbps(m.slc.bytes_per_cycle),
            dram_gb_per_s: m.dram.bandwidth_gb_s * m.dram.efficiency,
            threadgroup_gb_per_s: gbps(threadgroup_bytes_per_cycle * cores),
        },
    }
}

/// The module's source files with their text, indexed like its file table; a file that
/// cannot be read again (a built-in header) gets empty text.
pub(super) fn sources(module: &Module) -> Vec<SourceFile> {
    module
        .files
        .iter()
        .map(|path| SourceFile {
            path: path.clone(),
            text: std::fs::read_to_string(path).unwrap_or_default(),
        })
        .collect()
}

/// The kernel `name` of `module` in the ISA text format.
fn kernel_isa(module: &Module, name: &str) -> String {
    let mut one = module.clone();
    one.functions.retain(|f| f.name == name);
    one.to_string()
}

/// The trace of a profiled run.
pub(super) fn build(
    module: &Module,
    kernel: &str,
    model: ModelInfo,
    report: &Report,
    profile: Profile,
    sources: Vec<SourceFile>,
    recording: Option<SimdgroupRecording>,
) -> Trace {
    Trace {
        format: TRACE_FORMAT.to_string(),
        version: TRACE_VERSION,
        metalsim_version: env!("CARGO_PKG_VERSION").to_string(),
        model,
        report: report.clone(),
        profile,
        sources,
        isa: kernel_isa(module, kernel),
        recording,
    }
}

/// Writes what was asked for; the files written.
pub(super) fn write(
    trace: &Trace,
    trace_file: Option<&Path>,
    perfetto: Option<&Path>,
    plots: Option<&Path>,
) -> Result<Vec<PathBuf>, Failure> {
    let mut written = Vec::new();
    if let Some(path) = trace_file {
        trace.write_file(path)?;
        written.push(path.to_path_buf());
    }
    if let Some(path) = perfetto {
        std::fs::write(path, metalsim_traces::perfetto_json(trace))
            .map_err(|e| Failure::BadInput(format!("cannot write {}: {e}", path.display())))?;
        written.push(path.to_path_buf());
    }
    if let Some(dir) = plots {
        written.extend(metalsim_traces::write_plots(trace, dir)?);
    }
    Ok(written)
}
