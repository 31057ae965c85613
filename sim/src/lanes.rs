//! Cross-lane operations of SIMD-groups (32 lanes) and quad-groups (4 lanes).
//!
//! Only active lanes take part. A shuffle whose source lane is out of range or inactive
//! gives the reading lane its own value; reading an inactive lane (MSL leaves its value
//! undefined) is reported to the sanitizer. Reductions and scans combine the active lanes in
//! ascending lane order (so a float sum is reproducible). `broadcast_first` reads the
//! lowest active lane. For quad-groups, lane numbers (of `shuffle`, `ballot`,
//! `active_mask`...) are relative to the group of 4.

use metalsim_isa::{SimdOp, Type};

use crate::alu::{self, FloatBinOp, FloatTy, IntBinOp, Width};
use crate::simt::LaneMask;

/// Runs a cross-lane operation. `a` is the value operand (widened to 64 bits), `b` the
/// lane/delta/mask operand (for the operations that take one); the result is widened too.
/// Also gives the lanes that read an inactive lane (a source lane in range but not active),
/// which MSL leaves undefined.
pub(crate) fn cross(
    op: SimdOp,
    quad: bool,
    ty: Type,
    a: &[u64; 32],
    b: &[u32; 32],
    mask: LaneMask,
) -> ([u64; 32], LaneMask) {
    // The shuffles each get their own lane loop (the operation a constant in it); a
    // reduction is the same for every lane of a group, so it is folded once per group.
    let uniform = !quad && mask == u32::MAX && b.iter().all(|&d| d == b[0]);
    match op {
        SimdOp::ShuffleDown | SimdOp::ShuffleUp | SimdOp::ShuffleXor if uniform => {
            (shift_all(op, a, b[0]), 0)
        }
        SimdOp::ShuffleDown => each_lane(SimdOp::ShuffleDown, quad, ty, a, b, mask),
        SimdOp::ShuffleUp => each_lane(SimdOp::ShuffleUp, quad, ty, a, b, mask),
        SimdOp::ShuffleXor => each_lane(SimdOp::ShuffleXor, quad, ty, a, b, mask),
        SimdOp::Shuffle => each_lane(SimdOp::Shuffle, quad, ty, a, b, mask),
        SimdOp::Broadcast => each_lane(SimdOp::Broadcast, quad, ty, a, b, mask),
        SimdOp::Sum
        | SimdOp::Product
        | SimdOp::Min
        | SimdOp::Max
        | SimdOp::And
        | SimdOp::Or
        | SimdOp::Xor => (reduce(op, quad, ty, a, mask), 0),
        _ => each_lane(op, quad, ty, a, b, mask),
    }
}

/// A shuffle down, up or xor of all 32 lanes, every one active, by the same `delta`: a
/// source lane out of range keeps the lane's own value.
fn shift_all(op: SimdOp, a: &[u64; 32], delta: u32) -> [u64; 32] {
    let mut out = *a;
    let Some(d) = (delta < 32).then_some(delta as usize) else {
        return out;
    };
    match op {
        SimdOp::ShuffleDown => out[..32 - d].copy_from_slice(&a[d..]),
        SimdOp::ShuffleUp => out[d..].copy_from_slice(&a[..32 - d]),
        _ => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = a[i ^ d];
            }
        }
    }
    out
}

/// A reduction: each active lane gets the fold of its group's active lanes.
fn reduce(op: SimdOp, quad: bool, ty: Type, a: &[u64; 32], mask: LaneMask) -> [u64; 32] {
    let width: u32 = if quad { 4 } else { 32 };
    let group_bits: u32 = if quad { 0xf } else { u32::MAX };
    let mut out = *a;
    for base in (0..32).step_by(width as usize) {
        let group = (mask >> base) & group_bits;
        if group == 0 {
            continue;
        }
        let v = fold(op, ty, a, base, group, width);
        for l in 0..width {
            if group >> l & 1 != 0 {
                out[(base + l) as usize] = v;
            }
        }
    }
    out
}

