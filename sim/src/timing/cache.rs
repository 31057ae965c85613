//! A set-associative cache with LRU replacement, dirty sectors, held bytes and fill times,
//! over line numbers. A line's dirty state is a mask of its sectors (bit `i`: sector `i`
//! was written), so a write-back moves only what was written; a model without sectors
//! marks whole lines with [`Cache::insert`]'s and [`Cache::mark_dirty`]'s `sectors` all
//! set. Beside it, a line keeps the mask of the units (the memory system's request
//! pieces) whose bytes it holds: all of them for a line filled from below
//! ([`HELD_ALL`]), only those written for one a store brought in, so that the memory
//! system can tell a sector written in part from a complete one when it leaves. Set
//! indices fold the upper line bits in (XOR), as hardware caches hash their index, so
//! that power-of-two strides do not pile into a few sets.

/// The held-units mask of a line whose every byte the cache has (filled from below).
pub(crate) const HELD_ALL: u64 = u64::MAX;

/// The sectors of `dirty` of which a line holds only some units (`held`), with
/// `2^per_sector` units to a sector: written in part, never filled from below.
pub(crate) fn held_in_part(dirty: u64, held: u64, per_sector: u32) -> u64 {
    if held == HELD_ALL {
        return 0;
    }
    let mut partial = 0;
    let mut rest = dirty;
    while rest != 0 {
        let s = rest.trailing_zeros();
        rest &= rest - 1;
        let units = sector_units(s, per_sector);
        if held & units != units {
            partial |= 1 << s;
        }
    }
    partial
}

/// The units of the sectors of `sectors`, with `2^per_sector` units to a sector.
fn units_of(sectors: u64, per_sector: u32) -> u64 {
    let mut units = 0;
    let mut rest = sectors;
    while rest != 0 {
        let s = rest.trailing_zeros();
        rest &= rest - 1;
        units |= sector_units(s, per_sector);
    }
    units
}

/// The units of sector `s`, with `2^per_sector` units to a sector.
#[inline(always)]
fn sector_units(s: u32, per_sector: u32) -> u64 {
    let whole = u64::MAX >> (64 - (1u32 << per_sector).min(64));
    whole << ((s << per_sector) & 63)
}

/// A line pushed out by an insertion.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Evicted {
    /// Its line number.
    pub line: u64,
    /// The sectors written since it came in (0: clean).
    pub dirty: u64,
    /// The units whose bytes it held ([`HELD_ALL`] for a line filled from below).
    pub held: u64,
}

/// One way of a set.
#[derive(Clone, Copy, Debug, Default)]
struct Way {
    /// `line + 1`, 0 for an empty way.
    tag: u64,
    /// Last use (higher is more recent).
    stamp: u64,
    /// The cycle its data arrives (a line in flight is present but not yet usable).
    ready: u64,
    /// Dirty sectors.
    dirty: u64,
    /// Units whose bytes it holds.
    held: u64,
    /// How many of its dirty sectors it holds in part (see [`Cache::with_partial_ways`]).
    partial: u8,
}

/// A set-associative LRU cache. Contents are not modeled (the functional engine holds the
/// values).
#[derive(Clone, Debug)]
pub(crate) struct Cache {
    sets: u64,
    set_bits: u32,
    ways: usize,
    slots: Vec<Way>,
    clock: u64,
    /// Ways of its set a dirty line takes (1: like a clean one).
    dirty_ways: u32,
    /// Sectors to a line where a dirty line's extra ways are in proportion to its dirty
    /// sectors (see [`Cache::with_dirty_room_per_sector`]); 1: whole lines.
    room_sectors: u32,
    /// Dirty sectors held in part that a set keeps (see [`Cache::with_partial_ways`]);
    /// `u32::MAX`: no limit.
    partial_sectors: u32,
    /// Lines holding such a sector that the whole cache keeps, spread over its sets
    /// (see [`Cache::with_partial_lines`]); `u64::MAX`: no limit.
    partial_lines: u64,
    /// log2 of the units to a sector, where partial sectors are limited.
    per_sector: Option<u32>,
}

