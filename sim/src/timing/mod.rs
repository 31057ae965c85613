//! Timing: which SIMD-group issues next and when.
//!
//! A [`Timing`] drives a [`Machine`]: it starts threadgroups, picks the SIMD-group that
//! issues next and calls [`Machine::step_on`], then charges time for what the returned
//! [`Executed`](crate::exec::Executed) record says happened. Timing never computes values;
//! the machine never counts cycles. Two implementations:
//! - [`Untimed`]: no model; rounds of resident threadgroups on several workers, their
//!   SIMD-groups round robin, each running until it waits at a barrier, finishes or
//!   reaches a device atomic (`RunOptions::timing == false`; see [`untimed`]).
//! - [`Model`]: the cycle-approximate model of an Apple GPU described by a
//!   [`Gpu`](metalsim_models::Gpu): residency ([`occupancy`]), SIMD-group schedulers
//!   with a scoreboard and pipelines ([`core`], [`table`]), and the memory system
//!   ([`memsys`]: coalescing, L1 / L2 / SLC / DRAM with bandwidth queues, threadgroup
//!   banks, atomics, the constant path), and, when asked, the [`profiler`]'s counters.

mod cache;
mod coalesce;
mod core;
mod folded;
mod memsys;
mod model;
mod occupancy;
mod profiler;
mod queue;
mod sampled;
mod table;
mod untimed;

pub(crate) use model::Model;
pub(crate) use sampled::Sampled;
pub use sampled::{Sampling, SamplingPlan};
pub(crate) use untimed::Untimed;

use metalsim_traces::Profile;

use crate::fault::KernelFault;
use crate::machine::Machine;
use crate::outcome::TimingSummary;

/// A point in simulated time, in GPU cycles.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default, Hash)]
pub(crate) struct Cycle(pub u64);

/// What a timing run reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct TimingReport {
    /// When the last SIMD-group finished (or the fault happened).
    pub cycles: Cycle,
    /// Bytes moved to and from DRAM.
    pub dram_bytes: u64,
    /// Occupancy and memory-level counters (`None` without a timing model).
    pub summary: Option<TimingSummary>,
    /// The fault that stopped the run.
    pub fault: Option<KernelFault>,
    /// The profile, when the run was profiled.
    pub profile: Option<Profile>,
}

/// A scheduler with (or without) a timing model.
pub(crate) trait Timing {
    /// Runs every threadgroup of the dispatch on `machine` to completion or to the first
    /// fault.
    fn run(&mut self, machine: &mut Machine) -> TimingReport;
}
