//! Kernel faults and sanitizer findings: mistakes of the kernel found while it runs,
//! reported as data. A fault stops the run; a finding is reported and the run goes on
//! (every fault is also a finding).

use metalsim_isa::SrcLoc;

/// What went wrong in a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A memory access outside every buffer or allocation (or outside its address space).
    OutOfBounds,
    /// A memory access at an address that is not a multiple of the accessed size.
    Misaligned,
    /// A store or atomic to constant memory or to a buffer the kernel declared read-only.
    ReadOnlyWrite,
    /// The dispatch executed more SIMD-group instructions than its budget.
    InstructionBudget,
    /// SIMD-groups wait at a barrier that can never be released. The engine releases a
    /// barrier once every live SIMD-group has arrived (finished ones do not count), so it
    /// never reports this kind; [`FaultKind::DivergentBarrier`] reports the cause.
    BarrierDeadlock,
    /// A write to threadgroup memory and another SIMD-group's access to the same bytes
    /// with no threadgroup barrier between them.
    ThreadgroupRace,
    /// Two threadgroups wrote the same device-memory bytes without atomics (a warning:
    /// the result depends on their order).
    DeviceRace,
    /// A threadgroup barrier reached by only part of the threadgroup: some of its threads
    /// are in other code (divergent control flow), wait at another barrier, or returned.
    DivergentBarrier,
    /// A read of threadgroup memory that no thread of the threadgroup has written.
    UninitializedThreadgroupRead,
    /// A SIMD-group function read the value of an inactive lane, which MSL leaves
    /// undefined (a warning; the simulator gives the reading lane its own value).
    InactiveLaneRead,
}

/// How bad a finding is: errors make `metalsim run` exit with code 1, warnings do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The kernel is wrong.
    Error,
    /// The kernel's result may depend on scheduling or on values MSL leaves undefined.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl FaultKind {
    /// A short snake-case name (`out_of_bounds`, `misaligned`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::OutOfBounds => "out_of_bounds",
            FaultKind::Misaligned => "misaligned",
            FaultKind::ReadOnlyWrite => "read_only_write",
            FaultKind::InstructionBudget => "instruction_budget",
            FaultKind::BarrierDeadlock => "barrier_deadlock",
            FaultKind::ThreadgroupRace => "threadgroup_race",
            FaultKind::DeviceRace => "device_race",
            FaultKind::DivergentBarrier => "divergent_barrier",
            FaultKind::UninitializedThreadgroupRead => "uninitialized_threadgroup_read",
            FaultKind::InactiveLaneRead => "inactive_lane_read",
        }
    }

    /// Whether a finding of this kind is an error or a warning.
    pub fn severity(self) -> Severity {
        match self {
            FaultKind::DeviceRace | FaultKind::InactiveLaneRead => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

impl std::fmt::Display for FaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A fault with everything needed to find its cause: the instruction's source location,
/// the thread and lane, and for memory faults the address, buffer and offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFault {
    /// What went wrong.
    pub kind: FaultKind,
    /// A sentence describing it.
    pub message: String,
    /// Source location of the faulting instruction.
    pub loc: SrcLoc,
    /// `file:line:col` of `loc` (`?` when unknown).
    pub location: String,
    /// `thread_position_in_grid` of the faulting thread.
    pub thread: [u32; 3],
    /// `threadgroup_position_in_grid` of its threadgroup.
    pub threadgroup: [u32; 3],
    /// `simdgroup_index_in_threadgroup` of its SIMD-group.
    pub simdgroup: u32,
    /// `thread_index_in_simdgroup` (its lane).
    pub lane: u32,
    /// The address accessed, for memory faults.
    pub address: Option<u64>,
    /// The parameter, allocation or data object the address belongs to (or would).
    pub buffer: Option<String>,
    /// The byte offset within `buffer`.
    pub offset: Option<u64>,
}

impl std::fmt::Display for KernelFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} at {} (thread {:?}, threadgroup {:?}, simdgroup {}, lane {})",
            self.kind,
            self.message,
            self.location,
            self.thread,
            self.threadgroup,
            self.simdgroup,
            self.lane
        )
    }
}

/// A finding of the sanitizer (or a fault): its first occurrence, with everything needed
/// to find its cause, and how often the same kind happened at the same instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The first occurrence.
    pub first: KernelFault,
    /// Executions of the instruction that showed this kind of mistake (in any lane),
    /// counting the first.
    pub count: u64,
}

impl Finding {
    /// The kind.
    pub fn kind(&self) -> FaultKind {
        self.first.kind
    }

    /// Error or warning.
    pub fn severity(&self) -> Severity {
        self.first.kind.severity()
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.severity().name(), self.first)?;
        if self.count > 1 {
            write!(f, " ({} times)", self.count)?;
        }
        Ok(())
    }
}

/// A fault as the functional engine first sees it, before the machine adds the thread's
/// identity and the source location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Trap {
    /// What went wrong.
    pub kind: FaultKind,
    /// A sentence describing it.
    pub message: String,
    /// The faulting lane.
    pub lane: u32,
    /// The address, for memory faults.
    pub address: Option<u64>,
    /// The region's name, for memory faults inside a known region.
    pub buffer: Option<String>,
    /// The offset in that region.
    pub offset: Option<u64>,
}
