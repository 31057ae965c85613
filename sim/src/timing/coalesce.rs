//! What a SIMD-group's memory access asks of the memory system: the distinct cache lines
//! of a device access (coalescing), the distinct addresses of a constant access (the
//! broadcast path serves one per transaction), and the wavefronts a threadgroup access
//! needs (bank conflicts).

use crate::exec::Access;
use crate::simt::LaneMask;

/// Appends `k` to `out` unless it is there already.
#[inline]
fn insert(out: &mut Vec<u64>, k: u64) {
    // Lanes of a coalesced access repeat the last key; check it first.
    if out.last() == Some(&k) || out.contains(&k) {
        return;
    }
    out.push(k);
}

/// Every `(address, bytes)` piece of an access's active lanes.
#[inline]
fn for_each_piece(a: &Access, mut f: impl FnMut(u64, u64)) {
    let mut mask: LaneMask = a.mask;
    while mask != 0 {
        let l = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        f(a.addrs[l], a.bytes as u64);
        if let Some(second) = &a.second {
            f(second[l], a.bytes as u64);
        }
    }
}

/// The most units beyond its first that one lane's piece adds: a 16-byte vector spans
/// four 4-byte units (the memory system's smallest, `WRITE_UNIT`), and two lines at most.
const MAX_SPAN: u64 = 3;

/// The distinct cache lines (line numbers) a device access touches, into `out`.
pub(crate) fn lines(a: &Access, line_shift: u32, out: &mut Vec<u64>) {
    out.clear();
    if a.second.is_none() {
        // Neighbouring lanes mostly share a line: a lane whose first line is the previous
        // lane's adds nothing (that line is in `out` already), so only a new line is
        // looked up. Same lines in the same order as the general loop below.
        let bytes = a.bytes.max(1) as u64;
        let mut previous = None;
        let mut mask: LaneMask = a.mask;
        while mask != 0 {
            let l = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let addr = a.addrs[l];
            let first = addr >> line_shift;
            let last = (addr + bytes - 1) >> line_shift;
            if last < first {
                // The piece wraps past the top of the address space: no line, as below.
                continue;
            }
            if previous != Some(first) {
                insert(out, first);
                previous = Some(first);
            }
            for k in first + 1..=last.min(first + MAX_SPAN) {
                insert(out, k);
            }
        }
        return;
    }
    for_each_piece(a, |addr, bytes| {
        let first = addr >> line_shift;
        let last = (addr + bytes.max(1) - 1) >> line_shift;
        for line in first..=last.min(first + MAX_SPAN) {
            insert(out, line);
        }
    });
}

/// The distinct addresses of a constant access: the constant path broadcasts one
/// address to every lane that reads it, and serves distinct addresses one at a time.
pub(crate) fn addresses(a: &Access, out: &mut Vec<u64>) {
    out.clear();
    for_each_piece(a, |addr, _| insert(out, addr));
}

/// Wavefronts a threadgroup access needs: the largest number of distinct words any one
/// bank must deliver (several lanes reading one word are served together). At least 1.
/// Banks and their width are powers of two (the model checks); `scratch` is working
/// space.
pub(crate) fn wavefronts(a: &Access, banks: u32, bank_bytes: u32, scratch: &mut Vec<u64>) -> u32 {
    let bank_mask = (banks.clamp(1, 64) - 1) as u64;
    let shift = bank_bytes.max(1).trailing_zeros();
    if a.second.is_none()
        && (within_one_bank_window(a, bank_mask, shift)
            || single_word_no_conflict(a, bank_mask, shift))
    {
        return 1;
    }
    // Each bank sees one word (the common conflict-free or broadcast case), also for
    // pieces of several words.
    let mut used = 0u64;
    let mut word_of_bank = [0u64; 64];
    let mut conflict = false;
    for_each_piece(a, |addr, bytes| {
        let first = addr >> shift;
        let last = (addr + bytes.max(1) - 1) >> shift;
        for w in first..=last.min(first + 7) {
            let b = (w & bank_mask) as usize;
            if used >> b & 1 == 0 {
                used |= 1 << b;
                word_of_bank[b] = w;
            } else if word_of_bank[b] != w {
                conflict = true;
            }
        }
    });
    if !conflict {
        return 1;
    }
    scratch.clear();
    for_each_piece(a, |addr, bytes| {
        let first = addr >> shift;
        let last = (addr + bytes.max(1) - 1) >> shift;
        for w in first..=last.min(first + 7) {
            insert(scratch, w);
        }
    });
    let mut per_bank = [0u32; 64];
    for &w in scratch.iter() {
        per_bank[(w & bank_mask) as usize] += 1;
    }
    per_bank.iter().copied().max().unwrap_or(1).max(1)
}

