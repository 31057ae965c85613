//! Constant folding and algebraic simplification.
//!
//! An instruction whose operands are all constants becomes a constant when
//! [`eval`](super::eval) can compute it exactly as the simulator would. Integer and
//! predicate identities (`x + 0`, `x * 1`, `x & x`, `select c, a, a`...) replace an
//! instruction by one of its operands or by a constant. Float identities are left alone:
//! `x + 0.0` is not `x` for `x = -0.0`, and `x * 1.0` quiets a signaling NaN.
//! `threads_per_simdgroup` and `thread_execution_width` are the constant 32.

use crate::cfg::Cfg;
use crate::entity::Value;
use crate::function::{Function, InstData};
use crate::op::{CmpCond, Op, SpecialReg};
use crate::passes::edit::{Def, Substitution, constants, def_sites, make_const};
use crate::passes::eval::{eval, extend};
use crate::passes::ranges::SIMD_WIDTH;
use crate::types::Type;

/// What an instruction simplifies to.
enum Folded {
    /// A constant of the result's type.
    Const(u64),
    /// One of its operands (or another existing value).
    Value(Value),
    /// A cheaper instruction computing the same result.
    Inst(Op, Type, Vec<Value>),
}

/// Folds constants and applies integer identities. Returns the number of instructions
/// changed.
pub fn fold_constants(f: &mut Function) -> usize {
    let cfg = Cfg::new(f);
    let defs = def_sites(f);
    let mut consts = constants(f);
    let mut subst = Substitution::new(f);
    let mut changed = 0;
    for &b in cfg.reverse_postorder() {
        for k in 0..f.blocks[b.index()].insts.len() {
            let i = f.blocks[b.index()].insts[k];
            let mut inst = f.insts[i.index()].clone();
            for a in &mut inst.args {
                *a = subst.resolve(*a);
            }
            let Some(r) = inst.result() else { continue };
            if inst.results.len() != 1 || matches!(inst.op, Op::Const(_)) {
                continue;
            }
            let folded = fold_one(f, &inst, &consts, &defs);
            match folded {
                Some(Folded::Const(bits)) => {
                    make_const(f, i, bits);
                    consts[r.index()] = Some(bits & f.value_type(r).mask());
                }
                Some(Folded::Value(v)) => {
                    if !subst.set(r, v) {
                        continue;
                    }
                }
                Some(Folded::Inst(op, ty, args)) => {
                    let data = &mut f.insts[i.index()];
                    data.op = op;
                    data.ty = ty;
                    data.args = args;
                }
                None => continue,
            }
            changed += 1;
        }
    }
    subst.apply(f);
    changed
}

/// The simplification of one instruction, if any.
fn fold_one(f: &Function, inst: &InstData, consts: &[Option<u64>], defs: &[Def]) -> Option<Folded> {
    let op = inst.op;
    let ty = inst.ty;
    if let Op::Sreg(SpecialReg::ThreadsPerSimdgroup | SpecialReg::ThreadExecutionWidth) = op {
        return Some(Folded::Const(SIMD_WIDTH as u64));
    }
    if !foldable(op) {
        return None;
    }
    let c = |k: usize| consts[inst.args[k].index()];
    let operands: Option<Vec<(u64, Type)>> = inst
        .args
        .iter()
        .map(|&a| consts[a.index()].map(|bits| (bits, f.value_type(a))))
        .collect();
    if let Some(operands) = operands
        && let Some(bits) = eval(op, ty, &operands)
    {
        return Some(Folded::Const(bits));
    }
    if op == Op::Select {
        let (cond, a, b) = (inst.args[0], inst.args[1], inst.args[2]);
        return match c(0) {
            Some(bits) => Some(Folded::Value(if bits & 1 == 1 { a } else { b })),
            None if a == b => Some(Folded::Value(a)),
            None => select_of_predicates(ty, cond, consts, a, b),
        };
    }
    if let Op::PtrAdd { scale } = op {
        return (scale == 0 || c(1) == Some(0)).then_some(Folded::Value(inst.args[0]));
    }
    if !(ty.is_int() || ty == Type::Pred) {
        return None;
    }
    identity(op, ty, inst, consts, defs, f)
}

/// Pure operations whose value depends only on their operands.
fn foldable(op: Op) -> bool {
    !(op.has_side_effect()
        || op.reads_memory()
        || op.is_cross_lane()
        || matches!(
            op,
            Op::Sreg(_)
                | Op::BufferAddr(_)
                | Op::ThreadgroupParamAddr(_)
                | Op::ThreadgroupAddr(_)
                | Op::LocalAddr(_)
                | Op::DataAddr(_)
        ))
}

/// `select c, true, false` is `c`; `select c, false, true` is `not c`.
fn select_of_predicates(
    ty: Type,
    cond: Value,
    consts: &[Option<u64>],
    a: Value,
    b: Value,
) -> Option<Folded> {
    if ty != Type::Pred {
        return None;
    }
    match (consts[a.index()], consts[b.index()]) {
        (Some(1), Some(0)) => Some(Folded::Value(cond)),
        (Some(0), Some(1)) => Some(Folded::Inst(Op::Not, Type::Pred, vec![cond])),
        _ => None,
    }
}

