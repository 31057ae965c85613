//! Accuracy of every math function in both variants, measured in ulps against an `f64`
//! reference on dense samples of each function's domain and checked against the limits
//! of MSL spec tables 28 (precise `f32`), 29 (fast `f32`) and 30 (`half`).
//!
//! `METALSIM_ULP_TABLE=1 cargo test -p metalsim-sim --release --lib ulp_table -- --nocapture`
//! prints the table of `docs/math-precision.md` (with more samples).

use super::*;
use half::{bf16, f16};
use proptest::prelude::*;

/// A floating-point format's precision and range, for ulps.
#[derive(Clone, Copy)]
struct Format {
    /// Fraction bits (23 for f32).
    fraction: i32,
    /// Exponent of the smallest normal.
    min_exp: i32,
    /// The largest finite value.
    max: f64,
}

const F32: Format = Format {
    fraction: 23,
    min_exp: -126,
    max: f32::MAX as f64,
};
const F16: Format = Format {
    fraction: 10,
    min_exp: -14,
    max: 65504.0,
};
const BF16: Format = Format {
    fraction: 7,
    min_exp: -126,
    max: 3.3895313892515355e38,
};

impl Format {
    /// The ulp at `r` (MSL spec 7.4: the gap between the two floats around `r`).
    fn ulp(self, r: f64) -> f64 {
        let e = ((r.abs().to_bits() >> 52) & 0x7ff) as i32 - 1023;
        2f64.powi(e.max(self.min_exp) - self.fraction)
    }

    /// How many ulps `got` is from the exact `want`; 0 when both are the same NaN or
    /// infinity, or when `want` is past the largest float and `got` is the infinity it
    /// rounds to; infinite when the classes differ.
    fn error(self, got: f64, want: f64) -> f64 {
        if want.is_nan() || got.is_nan() {
            return if want.is_nan() && got.is_nan() {
                0.0
            } else {
                f64::INFINITY
            };
        }
        if got.is_infinite() || want.is_infinite() {
            let overflows = want.abs() >= self.max + self.ulp(self.max) / 2.0;
            let same_sign = got.is_sign_negative() == want.is_sign_negative();
            let rounds_to_infinity = got.is_infinite() && overflows && same_sign;
            return if rounds_to_infinity || got == want {
                0.0
            } else {
                f64::INFINITY
            };
        }
        (got - want).abs() / self.ulp(want)
    }
}

/// Deterministic pseudo-random numbers (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `[lo, hi]`.
    fn uniform(&mut self, lo: f64, hi: f64) -> f32 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (lo + (hi - lo) * u) as f32
    }

    /// A float with random bits whose magnitude is in `[lo, hi]` (both positive), of
    /// either sign when `signed`: exponents spread evenly, unlike `uniform`.
    fn log_uniform(&mut self, lo: f32, hi: f32, signed: bool) -> f32 {
        let (a, b) = (lo.to_bits(), hi.to_bits());
        let bits = a + (self.next() % (b - a + 1) as u64) as u32;
        let x = f32::from_bits(bits);
        if signed && self.next() & 1 == 1 {
            -x
        } else {
            x
        }
    }
}

/// Where a function is sampled: `uniform` inputs in a range (dense near its
/// interesting part) and `spread` inputs with evenly spread exponents.
#[derive(Clone, Copy)]
struct Domain {
    uniform: (f64, f64),
    spread: (f32, f32, bool),
}

const fn domain(lo: f64, hi: f64, slo: f32, shi: f32, signed: bool) -> Domain {
    Domain {
        uniform: (lo, hi),
        spread: (slo, shi, signed),
    }
}

const ALL: Domain = domain(-100.0, 100.0, 1e-45, f32::MAX, true);
const POSITIVE: Domain = domain(0.0, 100.0, 1e-45, f32::MAX, false);

/// A spec limit on the error of one function in one variant.
#[derive(Clone, Copy, Debug)]
enum Limit {
    /// At most this many ulps.
    Ulps(f64),
    /// `3 + floor(|2x|)` ulps (fast `exp`, `exp2`).
    ExpUlps,
    /// An absolute error of at most `2^-n` for `x` in `[lo, hi]`, `ulps` elsewhere (for
    /// `x > 0`; fast `log`, `log2`); `ulps` infinite: only the interval is bounded.
    Absolute { n: i32, lo: f64, hi: f64, ulps: f64 },
    /// Relative error at most `2^-n` (fast `sinpi`, `cospi`, `tanpi`).
    Relative(i32),
    /// The spec gives the implementation instead of a bound ("implemented as").
    Formula,
}

