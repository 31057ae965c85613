//! One GPU core's timing state: its resident threadgroups, its SIMD-group schedulers with
//! their pipelines, and each resident SIMD-group's scoreboard.
//!
//! A resident SIMD-group in core slot `i` belongs to scheduler `i % schedulers`. Each
//! scheduler keeps its SIMD-groups oldest first as small [`Candidate`] records (when its
//! next instruction's operands are ready, which pipeline it needs), so that picking one
//! is a short scan.

use metalsim_models::SchedulerPolicy;

use super::occupancy::{Cost as GroupCost, Held};
use super::profiler::WarpProfile;
use super::table::{Cost, MAX_PIPES, Table};
use crate::machine::GroupId;
use crate::program::{Kind, MAX_SRCS, Program, Reg};
use crate::regalloc::Bank;
use metalsim_isa::Space;

/// Timing state of one resident SIMD-group: its scoreboard.
#[derive(Clone, Debug, Default)]
pub(crate) struct Warp {
    /// Its threadgroup in the machine.
    pub group: GroupId,
    /// Its index in the threadgroup.
    pub sg: usize,
    /// Cycle each register's value is ready, by [`Operands`] index (the 32-bit slots,
    /// then the 64-bit ones).
    pub ready: Vec<u64>,
    /// Cycle each register may be written again, by [`Operands`] index: when the last
    /// store that reads it leaves the store path (`memory.store_reads_at_leave`).
    pub free: Vec<u64>,
    /// When its outstanding stores complete.
    pub drain: u64,
    /// Its core's count of SIMD-groups admitted before it: the older of two waiting for
    /// a place in the store path takes it first (`memory.store_reads_at_leave`).
    pub age: u64,
    /// Since when it has waited for a place in its core's store path (`None`: it does
    /// not wait for one). One that has waited since before the store path's starvation
    /// clock's last tick but one goes first (`memory.store_starve_cycles`).
    pub waits_since: Option<u64>,
    /// While it waits at a barrier: when its next instruction's operands are ready (its
    /// [`Candidate::ready_at`] holds `u64::MAX` meanwhile).
    pub resume: u64,
    /// What profiling needs to know of it (`None` unless the run is profiled; boxed so
    /// that moving a `Warp` stays cheap).
    pub prof: Option<Box<WarpProfile>>,
}

impl Warp {
    /// Clears the scoreboard for a program with `slots` register slots per bank; with
    /// `store_reads`, also when each register may be written again
    /// (`memory.store_reads_at_leave`).
    pub fn reset(&mut self, slots: [u32; 2], store_reads: bool) {
        let n = (slots[0] + slots[1]) as usize;
        self.ready.clear();
        self.ready.resize(n, 0);
        self.free.clear();
        if store_reads {
            self.free.resize(n, 0);
        }
        self.waits_since = None;
    }
}

/// The index of register `r` in a scoreboard whose 64-bit slots start at `wide_base`.
#[inline]
pub(crate) fn index(r: Reg, wide_base: u32) -> usize {
    match r.bank {
        Bank::B32 => r.slot as usize,
        Bank::B64 => (wide_base + r.slot) as usize,
    }
}

/// The registers one instruction reads and writes, as scoreboard indices (see
/// [`index`]): [`Deps`](crate::program::Deps) resolved once per program, so that the
/// hot loop reads plain indices.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Operands {
    srcs: [u32; MAX_SRCS],
    dsts: [u32; 4],
    n_srcs: u8,
    n_dsts: u8,
}

impl Operands {
    /// The operands of every instruction of `program`.
    pub fn of(program: &Program) -> Vec<Operands> {
        let wide_base = program.slots[0];
        program
            .deps
            .iter()
            .map(|d| {
                let mut o = Operands::default();
                for r in d.srcs.iter().flatten() {
                    o.srcs[o.n_srcs as usize] = index(*r, wide_base) as u32;
                    o.n_srcs += 1;
                }
                for r in d.dsts() {
                    o.dsts[o.n_dsts as usize] = index(r, wide_base) as u32;
                    o.n_dsts += 1;
                }
                o
            })
            .collect()
    }

