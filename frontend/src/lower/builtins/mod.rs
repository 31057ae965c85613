//! The standard library functions kernels use (MSL spec chapter 6, "Metal Standard
//! Library"), lowered directly to instructions: math (with the `fast::` and `precise::`
//! variants), integer, common, relational and geometric functions, SIMD-group and
//! quad-group functions, barriers, atomics, pack/unpack and SIMD-group matrices.
//!
//! They are implemented here in Rust rather than in the MSL prelude because most are
//! generic over every scalar and vector type at once (`clamp(float3, float, float)`), which
//! a table of element-wise rules states in a line where MSL would need an overload set per
//! shape; and because a wrong call is then reported against the builtin's own contract
//! ("`dot` needs float vectors") instead of as a failed overload resolution inside the
//! prelude. The type-level library (type traits, `numeric_limits`) is MSL in the prelude.
//!
//! [`BUILTINS`] lists every function implemented; a name not in it is "unknown".

mod atomic;
mod integer;
mod math;
mod matrix;
mod pack;
mod simd;

use metalsim_isa::Value;

use crate::lower::templates::TArg;
use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Operand, Val};
use crate::source::Span;

/// Every standard-library function the lowering implements (besides the `simd_`,
/// `quad_` and `atomic_` families, which [`is_builtin`] recognizes by prefix).
pub const BUILTINS: &[&str] = &[
    // Math (6.5).
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "ceil",
    "copysign",
    "cos",
    "cosh",
    "cospi",
    "divide",
    "exp",
    "exp2",
    "exp10",
    "fabs",
    "fdim",
    "floor",
    "fma",
    "fmax",
    "fmax3",
    "fmedian3",
    "fmin",
    "fmin3",
    "fmod",
    "fract",
    "frexp",
    "ilogb",
    "ldexp",
    "log",
    "log2",
    "log10",
    "modf",
    "nextafter",
    "pow",
    "powr",
    "rint",
    "round",
    "rsqrt",
    "sin",
    "sincos",
    "sinh",
    "sinpi",
    "sqrt",
    "tan",
    "tanh",
    "tanpi",
    "trunc",
    // Common (6.6).
    "clamp",
    "degrees",
    "mix",
    "radians",
    "saturate",
    "sign",
    "smoothstep",
    "step",
    // Integer (6.4) and the functions shared with math.
    "abs",
    "absdiff",
    "abs_diff",
    "addsat",
    "clz",
    "ctz",
    "extract_bits",
    "hadd",
    "insert_bits",
    "mad24",
    "madhi",
    "madsat",
    "max",
    "max3",
    "median3",
    "min",
    "min3",
    "mul24",
    "mulhi",
    "popcount",
    "reverse_bits",
    "rhadd",
    "rotate",
    "subsat",
    "mad",
    // Relational (6.7).
    "all",
    "any",
    "isfinite",
    "isinf",
    "isnan",
    "isnormal",
    "isordered",
    "isunordered",
    "not",
    "select",
    "signbit",
    // Geometric (6.9).
    "cross",
    "distance",
    "distance_squared",
    "dot",
    "faceforward",
    "length",
    "length_squared",
    "normalize",
    "reflect",
    "refract",
    // Synchronization (6.10).
    "threadgroup_barrier",
    "simdgroup_barrier",
    "atomic_thread_fence",
    // Pack and unpack (6.14).
    "pack_float_to_unorm4x8",
    "pack_float_to_snorm4x8",
    "pack_float_to_unorm2x16",
    "pack_float_to_snorm2x16",
    "pack_half_to_unorm4x8",
    "pack_half_to_snorm4x8",
    "pack_half_to_unorm2x16",
    "pack_half_to_snorm2x16",
    "unpack_unorm4x8_to_float",
    "unpack_snorm4x8_to_float",
    "unpack_unorm2x16_to_float",
    "unpack_snorm2x16_to_float",
    "unpack_unorm4x8_to_half",
    "unpack_snorm4x8_to_half",
    "unpack_unorm2x16_to_half",
    "unpack_snorm2x16_to_half",
    "pack_float_to_srgb_unorm4x8",
    "pack_half_to_srgb_unorm4x8",
    "pack_float_to_unorm10a2",
    "pack_half_to_unorm10a2",
    "pack_float_to_unorm565",
    "pack_half_to_unorm565",
    "unpack_unorm4x8_srgb_to_float",
    "unpack_unorm4x8_srgb_to_half",
    "unpack_unorm10a2_to_float",
    "unpack_unorm10a2_to_half",
    "unpack_unorm565_to_float",
    "unpack_unorm565_to_half",
    // Matrix functions (5.6): recognized only to be refused by name.
    "determinant",
    "transpose",
    // SIMD-group matrices (6.11).
    "simdgroup_load",
    "simdgroup_store",
    "simdgroup_multiply",
    "simdgroup_multiply_accumulate",
    "make_filled_simdgroup_matrix",
];

