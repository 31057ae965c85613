//! What a run produced, in the forms people and programs read.
//!
//! [`Report`] is the summary of one simulated dispatch: the fields `report.json` holds
//! (kernel, model, cycles, time, counts of threadgroups, SIMD-groups and instructions) and
//! the short human report `metalsim run` prints. Later: binned counters, per-line profiles,
//! trace files and plots.

mod report;

pub use report::{
    CacheReport, FaultReport, FindingReport, LevelReport, MemorySummary, OccupancyReport, Report,
};
