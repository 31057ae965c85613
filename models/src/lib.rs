//! GPU models: what metalsim knows about a chip, as data.
//!
//! A [`Gpu`] is read from TOML (serde). The built-in chips are compiled in
//! ([`builtin`], [`builtin_names`]); a user's own file loads with [`Gpu::from_toml_file`].
//! Every figure of a model file carries its source in the file's `[sources]` table (a
//! built-in file without one fails the tests), and where nothing is published the source
//! says `estimated` and from what. `docs/models.md` describes every field.

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

/// A value per timing class of instruction: the classes of `metalsim_isa::OpClass`, with
/// 32-bit float multiply-add apart from the other float arithmetic (it reads three
/// operands and is slower to its result).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerClass<T> {
    /// 32-bit float add, multiply, compare, min/max (not FMA).
    pub float_alu: T,
    /// 32-bit float fused multiply-add.
    pub float_fma: T,
    /// 16-bit float arithmetic.
    pub half_alu: T,
    /// Integer add, logic, compare, select.
    pub int_alu: T,
    /// Integer multiply, shifts, bit counts.
    pub int_mul: T,
    /// Transcendentals, reciprocal, square root, division.
    pub special: T,
    /// Conversions and rounding.
    pub convert: T,
    /// Constants, special registers, bit casts.
    #[serde(rename = "move")]
    pub move_: T,
    /// Device and constant memory access (the issue side; the caches and DRAM add their
    /// own latency).
    pub device_memory: T,
    /// Threadgroup-memory access (one conflict-free wavefront).
    pub threadgroup_memory: T,
    /// Thread-memory (stack) access.
    pub thread_memory: T,
    /// SIMD-group shuffles and broadcasts.
    pub simd_shuffle: T,
    /// SIMD-group reductions and scans.
    pub simd_reduce: T,
    /// SIMD-group 8x8 matrix multiply-accumulate.
    pub simd_matrix: T,
    /// Atomic operations (device atomics: one read-modify-write at L2).
    pub atomic: T,
    /// Barriers.
    pub barrier: T,
    /// Branches.
    pub control: T,
}

/// How resident SIMD-groups are limited by on-chip memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Occupancy {
    /// Apple9 Dynamic Caching: registers, threadgroup memory and caches share one on-chip
    /// pool (`on_chip_memory_bytes`) and registers are allocated as they are used, so a
    /// thread is charged the registers it holds on average rather than at its peak.
    /// Without it (Apple7/8) each thread reserves its peak register count from
    /// `register_file_bytes` and threadgroup memory comes from
    /// `threadgroup_memory_per_core`.
    pub dynamic_caching: bool,
    /// Resident threads are counted in steps of this many when registers limit them.
    pub register_granule_threads: u32,
    /// Bytes of one 32-bit register per thread.
    pub register_bytes: u32,
    /// The shared on-chip pool per core in bytes (used with `dynamic_caching`).
    pub on_chip_memory_bytes: u32,
    /// Uniform registers, in 32-bit registers: the file of values the same for every
    /// thread (dispatch-uniform scalars and buffer addresses) that ALU instructions read
    /// as operands; what does not fit is held in general-purpose registers.
    pub uniform_registers: u32,
}

/// One cache level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheLevel {
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Associativity.
    pub ways: u32,
    /// Load-to-use latency in GPU cycles of a request this level serves.
    pub latency: u32,
    /// Bandwidth in bytes per cycle: per core for `l1` (its port) and `l2` (each core's
    /// link to it), for the whole chip for `slc`.
    pub bytes_per_cycle: f64,
    /// Ways of its set a dirty line takes (1 to `ways`): a cache that holds less written
    /// data than read data. Absent: 1, like a clean line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_line_ways: Option<u32>,
    /// With `dirty_line_ways` and `memory.sector_bytes`: a dirty line's extra ways are in
    /// proportion to its dirty sectors (a line with one of four sectors written takes
    /// `1 + (dirty_line_ways - 1) / 4` ways), so the room for written data is counted in
    /// sectors. Absent or false: a dirty line takes `dirty_line_ways` whatever it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_room_per_sector: Option<bool>,
    /// Sectors written in part that a set keeps, as the ways that lines of only such
    /// sectors would take each (1 to `ways`; needs `memory.partial_sector_read`): a set
    /// keeps `ways / partial_line_ways` lines' worth of them, and beyond that writes back
    /// its least recently used line holding one. Absent: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_line_ways: Option<u32>,
    /// Lines holding a sector written in part that the whole level keeps, however many
    /// such sectors each holds (needs `memory.partial_sector_read`; not with
    /// `partial_line_ways`): spread evenly over the level's sets, and beyond a set's
    /// share its least recently used line holding one is written back. Absent: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_lines: Option<u64>,
    /// For `l1` (needs `memory.sector_bytes`): a load that misses fills only the sectors
    /// it asks for, and a later load hits only where the line holds all of its sectors
    /// (the rest come from L2, the link moving just those), as NVIDIA's L1 allocates a
    /// line and fills it by sector. Absent or false: a miss fills the whole line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sector_fill: Option<bool>,
    /// For `l1`: threadgroup memory is served by the L1's data port (one SRAM and one
    /// pipeline, as NVIDIA's L1 and shared memory are), so threadgroup wavefronts and the
    /// L1's lines queue on one port, each taking its own time. Absent or false: each has
    /// its own port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serves_threadgroup: Option<bool>,
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
    /// Loaded latency: `[GB/s, cycles]` points in ascending GB/s, the cycles added to
    /// `latency` while DRAM moves that many GB/s (its recent throughput), interpolated
    /// linearly between points and held at the last point beyond it. Absent: the latency
    /// does not depend on the load (only the bandwidth queue's backlog adds to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_latency: Option<Vec<[f64; 2]>>,
    /// Loaded latency while half the traffic is writes (a copy), as `loaded_latency`'s
    /// points (needs it): where DRAM's recent traffic is a share `w` written, the added
    /// cycles move from `loaded_latency`'s towards these by `min(1, 2w)`. Absent: writes
    /// load DRAM as reads do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_latency_mixed: Option<Vec<[f64; 2]>>,
}

