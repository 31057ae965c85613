//! Constant evaluation: the value of an operation on constant operands, computed exactly
//! as the simulator computes it (`sim/src/alu.rs`, `sim/src/cvt.rs`).
//!
//! Integers wrap; division by zero gives all ones, remainder by zero the dividend; shift
//! counts are taken modulo the width. Floats are computed in `f32` and rounded to the
//! operation's type after every operation, `fma` with one rounding.
//!
//! Where the simulator's result is not pinned down by IEEE arithmetic alone the
//! evaluator declines (returns `None`) rather than guess:
//! - a float result that is NaN (which NaN comes out of an operation depends on the
//!   host's instructions and the order the compiler gave the operands),
//! - `min`/`max` of two zeros (which zero comes out is up to the host's `minnum`),
//! - math functions other than the roundings (`floor`, `ceil`, `trunc`, `round`,
//!   `rint`): the simulator computes Metal's fast-math formulas (`sqrt(x) = x *
//!   rsqrt(x)`...) or its precise variants, and the host's math library fixes the last
//!   bit of the transcendental ones,
//! - operations with an effect or a per-lane or cross-lane input (memory, atomics,
//!   SIMD-group operations, special registers, addresses).
//!
//! `tests/eval_matches_sim.rs` checks this module against the simulator.

use half::{bf16, f16};

use crate::op::{CmpCond, MathFn, Op};
use crate::types::Type;

pub(crate) use crate::scalar::extend;
use crate::scalar::{
    float_to_int, fma_odd, int_max, int_min, int_to_float, int_value, round_to_odd_f32,
};

/// A constant operand: its canonical bits and its type.
pub(crate) type Operand = (u64, Type);

/// The bits of the result of `op` of type `ty` on constant operands, or `None` when it
/// cannot be computed exactly here.
pub(crate) fn eval(op: Op, ty: Type, args: &[Operand]) -> Option<u64> {
    if args.len() != op.arity() {
        return None;
    }
    let x = args.first().map_or(0, |a| a.0);
    let y = args.get(1).map_or(0, |a| a.0);
    let z = args.get(2).map_or(0, |a| a.0);
    match op {
        Op::Const(bits) => Some(bits),
        Op::Select => Some(if x & 1 == 1 { y } else { z }),
        Op::Bitcast { .. } => Some(x & ty.mask()),
        Op::Cvt { from, sat } => convert(x, from, ty, sat),
        Op::Cmp(c) => Some(compare(c, ty, x, y)? as u64),
        Op::PtrAdd { scale } => {
            let index = extend(y, args[1].1) as u64;
            Some(x.wrapping_add(index.wrapping_mul(scale as u64)))
        }
        _ if ty.is_float() => float_op(op, ty, x, y, z),
        _ if ty.is_int() || ty == Type::Pred => int_op(op, ty, x, y, z),
        _ => None,
    }
}

fn int_op(op: Op, ty: Type, x: u64, y: u64, z: u64) -> Option<u64> {
    let m = ty.mask();
    let w = ty.bits();
    let (sx, sy) = (extend(x, ty), extend(y, ty));
    let count = (y & (w as u64 - 1)) as u32;
    let r = match op {
        Op::Add => x.wrapping_add(y),
        Op::Sub => x.wrapping_sub(y),
        Op::Mul => x.wrapping_mul(y),
        Op::Fma => x.wrapping_mul(y).wrapping_add(z),
        Op::Div => {
            if y == 0 {
                m
            } else if ty.is_signed() {
                (sx / sy) as u64
            } else {
                x / y
            }
        }
        Op::Rem => {
            if y == 0 {
                x
            } else if ty.is_signed() {
                (sx % sy) as u64
            } else {
                x % y
            }
        }
        Op::Min => {
            if sx <= sy {
                x
            } else {
                y
            }
        }
        Op::Max => {
            if sx >= sy {
                x
            } else {
                y
            }
        }
        Op::And => x & y,
        Op::Or => x | y,
        Op::Xor => x ^ y,
        Op::Not => !x,
        Op::Neg => x.wrapping_neg(),
        Op::Abs => sx.unsigned_abs() as u64,
        Op::Shl if w > 1 => x << count,
        Op::Shr if w > 1 => (sx >> count) as u64,
        Op::Clz if w > 1 => (x.leading_zeros() - (64 - w)) as u64,
        Op::Ctz if w > 1 => {
            if x == 0 {
                w as u64
            } else {
                x.trailing_zeros() as u64
            }
        }
        Op::Popcount if w > 1 => x.count_ones() as u64,
        Op::MulHi if w > 1 && ty.is_signed() => ((sx * sy) >> w) as u64,
        Op::MulHi if w > 1 => ((x as u128 * y as u128) >> w) as u64,
        _ => return None,
    };
    Some(r & m)
}

