//! Arithmetic, comparisons, conversions and address arithmetic, lane by lane against
//! Rust's own arithmetic.

use half::{bf16, f16};

use crate::common::*;

fn mask(t: &str) -> u64 {
    ty(t).mask()
}

/// Sign-extends the canonical bits of a `bits`-wide value.
fn sext(v: u64, bits: u32) -> i64 {
    let s = 64 - bits;
    ((v << s) as i64) >> s
}

fn canon(t: &str, v: &[u64]) -> Vec<u64> {
    v.iter().map(|x| x & mask(t)).collect()
}

/// Checks a binary integer op of type `t` against `f` on sign-/zero-extended i128 values.
fn check_int_bin(op: &str, t: &str, f: impl Fn(i128, i128, u32) -> i128) {
    let a = canon(t, &samples(160, 7));
    let b = canon(t, &samples(160, 99).into_iter().rev().collect::<Vec<_>>());
    let got = eval(&format!("{op}.{t}"), &[(t, &a), (t, &b)], t);
    let bits = ty(t).bits();
    let val = |x: u64| {
        if ty(t).is_signed() {
            sext(x, bits) as i128
        } else {
            x as i128
        }
    };
    for i in 0..a.len() {
        let want = (f(val(a[i]), val(b[i]), bits) as u64) & mask(t);
        assert_eq!(got[i], want, "{op}.{t} {:#x}, {:#x}", a[i], b[i]);
    }
}

fn wrap(x: i128, bits: u32) -> i128 {
    let m = if bits == 64 {
        u64::MAX as i128
    } else {
        (1i128 << bits) - 1
    };
    x & m
}

const INTS: [&str; 8] = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"];

#[test]
fn integer_arithmetic_wraps_at_every_width() {
    for t in INTS {
        check_int_bin("add", t, |a, b, w| wrap(a + b, w));
        check_int_bin("sub", t, |a, b, w| wrap(a - b, w));
        check_int_bin("mul", t, |a, b, w| wrap(a.wrapping_mul(b), w));
        check_int_bin("min", t, |a, b, _| a.min(b));
        check_int_bin("max", t, |a, b, _| a.max(b));
        check_int_bin("and", t, |a, b, _| a & b);
        check_int_bin("or", t, |a, b, _| a | b);
        check_int_bin("xor", t, |a, b, _| a ^ b);
    }
}

#[test]
fn division_rounds_toward_zero_and_by_zero_is_defined() {
    for t in INTS {
        check_int_bin("div", t, |a, b, w| if b == 0 { -1 } else { wrap(a / b, w) });
        check_int_bin("rem", t, |a, b, w| if b == 0 { a } else { wrap(a % b, w) });
    }
}

#[test]
fn shifts_take_the_count_modulo_the_width() {
    for t in INTS {
        let signed = ty(t).is_signed();
        check_int_bin("shl", t, |a, b, w| wrap(a << (b.rem_euclid(w as i128)), w));
        check_int_bin("shr", t, move |a, b, w| {
            let c = (b as u64 & (w as u64 - 1)) as u32;
            if signed {
                a >> c
            } else {
                (a as u128 >> c) as i128
            }
        });
        check_int_bin("mulhi", t, move |a, b, w| {
            if signed {
                (a * b) >> w
            } else {
                ((a as u128 * b as u128) >> w) as i128
            }
        });
    }
}

#[test]
fn integer_unary_ops() {
    for t in INTS {
        let bits = ty(t).bits();
        let a = canon(t, &samples(96, 5));
        let neg = eval(&format!("neg.{t}"), &[(t, &a)], t);
        let abs = eval(&format!("abs.{t}"), &[(t, &a)], t);
        let not = eval(&format!("not.{t}"), &[(t, &a)], t);
        let clz = eval(&format!("clz.{t}"), &[(t, &a)], t);
        let ctz = eval(&format!("ctz.{t}"), &[(t, &a)], t);
        let pop = eval(&format!("popcount.{t}"), &[(t, &a)], t);
        for i in 0..a.len() {
            let x = a[i];
            let v = if ty(t).is_signed() {
                sext(x, bits)
            } else {
                x as i64
            };
            assert_eq!(neg[i], x.wrapping_neg() & mask(t), "neg.{t} {x:#x}");
            let want_abs = if ty(t).is_signed() {
                v.unsigned_abs() & mask(t)
            } else {
                x
            };
            assert_eq!(abs[i], want_abs, "abs.{t} {x:#x}");
            assert_eq!(not[i], !x & mask(t), "not.{t} {x:#x}");
            assert_eq!(
                clz[i],
                (x.leading_zeros() - (64 - bits)) as u64,
                "clz.{t} {x:#x}"
            );
            assert_eq!(
                ctz[i],
                x.trailing_zeros().min(bits) as u64,
                "ctz.{t} {x:#x}"
            );
            assert_eq!(pop[i], x.count_ones() as u64, "popcount.{t} {x:#x}");
        }
    }
}