impl Limit {
    fn text(self) -> String {
        match self {
            Limit::Ulps(0.0) => "0 (exact)".into(),
            Limit::Ulps(0.5) => "correctly rounded".into(),
            Limit::Ulps(u) => format!("{u} ulp"),
            Limit::ExpUlps => "3 + floor(abs(2x)) ulp".into(),
            Limit::Absolute { n, lo, hi, ulps } if ulps.is_finite() => {
                format!("abs 2^-{n} in [{lo}, {hi}], else {ulps} ulp")
            }
            Limit::Absolute { n, .. } => format!("abs 2^-{n} in [-pi, pi]"),
            Limit::Relative(n) => format!("relative 2^-{n}"),
            Limit::Formula => "implemented as the spec's formula".into(),
        }
    }
}

/// A function with its domain and its f32 limits (precise, fast).
struct Case {
    f: MathFn,
    domain: Domain,
    /// Second operand's domain, for binary functions.
    second: Option<Domain>,
    precise: Limit,
    fast: Limit,
    /// Table 30's limit for `half`.
    half: Limit,
}

fn cases() -> Vec<Case> {
    use Limit::*;
    use MathFn as M;
    let case = |f, domain, precise, fast, half| Case {
        f,
        domain,
        second: None,
        precise,
        fast,
        half,
    };
    let pi = std::f64::consts::PI;
    let exact = Ulps(0.0);
    let cr = Ulps(0.5);
    let trig = domain(-pi, pi, 1e-45, 1e6, true);
    let log_fast = |n, ulps| Absolute {
        n,
        lo: 0.5,
        hi: 2.0,
        ulps,
    };
    vec![
        case(M::Floor, ALL, exact, exact, exact),
        case(M::Ceil, ALL, exact, exact, exact),
        case(M::Trunc, ALL, exact, exact, exact),
        case(M::Round, ALL, exact, exact, exact),
        case(M::Rint, ALL, exact, exact, exact),
        case(M::Sqrt, POSITIVE, cr, Formula, cr),
        case(M::Rsqrt, POSITIVE, cr, Ulps(2.0), cr),
        case(M::Rcp, ALL, cr, Ulps(1.0), cr),
        case(
            M::Exp,
            domain(-87.0, 88.0, 1e-45, 88.0, true),
            Ulps(4.0),
            ExpUlps,
            Ulps(1.0),
        ),
        case(
            M::Exp2,
            domain(-126.0, 127.0, 1e-45, 127.0, true),
            Ulps(4.0),
            ExpUlps,
            Ulps(1.0),
        ),
        case(
            M::Exp10,
            domain(-37.0, 38.0, 1e-45, 38.0, true),
            Ulps(4.0),
            Formula,
            Ulps(1.0),
        ),
        case(
            M::Log,
            domain(0.5, 2.0, 1e-45, f32::MAX, false),
            Ulps(4.0),
            log_fast(21, 3.0),
            Ulps(1.0),
        ),
        case(
            M::Log2,
            domain(0.5, 2.0, 1e-45, f32::MAX, false),
            Ulps(4.0),
            log_fast(22, 2.0),
            Ulps(1.0),
        ),
        case(
            M::Log10,
            domain(0.5, 2.0, 1e-45, f32::MAX, false),
            Ulps(4.0),
            Formula,
            Ulps(1.0),
        ),
        case(
            M::Sin,
            trig,
            Ulps(4.0),
            log_fast(13, f64::INFINITY).trig(),
            Ulps(1.0),
        ),
        case(
            M::Cos,
            trig,
            Ulps(4.0),
            log_fast(13, f64::INFINITY).trig(),
            Ulps(1.0),
        ),
        case(M::Tan, trig, Ulps(6.0), Formula, Ulps(1.0)),
        case(
            M::Asin,
            domain(-1.0, 1.0, 1e-45, 1.0, true),
            Ulps(4.0),
            Ulps(5.0),
            Ulps(1.0),
        ),
        case(
            M::Acos,
            domain(-1.0, 1.0, 1e-45, 1.0, true),
            Ulps(4.0),
            Ulps(5.0),
            Ulps(1.0),
        ),
        case(M::Atan, ALL, Ulps(5.0), Ulps(5.0), Ulps(1.0)),
        case(
            M::Sinh,
            domain(-88.0, 88.0, 1e-45, 88.0, true),
            Ulps(4.0),
            Formula,
            Ulps(1.0),
        ),
        case(
            M::Cosh,
            domain(-88.0, 88.0, 1e-45, 88.0, true),
            Ulps(4.0),
            Formula,
            Ulps(1.0),
        ),
        case(
            M::Tanh,
            domain(-10.0, 10.0, 1e-45, 40.0, true),
            Ulps(5.0),
            Formula,
            Ulps(1.0),
        ),
        case(
            M::Asinh,
            domain(-100.0, 100.0, 1e-45, 1e18, true),
            Ulps(4.0),
            Formula,
            Ulps(1.0),
        ),
        case(
            M::Acosh,
            domain(1.0, 100.0, 1.0, 1e18, false),
            Ulps(4.0),
            Formula,
            Ulps(1.0),
        ),
        case(
            M::Atanh,
            domain(-1.0, 1.0, 1e-45, 1.0, true),
            Ulps(5.0),
            Formula,
            Ulps(1.0),
        ),
        case(
            M::Sinpi,
            domain(-4.0, 4.0, 1e-45, f32::MAX, true),
            Ulps(4.0),
            Relative(17),
            Ulps(1.0),
        ),
        case(
            M::Cospi,
            domain(-4.0, 4.0, 1e-45, f32::MAX, true),
            Ulps(4.0),
            Relative(17),
            Ulps(1.0),
        ),
        case(
            M::Tanpi,
            domain(-4.0, 4.0, 1e-45, f32::MAX, true),
            Ulps(6.0),
            Relative(17),
            Ulps(1.0),
        ),
        Case {
            second: Some(domain(-30.0, 30.0, 1e-45, 1e3, true)),
            ..case(
                M::Pow,
                domain(0.0, 10.0, 1e-45, 1e8, false),
                Ulps(16.0),
                Formula,
                Ulps(2.0),
            )
        },
        Case {
            second: Some(ALL),
            ..case(M::Atan2, ALL, Ulps(6.0), Formula, Ulps(1.0))
        },
        Case {
            second: Some(ALL),
            ..case(M::Fmod, ALL, exact, exact, exact)
        },
    ]
}

