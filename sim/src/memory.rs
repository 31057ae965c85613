//! Memory: one 64-bit address space of regions, each access bounds- and alignment-checked.
//!
//! An address is `(region << 40) | offset`; region 0 is null. Regions are, in order: one
//! per launch buffer (in `launch.buffers` order), one per module data object (read-only),
//! then one per threadgroup parameter and threadgroup allocation (storage per
//! threadgroup), then one per thread-memory allocation (storage per lane). The same
//! threadgroup or thread address names different storage in different threadgroups or
//! lanes: a thread-space access resolves against the accessing lane's own frame.

use std::sync::Arc;

use metalsim_isa::{Function, Module, Op, ParamKind, Space};
use metalsim_launch::Launch;

use crate::error::SimError;
use crate::fault::{FaultKind, Trap};

/// Bits of an address that are the offset within its region.
pub(crate) const OFFSET_BITS: u32 = 40;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

/// The address of `offset` in region `region`.
pub(crate) fn address(region: u32, offset: u64) -> u64 {
    ((region as u64) << OFFSET_BITS) | offset
}

/// Where a region's bytes live.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Storage {
    /// `Memory::global[i]`: a launch buffer or a data object.
    Global(u32),
    /// In each threadgroup's block, from this offset.
    Threadgroup(u32),
    /// In each lane's frame, from this offset.
    Thread(u32),
}

/// One region of the address space.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    /// The parameter, allocation or data object's name.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Where its bytes are.
    pub storage: Storage,
    /// Stores and atomics are allowed.
    pub writable: bool,
}

/// A checked access: which storage and the byte index in it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Located {
    /// `global[buffer][at..]`.
    Global(u32, usize),
    /// The threadgroup's block at `at`.
    Threadgroup(usize),
    /// The lane's frame at `at` (frame offset included).
    Thread(usize),
}

/// The kind of access, for messages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum AccessKind {
    /// A load.
    Load,
    /// A store.
    Store,
    /// An atomic read-modify-write.
    Atomic,
}

impl AccessKind {
    fn name(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Atomic => "atomic",
        }
    }
}

/// The addresses the address-producing instructions give, known before the run.
#[derive(Clone, Debug, Default)]
pub(crate) struct AddressMap {
    buffers: Vec<(u32, u64)>,
    tg_params: Vec<(u32, u64)>,
    tg_allocs: Vec<u64>,
    locals: Vec<u64>,
    data: Vec<u64>,
}

impl AddressMap {
    /// The value of an address instruction (`buffer_addr.n` ...). The verifier and the
    /// launch checks guarantee the binding exists; a missing one gives null.
    pub fn of(&self, op: Op) -> u64 {
        let find =
            |list: &[(u32, u64)], n: u32| list.iter().find(|e| e.0 == n).map(|e| e.1).unwrap_or(0);
        match op {
            Op::BufferAddr(n) => find(&self.buffers, n),
            Op::ThreadgroupParamAddr(n) => find(&self.tg_params, n),
            Op::ThreadgroupAddr(n) => self.tg_allocs.get(n as usize).copied().unwrap_or(0),
            Op::LocalAddr(n) => self.locals.get(n as usize).copied().unwrap_or(0),
            Op::DataAddr(n) => self.data.get(n as usize).copied().unwrap_or(0),
            _ => 0,
        }
    }
}

/// Every region of a dispatch, by id (`0` is null).
#[derive(Clone, Debug)]
pub(crate) struct Regions(pub Vec<Region>);

/// The bytes of a global region: owned by one machine (writable regions), or shared by
/// the machines of every worker of a parallel run (read-only regions, which no store or
/// atomic can reach: a fork then copies none of their bytes).
#[derive(Clone, Debug)]
pub(crate) enum Bytes {
    /// This machine's own copy.
    Owned(Vec<u8>),
    /// One copy for every machine.
    Shared(Arc<Vec<u8>>),
}