/// Whether `name` is a standard-library function the lowering implements.
pub fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
        || name.starts_with("simd_") && simd::op_of(&name[5..]).is_some()
        || name.starts_with("quad_") && simd::op_of(&name[5..]).is_some()
        || name.starts_with("simd_shuffle_and_fill")
        || name.starts_with("quad_shuffle_and_fill")
        || name.starts_with("atomic_") && atomic::op_of(name).is_some()
}

impl FnLowerer<'_, '_> {
    /// Lowers a call of a standard-library function on lowered arguments.
    /// `name` may be qualified `precise::sin` / `fast::sin`.
    pub fn builtin(
        &mut self,
        name: &str,
        targs: &[TArg],
        args: Vec<(Operand, Span)>,
        span: Span,
    ) -> Option<Val> {
        let (precise, name) = match name.split_once("::") {
            Some(("precise", n)) => (true, n),
            Some((_, n)) => (false, n),
            None => (false, name),
        };
        if let Some(r) = self.out_param_builtin(name, &args, precise, span) {
            return r;
        }
        let mut vals = Vec::with_capacity(args.len());
        for (op, s) in args {
            let v = self.load_operand(op, s)?;
            vals.push(self.scalar_of_struct(v, s)?);
        }
        self.at(span);
        if let Some(r) = self.math(name, &vals, precise, span) {
            return r;
        }
        if let Some(r) = self.integer(name, &vals, span) {
            return r;
        }
        if let Some(r) = self.pack(name, &vals, span) {
            return r;
        }
        if let Some(r) = self.sync(name, &vals, span) {
            return r;
        }
        if let Some(r) = self.atomic(name, &vals, span) {
            return r;
        }
        if let Some(op) = name.strip_prefix("simd_")
            && let Some(r) = self.cross_lane(name, op, false, &vals, span)
        {
            return r;
        }
        if let Some(op) = name.strip_prefix("quad_")
            && let Some(r) = self.cross_lane(name, op, true, &vals, span)
        {
            return r;
        }
        if let Some(r) = self.matrix_value(name, targs, &vals, span) {
            return r;
        }
        if matches!(name, "determinant" | "transpose") {
            // The prelude's matrix functions, called with no matrix.
            let t: Vec<String> = vals.iter().map(|v| self.show(&v.ty)).collect();
            self.error(
                format!(
                    "`{name}` takes a matrix (`floatNxM` or `halfNxM`, MSL 5.6), not ({})",
                    t.join(", ")
                ),
                span,
            );
            return None;
        }
        self.error(format!("unknown function `{name}`"), span);
        None
    }

    /// Checks a builtin's argument count.
    pub fn arity(&mut self, name: &str, vals: &[Val], n: usize, span: Span) -> Option<()> {
        if vals.len() == n {
            Some(())
        } else {
            self.error(
                format!(
                    "`{name}` takes {n} argument{}, found {}",
                    if n == 1 { "" } else { "s" },
                    vals.len()
                ),
                span,
            );
            None
        }
    }

