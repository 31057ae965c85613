//! GPU models: what metalsim knows about a chip, as data.
//!
//! A [`Gpu`] is read from TOML (serde). The built-in chips are compiled in
//! ([`builtin`], [`builtin_names`]); a user's own file loads with [`Gpu::from_toml_file`].
//! Every figure of a model file carries its source in the file's `[sources]` table (a
//! built-in file without one fails the tests), and where nothing is published the source
//! says `estimated` and from what.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Errors loading a model.
#[derive(Debug, Error)]
pub enum ModelError {
    /// No built-in model has this name.
    #[error("unknown GPU model `{name}`; built-in models: {known}")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The built-in names, comma separated.
        known: String,
    },
    /// The file could not be read.
    #[error("cannot read model file {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The TOML is malformed or a field is missing, unknown or of the wrong type; the
    /// message names the field.
    #[error("bad model file {path}: {message}")]
    Parse {
        /// The path (or built-in name).
        path: String,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A value is out of its valid range.
    #[error("bad model file {path}: `{field}` {problem}")]
    Invalid {
        /// The path.
        path: String,
        /// The field.
        field: String,
        /// What is wrong.
        problem: String,
    },
}

/// A value per timing class of instruction (the classes of `metalsim_isa::OpClass`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerClass {
    /// 32-bit float arithmetic.
    pub float_alu: u32,
    /// 16-bit float arithmetic.
    pub half_alu: u32,
    /// Integer add, logic, compare, select.
    pub int_alu: u32,
    /// Integer multiply, shifts, bit counts.
    pub int_mul: u32,
    /// Transcendentals, reciprocal, square root, division.
    pub special: u32,
    /// Conversions and rounding.
    pub convert: u32,
    /// Constants, special registers, bit casts.
    pub move_: u32,
    /// Threadgroup-memory access (beyond bank conflicts).
    pub threadgroup_memory: u32,
    /// Thread-memory (stack) access.
    pub thread_memory: u32,
    /// SIMD-group shuffles and broadcasts.
    pub simd_shuffle: u32,
    /// SIMD-group reductions and scans.
    pub simd_reduce: u32,
    /// SIMD-group 8x8 matrix multiply-accumulate.
    pub simd_matrix: u32,
    /// Atomic operations.
    pub atomic: u32,
    /// Barriers.
    pub barrier: u32,
    /// Branches.
    pub control: u32,
}

/// One cache level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheLevel {
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Associativity.
    pub ways: u32,
    /// Hit latency in GPU cycles, from the request.
    pub latency: u32,
    /// Bandwidth to the level above, bytes per cycle (per core for L1/L2, per core share
    /// for the SLC).
    pub bytes_per_cycle: u32,
}

/// Unified memory (DRAM).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dram {
    /// Latency in GPU cycles.
    pub latency: u32,
    /// Peak bandwidth in GB/s (10^9 bytes per second).
    pub bandwidth_gb_s: f64,
    /// Fraction of peak a streaming kernel reaches.
    pub efficiency: f64,
}

/// The memory hierarchy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// Cache line size in bytes.
    pub line_bytes: u32,
    /// Threadgroup-memory bandwidth per core, bytes per cycle.
    pub threadgroup_memory_bytes_per_cycle: u32,
    /// Per-core L1 data cache.
    pub l1: CacheLevel,
    /// GPU L2, shared by all cores.
    pub l2: CacheLevel,
    /// System-level cache, shared with the CPU.
    pub slc: CacheLevel,
    /// Unified memory.
    pub dram: Dram,
}

/// A GPU: cores, clock, occupancy limits, per-class latencies and issue costs, memory
/// hierarchy, and the source of every figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    /// Short name (`m1`, `m2-max`), used by `--model`.
    pub name: String,
    /// Human name.
    pub display_name: String,
    /// GPU family (`apple7`, `apple8`, `apple9`).
    pub family: String,
    /// GPU cores.
    pub cores: u32,
    /// Clock in MHz.
    pub clock_mhz: f64,
    /// Threads per SIMD-group.
    pub simd_width: u32,
    /// SIMD-group schedulers per core, each issuing one instruction per cycle.
    pub schedulers_per_core: u32,
    /// Resident threads per core at most.
    pub max_threads_per_core: u32,
    /// Threads per threadgroup at most.
    pub max_threads_per_threadgroup: u32,
    /// Resident threadgroups per core at most.
    pub max_threadgroups_per_core: u32,
    /// Register file per core in bytes.
    pub register_file_bytes: u32,
    /// Threadgroup memory per core in bytes.
    pub threadgroup_memory_per_core: u32,
    /// Threadgroup memory per threadgroup at most, in bytes.
    pub max_threadgroup_memory: u32,
    /// Cycles from issue until the result can be used, per class.
    pub latency: PerClass,
    /// Cycles the class's pipe is busy per SIMD-group instruction (inverse throughput).
    pub issue: PerClass,
    /// The memory hierarchy.
    pub memory: Memory,
    /// Where each figure comes from, keyed by its path (`clock_mhz`, `latency.float_alu`,
    /// `memory.l1.latency`).
    pub sources: BTreeMap<String, String>,
}