#[test]
fn integer_fma_and_compares() {
    for t in INTS {
        let bits = ty(t).bits();
        let a = canon(t, &samples(64, 11));
        let b = canon(t, &samples(64, 12));
        let c = canon(t, &samples(64, 13));
        let fma = eval(&format!("fma.{t}"), &[(t, &a), (t, &b), (t, &c)], t);
        let val = |x: u64| {
            if ty(t).is_signed() {
                sext(x, bits) as i128
            } else {
                x as i128
            }
        };
        for i in 0..a.len() {
            assert_eq!(
                fma[i],
                (a[i].wrapping_mul(b[i]).wrapping_add(c[i])) & mask(t)
            );
        }
        for (cond, f) in [
            ("eq", (|x, y| x == y) as fn(i128, i128) -> bool),
            ("ne", |x, y| x != y),
            ("lt", |x, y| x < y),
            ("le", |x, y| x <= y),
            ("gt", |x, y| x > y),
            ("ge", |x, y| x >= y),
        ] {
            let got = eval(&format!("cmp.{cond}.{t}"), &[(t, &a), (t, &b)], "pred");
            for i in 0..a.len() {
                assert_eq!(
                    got[i],
                    f(val(a[i]), val(b[i])) as u64,
                    "cmp.{cond}.{t} {:#x} {:#x}",
                    a[i],
                    b[i]
                );
            }
        }
    }
}

fn f32_samples(n: usize, seed: u64) -> Vec<u64> {
    let mut v: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        -1.5,
        0.1,
        3.0e38,
        -3.0e38,
        1.0e-40,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        2.5,
        -2.5,
        0.5,
        1.0e7,
    ];
    for x in samples(n, seed) {
        v.push((x as u32 as f32 / 65536.0) * if x & 1 == 1 { -1.0 } else { 1.0 });
    }
    v.truncate(n);
    v.iter().map(|f| f.to_bits() as u64).collect()
}

fn same_f32(got: u64, want: f32) -> bool {
    let g = f32::from_bits(got as u32);
    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan())
}

