//! ISA types as CUDA C++ types, and constants as exact CUDA literals.

use metalsim_isa::Type;

/// The CUDA C++ type that holds a value of an ISA type (`pred` is `bool`; 16-bit floats
/// are `__half` and `__nv_bfloat16` through the prelude's `ms_f16` and `ms_bf16`).
pub fn c_type(ty: Type) -> &'static str {
    match ty {
        Type::Pred => "bool",
        Type::I8 => "int8_t",
        Type::U8 => "uint8_t",
        Type::I16 => "int16_t",
        Type::U16 => "uint16_t",
        Type::I32 => "int32_t",
        Type::U32 => "uint32_t",
        Type::I64 => "int64_t",
        Type::U64 => "uint64_t",
        Type::F16 => "ms_f16",
        Type::BF16 => "ms_bf16",
        Type::F32 => "float",
    }
}

/// The type a value of `ty` has in memory (a predicate is one byte, as MSL's `bool`).
pub fn memory_type(ty: Type) -> &'static str {
    match ty {
        Type::Pred => "uint8_t",
        t => c_type(t),
    }
}

/// A CUDA expression of type [`c_type`] with exactly these bits (masked to the type).
pub fn literal(ty: Type, bits: u64) -> String {
    let bits = bits & ty.mask();
    match ty {
        Type::Pred => if bits != 0 { "true" } else { "false" }.to_string(),
        Type::F32 => format!("__uint_as_float(0x{bits:08x}u)"),
        Type::F16 => format!("__ushort_as_half((unsigned short)0x{bits:04x}u)"),
        Type::BF16 => format!("__ushort_as_bfloat16((unsigned short)0x{bits:04x}u)"),
        Type::I64 | Type::U64 => format!("({})0x{bits:x}ull", c_type(ty)),
        _ => format!("({})0x{bits:x}u", c_type(ty)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ty: Type, bits: u64, want: &str) {
        assert_eq!(literal(ty, bits), want);
    }

    #[test]
    fn literals_keep_every_bit() {
        check(Type::F32, 0x3f80_0000, "__uint_as_float(0x3f800000u)");
        check(Type::F32, 0x7fc0_0000, "__uint_as_float(0x7fc00000u)");
        check(
            Type::F16,
            0x3c00,
            "__ushort_as_half((unsigned short)0x3c00u)",
        );
        check(Type::I32, 0xffff_ffff, "(int32_t)0xffffffffu");
        check(Type::I8, 0x1ff, "(int8_t)0xffu");
        check(Type::U64, u64::MAX, "(uint64_t)0xffffffffffffffffull");
        check(Type::Pred, 1, "true");
    }

    #[test]
    fn predicates_are_bytes_in_memory() {
        assert_eq!(memory_type(Type::Pred), "uint8_t");
        assert_eq!(memory_type(Type::BF16), "ms_bf16");
    }
}
