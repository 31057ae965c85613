//! The timing model of an Apple GPU.
//!
//! - **Residency** ([`occupancy`](super::occupancy)): threadgroups go to cores in
//!   dispatch order. At the start each goes to the core with the fewest resident threads
//!   that can take it (ties: the lowest core id); later, a core that retires a
//!   threadgroup takes the next ones while they fit. Threads, registers, threadgroup
//!   memory and threadgroups per core limit residency. Where the model sets
//!   `threadgroup_launch_cycles`, a core starts its threadgroups that far apart; where it
//!   sets `simdgroup_launch_cycles`, a threadgroup starts that many cycles per
//!   SIMD-group after its launch begins, and the launcher is busy at least as long.
//! - **Schedulers** ([`core`](super::core)): each core has `schedulers_per_core`; each
//!   issues at most one instruction per cycle (two on different dual-issue pipelines
//!   where the model has them) from a SIMD-group whose operands are ready (the
//!   scoreboard: a result is ready its class's latency after issue; a load's when the
//!   memory system returns it) and whose pipeline is free (busy `issue.<class>` cycles
//!   after each instruction). The policy picks among the ready ones: greedy-then-oldest
//!   or loose round-robin. After a branch the next instruction waits `latency.control`;
//!   block parameters are ready when their arguments are. A barrier holds a SIMD-group
//!   until every live SIMD-group of its threadgroup has arrived, and releases them
//!   `latency.barrier` later. Stores do not stall (unless the model limits its store
//!   path: `memory.store_queue`, `memory.store_reads_at_leave`; with
//!   `memory.store_path_loads`, loads wait for it too, and `memory.store_starve_cycles`
//!   puts a SIMD-group starved of a place first), but a SIMD-group
//!   finishes only once its memory operations are done. At the end every dirty cache
//!   line counts as DRAM traffic, and the dispatch ends no earlier than its DRAM traffic
//!   takes at DRAM bandwidth (unless the model sets `memory.write_back_at_end = false`).
//! - **Memory** ([`memsys`](super::memsys), [`coalesce`](super::coalesce)): a device
//!   access becomes one request per distinct cache line; a constant access one per
//!   distinct address (broadcast); a threadgroup access one wavefront per bank conflict
//!   degree on the core's threadgroup port; device atomics serialize per address at L2,
//!   or, where the model sets `memory.atomic_line_cycles` or
//!   `memory.atomic_sector_cycles`, per atomic unit of one or more lines (one request per
//!   SIMD-group instruction and line, priced by the sectors and same-address lanes it
//!   holds).
//! - **Time** jumps from event to event: cores are processed in (cycle, core) order and
//!   functional effects happen at issue in that order, so every run gives the same
//!   result. A core with nothing to issue is not visited until it has.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use metalsim_isa::{AtomicOp, Function, Space};
use metalsim_models::{Gpu, SchedulerPolicy};

use super::coalesce;
use super::core::{Core, Decoded, Warp, index};
use super::folded;
use super::memsys::MemorySystem;
use super::occupancy::{Cost as GroupCost, Residency};
use super::profiler::{MemoryEvent, Profiler};
use super::table::Table;
use super::{Cycle, Timing, TimingReport};
use crate::exec::{Access, Effect};
use crate::fault::KernelFault;
use crate::machine::{GroupId, Machine};
use crate::memory::AccessKind;
use crate::outcome::{Occupancy, TimingSummary};
use crate::program::{Kind, Program, Reg};

/// The timing model of a GPU.
pub(crate) struct Model<'g> {
    gpu: &'g Gpu,
    /// The function to profile (the one the machine runs), when the run is profiled.
    profile: Option<&'g Function>,
}

impl<'g> Model<'g> {
    /// The model of `gpu`; with `profile`, the function the machine runs, it also counts
    /// a [`Profile`](metalsim_traces::Profile).
    pub fn new(gpu: &'g Gpu, profile: Option<&'g Function>) -> Self {
        Model { gpu, profile }
    }
}

