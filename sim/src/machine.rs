//! The functional machine: the memory of a dispatch, its resident threadgroups with their
//! SIMD-groups, and the bookkeeping of barriers, finishing and counters. A scheduler (the
//! timing model, or the untimed round robin) decides which SIMD-group runs next and calls
//! [`Machine::step_on`].

use metalsim_isa::{AtomicOp, Function, Module, OpClass, Space};
use metalsim_traces::SimdgroupRecording;

use crate::dispatch::{Geometry, LANES, Shape};
use crate::exec::{self, Access, Context, Effect, Executed};
use crate::fault::{FaultKind, Finding, KernelFault, Trap};
use crate::memory::{AccessKind, Memory, Regions, Spaces, Storage, WriteLog};
use crate::program::{Kind, Program};
use crate::progress::Progress;
use crate::record::{self, Recorder, RegisterMap};
use crate::regs::Registers;
use crate::sanitize::{DeviceStore, Pending, Sanitizer, Seen, Shadow, TgShadow, cells_for};
use crate::simt::Reconvergence;

/// Whether a SIMD-group can run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Status {
    /// It has an instruction to run.
    Ready,
    /// It waits at a threadgroup barrier.
    AtBarrier,
    /// All its lanes have finished.
    Done,
}

/// One SIMD-group's state.
#[derive(Clone, Debug)]
pub(crate) struct SimdGroup {
    /// Its registers.
    pub regs: Registers,
    /// Its reconvergence stack.
    pub simt: Reconvergence,
    /// Thread memory, one frame per lane.
    pub frames: Vec<u8>,
    /// `simdgroup_index_in_threadgroup`.
    pub index: u32,
    /// Whether it can run.
    pub status: Status,
    /// The barrier it waits at (valid while `status` is [`Status::AtBarrier`]).
    pub barrier_pc: u32,
    /// It stopped before a device atomic that waits for the end of the round (parallel
    /// untimed runs; see [`Machine::run_until_blocked_deferring`]).
    pub at_atomic: bool,
    /// It stopped because its threadgroup's stretch logged [`STRETCH_WRITES`] global
    /// writes; it goes on in the next round.
    pub yielded: bool,
}

/// The most global writes one threadgroup's stretch of a parallel round logs before its
/// SIMD-groups yield until the next round (which bounds the logs' memory; where the
/// stretch stops depends only on the threadgroup itself).
pub(crate) const STRETCH_WRITES: usize = 1 << 16;

/// One resident threadgroup.
#[derive(Clone, Debug)]
pub(crate) struct Threadgroup {
    /// Its place and size in the grid.
    pub shape: Shape,
    /// Its threadgroup memory.
    pub block: Vec<u8>,
    /// Its SIMD-groups.
    pub simdgroups: Vec<SimdGroup>,
    /// SIMD-groups not finished.
    pub live: u32,
    /// SIMD-groups waiting at a barrier.
    pub waiting: u32,
    /// The sanitizer's shadow of its threadgroup memory.
    pub shadow: Shadow,
    /// Its instance stamp (see `sanitize`).
    pub instance: u32,
    /// The stamp of its current interval between barriers.
    pub interval: u32,
    /// SIMD-group instructions it has run (for sampled timing's classes).
    pub instructions: u64,
}

impl Threadgroup {
    /// Releases the barrier once every live SIMD-group waits at it, opening a new interval
    /// (stamped `next_stamp`). A release the whole threadgroup did not reach together (a
    /// SIMD-group returned, or waits at another barrier) is a divergent barrier.
    fn try_release(&mut self, sanitizer: &mut Sanitizer, next_stamp: &mut u32) -> bool {
        if self.waiting == 0 || self.waiting < self.live {
            return false;
        }
        let waiting = || {
            self.simdgroups
                .iter()
                .filter(|g| g.status == Status::AtBarrier)
        };
        if let Some(first) = waiting().next() {
            let pc = first.barrier_pc;
            let elsewhere = waiting().find(|g| g.barrier_pc != pc);
            let gone = self.simdgroups.iter().find(|g| g.status == Status::Done);
            if let Some(missing) = elsewhere.or(gone)
                && sanitizer.first(FaultKind::DivergentBarrier, pc)
            {
                let (how, other_pc) = if missing.status == Status::Done {
                    ("has returned".to_string(), None)
                } else {
                    (
                        "waits at another barrier".to_string(),
                        Some(missing.barrier_pc),
                    )
                };
                sanitizer.report(Pending {
                    trap: Trap {
                        kind: FaultKind::DivergentBarrier,
                        message: format!(
                            "threadgroup_barrier reached by only part of the threadgroup: SIMD-group {} {how}; every thread of the threadgroup must reach the same barrier",
                            missing.index
                        ),
                        lane: first.simt_first_lane(&self.shape),
                        address: None,
                        buffer: None,
                        offset: None,
                    },
                    pc,
                    simd: first.index,
                    other_pc,
                });
            }
        }
        for sg in &mut self.simdgroups {
            if sg.status == Status::AtBarrier {
                sg.status = Status::Ready;
            }
        }
        self.waiting = 0;
        self.interval = *next_stamp;
        *next_stamp = next_stamp.wrapping_add(1);
        true
    }
}