impl Limit {
    /// The fast `sin`/`cos` bound: absolute `2^-13` on `[-pi, pi]` only.
    fn trig(self) -> Limit {
        match self {
            Limit::Absolute { n, ulps, .. } => Limit::Absolute {
                n,
                lo: -std::f64::consts::PI,
                hi: std::f64::consts::PI,
                ulps,
            },
            l => l,
        }
    }

    /// Whether an error of `ulps` (absolute error `abs`, exact value `want`) at `x`
    /// meets the limit.
    fn allows(self, x: f64, ulps: f64, abs: f64, want: f64) -> bool {
        // A correctly rounded result meets every limit (relative bounds cannot hold for
        // denormal results, which spec 7.5 lets an implementation flush).
        if ulps <= 0.5 + 1e-6 {
            return true;
        }
        match self {
            // The f64 reference is itself a hair off the exact value.
            Limit::Ulps(0.0) => ulps == 0.0,
            Limit::Ulps(u) => ulps <= u + 1e-6,
            Limit::ExpUlps => ulps <= 3.0 + (2.0 * x).abs().floor(),
            Limit::Absolute { n, lo, hi, ulps: u } => {
                if (lo..=hi).contains(&x) {
                    abs <= 2f64.powi(-n)
                } else {
                    ulps <= u
                }
            }
            Limit::Relative(n) => abs <= 2f64.powi(-n) * want.abs() || want == 0.0 && abs == 0.0,
            Limit::Formula => true,
        }
    }
}

/// The worst error found for one function in one variant.
#[derive(Default)]
struct Worst {
    ulps: f64,
    /// The largest absolute error on `[-pi, pi]`.
    abs: f64,
    /// The largest absolute error where the exact value is at most 1 in magnitude.
    abs_small: f64,
}

