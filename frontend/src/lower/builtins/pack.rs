//! Pack and unpack functions (6.14): normalized integer formats to and from floats.

use metalsim_isa::{MathFn, Op, Type, Value};

use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Val};
use crate::source::Span;

/// A packed format: components, bits per component, signed (snorm) or not (unorm).
struct Format {
    n: u8,
    bits: u32,
    signed: bool,
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
    let f = match fmt {
        "unorm4x8" => Format {
            n: 4,
            bits: 8,
            signed: false,
        },
        "snorm4x8" => Format {
            n: 4,
            bits: 8,
            signed: true,
        },
        "unorm2x16" => Format {
            n: 2,
            bits: 16,
            signed: false,
        },
        "snorm2x16" => Format {
            n: 2,
            bits: 16,
            signed: true,
        },
        _ => return None,
    };
    Some((pack, f, elem))
}

impl FnLowerer<'_, '_> {
    /// `pack_*` and `unpack_*` functions; `None` when `name` is not one.
    pub fn pack(&mut self, name: &str, vals: &[Val], span: Span) -> Option<Option<Val>> {
        let (pack, f, elem) = format(name)?;
        Some((|| {
            self.arity(name, vals, 1, span)?;
            // Work in float; half results are converted at the end.
            let max = ((1u32 << (f.bits - f.signed as u32)) - 1) as f64;
            let mask = (1u64 << f.bits) - 1;
            if pack {
                let v =
                    self.convert(vals[0].clone(), &Ty::vector(Scalar::Float, f.n), true, span)?;
                let lo = self.fconst(Scalar::Float, if f.signed { -1.0 } else { 0.0 });
                let hi = self.fconst(Scalar::Float, 1.0);
                let k = self.fconst(Scalar::Float, max);
                let mut acc: Option<Value> = None;
                for (i, p) in v.parts.iter().enumerate() {
                    let c = self.s.val(Op::Max, Type::F32, &[*p, lo]);
                    let c = self.s.val(Op::Min, Type::F32, &[c, hi]);
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
                    let m = self.iconst(Scalar::UInt, mask as i128);
                    let q = self.s.val(Op::And, Type::U32, &[q, m]);
                    let sh = self.iconst(Scalar::UInt, (i as u32 * f.bits) as i128);
                    let q = self.s.val(Op::Shl, Type::U32, &[q, sh]);
                    acc = Some(match acc {
                        None => q,
                        Some(a) => self.s.val(Op::Or, Type::U32, &[a, q]),
                    });
                }
                return Some(Val {
                    ty: Ty::UINT,
                    parts: vec![acc?],
                });
            }
            let x = self.convert(vals[0].clone(), &Ty::UINT, true, span)?.parts[0];
            let k = self.fconst(Scalar::Float, 1.0 / max);
            let mut parts = Vec::new();
            for i in 0..f.n as u32 {
                let sh = self.iconst(Scalar::UInt, (i * f.bits) as i128);
                let q = self.s.val(Op::Shr, Type::U32, &[x, sh]);
                let m = self.iconst(Scalar::UInt, mask as i128);
                let q = self.s.val(Op::And, Type::U32, &[q, m]);
                let fv = if f.signed {
                    // Sign-extend the field, then clamp -max-1 to -1.
                    let up = self.iconst(Scalar::UInt, (32 - f.bits) as i128);
                    let q = self.s.val(Op::Shl, Type::U32, &[q, up]);
                    let q = self.s.val(Op::Bitcast { from: Type::U32 }, Type::I32, &[q]);
                    let down = self.iconst(Scalar::Int, (32 - f.bits) as i128);
                    let q = self.s.val(Op::Shr, Type::I32, &[q, down]);
                    let fq = self.s.val(
                        Op::Cvt {
                            from: Type::I32,
                            sat: false,
                        },
                        Type::F32,
                        &[q],
                    );
                    let r = self.s.val(Op::Mul, Type::F32, &[fq, k]);
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
                    self.s.val(Op::Mul, Type::F32, &[fq, k])
                };
                parts.push(self.scalar_cvt(fv, Scalar::Float, elem));
            }
            Some(Val {
                ty: Ty::vector(elem, f.n),
                parts,
            })
        })())
    }
}
