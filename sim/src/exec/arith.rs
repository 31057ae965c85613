//! The lane loops of the arithmetic instructions, one small out-of-line function per
//! family: inside each, the compiler specializes the loop for the constant operation and
//! vectorizes it, which it stops doing once they are all inlined into one big `execute`.

use metalsim_isa::{CmpCond, Type};

use super::specialize;
use crate::alu::{self, FloatBinOp, FloatTy, FloatUnOp, IntBinOp, IntUnOp, Width};
use crate::cvt;
use crate::program::Instr;
use crate::regs::{Registers, map1, map2, map3};
use crate::simt::LaneMask;

/// `dst = op(a)` on a 32-bit integer type.
#[inline(never)]
pub(super) fn int_un(regs: &mut Registers, op: IntUnOp, w: Width, ins: Instr, mask: LaneMask) {
    let (dst, a) = (ins.dst, ins.a);
    specialize!(op; IntUnOp { Neg, Abs, Not, Clz, Ctz, Popcount } =>
        |o| regs.un32(dst, a, mask, |x| alu::int_un(o, w, x)))
}

/// `dst = op(a, b)` on a 32-bit integer type.
#[inline(never)]
pub(super) fn int_bin(regs: &mut Registers, op: IntBinOp, w: Width, ins: Instr, mask: LaneMask) {
    let (dst, a, b) = (ins.dst, ins.a, ins.b);
    specialize!(op; IntBinOp { Add, Sub, Mul, Div, Rem, Min, Max, And, Or, Xor, Shl, Shr, MulHi } =>
        |o| regs.bin32(dst, a, b, mask, |x, y| alu::int_bin(o, w, x, y)))
}

/// `dst = a * b + c` on a 32-bit integer type.
#[inline(never)]
pub(super) fn int_fma(regs: &mut Registers, w: Width, ins: Instr, mask: LaneMask) {
    let (dst, a, b, c) = (ins.dst, ins.a, ins.b, ins.c);
    regs.tri32(dst, a, b, c, mask, |x, y, z| alu::int_fma(w, x, y, z))
}

/// `dst = a cond b` on a 32-bit integer type.
#[inline(never)]
pub(super) fn int_cmp(regs: &mut Registers, cond: CmpCond, w: Width, ins: Instr, mask: LaneMask) {
    let (dst, a, b) = (ins.dst, ins.a, ins.b);
    specialize!(cond; CmpCond { Eq, Ne, Lt, Le, Gt, Ge } =>
        |k| regs.bin32(dst, a, b, mask, |x, y| alu::int_cmp(k, w, x, y) as u32))
}

/// `dst = op(a)` on a 64-bit integer type.
#[inline(never)]
pub(super) fn long_un(regs: &mut Registers, op: IntUnOp, signed: bool, ins: Instr, mask: LaneMask) {
    regs.un64(ins.dst, ins.a, mask, |x| alu::long_un(op, signed, x))
}

/// `dst = op(a, b)` on a 64-bit integer type.
#[inline(never)]
pub(super) fn long_bin(
    regs: &mut Registers,
    op: IntBinOp,
    signed: bool,
    ins: Instr,
    mask: LaneMask,
) {
    let (dst, a, b) = (ins.dst, ins.a, ins.b);
    specialize!(op; IntBinOp { Add, Sub, Mul, Div, Rem, Min, Max, And, Or, Xor, Shl, Shr, MulHi } =>
        |o| regs.bin64(dst, a, b, mask, |x, y| alu::long_bin(o, signed, x, y)))
}

/// `dst = a * b + c` on a 64-bit integer type.
#[inline(never)]
pub(super) fn long_fma(regs: &mut Registers, ins: Instr, mask: LaneMask) {
    let out = map3(
        &regs.r64[ins.a as usize],
        &regs.r64[ins.b as usize],
        &regs.r64[ins.c as usize],
        |x: u64, y: u64, z: u64| x.wrapping_mul(y).wrapping_add(z),
    );
    regs.set64(ins.dst, &out, mask);
}

/// `dst = a cond b` on a 64-bit integer type.
#[inline(never)]
pub(super) fn long_cmp(
    regs: &mut Registers,
    cond: CmpCond,
    signed: bool,
    ins: Instr,
    mask: LaneMask,
) {
    let (a, b) = (&regs.r64[ins.a as usize], &regs.r64[ins.b as usize]);
    let out = specialize!(cond; CmpCond { Eq, Ne, Lt, Le, Gt, Ge } =>
        |k| map2(a, b, |x, y| alu::long_cmp(k, signed, x, y) as u32));
    regs.set32(ins.dst, &out, mask);
}

