//! A set-associative cache with LRU replacement, dirty bits and fill times, over line
//! numbers. Set indices fold the upper line bits in (XOR), as hardware caches hash their
//! index, so that power-of-two strides do not pile into a few sets.

/// A line pushed out by an insertion.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Evicted {
    /// Its line number.
    pub line: u64,
    /// It was written since it came in.
    pub dirty: bool,
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
    dirty: bool,
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
        }
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

    /// Marks a present line dirty (and most recent); false when it is absent.
    pub fn mark_dirty(&mut self, line: u64) -> bool {
        match self.find(line) {
            Some(i) => {
                self.clock += 1;
                self.slots[i].stamp = self.clock;
                self.slots[i].dirty = true;
                true
            }
            None => false,
        }
    }

    /// Cleans every dirty line, appending its line number to `out` (in slot order, so
    /// runs are deterministic).
    pub fn take_dirty(&mut self, out: &mut Vec<u64>) {
        for w in self.slots.iter_mut().filter(|w| w.tag != 0 && w.dirty) {
            w.dirty = false;
            out.push(w.tag - 1);
        }
    }

    /// Inserts an absent line whose data arrives at `ready`, replacing the least recently
    /// used of its set.
    pub fn insert(&mut self, line: u64, dirty: bool, ready: u64) -> Option<Evicted> {
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
        assert_eq!(c.insert(l[0], false, 5), None);
        assert_eq!(c.insert(l[1], true, 6), None);
        assert_eq!(c.lookup(l[0]), Some(5));
        assert_eq!(
            c.insert(l[2], false, 7),
            Some(Evicted {
                line: l[1],
                dirty: true
            })
        );
        assert!(c.lookup(l[0]).is_some() && c.lookup(l[2]).is_some() && c.lookup(l[1]).is_none());
    }

    #[test]
    fn taking_dirty_lines_cleans_them() {
        let mut c = Cache::new(64 * 4 * 128, 4, 128);
        c.insert(1, true, 0);
        c.insert(2, false, 0);
        c.insert(3, false, 0);
        assert!(c.mark_dirty(3));
        let mut out = Vec::new();
        c.take_dirty(&mut out);
        out.sort_unstable();
        assert_eq!(out, [1, 3]);
        out.clear();
        c.take_dirty(&mut out);
        assert!(out.is_empty());
        assert!(c.lookup(1).is_some(), "cleaned lines stay cached");
    }

    #[test]
    fn power_of_two_strides_spread_over_the_sets() {
        // 64 sets of 4 ways; 256 lines 32 apart all fit.
        let mut c = Cache::new(64 * 4 * 128, 4, 128);
        for i in 0..256 {
            c.insert(i * 32, false, 0);
        }
        let hits = (0..256).filter(|&i| c.lookup(i * 32).is_some()).count();
        assert!(hits > 200, "{hits} of 256 stayed");
    }
}
