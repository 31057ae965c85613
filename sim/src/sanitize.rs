//! The sanitizer: always on, it watches memory accesses, cross-lane reads and barriers
//! for the mistakes a GPU hides, and reports them as findings without stopping the run.
//! (Out-of-bounds and misaligned accesses and the instruction budget are faults, which
//! stop the run; they live in `memory` and `machine`.)
//!
//! - **Threadgroup memory** has one shadow [`Cell`] per 4-byte word per resident
//!   threadgroup, with byte masks, so accesses of any size are checked byte by byte at
//!   the cost of one cell per word. Time in a threadgroup is cut into *intervals* by its
//!   barriers; a cell remembers which SIMD-group wrote which bytes of the word and which
//!   bytes were read (and by whom) in the current interval. A write after another
//!   SIMD-group's read or write of the same bytes, or a read after another SIMD-group's
//!   write, in one interval is a race, whatever order the scheduler ran them in. Lanes of
//!   one SIMD-group run in lockstep and never race with each other; atomics never race.
//!   Only when SIMD-groups mix their bytes inside one word is the cell imprecise: after
//!   two SIMD-groups wrote different bytes of a word in one interval, reads of that word
//!   are not checked (a possible missed report), and after two read different bytes of
//!   it, a write by either is reported. A cell also remembers which bytes any thread of
//!   the threadgroup ever wrote, so a read of bytes never written is reported.
//! - **Device memory** has one 32-bit tag per 4-byte word of each written buffer
//!   (allocated on the first store): the last threadgroup that stored to it with a plain
//!   store (its index modulo 2^28) and which bytes it stored. A store by another
//!   threadgroup to the same bytes is a write-write race between threadgroups (a
//!   warning). When threadgroups store to different bytes of one word, the tag keeps the
//!   last one's bytes only (again a possible missed report, never a false one). The
//!   tags live in [`device`], split into parts that the workers of a parallel round
//!   check on their own threads.
//!
//! Cells and tags carry stamps instead of being cleared: a threadgroup's instance number
//! and interval number come from one counter of the dispatch, so a cell whose stamp is
//! not the current one is simply empty.
//!
//! Each finding is reported once per instruction and kind, with the first occurrence's
//! thread and address and a count of the instruction's executions that showed it.

use crate::fault::{FaultKind, Trap};
use crate::memory::{OFFSET_BITS, Regions, Storage, active_bits_differ, offset_of};
use crate::simt::LaneMask;

pub(crate) mod device;

/// No SIMD-group (in [`Cell::writer`] and [`Cell::reader`]).
const NONE: u8 = 0;
/// Several SIMD-groups.
const MANY: u8 = u8::MAX;

/// The shadow of one 4-byte word of threadgroup memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cell {
    /// The interval the access fields belong to; any other value means the word was not
    /// accessed in the current interval.
    interval: u32,
    /// The threadgroup instance `init` belongs to; any other value means no byte was ever
    /// written in this threadgroup.
    written_in: u32,
    /// The instruction of the last write in the interval (of the last read if none).
    pc: u32,
    /// The SIMD-group (index + 1) that wrote in the interval, [`NONE`] or [`MANY`].
    writer: u8,
    /// The SIMD-group (index + 1) that read in the interval, [`NONE`] or [`MANY`].
    reader: u8,
    /// Bytes `writer` wrote in the interval (bit per byte).
    written: u8,
    /// Bytes read in the interval.
    read: u8,
    /// Bytes written in this threadgroup at any time.
    init: u8,
}

/// Cells for `bytes` bytes of threadgroup memory.
pub(crate) fn cells_for(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

/// What a memory access does, for the sanitizer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Touch {
    /// A plain load.
    Read,
    /// A plain store.
    Write,
    /// An atomic: reads the old value unless `store`, writes unless `load`.
    Atomic {
        /// It reads the word.
        reads: bool,
        /// It writes the word.
        writes: bool,
    },
}

/// The most reads a threadgroup's [`ReadLog`] holds before it applies them.
const LOG_CAPACITY: usize = 512;

/// One resident threadgroup's shadow of its threadgroup memory: a cell per 4-byte word,
/// how many are fully written, and the reads not yet applied to the cells.
#[derive(Clone, Debug, Default)]
pub(crate) struct Shadow {
    cells: Vec<Cell>,
    /// Cells whose four bytes were all written in the current threadgroup instance.
    full: usize,
    log: ReadLog,
}

impl Shadow {
    /// Readies the shadow for a new threadgroup instance of `cells` cells (stale cells
    /// need no clearing: the new instance stamp makes them empty).
    pub fn start(&mut self, cells: usize) {
        self.cells.resize(cells, Cell::default());
        self.full = 0;
        self.log.interval = None;
        self.log.entries.clear();
    }
}