    /// The common shape of arguments to an elementwise builtin: vector length and element
    /// type (`float_only` turns integer elements into float).
    pub fn shape(&mut self, name: &str, vals: &[Val], float_only: bool, span: Span) -> Option<Ty> {
        let mut len = 1u8;
        let mut elem: Option<Scalar> = None;
        for v in vals {
            let (s, n) = match &v.ty {
                Ty::Scalar(s) => (*s, 1),
                Ty::Vector { elem, len, .. } => (*elem, *len),
                other => {
                    let t = self.show(other);
                    self.error(format!("`{name}` cannot take a `{t}`"), span);
                    return None;
                }
            };
            if n > 1 {
                if len > 1 && len != n {
                    self.error(
                        format!("`{name}`: vector arguments of different lengths"),
                        span,
                    );
                    return None;
                }
                len = n;
            }
            elem = Some(match elem {
                None => s,
                Some(e) if e == s => e,
                Some(e) => Scalar::common(e, s),
            });
        }
        // A vector's element type wins over scalar arguments (`clamp(float3, 0.0f, 1.0f)`).
        if len > 1
            && let Some(v) = vals.iter().find(|v| matches!(v.ty, Ty::Vector { .. }))
        {
            elem = v.ty.elem_scalar();
        }
        let mut e = elem.unwrap_or(Scalar::Float);
        if e == Scalar::Bool {
            e = Scalar::Int;
        }
        if float_only && !e.is_float() {
            e = Scalar::Float;
        }
        Some(Ty::vector(e, len))
    }

    /// Converts every argument to the shape and applies `f` per component.
    pub fn map_components(
        &mut self,
        vals: &[Val],
        ty: &Ty,
        span: Span,
        mut f: impl FnMut(&mut Self, Scalar, &[Value]) -> Value,
    ) -> Option<Val> {
        let elem = ty.elem_scalar()?;
        let n = ty.vector_len()? as usize;
        let mut conv = Vec::with_capacity(vals.len());
        for v in vals {
            conv.push(self.convert(v.clone(), ty, true, span)?);
        }
        let parts = (0..n)
            .map(|i| {
                let ops: Vec<Value> = conv.iter().map(|c| c.parts[i]).collect();
                f(self, elem, &ops)
            })
            .collect();
        Some(Val {
            ty: ty.clone(),
            parts,
        })
    }

    /// An elementwise function of `n` float arguments.
    pub fn float_fn(
        &mut self,
        name: &str,
        vals: &[Val],
        n: usize,
        span: Span,
        f: impl FnMut(&mut Self, Scalar, &[Value]) -> Value,
    ) -> Option<Val> {
        self.arity(name, vals, n, span)?;
        let ty = self.shape(name, vals, true, span)?;
        self.map_components(vals, &ty, span, f)
    }

    /// An elementwise function of `n` integer arguments.
    pub fn int_fn(
        &mut self,
        name: &str,
        vals: &[Val],
        n: usize,
        span: Span,
        f: impl FnMut(&mut Self, Scalar, &[Value]) -> Value,
    ) -> Option<Val> {
        self.arity(name, vals, n, span)?;
        let ty = self.shape(name, vals, false, span)?;
        if ty.elem_scalar().is_some_and(|e| e.is_float()) {
            self.error(format!("`{name}` needs integer arguments"), span);
            return None;
        }
        self.map_components(vals, &ty, span, f)
    }

    /// A float constant of an element type.
    pub fn fconst(&mut self, e: Scalar, v: f64) -> Value {
        self.constant(crate::lower::consteval::Const::float(e, v))
    }

    /// An integer constant of an element type.
    pub fn iconst(&mut self, e: Scalar, v: i128) -> Value {
        self.constant(crate::lower::consteval::Const::int(e, v))
    }
}