/// Evaluates `case` in `f32` with precision `p` over `n` samples; panics at the first
/// sample that breaks the limit.
fn measure(case: &Case, p: Precision, limit: Limit, n: usize) -> Worst {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ case.f as u64);
    let mut worst = Worst::default();
    let sample = |rng: &mut Rng, d: Domain, i: usize| {
        if i.is_multiple_of(2) {
            rng.uniform(d.uniform.0, d.uniform.1)
        } else {
            rng.log_uniform(d.spread.0, d.spread.1, d.spread.2)
        }
    };
    for i in 0..n {
        let x = sample(&mut rng, case.domain, i);
        let y = case.second.map_or(0.0, |d| sample(&mut rng, d, i / 2));
        let got = f32::from_bits(eval(case.f, p, FloatTy::F32, x.to_bits(), y.to_bits())) as f64;
        let want = precise(case.f, x as f64, y as f64);
        let ulps = F32.error(got, want);
        let abs = (got - want).abs();
        assert!(
            limit.allows(x as f64, ulps, abs, want),
            "{}({x:e}, {y:e}) {p:?} = {got:e}, want {want:e}: {ulps} ulp, limit {}",
            case.f.name(),
            limit.text()
        );
        if ulps > worst.ulps || (ulps.is_nan() && !worst.ulps.is_nan()) {
            worst.ulps = ulps;
        }
        if (-std::f64::consts::PI..=std::f64::consts::PI).contains(&(x as f64)) {
            worst.abs = worst.abs.max(abs);
        }
        if want.abs() <= 1.0 {
            worst.abs_small = worst.abs_small.max(abs);
        }
    }
    worst
}

/// Evaluates `case` in `half` over every finite input (paired with samples of the
/// second operand for binary functions).
fn measure_half(case: &Case) -> Worst {
    let mut rng = Rng(7 ^ case.f as u64);
    let mut worst = Worst::default();
    for bits in 0..=u16::MAX {
        let x = f16::from_bits(bits);
        if !x.is_finite() {
            continue;
        }
        let y = case.second.map_or(f16::ZERO, |d| {
            f16::from_f32(rng.uniform(d.uniform.0.max(-60000.0), d.uniform.1.min(60000.0)))
        });
        let got = f16::from_bits(eval(
            case.f,
            Precision::Fast,
            FloatTy::F16,
            bits as u32,
            y.to_bits() as u32,
        ) as u16)
        .to_f64();
        let want = precise(case.f, x.to_f64(), y.to_f64());
        let ulps = F16.error(got, want);
        assert!(
            case.half.allows(x.to_f64(), ulps, (got - want).abs(), want),
            "half {}({x}, {y}) = {got}, want {want}: {ulps} ulp",
            case.f.name()
        );
        if ulps > worst.ulps {
            worst.ulps = ulps;
        }
    }
    worst
}

fn cell(w: &Worst, limit: Limit) -> String {
    match limit {
        Limit::Absolute { lo, .. } if lo < 0.0 => format!("abs {:.1e} in [-pi, pi]", w.abs),
        Limit::Formula => format!(
            "{:.3} (abs {:.1e} where the result is within [-1, 1])",
            w.ulps, w.abs_small
        ),
        _ => format!("{:.3}", w.ulps),
    }
}

#[test]
fn ulp_table() {
    let print = std::env::var_os("METALSIM_ULP_TABLE").is_some();
    let n = if print { 1_000_000 } else { 20_000 };
    let mut rows = Vec::new();
    for case in cases() {
        let precise = measure(&case, Precision::Precise, case.precise, n);
        let fast = measure(&case, Precision::Fast, case.fast, n);
        let half = measure_half(&case);
        rows.push(format!(
            "| `{}` | {} | {} | {} | {} | {} | {:.3} |",
            case.f.name(),
            case.precise.text(),
            cell(&precise, case.precise),
            case.fast.text(),
            cell(&fast, case.fast),
            case.half.text(),
            half.ulps
        ));
    }
    if print {
        println!(
            "| function | precise limit | precise measured (ulp) | fast limit | fast measured (ulp) | half limit | half measured (ulp) |"
        );
        println!("|---|---|---|---|---|---|---|");
        for r in rows {
            println!("{r}");
        }
    }
}

