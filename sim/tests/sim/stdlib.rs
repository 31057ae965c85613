//! The MSL standard library's compute functions (spec chapter 5: common, integer,
//! relational, math, geometric, pack/unpack, SIMD-group and quad-group), each called from
//! an MSL kernel and compared lane by lane with an independent Rust reference: exact bits
//! where MSL is exact, the spec's ULP limit (section 7.4) where it gives one.

use half::f16;
use metalsim_isa::Type;
use metalsim_launch::Grid;

use crate::common::*;

/// Lanes per kernel: two SIMD-groups.
const N: usize = 64;

/// The operands every lane reads: `x`, `y` (floats), `i`, `j` (ints), `u`, `v` (uints).
struct Inputs {
    x: Vec<f32>,
    y: Vec<f32>,
    i: Vec<i32>,
    j: Vec<i32>,
    u: Vec<u32>,
    v: Vec<u32>,
}

/// A deterministic pseudo-random stream (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn float(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

impl Inputs {
    /// Edge values first (zeros, infinities, NaN, denormals, extremes), then random ones
    /// in `[lo, hi]`.
    fn new(seed: u64, lo: f32, hi: f32) -> Inputs {
        let mut r = Rng(seed);
        let fedges = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-40,
            -1e-40,
            f32::MAX,
            f32::MIN_POSITIVE,
        ];
        let iedges = [
            0,
            1,
            -1,
            i32::MAX,
            i32::MIN,
            2,
            -2,
            1 << 23,
            -(1 << 23),
            255,
        ];
        let float = |edges: bool, r: &mut Rng| -> Vec<f32> {
            (0..N)
                .map(|k| match fedges.get(k) {
                    Some(&e) if edges => e,
                    _ => r.float(lo, hi),
                })
                .collect()
        };
        let x = float(true, &mut r);
        let mut y = float(false, &mut r);
        y[3] = f32::NAN;
        y[4] = -0.0;
        let int = |r: &mut Rng, shift: u32| -> Vec<i32> {
            (0..N)
                .map(|k| match iedges.get(k) {
                    Some(&e) => e,
                    None => (r.next() as i32) >> (k as u32 % shift),
                })
                .collect()
        };
        let i = int(&mut r, 31);
        let mut j = int(&mut r, 31);
        j.rotate_left(3);
        let u = int(&mut r, 32).iter().map(|&v| v as u32).collect();
        let v = int(&mut r, 32).iter().rev().map(|&v| v as u32).collect();
        Inputs { x, y, i, j, u, v }
    }
}

/// How a result is stored (`out` holds 32-bit words) and compared.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// A `float`, bit-exact (any NaN matches any NaN).
    F32,
    /// A `float` within this many ulps (NaN matches NaN; infinities exactly).
    F32Ulps(f64),
    /// A `float` within this absolute error.
    F32Abs(f64),
    /// A `half`, bit-exact (any NaN matches any NaN).
    F16,
    /// A `half` within this many ulps.
    F16Ulps(f64),
    /// An integer or `bool`, exact.
    Int,
}

/// The exact result of a case on one lane (`f64`, integers and bools as their value).
type Reference = Box<dyn Fn(&Inputs, usize) -> f64>;

/// One function call: the MSL expression (over `x, y, i, j, u, v` and `lane`), what
/// it gives and the reference (from the lane's operands, as `f64` for floats).
struct Case {
    expr: &'static str,
    want: Want,
    reference: Reference,
}

fn case(expr: &'static str, want: Want, f: impl Fn(&Inputs, usize) -> f64 + 'static) -> Case {
    Case {
        expr,
        want,
        reference: Box::new(f),
    }
}

/// The kernel computing every case per lane into `out[lane * cases + k]`.
fn kernel(cases: &[Case], precise: bool) -> String {
    let mut body = String::new();
    for (k, c) in cases.iter().enumerate() {
        let store = match c.want {
            Want::F32 | Want::F32Ulps(_) | Want::F32Abs(_) => {
                format!("as_type<uint>(float({}))", c.expr)
            }
            Want::F16 | Want::F16Ulps(_) => format!("uint(as_type<ushort>(half({})))", c.expr),
            Want::Int => format!("uint({})", c.expr),
        };
        let store = store.replace("{ns}", if precise { "precise::" } else { "" });
        body += &format!("    out[gid * {} + {k}] = {store};\n", cases.len());
    }
    format!(
        "#include <metal_stdlib>
using namespace metal;
float frexp_m(float x) {{ int e; return frexp(x, e); }}
int frexp_e(float x) {{ int e; frexp(x, e); return e; }}
float modf_f(float x) {{ float i; return modf(x, i); }}
float modf_i(float x) {{ float i; modf(x, i); return i; }}
float sincos_s(float x) {{ float c; return sincos(x, c); }}
float sincos_c(float x) {{ float c; sincos(x, c); return c; }}
kernel void k(device const float* xs [[buffer(0)]], device const float* ys [[buffer(1)]],
              device const int* is [[buffer(2)]], device const int* js [[buffer(3)]],
              device const uint* us [[buffer(4)]], device const uint* vs [[buffer(5)]],
              device uint* out [[buffer(6)]],
              uint gid [[thread_position_in_grid]],
              uint lane [[thread_index_in_simdgroup]]) {{
    float x = xs[gid]; float y = ys[gid];
    int i = is[gid]; int j = js[gid];
    uint u = us[gid]; uint v = vs[gid];
{body}}}
"
    )
}

/// Runs the cases on `inputs` and returns, per case, each lane's stored word.
fn run_cases(cases: &[Case], inputs: &Inputs, precise: bool) -> Vec<Vec<u32>> {
    let src = kernel(cases, precise);
    let (m, d, s) = metalsim_frontend::compile_str("k.metal", &src);
    let m = m.unwrap_or_else(|| panic!("{}\n{src}", metalsim_frontend::render(&d, &s, false)));
    let f = |v: &[f32]| f32s(v);
    let i = |v: &[i32]| u32s(&v.iter().map(|&x| x as u32).collect::<Vec<_>>());
    let l = launch(
        Grid::Threads([N as u32, 1, 1]),
        [N as u32, 1, 1],
        vec![
            buffer(0, "xs", Type::F32, f(&inputs.x)),
            buffer(1, "ys", Type::F32, f(&inputs.y)),
            buffer(2, "is", Type::I32, i(&inputs.i)),
            buffer(3, "js", Type::I32, i(&inputs.j)),
            buffer(4, "us", Type::U32, u32s(&inputs.u)),
            buffer(5, "vs", Type::U32, u32s(&inputs.v)),
            buffer(6, "out", Type::U32, zeros(4 * N * cases.len())),
        ],
    );
    let out = run_functional(&m, &l);
    assert_eq!(out.fault, None, "{src}");
    assert_eq!(out.findings, [], "{src}");
    let words = as_u32s(&out.buffers[6]);
    (0..cases.len())
        .map(|k| (0..N).map(|lane| words[lane * cases.len() + k]).collect())
        .collect()
}

