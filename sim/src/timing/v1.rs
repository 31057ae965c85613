//! Timing model v1.
//!
//! - Threadgroups go to cores in dispatch order. At the start each goes to the core with
//!   the fewest resident threads that can take it (ties: lowest core id); later, a core
//!   that retires a threadgroup takes the next ones while they fit. Residency is limited
//!   by threads, threadgroups and threadgroup memory per core (registers: not yet).
//! - Each core has `schedulers_per_core` schedulers; the SIMD-group in core slot `i` is
//!   on scheduler `i % schedulers`. A scheduler issues at most one instruction per cycle:
//!   the oldest of its SIMD-groups whose operands are ready and whose class's pipe is free
//!   (busy `issue.<class>` cycles after each issue). A result is ready `latency.<class>`
//!   cycles after issue; loads when the memory system ([`MemorySystem`]) returns the data.
//!   Device accesses take one issue cycle (the L1 port limits their bandwidth); stores do
//!   not stall but a SIMD-group finishes only once its stores are done. After a branch the
//!   next instruction waits `latency.control`; block parameters are ready when their
//!   arguments are. Released barriers let their SIMD-groups go `latency.barrier` later.
//! - Time jumps from event to event: cores are processed in (cycle, core) order and
//!   functional effects happen at issue in that order, so every run gives the same result.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use metalsim_isa::{OpClass, Space};
use metalsim_models::Gpu;

use super::core::{Core, Limits, PerClass, WarpClock};
use super::memsys::MemorySystem;
use super::{Cycle, Timing, TimingReport};
use crate::exec::{Access, Effect};
use crate::fault::KernelFault;
use crate::machine::{GroupId, Machine};
use crate::memory::AccessKind;
use crate::program::{Program, Reg};

/// The v1 timing model of a GPU.
pub(crate) struct ModelV1<'g> {
    gpu: &'g Gpu,
    latency: PerClass,
    issue: PerClass,
}

impl<'g> ModelV1<'g> {
    /// The model of `gpu`.
    pub fn new(gpu: &'g Gpu) -> Self {
        let mut latency = [0; OpClass::ALL.len()];
        let mut issue = [1; OpClass::ALL.len()];
        let (l, i) = (&gpu.latency, &gpu.issue);
        for c in OpClass::ALL {
            let pick = |p: &metalsim_models::PerClass| -> Option<u32> {
                Some(match c {
                    OpClass::FloatAlu => p.float_alu,
                    OpClass::HalfAlu => p.half_alu,
                    OpClass::IntAlu => p.int_alu,
                    OpClass::IntMul => p.int_mul,
                    OpClass::Special => p.special,
                    OpClass::Convert => p.convert,
                    OpClass::Move => p.move_,
                    // Device memory: latency from the memory system, one issue slot; the L1
                    // port limits its bandwidth.
                    OpClass::DeviceMemory => return None,
                    OpClass::ThreadgroupMemory => p.threadgroup_memory,
                    OpClass::ThreadMemory => p.thread_memory,
                    OpClass::Atomic => p.atomic,
                    OpClass::Barrier => p.barrier,
                    OpClass::SimdShuffle => p.simd_shuffle,
                    OpClass::SimdReduce => p.simd_reduce,
                    OpClass::SimdMatrix => p.simd_matrix,
                    OpClass::Control => p.control,
                })
            };
            if let Some(v) = pick(l) {
                latency[c as usize] = v as u64;
            }
            if let Some(v) = pick(i) {
                issue[c as usize] = (v as u64).max(1);
            }
        }
        ModelV1 {
            gpu,
            latency,
            issue,
        }
    }
}

/// The state of one timed run.
struct Run<'m, 'p> {
    model: &'m ModelV1<'m>,
    limits: Limits,
    cores: Vec<Core>,
    mem: MemorySystem,
    events: BinaryHeap<Reverse<(u64, usize)>>,
    finish: u64,
    /// Threadgroups resident on some core.
    resident: usize,
    tg_bytes: u64,
    spare: Vec<WarpClock>,
    program: &'p Program,
}

impl Timing for ModelV1<'_> {
    fn run(&mut self, m: &mut Machine) -> TimingReport {
        let limits = Limits::of(self.gpu);
        let mut run = Run {
            model: self,
            limits,
            cores: (0..self.gpu.cores.max(1))
                .map(|_| Core::new(&limits))
                .collect(),
            mem: MemorySystem::new(self.gpu),
            events: BinaryHeap::new(),
            finish: 0,
            resident: 0,
            tg_bytes: m.threadgroup_bytes() as u64,
            spare: Vec::new(),
            program: m.program(),
        };
        run.fill(m);
        let fault = run.simulate(m).err().map(|f| *f);
        TimingReport {
            cycles: Cycle(run.finish),
            dram_bytes: run.mem.dram_bytes,
            fault,
        }
    }
}

