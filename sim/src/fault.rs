//! Kernel faults: mistakes of the kernel found while it runs, reported as data.

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
    /// SIMD-groups wait at a barrier that can never be released. The v1 engine releases a
    /// barrier once every live SIMD-group has arrived (finished ones do not count), so it
    /// never reports this kind; the sanitizer will.
    BarrierDeadlock,
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