#[test]
fn f32_arithmetic_matches_rust() {
    let a = f32_samples(96, 1);
    let b: Vec<u64> = f32_samples(96, 2).into_iter().rev().collect();
    let c = f32_samples(96, 3);
    let f = |x: u64| f32::from_bits(x as u32);
    for (op, r) in [
        ("add", (|x, y| x + y) as fn(f32, f32) -> f32),
        ("sub", |x, y| x - y),
        ("mul", |x, y| x * y),
        ("div", |x, y| x / y),
        // MSL's fmin/fmax: `y < x ? y : x` and `x < y ? y : x`, the other operand when
        // one is NaN.
        ("min", |x, y| if x.is_nan() || y < x { y } else { x }),
        ("max", |x, y| if x.is_nan() || x < y { y } else { x }),
    ] {
        let got = eval(&format!("{op}.f32"), &[("f32", &a), ("f32", &b)], "f32");
        for i in 0..a.len() {
            assert!(
                same_f32(got[i], r(f(a[i]), f(b[i]))),
                "{op}.f32 {} {}",
                f(a[i]),
                f(b[i])
            );
        }
    }
    let got = eval("fma.f32", &[("f32", &a), ("f32", &b), ("f32", &c)], "f32");
    for i in 0..a.len() {
        let want = f(a[i]).mul_add(f(b[i]), f(c[i]));
        assert!(
            same_f32(got[i], want),
            "fma {} {} {}",
            f(a[i]),
            f(b[i]),
            f(c[i])
        );
    }
    for (op, r) in [
        ("neg", (|x: f32| -x) as fn(f32) -> f32),
        ("abs", f32::abs),
        ("floor", f32::floor),
        ("ceil", f32::ceil),
        ("trunc", f32::trunc),
        ("round", f32::round),
        ("rint", f32::round_ties_even),
        ("sqrt.precise", f32::sqrt),
        ("rcp", |x| (1.0 / x as f64) as f32),
        ("rcp.precise", |x| (1.0 / x as f64) as f32),
    ] {
        let got = eval(&format!("{op}.f32"), &[("f32", &a)], "f32");
        for i in 0..a.len() {
            assert!(same_f32(got[i], r(f(a[i]))), "{op}.f32 {}", f(a[i]));
        }
    }
    // Precise transcendentals are within an ulp of the f64 value (docs/math-precision.md
    // has the measured errors of both variants).
    for (op, r) in [
        ("rsqrt", (|x| 1.0 / x.sqrt()) as fn(f64) -> f64),
        ("exp", f64::exp),
        ("exp2", f64::exp2),
        ("log", f64::ln),
        ("log2", f64::log2),
        ("sin", f64::sin),
        ("cos", f64::cos),
        ("tan", f64::tan),
        ("atan", f64::atan),
        ("tanh", f64::tanh),
    ] {
        let got = eval(&format!("{op}.precise.f32"), &[("f32", &a)], "f32");
        for i in 0..a.len() {
            let (x, g) = (f(a[i]), f(got[i]));
            let want = r(x as f64);
            let ulp = (want as f32).abs().max(f32::MIN_POSITIVE);
            let ulp = f32::from_bits(ulp.to_bits() + 1) - ulp;
            let close = (g as f64 - want).abs() <= ulp as f64;
            assert!(
                close || same_f32(got[i], want as f32),
                "{op}.precise.f32 {x} = {g}, want {want}"
            );
        }
    }
    // Min/max return the non-NaN operand; comparisons are ordered except `ne`.
    let nan = [f32::NAN.to_bits() as u64];
    let one = [1f32.to_bits() as u64];
    assert!(same_f32(
        eval("min.f32", &[("f32", &nan), ("f32", &one)], "f32")[0],
        1.0
    ));
    assert!(same_f32(
        eval("max.f32", &[("f32", &one), ("f32", &nan)], "f32")[0],
        1.0
    ));
    for (cond, want) in [
        ("eq", 0),
        ("ne", 1),
        ("lt", 0),
        ("le", 0),
        ("gt", 0),
        ("ge", 0),
    ] {
        assert_eq!(
            eval(
                &format!("cmp.{cond}.f32"),
                &[("f32", &nan), ("f32", &one)],
                "pred"
            ),
            [want]
        );
    }
    for (cond, want) in [
        ("eq", 0),
        ("ne", 1),
        ("lt", 1),
        ("le", 1),
        ("gt", 0),
        ("ge", 0),
    ] {
        let two = [2f32.to_bits() as u64];
        assert_eq!(
            eval(
                &format!("cmp.{cond}.f32"),
                &[("f32", &one), ("f32", &two)],
                "pred"
            ),
            [want]
        );
    }
}

