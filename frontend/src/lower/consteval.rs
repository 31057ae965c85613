//! Compile-time constants: literals, `constexpr` values, array sizes, `case` labels and
//! builtin constants (`mem_flags::mem_threadgroup`, `FLT_MAX`...), evaluated with C++'s
//! typing and wrapping rules.

use crate::ast::{BinaryOp, UnaryOp};
use crate::lower::types::Scalar;

/// A constant's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CVal {
    /// An integer (any width, already wrapped to its type).
    Int(i128),
    /// A float (already rounded to its type).
    Float(f64),
    /// A bool.
    Bool(bool),
}

/// A typed compile-time constant. Two constants are equal when their types and bits are
/// (so NaN equals itself and constants can key maps).
#[derive(Clone, Copy, Debug)]
pub struct Const {
    /// Its type.
    pub ty: Scalar,
    /// Its value.
    pub val: CVal,
}

impl PartialEq for Const {
    fn eq(&self, other: &Const) -> bool {
        self.ty == other.ty && self.bits() == other.bits()
    }
}

impl Eq for Const {}

impl std::hash::Hash for Const {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.ty.hash(h);
        self.bits().hash(h);
    }
}

impl std::fmt::Display for Const {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.val {
            CVal::Bool(b) => write!(f, "{b}"),
            CVal::Int(i) => write!(f, "{i}"),
            CVal::Float(x) => write!(f, "{x:?}"),
        }
    }
}

impl Const {
    /// An integer constant of a type, wrapped to it.
    pub fn int(ty: Scalar, v: i128) -> Const {
        Const {
            ty,
            val: CVal::Int(v),
        }
        .normalized()
    }

    /// A float constant of a type, rounded to it.
    pub fn float(ty: Scalar, v: f64) -> Const {
        Const {
            ty,
            val: CVal::Float(v),
        }
        .normalized()
    }

    /// A bool constant.
    pub fn bool(b: bool) -> Const {
        Const {
            ty: Scalar::Bool,
            val: CVal::Bool(b),
        }
    }

    /// The constant of a scalar type whose ISA bits are `bits`.
    pub fn from_bits(ty: Scalar, bits: u64) -> Const {
        match ty {
            Scalar::Bool => Const::bool(bits & 1 == 1),
            Scalar::Float => Const::float(ty, f32::from_bits(bits as u32) as f64),
            Scalar::Half => Const::float(ty, half::f16::from_bits(bits as u16).to_f64()),
            Scalar::BFloat => Const::float(ty, half::bf16::from_bits(bits as u16).to_f64()),
            _ => {
                let w = ty.isa().bits();
                let v = if ty.is_signed() {
                    ((bits << (64 - w)) as i64 >> (64 - w)) as i128
                } else {
                    (bits & ty.isa().mask()) as i128
                };
                Const::int(ty, v)
            }
        }
    }

    /// The value as an integer (floats truncate).
    pub fn as_i128(self) -> i128 {
        match self.val {
            CVal::Int(i) => i,
            CVal::Float(f) => f as i128,
            CVal::Bool(b) => b as i128,
        }
    }

    /// The value as a float.
    pub fn as_f64(self) -> f64 {
        match self.val {
            CVal::Int(i) => i as f64,
            CVal::Float(f) => f,
            CVal::Bool(b) => b as u8 as f64,
        }
    }

    /// The value as a bool (non-zero).
    pub fn as_bool(self) -> bool {
        match self.val {
            CVal::Int(i) => i != 0,
            CVal::Float(f) => f != 0.0,
            CVal::Bool(b) => b,
        }
    }

    fn normalized(self) -> Const {
        let ty = self.ty;
        let val = match ty {
            Scalar::Bool => CVal::Bool(self.as_bool()),
            Scalar::Float => CVal::Float(self.as_f64() as f32 as f64),
            Scalar::Half => CVal::Float(half::f16::from_f64(self.as_f64()).to_f64()),
            Scalar::BFloat => CVal::Float(half::bf16::from_f64(self.as_f64()).to_f64()),
            _ => {
                let bits = ty.isa().bits();
                let v = self.as_i128();
                let m = (v as u128) & ((1u128 << bits) - 1);
                let v = if ty.is_signed() && m >> (bits - 1) & 1 == 1 {
                    m as i128 - (1i128 << bits)
                } else {
                    m as i128
                };
                CVal::Int(v)
            }
        };
        Const { ty, val }
    }

    /// Converts to another scalar type with C's rules (float to int truncates; out of range
    /// saturates, as the simulator's conversions do).
    pub fn cast(self, to: Scalar) -> Const {
        match (self.val, to.is_float(), to) {
            (_, _, Scalar::Bool) => Const::bool(self.as_bool()),
            (CVal::Float(f), false, _) => {
                let bits = to.isa().bits();
                let (lo, hi) = if to.is_signed() {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                };
                let v = if f.is_nan() {
                    0
                } else {
                    (f.trunc() as i128).clamp(lo, hi)
                };
                Const::int(to, v)
            }
            (_, true, _) => Const::float(to, self.as_f64()),
            _ => Const::int(to, self.as_i128()),
        }
    }

