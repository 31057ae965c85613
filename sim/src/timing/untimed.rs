//! The untimed scheduler: functional results only, as fast as possible, on any number of
//! worker threads with the same result for every number.
//!
//! # Rounds
//!
//! Up to [`ROUND`] threadgroups are resident at once, admitted in dispatch order. A
//! *round* runs every resident threadgroup's SIMD-groups (in turn, each until it waits
//! at a barrier, finishes, or is about to run a device atomic) against device memory as
//! it stood at the round's start plus the threadgroup's own writes; then, in dispatch
//! order, each threadgroup's writes land, and then the device atomics the SIMD-groups
//! stopped before run one per SIMD-group, in (threadgroup, SIMD-group) order. So what a
//! threadgroup reads within a round depends only on the round's start and itself, never
//! on which worker ran it or what ran beside it: 1, 2 or N workers give bit-identical
//! buffers, counters and findings. This is valid GPU semantics: plain writes of other
//! threadgroups become visible at a later round (device memory is relaxed between
//! threadgroups), and atomics are totally ordered. A threadgroup that spins on another's
//! atomic makes progress, since every round lands the writes and runs the atomics.
//!
//! Each worker has its own copy of device memory. A threadgroup's stretch of a round
//! logs its writes (`memory::Write`) and undoes them on its worker's copy at the end, so
//! the next threadgroup there sees the round's start again; the merge replays every log
//! on every copy in dispatch order. A threadgroup stays on the worker that started it;
//! workers take threadgroups not started yet from a shared cursor, so a worker the host
//! delays does not hold a round back.
//!
//! The sanitizer's counts and findings are per stretch and merged in the same fixed
//! order; plain device stores are checked for races between threadgroups only at the
//! merge, against one set of tags.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::{Timing, TimingReport};
use crate::fault::{Finding, KernelFault};
use crate::machine::{Counters, GroupId, Machine, Status, Stretch};
use crate::memory::Regions;
use crate::sanitize::Sanitizer;
use crate::sanitize::device::Part;
use crate::simt::LaneMask;

/// Threadgroups resident at once: how many a round runs (independent of the number of
/// workers, so that every number gives the same rounds).
pub(crate) const ROUND: usize = 64;

/// The untimed scheduler on `workers` threads (at least one).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Untimed {
    /// Worker threads.
    pub workers: usize,
}

impl Default for Untimed {
    fn default() -> Self {
        Untimed { workers: 1 }
    }
}

impl Timing for Untimed {
    fn run(&mut self, m: &mut Machine) -> TimingReport {
        TimingReport {
            fault: Rounds::run(m, self.workers.max(1)),
            ..TimingReport::default()
        }
    }
}

/// A resident threadgroup.
#[derive(Clone, Copy, Debug)]
struct Resident {
    /// Its index in dispatch order.
    linear: u64,
    /// The worker whose machine holds it (valid once started).
    worker: usize,
    /// Its slot there, once started.
    id: Option<GroupId>,
    /// All its SIMD-groups have finished.
    finished: bool,
}

/// What a threadgroup's stretch of a round did.
struct Ran {
    linear: u64,
    worker: usize,
    id: GroupId,
    stretch: Stretch,
    fault: Option<Box<KernelFault>>,
    finished: bool,
}

/// A parallel stretch of a dispatch: a machine's workers (forks of it) and the totals
/// their rounds merge into, from [`Parallel::begin`] to [`Parallel::end`]. The machine's
/// totals so far are the starting point and come back to it with the stretch's added,
/// so a scheduler can run parts of a dispatch this way (sampled timing's untimed
/// stretches).
pub(crate) struct Parallel<'a> {
    /// Workers 1 and up (worker 0 is the machine itself).
    others: Vec<Machine<'a>>,
    totals: Rounds,
}

impl<'a> Parallel<'a> {
    /// Readies `m` and `workers - 1` forks of it (copies of its memory) for rounds.
    pub fn begin(m: &mut Machine<'a>, workers: usize) -> Self {
        Self::begin_reusing(m, workers, Vec::new())
    }