/// The built-in models, by name, as compiled-in TOML.
const BUILTIN: &[(&str, &str)] = &[("m1", include_str!("../chips/m1.toml"))];

/// Names of the built-in models.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// A built-in model by name.
pub fn builtin(name: &str) -> Result<Gpu, ModelError> {
    let (_, text) =
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| ModelError::Unknown {
                name: name.to_string(),
                known: builtin_names().join(", "),
            })?;
    Gpu::from_toml_str(text, &format!("<built-in {name}>"))
}

/// A built-in model by name, or a model file when `name_or_path` ends in `.toml`.
pub fn load(name_or_path: &str) -> Result<Gpu, ModelError> {
    if name_or_path.ends_with(".toml") {
        Gpu::from_toml_file(Path::new(name_or_path))
    } else {
        builtin(name_or_path)
    }
}

impl Gpu {
    /// Parses and validates a model; `origin` names it in errors.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Gpu, ModelError> {
        // The `move` class is spelled `move` in files; `move` is a Rust keyword.
        let gpu: Gpu = toml::from_str(&text.replace("\nmove =", "\nmove_ =")).map_err(|e| {
            ModelError::Parse {
                path: origin.to_string(),
                message: e.message().replace("move_", "move").to_string()
                    + &e.span()
                        .map(|s| {
                            let line = text[..s.start.min(text.len())].lines().count().max(1);
                            format!(" (line {line})")
                        })
                        .unwrap_or_default(),
            }
        })?;
        gpu.validate(origin)?;
        Ok(gpu)
    }

    /// Reads and validates a model file.
    pub fn from_toml_file(path: &Path) -> Result<Gpu, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Gpu::from_toml_str(&text, &path.display().to_string())
    }

    fn validate(&self, origin: &str) -> Result<(), ModelError> {
        let invalid = |field: &str, problem: &str| ModelError::Invalid {
            path: origin.to_string(),
            field: field.to_string(),
            problem: problem.to_string(),
        };
        let positive: [(&str, u64); 9] = [
            ("cores", self.cores as u64),
            ("simd_width", self.simd_width as u64),
            ("schedulers_per_core", self.schedulers_per_core as u64),
            ("max_threads_per_core", self.max_threads_per_core as u64),
            (
                "max_threads_per_threadgroup",
                self.max_threads_per_threadgroup as u64,
            ),
            (
                "max_threadgroups_per_core",
                self.max_threadgroups_per_core as u64,
            ),
            ("memory.line_bytes", self.memory.line_bytes as u64),
            ("memory.l1.size_bytes", self.memory.l1.size_bytes),
            ("memory.l2.size_bytes", self.memory.l2.size_bytes),
        ];
        for (field, v) in positive {
            if v == 0 {
                return Err(invalid(field, "must be positive"));
            }
        }
        if self.simd_width != 32 {
            return Err(invalid(
                "simd_width",
                "must be 32 (the simulator runs 32-lane SIMD-groups)",
            ));
        }
        if !(self.clock_mhz > 0.0 && self.clock_mhz.is_finite()) {
            return Err(invalid("clock_mhz", "must be a positive number"));
        }
        if !(self.memory.dram.bandwidth_gb_s > 0.0 && self.memory.dram.bandwidth_gb_s.is_finite()) {
            return Err(invalid(
                "memory.dram.bandwidth_gb_s",
                "must be a positive number",
            ));
        }
        if !(self.memory.dram.efficiency > 0.0 && self.memory.dram.efficiency <= 1.0) {
            return Err(invalid("memory.dram.efficiency", "must be in (0, 1]"));
        }
        if !self.memory.line_bytes.is_power_of_two() || self.memory.line_bytes < 16 {
            return Err(invalid(
                "memory.line_bytes",
                "must be a power of two of at least 16",
            ));
        }
        for (name, level) in [
            ("l1", &self.memory.l1),
            ("l2", &self.memory.l2),
            ("slc", &self.memory.slc),
        ] {
            if level.ways == 0 {
                return Err(invalid(&format!("memory.{name}.ways"), "must be positive"));
            }
            if level.bytes_per_cycle == 0 {
                return Err(invalid(
                    &format!("memory.{name}.bytes_per_cycle"),
                    "must be positive",
                ));
            }
            let sets = level.size_bytes / (self.memory.line_bytes as u64 * level.ways as u64);
            if sets == 0 {
                return Err(invalid(
                    &format!("memory.{name}.size_bytes"),
                    "is smaller than one set (line_bytes x ways)",
                ));
            }
        }
        for (name, v) in self.issue.iter() {
            if v == 0 {
                return Err(invalid(&format!("issue.{name}"), "must be positive"));
            }
        }
        Ok(())
    }

    /// DRAM bandwidth a streaming kernel reaches, in bytes per GPU cycle for the whole chip.
    pub fn dram_bytes_per_cycle(&self) -> f64 {
        self.memory.dram.bandwidth_gb_s * 1e9 * self.memory.dram.efficiency / (self.clock_mhz * 1e6)
    }

    /// Peak FP32 throughput in TFLOPS (an FMA counts as two operations).
    pub fn peak_fp32_tflops(&self) -> f64 {
        self.cores as f64
            * self.schedulers_per_core as f64
            * self.simd_width as f64
            * 2.0
            * self.clock_mhz
            / 1e6
    }

    /// Cycles to microseconds at the model's clock.
    pub fn cycles_to_us(&self, cycles: u64) -> f64 {
        cycles as f64 / self.clock_mhz
    }

    /// The dotted paths of every figure (`cores`, `latency.float_alu`, `memory.l1.latency`),
    /// each of which must have an entry in `sources`.
    pub fn figure_paths(&self) -> Vec<String> {
        let value = toml::Value::try_from(self).unwrap_or(toml::Value::Boolean(false));
        let mut out = Vec::new();
        collect_paths(&value, "", &mut out);
        out.into_iter()
            .filter(|p| !p.starts_with("sources"))
            .map(|p| p.replace("move_", "move"))
            .collect()
    }
}