impl Bytes {
    /// The bytes.
    #[inline(always)]
    pub fn get(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Shared(v) => v,
        }
    }

    /// The bytes, to change (a shared copy becomes this machine's own first; accesses
    /// are checked against the region's `writable`, so no write reaches one).
    #[inline(always)]
    pub fn get_mut(&mut self) -> &mut [u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Shared(v) => Arc::make_mut(v).as_mut_slice(),
        }
    }

    fn into_vec(self) -> Vec<u8> {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Shared(v) => Arc::try_unwrap(v).unwrap_or_else(|v| (*v).clone()),
        }
    }
}

/// The regions of one dispatch and the storage of its global ones.
#[derive(Clone, Debug)]
pub(crate) struct Memory {
    /// Regions by id.
    pub regions: Regions,
    /// Storage of the buffers (first, in launch order) and the data objects.
    pub global: Vec<Bytes>,
    /// Bytes of one threadgroup's block.
    pub threadgroup_bytes: usize,
    /// Bytes of threadgroup memory the kernel asks for (parameters and allocations,
    /// without layout padding), for the launch limit.
    pub threadgroup_request: u64,
    /// Bytes of one lane's thread-memory frame.
    pub frame_bytes: usize,
    /// The values of address instructions.
    pub map: AddressMap,
    buffer_count: usize,
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)) * a.max(1)
}

impl Memory {
    /// Lays out the regions of kernel `f` for a launch. Fails when a parameter has no
    /// binding.
    pub fn new(module: &Module, f: &Function, launch: &Launch) -> Result<Memory, SimError> {
        let mut regions = vec![Region {
            name: "null".into(),
            size: 0,
            storage: Storage::Global(u32::MAX),
            writable: false,
        }];
        let mut global = Vec::new();
        let mut map = AddressMap::default();
        for p in f.params.iter().filter(|p| p.kind == ParamKind::Buffer) {
            if launch.buffer(p.index).is_none() {
                return Err(SimError::MissingBuffer {
                    index: p.index,
                    name: p.name.clone(),
                });
            }
        }
        for b in &launch.buffers {
            let param = f.param(ParamKind::Buffer, b.index);
            let id = regions.len() as u32;
            let writable = param.is_none_or(|p| !p.readonly && p.space != Space::Constant);
            regions.push(Region {
                name: param
                    .map(|p| p.name.clone())
                    .unwrap_or_else(|| b.name.clone()),
                size: b.bytes.len() as u64,
                storage: Storage::Global(global.len() as u32),
                writable,
            });
            global.push(if writable {
                Bytes::Owned(b.bytes.clone())
            } else {
                Bytes::Shared(Arc::new(b.bytes.clone()))
            });
            if !map.buffers.iter().any(|e| e.0 == b.index) {
                map.buffers.push((b.index, address(id, 0)));
            }
        }
        let buffer_count = global.len();
        for d in &module.data {
            let id = regions.len() as u32;
            regions.push(Region {
                name: d.name.clone(),
                size: d.bytes.len() as u64,
                storage: Storage::Global(global.len() as u32),
                writable: false,
            });
            global.push(Bytes::Shared(Arc::new(d.bytes.clone())));
            map.data.push(address(id, 0));
        }
        // Threadgroup memory: parameters, then allocations, each aligned to 16 bytes.
        let mut tg_off = 0u64;
        let mut request = 0u64;
        for p in f.params.iter().filter(|p| p.kind == ParamKind::Threadgroup) {
            let size = launch.threadgroup_memory(p.index).ok_or_else(|| {
                SimError::MissingThreadgroupMemory {
                    index: p.index,
                    name: p.name.clone(),
                }
            })? as u64;
            tg_off = align_up(tg_off, (p.elem_align as u64).max(16));
            let id = regions.len() as u32;
            regions.push(Region {
                name: p.name.clone(),
                size,
                storage: Storage::Threadgroup(tg_off as u32),
                writable: true,
            });
            map.tg_params.push((p.index, address(id, 0)));
            tg_off += size;
            request += size;
        }
        for a in &f.threadgroup_allocs {
            tg_off = align_up(tg_off, (a.align as u64).max(16));
            let id = regions.len() as u32;
            regions.push(Region {
                name: a.name.clone(),
                size: a.size as u64,
                storage: Storage::Threadgroup(tg_off as u32),
                writable: true,
            });
            map.tg_allocs.push(address(id, 0));
            tg_off += a.size as u64;
            request += a.size as u64;
        }
        let mut frame = 0u64;
        for a in &f.locals {
            frame = align_up(frame, (a.align as u64).max(8));
            let id = regions.len() as u32;
            regions.push(Region {
                name: a.name.clone(),
                size: a.size as u64,
                storage: Storage::Thread(frame as u32),
                writable: true,
            });
            map.locals.push(address(id, 0));
            frame += a.size as u64;
        }
        Ok(Memory {
            regions: Regions(regions),
            global,
            threadgroup_bytes: tg_off as usize,
            threadgroup_request: request,
            frame_bytes: align_up(frame, 8) as usize,
            map,
            buffer_count,
        })
    }