    /// [`Parallel::begin`], taking the forks from `spare` (what [`Parallel::end`] gave
    /// back) where it has them: their writable memory is brought up to date with `m`'s
    /// (read-only buffers never change), which saves copying every buffer again and
    /// touching fresh pages (sampled timing begins a stretch after every window).
    pub fn begin_reusing(m: &mut Machine<'a>, workers: usize, spare: Vec<Machine<'a>>) -> Self {
        let (counters, sanitizer, findings) = m.take_totals();
        m.parallel_mode();
        let mut others = spare;
        others.truncate(workers.max(1) - 1);
        for o in &mut others {
            o.copy_writable_memory(m);
        }
        while others.len() < workers.max(1) - 1 {
            others.push(m.fork());
        }
        for o in &mut others {
            o.parallel_mode();
        }
        let mut sanitizer = sanitizer;
        // Up to one part of the device-race tags per worker (see `replay`).
        sanitizer.split_device_tags(others.len() + 1, m.regions());
        Parallel {
            others,
            totals: Rounds {
                counters,
                sanitizer,
                findings,
            },
        }
    }

    /// Runs the threadgroups not started yet, up to the machine's limit (see
    /// [`Machine::set_limit`]), in rounds; the first fault. Those that finished are in
    /// `m`'s log of retired threadgroups, if it keeps one, in dispatch order.
    pub fn run(&mut self, m: &mut Machine<'a>) -> Option<KernelFault> {
        let fault = self.totals.rounds(m, &mut self.others);
        for o in &mut self.others {
            m.extend_retired(o.take_retired());
        }
        fault
    }

    /// Gives `m` its totals back, the stretch's added, and leaves parallel mode (`m`'s
    /// memory holds every write); the forks, for [`Parallel::begin_reusing`].
    pub fn end(self, m: &mut Machine<'a>) -> Vec<Machine<'a>> {
        m.serial_mode();
        let t = self.totals;
        m.adopt(t.counters, t.sanitizer, t.findings);
        self.others
    }
}

/// The merged totals of a parallel run.
struct Rounds {
    counters: Counters,
    sanitizer: Sanitizer,
    findings: Vec<(Finding, u32)>,
}

impl Rounds {
    /// Runs the dispatch on `m` and `workers - 1` forks of it; the first fault.
    fn run(m: &mut Machine, workers: usize) -> Option<KernelFault> {
        let mut p = Parallel::begin(m, workers);
        let fault = p.run(m);
        p.end(m);
        fault
    }

    fn rounds<'a>(
        &mut self,
        m: &mut Machine<'a>,
        others: &mut [Machine<'a>],
    ) -> Option<KernelFault> {
        let mut resident: Vec<Resident> = Vec::with_capacity(ROUND);
        loop {
            while resident.len() < ROUND
                && let Some(linear) = m.take_next()
            {
                resident.push(Resident {
                    linear,
                    worker: 0,
                    id: None,
                    finished: false,
                });
            }
            if resident.is_empty() {
                return None;
            }
            let done = self.counters.simd_instructions;
            let mut ran = run_round(m, others, &resident, done);
            ran.sort_by_key(|r| r.linear);
            // The first fault ends the run: stretches after it never land.
            let land = ran
                .iter()
                .position(|r| r.fault.is_some())
                .map_or(ran.len(), |i| i + 1);
            ran.truncate(land);
            // Every stretch was undone on its worker: each worker's copy replays all of
            // them in dispatch order, the copies in parallel, and each worker checks the
            // plain device stores against its part of the race check's tags.
            let clashes = replay(m, others, &ran, self.sanitizer.device_parts());
            let mut clashes = clashes.into_iter();
            for r in ran {
                let Some(res) = resident.iter_mut().find(|x| x.linear == r.linear) else {
                    // Its stores' checks too, so that the next stretch gets its own.
                    clashes
                        .by_ref()
                        .take(r.stretch.device_stores.len())
                        .for_each(drop);
                    continue;
                };
                res.id = Some(r.id);
                res.worker = r.worker;
                res.finished = r.finished;
                self.merge(m, r.linear, r.stretch, Some(&mut clashes));
                if let Some(f) = r.fault {
                    return Some(*f);
                }
            }
            // Then the deferred atomics, in (threadgroup, SIMD-group) order.
            for res in resident.iter().filter(|r| !r.finished) {
                let Some(id) = res.id else { continue };
                let w = res.worker;
                let n = machine(m, others, w).group(id).simdgroups.len();
                for sg in 0..n {
                    let mach = machine(m, others, w);
                    if !mach.group(id).simdgroups[sg].at_atomic {
                        continue;
                    }
                    mach.begin_stretch(self.counters.simd_instructions);
                    let fault = mach.run_atomic(id, sg).err();
                    let stretch = mach.end_stretch(false);
                    // The atomic's writes stay on its worker's copy; the others replay
                    // them.
                    if !stretch.writes.is_empty() {
                        for (i, o) in std::iter::once(&mut *m)
                            .chain(others.iter_mut())
                            .enumerate()
                        {
                            if i != w {
                                o.redo(&stretch.writes);
                            }
                        }
                    }
                    self.merge(m, res.linear, stretch, None);
                    if let Some(f) = fault {
                        return Some(*f);
                    }
                }
            }
            resident.retain(|r| !r.finished);
        }
    }

