//! Math functions (`sin`, `exp`, `pow`...) in their two variants.
//!
//! - **Precise** (`metal::precise::`, `--precise`): computed in `f64` and rounded once to
//!   the element type. `f64`'s functions are accurate to about one `f64` ulp, so the
//!   result is within a hair of half an ulp of the exact value, far inside the limits of
//!   MSL spec table 28. `rsqrt` and `sqrt` are correctly rounded, as the spec requires.
//! - **Fast** (Metal's default, `metal::fast::`): for `f32`, the implementations MSL spec
//!   table 29 prescribes, each step rounded to `f32`: `exp(x) = exp2(x * log2(e))`,
//!   `pow(x, y) = exp2(y * log2(x))` (so a negative base gives NaN, as on the GPU),
//!   `sqrt(x) = x * rsqrt(x)`, `tan(x) = sin(x) * (1 / cos(x))`, `tanh(x) = (t - 1) /
//!   (t + 1)` with `t = exp(2x)` (NaN once `t` overflows, as on the GPU), and so on. The
//!   functions the table only bounds (`sin`, `cos`, `exp2`, `log2`, `asin`...) use the
//!   precise result, which meets the bound.
//! - `half` and `bfloat` have no fast variant (spec table 30): always precise.
//!
//! Rounding functions (`floor`, `rint`...), `fmod` and `ldexp` are exact in both. INF and
//! NaN inputs give the IEEE results of the formulas; denormals are kept, never flushed
//! (spec 7.1 allows either). `docs/math-precision.md` has the measured error of each.

use metalsim_isa::MathFn;

use crate::alu::{FloatTy, round_to_odd_f32};

/// Which variant of a math function runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Precision {
    /// Metal's default fast-math variant.
    Fast,
    /// The precise variant.
    Precise,
}

impl FloatTy {
    /// An `f64` rounded once (to nearest even) to this type, as canonical bits.
    #[inline]
    pub fn round_f64(self, x: f64) -> u32 {
        match self {
            FloatTy::F32 => (x as f32).to_bits(),
            // `half`'s own `from_f64` ignores the low bits of the f64 and can round wrong.
            _ => self.round(round_to_odd_f32(x)),
        }
    }
}

/// `f(x[, y])` on canonical bits of type `ft`; `y` is the second operand of the binary
/// functions (`ldexp`'s is an `i32`).
#[inline]
pub(crate) fn eval(f: MathFn, p: Precision, ft: FloatTy, x: u32, y: u32) -> u32 {
    if f == MathFn::Ldexp {
        return ldexp(ft, ft.to_f32(x), y as i32);
    }
    let (fx, fy) = (ft.to_f32(x), ft.to_f32(y));
    match (ft, p) {
        (FloatTy::F32, Precision::Fast) => fast(f, fx, fy).to_bits(),
        (FloatTy::F32, Precision::Precise) => precise_f32(f, fx, fy).to_bits(),
        _ => ft.round_f64(precise(f, fx as f64, fy as f64)),
    }
}

/// `x * 2^k`, rounded once.
fn ldexp(ft: FloatTy, x: f32, k: i32) -> u32 {
    // Past +-400 the result has over- or underflowed for every finite x, and 2^400 keeps
    // the product exact in f64.
    let k = k.clamp(-400, 400);
    ft.round_f64(x as f64 * 2f64.powi(k))
}

/// The precise variant in `f32`.
fn precise_f32(f: MathFn, x: f32, y: f32) -> f32 {
    match f {
        MathFn::Rsqrt => rsqrt(x),
        MathFn::Sqrt => x.sqrt(),
        MathFn::Fmod => x % y,
        _ => precise(f, x as f64, y as f64) as f32,
    }
}

/// The value of `f` in `f64` (about one `f64` ulp from the exact value).
fn precise(f: MathFn, x: f64, y: f64) -> f64 {
    match f {
        MathFn::Floor => x.floor(),
        MathFn::Ceil => x.ceil(),
        MathFn::Trunc => x.trunc(),
        MathFn::Round => x.round(),
        MathFn::Rint => x.round_ties_even(),
        MathFn::Sqrt => x.sqrt(),
        MathFn::Rsqrt => 1.0 / x.sqrt(),
        MathFn::Rcp => 1.0 / x,
        MathFn::Exp => x.exp(),
        MathFn::Exp2 => x.exp2(),
        MathFn::Exp10 => 10f64.powf(x),
        MathFn::Log => x.ln(),
        MathFn::Log2 => x.log2(),
        MathFn::Log10 => x.log10(),
        MathFn::Sin => x.sin(),
        MathFn::Cos => x.cos(),
        MathFn::Tan => x.tan(),
        MathFn::Asin => x.asin(),
        MathFn::Acos => x.acos(),
        MathFn::Atan => x.atan(),
        MathFn::Atan2 => x.atan2(y),
        MathFn::Sinh => x.sinh(),
        MathFn::Cosh => x.cosh(),
        MathFn::Tanh => x.tanh(),
        MathFn::Asinh => x.asinh(),
        MathFn::Acosh => x.acosh(),
        MathFn::Atanh => x.atanh(),
        MathFn::Sinpi => sinpi(x),
        MathFn::Cospi => cospi(x),
        MathFn::Tanpi => sinpi(x) / cospi(x),
        MathFn::Pow => x.powf(y),
        MathFn::Fmod => x % y,
        MathFn::Ldexp => x * 2f64.powi(y.clamp(-2000.0, 2000.0) as i32),
    }
}