impl SimdGroup {
    /// Its first lane holding a thread.
    fn simt_first_lane(&self, shape: &Shape) -> u32 {
        shape.lanes(self.index).trailing_zeros().min(31)
    }
}

/// Instruction and memory counters of the functional engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    /// SIMD-group instructions.
    pub simd_instructions: u64,
    /// Active lanes summed over them.
    pub thread_instructions: u64,
    /// SIMD-group instructions per class, in `OpClass::ALL` order.
    pub by_class: [u64; OpClass::ALL.len()],
    /// Threadgroups started.
    pub threadgroups: u64,
    /// SIMD-groups started.
    pub simdgroups: u64,
    /// Device/constant bytes loaded.
    pub device_bytes_read: u64,
    /// Device bytes stored.
    pub device_bytes_written: u64,
}

/// A threadgroup's slot in the machine.
pub(crate) type GroupId = usize;

impl Counters {
    /// Adds another stretch's counts.
    pub fn add(&mut self, o: &Counters) {
        self.simd_instructions += o.simd_instructions;
        self.thread_instructions += o.thread_instructions;
        for (a, b) in self.by_class.iter_mut().zip(&o.by_class) {
            *a += b;
        }
        self.threadgroups += o.threadgroups;
        self.simdgroups += o.simdgroups;
        self.device_bytes_read += o.device_bytes_read;
        self.device_bytes_written += o.device_bytes_written;
    }
}

/// What one stretch of a parallel run (one threadgroup's share of a round, or one
/// deferred atomic) did, to be merged in a fixed order.
#[derive(Debug, Default)]
pub(crate) struct Stretch {
    /// Its counters.
    pub counters: Counters,
    /// The sanitizer's counts.
    pub seen: Vec<Seen>,
    /// Findings first seen in it, with their instructions.
    pub findings: Vec<(Finding, u32)>,
    /// Its global writes, in order.
    pub writes: WriteLog,
    /// Its plain device stores, for the sanitizer's race check.
    pub device_stores: Vec<DeviceStore>,
}

/// What [`Machine::step_on`] did: the record of the instruction it ran, and the pc the
/// SIMD-group goes on at (`None` once it has finished).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    /// The executed instruction.
    pub ex: Executed,
    /// The SIMD-group's next pc.
    pub next: Option<u32>,
}

/// Counts an executed instruction `ex` (with `a`, the access it made, if it reported one),
/// and the reconvergence instructions of the lanes it brought to a reconvergence point
/// where the program runs them ([`Program::join_instructions`]).
#[inline(always)]
fn count(c: &mut Counters, program: &Program, ex: &Executed, a: &Access) {
    c.simd_instructions += 1;
    c.thread_instructions += ex.active.count_ones() as u64;
    c.by_class[ex.class as usize] += 1;
    if let Effect::Branch { joined, .. } = ex.effect
        && program.join_instructions
    {
        // The instructions the groups run as they reach the reconvergence point.
        c.simd_instructions += joined.groups as u64;
        c.thread_instructions += joined.lanes as u64;
        c.by_class[OpClass::Control as usize] += joined.groups as u64;
    }
    if ex.effect == Effect::Memory && matches!(a.space, Space::Device | Space::Constant) {
        let bytes = a.total_bytes();
        match a.kind {
            AccessKind::Load => c.device_bytes_read += bytes,
            AccessKind::Store => c.device_bytes_written += bytes,
            AccessKind::Atomic => {
                // An atomic load only reads, an atomic store only writes.
                if let Kind::Atomic(op, ..) = program.insts[ex.pc as usize].kind {
                    if op != AtomicOp::Store {
                        c.device_bytes_read += bytes;
                    }
                    if op != AtomicOp::Load {
                        c.device_bytes_written += bytes;
                    }
                }
            }
        }
    }
}

/// A finished threadgroup, as [`Machine::log_retired`] logs it for sampled timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Retired {
    /// Its linear index in the grid.
    pub linear: u64,
    /// SIMD-group instructions it ran.
    pub instructions: u64,
    /// The cycle the scheduler last set with [`Machine::set_cycle`] (0 untimed).
    pub cycle: u64,
    /// SIMD-group instructions the whole machine had run by then.
    pub machine_instructions: u64,
}

