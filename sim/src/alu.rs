//! Lane semantics of arithmetic: one scalar function per operation family. The vector
//! loops of `exec` call these with a constant operation (so each loop specializes and
//! vectorizes) and the cross-lane reductions of `lanes` call them lane by lane: every
//! operation's meaning is written once, here.

use half::{bf16, f16};
use metalsim_isa::scalar::fma_odd;
pub(crate) use metalsim_isa::scalar::round_to_odd_f32;
use metalsim_isa::{CmpCond, IntFn, Type};

/// An integer or predicate type held in a 32-bit register slot: its width and signedness.
/// Values are kept canonical: zero-extended bits masked to the width.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Width {
    /// Bits of the type (1 for predicates, 8, 16 or 32).
    pub bits: u8,
    /// Signed type.
    pub signed: bool,
}

impl Width {
    /// The width of a type held in the 32-bit bank.
    pub fn of(ty: Type) -> Width {
        Width {
            bits: ty.bits().min(32) as u8,
            signed: ty.is_signed(),
        }
    }

    /// Mask of the type's bits.
    #[inline(always)]
    pub fn mask(self) -> u32 {
        if self.bits >= 32 {
            u32::MAX
        } else {
            (1u32 << self.bits) - 1
        }
    }

    /// The canonical bits sign-extended to 32 bits.
    #[inline(always)]
    pub fn sext(self, x: u32) -> i32 {
        let s = 32 - self.bits as u32;
        ((x << s) as i32) >> s
    }

    /// The value, sign- or zero-extended by the type's signedness.
    #[inline(always)]
    pub fn extend(self, x: u32) -> i64 {
        if self.signed {
            self.sext(x) as i64
        } else {
            x as i64
        }
    }
}

/// Integer operations of one operand.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum IntUnOp {
    Neg,
    Abs,
    Not,
    Clz,
    Ctz,
    Popcount,
}

/// Integer operations of two operands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum IntBinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    MulHi,
}

/// Float operations of one operand (they act on the sign bit).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FloatUnOp {
    Neg,
    Abs,
}

/// Float operations of two operands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FloatBinOp {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
}

/// A float type held in a 32-bit slot (16-bit types in the low half).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FloatTy {
    F32,
    F16,
    BF16,
}

impl FloatTy {
    /// The float type of an ISA type, if it is one.
    pub fn of(ty: Type) -> Option<FloatTy> {
        match ty {
            Type::F32 => Some(FloatTy::F32),
            Type::F16 => Some(FloatTy::F16),
            Type::BF16 => Some(FloatTy::BF16),
            _ => None,
        }
    }

    /// The value as an `f32` (exact for every float type).
    #[inline(always)]
    pub fn to_f32(self, bits: u32) -> f32 {
        match self {
            FloatTy::F32 => f32::from_bits(bits),
            FloatTy::F16 => f16::from_bits(bits as u16).to_f32(),
            FloatTy::BF16 => bf16::from_bits(bits as u16).to_f32(),
        }
    }

    /// An `f32` rounded (to nearest even) to this type, as canonical bits.
    #[inline(always)]
    pub fn round(self, x: f32) -> u32 {
        match self {
            FloatTy::F32 => x.to_bits(),
            FloatTy::F16 => f16::from_f32(x).to_bits() as u32,
            FloatTy::BF16 => bf16::from_f32(x).to_bits() as u32,
        }
    }

    /// The sign bit.
    #[inline(always)]
    pub fn sign_bit(self) -> u32 {
        match self {
            FloatTy::F32 => 0x8000_0000,
            FloatTy::F16 | FloatTy::BF16 => 0x8000,
        }
    }

    /// The bits of 1.0.
    pub fn one(self) -> u32 {
        self.round(1.0)
    }
}

/// A comparison of two ordered values. For floats, every condition but `Ne` is false when
/// an operand is NaN (Rust's operators already behave so).
#[inline(always)]
pub(crate) fn compare<T: PartialOrd>(c: CmpCond, a: T, b: T) -> bool {
    match c {
        CmpCond::Eq => a == b,
        CmpCond::Ne => a != b,
        CmpCond::Lt => a < b,
        CmpCond::Le => a <= b,
        CmpCond::Gt => a > b,
        CmpCond::Ge => a >= b,
    }
}