/// The memory hierarchy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// Cache line size in bytes.
    pub line_bytes: u32,
    /// Threadgroup-memory banks; a wavefront serves one word per bank.
    pub threadgroup_banks: u32,
    /// Bytes per threadgroup-memory bank word.
    pub threadgroup_bank_bytes: u32,
    /// Threadgroup-memory ports per core, each serving one wavefront every
    /// `issue.threadgroup_memory` cycles; one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threadgroup_ports: Option<u32>,
    /// Whether the lines still dirty when a dispatch ends count as its DRAM traffic (and
    /// the dispatch lasts at least as long as DRAM takes to move all of its traffic);
    /// true when absent. False for a GPU whose counters see only what was written back
    /// during the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_back_at_end: Option<bool>,
    /// Cycles one device-atomic request (the lanes of one SIMD-group instruction that name
    /// one line) holds its line's atomic unit at L2: requests on one unit run one after
    /// another (see `atomic_server_lines`). Absent: 0, and where `atomic_sector_cycles`
    /// is absent too, atomics serialise per address only (`issue.atomic` per operation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_line_cycles: Option<u32>,
    /// Cycles one device-atomic request holds its line's atomic unit per sector it
    /// touches, times the most lanes of the request naming one word of that sector
    /// (lanes on one word run one after another, distinct words of a sector together),
    /// besides `atomic_line_cycles`; the unit's queue then stands for the per-address
    /// one. Absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_sector_cycles: Option<f64>,
    /// Adjacent lines (a power of two, aligned) that share one atomic unit at L2, whose
    /// requests run one after another. Absent: 1, a unit per line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_server_lines: Option<u32>,
    /// Bytes of a sector, the part of a line that L1 and L2 write as one: caches keep
    /// dirty sectors, and a write-back moves only those (also used by
    /// `store_sector_cycles`). Absent: lines are written back whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sector_bytes: Option<u32>,
    /// Cycles a core's store path to L2 is busy per sector a store instruction writes
    /// sparsely, one word of it (needs `sector_bytes`). Absent: stores cost their lines on the core's L2 link
    /// only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_sector_cycles: Option<f64>,
    /// Cycles a core's store path to L2 is busy per line holding a sector a store
    /// instruction writes sparsely, beside `store_sector_cycles` per sector (needs
    /// `store_sector_cycles`). Absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_line_cycles: Option<f64>,
    /// Store instructions with sparsely written sectors that a core's store path holds
    /// waiting (needs `store_sector_cycles`): a SIMD-group whose store finds it full stays
    /// at that store until the oldest leaves. Absent: no limit (a SIMD-group never waits
    /// for its stores to leave the core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_queue: Option<u32>,
    /// Whether a store in a core's store path reads its registers only when it leaves
    /// the path (needs `store_queue`): a device store then waits before it issues while
    /// the path is full (not after; a freed place goes to the oldest SIMD-group of the
    /// core that waits for one), and an instruction that writes a register a store
    /// still in the path reads waits until that store leaves. Absent: false, a store
    /// reads its registers at issue and a full path holds the SIMD-group after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_reads_at_leave: Option<bool>,
    /// Whether a device load waits for a place in the store path as a store does (needs
    /// `store_reads_at_leave`): it does not issue while the path is full or while a
    /// SIMD-group that goes before it waits for a place, and once issued it takes no
    /// place (loads and stores share one queue into the core's memory path, and a
    /// load passes through it in a few cycles). Absent: false, loads never wait for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_path_loads: Option<bool>,
    /// The period, in core cycles, of the store path's starvation clock (needs
    /// `store_reads_at_leave`): a SIMD-group that has waited for a place since before
    /// the clock's last tick but one goes before every SIMD-group that has not, and
    /// the oldest goes first among either. Absent: the oldest always goes first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_starve_cycles: Option<u32>,
    /// Whether a dirty sector leaving the last cache level holding only part of its bytes
    /// (brought in by stores that did not write all of it) is read from DRAM to be merged
    /// before it is written: memory whose error-correcting code covers a whole sector
    /// writes only whole sectors (needs `sector_bytes`; caches then track written bytes
    /// in 4-byte units). Absent: false, a partial sector is written as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_sector_read: Option<bool>,
    /// Per-core L1 data cache.
    pub l1: CacheLevel,
    /// GPU L2, shared by all cores.
    pub l2: CacheLevel,
    /// System-level cache, shared with the CPU.
    pub slc: CacheLevel,
    /// Unified memory.
    pub dram: Dram,
}

