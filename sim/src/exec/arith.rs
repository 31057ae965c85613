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
        FloatTy::F32 => regs.tri32(dst, a, b, c, mask, |x, y, z| {
            alu::fma_f32(f32::from_bits(x), f32::from_bits(y), f32::from_bits(z)).to_bits()
        }),
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
    let src = regs.get(from.is_wide(), ins.a);
    let out = map1(&src, |x| cvt::convert(x, from, to, sat));
    regs.put(to.is_wide(), ins.dst, &out, mask);
}

/// `dst = a + ext(b) * scale` (the scale is in `c`).
#[inline(never)]
pub(super) fn ptr_add(regs: &mut Registers, index: Type, ins: Instr, mask: LaneMask) {
    let scale = ins.c as u64;
    let idx = if index.is_wide() {
        regs.r64[ins.b as usize]
    } else {
        let w = Width::of(index);
        map1(&regs.r32[ins.b as usize], |x| w.extend(x) as u64)
    };
    let out = map2(&regs.r64[ins.a as usize], &idx, |p, i| {
        p.wrapping_add(i.wrapping_mul(scale))
    });
    regs.set64(ins.dst, &out, mask);
}