#[test]
fn half_floats_round_after_every_operation() {
    let vals: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        2048.0,
        1.0 / 3.0,
        65504.0,
        -7.25,
        1e-7,
        0.1,
        3.0,
    ];
    let h: Vec<u64> = vals
        .iter()
        .map(|&x| f16::from_f32(x).to_bits() as u64)
        .collect();
    let g: Vec<u64> = vals
        .iter()
        .rev()
        .map(|&x| f16::from_f32(x).to_bits() as u64)
        .collect();
    let hf = |x: u64| f16::from_bits(x as u16).to_f32();
    for (op, r) in [
        ("add", (|x, y| x + y) as fn(f32, f32) -> f32),
        ("sub", |x, y| x - y),
        ("mul", |x, y| x * y),
        ("div", |x, y| x / y),
    ] {
        let got = eval(&format!("{op}.f16"), &[("f16", &h), ("f16", &g)], "f16");
        for i in 0..h.len() {
            let want = f16::from_f32(r(hf(h[i]), hf(g[i]))).to_bits() as u64;
            assert_eq!(got[i], want, "{op}.f16 {} {}", hf(h[i]), hf(g[i]));
        }
    }
    // 2048 + 1 rounds to even in f16; 65504 * 2 overflows to infinity.
    let two_k = [f16::from_f32(2048.0).to_bits() as u64];
    let one = [f16::ONE.to_bits() as u64];
    assert_eq!(
        eval("add.f16", &[("f16", &two_k), ("f16", &one)], "f16"),
        two_k
    );
    let max = [f16::MAX.to_bits() as u64];
    let two = [f16::from_f32(2.0).to_bits() as u64];
    assert_eq!(
        eval("mul.f16", &[("f16", &max), ("f16", &two)], "f16"),
        [f16::INFINITY.to_bits() as u64]
    );
    // A fused multiply-add rounds once: (1 + 2^-10)^2 - 1 = 2^-9 + 2^-20.
    let x = [f16::from_f32(1.0 + 1.0 / 1024.0).to_bits() as u64];
    let m1 = [f16::from_f32(-1.0).to_bits() as u64];
    let got = eval("fma.f16", &[("f16", &x), ("f16", &x), ("f16", &m1)], "f16");
    assert_eq!(
        got,
        [f16::from_f32(1.0 / 512.0 + 1.0 / 1_048_576.0).to_bits() as u64]
    );
    // bfloat16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: rounds to even (1).
    let b1 = [bf16::ONE.to_bits() as u64];
    let small = [bf16::from_f32(1.0 / 256.0).to_bits() as u64];
    assert_eq!(
        eval("add.bf16", &[("bf16", &b1), ("bf16", &small)], "bf16"),
        b1
    );
    assert_eq!(
        eval("neg.bf16", &[("bf16", &b1)], "bf16"),
        [bf16::NEG_ONE.to_bits() as u64]
    );
    assert_eq!(
        eval("cmp.lt.f16", &[("f16", &one), ("f16", &two)], "pred"),
        [1]
    );
}

#[test]
fn conversions_truncate_saturate_and_round() {
    let f = |x: f32| x.to_bits() as u64;
    let cases: &[(&str, &str, &str, u64, u64)] = &[
        ("cvt.f32.i32", "f32", "i32", f(-2.7), (-2i32) as u32 as u64),
        ("cvt.f32.i32", "f32", "i32", f(3e9), i32::MAX as u64),
        ("cvt.f32.i32", "f32", "i32", f(-3e9), i32::MIN as u32 as u64),
        ("cvt.f32.i32", "f32", "i32", f(f32::NAN), 0),
        ("cvt.f32.u32", "f32", "u32", f(-5.0), 0),
        ("cvt.f32.u8", "f32", "u8", f(300.0), 255),
        ("cvt.f32.i16", "f32", "i16", f(-40000.0), 0x8000),
        ("cvt.f32.u64", "f32", "u64", f(1e20), u64::MAX),
        ("cvt.f32.i64", "f32", "i64", f(-1e20), i64::MIN as u64),
        (
            "cvt.i32.f32",
            "i32",
            "f32",
            (-16_777_217i32) as u32 as u64,
            f(-16_777_216.0),
        ),
        ("cvt.u32.f32", "u32", "f32", 0xffff_ffff, f(4_294_967_296.0)),
        ("cvt.u64.f32", "u64", "f32", u64::MAX, f(1.844_674_4e19)),
        (
            "cvt.i32.f16",
            "i32",
            "f16",
            2049,
            f16::from_f32(2048.0).to_bits() as u64,
        ),
        (
            "cvt.f32.f16",
            "f32",
            "f16",
            f(1.0 / 3.0),
            f16::from_f32(1.0 / 3.0).to_bits() as u64,
        ),
        ("cvt.f16.f32", "f16", "f32", 0x3c00, f(1.0)),
        (
            "cvt.f32.bf16",
            "f32",
            "bf16",
            f(1.0 + 1.0 / 256.0),
            bf16::ONE.to_bits() as u64,
        ),
        ("cvt.u32.u8", "u32", "u8", 0x1ff, 0xff),
        ("cvt.sat.u32.u8", "u32", "u8", 0x1ff, 0xff),
        ("cvt.sat.i32.u8", "i32", "u8", (-5i32) as u32 as u64, 0),
        ("cvt.sat.i32.i8", "i32", "i8", 1000, 0x7f),
        ("cvt.i32.i8", "i32", "i8", 1000, 1000 & 0xff),
        ("cvt.i8.i32", "i8", "i32", 0x80, 0xffff_ff80),
        ("cvt.u8.i32", "u8", "i32", 0x80, 0x80),
        ("cvt.i32.i64", "i32", "i64", (-1i32) as u32 as u64, u64::MAX),
        ("cvt.u32.u64", "u32", "u64", 0xffff_ffff, 0xffff_ffff),
        ("cvt.i64.i32", "i64", "i32", 0x1_0000_0005, 5),
        (
            "cvt.sat.i64.i32",
            "i64",
            "i32",
            0x1_0000_0005,
            i32::MAX as u64,
        ),
        ("cvt.sat.u64.i16", "u64", "i16", u64::MAX, 0x7fff),
        ("cvt.pred.u32", "pred", "u32", 1, 1),
        ("cvt.pred.f32", "pred", "f32", 1, f(1.0)),
    ];
    for &(inst, from, to, input, want) in cases {
        let got = eval(inst, &[(from, &[input])], to);
        assert_eq!(got, [want], "{inst} {input:#x}");
    }
}