impl Run<'_, '_> {
    /// Distributes the first threadgroups over the cores.
    fn fill(&mut self, m: &mut Machine) {
        while let Some(shape) = m.peek_next() {
            let best = (0..self.cores.len())
                .filter(|&c| self.cores[c].can_accept(&shape, self.tg_bytes, &self.limits))
                .min_by_key(|&c| (self.cores[c].threads, c));
            let Some(c) = best else { break };
            self.admit_next(m, c, 0);
        }
        for c in 0..self.cores.len() {
            self.enqueue(c, 0);
        }
    }

    fn admit_next(&mut self, m: &mut Machine, c: usize, now: u64) {
        let Some(id) = m.start_next() else { return };
        let shape = m.group(id).shape;
        let n = m.group(id).simdgroups.len();
        let slots = self.program.slots;
        let mut warps = Vec::with_capacity(n);
        for sg in 0..n {
            let mut w = self.spare.pop().unwrap_or_else(|| WarpClock {
                group: 0,
                sg: 0,
                ready32: Vec::new(),
                ready64: Vec::new(),
                drain: 0,
            });
            w.group = id;
            w.sg = sg;
            w.drain = now;
            w.ready32.clear();
            w.ready32.resize(slots[0] as usize, 0);
            w.ready64.clear();
            w.ready64.resize(slots[1] as usize, 0);
            let class = m
                .next_pc(id, sg)
                .map_or(OpClass::Control, |pc| self.program.insts[pc as usize].class);
            warps.push((w, class));
        }
        self.cores[c].admit(id, &shape, self.tg_bytes, warps, now);
        self.resident += 1;
    }

    fn enqueue(&mut self, c: usize, now: u64) {
        let core = &mut self.cores[c];
        if core.queued {
            return;
        }
        if let Some(t) = core.next_event(now) {
            core.queued = true;
            self.events.push(Reverse((t, c)));
        }
    }

    fn simulate(&mut self, m: &mut Machine) -> Result<(), Box<KernelFault>> {
        while let Some(Reverse((now, c))) = self.events.pop() {
            // Every threadgroup has finished: whatever is still queued has nothing to do.
            if self.resident == 0 && m.peek_next().is_none() {
                break;
            }
            self.cores[c].queued = false;
            let result = self.tick(m, c, now);
            if let Err(f) = result {
                self.finish = self.finish.max(now);
                return Err(f);
            }
            if let Some(t) = self.cores[c].next_event(now + 1) {
                self.cores[c].queued = true;
                self.events.push(Reverse((t, c)));
            }
        }
        Ok(())
    }

    /// Lets each scheduler of core `c` issue at cycle `now`.
    fn tick(&mut self, m: &mut Machine, c: usize, now: u64) -> Result<(), Box<KernelFault>> {
        for s in 0..self.cores[c].schedulers.len() {
            if let Some(pos) = self.cores[c].pick(s, now) {
                // The issue changes this scheduler's pipes and the SIMD-group's clock.
                self.cores[c].schedulers[s].stale = true;
                self.issue(m, c, s, pos, now)?;
            }
        }
        Ok(())
    }

