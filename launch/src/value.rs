//! Numbers as a spec writes them, and their conversion to buffer bytes.

use std::fmt;

use half::{bf16, f16};
use metalsim_isa::Type;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A number or boolean as written in the spec (`1`, `-2.5`, `true`, `0x3f800000`, `inf`).
///
/// It is converted to the buffer's element type when the buffer is materialized, with a
/// range check (`docs/launch-spec.md`, "init").
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Scalar {
    /// `true` or `false`.
    Bool(bool),
    /// A TOML integer.
    Int(i64),
    /// A TOML float.
    Float(f64),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x:?}"),
        }
    }
}

impl Scalar {
    /// The value as a real, for float arithmetic (`iota`, `random` bounds).
    pub(crate) fn as_f64(self) -> Option<f64> {
        match self {
            Scalar::Bool(_) => None,
            Scalar::Int(i) => Some(i as f64),
            Scalar::Float(x) => Some(x),
        }
    }

    /// The value as an integer, when it is one (a float with no fraction counts).
    pub(crate) fn as_int(self) -> Option<i128> {
        match self {
            Scalar::Bool(_) => None,
            Scalar::Int(i) => Some(i as i128),
            Scalar::Float(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1.9e19 => {
                Some(x as i128)
            }
            Scalar::Float(_) => None,
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        struct ScalarVisitor;
        impl Visitor<'_> for ScalarVisitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a boolean")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                i64::try_from(v)
                    .map(Scalar::Int)
                    .map_err(|_| E::custom(format!("integer {v} is too large")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Float(v))
            }
        }
        d.deserialize_any(ScalarVisitor)
    }
}

impl Serialize for Scalar {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Scalar::Bool(b) => s.serialize_bool(b),
            Scalar::Int(i) => s.serialize_i64(i),
            Scalar::Float(x) => s.serialize_f64(x),
        }
    }
}

/// The MSL name of a scalar type.
pub(crate) fn type_name(ty: Type) -> &'static str {
    match ty {
        Type::Pred => "bool",
        Type::I8 => "char",
        Type::U8 => "uchar",
        Type::I16 => "short",
        Type::U16 => "ushort",
        Type::I32 => "int",
        Type::U32 => "uint",
        Type::I64 => "long",
        Type::U64 => "ulong",
        Type::F16 => "half",
        Type::BF16 => "bfloat",
        Type::F32 => "float",
    }
}

/// The smallest and largest value of an integer type (`bool` counts as 0 to 1).
pub(crate) fn int_range(ty: Type) -> (i128, i128) {
    match ty {
        Type::Pred => (0, 1),
        Type::I8 => (i8::MIN as i128, i8::MAX as i128),
        Type::U8 => (0, u8::MAX as i128),
        Type::I16 => (i16::MIN as i128, i16::MAX as i128),
        Type::U16 => (0, u16::MAX as i128),
        Type::I32 => (i32::MIN as i128, i32::MAX as i128),
        Type::U32 => (0, u32::MAX as i128),
        Type::I64 => (i64::MIN as i128, i64::MAX as i128),
        Type::U64 => (0, u64::MAX as i128),
        Type::F16 | Type::BF16 | Type::F32 => (0, -1),
    }
}

/// Appends an integer as one component of type `ty`; an error when out of range.
/// `ty` must be an integer type or `bool`.
pub(crate) fn put_int(ty: Type, v: i128, out: &mut Vec<u8>) -> Result<(), String> {
    let (lo, hi) = int_range(ty);
    if v < lo || v > hi {
        return Err(format!(
            "{v} is out of range for `{}` ({lo} to {hi})",
            type_name(ty)
        ));
    }
    // In range, so the low bytes are the two's-complement encoding.
    out.extend_from_slice(&v.to_le_bytes()[..ty.bytes() as usize]);
    Ok(())
}

/// Appends a real as one component of float type `ty`, rounded to nearest; an error when a
/// finite value overflows to infinity.
pub(crate) fn put_float(ty: Type, v: f64, out: &mut Vec<u8>) -> Result<(), String> {
    let (finite, largest) = match ty {
        Type::F32 => {
            let x = v as f32;
            out.extend_from_slice(&x.to_le_bytes());
            (x.is_finite(), "3.4028235e38")
        }
        Type::F16 => {
            let x = f16::from_f64(v);
            out.extend_from_slice(&x.to_le_bytes());
            (x.is_finite(), "65504")
        }
        Type::BF16 => {
            let x = bf16::from_f64(v);
            out.extend_from_slice(&x.to_le_bytes());
            (x.is_finite(), "3.3895314e38")
        }
        _ => unreachable!("put_float on `{}`", type_name(ty)),
    };
    if v.is_finite() && !finite {
        out.truncate(out.len() - ty.bytes() as usize);
        return Err(format!(
            "{v:?} is out of range for `{}` (largest {largest})",
            type_name(ty)
        ));
    }
    Ok(())
}