/// The state of one timed run.
struct Run<'p> {
    table: Table,
    policy: SchedulerPolicy,
    residency: Residency,
    banks: u32,
    bank_bytes: u32,
    cores: Vec<Core>,
    mem: MemorySystem,
    events: BinaryHeap<Reverse<(u64, u32)>>,
    finish: u64,
    /// Threadgroups resident on some core.
    resident: usize,
    /// SIMD-groups admitted so far (each one's [`Warp::age`]).
    admitted: u64,
    tg_bytes: u64,
    spare: Vec<Warp>,
    program: &'p Program,
    /// Each instruction's scoreboard indices and cost, one record per pc.
    insts: Vec<Decoded>,
    /// The block-parameter copies of [`Program::copies`] as `(source, destination)`
    /// scoreboard indices.
    copies: Vec<(u32, u32)>,
    /// Working space for coalescing.
    scratch: Vec<u64>,
    scratch2: Vec<u64>,
    addresses: Vec<(u64, u32)>,
    /// Cycles a core takes to launch one threadgroup (`threadgroup_launch_cycles`).
    launch_cycles: u64,
    /// Cycles a core takes per SIMD-group of a threadgroup it launches
    /// (`simdgroup_launch_cycles`).
    simdgroup_launch_cycles: u64,
    /// Per core, the cycle its threadgroup launcher is next free.
    launch_free: Vec<u64>,
    /// The profile's counters, when profiling.
    prof: Option<Box<Profiler>>,
    /// Where stores wait for a place in the store path (`memory.store_reads_at_leave`),
    /// the pipelines of the program's device stores, one bit each (0: none to wait, and
    /// no register a store reads to keep; see [`Run::reads_at_leave`]).
    store_pipes: u16,
    /// Where device loads wait for the store path too (`memory.store_path_loads`), the
    /// pipelines of the program's device loads, one bit each (0: loads never wait).
    load_pipes: u16,
    /// The period of the store path's starvation clock (`memory.store_starve_cycles`;
    /// 0: none).
    starve_cycles: u64,
}

impl Timing for Model<'_> {
    fn run(&mut self, m: &mut Machine) -> TimingReport {
        let gpu = self.gpu;
        let program = m.program();
        let table = Table::new(gpu, program);
        let residency = Residency::new(gpu, program.register_use);
        let tg_bytes = m.threadgroup_bytes() as u64;
        let insts = Decoded::of(program, &table);
        let store_pipes = match gpu.memory.store_reads_at_leave {
            Some(true) => insts
                .iter()
                .filter(|d| d.device_store)
                .fold(0, |pipes, d| pipes | (1 << d.cost.pipe)),
            _ => 0,
        };
        let load_pipes = match gpu.memory.store_path_loads {
            Some(true) if store_pipes != 0 => insts
                .iter()
                .filter(|d| d.device_load)
                .fold(0, |pipes, d| pipes | (1 << d.cost.pipe)),
            _ => 0,
        };
        let mut run = Run {
            mem: MemorySystem::new(gpu, table.wavefront),
            insts,
            table,
            policy: gpu.scheduler_policy,
            residency,
            banks: gpu.memory.threadgroup_banks,
            bank_bytes: gpu.memory.threadgroup_bank_bytes,
            cores: (0..gpu.cores.max(1))
                .map(|_| Core::new(gpu.schedulers_per_core as usize))
                .collect(),
            events: BinaryHeap::new(),
            finish: 0,
            resident: 0,
            admitted: 0,
            tg_bytes,
            spare: Vec::new(),
            program,
            copies: program
                .copies
                .iter()
                .map(|cp| {
                    let reg = |slot| Reg {
                        bank: cp.bank,
                        slot,
                    };
                    let wide_base = program.slots[0];
                    (
                        index(reg(cp.src), wide_base) as u32,
                        index(reg(cp.dst), wide_base) as u32,
                    )
                })
                .collect(),
            scratch: Vec::with_capacity(256),
            scratch2: Vec::with_capacity(256),
            addresses: Vec::with_capacity(32),
            launch_cycles: gpu.threadgroup_launch_cycles.unwrap_or(0) as u64,
            simdgroup_launch_cycles: gpu.simdgroup_launch_cycles.unwrap_or(0) as u64,
            launch_free: vec![0; gpu.cores.max(1) as usize],
            store_pipes,
            load_pipes,
            starve_cycles: gpu.memory.store_starve_cycles.map_or(0, u64::from),
            prof: self.profile.map(|_| {
                Box::new(Profiler::new(
                    program,
                    gpu.cores.max(1) as usize,
                    gpu.schedulers_per_core.max(1) as usize,
                ))
            }),
        };
        let first = m.peek_next();
        run.fill(m);
        let fault = run.simulate(m).err().map(|f| *f);
        if let Some(p) = &mut run.prof {
            p.settle(&run.mem.traffic());
        }
        if fault.is_none() {
            // Writes still cached at the end are DRAM traffic too.
            run.finish = run.finish.max(run.mem.flush(run.finish));
        } else {
            run.cut(m);
        }
        let occupancy = first.map(|shape| run.occupancy(gpu, shape.threads));
        let profile = match (run.prof.take(), self.profile) {
            (Some(p), Some(f)) => Some(p.into_profile(
                program,
                f,
                run.finish,
                &run.mem.traffic(),
                gpu.schedulers_per_core.max(1),
            )),
            _ => None,
        };
        let c = run.mem.counters;
        TimingReport {
            cycles: Cycle(run.finish),
            dram_bytes: c.dram_bytes,
            summary: occupancy.map(|occupancy| TimingSummary {
                occupancy,
                l1: c.l1,
                l2: c.l2,
                slc: c.slc,
                bank_conflict_replays: c.replays,
            }),
            fault,
            profile,
        }
    }
}