/// The scheduling policy of a SIMD-group scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerPolicy {
    /// Keep issuing from the SIMD-group that issued last while it can; otherwise the oldest
    /// that can.
    GreedyThenOldest,
    /// The next SIMD-group after the one that issued last that can issue, in turn.
    LooseRoundRobin,
}

impl SchedulerPolicy {
    /// The name used in model files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerPolicy::GreedyThenOldest => "greedy_then_oldest",
            SchedulerPolicy::LooseRoundRobin => "loose_round_robin",
        }
    }
}

/// A GPU: cores, clock, occupancy limits, per-class latencies, throughputs and pipelines,
/// memory hierarchy, and the source of every figure.
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
    /// SIMD-group schedulers per core, each issuing one instruction per cycle (two with
    /// `dual_issue_pipes`).
    pub schedulers_per_core: u32,
    /// How a scheduler picks among its ready SIMD-groups.
    pub scheduler_policy: SchedulerPolicy,
    /// Pipelines that can take an instruction each in the same cycle from one scheduler
    /// (Apple9 co-issue of FP32, FP16 and integer work); empty when a scheduler issues one
    /// instruction per cycle.
    pub dual_issue_pipes: Vec<String>,
    /// Resident threads per core at most.
    pub max_threads_per_core: u32,
    /// Threads per threadgroup at most.
    pub max_threads_per_threadgroup: u32,
    /// Resident threadgroups per core at most.
    pub max_threadgroups_per_core: u32,
    /// Cycles a core takes to launch one threadgroup: its threadgroups start at least this
    /// far apart. Absent: threadgroups start as soon as they fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threadgroup_launch_cycles: Option<u32>,
    /// Cycles a core takes per SIMD-group to launch a threadgroup: a threadgroup of `n`
    /// SIMD-groups starts `n` times this after its launch begins, and occupies the
    /// launcher at least that long (`threadgroup_launch_cycles` is the least). Absent:
    /// a threadgroup starts as its launch begins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simdgroup_launch_cycles: Option<u32>,
    /// Cycles a dispatch takes beyond its threadgroups' work: the GPU's front end
    /// starting it and reporting it done, as a host's timer around one dispatch sees.
    /// Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_cycles: Option<u32>,
    /// Whether each group of lanes that reaches the reconvergence point of a divergent
    /// branch apart runs one instruction there with its own lanes, as NVIDIA GPUs since
    /// Volta run `BSYNC` once per arriving group: an if that splits a SIMD-group costs
    /// two such instructions, an issue slot each, and their idle lanes count in the SIMD
    /// efficiency. Absent or false: lanes reconverge without an instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconvergence_instruction: Option<bool>,
    /// Register file per core in bytes.
    pub register_file_bytes: u32,
    /// Threadgroup memory per core in bytes.
    pub threadgroup_memory_per_core: u32,
    /// Threadgroup memory per threadgroup at most, in bytes.
    pub max_threadgroup_memory: u32,
    /// How on-chip memory limits residency.
    pub occupancy: Occupancy,
    /// Cycles from issue until the result can be used, per class.
    pub latency: PerClass<u32>,
    /// Cycles the class's pipeline is busy per SIMD-group instruction (inverse
    /// throughput); for threadgroup memory, per wavefront on the core's port; for device
    /// atomics, per operation on one address at L2.
    pub issue: PerClass<u32>,
    /// The pipeline each class issues to; classes naming the same pipeline share it.
    pub pipe: PerClass<String>,
    /// The memory hierarchy.
    pub memory: Memory,
    /// Operations whose latency and issue cost differ from their class's, keyed
    /// `<operation>_<type>` (`div_i32`, `sin_f32`; [`OP_COST_OPERATIONS`],
    /// [`OP_COST_TYPES`]): a GPU that runs some operations of one class as long
    /// instruction sequences. Absent: every operation costs its class's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_costs: Option<BTreeMap<String, OpCost>>,
    /// Where each figure comes from, keyed by its path (`clock_mhz`, `latency.float_alu`,
    /// `memory.l1.latency`).
    pub sources: BTreeMap<String, String>,
}

/// The cost of one operation that a model sets apart from its timing class
/// ([`Gpu::op_costs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpCost {
    /// Cycles from issue until the result can be used.
    pub latency: u32,
    /// Cycles its pipeline is busy per SIMD-group instruction.
    pub issue: u32,
}

