//! Calls: type constructors, the standard-library functions kernels use, SIMD-group and
//! quad-group functions, barriers, atomics, and inlining of user helper functions.

use std::collections::HashMap;

use metalsim_isa::{
    AtomicOp, BarrierScope, CmpCond, MathFn, MemFlags, Op, SimdOp, Space, Type, Value,
};

use crate::ast::{self, Expr, ExprKind};
use crate::lower::consteval::Const;
use crate::lower::types::{Scalar, Ty, builtin_type};
use crate::lower::{Binding, FnLowerer, InlineCtx, Place, Val};
use crate::source::Span;

/// How a standard-library function maps its arguments to instructions.
enum Elementwise {
    /// Float-only unary math (`exp`, `sqrt`...).
    Math(MathFn),
    /// A numeric operation on ints or floats (`min`, `max`, `abs`).
    Numeric(Op),
}

impl FnLowerer<'_, '_> {
    /// Lowers a call expression.
    pub fn call(&mut self, callee: &Expr, args: &[Expr], span: Span) -> Option<Val> {
        let ExprKind::Name { path, args: targs } = &callee.kind else {
            self.error("only named functions can be called", callee.span);
            return None;
        };
        let name = path.last().to_string();
        // A type name: constructor or functional cast.
        if targs.is_empty()
            && let Some(ty) = builtin_type(&name)
        {
            return self.construct(&ty, args, span);
        }
        if !targs.is_empty() {
            if matches!(name.as_str(), "vec") {
                let te = ast::TypeExpr {
                    kind: ast::TypeKind::Named {
                        path: path.clone(),
                        args: targs.clone(),
                    },
                    span: callee.span,
                };
                let ty = self.resolve_type(&te)?.ty;
                return self.construct(&ty, args, span);
            }
            self.error(
                format!("template arguments on `{name}` are not supported yet"),
                callee.span,
            );
            return None;
        }
        if let Some(defs) = self.g.function(&name) {
            let defs: Vec<_> = defs.to_vec();
            let matching: Vec<_> = defs
                .iter()
                .filter(|d| {
                    let required = d.params.iter().filter(|p| p.default.is_none()).count();
                    args.len() >= required && args.len() <= d.params.len()
                })
                .collect();
            return match matching.as_slice() {
                [one] => self.inline_call(one, args, span),
                [] => {
                    self.error(format!("no `{name}` takes {} arguments", args.len()), span);
                    None
                }
                _ => {
                    self.error(format!("overloaded function `{name}`: choosing between overloads is not supported yet"), span);
                    None
                }
            };
        }
        if self.g.struct_names.contains_key(&name) {
            self.error(
                format!("`{name}` cannot be constructed with parentheses; use `{name}{{...}}`"),
                span,
            );
            return None;
        }
        match self.builtin(&name, args, span) {
            Some(r) => r,
            None => {
                self.error(format!("unknown function `{name}`"), callee.span);
                None
            }
        }
    }