/// Whether every active lane's piece lies in one bank word and all those words lie in
/// one aligned window of as many words as there are banks, so distinct words fall in
/// distinct banks (one wavefront). A branch-free pass over the 32 lanes (vectorized when
/// all are active); it covers broadcasts and aligned unit-stride rows. False means "look
/// closer", not "conflict".
#[inline]
fn within_one_bank_window(a: &Access, bank_mask: u64, shift: u32) -> bool {
    if a.mask == 0 {
        return true;
    }
    let last_byte = a.bytes.max(1) as u64 - 1;
    let first = a.addrs[a.mask.trailing_zeros() as usize];
    let (mut differ, mut split) = (0u64, 0u64);
    if a.mask == LaneMask::MAX {
        for &addr in &a.addrs {
            differ |= addr ^ first;
        }
        // The OR of the offsets in their words (`first | differ` holds every lane's bits)
        // bounds each offset: with room for the piece after it, every piece lies in one
        // word (else the per-lane test decides).
        let word = (1u64 << shift) - 1;
        if ((first | differ) & word) + last_byte > word {
            for &addr in &a.addrs {
                split |= addr ^ addr.wrapping_add(last_byte);
            }
        }
    } else {
        for (l, &addr) in a.addrs.iter().enumerate() {
            let keep = 0u64.wrapping_sub((a.mask >> l & 1) as u64);
            differ |= (addr ^ first) & keep;
            split |= (addr ^ addr.wrapping_add(last_byte)) & keep;
        }
    }
    let window = shift + (bank_mask + 1).trailing_zeros();
    split >> shift == 0 && differ >> window == 0
}

/// Whether every active lane's piece lies in one bank word and each bank sees one word:
/// the common case of [`wavefronts`] (one wavefront), checked without the general path's
/// per-piece range loop. False means "use the general path", not "conflict".
#[inline]
fn single_word_no_conflict(a: &Access, bank_mask: u64, shift: u32) -> bool {
    let bytes = a.bytes.max(1) as u64;
    let mut used = 0u64;
    let mut word_of_bank = [0u64; 64];
    let mut mask: LaneMask = a.mask;
    while mask != 0 {
        let l = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        let addr = a.addrs[l];
        let w = addr >> shift;
        if (addr + bytes - 1) >> shift != w {
            return false;
        }
        let b = (w & bank_mask) as usize;
        if used >> b & 1 == 0 {
            used |= 1 << b;
            word_of_bank[b] = w;
        } else if word_of_bank[b] != w {
            return false;
        }
    }
    true
}