/// Reads of the current interval not yet applied to the cells.
///
/// While no SIMD-group has written threadgroup memory in an interval and every byte of it
/// has been written in the threadgroup, a read can find nothing (no race without a write
/// in the interval, nothing uninitialized): what it leaves in the cells only matters to
/// later accesses of the interval. Such reads are logged and applied, in order, only
/// before the next access that is not logged; at the barrier the log is dropped, since a
/// new interval forgets the reads anyway. Kernels that read their tiles between barriers
/// (the tiled matrix multiply) skip the per-lane cell updates of those reads entirely.
#[derive(Clone, Debug, Default)]
struct ReadLog {
    /// The interval the log belongs to (any other means it is empty).
    interval: Option<u32>,
    /// A write or atomic touched the cells in this interval: reads are applied at once.
    wrote: bool,
    entries: Vec<LoggedRead>,
}

/// A read of at most 4 bytes per lane in one threadgroup region (the fast path).
#[derive(Clone, Debug)]
struct LoggedRead {
    addrs: [u64; 32],
    mask: LaneMask,
    base: usize,
    low: u8,
    me: u8,
    pc: u32,
}

/// One resident threadgroup's shadow, as an access sees it.
pub(crate) struct TgShadow<'a> {
    /// The cells and the read log.
    pub shadow: &'a mut Shadow,
    /// The threadgroup's instance stamp.
    pub instance: u32,
    /// The current interval's stamp.
    pub interval: u32,
}

/// A recorded finding's place in the table: how often `kind` happened at `pc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    kind: FaultKind,
    pc: u32,
    count: u64,
}

/// A plain device store whose race check waits for the end of a round (see
/// [`Sanitizer::defer_device_stores`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeviceStore {
    addrs: [u64; 32],
    bytes: u32,
    mask: LaneMask,
    /// The storing threadgroup's linear index.
    pub group: u64,
    /// The storing SIMD-group's index in its threadgroup.
    pub simd: u32,
    pc: u32,
}

/// A new finding before the machine gives it its thread's identity and source location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pending {
    /// What happened, to which lane.
    pub trap: Trap,
    /// The instruction.
    pub pc: u32,
    /// The SIMD-group's index in its threadgroup.
    pub simd: u32,
    /// The conflicting access's instruction (races) or barrier (divergent barriers).
    pub other_pc: Option<u32>,
}

/// What the sanitizer found so far in a dispatch, and its device-memory tags.
#[derive(Default)]
pub(crate) struct Sanitizer {
    seen: Vec<Seen>,
    pending: Vec<Pending>,
    /// The device-race check's tags, one per 4-byte word of each written buffer.
    device: device::Tags,
    /// Plain device stores logged instead of checked, when deferred.
    deferred: Option<Vec<DeviceStore>>,
}

impl Sanitizer {
    /// Counts an occurrence of `kind` at `pc`; true when it is the first (then the caller
    /// reports it with [`Sanitizer::report`]).
    pub fn first(&mut self, kind: FaultKind, pc: u32) -> bool {
        match self.seen.iter_mut().find(|s| s.kind == kind && s.pc == pc) {
            Some(s) => {
                s.count += 1;
                false
            }
            None => {
                self.seen.push(Seen { kind, pc, count: 1 });
                true
            }
        }
    }

    /// Reports a first occurrence (see [`Sanitizer::first`]).
    pub fn report(&mut self, p: Pending) {
        self.pending.push(p);
    }

    /// Takes the findings reported since the last call.
    pub fn take_pending(&mut self) -> Vec<Pending> {
        std::mem::take(&mut self.pending)
    }

    /// Whether anything is waiting in [`Sanitizer::take_pending`].
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// From now on, logs plain device stores (see [`Sanitizer::take_device_stores`])
    /// instead of checking them: a parallel run checks them in a fixed order at the end of
    /// each round, against tags no worker owns.
    pub fn defer_device_stores(&mut self) {
        self.deferred.get_or_insert_with(Vec::new);
    }

    /// The device stores logged since the last call, in the order they ran.
    pub fn take_device_stores(&mut self) -> Vec<DeviceStore> {
        self.deferred
            .as_mut()
            .map(|d| {
                // Room for as many next time at once, not by doubling.
                let room = Vec::with_capacity(d.len());
                std::mem::replace(d, room)
            })
            .unwrap_or_default()
    }

    /// Checks a logged device store now (its findings go to
    /// [`Sanitizer::take_pending`]).
    pub fn check_device_store(&mut self, regions: &Regions, d: &DeviceStore) {
        self.device_store(regions, &d.addrs, d.bytes, d.mask, d.group, d.simd, d.pc);
    }