    /// The indices it reads.
    #[inline]
    pub fn srcs(&self) -> &[u32] {
        &self.srcs[..self.n_srcs as usize]
    }

    /// The indices it writes.
    #[inline]
    pub fn dsts(&self) -> &[u32] {
        &self.dsts[..self.n_dsts as usize]
    }
}

/// What the issue path needs of one decoded instruction, in one record: the registers it
/// reads and writes and what it costs, so that an issue reads one record per pc.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decoded {
    /// Its scoreboard operands.
    pub ops: Operands,
    /// Its pipeline, busy cycles and latency.
    pub cost: Cost,
    /// Whether it stores to device memory.
    pub device_store: bool,
    /// Whether it loads from device memory.
    pub device_load: bool,
}

impl Decoded {
    /// The record of every instruction of `program`, with its costs from `table`.
    pub fn of(program: &Program, table: &Table) -> Vec<Decoded> {
        Operands::of(program)
            .into_iter()
            .zip(&table.costs)
            .zip(&program.insts)
            .map(|((ops, &cost), ins)| Decoded {
                ops,
                cost,
                device_store: matches!(
                    ins.kind,
                    Kind::Store(Space::Device, _)
                        | Kind::StoreVec(Space::Device, ..)
                        | Kind::MatrixStore(Space::Device, ..)
                ),
                device_load: matches!(
                    ins.kind,
                    Kind::Load(Space::Device, _)
                        | Kind::LoadVec(Space::Device, ..)
                        | Kind::MatrixLoad(Space::Device, ..)
                ),
            })
            .collect()
    }
}

/// What a scheduler needs to know of a SIMD-group to pick one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    /// Earliest cycle its next instruction's operands are ready (and any branch resolved);
    /// `u64::MAX` while it waits at a barrier, so that one comparison rules it out.
    pub ready_at: u64,
    /// Its core slot.
    pub slot: u32,
    /// The pipeline of its next instruction.
    pub pipe: u8,
    /// Whether that pipeline takes part in dual issue.
    pub dual: bool,
    /// It waits at a threadgroup barrier (its `ready_at` is `u64::MAX`).
    pub waiting: bool,
}

impl Candidate {
    /// Holds it at a barrier until [`release`](Self::release).
    #[inline]
    pub fn wait(&mut self) {
        self.waiting = true;
        self.ready_at = u64::MAX;
    }

    /// Lets it go on from a barrier, its operands ready at `ready_at`.
    #[inline]
    pub fn release(&mut self, ready_at: u64) {
        self.waiting = false;
        self.ready_at = ready_at;
    }
}

/// One SIMD-group scheduler: its pipelines and its SIMD-groups, oldest first.
#[derive(Clone, Debug)]
pub(crate) struct Scheduler {
    /// When each pipeline takes an instruction again.
    pub pipe_free: [u64; MAX_PIPES],
    /// Its SIMD-groups, oldest first.
    pub order: Vec<Candidate>,
    /// The slot of the SIMD-group that issued last (`u32::MAX`: none yet).
    pub last: u32,
    /// Its position in `order` when it issued (checked before use: removals shift it).
    pub last_pos: usize,
    /// No SIMD-group of it can issue before this cycle: its [`next_issue`] when a pick
    /// last found none. An admission or a barrier release on it clears it (they can make
    /// one ready sooner; a removal cannot, and an issue happens only once it has passed).
    /// At or below the current cycle it says nothing.
    ///
    /// [`next_issue`]: Self::next_issue
    pub idle_until: u64,
    /// No SIMD-group of it issues before this cycle: the issue slots its last issue took
    /// beyond its own (the reconvergence instructions a branch brought about).
    pub busy_until: u64,
}