impl Cache {
    /// A cache of `size_bytes` with `ways` ways of `line_bytes` lines.
    pub fn new(size_bytes: u64, ways: u32, line_bytes: u64) -> Cache {
        let ways = ways.max(1) as usize;
        let sets = (size_bytes / (line_bytes.max(1) * ways as u64)).max(1);
        Cache {
            sets,
            set_bits: sets.next_power_of_two().trailing_zeros().max(1),
            ways,
            slots: vec![Way::default(); sets as usize * ways],
            clock: 0,
            dirty_ways: 1,
            room_sectors: 1,
            partial_sectors: u32::MAX,
            partial_lines: u64::MAX,
            per_sector: None,
        }
    }

    /// The same cache with a dirty line taking `n` ways of its set (at least 1); after
    /// an insertion or a write the caller sheds the lines that no longer fit
    /// ([`Cache::shed`]).
    pub fn with_dirty_ways(mut self, n: u32) -> Cache {
        self.dirty_ways = n.clamp(1, self.ways as u32);
        self
    }

    /// The same cache with the extra room a dirty line takes
    /// ([`Cache::with_dirty_ways`]) in proportion to its dirty sectors, `sectors` to a
    /// line: a line with one of four sectors dirty takes `1 + (n - 1) / 4` ways.
    pub fn with_dirty_room_per_sector(mut self, sectors: u32) -> Cache {
        self.room_sectors = sectors.clamp(1, 64);
        self
    }

    /// The room a line takes in its set, in `1 / room_sectors` of a way.
    #[inline]
    fn room_of(&self, w: &Way) -> u32 {
        // With whole lines (`n` = 1) this is 1 or `dirty_ways`.
        let n = self.room_sectors;
        n + (self.dirty_ways - 1) * w.dirty.count_ones().min(n)
    }

    /// The same cache keeping, per set, only as many dirty sectors held in part (of
    /// `2^per_sector` units, `sectors` to a line) as fill `n` ways of lines (at least 1)
    /// whose every sector is so held: `ways / n` such lines. The room for merging is per
    /// sector, so a line with fewer such sectors uses less of it; beyond it the least
    /// recently used line holding one leaves. The caller sheds as for
    /// [`Cache::with_dirty_ways`].
    pub fn with_partial_ways(mut self, n: u32, per_sector: u32, sectors: u32) -> Cache {
        let n = n.clamp(1, self.ways as u32);
        self.partial_sectors = (self.ways as u32 / n).max(1) * sectors.clamp(1, 64);
        self.per_sector = Some(per_sector);
        self
    }

    /// The same cache keeping only `lines` lines that hold a dirty sector in part (of
    /// `2^per_sector` units), however many such sectors each holds, spread as evenly as
    /// whole lines allow over its sets; beyond a set's share its least recently used
    /// such line leaves. The caller sheds as for [`Cache::with_dirty_ways`].
    pub fn with_partial_lines(mut self, lines: u64, per_sector: u32) -> Cache {
        self.partial_lines = lines;
        self.per_sector = Some(per_sector);
        self
    }

    /// The lines holding a sector in part that set number `set` keeps: its share of
    /// [`Cache::with_partial_lines`]'s, the remainder spread one a set.
    #[inline]
    fn partial_lines_of(&self, set: u64) -> u64 {
        let (n, sets) = (self.partial_lines, self.sets);
        let upto = |s: u64| (s as u128 * n as u128 / sets as u128) as u64;
        upto(set + 1) - upto(set)
    }

    /// How many dirty sectors a line with `dirty` sectors and `held` units holds in part.
    #[inline]
    fn in_part(&self, dirty: u64, held: u64) -> u8 {
        match self.per_sector {
            Some(p) if held != HELD_ALL => held_in_part(dirty, held, p).count_ones() as u8,
            _ => 0,
        }
    }