/// The error of `got` against `want` in ulps of `got`'s format (`bits` of mantissa,
/// `min_exp` the smallest normal exponent), MSL 7.4's definition.
fn ulps(got: f64, want: f64, bits: i32, min_exp: i32) -> f64 {
    if got.is_nan() && want.is_nan() || got == want {
        return 0.0;
    }
    if !got.is_finite() || !want.is_finite() {
        return f64::INFINITY;
    }
    let e = (want.abs().log2().floor() as i32).max(min_exp);
    (got - want).abs() / 2f64.powi(e - bits)
}

/// Checks every lane of every case against its reference; `what` names the run.
fn check(cases: &[Case], inputs: &Inputs, precise: bool, what: &str) {
    let got = run_cases(cases, inputs, precise);
    for (c, words) in cases.iter().zip(got) {
        for (lane, &w) in words.iter().enumerate() {
            let want = (c.reference)(inputs, lane);
            let (ok, shown) = match c.want {
                Want::Int => (w == want as i64 as u32, format!("{w:#x}")),
                Want::F32 | Want::F32Ulps(_) | Want::F32Abs(_) => {
                    let g = f32::from_bits(w) as f64;
                    let ok = match c.want {
                        Want::F32 => g.is_nan() && want.is_nan() || w == (want as f32).to_bits(),
                        // A result past the largest float is infinity.
                        Want::F32Ulps(_) if (want as f32).is_infinite() => g == want as f32 as f64,
                        Want::F32Ulps(n) => ulps(g, want, 23, -126) <= n,
                        _ => {
                            let n = match c.want {
                                Want::F32Abs(n) => n,
                                _ => unreachable!(),
                            };
                            g.is_nan() && want.is_nan() || (g - want).abs() <= n
                        }
                    };
                    (ok, format!("{g:e}"))
                }
                Want::F16 | Want::F16Ulps(_) => {
                    let g = f16::from_bits(w as u16).to_f64();
                    let ok = match c.want {
                        Want::F16 => {
                            g.is_nan() && want.is_nan() || w as u16 == f16::from_f64(want).to_bits()
                        }
                        Want::F16Ulps(n) => ulps(g, want, 10, -14) <= n,
                        _ => unreachable!(),
                    };
                    (ok, format!("{g:e}"))
                }
            };
            assert!(
                ok,
                "{what}: `{}` lane {lane} (x = {:e}, y = {:e}, i = {}, j = {}, u = {:#x}, v = {:#x}) \
                 gave {shown}, want {want:e} ({:?})",
                c.expr,
                inputs.x[lane],
                inputs.y[lane],
                inputs.i[lane],
                inputs.j[lane],
                inputs.u[lane],
                inputs.v[lane],
                c.want,
            );
        }
    }
}

/// Shorthands for a lane's operands.
fn x(s: &Inputs, l: usize) -> f32 {
    s.x[l]
}
fn y(s: &Inputs, l: usize) -> f32 {
    s.y[l]
}

/// MSL's `fmax`/`fmin`: the non-NaN operand.
fn fmax(a: f32, b: f32) -> f32 {
    if a < b || a.is_nan() { b } else { a }
}
fn fmin(a: f32, b: f32) -> f32 {
    if b < a || a.is_nan() { b } else { a }
}

#[test]
fn common_functions() {
    use Want::*;
    let cases = vec![
        case("clamp(x, -0.5f, 2.0f)", F32, |s, l| {
            fmin(fmax(x(s, l), -0.5), 2.0) as f64
        }),
        case("saturate(x)", F32, |s, l| {
            fmin(fmax(x(s, l), 0.0), 1.0) as f64
        }),
        case("sign(x)", F32, |s, l| {
            let v = x(s, l);
            if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else if v.is_nan() {
                0.0
            } else {
                v as f64
            }
        }),
        case("step(0.25f, x)", F32, |s, l| {
            if x(s, l) < 0.25 { 0.0 } else { 1.0 }
        }),
        // `mix` and `smoothstep` are formulas; fast-math may contract them into FMAs.
        case("mix(x, y, 0.25f)", F32Ulps(2.0), |s, l| {
            let (a, b) = (x(s, l) as f64, y(s, l) as f64);
            if a.is_infinite() {
                f64::NAN
            } else {
                a + (b - a) * 0.25
            }
        }),
        // (NaN is undefined; the clamp's `fmax` makes it 0 here.)
        case("smoothstep(-1.0f, 3.0f, y)", F32Abs(1e-6), |s, l| {
            let t = fmin(fmax((y(s, l) + 1.0) / 4.0, 0.0), 1.0) as f64;
            t * t * (3.0 - 2.0 * t)
        }),
    ];
    let inputs = Inputs::new(1, -4.0, 4.0);
    check(&cases, &inputs, false, "common");
}