impl Scheduler {
    fn new() -> Scheduler {
        Scheduler {
            pipe_free: [0; MAX_PIPES],
            order: Vec::new(),
            last: u32::MAX,
            last_pos: 0,
            idle_until: 0,
            busy_until: 0,
        }
    }

    #[inline]
    fn can_issue(&self, c: &Candidate, now: u64) -> bool {
        // A SIMD-group at a barrier has `ready_at == u64::MAX`, past every cycle.
        c.ready_at <= now && self.pipe_free[c.pipe as usize] <= now
    }

    /// The position of the SIMD-group the policy picks at `now` among those that can
    /// issue (and, for a second instruction in the cycle, take part in dual issue).
    #[inline]
    pub fn pick(&self, now: u64, policy: SchedulerPolicy, dual_only: bool) -> Option<usize> {
        let ok = |c: &Candidate| self.can_issue(c, now) && (!dual_only || c.dual);
        let last = self.last_position();
        match policy {
            SchedulerPolicy::GreedyThenOldest => {
                if let Some(p) = last
                    && ok(&self.order[p])
                {
                    return Some(p);
                }
                self.order.iter().position(ok)
            }
            SchedulerPolicy::LooseRoundRobin => {
                let n = self.order.len();
                let start = last.map_or(0, |p| p + 1);
                (0..n)
                    .map(|i| (start + i) % n)
                    .find(|&p| ok(&self.order[p]))
            }
        }
    }

    /// [`pick`](Self::pick) for the first instruction of cycle `now`; when none can
    /// issue, remembers until when ([`idle_until`](Self::idle_until)), so that later
    /// cycles before it need no scan.
    #[inline]
    pub fn pick_first(&mut self, now: u64, policy: SchedulerPolicy) -> Option<usize> {
        if now < self.idle_until || now < self.busy_until {
            return None;
        }
        let pos = self.pick(now, policy, false);
        if pos.is_none() {
            self.idle_until = self.next_issue();
        }
        pos
    }

    /// The position in its list of the SIMD-group in core slot `slot`.
    #[inline]
    pub fn position_of(&self, slot: u32) -> Option<usize> {
        self.order.iter().position(|c| c.slot == slot)
    }

    /// The position of the SIMD-group that issued last, if it is still there.
    #[inline]
    fn last_position(&self) -> Option<usize> {
        match self.order.get(self.last_pos) {
            Some(c) if c.slot == self.last => Some(self.last_pos),
            _ => self.order.iter().position(|c| c.slot == self.last),
        }
    }

    /// The earliest cycle one of its SIMD-groups could issue (`u64::MAX`: none can until
    /// a barrier releases).
    pub fn next_issue(&self) -> u64 {
        // Those at a barrier give `u64::MAX` (their `ready_at`).
        self.order
            .iter()
            .map(|c| c.ready_at.max(self.pipe_free[c.pipe as usize]))
            .min()
            .unwrap_or(u64::MAX)
    }
}

/// A threadgroup resident on a core.
#[derive(Clone, Debug)]
pub(crate) struct Resident {
    /// Its id in the machine.
    pub group: GroupId,
    /// The core slots of its SIMD-groups, by index in the threadgroup.
    pub slots: Vec<u32>,
    /// What it costs the core.
    pub cost: GroupCost,
    /// SIMD-groups not finished.
    pub left: u32,
    /// When it was admitted.
    pub start: u64,
    /// The latest cycle one of its finished SIMD-groups was done (memory drained).
    pub end: u64,
    /// Its threadgroup span in the profile (`usize::MAX`: none).
    pub span: usize,
}

/// One core.
#[derive(Clone, Debug)]
pub(crate) struct Core {
    /// Resident SIMD-groups by slot.
    pub warps: Vec<Option<Warp>>,
    /// Its schedulers; slot `i` belongs to scheduler `i % schedulers`.
    pub schedulers: Vec<Scheduler>,
    /// Resident threadgroups.
    pub groups: Vec<Resident>,
    /// What the resident threadgroups hold.
    pub held: Held,
    /// Resident SIMD-groups.
    pub resident: u32,
    /// Resident SIMD-groups integrated over cycles, up to `since`.
    pub area: f64,
    /// The cycle `area` was last brought up to date.
    pub since: u64,
}

