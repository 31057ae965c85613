//! The measurement file: real numbers for a set of kernels, from any source (the NVIDIA
//! driver of `metalsim crosscheck`, the Mac harness in `tools/`, or a person reading
//! Xcode's counters). `docs/validation.md` documents the format; in short:
//!
//! ```json
//! {
//!   "format": "metalsim-measurement/1",
//!   "device": "Apple M2 Pro",
//!   "kernels": [
//!     { "name": "vector_add", "kernel": "vector_add.metal", "spec": "vector_add.toml",
//!       "time_us": 812.5,
//!       "counters": { "simd_efficiency": 1.0 },
//!       "outputs": "vector_add/outputs" }
//!   ]
//! }
//! ```
//!
//! Paths are relative to the measurement file's folder. Only `name`, `kernel`, `spec`
//! and `time_us` are required.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The `format` value of this version.
pub const FORMAT: &str = "metalsim-measurement/1";

/// A measurement file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MeasurementFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// The GPU the numbers come from.
    pub device: String,
    /// How the numbers were taken (free text: tool, clocks, repeats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// One entry per kernel and launch.
    pub kernels: Vec<Measurement>,
}

/// The measured numbers of one kernel and launch.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Measurement {
    /// A name unique in the file.
    pub name: String,
    /// The kernel file, relative to the measurement file.
    pub kernel: PathBuf,
    /// The launch spec, relative to the measurement file.
    pub spec: PathBuf,
    /// The kernel's time in microseconds (a median of GPU timestamps, say).
    pub time_us: f64,
    /// Every timed repetition, when kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub times_us: Vec<f64>,
    /// Hardware counters, each optional.
    #[serde(default)]
    pub counters: Counters,
    /// A folder holding the output buffers as `<name>.npy`, relative to the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<PathBuf>,
    /// The same source built in other ways (other compiler options), measured alike:
    /// how far the GPU's figures move with the compiler's choices alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_builds: Vec<OtherBuild>,
}

/// One kernel's source built another way (`ptxas -O1`, say, or a Metal library built
/// with other options) and measured like the main build.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OtherBuild {
    /// What differs from the main build, unique among the kernel's builds.
    pub build: String,
    /// The kernel's time in microseconds, as [`Measurement::time_us`].
    pub time_us: f64,
    /// Hardware counters, each optional.
    #[serde(default)]
    pub counters: Counters,
    /// Whether its output buffers were byte for byte the main build's (absent: not
    /// checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs_identical: Option<bool>,
}

/// Counters a GPU profiler reports that the simulator also counts. Every one is
/// optional: a file gives what its source can read.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Counters {
    /// Achieved occupancy: resident SIMD-groups over the maximum, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_occupancy: Option<f64>,
    /// Bytes read from DRAM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_bytes_read: Option<f64>,
    /// Bytes written to DRAM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_bytes_written: Option<f64>,
    /// Hit rate of the last-level GPU cache (L2), 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_hit_rate: Option<f64>,
    /// Active lanes per issued SIMD-group instruction over 32, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simd_efficiency: Option<f64>,
    /// Threadgroup-memory bank conflicts (extra passes of a conflicting access).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_conflicts: Option<f64>,
    /// SIMD-group (warp) instructions issued (machine instructions, not the ISA's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simd_instructions: Option<f64>,
    /// Kernel duration under the profiler, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiler_duration_us: Option<f64>,
    /// Registers per thread of the program that ran, as its compiler allocated them
    /// (they bound occupancy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registers_per_thread: Option<f64>,
}

impl Counters {
    /// DRAM bytes read and written, when both are known.
    pub fn dram_bytes(&self) -> Option<f64> {
        Some(self.dram_bytes_read? + self.dram_bytes_written?)
    }
}

/// Why a measurement file was refused.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct MeasurementError {
    /// The file.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

impl MeasurementFile {
    /// Reads and checks a measurement file.
    pub fn load(path: &Path) -> Result<MeasurementFile, MeasurementError> {
        let fail = |message: String| MeasurementError {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        let file: MeasurementFile = serde_json::from_str(&text)
            .map_err(|e| fail(format!("not a measurement file: {e}")))?;
        file.check().map_err(fail)?;
        Ok(file)
    }

    /// The file's own consistency: format, unique names, sensible numbers.
    pub fn check(&self) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!(
                "format is `{}`; this metalsim reads `{FORMAT}`",
                self.format
            ));
        }
        for (i, m) in self.kernels.iter().enumerate() {
            if self.kernels[..i].iter().any(|o| o.name == m.name) {
                return Err(format!("kernel `{}` is measured twice", m.name));
            }
            check_numbers(&m.name, m.time_us, &m.counters)?;
            for (j, b) in m.other_builds.iter().enumerate() {
                let name = format!("{} ({})", m.name, b.build);
                if m.other_builds[..j].iter().any(|o| o.build == b.build) {
                    return Err(format!("kernel `{name}` is measured twice"));
                }
                check_numbers(&name, b.time_us, &b.counters)?;
            }
        }
        Ok(())
    }

    /// Writes the file as pretty JSON.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(path, text + "\n")
    }
}

