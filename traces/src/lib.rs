//! What a run produced, in the forms people and programs read.
//!
//! - [`Report`]: the summary of one simulated dispatch, the fields `report.json` holds and
//!   the human report `metalsim run` prints.
//! - [`Profile`] (module `profile`): what the timing model counted: counters in time bins,
//!   per ISA instruction and per source line, stall reasons, and one SIMD-group's record.
//! - [`Trace`]: the self-describing trace file holding all of it.

mod profile;
mod report;
mod trace;

pub use profile::{
    Bin, Counters, InstProfile, LevelTraffic, LineProfile, MemoryTraffic, Profile, RecordedStep,
    RegisterValues, SimdgroupRecording, StallReason, ThreadgroupSpan,
};
pub use report::{
    CacheReport, FaultReport, FindingReport, LevelReport, MemorySummary, OccupancyReport, Report,
};
pub use trace::{ModelInfo, Peaks, SourceFile, TRACE_FORMAT, TRACE_VERSION, Trace, TraceError};