    /// Makes `line`'s set fit, one line per call (`None` once it does): while the set
    /// holds more sectors in part than [`Cache::with_partial_ways`] allows, or more lines
    /// holding one than its share of [`Cache::with_partial_lines`]'s, the least
    /// recently used line holding one (other than `line`) is written back and stays,
    /// clean, its written sectors whole (merged with memory's bytes on the way); else,
    /// while the set's lines take more ways than it has (dirty ones taking
    /// [`Cache::with_dirty_ways`]'s), the least recently used line other than `line`
    /// leaves. Either way the line written back is returned.
    pub fn shed(&mut self, line: u64) -> Option<Evicted> {
        if self.dirty_ways == 1 && self.per_sector.is_none() {
            return None;
        }
        let s = self.set(line);
        let set = &self.slots[s..s + self.ways];
        let (taken, partial, partial_lines) =
            set.iter()
                .filter(|w| w.tag != 0)
                .fold((0, 0, 0), |(t, p, l), w| {
                    (
                        t + self.room_of(w),
                        p + w.partial as u32,
                        l + u64::from(w.partial != 0),
                    )
                });
        let lru = |only_partial: bool| {
            set.iter()
                .enumerate()
                .filter(|(_, w)| w.tag != 0 && w.tag != line + 1)
                .filter(|(_, w)| !only_partial || w.partial != 0)
                .min_by_key(|(_, w)| w.stamp)
                .map(|(i, _)| s + i)
        };
        let over = partial > self.partial_sectors
            || (self.partial_lines != u64::MAX
                && partial_lines > self.partial_lines_of(s as u64 / self.ways as u64));
        if over && let Some(v) = lru(true) {
            let w = &mut self.slots[v];
            let cleaned = Evicted {
                line: w.tag - 1,
                dirty: w.dirty,
                held: w.held,
            };
            // Its written sectors are whole now; those never written are still not held.
            if let Some(p) = self.per_sector {
                w.held |= units_of(w.dirty, p);
            }
            w.dirty = 0;
            w.partial = 0;
            return Some(cleaned);
        }
        if taken as usize <= self.ways * self.room_sectors as usize {
            return None;
        }
        let victim = lru(false)?;
        let old = std::mem::take(&mut self.slots[victim]);
        Some(Evicted {
            line: old.tag - 1,
            dirty: old.dirty,
            held: old.held,
        })
    }