/// A one-operand integer operation on a 32-bit slot.
#[inline(always)]
pub(crate) fn int_un(op: IntUnOp, w: Width, x: u32) -> u32 {
    let m = w.mask();
    match op {
        IntUnOp::Neg => x.wrapping_neg() & m,
        IntUnOp::Abs => {
            if w.signed {
                w.sext(x).wrapping_abs() as u32 & m
            } else {
                x
            }
        }
        IntUnOp::Not => !x & m,
        IntUnOp::Clz => x.leading_zeros() - (32 - w.bits as u32),
        IntUnOp::Ctz => x.trailing_zeros().min(w.bits as u32),
        IntUnOp::Popcount => x.count_ones(),
    }
}

/// A two-operand integer operation on 32-bit slots: wrapping, division by zero gives all
/// ones (unsigned) or -1 (signed), remainder by zero gives `x`, shift counts are taken
/// modulo the width.
#[inline(always)]
pub(crate) fn int_bin(op: IntBinOp, w: Width, x: u32, y: u32) -> u32 {
    let m = w.mask();
    let count = y & (w.bits as u32).wrapping_sub(1);
    match op {
        IntBinOp::Add => x.wrapping_add(y) & m,
        IntBinOp::Sub => x.wrapping_sub(y) & m,
        IntBinOp::Mul => x.wrapping_mul(y) & m,
        IntBinOp::Div => {
            if y == 0 {
                m
            } else if w.signed {
                w.sext(x).wrapping_div(w.sext(y)) as u32 & m
            } else {
                x / y
            }
        }
        IntBinOp::Rem => {
            if y == 0 {
                x
            } else if w.signed {
                w.sext(x).wrapping_rem(w.sext(y)) as u32 & m
            } else {
                x % y
            }
        }
        IntBinOp::Min => {
            if w.signed {
                if w.sext(x) <= w.sext(y) { x } else { y }
            } else {
                x.min(y)
            }
        }
        IntBinOp::Max => {
            if w.signed {
                if w.sext(x) >= w.sext(y) { x } else { y }
            } else {
                x.max(y)
            }
        }
        IntBinOp::And => x & y,
        IntBinOp::Or => x | y,
        IntBinOp::Xor => x ^ y,
        IntBinOp::Shl => (x << count) & m,
        IntBinOp::Shr => {
            if w.signed {
                (w.sext(x) >> count) as u32 & m
            } else {
                x >> count
            }
        }
        IntBinOp::MulHi => {
            let p = if w.signed {
                (w.sext(x) as i64 * w.sext(y) as i64) as u64
            } else {
                x as u64 * y as u64
            };
            (p >> w.bits) as u32 & m
        }
    }
}

/// `x * y + z`, wrapping, on 32-bit slots.
#[inline(always)]
pub(crate) fn int_fma(w: Width, x: u32, y: u32, z: u32) -> u32 {
    x.wrapping_mul(y).wrapping_add(z) & w.mask()
}