/// `sin(pi * x)` for an `x` that came from a 16- or 32-bit float: reduced exactly to
/// `[-1/2, 1/2]` first, so integers give exact zeros and large arguments lose nothing.
fn sinpi(x: f64) -> f64 {
    use std::f64::consts::PI;
    if !x.is_finite() {
        return f64::NAN;
    }
    // x - 2 * round(x / 2) is exact for inputs with at most 24 significant bits.
    let r = x - 2.0 * (x / 2.0).round();
    // r in [-1, 1]: fold onto [-1/2, 1/2] with sin(pi r) = sin(pi (1 - r)).
    let r = if r > 0.5 {
        1.0 - r
    } else if r < -0.5 {
        -1.0 - r
    } else {
        r
    };
    if r == 0.0 {
        // sinpi of an integer: +0, or -0 for -0 (the sign of x for the zero of x itself).
        return if x == 0.0 { x } else { 0.0 };
    }
    (PI * r).sin()
}

/// `cos(pi * x)` for an `x` from a 16- or 32-bit float, through [`sinpi`] of the exactly
/// reduced argument.
fn cospi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let r = x - 2.0 * (x / 2.0).round();
    sinpi(r.abs() + 0.5)
}

/// `1 / sqrt(x)` correctly rounded to `f32`: the `f64` quotient rounds right except when
/// it lies within a few `f64` ulps of the midpoint between two floats; then the sign of
/// `mid^2 * x - 1`, computed exactly with an FMA, decides.
fn rsqrt(x: f32) -> f32 {
    let r = 1.0 / (x as f64).sqrt();
    let c = r as f32;
    if !c.is_finite() || c == 0.0 || !r.is_finite() {
        return c;
    }
    // The midpoint between c and its neighbour on r's side.
    let neighbour = if (c as f64) < r {
        f32::from_bits(c.to_bits() + 1)
    } else {
        f32::from_bits(c.to_bits() - 1)
    };
    let mid = (c as f64 + neighbour as f64) / 2.0;
    if (r - mid).abs() > mid * 1e-14 {
        return c;
    }
    // mid has 25 significant bits: mid^2 is exact in f64, mid^2 * x is p + e exactly.
    let m2 = mid * mid;
    let p = m2 * x as f64;
    let e = m2.mul_add(x as f64, -p);
    let above = p > 1.0 || (p == 1.0 && e > 0.0);
    let below = p < 1.0 || (p == 1.0 && e < 0.0);
    // mid^2 x > 1 means mid > 1 / sqrt(x): the exact value is below the midpoint.
    let lower = if c < neighbour { c } else { neighbour };
    let upper = if c < neighbour { neighbour } else { c };
    if above {
        lower
    } else if below {
        upper
    } else {
        // Exactly halfway: to even.
        if lower.to_bits() & 1 == 0 {
            lower
        } else {
            upper
        }
    }
}

/// The fast variant of an `f32` function: MSL spec table 29's implementations.
fn fast(f: MathFn, x: f32, y: f32) -> f32 {
    use std::f32::consts::{LN_2, LOG2_10, LOG2_E, LOG10_2, PI};
    let exp2 = |v: f32| precise_f32(MathFn::Exp2, v, 0.0);
    let log2 = |v: f32| precise_f32(MathFn::Log2, v, 0.0);
    let exp = |v: f32| exp2(v * LOG2_E);
    let log = |v: f32| log2(v) * LN_2;
    let sqrt = |v: f32| {
        if v == 0.0 || v == f32::INFINITY || v.is_nan() {
            v
        } else {
            v * rsqrt(v)
        }
    };
    match f {
        MathFn::Exp => exp(x),
        MathFn::Exp10 => exp2(x * LOG2_10),
        MathFn::Log => log(x),
        MathFn::Log10 => log2(x) * LOG10_2,
        MathFn::Pow => exp2(y * log2(x)),
        MathFn::Sqrt => sqrt(x),
        MathFn::Tan => precise_f32(MathFn::Sin, x, 0.0) * (1.0 / precise_f32(MathFn::Cos, x, 0.0)),
        MathFn::Sinh => 0.5 * (exp(x) - exp(-x)),
        MathFn::Cosh => 0.5 * (exp(x) + exp(-x)),
        MathFn::Tanh => {
            let t = exp(2.0 * x);
            (t - 1.0) / (t + 1.0)
        }
        MathFn::Asinh => log(x + sqrt(x * x + 1.0)),
        MathFn::Acosh => log(x + sqrt(x * x - 1.0)),
        // The spec prints `0.5 * (log(1.0 + x) / log(1.0 - x))`, which is not atanh; the
        // difference of the logarithms is what it means.
        MathFn::Atanh => 0.5 * (log(1.0 + x) - log(1.0 - x)),
        MathFn::Atan2 => {
            // Operands (y, x): atan(y / x), moved by pi into the left half-plane.
            let (y, x) = (x, y);
            let a = precise_f32(MathFn::Atan, y / x, 0.0);
            match (x < 0.0, y.is_sign_negative()) {
                (true, false) => a + PI,
                (true, true) => a - PI,
                (false, _) => a,
            }
        }
        _ => precise_f32(f, x, y),
    }
}

#[cfg(test)]
mod tests;
