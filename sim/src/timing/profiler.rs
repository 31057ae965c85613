//! The counters of a profiled timed run ([`RunOptions::profile`](crate::RunOptions)): what
//! the timing model did, in time bins, per decoded instruction and per threadgroup, turned
//! into a [`Profile`] at the end.
//!
//! - **Bins** start 16 cycles wide; whenever a time would need more than [`MAX_BINS`] of
//!   them, neighbouring pairs merge and the width doubles, so a run ends with between
//!   `MAX_BINS / 2` and `MAX_BINS` bins (fewer for runs under `16 * MAX_BINS / 2` cycles).
//!   Quantities that last over time (residency, stalls) are added as intervals in
//!   difference form ([`Integral`]): O(1) per interval however many bins it spans.
//! - **Stalls** are charged lazily: when a SIMD-group issues at `t`, the cycles since it
//!   last issued (or since its threadgroup was admitted) go, up to the latest of the
//!   constraints its instruction waited for (barrier release, operands from memory or from
//!   an ALU, the branch or launch floor), to that constraint's reason; the cycles after it
//!   was ready go to [`StallReason::Pipeline`] while its pipeline was busy (from a short
//!   history of the pipeline's busy intervals) and to [`StallReason::NotSelected`] for the
//!   rest. After its last instruction, the cycles until its memory operations complete are
//!   [`StallReason::Drain`]. A SIMD-group is resident from its threadgroup's admission
//!   until its last instruction issued and its memory drained; every resident cycle is
//!   one issue or one stall cycle.
//!
//! Nothing here is touched when profiling is off (the model holds `None`).

use std::collections::BTreeMap;

use metalsim_isa::{Function, OpClass};
use metalsim_traces::{
    Bin, Counters, InstProfile, LineProfile, MemoryTraffic, Profile, StallReason, ThreadgroupSpan,
};

use super::memsys::MemorySystem;
use super::table::MAX_PIPES;
use crate::program::{EXIT, Kind, Program};
use crate::simt::Joined;

/// log2 of the first bin width (16 cycles).
const FIRST_SHIFT: u32 = 4;
/// The most bins a run keeps.
pub(crate) const MAX_BINS: usize = 4096;
/// Instruction classes.
const CLASSES: usize = OpClass::ALL.len();
/// Stall reasons.
const REASONS: usize = StallReason::ALL.len();
/// Channel of [`Bins::time`] counting resident SIMD-groups.
const RESIDENT_SG: usize = REASONS;
/// Channel of [`Bins::time`] counting resident threadgroups.
const RESIDENT_TG: usize = REASONS + 1;
/// Busy intervals remembered per pipeline.
const HISTORY: usize = 16;

/// Counts that hold over intervals of time (how many SIMD-groups are resident, stalled
/// for a reason...), integrated per bin: `channels` counts per bin, in difference form.
///
/// The area of bin `k`, channel `c`, is `P * width + corr` where `P` is the sum of `diff`
/// over bins `0..=k` (channel `c`): an interval `[a, b)` adds one to the count from `a`'s
/// bin on, as if it started at that bin's start (corrected by `a`'s offset in it), and
/// removes it likewise at `b`.
#[derive(Clone, Debug)]
struct Integral {
    channels: usize,
    diff: Vec<i64>,
    corr: Vec<i64>,
}

impl Integral {
    fn new(channels: usize) -> Integral {
        Integral {
            channels,
            diff: Vec::new(),
            corr: Vec::new(),
        }
    }

    fn resize(&mut self, bins: usize) {
        self.diff.resize(bins * self.channels, 0);
        self.corr.resize(bins * self.channels, 0);
    }