    /// Issues the next instruction of the SIMD-group at position `pos` of scheduler `s`
    /// and charges its time.
    fn issue(
        &mut self,
        m: &mut Machine,
        c: usize,
        s: usize,
        pos: usize,
        now: u64,
    ) -> Result<(), Box<KernelFault>> {
        let slot = self.cores[c].schedulers[s].order[pos].slot;
        let model = self.model;
        let program = self.program;
        let (group, sg) = {
            let w = self.cores[c].warps[slot as usize]
                .as_ref()
                .expect("picked slot is live");
            (w.group, w.sg)
        };
        let ex = m.step(group, sg)?;
        let class = ex.class as usize;
        self.cores[c].schedulers[s].pipe_free[class] = now + model.issue[class];
        let deps = program.deps[ex.pc as usize];
        let mut floor = now + 1;
        let mut release = false;
        let mut done = false;
        let mut waiting = false;
        // Memory timing first (it needs `self.mem`), then the SIMD-group's clock.
        let mem_done = match ex.effect {
            Effect::Memory => Some(self.memory_time(m.last_access(), c, now)),
            _ => None,
        };
        let w = self.cores[c].warps[slot as usize]
            .as_mut()
            .expect("picked slot is live");
        match ex.effect {
            Effect::None => {
                if let Some(d) = deps.dst {
                    w.set_ready(d, now + model.latency[class]);
                }
            }
            Effect::Memory => {
                let t = mem_done.unwrap_or(now);
                match deps.dst {
                    Some(d) => w.set_ready(d, t),
                    None => w.drain = w.drain.max(t),
                }
            }
            Effect::Branch { then_, else_ } => {
                for (e, lanes) in [then_, else_] {
                    if lanes == 0 {
                        continue;
                    }
                    let edge = program.edges[e as usize];
                    for cp in &program.copies[edge.copies_start as usize..edge.copies_end as usize]
                    {
                        let src = Reg {
                            bank: cp.bank,
                            slot: cp.src,
                        };
                        let dst = Reg {
                            bank: cp.bank,
                            slot: cp.dst,
                        };
                        let t = w.ready(src).max(now);
                        w.set_ready(dst, t);
                    }
                }
                floor = now + model.latency[OpClass::Control as usize].max(1);
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
            if let Some(pc) = m.next_pc(group, sg) {
                let next = &program.deps[pc as usize];
                let mut t = floor;
                for r in next.srcs.iter().flatten() {
                    t = t.max(w.ready(*r));
                }
                let cand = &mut self.cores[c].schedulers[s].order[pos];
                cand.ready_at = t;
                cand.class = program.insts[pc as usize].class;
                cand.waiting = waiting;
            }
        } else {
            let end = (now + 1).max(
                self.cores[c].warps[slot as usize]
                    .as_ref()
                    .map_or(0, |w| w.drain),
            );
            self.finish = self.finish.max(end);
        }
        if release {
            self.release(c, group, now + model.latency[OpClass::Barrier as usize]);
        }
        if done {
            self.finish_warp(m, c, group, slot, now);
        }
        Ok(())
    }

    /// The cycle a memory access completes.
    fn memory_time(&mut self, a: &Access, c: usize, now: u64) -> u64 {
        let lat = &self.model.latency;
        match a.space {
            Space::Threadgroup => {
                let l = match a.kind {
                    AccessKind::Atomic => lat[OpClass::Atomic as usize],
                    _ => lat[OpClass::ThreadgroupMemory as usize],
                };
                now + l
            }
            Space::Thread => now + lat[OpClass::ThreadMemory as usize],
            Space::Device | Space::Constant => {
                let mut lines = [0u64; 32];
                let mut n = 0;
                let mut mask = a.mask;
                while mask != 0 {
                    let l = mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    let line = self.mem.line_of(a.addrs[l]);
                    if !lines[..n].contains(&line) {
                        lines[n] = line;
                        n += 1;
                    }
                }
                match a.kind {
                    AccessKind::Load => self.mem.load(c, now, &lines[..n]),
                    AccessKind::Store => self.mem.store(c, now, &lines[..n]),
                    AccessKind::Atomic => self.mem.atomic(c, now, &lines[..n]),
                }
            }
        }
    }

    /// Wakes every SIMD-group of a threadgroup that waits at its barrier.
    fn release(&mut self, c: usize, group: GroupId, at: u64) {
        let core = &mut self.cores[c];
        core.mark_all_stale();
        let Some(res) = core.groups.iter().find(|g| g.group == group) else {
            return;
        };
        for &slot in &res.slots {
            if let Some((s, pos)) = core.find(slot) {
                let cand = &mut core.schedulers[s].order[pos];
                if cand.waiting {
                    cand.waiting = false;
                    cand.ready_at = cand.ready_at.max(at);
                }
            }
        }
    }

    /// A SIMD-group finished: free its slot; retire its threadgroup when it was the last,
    /// and let the core take the next threadgroups.
    fn finish_warp(&mut self, m: &mut Machine, c: usize, group: GroupId, slot: u32, now: u64) {
        let core = &mut self.cores[c];
        if let Some(w) = core.remove_warp(slot) {
            self.spare.push(w);
        }
        let Some(res) = core.groups.iter_mut().find(|g| g.group == group) else {
            return;
        };
        res.left -= 1;
        if res.left > 0 {
            return;
        }
        core.remove_group(group, self.tg_bytes);
        m.retire(group);
        self.resident -= 1;
        while let Some(shape) = m.peek_next() {
            if !self.cores[c].can_accept(&shape, self.tg_bytes, &self.limits) {
                break;
            }
            self.admit_next(m, c, now + 1);
        }
    }
}