    /// Merges the counts and findings of a stretch of threadgroup `linear` (its writes
    /// are already on every worker's copy of memory). `clashes` gives its plain device
    /// stores' racing lanes when the workers checked them (see `replay`); else they are
    /// checked here.
    fn merge(
        &mut self,
        m: &mut Machine,
        linear: u64,
        s: Stretch,
        mut clashes: Option<&mut std::vec::IntoIter<LaneMask>>,
    ) {
        self.counters.add(&s.counters);
        for (f, pc) in s.findings {
            if self.sanitizer.count(f.first.kind, pc) == 0 {
                self.findings.push((f, pc));
            }
        }
        self.sanitizer.merge_seen(&s.seen);
        let shape = m.shape_of(linear);
        for d in &s.device_stores {
            match clashes.as_deref_mut() {
                Some(c) => {
                    let lanes = c.next().expect("a check per logged store");
                    self.sanitizer.report_device_store(m.regions(), d, lanes);
                }
                None => self.sanitizer.check_device_store(m.regions(), d),
            }
            for p in self.sanitizer.take_pending() {
                self.findings.push(m.locate(p, &shape));
            }
        }
    }
}

/// Replays the writes of a round's stretches (undone on their workers, in dispatch
/// order) on every worker's copy of memory, and checks their plain device stores (in the
/// same order) against the device-race tags, part `w` of `parts` on worker `w` (there
/// are at most as many parts as workers), each worker on its own thread. Per logged
/// store, in that order, the lanes that clashed in any part.
fn replay(
    m: &mut Machine,
    others: &mut [Machine],
    ran: &[Ran],
    parts: &mut [Part],
) -> Vec<LaneMask> {
    let stores = || ran.iter().flat_map(|r| &r.stretch.device_stores);
    let check = |regions: &Regions, part: &mut Part| -> Vec<LaneMask> {
        stores()
            .map(|d| Sanitizer::check_part(part, regions, d))
            .collect()
    };
    let on = |mach: &mut Machine| {
        for r in ran {
            mach.redo(&r.stretch.writes);
        }
    };
    let writes = ran.iter().any(|r| !r.stretch.writes.is_empty());
    let per_part: Vec<Vec<LaneMask>> =
        if others.is_empty() || (!writes && stores().next().is_none()) {
            on(m);
            parts.iter_mut().map(|p| check(m.regions(), p)).collect()
        } else {
            // Workers past the number of parts (a power of two) only replay.
            let states = parts
                .iter_mut()
                .map(Some)
                .chain(std::iter::repeat_with(|| None));
            on_workers(m, others, states, |mach, part| {
                on(mach);
                part.map(|p| check(mach.regions(), p))
            })
            .into_iter()
            .flatten()
            .collect()
        };
    let mut parts = per_part.into_iter();
    let first = parts.next().unwrap_or_default();
    parts.fold(first, |mut all, part| {
        for (a, b) in all.iter_mut().zip(part) {
            *a |= b;
        }
        all
    })
}

/// Worker `w`'s machine.
fn machine<'m, 'a>(
    m: &'m mut Machine<'a>,
    others: &'m mut [Machine<'a>],
    w: usize,
) -> &'m mut Machine<'a> {
    if w == 0 { m } else { &mut others[w - 1] }
}