/// Splits a positive finite f64 into an integer mantissa and a power of two.
fn dyadic(x: f64) -> (u128, i32) {
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    let m = bits & ((1 << 52) - 1);
    if e == 0 {
        (m as u128, -1074)
    } else {
        ((m | 1 << 52) as u128, e - 1075)
    }
}

/// The sign of `m^2 * x - 1` for positive finite `m` and `x`, exactly.
fn sign_of_square_times_minus_one(m: f64, x: f64) -> std::cmp::Ordering {
    let (mm, me) = dyadic(m);
    let (xm, xe) = dyadic(x);
    // Trim trailing zeros so the product fits: at most 25 + 24 significant bits here.
    let trim = |(v, e): (u128, i32)| {
        let z = v.trailing_zeros();
        (v >> z, e + z as i32)
    };
    let ((mm, me), (xm, xe)) = (trim((mm, me)), trim((xm, xe)));
    let p = mm * mm * xm;
    let e = 2 * me + xe;
    // p * 2^e versus 1.
    if e >= 0 {
        if e > 100 {
            std::cmp::Ordering::Greater
        } else {
            (p << e).cmp(&1)
        }
    } else if -e >= 128 {
        std::cmp::Ordering::Less
    } else {
        p.cmp(&(1u128 << -e))
    }
}

proptest! {
    #[test]
    fn rsqrt_is_correctly_rounded(bits in 1u32..0x7f80_0000) {
        let x = f32::from_bits(bits);
        let r = f32::from_bits(eval(MathFn::Rsqrt, Precision::Precise, FloatTy::F32, bits, 0));
        // r is right when 1/sqrt(x) lies between the midpoints around r: lo^2 x >= 1 >=
        // hi^2 x with lo the midpoint below and hi the one above.
        let below = (r as f64 + f32::from_bits(r.to_bits() - 1) as f64) / 2.0;
        let above = (r as f64 + f32::from_bits(r.to_bits() + 1) as f64) / 2.0;
        use std::cmp::Ordering::*;
        prop_assert_ne!(sign_of_square_times_minus_one(below, x as f64), Greater, "rsqrt({:e}) = {:e} is too big", x, r);
        prop_assert_ne!(sign_of_square_times_minus_one(above, x as f64), Less, "rsqrt({:e}) = {:e} is too small", x, r);
    }

    #[test]
    fn ldexp_is_exact_scaling(bits in any::<u32>(), k in -300i32..300) {
        let x = f32::from_bits(bits);
        prop_assume!(x.is_finite());
        let got = f32::from_bits(eval(MathFn::Ldexp, Precision::Fast, FloatTy::F32, bits, k as u32));
        // Scaling by 2 one step at a time is exact until the result over- or underflows;
        // the reference rounds once from an exact f64.
        let want = (x as f64 * 2f64.powi(k)) as f32;
        prop_assert_eq!(got.to_bits(), want.to_bits());
    }

    #[test]
    fn fmod_is_exact(a in any::<u32>(), b in any::<u32>()) {
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        let got = f32::from_bits(eval(MathFn::Fmod, Precision::Fast, FloatTy::F32, a, b));
        let want = libm_fmod(x as f64, y as f64) as f32;
        prop_assert!(got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(), "fmod({:e}, {:e}) = {:e}, want {:e}", x, y, got, want);
    }
}

/// `x - y * trunc(x / y)` computed exactly by long division on integers, for finite f32s
/// (an independent reference for `fmod`).
fn libm_fmod(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() || x.is_infinite() || y == 0.0 {
        return f64::NAN;
    }
    if y.is_infinite() || x == 0.0 {
        return x;
    }
    let trim = |(v, e): (u128, i32)| {
        let z = v.trailing_zeros();
        (v >> z, e + z as i32)
    };
    let (xm, xe) = trim(dyadic(x.abs()));
    let (ym, ye) = trim(dyadic(y.abs()));
    // Both mantissas have at most 24 bits.
    let (r, e) = if xe >= ye {
        let mut r = xm % ym;
        for _ in 0..xe - ye {
            r = (r << 1) % ym;
        }
        (r, ye)
    } else if ye - xe > 64 {
        (xm, xe)
    } else {
        (xm % (ym << (ye - xe)), xe)
    };
    let v = r as f64 * 2f64.powi(e);
    if x < 0.0 { -v } else { v }
}

