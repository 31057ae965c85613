//! The device-race check's tags, split into parts that the workers of a parallel round
//! check on their own threads.
//!
//! There is one 32-bit tag per 4-byte word of each written global buffer (allocated on
//! the first store to it): the last threadgroup that stored to the word with a plain
//! store (its index modulo 2^28, plus one) above a mask of the bytes it stored. The words
//! are dealt to `of` parts (a power of two) in chunks of [`CHUNK`] words, chunk `c` to
//! part `c % of`, and
//! each part keeps its chunks one after another in its own vector. A parallel round gives
//! each worker one part (a plain `&mut`, nothing shared) and checks every store of the
//! round, in dispatch order, against it. A word lies in exactly one part and sees the
//! same stores in the same order however the words are split, so the tags, the lanes
//! that clash and the findings are the same for every number of parts.

use crate::memory::{OFFSET_BITS, Regions, Storage, active_bits_differ, offset_of, unit_stride};
use crate::simt::LaneMask;

/// Words per chunk, as a power of two: small enough that the words a round of adjacent
/// threadgroups stores to fall in several chunks (and so in every part), large enough
/// that a 32-lane unit-stride store mostly lies in one.
const CHUNK_SHIFT: u32 = 10;
/// Words per chunk.
const CHUNK: usize = 1 << CHUNK_SHIFT;

/// Every part of the tags.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tags {
    /// The parts (none until the first store or split).
    parts: Vec<Part>,
}

/// One part of the tags: the chunks `c` with `c % of == index` (`of` a power of two).
#[derive(Clone, Debug)]
pub(crate) struct Part {
    /// Which chunks it holds.
    place: Where,
    /// Per global storage index, this part's chunks of its tags (empty until a store).
    storages: Vec<Vec<u32>>,
}

impl Tags {
    /// Splits the tags into `parts` parts, rounded down to a power of two (at least
    /// one), keeping every tag; `regions` gives the buffers' sizes. How many parts it
    /// made.
    pub fn split(&mut self, parts: usize, regions: &Regions) -> usize {
        let parts = 1 << parts.max(1).ilog2();
        if self.parts.len() == parts {
            return parts;
        }
        let mut new: Vec<Part> = (0..parts).map(|i| Part::new(i, parts)).collect();
        for r in &regions.0 {
            let Storage::Global(i) = r.storage else {
                continue;
            };
            let (i, words) = (i as usize, words_of(r.size));
            let held = self
                .parts
                .iter()
                .any(|p| p.storages.get(i).is_some_and(|s| !s.is_empty()));
            if !held {
                continue;
            }
            for w in 0..words {
                let tag = self.parts.iter().find_map(|p| {
                    let l = p.local(w)?;
                    Some(p.storages.get(i)?.get(l).copied().unwrap_or(0))
                });
                let tag = tag.unwrap_or(0);
                if tag != 0 {
                    let p = &mut new[(w >> CHUNK_SHIFT) % parts];
                    let l = p.local(w).expect("the word's own part");
                    p.storage(i, words)[l] = tag;
                }
            }
        }
        self.parts = new;
        parts
    }

    /// The parts, one per worker of a parallel round (see [`Tags::split`]).
    pub fn parts_mut(&mut self) -> &mut [Part] {
        if self.parts.is_empty() {
            self.parts.push(Part::new(0, 1));
        }
        &mut self.parts
    }

    /// Tags a plain store in every part (see [`Part::store`]); the lanes that stored over
    /// another threadgroup's bytes.
    pub fn store(
        &mut self,
        regions: &Regions,
        addrs: &[u64; 32],
        bytes: u32,
        mask: LaneMask,
        group: u64,
    ) -> LaneMask {
        self.parts_mut()
            .iter_mut()
            .fold(0, |c, p| c | p.store(regions, addrs, bytes, mask, group))
    }
}

/// Tag words of a buffer of `size` bytes.
fn words_of(size: u64) -> usize {
    (size as usize).div_ceil(4)
}

impl Part {
    fn new(index: usize, of: usize) -> Part {
        Part {
            place: Where {
                index,
                last: of - 1,
                shift: of.ilog2(),
            },
            storages: Vec::new(),
        }
    }

    /// Where this part keeps word `w`'s tag, if it holds the word.
    #[inline(always)]
    fn local(&self, w: usize) -> Option<usize> {
        self.place.local(w)
    }

    /// This part's tags of global storage `i`, a buffer of `words` words (allocated if
    /// need be).
    #[inline]
    fn storage(&mut self, i: usize, words: usize) -> &mut [u32] {
        if self.storages.len() <= i {
            self.storages.resize_with(i + 1, Vec::new);
        }
        let Where { index, last, .. } = self.place;
        let len = if last == 0 {
            words
        } else {
            let chunks = words.div_ceil(CHUNK);
            (chunks + last - index) / (last + 1) * CHUNK
        };
        let s = &mut self.storages[i];
        if s.is_empty() {
            s.resize(len, 0);
        }
        s
    }