impl Core {
    /// An empty core with `schedulers` schedulers.
    pub fn new(schedulers: usize) -> Core {
        Core {
            warps: Vec::new(),
            schedulers: vec![Scheduler::new(); schedulers.max(1)],
            groups: Vec::new(),
            held: Held::default(),
            resident: 0,
            area: 0.0,
            since: 0,
        }
    }

    /// Brings the occupancy integral up to `now`.
    fn account(&mut self, now: u64) {
        if now > self.since {
            self.area += self.resident as f64 * (now - self.since) as f64;
            self.since = now;
        }
    }

    /// Makes a started threadgroup resident. Its SIMD-groups (with the pipeline of their
    /// first instruction) are younger than every resident one, so they go to the end of
    /// their schedulers' lists; they hold their resources from `now` and can issue from
    /// `ready` (later than `now` while the core's threadgroup launcher is busy). `span` is
    /// its threadgroup span in the profile.
    pub fn admit(
        &mut self,
        group: GroupId,
        cost: GroupCost,
        warps: Vec<(Warp, u8, bool)>,
        (now, ready): (u64, u64),
        span: usize,
    ) {
        self.account(now);
        let mut slots = Vec::with_capacity(warps.len());
        let n = self.schedulers.len();
        for (w, pipe, dual) in warps {
            let slot = match self.warps.iter().position(Option::is_none) {
                Some(s) => s,
                None => {
                    self.warps.push(None);
                    self.warps.len() - 1
                }
            };
            self.warps[slot] = Some(w);
            self.schedulers[slot % n].idle_until = 0;
            self.schedulers[slot % n].order.push(Candidate {
                ready_at: ready,
                slot: slot as u32,
                pipe,
                dual,
                waiting: false,
            });
            slots.push(slot as u32);
        }
        self.resident += slots.len() as u32;
        self.held.add(&cost);
        self.groups.push(Resident {
            group,
            left: slots.len() as u32,
            slots,
            cost,
            start: now,
            end: now,
            span,
        });
    }

    /// Removes a finished SIMD-group at `now`; returns its scoreboard for reuse.
    pub fn remove_warp(&mut self, slot: u32, now: u64) -> Option<Warp> {
        self.account(now);
        self.resident -= 1;
        let n = self.schedulers.len();
        self.schedulers[slot as usize % n]
            .order
            .retain(|c| c.slot != slot);
        self.warps[slot as usize].take()
    }

    /// Removes a finished threadgroup.
    pub fn remove_group(&mut self, group: GroupId) {
        if let Some(i) = self.groups.iter().position(|g| g.group == group) {
            let g = self.groups.swap_remove(i);
            self.held.remove(&g.cost);
        }
    }

    /// The earliest cycle some SIMD-group could issue (`None`: none can until something
    /// else happens on the core).
    pub fn next_issue(&self) -> Option<u64> {
        let t = self
            .schedulers
            .iter()
            .map(Scheduler::next_issue)
            .min()
            .unwrap_or(u64::MAX);
        (t != u64::MAX).then_some(t)
    }

    /// The earliest cycle some SIMD-group could issue, right after a cycle in which no
    /// scheduler of the core issued (each then knows it: [`Scheduler::pick_first`]);
    /// `None`: none can until something else happens on the core.
    pub fn idle_until(&self) -> Option<u64> {
        let t = self
            .schedulers
            .iter()
            .map(|s| s.idle_until)
            .min()
            .unwrap_or(u64::MAX);
        (t != u64::MAX).then_some(t)
    }

