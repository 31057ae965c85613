//! The verifier: a function that passes it is well formed, well typed and in SSA form, so
//! the simulator can run it without further checks.

use thiserror::Error;

use crate::cfg::Cfg;
use crate::entity::{Block, Value};
use crate::function::{Function, Module, ParamKind, SrcLoc, Terminator};
use crate::op::{AtomicOp, MathFn, Op, SimdOp, Space};
use crate::print::mnemonic;
use crate::types::Type;

/// A violation of the ISA's rules, with the function and (when known) the source location
/// of the offending instruction.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("in kernel {function}: {message}")]
pub struct VerifyError {
    /// The function's name.
    pub function: String,
    /// What is wrong.
    pub message: String,
    /// Where the offending instruction came from.
    pub loc: SrcLoc,
}

/// Verifies every function of a module.
pub fn verify_module(m: &Module) -> Result<(), VerifyError> {
    for f in &m.functions {
        verify_function(f, m.data.len())?;
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Def {
    None,
    Param(Block),
    Inst(Block, usize),
}

struct Verifier<'a> {
    f: &'a Function,
    data_count: usize,
}

impl Verifier<'_> {
    fn err(&self, message: impl Into<String>, loc: SrcLoc) -> VerifyError {
        VerifyError {
            function: self.f.name.clone(),
            message: message.into(),
            loc,
        }
    }

    fn ty(&self, v: Value, loc: SrcLoc) -> Result<Type, VerifyError> {
        self.f
            .value_types
            .get(v.index())
            .copied()
            .ok_or_else(|| self.err(format!("{v} has no type"), loc))
    }

    fn check_decls(&self) -> Result<(), VerifyError> {
        let f = self.f;
        let none = SrcLoc::UNKNOWN;
        if f.blocks.is_empty() {
            return Err(self.err("no blocks", none));
        }
        if !f.blocks[0].params.is_empty() {
            return Err(self.err("the entry block bb0 has parameters", none));
        }
        if f.insts.len() != f.inst_locs.len() {
            return Err(self.err("instruction location table has the wrong length", none));
        }
        for (i, p) in f.params.iter().enumerate() {
            if f.params[..i]
                .iter()
                .any(|q| q.kind == p.kind && q.index == p.index)
            {
                return Err(self.err(
                    format!("two parameters bound at {}({})", p.kind.name(), p.index),
                    none,
                ));
            }
            if p.elem_size == 0 || !p.elem_align.is_power_of_two() {
                return Err(self.err(
                    format!("parameter {} has a bad size or alignment", p.name),
                    none,
                ));
            }
        }
        for a in f.threadgroup_allocs.iter().chain(&f.locals) {
            if !a.align.is_power_of_two() {
                return Err(self.err(format!("allocation {} has a bad alignment", a.name), none));
            }
        }
        Ok(())
    }

    fn check_inst(&self, op: Op, ty: Type, args: &[Type], loc: SrcLoc) -> Result<(), VerifyError> {
        let m = mnemonic(op);
        let bad = |what: &str| self.err(format!("`{m}.{ty}`: {what}"), loc);
        if args.len() != op.arity() {
            return Err(bad(&format!(
                "takes {} operands, has {}",
                op.arity(),
                args.len()
            )));
        }
        let all_ty = |n: usize| args.iter().take(n).all(|a| *a == ty);
        let numeric = ty.is_int() || ty.is_float();
        match op {
            Op::Const(bits) => {
                if bits & !ty.mask() != 0 {
                    return Err(bad("constant does not fit its type"));
                }
            }
            Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Min
            | Op::Max
            | Op::Div
            | Op::Fma
            | Op::Neg
            | Op::Abs => {
                if !numeric || !all_ty(args.len()) {
                    return Err(bad("needs numeric operands of the instruction type"));
                }
            }
            Op::Rem | Op::Shl | Op::Shr | Op::Clz | Op::Ctz | Op::Popcount | Op::MulHi => {
                if !ty.is_int() || !all_ty(args.len()) {
                    return Err(bad("needs integer operands of the instruction type"));
                }
            }
            Op::And | Op::Or | Op::Xor | Op::Not => {
                if ty.is_float() || !all_ty(args.len()) {
                    return Err(bad(
                        "needs integer or predicate operands of the instruction type",
                    ));
                }
            }
            Op::Math(MathFn::Ldexp) | Op::PreciseMath(MathFn::Ldexp) => {
                if !ty.is_float() || args[0] != ty || args[1] != Type::I32 {
                    return Err(bad("needs a float of the instruction type and an i32"));
                }
            }
            Op::Math(_) | Op::PreciseMath(_) => {
                if !ty.is_float() || !all_ty(args.len()) {
                    return Err(bad("needs float operands of the instruction type"));
                }
            }
            Op::Int(f) => {
                let n = f.typed_operands();
                if !ty.is_int() || !all_ty(n) || !args[n..].iter().all(|t| *t == Type::U32) {
                    return Err(bad(
                        "needs integer operands of the instruction type (and u32 bit positions)",
                    ));
                }
            }
            Op::Cmp(_) => {
                if !all_ty(2) {
                    return Err(bad("operands must have the instruction type"));
                }
            }
            Op::Select => {
                if args[0] != Type::Pred || args[1] != ty || args[2] != ty {
                    return Err(bad(
                        "needs a predicate and two operands of the instruction type",
                    ));
                }
            }
            Op::Cvt { from, .. } => {
                if args[0] != from || ty == Type::Pred {
                    return Err(bad(
                        "operand must have the source type; target cannot be pred",
                    ));
                }
            }
            Op::Bitcast { from } => {
                if args[0] != from || from.bits() != ty.bits() || ty == Type::Pred {
                    return Err(bad("operand must have the source type, of the same width"));
                }
            }
            Op::PtrAdd { .. } => {
                if args[0] != Type::U64 || !args[1].is_int() {
                    return Err(bad("needs a u64 pointer and an integer index"));
                }
            }
            Op::Load(_) | Op::LoadVec(..) => {
                if args[0] != Type::U64 {
                    return Err(bad("needs a u64 address"));
                }
                if let Op::LoadVec(_, n) = op
                    && !(2..=4).contains(&n)
                {
                    return Err(bad("vector loads have 2 to 4 elements"));
                }
            }
            Op::StoreVec(space, n) => {
                if !(2..=4).contains(&n)
                    || args[0] != Type::U64
                    || !args[1..].iter().all(|t| *t == ty)
                {
                    return Err(bad(
                        "needs a u64 address and 2 to 4 values of the instruction type",
                    ));
                }
                if space == Space::Constant {
                    return Err(bad("cannot store to constant memory"));
                }
            }
            Op::MatrixLoad(_, _) | Op::MatrixStore(_, _) => {
                if !matches!(ty, Type::F32 | Type::F16 | Type::BF16) {
                    return Err(bad("SIMD-group matrices hold f32, f16 or bf16"));
                }
                if args[0] != Type::U64
                    || args[1] != Type::U32
                    || !args[2..].iter().all(|t| *t == ty)
                {
                    return Err(bad(
                        "needs a u64 address, a u32 row stride and the two elements",
                    ));
                }
                if let Op::MatrixStore(Space::Constant, _) = op {
                    return Err(bad("cannot store to constant memory"));
                }
            }
            Op::MatrixMac => {
                if !matches!(ty, Type::F32 | Type::F16 | Type::BF16) || !all_ty(6) {
                    return Err(bad("needs six operands of a float instruction type"));
                }
            }
            Op::Store(space) => {
                if args[0] != Type::U64 || args[1] != ty {
                    return Err(bad(
                        "needs a u64 address and a value of the instruction type",
                    ));
                }
                if space == Space::Constant {
                    return Err(bad("cannot store to constant memory"));
                }
            }
            Op::Atomic(a, space) => {
                if !matches!(space, Space::Device | Space::Threadgroup) {
                    return Err(bad("atomics work on device or threadgroup memory"));
                }
                if !matches!(ty, Type::I32 | Type::U32 | Type::F32) {
                    return Err(bad("atomics work on i32, u32 and f32"));
                }
                if ty == Type::F32 && matches!(a, AtomicOp::And | AtomicOp::Or | AtomicOp::Xor) {
                    return Err(bad("bitwise atomics need an integer type"));
                }
                if args[0] != Type::U64 || !args[1..].iter().all(|t| *t == ty) {
                    return Err(bad(
                        "needs a u64 address and values of the instruction type",
                    ));
                }
            }
            Op::Barrier(..) => {}
            Op::Simd(s) | Op::Quad(s) => self.check_simd(s, ty, args, loc, &m)?,
            Op::Sreg(_)
            | Op::BufferAddr(_)
            | Op::ThreadgroupParamAddr(_)
            | Op::ThreadgroupAddr(_)
            | Op::LocalAddr(_)
            | Op::DataAddr(_) => self.check_index(op, loc)?,
        }
        if let Some(t) = op.implied_type()
            && t != ty
        {
            return Err(bad(&format!("the instruction type must be {t}")));
        }
        Ok(())
    }

    fn check_simd(
        &self,
        s: SimdOp,
        ty: Type,
        args: &[Type],
        loc: SrcLoc,
        m: &str,
    ) -> Result<(), VerifyError> {
        let bad = |what: &str| self.err(format!("`{m}.{ty}`: {what}"), loc);
        match s {
            SimdOp::Shuffle
            | SimdOp::ShuffleUp
            | SimdOp::ShuffleDown
            | SimdOp::ShuffleXor
            | SimdOp::ShuffleRotateUp
            | SimdOp::ShuffleRotateDown
            | SimdOp::Broadcast => {
                if args[0] != ty || !args[1].is_int() || args[1].is_wide() {
                    return Err(bad(
                        "needs a value of the instruction type and a 32-bit lane operand",
                    ));
                }
            }
            SimdOp::BroadcastFirst => {
                if args[0] != ty {
                    return Err(bad("operand must have the instruction type"));
                }
            }
            SimdOp::Ballot | SimdOp::All | SimdOp::Any => {
                if ty != Type::Pred || args[0] != Type::Pred {
                    return Err(bad("needs a predicate"));
                }
            }
            SimdOp::And | SimdOp::Or | SimdOp::Xor => {
                if !ty.is_int() || args[0] != ty {
                    return Err(bad("needs an integer operand of the instruction type"));
                }
            }
            SimdOp::Sum
            | SimdOp::Product
            | SimdOp::Min
            | SimdOp::Max
            | SimdOp::PrefixInclusiveSum
            | SimdOp::PrefixExclusiveSum
            | SimdOp::PrefixInclusiveProduct
            | SimdOp::PrefixExclusiveProduct => {
                if ty == Type::Pred || args[0] != ty {
                    return Err(bad("needs a numeric operand of the instruction type"));
                }
            }
            SimdOp::IsFirst | SimdOp::ActiveMask => {}
        }
        Ok(())
    }

    fn check_index(&self, op: Op, loc: SrcLoc) -> Result<(), VerifyError> {
        let f = self.f;
        let ok = match op {
            Op::BufferAddr(n) => f.param(ParamKind::Buffer, n).is_some(),
            Op::ThreadgroupParamAddr(n) => f.param(ParamKind::Threadgroup, n).is_some(),
            Op::ThreadgroupAddr(n) => (n as usize) < f.threadgroup_allocs.len(),
            Op::LocalAddr(n) => (n as usize) < f.locals.len(),
            Op::DataAddr(n) => (n as usize) < self.data_count,
            _ => true,
        };
        if ok {
            Ok(())
        } else {
            Err(self.err(format!("`{}` names nothing declared", mnemonic(op)), loc))
        }
    }

    fn run(&self) -> Result<(), VerifyError> {
        self.check_decls()?;
        let f = self.f;
        let cfg = Cfg::new(f);
        let mut defs = vec![Def::None; f.value_types.len()];
        let mut placed = vec![false; f.insts.len()];
        let mut define = |v: Value, d: Def, loc: SrcLoc, this: &Self| -> Result<(), VerifyError> {
            match defs.get_mut(v.index()) {
                None => Err(this.err(format!("{v} has no type"), loc)),
                Some(slot @ Def::None) => {
                    *slot = d;
                    Ok(())
                }
                Some(_) => Err(this.err(format!("{v} is defined more than once"), loc)),
            }
        };
        for b in f.block_ids() {
            let data = f.block(b);
            for &p in &data.params {
                define(p, Def::Param(b), SrcLoc::UNKNOWN, self)?;
            }
            for (pos, &i) in data.insts.iter().enumerate() {
                let loc = f.inst_locs.get(i.index()).copied().unwrap_or_default();
                let placed_slot = placed
                    .get_mut(i.index())
                    .ok_or_else(|| self.err(format!("{i} is not in the instruction arena"), loc))?;
                if *placed_slot {
                    return Err(self.err(format!("{i} is placed twice"), loc));
                }
                *placed_slot = true;
                let inst = f.inst(i);
                for &r in &inst.results {
                    define(r, Def::Inst(b, pos), loc, self)?;
                }
            }
        }
        for b in f.block_ids() {
            let data = f.block(b);
            for (pos, &i) in data.insts.iter().enumerate() {
                let inst = f.inst(i);
                let loc = f.inst_locs[i.index()];
                let mut arg_tys = Vec::with_capacity(inst.args.len());
                for &a in &inst.args {
                    arg_tys.push(self.ty(a, loc)?);
                    self.check_dominance(&cfg, &defs, a, b, pos, loc)?;
                }
                self.check_inst(inst.op, inst.ty, &arg_tys, loc)?;
                let want = inst.op.result_type(inst.ty);
                let count = want.map_or(0, |_| inst.op.result_count());
                let mut ok = inst.results.len() == count;
                for &r in &inst.results {
                    ok &= Some(self.ty(r, loc)?) == want;
                }
                if !ok {
                    return Err(self.err(
                        format!("`{}` has wrong or missing results", mnemonic(inst.op)),
                        loc,
                    ));
                }
            }
            let loc = data.term_loc;
            let end = data.insts.len();
            for v in data.term.uses() {
                self.ty(v, loc)?;
                self.check_dominance(&cfg, &defs, v, b, end, loc)?;
            }
            if let Terminator::BrIf { cond, .. } = &data.term
                && self.ty(*cond, loc)? != Type::Pred
            {
                return Err(self.err(format!("branch condition {cond} is not a pred"), loc));
            }
            for (t, args) in data.term.targets() {
                let target = f
                    .blocks
                    .get(t.index())
                    .ok_or_else(|| self.err(format!("branch to missing block {t}"), loc))?;
                if target.params.len() != args.len() {
                    return Err(self.err(
                        format!(
                            "{t} takes {} arguments, given {}",
                            target.params.len(),
                            args.len()
                        ),
                        loc,
                    ));
                }
                for (p, a) in target.params.iter().zip(args) {
                    if self.ty(*p, loc)? != self.ty(*a, loc)? {
                        return Err(
                            self.err(format!("argument {a} does not match the type of {p}"), loc)
                        );
                    }
                }
            }
        }
        Ok(())
    }

    fn check_dominance(
        &self,
        cfg: &Cfg,
        defs: &[Def],
        v: Value,
        b: Block,
        pos: usize,
        loc: SrcLoc,
    ) -> Result<(), VerifyError> {
        let ok = match defs.get(v.index()).copied().unwrap_or(Def::None) {
            Def::None => return Err(self.err(format!("{v} is used but never defined"), loc)),
            _ if !cfg.is_reachable(b) => true,
            Def::Param(d) => cfg.dominates(d, b),
            Def::Inst(d, dpos) => {
                if d == b {
                    dpos < pos
                } else {
                    cfg.dominates(d, b)
                }
            }
        };
        if ok {
            Ok(())
        } else {
            Err(self.err(
                format!("{v} is used where its definition does not dominate"),
                loc,
            ))
        }
    }
}

