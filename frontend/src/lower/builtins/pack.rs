//! Pack and unpack functions (MSL 5.11): normalized integer formats to and from floats,
//! converted as MSL 7.7.1 prescribes (`unpack`: `c / (2^n - 1)`, clamped to -1 for snorm;
//! `pack`: clamp, scale, round to nearest even). Component `i` of the vector occupies
//! the bits after component `i - 1`'s, starting at bit 0 (`x` in the low bits), in every
//! format: `4x8`, `2x16`, `10a2` (10, 10, 10, 2 bits) and `565` (5, 6, 5 bits).

use metalsim_isa::{CmpCond, MathFn, Op, Type, Value};

use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Val};
use crate::source::Span;

/// A packed format: bits per component, signed (snorm) or not (unorm), and whether the
/// first three components are sRGB-encoded.
struct Format {
    bits: &'static [u32],
    signed: bool,
    srgb: bool,
}

impl Format {
    /// The packed integer type (`ushort` for `565`, `uint` otherwise).
    fn packed(&self) -> Scalar {
        if self.bits.iter().sum::<u32>() <= 16 {
            Scalar::UShort
        } else {
            Scalar::UInt
        }
    }
}

fn format(name: &str) -> Option<(bool, Format, Scalar)> {
    let (pack, rest) = if let Some(r) = name.strip_prefix("pack_") {
        (true, r)
    } else {
        (false, name.strip_prefix("unpack_")?)
    };
    // pack_float_to_unorm4x8 / unpack_unorm4x8_to_float
    let (fmt, elem) = if pack {
        let (elem, f) = rest.split_once("_to_")?;
        (f, elem)
    } else {
        rest.split_once("_to_")?
    };
    let elem = match elem {
        "float" => Scalar::Float,
        "half" => Scalar::Half,
        _ => return None,
    };
    let f = |bits, signed, srgb| Format { bits, signed, srgb };
    let f = match (fmt, pack) {
        ("unorm4x8", _) => f(&[8, 8, 8, 8], false, false),
        ("snorm4x8", _) => f(&[8, 8, 8, 8], true, false),
        ("srgb_unorm4x8", true) | ("unorm4x8_srgb", false) => f(&[8, 8, 8, 8], false, true),
        ("unorm2x16", _) => f(&[16, 16], false, false),
        ("snorm2x16", _) => f(&[16, 16], true, false),
        ("unorm10a2", _) => f(&[10, 10, 10, 2], false, false),
        ("unorm565", _) => f(&[5, 6, 5], false, false),
        _ => return None,
    };
    Some((pack, f, elem))
}