/// The operations [`Gpu::op_costs`] can name (`<operation>_<type>`): integer and float
/// division and remainder, and the math functions (isa's `MathFn` names).
pub const OP_COST_OPERATIONS: &[&str] = &[
    "div", "rem", "floor", "ceil", "trunc", "round", "rint", "sqrt", "rsqrt", "rcp", "exp", "exp2",
    "log", "log2", "sin", "cos", "tan", "pow", "asin", "acos", "atan", "atan2", "sinh", "cosh",
    "tanh", "asinh", "acosh", "atanh", "sinpi", "cospi", "tanpi", "exp10", "log10", "fmod",
    "ldexp",
];

/// The operand types of an [`Gpu::op_costs`] name.
pub const OP_COST_TYPES: &[&str] = &[
    "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32",
];

/// The built-in models, by name, as compiled-in TOML.
const BUILTIN: &[(&str, &str)] = &[
    ("m1", include_str!("../chips/m1.toml")),
    ("m1-pro", include_str!("../chips/m1-pro.toml")),
    ("m1-max", include_str!("../chips/m1-max.toml")),
    ("m1-ultra", include_str!("../chips/m1-ultra.toml")),
    ("m2", include_str!("../chips/m2.toml")),
    ("m2-pro", include_str!("../chips/m2-pro.toml")),
    ("m2-max", include_str!("../chips/m2-max.toml")),
    ("m2-ultra", include_str!("../chips/m2-ultra.toml")),
    ("m3", include_str!("../chips/m3.toml")),
    ("m3-pro", include_str!("../chips/m3-pro.toml")),
    ("m3-max", include_str!("../chips/m3-max.toml")),
    ("m3-ultra", include_str!("../chips/m3-ultra.toml")),
    ("m4", include_str!("../chips/m4.toml")),
    ("m4-pro", include_str!("../chips/m4-pro.toml")),
    ("m4-max", include_str!("../chips/m4-max.toml")),
    ("a14", include_str!("../chips/a14.toml")),
    ("a15", include_str!("../chips/a15.toml")),
    ("a16", include_str!("../chips/a16.toml")),
    ("a17-pro", include_str!("../chips/a17-pro.toml")),
    ("h100", include_str!("../chips/h100.toml")),
];

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
        let gpu: Gpu = toml::from_str(text).map_err(|e| ModelError::Parse {
            path: origin.to_string(),
            message: e.message().trim_end().to_string()
                + &e.span()
                    .map(|s| {
                        let line = text[..s.start.min(text.len())].lines().count().max(1);
                        format!(" (line {line})")
                    })
                    .unwrap_or_default(),
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
        let m = &self.memory;
        let positive: [(&str, u64); 16] = [
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
            ("register_file_bytes", self.register_file_bytes as u64),
            (
                "occupancy.register_granule_threads",
                self.occupancy.register_granule_threads as u64,
            ),
            (
                "occupancy.register_bytes",
                self.occupancy.register_bytes as u64,
            ),
            (
                "occupancy.on_chip_memory_bytes",
                self.occupancy.on_chip_memory_bytes as u64,
            ),
            (
                "occupancy.uniform_registers",
                self.occupancy.uniform_registers as u64,
            ),
            ("memory.line_bytes", m.line_bytes as u64),
            ("memory.threadgroup_banks", m.threadgroup_banks as u64),
            (
                "memory.threadgroup_bank_bytes",
                m.threadgroup_bank_bytes as u64,
            ),
            ("memory.l1.size_bytes", m.l1.size_bytes),
            ("memory.l2.size_bytes", m.l2.size_bytes),
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
        if self.max_threads_per_threadgroup > 1024 {
            return Err(invalid(
                "max_threads_per_threadgroup",
                "must be at most 1024 (Metal's limit)",
            ));
        }
        if !(self.clock_mhz > 0.0 && self.clock_mhz.is_finite()) {
            return Err(invalid("clock_mhz", "must be a positive number"));
        }
        if !(m.dram.bandwidth_gb_s > 0.0 && m.dram.bandwidth_gb_s.is_finite()) {
            return Err(invalid(
                "memory.dram.bandwidth_gb_s",
                "must be a positive number",
            ));
        }
        if !(m.dram.efficiency > 0.0 && m.dram.efficiency <= 1.0) {
            return Err(invalid("memory.dram.efficiency", "must be in (0, 1]"));
        }
        if !m.line_bytes.is_power_of_two() || m.line_bytes < 16 {
            return Err(invalid(
                "memory.line_bytes",
                "must be a power of two of at least 16",
            ));
        }
        if m.threadgroup_banks > 64 || !m.threadgroup_banks.is_power_of_two() {
            return Err(invalid(
                "memory.threadgroup_banks",
                "must be a power of two of at most 64",
            ));
        }
        if m.threadgroup_ports == Some(0) {
            return Err(invalid("memory.threadgroup_ports", "must be positive"));
        }
        if let Some(b) = m.sector_bytes
            && (!b.is_power_of_two() || b < 8 || b > m.line_bytes || m.line_bytes / b > 64)
        {
            return Err(invalid(
                "memory.sector_bytes",
                "must be a power of two from 8 to memory.line_bytes, at most 64 per line",
            ));
        }
        if let Some(c) = m.store_sector_cycles {
            if m.sector_bytes.is_none() {
                return Err(invalid(
                    "memory.store_sector_cycles",
                    "needs memory.sector_bytes",
                ));
            }
            if !(c > 0.0 && c.is_finite()) {
                return Err(invalid(
                    "memory.store_sector_cycles",
                    "must be a positive number",
                ));
            }
        }
        if m.l1.sector_fill == Some(true) && m.sector_bytes.is_none() {
            return Err(invalid(
                "memory.l1.sector_fill",
                "needs memory.sector_bytes",
            ));
        }
        for (name, level) in [("memory.l2", &m.l2), ("memory.slc", &m.slc)] {
            for (field, set) in [
                ("sector_fill", level.sector_fill.is_some()),
                ("serves_threadgroup", level.serves_threadgroup.is_some()),
            ] {
                if set {
                    return Err(invalid(&format!("{name}.{field}"), "is for memory.l1 only"));
                }
            }
        }
        if m.l1.serves_threadgroup == Some(true) && m.threadgroup_ports.is_some_and(|n| n > 1) {
            return Err(invalid(
                "memory.l1.serves_threadgroup",
                "needs one threadgroup port (memory.threadgroup_ports absent or 1)",
            ));
        }
        if let Some(c) = m.atomic_sector_cycles
            && !(c > 0.0 && c.is_finite())
        {
            return Err(invalid(
                "memory.atomic_sector_cycles",
                "must be a positive number",
            ));
        }
        if let Some(n) = m.atomic_server_lines
            && (!n.is_power_of_two()
                || (m.atomic_line_cycles.is_none() && m.atomic_sector_cycles.is_none()))
        {
            return Err(invalid(
                "memory.atomic_server_lines",
                "needs memory.atomic_line_cycles or memory.atomic_sector_cycles, and must be a power of two",
            ));
        }
        if let Some(c) = m.store_line_cycles
            && (m.store_sector_cycles.is_none() || !(c >= 0.0 && c.is_finite()))
        {
            return Err(invalid(
                "memory.store_line_cycles",
                "needs memory.store_sector_cycles, and must be a number of at least 0",
            ));
        }
        if let Some(n) = m.store_queue
            && (m.store_sector_cycles.is_none() || n == 0)
        {
            return Err(invalid(
                "memory.store_queue",
                "needs memory.store_sector_cycles, and must be at least 1",
            ));
        }
        if m.store_reads_at_leave == Some(true) && m.store_queue.is_none() {
            return Err(invalid(
                "memory.store_reads_at_leave",
                "needs memory.store_queue",
            ));
        }
        if m.store_path_loads == Some(true) && m.store_reads_at_leave != Some(true) {
            return Err(invalid(
                "memory.store_path_loads",
                "needs memory.store_reads_at_leave",
            ));
        }
        if let Some(n) = m.store_starve_cycles
            && (m.store_reads_at_leave != Some(true) || n == 0)
        {
            return Err(invalid(
                "memory.store_starve_cycles",
                "needs memory.store_reads_at_leave, and must be at least 1",
            ));
        }
        if m.partial_sector_read == Some(true) {
            if m.sector_bytes.is_none() {
                return Err(invalid(
                    "memory.partial_sector_read",
                    "needs memory.sector_bytes",
                ));
            }
            if m.line_bytes > 256 {
                return Err(invalid(
                    "memory.partial_sector_read",
                    "needs memory.line_bytes of at most 256 (64 units of 4 bytes)",
                ));
            }
        }
        for (name, curve) in [
            ("memory.dram.loaded_latency", &m.dram.loaded_latency),
            (
                "memory.dram.loaded_latency_mixed",
                &m.dram.loaded_latency_mixed,
            ),
        ] {
            let Some(points) = curve else { continue };
            let finite = points
                .iter()
                .all(|p| p[0] >= 0.0 && p[1] >= 0.0 && p[0].is_finite() && p[1].is_finite());
            let ascending = points.windows(2).all(|w| w[0][0] < w[1][0]);
            if points.is_empty() || !finite || !ascending {
                return Err(invalid(
                    name,
                    "must be [GB/s, cycles] points, non-negative, in ascending GB/s",
                ));
            }
        }
        if m.dram.loaded_latency_mixed.is_some() && m.dram.loaded_latency.is_none() {
            return Err(invalid(
                "memory.dram.loaded_latency_mixed",
                "needs memory.dram.loaded_latency",
            ));
        }
        if !m.threadgroup_bank_bytes.is_power_of_two() {
            return Err(invalid(
                "memory.threadgroup_bank_bytes",
                "must be a power of two",
            ));
        }
        for (name, level) in [("l1", &m.l1), ("l2", &m.l2), ("slc", &m.slc)] {
            if level.ways == 0 {
                return Err(invalid(&format!("memory.{name}.ways"), "must be positive"));
            }
            if level
                .dirty_line_ways
                .is_some_and(|d| d == 0 || d > level.ways)
            {
                return Err(invalid(
                    &format!("memory.{name}.dirty_line_ways"),
                    "must be from 1 to the level's ways",
                ));
            }
            if let Some(p) = level.partial_line_ways {
                if p == 0 || p > level.ways {
                    return Err(invalid(
                        &format!("memory.{name}.partial_line_ways"),
                        "must be from 1 to the level's ways",
                    ));
                }
                if m.partial_sector_read != Some(true) {
                    return Err(invalid(
                        &format!("memory.{name}.partial_line_ways"),
                        "needs memory.partial_sector_read = true",
                    ));
                }
            }
            if level.dirty_room_per_sector == Some(true)
                && (level.dirty_line_ways.is_none() || m.sector_bytes.is_none())
            {
                return Err(invalid(
                    &format!("memory.{name}.dirty_room_per_sector"),
                    "needs dirty_line_ways and memory.sector_bytes",
                ));
            }
            if level.partial_lines.is_some() {
                if level.partial_line_ways.is_some() {
                    return Err(invalid(
                        &format!("memory.{name}.partial_lines"),
                        "set either partial_lines or partial_line_ways, not both",
                    ));
                }
                if m.partial_sector_read != Some(true) {
                    return Err(invalid(
                        &format!("memory.{name}.partial_lines"),
                        "needs memory.partial_sector_read = true",
                    ));
                }
            }
            if !(level.bytes_per_cycle > 0.0 && level.bytes_per_cycle.is_finite()) {
                return Err(invalid(
                    &format!("memory.{name}.bytes_per_cycle"),
                    "must be a positive number",
                ));
            }
            let sets = level.size_bytes / (m.line_bytes as u64 * level.ways as u64);
            if sets == 0 {
                return Err(invalid(
                    &format!("memory.{name}.size_bytes"),
                    "is smaller than one set (line_bytes x ways)",
                ));
            }
        }
        for (name, v) in self.issue.entries() {
            if *v == 0 {
                return Err(invalid(&format!("issue.{name}"), "must be positive"));
            }
        }
        for (name, v) in self.pipe.entries() {
            if v.trim().is_empty() {
                return Err(invalid(
                    &format!("pipe.{name}"),
                    "must name a pipeline (e.g. \"fp32\")",
                ));
            }
        }
        for (name, cost) in self.op_costs.iter().flatten() {
            let known = name.rsplit_once('_').is_some_and(|(op, ty)| {
                OP_COST_OPERATIONS.contains(&op) && OP_COST_TYPES.contains(&ty)
            });
            if !known {
                return Err(invalid(
                    &format!("op_costs.{name}"),
                    "is not `<operation>_<type>` with an operation of OP_COST_OPERATIONS (div, rem, sqrt, sin, ...) and a type (i32, u32, f32, ...)",
                ));
            }
            if cost.issue == 0 {
                return Err(invalid(
                    &format!("op_costs.{name}.issue"),
                    "must be positive",
                ));
            }
        }
        for p in &self.dual_issue_pipes {
            if !self.pipe.entries().into_iter().any(|(_, v)| v == p) {
                return Err(invalid(
                    "dual_issue_pipes",
                    &format!("names `{p}`, which no class in [pipe] uses"),
                ));
            }
        }
        Ok(())
    }

    /// Cycles a core's threadgroup memory takes per wavefront, all its ports together.
    pub fn threadgroup_wavefront_cycles(&self) -> f64 {
        self.issue.threadgroup_memory.max(1) as f64
            / self.memory.threadgroup_ports.unwrap_or(1).max(1) as f64
    }

    /// DRAM bandwidth a streaming kernel reaches, in bytes per GPU cycle for the whole chip.
    pub fn dram_bytes_per_cycle(&self) -> f64 {
        self.memory.dram.bandwidth_gb_s * 1e9 * self.memory.dram.efficiency / (self.clock_mhz * 1e6)
    }

    /// Peak FP32 throughput in TFLOPS: every scheduler issuing an FMA (two operations per
    /// lane) as often as the FMA pipeline accepts one.
    pub fn peak_fp32_tflops(&self) -> f64 {
        self.cores as f64
            * self.schedulers_per_core as f64
            * self.simd_width as f64
            * 2.0
            * self.clock_mhz
            / self.issue.float_fma.max(1) as f64
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
            .collect()
    }
}

impl<T> PerClass<T> {
    /// The entries with their file names.
    pub fn entries(&self) -> [(&'static str, &T); 17] {
        [
            ("float_alu", &self.float_alu),
            ("float_fma", &self.float_fma),
            ("half_alu", &self.half_alu),
            ("int_alu", &self.int_alu),
            ("int_mul", &self.int_mul),
            ("special", &self.special),
            ("convert", &self.convert),
            ("move", &self.move_),
            ("device_memory", &self.device_memory),
            ("threadgroup_memory", &self.threadgroup_memory),
            ("thread_memory", &self.thread_memory),
            ("simd_shuffle", &self.simd_shuffle),
            ("simd_reduce", &self.simd_reduce),
            ("simd_matrix", &self.simd_matrix),
            ("atomic", &self.atomic),
            ("barrier", &self.barrier),
            ("control", &self.control),
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

    /// Loads a built-in model.
    fn check(name: &str) -> Gpu {
        builtin(name).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The error of loading `good` changed by `edit`, as text.
    fn error_of(edit: impl Fn(&str) -> String) -> String {
        let good = include_str!("../chips/m1.toml");
        let text = edit(good);
        assert_ne!(text, good, "the edit changed nothing");
        Gpu::from_toml_str(&text, "x.toml").unwrap_err().to_string()
    }

    #[test]
    fn every_builtin_loads_and_every_figure_has_a_source() {
        for name in builtin_names() {
            let gpu = check(name);
            assert_eq!(gpu.name, name);
            for path in gpu.figure_paths() {
                let src = gpu.sources.get(&path);
                assert!(
                    src.is_some_and(|s| !s.trim().is_empty()),
                    "{name}: figure `{path}` has no source"
                );
            }
            let figures = gpu.figure_paths();
            for key in gpu.sources.keys() {
                assert!(
                    figures.contains(key),
                    "{name}: source `{key}` names no figure"
                );
            }
        }
    }

    #[test]
    fn the_issue_lists_every_m_series_chip() {
        for name in [
            "m1", "m1-pro", "m1-max", "m1-ultra", "m2", "m2-pro", "m2-max", "m2-ultra", "m3",
            "m3-pro", "m3-max", "m4", "m4-pro", "m4-max",
        ] {
            check(name);
        }
    }

    #[test]
    fn peak_and_bandwidth_follow_the_fact_sheet() {
        // apple-gpu.md §1: peak = cores x 128 lanes x 2 x clock.
        for (name, tflops, gb_s) in [
            ("m1", 2.62, 68.25),
            ("m1-max", 10.62, 409.6),
            ("m2-ultra", 27.2, 819.2),
            ("m3-max", 14.1, 409.6),
            ("m4-max", 16.2, 546.0),
        ] {
            let gpu = check(name);
            assert!(
                (gpu.peak_fp32_tflops() - tflops).abs() < 0.06,
                "{name}: {}",
                gpu.peak_fp32_tflops()
            );
            assert_eq!(gpu.memory.dram.bandwidth_gb_s, gb_s, "{name}");
        }
        // A14 has half-rate FP32: 4 cores x 64 lanes x 2 x 1.278 GHz.
        assert!((check("a14").peak_fp32_tflops() - 0.654).abs() < 0.01);
        // 68.25 GB/s x 0.86 / 1.278 GHz = 45.9 bytes per cycle.
        assert!((check("m1").dram_bytes_per_cycle() - 45.93).abs() < 0.1);
    }

    #[test]
    fn apple9_has_dynamic_caching_and_co_issue() {
        for name in builtin_names() {
            let gpu = check(name);
            let apple9 = gpu.family == "apple9";
            assert_eq!(gpu.occupancy.dynamic_caching, apple9, "{name}");
            assert_eq!(!gpu.dual_issue_pipes.is_empty(), apple9, "{name}");
        }
    }

    #[test]
    fn unknown_name_lists_the_known_ones() {
        let e = builtin("m9").unwrap_err().to_string();
        assert!(e.contains("m9") && e.contains("m1-max"), "{e}");
    }

    #[test]
    fn bad_files_name_the_field() {
        let e = error_of(|t| t.replace("cores = 8", "cores = \"eight\""));
        assert!(e.contains("x.toml") && e.contains("line"), "{e}");
        let e = error_of(|t| t.replace("cores = 8\n", ""));
        assert!(e.contains("cores"), "{e}");
        let e = error_of(|t| t.replace("efficiency = 0.86", "efficiency = 1.5"));
        assert!(e.contains("memory.dram.efficiency"), "{e}");
        let e = error_of(|t| {
            t.replace(
                "size_bytes = 8192\nways = 16",
                "size_bytes = 8192\nways = 0",
            )
        });
        assert!(e.contains("memory.l1.ways"), "{e}");
        let e = error_of(|t| format!("bogus = 1\n{t}"));
        assert!(e.contains("bogus"), "{e}");
        let e = error_of(|t| t.replace("move = 1\n", "mov = 1\n"));
        assert!(e.contains("mov") && !e.contains("move_"), "{e}");
        let e = error_of(|t| t.replace("\"greedy_then_oldest\"", "\"fastest\""));
        assert!(
            e.contains("fastest") && e.contains("greedy_then_oldest"),
            "{e}"
        );
        let e = error_of(|t| t.replace("dual_issue_pipes = []", "dual_issue_pipes = [\"tensor\"]"));
        assert!(
            e.contains("dual_issue_pipes") && e.contains("tensor"),
            "{e}"
        );
        let e = error_of(|t| t.replace("float_alu = \"fp32\"", "float_alu = \"\""));
        assert!(e.contains("pipe.float_alu"), "{e}");
    }

    #[test]
    fn optional_h100_fields_are_checked() {
        let e = error_of(|t| format!("{t}\n[op_costs]\nsine_f32 = {{ latency = 9, issue = 2 }}\n"));
        assert!(e.contains("op_costs.sine_f32"), "{e}");
        let e = error_of(|t| format!("{t}\n[op_costs]\nsin_f32 = {{ latency = 9, issue = 0 }}\n"));
        assert!(e.contains("op_costs.sin_f32.issue"), "{e}");
        let ok = Gpu::from_toml_str(
            &format!(
                "{}\n[op_costs]\ndiv_u32 = {{ latency = 60, issue = 12 }}\n",
                include_str!("../chips/m1.toml")
            ),
            "x.toml",
        )
        .unwrap();
        assert_eq!(ok.op_costs.unwrap()["div_u32"].issue, 12);
        let e = error_of(|t| {
            t.replace(
                "efficiency = 0.86",
                "efficiency = 0.86\nloaded_latency = [[10.0, 5.0], [5.0, 9.0]]",
            )
        });
        assert!(e.contains("memory.dram.loaded_latency"), "{e}");
        let e = error_of(|t| {
            t.replace(
                "efficiency = 0.86",
                "efficiency = 0.86\nloaded_latency_mixed = [[10.0, 5.0]]",
            )
        });
        assert!(
            e.contains("loaded_latency_mixed") && e.contains("needs memory.dram.loaded_latency"),
            "{e}"
        );
        let e = error_of(|t| {
            t.replace(
                "efficiency = 0.86",
                "efficiency = 0.86\nloaded_latency = [[10.0, 5.0]]\nloaded_latency_mixed = [[10.0, -5.0]]",
            )
        });
        assert!(e.contains("memory.dram.loaded_latency_mixed"), "{e}");
        let e = error_of(|t| t.replace("[memory.l1]", "store_sector_cycles = 2.0\n\n[memory.l1]"));
        assert!(e.contains("needs memory.sector_bytes"), "{e}");
        for field in ["store_line_cycles = 2.0", "store_queue = 4"] {
            let e = error_of(|t| t.replace("[memory.l1]", &format!("{field}\n\n[memory.l1]")));
            assert!(e.contains("needs memory.store_sector_cycles"), "{e}");
        }
        let e =
            error_of(|t| t.replace("[memory.l1]", "store_reads_at_leave = true\n\n[memory.l1]"));
        assert!(e.contains("needs memory.store_queue"), "{e}");
        for field in ["store_path_loads = true", "store_starve_cycles = 16384"] {
            let e = error_of(|t| t.replace("[memory.l1]", &format!("{field}\n\n[memory.l1]")));
            assert!(e.contains("needs memory.store_reads_at_leave"), "{e}");
        }
        let e = error_of(|t| t.replace("[memory.l1]", "[memory.l1]\nsector_fill = true"));
        assert!(e.contains("memory.l1.sector_fill"), "{e}");
        let e = error_of(|t| t.replace("[memory.slc]", "[memory.slc]\nsector_fill = true"));
        assert!(e.contains("memory.slc.sector_fill"), "{e}");
        let e = error_of(|t| t.replace("[memory.l2]", "[memory.l2]\nserves_threadgroup = true"));
        assert!(e.contains("memory.l2.serves_threadgroup"), "{e}");
        // m1 has two threadgroup ports.
        let e = error_of(|t| t.replace("[memory.l1]", "[memory.l1]\nserves_threadgroup = true"));
        assert!(e.contains("memory.l1.serves_threadgroup"), "{e}");
        let e = error_of(|t| t.replace("[memory.l1]", "atomic_server_lines = 4\n\n[memory.l1]"));
        assert!(e.contains("needs memory.atomic_line_cycles"), "{e}");
        let e = error_of(|t| {
            t.replace(
                "[memory.l1]",
                "atomic_sector_cycles = 1.5\natomic_server_lines = 3\n\n[memory.l1]",
            )
        });
        assert!(e.contains("memory.atomic_server_lines"), "{e}");
        let e = error_of(|t| t.replace("[memory.l1]", "atomic_sector_cycles = 0.0\n\n[memory.l1]"));
        assert!(e.contains("memory.atomic_sector_cycles"), "{e}");
        let e = error_of(|t| t.replace("[memory.l1]", "partial_sector_read = true\n\n[memory.l1]"));
        let e2 = error_of(|t| t.replace("[memory.slc]", "partial_line_ways = 2\n\n[memory.slc]"));
        assert!(
            e2.contains("memory.l2.partial_line_ways") && e2.contains("partial_sector_read"),
            "{e2}"
        );
        let e3 = error_of(|t| t.replace("[memory.slc]", "partial_lines = 2\n\n[memory.slc]"));
        assert!(
            e3.contains("memory.l2.partial_lines") && e3.contains("partial_sector_read"),
            "{e3}"
        );
        assert!(
            e.contains("memory.partial_sector_read") && e.contains("needs memory.sector_bytes"),
            "{e}"
        );
        let e = error_of(|t| t.replace("[memory.l1]", "sector_bytes = 48\n\n[memory.l1]"));
        assert!(e.contains("memory.sector_bytes"), "{e}");
        let e = error_of(|t| {
            t.replace("line_bytes = 128", "line_bytes = 1024")
                .replace("[memory.l1]", "sector_bytes = 8\n\n[memory.l1]")
        });
        assert!(e.contains("at most 64 per line"), "{e}");
        let e = error_of(|t| t.replace("[memory.l2]\n", "[memory.l2]\ndirty_line_ways = 0\n"));
        assert!(e.contains("memory.l2.dirty_line_ways"), "{e}");
    }
}