    /// Adds `weight` to channel `ch` over `[a, b)`; both bins must exist.
    #[inline]
    fn add(&mut self, ch: usize, a: u64, b: u64, weight: i64, shift: u32) {
        if b <= a {
            return;
        }
        let mask = (1u64 << shift) - 1;
        let (ka, kb) = ((a >> shift) as usize, (b >> shift) as usize);
        let (ia, ib) = (ka * self.channels + ch, kb * self.channels + ch);
        if ka == kb {
            // Inside one bin the two count changes cancel out.
            self.corr[ia] += weight * (b - a) as i64;
            return;
        }
        self.diff[ia] += weight;
        self.corr[ia] -= weight * (a & mask) as i64;
        self.diff[ib] -= weight;
        self.corr[ib] += weight * (b & mask) as i64;
    }

    /// Merges bins pairwise (`bins` before, each `width` cycles wide).
    fn halve(&mut self, bins: usize, width: u64) {
        let ch = self.channels;
        let merged = bins.div_ceil(2);
        for k in 0..merged {
            for c in 0..ch {
                let (lo, hi) = ((2 * k) * ch + c, (2 * k + 1) * ch + c);
                let (d_hi, c_hi) = if 2 * k + 1 < bins {
                    (self.diff[hi], self.corr[hi])
                } else {
                    (0, 0)
                };
                self.diff[k * ch + c] = self.diff[lo] + d_hi;
                self.corr[k * ch + c] = self.corr[lo] + c_hi - d_hi * width as i64;
            }
        }
        self.resize(merged);
    }

    /// The area of every bin and channel, `[bin * channels + channel]`.
    fn areas(&self, bins: usize, width: u64) -> Vec<i64> {
        let ch = self.channels;
        let mut running = vec![0i64; ch];
        let mut out = vec![0i64; bins * ch];
        for k in 0..bins.min(self.diff.len() / ch.max(1)) {
            for c in 0..ch {
                running[c] += self.diff[k * ch + c];
                out[k * ch + c] = running[c] * width as i64 + self.corr[k * ch + c];
            }
        }
        out
    }
}

/// The binned counters.
#[derive(Clone, Debug)]
struct Bins {
    /// log2 of the bin width.
    shift: u32,
    /// Bins in use.
    len: usize,
    cores: usize,
    issued: Vec<[u64; CLASSES]>,
    active_lanes: Vec<u64>,
    memory: Vec<MemoryTraffic>,
    /// `[bin * cores + core]`.
    core_issued: Vec<u64>,
    /// Stall reasons, resident SIMD-groups, resident threadgroups.
    time: Integral,
    /// Resident SIMD-groups per core.
    core_resident: Integral,
}

impl Bins {
    fn new(cores: usize) -> Bins {
        Bins {
            shift: FIRST_SHIFT,
            len: 0,
            cores,
            issued: Vec::new(),
            active_lanes: Vec::new(),
            memory: Vec::new(),
            core_issued: Vec::new(),
            time: Integral::new(REASONS + 2),
            core_resident: Integral::new(cores),
        }
    }

    fn width(&self) -> u64 {
        1 << self.shift
    }

    /// The bin of cycle `t`, coarsening and growing the bins as needed.
    #[inline]
    fn at(&mut self, t: u64) -> usize {
        let k = (t >> self.shift) as usize;
        if k < self.len { k } else { self.reach(t) }
    }

    #[cold]
    fn reach(&mut self, t: u64) -> usize {
        while (t >> self.shift) as usize >= MAX_BINS {
            self.coarsen();
        }
        let k = (t >> self.shift) as usize;
        if k >= self.len {
            let n = k + 1;
            self.issued.resize(n, [0; CLASSES]);
            self.active_lanes.resize(n, 0);
            self.memory.resize(n, MemoryTraffic::default());
            self.core_issued.resize(n * self.cores, 0);
            self.time.resize(n);
            self.core_resident.resize(n);
            self.len = n;
        }
        k
    }

