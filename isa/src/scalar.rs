//! The exact scalar semantics the simulator executes and the optimizer folds, in one
//! place so the two cannot drift apart: integer values of canonical bits, conversions
//! (`cvt`) and the round-to-odd construction behind a fused multiply-add.

use half::f16;

use crate::types::Type;

/// The value of an integer's canonical bits (masked to the type, sign-extended for signed
/// types).
#[inline]
pub fn extend(bits: u64, ty: Type) -> i128 {
    let bits = bits & ty.mask();
    if ty.is_signed() {
        let s = 64 - ty.bits();
        (((bits << s) as i64) >> s) as i128
    } else {
        bits as i128
    }
}

/// The value of an integer's or a predicate's canonical bits.
#[inline]
pub fn int_value(bits: u64, ty: Type) -> i128 {
    match ty {
        Type::Pred => (bits & 1) as i128,
        t => extend(bits, t),
    }
}

/// The smallest value of an integer type.
#[inline]
pub fn int_min(ty: Type) -> i128 {
    if ty.is_signed() {
        -(1i128 << (ty.bits() - 1))
    } else {
        0
    }
}

/// The largest value of an integer type.
#[inline]
pub fn int_max(ty: Type) -> i128 {
    if ty.is_signed() {
        (1i128 << (ty.bits() - 1)) - 1
    } else {
        (1i128 << ty.bits()) - 1
    }
}

/// A float converted to integer type `to`: toward zero, saturating, NaN to 0.
#[inline]
pub fn float_to_int(x: f32, to: Type) -> u64 {
    if x.is_nan() {
        return 0;
    }
    // `as` from a float saturates and truncates toward zero.
    let v = if to.is_signed() {
        x as i64 as i128
    } else {
        x as u64 as i128
    };
    (v.clamp(int_min(to), int_max(to)) as u64) & to.mask()
}

/// An integer converted to float type `to` (`f32`, `f16` or `bf16`), rounded once to
/// nearest even; the canonical bits of the result.
#[inline]
pub fn int_to_float(v: i128, to: Type) -> u64 {
    match to {
        // Integers below 2^24 are exact in f32, so one rounding happens; larger ones are
        // infinite in f16 either way.
        Type::F16 => f16::from_f32(v as f32).to_bits() as u64,
        Type::BF16 => int_to_bf16(v) as u64,
        // `as` from an integer rounds to nearest even.
        _ => (v as f32).to_bits() as u64,
    }
}

/// An integer rounded to bfloat16 (8 significant bits) to nearest even, exactly (going
/// through f32 would round twice).
fn int_to_bf16(v: i128) -> u16 {
    let sign: u32 = if v < 0 { 0x8000_0000 } else { 0 };
    let mut mag = v.unsigned_abs();
    let mut shift = 0u32;
    let msb = 127 - mag.leading_zeros().min(127);
    if mag != 0 && msb > 7 {
        shift = msb - 7;
        let kept = mag >> shift;
        let rem = mag & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = rem > half || (rem == half && kept & 1 == 1);
        mag = kept + up as u128;
    }
    // `mag * 2^shift` has at most 9 significant bits before renormalising and is exact in
    // f32 (|v| < 2^128 is within range); its top 16 bits are the bfloat16.
    let f = (mag as f32) * 2f32.powi(shift as i32);
    ((f.to_bits() | sign) >> 16) as u16
}

/// `a * b + c` exactly, rounded to f64 with round-to-odd: rounding that to any format of
/// at most 51 bits of precision gives the correctly rounded fused result. The product of
/// two f32 is exact in f64 and the sum cannot overflow or underflow; the error of the sum
/// comes from TwoSum. Plain f64 arithmetic, so a lane loop vectorizes (where
/// `f32::mul_add` would call `fmaf` per lane without hardware FMA in the target).
#[inline(always)]
pub fn fma_odd(a: f32, b: f32, c: f32) -> f64 {
    let p = a as f64 * b as f64;
    let c = c as f64;
    let s = p + c;
    let bb = s - p;
    let err = (p - (s - bb)) + (c - bb);
    let bits = s.to_bits();
    let inexact = s.is_finite() && err != 0.0;
    let adjusted = if (err > 0.0) == (s > 0.0) {
        bits.wrapping_add(1)
    } else {
        bits.wrapping_sub(1)
    };
    f64::from_bits(if inexact && bits & 1 == 0 {
        adjusted
    } else {
        bits
    })
}

/// An `f64` rounded to `f32` with round-to-odd (an inexact result gets an odd last bit):
/// rounding that to a format of at most 22 bits of precision (`half`, `bfloat`) to
/// nearest even gives the correctly rounded result of the `f64`.
#[inline(always)]
pub fn round_to_odd_f32(r: f64) -> f32 {
    let t = r as f32;
    let tb = t.to_bits();
    if (t as f64) == r || tb & 1 == 1 || r.is_nan() {
        return t;
    }
    // Inexact with an even last bit: step to the neighbour on r's side, which is odd
    // (past f32::MAX that is f32::MAX itself, also odd).
    let magnitude_up = r.abs() > (t as f64).abs();
    f32::from_bits(if magnitude_up { tb + 1 } else { tb - 1 })
}