/// An integer comparison, or a float comparison (false on NaN except `ne`).
fn compare(c: CmpCond, ty: Type, x: u64, y: u64) -> Option<bool> {
    if ty.is_float() {
        let (a, b) = (to_f32(ty, x), to_f32(ty, y));
        return Some(ordered(c, a, b));
    }
    Some(ordered(c, extend(x, ty), extend(y, ty)))
}

fn ordered<T: PartialOrd>(c: CmpCond, a: T, b: T) -> bool {
    match c {
        CmpCond::Eq => a == b,
        CmpCond::Ne => a != b,
        CmpCond::Lt => a < b,
        CmpCond::Le => a <= b,
        CmpCond::Gt => a > b,
        CmpCond::Ge => a >= b,
    }
}

/// A float type's bits as an `f32` (exact for every float type).
fn to_f32(ty: Type, bits: u64) -> f32 {
    match ty {
        Type::F16 => f16::from_bits(bits as u16).to_f32(),
        Type::BF16 => bf16::from_bits(bits as u16).to_f32(),
        _ => f32::from_bits(bits as u32),
    }
}

/// An `f32` rounded to nearest even in a float type, as canonical bits.
fn round(ty: Type, x: f32) -> u64 {
    match ty {
        Type::F16 => f16::from_f32(x).to_bits() as u64,
        Type::BF16 => bf16::from_f32(x).to_bits() as u64,
        _ => x.to_bits() as u64,
    }
}

fn sign_bit(ty: Type) -> u64 {
    1 << (ty.bits() - 1)
}

fn float_op(op: Op, ty: Type, x: u64, y: u64, z: u64) -> Option<u64> {
    let (a, b) = (to_f32(ty, x), to_f32(ty, y));
    let r = match op {
        // Sign-bit operations: exact for every input, NaNs included.
        Op::Neg => return Some(x ^ sign_bit(ty)),
        Op::Abs => return Some(x & !sign_bit(ty)),
        Op::Add => a + b,
        Op::Sub => a - b,
        Op::Mul => a * b,
        Op::Div => a / b,
        Op::Min | Op::Max if a == 0.0 && b == 0.0 => return None,
        Op::Min => a.min(b),
        Op::Max => a.max(b),
        Op::Fma => return not_nan(fma(ty, x, y, z)?, ty),
        Op::Math(f) => math(f, a)?,
        _ => return None,
    };
    not_nan(round(ty, r), ty)
}

/// `bits` unless it is a NaN of `ty`.
fn not_nan(bits: u64, ty: Type) -> Option<u64> {
    (!to_f32(ty, bits).is_nan()).then_some(bits)
}

/// The math functions exact in every variant: the roundings to an integer.
fn math(f: MathFn, x: f32) -> Option<f32> {
    Some(match f {
        MathFn::Floor => x.floor(),
        MathFn::Ceil => x.ceil(),
        MathFn::Trunc => x.trunc(),
        MathFn::Round => x.round(),
        MathFn::Rint => x.round_ties_even(),
        _ => return None,
    })
}

/// `x * y + z` with one rounding to `ty` (the simulator's round-to-odd construction).
fn fma(ty: Type, x: u64, y: u64, z: u64) -> Option<u64> {
    let (a, b, c) = (to_f32(ty, x), to_f32(ty, y), to_f32(ty, z));
    if ty == Type::F32 {
        return Some(a.mul_add(b, c).to_bits() as u64);
    }
    // The exact result rounded to odd in f64, then to odd in f32 (24 bits, at least two
    // more than the 16-bit formats have), then to nearest even: one rounding in effect.
    Some(round(ty, round_to_odd_f32(fma_odd(a, b, c))))
}