/// Runs one round, worker 0 on this thread: each worker runs the stretches of the
/// threadgroups it already holds, then takes threadgroups not started yet one at a time
/// from a shared cursor (in dispatch order), so a worker the host delays does not hold
/// the round back. Which worker runs which threadgroup does not change what it computes.
fn run_round(
    m: &mut Machine,
    others: &mut [Machine],
    resident: &[Resident],
    done: u64,
) -> Vec<Ran> {
    let fresh: Vec<u64> = resident
        .iter()
        .filter(|r| r.id.is_none())
        .map(|r| r.linear)
        .collect();
    let cursor = AtomicUsize::new(0);
    let first_fault = AtomicU64::new(u64::MAX);
    let round = Round {
        resident,
        fresh: &fresh,
        cursor: &cursor,
        done,
        first_fault: &first_fault,
    };
    if others.is_empty() {
        return run_share(m, 0, &round);
    }
    on_workers(m, others, 0.., |mach, w| run_share(mach, w, &round))
        .into_iter()
        .flatten()
        .collect()
}

/// Runs `f` on every worker's machine with the next of `states`, worker 0 (`m`) on this
/// thread and each of `others` on a thread of its own; the results in worker order (a
/// worker's panic resumes here).
fn on_workers<S: Send, T: Send>(
    m: &mut Machine,
    others: &mut [Machine],
    mut states: impl Iterator<Item = S>,
    f: impl Fn(&mut Machine, S) -> T + Sync,
) -> Vec<T> {
    let mine = states.next().expect("a state per worker");
    let f = &f;
    let result = crossbeam::thread::scope(|s| {
        let handles: Vec<_> = others
            .iter_mut()
            .zip(states)
            .map(|(o, state)| s.spawn(move |_| f(o, state)))
            .collect();
        let mut all = vec![f(m, mine)];
        for h in handles {
            match h.join() {
                Ok(r) => all.push(r),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// What every worker of a round shares.
struct Round<'r> {
    resident: &'r [Resident],
    /// Resident threadgroups not started yet, in dispatch order.
    fresh: &'r [u64],
    /// The next of `fresh` to take.
    cursor: &'r AtomicUsize,
    /// Instructions the run had counted at the round's start.
    done: u64,
    /// The lowest linear index of a threadgroup that faulted in this round.
    first_fault: &'r AtomicU64,
}

/// Worker `w`'s stretches of a round: its own threadgroups in dispatch order, then fresh
/// ones as it takes them. After a fault anywhere, threadgroups after the faulting one in
/// dispatch order are skipped (the merge stops at the first fault in dispatch order, so
/// they never matter); every threadgroup before it still runs.
fn run_share(m: &mut Machine, w: usize, round: &Round) -> Vec<Ran> {
    let mut out = Vec::new();
    let mut own = round
        .resident
        .iter()
        .filter(|r| r.worker == w && r.id.is_some());
    loop {
        let (linear, id) = match own.next() {
            Some(r) => (r.linear, r.id),
            None => match round
                .fresh
                .get(round.cursor.fetch_add(1, Ordering::Relaxed))
            {
                Some(&linear) => (linear, None),
                None => break,
            },
        };
        if linear > round.first_fault.load(Ordering::Relaxed) {
            continue;
        }
        m.begin_stretch(round.done);
        let id = id.unwrap_or_else(|| m.start_at(linear));
        let fault = run_group(m, id).err();
        if fault.is_some() {
            round.first_fault.fetch_min(linear, Ordering::Relaxed);
        }
        let finished = fault.is_none()
            && m.group(id)
                .simdgroups
                .iter()
                .all(|g| g.status == Status::Done);
        let stretch = m.end_stretch(true);
        out.push(Ran {
            linear,
            worker: w,
            id,
            stretch,
            fault,
            finished,
        });
        if finished {
            m.retire(id);
        }
    }
    out
}

/// Runs a threadgroup's SIMD-groups in turn, each until it waits at a barrier, finishes,
/// stops before a device atomic or yields (its stretch wrote much), until none can run.
fn run_group(m: &mut Machine, id: GroupId) -> Result<(), Box<KernelFault>> {
    m.resume(id);
    let n = m.group(id).simdgroups.len();
    loop {
        let mut ran = false;
        for sg in 0..n {
            let g = &m.group(id).simdgroups[sg];
            if g.status == Status::Ready && !g.at_atomic && !g.yielded {
                m.run_until_blocked_deferring(id, sg)?;
                ran = true;
            }
        }
        if !ran {
            return Ok(());
        }
    }
}