    fn args(&mut self, args: &[Expr]) -> Option<Vec<Val>> {
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            out.push(self.rvalue(a)?);
        }
        Some(out)
    }

    fn arity(&mut self, name: &str, args: &[Expr], n: usize, span: Span) -> Option<()> {
        if args.len() == n {
            Some(())
        } else {
            self.error(
                format!(
                    "`{name}` takes {n} argument{}, found {}",
                    if n == 1 { "" } else { "s" },
                    args.len()
                ),
                span,
            );
            None
        }
    }

    /// The common shape of arguments to an elementwise builtin: vector length and element
    /// type (`float_only` turns integer elements into float).
    fn shape(&mut self, name: &str, vals: &[Val], float_only: bool, span: Span) -> Option<Ty> {
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
                Some(e)
                    if n > 1
                        && matches!(v.ty, Ty::Vector { .. })
                        && !e.is_float()
                        && s.is_float() =>
                {
                    s
                }
                Some(e) => {
                    if e == s {
                        e
                    } else {
                        Scalar::common(e, s)
                    }
                }
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
    fn map_components(
        &mut self,
        vals: Vec<Val>,
        ty: &Ty,
        span: Span,
        mut f: impl FnMut(&mut Self, Scalar, &[Value]) -> Value,
    ) -> Option<Val> {
        let elem = ty.elem_scalar()?;
        let n = ty.vector_len()? as usize;
        let mut conv = Vec::with_capacity(vals.len());
        for v in vals {
            conv.push(self.convert(v, ty, true, span)?);
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

    fn elementwise(
        &mut self,
        name: &str,
        args: &[Expr],
        n: usize,
        kind: Elementwise,
        span: Span,
    ) -> Option<Val> {
        self.arity(name, args, n, span)?;
        let vals = self.args(args)?;
        self.at(span);
        let float_only = matches!(kind, Elementwise::Math(_));
        let ty = self.shape(name, &vals, float_only, span)?;
        match kind {
            Elementwise::Math(m) => self.map_components(vals, &ty, span, |me, e, ops| {
                me.s.val(Op::Math(m), e.isa(), ops)
            }),
            Elementwise::Numeric(o) => {
                self.map_components(vals, &ty, span, |me, e, ops| me.s.val(o, e.isa(), ops))
            }
        }
    }

    fn fconst(&mut self, e: Scalar, v: f64) -> Value {
        self.constant(Const::float(e, v))
    }

    /// Lowers a standard-library call; `None` when `name` is not a builtin.
    fn builtin(&mut self, name: &str, args: &[Expr], span: Span) -> Option<Option<Val>> {
        use Elementwise::*;
        let math = |f| Math(f);
        Some(match name {
            "floor" => self.elementwise(name, args, 1, math(MathFn::Floor), span),
            "ceil" => self.elementwise(name, args, 1, math(MathFn::Ceil), span),
            "trunc" => self.elementwise(name, args, 1, math(MathFn::Trunc), span),
            "round" => self.elementwise(name, args, 1, math(MathFn::Round), span),
            "rint" => self.elementwise(name, args, 1, math(MathFn::Rint), span),
            "sqrt" => self.elementwise(name, args, 1, math(MathFn::Sqrt), span),
            "rsqrt" => self.elementwise(name, args, 1, math(MathFn::Rsqrt), span),
            "exp" => self.elementwise(name, args, 1, math(MathFn::Exp), span),
            "exp2" => self.elementwise(name, args, 1, math(MathFn::Exp2), span),
            "log" => self.elementwise(name, args, 1, math(MathFn::Log), span),
            "log2" => self.elementwise(name, args, 1, math(MathFn::Log2), span),
            "sin" => self.elementwise(name, args, 1, math(MathFn::Sin), span),
            "cos" => self.elementwise(name, args, 1, math(MathFn::Cos), span),
            "tan" => self.elementwise(name, args, 1, math(MathFn::Tan), span),
            "pow" | "powr" => self.elementwise(name, args, 2, math(MathFn::Pow), span),
            "min" | "fmin" => self.elementwise(name, args, 2, Numeric(Op::Min), span),
            "max" | "fmax" => self.elementwise(name, args, 2, Numeric(Op::Max), span),
            "abs" | "fabs" => self.elementwise(name, args, 1, Numeric(Op::Abs), span),
            "fma" | "mad" => self.float_fn(name, args, 3, span, |me, e, o| {
                me.s.val(Op::Fma, e.isa(), o)
            }),
            "exp10" => self.float_fn(name, args, 1, span, |me, e, o| {
                let k = me.fconst(e, std::f64::consts::LOG2_10);
                let x = me.s.val(Op::Mul, e.isa(), &[o[0], k]);
                me.s.val(Op::Math(MathFn::Exp2), e.isa(), &[x])
            }),
            "log10" => self.float_fn(name, args, 1, span, |me, e, o| {
                let l = me.s.val(Op::Math(MathFn::Log2), e.isa(), &[o[0]]);
                let k = me.fconst(e, std::f64::consts::LOG10_2);
                me.s.val(Op::Mul, e.isa(), &[l, k])
            }),
            "fract" => self.float_fn(name, args, 1, span, |me, e, o| {
                let f = me.s.val(Op::Math(MathFn::Floor), e.isa(), &[o[0]]);
                let d = me.s.val(Op::Sub, e.isa(), &[o[0], f]);
                let below_one = me.fconst(
                    e,
                    if e == Scalar::Float {
                        f32::from_bits(0x3f7f_ffff) as f64
                    } else {
                        0.99951171875
                    },
                );
                me.s.val(Op::Min, e.isa(), &[d, below_one])
            }),
            "fmod" => self.float_fn(name, args, 2, span, |me, e, o| {
                let q = me.s.val(Op::Div, e.isa(), &[o[0], o[1]]);
                let t = me.s.val(Op::Math(MathFn::Trunc), e.isa(), &[q]);
                let n = me.s.val(Op::Neg, e.isa(), &[t]);
                me.s.val(Op::Fma, e.isa(), &[n, o[1], o[0]])
            }),
            "mix" => self.float_fn(name, args, 3, span, |me, e, o| {
                let d = me.s.val(Op::Sub, e.isa(), &[o[1], o[0]]);
                me.s.val(Op::Fma, e.isa(), &[d, o[2], o[0]])
            }),
            "saturate" => self.float_fn(name, args, 1, span, |me, e, o| {
                let (z, one) = (me.fconst(e, 0.0), me.fconst(e, 1.0));
                let m = me.s.val(Op::Max, e.isa(), &[o[0], z]);
                me.s.val(Op::Min, e.isa(), &[m, one])
            }),
            "step" => self.float_fn(name, args, 2, span, |me, e, o| {
                let c = me.s.val(Op::Cmp(CmpCond::Lt), e.isa(), &[o[1], o[0]]);
                let (z, one) = (me.fconst(e, 0.0), me.fconst(e, 1.0));
                me.s.val(Op::Select, e.isa(), &[c, z, one])
            }),
            "smoothstep" => self.float_fn(name, args, 3, span, |me, e, o| {
                let t = e.isa();
                let num = me.s.val(Op::Sub, t, &[o[2], o[0]]);
                let den = me.s.val(Op::Sub, t, &[o[1], o[0]]);
                let q = me.s.val(Op::Div, t, &[num, den]);
                let (z, one) = (me.fconst(e, 0.0), me.fconst(e, 1.0));
                let q = me.s.val(Op::Max, t, &[q, z]);
                let q = me.s.val(Op::Min, t, &[q, one]);
                let (two, three) = (me.fconst(e, -2.0), me.fconst(e, 3.0));
                let a = me.s.val(Op::Fma, t, &[two, q, three]);
                let q2 = me.s.val(Op::Mul, t, &[q, q]);
                me.s.val(Op::Mul, t, &[q2, a])
            }),
            "sign" => self.float_fn(name, args, 1, span, |me, e, o| {
                let t = e.isa();
                let (z, one, m1) = (me.fconst(e, 0.0), me.fconst(e, 1.0), me.fconst(e, -1.0));
                let gt = me.s.val(Op::Cmp(CmpCond::Gt), t, &[o[0], z]);
                let lt = me.s.val(Op::Cmp(CmpCond::Lt), t, &[o[0], z]);
                let r = me.s.val(Op::Select, t, &[lt, m1, o[0]]);
                me.s.val(Op::Select, t, &[gt, one, r])
            }),
            "clamp" => {
                self.arity(name, args, 3, span)?;
                let vals = self.args(args)?;
                self.at(span);
                let ty = self.shape(name, &vals, false, span)?;
                self.map_components(vals, &ty, span, |me, e, o| {
                    let m = me.s.val(Op::Max, e.isa(), &[o[0], o[1]]);
                    me.s.val(Op::Min, e.isa(), &[m, o[2]])
                })
            }
            "clz" | "ctz" | "popcount" => {
                let op = match name {
                    "clz" => Op::Clz,
                    "ctz" => Op::Ctz,
                    _ => Op::Popcount,
                };
                self.int_fn(name, args, 1, span, |me, e, o| me.s.val(op, e.isa(), o))
            }
            "mulhi" => self.int_fn(name, args, 2, span, |me, e, o| {
                me.s.val(Op::MulHi, e.isa(), o)
            }),
            "absdiff" | "abs_diff" => self.int_fn(name, args, 2, span, |me, e, o| {
                let t = e.isa();
                let hi = me.s.val(Op::Max, t, o);
                let lo = me.s.val(Op::Min, t, o);
                me.s.val(Op::Sub, t, &[hi, lo])
            }),
            "select" => {
                // select(a, b, c): c ? b : a, per component.
                self.arity(name, args, 3, span)?;
                let mut vals = self.args(args)?;
                self.at(span);
                let c = vals.pop()?;
                let ty = self.shape(name, &vals, false, span)?;
                let a = self.convert(vals[0].clone(), &ty, true, span)?;
                let b = self.convert(vals[1].clone(), &ty, true, span)?;
                let cty = ty.with_elem(Scalar::Bool);
                let c = self.convert(c, &cty, true, span)?;
                let e = ty.elem_scalar()?;
                let parts = (0..a.parts.len())
                    .map(|i| {
                        self.s
                            .val(Op::Select, e.isa(), &[c.parts[i], b.parts[i], a.parts[i]])
                    })
                    .collect();
                Some(Val { ty, parts })
            }
            "dot" => {
                self.arity(name, args, 2, span)?;
                let vals = self.args(args)?;
                self.at(span);
                let ty = self.shape(name, &vals, true, span)?;
                let e = ty.elem_scalar()?;
                let a = self.convert(vals[0].clone(), &ty, true, span)?;
                let b = self.convert(vals[1].clone(), &ty, true, span)?;
                let mut acc = self.s.val(Op::Mul, e.isa(), &[a.parts[0], b.parts[0]]);
                for i in 1..a.parts.len() {
                    acc = self.s.val(Op::Fma, e.isa(), &[a.parts[i], b.parts[i], acc]);
                }
                Some(Val {
                    ty: Ty::Scalar(e),
                    parts: vec![acc],
                })
            }
            "length" | "length_squared" | "normalize" => {
                self.arity(name, args, 1, span)?;
                let vals = self.args(args)?;
                self.at(span);
                let ty = self.shape(name, &vals, true, span)?;
                let e = ty.elem_scalar()?;
                let a = self.convert(vals[0].clone(), &ty, true, span)?;
                let mut acc = self.s.val(Op::Mul, e.isa(), &[a.parts[0], a.parts[0]]);
                for p in &a.parts[1..] {
                    acc = self.s.val(Op::Fma, e.isa(), &[*p, *p, acc]);
                }
                match name {
                    "length_squared" => Some(Val {
                        ty: Ty::Scalar(e),
                        parts: vec![acc],
                    }),
                    "length" => {
                        let l = self.s.val(Op::Math(MathFn::Sqrt), e.isa(), &[acc]);
                        Some(Val {
                            ty: Ty::Scalar(e),
                            parts: vec![l],
                        })
                    }
                    _ => {
                        let r = self.s.val(Op::Math(MathFn::Rsqrt), e.isa(), &[acc]);
                        let parts = a
                            .parts
                            .iter()
                            .map(|p| self.s.val(Op::Mul, e.isa(), &[*p, r]))
                            .collect();
                        Some(Val { ty, parts })
                    }
                }
            }
            "distance" => {
                self.arity(name, args, 2, span)?;
                let vals = self.args(args)?;
                self.at(span);
                let ty = self.shape(name, &vals, true, span)?;
                let e = ty.elem_scalar()?;
                let a = self.convert(vals[0].clone(), &ty, true, span)?;
                let b = self.convert(vals[1].clone(), &ty, true, span)?;
                let mut acc: Option<Value> = None;
                for i in 0..a.parts.len() {
                    let d = self.s.val(Op::Sub, e.isa(), &[a.parts[i], b.parts[i]]);
                    acc = Some(match acc {
                        None => self.s.val(Op::Mul, e.isa(), &[d, d]),
                        Some(x) => self.s.val(Op::Fma, e.isa(), &[d, d, x]),
                    });
                }
                let l = self.s.val(Op::Math(MathFn::Sqrt), e.isa(), &[acc?]);
                Some(Val {
                    ty: Ty::Scalar(e),
                    parts: vec![l],
                })
            }
            "cross" => {
                self.arity(name, args, 2, span)?;
                let vals = self.args(args)?;
                self.at(span);
                let ty = self.shape(name, &vals, true, span)?;
                if ty.vector_len() != Some(3) {
                    self.error("`cross` needs 3-component vectors", span);
                    return Some(None);
                }
                let e = ty.elem_scalar()?;
                let a = self.convert(vals[0].clone(), &ty, true, span)?;
                let b = self.convert(vals[1].clone(), &ty, true, span)?;
                let t = e.isa();
                let parts = [(1, 2), (2, 0), (0, 1)]
                    .iter()
                    .map(|&(i, j)| {
                        let m = self.s.val(Op::Mul, t, &[a.parts[j], b.parts[i]]);
                        let n = self.s.val(Op::Neg, t, &[m]);
                        self.s.val(Op::Fma, t, &[a.parts[i], b.parts[j], n])
                    })
                    .collect();
                Some(Val { ty, parts })
            }
            "all" | "any" => {
                self.arity(name, args, 1, span)?;
                let v = self.rvalue(&args[0])?;
                self.at(span);
                let ty = v.ty.with_elem(Scalar::Bool);
                let b = self.convert(v, &ty, true, span)?;
                let o = if name == "all" { Op::And } else { Op::Or };
                let mut acc = b.parts[0];
                for p in &b.parts[1..] {
                    acc = self.s.val(o, Type::Pred, &[acc, *p]);
                }
                Some(Val {
                    ty: Ty::BOOL,
                    parts: vec![acc],
                })
            }
            "isnan" | "isinf" | "isfinite" | "signbit" => {
                self.arity(name, args, 1, span)?;
                let v = self.rvalue(&args[0])?;
                self.at(span);
                let ty = self.shape(name, std::slice::from_ref(&v), true, span)?;
                let e = ty.elem_scalar()?;
                let v = self.convert(v, &ty, true, span)?;
                let t = e.isa();
                let inf = self.fconst(e, f64::INFINITY);
                let parts = v
                    .parts
                    .iter()
                    .map(|p| match name {
                        "isnan" => self.s.val(Op::Cmp(CmpCond::Ne), t, &[*p, *p]),
                        "signbit" => {
                            let (u, ut) = match t {
                                Type::F32 => (
                                    self.s.val(Op::Bitcast { from: t }, Type::U32, &[*p]),
                                    Scalar::UInt,
                                ),
                                _ => (
                                    self.s.val(Op::Bitcast { from: t }, Type::U16, &[*p]),
                                    Scalar::UShort,
                                ),
                            };
                            let z = self.constant(Const::int(ut, 0));
                            let sign = self.constant(Const::int(
                                ut,
                                if ut == Scalar::UInt { 1 << 31 } else { 1 << 15 },
                            ));
                            let m = self.s.val(Op::And, ut.isa(), &[u, sign]);
                            self.s.val(Op::Cmp(CmpCond::Ne), ut.isa(), &[m, z])
                        }
                        _ => {
                            let a = self.s.val(Op::Abs, t, &[*p]);
                            let is_inf = self.s.val(Op::Cmp(CmpCond::Eq), t, &[a, inf]);
                            if name == "isinf" {
                                is_inf
                            } else {
                                self.s.val(Op::Cmp(CmpCond::Lt), t, &[a, inf])
                            }
                        }
                    })
                    .collect();
                Some(Val {
                    ty: ty.with_elem(Scalar::Bool),
                    parts,
                })
            }
            "threadgroup_barrier" | "simdgroup_barrier" => {
                let scope = if name == "threadgroup_barrier" {
                    BarrierScope::Threadgroup
                } else {
                    BarrierScope::Simdgroup
                };
                let flags = match args {
                    [] => MemFlags::NONE,
                    [f] => match self.eval_const(f) {
                        Some(c) if (0..16).contains(&c.as_i128()) => MemFlags(c.as_i128() as u8),
                        _ => {
                            self.error("barrier flags must be `mem_flags::...` constants", f.span);
                            return Some(None);
                        }
                    },
                    _ => {
                        self.error(format!("`{name}` takes one argument"), span);
                        return Some(None);
                    }
                };
                self.at(span);
                self.s.ins(Op::Barrier(scope, flags), Type::Pred, &[]);
                Some(Val::void())
            }
            _ if name.starts_with("atomic_") => self.atomic(name, args, span),
            _ => {
                if let Some(op) = name.strip_prefix("simd_") {
                    return self.cross_lane(name, op, false, args, span);
                }
                if let Some(op) = name.strip_prefix("quad_") {
                    return self.cross_lane(name, op, true, args, span);
                }
                return None;
            }
        })
    }

    fn float_fn(
        &mut self,
        name: &str,
        args: &[Expr],
        n: usize,
        span: Span,
        f: impl FnMut(&mut Self, Scalar, &[Value]) -> Value,
    ) -> Option<Val> {
        self.arity(name, args, n, span)?;
        let vals = self.args(args)?;
        self.at(span);
        let ty = self.shape(name, &vals, true, span)?;
        self.map_components(vals, &ty, span, f)
    }

    fn int_fn(
        &mut self,
        name: &str,
        args: &[Expr],
        n: usize,
        span: Span,
        f: impl FnMut(&mut Self, Scalar, &[Value]) -> Value,
    ) -> Option<Val> {
        self.arity(name, args, n, span)?;
        let vals = self.args(args)?;
        self.at(span);
        let ty = self.shape(name, &vals, false, span)?;
        if ty.elem_scalar().is_some_and(|e| e.is_float()) {
            self.error(format!("`{name}` needs integer arguments"), span);
            return None;
        }
        self.map_components(vals, &ty, span, f)
    }

    /// `simd_*` and `quad_*` functions.
    fn cross_lane(
        &mut self,
        name: &str,
        op: &str,
        quad: bool,
        args: &[Expr],
        span: Span,
    ) -> Option<Option<Val>> {
        let sop = match op {
            "shuffle" => SimdOp::Shuffle,
            "shuffle_up" => SimdOp::ShuffleUp,
            "shuffle_down" => SimdOp::ShuffleDown,
            "shuffle_xor" => SimdOp::ShuffleXor,
            "shuffle_rotate_up" => SimdOp::ShuffleRotateUp,
            "shuffle_rotate_down" => SimdOp::ShuffleRotateDown,
            "broadcast" => SimdOp::Broadcast,
            "broadcast_first" => SimdOp::BroadcastFirst,
            "sum" => SimdOp::Sum,
            "product" => SimdOp::Product,
            "min" => SimdOp::Min,
            "max" => SimdOp::Max,
            "and" => SimdOp::And,
            "or" => SimdOp::Or,
            "xor" => SimdOp::Xor,
            "prefix_inclusive_sum" => SimdOp::PrefixInclusiveSum,
            "prefix_exclusive_sum" => SimdOp::PrefixExclusiveSum,
            "prefix_inclusive_product" => SimdOp::PrefixInclusiveProduct,
            "prefix_exclusive_product" => SimdOp::PrefixExclusiveProduct,
            "ballot" => SimdOp::Ballot,
            "all" => SimdOp::All,
            "any" => SimdOp::Any,
            "is_first" => SimdOp::IsFirst,
            "active_threads_mask" => SimdOp::ActiveMask,
            _ => return None,
        };
        let wrap = |o: SimdOp| if quad { Op::Quad(o) } else { Op::Simd(o) };
        Some((|| {
            self.arity(name, args, sop.arity(), span)?;
            let vals = self.args(args)?;
            self.at(span);
            match sop {
                SimdOp::IsFirst => {
                    let v = self.s.val(wrap(sop), Type::Pred, &[]);
                    Some(Val {
                        ty: Ty::BOOL,
                        parts: vec![v],
                    })
                }
                SimdOp::ActiveMask => {
                    let v = self.s.val(wrap(sop), Type::U64, &[]);
                    Some(Val {
                        ty: Ty::Scalar(Scalar::ULong),
                        parts: vec![v],
                    })
                }
                SimdOp::Ballot | SimdOp::All | SimdOp::Any => {
                    let c = self.condition(vals[0].clone(), span)?;
                    let r = self.s.val(wrap(sop), Type::Pred, &[c]);
                    let ty = if sop == SimdOp::Ballot {
                        Ty::Scalar(Scalar::ULong)
                    } else {
                        Ty::BOOL
                    };
                    Some(Val { ty, parts: vec![r] })
                }
                _ => {
                    let v = vals[0].clone();
                    let Some(elem) = v.ty.elem_scalar() else {
                        let t = self.show(&v.ty);
                        self.error(format!("`{name}` cannot take a `{t}`"), span);
                        return None;
                    };
                    if matches!(sop, SimdOp::And | SimdOp::Or | SimdOp::Xor) && !elem.is_int() {
                        self.error(format!("`{name}` needs integer values"), span);
                        return None;
                    }
                    let lane = if sop.arity() == 2 {
                        let l = self.convert(vals[1].clone(), &Ty::UINT, true, span)?;
                        Some(l.parts[0])
                    } else {
                        None
                    };
                    let parts = v
                        .parts
                        .iter()
                        .map(|p| {
                            let mut a = vec![*p];
                            a.extend(lane);
                            self.s.val(wrap(sop), elem.isa(), &a)
                        })
                        .collect();
                    Some(Val { ty: v.ty, parts })
                }
            }
        })())
    }

    /// `atomic_*_explicit` functions.
    fn atomic(&mut self, name: &str, args: &[Expr], span: Span) -> Option<Val> {
        let base = name.strip_prefix("atomic_").unwrap_or(name);
        let base = base.strip_suffix("_explicit").unwrap_or(base);
        let (op, nvals) = match base {
            "load" => (AtomicOp::Load, 0),
            "store" => (AtomicOp::Store, 1),
            "exchange" => (AtomicOp::Exchange, 1),
            "fetch_add" => (AtomicOp::Add, 1),
            "fetch_sub" => (AtomicOp::Sub, 1),
            "fetch_min" => (AtomicOp::Min, 1),
            "fetch_max" => (AtomicOp::Max, 1),
            "fetch_and" => (AtomicOp::And, 1),
            "fetch_or" => (AtomicOp::Or, 1),
            "fetch_xor" => (AtomicOp::Xor, 1),
            "compare_exchange_weak" | "compare_exchange_strong" => (AtomicOp::CmpXchg, 2),
            _ => {
                self.error(format!("unknown atomic function `{name}`"), span);
                return None;
            }
        };
        // Object, values, then one memory order (two for compare-exchange).
        let orders = if op == AtomicOp::CmpXchg { 2 } else { 1 };
        if args.len() != 1 + nvals + orders
            && !(name.ends_with("_explicit") || args.len() == 1 + nvals)
        {
            self.error(
                format!("`{name}` takes {} arguments", 1 + nvals + orders),
                span,
            );
            return None;
        }
        if args.len() < 1 + nvals {
            self.error(
                format!("`{name}` takes {} arguments", 1 + nvals + orders),
                span,
            );
            return None;
        }
        for o in &args[1 + nvals..] {
            if self.eval_const(o).is_none() {
                self.error(
                    "a memory order must be a `memory_order_...` constant",
                    o.span,
                );
                return None;
            }
        }
        let obj = self.rvalue(&args[0])?;
        let (scalar, space) = match &obj.ty {
            Ty::Pointer(p) => match (&p.pointee, p.space) {
                (Ty::Atomic(s), sp @ (Space::Device | Space::Threadgroup)) => (*s, sp),
                _ => {
                    let t = self.show(&obj.ty);
                    self.error(
                        format!("`{name}` needs a pointer to an atomic in device or threadgroup memory, found `{t}`"),
                        args[0].span,
                    );
                    return None;
                }
            },
            other => {
                let t = self.show(other);
                self.error(
                    format!("`{name}` needs a pointer to an atomic object, found `{t}`"),
                    args[0].span,
                );
                return None;
            }
        };
        if scalar == Scalar::Bool {
            self.error("atomic_bool is not supported yet", args[0].span);
            return None;
        }
        if scalar == Scalar::Float && matches!(op, AtomicOp::And | AtomicOp::Or | AtomicOp::Xor) {
            self.error(format!("`{name}` needs an integer atomic"), args[0].span);
            return None;
        }
        let t = scalar.isa();
        let addr = obj.parts[0];
        if op == AtomicOp::CmpXchg {
            // bool atomic_compare_exchange_weak_explicit(obj, thread T* expected, T desired, ...)
            let exp_ptr = self.rvalue(&args[1])?;
            let exp_place = match &exp_ptr.ty {
                Ty::Pointer(p) if p.pointee == Ty::Scalar(scalar) => Place::Mem {
                    ty: Ty::Scalar(scalar),
                    addr: exp_ptr.parts[0],
                    offset: 0,
                    space: p.space,
                    is_const: p.is_const,
                },
                other => {
                    let t = self.show(other);
                    self.error(
                        format!("the expected value must be a pointer to `{scalar}`, found `{t}`"),
                        args[1].span,
                    );
                    return None;
                }
            };
            let desired = self.rvalue(&args[2])?;
            self.at(span);
            let desired = self.convert(desired, &Ty::Scalar(scalar), false, args[2].span)?;
            let expected = self.load(&exp_place, args[1].span)?;
            let old = self.s.val(
                Op::Atomic(op, space),
                t,
                &[addr, expected.parts[0], desired.parts[0]],
            );
            let ok = self
                .s
                .val(Op::Cmp(CmpCond::Eq), t, &[old, expected.parts[0]]);
            // On failure the expected value becomes the current one; on success it already is.
            self.store(
                &exp_place,
                &Val {
                    ty: Ty::Scalar(scalar),
                    parts: vec![old],
                },
                span,
            )?;
            return Some(Val {
                ty: Ty::BOOL,
                parts: vec![ok],
            });
        }
        let mut ops = vec![addr];
        if nvals == 1 {
            let v = self.rvalue(&args[1])?;
            let v = self.convert(v, &Ty::Scalar(scalar), false, args[1].span)?;
            ops.push(v.parts[0]);
        }
        self.at(span);
        let r = self.s.ins(Op::Atomic(op, space), t, &ops);
        Some(match r {
            Some(v) => Val {
                ty: Ty::Scalar(scalar),
                parts: vec![v],
            },
            None => Val::void(),
        })
    }

    /// Inlines a call to a user helper function.
    fn inline_call(&mut self, def: &ast::FunctionDef, args: &[Expr], span: Span) -> Option<Val> {
        let name = def.name.name.clone();
        if self.inlines.iter().any(|c| c.name == name) {
            self.error(
                format!("`{name}` calls itself; recursion is not allowed in MSL"),
                span,
            );
            return None;
        }
        if self.inlines.len() >= 64 {
            self.error("helper calls are nested too deeply (64 levels)", span);
            return None;
        }
        let body = def.body.as_ref()?;
        let ret = self.resolve_type(&def.ret)?;
        if ret.is_ref {
            self.error(
                "helper functions returning references are not supported yet",
                def.ret.span,
            );
            return None;
        }
        // Bind parameters: values are copied into fresh variables, references alias the
        // argument's object.
        let mut bindings: HashMap<String, Binding> = HashMap::new();
        for (i, p) in def.params.iter().enumerate() {
            let arg = args.get(i).or(p.default.as_ref())?;
            let d = self.resolve_type(&p.ty)?;
            let binding = if d.is_ref {
                if self.is_place_expr(arg) {
                    let place = self.place(arg)?;
                    let pty = self.place_ty(&place);
                    if pty != d.ty {
                        let (a, b) = (self.show(&pty), self.show(&d.ty));
                        self.error(
                            format!("cannot bind a `{a}` to a reference to `{b}`"),
                            arg.span,
                        );
                        return None;
                    }
                    Binding::Place(place)
                } else if d.is_const {
                    let v = self.init_value(&d.ty, arg)?;
                    let slots = self.new_slots(&d.ty);
                    for (s, v) in slots.iter().zip(&v.parts) {
                        self.s.write(*s, *v);
                    }
                    Binding::Place(Place::Var {
                        ty: d.ty,
                        slots,
                        is_const: true,
                    })
                } else {
                    self.error(
                        "a non-const reference needs an object (a variable or memory)",
                        arg.span,
                    );
                    return None;
                }
            } else {
                let v = self.init_value(&d.ty, arg)?;
                let slots = self.new_slots(&d.ty);
                for (s, v) in slots.iter().zip(&v.parts) {
                    self.s.write(*s, *v);
                }
                Binding::Place(Place::Var {
                    ty: d.ty,
                    slots,
                    is_const: d.is_const,
                })
            };
            if let Some(n) = &p.name {
                bindings.insert(n.name.clone(), binding);
            }
        }
        let ret_block = self.s.create_block();
        let ret_slots = self.new_slots(&ret.ty);
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![bindings]);
        self.inlines.push(InlineCtx {
            name,
            ret_block,
            ret_ty: ret.ty.clone(),
            ret_slots: ret_slots.clone(),
            loops_base: self.loops.len(),
        });
        self.block(&body.stmts);
        self.s.br(ret_block);
        self.inlines.pop();
        self.scopes = saved_scopes;
        self.s.seal(ret_block);
        self.s.switch_to(ret_block);
        let parts = ret_slots.iter().map(|s| self.s.read(*s)).collect();
        Some(Val { ty: ret.ty, parts })
    }
}