/// The integer functions of MSL 5.3 on `int` and `uint`, against Rust's arithmetic.
#[test]
fn integer_functions() {
    use Want::Int;
    let i = |s: &Inputs, l: usize| s.i[l];
    let j = |s: &Inputs, l: usize| s.j[l];
    let u = |s: &Inputs, l: usize| s.u[l];
    let v = |s: &Inputs, l: usize| s.v[l];
    let sat = |r: i64| r.clamp(i32::MIN as i64, i32::MAX as i64) as f64;
    let cases = vec![
        case("abs(i)", Int, move |s, l| i(s, l).wrapping_abs() as f64),
        case("absdiff(i, j)", Int, move |s, l| {
            (i(s, l) as i64 - j(s, l) as i64).unsigned_abs() as u32 as f64
        }),
        case("absdiff(u, v)", Int, move |s, l| {
            u(s, l).abs_diff(v(s, l)) as f64
        }),
        case("addsat(i, j)", Int, move |s, l| {
            sat(i(s, l) as i64 + j(s, l) as i64)
        }),
        case("addsat(u, v)", Int, move |s, l| {
            u(s, l).saturating_add(v(s, l)) as f64
        }),
        case("subsat(i, j)", Int, move |s, l| {
            sat(i(s, l) as i64 - j(s, l) as i64)
        }),
        case("subsat(u, v)", Int, move |s, l| {
            u(s, l).saturating_sub(v(s, l)) as f64
        }),
        case("clamp(i, -5, 7)", Int, move |s, l| {
            i(s, l).clamp(-5, 7) as f64
        }),
        case("clz(u)", Int, move |s, l| u(s, l).leading_zeros() as f64),
        case("clz(i)", Int, move |s, l| i(s, l).leading_zeros() as f64),
        case("ctz(u)", Int, move |s, l| u(s, l).trailing_zeros() as f64),
        case("popcount(u)", Int, move |s, l| u(s, l).count_ones() as f64),
        case("reverse_bits(u)", Int, move |s, l| {
            u(s, l).reverse_bits() as f64
        }),
        case("extract_bits(u, 3u, 9u)", Int, move |s, l| {
            ((u(s, l) >> 3) & 0x1ff) as f64
        }),
        case("extract_bits(i, 5u, 7u)", Int, move |s, l| {
            ((i(s, l) << (32 - 12)) >> (32 - 7)) as f64
        }),
        case("insert_bits(u, v, 4u, 11u)", Int, move |s, l| {
            let m = 0x7ffu32 << 4;
            ((u(s, l) & !m) | ((v(s, l) << 4) & m)) as f64
        }),
        case("hadd(i, j)", Int, move |s, l| {
            ((i(s, l) as i64 + j(s, l) as i64) >> 1) as f64
        }),
        case("rhadd(u, v)", Int, move |s, l| {
            ((u(s, l) as u64 + v(s, l) as u64 + 1) >> 1) as f64
        }),
        case("mulhi(i, j)", Int, move |s, l| {
            ((i(s, l) as i64 * j(s, l) as i64) >> 32) as f64
        }),
        case("mulhi(u, v)", Int, move |s, l| {
            ((u(s, l) as u64 * v(s, l) as u64) >> 32) as f64
        }),
        case("madhi(u, v, u)", Int, move |s, l| {
            (((u(s, l) as u64 * v(s, l) as u64) >> 32) as u32).wrapping_add(u(s, l)) as f64
        }),
        case("madsat(i, j, i)", Int, move |s, l| {
            sat(i(s, l) as i64 * j(s, l) as i64 + i(s, l) as i64)
        }),
        case("madsat(u, v, u)", Int, move |s, l| {
            (u(s, l) as u128 * v(s, l) as u128 + u(s, l) as u128).min(u32::MAX as u128) as f64
        }),
        case("max(i, j)", Int, move |s, l| i(s, l).max(j(s, l)) as f64),
        case("min(u, v)", Int, move |s, l| u(s, l).min(v(s, l)) as f64),
        case("rotate(u, v)", Int, move |s, l| {
            u(s, l).rotate_left(v(s, l) % 32) as f64
        }),
        case("rotate(i, j)", Int, move |s, l| {
            i(s, l).rotate_left(j(s, l) as u32 % 32) as f64
        }),
        // Shifts take the count modulo the width (MSL 3.1).
        case("u << v", Int, move |s, l| {
            (u(s, l) << (v(s, l) % 32)) as f64
        }),
        case("i >> j", Int, move |s, l| {
            (i(s, l) >> (j(s, l) as u32 % 32)) as f64
        }),
        // mul24 is defined for operands in [-2^23, 2^23) only.
        case("mul24(i >> 9, j >> 9)", Int, move |s, l| {
            (i(s, l) >> 9).wrapping_mul(j(s, l) >> 9) as f64
        }),
        case("mad24(u & 0xffffff, v & 0xffffff, u)", Int, move |s, l| {
            ((u(s, l) & 0xff_ffff).wrapping_mul(v(s, l) & 0xff_ffff)).wrapping_add(u(s, l)) as f64
        }),
    ];
    check(&cases, &Inputs::new(2, -4.0, 4.0), false, "integer");
}

#[test]
fn relational_functions() {
    use Want::*;
    let b = |v: bool| v as u32 as f64;
    let cases = vec![
        case("isfinite(x)", Int, move |s, l| b(x(s, l).is_finite())),
        case("isinf(x)", Int, move |s, l| b(x(s, l).is_infinite())),
        case("isnan(x)", Int, move |s, l| b(x(s, l).is_nan())),
        case("isnormal(x)", Int, move |s, l| b(x(s, l).is_normal())),
        case("isordered(x, y)", Int, move |s, l| {
            b(!x(s, l).is_nan() && !y(s, l).is_nan())
        }),
        case("isunordered(x, y)", Int, move |s, l| {
            b(x(s, l).is_nan() || y(s, l).is_nan())
        }),
        case("signbit(x)", Int, move |s, l| b(x(s, l).is_sign_negative())),
        case("all(bool2(x > 0, y > 0))", Int, move |s, l| {
            b(x(s, l) > 0.0 && y(s, l) > 0.0)
        }),
        case("any(bool3(x > 0, y > 0, false))", Int, move |s, l| {
            b(x(s, l) > 0.0 || y(s, l) > 0.0)
        }),
        case("not(x > y)", Int, move |s, l| {
            b(x(s, l).partial_cmp(&y(s, l)) != Some(std::cmp::Ordering::Greater))
        }),
        case("select(x, y, x < y)", F32, |s, l| {
            (if x(s, l) < y(s, l) { y(s, l) } else { x(s, l) }) as f64
        }),
        case(
            "select(float2(x, 1), float2(y, 2), bool2(true, false)).x",
            F32,
            |s, l| y(s, l) as f64,
        ),
        case("select(i, j, x != y)", Int, |s, l| {
            (if x(s, l) != y(s, l) { s.j[l] } else { s.i[l] }) as f64
        }),
        // Float comparisons are ordered except `!=`.
        case("x != x", Int, move |s, l| b(x(s, l).is_nan())),
    ];
    check(&cases, &Inputs::new(3, -2.0, 2.0), false, "relational");
}

/// `sin(pi x)` with the argument reduced exactly first (as `sinpi` must be).
fn sinpi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let r = x - 2.0 * (x / 2.0).round();
    (std::f64::consts::PI * r).sin()
}

fn cospi(x: f64) -> f64 {
    sinpi(x + 0.5)
}

/// The functions MSL 5.5 states exactly (0 ulp or correctly rounded in both modes),
/// with the spec's formulas as references.
fn exact_math_cases() -> Vec<Case> {
    use Want::*;
    let fx = |s: &Inputs, l: usize| x(s, l) as f64;
    let fy = |s: &Inputs, l: usize| y(s, l) as f64;
    vec![
        case("{ns}fabs(x)", F32, move |s, l| fx(s, l).abs()),
        case("{ns}abs(x)", F32, move |s, l| fx(s, l).abs()),
        case("{ns}ceil(x)", F32, move |s, l| fx(s, l).ceil()),
        case("{ns}floor(x)", F32, move |s, l| fx(s, l).floor()),
        case("{ns}trunc(x)", F32, move |s, l| fx(s, l).trunc()),
        case("{ns}round(x)", F32, move |s, l| fx(s, l).round()),
        case("{ns}rint(x)", F32, move |s, l| fx(s, l).round_ties_even()),
        case("{ns}copysign(x, y)", F32, move |s, l| {
            fx(s, l).copysign(fy(s, l))
        }),
        case("{ns}fdim(x, y)", F32, move |s, l| {
            let d = x(s, l) - y(s, l);
            if d.is_nan() {
                d as f64
            } else {
                d.max(0.0) as f64
            }
        }),
        case("{ns}fma(x, y, 0.75f)", F32, move |s, l| {
            x(s, l).mul_add(y(s, l), 0.75) as f64
        }),
        case("{ns}fmax(x, y)", F32, move |s, l| {
            fmax(x(s, l), y(s, l)) as f64
        }),
        case("{ns}fmin(x, y)", F32, move |s, l| {
            fmin(x(s, l), y(s, l)) as f64
        }),
        case("{ns}fmod(x, y)", F32, move |s, l| {
            (x(s, l) % y(s, l)) as f64
        }),
        // fract: `fmin(x - floor(x), 0x1.fffffep-1)` (MSL 5.5), `fmin` taking the bound
        // for a NaN difference.
        case("{ns}fract(x)", F32, move |s, l| {
            let v = x(s, l);
            fmin(v - v.floor(), f32::from_bits(0x3f7f_ffff)) as f64
        }),
        case("frexp_m(x)", F32, move |s, l| frexp(x(s, l)).0 as f64),
        case("frexp_e(x)", Int, move |s, l| frexp(x(s, l)).1 as f64),
        case("modf_f(x)", F32, move |s, l| {
            let v = x(s, l);
            if v.is_infinite() {
                0.0f32.copysign(v) as f64
            } else {
                (v - v.trunc()).copysign(v) as f64
            }
        }),
        case("modf_i(x)", F32, move |s, l| x(s, l).trunc() as f64),
        case("{ns}ilogb(x)", Int, move |s, l| ilogb(x(s, l)) as f64),
        case("{ns}ldexp(x, j % 300)", F32, move |s, l| {
            let k = s.j[l] % 300;
            (fx(s, l) * 2f64.powi(k)) as f32 as f64
        }),
        case("{ns}divide(x, y)", F32, move |s, l| {
            (x(s, l) / y(s, l)) as f64
        }),
        case("x / y", F32, move |s, l| (x(s, l) / y(s, l)) as f64),
        case("{ns}nextafter(x, y)", F32, move |s, l| {
            nextafter(x(s, l), y(s, l)) as f64
        }),
        case("{ns}fmax3(x, y, 0.5f)", F32, move |s, l| {
            fmax(fmax(x(s, l), y(s, l)), 0.5) as f64
        }),
    ]
}