/// The functional machine of one dispatch.
pub(crate) struct Machine<'a> {
    program: &'a Program,
    module: &'a Module,
    memory: Memory,
    geometry: Geometry,
    groups: Vec<Option<Threadgroup>>,
    free_slots: Vec<GroupId>,
    next: u64,
    access: Access,
    counters: Counters,
    budget: u64,
    spare: Vec<SimdGroup>,
    spare_blocks: Vec<Vec<u8>>,
    spare_shadows: Vec<Shadow>,
    sanitizer: Sanitizer,
    /// The next instance or interval stamp of the sanitizer.
    next_stamp: u32,
    /// Findings located so far, with their instruction.
    findings: Vec<(Finding, u32)>,
    /// Where finished threadgroups are counted for a watcher.
    progress: Option<&'a Progress>,
    /// The step-by-step record of one SIMD-group, when asked for.
    recorder: Option<Box<Recorder>>,
    /// Threadgroups from this linear index on are not started (see [`Machine::set_limit`]).
    limit: u64,
    /// The cycle the scheduler last set.
    cycle: u64,
    /// Finished threadgroups, when logged (see [`Machine::log_retired`]).
    retired: Option<Vec<Retired>>,
    /// The instruction count at which the budget runs out (`budget` unless a parallel
    /// run's stretch moved it; see [`Machine::begin_stretch`]).
    stop_at: u64,
    /// Per instruction: a device atomic, which a deferring run stops before.
    device_atomic: Vec<bool>,
    /// Some instruction is a device atomic (else a deferring run never looks).
    any_device_atomic: bool,
    /// Global writes are logged in `writes` (parallel untimed runs).
    logging: bool,
    /// The global writes of the current stretch, when logging.
    writes: WriteLog,
}

impl<'a> Machine<'a> {
    /// A machine ready to start the dispatch's first threadgroup.
    pub fn new(
        program: &'a Program,
        module: &'a Module,
        memory: Memory,
        geometry: Geometry,
        budget: u64,
    ) -> Self {
        Machine {
            program,
            module,
            memory,
            geometry,
            groups: Vec::new(),
            free_slots: Vec::new(),
            next: 0,
            access: Access::default(),
            counters: Counters::default(),
            budget,
            spare: Vec::new(),
            spare_blocks: Vec::new(),
            spare_shadows: Vec::new(),
            sanitizer: Sanitizer::default(),
            next_stamp: 1,
            findings: Vec::new(),
            progress: None,
            recorder: None,
            limit: u64::MAX,
            cycle: 0,
            retired: None,
            stop_at: budget,
            device_atomic: program
                .insts
                .iter()
                .map(|i| matches!(i.kind, Kind::Atomic(_, Space::Device | Space::Constant, _)))
                .collect(),
            any_device_atomic: program
                .insts
                .iter()
                .any(|i| matches!(i.kind, Kind::Atomic(_, Space::Device | Space::Constant, _))),
            logging: false,
            writes: WriteLog::default(),
        }
    }

    /// Starts no threadgroup from linear index `limit` on, until the limit is raised:
    /// a scheduler then runs the threadgroups before it as if the dispatch ended there
    /// (sampled timing runs the grid in stretches this way).
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// Threadgroups started so far (the linear index of the next one).
    pub fn started(&self) -> u64 {
        self.next
    }

    /// Threadgroups in the dispatch.
    pub fn threadgroup_count(&self) -> u64 {
        self.geometry.count()
    }

    /// Threadgroups per grid in each dimension.
    pub fn threadgroups_per_grid(&self) -> [u32; 3] {
        self.geometry.groups
    }

    /// Logs every threadgroup that finishes from now on (see [`Machine::take_retired`]).
    pub fn log_retired(&mut self) {
        self.retired.get_or_insert_with(Vec::new);
    }

