//! Value types of the ISA.

use std::fmt;
use std::str::FromStr;

/// The type of a value or of an operation.
///
/// Registers hold at most 32 bits except `i64`/`u64` (addresses and `long`), which the
/// simulator keeps in a separate 64-bit register bank. Narrow types live in 32-bit
/// registers holding their canonical bits (zero-extended to the register).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Type {
    /// A predicate (a boolean per lane).
    Pred,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer; also every pointer.
    U64,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    BF16,
    /// IEEE binary32.
    F32,
}

impl Type {
    /// Every type, in a fixed order.
    pub const ALL: [Type; 12] = [
        Type::Pred,
        Type::I8,
        Type::U8,
        Type::I16,
        Type::U16,
        Type::I32,
        Type::U32,
        Type::I64,
        Type::U64,
        Type::F16,
        Type::BF16,
        Type::F32,
    ];

    /// Width in bits (a predicate counts as 1).
    pub fn bits(self) -> u32 {
        match self {
            Type::Pred => 1,
            Type::I8 | Type::U8 => 8,
            Type::I16 | Type::U16 | Type::F16 | Type::BF16 => 16,
            Type::I32 | Type::U32 | Type::F32 => 32,
            Type::I64 | Type::U64 => 64,
        }
    }

    /// Size in memory, in bytes (a predicate is stored as one byte, like MSL's `bool`).
    pub fn bytes(self) -> u32 {
        match self {
            Type::Pred => 1,
            t => t.bits() / 8,
        }
    }

    /// A floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Type::F16 | Type::BF16 | Type::F32)
    }

    /// An integer type (signed or unsigned, any width).
    pub fn is_int(self) -> bool {
        !self.is_float() && self != Type::Pred
    }

    /// A signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(self, Type::I8 | Type::I16 | Type::I32 | Type::I64)
    }

    /// Held in the 64-bit register bank.
    pub fn is_wide(self) -> bool {
        self.bits() == 64
    }

    /// The text name (`f32`, `u64`, `pred`...).
    pub fn name(self) -> &'static str {
        match self {
            Type::Pred => "pred",
            Type::I8 => "i8",
            Type::U8 => "u8",
            Type::I16 => "i16",
            Type::U16 => "u16",
            Type::I32 => "i32",
            Type::U32 => "u32",
            Type::I64 => "i64",
            Type::U64 => "u64",
            Type::F16 => "f16",
            Type::BF16 => "bf16",
            Type::F32 => "f32",
        }
    }

    /// Mask of the bits a value of this type occupies in a `u64`.
    pub fn mask(self) -> u64 {
        match self.bits() {
            64 => u64::MAX,
            b => (1u64 << b) - 1,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Type {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Type::ALL.iter().copied().find(|t| t.name() == s).ok_or(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Type::ALL {
            assert_eq!(t.name().parse::<Type>(), Ok(t));
        }
        assert!("f64".parse::<Type>().is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(Type::F16.bytes(), 2);
        assert_eq!(Type::U64.bytes(), 8);
        assert_eq!(Type::Pred.bytes(), 1);
        assert_eq!(Type::I16.mask(), 0xffff);
        assert!(Type::U64.is_wide() && !Type::U32.is_wide());
    }
}