/// `frexp` as C defines it: a mantissa in [0.5, 1) and an exponent.
fn frexp(x: f32) -> (f32, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (m, mut e) = (x.abs() as f64, 0);
    let mut m = m;
    while m >= 1.0 {
        m /= 2.0;
        e += 1;
    }
    while m < 0.5 {
        m *= 2.0;
        e -= 1;
    }
    ((m as f32).copysign(x), e)
}

/// `ilogb` as C and OpenCL define it (`FP_ILOGB0` = `INT_MIN`, `FP_ILOGBNAN` =
/// `INT_MAX`, infinity gives `INT_MAX`).
fn ilogb(x: f32) -> i32 {
    if x == 0.0 {
        i32::MIN
    } else if !x.is_finite() {
        i32::MAX
    } else {
        frexp(x).1 - 1
    }
}

/// `nextafter` as C defines it.
fn nextafter(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return f32::NAN;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        return f32::from_bits(1).copysign(y);
    }
    let b = x.to_bits();
    let away = (y > x) == (x > 0.0);
    f32::from_bits(if away { b + 1 } else { b - 1 })
}

#[test]
fn exact_math_functions_in_both_modes() {
    let inputs = Inputs::new(4, -300.0, 300.0);
    check(&exact_math_cases(), &inputs, false, "fast");
    check(&exact_math_cases(), &inputs, true, "precise");
}

/// The bounded functions of MSL 5.5, each within its spec limit: table 28 (precise) or
/// 29 (fast, where it bounds the error on the inputs given here).
fn bounded_math_cases(precise: bool) -> Vec<Case> {
    use Want::F32Ulps;
    let fx = |s: &Inputs, l: usize| x(s, l) as f64;
    let fy = |s: &Inputs, l: usize| y(s, l) as f64;
    let fast_or = |p: f64, f: f64| F32Ulps(if precise { p } else { f });
    let mut v = vec![
        case("{ns}acos(y / 4)", F32Ulps(5.0), move |s, l| {
            (fy(s, l) / 4.0).acos()
        }),
        case("{ns}asin(y / 4)", F32Ulps(5.0), move |s, l| {
            (fy(s, l) / 4.0).asin()
        }),
        case("{ns}atan(x)", F32Ulps(5.0), move |s, l| fx(s, l).atan()),
        case("{ns}exp(y)", fast_or(4.0, 11.0), move |s, l| fy(s, l).exp()),
        case("{ns}exp2(y)", fast_or(4.0, 11.0), move |s, l| {
            fy(s, l).exp2()
        }),
        case("{ns}log2(abs(x) + 2.5f)", fast_or(4.0, 2.0), move |s, l| {
            ((x(s, l).abs() + 2.5) as f64).log2()
        }),
        case("{ns}log(abs(x) + 2.5f)", fast_or(4.0, 3.0), move |s, l| {
            ((x(s, l).abs() + 2.5) as f64).ln()
        }),
        // Fast `sqrt` is `x * rsqrt(x)` (table 29 gives no bound; it stays within 2 ulp).
        case("{ns}sqrt(abs(x))", fast_or(0.5, 2.0), move |s, l| {
            fx(s, l).abs().sqrt()
        }),
        case("{ns}rsqrt(abs(x))", fast_or(0.5, 2.0), move |s, l| {
            1.0 / fx(s, l).abs().sqrt()
        }),
        case("{ns}sinpi(y)", fast_or(4.0, 4.0), move |s, l| {
            sinpi(fy(s, l))
        }),
        case("{ns}cospi(y)", fast_or(4.0, 4.0), move |s, l| {
            cospi(fy(s, l))
        }),
    ];
    if precise {
        v.extend([
            case("{ns}sin(x)", F32Ulps(4.0), move |s, l| fx(s, l).sin()),
            case("{ns}cos(x)", F32Ulps(4.0), move |s, l| fx(s, l).cos()),
            case("sincos_s(x)", F32Ulps(4.0), move |s, l| fx(s, l).sin()),
            case("sincos_c(x)", F32Ulps(4.0), move |s, l| fx(s, l).cos()),
            case("{ns}tan(x)", F32Ulps(6.0), move |s, l| fx(s, l).tan()),
            case("{ns}sinh(y)", F32Ulps(4.0), move |s, l| fy(s, l).sinh()),
            case("{ns}cosh(y)", F32Ulps(4.0), move |s, l| fy(s, l).cosh()),
            case("{ns}tanh(x)", F32Ulps(5.0), move |s, l| fx(s, l).tanh()),
            case("{ns}asinh(x)", F32Ulps(4.0), move |s, l| fx(s, l).asinh()),
            case("{ns}acosh(abs(x) + 1)", F32Ulps(4.0), move |s, l| {
                ((x(s, l).abs() + 1.0) as f64).acosh()
            }),
            case("{ns}atanh(y / 4)", F32Ulps(5.0), move |s, l| {
                (fy(s, l) / 4.0).atanh()
            }),
            case("{ns}atan2(x, y)", F32Ulps(6.0), move |s, l| {
                fx(s, l).atan2(fy(s, l))
            }),
            case("{ns}exp10(y)", F32Ulps(4.0), move |s, l| {
                10f64.powf(fy(s, l))
            }),
            case("{ns}log10(abs(x))", F32Ulps(4.0), move |s, l| {
                fx(s, l).abs().log10()
            }),
            case("{ns}pow(abs(x), y)", F32Ulps(16.0), move |s, l| {
                fx(s, l).abs().powf(fy(s, l))
            }),
            case("{ns}powr(abs(x), y)", F32Ulps(16.0), move |s, l| {
                fx(s, l).abs().powf(fy(s, l))
            }),
            case("{ns}tanpi(y)", F32Ulps(6.0), move |s, l| {
                sinpi(fy(s, l)) / cospi(fy(s, l))
            }),
        ]);
    }
    v
}