/// Verifies one function; `data_count` is the number of data objects of its module.
pub fn verify_function(f: &Function, data_count: usize) -> Result<(), VerifyError> {
    Verifier { f, data_count }.run()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_module;

    fn check(body: &str) -> Result<(), VerifyError> {
        let text = format!(
            "kernel k {{\n  param buffer(0) a device type \"float\" size 4 align 4\n{body}}}\n"
        );
        let m = parse_module(&text).unwrap();
        verify_module(&m)
    }

    #[test]
    fn accepts_well_formed() {
        check("bb0:\n v0 = buffer_addr.0\n v1 = ld.device.f32 v0\n v2 = add.f32 v1, v1\n st.device.f32 v0, v2\n ret\n")
            .unwrap();
    }

    #[test]
    fn rejects_type_errors() {
        let e = check("bb0:\n v0 = const.u32 1\n v1 = add.f32 v0, v0\n ret\n").unwrap_err();
        assert!(e.message.contains("add.f32"), "{e}");
        let e = check("bb0:\n v0 = const.f32 1.0\n v1 = ld.device.f32 v0\n ret\n").unwrap_err();
        assert!(e.message.contains("u64 address"), "{e}");
        let e = check("bb0:\n v0 = buffer_addr.3\n ret\n").unwrap_err();
        assert!(e.message.contains("names nothing"), "{e}");
        let e = check("bb0:\n v0 = const.u32 1\n br_if v0, bb1, bb1\nbb1:\n ret\n").unwrap_err();
        assert!(e.message.contains("not a pred"), "{e}");
    }

    #[test]
    fn checks_operand_types_of_math_and_integer_functions() {
        let head = "bb0:\n v0 = buffer_addr.0\n v1 = ld.device.f32 v0\n v2 = const.i32 3\n v3 = const.u32 1\n";
        let ok = |body: &str| check(&format!("{head}{body} ret\n"));
        ok(" v4 = ldexp.f32 v1, v2\n v5 = atan2.precise.f32 v1, v1\n v6 = extract_bits.i32 v2, v3, v3\n v7 = insert_bits.i32 v2, v2, v3, v3\n v8 = madsat.i32 v2, v2, v2\n").unwrap();
        let e = ok(" v4 = ldexp.f32 v1, v1\n").unwrap_err();
        assert!(e.message.contains("i32"), "{e}");
        let e = ok(" v4 = extract_bits.i32 v2, v2, v3\n").unwrap_err();
        assert!(e.message.contains("u32 bit positions"), "{e}");
        let e = ok(" v4 = addsat.f32 v1, v1\n").unwrap_err();
        assert!(e.message.contains("integer"), "{e}");
        let e = ok(" v4 = fmod.i32 v2, v2\n").unwrap_err();
        assert!(e.message.contains("float"), "{e}");
    }

    #[test]
    fn rejects_non_dominating_use() {
        let e = check(
            "bb0:\n v0 = const.pred true\n br_if v0, bb1, bb2\nbb1:\n v1 = const.f32 1.0\n br bb2\nbb2:\n v2 = add.f32 v1, v1\n ret\n",
        )
        .unwrap_err();
        assert!(e.message.contains("does not dominate"), "{e}");
    }

    #[test]
    fn rejects_branch_argument_mismatch() {
        let e = check("bb0:\n v0 = const.f32 1.0\n br bb1(v0)\nbb1(v1:u32):\n ret\n").unwrap_err();
        assert!(e.message.contains("does not match"), "{e}");
        let e = check("bb0:\n br bb1\nbb1(v1:u32):\n ret\n").unwrap_err();
        assert!(e.message.contains("takes 1 arguments"), "{e}");
    }
}