    /// The final contents of the launch buffers, in launch order.
    pub fn into_buffers(mut self) -> Vec<Vec<u8>> {
        self.global.truncate(self.buffer_count);
        self.global.into_iter().map(Bytes::into_vec).collect()
    }
}

impl Located {
    /// The same storage, `off` bytes further.
    #[inline(always)]
    pub fn at(self, off: u64) -> Located {
        let off = off as usize;
        match self {
            Located::Global(i, at) => Located::Global(i, at + off),
            Located::Threadgroup(at) => Located::Threadgroup(at + off),
            Located::Thread(at) => Located::Thread(at + off),
        }
    }
}

/// The bits in which some active lane's address differs from `first`. Branch-free; with
/// all 32 lanes active (the common case) the loop vectorizes.
#[inline(always)]
pub(crate) fn active_bits_differ(addrs: &[u64; 32], mask: u32, first: u64) -> u64 {
    if mask == u32::MAX {
        return addrs.iter().fold(0, |d, &a| d | (a ^ first));
    }
    let mut differ = 0u64;
    for (lane, &a) in addrs.iter().enumerate() {
        let keep = 0u64.wrapping_sub((mask >> lane & 1) as u64);
        differ |= (a ^ first) & keep;
    }
    differ
}

/// The largest offset of an active lane's address (a scalar loop: the 64-bit maximum
/// does not vectorize on baseline x86-64, so it runs only when the cheap bound fails).
fn max_offset(addrs: &[u64; 32], mask: u32) -> u64 {
    addrs
        .iter()
        .enumerate()
        .filter(|&(lane, _)| mask >> lane & 1 != 0)
        .map(|(_, &a)| a & OFFSET_MASK)
        .max()
        .unwrap_or(0)
}

/// The offset part of an address.
#[inline(always)]
pub(crate) fn offset_of(addr: u64) -> u64 {
    addr & OFFSET_MASK
}

impl Regions {
    /// Checks the accesses of every lane of `mask` at once, for the common case where they
    /// all fall in one region and none faults: the region's storage at offset 0 (add each
    /// lane's [`offset_of`]). `None` otherwise; then check lane by lane with
    /// [`Regions::locate`] to find the first fault.
    #[inline]
    pub fn locate_all_in_one(
        &self,
        space: Space,
        addrs: &[u64; 32],
        bytes: u32,
        kind: AccessKind,
        mask: u32,
    ) -> Option<Located> {
        if mask == 0 {
            return None;
        }
        let first = addrs[mask.trailing_zeros() as usize];
        let differ = active_bits_differ(addrs, mask, first);
        // Every active address has only bits of `first | differ`, which is also their OR
        // (`first` is one of them): its offset bounds every lane's offset from above.
        let any = first | differ;
        let id = (first >> OFFSET_BITS) as usize;
        let r = self.0.get(id)?;
        let space_ok = match r.storage {
            Storage::Global(_) => matches!(space, Space::Device | Space::Constant),
            Storage::Threadgroup(_) => space == Space::Threadgroup,
            Storage::Thread(_) => space == Space::Thread,
        };
        let in_bounds = |max_off: u64| max_off + bytes as u64 <= r.size;
        let ok = id != 0
            && differ >> OFFSET_BITS == 0
            && space_ok
            && any & (bytes as u64 - 1) == 0
            && (kind == AccessKind::Load || r.writable)
            && (in_bounds(any & OFFSET_MASK) || in_bounds(max_offset(addrs, mask)));
        ok.then_some(match r.storage {
            Storage::Global(i) => Located::Global(i, 0),
            Storage::Threadgroup(base) => Located::Threadgroup(base as usize),
            Storage::Thread(base) => Located::Thread(base as usize),
        })
    }

