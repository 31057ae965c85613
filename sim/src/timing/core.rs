//! One GPU core's timing state: its resident threadgroups, its SIMD-group schedulers with
//! their pipes, and each resident SIMD-group's scoreboard.

use metalsim_isa::OpClass;
use metalsim_models::Gpu;

use crate::dispatch::Shape;
use crate::machine::GroupId;
use crate::program::Reg;
use crate::regalloc::Bank;

/// Per-class cycle counts, indexed by `OpClass as usize`.
pub(crate) type PerClass = [u64; OpClass::ALL.len()];

/// Timing state of one resident SIMD-group: its scoreboard. What the schedulers scan
/// every cycle is apart, in its compact [`Candidate`].
#[derive(Clone, Debug)]
pub(crate) struct WarpClock {
    /// Its threadgroup in the machine.
    pub group: GroupId,
    /// Its index in the threadgroup.
    pub sg: usize,
    /// Cycle each 32-bit slot's value is ready.
    pub ready32: Vec<u64>,
    /// Cycle each 64-bit slot's value is ready.
    pub ready64: Vec<u64>,
    /// When its outstanding stores complete.
    pub drain: u64,
}

impl WarpClock {
    /// When a register is ready.
    #[inline]
    pub fn ready(&self, r: Reg) -> u64 {
        match r.bank {
            Bank::B32 => self.ready32[r.slot as usize],
            Bank::B64 => self.ready64[r.slot as usize],
        }
    }

    /// Sets when a register is ready.
    #[inline]
    pub fn set_ready(&mut self, r: Reg, t: u64) {
        match r.bank {
            Bank::B32 => self.ready32[r.slot as usize] = t,
            Bank::B64 => self.ready64[r.slot as usize] = t,
        }
    }
}

/// What a scheduler needs to know of a SIMD-group to pick one: small, and kept in a list
/// per scheduler in age order (oldest first), so the scan each cycle stays cheap.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    /// Earliest cycle its next instruction's operands are ready (and any branch resolved).
    pub ready_at: u64,
    /// Its core slot.
    pub slot: u32,
    /// The timing class of its next instruction.
    pub class: OpClass,
    /// It waits at a threadgroup barrier.
    pub waiting: bool,
}

/// One SIMD-group scheduler: its pipes and its SIMD-groups, oldest first.
#[derive(Clone, Debug)]
pub(crate) struct Scheduler {
    /// When each class's pipe is free again.
    pub pipe_free: PerClass,
    /// Its SIMD-groups, oldest first.
    pub order: Vec<Candidate>,
    /// The earliest cycle one of its SIMD-groups can issue (`u64::MAX`: none can), valid
    /// unless `stale`.
    pub next: u64,
    /// Something changed since `next` was computed.
    pub stale: bool,
}

impl Scheduler {
    /// A scheduler without SIMD-groups.
    fn new() -> Scheduler {
        Scheduler {
            pipe_free: [0; OpClass::ALL.len()],
            order: Vec::new(),
            next: u64::MAX,
            stale: false,
        }
    }
}

/// A threadgroup resident on a core.
#[derive(Clone, Debug)]
pub(crate) struct Resident {
    /// Its id in the machine.
    pub group: GroupId,
    /// The core slots of its SIMD-groups, by index in the threadgroup.
    pub slots: Vec<u32>,
    /// Its threads.
    pub threads: u32,
    /// SIMD-groups not finished.
    pub left: u32,
}

/// Residency limits of a core.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Threads at most.
    pub threads: u32,
    /// Threadgroups at most.
    pub groups: u32,
    /// Threadgroup memory at most, in bytes.
    pub threadgroup_bytes: u64,
    /// SIMD-group schedulers.
    pub schedulers: usize,
}

impl Limits {
    /// The limits of a GPU model.
    pub fn of(gpu: &Gpu) -> Limits {
        Limits {
            threads: gpu.max_threads_per_core,
            groups: gpu.max_threadgroups_per_core,
            threadgroup_bytes: gpu.threadgroup_memory_per_core as u64,
            schedulers: gpu.schedulers_per_core.max(1) as usize,
        }
    }
}

/// One core.
#[derive(Clone, Debug)]
pub(crate) struct Core {
    /// Resident SIMD-groups by slot.
    pub warps: Vec<Option<WarpClock>>,
    /// Its schedulers; slot `i` belongs to scheduler `i % schedulers`.
    pub schedulers: Vec<Scheduler>,
    /// Resident threadgroups.
    pub groups: Vec<Resident>,
    /// Resident threads.
    pub threads: u32,
    /// Threadgroup memory in use.
    pub threadgroup_bytes: u64,
    /// Whether the core has an entry in the event queue.
    pub queued: bool,
}