#[test]
fn bounded_math_functions_meet_the_spec_limits() {
    let inputs = Inputs::new(5, -4.0, 4.0);
    check(&bounded_math_cases(true), &inputs, true, "precise");
    // The fast bounds hold on finite inputs (table 29 leaves INF and NaN undefined).
    let mut finite = Inputs::new(6, -4.0, 4.0);
    finite.x.iter_mut().for_each(|v| {
        if !v.is_finite() || v.abs() > 1e30 {
            *v = 1.5;
        }
    });
    check(&bounded_math_cases(false), &finite, false, "fast");
}

/// Fast `sin` and `cos`: an absolute error of at most 2^-13 on [-pi, pi] (table 29).
#[test]
fn fast_sin_and_cos_meet_their_absolute_bound() {
    use Want::F32Abs;
    let fx = |s: &Inputs, l: usize| x(s, l) as f64;
    let bound = 2f64.powi(-13);
    let cases = vec![
        case("sin(x)", F32Abs(bound), move |s, l| fx(s, l).sin()),
        case("cos(x)", F32Abs(bound), move |s, l| fx(s, l).cos()),
    ];
    let pi = std::f32::consts::PI;
    let mut inputs = Inputs::new(7, -pi, pi);
    let mut r = Rng(9);
    inputs.x = (0..N).map(|_| r.float(-pi, pi)).collect();
    check(&cases, &inputs, false, "fast");
}

/// `half` math (table 30): one rounding of the exact result (within 1 ulp; `pow` 2).
#[test]
fn half_math_functions() {
    use Want::{F16, F16Ulps};
    let h = |v: f32| f16::from_f32(v).to_f64();
    let hx = move |s: &Inputs, l: usize| h(x(s, l));
    let hy = move |s: &Inputs, l: usize| h(y(s, l));
    let cases = vec![
        case("half(x) + half(y)", F16, move |s, l| hx(s, l) + hy(s, l)),
        case("half(x) * half(y)", F16, move |s, l| hx(s, l) * hy(s, l)),
        case("half(x) / half(y)", F16, move |s, l| hx(s, l) / hy(s, l)),
        case("fma(half(x), half(y), half(0.25f))", F16, move |s, l| {
            hx(s, l).mul_add(hy(s, l), 0.25)
        }),
        case("sqrt(abs(half(x)))", F16, move |s, l| hx(s, l).abs().sqrt()),
        case("floor(half(x))", F16, move |s, l| hx(s, l).floor()),
        case("sin(half(x))", F16Ulps(1.0), move |s, l| hx(s, l).sin()),
        case("cos(half(x))", F16Ulps(1.0), move |s, l| hx(s, l).cos()),
        case("exp(half(y))", F16Ulps(1.0), move |s, l| hy(s, l).exp()),
        case("log(abs(half(x)))", F16Ulps(1.0), move |s, l| {
            hx(s, l).abs().ln()
        }),
        case("rsqrt(abs(half(x)))", F16Ulps(1.0), move |s, l| {
            1.0 / hx(s, l).abs().sqrt()
        }),
        case("tanh(half(x))", F16Ulps(1.0), move |s, l| hx(s, l).tanh()),
        case("atan2(half(x), half(y))", F16Ulps(1.0), move |s, l| {
            hx(s, l).atan2(hy(s, l))
        }),
        case("pow(abs(half(x)), half(y))", F16Ulps(2.0), move |s, l| {
            hx(s, l).abs().powf(hy(s, l))
        }),
    ];
    check(&cases, &Inputs::new(8, -6.0, 6.0), false, "half");
}

/// The sRGB encoding of a linear value in [0, 1] (MSL 5.11, the usual transfer function).
fn linear_to_srgb(c: f64) -> f64 {
    if c <= 0.003_130_8 {
        12.92 * c
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    }
}