    /// Takes the table of findings counted so far, leaving it empty (the table of one
    /// stretch of a parallel run, merged with [`Sanitizer::merge_seen`]).
    pub fn take_seen(&mut self) -> Vec<Seen> {
        std::mem::take(&mut self.seen)
    }

    /// Adds counts taken with [`Sanitizer::take_seen`] elsewhere.
    pub fn merge_seen(&mut self, seen: &[Seen]) {
        for s in seen {
            match self
                .seen
                .iter_mut()
                .find(|t| t.kind == s.kind && t.pc == s.pc)
            {
                Some(t) => t.count += s.count,
                None => self.seen.push(*s),
            }
        }
    }

    /// How often `kind` happened at `pc`.
    pub fn count(&self, kind: FaultKind, pc: u32) -> u64 {
        self.seen
            .iter()
            .find(|s| s.kind == kind && s.pc == pc)
            .map_or(0, |s| s.count)
    }

    /// Records plain device stores of `bytes` bytes at each active lane's address by
    /// SIMD-group `simd` of threadgroup `group` (its linear index), reporting a store over
    /// another threadgroup's.
    #[allow(clippy::too_many_arguments)]
    pub fn device_store(
        &mut self,
        regions: &Regions,
        addrs: &[u64; 32],
        bytes: u32,
        mask: LaneMask,
        group: u64,
        simd: u32,
        pc: u32,
    ) {
        if let Some(log) = &mut self.deferred {
            log.push(DeviceStore {
                addrs: *addrs,
                bytes,
                mask,
                group,
                simd,
                pc,
            });
            return;
        }
        let clashes = self.device.store(regions, addrs, bytes, mask, group);
        self.report_clashes(regions, addrs, clashes, simd, pc);
    }

    /// Splits the device-race check's tags into up to `parts` parts (see
    /// [`device::Tags::split`]): at most one per worker of a parallel run.
    pub fn split_device_tags(&mut self, parts: usize, regions: &Regions) {
        self.device.split(parts, regions);
    }

    /// The parts of the device-race check's tags, for the workers of a parallel round to
    /// check logged stores with [`Sanitizer::check_part`].
    pub fn device_parts(&mut self) -> &mut [device::Part] {
        self.device.parts_mut()
    }

    /// Tags the words of logged store `d` that `part` holds; the lanes that clashed
    /// there (report them with [`Sanitizer::report_device_store`] once every part has
    /// checked it).
    pub fn check_part(part: &mut device::Part, regions: &Regions, d: &DeviceStore) -> LaneMask {
        part.store(regions, &d.addrs, d.bytes, d.mask, d.group)
    }

    /// Reports a logged store whose lanes in `clashes` (of every part) stored over
    /// another threadgroup's bytes.
    pub fn report_device_store(&mut self, regions: &Regions, d: &DeviceStore, clashes: LaneMask) {
        self.report_clashes(regions, &d.addrs, clashes, d.simd, d.pc);
    }

    /// Reports a store at `pc` whose lanes in `clashes` raced (the first of them), once
    /// per instruction.
    fn report_clashes(
        &mut self,
        regions: &Regions,
        addrs: &[u64; 32],
        clashes: LaneMask,
        simd: u32,
        pc: u32,
    ) {
        let race = (clashes != 0).then(|| {
            let lane = clashes.trailing_zeros();
            (lane, addrs[lane as usize])
        });
        self.report_device_race(regions, race, simd, pc);
    }

    /// Reports a device race found at `pc` (the first lane that clashed), once per
    /// instruction.
    fn report_device_race(
        &mut self,
        regions: &Regions,
        race: Option<(u32, u64)>,
        simd: u32,
        pc: u32,
    ) {
        if let Some((lane, addr)) = race
            && self.first(FaultKind::DeviceRace, pc)
        {
            let (name, off) = located(regions, addr);
            self.report(Pending {
                trap: Trap {
                    kind: FaultKind::DeviceRace,
                    message: format!(
                        "store to `{name}` at offset {off} overwrites a store of another threadgroup without atomics; which one lands depends on their order"
                    ),
                    lane,
                    address: Some(addr),
                    buffer: Some(name),
                    offset: Some(off),
                },
                pc,
                simd,
                other_pc: None,
            });
        }
    }