    #[inline]
    fn set(&self, line: u64) -> usize {
        let b = self.set_bits;
        let folded = line ^ (line >> b) ^ (line >> (2 * b));
        (folded % self.sets) as usize * self.ways
    }

    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        let s = self.set(line);
        self.slots[s..s + self.ways]
            .iter()
            .position(|w| w.tag == line + 1)
            .map(|i| s + i)
    }

    /// Looks a line up, making it the most recent on a hit: the cycle its data is (or
    /// will be) there.
    #[inline]
    pub fn lookup(&mut self, line: u64) -> Option<u64> {
        self.lookup_part(line, 0).map(|(ready, _)| ready)
    }

    /// Looks a line up for the units `want`, making it the most recent where present:
    /// the cycle its data is (or will be) there and the part of `want` it does not
    /// hold; `None` where it is absent.
    #[inline]
    pub fn lookup_part(&mut self, line: u64, want: u64) -> Option<(u64, u64)> {
        let i = self.find(line)?;
        self.clock += 1;
        let w = &mut self.slots[i];
        w.stamp = self.clock;
        Some((w.ready, want & !w.held))
    }

    /// Adds the units `held` to a present line (nothing where it is absent), their data
    /// arriving at `ready`: the line is ready at the later of that and its own time.
    pub fn fill(&mut self, line: u64, held: u64, ready: u64) {
        if let Some(i) = self.find(line) {
            let w = &mut self.slots[i];
            w.held |= held;
            w.ready = w.ready.max(ready);
        }
    }

    /// Marks `sectors` of a present line dirty and its `units` held (and the line most
    /// recent); false when it is absent.
    pub fn mark_dirty(&mut self, line: u64, sectors: u64, units: u64) -> bool {
        match self.find(line) {
            Some(i) => {
                self.clock += 1;
                let (dirty, held) = (self.slots[i].dirty | sectors, self.slots[i].held | units);
                let partial = self.in_part(dirty, held);
                let w = &mut self.slots[i];
                w.stamp = self.clock;
                w.dirty = dirty;
                w.held = held;
                w.partial = partial;
                true
            }
            None => false,
        }
    }

    /// Cleans every dirty line, appending it to `out` as it would leave (in slot order,
    /// so runs are deterministic). A cleaned line's bytes are in memory below, so it
    /// holds them all from then on.
    pub fn take_dirty(&mut self, out: &mut Vec<Evicted>) {
        for w in self.slots.iter_mut().filter(|w| w.tag != 0 && w.dirty != 0) {
            out.push(Evicted {
                line: w.tag - 1,
                dirty: w.dirty,
                held: w.held,
            });
            w.dirty = 0;
            w.held = HELD_ALL;
            w.partial = 0;
        }
    }

    /// Inserts an absent line with `dirty` sectors and `held` units ([`HELD_ALL`] for a
    /// fill from below) whose data arrives at `ready`, replacing the least recently used
    /// of its set.
    pub fn insert(&mut self, line: u64, dirty: u64, held: u64, ready: u64) -> Option<Evicted> {
        let s = self.set(line);
        let mut victim = s;
        let mut oldest = u64::MAX;
        for (i, w) in self.slots[s..s + self.ways].iter().enumerate() {
            let age = if w.tag == 0 { 0 } else { w.stamp + 1 };
            if age < oldest {
                oldest = age;
                victim = s + i;
            }
        }
        let old = self.slots[victim];
        self.clock += 1;
        let partial = self.in_part(dirty, held);
        self.slots[victim] = Way {
            tag: line + 1,
            stamp: self.clock,
            ready,
            dirty,
            held,
            partial,
        };
        (old.tag != 0).then(|| Evicted {
            line: old.tag - 1,
            dirty: old.dirty,
            held: old.held,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines that map to one set of `c`.
    fn same_set(c: &Cache, n: usize) -> Vec<u64> {
        let s0 = c.set(0);
        (0..).filter(|&l| c.set(l) == s0).take(n).collect()
    }

    #[test]
    fn a_line_filled_in_part_reports_the_units_it_lacks() {
        let mut c = Cache::new(4 * 128, 4, 128);
        assert_eq!(c.lookup_part(7, 0b11), None);
        c.insert(7, 0, 0b01, 50);
        assert_eq!(c.lookup_part(7, 0b11), Some((50, 0b10)));
        c.fill(7, 0b10, 80);
        assert_eq!(c.lookup_part(7, 0b11), Some((80, 0)));
        // Filling an absent line does nothing.
        c.fill(9, 0b1, 10);
        assert_eq!(c.lookup_part(9, 0b1), None);
    }

    #[test]
    fn lru_replaces_the_least_recent_line_of_a_set() {
        let mut c = Cache::new(4 * 128, 2, 128);
        let l = same_set(&c, 3);
        assert_eq!(c.lookup(l[0]), None);
        assert_eq!(c.insert(l[0], 0, HELD_ALL, 5), None);
        assert_eq!(c.insert(l[1], 0b1111, HELD_ALL, 6), None);
        assert_eq!(c.lookup(l[0]), Some(5));
        assert_eq!(
            c.insert(l[2], 0, HELD_ALL, 7),
            Some(Evicted {
                line: l[1],
                dirty: 0b1111,
                held: HELD_ALL,
            })
        );
        assert!(c.lookup(l[0]).is_some() && c.lookup(l[2]).is_some() && c.lookup(l[1]).is_none());
    }

    #[test]
    fn taking_dirty_lines_cleans_them() {
        let mut c = Cache::new(64 * 4 * 128, 4, 128);
        c.insert(1, 0b0001, HELD_ALL, 0);
        c.insert(2, 0, HELD_ALL, 0);
        c.insert(3, 0, HELD_ALL, 0);
        assert!(c.mark_dirty(3, 0b0100, HELD_ALL));
        assert!(c.mark_dirty(1, 0b1000, HELD_ALL));
        assert!(
            !c.mark_dirty(4, 0b0001, HELD_ALL),
            "absent lines are not marked"
        );
        let mut out = Vec::new();
        c.take_dirty(&mut out);
        let mut out: Vec<(u64, u64)> = out.iter().map(|e| (e.line, e.dirty)).collect();
        out.sort_unstable();
        assert_eq!(out, [(1, 0b1001), (3, 0b0100)]);
        let mut again = Vec::new();
        c.take_dirty(&mut again);
        assert!(again.is_empty());
        assert!(c.lookup(1).is_some(), "cleaned lines stay cached");
    }

    #[test]
    fn an_evicted_line_carries_only_the_sectors_written() {
        let mut c = Cache::new(2 * 128, 1, 128);
        let l = same_set(&c, 2);
        c.insert(l[0], 0b0010, HELD_ALL, 0);
        c.mark_dirty(l[0], 0b0010, HELD_ALL);
        c.mark_dirty(l[0], 0b1000, HELD_ALL);
        assert_eq!(
            c.insert(l[1], 0, HELD_ALL, 0),
            Some(Evicted {
                line: l[0],
                dirty: 0b1010,
                held: HELD_ALL,
            })
        );
    }

    #[test]
    fn a_line_a_store_brought_in_holds_only_the_units_written() {
        let mut c = Cache::new(2 * 128, 1, 128);
        let l = same_set(&c, 3);
        // Units 0 and 1 written, then unit 5: the line leaves holding those three.
        c.insert(l[0], 0b01, 0b11, 0);
        assert!(c.mark_dirty(l[0], 0b10, 1 << 5));
        assert_eq!(
            c.insert(l[1], 0, HELD_ALL, 0),
            Some(Evicted {
                line: l[0],
                dirty: 0b11,
                held: 0b10_0011,
            })
        );
        // A filled line written in part still holds every byte.
        assert!(c.mark_dirty(l[1], 0b1, 0b1));
        let mut out = Vec::new();
        c.take_dirty(&mut out);
        assert_eq!(out[0].held, HELD_ALL);
        // Once cleaned, a written line's bytes are below: it holds them all.
        c.insert(l[2], 0b1, 0b1, 0);
        out.clear();
        c.take_dirty(&mut out);
        assert_eq!(out[0].held, 0b1);
        assert!(c.mark_dirty(l[2], 0b1, 0b1));
        assert_eq!(
            c.insert(l[0], 0, HELD_ALL, 0).map(|e| e.held),
            Some(HELD_ALL)
        );
    }

    #[test]
    fn dirty_lines_that_take_two_ways_halve_what_a_set_holds_of_them() {
        let mut c = Cache::new(4 * 128, 4, 128).with_dirty_ways(2);
        let l = same_set(&c, 5);
        // Four clean lines fill the set's four ways.
        for &x in &l[..4] {
            assert_eq!(c.insert(x, 0, HELD_ALL, 0), None);
            assert_eq!(c.shed(x), None);
        }
        // Writing one takes a second way: the least recent other line goes.
        assert!(c.mark_dirty(l[3], 1, HELD_ALL));
        assert_eq!(
            c.shed(l[3]),
            Some(Evicted {
                line: l[0],
                dirty: 0,
                held: HELD_ALL,
            })
        );
        assert_eq!(c.shed(l[3]), None);
        // A second written line: two dirty lines fill the set.
        assert!(c.mark_dirty(l[2], 1, HELD_ALL));
        assert_eq!(
            c.shed(l[2]),
            Some(Evicted {
                line: l[1],
                dirty: 0,
                held: HELD_ALL,
            })
        );
        assert_eq!(c.shed(l[2]), None);
        // A new clean line does not fit beside them: the older dirty one goes.
        c.insert(l[4], 0, HELD_ALL, 0);
        assert_eq!(
            c.shed(l[4]),
            Some(Evicted {
                line: l[3],
                dirty: 1,
                held: HELD_ALL,
            })
        );
        assert_eq!(c.shed(l[4]), None);
        assert!(c.lookup(l[2]).is_some() && c.lookup(l[4]).is_some());
        // Without the setting nothing is shed.
        let mut plain = Cache::new(4 * 128, 4, 128);
        plain.insert(l[0], 1, HELD_ALL, 0);
        assert_eq!(plain.shed(l[0]), None);
    }

    #[test]
    fn lines_holding_a_sector_in_part_take_their_own_ways() {
        // 4 ways; 4 units to a sector, one sector to a line. A partial line takes all 4
        // ways' room for partial sectors: a set keeps one.
        let mut c = Cache::new(4 * 128, 4, 128).with_partial_ways(4, 2, 1);
        let l = same_set(&c, 4);
        for &x in &l[..2] {
            c.insert(x, 0b1, 0b1111, 0);
            assert_eq!(c.shed(x), None);
        }
        // Units 0 and 1 of sector 0 only, twice: the older partial line leaves.
        c.insert(l[2], 0b1, 0b11, 0);
        assert_eq!(c.shed(l[2]), None);
        c.insert(l[3], 0b1, 0b11, 0);
        let shed: Vec<u64> = std::iter::from_fn(|| c.shed(l[3]).map(|e| e.line)).collect();
        assert_eq!(shed, &l[2..3]);
        // Completing the sector makes it an ordinary dirty line again.
        assert!(c.mark_dirty(l[3], 0b1, 0b1100));
        c.insert(l[2], 0b1, 0b11, 0);
        assert_eq!(c.shed(l[2]), None);
        assert_eq!(held_in_part(0b11, 0b0000_0011, 2), 0b11);
        assert_eq!(held_in_part(0b11, 0b1111_0011, 2), 0b01);
        assert_eq!(held_in_part(0b11, HELD_ALL, 2), 0);
    }

    #[test]
    fn a_set_keeps_as_many_partial_sectors_as_its_partial_ways_allow() {
        // 4 ways, 4 sectors of 2 units to a line; partial lines take 2 ways: a set keeps
        // the partial sectors of two such lines, 8, however they are spread over lines.
        let mut c = Cache::new(4 * 128, 4, 128).with_partial_ways(2, 1, 4);
        let l = same_set(&c, 4);
        // Three lines with 3, 3 and 2 sectors in part (units 0, 2, 4 of 8): they fit.
        for (&x, dirty) in l[..3].iter().zip([0b111, 0b111, 0b11]) {
            c.insert(
                x,
                dirty,
                0b01_0101 & ((1 << (2 * (dirty as u32).count_ones())) - 1),
                0,
            );
            assert_eq!(c.shed(x), None);
        }
        // A fourth with one more: the least recent partial line leaves.
        c.insert(l[3], 0b1, 0b01, 0);
        assert_eq!(c.shed(l[3]).map(|e| e.line), Some(l[0]));
        assert_eq!(c.shed(l[3]), None);
        // Completing the fourth's sector leaves room: nothing else leaves.
        assert!(c.mark_dirty(l[3], 0b1, 0b10));
        assert_eq!(c.shed(l[3]), None);
    }

    #[test]
    fn partial_lines_are_counted_as_lines_and_spread_over_the_sets() {
        // 4 sets of 4 ways, 6 partial lines in all: two sets keep 1, two keep 2.
        let c = Cache::new(4 * 4 * 128, 4, 128).with_partial_lines(6, 1);
        let shares: Vec<u64> = (0..4).map(|s| c.partial_lines_of(s)).collect();
        assert_eq!(shares.iter().sum::<u64>(), 6);
        assert!(shares.iter().all(|&n| n == 1 || n == 2), "{shares:?}");
        // One set keeping one such line: a line with all four sectors in part fits, a
        // second line with only one sector in part pushes the first out.
        let mut c = Cache::new(4 * 128, 4, 128).with_partial_lines(1, 1);
        let l = same_set(&c, 3);
        c.insert(l[0], 0b1111, 0b0101_0101, 0);
        assert_eq!(c.shed(l[0]), None);
        c.insert(l[1], 0b1, 0b01, 0);
        assert_eq!(c.shed(l[1]).map(|e| e.line), Some(l[0]));
        assert_eq!(c.shed(l[1]), None);
        // The line written back stays, clean; whole sectors do not count.
        assert!(c.lookup(l[0]).is_some());
        c.insert(l[2], 0b1, 0b11, 0);
        assert_eq!(c.shed(l[2]), None);
    }

    #[test]
    fn power_of_two_strides_spread_over_the_sets() {
        // 64 sets of 4 ways; 256 lines 32 apart all fit.
        let mut c = Cache::new(64 * 4 * 128, 4, 128);
        for i in 0..256 {
            c.insert(i * 32, 0, HELD_ALL, 0);
        }
        let hits = (0..256).filter(|&i| c.lookup(i * 32).is_some()).count();
        assert!(hits > 200, "{hits} of 256 stayed");
    }
}