fn srgb_to_linear(c: f64) -> f64 {
    if c <= 0.040_45 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// `v` packed into `bits` bits as MSL 7.7.1.2 converts to a normalized integer
/// (NaN gives 0).
fn to_norm(v: f32, bits: u32, signed: bool) -> u32 {
    let max = ((1u32 << (bits - signed as u32)) - 1) as f32;
    let lo = if signed { -1.0 } else { 0.0 };
    let c = fmin(fmax(v, lo), 1.0);
    let q = (c * max).round_ties_even() as i32;
    q as u32 & ((1u64 << bits) - 1) as u32
}

/// Field `bits` bits wide at bit `at` of `u`, as MSL 7.7.1.1 converts a normalized
/// integer to float.
fn from_norm(u: u32, at: u32, bits: u32, signed: bool) -> f64 {
    let field = (u >> at) & ((1u64 << bits) - 1) as u32;
    if signed {
        let v = ((field << (32 - bits)) as i32) >> (32 - bits);
        (v as f32 / ((1u32 << (bits - 1)) - 1) as f32).max(-1.0) as f64
    } else {
        (field as f32 / ((1u64 << bits) - 1) as f32) as f64
    }
}

#[test]
fn pack_and_unpack_functions() {
    use Want::*;
    let h = |v: f32| f16::from_f32(v).to_f32();
    let cases = vec![
        case(
            "pack_float_to_unorm4x8(float4(x, y, 0.5f, -x))",
            Int,
            |s, l| {
                let (a, b) = (x(s, l), y(s, l));
                [a, b, 0.5, -a]
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| to_norm(c, 8, false) << (8 * k))
                    .fold(0, |p, q| p | q) as f64
            },
        ),
        case(
            "pack_float_to_snorm4x8(float4(x, y, -0.5f, -y))",
            Int,
            |s, l| {
                let (a, b) = (x(s, l), y(s, l));
                [a, b, -0.5, -b]
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| to_norm(c, 8, true) << (8 * k))
                    .fold(0, |p, q| p | q) as f64
            },
        ),
        case("pack_float_to_unorm2x16(float2(x, y))", Int, |s, l| {
            (to_norm(x(s, l), 16, false) | to_norm(y(s, l), 16, false) << 16) as f64
        }),
        case("pack_float_to_snorm2x16(float2(x, -y))", Int, |s, l| {
            (to_norm(x(s, l), 16, true) | to_norm(-y(s, l), 16, true) << 16) as f64
        }),
        case(
            "pack_float_to_unorm10a2(float4(x, y, 0.3f, y))",
            Int,
            |s, l| {
                let (a, b) = (x(s, l), y(s, l));
                (to_norm(a, 10, false)
                    | to_norm(b, 10, false) << 10
                    | to_norm(0.3, 10, false) << 20
                    | to_norm(b, 2, false) << 30) as f64
            },
        ),
        case("pack_float_to_unorm565(float3(x, y, 0.7f))", Int, |s, l| {
            (to_norm(x(s, l), 5, false)
                | to_norm(y(s, l), 6, false) << 5
                | to_norm(0.7, 5, false) << 11) as f64
        }),
        case(
            "pack_half_to_unorm4x8(half4(x, y, 0.5h, -x))",
            Int,
            move |s, l| {
                let (a, b) = (h(x(s, l)), h(y(s, l)));
                [a, b, 0.5, -a]
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| to_norm(c, 8, false) << (8 * k))
                    .fold(0, |p, q| p | q) as f64
            },
        ),
        case("pack_half_to_snorm2x16(half2(x, y))", Int, move |s, l| {
            (to_norm(h(x(s, l)), 16, true) | to_norm(h(y(s, l)), 16, true) << 16) as f64
        }),
        case(
            "pack_half_to_unorm565(half3(x, y, 0.7h))",
            Int,
            move |s, l| {
                (to_norm(h(x(s, l)), 5, false)
                    | to_norm(h(y(s, l)), 6, false) << 5
                    | to_norm(h(0.7), 5, false) << 11) as f64
            },
        ),
        case(
            "pack_half_to_unorm10a2(half4(x, y, 0.3h, y))",
            Int,
            move |s, l| {
                let (a, b) = (h(x(s, l)), h(y(s, l)));
                (to_norm(a, 10, false)
                    | to_norm(b, 10, false) << 10
                    | to_norm(h(0.3), 10, false) << 20
                    | to_norm(b, 2, false) << 30) as f64
            },
        ),
        // sRGB: within MSL 7.7.1.2's 0.6 of the exact scaled value; alpha stays linear.
        case(
            "float((pack_float_to_srgb_unorm4x8(float4(x, y, 0.25f, y)) >> 8) & 0xff)",
            F32Abs(0.6),
            |s, l| {
                let c = fmin(fmax(y(s, l), 0.0), 1.0) as f64;
                255.0 * linear_to_srgb(c)
            },
        ),
        case(
            "float(pack_half_to_srgb_unorm4x8(half4(x, y, 0.25h, y)) >> 24)",
            F32,
            move |s, l| to_norm(h(y(s, l)), 8, false) as f64,
        ),
        case("unpack_unorm4x8_to_float(u).y", F32, |s, l| {
            from_norm(s.u[l], 8, 8, false)
        }),
        case("unpack_snorm4x8_to_float(u).w", F32, |s, l| {
            from_norm(s.u[l], 24, 8, true)
        }),
        case("unpack_unorm2x16_to_float(u).y", F32, |s, l| {
            from_norm(s.u[l], 16, 16, false)
        }),
        case("unpack_snorm2x16_to_float(u).x", F32, |s, l| {
            from_norm(s.u[l], 0, 16, true)
        }),
        case("unpack_unorm10a2_to_float(u).z", F32, |s, l| {
            from_norm(s.u[l], 20, 10, false)
        }),
        case("unpack_unorm10a2_to_float(u).w", F32, |s, l| {
            from_norm(s.u[l], 30, 2, false)
        }),
        case("unpack_unorm565_to_float(ushort(u)).y", F32, |s, l| {
            from_norm(s.u[l], 5, 6, false)
        }),
        case("unpack_unorm565_to_float(ushort(u)).z", F32, |s, l| {
            from_norm(s.u[l], 11, 5, false)
        }),
        // The transfer function in f32 steps and a precise `pow`.
        case(
            "unpack_unorm4x8_srgb_to_float(u).x",
            F32Ulps(SRGB_ULPS),
            |s, l| srgb_to_linear((s.u[l] & 0xff) as f64 / 255.0),
        ),
        case("unpack_unorm4x8_srgb_to_float(u).w", F32, |s, l| {
            from_norm(s.u[l], 24, 8, false)
        }),
        case("unpack_unorm4x8_to_half(u).z", F16Ulps(1.0), |s, l| {
            from_norm(s.u[l], 16, 8, false)
        }),
        case("unpack_snorm4x8_to_half(u).x", F16Ulps(1.0), |s, l| {
            from_norm(s.u[l], 0, 8, true)
        }),
        case("unpack_unorm2x16_to_half(u).x", F16Ulps(1.0), |s, l| {
            from_norm(s.u[l], 0, 16, false)
        }),
        case("unpack_snorm2x16_to_half(u).y", F16Ulps(1.0), |s, l| {
            from_norm(s.u[l], 16, 16, true)
        }),
        case("unpack_unorm10a2_to_half(u).x", F16Ulps(1.0), |s, l| {
            from_norm(s.u[l], 0, 10, false)
        }),
        case(
            "unpack_unorm565_to_half(ushort(u)).x",
            F16Ulps(1.0),
            |s, l| from_norm(s.u[l], 0, 5, false),
        ),
        case("unpack_unorm4x8_srgb_to_half(u).y", F16Ulps(1.0), |s, l| {
            srgb_to_linear(((s.u[l] >> 8) & 0xff) as f64 / 255.0)
        }),
    ];
    check(&cases, &Inputs::new(10, -0.2, 1.2), false, "pack");
}

/// Finite operands only (the geometric functions' formulas are undefined otherwise).
fn finite_inputs(seed: u64, lo: f32, hi: f32) -> Inputs {
    let mut s = Inputs::new(seed, lo, hi);
    let mut r = Rng(seed ^ 0x55);
    for v in s.x.iter_mut().chain(s.y.iter_mut()) {
        if !v.is_finite() || v.abs() > 1e30 || v.abs() < 1e-30 {
            *v = r.float(lo, hi);
        }
    }
    s
}

