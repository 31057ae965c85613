//! metalsim's simulator: runs one dispatch of a kernel of the ISA on a modeled Apple GPU,
//! producing the kernel's outputs, counters and a cycle-approximate time.
//!
//! [`run()`] is the whole API (with [`run_with_progress`] for a caller that shows a
//! progress bar): a [`Module`](metalsim_isa::Module), a kernel name, a
//! [`Launch`](metalsim_launch::Launch) and a [`Gpu`](metalsim_models::Gpu) in; a
//! [`RunOutcome`] (final buffers, [`Stats`], the first [`KernelFault`] if any) out, or a
//! [`SimError`] for input that cannot run.
//!
//! # The engine's shape
//!
//! - **Decode once** (`program`, `regalloc`): the verified function becomes a flat array
//!   of decoded instructions. Every value gets a register slot in a 32-bit bank
//!   (`[u32; 32]` per slot: every type of at most 32 bits, predicates as 0/1, 16-bit
//!   floats as their bits) or a 64-bit bank (`[u64; 32]`: `i64`, `u64`, addresses);
//!   dead values give their slots back. Constants are hoisted into a template register
//!   file copied into each new SIMD-group, so they are never executed. Block parameters
//!   become per-edge parallel copies; each branch knows its reconvergence point (the
//!   block's immediate post-dominator).
//! - **Functional engine** (`exec`, `alu`, `cvt`, `math`, `lanes`, `matrix`, `access`,
//!   `memory`, `simt`):
//!   executes one instruction for the 32 lanes of a SIMD-group, lane-major, computing all
//!   lanes and blending the results into the active ones; a reconvergence stack per
//!   SIMD-group handles divergence. Memory is one 64-bit address space of regions
//!   (`(region << 40) | offset`), every access bounds- and alignment-checked. Each step
//!   returns what happened as data (`exec::Executed`).
//! - **Machine** (`machine`, `dispatch`): resident threadgroups and their SIMD-groups,
//!   barriers (released when every live SIMD-group of the threadgroup has arrived), the
//!   instruction budget and the counters.
//! - **Timing** (`timing`): a scheduler drives the machine. [`RunOptions::timing`] off:
//!   rounds of up to 64 resident threadgroups on [`RunOptions::workers`] threads, each
//!   threadgroup seeing device memory as it stood at the round's start plus its own
//!   writes, writes landing and device atomics running at the round's end in a fixed
//!   order (see `timing::untimed`); SIMD-groups round robin, no cycles. On: the model with
//!   residency limits, schedulers, a per-SIMD-group scoreboard, coalescing, threadgroup
//!   banks and an L1 / L2 / SLC / DRAM hierarchy, all parameters from the `Gpu` model. Timing never computes values; the functional engine
//!   never counts cycles.
//!   Sampled ([`RunOptions::sampling`], `timing::sampled`): every threadgroup runs, windows
//!   of consecutive threadgroups are timed by the model on an idle GPU, the rest run
//!   untimed (one at a time, on one thread), and the time is extrapolated by class of
//!   threadgroup with an error bound ([`Sampling`]).
//!
//! # Guarantees
//!
//! - Deterministic: the same inputs give bit-identical buffers, stats and findings on
//!   every run and for every number of workers. With timing, functional effects happen
//!   in one global order (by cycle, then core, then scheduler); without, in rounds whose
//!   effects merge in dispatch order.
//! - Race-free kernels give the same buffers with and without timing.
//! - A function that passes the ISA verifier never makes the simulator panic.
//! - Atomics of one instruction run lane by lane in ascending lane order; stores of
//!   several lanes to one address leave the highest lane's value; reductions combine
//!   lanes in ascending order.
//!
//! # Semantics chosen where Metal leaves a choice
//!
//! - A shuffle (or broadcast) whose source lane is out of range or inactive gives the
//!   reading lane its own value; this includes the missing lanes of a partial SIMD-group.
//! - A faulting instruction has no effect; the run stops there.
//! - A threadgroup barrier reached by only some lanes of a SIMD-group counts the whole
//!   SIMD-group as arrived; SIMD-groups that finished do not hold a barrier back.
//! - Float arithmetic is IEEE in `f32` (16-bit types round after every operation, which
//!   is exact for `+ - * /`); `fma` is fused (one rounding) for every float type. Math
//!   functions come in Metal's fast variant (the spec's formulas, e.g. `pow(x, y) =
//!   exp2(y * log2(x))`) and the precise one (`f64`, rounded once); see `math` and
//!   `docs/math-precision.md`, which also gives every other choice (shifts, division by
//!   zero, out-of-range conversions, `extract_bits` past the end).
//! - `simdgroup_multiply_accumulate` rounds like a chain of FMAs in ascending `k`.
//!
//! # The sanitizer
//!
//! Always on (`sanitize`): threadgroup-memory races between barriers, reads of
//! threadgroup memory never written, barriers reached by part of a threadgroup, device
//! write-write races between threadgroups and inactive-lane reads are reported as
//! [`Finding`]s in [`RunOutcome::findings`] without stopping the run; out-of-bounds and
//! misaligned accesses and the instruction budget are faults that stop it (and are
//! findings too).
//!
//! # Limitations
//!
//! - Without timing, a SIMD-group runs until it waits, finishes or reaches a device
//!   atomic: a kernel that spins on a plain (non-atomic) load of a flag that another
//!   SIMD-group or threadgroup sets runs out of instruction budget (spinning on an atomic
//!   makes progress; with timing both do). Without timing the budget is checked against
//!   the count at the round's start plus the threadgroup's own, so a dispatch can overrun
//!   it by up to a round's other threadgroups' work before it stops.
//! - L1 coherence between cores is not modeled. Timed runs use one thread.
//! - [`FaultKind::BarrierDeadlock`] is never reported: a barrier is released once every
//!   live SIMD-group has arrived (a [`FaultKind::DivergentBarrier`] finding says when
//!   that was not the whole threadgroup).

mod access;
mod alu;
mod cvt;
mod dispatch;
mod error;
mod exec;
mod fault;
mod lanes;
mod machine;
mod math;
mod matrix;
mod memory;
mod outcome;
mod program;
mod progress;
mod record;
mod regalloc;
mod regs;
mod run;
mod sanitize;
mod simt;
mod timing;

pub use error::SimError;
pub use fault::{FaultKind, Finding, KernelFault, Severity};
pub use outcome::{
    DEFAULT_INSTRUCTION_BUDGET, LevelCounters, Limiter, Occupancy, RunOptions, RunOutcome, Stats,
    TimingSummary,
};
pub use progress::Progress;
pub use run::{run, run_with_progress};
pub use timing::{Sampling, SamplingPlan};
