//! Math (6.5), common (6.6), relational (6.7) and geometric (6.9) functions.

use metalsim_isa::{CmpCond, MathFn, Op, Type, Value};

use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Operand, Place, Val};
use crate::source::Span;

/// The one-instruction math functions by name.
fn math_fn(name: &str) -> Option<MathFn> {
    Some(match name {
        "floor" => MathFn::Floor,
        "ceil" => MathFn::Ceil,
        "trunc" => MathFn::Trunc,
        "round" => MathFn::Round,
        "rint" => MathFn::Rint,
        "sqrt" => MathFn::Sqrt,
        "rsqrt" => MathFn::Rsqrt,
        "exp" => MathFn::Exp,
        "exp2" => MathFn::Exp2,
        "exp10" => MathFn::Exp10,
        "log" => MathFn::Log,
        "log2" => MathFn::Log2,
        "log10" => MathFn::Log10,
        "sin" => MathFn::Sin,
        "cos" => MathFn::Cos,
        "tan" => MathFn::Tan,
        "asin" => MathFn::Asin,
        "acos" => MathFn::Acos,
        "atan" => MathFn::Atan,
        "sinh" => MathFn::Sinh,
        "cosh" => MathFn::Cosh,
        "tanh" => MathFn::Tanh,
        "asinh" => MathFn::Asinh,
        "acosh" => MathFn::Acosh,
        "atanh" => MathFn::Atanh,
        "sinpi" => MathFn::Sinpi,
        "cospi" => MathFn::Cospi,
        "tanpi" => MathFn::Tanpi,
        "pow" | "powr" => MathFn::Pow,
        "atan2" => MathFn::Atan2,
        "fmod" => MathFn::Fmod,
        _ => return None,
    })
}

impl FnLowerer<'_, '_> {
    fn math_op(&mut self, f: MathFn, precise: bool, e: Scalar, ops: &[Value]) -> Value {
        let op = if precise {
            Op::PreciseMath(f)
        } else {
            Op::Math(f)
        };
        self.s.val(op, e.isa(), ops)
    }

