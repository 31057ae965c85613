//! A set-associative cache with LRU replacement, dirty sectors and fill times, over line
//! numbers. A line's dirty state is a mask of its sectors (bit `i`: sector `i` was
//! written), so a write-back moves only what was written; a model without sectors marks
//! whole lines with [`Cache::insert`]'s and [`Cache::mark_dirty`]'s `sectors` all set. Set indices fold the upper line bits in (XOR), as hardware caches hash their
//! index, so that power-of-two strides do not pile into a few sets.

/// A line pushed out by an insertion.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Evicted {
    /// Its line number.
    pub line: u64,
    /// The sectors written since it came in (0: clean).
    pub dirty: u64,
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
        }
    }

    /// The same cache with a dirty line taking `n` ways of its set (at least 1); after
    /// an insertion or a write the caller sheds the lines that no longer fit
    /// ([`Cache::shed`]).
    pub fn with_dirty_ways(mut self, n: u32) -> Cache {
        self.dirty_ways = n.clamp(1, self.ways as u32);
        self
    }

    /// Pushes out the least recently used line of `line`'s set other than `line` while
    /// the set's lines take more ways than it has (dirty ones taking
    /// [`Cache::with_dirty_ways`]'s): one line per call, `None` once they fit.
    pub fn shed(&mut self, line: u64) -> Option<Evicted> {
        if self.dirty_ways == 1 {
            return None;
        }
        let s = self.set(line);
        let set = &self.slots[s..s + self.ways];
        let taken: u32 = set
            .iter()
            .filter(|w| w.tag != 0)
            .map(|w| if w.dirty != 0 { self.dirty_ways } else { 1 })
            .sum();
        if taken as usize <= self.ways {
            return None;
        }
        let victim = set
            .iter()
            .enumerate()
            .filter(|(_, w)| w.tag != 0 && w.tag != line + 1)
            .min_by_key(|(_, w)| w.stamp)
            .map(|(i, _)| s + i)?;
        let old = std::mem::take(&mut self.slots[victim]);
        Some(Evicted {
            line: old.tag - 1,
            dirty: old.dirty,
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
        let i = self.find(line)?;
        self.clock += 1;
        self.slots[i].stamp = self.clock;
        Some(self.slots[i].ready)
    }

    /// Marks `sectors` of a present line dirty (and the line most recent); false when it
    /// is absent.
    pub fn mark_dirty(&mut self, line: u64, sectors: u64) -> bool {
        match self.find(line) {
            Some(i) => {
                self.clock += 1;
                self.slots[i].stamp = self.clock;
                self.slots[i].dirty |= sectors;
                true
            }
            None => false,
        }
    }

    /// Cleans every dirty line, appending its line number and dirty sectors to `out` (in
    /// slot order, so runs are deterministic).
    pub fn take_dirty(&mut self, out: &mut Vec<(u64, u64)>) {
        for w in self.slots.iter_mut().filter(|w| w.tag != 0 && w.dirty != 0) {
            out.push((w.tag - 1, w.dirty));
            w.dirty = 0;
        }
    }

    /// Inserts an absent line with `dirty` sectors whose data arrives at `ready`, replacing
    /// the least recently used of its set.
    pub fn insert(&mut self, line: u64, dirty: u64, ready: u64) -> Option<Evicted> {
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
        self.slots[victim] = Way {
            tag: line + 1,
            stamp: self.clock,
            ready,
            dirty,
        };
        (old.tag != 0).then(|| Evicted {
            line: old.tag - 1,
            dirty: old.dirty,
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
    fn lru_replaces_the_least_recent_line_of_a_set() {
        let mut c = Cache::new(4 * 128, 2, 128);
        let l = same_set(&c, 3);
        assert_eq!(c.lookup(l[0]), None);
        assert_eq!(c.insert(l[0], 0, 5), None);
        assert_eq!(c.insert(l[1], 0b1111, 6), None);
        assert_eq!(c.lookup(l[0]), Some(5));
        assert_eq!(
            c.insert(l[2], 0, 7),
            Some(Evicted {
                line: l[1],
                dirty: 0b1111
            })
        );
        assert!(c.lookup(l[0]).is_some() && c.lookup(l[2]).is_some() && c.lookup(l[1]).is_none());
    }

    #[test]
    fn taking_dirty_lines_cleans_them() {
        let mut c = Cache::new(64 * 4 * 128, 4, 128);
        c.insert(1, 0b0001, 0);
        c.insert(2, 0, 0);
        c.insert(3, 0, 0);
        assert!(c.mark_dirty(3, 0b0100));
        assert!(c.mark_dirty(1, 0b1000));
        assert!(!c.mark_dirty(4, 0b0001), "absent lines are not marked");
        let mut out = Vec::new();
        c.take_dirty(&mut out);
        out.sort_unstable();
        assert_eq!(out, [(1, 0b1001), (3, 0b0100)]);
        out.clear();
        c.take_dirty(&mut out);
        assert!(out.is_empty());
        assert!(c.lookup(1).is_some(), "cleaned lines stay cached");
    }

    #[test]
    fn an_evicted_line_carries_only_the_sectors_written() {
        let mut c = Cache::new(2 * 128, 1, 128);
        let l = same_set(&c, 2);
        c.insert(l[0], 0b0010, 0);
        c.mark_dirty(l[0], 0b0010);
        c.mark_dirty(l[0], 0b1000);
        assert_eq!(
            c.insert(l[1], 0, 0),
            Some(Evicted {
                line: l[0],
                dirty: 0b1010
            })
        );
    }

    #[test]
    fn dirty_lines_that_take_two_ways_halve_what_a_set_holds_of_them() {
        let mut c = Cache::new(4 * 128, 4, 128).with_dirty_ways(2);
        let l = same_set(&c, 5);
        // Four clean lines fill the set's four ways.
        for &x in &l[..4] {
            assert_eq!(c.insert(x, 0, 0), None);
            assert_eq!(c.shed(x), None);
        }
        // Writing one takes a second way: the least recent other line goes.
        assert!(c.mark_dirty(l[3], 1));
        assert_eq!(
            c.shed(l[3]),
            Some(Evicted {
                line: l[0],
                dirty: 0
            })
        );
        assert_eq!(c.shed(l[3]), None);
        // A second written line: two dirty lines fill the set.
        assert!(c.mark_dirty(l[2], 1));
        assert_eq!(
            c.shed(l[2]),
            Some(Evicted {
                line: l[1],
                dirty: 0
            })
        );
        assert_eq!(c.shed(l[2]), None);
        // A new clean line does not fit beside them: the older dirty one goes.
        c.insert(l[4], 0, 0);
        assert_eq!(
            c.shed(l[4]),
            Some(Evicted {
                line: l[3],
                dirty: 1
            })
        );
        assert_eq!(c.shed(l[4]), None);
        assert!(c.lookup(l[2]).is_some() && c.lookup(l[4]).is_some());
        // Without the setting nothing is shed.
        let mut plain = Cache::new(4 * 128, 4, 128);
        plain.insert(l[0], 1, 0);
        assert_eq!(plain.shed(l[0]), None);
    }

    #[test]
    fn power_of_two_strides_spread_over_the_sets() {
        // 64 sets of 4 ways; 256 lines 32 apart all fit.
        let mut c = Cache::new(64 * 4 * 128, 4, 128);
        for i in 0..256 {
            c.insert(i * 32, 0, 0);
        }
        let hits = (0..256).filter(|&i| c.lookup(i * 32).is_some()).count();
        assert!(hits > 200, "{hits} of 256 stayed");
    }
}
