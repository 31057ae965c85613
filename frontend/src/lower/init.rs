//! Initialization: initializer lists, constructors of scalars and vectors, and `as_type`
//! bit reinterpretation.

use metalsim_isa::{Op, Type, Value};

use crate::ast::{Expr, ExprKind};
use crate::lower::consteval::Const;
use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Val};
use crate::source::Span;

impl FnLowerer<'_, '_> {
    /// The value of an initializer (`= expr` or `= {...}`) for a target type.
    pub fn init_value(&mut self, ty: &Ty, e: &Expr) -> Option<Val> {
        let ExprKind::InitList(items) = &e.kind else {
            let op = self.operand(e)?;
            let op = if matches!(ty, Ty::Pointer(_)) {
                self.decay(op)
            } else {
                op
            };
            let v = self.load_operand(op, e.span)?;
            self.at(e.span);
            return self.convert(v, ty, false, e.span);
        };
        match ty {
            Ty::Scalar(_) => match items.as_slice() {
                [] => Some(self.zero(ty)),
                [x] => self.init_value(ty, x),
                _ => {
                    self.error("too many initializers for a scalar", e.span);
                    None
                }
            },
            Ty::Vector { .. } => {
                if items.is_empty() {
                    return Some(self.zero(ty));
                }
                self.construct(ty, items, e.span)
            }
            Ty::Array(elem, n) => {
                if items.len() > *n as usize {
                    self.error(
                        format!("too many initializers: the array has {n} elements"),
                        e.span,
                    );
                    return None;
                }
                let mut parts = Vec::new();
                for i in 0..*n as usize {
                    let v = match items.get(i) {
                        Some(item) => self.init_value(elem, item)?,
                        None => self.zero(elem),
                    };
                    parts.extend(v.parts);
                }
                Some(Val {
                    ty: ty.clone(),
                    parts,
                })
            }
            Ty::Struct(id) => {
                let args = self.lower_args(items)?;
                self.construct_object(*id, args, e.span)
            }
            _ => {
                let t = self.show(ty);
                self.error(
                    format!("cannot initialize `{t}` with an initializer list"),
                    e.span,
                );
                None
            }
        }
    }