    /// Checks an access of `bytes` bytes at `addr` in address space `space` by `lane`.
    #[inline]
    pub fn locate(
        &self,
        space: Space,
        addr: u64,
        bytes: u32,
        kind: AccessKind,
        lane: u32,
    ) -> Result<Located, Trap> {
        let id = (addr >> OFFSET_BITS) as usize;
        let off = addr & OFFSET_MASK;
        let trap = |kind_: FaultKind, message: String, region: Option<&Region>| Trap {
            kind: kind_,
            message,
            lane,
            address: Some(addr),
            buffer: region.map(|r| r.name.clone()),
            offset: region.map(|_| off),
        };
        let r = match self.0.get(id) {
            Some(r) if id != 0 => r,
            _ => {
                return Err(trap(
                    FaultKind::OutOfBounds,
                    format!(
                        "{} of {bytes} bytes at address {addr:#x}, which is in no buffer or allocation",
                        kind.name()
                    ),
                    None,
                ));
            }
        };
        let space_ok = match r.storage {
            Storage::Global(_) => matches!(space, Space::Device | Space::Constant),
            Storage::Threadgroup(_) => space == Space::Threadgroup,
            Storage::Thread(_) => space == Space::Thread,
        };
        if !space_ok {
            return Err(trap(
                FaultKind::OutOfBounds,
                format!(
                    "{} {} of `{}`, which is not in {} memory",
                    space.name(),
                    kind.name(),
                    r.name,
                    space.name()
                ),
                Some(r),
            ));
        }
        if off.checked_add(bytes as u64).is_none_or(|end| end > r.size) {
            return Err(trap(
                FaultKind::OutOfBounds,
                format!(
                    "{}-byte {} at offset {off} of `{}`, which has {} bytes",
                    bytes,
                    kind.name(),
                    r.name,
                    r.size
                ),
                Some(r),
            ));
        }
        if !off.is_multiple_of(bytes as u64) {
            return Err(trap(
                FaultKind::Misaligned,
                format!(
                    "{}-byte {} at offset {off} of `{}` is not {bytes}-byte aligned",
                    bytes,
                    kind.name(),
                    r.name
                ),
                Some(r),
            ));
        }
        if kind != AccessKind::Load && !r.writable {
            return Err(trap(
                FaultKind::ReadOnlyWrite,
                format!("{} to `{}`, which is read-only", kind.name(), r.name),
                Some(r),
            ));
        }
        Ok(match r.storage {
            Storage::Global(i) => Located::Global(i, off as usize),
            Storage::Threadgroup(base) => Located::Threadgroup(base as usize + off as usize),
            Storage::Thread(base) => Located::Thread(base as usize + off as usize),
        })
    }
}

/// Global writes made at once: one run of bytes (a store instruction's lanes at
/// consecutive addresses, or one lane's write), or a store instruction's lanes at
/// scattered places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    /// `Memory::global` index.
    storage: u32,
    /// Bytes of the run, or of each lane's piece when `scattered`.
    len: u32,
    /// Pieces (lanes) when `scattered`.
    count: u32,
    /// Whether the pieces' places are in `WriteLog::places` from `at` on; else `at` is
    /// the run's byte index in the storage.
    scattered: bool,
    at: usize,
}

