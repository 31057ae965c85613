//! Property tests: every arithmetic instruction, at every type it takes, run through the
//! simulator on random operands and compared lane by lane with an independent reference
//! (Rust's own typed arithmetic, bit-by-bit loops, exact integer rounding).

use half::{bf16, f16};
use proptest::prelude::*;

use crate::common::*;

/// Lanes per case: two SIMD-groups.
const LANES: usize = 64;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 24,
        ..ProptestConfig::default()
    }
}

/// Operands biased toward the edges of every width (0, 1, all ones, sign bits).
fn operand() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        any::<u8>().prop_map(|x| x as u64),
        prop::sample::select(vec![
            0u64,
            1,
            2,
            0x7f,
            0x80,
            0xff,
            0x7fff,
            0x8000,
            0xffff,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            i64::MAX as u64,
            i64::MIN as u64,
            u64::MAX,
        ]),
    ]
}

fn lanes() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(operand(), LANES)
}

/// Small counts and bit positions, some past the width.
fn positions() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(0u64..80, LANES)
}

/// Runs `inst` on lanes of operands of the given types (values masked to each type).
fn run(inst: &str, args: &[(&str, &[u64])], result: &str) -> Vec<u64> {
    let masked: Vec<(String, Vec<u64>)> = args
        .iter()
        .map(|(t, v)| (t.to_string(), v.iter().map(|x| x & ty(t).mask()).collect()))
        .collect();
    let refs: Vec<(&str, &[u64])> = masked.iter().map(|(t, v)| (t.as_str(), &v[..])).collect();
    eval(inst, &refs, result)
}

/// Defines, for one integer type, the reference of every integer instruction in terms of
/// Rust's arithmetic on that type.
macro_rules! int_reference {
    ($name:ident, $t:ty, $u:ty) => {
        /// The reference result (canonical bits) of `op` on operands `x, y, z, w`.
        fn $name(op: &str, x: u64, y: u64, z: u64, w: u64) -> u64 {
            const BITS: u32 = <$t>::BITS;
            let (a, b, c) = (x as $t, y as $t, z as $t);
            let bit = |v: $t, i: u32| ((v as $u) >> i) & 1;
            let r: $t = match op {
                "add" => a.wrapping_add(b),
                "sub" => a.wrapping_sub(b),
                "mul" => a.wrapping_mul(b),
                "div" => {
                    if b == 0 {
                        !0
                    } else {
                        a.wrapping_div(b)
                    }
                }
                "rem" => {
                    if b == 0 {
                        a
                    } else {
                        a.wrapping_rem(b)
                    }
                }
                "min" => a.min(b),
                "max" => a.max(b),
                "shl" => a.wrapping_shl(y as u32),
                "shr" => a.wrapping_shr(y as u32),
                "mulhi" => {
                    if <$t>::MIN != 0 {
                        ((a as i128 * b as i128) >> BITS) as $t
                    } else {
                        ((a as u128 * b as u128) >> BITS) as $t
                    }
                }
                "addsat" => a.saturating_add(b),
                "subsat" => a.saturating_sub(b),
                "madsat" => {
                    let v = (a as i128)
                        .saturating_mul(b as i128)
                        .saturating_add(c as i128);
                    v.clamp(<$t>::MIN as i128, <$t>::MAX as i128) as $t
                }
                // The classic overflow-free forms, with `>>` arithmetic for signed types.
                "hadd" => (a & b).wrapping_add((a ^ b) >> 1),
                "rhadd" => (a | b).wrapping_sub((a ^ b) >> 1),
                "rotate" => a.rotate_left(y as u32),
                "reverse_bits" => a.reverse_bits(),
                "extract_bits" => {
                    let (o, n) = clamp_field(BITS, y as u32, z as u32);
                    let mut v: $u = 0;
                    for i in 0..n {
                        v |= (bit(a, o + i) as $u) << i;
                    }
                    // Sign-extend from the field's top bit for signed types.
                    if n > 0 && <$t>::MIN != 0 && bit(a, o + n - 1) == 1 {
                        for i in n..BITS {
                            v |= 1 << i;
                        }
                    }
                    v as $t
                }
                "insert_bits" => {
                    let (o, n) = clamp_field(BITS, z as u32, w as u32);
                    let mut v = a as $u;
                    for i in 0..n {
                        v = (v & !(1 << (o + i))) | ((bit(b, i) as $u) << (o + i));
                    }
                    v as $t
                }
                "abs" => (a as i128).unsigned_abs() as $t,
                "neg" => a.wrapping_neg(),
                "not" => !a,
                "clz" => a.leading_zeros() as $t,
                "ctz" => a.trailing_zeros() as $t,
                "popcount" => a.count_ones() as $t,
                _ => panic!("no reference for {op}"),
            };
            r as $u as u64
        }
    };
}