#[test]
fn bitcast_select_and_pointer_arithmetic() {
    let bits = [0x3f80_0000u64];
    assert_eq!(eval("bitcast.u32.f32", &[("u32", &bits)], "f32"), bits);
    assert_eq!(
        eval("bitcast.f16.i16", &[("f16", &[0xbc00])], "i16"),
        [0xbc00]
    );
    assert_eq!(
        eval("bitcast.i64.u64", &[("i64", &[u64::MAX])], "u64"),
        [u64::MAX]
    );
    let p = [0, 1];
    assert_eq!(
        eval(
            "select.u32",
            &[("pred", &p), ("u32", &[5, 5]), ("u32", &[7, 7])],
            "u32"
        ),
        [7, 5]
    );
    assert_eq!(
        eval(
            "select.i64",
            &[("pred", &p), ("i64", &[5, 5]), ("i64", &[u64::MAX, 7])],
            "i64"
        ),
        [u64::MAX, 5]
    );
    // ptradd sign-extends signed indices and zero-extends unsigned ones (wrapping u64).
    let base = [1000u64, 1000, 1000, 1000];
    let idx = [(-3i32) as u32 as u64, 3, 0xffff_ffff, 0];
    assert_eq!(
        eval("ptradd.4", &[("u64", &base), ("i32", &idx)], "u64"),
        [988, 1012, 996, 1000]
    );
    assert_eq!(
        eval("ptradd.4", &[("u64", &base), ("u32", &idx)], "u64"),
        [1000 + 4 * 0xffff_fffd, 1012, 1000 + 4 * 0xffff_ffff, 1000]
    );
    assert_eq!(
        eval("ptradd.2", &[("u64", &base[..1]), ("i8", &[0xfe])], "u64"),
        [996]
    );
    assert_eq!(
        eval("ptradd.8", &[("u64", &[0]), ("i64", &[u64::MAX])], "u64"),
        [(-8i64) as u64]
    );
    assert_eq!(
        eval("ptradd.1", &[("u64", &[5]), ("u16", &[0xffff])], "u64"),
        [5 + 0xffff]
    );
}

#[test]
fn predicates_do_logic() {
    let a = [0, 0, 1, 1];
    let b = [0, 1, 0, 1];
    assert_eq!(
        eval("and.pred", &[("pred", &a), ("pred", &b)], "pred"),
        [0, 0, 0, 1]
    );
    assert_eq!(
        eval("or.pred", &[("pred", &a), ("pred", &b)], "pred"),
        [0, 1, 1, 1]
    );
    assert_eq!(
        eval("xor.pred", &[("pred", &a), ("pred", &b)], "pred"),
        [0, 1, 1, 0]
    );
    assert_eq!(eval("not.pred", &[("pred", &a)], "pred"), [1, 1, 0, 0]);
}