    /// Merges neighbouring bins and doubles the width.
    fn coarsen(&mut self) {
        let (n, width) = (self.len, self.width());
        let merged = n.div_ceil(2);
        for k in 0..merged {
            let hi = 2 * k + 1;
            let mut issued = self.issued[2 * k];
            let mut lanes = self.active_lanes[2 * k];
            let mut memory = self.memory[2 * k];
            if hi < n {
                for (a, b) in issued.iter_mut().zip(&self.issued[hi]) {
                    *a += b;
                }
                lanes += self.active_lanes[hi];
                memory.add(&self.memory[hi]);
            }
            self.issued[k] = issued;
            self.active_lanes[k] = lanes;
            self.memory[k] = memory;
            for c in 0..self.cores {
                let high = if hi < n {
                    self.core_issued[hi * self.cores + c]
                } else {
                    0
                };
                self.core_issued[k * self.cores + c] =
                    self.core_issued[2 * k * self.cores + c] + high;
            }
        }
        self.issued.truncate(merged);
        self.active_lanes.truncate(merged);
        self.memory.truncate(merged);
        self.core_issued.truncate(merged * self.cores);
        self.time.halve(n, width);
        self.core_resident.halve(n, width);
        self.len = merged;
        self.shift += 1;
    }

    /// Adds `weight` to channel `ch` of [`Bins::time`] over `[a, b)`.
    fn interval(&mut self, ch: usize, a: u64, b: u64, weight: i64) {
        if b > a {
            self.at(b);
            self.time.add(ch, a, b, weight, self.shift);
        }
    }
}

/// What one decoded instruction cost.
#[derive(Clone, Copy, Debug, Default)]
struct InstCounters {
    executions: u64,
    active_lanes: u64,
    issue_cycles: u64,
    stalls: [u64; REASONS],
    bytes: u64,
    transactions: u64,
    divergent: u64,
}

/// The last intervals each pipeline of one scheduler refused instructions: the cycles
/// after an issue while its pipeline stays busy (in the issue cycle itself, a SIMD-group
/// that was not picked lost to the other, whichever pipeline it needed).
#[derive(Clone, Debug)]
struct PipeHistory {
    /// `[pipe][i]`: `(start, end)`, a ring.
    spans: [[(u64, u64); HISTORY]; MAX_PIPES],
    /// Next slot of each ring.
    head: [u8; MAX_PIPES],
}

impl PipeHistory {
    fn new() -> PipeHistory {
        PipeHistory {
            spans: [[(0, 0); HISTORY]; MAX_PIPES],
            head: [0; MAX_PIPES],
        }
    }

    fn push(&mut self, pipe: usize, start: u64, end: u64) {
        if end <= start {
            return;
        }
        let h = self.head[pipe] as usize;
        self.spans[pipe][h] = (start, end);
        self.head[pipe] = ((h + 1) % HISTORY) as u8;
    }

    /// Cycles of `[a, b)` the pipeline was busy, as far as the history reaches back.
    fn busy(&self, pipe: usize, a: u64, b: u64) -> u64 {
        let h = self.head[pipe] as usize;
        let mut busy = 0;
        for i in 1..=HISTORY {
            let (s, e) = self.spans[pipe][(h + HISTORY - i) % HISTORY];
            if e <= a {
                break;
            }
            busy += e.min(b).saturating_sub(s.max(a));
        }
        busy.min(b - a)
    }
}

/// What a SIMD-group's next instruction waits for, and what it has been charged so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct WarpProfile {
    /// The first cycle not yet charged (after its last issue, or its admission).
    pub since: u64,
    /// When its threadgroup was admitted.
    pub admitted: u64,
    /// The branch (or launch) floor of its next instruction.
    pub floor: u64,
    /// When the next instruction's operands are ready.
    pub operands: u64,
    /// Whether the operand ready last comes from memory.
    pub operands_memory: bool,
    /// When the barrier it waits at released it (0: none).
    pub barrier: u64,
    /// The pc it issued last.
    pub last_pc: u32,
    /// Whether each register's value comes from memory, by scoreboard index (see
    /// [`Operands`](super::core::Operands)).
    pub memory: Vec<bool>,
}