/// `extract_bits`/`insert_bits` clamp their field into the value.
fn clamp_field(bits: u32, offset: u32, n: u32) -> (u32, u32) {
    let o = offset.min(bits);
    (o, n.min(bits - o))
}

int_reference!(ref_i8, i8, u8);
int_reference!(ref_u8, u8, u8);
int_reference!(ref_i16, i16, u16);
int_reference!(ref_u16, u16, u16);
int_reference!(ref_i32, i32, u32);
int_reference!(ref_u32, u32, u32);
int_reference!(ref_i64, i64, u64);
int_reference!(ref_u64, u64, u64);

/// The reference of every integer instruction at one type: `(op, x, y, z, w)` to bits.
type Reference = fn(&str, u64, u64, u64, u64) -> u64;

const INTS: [(&str, Reference); 8] = [
    ("i8", ref_i8),
    ("u8", ref_u8),
    ("i16", ref_i16),
    ("u16", ref_u16),
    ("i32", ref_i32),
    ("u32", ref_u32),
    ("i64", ref_i64),
    ("u64", ref_u64),
];

/// Checks integer instruction `op` at every type: operands of the type, then `u32` bit
/// positions for `extract_bits`/`insert_bits`.
fn check_int(op: &str, x: &[u64], y: &[u64], z: &[u64], w: &[u64], p: &[u64]) {
    for (t, reference) in INTS {
        let args: Vec<(&str, &[u64])> = match op {
            "abs" | "neg" | "not" | "clz" | "ctz" | "popcount" | "reverse_bits" => vec![(t, x)],
            "madsat" => vec![(t, x), (t, y), (t, z)],
            "extract_bits" => vec![(t, x), ("u32", p), ("u32", w)],
            "insert_bits" => vec![(t, x), (t, y), ("u32", p), ("u32", w)],
            "shl" | "shr" | "rotate" => vec![(t, x), (t, p)],
            _ => vec![(t, x), (t, y)],
        };
        let got = run(&format!("{op}.{t}"), &args, t);
        let m = ty(t).mask();
        for (i, &g) in got.iter().enumerate() {
            let operand = |k: usize| args.get(k).map_or(0, |a| a.1[i] & ty(a.0).mask());
            let want = reference(op, operand(0), operand(1), operand(2), operand(3)) & m;
            assert_eq!(
                g,
                want,
                "{op}.{t} lane {i}: operands {:#x} {:#x} {:#x} {:#x}",
                operand(0),
                operand(1),
                operand(2),
                operand(3)
            );
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn integer_instructions_match_rust(
        x in lanes(), y in lanes(), z in lanes(), w in positions(), p in positions()
    ) {
        for op in [
            "add", "sub", "mul", "div", "rem", "min", "max", "shl", "shr", "mulhi", "abs",
            "neg", "not", "clz", "ctz", "popcount",
        ] {
            check_int(op, &x, &y, &z, &w, &p);
        }
    }

    #[test]
    fn integer_functions_match_rust(
        x in lanes(), y in lanes(), z in lanes(), w in positions(), p in positions()
    ) {
        for op in [
            "addsat", "subsat", "madsat", "hadd", "rhadd", "rotate", "reverse_bits",
            "extract_bits", "insert_bits",
        ] {
            check_int(op, &x, &y, &z, &w, &p);
        }
    }
}

/// Random f32 bit patterns, with specials and small integers mixed in.
fn f32_lanes() -> impl Strategy<Value = Vec<u64>> {
    let one = prop_oneof![
        any::<u32>().prop_map(|b| b as u64),
        (-1000i32..1000).prop_map(|i| (i as f32 * 0.25).to_bits() as u64),
        prop::sample::select(vec![
            0f32,
            -0.0,
            1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN_POSITIVE,
            1e-45,
        ])
        .prop_map(|f| f.to_bits() as u64),
    ];
    prop::collection::vec(one, LANES)
}

fn same(got: u64, want: f32) -> bool {
    let g = f32::from_bits(got as u32);
    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan())
}

/// `x` rounded to half (or bfloat with `bf`) by exact integer arithmetic on the binary
/// fraction of an f64 (which must hold `x` exactly): round to nearest, ties to even.
fn round_exact(x: f64, fraction: i32, min_exp: i32, max_exp: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let e = ((x.abs().to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let quantum = 2f64.powi(e.max(min_exp) - fraction);
    // x / quantum is exact (a power-of-two scaling); split into integer and fraction.
    let q = x.abs() / quantum;
    let (whole, frac) = (q.trunc(), q.fract());
    let up = frac > 0.5 || (frac == 0.5 && whole % 2.0 == 1.0);
    let v = (whole + up as u8 as f64) * quantum;
    let max = (2.0 - 2f64.powi(-fraction)) * 2f64.powi(max_exp);
    let overflow = (2.0 - 2f64.powi(-fraction - 1)) * 2f64.powi(max_exp);
    let v = if x.abs() >= overflow {
        f64::INFINITY
    } else {
        v.min(max)
    };
    if x < 0.0 { -v } else { v }
}

fn to_half(x: f64) -> u64 {
    f16::from_f64_const(round_exact(x, 10, -14, 15)).to_bits() as u64
}

fn to_bfloat(x: f64) -> u64 {
    let r = round_exact(x, 7, -126, 127);
    // r is exact in f32 and in bfloat16.
    bf16::from_f32(r as f32).to_bits() as u64
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn f32_arithmetic_is_ieee(a in f32_lanes(), b in f32_lanes(), c in f32_lanes()) {
        let f = |x: u64| f32::from_bits(x as u32);
        for (op, r) in [
            ("add", (|x, y| x + y) as fn(f32, f32) -> f32),
            ("sub", |x, y| x - y),
            ("mul", |x, y| x * y),
            ("div", |x, y| x / y),
            ("min", |x, y| if x.is_nan() || y < x { y } else { x }),
            ("max", |x, y| if x.is_nan() || x < y { y } else { x }),
        ] {
            let got = run(&format!("{op}.f32"), &[("f32", &a), ("f32", &b)], "f32");
            for i in 0..LANES {
                prop_assert!(same(got[i], r(f(a[i]), f(b[i]))), "{op}.f32 {:e} {:e}", f(a[i]), f(b[i]));
            }
        }
        let got = run("fma.f32", &[("f32", &a), ("f32", &b), ("f32", &c)], "f32");
        for i in 0..LANES {
            let want = f(a[i]).mul_add(f(b[i]), f(c[i]));
            prop_assert!(same(got[i], want), "fma.f32 {:e} {:e} {:e}", f(a[i]), f(b[i]), f(c[i]));
        }
    }

    #[test]
    fn half_and_bfloat_round_once_after_every_operation(
        a in prop::collection::vec(any::<u16>(), LANES),
        b in prop::collection::vec(any::<u16>(), LANES),
    ) {
        let a: Vec<u64> = a.iter().map(|&x| x as u64).collect();
        let b: Vec<u64> = b.iter().map(|&x| x as u64).collect();
        type Exact = fn(f64, f64) -> f64;
        // Sums and products of two 16-bit floats are exact in f64.
        let ops: [(&str, Exact); 3] = [("add", |x, y| x + y), ("sub", |x, y| x - y), ("mul", |x, y| x * y)];
        for (t, value, round) in [
            ("f16", (|x| f16::from_bits(x as u16).to_f64()) as fn(u64) -> f64, to_half as fn(f64) -> u64),
            ("bf16", |x| bf16::from_bits(x as u16).to_f64(), to_bfloat),
        ] {
            for (op, exact) in ops {
                let got = run(&format!("{op}.{t}"), &[(t, &a), (t, &b)], t);
                for i in 0..LANES {
                    let (x, y) = (value(a[i]), value(b[i]));
                    let want = exact(x, y);
                    if want.is_nan() {
                        prop_assert!(value(got[i]).is_nan(), "{op}.{t} {x} {y}");
                    } else {
                        prop_assert_eq!(got[i], round(want), "{}.{} {} {}", op, t, x, y);
                    }
                }
            }
        }
    }

    #[test]
    fn conversions_follow_spec_7_6(a in f32_lanes(), n in lanes()) {
        // Float to integer: toward zero, saturating, NaN to 0.
        for (t, _) in INTS {
            let got = run(&format!("cvt.f32.{t}"), &[("f32", &a)], t);
            let (lo, hi) = if ty(t).is_signed() {
                (-(1i128 << (ty(t).bits() - 1)), (1i128 << (ty(t).bits() - 1)) - 1)
            } else {
                (0, (1i128 << ty(t).bits()) - 1)
            };
            for i in 0..LANES {
                let x = f32::from_bits(a[i] as u32);
                let want = if x.is_nan() {
                    0
                } else if x as f64 >= hi as f64 {
                    hi
                } else if x as f64 <= lo as f64 {
                    lo
                } else {
                    x.trunc() as i128
                };
                prop_assert_eq!(got[i], want as u64 & ty(t).mask(), "cvt.f32.{} {:e}", t, x);
            }
        }
        // Integer to float: to nearest even.
        for (t, _) in INTS {
            let v: Vec<u64> = n.iter().map(|x| x & ty(t).mask()).collect();
            let value = |x: u64| -> i128 {
                if ty(t).is_signed() {
                    let s = 64 - ty(t).bits();
                    (((x << s) as i64) >> s) as i128
                } else {
                    x as i128
                }
            };
            let f = run(&format!("cvt.{t}.f32"), &[(t, &v)], "f32");
            let h = run(&format!("cvt.{t}.f16"), &[(t, &v)], "f16");
            let b = run(&format!("cvt.{t}.bf16"), &[(t, &v)], "bf16");
            for i in 0..LANES {
                let x = value(v[i]);
                prop_assert_eq!(f[i], (x as f32).to_bits() as u64, "cvt.{}.f32 {}", t, x);
                // |x| < 2^64 is exact in f64 only below 2^53; above, f64's own rounding
                // keeps the half/bfloat result (2^53 is far past both formats' spacing
                // ambiguity only for bfloat), so compare where f64 is exact.
                if x.unsigned_abs() < 1 << 53 {
                    prop_assert_eq!(h[i], to_half(x as f64), "cvt.{}.f16 {}", t, x);
                    prop_assert_eq!(b[i], to_bfloat(x as f64), "cvt.{}.bf16 {}", t, x);
                }
            }
        }
        // Float to float: to nearest even.
        let h = run("cvt.f32.f16", &[("f32", &a)], "f16");
        let b = run("cvt.f32.bf16", &[("f32", &a)], "bf16");
        for i in 0..LANES {
            let x = f32::from_bits(a[i] as u32);
            if x.is_nan() {
                prop_assert!(f16::from_bits(h[i] as u16).is_nan());
                prop_assert!(bf16::from_bits(b[i] as u16).is_nan());
            } else {
                prop_assert_eq!(h[i], to_half(x as f64), "cvt.f32.f16 {:e}", x);
                prop_assert_eq!(b[i], to_bfloat(x as f64), "cvt.f32.bf16 {:e}", x);
            }
        }
    }
}