    /// Checks and records threadgroup accesses of `bytes` bytes at each active lane's
    /// address by SIMD-group `simd`.
    #[allow(clippy::too_many_arguments)]
    pub fn threadgroup_access(
        &mut self,
        shadow: &mut TgShadow,
        regions: &Regions,
        access: Touch,
        addrs: &[u64; 32],
        bytes: u32,
        mask: LaneMask,
        simd: u32,
        pc: u32,
    ) {
        let me = simd as u8 + 1;
        let (interval, instance) = (shadow.interval, shadow.instance);
        // The first lane of each kind of mistake: (lane, address, other SIMD-group, its
        // pc, whether it wrote).
        let mut race: Option<(u32, u64, u8, u32, bool)> = None;
        let mut uninit: Option<(u32, u64)> = None;
        let Some(first) = (mask != 0).then(|| addrs[mask.trailing_zeros() as usize]) else {
            return;
        };
        // Every lane's access succeeded, so each address is in a threadgroup region; most
        // often all are in the first lane's.
        let block_base = |addr: u64| {
            regions
                .0
                .get((addr >> OFFSET_BITS) as usize)
                .and_then(|r| match r.storage {
                    Storage::Threadgroup(base) => Some(base as usize),
                    _ => None,
                })
        };
        let Some(base0) = block_base(first) else {
            return;
        };
        let n = bytes as usize;
        let fast = active_bits_differ(addrs, mask, first) >> OFFSET_BITS == 0 && n <= 4;
        let low = ((1u32 << n.min(4)) - 1) as u8;
        let sh = &mut *shadow.shadow;
        if sh.log.interval != Some(interval) {
            sh.log.interval = Some(interval);
            sh.log.wrote = false;
            sh.log.entries.clear();
        }
        let quiet = !sh.log.wrote && sh.full == sh.cells.len();
        if fast && quiet && access == Touch::Read {
            if sh.log.entries.len() == LOG_CAPACITY {
                sh.apply_log(instance);
            }
            sh.log.entries.push(LoggedRead {
                addrs: *addrs,
                mask,
                base: base0,
                low,
                me,
                pc,
            });
            return;
        }
        sh.apply_log(instance);
        if access != Touch::Read {
            sh.log.wrote = true;
        }
        let full = &mut sh.full;
        if fast {
            // Fast path: one region, and each lane's bytes within one word (accesses are
            // aligned to their size).
            let cells = &mut sh.cells;
            (race, uninit) = match access {
                Touch::Read => fast_lanes(cells, base0, addrs, mask, low, true, |c, b| {
                    touch_read(c, b, interval, instance, me, pc)
                }),
                Touch::Write => fast_lanes(cells, base0, addrs, mask, low, false, |c, b| {
                    touch_write(c, b, interval, instance, me, pc, full)
                }),
                Touch::Atomic { reads, writes } => {
                    fast_lanes(cells, base0, addrs, mask, low, true, |c, b| {
                        touch_atomic(c, b, interval, instance, reads, writes, full)
                    })
                }
            };
            return self.report_threadgroup(regions, access, (race, uninit), simd, pc);
        }
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros();
            m &= m - 1;
            let addr = addrs[lane as usize];
            let base = if (addr ^ first) >> OFFSET_BITS == 0 {
                base0
            } else {
                match block_base(addr) {
                    Some(b) => b,
                    None => continue,
                }
            };
            let at = base + offset_of(addr) as usize;
            // The words of [at, at + n), each with the mask of its bytes in the range.
            let (mut word, end) = (at / 4, at + n);
            while word * 4 < end {
                let lo = (word * 4).max(at) - word * 4;
                let hi = (word * 4 + 4).min(end) - word * 4;
                let bytes = ((1u32 << hi) - (1u32 << lo)) as u8;
                let Some(c) = sh.cells.get_mut(word) else {
                    break;
                };
                let found = match access {
                    Touch::Read => touch_read(c, bytes, interval, instance, me, pc),
                    Touch::Write => touch_write(c, bytes, interval, instance, me, pc, full),
                    Touch::Atomic { reads, writes } => {
                        touch_atomic(c, bytes, interval, instance, reads, writes, full)
                    }
                };
                // The word's own address: a vector access names the word it found.
                let here = addr + ((word * 4).max(at) - at) as u64;
                if found.uninit && uninit.is_none() {
                    uninit = Some((lane, here));
                }
                if let Some((other, other_pc, wrote)) = found.race
                    && race.is_none()
                {
                    race = Some((lane, here, other, other_pc, wrote));
                }
                word += 1;
            }
        }
        self.report_threadgroup(regions, access, (race, uninit), simd, pc);
    }
}

impl Shadow {
    /// Applies the logged reads to the cells, in order. They find nothing (see
    /// [`ReadLog`]).
    fn apply_log(&mut self, instance: u32) {
        let Some(interval) = self.log.interval else {
            return;
        };
        for r in self.log.entries.drain(..) {
            fast_lanes(
                &mut self.cells,
                r.base,
                &r.addrs,
                r.mask,
                r.low,
                true,
                |c, b| touch_read(c, b, interval, instance, r.me, r.pc),
            );
        }
    }
}