/// Integer and predicate identities.
fn identity(
    op: Op,
    ty: Type,
    inst: &InstData,
    consts: &[Option<u64>],
    defs: &[Def],
    f: &Function,
) -> Option<Folded> {
    let args = &inst.args;
    let m = ty.mask();
    let konst = |k: usize| args.get(k).and_then(|a| consts[a.index()]);
    let (x, y) = (args.first().copied(), args.get(1).copied());
    let same = x.is_some() && x == y;
    let value = |k: usize| Some(Folded::Value(args[k]));
    // The constant operand of a binary operation and the other operand's index.
    let one_const = || match (konst(0), konst(1)) {
        (Some(c), None) => Some((c, 1usize)),
        (None, Some(c)) => Some((c, 0usize)),
        _ => None,
    };
    let commutative = matches!(
        op,
        Op::Add | Op::Mul | Op::And | Op::Or | Op::Xor | Op::Min | Op::Max
    );
    match op {
        Op::Sub | Op::Xor if same => Some(Folded::Const(0)),
        Op::And | Op::Or | Op::Min | Op::Max if same => value(0),
        Op::Cmp(cond) if same => Some(Folded::Const(matches!(
            cond,
            CmpCond::Eq | CmpCond::Le | CmpCond::Ge
        ) as u64)),
        Op::Not => match defs[args[0].index()] {
            Def::Inst(_, d) if f.inst(d).op == Op::Not => Some(Folded::Value(f.inst(d).args[0])),
            _ => None,
        },
        Op::Sub | Op::Shl | Op::Shr => match konst(1) {
            Some(0) => value(0),
            Some(c) if op != Op::Sub && c & (ty.bits() as u64 - 1) == 0 => value(0),
            _ => None,
        },
        Op::Div => match konst(1) {
            Some(1) => value(0),
            _ => None,
        },
        Op::Rem => match konst(1) {
            Some(1) => Some(Folded::Const(0)),
            Some(c) if ty.is_signed() && extend(c, ty) == -1 => Some(Folded::Const(0)),
            _ => None,
        },
        Op::Fma => match (konst(0), konst(1)) {
            (Some(0), _) | (_, Some(0)) => value(2),
            (Some(1), _) => Some(Folded::Inst(Op::Add, ty, vec![args[1], args[2]])),
            (_, Some(1)) => Some(Folded::Inst(Op::Add, ty, vec![args[0], args[2]])),
            _ => None,
        },
        _ if commutative => {
            let (c, other) = one_const()?;
            match op {
                Op::Add | Op::Or | Op::Xor if c == 0 => value(other),
                Op::Mul if c == 1 => value(other),
                Op::Mul | Op::And if c == 0 => Some(Folded::Const(0)),
                Op::And if c == m => value(other),
                Op::Or if c == m => Some(Folded::Const(m)),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::dce::eliminate_dead_code;
    use crate::{parse_module, verify_function};

    fn check(body: &str, expect: &str) {
        let mut m = parse_module(&format!("kernel k {{\n{body}}}\n")).unwrap();
        let f = &mut m.functions[0];
        fold_constants(f);
        eliminate_dead_code(f);
        verify_function(f, 0).unwrap();
        let got = crate::passes::body_text(f);
        assert_eq!(got, expect);
    }

    #[test]
    fn chains_of_constants_fold() {
        check(
            "bb0:\n v0 = const.u32 6\n v1 = const.u32 7\n v2 = mul.u32 v0, v1\n v3 = cvt.u32.f32 v2\n v4 = sreg.thread_index_in_simdgroup\n v5 = cvt.f32.u32 v3\n v6 = cmp.lt.u32 v4, v5\n br_if v6, bb1, bb1\nbb1:\n ret\n",
            "bb0:\nv4 = sreg.thread_index_in_simdgroup\nv5 = const.u32 42\nv6 = cmp.lt.u32 v4, v5\nbr_if v6, bb1, bb1\nbb1:\nret\n",
        );
    }

    #[test]
    fn integer_identities() {
        check(
            "bb0:\n v0 = sreg.thread_index_in_simdgroup\n v1 = const.u32 0\n v2 = add.u32 v1, v0\n v3 = const.u32 1\n v4 = mul.u32 v2, v3\n v5 = sub.u32 v4, v4\n v6 = or.u32 v4, v5\n v7 = cmp.lt.u32 v6, v0\n br_if v7, bb1, bb1\nbb1:\n ret\n",
            "bb0:\nv7 = const.pred false\nbr_if v7, bb1, bb1\nbb1:\nret\n",
        );
    }

    #[test]
    fn float_identities_are_left_alone() {
        check(
            "bb0:\n v0 = sreg.thread_index_in_simdgroup\n v1 = cvt.u32.f32 v0\n v2 = const.f32 0.0\n v3 = add.f32 v1, v2\n v4 = cmp.lt.f32 v3, v2\n br_if v4, bb1, bb1\nbb1:\n ret\n",
            "bb0:\nv0 = sreg.thread_index_in_simdgroup\nv1 = cvt.u32.f32 v0\nv2 = const.f32 0.0\nv3 = add.f32 v1, v2\nv4 = cmp.lt.f32 v3, v2\nbr_if v4, bb1, bb1\nbb1:\nret\n",
        );
    }

    #[test]
    fn simd_width_is_constant() {
        check(
            "bb0:\n v0 = sreg.threads_per_simdgroup\n v1 = const.u32 2\n v2 = div.u32 v0, v1\n v3 = sreg.thread_index_in_simdgroup\n v4 = cmp.lt.u32 v3, v2\n br_if v4, bb1, bb1\nbb1:\n ret\n",
            "bb0:\nv2 = const.u32 16\nv3 = sreg.thread_index_in_simdgroup\nv4 = cmp.lt.u32 v3, v2\nbr_if v4, bb1, bb1\nbb1:\nret\n",
        );
    }
}