/// `cvt`: float to integer truncates and saturates (NaN gives 0), integer to float rounds
/// to nearest even, integer to integer wraps unless `sat`, float to float rounds to
/// nearest even (a NaN result is not folded).
fn convert(bits: u64, from: Type, to: Type, sat: bool) -> Option<u64> {
    match (from.is_float(), to.is_float()) {
        (true, true) => not_nan(round(to, to_f32(from, bits)), to),
        (true, false) => Some(float_to_int(to_f32(from, bits), to)),
        (false, true) => Some(int_to_float(int_value(bits, from), to)),
        (false, false) => {
            let v = int_value(bits, from);
            let v = if sat {
                v.clamp(int_min(to), int_max(to))
            } else {
                v
            };
            Some((v as u64) & to.mask())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(op: Op, ty: Type, args: &[Operand], want: Option<u64>) {
        assert_eq!(eval(op, ty, args), want, "{op:?}.{ty} {args:?}");
    }

    #[test]
    fn integers_wrap_and_division_by_zero_is_defined() {
        check(
            Op::Add,
            Type::U8,
            &[(200, Type::U8), (100, Type::U8)],
            Some(44),
        );
        check(
            Op::Div,
            Type::I8,
            &[(0x80, Type::I8), (0xff, Type::I8)],
            Some(0x80),
        );
        check(
            Op::Div,
            Type::I32,
            &[(5, Type::I32), (0, Type::I32)],
            Some(0xffff_ffff),
        );
        check(
            Op::Rem,
            Type::U32,
            &[(5, Type::U32), (0, Type::U32)],
            Some(5),
        );
        check(
            Op::Shr,
            Type::I8,
            &[(0x80, Type::I8), (9, Type::I8)],
            Some(0xc0),
        );
        check(Op::Clz, Type::U8, &[(1, Type::U8)], Some(7));
        check(Op::Ctz, Type::U64, &[(0, Type::U64)], Some(64));
        check(
            Op::MulHi,
            Type::I32,
            &[((-2i32) as u32 as u64, Type::I32), (3, Type::I32)],
            Some(0xffff_ffff),
        );
        check(Op::Not, Type::Pred, &[(1, Type::Pred)], Some(0));
    }

    #[test]
    fn floats_decline_nan_and_signed_zero_ties() {
        let f = |x: f32| (x.to_bits() as u64, Type::F32);
        check(
            Op::Add,
            Type::F32,
            &[f(1.5), f(2.0)],
            Some(3.5f32.to_bits() as u64),
        );
        check(Op::Div, Type::F32, &[f(0.0), f(0.0)], None);
        check(Op::Min, Type::F32, &[f(0.0), f(-0.0)], None);
        check(Op::Math(MathFn::Sin), Type::F32, &[f(1.0)], None);
        check(
            Op::Neg,
            Type::F32,
            &[(0x7fc0_0001, Type::F32)],
            Some(0xffc0_0001),
        );
        // 2048 + 1 rounds to 2048 in f16.
        check(
            Op::Add,
            Type::F16,
            &[(0x6800, Type::F16), (0x3c00, Type::F16)],
            Some(0x6800),
        );
    }

    #[test]
    fn conversions_saturate_and_round() {
        let f = |x: f32| (x.to_bits() as u64, Type::F32);
        check(
            Op::Cvt {
                from: Type::F32,
                sat: false,
            },
            Type::I32,
            &[f(3e9)],
            Some(i32::MAX as u64),
        );
        check(
            Op::Cvt {
                from: Type::U32,
                sat: false,
            },
            Type::BF16,
            &[(257, Type::U32)],
            Some(0x4380),
        );
        check(
            Op::PtrAdd { scale: 4 },
            Type::U64,
            &[(100, Type::U64), (0xffff_ffff, Type::I32)],
            Some(96),
        );
    }
}