    /// A vector or scalar constructor `float4(a, b)`, `float(x)`, `uint2(v)`.
    pub fn construct(&mut self, ty: &Ty, args: &[Expr], span: Span) -> Option<Val> {
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.rvalue(a)?);
        }
        self.at(span);
        match ty {
            Ty::Scalar(_) => match vals.len() {
                0 => Some(self.zero(ty)),
                1 => {
                    let v = vals.pop()?;
                    // A class converts through its conversion operator (`ulong(vote)`).
                    let by_operator = matches!(&v.ty, Ty::Struct(id)
                        if self.conversion_function(*id, ty).is_some());
                    if !by_operator && !matches!(v.ty, Ty::Scalar(_) | Ty::Pointer(_)) {
                        let (a, b) = (self.show(&v.ty), self.show(ty));
                        self.error(format!("cannot convert `{a}` to `{b}`"), span);
                        return None;
                    }
                    self.convert(v, ty, true, span)
                }
                _ => {
                    self.error("a scalar constructor takes one argument", span);
                    None
                }
            },
            Ty::Vector { elem, len, .. } => {
                if vals.is_empty() {
                    return Some(self.zero(ty));
                }
                if vals.len() == 1 {
                    let v = vals.pop()?;
                    return match v.ty {
                        Ty::Scalar(_) | Ty::Vector { .. } => self.convert(v, ty, true, span),
                        _ => {
                            let (a, b) = (self.show(&v.ty), self.show(ty));
                            self.error(format!("cannot convert `{a}` to `{b}`"), span);
                            None
                        }
                    };
                }
                let mut parts = Vec::new();
                for v in vals {
                    let Some(s) = v.ty.elem_scalar() else {
                        let t = self.show(&v.ty);
                        self.error(format!("a vector constructor cannot take a `{t}`"), span);
                        return None;
                    };
                    for p in v.parts {
                        parts.push(self.scalar_cvt(p, s, *elem));
                    }
                }
                if parts.len() != *len as usize {
                    let t = self.show(ty);
                    self.error(
                        format!(
                            "`{t}` needs {len} components, the arguments give {}",
                            parts.len()
                        ),
                        span,
                    );
                    return None;
                }
                Some(Val {
                    ty: Ty::vector(*elem, *len),
                    parts,
                })
            }
            Ty::SimdMatrix(elem) => match vals.len() {
                0 => Some(self.zero(ty)),
                1 => {
                    let v = vals.pop()?;
                    if v.ty == *ty {
                        return Some(v);
                    }
                    self.diagonal_matrix(*elem, v, span)
                }
                _ => {
                    self.error(
                        "a `simdgroup_matrix` constructor takes one value (the diagonal)",
                        span,
                    );
                    None
                }
            },
            _ => {
                let t = self.show(ty);
                self.error(
                    format!("`{t}` cannot be constructed with parentheses; use `{t}{{...}}`"),
                    span,
                );
                None
            }
        }
    }

    /// `as_type<T>(v)`: reinterpret the bits of a value as another type of the same size.
    pub fn as_type(&mut self, v: Val, to: &Ty, span: Span) -> Option<Val> {
        let from_leaves = self.g.structs.leaves(&v.ty);
        let to_leaves = self.g.structs.leaves(to);
        let bits = |l: &[(Type, u32)]| l.iter().map(|(t, _)| t.bits()).sum::<u32>();
        let scalarish = |t: &Ty| matches!(t, Ty::Scalar(_) | Ty::Vector { .. });
        if !scalarish(&v.ty) || !scalarish(to) || bits(&from_leaves) != bits(&to_leaves) {
            let (a, b) = (self.show(&v.ty), self.show(to));
            self.error(
                format!("as_type cannot reinterpret `{a}` as `{b}` (sizes differ)"),
                span,
            );
            return None;
        }
        // Concatenate the source bits into 32/64-bit words, then cut the target leaves out.
        let fw = from_leaves[0].0.bits();
        let tw = to_leaves[0].0.bits();
        if fw == tw {
            let parts = v
                .parts
                .iter()
                .zip(&to_leaves)
                .map(|(p, (t, _))| {
                    if from_leaves[0].0 == *t {
                        *p
                    } else {
                        self.s.val(
                            Op::Bitcast {
                                from: from_leaves[0].0,
                            },
                            *t,
                            &[*p],
                        )
                    }
                })
                .collect();
            return Some(Val {
                ty: to.clone(),
                parts,
            });
        }
        let uint_of = |w: u32| match w {
            8 => Type::U8,
            16 => Type::U16,
            32 => Type::U32,
            _ => Type::U64,
        };
        let as_uint = |me: &mut Self, p: Value, t: Type| -> Value {
            let u = uint_of(t.bits());
            if t == u {
                p
            } else {
                me.s.val(Op::Bitcast { from: t }, u, &[p])
            }
        };
        let mut out = Vec::new();
        if fw < tw {
            // Pack several narrow leaves into each wide one, low bits first.
            let per = (tw / fw) as usize;
            let wide = uint_of(tw);
            for chunk in v.parts.chunks(per) {
                let mut acc: Option<Value> = None;
                for (k, p) in chunk.iter().enumerate() {
                    let u = as_uint(self, *p, from_leaves[0].0);
                    let w = self.s.val(
                        Op::Cvt {
                            from: uint_of(fw),
                            sat: false,
                        },
                        wide,
                        &[u],
                    );
                    let w = if k == 0 {
                        w
                    } else {
                        let sh =
                            self.constant(Const::int(uint_scalar(tw), (k as u32 * fw) as i128));
                        self.s.val(Op::Shl, wide, &[w, sh])
                    };
                    acc = Some(match acc {
                        None => w,
                        Some(a) => self.s.val(Op::Or, wide, &[a, w]),
                    });
                }
                let a = acc?;
                let t = to_leaves[0].0;
                out.push(if t == wide {
                    a
                } else {
                    self.s.val(Op::Bitcast { from: wide }, t, &[a])
                });
            }
        } else {
            // Split each wide leaf into several narrow ones.
            let per = fw / tw;
            let wide = uint_of(fw);
            let narrow = uint_of(tw);
            for p in &v.parts {
                let u = as_uint(self, *p, from_leaves[0].0);
                for k in 0..per {
                    let w = if k == 0 {
                        u
                    } else {
                        let sh = self.constant(Const::int(uint_scalar(fw), (k * tw) as i128));
                        self.s.val(Op::Shr, wide, &[u, sh])
                    };
                    let n = self.s.val(
                        Op::Cvt {
                            from: wide,
                            sat: false,
                        },
                        narrow,
                        &[w],
                    );
                    let t = to_leaves[0].0;
                    out.push(if t == narrow {
                        n
                    } else {
                        self.s.val(Op::Bitcast { from: narrow }, t, &[n])
                    });
                }
            }
        }
        Some(Val {
            ty: to.clone(),
            parts: out,
        })
    }
}

/// The unsigned scalar type of a width in bits.
fn uint_scalar(bits: u32) -> Scalar {
    match bits {
        8 => Scalar::UChar,
        16 => Scalar::UShort,
        32 => Scalar::UInt,
        _ => Scalar::ULong,
    }
}