/// `dst = -a` or `|a|` on a float type.
#[inline(never)]
pub(super) fn float_un(
    regs: &mut Registers,
    op: FloatUnOp,
    ft: FloatTy,
    ins: Instr,
    mask: LaneMask,
) {
    let (dst, a) = (ins.dst, ins.a);
    specialize!(op; FloatUnOp { Neg, Abs } =>
        |o| regs.un32(dst, a, mask, |x| alu::float_un(o, ft, x)))
}

/// `dst = op(a, b)` on a float type.
#[inline(never)]
pub(super) fn float_bin(
    regs: &mut Registers,
    op: FloatBinOp,
    ft: FloatTy,
    ins: Instr,
    mask: LaneMask,
) {
    let (dst, a, b) = (ins.dst, ins.a, ins.b);
    match ft {
        FloatTy::F32 => specialize!(op; FloatBinOp { Add, Sub, Mul, Div, Min, Max } =>
        |o| regs.bin32(dst, a, b, mask, |x, y| {
            alu::f32_bin(o, f32::from_bits(x), f32::from_bits(y)).to_bits()
        })),
        _ => regs.bin32(dst, a, b, mask, |x, y| alu::float_bin(op, ft, x, y)),
    }
}

/// `dst = a * b + c`, fused, on a float type.
#[inline(never)]
pub(super) fn float_fma(regs: &mut Registers, ft: FloatTy, ins: Instr, mask: LaneMask) {
    let (dst, a, b, c) = (ins.dst, ins.a, ins.b, ins.c);
    match ft {
        FloatTy::F32 => {
            let r = &regs.r32;
            let out = alu::fma_f32_lanes(&r[a as usize], &r[b as usize], &r[c as usize]);
            regs.set32(dst, &out, mask);
        }
        _ => regs.tri32(dst, a, b, c, mask, |x, y, z| alu::float_fma(ft, x, y, z)),
    }
}

/// `dst = a cond b` on a float type.
#[inline(never)]
pub(super) fn float_cmp(
    regs: &mut Registers,
    cond: CmpCond,
    ft: FloatTy,
    ins: Instr,
    mask: LaneMask,
) {
    let (dst, a, b) = (ins.dst, ins.a, ins.b);
    match ft {
        FloatTy::F32 => specialize!(cond; CmpCond { Eq, Ne, Lt, Le, Gt, Ge } =>
        |k| regs.bin32(dst, a, b, mask, |x, y| {
            alu::compare(k, f32::from_bits(x), f32::from_bits(y)) as u32
        })),
        _ => regs.bin32(dst, a, b, mask, |x, y| {
            alu::float_cmp(cond, ft, x, y) as u32
        }),
    }
}

/// `dst = a ? b : c` in the 32-bit bank.
#[inline(never)]
pub(super) fn select32(regs: &mut Registers, ins: Instr, mask: LaneMask) {
    regs.tri32(ins.dst, ins.a, ins.b, ins.c, mask, |p, x, y| {
        if p != 0 { x } else { y }
    })
}

/// `dst = a ? b : c` in the 64-bit bank (`a` in the 32-bit bank).
#[inline(never)]
pub(super) fn select64(regs: &mut Registers, ins: Instr, mask: LaneMask) {
    let out = map3(
        &regs.r32[ins.a as usize],
        &regs.r64[ins.b as usize],
        &regs.r64[ins.c as usize],
        |p, x, y| if p != 0 { x } else { y },
    );
    regs.set64(ins.dst, &out, mask);
}

/// `dst = convert(a)`.
#[inline(never)]
pub(super) fn cvt(
    regs: &mut Registers,
    from: Type,
    to: Type,
    sat: bool,
    ins: Instr,
    mask: LaneMask,
) {
    // Both in the 32-bit bank (every pair `cvt_lanes32` covers).
    if !from.is_wide()
        && !to.is_wide()
        && let Some(out) = cvt_lanes32(from, to, &regs.r32[ins.a as usize])
    {
        return regs.set32(ins.dst, &out, mask);
    }
    let src = regs.get(from.is_wide(), ins.a);
    let out = map1(&src, |x| cvt::convert(x, from, to, sat));
    regs.put(to.is_wide(), ins.dst, &out, mask);
}