impl Sanitizer {
    /// Reports what a threadgroup access found, once per instruction and kind.
    fn report_threadgroup(
        &mut self,
        regions: &Regions,
        access: Touch,
        (race, uninit): FirstFound,
        simd: u32,
        pc: u32,
    ) {
        if let Some((lane, addr)) = uninit
            && self.first(FaultKind::UninitializedThreadgroupRead, pc)
        {
            let (name, off) = located(regions, addr);
            self.report(Pending {
                trap: Trap {
                    kind: FaultKind::UninitializedThreadgroupRead,
                    message: format!(
                        "read of threadgroup memory `{name}` at offset {off}, which no thread of this threadgroup has written (threadgroup memory starts undefined)"
                    ),
                    lane,
                    address: Some(addr),
                    buffer: Some(name),
                    offset: Some(off),
                },
                pc,
                simd,
                other_pc: None,
            });
        }
        if let Some((lane, addr, other, other_pc, other_wrote)) = race
            && self.first(FaultKind::ThreadgroupRace, pc)
        {
            let (name, off) = located(regions, addr);
            let what = if access == Touch::Read {
                "read"
            } else {
                "write"
            };
            let whose = match (other, other_wrote) {
                (MANY, _) => "other SIMD-groups' reads".to_string(),
                (o, true) => format!("SIMD-group {}'s write", o - 1),
                (o, false) => format!("SIMD-group {}'s read", o - 1),
            };
            self.report(Pending {
                trap: Trap {
                    kind: FaultKind::ThreadgroupRace,
                    message: format!(
                        "{what} of threadgroup memory `{name}` at offset {off} by SIMD-group {simd} races with {whose} of the same bytes: no threadgroup_barrier between them"
                    ),
                    lane,
                    address: Some(addr),
                    buffer: Some(name),
                    offset: Some(off),
                },
                pc,
                simd,
                other_pc: Some(other_pc),
            });
        }
    }
}

/// What one lane's access found: a read of never-written bytes, and a conflicting
/// access `(SIMD-group + 1 or MANY, its pc, whether it wrote)`.
#[derive(Default)]
struct Found {
    uninit: bool,
    race: Option<(u8, u32, bool)>,
}

/// The first race `(lane, address, other SIMD-group, its pc, whether it wrote)` and the
/// first uninitialized read `(lane, address)` of an access.
type FirstFound = (Option<(u32, u64, u8, u32, bool)>, Option<(u32, u64)>);

/// Applies `touch` to the cell of each active lane's access of at most 4 bytes in one
/// region whose block starts at `base` (`low` is the mask of the access's bytes at
/// offset 0 of a word). With `repeat_idempotent` (reads and atomics: touching a cell
/// again for the same SIMD-group changes nothing and finds nothing new, whatever other
/// lanes did in between), a lane with the same address as an earlier active lane (the
/// previous one, or the one 16 lanes below: the other row of a 16-wide threadgroup) is
/// skipped, which makes broadcast and row-repeated reads cheap.
#[inline(always)]
fn fast_lanes(
    cells: &mut [Cell],
    base: usize,
    addrs: &[u64; 32],
    mask: LaneMask,
    low: u8,
    repeat_idempotent: bool,
    mut touch: impl FnMut(&mut Cell, u8) -> Found,
) -> FirstFound {
    let (mut race, mut uninit) = (None, None);
    // No lane's address is `u64::MAX` (it is outside every region).
    let mut previous = u64::MAX;
    for (lane, &addr) in addrs.iter().enumerate() {
        if mask >> lane & 1 == 0 {
            continue;
        }
        if repeat_idempotent
            && (addr == previous
                || (lane >= 16 && mask >> (lane - 16) & 1 != 0 && addrs[lane - 16] == addr))
        {
            continue;
        }
        previous = addr;
        let at = base + offset_of(addr) as usize;
        let Some(c) = cells.get_mut(at / 4) else {
            continue;
        };
        let found = touch(c, low << (at % 4));
        if found.uninit && uninit.is_none() {
            uninit = Some((lane as u32, addr));
        }
        if let Some((other, other_pc, wrote)) = found.race
            && race.is_none()
        {
            race = Some((lane as u32, addr, other, other_pc, wrote));
        }
    }
    (race, uninit)
}

/// Forgets a cell's accesses from an earlier interval.
#[inline(always)]
fn refresh(c: &mut Cell, interval: u32) {
    if c.interval != interval {
        c.interval = interval;
        c.writer = NONE;
        c.reader = NONE;
        c.written = 0;
        c.read = 0;
    }
}

