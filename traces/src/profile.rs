//! The profile of a timed run: counters in fixed time bins, per ISA instruction and per
//! source line, and (when asked for) the step-by-step record of one SIMD-group.
//!
//! The simulator's timing model fills a [`Profile`]; the report, the trace file, the plots,
//! the CSV export and the terminal UI read it. Everything here is plain data (serde), so a
//! trace file written by one version of metalsim names what it holds (see
//! [`crate::Trace`]).

use serde::{Deserialize, Serialize};

/// Why a resident SIMD-group did not issue in a cycle.
///
/// Each cycle a SIMD-group is resident on a core and does not issue is charged to exactly
/// one reason, and to the instruction it was waiting to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StallReason {
    /// Waiting for a register that a memory operation (device, constant, threadgroup,
    /// thread memory or an atomic) has not returned yet.
    Memory,
    /// Waiting for the result of an arithmetic, conversion or SIMD-group instruction.
    Alu,
    /// Waiting at a barrier for the rest of its threadgroup.
    Barrier,
    /// Ready, but the pipeline its instruction needs was still busy.
    Pipeline,
    /// Ready with its pipeline free, but the scheduler issued another SIMD-group.
    NotSelected,
    /// Waiting after a branch (`latency.control`) or for the next instruction to be
    /// fetched.
    Control,
    /// No instruction left: finished, waiting for its outstanding memory operations to
    /// complete.
    Drain,
}

impl StallReason {
    /// Every reason, in the order of the `stalls` arrays of this module.
    pub const ALL: [StallReason; 7] = [
        StallReason::Memory,
        StallReason::Alu,
        StallReason::Barrier,
        StallReason::Pipeline,
        StallReason::NotSelected,
        StallReason::Control,
        StallReason::Drain,
    ];

    /// The reason's name as the report and `report.json` spell it.
    pub fn name(self) -> &'static str {
        match self {
            StallReason::Memory => "memory",
            StallReason::Alu => "alu",
            StallReason::Barrier => "barrier",
            StallReason::Pipeline => "pipeline",
            StallReason::NotSelected => "not_selected",
            StallReason::Control => "control",
            StallReason::Drain => "drain",
        }
    }

    /// A few words for people: "waiting on memory".
    pub fn describe(self) -> &'static str {
        match self {
            StallReason::Memory => "waiting on a register from memory",
            StallReason::Alu => "waiting on an ALU result",
            StallReason::Barrier => "waiting at a barrier",
            StallReason::Pipeline => "pipeline busy",
            StallReason::NotSelected => "ready, another SIMD-group issued",
            StallReason::Control => "branch or fetch latency",
            StallReason::Drain => "no instruction left, draining memory",
        }
    }

    /// This reason's index in [`StallReason::ALL`] (and in every `stalls` array).
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Traffic at one level of the memory hierarchy, in bytes and cache-line requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelTraffic {
    /// Bytes read from this level (whole lines for caches and DRAM; the lanes' bytes for
    /// `requested`).
    pub read_bytes: u64,
    /// Bytes written to this level.
    pub write_bytes: u64,
    /// Requests this level served (0 for `requested` and `dram`).
    pub hits: u64,
    /// Requests this level passed to the level below (0 for `requested` and `dram`).
    pub misses: u64,
}

impl LevelTraffic {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &LevelTraffic) {
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.hits += other.hits;
        self.misses += other.misses;
    }

    /// Bytes read and written.
    pub fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }
}

/// Memory traffic in one interval (a bin, or the whole run), per level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryTraffic {
    /// What the active lanes asked for from device and constant memory (atomics count
    /// their read and their write).
    pub requested: LevelTraffic,
    /// The per-core L1 data caches together.
    pub l1: LevelTraffic,
    /// The GPU L2.
    pub l2: LevelTraffic,
    /// The system-level cache.
    pub slc: LevelTraffic,
    /// DRAM (unified memory).
    pub dram: LevelTraffic,
    /// Threadgroup-memory instructions issued (SIMD-group accesses).
    pub threadgroup_accesses: u64,
    /// Threadgroup-memory wavefronts beyond one per access (bank-conflict replays).
    pub bank_conflict_replays: u64,
    /// Atomic instructions issued (device and threadgroup, SIMD-group instructions).
    pub atomics: u64,
}