    /// Tags the words this part holds of a plain store of `bytes` bytes at each active
    /// lane's address by threadgroup `group` (its linear index); the lanes (of those
    /// words) that stored over bytes another threadgroup stored.
    pub fn store(
        &mut self,
        regions: &Regions,
        addrs: &[u64; 32],
        bytes: u32,
        mask: LaneMask,
        group: u64,
    ) -> LaneMask {
        if mask == 0 {
            return 0;
        }
        // Tag: threadgroup index + 1 (28 bits) above a mask of the bytes it stored.
        let owner = (group % ((1 << 28) - 1)) as u32 + 1;
        let n = bytes as usize;
        let place = self.place;
        let mut clashes: LaneMask = 0;
        // Fast path: every lane stores at most a word (accesses are aligned to their size,
        // so within one word) into one region.
        if n <= 4
            && let Some((i, words, differ)) = single_region(regions, addrs, mask)
        {
            let low = (1u32 << n) - 1;
            let first = offset_of(addrs[mask.trailing_zeros() as usize]) as usize / 4;
            let tags = self.storage(i, words);
            if differ >> (CHUNK_SHIFT + 2) == 0 {
                // Every lane's word in the first lane's chunk: this part holds all or none.
                let Some(base) = place.local(first & !(CHUNK - 1)) else {
                    return 0;
                };
                let at = offset_of(addrs[0]) as usize;
                let word = at / 4;
                if mask == u32::MAX && unit_stride(addrs, 4) && word + 32 <= words {
                    // Every lane in the same bytes of its own word, the words
                    // consecutive: one loop over a slice, without a test per lane
                    // (vectorized).
                    let l = base + (word & (CHUNK - 1));
                    let bytes = low << (at % 4);
                    for (lane, t) in tags[l..l + 32].iter_mut().enumerate() {
                        clashes |= (tag_store(t, owner, bytes) as u32) << lane;
                    }
                    return clashes;
                }
                for (lane, &addr) in addrs.iter().enumerate() {
                    let at = offset_of(addr) as usize;
                    let w = at / 4;
                    if mask >> lane & 1 == 0 || w >= words {
                        continue;
                    }
                    let t = &mut tags[base + (w & (CHUNK - 1))];
                    clashes |= (tag_store(t, owner, low << (at % 4)) as u32) << lane;
                }
                return clashes;
            }
            // Only the lanes whose word this part holds.
            let mut m = mask & place.lanes(addrs);
            while m != 0 {
                let lane = m.trailing_zeros();
                m &= m - 1;
                let at = offset_of(addrs[lane as usize]) as usize;
                let w = at / 4;
                if w < words
                    && let Some(l) = place.local(w)
                {
                    clashes |= (tag_store(&mut tags[l], owner, low << (at % 4)) as u32) << lane;
                }
            }
            return clashes;
        }
        // The region the previous lane stored to (most often all lanes'): (region id,
        // storage index, words).
        let mut current: Option<(u64, usize, usize)> = None;
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros();
            m &= m - 1;
            let addr = addrs[lane as usize];
            let id = addr >> OFFSET_BITS;
            let (i, words) = match current {
                Some((cid, i, words)) if cid == id => (i, words),
                _ => {
                    let Some(r) = regions.0.get(id as usize) else {
                        continue;
                    };
                    let Storage::Global(i) = r.storage else {
                        continue;
                    };
                    let (i, words) = (i as usize, words_of(r.size));
                    current = Some((id, i, words));
                    (i, words)
                }
            };
            let at = offset_of(addr) as usize;
            let (mut word, end) = (at / 4, at + n);
            let mut clash = false;
            while word * 4 < end && word < words {
                let lo = (word * 4).max(at) - word * 4;
                let hi = (word * 4 + 4).min(end) - word * 4;
                let bytes = (1u32 << hi) - (1u32 << lo);
                if let Some(l) = place.local(word) {
                    clash |= tag_store(&mut self.storage(i, words)[l], owner, bytes);
                }
                word += 1;
            }
            if clash {
                clashes |= 1 << lane;
            }
        }
        clashes
    }
}

/// Which words a part holds, and where (`Copy`, so that a part's tags can be borrowed
/// while it is read).
#[derive(Clone, Copy, Debug)]
struct Where {
    index: usize,
    /// The number of parts minus one (a mask: they are a power of two).
    last: usize,
    shift: u32,
}

impl Where {
    /// The lanes whose address (the word it starts in) the part holds. Branch-free, one
    /// pass over the 32 addresses.
    #[inline(always)]
    fn lanes(self, addrs: &[u64; 32]) -> LaneMask {
        if self.last == 0 {
            return u32::MAX;
        }
        addrs.iter().enumerate().fold(0, |m, (lane, &a)| {
            let chunk = (offset_of(a) >> (CHUNK_SHIFT + 2)) as usize;
            m | (((chunk & self.last == self.index) as u32) << lane)
        })
    }

