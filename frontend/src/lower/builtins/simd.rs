//! SIMD-group and quad-group functions (6.9.2 and 6.9.3): shuffles, broadcasts,
//! reductions, prefix scans, votes.

use metalsim_isa::{CmpCond, Op, SimdOp, SpecialReg, Type, Value};

use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Val};
use crate::source::Span;

/// The cross-lane operation of a `simd_`/`quad_` function, by the rest of its name.
pub fn op_of(rest: &str) -> Option<SimdOp> {
    Some(match rest {
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
        "ballot" | "vote" => SimdOp::Ballot,
        "all" => SimdOp::All,
        "any" => SimdOp::Any,
        "is_first" => SimdOp::IsFirst,
        "active_threads_mask" => SimdOp::ActiveMask,
        _ => return None,
    })
}

impl FnLowerer<'_, '_> {
    /// The prelude's `metal::simd_vote` (a struct of the ballot's `ulong` bits).
    fn simd_vote_type(&mut self, span: Span) -> Option<Ty> {
        let mut path = crate::ast::Path::simple("metal", span);
        path.global = true;
        path.segments
            .extend(crate::ast::Path::simple("simd_vote", span).segments);
        let te = crate::ast::TypeExpr {
            kind: crate::ast::TypeKind::Named(path),
            span,
        };
        Some(self.resolve_type(&te)?.ty)
    }

    /// `simd_*` and `quad_*` functions; `None` when the name is not one.
    pub fn cross_lane(
        &mut self,
        name: &str,
        rest: &str,
        quad: bool,
        vals: &[Val],
        span: Span,
    ) -> Option<Option<Val>> {
        if let Some(dir) = rest.strip_prefix("shuffle_and_fill_") {
            return Some(self.shuffle_and_fill(name, dir == "up", quad, vals, span));
        }
        let sop = op_of(rest)?;
        let wrap = |o: SimdOp| if quad { Op::Quad(o) } else { Op::Simd(o) };
        Some((|| {
            self.arity(name, vals, sop.arity(), span)?;
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
                        self.simd_vote_type(span)?
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
                    let v = if elem == Scalar::Bool && sop.is_reduction() {
                        self.error(format!("`{name}` cannot take a `bool`"), span);
                        return None;
                    } else {
                        v
                    };
                    let lane = if sop.arity() == 2 {
                        let l =
                            self.convert(vals[1].clone(), &Ty::Scalar(Scalar::UShort), true, span)?;
                        let l = self.scalar_cvt(l.parts[0], Scalar::UShort, Scalar::UInt);
                        Some(l)
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

    /// `simd_shuffle_and_fill_up(data, filling, delta[, modulo])` and `_down`: shuffle
    /// within groups of `modulo` lanes (the whole SIMD-group by default), taking the lanes
    /// shifted in from `filling`.
    fn shuffle_and_fill(
        &mut self,
        name: &str,
        up: bool,
        quad: bool,
        vals: &[Val],
        span: Span,
    ) -> Option<Val> {
        if !(3..=4).contains(&vals.len()) {
            self.error(format!("`{name}` takes 3 or 4 arguments"), span);
            return None;
        }
        let ty = vals[0].ty.clone();
        let Some(elem) = ty.elem_scalar() else {
            let t = self.show(&ty);
            self.error(format!("`{name}` cannot take a `{t}`"), span);
            return None;
        };
        let data = vals[0].clone();
        let fill = self.convert(vals[1].clone(), &ty, false, span)?;
        let delta = self.convert(vals[2].clone(), &Ty::UINT, true, span)?.parts[0];
        let width = if quad { 4 } else { 32 };
        let modulo = match vals.get(3) {
            Some(m) => self.convert(m.clone(), &Ty::UINT, true, span)?.parts[0],
            None => self.const_u32(width),
        };
        let wrap = |o: SimdOp| if quad { Op::Quad(o) } else { Op::Simd(o) };
        let lane_reg = if quad {
            SpecialReg::ThreadIndexInQuadgroup
        } else {
            SpecialReg::ThreadIndexInSimdgroup
        };
        let lane = self.s.val(Op::Sreg(lane_reg), Type::U32, &[]);
        // Within a group of `modulo` lanes: position and group base.
        let pos = self.s.val(Op::Rem, Type::U32, &[lane, modulo]);
        let base = self.s.val(Op::Sub, Type::U32, &[lane, pos]);
        let (src_pos, from_fill) = if up {
            // Lane p takes p - delta; below delta it takes filling[p - delta + modulo].
            let shifted = self.s.val(Op::Sub, Type::U32, &[pos, delta]);
            let wrapped = self.s.val(Op::Add, Type::U32, &[shifted, modulo]);
            let low = self.s.val(Op::Cmp(CmpCond::Lt), Type::U32, &[pos, delta]);
            let p = self.s.val(Op::Select, Type::U32, &[low, wrapped, shifted]);
            (p, low)
        } else {
            // Lane p takes p + delta; past the group it takes filling[p + delta - modulo].
            let shifted = self.s.val(Op::Add, Type::U32, &[pos, delta]);
            let wrapped = self.s.val(Op::Sub, Type::U32, &[shifted, modulo]);
            let high = self
                .s
                .val(Op::Cmp(CmpCond::Ge), Type::U32, &[shifted, modulo]);
            let p = self.s.val(Op::Select, Type::U32, &[high, wrapped, shifted]);
            (p, high)
        };
        let src = self.s.val(Op::Add, Type::U32, &[base, src_pos]);
        let parts: Vec<Value> = data
            .parts
            .iter()
            .zip(&fill.parts)
            .map(|(d, f)| {
                let a = self.s.val(wrap(SimdOp::Shuffle), elem.isa(), &[*d, src]);
                let b = self.s.val(wrap(SimdOp::Shuffle), elem.isa(), &[*f, src]);
                self.s.val(Op::Select, elem.isa(), &[from_fill, b, a])
            })
            .collect();
        Some(Val { ty, parts })
    }
}
