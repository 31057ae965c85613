//! What a run is asked to do and what it reports.

use metalsim_isa::OpClass;
use metalsim_traces::{Profile, SimdgroupRecording};

use crate::fault::{Finding, KernelFault};

/// The default instruction budget: SIMD-group instructions per dispatch.
pub const DEFAULT_INSTRUCTION_BUDGET: u64 = 10_000_000_000;

/// How to run a dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Run the timing model (cycles, cache and DRAM traffic). Without it the kernel runs
    /// functionally only: same outputs for race-free kernels, `cycles == 0`.
    pub timing: bool,
    /// SIMD-group instructions the dispatch may execute before it is stopped with an
    /// [`FaultKind::InstructionBudget`](crate::FaultKind::InstructionBudget) fault; `None`
    /// means [`DEFAULT_INSTRUCTION_BUDGET`].
    pub max_instructions: Option<u64>,
    /// Run every math function (`sin`, `exp`, `pow`...) in its precise variant, as
    /// `-fno-fast-math` compiles them; otherwise only those the kernel asks for with
    /// `metal::precise::` (`sin.precise` in the ISA) are precise and the rest use Metal's
    /// default fast variant. See `docs/math-precision.md`.
    pub precise_math: bool,
    /// Count the [`Profile`]: binned counters, per-instruction and per-line costs, stall
    /// reasons (timed runs only; ignored without timing).
    pub profile: bool,
    /// Record one SIMD-group step by step: (threadgroup position in the grid, SIMD-group
    /// index in the threadgroup). See [`SimdgroupRecording`].
    pub record_simdgroup: Option<([u32; 3], u32)>,
    /// With `timing`: time only a sample of the threadgroups as this plan says and
    /// extrapolate (every threadgroup still runs functionally); `None` times them all.
    /// See [`Sampling`](crate::Sampling).
    pub sampling: Option<crate::SamplingPlan>,
    /// Worker threads for the parallel parts of a run; `0` means one per core
    /// (`std::thread::available_parallelism`). The outcome is bit-identical for every
    /// number. (Today only untimed runs are parallel; a timed run uses one thread.)
    pub workers: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timing: true,
            max_instructions: None,
            precise_math: false,
            profile: false,
            record_simdgroup: None,
            sampling: None,
            workers: 0,
        }
    }
}

/// The result of one dispatch.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutcome {
    /// Final contents of `launch.buffers`, in the same order.
    pub buffers: Vec<Vec<u8>>,
    /// Counters of the run (up to the fault, when there is one).
    pub stats: Stats,
    /// What the timing model saw: occupancy and memory-level traffic (`None` without
    /// timing).
    pub timing: Option<TimingSummary>,
    /// The first fault found. The run stops at a fault; the buffers are returned as they
    /// stood then.
    pub fault: Option<KernelFault>,
    /// What the sanitizer found (races, divergent barriers, uninitialized threadgroup
    /// reads, inactive-lane reads), each once per instruction and kind in the order first
    /// seen, then the fault if there was one. See [`Finding`].
    pub findings: Vec<Finding>,
    /// What the timing model counted (`Some` for timed runs with `RunOptions::profile`).
    pub profile: Option<Profile>,
    /// The record of the SIMD-group `RunOptions::record_simdgroup` names (`None` when not
    /// asked for, or when that SIMD-group does not exist).
    pub recording: Option<SimdgroupRecording>,
    /// How a sampled run (`RunOptions::sampling`) estimated its time (`None` otherwise):
    /// `stats.cycles` is then the estimate, and `timing`, `stats.dram_bytes` and
    /// `profile` come from the timed windows only.
    pub sampling: Option<crate::Sampling>,
}

/// Counters of a run.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Stats {
    /// Cycle at which the last SIMD-group finished (0 without timing).
    pub cycles: u64,
    /// SIMD-group instructions issued, terminators included (hoisted constants are not
    /// instructions).
    pub simd_instructions: u64,
    /// The sum over issued SIMD-group instructions of their active lanes.
    pub thread_instructions: u64,
    /// Threadgroups started.
    pub threadgroups: u64,
    /// SIMD-groups started.
    pub simdgroups: u64,
    /// SIMD-group instructions per timing class, every class in `OpClass::ALL` order.
    pub instructions_by_class: Vec<(OpClass, u64)>,
    /// Bytes loaded from device or constant memory by active lanes (atomics count their
    /// read).
    pub device_bytes_read: u64,
    /// Bytes stored to device memory by active lanes (atomics count their write).
    pub device_bytes_written: u64,
    /// Bytes moved between the memory system and DRAM (whole lines; 0 without timing).
    pub dram_bytes: u64,
}

/// What limits how many threadgroups a core holds at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limiter {
    /// Threads per core.
    Threads,
    /// Registers per thread against the register file (or, with Dynamic Caching, the
    /// on-chip pool).
    Registers,
    /// Threadgroup memory per threadgroup against the core's.
    ThreadgroupMemory,
    /// Threadgroups per core.
    Threadgroups,
}

impl Limiter {
    /// The name used in reports: `threads`, `registers`, `threadgroup_memory`,
    /// `threadgroups`.
    pub fn name(self) -> &'static str {
        match self {
            Limiter::Threads => "threads",
            Limiter::Registers => "registers",
            Limiter::ThreadgroupMemory => "threadgroup_memory",
            Limiter::Threadgroups => "threadgroups",
        }
    }
}

/// Residency of a timed dispatch.
#[derive(Clone, Debug, PartialEq)]
pub struct Occupancy {
    /// Resident SIMD-groups per core the limits allow for full threadgroups, as a fraction
    /// of the most a core can hold (`max_threads_per_core / 32`).
    pub theoretical: f64,
    /// Resident SIMD-groups per core averaged over cores and the run's cycles, same scale.
    pub achieved: f64,
    /// The limit that sets `theoretical`.
    pub limiter: Limiter,
    /// Threadgroups a core holds at once under the limits (at least 1).
    pub threadgroups_per_core: u32,
    /// 32-bit registers per thread charged against the register file: the peak of the
    /// register allocation, or its mean with Dynamic Caching.
    pub registers_per_thread: f64,
}

/// Hits and misses of one cache level, in cache-line requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelCounters {
    /// Requests the level served.
    pub hits: u64,
    /// Requests passed to the level below.
    pub misses: u64,
}

/// What the timing model saw.
#[derive(Clone, Debug, PartialEq)]
pub struct TimingSummary {
    /// Residency.
    pub occupancy: Occupancy,
    /// The per-core L1 data caches together.
    pub l1: LevelCounters,
    /// The GPU L2.
    pub l2: LevelCounters,
    /// The system-level cache.
    pub slc: LevelCounters,
    /// Threadgroup-memory wavefronts beyond one per access (bank-conflict replays).
    pub bank_conflict_replays: u64,
}