/// Lowest and highest value of an integer type of `bits` bits.
#[inline(always)]
fn int_range(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// `(offset, bits)` of an `extract_bits`/`insert_bits` field, clamped into a `width`-bit
/// value.
#[inline(always)]
fn field(width: u32, offset: u32, bits: u32) -> (u32, u32) {
    let o = offset.min(width);
    (o, bits.min(width - o))
}

/// Mask of the low `n` bits (`n` up to 64).
#[inline(always)]
fn low_mask(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// An integer function on a value of `bits` bits and signedness `signed`, on its
/// canonical (zero-extended) bits; operands past the function's arity are ignored, and
/// bit positions (`extract_bits`, `insert_bits`) are the `u32` operands `z`, `t`.
#[inline(always)]
pub(crate) fn int_fn(f: IntFn, bits: u32, signed: bool, x: u64, y: u64, z: u64, t: u64) -> u64 {
    let m = low_mask(bits);
    let value = |v: u64| -> i128 {
        if signed {
            let s = 64 - bits;
            (((v << s) as i64) >> s) as i128
        } else {
            (v & m) as i128
        }
    };
    let (lo, hi) = int_range(bits, signed);
    let sat = |v: i128| v.clamp(lo, hi) as u64 & m;
    match f {
        IntFn::AddSat => sat(value(x) + value(y)),
        IntFn::SubSat => sat(value(x) - value(y)),
        // Saturating in i128 first: past i128's range is far past any type's.
        IntFn::MadSat => sat(value(x).saturating_mul(value(y)).saturating_add(value(z))),
        // The sum of two values needs one more bit: i128 holds it; `>>` floors.
        IntFn::HAdd => ((value(x) + value(y)) >> 1) as u64 & m,
        IntFn::RHAdd => ((value(x) + value(y) + 1) >> 1) as u64 & m,
        IntFn::Rotate => {
            let n = (y as u32) & (bits - 1);
            let v = x & m;
            if n == 0 {
                v
            } else {
                ((v << n) | (v >> (bits - n))) & m
            }
        }
        IntFn::ReverseBits => (x & m).reverse_bits() >> (64 - bits),
        IntFn::ExtractBits => {
            let (o, b) = field(bits, y as u32, z as u32);
            if b == 0 {
                return 0;
            }
            let v = ((x & m) >> o) & low_mask(b);
            if signed && v >> (b - 1) & 1 != 0 {
                (v | !low_mask(b)) & m
            } else {
                v
            }
        }
        IntFn::InsertBits => {
            let (o, b) = field(bits, z as u32, t as u32);
            if b == 0 {
                return x & m;
            }
            let fm = low_mask(b) << o & m;
            (x & !fm | (y << o) & fm) & m
        }
    }
}

/// An integer comparison on 32-bit slots.
#[inline(always)]
pub(crate) fn int_cmp(c: CmpCond, w: Width, x: u32, y: u32) -> bool {
    if w.signed {
        compare(c, w.sext(x), w.sext(y))
    } else {
        compare(c, x, y)
    }
}

/// A one-operand integer operation on 64-bit slots.
#[inline(always)]
pub(crate) fn long_un(op: IntUnOp, signed: bool, x: u64) -> u64 {
    match op {
        IntUnOp::Neg => x.wrapping_neg(),
        IntUnOp::Abs => {
            if signed {
                (x as i64).wrapping_abs() as u64
            } else {
                x
            }
        }
        IntUnOp::Not => !x,
        IntUnOp::Clz => x.leading_zeros() as u64,
        IntUnOp::Ctz => x.trailing_zeros() as u64,
        IntUnOp::Popcount => x.count_ones() as u64,
    }
}

/// A two-operand integer operation on 64-bit slots (same rules as [`int_bin`]).
#[inline(always)]
pub(crate) fn long_bin(op: IntBinOp, signed: bool, x: u64, y: u64) -> u64 {
    let (sx, sy) = (x as i64, y as i64);
    match op {
        IntBinOp::Add => x.wrapping_add(y),
        IntBinOp::Sub => x.wrapping_sub(y),
        IntBinOp::Mul => x.wrapping_mul(y),
        IntBinOp::Div => {
            if y == 0 {
                u64::MAX
            } else if signed {
                sx.wrapping_div(sy) as u64
            } else {
                x / y
            }
        }
        IntBinOp::Rem => {
            if y == 0 {
                x
            } else if signed {
                sx.wrapping_rem(sy) as u64
            } else {
                x % y
            }
        }
        IntBinOp::Min => {
            if signed {
                sx.min(sy) as u64
            } else {
                x.min(y)
            }
        }
        IntBinOp::Max => {
            if signed {
                sx.max(sy) as u64
            } else {
                x.max(y)
            }
        }
        IntBinOp::And => x & y,
        IntBinOp::Or => x | y,
        IntBinOp::Xor => x ^ y,
        IntBinOp::Shl => x << (y & 63),
        IntBinOp::Shr => {
            if signed {
                (sx >> (y & 63)) as u64
            } else {
                x >> (y & 63)
            }
        }
        IntBinOp::MulHi => {
            if signed {
                ((sx as i128 * sy as i128) >> 64) as u64
            } else {
                ((x as u128 * y as u128) >> 64) as u64
            }
        }
    }
}

/// An integer comparison on 64-bit slots.
#[inline(always)]
pub(crate) fn long_cmp(c: CmpCond, signed: bool, x: u64, y: u64) -> bool {
    if signed {
        compare(c, x as i64, y as i64)
    } else {
        compare(c, x, y)
    }
}

/// A one-operand float operation, on the bits of a value of type `ft`.
#[inline(always)]
pub(crate) fn float_un(op: FloatUnOp, ft: FloatTy, x: u32) -> u32 {
    match op {
        FloatUnOp::Neg => x ^ ft.sign_bit(),
        FloatUnOp::Abs => x & !ft.sign_bit(),
    }
}

/// A two-operand float operation in `f32`, IEEE round to nearest even. `Min` and `Max`
/// are MSL's `fmin`/`fmax`: `fmin(x, y)` is `y` if `y < x`, else `x`, and the other
/// operand when one is NaN (so `fmin(+0, -0)` is `+0` and `fmin(-0, +0)` is `-0`).
#[inline(always)]
pub(crate) fn f32_bin(op: FloatBinOp, a: f32, b: f32) -> f32 {
    match op {
        FloatBinOp::Add => a + b,
        FloatBinOp::Sub => a - b,
        FloatBinOp::Mul => a * b,
        FloatBinOp::Div => a / b,
        FloatBinOp::Min => {
            if a.is_nan() || b < a {
                b
            } else {
                a
            }
        }
        FloatBinOp::Max => {
            if a.is_nan() || a < b {
                b
            } else {
                a
            }
        }
    }
}

/// A two-operand float operation, computed in `f32` and rounded to `ft`. For 16-bit types
/// this is correctly rounded: f32 has more than twice their precision plus two bits, so
/// rounding twice gives the same result as rounding once.
#[inline(always)]
pub(crate) fn float_bin(op: FloatBinOp, ft: FloatTy, x: u32, y: u32) -> u32 {
    ft.round(f32_bin(op, ft.to_f32(x), ft.to_f32(y)))
}

/// `a * b + c` with one rounding to f32.
#[inline(always)]
pub(crate) fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    fma_odd(a, b, c) as f32
}

/// `a * b + c` with one rounding to f32 in 32 lanes (bits in, bits out): the same as
/// [`fma_f32`] per lane, cheaper. The product is exact in f64, so the f64 sum is the
/// exact result rounded once; rounding that to f32 again can only go wrong (double
/// rounding) when the sum lies exactly halfway between two f32s, where its 29 bits below
/// the f32 precision (more for f32 subnormals) are a one and zeros. Lanes whose low 28
/// bits are all zero (a superset: also exact small results) take [`fma_f32`]; the
/// others' f64 sum rounded to f32 is the answer, in a loop that vectorizes.
#[inline(always)]
pub(crate) fn fma_f32_lanes(a: &[u32; 32], b: &[u32; 32], c: &[u32; 32]) -> [u32; 32] {
    let f = f32::from_bits;
    let mut out = [0u32; 32];
    let mut low = [0u32; 32];
    for i in 0..32 {
        let s = f(a[i]) as f64 * f(b[i]) as f64 + f(c[i]) as f64;
        out[i] = (s as f32).to_bits();
        low[i] = s.to_bits() as u32 & 0x0fff_ffff;
    }
    if low.contains(&0) {
        for i in 0..32 {
            if low[i] == 0 {
                out[i] = fma_f32(f(a[i]), f(b[i]), f(c[i])).to_bits();
            }
        }
    }
    out
}

/// `x * y + z` with one rounding to `ft`.
#[inline(always)]
pub(crate) fn float_fma(ft: FloatTy, x: u32, y: u32, z: u32) -> u32 {
    let r = fma_odd(ft.to_f32(x), ft.to_f32(y), ft.to_f32(z));
    match ft {
        FloatTy::F32 => (r as f32).to_bits(),
        _ => ft.round(round_to_odd_f32(r)),
    }
}

/// A float comparison.
#[inline(always)]
pub(crate) fn float_cmp(c: CmpCond, ft: FloatTy, x: u32, y: u32) -> bool {
    compare(c, ft.to_f32(x), ft.to_f32(y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `a * b + c` of three finite f16 rounded once to f16, in exact integer arithmetic:
    /// every f16 is a multiple of 2^-24, so the result is `n * 2^-48` exactly.
    fn f16_fma_exact(a: f16, b: f16, c: f16) -> u16 {
        let units = |x: f16| (x.to_f64() * 2f64.powi(24)) as i128;
        let n = units(a) * units(b) + (units(c) << 24);
        if n == 0 {
            // Exact zero: +0 unless both the product and c are -0 or negative zero sums.
            let neg = (a.is_sign_negative() != b.is_sign_negative()) && c.is_sign_negative();
            return if neg { 0x8000 } else { 0 };
        }
        let mag = n.unsigned_abs();
        let msb = 127 - mag.leading_zeros();
        // 11 significant bits, but never finer than the subnormal step 2^-24 = 2^24 units.
        let shift = (msb as i32 - 10).max(24) as u32;
        let kept = mag >> shift;
        let rem = mag & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let kept = kept + (rem > half || (rem == half && kept & 1 == 1)) as u128;
        let v = kept as f64 * 2f64.powi(shift as i32 - 48);
        f16::from_f64(if n < 0 { -v } else { v }).to_bits()
    }

    fn f32_near_cancel() -> impl Strategy<Value = (f32, f32, f32)> {
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            -3i32..=3,
            any::<bool>(),
        )
            .prop_map(|(a, b, c, k, cancel)| {
                let (a, b) = (f32::from_bits(a), f32::from_bits(b));
                let c = if cancel {
                    f32::from_bits((-(a * b)).to_bits().wrapping_add(k as u32))
                } else {
                    f32::from_bits(c)
                };
                (a, b, c)
            })
    }

    /// `fma_f32_lanes` of the lanes against `fma_f32` lane by lane.
    fn check_lanes(lanes: &[(f32, f32, f32)]) {
        let bits = |k: usize| {
            let mut v = [0u32; 32];
            for (i, l) in lanes.iter().cycle().take(32).enumerate() {
                v[i] = [l.0, l.1, l.2][k].to_bits();
            }
            v
        };
        let got = fma_f32_lanes(&bits(0), &bits(1), &bits(2));
        for (i, l) in lanes.iter().cycle().take(32).enumerate() {
            assert_eq!(got[i], fma_f32(l.0, l.1, l.2).to_bits(), "lane {i}: {l:?}");
        }
    }

    #[test]
    fn fma_lanes_round_once_where_the_f64_sum_is_an_f32_midpoint() {
        // (1 + 2^-12)^2 + 2^-60 = 1 + 2^-11 + 2^-24 + 2^-60: its f64 sum drops the
        // 2^-60 and lands halfway between two f32s, which would round down to even.
        let a = 1.0 + 2f32.powi(-12);
        let c = 2f32.powi(-60);
        let want = 1.0 + 2f32.powi(-11) + 2f32.powi(-23);
        assert_eq!(fma_f32(a, a, c), want);
        let got = fma_f32_lanes(&[a.to_bits(); 32], &[a.to_bits(); 32], &[c.to_bits(); 32]);
        assert_eq!(got, [want.to_bits(); 32]);
        check_lanes(&[
            (a, a, c),
            (1.5, 2.0, 0.25),
            (f32::NAN, 1.0, 0.0),
            (f32::INFINITY, 0.0, 1.0),
            (f32::MAX, 2.0, -f32::MAX),
            (1e-30, 1e-10, 0.0),
            (-0.0, 0.0, -0.0),
        ]);
    }

    proptest! {
        #[test]
        fn fma_lanes_equal_fma_f32_lane_by_lane(lanes in proptest::collection::vec(f32_near_cancel(), 32)) {
            check_lanes(&lanes);
        }

        #[test]
        fn fma_f32_is_correctly_rounded((a, b, c) in f32_near_cancel()) {
            let want = a.mul_add(b, c);
            let got = fma_f32(a, b, c);
            prop_assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "fma({a:e}, {b:e}, {c:e}) = {got:e}, want {want:e}");
        }

        #[test]
        fn fma_f16_is_correctly_rounded(a in 0u16..0x7c00, b in 0u16..0x7c00, c in 0u16..0x7c00, signs in 0u8..8, near in any::<bool>()) {
            let h = |bits: u16, neg: bool| f16::from_bits(bits | if neg { 0x8000 } else { 0 });
            let (a, b) = (h(a, signs & 1 != 0), h(b, signs & 2 != 0));
            let c = if near {
                // Near cancellation: c close to -(a * b).
                f16::from_f32(-(a.to_f32() * b.to_f32()))
            } else {
                h(c, signs & 4 != 0)
            };
            prop_assume!(c.is_finite());
            let got = float_fma(FloatTy::F16, a.to_bits() as u32, b.to_bits() as u32, c.to_bits() as u32);
            prop_assert_eq!(got as u16, f16_fma_exact(a, b, c), "fma({}, {}, {})", a, b, c);
        }
    }

    const I8: Width = Width {
        bits: 8,
        signed: true,
    };
    const U8: Width = Width {
        bits: 8,
        signed: false,
    };
    const I32: Width = Width {
        bits: 32,
        signed: true,
    };

    #[test]
    fn narrow_integers_wrap_and_stay_canonical() {
        assert_eq!(int_bin(IntBinOp::Add, U8, 200, 100), 44);
        assert_eq!(int_bin(IntBinOp::Div, I8, 0x80, 0xff), 0x80);
        assert_eq!(int_bin(IntBinOp::Shr, I8, 0x80, 9), 0xc0);
        assert_eq!(int_un(IntUnOp::Clz, U8, 1), 7);
        assert_eq!(int_un(IntUnOp::Ctz, U8, 0), 8);
        assert_eq!(int_un(IntUnOp::Abs, I8, 0x80), 0x80);
        assert_eq!(int_bin(IntBinOp::MulHi, I32, (-2i32) as u32, 3), u32::MAX);
        assert!(int_cmp(CmpCond::Lt, I8, 0xff, 0));
        assert!(!int_cmp(CmpCond::Lt, U8, 0xff, 0));
    }

    #[test]
    fn division_by_zero_is_defined() {
        assert_eq!(int_bin(IntBinOp::Div, I32, 5, 0), u32::MAX);
        assert_eq!(int_bin(IntBinOp::Div, U8, 5, 0), 0xff);
        assert_eq!(int_bin(IntBinOp::Rem, I32, 5, 0), 5);
        assert_eq!(
            long_bin(IntBinOp::Div, true, i64::MIN as u64, u64::MAX),
            i64::MIN as u64
        );
    }

    #[test]
    fn half_floats_round_after_each_operation() {
        let one = FloatTy::F16.one();
        assert_eq!(one, 0x3c00);
        // 2048 + 1 is not representable in f16: rounds to even (2048).
        let big = FloatTy::F16.round(2048.0);
        assert_eq!(float_bin(FloatBinOp::Add, FloatTy::F16, big, one), big);
        assert_eq!(float_un(FloatUnOp::Neg, FloatTy::F16, one), 0xbc00);
        let nan = f32::NAN.to_bits();
        assert_eq!(
            float_bin(FloatBinOp::Min, FloatTy::F32, nan, 1f32.to_bits()),
            1f32.to_bits()
        );
        assert!(float_cmp(CmpCond::Ne, FloatTy::F32, nan, nan));
        assert!(!float_cmp(CmpCond::Eq, FloatTy::F32, nan, nan));
    }

    #[test]
    fn fma_rounds_once() {
        // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24 exactly; a separate multiply loses 2^-24.
        let x = 1.0 + 1.0 / 4096.0;
        assert_eq!(fma_f32(x, x, -1.0), x.mul_add(x, -1.0));
        assert_ne!(fma_f32(x, x, -1.0), x * x - 1.0);
        for (a, b, c) in [
            (f32::MAX, 2.0, -f32::MAX),
            (1e-30, 1e-30, 0.0),
            (-0.0, 1.0, 0.0),
            (-0.0, 1.0, -0.0),
            (f32::INFINITY, 0.0, 1.0),
            (f32::INFINITY, 1.0, f32::NEG_INFINITY),
            (3.0, 1.0 / 3.0, -1.0),
            (1.0, 1.0, f32::MIN_POSITIVE * 0.5),
        ] {
            let want = a.mul_add(b, c);
            let got = fma_f32(a, b, c);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "fma({a}, {b}, {c}) = {got}, want {want}"
            );
        }
    }
}
