//! The register file of a SIMD-group: two banks of lane-major slots, and the loops that
//! apply a lane function to 32 lanes and write the result back to the active lanes only.
//!
//! Every loop computes all 32 lanes unconditionally (lane functions never fault) and then
//! blends the result into the destination under the active mask, so the compiler can
//! vectorize it.

use crate::simt::LaneMask;

/// The registers of one SIMD-group.
#[derive(Clone, Debug, Default)]
pub(crate) struct Registers {
    /// The 32-bit bank.
    pub r32: Vec<[u32; 32]>,
    /// The 64-bit bank.
    pub r64: Vec<[u64; 32]>,
}

/// Writes `src` into `dst` in the lanes of `mask`.
#[inline(always)]
pub(crate) fn blend<T: Copy>(dst: &mut [T; 32], src: &[T; 32], mask: LaneMask) {
    if mask == u32::MAX {
        *dst = *src;
    } else {
        for (i, (d, s)) in dst.iter_mut().zip(src).enumerate() {
            if mask >> i & 1 != 0 {
                *d = *s;
            }
        }
    }
}

/// Applies `f` to every lane.
#[inline(always)]
pub(crate) fn map1<A: Copy, R: Copy + Default>(a: &[A; 32], f: impl Fn(A) -> R) -> [R; 32] {
    let mut out = [R::default(); 32];
    for (o, &x) in out.iter_mut().zip(a) {
        *o = f(x);
    }
    out
}

/// Applies `f` to every lane of two operands.
#[inline(always)]
pub(crate) fn map2<A: Copy, B: Copy, R: Copy + Default>(
    a: &[A; 32],
    b: &[B; 32],
    f: impl Fn(A, B) -> R,
) -> [R; 32] {
    let mut out = [R::default(); 32];
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
    out
}

/// Applies `f` to every lane of three operands.
#[inline(always)]
pub(crate) fn map3<A: Copy, B: Copy, C: Copy, R: Copy + Default>(
    a: &[A; 32],
    b: &[B; 32],
    c: &[C; 32],
    f: impl Fn(A, B, C) -> R,
) -> [R; 32] {
    let mut out = [R::default(); 32];
    for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
        *o = f(x, y, z);
    }
    out
}

/// Widens 32-bit lanes to 64 bits.
#[inline(always)]
pub(crate) fn widen(a: &[u32; 32]) -> [u64; 32] {
    map1(a, |x| x as u64)
}

/// Narrows 64-bit lanes to their low 32 bits.
#[inline(always)]
pub(crate) fn narrow(a: &[u64; 32]) -> [u32; 32] {
    map1(a, |x| x as u32)
}

impl Registers {
    /// Starts from a template (constants filled in).
    pub fn reset(&mut self, t32: &[[u32; 32]], t64: &[[u64; 32]]) {
        self.r32.clear();
        self.r32.extend_from_slice(t32);
        self.r64.clear();
        self.r64.extend_from_slice(t64);
    }

    /// `dst = f(a)` in the 32-bit bank.
    #[inline(always)]
    pub fn un32(&mut self, dst: u32, a: u32, mask: LaneMask, f: impl Fn(u32) -> u32) {
        let out = map1(&self.r32[a as usize], f);
        blend(&mut self.r32[dst as usize], &out, mask);
    }

    /// `dst = f(a, b)` in the 32-bit bank.
    #[inline(always)]
    pub fn bin32(&mut self, dst: u32, a: u32, b: u32, mask: LaneMask, f: impl Fn(u32, u32) -> u32) {
        let out = map2(&self.r32[a as usize], &self.r32[b as usize], f);
        blend(&mut self.r32[dst as usize], &out, mask);
    }

    /// `dst = f(a, b, c)` in the 32-bit bank.
    #[inline(always)]
    pub fn tri32(
        &mut self,
        dst: u32,
        a: u32,
        b: u32,
        c: u32,
        mask: LaneMask,
        f: impl Fn(u32, u32, u32) -> u32,
    ) {
        let out = map3(
            &self.r32[a as usize],
            &self.r32[b as usize],
            &self.r32[c as usize],
            f,
        );
        blend(&mut self.r32[dst as usize], &out, mask);
    }

    /// `dst = f(a)` in the 64-bit bank.
    #[inline(always)]
    pub fn un64(&mut self, dst: u32, a: u32, mask: LaneMask, f: impl Fn(u64) -> u64) {
        let out = map1(&self.r64[a as usize], f);
        blend(&mut self.r64[dst as usize], &out, mask);
    }

    /// `dst = f(a, b)` in the 64-bit bank.
    #[inline(always)]
    pub fn bin64(&mut self, dst: u32, a: u32, b: u32, mask: LaneMask, f: impl Fn(u64, u64) -> u64) {
        let out = map2(&self.r64[a as usize], &self.r64[b as usize], f);
        blend(&mut self.r64[dst as usize], &out, mask);
    }

    /// Writes 32-bit lanes to `dst` in the lanes of `mask`.
    #[inline(always)]
    pub fn set32(&mut self, dst: u32, v: &[u32; 32], mask: LaneMask) {
        blend(&mut self.r32[dst as usize], v, mask);
    }

    /// Writes 64-bit lanes to `dst` in the lanes of `mask`.
    #[inline(always)]
    pub fn set64(&mut self, dst: u32, v: &[u64; 32], mask: LaneMask) {
        blend(&mut self.r64[dst as usize], v, mask);
    }

    /// Reads a slot of either bank widened to 64 bits.
    #[inline(always)]
    pub fn get(&self, wide: bool, slot: u32) -> [u64; 32] {
        if wide {
            self.r64[slot as usize]
        } else {
            widen(&self.r32[slot as usize])
        }
    }

    /// Writes 64-bit lanes to a slot of either bank (narrowed for the 32-bit bank).
    #[inline(always)]
    pub fn put(&mut self, wide: bool, slot: u32, v: &[u64; 32], mask: LaneMask) {
        if wide {
            self.set64(slot, v, mask);
        } else {
            self.set32(slot, &narrow(v), mask);
        }
    }
}