    /// The threadgroups logged since the last call, in the order they finished.
    pub fn take_retired(&mut self) -> Vec<Retired> {
        self.retired
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Records SIMD-group `simdgroup` of the threadgroup at `threadgroup` step by step
    /// (`f` is the function the program was decoded from, for the registers' names).
    /// Whether that SIMD-group exists in the dispatch; when it does not, nothing is
    /// recorded.
    pub fn record(&mut self, f: &Function, threadgroup: [u32; 3], simdgroup: u32) -> bool {
        let groups = self.geometry.groups;
        if (0..3).any(|d| threadgroup[d] >= groups[d]) {
            return false;
        }
        let [x, y, z] = threadgroup.map(|c| c as u64);
        let linear = x + groups[0] as u64 * (y + groups[1] as u64 * z);
        if simdgroup >= self.geometry.shape(linear).simdgroups() {
            return false;
        }
        let map = RegisterMap::new(f, self.program);
        self.recorder = Some(Box::new(Recorder::new(threadgroup, simdgroup, map)));
        true
    }

    /// Tells the recorder (if any) the cycle the next step issues at.
    #[inline]
    pub fn set_cycle(&mut self, cycle: u64) {
        self.cycle = cycle;
        if let Some(r) = self.recorder.as_deref_mut() {
            r.set_cycle(cycle);
        }
    }

    /// The step-by-step record asked for with [`Machine::record`] (`None` when none was,
    /// or the SIMD-group does not exist).
    pub fn take_recording(&mut self) -> Option<SimdgroupRecording> {
        self.recorder.take().map(|r| r.into_recording())
    }

    /// Counts finished threadgroups in `progress` (its total set to the dispatch's).
    pub fn watch(&mut self, progress: &'a Progress) {
        progress.start(self.geometry.count());
        self.progress = Some(progress);
    }

    /// The program being run.
    pub fn program(&self) -> &'a Program {
        self.program
    }

    /// Bytes of threadgroup memory per threadgroup.
    pub fn threadgroup_bytes(&self) -> usize {
        self.memory.threadgroup_bytes
    }

    /// The shape of the next threadgroup to start, if any is left.
    pub fn peek_next(&self) -> Option<Shape> {
        (self.next < self.geometry.count().min(self.limit)).then(|| self.geometry.shape(self.next))
    }

    /// Starts the next threadgroup in dispatch order; `None` when all have started.
    pub fn start_next(&mut self) -> Option<GroupId> {
        let shape = self.peek_next()?;
        self.next += 1;
        Some(self.start_shape(shape))
    }

    /// Starts the threadgroup at `linear` in dispatch order (a parallel scheduler starts
    /// threadgroups out of order, each on the machine of its worker).
    pub fn start_at(&mut self, linear: u64) -> GroupId {
        self.start_shape(self.geometry.shape(linear))
    }

    fn start_shape(&mut self, shape: Shape) -> GroupId {
        let n = shape.simdgroups();
        let mut block = self.spare_blocks.pop().unwrap_or_default();
        block.clear();
        block.resize(self.memory.threadgroup_bytes, 0);
        let mut simdgroups = Vec::with_capacity(n as usize);
        for i in 0..n {
            let mut sg = self.spare.pop().unwrap_or_else(|| SimdGroup {
                regs: Registers::default(),
                simt: Reconvergence::default(),
                frames: Vec::new(),
                index: 0,
                status: Status::Ready,
                barrier_pc: 0,
                at_atomic: false,
                yielded: false,
            });
            sg.regs
                .reset(&self.program.template32, &self.program.template64);
            sg.simt.reset(shape.lanes(i));
            sg.frames.clear();
            sg.frames
                .resize(self.memory.frame_bytes * LANES as usize, 0);
            sg.index = i;
            sg.status = Status::Ready;
            sg.at_atomic = false;
            sg.yielded = false;
            simdgroups.push(sg);
        }
        self.counters.threadgroups += 1;
        self.counters.simdgroups += n as u64;
        let mut shadow = self.spare_shadows.pop().unwrap_or_default();
        shadow.start(cells_for(self.memory.threadgroup_bytes));
        let instance = self.next_stamp;
        self.next_stamp = self.next_stamp.wrapping_add(2);
        let tg = Threadgroup {
            shape,
            block,
            simdgroups,
            live: n,
            waiting: 0,
            shadow,
            instance,
            interval: instance + 1,
            instructions: 0,
        };
        match self.free_slots.pop() {
            Some(id) => {
                self.groups[id] = Some(tg);
                id
            }
            None => {
                self.groups.push(Some(tg));
                self.groups.len() - 1
            }
        }
    }

    /// A resident threadgroup.
    pub fn group(&self, id: GroupId) -> &Threadgroup {
        self.groups[id]
            .as_ref()
            .expect("scheduler asked for a threadgroup that is not resident")
    }

    /// The pc a SIMD-group runs next (`None` when it has finished).
    #[inline]
    pub fn next_pc(&self, id: GroupId, sg: usize) -> Option<u32> {
        self.group(id).simdgroups[sg].simt.top().map(|(pc, _)| pc)
    }