impl PerClass {
    /// The entries with their file names.
    pub fn iter(&self) -> [(&'static str, u32); 15] {
        [
            ("float_alu", self.float_alu),
            ("half_alu", self.half_alu),
            ("int_alu", self.int_alu),
            ("int_mul", self.int_mul),
            ("special", self.special),
            ("convert", self.convert),
            ("move", self.move_),
            ("threadgroup_memory", self.threadgroup_memory),
            ("thread_memory", self.thread_memory),
            ("simd_shuffle", self.simd_shuffle),
            ("simd_reduce", self.simd_reduce),
            ("simd_matrix", self.simd_matrix),
            ("atomic", self.atomic),
            ("barrier", self.barrier),
            ("control", self.control),
        ]
    }
}

fn collect_paths(v: &toml::Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, child) in t {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                collect_paths(child, &p, out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_loads_and_every_figure_has_a_source() {
        for name in builtin_names() {
            let gpu = builtin(name).unwrap();
            assert_eq!(gpu.name, name);
            for path in gpu.figure_paths() {
                let src = gpu.sources.get(&path);
                assert!(
                    src.is_some_and(|s| !s.trim().is_empty()),
                    "{name}: figure `{path}` has no source"
                );
            }
        }
    }

    #[test]
    fn m1_figures() {
        let gpu = builtin("m1").unwrap();
        assert_eq!(gpu.cores, 8);
        // 8 cores x 128 lanes x 2 x 1.278 GHz = 2.617 TFLOPS.
        assert!((gpu.peak_fp32_tflops() - 2.617).abs() < 0.01);
        // 68.25 GB/s x 0.85 / 1.278 GHz = 45.4 bytes per cycle.
        assert!((gpu.dram_bytes_per_cycle() - 45.39).abs() < 0.1);
    }

    #[test]
    fn unknown_name_lists_the_known_ones() {
        let e = builtin("m9").unwrap_err().to_string();
        assert!(e.contains("m9") && e.contains("m1"), "{e}");
    }

    #[test]
    fn bad_files_name_the_field() {
        let good = include_str!("../chips/m1.toml");
        let e = Gpu::from_toml_str(&good.replace("cores = 8", "cores = \"eight\""), "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.toml") && e.contains("line"), "{e}");
        let e = Gpu::from_toml_str(&good.replace("cores = 8\n", ""), "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cores"), "{e}");
        let e = Gpu::from_toml_str(
            &good.replace("efficiency = 0.85", "efficiency = 1.5"),
            "x.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("memory.dram.efficiency"), "{e}");
        let e = Gpu::from_toml_str(&good.replace("ways = 8", "ways = 0"), "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("memory.l1.ways"), "{e}");
        let e = Gpu::from_toml_str(&format!("bogus = 1\n{good}"), "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus"), "{e}");
    }
}