/// [`cross`] lane by lane.
#[inline(always)]
fn each_lane(
    op: SimdOp,
    quad: bool,
    ty: Type,
    a: &[u64; 32],
    b: &[u32; 32],
    mask: LaneMask,
) -> ([u64; 32], LaneMask) {
    let width: u32 = if quad { 4 } else { 32 };
    let group_bits: u32 = if quad { 0xf } else { u32::MAX };
    let mut out = *a;
    let mut inactive = 0;
    for i in 0..32u32 {
        if mask >> i & 1 == 0 {
            continue;
        }
        let base = i & !(width - 1);
        let local = i - base;
        let group = (mask >> base) & group_bits;
        let src_local = match op {
            SimdOp::Shuffle | SimdOp::Broadcast => Some(b[i as usize]).filter(|&l| l < width),
            SimdOp::ShuffleUp => local.checked_sub(b[i as usize]),
            SimdOp::ShuffleDown => Some(local as u64 + b[i as usize] as u64)
                .filter(|&l| l < width as u64)
                .map(|l| l as u32),
            SimdOp::ShuffleXor => Some(local ^ b[i as usize]).filter(|&l| l < width),
            SimdOp::ShuffleRotateUp => Some((local + width - b[i as usize] % width) % width),
            SimdOp::ShuffleRotateDown => Some((local + b[i as usize] % width) % width),
            SimdOp::BroadcastFirst => Some(group.trailing_zeros()),
            _ => None,
        };
        out[i as usize] = match op {
            SimdOp::Shuffle
            | SimdOp::Broadcast
            | SimdOp::ShuffleUp
            | SimdOp::ShuffleDown
            | SimdOp::ShuffleXor
            | SimdOp::ShuffleRotateUp
            | SimdOp::ShuffleRotateDown
            | SimdOp::BroadcastFirst => match src_local {
                Some(l) if group >> l & 1 != 0 => a[(base + l) as usize],
                Some(_) => {
                    inactive |= 1 << i;
                    a[i as usize]
                }
                None => a[i as usize],
            },
            SimdOp::Sum
            | SimdOp::Product
            | SimdOp::Min
            | SimdOp::Max
            | SimdOp::And
            | SimdOp::Or
            | SimdOp::Xor => fold(op, ty, a, base, group, width),
            SimdOp::PrefixInclusiveSum | SimdOp::PrefixInclusiveProduct => {
                fold(op, ty, a, base, group & low_bits(local + 1), width)
            }
            SimdOp::PrefixExclusiveSum | SimdOp::PrefixExclusiveProduct => {
                fold(op, ty, a, base, group & low_bits(local), width)
            }
            SimdOp::Ballot => {
                let mut bits = 0u64;
                for l in 0..width {
                    if group >> l & 1 != 0 && a[(base + l) as usize] & 1 != 0 {
                        bits |= 1 << l;
                    }
                }
                bits
            }
            SimdOp::All => {
                (0..width).all(|l| group >> l & 1 == 0 || a[(base + l) as usize] & 1 != 0) as u64
            }
            SimdOp::Any => {
                (0..width).any(|l| group >> l & 1 != 0 && a[(base + l) as usize] & 1 != 0) as u64
            }
            SimdOp::IsFirst => (group.trailing_zeros() == local) as u64,
            SimdOp::ActiveMask => group as u64,
        };
    }
    (out, inactive)
}

fn low_bits(n: u32) -> u32 {
    if n >= 32 { u32::MAX } else { (1u32 << n) - 1 }
}

/// Combines the lanes of `lanes` (group-relative) in ascending order; the identity when
/// there are none.
fn fold(op: SimdOp, ty: Type, a: &[u64; 32], base: u32, lanes: u32, width: u32) -> u64 {
    let mut acc: Option<u64> = None;
    for l in 0..width {
        if lanes >> l & 1 != 0 {
            let v = a[(base + l) as usize];
            acc = Some(match acc {
                None => v,
                Some(x) => combine(op, ty, x, v),
            });
        }
    }
    acc.unwrap_or_else(|| identity(op, ty))
}

fn identity(op: SimdOp, ty: Type) -> u64 {
    let product = matches!(
        op,
        SimdOp::Product | SimdOp::PrefixInclusiveProduct | SimdOp::PrefixExclusiveProduct
    );
    match (product, FloatTy::of(ty)) {
        (false, _) => 0,
        (true, Some(ft)) => ft.one() as u64,
        (true, None) => 1,
    }
}

