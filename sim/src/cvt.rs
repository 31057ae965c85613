//! Numeric conversions (`cvt`): float to integer rounds toward zero and saturates (NaN
//! gives 0), integer to float rounds to nearest even, integer to integer wraps unless
//! `sat`, float to float rounds to nearest even. Registers hold canonical bits; this works
//! on them widened to `u64`.

use metalsim_isa::Type;
use metalsim_isa::scalar::{float_to_int, int_max, int_min, int_to_float, int_value};

use crate::alu::FloatTy;

/// Converts the canonical bits of a value of type `from` to type `to`.
pub(crate) fn convert(bits: u64, from: Type, to: Type, sat: bool) -> u64 {
    match (FloatTy::of(from), FloatTy::of(to)) {
        (Some(f), Some(t)) => t.round(f.to_f32(bits as u32)) as u64,
        (Some(f), None) => float_to_int(f.to_f32(bits as u32), to),
        (None, Some(_)) => int_to_float(int_value(bits, from), to),
        (None, None) => {
            let v = int_value(bits, from);
            let v = if sat {
                v.clamp(int_min(to), int_max(to))
            } else {
                v
            };
            (v as u64) & to.mask()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f32) -> u64 {
        x.to_bits() as u64
    }

    #[test]
    fn float_to_int_truncates_and_saturates() {
        assert_eq!(
            convert(f(-2.7), Type::F32, Type::I32, false),
            (-2i32) as u32 as u64
        );
        assert_eq!(
            convert(f(3e9), Type::F32, Type::I32, false),
            i32::MAX as u64
        );
        assert_eq!(convert(f(-1.0), Type::F32, Type::U32, false), 0);
        assert_eq!(convert(f(f32::NAN), Type::F32, Type::I32, false), 0);
        assert_eq!(convert(f(300.0), Type::F32, Type::U8, false), 255);
        assert_eq!(convert(f(-300.0), Type::F32, Type::I8, false), 0x80);
        assert_eq!(convert(f(1e30), Type::F32, Type::U64, false), u64::MAX);
    }

    #[test]
    fn int_to_int_wraps_or_saturates() {
        assert_eq!(convert(0x1ff, Type::U32, Type::U8, false), 0xff);
        assert_eq!(convert(0x1ff, Type::U32, Type::U8, true), 0xff);
        assert_eq!(convert(0x80, Type::I8, Type::I32, false), 0xffff_ff80);
        assert_eq!(convert(0x80, Type::U8, Type::I32, false), 0x80);
        assert_eq!(convert(0xffff_ff80, Type::I32, Type::U8, true), 0);
        assert_eq!(
            convert(0xffff_ff80, Type::I32, Type::I64, false),
            (-128i64) as u64
        );
        assert_eq!(
            convert(u64::MAX, Type::U64, Type::I32, true),
            i32::MAX as u64
        );
        assert_eq!(convert(1, Type::Pred, Type::F32, false), f(1.0));
    }

    #[test]
    fn int_to_float_rounds_to_nearest_even() {
        assert_eq!(
            convert(16_777_217, Type::U32, Type::F32, false),
            f(16_777_216.0)
        );
        assert_eq!(
            convert(16_777_219, Type::U32, Type::F32, false),
            f(16_777_220.0)
        );
        assert_eq!(convert(2049, Type::U32, Type::F16, false), 0x6800); // 2048
        assert_eq!(convert(70000, Type::U32, Type::F16, false), 0x7c00); // inf
        // 257 is halfway between 256 and 258 in bf16: ties to even (256).
        assert_eq!(convert(257, Type::U32, Type::BF16, false), 0x4380);
        assert_eq!(convert(259, Type::U32, Type::BF16, false), 0x4382);
        // -(2^24 + 2^16 + 1): f32 would first round to 2^24 + 2^16, a bf16 tie, then to
        // even (2^24); rounding once gives the next bf16 up.
        let v = -(16_777_216i64 + 65_536 + 1);
        assert_eq!(
            convert(v as i32 as u32 as u64, Type::I32, Type::BF16, false),
            0xcb81
        );
    }
}
