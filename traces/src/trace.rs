//! The trace file: everything one run produced, in one self-describing file, so the
//! terminal UI, the plots and the CSV export need nothing else.

use serde::{Deserialize, Serialize};

use crate::profile::{Profile, SimdgroupRecording};
use crate::report::Report;

/// The `format` field of every trace file.
pub const TRACE_FORMAT: &str = "metalsim-trace";

/// The schema version this build writes and reads. Bump it on any change that an older
/// reader would misread.
pub const TRACE_VERSION: u32 = 1;

/// Peak bandwidths of the modeled GPU, in GB/s (10^9 bytes per second), per level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Peaks {
    /// All cores' L1 caches together.
    pub l1_gb_per_s: f64,
    /// The L2.
    pub l2_gb_per_s: f64,
    /// The system-level cache.
    pub slc_gb_per_s: f64,
    /// DRAM, as the model's sustained figure (peak × efficiency).
    pub dram_gb_per_s: f64,
    /// Threadgroup memory of all cores together.
    pub threadgroup_gb_per_s: f64,
}

/// The modeled GPU, as much of it as readers of a trace need.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The model's short name (`m1`).
    pub name: String,
    /// Its display name (`Apple M1 (8-core GPU)`).
    pub display_name: String,
    /// GPU cores.
    pub cores: u32,
    /// Clock in MHz: cycles to time.
    pub clock_mhz: f64,
    /// Schedulers (issue slots) per core.
    pub schedulers_per_core: u32,
    /// The most SIMD-groups a core holds (`max_threads_per_core / 32`).
    pub max_simdgroups_per_core: u32,
    /// Peak bandwidths per level.
    pub peaks: Peaks,
}

/// One source file of the kernel, as it was compiled.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceFile {
    /// The path the file was read from (as given, or `<built-in>` names).
    pub path: String,
    /// Its text.
    pub text: String,
}

/// A trace file's content: [`TRACE_FORMAT`], [`TRACE_VERSION`], the model, the summary
/// report, the profile (binned counters, per instruction, per line), the sources, the
/// kernel's ISA and, when asked for, one SIMD-group's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Always [`TRACE_FORMAT`].
    pub format: String,
    /// The schema version, [`TRACE_VERSION`] when this build wrote it.
    pub version: u32,
    /// The metalsim version that wrote it.
    pub metalsim_version: String,
    /// The modeled GPU.
    pub model: ModelInfo,
    /// The summary of the run (what `report.json` holds).
    pub report: Report,
    /// The timing model's counters.
    pub profile: Profile,
    /// The kernel's source files, indexed like [`crate::InstProfile::file`].
    pub sources: Vec<SourceFile>,
    /// The kernel in the ISA text format, as it ran (after the optimizer unless
    /// `--no-opt`).
    pub isa: String,
    /// One SIMD-group's step-by-step record (`--record-simdgroup`).
    pub recording: Option<SimdgroupRecording>,
}