impl WarpProfile {
    /// Ready for a SIMD-group admitted at `now` that can first issue at `ready`.
    pub fn start(&mut self, now: u64, ready: u64, slots: [u32; 2]) {
        self.since = now;
        self.admitted = now;
        self.floor = ready;
        self.operands = 0;
        self.operands_memory = false;
        self.barrier = 0;
        self.last_pc = 0;
        self.memory.clear();
        self.memory.resize((slots[0] + slots[1]) as usize, false);
    }
}

/// One memory instruction's traffic, as the model saw it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MemoryEvent {
    /// Device and constant bytes the active lanes read.
    pub read: u64,
    /// Device bytes they wrote.
    pub written: u64,
    /// Lines (device), addresses (constant) or wavefronts (threadgroup, thread).
    pub transactions: u64,
    /// A threadgroup-memory access.
    pub threadgroup: bool,
    /// Its wavefronts beyond one, for threadgroup memory.
    pub replays: u64,
    /// An atomic.
    pub atomic: bool,
}

/// The counters of a profiled run.
pub(crate) struct Profiler {
    bins: Bins,
    insts: Vec<InstCounters>,
    spans: Vec<ThreadgroupSpan>,
    dropped: u64,
    /// The memory system's traffic already in the bins.
    seen: MemoryTraffic,
    /// The cycles `[start, end)` of the bin whose memory traffic the memory system is
    /// counting now (the difference from `seen` goes to it when time leaves it).
    pending: (u64, u64),
    /// `[core * schedulers + scheduler]`.
    history: Vec<PipeHistory>,
    schedulers: usize,
}

/// `a - b`, level by level.
fn traffic_since(a: &MemoryTraffic, b: &MemoryTraffic) -> MemoryTraffic {
    let level = |x: &metalsim_traces::LevelTraffic, y: &metalsim_traces::LevelTraffic| {
        metalsim_traces::LevelTraffic {
            read_bytes: x.read_bytes - y.read_bytes,
            write_bytes: x.write_bytes - y.write_bytes,
            hits: x.hits - y.hits,
            misses: x.misses - y.misses,
        }
    };
    MemoryTraffic {
        requested: level(&a.requested, &b.requested),
        l1: level(&a.l1, &b.l1),
        l2: level(&a.l2, &b.l2),
        slc: level(&a.slc, &b.slc),
        dram: level(&a.dram, &b.dram),
        threadgroup_accesses: a.threadgroup_accesses - b.threadgroup_accesses,
        bank_conflict_replays: a.bank_conflict_replays - b.bank_conflict_replays,
        atomics: a.atomics - b.atomics,
    }
}

impl Profiler {
    /// Empty counters for `program` on `cores` cores of `schedulers` schedulers.
    pub fn new(program: &Program, cores: usize, schedulers: usize) -> Profiler {
        Profiler {
            bins: Bins::new(cores),
            insts: vec![InstCounters::default(); program.insts.len()],
            spans: Vec::new(),
            dropped: 0,
            seen: MemoryTraffic::default(),
            pending: (0, 0),
            history: vec![PipeHistory::new(); cores * schedulers],
            schedulers,
        }
    }

    /// A threadgroup at `position` was admitted to `core` at `now`: the index of its span
    /// (`usize::MAX` past the span limit).
    pub fn admit(&mut self, position: [u32; 3], core: usize, now: u64) -> usize {
        if self.spans.len() < Profile::MAX_THREADGROUP_SPANS {
            self.spans.push(ThreadgroupSpan {
                position,
                core: core as u32,
                start: now,
                end: now,
            });
            self.spans.len() - 1
        } else {
            self.dropped += 1;
            usize::MAX
        }
    }

    /// A threadgroup admitted at `start` is resident until `end`.
    pub fn retire(&mut self, span: usize, start: u64, end: u64) {
        self.bins.interval(RESIDENT_TG, start, end, 1);
        if let Some(s) = self.spans.get_mut(span) {
            s.end = end;
        }
    }