/// Appends a spec value as one component of `ty`, checking that it fits: `bool` takes
/// `true`, `false`, `0` and `1`; integer types take integers (and floats with no
/// fraction) in range; float types take any number, rounded to nearest.
pub(crate) fn encode(ty: Type, v: Scalar, out: &mut Vec<u8>) -> Result<(), String> {
    let name = type_name(ty);
    match (ty, v) {
        (Type::Pred, Scalar::Bool(b)) => {
            out.push(b as u8);
            Ok(())
        }
        (Type::Pred, Scalar::Int(i @ (0 | 1))) => {
            out.push(i as u8);
            Ok(())
        }
        (Type::Pred, _) => Err(format!("{v} is not a `bool` (give true, false, 0 or 1)")),
        (_, Scalar::Bool(_)) => Err(format!("{v} is a boolean but the type is `{name}`")),
        // `i64 → f32` rounds once (going through `f64` could round twice).
        (Type::F32, Scalar::Int(i)) => {
            out.extend_from_slice(&(i as f32).to_le_bytes());
            Ok(())
        }
        (Type::F16 | Type::BF16 | Type::F32, v) => {
            put_float(ty, v.as_f64().unwrap_or_default(), out)
        }
        (_, Scalar::Int(i)) => put_int(ty, i as i128, out),
        (_, Scalar::Float(x)) => match v.as_int() {
            Some(i) => put_int(ty, i, out),
            None => Err(format!("{x:?} is not an integer but the type is `{name}`")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ty: Type, v: Scalar, expected: Result<&[u8], &str>) {
        let mut out = Vec::new();
        let got = encode(ty, v, &mut out).map(|()| out);
        match expected {
            Ok(bytes) => assert_eq!(got.as_deref(), Ok(bytes), "{v} as {ty:?}"),
            Err(msg) => assert_eq!(got.unwrap_err(), msg, "{v} as {ty:?}"),
        }
    }

    #[test]
    fn integers_are_range_checked() {
        check(Type::U8, Scalar::Int(255), Ok(&[255]));
        check(
            Type::U8,
            Scalar::Int(256),
            Err("256 is out of range for `uchar` (0 to 255)"),
        );
        check(Type::I8, Scalar::Int(-128), Ok(&[0x80]));
        check(
            Type::U32,
            Scalar::Int(-1),
            Err("-1 is out of range for `uint` (0 to 4294967295)"),
        );
        check(Type::I16, Scalar::Int(-2), Ok(&[0xfe, 0xff]));
        check(Type::U32, Scalar::Int(0x3f80_0000), Ok(&[0, 0, 0x80, 0x3f]));
        check(
            Type::U64,
            Scalar::Int(i64::MAX),
            Ok(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
        );
        check(Type::I32, Scalar::Float(3.0), Ok(&[3, 0, 0, 0]));
        check(
            Type::I32,
            Scalar::Float(2.5),
            Err("2.5 is not an integer but the type is `int`"),
        );
        check(
            Type::I32,
            Scalar::Bool(true),
            Err("true is a boolean but the type is `int`"),
        );
    }

    #[test]
    fn floats_round_to_nearest_and_refuse_overflow() {
        check(Type::F32, Scalar::Float(1.0), Ok(&1.0f32.to_le_bytes()));
        check(
            Type::F32,
            Scalar::Int(16_777_217),
            Ok(&16_777_216f32.to_le_bytes()),
        );
        check(
            Type::F32,
            Scalar::Float(f64::INFINITY),
            Ok(&f32::INFINITY.to_le_bytes()),
        );
        check(
            Type::F32,
            Scalar::Float(1e39),
            Err("1e39 is out of range for `float` (largest 3.4028235e38)"),
        );
        check(Type::F16, Scalar::Float(1.0), Ok(&[0x00, 0x3c]));
        // 1 + 2^-11 lies halfway between two halves; ties go to even.
        check(
            Type::F16,
            Scalar::Float(1.0 + 1.0 / 2048.0),
            Ok(&[0x00, 0x3c]),
        );
        check(Type::F16, Scalar::Int(65504), Ok(&[0xff, 0x7b]));
        check(
            Type::F16,
            Scalar::Int(70000),
            Err("70000.0 is out of range for `half` (largest 65504)"),
        );
        check(Type::BF16, Scalar::Float(1.0), Ok(&[0x80, 0x3f]));
        check(Type::BF16, Scalar::Float(-2.0), Ok(&[0x00, 0xc0]));
    }

    #[test]
    fn bools_take_booleans_and_zero_or_one() {
        check(Type::Pred, Scalar::Bool(true), Ok(&[1]));
        check(Type::Pred, Scalar::Int(0), Ok(&[0]));
        check(
            Type::Pred,
            Scalar::Int(2),
            Err("2 is not a `bool` (give true, false, 0 or 1)"),
        );
        check(
            Type::Pred,
            Scalar::Float(1.0),
            Err("1.0 is not a `bool` (give true, false, 0 or 1)"),
        );
    }
}
