//! What a run produced, in the forms people and programs read.
//!
//! - [`Report`]: the summary of one simulated dispatch, the fields `report.json` holds and
//!   the human report `metalsim run` prints.
//! - [`Profile`] (module `profile`): what the timing model counted: counters in time bins,
//!   per ISA instruction and per source line, stall reasons, and one SIMD-group's record.
//! - [`Trace`]: the self-describing trace file holding all of it.
//! - [`summarize`] fills a report's profile sections (issue, stalls, memory per level,
//!   [`LimiterReport`], costliest lines) from a profile; [`Trace::summary`] does it from a
//!   trace file alone.
//! - Writers of a trace: [`perfetto_json`] (Chrome/Perfetto trace events), [`write_csv`]
//!   (the tables as CSV), [`write_plots`] (PNG and SVG plots).

mod export;
mod limiter;
mod perfetto;
mod plot;
mod profile;
mod report;
mod sections;
mod summary;
#[cfg(test)]
mod test_trace;
mod trace;

pub use export::{OutputError, write_csv};
pub use limiter::{LimiterCandidate, LimiterReport, SATURATED};
pub use perfetto::perfetto_json;
pub use plot::write_plots;
pub use profile::{
    Bin, Counters, InstProfile, LevelTraffic, LineProfile, MemoryTraffic, Profile, RecordedStep,
    RegisterValues, SimdgroupRecording, StallReason, ThreadgroupSpan,
};
pub use report::{
    CacheReport, FaultReport, FindingReport, LevelReport, MemorySummary, OccupancyReport, Report,
    SamplingReport,
};
pub use summary::{
    ClassIssue, IssueReport, LineReport, MemoryLevelReport, REPORTED_LINES, StallShare,
    StallsReport, ThreadgroupMemoryReport, costliest_lines, summarize,
};
pub use trace::{ModelInfo, Peaks, SourceFile, TRACE_FORMAT, TRACE_VERSION, Trace, TraceError};