    /// Removes a finished threadgroup, recycling its storage.
    pub fn retire(&mut self, id: GroupId) {
        if let Some(tg) = self.groups[id].take() {
            if let Some(log) = &mut self.retired {
                log.push(Retired {
                    linear: tg.shape.linear,
                    instructions: tg.instructions,
                    cycle: self.cycle,
                    machine_instructions: self.counters.simd_instructions,
                });
            }
            self.spare.extend(tg.simdgroups);
            self.spare_blocks.push(tg.block);
            self.spare_shadows.push(tg.shadow);
            self.free_slots.push(id);
            if let Some(p) = self.progress {
                p.finished_one();
            }
        }
    }

    /// Another machine for the same dispatch with a copy of this one's memory, none of its
    /// threadgroups and zero counters: one per worker of a parallel run.
    pub fn fork(&self) -> Machine<'a> {
        let mut m = Machine::new(
            self.program,
            self.module,
            self.memory.clone(),
            self.geometry,
            self.budget,
        );
        m.progress = self.progress;
        if self.retired.is_some() {
            m.log_retired();
        }
        m
    }

    /// Copies the writable global storage (launch buffers that stores and atomics may
    /// change) of `from`, a machine of the same dispatch, into this one's.
    pub fn copy_writable_memory(&mut self, from: &Machine) {
        for r in &from.memory.regions.0 {
            if let (Storage::Global(i), true) = (r.storage, r.writable)
                && let (Some(dst), Some(src)) = (
                    self.memory.global.get_mut(i as usize),
                    from.memory.global.get(i as usize),
                )
            {
                dst.get_mut().copy_from_slice(src.get());
            }
        }
    }

    /// Adds threadgroups another worker's machine logged (see [`Machine::log_retired`]),
    /// keeping the log in dispatch order.
    pub fn extend_retired(&mut self, more: Vec<Retired>) {
        if let Some(log) = &mut self.retired {
            log.extend(more);
            log.sort_by_key(|r| r.linear);
        }
    }

    /// Takes the run's totals so far (counters, the sanitizer, findings with their
    /// instructions), leaving empty ones: a parallel stretch of the run merges into them
    /// and gives them back with [`Machine::adopt`].
    pub fn take_totals(&mut self) -> (Counters, Sanitizer, Vec<(Finding, u32)>) {
        (
            std::mem::take(&mut self.counters),
            std::mem::take(&mut self.sanitizer),
            std::mem::take(&mut self.findings),
        )
    }

    /// Leaves parallel mode (see [`Machine::parallel_mode`]): writes are no longer
    /// logged and the whole budget applies again.
    pub fn serial_mode(&mut self) {
        self.logging = false;
        self.writes.clear();
        self.stop_at = self.budget;
    }

    /// Readies the machine for a parallel run: global writes are logged (so a stretch can
    /// be undone here and replayed on the other workers' copies) and device stores reach
    /// the sanitizer's race check only when the scheduler replays them in a fixed order;
    /// [`Machine::last_access`] no longer holds the addresses.
    pub fn parallel_mode(&mut self) {
        self.logging = true;
        self.sanitizer.defer_device_stores();
    }

    /// Starts a stretch of a parallel run: zero counters and findings, and a budget of what
    /// `done` (the instructions the run has counted so far) leaves.
    pub fn begin_stretch(&mut self, done: u64) {
        self.counters = Counters::default();
        self.stop_at = self.budget.saturating_sub(done);
        self.findings.clear();
        self.sanitizer.take_seen();
        self.writes.clear();
    }

    /// Ends a stretch: what it counted, found and wrote. With `undo`, its global writes
    /// are undone here (the memory is back to the round's start).
    pub fn end_stretch(&mut self, undo: bool) -> Stretch {
        let room = self.writes.with_room_of();
        let writes = std::mem::replace(&mut self.writes, room);
        if undo {
            self.memory.undo(&writes);
        }
        Stretch {
            counters: std::mem::take(&mut self.counters),
            seen: self.sanitizer.take_seen(),
            findings: std::mem::take(&mut self.findings),
            writes,
            device_stores: self.sanitizer.take_device_stores(),
        }
    }

    /// Replays another worker's global writes on this machine's memory.
    pub fn redo(&mut self, writes: &WriteLog) {
        self.memory.redo(writes);
    }

    /// The regions of the dispatch's address space.
    pub fn regions(&self) -> &Regions {
        &self.memory.regions
    }

    /// The shape of the threadgroup at `linear` in dispatch order.
    pub fn shape_of(&self, linear: u64) -> Shape {
        self.geometry.shape(linear)
    }

    /// Takes the next threadgroup to start (its linear index) without starting it here,
    /// so that a parallel scheduler can start it on any worker's machine.
    pub fn take_next(&mut self) -> Option<u64> {
        let shape = self.peek_next()?;
        self.next += 1;
        Some(shape.linear)
    }

    /// Takes a parallel run's totals (see [`Machine::take_totals`]): its counters, the
    /// sanitizer with its merged counts, and its findings (with their instructions) in the
    /// order first seen.
    pub fn adopt(
        &mut self,
        counters: Counters,
        sanitizer: Sanitizer,
        findings: Vec<(Finding, u32)>,
    ) {
        self.counters = counters;
        self.sanitizer = sanitizer;
        self.findings = findings;
    }

    /// The last memory access (valid right after a step that reported [`Effect::Memory`];
    /// its addresses only outside parallel mode, which no timing model reads).
    pub fn last_access(&self) -> &Access {
        &self.access
    }

    /// The final buffers, counters and the sanitizer's findings (in the order they were
    /// first seen).
    pub fn finish(self) -> (Vec<Vec<u8>>, Counters, Vec<Finding>) {
        let sanitizer = &self.sanitizer;
        let findings = self
            .findings
            .into_iter()
            .map(|(mut f, pc)| {
                f.count = sanitizer.count(f.first.kind, pc);
                f
            })
            .collect();
        (self.memory.into_buffers(), self.counters, findings)
    }

    /// Runs the next instruction of a ready SIMD-group for a timing model, which steps one
    /// instruction at a time, and hands back the pc the SIMD-group goes on at. Without a recording, a write log or
    /// the budget's end (those take [`Machine::advance`]), it sets up only what the
    /// instruction needs and counts it in place; a barrier arrival, a finish or a new
    /// finding ends as in `advance` (`Machine::settle`).
    #[inline(always)]
    pub fn step_on(&mut self, id: GroupId, sg: usize) -> Result<Step, Box<KernelFault>> {
        if self.recorder.is_some()
            || self.logging
            || self.counters.simd_instructions >= self.stop_at
        {
            return self.step_general(id, sg);
        }
        let program = self.program;
        let tg = self.groups[id]
            .as_mut()
            .expect("scheduler ran a threadgroup that is not resident");
        let group = &mut tg.simdgroups[sg];
        let mut cx = Context {
            program,
            regions: &self.memory.regions,
            spaces: Spaces {
                global: &mut self.memory.global,
                threadgroup: &mut tg.block,
                frames: &mut group.frames,
                frame_bytes: self.memory.frame_bytes,
                log: None,
            },
            geometry: &self.geometry,
            shape: &tg.shape,
            simd: group.index,
            access: &mut self.access,
            keep_addrs: true,
            sanitizer: &mut self.sanitizer,
            shadow: TgShadow {
                shadow: &mut tg.shadow,
                instance: tg.instance,
                interval: tg.interval,
            },
        };
        let ex = match exec::execute(&mut cx, &mut group.regs, &mut group.simt) {
            Ok(ex) => ex,
            Err(trap) => return Err(self.trapped(trap, id, sg)),
        };
        let next = group.simt.top().map(|(pc, _)| pc);
        count(&mut self.counters, program, &ex, &self.access);
        if matches!(
            ex.effect,
            Effect::Barrier { .. } | Effect::Exit { done: true, .. }
        ) || self.sanitizer.has_pending()
        {
            let ex = self.settle(id, sg, 1, ex, false);
            return Ok(Step { ex, next });
        }
        tg.instructions += 1;
        Ok(Step { ex, next })
    }

    /// [`Machine::step_on`] through [`Machine::advance`] (a recording, a write log, or
    /// the budget to check).
    #[cold]
    #[inline(never)]
    fn step_general(&mut self, id: GroupId, sg: usize) -> Result<Step, Box<KernelFault>> {
        let ex = self
            .advance::<false>(id, sg, 1)?
            .expect("only a deferring run stops before an instruction");
        Ok(Step {
            ex,
            next: self.next_pc(id, sg),
        })
    }

    /// The fault of a step of SIMD-group `sg` of `id` that trapped (findings before it
    /// located first).
    #[cold]
    #[inline(never)]
    fn trapped(&mut self, trap: Trap, id: GroupId, sg: usize) -> Box<KernelFault> {
        let pc = self.group(id).simdgroups[sg].simt.top().map_or(0, |t| t.0);
        self.locate_findings(id);
        self.fault(trap, id, sg, pc)
    }

    /// Runs a ready SIMD-group until it waits at a barrier, finishes, or is about to run a
    /// device atomic: then it stops before it with [`SimdGroup::at_atomic`] set (the
    /// parallel untimed scheduler runs such atomics at the end of the round, in a fixed
    /// order, with [`Machine::run_atomic`]). It also stops, with [`SimdGroup::yielded`]
    /// set, once the stretch has logged [`STRETCH_WRITES`] global writes.
    pub fn run_until_blocked_deferring(
        &mut self,
        id: GroupId,
        sg: usize,
    ) -> Result<(), Box<KernelFault>> {
        self.advance::<true>(id, sg, u64::MAX).map(|_| ())
    }

    /// Lets the SIMD-groups of a threadgroup that yielded run again (a new round).
    pub fn resume(&mut self, id: GroupId) {
        if let Some(tg) = self.groups[id].as_mut() {
            for g in &mut tg.simdgroups {
                g.yielded = false;
            }
        }
    }

    /// Runs the device atomic a SIMD-group stopped before (see
    /// [`Machine::run_until_blocked_deferring`]).
    pub fn run_atomic(&mut self, id: GroupId, sg: usize) -> Result<(), Box<KernelFault>> {
        if let Some(tg) = self.groups[id].as_mut() {
            tg.simdgroups[sg].at_atomic = false;
        }
        self.advance::<false>(id, sg, 1).map(|_| ())
    }

    /// Runs up to `max` instructions of a SIMD-group, stopping early when it waits at a
    /// barrier or finishes (or, with `DEFER`, before a device atomic); the record of the
    /// last one (`None` when it stopped before the first).
    fn advance<const DEFER: bool>(
        &mut self,
        id: GroupId,
        sg: usize,
        max: u64,
    ) -> Result<Option<Executed>, Box<KernelFault>> {
        let program = self.program;
        let tg = self.groups[id]
            .as_mut()
            .expect("scheduler ran a threadgroup that is not resident");
        let group = &mut tg.simdgroups[sg];
        let device_atomic = &self.device_atomic;
        let any_device_atomic = self.any_device_atomic;
        let before_atomic = |simt: &Reconvergence| {
            any_device_atomic
                && simt
                    .top()
                    .is_some_and(|(pc, _)| device_atomic.get(pc as usize) == Some(&true))
        };
        if DEFER && before_atomic(&group.simt) {
            group.at_atomic = true;
            return Ok(None);
        }
        let mut cx = Context {
            program,
            regions: &self.memory.regions,
            spaces: Spaces {
                global: &mut self.memory.global,
                threadgroup: &mut tg.block,
                frames: &mut group.frames,
                frame_bytes: self.memory.frame_bytes,
                log: if self.logging {
                    Some(&mut self.writes)
                } else {
                    None
                },
            },
            geometry: &self.geometry,
            shape: &tg.shape,
            simd: group.index,
            access: &mut self.access,
            // Only a timing model reads the addresses; parallel (untimed) runs skip them.
            keep_addrs: !self.logging,
            sanitizer: &mut self.sanitizer,
            shadow: TgShadow {
                shadow: &mut tg.shadow,
                instance: tg.instance,
                interval: tg.interval,
            },
        };
        let c = &mut self.counters;
        // Chosen once per call, so a run without a recording pays one predictable
        // branch per step.
        let mut recorder = self
            .recorder
            .as_deref_mut()
            .filter(|r| r.records(tg.shape.pos, group.index));
        let recording = recorder.is_some();
        let mut n = 0u64;
        let stop = loop {
            if c.simd_instructions >= self.stop_at {
                let (pc, mask) = group.simt.top().unwrap_or((0, 1));
                let trap = Trap {
                    kind: FaultKind::InstructionBudget,
                    message: format!(
                        "the dispatch ran past its budget of {} SIMD-group instructions (an endless loop?)",
                        self.budget
                    ),
                    lane: mask.trailing_zeros().min(31),
                    address: None,
                    buffer: None,
                    offset: None,
                };
                break Err((trap, pc));
            }
            let result = match recorder.as_deref_mut() {
                None => exec::execute(&mut cx, &mut group.regs, &mut group.simt),
                Some(r) => record::execute(r, &mut cx, &mut group.regs, &mut group.simt),
            };
            let ex = match result {
                Ok(ex) => ex,
                Err(trap) => break Err((trap, group.simt.top().map_or(0, |t| t.0))),
            };
            count(c, program, &ex, cx.access);
            n += 1;
            if let Effect::Barrier { .. } | Effect::Exit { done: true, .. } = ex.effect {
                break Ok(ex);
            }
            if n >= max {
                break Ok(ex);
            }
            if DEFER && before_atomic(&group.simt) {
                group.at_atomic = true;
                break Ok(ex);
            }
            // Only memory instructions log writes.
            if DEFER
                && ex.effect == Effect::Memory
                && cx.spaces.log.as_deref().map_or(0, WriteLog::lanes) >= STRETCH_WRITES
            {
                group.yielded = true;
                break Ok(ex);
            }
        };
        let ex = match stop {
            Ok(ex) => ex,
            Err((trap, pc)) => {
                self.locate_findings(id);
                return Err(self.fault(trap, id, sg, pc));
            }
        };
        Ok(Some(self.settle(id, sg, n, ex, recording)))
    }

    /// Ends a call's `n` steps of SIMD-group `sg` of `id`, the last of them `ex`: counts
    /// them to the threadgroup, lets a barrier arrival or a finish take effect (setting
    /// its `released`), and locates new findings.
    fn settle(
        &mut self,
        id: GroupId,
        sg: usize,
        n: u64,
        mut ex: Executed,
        recording: bool,
    ) -> Executed {
        let tg = self.groups[id].as_mut().expect("threadgroup is resident");
        tg.instructions += n;
        match &mut ex.effect {
            Effect::Barrier { released } => {
                let group = &mut tg.simdgroups[sg];
                group.status = Status::AtBarrier;
                group.barrier_pc = ex.pc;
                let lanes = tg.shape.lanes(group.index);
                if ex.active != lanes && self.sanitizer.first(FaultKind::DivergentBarrier, ex.pc) {
                    let missing = lanes & !ex.active;
                    let lane = missing.trailing_zeros();
                    let how = if group.simt.live() >> lane & 1 != 0 {
                        "is in other code (the barrier is in divergent control flow)"
                    } else {
                        "has returned"
                    };
                    self.sanitizer.report(Pending {
                        trap: Trap {
                            kind: FaultKind::DivergentBarrier,
                            message: format!(
                                "threadgroup_barrier reached by only part of SIMD-group {}: lane {lane} {how}; every thread of the threadgroup must reach it",
                                group.index
                            ),
                            lane: ex.active.trailing_zeros(),
                            address: None,
                            buffer: None,
                            offset: None,
                        },
                        pc: ex.pc,
                        simd: group.index,
                        other_pc: None,
                    });
                }
                tg.waiting += 1;
                *released = tg.try_release(&mut self.sanitizer, &mut self.next_stamp);
            }
            Effect::Exit {
                done: true,
                released,
            } => {
                tg.simdgroups[sg].status = Status::Done;
                tg.live -= 1;
                *released = tg.try_release(&mut self.sanitizer, &mut self.next_stamp);
            }
            _ => {}
        }
        if recording
            && let Effect::Barrier { released: true } | Effect::Exit { released: true, .. } =
                ex.effect
            && let Some(r) = self.recorder.as_deref_mut()
        {
            r.released();
        }
        if self.sanitizer.has_pending() {
            self.locate_findings(id);
        }
        ex
    }

    /// Gives the sanitizer's new findings (all from threadgroup `id`) their thread and
    /// source location.
    fn locate_findings(&mut self, id: GroupId) {
        let shape = self.group(id).shape;
        for p in self.sanitizer.take_pending() {
            let found = self.locate(p, &shape);
            self.findings.push(found);
        }
    }

    /// A new finding of a SIMD-group of the threadgroup `shape`, with its thread and
    /// source location, and its instruction.
    pub fn locate(&self, p: Pending, shape: &Shape) -> (Finding, u32) {
        let mut first = *self.fault_in(p.trap, shape, p.simd, p.pc);
        if let Some(other) = p.other_pc {
            let loc = self
                .program
                .locs
                .get(other as usize)
                .copied()
                .unwrap_or_default();
            first.message += &format!(" (the other: {})", self.module.describe_loc(loc));
        }
        (Finding { first, count: 1 }, p.pc)
    }

    fn fault(&self, trap: Trap, id: GroupId, sg: usize, pc: u32) -> Box<KernelFault> {
        let tg = self.group(id);
        self.fault_in(trap, &tg.shape, tg.simdgroups[sg].index, pc)
    }

    fn fault_in(&self, trap: Trap, shape: &Shape, simd: u32, pc: u32) -> Box<KernelFault> {
        let loc = self
            .program
            .locs
            .get(pc as usize)
            .copied()
            .unwrap_or_default();
        Box::new(KernelFault {
            kind: trap.kind,
            message: trap.message,
            loc,
            location: self.module.describe_loc(loc),
            thread: self
                .geometry
                .thread_position(shape, simd * LANES + trap.lane),
            threadgroup: shape.pos,
            simdgroup: simd,
            lane: trap.lane,
            address: trap.address,
            buffer: trap.buffer,
            offset: trap.offset,
        })
    }
}