    /// Math, common, relational and geometric functions; `None` when `name` is none of
    /// them.
    pub fn math(
        &mut self,
        name: &str,
        vals: &[Val],
        precise: bool,
        span: Span,
    ) -> Option<Option<Val>> {
        if let Some(f) = math_fn(name) {
            return Some(self.float_fn(name, vals, f.arity(), span, |me, e, o| {
                me.math_op(f, precise, e, o)
            }));
        }
        Some(match name {
            "min" | "fmin" | "max" | "fmax" => {
                let op = if name.ends_with("min") {
                    Op::Min
                } else {
                    Op::Max
                };
                (|| {
                    self.arity(name, vals, 2, span)?;
                    let ty = self.shape(name, vals, name.starts_with('f'), span)?;
                    self.map_components(vals, &ty, span, |me, e, o| me.s.val(op, e.isa(), o))
                })()
            }
            "abs" | "fabs" => (|| {
                self.arity(name, vals, 1, span)?;
                let ty = self.shape(name, vals, name == "fabs", span)?;
                self.map_components(vals, &ty, span, |me, e, o| me.s.val(Op::Abs, e.isa(), o))
            })(),
            "fmin3" | "min3" | "fmax3" | "max3" | "fmedian3" | "median3" => (|| {
                self.arity(name, vals, 3, span)?;
                let ty = self.shape(name, vals, name.starts_with('f'), span)?;
                let kind = name.trim_start_matches('f');
                self.map_components(vals, &ty, span, |me, e, o| {
                    let t = e.isa();
                    match kind {
                        "min3" => {
                            let m = me.s.val(Op::Min, t, &[o[0], o[1]]);
                            me.s.val(Op::Min, t, &[m, o[2]])
                        }
                        "max3" => {
                            let m = me.s.val(Op::Max, t, &[o[0], o[1]]);
                            me.s.val(Op::Max, t, &[m, o[2]])
                        }
                        _ => {
                            // median = max(min(a, b), min(max(a, b), c))
                            let lo = me.s.val(Op::Min, t, &[o[0], o[1]]);
                            let hi = me.s.val(Op::Max, t, &[o[0], o[1]]);
                            let m = me.s.val(Op::Min, t, &[hi, o[2]]);
                            me.s.val(Op::Max, t, &[lo, m])
                        }
                    }
                })
            })(),
            "fma" | "mad" => self.float_fn(name, vals, 3, span, |me, e, o| {
                me.s.val(Op::Fma, e.isa(), o)
            }),
            "divide" => self.float_fn(name, vals, 2, span, |me, e, o| {
                me.s.val(Op::Div, e.isa(), o)
            }),
            "fract" => self.float_fn(name, vals, 1, span, |me, e, o| {
                let f = me.s.val(Op::Math(MathFn::Floor), e.isa(), &[o[0]]);
                let d = me.s.val(Op::Sub, e.isa(), &[o[0], f]);
                let below_one = me.fconst(e, below_one(e));
                me.s.val(Op::Min, e.isa(), &[d, below_one])
            }),
            "fdim" => self.float_fn(name, vals, 2, span, |me, e, o| {
                let d = me.s.val(Op::Sub, e.isa(), o);
                let z = me.fconst(e, 0.0);
                let nan = me.s.val(Op::Cmp(CmpCond::Ne), e.isa(), &[d, d]);
                let m = me.s.val(Op::Max, e.isa(), &[d, z]);
                me.s.val(Op::Select, e.isa(), &[nan, d, m])
            }),
            "copysign" => {
                self.float_fn(name, vals, 2, span, |me, e, o| me.copy_sign(e, o[0], o[1]))
            }
            "nextafter" => self.float_fn(name, vals, 2, span, |me, e, o| me.next_after(e, o)),
            "ldexp" => (|| {
                self.arity(name, vals, 2, span)?;
                let ty = self.shape(name, &vals[..1], true, span)?;
                let x = self.convert(vals[0].clone(), &ty, true, span)?;
                let k = self.convert(vals[1].clone(), &ty.with_elem(Scalar::Int), true, span)?;
                let e = ty.elem_scalar()?;
                let parts = x
                    .parts
                    .iter()
                    .zip(&k.parts)
                    .map(|(x, k)| self.math_op(MathFn::Ldexp, precise, e, &[*x, *k]))
                    .collect();
                Some(Val { ty, parts })
            })(),
            "ilogb" => (|| {
                self.arity(name, vals, 1, span)?;
                let ty = self.shape(name, vals, true, span)?;
                let x = self.convert(vals[0].clone(), &ty, true, span)?;
                let e = ty.elem_scalar()?;
                let parts = x.parts.iter().map(|p| self.ilogb(e, *p)).collect();
                Some(Val {
                    ty: ty.with_elem(Scalar::Int),
                    parts,
                })
            })(),
            "clamp" => (|| {
                self.arity(name, vals, 3, span)?;
                let ty = self.shape(name, vals, false, span)?;
                self.map_components(vals, &ty, span, |me, e, o| {
                    let m = me.s.val(Op::Max, e.isa(), &[o[0], o[1]]);
                    me.s.val(Op::Min, e.isa(), &[m, o[2]])
                })
            })(),
            "saturate" => self.float_fn(name, vals, 1, span, |me, e, o| {
                let (z, one) = (me.fconst(e, 0.0), me.fconst(e, 1.0));
                let m = me.s.val(Op::Max, e.isa(), &[o[0], z]);
                me.s.val(Op::Min, e.isa(), &[m, one])
            }),
            "mix" => self.float_fn(name, vals, 3, span, |me, e, o| {
                let d = me.s.val(Op::Sub, e.isa(), &[o[1], o[0]]);
                me.s.val(Op::Fma, e.isa(), &[d, o[2], o[0]])
            }),
            "degrees" | "radians" => self.float_fn(name, vals, 1, span, |me, e, o| {
                let k = if name == "degrees" {
                    180.0 / std::f64::consts::PI
                } else {
                    std::f64::consts::PI / 180.0
                };
                let k = me.fconst(e, k);
                me.s.val(Op::Mul, e.isa(), &[o[0], k])
            }),
            "step" => self.float_fn(name, vals, 2, span, |me, e, o| {
                let c = me.s.val(Op::Cmp(CmpCond::Lt), e.isa(), &[o[1], o[0]]);
                let (z, one) = (me.fconst(e, 0.0), me.fconst(e, 1.0));
                me.s.val(Op::Select, e.isa(), &[c, z, one])
            }),
            "smoothstep" => self.float_fn(name, vals, 3, span, |me, e, o| {
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
            "sign" => self.float_fn(name, vals, 1, span, |me, e, o| {
                let t = e.isa();
                let (z, one, m1) = (me.fconst(e, 0.0), me.fconst(e, 1.0), me.fconst(e, -1.0));
                let gt = me.s.val(Op::Cmp(CmpCond::Gt), t, &[o[0], z]);
                let lt = me.s.val(Op::Cmp(CmpCond::Lt), t, &[o[0], z]);
                let r = me.s.val(Op::Select, t, &[lt, m1, o[0]]);
                let r = me.s.val(Op::Select, t, &[gt, one, r]);
                // sign(NaN) is 0 (MSL 5.2).
                let nan = me.s.val(Op::Cmp(CmpCond::Ne), t, &[o[0], o[0]]);
                me.s.val(Op::Select, t, &[nan, z, r])
            }),
            "select" => (|| {
                // select(a, b, c): c ? b : a, per component.
                self.arity(name, vals, 3, span)?;
                let ty = self.shape(name, &vals[..2], false, span)?;
                let a = self.convert(vals[0].clone(), &ty, true, span)?;
                let b = self.convert(vals[1].clone(), &ty, true, span)?;
                let cty = ty.with_elem(Scalar::Bool);
                let c = self.convert(vals[2].clone(), &cty, true, span)?;
                let e = ty.elem_scalar()?;
                let parts = (0..a.parts.len())
                    .map(|i| {
                        self.s
                            .val(Op::Select, e.isa(), &[c.parts[i], b.parts[i], a.parts[i]])
                    })
                    .collect();
                Some(Val { ty, parts })
            })(),
            "all" | "any" | "not" => (|| {
                self.arity(name, vals, 1, span)?;
                let v = vals[0].clone();
                let ty = v.ty.with_elem(Scalar::Bool);
                let b = self.convert(v, &ty, true, span)?;
                if name == "not" {
                    let parts = b
                        .parts
                        .iter()
                        .map(|p| self.s.val(Op::Not, Type::Pred, &[*p]))
                        .collect();
                    return Some(Val { ty, parts });
                }
                let o = if name == "all" { Op::And } else { Op::Or };
                let mut acc = b.parts[0];
                for p in &b.parts[1..] {
                    acc = self.s.val(o, Type::Pred, &[acc, *p]);
                }
                Some(Val {
                    ty: Ty::BOOL,
                    parts: vec![acc],
                })
            })(),
            "isnan" | "isinf" | "isfinite" | "signbit" | "isnormal" => (|| {
                self.arity(name, vals, 1, span)?;
                let ty = self.shape(name, vals, true, span)?;
                let e = ty.elem_scalar()?;
                let v = self.convert(vals[0].clone(), &ty, true, span)?;
                let parts = v.parts.iter().map(|p| self.classify(name, e, *p)).collect();
                Some(Val {
                    ty: ty.with_elem(Scalar::Bool),
                    parts,
                })
            })(),
            "isordered" | "isunordered" => (|| {
                self.arity(name, vals, 2, span)?;
                let ty = self.shape(name, vals, true, span)?;
                let e = ty.elem_scalar()?;
                let a = self.convert(vals[0].clone(), &ty, true, span)?;
                let b = self.convert(vals[1].clone(), &ty, true, span)?;
                let t = e.isa();
                let parts = (0..a.parts.len())
                    .map(|i| {
                        let na = self
                            .s
                            .val(Op::Cmp(CmpCond::Ne), t, &[a.parts[i], a.parts[i]]);
                        let nb = self
                            .s
                            .val(Op::Cmp(CmpCond::Ne), t, &[b.parts[i], b.parts[i]]);
                        let un = self.s.val(Op::Or, Type::Pred, &[na, nb]);
                        if name == "isunordered" {
                            un
                        } else {
                            self.s.val(Op::Not, Type::Pred, &[un])
                        }
                    })
                    .collect();
                Some(Val {
                    ty: ty.with_elem(Scalar::Bool),
                    parts,
                })
            })(),
            "dot" | "length" | "length_squared" | "normalize" | "distance" | "distance_squared"
            | "cross" | "reflect" | "refract" | "faceforward" => self.geometric(name, vals, span),
            _ => return None,
        })
    }

    /// `isnan`, `isinf`, `isfinite`, `isnormal`, `signbit` on one component.
    fn classify(&mut self, name: &str, e: Scalar, p: Value) -> Value {
        let t = e.isa();
        match name {
            "isnan" => self.s.val(Op::Cmp(CmpCond::Ne), t, &[p, p]),
            "signbit" => {
                let (u, sign) = uint_view(e);
                let b = self.s.val(Op::Bitcast { from: t }, u.isa(), &[p]);
                let m = self.iconst(u, sign as i128);
                let z = self.iconst(u, 0);
                let a = self.s.val(Op::And, u.isa(), &[b, m]);
                self.s.val(Op::Cmp(CmpCond::Ne), u.isa(), &[a, z])
            }
            _ => {
                let a = self.s.val(Op::Abs, t, &[p]);
                let inf = self.fconst(e, f64::INFINITY);
                match name {
                    "isinf" => self.s.val(Op::Cmp(CmpCond::Eq), t, &[a, inf]),
                    "isfinite" => self.s.val(Op::Cmp(CmpCond::Lt), t, &[a, inf]),
                    _ => {
                        let min = self.fconst(e, min_normal(e));
                        let lo = self.s.val(Op::Cmp(CmpCond::Ge), t, &[a, min]);
                        let hi = self.s.val(Op::Cmp(CmpCond::Lt), t, &[a, inf]);
                        self.s.val(Op::And, Type::Pred, &[lo, hi])
                    }
                }
            }
        }
    }

    /// `ilogb(x)`: the unbiased exponent (subnormals normalized; 0 gives `INT_MIN`...).
    fn ilogb(&mut self, e: Scalar, x: Value) -> Value {
        // Through float: ilogb(x) = floor(log2(|x|)) is exact for normals when taken from
        // the exponent bits; use the bits of |x| scaled out of the subnormal range.
        let t = e.isa();
        let xf = if e == Scalar::Float {
            x
        } else {
            self.s.val(
                Op::Cvt {
                    from: t,
                    sat: false,
                },
                Type::F32,
                &[x],
            )
        };
        let a = self.s.val(Op::Abs, Type::F32, &[xf]);
        let scale = self.fconst(Scalar::Float, 2f64.powi(64));
        let tiny = self.fconst(Scalar::Float, f32::MIN_POSITIVE as f64);
        let sub = self.s.val(Op::Cmp(CmpCond::Lt), Type::F32, &[a, tiny]);
        let scaled = self.s.val(Op::Mul, Type::F32, &[a, scale]);
        let a = self.s.val(Op::Select, Type::F32, &[sub, scaled, a]);
        let bits = self.s.val(Op::Bitcast { from: Type::F32 }, Type::U32, &[a]);
        let sh = self.iconst(Scalar::UInt, 23);
        let ex = self.s.val(Op::Shr, Type::U32, &[bits, sh]);
        let ex = self
            .s
            .val(Op::Bitcast { from: Type::U32 }, Type::I32, &[ex]);
        let bias = self.iconst(Scalar::Int, 127);
        let bias64 = self.iconst(Scalar::Int, 127 + 64);
        let b = self.s.val(Op::Select, Type::I32, &[sub, bias64, bias]);
        let r = self.s.val(Op::Sub, Type::I32, &[ex, b]);
        // MSL names no special values; these are C's and OpenCL's: `ilogb(0)` is
        // `FP_ILOGB0` (INT_MIN), `ilogb(inf)` and `ilogb(NaN)` (`FP_ILOGBNAN`) are INT_MAX.
        let zero = self.fconst(Scalar::Float, 0.0);
        let inf = self.fconst(Scalar::Float, f64::INFINITY);
        let is_zero = self.s.val(Op::Cmp(CmpCond::Eq), Type::F32, &[xf, zero]);
        let finite = self.s.val(Op::Cmp(CmpCond::Lt), Type::F32, &[a, inf]);
        let (min, max) = (
            self.iconst(Scalar::Int, i32::MIN as i128),
            self.iconst(Scalar::Int, i32::MAX as i128),
        );
        let r = self.s.val(Op::Select, Type::I32, &[finite, r, max]);
        self.s.val(Op::Select, Type::I32, &[is_zero, min, r])
    }

    /// `nextafter(x, y)`: the next representable value from `x` toward `y`.
    fn next_after(&mut self, e: Scalar, o: &[Value]) -> Value {
        let t = e.isa();
        let (u, sign) = uint_view(e);
        let ut = u.isa();
        let xb = self.s.val(Op::Bitcast { from: t }, ut, &[o[0]]);
        let one = self.iconst(u, 1);
        let up = self.s.val(Op::Add, ut, &[xb, one]);
        let down = self.s.val(Op::Sub, ut, &[xb, one]);
        // Moving away from zero increments the magnitude bits.
        let toward_bigger = self.s.val(Op::Cmp(CmpCond::Lt), t, &[o[0], o[1]]);
        let z = self.fconst(e, 0.0);
        let neg = self.s.val(Op::Cmp(CmpCond::Lt), t, &[o[0], z]);
        let away = self.s.val(Op::Xor, Type::Pred, &[toward_bigger, neg]);
        let r = self.s.val(Op::Select, ut, &[away, up, down]);
        // From zero: the smallest subnormal with y's sign.
        let is_zero = self.s.val(Op::Cmp(CmpCond::Eq), t, &[o[0], z]);
        let yb = self.s.val(Op::Bitcast { from: t }, ut, &[o[1]]);
        let sm = self.iconst(u, sign as i128);
        let ys = self.s.val(Op::And, ut, &[yb, sm]);
        let tiny = self.s.val(Op::Or, ut, &[ys, one]);
        let r = self.s.val(Op::Select, ut, &[is_zero, tiny, r]);
        let r = self.s.val(Op::Bitcast { from: ut }, t, &[r]);
        // Equal (or NaN): y (NaN propagates).
        let eq = self.s.val(Op::Cmp(CmpCond::Eq), t, &[o[0], o[1]]);
        let r = self.s.val(Op::Select, t, &[eq, o[1], r]);
        let xn = self.s.val(Op::Cmp(CmpCond::Ne), t, &[o[0], o[0]]);
        let yn = self.s.val(Op::Cmp(CmpCond::Ne), t, &[o[1], o[1]]);
        let nan = self.s.val(Op::Or, Type::Pred, &[xn, yn]);
        let qnan = self.fconst(e, f64::NAN);
        self.s.val(Op::Select, t, &[nan, qnan, r])
    }

    fn geometric(&mut self, name: &str, vals: &[Val], span: Span) -> Option<Val> {
        let n = match name {
            "length" | "length_squared" | "normalize" => 1,
            "refract" | "faceforward" => 3,
            _ => 2,
        };
        self.arity(name, vals, n, span)?;
        let vec_args = if name == "refract" { 2 } else { n };
        let ty = self.shape(name, &vals[..vec_args], true, span)?;
        let e = ty.elem_scalar()?;
        let t = e.isa();
        let mut v = Vec::new();
        for x in &vals[..vec_args] {
            v.push(self.convert(x.clone(), &ty, true, span)?);
        }
        let dot = |me: &mut Self, a: &Val, b: &Val| {
            let mut acc = me.s.val(Op::Mul, t, &[a.parts[0], b.parts[0]]);
            for i in 1..a.parts.len() {
                acc = me.s.val(Op::Fma, t, &[a.parts[i], b.parts[i], acc]);
            }
            acc
        };
        let scalar = |p: Value| Val {
            ty: Ty::Scalar(e),
            parts: vec![p],
        };
        Some(match name {
            "dot" => scalar(dot(self, &v[0], &v[1])),
            "length_squared" => scalar(dot(self, &v[0], &v[0])),
            "length" => {
                let d = dot(self, &v[0], &v[0]);
                scalar(self.s.val(Op::Math(MathFn::Sqrt), t, &[d]))
            }
            "normalize" => {
                let d = dot(self, &v[0], &v[0]);
                let r = self.s.val(Op::Math(MathFn::Rsqrt), t, &[d]);
                let parts = v[0]
                    .parts
                    .iter()
                    .map(|p| self.s.val(Op::Mul, t, &[*p, r]))
                    .collect();
                Val { ty, parts }
            }
            "distance" | "distance_squared" => {
                let parts: Vec<Value> = (0..v[0].parts.len())
                    .map(|i| self.s.val(Op::Sub, t, &[v[0].parts[i], v[1].parts[i]]))
                    .collect();
                let d = Val {
                    ty: ty.clone(),
                    parts,
                };
                let sq = dot(self, &d, &d);
                if name == "distance" {
                    scalar(self.s.val(Op::Math(MathFn::Sqrt), t, &[sq]))
                } else {
                    scalar(sq)
                }
            }
            "cross" => {
                if ty.vector_len() != Some(3) {
                    self.error("`cross` needs 3-component vectors", span);
                    return None;
                }
                let (a, b) = (&v[0], &v[1]);
                let parts = [(1, 2), (2, 0), (0, 1)]
                    .iter()
                    .map(|&(i, j)| {
                        let m = self.s.val(Op::Mul, t, &[a.parts[j], b.parts[i]]);
                        let n = self.s.val(Op::Neg, t, &[m]);
                        self.s.val(Op::Fma, t, &[a.parts[i], b.parts[j], n])
                    })
                    .collect();
                Val { ty, parts }
            }
            "reflect" => {
                // i - 2 * dot(n, i) * n
                let (i, nrm) = (&v[0], &v[1]);
                let d = dot(self, nrm, i);
                let m2 = self.fconst(e, -2.0);
                let k = self.s.val(Op::Mul, t, &[d, m2]);
                let parts = (0..i.parts.len())
                    .map(|c| self.s.val(Op::Fma, t, &[k, nrm.parts[c], i.parts[c]]))
                    .collect();
                Val { ty, parts }
            }
            "faceforward" => {
                // dot(nref, i) < 0 ? n : -n
                let (nn, i, nref) = (&v[0], &v[1], &v[2]);
                let d = dot(self, nref, i);
                let z = self.fconst(e, 0.0);
                let c = self.s.val(Op::Cmp(CmpCond::Lt), t, &[d, z]);
                let parts = nn
                    .parts
                    .iter()
                    .map(|p| {
                        let n = self.s.val(Op::Neg, t, &[*p]);
                        self.s.val(Op::Select, t, &[c, *p, n])
                    })
                    .collect();
                Val { ty, parts }
            }
            _ => {
                // refract(i, n, eta): k = 1 - eta^2 (1 - dot(n,i)^2);
                // k < 0 ? 0 : eta * i - (eta * dot(n,i) + sqrt(k)) * n
                let eta = self.convert(vals[2].clone(), &Ty::Scalar(e), true, span)?;
                let eta = eta.parts[0];
                let (i, nrm) = (&v[0], &v[1]);
                let d = dot(self, nrm, i);
                let one = self.fconst(e, 1.0);
                let d2 = self.s.val(Op::Mul, t, &[d, d]);
                let om = self.s.val(Op::Sub, t, &[one, d2]);
                let e2 = self.s.val(Op::Mul, t, &[eta, eta]);
                let p = self.s.val(Op::Mul, t, &[e2, om]);
                let k = self.s.val(Op::Sub, t, &[one, p]);
                let z = self.fconst(e, 0.0);
                let neg = self.s.val(Op::Cmp(CmpCond::Lt), t, &[k, z]);
                let kz = self.s.val(Op::Max, t, &[k, z]);
                let sk = self.s.val(Op::Math(MathFn::Sqrt), t, &[kz]);
                let f = self.s.val(Op::Fma, t, &[eta, d, sk]);
                let parts = (0..i.parts.len())
                    .map(|c| {
                        let a = self.s.val(Op::Mul, t, &[eta, i.parts[c]]);
                        let b = self.s.val(Op::Mul, t, &[f, nrm.parts[c]]);
                        let r = self.s.val(Op::Sub, t, &[a, b]);
                        self.s.val(Op::Select, t, &[neg, z, r])
                    })
                    .collect();
                Val { ty, parts }
            }
        })
    }

    /// The builtins with an output parameter (`modf`, `frexp`, `sincos`) and the SIMD-group
    /// matrix operations that write their first argument; `None` for other names.
    pub fn out_param_builtin(
        &mut self,
        name: &str,
        args: &[(Operand, Span)],
        precise: bool,
        span: Span,
    ) -> Option<Option<Val>> {
        match name {
            "modf" | "frexp" | "sincos" => {}
            "simdgroup_load"
            | "simdgroup_store"
            | "simdgroup_multiply"
            | "simdgroup_multiply_accumulate" => {
                return Some(self.matrix_builtin(name, args, span));
            }
            _ => return None,
        }
        Some((|| {
            if args.len() != 2 {
                self.error(
                    format!("`{name}` takes 2 arguments, found {}", args.len()),
                    span,
                );
                return None;
            }
            let x = self.load_operand(args[0].0.clone(), args[0].1)?;
            let out = self.out_place(&args[1], name)?;
            self.at(span);
            let ty = self.shape(name, std::slice::from_ref(&x), true, span)?;
            let e = ty.elem_scalar()?;
            let x = self.convert(x, &ty, true, span)?;
            let t = e.isa();
            let (result, written) = match name {
                "modf" => {
                    let ip: Vec<Value> = x
                        .parts
                        .iter()
                        .map(|p| self.s.val(Op::Math(MathFn::Trunc), t, &[*p]))
                        .collect();
                    let fp: Vec<Value> = x
                        .parts
                        .iter()
                        .zip(&ip)
                        .map(|(p, i)| {
                            let d = self.s.val(Op::Sub, t, &[*p, *i]);
                            // modf(inf) has fraction 0 with inf's sign.
                            let a = self.s.val(Op::Abs, t, &[*p]);
                            let inf = self.fconst(e, f64::INFINITY);
                            let is_inf = self.s.val(Op::Cmp(CmpCond::Eq), t, &[a, inf]);
                            let z = self.fconst(e, 0.0);
                            let f = self.s.val(Op::Select, t, &[is_inf, z, d]);
                            // The fraction has x's sign, zero included (modf(-3) is -0).
                            self.copy_sign(e, f, *p)
                        })
                        .collect();
                    (
                        fp,
                        Val {
                            ty: ty.clone(),
                            parts: ip,
                        },
                    )
                }
                "sincos" => {
                    let s: Vec<Value> = x
                        .parts
                        .iter()
                        .map(|p| self.math_op(MathFn::Sin, precise, e, &[*p]))
                        .collect();
                    let c: Vec<Value> = x
                        .parts
                        .iter()
                        .map(|p| self.math_op(MathFn::Cos, precise, e, &[*p]))
                        .collect();
                    (
                        s,
                        Val {
                            ty: ty.clone(),
                            parts: c,
                        },
                    )
                }
                _ => {
                    // frexp: x = m * 2^e with 0.5 <= |m| < 1 (0, inf, NaN: e = 0, m = x).
                    let mut ms = Vec::new();
                    let mut es = Vec::new();
                    for p in &x.parts {
                        let il = self.ilogb(e, *p);
                        let one = self.iconst(Scalar::Int, 1);
                        let ex = self.s.val(Op::Add, Type::I32, &[il, one]);
                        let nex = self.s.val(Op::Neg, Type::I32, &[ex]);
                        let m = self.math_op(MathFn::Ldexp, true, e, &[*p, nex]);
                        let a = self.s.val(Op::Abs, t, &[*p]);
                        let inf = self.fconst(e, f64::INFINITY);
                        let z = self.fconst(e, 0.0);
                        let finite = self.s.val(Op::Cmp(CmpCond::Lt), t, &[a, inf]);
                        let nonzero = self.s.val(Op::Cmp(CmpCond::Ne), t, &[*p, z]);
                        let normal = self.s.val(Op::And, Type::Pred, &[finite, nonzero]);
                        ms.push(self.s.val(Op::Select, t, &[normal, m, *p]));
                        let zi = self.iconst(Scalar::Int, 0);
                        es.push(self.s.val(Op::Select, Type::I32, &[normal, ex, zi]));
                    }
                    (
                        ms,
                        Val {
                            ty: ty.with_elem(Scalar::Int),
                            parts: es,
                        },
                    )
                }
            };
            let want = self.place_ty(&out);
            let written = self.convert(written, &want, false, span)?;
            self.store(&out, &written, span)?;
            Some(Val { ty, parts: result })
        })())
    }

    /// An output argument: an object (`thread T&`) or a pointer to one.
    pub fn out_place(&mut self, arg: &(Operand, Span), name: &str) -> Option<Place> {
        match &arg.0 {
            Operand::Place { place, .. } => {
                if let Ty::Pointer(_) = self.place_ty(place) {
                    let p = self.load(place, arg.1)?;
                    return self.deref(p, arg.1);
                }
                Some(place.clone())
            }
            Operand::Value(v) if matches!(v.ty, Ty::Pointer(_)) => self.deref(v.clone(), arg.1),
            Operand::Value(_) => {
                self.error(
                    format!("`{name}` writes its output argument: pass a variable"),
                    arg.1,
                );
                None
            }
        }
    }
}

impl FnLowerer<'_, '_> {
    /// `a` with the sign bit of `b` (`copysign`), for a float element type `e`.
    fn copy_sign(&mut self, e: Scalar, a: Value, b: Value) -> Value {
        let (u, sign) = uint_view(e);
        let a = self.s.val(Op::Bitcast { from: e.isa() }, u.isa(), &[a]);
        let b = self.s.val(Op::Bitcast { from: e.isa() }, u.isa(), &[b]);
        let m = self.iconst(u, sign as i128);
        let nm = self.iconst(u, !sign as i128 & u.isa().mask() as i128);
        let a = self.s.val(Op::And, u.isa(), &[a, nm]);
        let b = self.s.val(Op::And, u.isa(), &[b, m]);
        let r = self.s.val(Op::Or, u.isa(), &[a, b]);
        self.s.val(Op::Bitcast { from: u.isa() }, e.isa(), &[r])
    }
}

/// The unsigned integer type of a float's width and its sign bit.
fn uint_view(e: Scalar) -> (Scalar, u64) {
    match e {
        Scalar::Float => (Scalar::UInt, 1 << 31),
        _ => (Scalar::UShort, 1 << 15),
    }
}

/// The largest value below 1 of a float type (`fract` never returns 1).
fn below_one(e: Scalar) -> f64 {
    match e {
        Scalar::Float => f32::from_bits(0x3f7f_ffff) as f64,
        Scalar::BFloat => 0.99609375,
        _ => 0.99951171875,
    }
}

/// The smallest positive normal value of a float type.
fn min_normal(e: Scalar) -> f64 {
    match e {
        Scalar::Float => f32::MIN_POSITIVE as f64,
        Scalar::BFloat => f32::MIN_POSITIVE as f64,
        _ => 6.103515625e-05,
    }
}