impl MemoryTraffic {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &MemoryTraffic) {
        self.requested.add(&other.requested);
        self.l1.add(&other.l1);
        self.l2.add(&other.l2);
        self.slc.add(&other.slc);
        self.dram.add(&other.dram);
        self.threadgroup_accesses += other.threadgroup_accesses;
        self.bank_conflict_replays += other.bank_conflict_replays;
        self.atomics += other.atomics;
    }
}

/// Active lanes / (32 × SIMD-group instructions); 0 when nothing issued.
fn lane_efficiency(active_lanes: u64, simd_instructions: u64) -> f64 {
    if simd_instructions == 0 {
        0.0
    } else {
        active_lanes as f64 / (32.0 * simd_instructions as f64)
    }
}

/// The counters of one time bin, `[start, start + Counters::bin_cycles)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    /// First cycle of the bin.
    pub start: u64,
    /// Resident SIMD-groups summed over cores, averaged over the bin's cycles.
    pub resident_simdgroups: f64,
    /// Resident threadgroups summed over cores, averaged over the bin's cycles.
    pub resident_threadgroups: f64,
    /// SIMD-group instructions issued per class, in [`Profile::classes`] order.
    pub issued: Vec<u64>,
    /// Sum over the issued SIMD-group instructions of their active lanes.
    pub active_lanes: u64,
    /// Stall cycles (SIMD-group × cycle) per reason, in [`StallReason::ALL`] order.
    pub stalls: Vec<u64>,
    /// Memory traffic that completed or was issued in the bin.
    pub memory: MemoryTraffic,
    /// SIMD-group instructions issued per core, indexed by core.
    pub core_issued: Vec<u64>,
    /// Resident SIMD-groups per core, averaged over the bin's cycles, indexed by core.
    pub core_resident_simdgroups: Vec<f64>,
}

impl Bin {
    /// SIMD-group instructions issued in the bin, all classes.
    pub fn simd_instructions(&self) -> u64 {
        self.issued.iter().sum()
    }

    /// Active lanes / (32 × SIMD-group instructions); 0 when nothing issued.
    pub fn simd_efficiency(&self) -> f64 {
        lane_efficiency(self.active_lanes, self.simd_instructions())
    }
}

/// Counters over time: a run's cycles cut into equal bins (a few hundred to a few
/// thousand of them; the last may be partial).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    /// Cycles per bin.
    pub bin_cycles: u64,
    /// Cores of the model (the length of each bin's per-core arrays).
    pub cores: u32,
    /// The bins, in time order, covering cycle 0 to the end of the run.
    pub bins: Vec<Bin>,
}

/// What one ISA instruction cost over the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InstProfile {
    /// Index of the instruction in the decoded program (execution order of blocks).
    pub pc: u32,
    /// The block it belongs to (`bb3`).
    pub block: String,
    /// The instruction in the ISA text format.
    pub text: String,
    /// Its timing class (an entry of [`Profile::classes`]).
    pub class: String,
    /// Source file index (into [`crate::Trace::sources`] and the module's file table).
    pub file: u32,
    /// 1-based source line, 0 when unknown.
    pub line: u32,
    /// 1-based source column in bytes, 0 when unknown.
    pub col: u32,
    /// Whether a SIMD-group's lanes reconverge at this instruction (it starts the
    /// immediate post-dominator block of a branch).
    pub reconvergence: bool,
    /// SIMD-group executions.
    pub executions: u64,
    /// Sum of active lanes over the executions.
    pub active_lanes: u64,
    /// Issue cycles: the cycles its pipeline was busy, summed over executions.
    pub issue_cycles: u64,
    /// Stall cycles charged to this instruction (SIMD-groups waiting to issue it), per
    /// reason in [`StallReason::ALL`] order.
    pub stalls: Vec<u64>,
    /// Device and constant memory bytes the active lanes requested.
    pub bytes: u64,
    /// Cache lines (device) or wavefronts (threadgroup) the executions needed.
    pub transactions: u64,
    /// For branches: executions whose lanes went both ways.
    pub divergent: u64,
}

impl InstProfile {
    /// Active lanes / (32 × executions); 0 when the instruction never ran.
    pub fn simd_efficiency(&self) -> f64 {
        lane_efficiency(self.active_lanes, self.executions)
    }
}

