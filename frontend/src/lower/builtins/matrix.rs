//! SIMD-group matrices (6.11): `simdgroup_matrix<T, 8, 8>` construction, loads, stores,
//! multiply-accumulate and `thread_elements()`. Each thread holds two elements, placed as
//! [`metalsim_isa::matrix_element`] says.

use metalsim_isa::{CmpCond, Op, SpecialReg, Type, Value};

use crate::ast::Expr;
use crate::lower::templates::TArg;
use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Operand, Place, Val};
use crate::source::Span;

impl FnLowerer<'_, '_> {
    /// The matrix builtins that return a value (`make_filled_simdgroup_matrix`).
    pub fn matrix_value(
        &mut self,
        name: &str,
        targs: &[TArg],
        vals: &[Val],
        span: Span,
    ) -> Option<Option<Val>> {
        if name != "make_filled_simdgroup_matrix" {
            return None;
        }
        Some((|| {
            self.arity(name, vals, 1, span)?;
            let elem = match targs.first() {
                Some(TArg::Type(Ty::Scalar(s))) => *s,
                None => vals[0].ty.elem_scalar().unwrap_or(Scalar::Float),
                _ => {
                    self.error(
                        "`make_filled_simdgroup_matrix<T, 8, 8>` needs float, half or bfloat",
                        span,
                    );
                    return None;
                }
            };
            let ty = self.matrix_type(elem, span)?;
            let v = self.convert(vals[0].clone(), &Ty::Scalar(elem), true, span)?;
            Some(Val {
                ty,
                parts: vec![v.parts[0], v.parts[0]],
            })
        })())
    }

    fn matrix_type(&mut self, elem: Scalar, span: Span) -> Option<Ty> {
        if !matches!(elem, Scalar::Float | Scalar::Half | Scalar::BFloat) {
            self.error(
                format!("SIMD-group matrices hold float, half or bfloat, not `{elem}`"),
                span,
            );
            return None;
        }
        Some(Ty::SimdMatrix(elem))
    }

    /// `simdgroup_float8x8(d)`: the diagonal matrix with `d` on its diagonal.
    pub fn diagonal_matrix(&mut self, elem: Scalar, d: Val, span: Span) -> Option<Val> {
        let d = self.convert(d, &Ty::Scalar(elem), true, span)?.parts[0];
        let lane = self
            .s
            .val(Op::Sreg(SpecialReg::ThreadIndexInSimdgroup), Type::U32, &[]);
        // matrix_element: quad = lane / 4; row = (quad / 4) * 4 + (lane / 2) % 4;
        // col = (quad & 2) * 2 + (lane % 2) * 2 + k.
        let u = |me: &mut Self, v: u32| me.const_u32(v);
        let c2 = u(self, 2);
        let c4 = u(self, 4);
        let c1 = u(self, 1);
        let quad = self.s.val(Op::Div, Type::U32, &[lane, c4]);
        let q4 = self.s.val(Op::Div, Type::U32, &[quad, c4]);
        let q4 = self.s.val(Op::Mul, Type::U32, &[q4, c4]);
        let l2 = self.s.val(Op::Div, Type::U32, &[lane, c2]);
        let l2 = self.s.val(Op::Rem, Type::U32, &[l2, c4]);
        let row = self.s.val(Op::Add, Type::U32, &[q4, l2]);
        let qa = self.s.val(Op::And, Type::U32, &[quad, c2]);
        let qa = self.s.val(Op::Mul, Type::U32, &[qa, c2]);
        let lm = self.s.val(Op::Rem, Type::U32, &[lane, c2]);
        let lm = self.s.val(Op::Mul, Type::U32, &[lm, c2]);
        let col0 = self.s.val(Op::Add, Type::U32, &[qa, lm]);
        let col1 = self.s.val(Op::Add, Type::U32, &[col0, c1]);
        let z = self.constant(crate::lower::consteval::Const::float(elem, 0.0));
        let parts = [col0, col1]
            .iter()
            .map(|c| {
                let on = self.s.val(Op::Cmp(CmpCond::Eq), Type::U32, &[row, *c]);
                self.s.val(Op::Select, elem.isa(), &[on, d, z])
            })
            .collect();
        Some(Val {
            ty: Ty::SimdMatrix(elem),
            parts,
        })
    }

    /// `simdgroup_load`, `simdgroup_store`, `simdgroup_multiply(_accumulate)`.
    pub fn matrix_builtin(
        &mut self,
        name: &str,
        args: &[(Operand, Span)],
        span: Span,
    ) -> Option<Val> {
        match name {
            "simdgroup_load" | "simdgroup_store" => self.matrix_memory(name, args, span),
            _ => {
                let n = if name == "simdgroup_multiply" { 3 } else { 4 };
                if args.len() != n {
                    self.error(
                        format!("`{name}` takes {n} arguments, found {}", args.len()),
                        span,
                    );
                    return None;
                }
                let d = self.out_place(&args[0], name)?;
                let Ty::SimdMatrix(elem) = self.place_ty(&d) else {
                    self.error(format!("`{name}` writes a `simdgroup_matrix`"), args[0].1);
                    return None;
                };
                let mut ops: Vec<Value> = Vec::new();
                for (op, s) in &args[1..] {
                    let v = self.load_operand(op.clone(), *s)?;
                    let Ty::SimdMatrix(e) = v.ty else {
                        let t = self.show(&v.ty);
                        self.error(
                            format!("`{name}` needs SIMD-group matrices, found `{t}`"),
                            *s,
                        );
                        return None;
                    };
                    for p in v.parts {
                        ops.push(self.scalar_cvt(p, e, elem));
                    }
                }
                if n == 3 {
                    // D = A * B: accumulate onto zero.
                    let z = self.constant(crate::lower::consteval::Const::float(elem, 0.0));
                    ops.push(z);
                    ops.push(z);
                }
                self.at(span);
                let r = self.s.b.ins_multi(Op::MatrixMac, elem.isa(), &ops);
                let v = Val {
                    ty: Ty::SimdMatrix(elem),
                    parts: r,
                };
                self.store(&d, &v, span)?;
                Some(Val::void())
            }
        }
    }