    /// Charges `[a, b)` to `reason` and to instruction `pc`.
    #[inline]
    fn stall(&mut self, pc: usize, reason: StallReason, a: u64, b: u64) {
        if b > a {
            self.insts[pc].stalls[reason.index()] += b - a;
            self.bins.interval(reason.index(), a, b, 1);
        }
    }

    /// Charges the cycles from `w.since` to `t` (when it issues instruction `pc` of
    /// pipeline `pipe`, on scheduler `sched` of core `core`) to why it waited.
    #[inline]
    fn wait(&mut self, core: usize, sched: usize, w: &WarpProfile, pc: usize, pipe: u8, t: u64) {
        // A SIMD-group issuing right after its last issue waited for nothing.
        if t > w.since {
            self.charge_wait(core, sched, w, pc, pipe, t);
        }
    }

    /// [`wait`](Self::wait) for a SIMD-group that did wait (`t > w.since`).
    #[inline(never)]
    fn charge_wait(
        &mut self,
        core: usize,
        sched: usize,
        w: &WarpProfile,
        pc: usize,
        pipe: u8,
        t: u64,
    ) {
        let s = w.since;
        let operands = if w.operands_memory {
            StallReason::Memory
        } else {
            StallReason::Alu
        };
        let mut latest = (w.floor, StallReason::Control);
        for c in [(w.operands, operands), (w.barrier, StallReason::Barrier)] {
            if c.0 >= latest.0 {
                latest = c;
            }
        }
        let ready = latest.0.clamp(s, t);
        self.stall(pc, latest.1, s, ready);
        if ready < t {
            let h = &self.history[core * self.schedulers + sched];
            let busy = h.busy(pipe as usize, ready, t);
            self.stall(pc, StallReason::Pipeline, ready, ready + busy);
            self.stall(pc, StallReason::NotSelected, ready + busy, t);
        }
    }