impl Entry {
    /// Bytes of the log's data it takes: the bytes before, then after.
    fn data_len(&self) -> usize {
        2 * self.len as usize
            * if self.scattered {
                self.count as usize
            } else {
                1
            }
    }
}

/// The global writes of a stretch, in order, with the bytes each replaced: a [`Spaces`]
/// with a log records every global write this way, so the writes can be undone (the
/// bytes before) and replayed on another copy of the memory (the bytes after). A store
/// instruction is one entry: its bytes before and after, and a byte index per lane
/// unless its lanes write one run of consecutive addresses.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct WriteLog {
    entries: Vec<Entry>,
    /// Each entry's bytes before the write, then after it, in entry order.
    data: Vec<u8>,
    /// The byte index of each piece of the scattered entries.
    places: Vec<usize>,
    /// Lanes' writes logged.
    lanes: usize,
}

impl WriteLog {
    /// An empty log with room for as much as this one holds (the next stretch likely
    /// writes as much: room at once, not by doubling).
    pub fn with_room_of(&self) -> WriteLog {
        WriteLog {
            entries: Vec::with_capacity(self.entries.len()),
            data: Vec::with_capacity(self.data.len()),
            places: Vec::with_capacity(self.places.len()),
            lanes: 0,
        }
    }

    /// Whether nothing is logged.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Lanes' writes logged.
    #[inline]
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Forgets every write.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.data.clear();
        self.places.clear();
        self.lanes = 0;
    }

    /// Writes `put` into `mem[at..at + len]` (storage `storage`), logging the bytes
    /// before and after as `lanes` lanes' writes.
    #[inline(always)]
    fn run(
        &mut self,
        storage: u32,
        mem: &mut [u8],
        at: usize,
        len: usize,
        lanes: usize,
        put: impl FnOnce(&mut [u8]),
    ) {
        let run = &mut mem[at..at + len];
        self.entries.push(Entry {
            storage,
            len: len as u32,
            count: 1,
            scattered: false,
            at,
        });
        self.data.extend_from_slice(run);
        put(run);
        self.data.extend_from_slice(run);
        self.lanes += lanes;
    }

    /// Writes the low `N` bytes of each active lane's value at `start` plus its
    /// address's offset in `mem` (storage `storage`), in ascending lane order, logging
    /// them as one scattered entry.
    #[inline(always)]
    fn scattered<const N: usize>(
        &mut self,
        (storage, start): (u32, usize),
        mem: &mut [u8],
        addrs: &[u64; 32],
        values: &[u64; 32],
        mask: u32,
    ) {
        let count = mask.count_ones() as usize;
        let p0 = self.places.len();
        self.places.resize(p0 + count, 0);
        let d0 = self.data.len();
        self.data.resize(d0 + 2 * count * N, 0);
        let places = &mut self.places[p0..];
        let (before, after) = self.data[d0..].split_at_mut(count * N);
        let mut m = mask;
        let mut i = 0;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let at = start + offset_of(addrs[lane]) as usize;
            places[i] = at;
            let b: &mut [u8; N] = (&mut mem[at..at + N]).try_into().expect("N bytes");
            before[i * N..(i + 1) * N].copy_from_slice(b);
            let v: [u8; N] = values[lane].to_le_bytes()[..N].try_into().expect("N bytes");
            *b = v;
            after[i * N..(i + 1) * N].copy_from_slice(&v);
            i += 1;
        }
        self.entries.push(Entry {
            storage,
            len: N as u32,
            count: count as u32,
            scattered: true,
            at: p0,
        });
        self.lanes += count;
    }
}

impl Memory {
    /// Undoes `log` (writes made to this memory, in order), last write first.
    pub fn undo(&mut self, log: &WriteLog) {
        let mut end = log.data.len();
        for e in log.entries.iter().rev() {
            end -= e.data_len();
            self.put(e, log, &log.data[end..end + e.data_len() / 2], true);
        }
    }