/// The bytes of a cell written in this threadgroup.
#[inline(always)]
fn initialized(c: &Cell, instance: u32) -> u8 {
    if c.written_in == instance { c.init } else { 0 }
}

/// A plain read of `bytes` of a word by SIMD-group `me`.
#[inline(always)]
fn touch_read(c: &mut Cell, bytes: u8, interval: u32, instance: u32, me: u8, pc: u32) -> Found {
    refresh(c, interval);
    let uninit = initialized(c, instance) & bytes != bytes;
    // A word written by several SIMD-groups (of different bytes) is not checked.
    let race = (c.writer != NONE && c.writer != me && c.writer != MANY && c.written & bytes != 0)
        .then_some((c.writer, c.pc, true));
    if c.writer == NONE {
        c.pc = pc;
    }
    c.reader = if c.reader == NONE || c.reader == me {
        me
    } else {
        MANY
    };
    c.read |= bytes;
    Found { uninit, race }
}

/// Marks `bytes` of a cell written in threadgroup instance `instance`, counting the
/// cells that become fully written in `full`.
#[inline(always)]
fn initialize(c: &mut Cell, bytes: u8, instance: u32, full: &mut usize) {
    let before = initialized(c, instance);
    c.init = before | bytes;
    c.written_in = instance;
    *full += (before != 0xf && c.init == 0xf) as usize;
}

/// A plain write of `bytes` of a word by SIMD-group `me`.
#[inline(always)]
fn touch_write(
    c: &mut Cell,
    bytes: u8,
    interval: u32,
    instance: u32,
    me: u8,
    pc: u32,
    full: &mut usize,
) -> Found {
    refresh(c, interval);
    let race = if c.writer != NONE && c.writer != me && c.written & bytes != 0 {
        Some((c.writer, c.pc, true))
    } else if c.reader != NONE && c.reader != me && c.read & bytes != 0 {
        Some((c.reader, c.pc, false))
    } else {
        None
    };
    if c.writer == NONE || c.writer == me || c.written & !bytes == 0 {
        // This SIMD-group now owns every byte written in the interval.
        c.written = if c.writer == me {
            c.written | bytes
        } else {
            bytes
        };
        c.writer = me;
    } else {
        c.writer = MANY;
        c.written |= bytes;
    }
    c.pc = pc;
    initialize(c, bytes, instance, full);
    Found {
        uninit: false,
        race,
    }
}

/// An atomic on `bytes` of a word: never a race, but it reads the old value.
#[inline(always)]
fn touch_atomic(
    c: &mut Cell,
    bytes: u8,
    interval: u32,
    instance: u32,
    reads: bool,
    writes: bool,
    full: &mut usize,
) -> Found {
    refresh(c, interval);
    let uninit = reads && initialized(c, instance) & bytes != bytes;
    if writes {
        initialize(c, bytes, instance, full);
    }
    Found { uninit, race: None }
}