/// One build's time and counters: a positive time, and counters in their range.
fn check_numbers(name: &str, time_us: f64, c: &Counters) -> Result<(), String> {
    if !(time_us.is_finite() && time_us > 0.0) {
        return Err(format!(
            "kernel `{name}`: time_us must be a positive number of microseconds, not {time_us}"
        ));
    }
    for (counter, value, max) in [
        ("achieved_occupancy", c.achieved_occupancy, Some(1.0)),
        ("l2_hit_rate", c.l2_hit_rate, Some(1.0)),
        ("simd_efficiency", c.simd_efficiency, Some(1.0)),
        ("dram_bytes_read", c.dram_bytes_read, None),
        ("dram_bytes_written", c.dram_bytes_written, None),
        ("bank_conflicts", c.bank_conflicts, None),
        ("simd_instructions", c.simd_instructions, None),
        ("profiler_duration_us", c.profiler_duration_us, None),
        ("registers_per_thread", c.registers_per_thread, None),
    ] {
        if let Some(x) = value
            && (!x.is_finite() || x < 0.0 || max.is_some_and(|m| x > m * 1.0001))
        {
            return Err(format!(
                "kernel `{name}`: counter {counter} = {x} is out of range{}",
                if max.is_some() { " (0 to 1)" } else { "" }
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<MeasurementFile, String> {
        let file: MeasurementFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        file.check()?;
        Ok(file)
    }

    #[test]
    fn a_minimal_hand_written_file_reads() {
        let f = check(
            r#"{"format": "metalsim-measurement/1", "device": "Apple M1",
                "kernels": [{"name": "a", "kernel": "a.metal", "spec": "a.toml", "time_us": 10}]}"#,
        )
        .unwrap();
        assert_eq!(f.kernels[0].time_us, 10.0);
        assert_eq!(f.kernels[0].counters, Counters::default());
        assert_eq!(f.kernels[0].counters.dram_bytes(), None);
    }

    #[test]
    fn mistakes_are_named() {
        let bad = |body: &str| {
            check(&format!(
                r#"{{"format": "metalsim-measurement/1", "device": "x", "kernels": [{body}]}}"#
            ))
            .unwrap_err()
        };
        assert!(
            bad(r#"{"name": "a", "kernel": "a", "spec": "s", "time_us": -1}"#).contains("positive")
        );
        assert!(bad(r#"{"name": "a", "kernel": "a", "spec": "s", "time_us": 1, "counters": {"l2_hit_rate": 57}}"#)
            .contains("l2_hit_rate = 57 is out of range (0 to 1)"));
        assert!(
            bad(r#"{"name": "a", "kernel": "a", "spec": "s", "time_us": 1, "tme": 3}"#)
                .contains("unknown field `tme`")
        );
        assert!(bad(r#"{"name": "a", "kernel": "a", "spec": "s", "time_us": 1}, {"name": "a", "kernel": "a", "spec": "s", "time_us": 2}"#)
            .contains("measured twice"));
        let build = |b: &str| {
            format!(
                r#"{{"name": "a", "kernel": "a", "spec": "s", "time_us": 1, "other_builds": [{b}]}}"#
            )
        };
        assert!(
            bad(&build(r#"{"build": "-O0", "time_us": 0}"#))
                .contains("kernel `a (-O0)`: time_us must be a positive")
        );
        assert!(
            bad(&build(
                r#"{"build": "-O0", "time_us": 2, "counters": {"simd_efficiency": 2}}"#
            ))
            .contains("kernel `a (-O0)`: counter simd_efficiency = 2 is out of range")
        );
        assert!(
            bad(&build(
                r#"{"build": "-O0", "time_us": 2}, {"build": "-O0", "time_us": 3}"#
            ))
            .contains("kernel `a (-O0)` is measured twice")
        );
        let wrong_format = check(r#"{"format": "v0", "device": "x", "kernels": []}"#).unwrap_err();
        assert!(wrong_format.contains("reads `metalsim-measurement/1`"));
    }

    #[test]
    fn files_round_trip() {
        let f = MeasurementFile {
            format: FORMAT.into(),
            device: "NVIDIA H100".into(),
            method: Some("CUDA events".into()),
            kernels: vec![Measurement {
                name: "k".into(),
                kernel: "k.metal".into(),
                spec: "k.toml".into(),
                time_us: 3.5,
                times_us: vec![3.5, 3.6],
                counters: Counters {
                    dram_bytes_read: Some(10.0),
                    dram_bytes_written: Some(5.0),
                    ..Counters::default()
                },
                outputs: Some("k/outputs".into()),
                other_builds: vec![OtherBuild {
                    build: "ptxas -O0".into(),
                    time_us: 4.0,
                    counters: Counters {
                        dram_bytes_read: Some(12.0),
                        ..Counters::default()
                    },
                    outputs_identical: Some(true),
                }],
            }],
        };
        let text = serde_json::to_string(&f).unwrap();
        assert_eq!(check(&text).unwrap(), f);
        assert_eq!(f.kernels[0].counters.dram_bytes(), Some(15.0));
    }
}
