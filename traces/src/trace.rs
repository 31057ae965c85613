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
    /// Schedulers per core.
    pub schedulers_per_core: u32,
    /// Instructions one scheduler can issue per cycle: 2 where the model dual-issues (to
    /// different pipelines), else 1. Issue slots = cycles x cores x schedulers x this.
    #[serde(default = "one")]
    pub issue_width: u32,
    /// The most SIMD-groups a core holds (`max_threads_per_core / 32`).
    pub max_simdgroups_per_core: u32,
    /// Bytes one threadgroup-memory wavefront serves (banks × bank width): what turns the
    /// wavefronts a run made into threadgroup bandwidth. 0 in traces written before it.
    #[serde(default)]
    pub threadgroup_wavefront_bytes: u32,
    /// Peak bandwidths per level.
    pub peaks: Peaks,
}

fn one() -> u32 {
    1
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

/// Why a trace file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file is not a metalsim trace, or is truncated or corrupt.
    #[error("{path}: not a readable metalsim trace file: {reason}")]
    Malformed {
        /// The file.
        path: String,
        /// What was wrong, with the position in the file where known.
        reason: String,
    },
    /// A trace of another schema version.
    #[error(
        "{path}: trace schema version {found}, this metalsim reads version {expected}; \
         write it again with this metalsim"
    )]
    Version {
        /// The file.
        path: String,
        /// The version it holds.
        found: u32,
        /// The version this build reads.
        expected: u32,
    },
}

/// Just the header fields, read first so a foreign or newer file gets a clear error.
#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u32>,
}

impl Trace {
    /// The report recomputed from this trace alone: `report` with its profile sections
    /// (issue, stalls, memory levels, limiter, costliest lines) derived again from
    /// `profile`, `model` and `sources`. For a trace metalsim wrote, equal to `report`.
    pub fn summary(&self) -> Report {
        let mut report = self.report.clone();
        crate::summary::summarize(&mut report, &self.profile, &self.model, &self.sources);
        report
    }

    /// The trace as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a trace always serializes")
    }

    /// Reads a trace from JSON text; `path` names it in errors.
    pub fn from_json(text: &str, path: &str) -> Result<Trace, TraceError> {
        let malformed = |e: serde_json::Error| TraceError::Malformed {
            path: path.to_string(),
            reason: e.to_string(),
        };
        let header: Header = serde_json::from_str(text).map_err(malformed)?;
        if header.format.as_deref() != Some(TRACE_FORMAT) {
            return Err(TraceError::Malformed {
                path: path.to_string(),
                reason: format!("its `format` field is not \"{TRACE_FORMAT}\""),
            });
        }
        match header.version {
            Some(TRACE_VERSION) => {}
            Some(found) => {
                return Err(TraceError::Version {
                    path: path.to_string(),
                    found,
                    expected: TRACE_VERSION,
                });
            }
            None => {
                return Err(TraceError::Malformed {
                    path: path.to_string(),
                    reason: "it has no `version` field".to_string(),
                });
            }
        }
        serde_json::from_str(text).map_err(malformed)
    }

    /// Writes the trace to `path`.
    pub fn write_file(&self, path: &std::path::Path) -> Result<(), TraceError> {
        std::fs::write(path, self.to_json()).map_err(|source| TraceError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// Reads the trace file at `path`.
    pub fn read_file(path: &std::path::Path) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| TraceError::Io {
            path: name.clone(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| TraceError::Malformed {
            path: name.clone(),
            reason: format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        })?;
        Trace::from_json(&text, &name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace() -> Trace {
        Trace {
            format: TRACE_FORMAT.to_string(),
            version: TRACE_VERSION,
            metalsim_version: "0.1.0".to_string(),
            model: ModelInfo {
                name: "m1".to_string(),
                cores: 8,
                ..ModelInfo::default()
            },
            report: Report::default(),
            profile: Profile::default(),
            sources: vec![SourceFile {
                path: "k.metal".to_string(),
                text: "kernel void k() {}\n".to_string(),
            }],
            isa: String::new(),
            recording: None,
        }
    }

    #[test]
    fn round_trips_through_json() {
        let t = trace();
        assert_eq!(Trace::from_json(&t.to_json(), "t").unwrap(), t);
    }

    #[test]
    fn truncated_foreign_and_newer_files_are_errors() {
        let json = trace().to_json();
        let cut = Trace::from_json(&json[..json.len() / 2], "t.json").unwrap_err();
        assert!(
            cut.to_string()
                .starts_with("t.json: not a readable metalsim trace")
        );
        let foreign = Trace::from_json("{\"format\":\"x\",\"version\":1}", "f").unwrap_err();
        assert!(foreign.to_string().contains("`format`"), "{foreign}");
        let newer = json.replacen(
            &format!("\"version\":{TRACE_VERSION}"),
            "\"version\":999",
            1,
        );
        let e = Trace::from_json(&newer, "n").unwrap_err();
        assert!(matches!(e, TraceError::Version { found: 999, .. }), "{e}");
    }
}