impl FnLowerer<'_, '_> {
    /// `pack_*` and `unpack_*` functions; `None` when `name` is not one.
    pub fn pack(&mut self, name: &str, vals: &[Val], span: Span) -> Option<Option<Val>> {
        let (pack, f, elem) = format(name)?;
        let n = f.bits.len() as u8;
        Some((|| {
            self.arity(name, vals, 1, span)?;
            // Work in float; half results are converted at the end.
            if pack {
                let v = self.convert(vals[0].clone(), &Ty::vector(Scalar::Float, n), true, span)?;
                let lo = self.fconst(Scalar::Float, if f.signed { -1.0 } else { 0.0 });
                let hi = self.fconst(Scalar::Float, 1.0);
                let mut acc: Option<Value> = None;
                let mut shift = 0;
                for (i, (p, &bits)) in v.parts.iter().zip(f.bits).enumerate() {
                    let max = ((1u32 << (bits - f.signed as u32)) - 1) as f64;
                    let k = self.fconst(Scalar::Float, max);
                    // `max` picks the bound for NaN, so NaN packs as 0 (MSL 7.7.1.2).
                    let c = self.s.val(Op::Max, Type::F32, &[*p, lo]);
                    let c = self.s.val(Op::Min, Type::F32, &[c, hi]);
                    let c = if f.srgb && i < 3 {
                        self.linear_to_srgb(c)
                    } else {
                        c
                    };
                    let c = self.s.val(Op::Mul, Type::F32, &[c, k]);
                    let c = self.s.val(Op::Math(MathFn::Rint), Type::F32, &[c]);
                    let q = self.s.val(
                        Op::Cvt {
                            from: Type::F32,
                            sat: false,
                        },
                        Type::I32,
                        &[c],
                    );
                    let q = self.s.val(Op::Bitcast { from: Type::I32 }, Type::U32, &[q]);
                    let m = self.iconst(Scalar::UInt, ((1u64 << bits) - 1) as i128);
                    let q = self.s.val(Op::And, Type::U32, &[q, m]);
                    let sh = self.iconst(Scalar::UInt, shift as i128);
                    shift += bits;
                    let q = self.s.val(Op::Shl, Type::U32, &[q, sh]);
                    acc = Some(match acc {
                        None => q,
                        Some(a) => self.s.val(Op::Or, Type::U32, &[a, q]),
                    });
                }
                let packed = f.packed();
                return Some(Val {
                    ty: Ty::Scalar(packed),
                    parts: vec![self.scalar_cvt(acc?, Scalar::UInt, packed)],
                });
            }
            let x = self.convert(vals[0].clone(), &Ty::Scalar(f.packed()), true, span)?;
            let x = self.scalar_cvt(x.parts[0], f.packed(), Scalar::UInt);
            let mut parts = Vec::new();
            let mut shift = 0;
            for (i, &bits) in f.bits.iter().enumerate() {
                let max = ((1u32 << (bits - f.signed as u32)) - 1) as f64;
                let k = self.fconst(Scalar::Float, max);
                let sh = self.iconst(Scalar::UInt, shift as i128);
                shift += bits;
                let q = self.s.val(Op::Shr, Type::U32, &[x, sh]);
                let m = self.iconst(Scalar::UInt, ((1u64 << bits) - 1) as i128);
                let q = self.s.val(Op::And, Type::U32, &[q, m]);
                let fv = if f.signed {
                    // Sign-extend the field, then clamp -max-1 to -1.
                    let up = self.iconst(Scalar::UInt, (32 - bits) as i128);
                    let q = self.s.val(Op::Shl, Type::U32, &[q, up]);
                    let q = self.s.val(Op::Bitcast { from: Type::U32 }, Type::I32, &[q]);
                    let down = self.iconst(Scalar::Int, (32 - bits) as i128);
                    let q = self.s.val(Op::Shr, Type::I32, &[q, down]);
                    let fq = self.s.val(
                        Op::Cvt {
                            from: Type::I32,
                            sat: false,
                        },
                        Type::F32,
                        &[q],
                    );
                    let r = self.s.val(Op::Div, Type::F32, &[fq, k]);
                    let m1 = self.fconst(Scalar::Float, -1.0);
                    self.s.val(Op::Max, Type::F32, &[r, m1])
                } else {
                    let fq = self.s.val(
                        Op::Cvt {
                            from: Type::U32,
                            sat: false,
                        },
                        Type::F32,
                        &[q],
                    );
                    if f.srgb && i < 3 {
                        self.srgb_byte_to_linear(fq)
                    } else {
                        self.s.val(Op::Div, Type::F32, &[fq, k])
                    }
                };
                parts.push(self.scalar_cvt(fv, Scalar::Float, elem));
            }
            Some(Val {
                ty: Ty::vector(elem, n),
                parts,
            })
        })())
    }

    /// The sRGB encoding of a linear value `c` in [0, 1]: `12.92 c` up to 0.0031308,
    /// `1.055 c^(1/2.4) - 0.055` above (with the precise `pow`).
    fn linear_to_srgb(&mut self, c: Value) -> Value {
        let t = Type::F32;
        let edge = self.fconst(Scalar::Float, 0.003_130_8);
        let low = self.fconst(Scalar::Float, 12.92);
        let low = self.s.val(Op::Mul, t, &[c, low]);
        let e = self.fconst(Scalar::Float, 1.0 / 2.4);
        let p = self.s.val(Op::PreciseMath(MathFn::Pow), t, &[c, e]);
        let a = self.fconst(Scalar::Float, 1.055);
        let b = self.fconst(Scalar::Float, -0.055);
        let high = self.s.val(Op::Fma, t, &[p, a, b]);
        let is_low = self.s.val(Op::Cmp(CmpCond::Le), t, &[c, edge]);
        self.s.val(Op::Select, t, &[is_low, low, high])
    }

    /// The linear value of the sRGB-encoded byte `q` (a float holding 0 to 255), with
    /// `c = q / 255`: `c / 12.92` up to 0.04045, `((c + 0.055) / 1.055)^2.4` above (with
    /// the precise `pow`). The base is one FMA of `q`, so it is rounded once before `pow`
    /// (whose exponent 2.4 magnifies the base's error).
    fn srgb_byte_to_linear(&mut self, q: Value) -> Value {
        let t = Type::F32;
        let edge = self.fconst(Scalar::Float, 0.040_45 * 255.0);
        let low = self.fconst(Scalar::Float, 255.0 * 12.92);
        let low = self.s.val(Op::Div, t, &[q, low]);
        let k1 = self.fconst(Scalar::Float, 1.0 / (255.0 * 1.055));
        let k0 = self.fconst(Scalar::Float, 0.055 / 1.055);
        let base = self.s.val(Op::Fma, t, &[q, k1, k0]);
        let e = self.fconst(Scalar::Float, 2.4);
        let high = self.s.val(Op::PreciseMath(MathFn::Pow), t, &[base, e]);
        let is_low = self.s.val(Op::Cmp(CmpCond::Le), t, &[q, edge]);
        self.s.val(Op::Select, t, &[is_low, low, high])
    }
}