    /// The bits of the value in its ISA type, for a `const` instruction.
    pub fn bits(self) -> u64 {
        match self.ty {
            Scalar::Bool => self.as_bool() as u64,
            Scalar::Float => (self.as_f64() as f32).to_bits() as u64,
            Scalar::Half => half::f16::from_f64(self.as_f64()).to_bits() as u64,
            Scalar::BFloat => half::bf16::from_f64(self.as_f64()).to_bits() as u64,
            _ => (self.as_i128() as u64) & self.ty.isa().mask(),
        }
    }
}

/// The type and value of an integer literal, by C++'s rules (decimal literals without a
/// suffix are `int`, then `long`; hex/octal ones may also be unsigned).
pub fn int_literal(value: u64, unsigned: bool, long: bool, non_decimal: bool) -> Const {
    let fits_i32 = value <= i32::MAX as u64;
    let fits_u32 = value <= u32::MAX as u64;
    let ty = match (unsigned, long) {
        (false, false) if fits_i32 => Scalar::Int,
        (false, false) if non_decimal && fits_u32 => Scalar::UInt,
        (false, _) if value <= i64::MAX as u64 => Scalar::Long,
        (false, _) => Scalar::ULong,
        (true, false) if fits_u32 => Scalar::UInt,
        (true, _) => Scalar::ULong,
    };
    Const::int(ty, value as i128)
}

/// The type and value of a float literal (`h` suffix: half; otherwise float, as MSL has no
/// double).
pub fn float_literal(value: f64, suffix: Option<char>) -> Const {
    let ty = match suffix {
        Some('h') => Scalar::Half,
        _ => Scalar::Float,
    };
    Const::float(ty, value)
}

/// Constants every MSL program sees (macros of `<metal_stdlib>`): float and integer limits
/// and math constants.
pub fn builtin_constant(name: &str) -> Option<Const> {
    let u = |v: i128| Const::int(Scalar::UInt, v);
    let i = |v: i128| Const::int(Scalar::Int, v);
    let f = |v: f64| Const::float(Scalar::Float, v);
    Some(match name {
        "FLT_MAX" | "MAXFLOAT" => f(f32::MAX as f64),
        "FLT_MIN" => f(f32::MIN_POSITIVE as f64),
        "FLT_EPSILON" => f(f32::EPSILON as f64),
        "INFINITY" | "HUGE_VALF" => f(f64::INFINITY),
        "NAN" => f(f64::NAN),
        "HALF_MAX" => Const::float(Scalar::Half, 65504.0),
        "HALF_MIN" => Const::float(Scalar::Half, 6.103515625e-05),
        "HALF_EPSILON" => Const::float(Scalar::Half, 0.0009765625),
        "INT_MAX" => i(i32::MAX as i128),
        "INT_MIN" => i(i32::MIN as i128),
        "UINT_MAX" => u(u32::MAX as i128),
        "SHRT_MAX" => i(i16::MAX as i128),
        "USHRT_MAX" => i(u16::MAX as i128),
        "CHAR_MAX" => i(i8::MAX as i128),
        "UCHAR_MAX" => i(u8::MAX as i128),
        "M_PI_F" => f(std::f64::consts::PI),
        "M_PI_2_F" => f(std::f64::consts::FRAC_PI_2),
        "M_PI_4_F" => f(std::f64::consts::FRAC_PI_4),
        "M_1_PI_F" => f(std::f64::consts::FRAC_1_PI),
        "M_2_PI_F" => f(std::f64::consts::FRAC_2_PI),
        "M_E_F" => f(std::f64::consts::E),
        "M_LN2_F" => f(std::f64::consts::LN_2),
        "M_LN10_F" => f(std::f64::consts::LN_10),
        "M_LOG2E_F" => f(std::f64::consts::LOG2_E),
        "M_LOG10E_F" => f(std::f64::consts::LOG10_E),
        "M_SQRT2_F" => f(std::f64::consts::SQRT_2),
        "M_SQRT1_2_F" => f(std::f64::consts::FRAC_1_SQRT_2),
        _ => return None,
    })
}