    /// `simdgroup_load(d, src, elements_per_row = 8, matrix_origin = 0, transpose = false)`
    /// and `simdgroup_store(m, dst, ...)`.
    fn matrix_memory(&mut self, name: &str, args: &[(Operand, Span)], span: Span) -> Option<Val> {
        if !(2..=5).contains(&args.len()) {
            self.error(format!("`{name}` takes 2 to 5 arguments"), span);
            return None;
        }
        let load = name == "simdgroup_load";
        let (mat_place, mat_val) = if load {
            (Some(self.out_place(&args[0], name)?), None)
        } else {
            (None, Some(self.load_operand(args[0].0.clone(), args[0].1)?))
        };
        let mty = match (&mat_place, &mat_val) {
            (Some(p), _) => self.place_ty(p),
            (_, Some(v)) => v.ty.clone(),
            _ => return None,
        };
        let Ty::SimdMatrix(elem) = mty else {
            let t = self.show(&mty);
            self.error(
                format!("`{name}` needs a `simdgroup_matrix`, found `{t}`"),
                args[0].1,
            );
            return None;
        };
        let ptr = self.load_operand(args[1].0.clone(), args[1].1)?;
        let (space, is_const) = match &ptr.ty {
            Ty::Pointer(p) if p.pointee == Ty::Scalar(elem) => (p.space, p.is_const),
            other => {
                let t = self.show(other);
                self.error(
                    format!("`{name}` needs a pointer to `{elem}` (the matrix's element type), found `{t}`"),
                    args[1].1,
                );
                return None;
            }
        };
        if !load && (is_const || space == metalsim_isa::Space::Constant) {
            self.error(
                "`simdgroup_store` cannot write `const` or `constant` memory",
                args[1].1,
            );
            return None;
        }
        let stride = match args.get(2) {
            Some((op, s)) => {
                let v = self.load_operand(op.clone(), *s)?;
                self.convert(v, &Ty::UINT, true, *s)?.parts[0]
            }
            None => self.const_u32(8),
        };
        let mut addr = ptr.parts[0];
        if let Some((op, s)) = args.get(3) {
            let o = self.load_operand(op.clone(), *s)?;
            let o = self.convert(o, &Ty::vector(Scalar::ULong, 2), true, *s)?;
            let stride64 = self.scalar_cvt(stride, Scalar::UInt, Scalar::ULong);
            let rows = self.s.val(Op::Mul, Type::U64, &[o.parts[1], stride64]);
            let off = self.s.val(Op::Add, Type::U64, &[rows, o.parts[0]]);
            addr = self
                .s
                .val(Op::PtrAdd { scale: elem.size() }, Type::U64, &[addr, off]);
        }
        let transpose = match args.get(4) {
            Some((op, s)) => {
                let v = self.load_operand(op.clone(), *s)?;
                match v.parts.first().and_then(|p| self.s.const_bits(*p)) {
                    Some(bits) => bits != 0,
                    None => {
                        self.error("`transpose_matrix` must be a constant", *s);
                        return None;
                    }
                }
            }
            None => false,
        };
        self.at(span);
        if load {
            let r = self.s.b.ins_multi(
                Op::MatrixLoad(space, transpose),
                elem.isa(),
                &[addr, stride],
            );
            let v = Val {
                ty: Ty::SimdMatrix(elem),
                parts: r,
            };
            let place: Place = mat_place?;
            self.store(&place, &v, span)?;
        } else {
            let v = mat_val?;
            self.s.ins(
                Op::MatrixStore(space, transpose),
                elem.isa(),
                &[addr, stride, v.parts[0], v.parts[1]],
            );
        }
        Some(Val::void())
    }

    /// A method of a SIMD-group matrix: `thread_elements()`.
    pub fn matrix_method(
        &mut self,
        obj: Place,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Option<Operand> {
        let Ty::SimdMatrix(elem) = self.place_ty(&obj) else {
            return None;
        };
        if name != "thread_elements" || !args.is_empty() {
            self.error(
                format!("`simdgroup_matrix` has no method `{name}` (it has `thread_elements()`)"),
                span,
            );
            return None;
        }
        // The thread's two elements, seen as a `vec<T, 2>` object.
        let place = match obj {
            Place::Var {
                slots, is_const, ..
            } => Place::Var {
                ty: Ty::vector(elem, 2),
                slots,
                is_const,
            },
            Place::Mem {
                addr,
                offset,
                space,
                is_const,
                ..
            } => Place::Mem {
                ty: Ty::vector(elem, 2),
                addr,
                offset,
                space,
                is_const,
            },
            other => other,
        };
        Some(Operand::Place {
            place,
            cached: None,
        })
    }
}