    /// Replays `log` (writes made to a copy of this memory, in order).
    pub fn redo(&mut self, log: &WriteLog) {
        let mut start = 0;
        for e in &log.entries {
            let half = e.data_len() / 2;
            self.put(e, log, &log.data[start + half..start + 2 * half], false);
            start += 2 * half;
        }
    }

    /// Writes entry `e`'s `bytes` (before or after); a scattered entry's pieces in
    /// reverse lane order when `backwards` (an undo: the first lane's old bytes last).
    fn put(&mut self, e: &Entry, log: &WriteLog, bytes: &[u8], backwards: bool) {
        let Some(mem) = self.global.get_mut(e.storage as usize) else {
            return;
        };
        let mem = mem.get_mut();
        if !e.scattered {
            if let Some(m) = mem.get_mut(e.at..e.at + bytes.len()) {
                m.copy_from_slice(bytes);
            }
            return;
        }
        let places = &log.places[e.at..e.at + e.count as usize];
        match e.len {
            1 => put_pieces::<1>(mem, places, bytes, backwards),
            2 => put_pieces::<2>(mem, places, bytes, backwards),
            4 => put_pieces::<4>(mem, places, bytes, backwards),
            _ => put_pieces::<8>(mem, places, bytes, backwards),
        }
    }
}

/// Writes the `N`-byte pieces of `bytes` at their `places` in `mem`, in order or (an
/// undo) backwards; a fixed `N` makes each copy a move instead of a `memcpy` call.
#[inline(always)]
fn put_pieces<const N: usize>(mem: &mut [u8], places: &[usize], bytes: &[u8], backwards: bool) {
    let mut put = |at: usize, b: &[u8]| {
        if let (Some(m), Ok(b)) = (mem.get_mut(at..at + N), <&[u8; N]>::try_from(b)) {
            m.copy_from_slice(b);
        }
    };
    let pieces = places.iter().zip(bytes.chunks_exact(N));
    if backwards {
        pieces.rev().for_each(|(&at, b)| put(at, b));
    } else {
        pieces.for_each(|(&at, b)| put(at, b));
    }
}

/// Whether lane `l`'s address is `addrs[0] + l * n` in every lane (a unit-stride
/// access; branch-free, so it vectorizes).
#[inline(always)]
pub(crate) fn unit_stride(addrs: &[u64; 32], n: u32) -> bool {
    let first = addrs[0];
    let step = n as u64;
    let mut differ = 0u64;
    for (l, &a) in addrs.iter().enumerate() {
        differ |= a ^ first.wrapping_add(l as u64 * step);
    }
    differ == 0
}

/// Writes the low `N` bytes of each value in `values` one after another into `run`.
#[inline(always)]
fn put_lanes<const N: usize>(run: &mut [u8], values: &[u64]) {
    for (b, v) in run.chunks_exact_mut(N).zip(values) {
        b.copy_from_slice(&v.to_le_bytes()[..N]);
    }
}

/// [`put_lanes`] for `n` bytes per value.
#[inline(always)]
fn put_lanes_of(n: u32, run: &mut [u8], values: &[u64]) {
    match n {
        1 => put_lanes::<1>(run, values),
        2 => put_lanes::<2>(run, values),
        4 => put_lanes::<4>(run, values),
        _ => put_lanes::<8>(run, values),
    }
}

/// The storage one SIMD-group's accesses can reach: global buffers, its threadgroup's
/// block, its own thread-memory frames (32 of them, one per lane).
pub(crate) struct Spaces<'a> {
    /// Global storage.
    pub global: &'a mut [Bytes],
    /// The threadgroup's block.
    pub threadgroup: &'a mut [u8],
    /// The SIMD-group's frames, lane after lane.
    pub frames: &'a mut [u8],
    /// Bytes per frame.
    pub frame_bytes: usize,
    /// Where global writes are logged, when they are (parallel untimed runs).
    pub log: Option<&'a mut WriteLog>,
}

