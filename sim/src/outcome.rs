//! What a run is asked to do and what it reports.

use metalsim_isa::OpClass;

use crate::fault::KernelFault;

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
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timing: true,
            max_instructions: None,
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
    /// The first fault found. The run stops at a fault; the buffers are returned as they
    /// stood then.
    pub fault: Option<KernelFault>,
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