/// The region name and offset of a valid address.
fn located(regions: &Regions, addr: u64) -> (String, u64) {
    let name = regions
        .0
        .get((addr >> OFFSET_BITS) as usize)
        .map_or_else(|| "?".to_string(), |r| r.name.clone());
    (name, offset_of(addr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Region, address};

    fn regions() -> Regions {
        Regions(vec![
            Region {
                name: "null".into(),
                size: 0,
                storage: Storage::Global(u32::MAX),
                writable: false,
            },
            Region {
                name: "tile".into(),
                size: 64,
                storage: Storage::Threadgroup(0),
                writable: true,
            },
            Region {
                name: "out".into(),
                size: 64,
                storage: Storage::Global(0),
                writable: true,
            },
        ])
    }

    /// Runs accesses `(simd, access, word)` in one interval of one threadgroup; the kinds
    /// found.
    fn check(accesses: &[(u32, Touch, u64)]) -> Vec<FaultKind> {
        let mut s = Sanitizer::default();
        let mut shadow = Shadow::default();
        shadow.start(cells_for(64));
        let mut sh = TgShadow {
            shadow: &mut shadow,
            instance: 1,
            interval: 2,
        };
        for (pc, &(simd, access, word)) in accesses.iter().enumerate() {
            let addrs = [address(1, word * 4); 32];
            s.threadgroup_access(&mut sh, &regions(), access, &addrs, 4, 1, simd, pc as u32);
        }
        s.take_pending().into_iter().map(|p| p.trap.kind).collect()
    }

    use FaultKind::{ThreadgroupRace as Race, UninitializedThreadgroupRead as Uninit};
    use Touch::{Read, Write};

    #[test]
    fn write_then_other_simdgroups_read_races() {
        assert_eq!(check(&[(0, Write, 0), (1, Read, 0)]), [Race]);
    }

    #[test]
    fn read_then_other_simdgroups_write_races() {
        assert_eq!(check(&[(0, Write, 0), (0, Read, 0), (1, Write, 0)]), [Race]);
    }

    #[test]
    fn one_simdgroup_alone_never_races() {
        assert_eq!(check(&[(0, Write, 0), (0, Read, 0), (0, Write, 0)]), []);
    }

    #[test]
    fn different_bytes_never_race_and_reads_share() {
        assert_eq!(
            check(&[(0, Write, 0), (1, Write, 1), (0, Read, 0), (1, Read, 1)]),
            []
        );
        assert_eq!(check(&[(0, Write, 0), (0, Read, 0)]), []);
    }

    #[test]
    fn bytes_of_one_word_are_told_apart() {
        let mut s = Sanitizer::default();
        let mut shadow = Shadow::default();
        shadow.start(cells_for(64));
        let mut sh = TgShadow {
            shadow: &mut shadow,
            instance: 1,
            interval: 2,
        };
        let byte = |i: u64| [address(1, i); 32];
        let r = regions();
        // SIMD-groups 0 and 1 write bytes 0 and 1, then each reads its own: no race.
        s.threadgroup_access(&mut sh, &r, Write, &byte(0), 1, 1, 0, 0);
        s.threadgroup_access(&mut sh, &r, Write, &byte(1), 1, 1, 1, 1);
        s.threadgroup_access(&mut sh, &r, Read, &byte(0), 1, 1, 0, 2);
        assert!(s.take_pending().is_empty());
        // Byte 2 was never written; byte 3 is written by SIMD-group 2 while 0 read it.
        s.threadgroup_access(&mut sh, &r, Read, &byte(2), 1, 1, 0, 3);
        s.threadgroup_access(&mut sh, &r, Write, &[address(1, 2); 32], 2, 1, 2, 4);
        let kinds: Vec<_> = s.take_pending().into_iter().map(|p| p.trap.kind).collect();
        assert_eq!(kinds, [Uninit, Race]);
    }

    #[test]
    fn unwritten_bytes_are_uninitialized() {
        assert_eq!(check(&[(0, Read, 3)]), [Uninit]);
        let atomic_add = Touch::Atomic {
            reads: true,
            writes: true,
        };
        assert_eq!(check(&[(0, atomic_add, 3)]), [Uninit]);
        // Atomics do not race with each other.
        assert_eq!(
            check(&[(0, Write, 3), (0, atomic_add, 3), (1, atomic_add, 3)]),
            []
        );
    }

    #[test]
    fn a_new_interval_forgets_accesses_but_not_writes() {
        let mut s = Sanitizer::default();
        let mut shadow = Shadow::default();
        shadow.start(cells_for(64));
        let addrs = [address(1, 0); 32];
        let mut sh = TgShadow {
            shadow: &mut shadow,
            instance: 1,
            interval: 2,
        };
        s.threadgroup_access(&mut sh, &regions(), Write, &addrs, 4, 1, 0, 0);
        sh.interval = 3;
        s.threadgroup_access(&mut sh, &regions(), Read, &addrs, 4, 1, 1, 1);
        assert!(s.take_pending().is_empty());
        // Another threadgroup instance sees the bytes as never written.
        sh.instance = 4;
        s.threadgroup_access(&mut sh, &regions(), Read, &addrs, 4, 1, 1, 1);
        assert_eq!(s.take_pending()[0].trap.kind, Uninit);
    }

    /// Writes every word of the 64-byte region by SIMD-group 0 (pc 100), then runs
    /// `(simd, access, word, new interval first)` accesses; the findings with their
    /// instruction and the other access's.
    fn check_after_filling(
        accesses: &[(u32, Touch, u64, bool)],
    ) -> Vec<(FaultKind, u32, Option<u32>)> {
        let mut s = Sanitizer::default();
        let mut shadow = Shadow::default();
        shadow.start(cells_for(64));
        let mut sh = TgShadow {
            shadow: &mut shadow,
            instance: 1,
            interval: 2,
        };
        let r = regions();
        let all: [u64; 32] = std::array::from_fn(|l| address(1, (l as u64 % 16) * 4));
        s.threadgroup_access(&mut sh, &r, Write, &all, 4, 0xffff, 0, 100);
        assert_eq!(sh.shadow.full, 16);
        sh.interval = 3;
        for (pc, &(simd, access, word, barrier)) in accesses.iter().enumerate() {
            if barrier {
                sh.interval += 1;
            }
            let addrs = [address(1, word * 4); 32];
            s.threadgroup_access(&mut sh, &r, access, &addrs, 4, 1, simd, pc as u32);
        }
        s.take_pending()
            .into_iter()
            .map(|p| (p.trap.kind, p.pc, p.other_pc))
            .collect()
    }

    #[test]
    fn logged_reads_still_race_with_a_later_write() {
        // Reads of a fully written block are logged; the write applies them first.
        let found = check_after_filling(&[
            (1, Read, 0, false),
            (2, Read, 5, false),
            (1, Read, 5, false),
            (0, Write, 5, false),
        ]);
        assert_eq!(found, [(Race, 3, Some(2))]);
        // The race names the last reader's instruction, as when applied at once.
        let found = check_after_filling(&[(1, Read, 5, false), (0, Write, 5, false)]);
        assert_eq!(found, [(Race, 1, Some(0))]);
        // A barrier in between forgets the reads.
        let found = check_after_filling(&[(1, Read, 5, false), (0, Write, 5, true)]);
        assert_eq!(found, []);
        // One SIMD-group's own reads never race with its write.
        let found = check_after_filling(&[(0, Read, 5, false), (0, Write, 5, false)]);
        assert_eq!(found, []);
    }

    #[test]
    fn reads_after_a_write_in_the_interval_are_checked_at_once() {
        let found = check_after_filling(&[
            (0, Write, 2, false),
            (1, Read, 2, false),
            (2, Read, 3, false),
        ]);
        assert_eq!(found, [(Race, 1, Some(0))]);
    }

    #[test]
    fn the_log_applies_itself_when_full() {
        let mut accesses: Vec<_> = (0..LOG_CAPACITY as u64 + 10)
            .map(|i| (1 + (i % 3) as u32, Read, i % 16, false))
            .collect();
        // The last read of word 7 is by SIMD-group 1 at pc 511 + ...; find it.
        let last = accesses.iter().rposition(|a| a.2 == 7).unwrap() as u32;
        accesses.push((0, Write, 7, false));
        let found = check_after_filling(&accesses);
        assert_eq!(found, [(Race, accesses.len() as u32 - 1, Some(last))]);
    }

    #[test]
    fn unit_stride_device_stores_race_like_lane_by_lane_ones() {
        // "out" of 64 words. Threadgroup 0 stores byte 1 of words 0..31 (a `uchar4`
        // member store) and whole words 32..63; threadgroup 1 byte 0 of words 0..31 (no
        // race: other bytes); threadgroup 2 whole words 0..31 (a race in lane 0). All
        // lanes take the unit-stride path; with lane 31 off, the lane-by-lane one.
        let mut r = regions();
        r.0[2].size = 256;
        let from =
            |first: u64| -> [u64; 32] { std::array::from_fn(|l| address(2, first + l as u64 * 4)) };
        let run = |mask: u32| {
            let mut s = Sanitizer::default();
            let mut found = Vec::new();
            for (addrs, n, group, pc) in [
                (from(1), 1, 0, 3),
                (from(128), 4, 0, 4),
                (from(0), 1, 1, 5),
                (from(0), 4, 2, 7),
            ] {
                s.device_store(&r, &addrs, n, mask, group, 0, pc);
                found.extend(s.take_pending().into_iter().map(|p| {
                    let t = p.trap;
                    (p.pc, t.kind, t.lane, t.offset)
                }));
            }
            found
        };
        let want = [(7, FaultKind::DeviceRace, 0, Some(0))];
        assert_eq!(run(u32::MAX), want);
        assert_eq!(run(u32::MAX >> 1), want);
    }

    #[test]
    fn device_stores_of_two_threadgroups_to_one_byte_race() {
        let mut s = Sanitizer::default();
        // Lanes store 2-byte halves of words: lanes 0 and 1 share word 0.
        let addrs: [u64; 32] = std::array::from_fn(|l| address(2, l as u64 * 2));
        s.device_store(&regions(), &addrs, 2, 0xffff, 0, 0, 7);
        assert!(s.take_pending().is_empty(), "one threadgroup alone");
        s.device_store(&regions(), &addrs, 2, 0x1, 0, 1, 7);
        assert!(s.take_pending().is_empty(), "the same threadgroup again");
        s.device_store(&regions(), &addrs, 2, 0x6, 1, 0, 7);
        let p = s.take_pending();
        let t = &p[0].trap;
        assert_eq!(
            (t.kind, t.lane, t.offset),
            (FaultKind::DeviceRace, 1, Some(2))
        );
        s.device_store(&regions(), &addrs, 2, 0x6, 2, 0, 7);
        assert!(s.take_pending().is_empty(), "reported once per instruction");
        assert_eq!(s.count(FaultKind::DeviceRace, 7), 2);
    }
}