/// Whether a SIMD-group that has waited for a place in the store path since `a.0`, of
/// age `a.1` (its core's count of SIMD-groups admitted before it), takes a free place at
/// `now` before one that has waited since `b.0`, of age `b.1`. With a starvation clock
/// of period `starve_cycles` (`memory.store_starve_cycles`; 0: none), one that has
/// waited since before the clock's last tick but one (through a whole period) goes
/// before one that has not; otherwise, and among either, the older goes first.
fn goes_first(a: (u64, u64), b: (u64, u64), now: u64, starve_cycles: u64) -> bool {
    let starved = |since: u64| {
        starve_cycles != 0 && since < (now / starve_cycles).saturating_sub(1) * starve_cycles
    };
    (!starved(a.0), a.1) < (!starved(b.0), b.1)
}

/// What a memory instruction at `pc` moved, for the profile: `access` is the machine's
/// record of it and `transactions` what [`Run::memory_time`] counted.
fn memory_event(program: &Program, a: &Access, pc: u32, transactions: u64) -> MemoryEvent {
    let device = matches!(a.space, Space::Device | Space::Constant);
    let bytes = if device { a.total_bytes() } else { 0 };
    let (reads, writes) = match (a.kind, program.insts[pc as usize].kind) {
        (AccessKind::Load, _) => (true, false),
        (AccessKind::Store, _) => (false, true),
        // An atomic load only reads, an atomic store only writes.
        (AccessKind::Atomic, Kind::Atomic(op, ..)) => (op != AtomicOp::Store, op != AtomicOp::Load),
        (AccessKind::Atomic, _) => (true, true),
    };
    let threadgroup = a.space == Space::Threadgroup;
    MemoryEvent {
        read: if reads { bytes } else { 0 },
        written: if writes { bytes } else { 0 },
        transactions,
        threadgroup,
        replays: if threadgroup {
            transactions.saturating_sub(1)
        } else {
            0
        },
        atomic: a.kind == AccessKind::Atomic,
    }
}