/// What one source line cost: its instructions' [`InstProfile`]s added up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LineProfile {
    /// Source file index.
    pub file: u32,
    /// 1-based line.
    pub line: u32,
    /// SIMD-group instructions issued from this line.
    pub executions: u64,
    /// Sum of active lanes over those instructions.
    pub active_lanes: u64,
    /// Issue cycles.
    pub issue_cycles: u64,
    /// Stall cycles per reason, in [`StallReason::ALL`] order.
    pub stalls: Vec<u64>,
    /// Device and constant memory bytes requested.
    pub bytes: u64,
    /// Branch executions from this line that diverged.
    pub divergent: u64,
}

impl LineProfile {
    /// Active lanes / (32 × executions); 0 when the line never ran.
    pub fn simd_efficiency(&self) -> f64 {
        lane_efficiency(self.active_lanes, self.executions)
    }

    /// Issue plus stall cycles: what the line cost in SIMD-group × cycles.
    pub fn cost_cycles(&self) -> u64 {
        self.issue_cycles + self.stalls.iter().sum::<u64>()
    }
}

/// When one threadgroup was resident on which core.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadgroupSpan {
    /// The threadgroup's position in the grid.
    pub position: [u32; 3],
    /// The core that ran it.
    pub core: u32,
    /// The cycle it was admitted.
    pub start: u64,
    /// The cycle its last SIMD-group finished.
    pub end: u64,
}

/// Everything the timing model counted in one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Names of the instruction classes, the order of every `issued` array.
    pub classes: Vec<String>,
    /// Schedulers (issue slots) per core: issue-slot utilisation is issued instructions /
    /// (cycles × cores × schedulers).
    pub schedulers_per_core: u32,
    /// Counters over time.
    pub counters: Counters,
    /// Per ISA instruction, in pc order.
    pub instructions: Vec<InstProfile>,
    /// Per source line, in (file, line) order; lines with no instruction are absent.
    pub lines: Vec<LineProfile>,
    /// Totals over the run (the sum of the bins).
    pub memory: MemoryTraffic,
    /// Stall cycles over the run per reason, in [`StallReason::ALL`] order.
    pub stalls: Vec<u64>,
    /// SIMD-group instructions issued over the run per class, in `classes` order.
    pub issued: Vec<u64>,
    /// Each threadgroup's residency, in admission order (the first
    /// [`Profile::MAX_THREADGROUP_SPANS`] threadgroups; `threadgroup_spans_dropped` counts
    /// the rest).
    pub threadgroup_spans: Vec<ThreadgroupSpan>,
    /// Threadgroups beyond the span limit, not listed in `threadgroup_spans`.
    pub threadgroup_spans_dropped: u64,
}

impl Profile {
    /// The most threadgroup spans a profile lists (keeps trace files of huge grids small).
    pub const MAX_THREADGROUP_SPANS: usize = 100_000;
}

/// The values one register held for the 32 lanes of a SIMD-group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RegisterValues {
    /// The ISA value's name (`v12`).
    pub name: String,
    /// Its ISA type (`f32`, `i32`, `ptr.device`...).
    pub ty: String,
    /// The value of each lane, formatted for its type (32 entries; inactive lanes too).
    pub lanes: Vec<String>,
}

/// One instruction the recorded SIMD-group executed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedStep {
    /// The instruction's pc (an [`InstProfile::pc`]).
    pub pc: u32,
    /// The cycle it issued at (`None` when recorded without timing).
    pub cycle: Option<u64>,
    /// Active lanes when it executed, bit `i` for lane `i`.
    pub active: u32,
    /// Registers it read, with their values before it executed.
    pub reads: Vec<RegisterValues>,
    /// Registers it wrote, with their values after it executed.
    pub writes: Vec<RegisterValues>,
    /// What happened to control flow, in words, when anything did: "diverged: 16 lanes
    /// to bb2, 16 to bb3", "reconverged at bb4: 32 lanes", "waits at barrier",
    /// "released from barrier", "exited".
    pub event: Option<String>,
}

/// The step-by-step record of one SIMD-group (`--record-simdgroup TG,SG`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimdgroupRecording {
    /// The threadgroup's position in the grid.
    pub threadgroup: [u32; 3],
    /// The SIMD-group's index in its threadgroup.
    pub simdgroup: u32,
    /// The instructions it executed, in order.
    pub steps: Vec<RecordedStep>,
    /// Whether recording stopped at the step limit before the SIMD-group finished.
    pub truncated: bool,
}