    /// Where the part keeps word `w`'s tag, if it holds the word.
    #[inline(always)]
    fn local(self, w: usize) -> Option<usize> {
        let c = w >> CHUNK_SHIFT;
        (c & self.last == self.index)
            .then_some((c >> self.shift) << CHUNK_SHIFT | (w & (CHUNK - 1)))
    }
}

/// The global storage index and tag words of the one global region every active lane's
/// address is in, and the bits in which the active lanes' addresses differ; `None` when
/// they are in several regions (or not in a global one).
#[inline]
fn single_region(
    regions: &Regions,
    addrs: &[u64; 32],
    mask: LaneMask,
) -> Option<(usize, usize, u64)> {
    let first = addrs[mask.trailing_zeros() as usize];
    let differ = active_bits_differ(addrs, mask, first);
    if differ >> OFFSET_BITS != 0 {
        return None;
    }
    let r = regions.0.get((first >> OFFSET_BITS) as usize)?;
    let Storage::Global(i) = r.storage else {
        return None;
    };
    Some((i as usize, words_of(r.size), differ))
}

/// Tags a word's `bytes` as stored by `owner` (threadgroup index + 1 above a byte mask),
/// keeping the owner's earlier bytes; whether another threadgroup had stored any of them.
#[inline(always)]
fn tag_store(t: &mut u32, owner: u32, bytes: u32) -> bool {
    let (who, stored) = (*t >> 4, *t & 0xf);
    *t = owner << 4 | if who == owner { stored } else { 0 } | bytes;
    who != 0 && who != owner && stored & bytes != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Region, address};

    /// A 64 KB buffer "out" (global storage 0, region 0) and a second one.
    fn regions() -> Regions {
        let global = |name: &str, i| Region {
            name: name.into(),
            size: 1 << 16,
            storage: Storage::Global(i),
            writable: true,
        };
        Regions(vec![global("out", 0), global("other", 1)])
    }

    /// Pseudo-random stores (one word or two, any mask, strides that cross chunks and
    /// regions) by a few threadgroups: each store's clashing lanes, with the tags in
    /// `parts` parts, split after `split_at` stores.
    fn check(parts: usize, split_at: usize) -> Vec<LaneMask> {
        let r = regions();
        let mut tags = Tags::default();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        (0..400)
            .map(|k| {
                if k == split_at {
                    tags.split(parts, &r);
                }
                let base = next() % (1 << 16);
                let stride = [4u64, 2, 8, 4096, 1][(next() % 5) as usize];
                let bytes = [4u32, 2, 1, 8][(next() % 4) as usize];
                let region = (next() % 8 == 0) as u32;
                let addrs: [u64; 32] = std::array::from_fn(|l| {
                    let off = (base + l as u64 * stride) % ((1 << 16) - 8);
                    // Lanes 15 and 31 of a store to "out" store to "other".
                    let r = if region == 0 && l % 16 == 15 {
                        1
                    } else {
                        region
                    };
                    address(r, off & !(bytes as u64 - 1))
                });
                let mask = if next() % 2 == 0 {
                    u32::MAX
                } else {
                    next() as u32
                };
                tags.store(&r, &addrs, bytes, mask, next() % 3)
            })
            .collect()
    }

    #[test]
    fn every_split_finds_the_same_clashes() {
        let one = check(1, 0);
        assert!(one.iter().any(|&c| c != 0), "the stores do clash");
        for (parts, split_at) in [(2, 0), (3, 0), (4, 0), (2, 150), (4, 399), (8, 40)] {
            assert_eq!(
                check(parts, split_at),
                one,
                "{parts} parts from store {split_at}"
            );
        }
    }

    #[test]
    fn each_part_checks_only_its_own_words() {
        let r = regions();
        let mut tags = Tags::default();
        tags.split(2, &r);
        // Lanes 0..31 store words 1008..1039: chunk 0 (part 0) then chunk 1 (part 1).
        let addrs: [u64; 32] = std::array::from_fn(|l| address(0, (1008 + l as u64) * 4));
        let parts = tags.parts_mut();
        assert_eq!(parts[0].store(&r, &addrs, 4, u32::MAX, 0), 0);
        assert_eq!(parts[1].store(&r, &addrs, 4, u32::MAX, 0), 0);
        // Another threadgroup over all of them: part 0 sees lanes 0..15, part 1 the rest.
        assert_eq!(parts[0].store(&r, &addrs, 4, u32::MAX, 1), 0xffff);
        assert_eq!(parts[1].store(&r, &addrs, 4, u32::MAX, 1), 0xffff_0000);
    }
}