#[test]
fn geometric_functions() {
    use Want::F32Abs;
    let fx = |s: &Inputs, l: usize| x(s, l) as f64;
    let fy = |s: &Inputs, l: usize| y(s, l) as f64;
    let tol = F32Abs(2e-5);
    let cases = vec![
        case(
            "dot(float3(x, y, 1.5f), float3(y, x, 0.5f))",
            tol,
            move |s, l| 2.0 * fx(s, l) * fy(s, l) + 0.75,
        ),
        case(
            "cross(float3(x, y, 1), float3(y, 2, x)).x",
            tol,
            move |s, l| fy(s, l) * fx(s, l) - 2.0,
        ),
        case(
            "cross(float3(x, y, 1), float3(y, 2, x)).z",
            tol,
            move |s, l| 2.0 * fx(s, l) - fy(s, l) * fy(s, l),
        ),
        case("length(float3(x, y, 1))", tol, move |s, l| {
            (fx(s, l).powi(2) + fy(s, l).powi(2) + 1.0).sqrt()
        }),
        case("length_squared(float2(x, y))", tol, move |s, l| {
            fx(s, l).powi(2) + fy(s, l).powi(2)
        }),
        case("distance(float2(x, y), float2(1, -2))", tol, move |s, l| {
            ((fx(s, l) - 1.0).powi(2) + (fy(s, l) + 2.0).powi(2)).sqrt()
        }),
        case(
            "distance_squared(float2(x, y), float2(1, -2))",
            tol,
            move |s, l| (fx(s, l) - 1.0).powi(2) + (fy(s, l) + 2.0).powi(2),
        ),
        case("normalize(float3(x, y, 1)).y", tol, move |s, l| {
            fy(s, l) / (fx(s, l).powi(2) + fy(s, l).powi(2) + 1.0).sqrt()
        }),
        // reflect(I, N) = I - 2 dot(N, I) N, for a unit N = (0.6, 0.8).
        case(
            "reflect(float2(x, y), float2(0.6f, 0.8f)).x",
            tol,
            move |s, l| {
                let d = 0.6 * fx(s, l) + 0.8 * fy(s, l);
                fx(s, l) - 2.0 * d * 0.6
            },
        ),
        // refract(I, N, eta) with k = 1 - eta^2 (1 - dot(N, I)^2): 0 when k < 0, else
        // eta I - (eta dot(N, I) + sqrt(k)) N.
        case(
            "refract(normalize(float2(x, y)), float2(0.6f, 0.8f), 0.5f).y",
            tol,
            move |s, l| {
                let n = (fx(s, l).powi(2) + fy(s, l).powi(2)).sqrt();
                let (ix, iy) = (fx(s, l) / n, fy(s, l) / n);
                let d = 0.6 * ix + 0.8 * iy;
                let k = 1.0 - 0.25 * (1.0 - d * d);
                if k < 0.0 {
                    0.0
                } else {
                    0.5 * iy - (0.5 * d + k.sqrt()) * 0.8
                }
            },
        ),
        // faceforward(N, I, Nref) = dot(Nref, I) < 0 ? N : -N.
        case(
            "faceforward(float2(x, 1), float2(y, -1), float2(1, 1)).x",
            tol,
            move |s, l| {
                if fy(s, l) - 1.0 < 0.0 {
                    fx(s, l)
                } else {
                    -fx(s, l)
                }
            },
        ),
    ];
    check(&cases, &finite_inputs(11, -3.0, 3.0), false, "geometric");
}

/// The value lane `l`'s SIMD-group peer `p` holds in `v`.
fn peer<T: Copy>(v: &[T], l: usize, p: usize) -> T {
    v[l / 32 * 32 + p]
}

/// Lanes `l`'s group of `width` lanes (32: its SIMD-group, 4: its quad).
fn group(l: usize, width: usize) -> std::ops::Range<usize> {
    let g = l / width * width;
    g..g + width
}

#[test]
fn simd_group_and_quad_group_functions() {
    use Want::Int;
    let iv = |s: &Inputs, l: usize| s.i[l] as u32;
    let small = |s: &Inputs, l: usize| s.i[l] as u32 & 255;
    let sum = move |s: &Inputs, r: std::ops::Range<usize>| {
        r.map(|k| small(s, k)).fold(0u32, u32::wrapping_add) as f64
    };
    let prod = |s: &Inputs, r: std::ops::Range<usize>| {
        r.map(|k| s.u[k] | 1).fold(1u32, u32::wrapping_mul) as f64
    };
    let cases = vec![
        case("simd_sum(i & 255)", Int, move |s, l| sum(s, group(l, 32))),
        case("simd_product(u | 1)", Int, move |s, l| {
            prod(s, group(l, 32))
        }),
        case("simd_min(i)", Int, |s, l| {
            group(l, 32).map(|k| s.i[k]).min().unwrap() as f64
        }),
        case("simd_max(u)", Int, |s, l| {
            group(l, 32).map(|k| s.u[k]).max().unwrap() as f64
        }),
        case("simd_and(u)", Int, |s, l| {
            group(l, 32).map(|k| s.u[k]).fold(!0, |a, b| a & b) as f64
        }),
        case("simd_or(u)", Int, |s, l| {
            group(l, 32).map(|k| s.u[k]).fold(0, |a, b| a | b) as f64
        }),
        case("simd_xor(u)", Int, |s, l| {
            group(l, 32).map(|k| s.u[k]).fold(0, |a, b| a ^ b) as f64
        }),
        case("simd_prefix_inclusive_sum(i & 255)", Int, move |s, l| {
            sum(s, l / 32 * 32..l + 1)
        }),
        case("simd_prefix_exclusive_sum(i & 255)", Int, move |s, l| {
            sum(s, l / 32 * 32..l)
        }),
        case("simd_prefix_inclusive_product(u | 1)", Int, move |s, l| {
            prod(s, l / 32 * 32..l + 1)
        }),
        case("simd_prefix_exclusive_product(u | 1)", Int, move |s, l| {
            prod(s, l / 32 * 32..l)
        }),
        case("uint((ulong)simd_ballot(x > 0))", Int, |s, l| {
            group(l, 32)
                .enumerate()
                .map(|(b, k)| ((s.x[k] > 0.0) as u32) << b)
                .fold(0, |a, b| a | b) as f64
        }),
        case("simd_all(x > -1e30f)", Int, |s, l| {
            group(l, 32).all(|k| s.x[k] > -1e30) as u32 as f64
        }),
        case("simd_any(x > 2)", Int, |s, l| {
            group(l, 32).any(|k| s.x[k] > 2.0) as u32 as f64
        }),
        case("simd_is_first()", Int, |_, l| (l % 32 == 0) as u32 as f64),
        case("simd_broadcast(i, 5)", Int, move |s, l| {
            peer(&s.i, l, 5) as u32 as f64
        }),
        case("simd_broadcast_first(i)", Int, move |s, l| {
            peer(&s.i, l, 0) as u32 as f64
        }),
        case("simd_shuffle(i, ushort(lane ^ 3))", Int, move |s, l| {
            peer(&s.i, l, (l % 32) ^ 3) as u32 as f64
        }),
        case("simd_shuffle_xor(i, 5)", Int, move |s, l| {
            peer(&s.i, l, (l % 32) ^ 5) as u32 as f64
        }),
        case("simd_shuffle_up(i, 2)", Int, move |s, l| {
            let p = l % 32;
            (if p < 2 {
                iv(s, l)
            } else {
                peer(&s.i, l, p - 2) as u32
            }) as f64
        }),
        case("simd_shuffle_down(i, 3)", Int, move |s, l| {
            let p = l % 32;
            (if p + 3 >= 32 {
                iv(s, l)
            } else {
                peer(&s.i, l, p + 3) as u32
            }) as f64
        }),
        case("simd_shuffle_rotate_up(i, 3)", Int, move |s, l| {
            peer(&s.i, l, (l % 32 + 29) % 32) as u32 as f64
        }),
        case("simd_shuffle_rotate_down(i, 3)", Int, move |s, l| {
            peer(&s.i, l, (l % 32 + 3) % 32) as u32 as f64
        }),
        case("simd_shuffle_and_fill_up(i, j, 2)", Int, move |s, l| {
            let p = l % 32;
            let v = if p < 2 {
                peer(&s.j, l, p + 30)
            } else {
                peer(&s.i, l, p - 2)
            };
            v as u32 as f64
        }),
        case("simd_shuffle_and_fill_down(i, j, 2)", Int, move |s, l| {
            let p = l % 32;
            let v = if p + 2 >= 32 {
                peer(&s.j, l, p + 2 - 32)
            } else {
                peer(&s.i, l, p + 2)
            };
            v as u32 as f64
        }),
        case("quad_sum(i & 255)", Int, move |s, l| sum(s, group(l, 4))),
        case("quad_prefix_exclusive_sum(i & 255)", Int, move |s, l| {
            sum(s, l / 4 * 4..l)
        }),
        case("quad_max(i)", Int, |s, l| {
            group(l, 4).map(|k| s.i[k]).max().unwrap() as f64
        }),
        case("quad_broadcast(i, 2)", Int, |s, l| {
            s.i[l / 4 * 4 + 2] as u32 as f64
        }),
        case("quad_shuffle(i, ushort((lane + 1) & 3))", Int, |s, l| {
            s.i[l / 4 * 4 + (l + 1) % 4] as u32 as f64
        }),
        case("quad_shuffle_xor(i, 1)", Int, |s, l| {
            s.i[l ^ 1] as u32 as f64
        }),
        case("quad_shuffle_up(i, 1)", Int, |s, l| {
            (if l % 4 < 1 { s.i[l] } else { s.i[l - 1] }) as u32 as f64
        }),
        case("quad_shuffle_rotate_down(i, 1)", Int, |s, l| {
            s.i[l / 4 * 4 + (l + 1) % 4] as u32 as f64
        }),
        case("uint(quad_any(x > 0.5f))", Int, |s, l| {
            group(l, 4).any(|k| s.x[k] > 0.5) as u32 as f64
        }),
        case("uint(quad_all(x > -1e30f))", Int, |s, l| {
            group(l, 4).all(|k| s.x[k] > -1e30) as u32 as f64
        }),
    ];
    check(&cases, &Inputs::new(12, -4.0, 4.0), false, "simd");
}

