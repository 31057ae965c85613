//! A set-associative cache with LRU replacement and dirty bits, over line numbers.

/// A line pushed out by an insertion.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Evicted {
    /// Its line number.
    pub line: u64,
    /// It was written since it came in.
    pub dirty: bool,
}

/// A set-associative LRU cache. Tags are line numbers; contents are not modeled (the
/// functional engine holds the values).
#[derive(Clone, Debug)]
pub(crate) struct Cache {
    sets: u64,
    ways: usize,
    /// `line + 1` per way, 0 for an empty way.
    tags: Vec<u64>,
    /// Last use per way (higher is more recent).
    stamps: Vec<u64>,
    dirty: Vec<bool>,
    clock: u64,
}

impl Cache {
    /// A cache of `size_bytes` with `ways` ways of `line_bytes` lines.
    pub fn new(size_bytes: u64, ways: u32, line_bytes: u64) -> Cache {
        let ways = ways.max(1) as usize;
        let sets = (size_bytes / (line_bytes * ways as u64)).max(1);
        let n = sets as usize * ways;
        Cache {
            sets,
            ways,
            tags: vec![0; n],
            stamps: vec![0; n],
            dirty: vec![false; n],
            clock: 0,
        }
    }

    fn set(&self, line: u64) -> std::ops::Range<usize> {
        let s = (line % self.sets) as usize * self.ways;
        s..s + self.ways
    }

    fn find(&self, line: u64) -> Option<usize> {
        let r = self.set(line);
        let start = r.start;
        self.tags[r]
            .iter()
            .position(|&t| t == line + 1)
            .map(|w| start + w)
    }

    /// Looks a line up, making it the most recent on a hit.
    pub fn lookup(&mut self, line: u64) -> bool {
        match self.find(line) {
            Some(i) => {
                self.clock += 1;
                self.stamps[i] = self.clock;
                true
            }
            None => false,
        }
    }

    /// Marks a present line dirty (and most recent); false when it is absent.
    pub fn mark_dirty(&mut self, line: u64) -> bool {
        match self.find(line) {
            Some(i) => {
                self.clock += 1;
                self.stamps[i] = self.clock;
                self.dirty[i] = true;
                true
            }
            None => false,
        }
    }

    /// Inserts an absent line, replacing the least recently used of its set.
    pub fn insert(&mut self, line: u64, dirty: bool) -> Option<Evicted> {
        let r = self.set(line);
        let start = r.start;
        let victim = start
            + self.stamps[r.clone()]
                .iter()
                .zip(&self.tags[r])
                .enumerate()
                .min_by_key(|(_, (s, t))| if **t == 0 { 0 } else { **s + 1 })
                .map(|(w, _)| w)
                .unwrap_or(0);
        let old = (self.tags[victim] != 0).then(|| Evicted {
            line: self.tags[victim] - 1,
            dirty: self.dirty[victim],
        });
        self.clock += 1;
        self.tags[victim] = line + 1;
        self.stamps[victim] = self.clock;
        self.dirty[victim] = dirty;
        old
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_replaces_the_least_recent_line_of_a_set() {
        // 2 sets of 2 ways: lines 0, 2, 4 map to set 0.
        let mut c = Cache::new(4 * 128, 2, 128);
        assert!(!c.lookup(0));
        assert_eq!(c.insert(0, false), None);
        assert_eq!(c.insert(2, true), None);
        assert!(c.lookup(0));
        assert_eq!(
            c.insert(4, false),
            Some(Evicted {
                line: 2,
                dirty: true
            })
        );
        assert!(c.lookup(0) && c.lookup(4) && !c.lookup(2));
    }
}