/// The largest number of active lanes that name one address (atomics on one address
/// serialize).
pub(crate) fn same_address(a: &Access) -> u32 {
    let mut best = 0;
    let mut mask = a.mask;
    while mask != 0 {
        let l = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        let mut rest = mask;
        let mut n = 1;
        while rest != 0 {
            let k = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            n += (a.addrs[k] == a.addrs[l]) as u32;
        }
        best = best.max(n);
    }
    best.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::AccessKind;
    use metalsim_isa::Space;

    /// An access of `bytes` per lane by all 32 lanes at `addr(lane)`.
    fn access(bytes: u32, addr: impl Fn(u64) -> u64) -> Access {
        Access {
            space: Space::Threadgroup,
            kind: AccessKind::Load,
            bytes,
            mask: u32::MAX,
            addrs: std::array::from_fn(|l| addr(l as u64)),
            second: None,
        }
    }

    fn waves(a: &Access) -> u32 {
        wavefronts(a, 32, 4, &mut Vec::new())
    }

    fn check(a: &Access, lines_of_128: usize, wavefronts: u32) {
        let mut out = Vec::new();
        lines(a, 7, &mut out);
        assert_eq!(out.len(), lines_of_128, "lines");
        assert_eq!(waves(a), wavefronts, "wavefronts");
    }

    #[test]
    fn unit_stride_is_one_line_and_one_wavefront() {
        check(&access(4, |l| 4 * l), 1, 1);
        // Misaligned start: two lines.
        check(&access(4, |l| 64 + 4 * l), 2, 1);
    }

    #[test]
    fn a_broadcast_is_one_word() {
        check(&access(4, |_| 256), 1, 1);
    }

    #[test]
    fn stride_k_words_conflicts_k_ways() {
        for k in [2u64, 4, 8, 16, 32] {
            let a = access(4, |l| 4 * k * l);
            assert_eq!(waves(&a), k as u32, "stride {k}");
        }
        // An odd stride spreads over every bank.
        assert_eq!(waves(&access(4, |l| 4 * 3 * l)), 1);
    }

    #[test]
    fn two_words_of_one_bank_conflict_and_of_two_banks_do_not() {
        // Half the lanes at word 0, half at word 32: both in bank 0.
        assert_eq!(waves(&access(4, |l| if l < 16 { 0 } else { 128 })), 2);
        // Words 0 and 16 (the rows of a 16-wide tile): banks 0 and 16.
        assert_eq!(waves(&access(4, |l| if l < 16 { 0 } else { 64 })), 1);
        // Words 0 and 33, 33 words apart but in different banks.
        assert_eq!(waves(&access(4, |l| if l < 16 { 0 } else { 132 })), 1);
    }

    #[test]
    fn wide_accesses_touch_several_banks_and_lines() {
        // float4 per lane, unit stride: 512 bytes = 4 lines, 128 words over 32 banks.
        check(&access(16, |l| 16 * l), 4, 4);
    }

    #[test]
    fn a_vector_touches_each_of_its_four_byte_units() {
        // One lane's float4 at byte 16: 4-byte units 4 to 7, each once.
        let mut a = access(16, |_| 16);
        a.mask = 1;
        let mut out = Vec::new();
        lines(&a, 2, &mut out);
        assert_eq!(out, [4, 5, 6, 7]);
    }

    proptest::proptest! {
        /// The one-window test answers as its definition, lane by lane: every piece in one
        /// bank word, every word in one aligned window of as many words as banks.
        #[test]
        fn the_bank_window_test_follows_its_definition(
            base in 0u64..1 << 20,
            offsets in proptest::collection::vec(0u64..300, 32),
            bytes in proptest::sample::select(vec![1u32, 2, 4, 8, 16]),
            mask in proptest::prop_oneof![proptest::strategy::Just(u32::MAX), proptest::prelude::any::<u32>()],
        ) {
            let mut a = access(bytes, |l| base + offsets[l as usize]);
            a.mask = mask;
            let (bank_mask, shift) = (31, 2);
            let active = || (0..32).filter(|l| mask >> l & 1 == 1).map(|l| a.addrs[l]);
            let first = active().next();
            let expect = active().all(|addr| {
                (addr >> shift) == (addr + bytes as u64 - 1) >> shift
                    && (addr >> (shift + 5)) == (first.unwrap() >> (shift + 5))
            });
            proptest::prop_assert_eq!(within_one_bank_window(&a, bank_mask, shift), expect);
        }

        /// The lines of an access are its pieces' lines, each once, in the order the lanes
        /// first touch them (the per-piece definition).
        #[test]
        fn lines_are_the_pieces_lines_in_lane_order(
            base in 0u64..1 << 20,
            offsets in proptest::collection::vec(0u64..600, 32),
            bytes in proptest::sample::select(vec![1u32, 2, 4, 8, 16, 64]),
            mask in proptest::prop_oneof![proptest::strategy::Just(u32::MAX), proptest::prelude::any::<u32>()],
        ) {
            let mut a = access(bytes, |l| base + offsets[l as usize]);
            a.mask = mask;
            let mut expect = Vec::new();
            for_each_piece(&a, |addr, bytes| {
                let first = addr >> 6;
                let last = (addr + bytes - 1) >> 6;
                for line in first..=last.min(first + MAX_SPAN) {
                    insert(&mut expect, line);
                }
            });
            let mut out = Vec::new();
            lines(&a, 6, &mut out);
            proptest::prop_assert_eq!(out, expect);
        }
    }

    #[test]
    fn same_address_lanes_are_counted() {
        assert_eq!(same_address(&access(4, |l| 4 * (l % 4))), 8);
        assert_eq!(same_address(&access(4, |l| 4 * l)), 1);
    }
}