impl Core {
    /// An empty core.
    pub fn new(limits: &Limits) -> Core {
        Core {
            warps: Vec::new(),
            schedulers: vec![Scheduler::new(); limits.schedulers],
            groups: Vec::new(),
            threads: 0,
            threadgroup_bytes: 0,
            queued: false,
        }
    }

    /// Whether a threadgroup of this shape fits now (an empty core takes any).
    pub fn can_accept(&self, shape: &Shape, bytes: u64, limits: &Limits) -> bool {
        self.groups.is_empty()
            || (self.threads + shape.threads <= limits.threads
                && (self.groups.len() as u32) < limits.groups
                && self.threadgroup_bytes + bytes <= limits.threadgroup_bytes)
    }

    /// Makes a started threadgroup resident. Its SIMD-groups (with the class of their
    /// first instruction) are younger than every resident one, so they go to the end of
    /// their schedulers' lists; they can issue from `now`.
    pub fn admit(
        &mut self,
        group: GroupId,
        shape: &Shape,
        bytes: u64,
        warps: Vec<(WarpClock, OpClass)>,
        now: u64,
    ) {
        let mut slots = Vec::with_capacity(warps.len());
        let n = self.schedulers.len();
        for (w, class) in warps {
            let slot = match self.warps.iter().position(Option::is_none) {
                Some(s) => s,
                None => {
                    self.warps.push(None);
                    self.warps.len() - 1
                }
            };
            self.warps[slot] = Some(w);
            let sched = &mut self.schedulers[slot % n];
            sched.order.push(Candidate {
                ready_at: now,
                slot: slot as u32,
                class,
                waiting: false,
            });
            sched.stale = true;
            slots.push(slot as u32);
        }
        self.threads += shape.threads;
        self.threadgroup_bytes += bytes;
        self.groups.push(Resident {
            group,
            left: slots.len() as u32,
            slots,
            threads: shape.threads,
        });
    }

    /// The scheduler of a slot and the SIMD-group's position in its list.
    pub fn find(&self, slot: u32) -> Option<(usize, usize)> {
        let s = slot as usize % self.schedulers.len();
        let pos = self.schedulers[s]
            .order
            .iter()
            .position(|c| c.slot == slot)?;
        Some((s, pos))
    }

    /// Removes a finished SIMD-group; returns its clock for reuse.
    pub fn remove_warp(&mut self, slot: u32) -> Option<WarpClock> {
        let n = self.schedulers.len();
        let s = &mut self.schedulers[slot as usize % n];
        s.order.retain(|c| c.slot != slot);
        s.stale = true;
        self.warps[slot as usize].take()
    }

    /// Marks every scheduler's earliest issue cycle for recomputation.
    pub fn mark_all_stale(&mut self) {
        for s in &mut self.schedulers {
            s.stale = true;
        }
    }

    /// Recomputes a scheduler's earliest issue cycle.
    fn refresh(&mut self, s: usize) {
        let sched = &mut self.schedulers[s];
        let mut next = u64::MAX;
        for c in &sched.order {
            if !c.waiting {
                next = next.min(c.ready_at.max(sched.pipe_free[c.class as usize]));
            }
        }
        sched.next = next;
        sched.stale = false;
    }

    /// The position (in its scheduler's list) of the oldest SIMD-group of scheduler `s`
    /// that can issue at `now`.
    #[inline]
    pub fn pick(&mut self, s: usize, now: u64) -> Option<usize> {
        if self.schedulers[s].stale {
            self.refresh(s);
        }
        let sched = &self.schedulers[s];
        if sched.next > now {
            return None;
        }
        sched.order.iter().position(|c| {
            !c.waiting && c.ready_at <= now && sched.pipe_free[c.class as usize] <= now
        })
    }

    /// Removes a finished threadgroup.
    pub fn remove_group(&mut self, group: GroupId, bytes: u64) {
        if let Some(i) = self.groups.iter().position(|g| g.group == group) {
            let g = self.groups.swap_remove(i);
            self.threads -= g.threads;
            self.threadgroup_bytes -= bytes;
        }
    }

    /// The first cycle from `from` on at which some SIMD-group could issue, if any can.
    pub fn next_event(&mut self, from: u64) -> Option<u64> {
        let mut best = u64::MAX;
        for s in 0..self.schedulers.len() {
            if self.schedulers[s].stale {
                self.refresh(s);
            }
            best = best.min(self.schedulers[s].next);
        }
        (best != u64::MAX).then(|| best.max(from))
    }
}