/// The error bound of the sRGB decoding (`unpack_unorm4x8_srgb_to_*`) in `float` ulps:
/// MSL gives none; the transfer function computed in `float` steps with a precise `pow`
/// stays within this of the exact value (measured over every byte by the test below).
const SRGB_ULPS: f64 = 8.0;

#[test]
fn srgb_decoding_over_every_byte() {
    let cases = vec![case(
        "unpack_unorm4x8_srgb_to_float(u).x",
        Want::F32Ulps(SRGB_ULPS),
        |s, l| srgb_to_linear((s.u[l] & 0xff) as f64 / 255.0),
    )];
    let mut worst = 0f64;
    for chunk in 0..256 / N {
        let mut inputs = Inputs::new(13, 0.0, 1.0);
        inputs.u = (0..N as u32).map(|k| chunk as u32 * N as u32 + k).collect();
        check(&cases, &inputs, false, "srgb");
        for (l, w) in run_cases(&cases, &inputs, false)[0].iter().enumerate() {
            let want = (cases[0].reference)(&inputs, l);
            worst = worst.max(ulps(f32::from_bits(*w) as f64, want, 23, -126));
        }
    }
    println!("sRGB decoding: at most {worst:.2} ulp");
}

/// SIMD-group functions in divergent code see the active lanes only (MSL 5.13): under
/// `if (lane % 3 != 0)`, lanes 0, 3, 6, ... take no part, and lane 1 is the first.
#[test]
fn simd_group_functions_see_only_the_active_lanes() {
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void k(device const int* xs [[buffer(0)]], device int* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]],
              uint lane [[thread_index_in_simdgroup]]) {
    int x = xs[gid];
    int r[8] = {-7, -7, -7, -7, -7, -7, -7, -7};
    if (lane % 3 != 0) {
        r[0] = simd_sum(x);
        r[1] = simd_prefix_exclusive_sum(x);
        r[2] = simd_min(x);
        r[3] = int(uint((ulong)simd_ballot(x > 0)));
        r[4] = simd_broadcast_first(x);
        r[5] = int(simd_is_first());
        r[6] = int(simd_all(x > -100));
        r[7] = simd_prefix_inclusive_sum(x);
    }
    for (int k = 0; k < 8; k++) {
        out[gid * 8 + k] = r[k];
    }
}
";
    let (m, d, s) = metalsim_frontend::compile_str("k.metal", src);
    let m = m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)));
    let xs: Vec<i32> = (0..N as i32).map(|k| (k * 37 % 23) - 11).collect();
    let l = launch(
        Grid::Threads([N as u32, 1, 1]),
        [N as u32, 1, 1],
        vec![
            buffer(
                0,
                "xs",
                Type::I32,
                u32s(&xs.iter().map(|&v| v as u32).collect::<Vec<_>>()),
            ),
            buffer(1, "out", Type::I32, zeros(4 * 8 * N)),
        ],
    );
    let out = run_both(&m, &l);
    let got = as_u32s(&out.buffers[1]);
    for l in 0..N {
        let active = |k: usize| !(k % 32).is_multiple_of(3);
        let peers: Vec<usize> = group(l, 32).filter(|&k| active(k)).collect();
        let want: [i32; 8] = if !active(l) {
            [-7; 8]
        } else {
            let sum = |f: &dyn Fn(usize) -> bool| {
                peers.iter().filter(|&&k| f(k)).map(|&k| xs[k]).sum::<i32>()
            };
            [
                sum(&|_| true),
                sum(&|k| k < l),
                peers.iter().map(|&k| xs[k]).min().unwrap(),
                peers
                    .iter()
                    .filter(|&&k| xs[k] > 0)
                    .fold(0u32, |m, &k| m | 1 << (k % 32)) as i32,
                xs[peers[0]],
                (l == peers[0]) as i32,
                1,
                sum(&|k| k <= l),
            ]
        };
        let lane: Vec<i32> = got[l * 8..l * 8 + 8].iter().map(|&v| v as i32).collect();
        assert_eq!(lane, want, "lane {l}");
    }
}

/// Calls metalsim refuses (matrix functions on a scalar, a float atomic max) are refused at
/// compile time, naming the function.
#[test]
fn refused_functions_are_named_at_compile_time() {
    for (call, named) in [
        ("determinant(x)", "`determinant` takes a matrix"),
        ("transpose(x)", "`transpose` takes a matrix"),
        (
            "atomic_fetch_max_explicit(af, x, memory_order_relaxed)",
            "`atomic_fetch_max_explicit` needs an integer atomic",
        ),
    ] {
        let src = format!(
            "#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], device atomic_float* af [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {{
    float x = out[gid];
    out[gid] = {call};
}}
"
        );
        let (m, d, s) = metalsim_frontend::compile_str("k.metal", &src);
        let text = metalsim_frontend::render(&d, &s, false);
        assert!(m.is_none(), "{call} compiled");
        assert!(text.contains(named), "{call}: {text}");
        assert!(text.contains("k.metal:6:"), "{call}: no location in {text}");
    }
}
