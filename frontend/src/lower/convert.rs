//! Conversions between types, as MSL defines them (implicit and explicit).

use metalsim_isa::{CmpCond, Op, Value};

use crate::lower::consteval::Const;
use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Val};
use crate::source::Span;

impl FnLowerer<'_, '_> {
    /// Converts one register from a scalar type to another.
    pub fn scalar_cvt(&mut self, v: Value, from: Scalar, to: Scalar) -> Value {
        if from == to {
            return v;
        }
        if let Some(bits) = self.s.const_bits(v) {
            return self.constant(Const::from_bits(from, bits).cast(to));
        }
        if to == Scalar::Bool {
            let zero = if from.is_float() {
                self.constant(Const::float(from, 0.0))
            } else {
                self.constant(Const::int(from, 0))
            };
            return self.s.val(Op::Cmp(CmpCond::Ne), from.isa(), &[v, zero]);
        }
        if from == Scalar::Bool {
            let (one, zero) = if to.is_float() {
                (Const::float(to, 1.0), Const::float(to, 0.0))
            } else {
                (Const::int(to, 1), Const::int(to, 0))
            };
            let (one, zero) = (self.constant(one), self.constant(zero));
            return self.s.val(Op::Select, to.isa(), &[v, one, zero]);
        }
        if from.is_int() && to.is_int() && from.size() == to.size() {
            return self.s.val(Op::Bitcast { from: from.isa() }, to.isa(), &[v]);
        }
        self.s.val(
            Op::Cvt {
                from: from.isa(),
                sat: false,
            },
            to.isa(),
            &[v],
        )
    }

    /// A value of a type with every leaf zero.
    pub fn zero(&mut self, ty: &Ty) -> Val {
        let leaves = self.g.structs.leaves(ty);
        let parts = leaves
            .into_iter()
            .map(|(t, _)| self.s.val(Op::Const(0), t, &[]))
            .collect();
        Val {
            ty: ty.clone(),
            parts,
        }
    }

    /// Converts a value to a type. `explicit` allows what only casts and constructors do
    /// (vector element type changes, pointer reinterpretation). Reports and returns `None`
    /// when the conversion does not exist.
    pub fn convert(&mut self, v: Val, to: &Ty, explicit: bool, span: Span) -> Option<Val> {
        if v.ty == *to {
            return Some(v);
        }
        if let Some(r) = self.convert_class(&v, to, span) {
            return r;
        }
        let fail = |me: &mut Self, why: &str| {
            let (a, b) = (me.show(&v.ty), me.show(to));
            me.error(format!("cannot convert `{a}` to `{b}`{why}"), span);
            None
        };
        match (&v.ty, to) {
            (Ty::Scalar(a), Ty::Scalar(b)) => {
                let p = self.scalar_cvt(v.parts[0], *a, *b);
                Some(Val {
                    ty: to.clone(),
                    parts: vec![p],
                })
            }
            (Ty::Scalar(a), Ty::Vector { elem, len, .. }) => {
                let p = self.scalar_cvt(v.parts[0], *a, *elem);
                Some(Val {
                    ty: to.clone(),
                    parts: vec![p; *len as usize],
                })
            }
            (
                Ty::Vector {
                    elem: a, len: n, ..
                },
                Ty::Vector {
                    elem: b, len: m, ..
                },
            ) if n == m => {
                if a != b && !explicit {
                    return fail(self, &format!(" implicitly; write `{}(x)`", self.show(to)));
                }
                let parts = v
                    .parts
                    .iter()
                    .map(|p| self.scalar_cvt(*p, *a, *b))
                    .collect();
                Some(Val {
                    ty: to.clone(),
                    parts,
                })
            }
            (Ty::Pointer(p), Ty::Scalar(Scalar::Bool)) => {
                let _ = p;
                let zero = self.constant(Const::int(Scalar::ULong, 0));
                let c = self.s.val(
                    Op::Cmp(CmpCond::Ne),
                    metalsim_isa::Type::U64,
                    &[v.parts[0], zero],
                );
                Some(Val {
                    ty: to.clone(),
                    parts: vec![c],
                })
            }
            (Ty::Pointer(p), Ty::Pointer(q)) => {
                if p.space != q.space {
                    return fail(self, " (address spaces differ)");
                }
                let compatible = p.pointee == q.pointee || explicit;
                if !compatible {
                    return fail(self, "");
                }
                if p.is_const && !q.is_const && !explicit {
                    return fail(self, " (it would drop `const`)");
                }
                Some(Val {
                    ty: to.clone(),
                    parts: v.parts,
                })
            }
            _ => fail(self, ""),
        }
    }

    /// Conversions involving a class: to a base class (slicing), by a converting
    /// constructor, or by a conversion function. `None` when neither type is a class.
    fn convert_class(&mut self, v: &Val, to: &Ty, span: Span) -> Option<Option<Val>> {
        match (&v.ty, to) {
            (Ty::Struct(from), Ty::Struct(want)) if self.base_path(*from, *want).is_some() => {
                let (from, want) = (*from, *want);
                let p = self.temp(v, true);
                Some(
                    self.base_place(p, from, want)
                        .and_then(|b| self.load(&b, span)),
                )
            }
            (Ty::Struct(from), _) if self.conversion_function(*from, to).is_some() => {
                Some(self.call_conversion(v.clone(), to, span))
            }
            (_, Ty::Struct(want)) if self.g.has_constructors(*want) => {
                let arg =
                    crate::lower::call::Arg::Op(crate::lower::Operand::Value(v.clone()), span);
                Some(self.construct_object(*want, vec![arg], span))
            }
            (Ty::Struct(_), _) | (_, Ty::Struct(_)) => {
                let (a, b) = (self.show(&v.ty), self.show(to));
                self.error(format!("cannot convert `{a}` to `{b}`"), span);
                Some(None)
            }
            _ => None,
        }
    }

    /// Converts a scalar condition to a predicate register.
    pub fn condition(&mut self, v: Val, span: Span) -> Option<Value> {
        match &v.ty {
            Ty::Scalar(_) | Ty::Pointer(_) | Ty::Struct(_) => {
                let b = self.convert(v, &Ty::BOOL, true, span)?;
                Some(b.parts[0])
            }
            _ => {
                let t = self.show(&v.ty);
                self.error(format!("a condition must be a scalar, found `{t}`"), span);
                None
            }
        }
    }
}
