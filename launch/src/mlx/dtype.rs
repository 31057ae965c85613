//! MLX's dtypes: the names an MLX launch may write for them, and the spelling MLX's
//! generated signatures use (its `get_type_string`).

use metalsim_isa::Type;

use crate::dispatch::ElemType;

/// Parses a dtype as MLX's Python API (`float16`), its generated source (`float16_t`) or
/// MSL (`half`) writes it. Scalars only: MLX arrays have no vector dtypes.
pub(crate) fn parse_dtype(name: &str) -> Result<ElemType, String> {
    let scalar = match name {
        "float32" | "float" => Type::F32,
        "float16" | "float16_t" | "half" => Type::F16,
        "bfloat16" | "bfloat16_t" | "bfloat" => Type::BF16,
        "bool" | "bool_" => Type::Pred,
        "int8" | "int8_t" | "char" => Type::I8,
        "int16" | "int16_t" | "short" => Type::I16,
        "int32" | "int32_t" | "int" => Type::I32,
        "int64" | "int64_t" | "long" => Type::I64,
        "uint8" | "uint8_t" | "uchar" => Type::U8,
        "uint16" | "uint16_t" | "ushort" => Type::U16,
        "uint32" | "uint32_t" | "uint" => Type::U32,
        "uint64" | "uint64_t" | "ulong" => Type::U64,
        "complex64" | "complex64_t" => {
            return Err(format!(
                "`{name}` is not supported: metalsim has no complex type (MLX's complex64_t)"
            ));
        }
        "float64" | "double" => {
            return Err(format!(
                "`{name}` has no Metal type (MLX runs float64 on the CPU only)"
            ));
        }
        _ if ElemType::from_msl_name(name).is_some() => {
            return Err(format!("`{name}` is a vector type; MLX dtypes are scalars"));
        }
        _ => {
            return Err(format!(
                "`{name}` is not a dtype (float32, float16, bfloat16, int8..int64, \
                 uint8..uint64, bool, or an MSL scalar name)"
            ));
        }
    };
    Ok(ElemType { scalar, lanes: 1 })
}

/// How MLX spells a dtype in the source it generates.
pub(crate) fn mlx_type_name(elem: ElemType) -> &'static str {
    match elem.scalar {
        Type::F32 => "float",
        Type::F16 => "float16_t",
        Type::BF16 => "bfloat16_t",
        Type::Pred => "bool",
        Type::I8 => "int8_t",
        Type::I16 => "int16_t",
        Type::I32 => "int32_t",
        Type::I64 => "int64_t",
        Type::U8 => "uint8_t",
        Type::U16 => "uint16_t",
        Type::U32 => "uint32_t",
        Type::U64 => "uint64_t",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str) -> Result<&'static str, String> {
        parse_dtype(name).map(mlx_type_name)
    }

    #[test]
    fn every_mlx_dtype_and_its_spellings() {
        for (names, mlx) in [
            (["float32", "float", "float"], "float"),
            (["float16", "float16_t", "half"], "float16_t"),
            (["bfloat16", "bfloat16_t", "bfloat"], "bfloat16_t"),
            (["bool", "bool_", "bool"], "bool"),
            (["int8", "int8_t", "char"], "int8_t"),
            (["int16", "int16_t", "short"], "int16_t"),
            (["int32", "int32_t", "int"], "int32_t"),
            (["int64", "int64_t", "long"], "int64_t"),
            (["uint8", "uint8_t", "uchar"], "uint8_t"),
            (["uint16", "uint16_t", "ushort"], "uint16_t"),
            (["uint32", "uint32_t", "uint"], "uint32_t"),
            (["uint64", "uint64_t", "ulong"], "uint64_t"),
        ] {
            for n in names {
                assert_eq!(check(n), Ok(mlx), "{n}");
            }
        }
    }

    #[test]
    fn unsupported_dtypes_say_why() {
        assert!(check("complex64").unwrap_err().contains("no complex type"));
        assert!(check("float64").unwrap_err().contains("CPU only"));
        assert!(check("float4").unwrap_err().contains("vector type"));
        assert!(check("floot").unwrap_err().contains("not a dtype"));
    }
}