    /// Resident SIMD-groups integrated over cycles up to `end`.
    pub fn occupancy_area(&mut self, end: u64) -> f64 {
        self.account(end);
        self.area
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(slot: u32, ready_at: u64, pipe: u8) -> Candidate {
        Candidate {
            ready_at,
            slot,
            pipe,
            dual: pipe < 2,
            waiting: false,
        }
    }

    /// The slot `policy` picks at `now` from candidates `order` after `last` issued.
    fn check(policy: SchedulerPolicy, order: &[Candidate], last: u32, now: u64) -> Option<u32> {
        let mut s = Scheduler::new();
        s.order = order.to_vec();
        s.last = last;
        s.pick(now, policy, false).map(|p| s.order[p].slot)
    }

    #[test]
    fn greedy_then_oldest_stays_with_the_last_while_it_can() {
        let order = [cand(0, 0, 0), cand(4, 0, 0), cand(8, 0, 0)];
        let gto = SchedulerPolicy::GreedyThenOldest;
        assert_eq!(check(gto, &order, 4, 0), Some(4));
        // The last cannot issue: the oldest that can.
        let order = [cand(0, 0, 0), cand(4, 9, 0), cand(8, 0, 0)];
        assert_eq!(check(gto, &order, 4, 0), Some(0));
        assert_eq!(check(gto, &order, u32::MAX, 0), Some(0));
    }

    #[test]
    fn loose_round_robin_takes_the_next_after_the_last() {
        let order = [cand(0, 0, 0), cand(4, 0, 0), cand(8, 0, 0)];
        let lrr = SchedulerPolicy::LooseRoundRobin;
        assert_eq!(check(lrr, &order, 4, 0), Some(8));
        assert_eq!(check(lrr, &order, 8, 0), Some(0));
        let order = [cand(0, 0, 0), cand(4, 0, 0), cand(8, 5, 0)];
        assert_eq!(check(lrr, &order, 4, 0), Some(0));
    }

    #[test]
    fn a_busy_pipeline_or_a_barrier_holds_a_simd_group_back() {
        let mut s = Scheduler::new();
        s.order = vec![cand(0, 0, 3), cand(4, 0, 0)];
        s.pipe_free[3] = 10;
        assert_eq!(s.pick(5, SchedulerPolicy::GreedyThenOldest, false), Some(1));
        s.order[1].wait();
        assert_eq!(s.pick(5, SchedulerPolicy::GreedyThenOldest, false), None);
        assert_eq!(s.next_issue(), 10);
        // Only dual-issue pipelines for a second instruction in the cycle.
        s.order[1].release(0);
        assert_eq!(s.pick(20, SchedulerPolicy::GreedyThenOldest, true), Some(1));
    }

    #[test]
    fn pick_first_picks_as_pick_and_remembers_when_none_can() {
        let policies = [
            SchedulerPolicy::GreedyThenOldest,
            SchedulerPolicy::LooseRoundRobin,
        ];
        let mut s = Scheduler::new();
        s.order = vec![cand(0, 7, 0), cand(4, 3, 1), cand(8, 5, 0), cand(12, 0, 2)];
        s.order[3].wait();
        s.pipe_free[1] = 6;
        for policy in policies {
            for last in [u32::MAX, 0, 4, 8, 12] {
                for now in 0..10 {
                    let mut first = s.clone();
                    first.last = last;
                    let mut plain = first.clone();
                    plain.idle_until = 0;
                    let expect = plain.pick(now, policy, false);
                    assert_eq!(
                        first.pick_first(now, policy),
                        expect,
                        "{policy:?} {last} {now}"
                    );
                    if expect.is_none() {
                        // None before cycle 5 (slot 8's operands), whichever policy.
                        assert_eq!(first.idle_until, plain.next_issue());
                        assert_eq!(first.idle_until, 5);
                        // Until then it answers without looking (the model makes sure
                        // nothing changes meanwhile).
                        first.order.iter_mut().for_each(|c| c.ready_at = 0);
                        assert_eq!(first.pick_first(4, policy), None);
                    }
                }
            }
        }
    }
}