/// Evaluates a binary operator on constants; `None` when it is not constant (e.g.
/// division by zero).
pub fn binary(op: BinaryOp, a: Const, b: Const) -> Option<Const> {
    use BinaryOp::*;
    match op {
        LogAnd => return Some(Const::bool(a.as_bool() && b.as_bool())),
        LogOr => return Some(Const::bool(a.as_bool() || b.as_bool())),
        Comma => return Some(b),
        _ => {}
    }
    if matches!(op, Shl | Shr) {
        let ty = a.ty.promoted();
        if ty.is_float() || b.ty.is_float() {
            return None;
        }
        let a = a.cast(ty);
        let bits = ty.isa().bits() as i128;
        let n = b.as_i128().rem_euclid(bits) as u32;
        let v = a.as_i128();
        return Some(if op == Shl {
            Const::int(ty, v << n)
        } else if ty.is_signed() {
            Const::int(ty, v >> n)
        } else {
            Const::int(ty, ((v as u128 & ((1u128 << bits) - 1)) >> n) as i128)
        });
    }
    let ty = Scalar::common(a.ty, b.ty);
    let (a, b) = (a.cast(ty), b.cast(ty));
    let cmp = |o: std::cmp::Ordering, ok: &[std::cmp::Ordering]| Const::bool(ok.contains(&o));
    let ord = if ty.is_float() {
        a.as_f64().partial_cmp(&b.as_f64())
    } else {
        Some(a.as_i128().cmp(&b.as_i128()))
    };
    use std::cmp::Ordering::*;
    Some(match op {
        Lt => ord.map_or(Const::bool(false), |o| cmp(o, &[Less])),
        Le => ord.map_or(Const::bool(false), |o| cmp(o, &[Less, Equal])),
        Gt => ord.map_or(Const::bool(false), |o| cmp(o, &[Greater])),
        Ge => ord.map_or(Const::bool(false), |o| cmp(o, &[Greater, Equal])),
        Eq => ord.map_or(Const::bool(false), |o| cmp(o, &[Equal])),
        Ne => ord.map_or(Const::bool(true), |o| cmp(o, &[Less, Greater])),
        _ if ty.is_float() => {
            let (x, y) = (a.as_f64(), b.as_f64());
            let r = match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div => x / y,
                _ => return None,
            };
            Const::float(ty, r)
        }
        _ => {
            let (x, y) = (a.as_i128(), b.as_i128());
            let r = match op {
                Add => x + y,
                Sub => x - y,
                Mul => x.wrapping_mul(y),
                Div if y != 0 => x / y,
                Rem if y != 0 => x % y,
                BitAnd => x & y,
                BitOr => x | y,
                BitXor => x ^ y,
                _ => return None,
            };
            Const::int(ty, r)
        }
    })
}

/// Evaluates a prefix operator on a constant (`None` for `~` on a float and for the
/// operators that need an object).
pub fn unary(op: UnaryOp, v: Const) -> Option<Const> {
    match op {
        UnaryOp::Plus => Some(v.cast(v.ty.promoted())),
        UnaryOp::Neg => {
            let ty = v.ty.promoted();
            let v = v.cast(ty);
            Some(if ty.is_float() {
                Const::float(ty, -v.as_f64())
            } else {
                Const::int(ty, -v.as_i128())
            })
        }
        UnaryOp::Not => Some(Const::bool(!v.as_bool())),
        UnaryOp::BitNot if !v.ty.is_float() => {
            let ty = v.ty.promoted();
            Some(Const::int(ty, !v.cast(ty).as_i128()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_types() {
        assert_eq!(int_literal(16, false, false, false).ty, Scalar::Int);
        assert_eq!(
            int_literal(0xffff_ffff, false, false, true).ty,
            Scalar::UInt
        );
        assert_eq!(
            int_literal(0xffff_ffff, false, false, false).ty,
            Scalar::Long
        );
        assert_eq!(int_literal(1, true, false, false).ty, Scalar::UInt);
        assert_eq!(float_literal(1.5, Some('h')).ty, Scalar::Half);
    }

    #[test]
    fn arithmetic_wraps_like_c() {
        let a = Const::int(Scalar::UInt, 0);
        let one = Const::int(Scalar::Int, 1);
        assert_eq!(
            binary(BinaryOp::Sub, a, one).unwrap().as_i128(),
            u32::MAX as i128
        );
        assert_eq!(
            binary(
                BinaryOp::Div,
                Const::int(Scalar::Int, -7),
                Const::int(Scalar::Int, 2)
            )
            .unwrap()
            .as_i128(),
            -3
        );
        assert!(binary(BinaryOp::Div, one, Const::int(Scalar::Int, 0)).is_none());
        assert_eq!(
            Const::float(Scalar::Float, 300.7)
                .cast(Scalar::UChar)
                .as_i128(),
            255
        );
        assert_eq!(
            binary(
                BinaryOp::Shl,
                Const::int(Scalar::Int, 1),
                Const::int(Scalar::Int, 4)
            )
            .unwrap()
            .as_i128(),
            16
        );
    }

    #[test]
    fn bits() {
        assert_eq!(Const::float(Scalar::Float, 1.0).bits(), 0x3f80_0000);
        assert_eq!(Const::float(Scalar::Half, 1.0).bits(), 0x3c00);
        assert_eq!(Const::int(Scalar::Short, -1).bits(), 0xffff);
        assert_eq!(Const::bool(true).bits(), 1);
    }
}
