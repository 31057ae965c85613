//! Integer functions (6.4).

use metalsim_isa::{IntFn, Op};

use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Val};
use crate::source::Span;

impl FnLowerer<'_, '_> {
    /// Integer functions; `None` when `name` is not one.
    pub fn integer(&mut self, name: &str, vals: &[Val], span: Span) -> Option<Option<Val>> {
        let int_fn = |f: IntFn| {
            move |me: &mut Self, e: Scalar, o: &[metalsim_isa::Value]| {
                me.s.val(Op::Int(f), e.isa(), o)
            }
        };
        Some(match name {
            "clz" => self.int_fn(name, vals, 1, span, |me, e, o| {
                me.s.val(Op::Clz, e.isa(), o)
            }),
            "ctz" => self.int_fn(name, vals, 1, span, |me, e, o| {
                me.s.val(Op::Ctz, e.isa(), o)
            }),
            "popcount" => self.int_fn(name, vals, 1, span, |me, e, o| {
                me.s.val(Op::Popcount, e.isa(), o)
            }),
            "mulhi" => self.int_fn(name, vals, 2, span, |me, e, o| {
                me.s.val(Op::MulHi, e.isa(), o)
            }),
            "mul24" => self.int_fn(name, vals, 2, span, |me, e, o| {
                me.s.val(Op::Mul, e.isa(), o)
            }),
            "mad24" => self.int_fn(name, vals, 3, span, |me, e, o| {
                me.s.val(Op::Fma, e.isa(), o)
            }),
            "madhi" => self.int_fn(name, vals, 3, span, |me, e, o| {
                let h = me.s.val(Op::MulHi, e.isa(), &[o[0], o[1]]);
                me.s.val(Op::Add, e.isa(), &[h, o[2]])
            }),
            "absdiff" | "abs_diff" => self.int_fn(name, vals, 2, span, |me, e, o| {
                let t = e.isa();
                let hi = me.s.val(Op::Max, t, o);
                let lo = me.s.val(Op::Min, t, o);
                me.s.val(Op::Sub, t, &[hi, lo])
            }),
            "addsat" => self.int_fn(name, vals, 2, span, int_fn(IntFn::AddSat)),
            "subsat" => self.int_fn(name, vals, 2, span, int_fn(IntFn::SubSat)),
            "madsat" => self.int_fn(name, vals, 3, span, int_fn(IntFn::MadSat)),
            "hadd" => self.int_fn(name, vals, 2, span, int_fn(IntFn::HAdd)),
            "rhadd" => self.int_fn(name, vals, 2, span, int_fn(IntFn::RHAdd)),
            "rotate" => self.int_fn(name, vals, 2, span, int_fn(IntFn::Rotate)),
            "reverse_bits" => self.int_fn(name, vals, 1, span, int_fn(IntFn::ReverseBits)),
            "extract_bits" | "insert_bits" => (|| {
                let typed = if name == "extract_bits" { 1 } else { 2 };
                self.arity(name, vals, typed + 2, span)?;
                let ty = self.shape(name, &vals[..typed], false, span)?;
                if ty.elem_scalar().is_some_and(|e| e.is_float()) {
                    self.error(format!("`{name}` needs integer arguments"), span);
                    return None;
                }
                let mut ops = Vec::new();
                for v in &vals[..typed] {
                    ops.push(self.convert(v.clone(), &ty, true, span)?);
                }
                let mut pos = Vec::new();
                for v in &vals[typed..] {
                    pos.push(self.convert(v.clone(), &Ty::UINT, true, span)?.parts[0]);
                }
                let e = ty.elem_scalar()?;
                let f = if name == "extract_bits" {
                    IntFn::ExtractBits
                } else {
                    IntFn::InsertBits
                };
                let parts = (0..ops[0].parts.len())
                    .map(|i| {
                        let mut a: Vec<_> = ops.iter().map(|o| o.parts[i]).collect();
                        a.extend(&pos);
                        self.s.val(Op::Int(f), e.isa(), &a)
                    })
                    .collect();
                Some(Val { ty, parts })
            })(),
            _ => return None,
        })
    }
}