impl Run<'_> {
    /// After a fault: charges the SIMD-groups still resident up to the end of the run, and
    /// ends their threadgroups' spans there.
    fn cut(&mut self, m: &Machine) {
        let Some(p) = &mut self.prof else { return };
        let end = self.finish;
        for (c, core) in self.cores.iter().enumerate() {
            let n = core.schedulers.len();
            for (slot, w) in core.warps.iter().enumerate() {
                if let Some(w) = w
                    && let Some(wp) = w.prof.as_deref()
                {
                    let pc = m.next_pc(w.group, w.sg).unwrap_or(wp.last_pc);
                    p.cut_warp(c, slot % n, wp, pc, end.max(wp.since));
                }
            }
            for g in &core.groups {
                p.retire(g.span, g.start, end.max(g.end));
            }
        }
    }

    /// Theoretical and achieved occupancy for threadgroups of `threads`.
    fn occupancy(&mut self, gpu: &Gpu, threads: u32) -> Occupancy {
        let cost = self.residency.cost(threads, self.tg_bytes);
        let (groups, limiter) = self.residency.groups_per_core(&cost);
        let max_sg = (gpu.max_threads_per_core / 32).max(1) as f64;
        let per_group = cost.threads.div_ceil(32) as f64;
        let theoretical = (groups as f64 * per_group / max_sg).min(1.0);
        let end = self.finish.max(1);
        let area: f64 = self.cores.iter_mut().map(|c| c.occupancy_area(end)).sum();
        let achieved = area / (end as f64 * self.cores.len() as f64 * max_sg);
        Occupancy {
            theoretical,
            achieved,
            limiter,
            threadgroups_per_core: groups,
            registers_per_thread: self.residency.registers_per_thread,
        }
    }

    /// Distributes the first threadgroups over the cores.
    fn fill(&mut self, m: &mut Machine) {
        while let Some(shape) = m.peek_next() {
            let cost = self.residency.cost(shape.threads, self.tg_bytes);
            let best = (0..self.cores.len())
                .filter(|&c| self.residency.fits(&self.cores[c].held, &cost))
                .min_by_key(|&c| (self.cores[c].held.threads, c));
            let Some(c) = best else { break };
            self.admit_next(m, c, 0);
        }
        for c in 0..self.cores.len() {
            if let Some(t) = self.cores[c].next_issue() {
                self.events.push(Reverse((t, c as u32)));
            }
        }
    }

    fn admit_next(&mut self, m: &mut Machine, c: usize, now: u64) {
        let Some(id) = m.start_next() else { return };
        let shape = m.group(id).shape;
        let cost: GroupCost = self.residency.cost(shape.threads, self.tg_bytes);
        let n = m.group(id).simdgroups.len();
        let slots = self.program.slots;
        // The core launches its threadgroups one after another; a threadgroup's
        // SIMD-groups start once its launch is over.
        let begins = now.max(self.launch_free[c]);
        let takes = self.simdgroup_launch_cycles * n as u64;
        self.launch_free[c] = begins + self.launch_cycles.max(takes);
        let ready = begins + takes;
        let span = match &mut self.prof {
            Some(p) => p.admit(shape.pos, c, now),
            None => usize::MAX,
        };
        let mut warps = Vec::with_capacity(n);
        for sg in 0..n {
            let mut w = self.spare.pop().unwrap_or_default();
            w.group = id;
            w.sg = sg;
            w.drain = ready;
            w.age = self.admitted;
            self.admitted += 1;
            w.reset(slots, self.reads_at_leave());
            if self.prof.is_some() {
                w.prof.get_or_insert_default().start(now, ready, slots);
            }
            let (pipe, dual) = m.next_pc(id, sg).map_or((0, false), |pc| {
                let k = self.insts[pc as usize].cost;
                (k.pipe, k.dual)
            });
            warps.push((w, pipe, dual));
        }
        self.cores[c].admit(id, cost, warps, (now, ready), span);
        self.resident += 1;
    }

    fn simulate(&mut self, m: &mut Machine) -> Result<(), Box<KernelFault>> {
        // The earliest event stays at the top of the heap while its core ticks (a tick
        // adds no event), and is then replaced by the core's next one in one sift.
        while let Some(&Reverse((now, c))) = self.events.peek() {
            let c = c as usize;
            let issued = match self.tick(m, c, now) {
                Ok(n) => n,
                Err(f) => {
                    self.finish = self.finish.max(now);
                    return Err(f);
                }
            };
            // Something issued: the core may issue again next cycle. Otherwise it waits
            // for its earliest ready SIMD-group (which only its own issues can change).
            let next = if issued {
                Some(now + 1)
            } else {
                self.cores[c].idle_until().map(|t| t.max(now + 1))
            };
            match next {
                Some(t) => {
                    *self.events.peek_mut().expect("the event just handled") =
                        Reverse((t, c as u32))
                }
                None => {
                    self.events.pop();
                }
            }
        }
        Ok(())
    }

    /// Lets each scheduler of core `c` issue at cycle `now`; whether any did.
    fn tick(&mut self, m: &mut Machine, c: usize, now: u64) -> Result<bool, Box<KernelFault>> {
        let mut issued = false;
        for s in 0..self.cores[c].schedulers.len() {
            let pos = loop {
                let Some(pos) = self.cores[c].schedulers[s].pick_first(now, self.policy) else {
                    break None;
                };
                if !self.store_waits(m, c, s, pos, now) {
                    break Some(pos);
                }
            };
            let Some(pos) = pos else { continue };
            let dual = self.cores[c].schedulers[s].order[pos].dual;
            self.issue(m, c, s, pos, now)?;
            issued = true;
            if dual && self.table.dual_issue {
                // A second instruction to another dual-issue pipeline (the first's is
                // busy now) from another SIMD-group.
                if let Some(pos) = self.cores[c].schedulers[s].pick(now, self.policy, true)
                    && !self.store_waits(m, c, s, pos, now)
                {
                    self.issue(m, c, s, pos, now)?;
                }
            }
        }
        Ok(issued)
    }

    /// Whether the program's device stores read their registers as they leave the store
    /// path (`memory.store_reads_at_leave`), so that they wait before issue for a place
    /// and their registers are not written again until they leave. A program without
    /// device stores has no such store, whatever the model says.
    #[inline]
    fn reads_at_leave(&self) -> bool {
        self.store_pipes != 0
    }

    /// Whether the SIMD-group at position `pos` of scheduler `s` of core `c` must not
    /// issue at `now` because its next instruction is a device store (or, with
    /// `memory.store_path_loads`, a device load) and it has no place in the core's
    /// store path (`memory.store_reads_at_leave`): the path is full, or a SIMD-group of
    /// the core that goes first ([`goes_first`]) waits for the free place; if so,
    /// it is not picked again before it could have one.
    fn store_waits(&mut self, m: &Machine, c: usize, s: usize, pos: usize, now: u64) -> bool {
        let cand = &self.cores[c].schedulers[s].order[pos];
        // Only an instruction of a store's (or a waiting load's) pipeline can be one.
        if (self.store_pipes | self.load_pipes) & (1 << cand.pipe) == 0 {
            return false;
        }
        let slot = cand.slot as usize;
        let Some(w) = self.cores[c].warps[slot].as_ref() else {
            return false;
        };
        let waits_for_place = m.next_pc(w.group, w.sg).is_some_and(|pc| {
            let d = &self.insts[pc as usize];
            d.device_store || (self.load_pipes != 0 && d.device_load)
        });
        if !waits_for_place {
            return false;
        }
        let core = &self.cores[c];
        let wait = match self.mem.store_path_full(c, now) {
            Some(free) => Some(free),
            // A place is free: of the SIMD-groups that wait for one and could issue now,
            // the one that goes first takes it.
            None => {
                let mine = (w.waits_since.unwrap_or(now), w.age);
                let first = |o: &Warp| {
                    o.waits_since
                        .is_some_and(|t| goes_first((t, o.age), mine, now, self.starve_cycles))
                };
                core.schedulers
                    .iter()
                    .flat_map(|sc| &sc.order)
                    .any(|cand| {
                        cand.ready_at <= now
                            && core.warps[cand.slot as usize].as_ref().is_some_and(first)
                    })
                    .then_some(now + 1)
            }
        };
        let w = self.cores[c].warps[slot]
            .as_mut()
            .expect("picked slot is live");
        w.waits_since = wait.map(|_| w.waits_since.unwrap_or(now));
        let Some(until) = wait else { return false };
        // It waits on memory.
        if let Some(wp) = w.prof.as_deref_mut() {
            wp.operands = wp.operands.max(until);
            wp.operands_memory = true;
        }
        self.cores[c].schedulers[s].order[pos].ready_at = until;
        true
    }

    /// Issues the next instruction of the SIMD-group at position `pos` of scheduler `s`
    /// of core `c`, and charges its time.
    #[inline]
    fn issue(
        &mut self,
        m: &mut Machine,
        c: usize,
        s: usize,
        pos: usize,
        now: u64,
    ) -> Result<(), Box<KernelFault>> {
        if self.prof.is_some() {
            self.issue_with::<true>(m, c, s, pos, now)
        } else {
            self.issue_with::<false>(m, c, s, pos, now)
        }
    }

    /// [`issue`](Self::issue), compiled apart for runs that count the profile
    /// (`PROFILED`) and runs that do not, so that the latter carry none of its branches.
    fn issue_with<const PROFILED: bool>(
        &mut self,
        m: &mut Machine,
        c: usize,
        s: usize,
        pos: usize,
        now: u64,
    ) -> Result<(), Box<KernelFault>> {
        let program = self.program;
        let slot = self.cores[c].schedulers[s].order[pos].slot;
        let (group, sg) = {
            let w = self.cores[c].warps[slot as usize]
                .as_ref()
                .expect("picked slot is live");
            (w.group, w.sg)
        };
        m.set_cycle(now);
        let step = m.step_on(group, sg)?;
        let ex = step.ex;
        let cost = self.insts[ex.pc as usize].cost;
        // Memory timing first (it needs all of `self`), then the SIMD-group's scoreboard.
        let mem_done = match ex.effect {
            Effect::Memory => {
                if PROFILED && let Some(p) = &mut self.prof {
                    p.before_memory(now, &self.mem);
                }
                Some(self.memory_time(m.last_access(), c, now))
            }
            _ => None,
        };
        let reads_at_leave = self.reads_at_leave();
        let core = &mut self.cores[c];
        let sched = &mut core.schedulers[s];
        sched.pipe_free[cost.pipe as usize] = now + cost.busy as u64;
        sched.last = slot;
        sched.last_pos = pos;
        let w = core.warps[slot as usize]
            .as_mut()
            .expect("picked slot is live");
        let mut floor = now + 1;
        let mut release = false;
        let mut done = false;
        let mut waiting = false;
        // Until when the store path holds the SIMD-group: a store that found it full, or
        // (`memory.store_reads_at_leave`) a register its next instruction writes that a
        // store in the path has still to read.
        let mut hold = 0;
        // The pc the step ran: a SIMD-group whose remaining lanes wait at the exit takes
        // a step without an instruction, counted as its last one.
        let mut pc = ex.pc;
        if PROFILED
            && let Some(p) = &mut self.prof
            && let Some(wp) = w.prof.as_deref_mut()
        {
            if let Effect::Exit { .. } = ex.effect
                && ex.active == 0
            {
                pc = wp.last_pc;
            }
            p.issue(
                c,
                s,
                wp,
                pc,
                ex.class,
                ex.active.count_ones(),
                cost.pipe,
                cost.busy as u64,
                now,
            );
            if let Some((_, transactions)) = mem_done {
                let event = memory_event(program, m.last_access(), pc, transactions);
                p.memory(pc, now, event);
            }
            if let Effect::Branch { then_, else_, .. } = ex.effect
                && then_.1 != 0
                && else_.1 != 0
            {
                p.diverged(pc);
            }
        }
        let operands = &self.insts[ex.pc as usize].ops;
        match ex.effect {
            Effect::None => {
                let t = now + cost.latency as u64;
                for &d in operands.dsts() {
                    w.ready[d as usize] = t;
                }
                if PROFILED && let Some(wp) = w.prof.as_deref_mut() {
                    for &d in operands.dsts() {
                        wp.memory[d as usize] = false;
                    }
                }
            }
            Effect::Memory => {
                // A SIMD-group is done only when its memory operations are.
                let t = mem_done.map_or(now, |(t, _)| t);
                w.drain = w.drain.max(t);
                let wait = self.mem.take_store_wait();
                if !reads_at_leave {
                    hold = wait;
                } else if wait != 0 {
                    // The store reads its registers as it leaves the store path.
                    for &r in operands.srcs() {
                        w.free[r as usize] = w.free[r as usize].max(wait);
                    }
                }
                for &d in operands.dsts() {
                    w.ready[d as usize] = t;
                }
                if PROFILED && let Some(wp) = w.prof.as_deref_mut() {
                    for &d in operands.dsts() {
                        wp.memory[d as usize] = true;
                    }
                }
            }
            Effect::Branch {
                then_,
                else_,
                joined,
            } => {
                for (e, lanes) in [then_, else_] {
                    if lanes == 0 {
                        continue;
                    }
                    let edge = program.edges[e as usize];
                    for &(src, dst) in
                        &self.copies[edge.copies_start as usize..edge.copies_end as usize]
                    {
                        let (src, dst) = (src as usize, dst as usize);
                        w.ready[dst] = w.ready[src].max(now);
                        if PROFILED && let Some(wp) = w.prof.as_deref_mut() {
                            wp.memory[dst] = wp.memory[src];
                        }
                    }
                }
                floor = now + self.table.branch.max(1);
                if program.join_instructions && joined.groups > 0 {
                    // Each group that reached the reconvergence point runs one more
                    // control instruction: an issue slot of the scheduler and of the
                    // control pipeline each, charged with the branch that brought the
                    // groups there.
                    let (extra, busy) = (joined.groups as u64, cost.busy as u64);
                    let sched = &mut core.schedulers[s];
                    sched.busy_until = now + 1 + extra;
                    sched.pipe_free[cost.pipe as usize] = now + busy * (1 + extra);
                    floor += extra;
                    if PROFILED
                        && let Some(p) = &mut self.prof
                        && let Some(wp) = w.prof.as_deref_mut()
                    {
                        p.reconverged(c, s, wp, pc, joined, cost.pipe, busy, now);
                    }
                }
            }
            Effect::Barrier { released } => {
                waiting = true;
                release = released;
            }
            Effect::Exit { done: d, released } => {
                done = d;
                release = released;
            }
        }
        if !done {
            let mut next_pc = step.next;
            if !waiting
                && let Some(pc) = next_pc
                && self.insts[pc as usize].cost.folded
            {
                let prof = if PROFILED {
                    self.prof.as_deref_mut()
                } else {
                    None
                };
                next_pc = folded::run_folded(m, &self.insts, w, prof, now, pc)?;
            }
            if let Some(next_pc) = next_pc {
                let next = &self.insts[next_pc as usize];
                if reads_at_leave {
                    // A register a store still in the path reads is not written before
                    // the store leaves.
                    for &d in next.ops.dsts() {
                        hold = hold.max(w.free[d as usize]);
                    }
                }
                let mut t = floor.max(hold);
                let wp = if PROFILED {
                    w.prof.as_deref_mut()
                } else {
                    None
                };
                match wp {
                    None => {
                        for &r in next.ops.srcs() {
                            t = t.max(w.ready[r as usize]);
                        }
                    }
                    Some(wp) => {
                        wp.floor = floor;
                        // The latest operand (the first of equals) and where it comes from.
                        // A held store, or a register a store has still to read, counts
                        // as waiting on memory.
                        let mut operands = (hold, hold != 0);
                        for &r in next.ops.srcs() {
                            let ready = w.ready[r as usize];
                            t = t.max(ready);
                            if ready > operands.0 {
                                operands = (ready, wp.memory[r as usize]);
                            }
                        }
                        (wp.operands, wp.operands_memory) = operands;
                    }
                }
                let k = next.cost;
                let cand = &mut core.schedulers[s].order[pos];
                cand.pipe = k.pipe;
                cand.dual = k.dual;
                if waiting {
                    w.resume = t;
                    cand.wait();
                } else {
                    cand.ready_at = t;
                }
            }
        } else {
            self.finish = self.finish.max((now + 1).max(w.drain));
        }
        if release {
            self.release(c, group, now + self.table.barrier);
        }
        if done {
            self.finish_warp(m, c, group, slot, now, pc);
        }
        Ok(())
    }

    /// The cycle a memory access by core `c` issued at `now` completes, and the
    /// transactions it took (lines, constant addresses or wavefronts).
    fn memory_time(&mut self, a: &Access, c: usize, now: u64) -> (u64, u64) {
        let t = &self.table;
        match a.space {
            Space::Threadgroup => {
                let mut waves =
                    coalesce::wavefronts(a, self.banks, self.bank_bytes, &mut self.scratch);
                if a.kind == AccessKind::Atomic {
                    waves = waves.max(coalesce::same_address(a));
                }
                let lat = if a.kind == AccessKind::Atomic {
                    t.threadgroup_latency.max(t.atomic_busy)
                } else {
                    t.threadgroup_latency
                };
                (self.mem.threadgroup(c, now, waves, lat), waves as u64)
            }
            Space::Thread => {
                let pieces = if a.second.is_some() { 2 } else { 1 };
                let waves = (a.bytes * pieces).div_ceil(self.bank_bytes.max(1)).max(1);
                (
                    self.mem.thread(c, now, waves, t.thread_latency),
                    waves as u64,
                )
            }
            Space::Constant => {
                coalesce::addresses(a, &mut self.scratch);
                let done = self.mem.constant(c, now, &self.scratch);
                (done, self.scratch.len() as u64)
            }
            Space::Device => {
                let shift = self.mem.request_shift();
                coalesce::lines(a, shift, &mut self.scratch);
                let done = match a.kind {
                    AccessKind::Load => self.mem.load(c, now, &self.scratch),
                    AccessKind::Store => self.mem.store(c, now, &self.scratch),
                    AccessKind::Atomic => {
                        coalesce::addresses(a, &mut self.scratch2);
                        self.addresses.clear();
                        for &addr in &self.scratch2 {
                            let mut n = 0;
                            let mut mask = a.mask;
                            while mask != 0 {
                                let l = mask.trailing_zeros() as usize;
                                mask &= mask - 1;
                                n += (a.addrs[l] == addr) as u32;
                            }
                            self.addresses.push((addr, n.max(1)));
                        }
                        let (busy, lat) = (self.table.atomic_busy, self.table.atomic_latency);
                        self.mem
                            .atomic(c, now, &self.scratch, &self.addresses, busy, lat)
                    }
                };
                (done, self.scratch.len() as u64)
            }
        }
    }

    /// Wakes every SIMD-group of a threadgroup that waits at its barrier, at `at`.
    fn release(&mut self, c: usize, group: GroupId, at: u64) {
        let core = &mut self.cores[c];
        let Some(res) = core.groups.iter().find(|g| g.group == group) else {
            return;
        };
        let n = core.schedulers.len();
        for &slot in &res.slots {
            let sched = &mut core.schedulers[slot as usize % n];
            let Some(pos) = sched.position_of(slot) else {
                continue;
            };
            let cand = &mut sched.order[pos];
            if cand.waiting
                && let Some(w) = core.warps[slot as usize].as_mut()
            {
                sched.idle_until = 0;
                cand.release(w.resume.max(at));
                if let Some(wp) = w.prof.as_deref_mut() {
                    wp.barrier = at;
                }
            }
        }
    }

    /// A SIMD-group finished at `now` with instruction `pc`: free its slot; retire its
    /// threadgroup when it was the last, and let the core take the next threadgroups.
    fn finish_warp(
        &mut self,
        m: &mut Machine,
        c: usize,
        group: GroupId,
        slot: u32,
        now: u64,
        pc: u32,
    ) {
        let core = &mut self.cores[c];
        let mut end = now + 1;
        if let Some(w) = core.remove_warp(slot, now + 1) {
            end = end.max(w.drain);
            if let (Some(p), Some(wp)) = (&mut self.prof, w.prof.as_deref()) {
                p.finish_warp(c, wp, pc, end);
            }
            self.spare.push(w);
        }
        let Some(res) = core.groups.iter_mut().find(|g| g.group == group) else {
            return;
        };
        res.left -= 1;
        res.end = res.end.max(end);
        if res.left > 0 {
            return;
        }
        if let Some(p) = &mut self.prof {
            p.retire(res.span, res.start, res.end);
        }
        core.remove_group(group);
        m.retire(group);
        self.resident -= 1;
        while let Some(shape) = m.peek_next() {
            let cost = self.residency.cost(shape.threads, self.tg_bytes);
            if !self.residency.fits(&self.cores[c].held, &cost) {
                break;
            }
            self.admit_next(m, c, now + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::goes_first;

    #[test]
    fn without_a_starvation_clock_the_older_goes_first() {
        assert!(goes_first((500, 3), (10, 7), 1_000_000, 0));
        assert!(!goes_first((10, 7), (500, 3), 1_000_000, 0));
    }

    #[test]
    fn one_that_waited_through_a_whole_period_goes_before_the_older() {
        let p = 16384;
        // At 3.5 periods, the tick but one before now is at 2 periods.
        let now = 3 * p + p / 2;
        assert!(goes_first((2 * p - 1, 9), (3 * p, 2), now, p));
        assert!(!goes_first((3 * p, 2), (2 * p - 1, 9), now, p));
        // Both starved, or neither: the older.
        assert!(goes_first((p, 2), (2 * p - 1, 9), now, p));
        assert!(goes_first((3 * p, 2), (2 * p, 9), now, p));
        // Before the clock's second tick nothing has waited a whole period.
        assert!(!goes_first((0, 9), (10, 2), p + 5, p));
    }
}