/// One step of a reduction, with the same semantics as the arithmetic instructions.
fn combine(op: SimdOp, ty: Type, x: u64, y: u64) -> u64 {
    let (iop, fop) = match op {
        SimdOp::Product | SimdOp::PrefixInclusiveProduct | SimdOp::PrefixExclusiveProduct => {
            (IntBinOp::Mul, FloatBinOp::Mul)
        }
        SimdOp::Min => (IntBinOp::Min, FloatBinOp::Min),
        SimdOp::Max => (IntBinOp::Max, FloatBinOp::Max),
        SimdOp::And => (IntBinOp::And, FloatBinOp::Add),
        SimdOp::Or => (IntBinOp::Or, FloatBinOp::Add),
        SimdOp::Xor => (IntBinOp::Xor, FloatBinOp::Add),
        _ => (IntBinOp::Add, FloatBinOp::Add),
    };
    match FloatTy::of(ty) {
        Some(ft) => alu::float_bin(fop, ft, x as u32, y as u32) as u64,
        None if ty.is_wide() => alu::long_bin(iop, ty.is_signed(), x, y),
        None => alu::int_bin(iop, Width::of(ty), x as u32, y as u32) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes() -> [u64; 32] {
        std::array::from_fn(|i| i as u64)
    }

    #[test]
    fn shuffle_down_keeps_own_value_past_the_end_and_from_inactive_lanes() {
        let a = lanes();
        let d = [4u32; 32];
        let (r, inactive) = cross(SimdOp::ShuffleDown, false, Type::U32, &a, &d, u32::MAX);
        assert_eq!(r[0], 4);
        assert_eq!(r[28], 28);
        assert_eq!(inactive, 0, "past the end is not an inactive read");
        let (r, inactive) = cross(SimdOp::ShuffleDown, false, Type::U32, &a, &d, 0x0000_000f);
        assert_eq!(r[0], 0);
        assert_eq!(
            inactive, 0xf,
            "lanes 0-3 read lanes 4-7, which are inactive"
        );
    }

    #[test]
    fn reductions_folded_once_per_group_equal_the_lane_by_lane_fold() {
        let a: [u64; 32] = std::array::from_fn(|i| (i as u64 * 2_654_435_761) & 0xffff_ffff);
        let z = [0u32; 32];
        let ops = [
            SimdOp::Sum,
            SimdOp::Product,
            SimdOp::Min,
            SimdOp::Max,
            SimdOp::And,
            SimdOp::Or,
            SimdOp::Xor,
        ];
        for op in ops {
            for ty in [Type::U32, Type::I32, Type::F32, Type::U64] {
                for mask in [u32::MAX, 0, 0b1011, 0x8000_0001, 0x0ff0_f00f] {
                    for quad in [false, true] {
                        assert_eq!(
                            cross(op, quad, ty, &a, &z, mask),
                            each_lane(op, quad, ty, &a, &z, mask),
                            "{op:?} {ty:?} mask {mask:#x} quad {quad}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn uniform_shuffles_of_all_lanes_equal_the_lane_by_lane_shuffle() {
        let a = lanes();
        for op in [SimdOp::ShuffleDown, SimdOp::ShuffleUp, SimdOp::ShuffleXor] {
            for d in [0u32, 1, 2, 5, 16, 31, 32, 33, u32::MAX] {
                let b = [d; 32];
                assert_eq!(
                    cross(op, false, Type::U32, &a, &b, u32::MAX),
                    each_lane(op, false, Type::U32, &a, &b, u32::MAX),
                    "{op:?} by {d}"
                );
            }
        }
    }

    #[test]
    fn reductions_and_scans_use_active_lanes() {
        let a = lanes();
        let z = [0u32; 32];
        let mask = 0b1011;
        let (s, inactive) = cross(SimdOp::Sum, false, Type::U32, &a, &z, mask);
        assert_eq!((s[0], inactive), (4, 0));
        let (p, _) = cross(SimdOp::PrefixExclusiveSum, false, Type::U32, &a, &z, mask);
        assert_eq!([p[0], p[1], p[3]], [0, 0, 1]);
        let (q, _) = cross(SimdOp::Sum, true, Type::U32, &a, &z, u32::MAX);
        assert_eq!([q[0], q[4]], [6, 22]);
        let ones = [1u64; 32];
        let (b, _) = cross(SimdOp::Ballot, false, Type::Pred, &ones, &z, mask);
        assert_eq!(b[0], 0b1011);
        let (f, _) = cross(SimdOp::IsFirst, false, Type::Pred, &a, &z, 0b1100);
        assert_eq!([f[2], f[3]], [1, 0]);
    }
}