#[test]
fn fast_variants_follow_the_spec_formulas() {
    let fast = |f: MathFn, x: f32, y: f32| {
        f32::from_bits(eval(
            f,
            Precision::Fast,
            FloatTy::F32,
            x.to_bits(),
            y.to_bits(),
        ))
    };
    let precise_f = |f: MathFn, x: f32, y: f32| {
        f32::from_bits(eval(
            f,
            Precision::Precise,
            FloatTy::F32,
            x.to_bits(),
            y.to_bits(),
        ))
    };
    // pow(x, y) = exp2(y * log2(x)): a negative base gives NaN.
    assert!(fast(MathFn::Pow, -2.0, 2.0).is_nan());
    assert_eq!(precise_f(MathFn::Pow, -2.0, 2.0), 4.0);
    // tanh(x) = (t - 1) / (t + 1), t = exp(2x): NaN once t overflows.
    assert!(fast(MathFn::Tanh, 50.0, 0.0).is_nan());
    assert_eq!(precise_f(MathFn::Tanh, 50.0, 0.0), 1.0);
    // sqrt's special cases are handled.
    assert_eq!(fast(MathFn::Sqrt, 0.0, 0.0), 0.0);
    assert_eq!(fast(MathFn::Sqrt, f32::INFINITY, 0.0), f32::INFINITY);
    assert!(fast(MathFn::Sqrt, -1.0, 0.0).is_nan());
    // atan2 picks the quadrant.
    let pi = std::f32::consts::PI;
    assert!((fast(MathFn::Atan2, 1.0, -1.0) - 3.0 * pi / 4.0).abs() < 1e-6);
    assert!((fast(MathFn::Atan2, -1.0, -1.0) + 3.0 * pi / 4.0).abs() < 1e-6);
    // Exact zeros of sinpi, cospi.
    assert_eq!(precise_f(MathFn::Sinpi, 3.0, 0.0), 0.0);
    assert_eq!(precise_f(MathFn::Cospi, 2.5, 0.0), 0.0);
    assert_eq!(precise_f(MathFn::Cospi, 1e30, 0.0), 1.0);
    // Denormals are kept.
    let tiny = f32::from_bits(1);
    assert_eq!(fast(MathFn::Floor, tiny, 0.0), 0.0);
    assert_eq!(fast(MathFn::Ldexp, tiny, 0.0), tiny);
}

#[test]
fn pi_functions_match_an_unreduced_reference() {
    // For |x| <= 4 the f64 product pi * x is accurate enough to serve as an independent
    // reference (see the rounding argument in the module's sinpi).
    let mut rng = Rng(11);
    for i in 0..200_000 {
        let x = if i % 2 == 0 {
            rng.uniform(-4.0, 4.0)
        } else {
            rng.log_uniform(1e-30, 4.0, true)
        };
        let t = std::f64::consts::PI * x as f64;
        for (f, want) in [
            (MathFn::Sinpi, t.sin()),
            (MathFn::Cospi, t.cos()),
            (MathFn::Tanpi, t.tan()),
        ] {
            let got = f32::from_bits(eval(f, Precision::Precise, FloatTy::F32, x.to_bits(), 0));
            let exact_zero = want.abs() < 1e-15 && got == 0.0;
            let err = F32.error(got as f64, want);
            assert!(
                exact_zero || err <= 1.0 || want.abs() > 1e15,
                "{}({x:e}) = {got:e}, want {want:e}: {err} ulp",
                f.name()
            );
        }
    }
}

#[test]
fn bfloat_functions_round_once() {
    for case in cases().iter().filter(|c| c.second.is_none()) {
        for bits in 0..=u16::MAX {
            let x = bf16::from_bits(bits);
            if !x.is_finite() {
                continue;
            }
            let got = bf16::from_bits(
                eval(case.f, Precision::Fast, FloatTy::BF16, bits as u32, 0) as u16
            )
            .to_f64();
            let want = precise(case.f, x.to_f64(), 0.0);
            let err = BF16.error(got, want);
            assert!(
                err <= 0.5 + 1e-6,
                "bfloat {}({x}) = {got}, want {want}: {err} ulp",
                case.f.name()
            );
        }
    }
}