impl Spaces<'_> {
    /// Whether global writes are logged.
    #[inline]
    pub fn logging(&self) -> bool {
        self.log.is_some()
    }

    fn bytes(&mut self, loc: Located, lane: u32, n: usize) -> &mut [u8] {
        match loc {
            Located::Global(i, at) => &mut self.global[i as usize].get_mut()[at..at + n],
            Located::Threadgroup(at) => &mut self.threadgroup[at..at + n],
            Located::Thread(at) => {
                let at = lane as usize * self.frame_bytes + at;
                &mut self.frames[at..at + n]
            }
        }
    }

    /// The bytes of a global or threadgroup region from its start (`base` from
    /// [`Regions::locate_all_in_one`]), to read; `None` for thread memory, which differs
    /// per lane.
    #[inline]
    pub fn shared(&self, base: Located) -> Option<&[u8]> {
        match base {
            Located::Global(i, at) => Some(&self.global[i as usize].get()[at..]),
            Located::Threadgroup(at) => Some(&self.threadgroup[at..]),
            Located::Thread(_) => None,
        }
    }

    /// [`Spaces::shared`], to write.
    #[inline]
    pub fn shared_mut(&mut self, base: Located) -> Option<&mut [u8]> {
        match base {
            Located::Global(i, at) => Some(&mut self.global[i as usize].get_mut()[at..]),
            Located::Threadgroup(at) => Some(&mut self.threadgroup[at..]),
            Located::Thread(_) => None,
        }
    }

    /// Reads `n` (1, 2, 4 or 8) bytes, little endian.
    #[inline]
    pub fn read(&self, loc: Located, lane: u32, n: u32) -> u64 {
        let n = n as usize;
        let b = match loc {
            Located::Global(i, at) => &self.global[i as usize].get()[at..at + n],
            Located::Threadgroup(at) => &self.threadgroup[at..at + n],
            Located::Thread(at) => {
                let at = lane as usize * self.frame_bytes + at;
                &self.frames[at..at + n]
            }
        };
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(b);
        u64::from_le_bytes(v)
    }

    /// Writes the low `n` bytes of each active lane's value at `start` plus its offset in
    /// global storage `storage`, in ascending lane order, logging the writes as one
    /// entry (the stores of a logging run whose lanes all hit one region, checked).
    pub fn write_logged(
        &mut self,
        (storage, start): (u32, usize),
        addrs: &[u64; 32],
        values: &[u64; 32],
        mask: u32,
        n: u32,
    ) {
        let Some(log) = self.log.as_deref_mut() else {
            return;
        };
        let mem = self.global[storage as usize].get_mut();
        if mask == u32::MAX && unit_stride(addrs, n) {
            let at = start + offset_of(addrs[0]) as usize;
            log.run(storage, mem, at, 32 * n as usize, 32, |run| {
                put_lanes_of(n, run, values)
            });
            return;
        }
        let place = (storage, start);
        match n {
            1 => log.scattered::<1>(place, mem, addrs, values, mask),
            2 => log.scattered::<2>(place, mem, addrs, values, mask),
            4 => log.scattered::<4>(place, mem, addrs, values, mask),
            _ => log.scattered::<8>(place, mem, addrs, values, mask),
        }
    }

    /// Writes the low `n` bytes of `value`, little endian.
    #[inline]
    pub fn write(&mut self, loc: Located, lane: u32, n: u32, value: u64) {
        let len = n as usize;
        let bytes = &value.to_le_bytes()[..len];
        if let (Located::Global(storage, at), Some(log)) = (loc, self.log.as_deref_mut()) {
            let mem = self.global[storage as usize].get_mut();
            log.run(storage, mem, at, len, 1, |b| b.copy_from_slice(bytes));
            return;
        }
        self.bytes(loc, lane, len).copy_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A memory of one writable global buffer of `bytes`.
    fn memory(bytes: Vec<u8>) -> Memory {
        Memory {
            regions: Regions(vec![]),
            global: vec![Bytes::Owned(bytes)],
            threadgroup_bytes: 0,
            threadgroup_request: 0,
            frame_bytes: 0,
            map: AddressMap::default(),
            buffer_count: 1,
        }
    }

    /// A logging `Spaces` over `m`'s global storage, logging into `log`.
    fn spaces<'a>(m: &'a mut Memory, log: &'a mut WriteLog) -> Spaces<'a> {
        Spaces {
            global: &mut m.global,
            threadgroup: &mut [],
            frames: &mut [],
            frame_bytes: 0,
            log: Some(log),
        }
    }

    /// Writes `(at, bytes, value)` in order through a logging `Spaces`; the log.
    fn check(m: &mut Memory, writes: &[(usize, u32, u64)]) -> WriteLog {
        let mut log = WriteLog::default();
        let mut spaces = spaces(m, &mut log);
        for &(at, n, v) in writes {
            spaces.write(Located::Global(0, at), 0, n, v);
        }
        log
    }

    #[test]
    fn logged_writes_undo_to_the_start_and_replay_on_a_copy() {
        let start: Vec<u8> = (0..16).collect();
        let mut m = memory(start.clone());
        let mut copy = m.clone();
        // Overlapping writes: the undo must restore in reverse order.
        let log = check(
            &mut m,
            &[(0, 4, 0xaabb_ccdd), (2, 2, 0x1122), (8, 8, u64::MAX)],
        );
        let written = m.global[0].get().to_vec();
        assert_eq!(log.lanes(), 3);
        assert_eq!(
            &log.data[8..10],
            &[0xbb, 0xaa],
            "the second write saw the first"
        );
        assert_eq!(log.entries.len(), 3);
        m.undo(&log);
        assert_eq!(m.global[0].get(), start);
        copy.redo(&log);
        assert_eq!(copy.global[0].get(), written);
    }

    #[test]
    fn a_unit_stride_store_of_all_lanes_is_one_entry() {
        let mut m = memory(vec![0; 256]);
        let mut log = WriteLog::default();
        let addrs: [u64; 32] = std::array::from_fn(|l| 8 + l as u64 * 4);
        let values: [u64; 32] = std::array::from_fn(|l| l as u64 * 0x0101_0101);
        spaces(&mut m, &mut log).write_logged((0, 0), &addrs, &values, u32::MAX, 4);
        assert_eq!(log.entries.len(), 1);
        assert_eq!((log.lanes(), log.data.len()), (32, 256));
        assert_eq!(m.global[0].get()[8 + 31 * 4], 31);
    }

    proptest! {
        /// A logged store of any lanes and addresses (repeats and runs included) writes
        /// what lane-by-lane writes in ascending lane order write, counts its lanes, undoes
        /// to the start and replays on a copy.
        #[test]
        fn logged_stores_match_lane_by_lane_writes(
            slots in proptest::collection::vec(0u64..12, 32),
            values in proptest::collection::vec(any::<u64>(), 32),
            mask in any::<u32>(),
            n in prop_oneof![Just(1u32), Just(2), Just(4), Just(8)],
        ) {
            let start: Vec<u8> = (0..128).map(|i| i as u8).collect();
            let addrs: [u64; 32] = std::array::from_fn(|l| slots[l] * n as u64);
            let values: [u64; 32] = std::array::from_fn(|l| values[l]);
            let mut want = start.clone();
            for l in (0..32).filter(|l| mask >> l & 1 != 0) {
                let at = addrs[l] as usize;
                want[at..at + n as usize].copy_from_slice(&values[l].to_le_bytes()[..n as usize]);
            }
            let mut m = memory(start.clone());
            let mut copy = m.clone();
            let mut log = WriteLog::default();
            spaces(&mut m, &mut log).write_logged((0, 0), &addrs, &values, mask, n);
            prop_assert_eq!(m.global[0].get(), &want[..]);
            prop_assert_eq!(log.lanes(), mask.count_ones() as usize);
            copy.redo(&log);
            prop_assert_eq!(copy.global[0].get(), &want[..]);
            m.undo(&log);
            prop_assert_eq!(m.global[0].get(), &start[..]);
        }
    }
}