/// The common conversions between 32-bit integers and `f32` (and from `f32` to 8- and
/// 16-bit integers) in loops that vectorize: Rust's `as` rounds integers to nearest even
/// and floats toward zero, saturating with NaN to 0, as [`cvt::convert`] does (and
/// float-to-integer conversions saturate whether or not `sat` is asked for). `None` for
/// other pairs.
#[inline(always)]
fn cvt_lanes32(from: Type, to: Type, r: &[u32; 32]) -> Option<[u32; 32]> {
    let f = f32::from_bits;
    Some(match (from, to) {
        (Type::U8 | Type::U16 | Type::U32, Type::F32) => map1(r, |x| (x as f32).to_bits()),
        (Type::I32, Type::F32) => map1(r, |x| (x as i32 as f32).to_bits()),
        (Type::I16, Type::F32) => map1(r, |x| (x as u16 as i16 as f32).to_bits()),
        (Type::I8, Type::F32) => map1(r, |x| (x as u8 as i8 as f32).to_bits()),
        (Type::F32, Type::U32) => map1(r, |x| f(x) as u32),
        (Type::F32, Type::I32) => map1(r, |x| f(x) as i32 as u32),
        (Type::F32, Type::U16) => map1(r, |x| f(x) as u16 as u32),
        (Type::F32, Type::I16) => map1(r, |x| f(x) as i16 as u16 as u32),
        (Type::F32, Type::U8) => map1(r, |x| f(x) as u8 as u32),
        (Type::F32, Type::I8) => map1(r, |x| f(x) as i8 as u8 as u32),
        _ => return None,
    })
}

/// `dst = a + ext(b) * scale` (the scale is in `c`).
#[inline(never)]
pub(super) fn ptr_add(regs: &mut Registers, index: Type, ins: Instr, mask: LaneMask) {
    let scale = ins.c as u64;
    let p = &regs.r64[ins.a as usize];
    let out = if index.is_wide() {
        scaled_add(p, &regs.r64[ins.b as usize], scale)
    } else {
        // Each extension its own loop, so each vectorizes.
        let w = Width::of(index);
        let r = &regs.r32[ins.b as usize];
        let idx = match (w.signed, w.bits) {
            (false, _) => map1(r, |x| x as u64),
            (true, 32) => map1(r, |x| x as i32 as i64 as u64),
            (true, _) => map1(r, |x| w.extend(x) as u64),
        };
        scaled_add(p, &idx, scale)
    };
    regs.set64(ins.dst, &out, mask);
}

/// `p + i * scale` in every lane. A power-of-two scale (every element size) is a shift,
/// which vectorizes where a 64-bit multiply does not; the same value either way.
#[inline(always)]
fn scaled_add(p: &[u64; 32], idx: &[u64; 32], scale: u64) -> [u64; 32] {
    if scale.is_power_of_two() {
        let shift = scale.trailing_zeros();
        map2(p, idx, |p, i| p.wrapping_add(i << shift))
    } else {
        map2(p, idx, |p, i| p.wrapping_add(i.wrapping_mul(scale)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The vectorized conversions of 32 lanes of `bits` against `cvt::convert` lane by
    /// lane, for every pair they cover.
    fn check(bits: &[u32; 32]) {
        use Type::*;
        let pairs = [
            (U8, F32),
            (U16, F32),
            (U32, F32),
            (I8, F32),
            (I16, F32),
            (I32, F32),
            (F32, U32),
            (F32, I32),
            (F32, U16),
            (F32, I16),
            (F32, U8),
            (F32, I8),
        ];
        for (from, to) in pairs {
            // Registers hold canonical bits: masked to the source width.
            let src = bits.map(|x| x & from.mask() as u32);
            let got = cvt_lanes32(from, to, &src).expect("a covered pair");
            for sat in [false, true] {
                for (i, (&g, &x)) in got.iter().zip(&src).enumerate() {
                    let want = cvt::convert(x as u64, from, to, sat) as u32;
                    assert_eq!(g, want, "{from:?} -> {to:?} (sat {sat}), lane {i}: {x:#x}");
                }
            }
        }
    }

    #[test]
    fn fast_conversions_match_convert_at_the_edges() {
        let edges = [
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            127.5,
            128.0,
            -128.9,
            255.9,
            256.0,
            -1.0,
            32767.9,
            32768.0,
            -32769.0,
            65535.9,
            65536.0,
            2147483520.0,
            2147483648.0,
            -2147483904.0,
            4294967040.0,
            4294967296.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-40,
            f32::MAX,
            -f32::MAX,
        ];
        let mut bits = [0u32; 32];
        for (b, e) in bits.iter_mut().zip(edges) {
            *b = e.to_bits();
        }
        check(&bits);
        let ints = [
            0u32,
            1,
            0x7f,
            0x80,
            0xff,
            0x7fff,
            0x8000,
            0xffff,
            16_777_217,
            16_777_219,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            0xff00_0001,
        ];
        let mut bits = [0u32; 32];
        for (b, &x) in bits.iter_mut().zip(ints.iter().cycle()) {
            *b = x;
        }
        check(&bits);
    }

    proptest! {
        #[test]
        fn fast_conversions_match_convert(bits in proptest::array::uniform32(any::<u32>())) {
            check(&bits);
        }
    }
}