    /// SIMD-group `w` on scheduler `sched` of core `core` issued instruction `pc` (class
    /// `class`, `lanes` active, its pipeline `pipe` busy `busy` cycles) at `now`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn issue(
        &mut self,
        core: usize,
        sched: usize,
        w: &mut WarpProfile,
        pc: u32,
        class: OpClass,
        lanes: u32,
        pipe: u8,
        busy: u64,
        now: u64,
    ) {
        let pc = pc as usize;
        self.wait(core, sched, w, pc, pipe, now);
        w.since = now + 1;
        w.last_pc = pc as u32;
        w.barrier = 0;
        self.count_issues(core, pc, class, 1, lanes, busy, now);
        self.history[core * self.schedulers + sched].push(pipe as usize, now + 1, now + busy);
    }

    /// Counts `n` issues of instruction `pc` (class `class`, `lanes` active lanes in all,
    /// `busy` pipeline cycles each) by core `core` at `now`, in its bin and its record.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn count_issues(
        &mut self,
        core: usize,
        pc: usize,
        class: OpClass,
        n: u64,
        lanes: u32,
        busy: u64,
        now: u64,
    ) {
        let k = self.bins.at(now);
        self.bins.issued[k][class as usize] += n;
        self.bins.active_lanes[k] += lanes as u64;
        self.bins.core_issued[k * self.bins.cores + core] += n;
        let i = &mut self.insts[pc];
        i.executions += n;
        i.active_lanes += lanes as u64;
        i.issue_cycles += busy * n;
    }

    /// Branch `pc`, issued at `now` by SIMD-group `w` on scheduler `sched` of core `core`,
    /// brought the groups of lanes of `joined` to a reconvergence point, and the model
    /// runs an instruction for each: issued in the cycles right after the branch, on its
    /// pipeline (`pipe`, busy `busy` cycles each), and counted with the branch.
    #[allow(clippy::too_many_arguments)]
    pub fn reconverged(
        &mut self,
        core: usize,
        sched: usize,
        w: &mut WarpProfile,
        pc: u32,
        joined: Joined,
        pipe: u8,
        busy: u64,
        now: u64,
    ) {
        let groups = joined.groups as u64;
        w.since = now + 1 + groups;
        self.count_issues(
            core,
            pc as usize,
            OpClass::Control,
            groups,
            joined.lanes,
            busy,
            now,
        );
        let end = now + busy * (1 + groups);
        self.history[core * self.schedulers + sched].push(pipe as usize, now + busy, end);
    }

    /// Instruction `pc`, folded into the addressing of the memory instructions that use
    /// it, ran at `now` with `lanes` active lanes, taking no issue slot.
    pub fn folded(&mut self, w: &mut WarpProfile, pc: u32, lanes: u32, now: u64) {
        w.last_pc = pc;
        let k = self.bins.at(now);
        self.bins.active_lanes[k] += lanes as u64;
        let i = &mut self.insts[pc as usize];
        i.executions += 1;
        i.active_lanes += lanes as u64;
    }

    /// Instruction `pc`, a branch, sent its lanes both ways.
    pub fn diverged(&mut self, pc: u32) {
        self.insts[pc as usize].divergent += 1;
    }

    /// A memory instruction is about to issue at `now` (times only grow): when `now` is
    /// past the bin the memory system's counters are being gathered for, that bin gets
    /// their growth since, so the level counters are read once per bin, not per access.
    #[inline]
    pub fn before_memory(&mut self, now: u64, mem: &MemorySystem) {
        if now >= self.pending.1 {
            self.settle(&mem.traffic());
            let width = self.bins.width();
            let start = now & !(width - 1);
            self.pending = (start, start + width);
        }
    }

    /// Puts the growth of the memory system's level counters (`levels`) since the last
    /// time into the pending bin.
    pub fn settle(&mut self, levels: &MemoryTraffic) {
        let mut delta = traffic_since(levels, &self.seen);
        self.seen = *levels;
        delta.requested = Default::default();
        delta.threadgroup_accesses = 0;
        delta.bank_conflict_replays = 0;
        delta.atomics = 0;
        let k = self.bins.at(self.pending.0);
        self.bins.memory[k].add(&delta);
    }

    /// Memory instruction `pc` issued at `now`.
    pub fn memory(&mut self, pc: u32, now: u64, e: MemoryEvent) {
        let i = &mut self.insts[pc as usize];
        i.bytes += e.read + e.written;
        i.transactions += e.transactions;
        let k = self.bins.at(now);
        let m = &mut self.bins.memory[k];
        m.requested.read_bytes += e.read;
        m.requested.write_bytes += e.written;
        m.threadgroup_accesses += e.threadgroup as u64;
        m.bank_conflict_replays += e.replays;
        m.atomics += e.atomic as u64;
    }

    /// SIMD-group `w` of core `core` finished with instruction `pc` and its memory
    /// drained at `end`.
    pub fn finish_warp(&mut self, core: usize, w: &WarpProfile, pc: u32, end: u64) {
        self.stall(pc as usize, StallReason::Drain, w.since, end);
        self.bins.interval(RESIDENT_SG, w.admitted, end, 1);
        if end > w.admitted {
            self.bins.at(end);
            let shift = self.bins.shift;
            self.bins.core_resident.add(core, w.admitted, end, 1, shift);
        }
    }

    /// A SIMD-group still resident when a fault stopped the run at `end`, waiting to
    /// issue `pc`: its wait so far, and its residency.
    pub fn cut_warp(&mut self, core: usize, sched: usize, w: &WarpProfile, pc: u32, end: u64) {
        let pipe = 0;
        self.wait(core, sched, w, pc as usize, pipe, end);
        let mut done = w.clone();
        done.since = end;
        self.finish_warp(core, &done, pc, end);
    }

    /// The profile of a run of `program` (decoded from `f`) that ended at `finish`, with
    /// the memory system's final traffic `levels`: what grew since the last
    /// [`settle`](Self::settle) (the write-backs at the end) goes to the last bin.
    pub fn into_profile(
        mut self,
        program: &Program,
        f: &Function,
        finish: u64,
        levels: &MemoryTraffic,
        schedulers: u32,
    ) -> Profile {
        let end = finish.max(1);
        // Write-backs at the end belong to the last bin.
        self.pending = (end - 1, end);
        self.settle(levels);
        let bins = &self.bins;
        let width = bins.width();
        let n = (end.div_ceil(width) as usize).min(bins.len);
        let time = bins.time.areas(n, width);
        let per_core = bins.core_resident.areas(n, width);
        let cores = bins.cores;
        let ch = REASONS + 2;
        let mut out_bins = Vec::with_capacity(n);
        for k in 0..n {
            let start = k as u64 * width;
            let len = width.min(end - start).max(1) as f64;
            let t = &time[k * ch..(k + 1) * ch];
            out_bins.push(Bin {
                start,
                resident_simdgroups: t[RESIDENT_SG] as f64 / len,
                resident_threadgroups: t[RESIDENT_TG] as f64 / len,
                issued: bins.issued[k].to_vec(),
                active_lanes: bins.active_lanes[k],
                stalls: t[..REASONS].iter().map(|&x| x as u64).collect(),
                memory: bins.memory[k],
                core_issued: bins.core_issued[k * cores..(k + 1) * cores].to_vec(),
                core_resident_simdgroups: per_core[k * cores..(k + 1) * cores]
                    .iter()
                    .map(|&x| x as f64 / len)
                    .collect(),
            });
        }
        let mut memory = MemoryTraffic::default();
        let mut stalls = vec![0u64; REASONS];
        let mut issued = vec![0u64; CLASSES];
        for b in &out_bins {
            memory.add(&b.memory);
            for (s, x) in stalls.iter_mut().zip(&b.stalls) {
                *s += x;
            }
            for (s, x) in issued.iter_mut().zip(&b.issued) {
                *s += x;
            }
        }
        let mut classes = vec![String::new(); CLASSES];
        for k in OpClass::ALL {
            classes[k as usize] = k.name().to_string();
        }
        let mut reconverges = vec![false; program.insts.len()];
        for ins in &program.insts {
            if ins.kind == Kind::BrIf
                && ins.dst != EXIT
                && let Some(r) = reconverges.get_mut(ins.dst as usize)
            {
                *r = true;
            }
        }
        let instructions: Vec<InstProfile> = self
            .insts
            .iter()
            .enumerate()
            .map(|(pc, c)| {
                let origin = program.origins[pc];
                let loc = program.locs[pc];
                InstProfile {
                    pc: pc as u32,
                    block: origin.block.to_string(),
                    text: match origin.inst {
                        Some(i) => f.inst_text(i),
                        None => f.terminator_text(origin.block),
                    },
                    class: program.insts[pc].class.name().to_string(),
                    file: loc.file,
                    line: loc.line,
                    col: loc.col,
                    reconvergence: reconverges[pc],
                    executions: c.executions,
                    active_lanes: c.active_lanes,
                    issue_cycles: c.issue_cycles,
                    stalls: c.stalls.to_vec(),
                    bytes: c.bytes,
                    transactions: c.transactions,
                    divergent: c.divergent,
                }
            })
            .collect();
        let mut lines: BTreeMap<(u32, u32), LineProfile> = BTreeMap::new();
        for i in instructions.iter().filter(|i| i.line != 0) {
            let l = lines
                .entry((i.file, i.line))
                .or_insert_with(|| LineProfile {
                    file: i.file,
                    line: i.line,
                    stalls: vec![0; REASONS],
                    ..LineProfile::default()
                });
            l.executions += i.executions;
            l.active_lanes += i.active_lanes;
            l.issue_cycles += i.issue_cycles;
            for (s, x) in l.stalls.iter_mut().zip(&i.stalls) {
                *s += x;
            }
            l.bytes += i.bytes;
            l.divergent += i.divergent;
        }
        Profile {
            classes,
            schedulers_per_core: schedulers,
            counters: Counters {
                bin_cycles: width,
                cores: cores as u32,
                bins: out_bins,
            },
            instructions,
            lines: lines.into_values().collect(),
            memory,
            stalls,
            issued,
            threadgroup_spans: self.spans,
            threadgroup_spans_dropped: self.dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds `intervals` (channel 0) to fresh bins, forcing a width of `1 << shift` by
    /// touching `reach` first; the per-bin areas, each checked against a cycle-by-cycle
    /// count.
    fn check(intervals: &[(u64, u64)], reach: u64) -> (u64, Vec<i64>) {
        let mut b = Bins::new(1);
        b.at(reach);
        for &(s, e) in intervals {
            b.interval(0, s, e, 1);
        }
        let width = b.width();
        let areas: Vec<i64> = b
            .time
            .areas(b.len, width)
            .chunks(REASONS + 2)
            .map(|c| c[0])
            .collect();
        for (k, &area) in areas.iter().enumerate() {
            let (lo, hi) = (k as u64 * width, (k as u64 + 1) * width);
            let expect: u64 = intervals
                .iter()
                .map(|&(s, e)| e.min(hi).saturating_sub(s.max(lo)))
                .sum();
            assert_eq!(area, expect as i64, "bin {k} of width {width}");
        }
        (width, areas)
    }

    #[test]
    fn intervals_land_in_the_bins_they_cover() {
        let (width, areas) = check(&[(3, 5), (10, 40), (15, 16)], 0);
        assert_eq!(width, 16);
        assert_eq!(areas, vec![2 + 6 + 1, 16, 8]);
    }

    #[test]
    fn coarsening_keeps_every_area() {
        let intervals = [(3, 5), (10, 40), (15, 16), (1000, 60_000), (59_999, 60_001)];
        let (w1, _) = check(&intervals, 16 * 4096 - 1);
        assert_eq!(w1, 16);
        // Past 4096 bins of 16: bins of 32, then 64...
        let (w2, a2) = check(&intervals, 16 * 4096);
        assert_eq!(w2, 32);
        assert!(a2.len() <= MAX_BINS);
        // 2^30 cycles in fewer than 4096 bins: bins of 2^19.
        let (w3, _) = check(&intervals, 1 << 30);
        assert_eq!(w3, 1 << 19);
        // Intervals added before and after coarsening agree.
        let mut b = Bins::new(1);
        b.interval(0, 1000, 2000, 1);
        b.at(1 << 24);
        b.interval(0, 5000, 1 << 24, 2);
        let w = b.width();
        let total: i64 = b.time.areas(b.len, w).iter().sum();
        assert_eq!(total, 1000 + 2 * ((1 << 24) - 5000));
    }

    #[test]
    fn point_counters_merge_on_coarsening() {
        let mut b = Bins::new(2);
        for t in (0..200_000u64).step_by(7) {
            let k = b.at(t);
            b.issued[k][0] += 1;
            b.core_issued[k * 2 + (t % 2) as usize] += 1;
        }
        assert!(b.len <= MAX_BINS && b.len > MAX_BINS / 4, "{}", b.len);
        let total: u64 = b.issued.iter().map(|i| i[0]).sum();
        assert_eq!(total, 200_000u64.div_ceil(7));
        let per_core: u64 = b.core_issued.iter().sum();
        assert_eq!(per_core, total);
        // Each bin holds the points of its own cycles.
        let w = b.width();
        assert_eq!(
            b.issued[1][0],
            (w..2 * w).filter(|t| t % 7 == 0).count() as u64
        );
    }

    #[test]
    fn the_pipe_history_counts_busy_cycles_in_a_window() {
        let mut h = PipeHistory::new();
        h.push(2, 10, 14);
        h.push(2, 14, 18);
        h.push(2, 30, 31);
        assert_eq!(h.busy(2, 12, 32), 2 + 4 + 1);
        assert_eq!(h.busy(2, 18, 30), 0);
        assert_eq!(h.busy(1, 0, 100), 0);
    }
}
