//! Induction-variable strength reduction: in a loop where `i` steps by `s` each
//! iteration, `i * x` (with `x` the same in every iteration) becomes a value of its own
//! that starts at `i0 * x` and steps by `s * x`: an addition per iteration instead of a
//! multiplication; so does `(i + c) * x` for a constant `c` (the copies of an unrolled
//! loop), starting at `(i0 + c) * x`. And `i + x`, when `i` serves for nothing else,
//! becomes a variable that starts at `i0 + x` and steps by `s`, so `i` and its update go.
//!
//! Exact for every integer type: integer arithmetic is modulo 2^width, where
//! `(i0 + t*s) * x = i0*x + t*(s*x)`, `(i0 + t*s + c) * x = (i0 + c)*x + t*(s*x)` and
//! `(i0 + t*s) + x = (i0 + x) + t*s`.

use crate::cfg::Cfg;
use crate::entity::Value;
use crate::function::{Function, Terminator};
use crate::op::Op;
use crate::passes::edit::{
    Def, Substitution, constants, def_block, def_sites, new_inst, new_value, use_counts,
};
use crate::passes::loops::{create_preheaders, find_loops};

/// Replaces products (and sums) of a loop's induction variables and loop-invariant values
/// with new induction variables. Returns how many were replaced.
pub fn reduce_induction_variables(f: &mut Function) -> usize {
    let mut replaced = 0;
    create_preheaders(f, |_| true);
    for _ in 0..64 {
        let Some(c) = find_candidate(f) else { break };
        apply(f, &c);
        replaced += 1;
    }
    replaced
}

/// `product = iv * factor` (or `iv + factor`) in a loop whose header parameter `iv`
/// steps by `step`.
struct Candidate {
    op: Op,
    preheader: crate::entity::Block,
    header: crate::entity::Block,
    latch: crate::entity::Block,
    /// Position of the induction variable among the header's parameters.
    iv: usize,
    step: Value,
    factor: Value,
    /// The constant `c` of a product `(i + c) * x`.
    offset: Option<Value>,
    product: Value,
}

fn find_candidate(f: &Function) -> Option<Candidate> {
    let cfg = Cfg::new(f);
    let defs = def_sites(f);
    let consts = constants(f);
    let uses = use_counts(f);
    for lp in find_loops(f, &cfg) {
        let (Some(pre), Some(latch)) = (lp.preheader(f, &cfg), lp.single_latch()) else {
            continue;
        };
        let Terminator::Br(_, next) = &f.block(latch).term else {
            continue;
        };
        let h = lp.header;
        let invariant = |v: Value| def_block(defs[v.index()]).is_some_and(|b| !lp.contains(b));
        // Basic induction variables: parameter k of the header, stepping by an invariant.
        let ivs: Vec<(usize, Value, Value)> = f
            .block(h)
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| f.value_type(**p).is_int())
            .filter_map(|(k, &p)| {
                let Def::Inst(_, i) = defs[next.get(k)?.index()] else {
                    return None;
                };
                let inst = f.inst(i);
                if inst.op != Op::Add {
                    return None;
                }
                let step = match (inst.args[0] == p, inst.args[1] == p) {
                    (true, _) => inst.args[1],
                    (_, true) => inst.args[0],
                    _ => return None,
                };
                invariant(step).then_some((k, p, step))
            })
            .collect();
        for &b in &lp.blocks {
            for &i in &f.block(b).insts {
                let inst = f.inst(i);
                if !matches!(inst.op, Op::Mul | Op::Add) || !inst.ty.is_int() {
                    continue;
                }
                for &(k, p, step) in &ivs {
                    // A sum helps only when the variable then serves for nothing else: it
                    // is read by this sum and by its own update, which only the latch reads.
                    if inst.op == Op::Add
                        && (uses[p.index()] != 2
                            || next[k] == inst.results[0]
                            || uses[next[k].index()] != 1)
                    {
                        continue;
                    }
                    // `i * x`, or (products only) `(i + c) * x` for a constant `c`,
                    // as an unrolled loop's copies compute.
                    let offset_of = |v: Value| -> Option<Value> {
                        let Def::Inst(_, d) = defs[v.index()] else {
                            return None;
                        };
                        let add = f.inst(d);
                        if inst.op != Op::Mul || add.op != Op::Add || add.ty != inst.ty {
                            return None;
                        }
                        let c = match (add.args[0] == p, add.args[1] == p) {
                            (true, _) => add.args[1],
                            (_, true) => add.args[0],
                            _ => return None,
                        };
                        consts[c.index()].is_some().then_some(c)
                    };
                    let (factor, offset) = match (inst.args[0] == p, inst.args[1] == p) {
                        (true, _) => (inst.args[1], None),
                        (_, true) => (inst.args[0], None),
                        _ => match (offset_of(inst.args[0]), offset_of(inst.args[1])) {
                            (Some(c), _) => (inst.args[1], Some(c)),
                            (_, Some(c)) => (inst.args[0], Some(c)),
                            _ => continue,
                        },
                    };
                    // A constant factor is better left to strength reduction (a shift).
                    if invariant(factor) && consts[factor.index()].is_none() {
                        return Some(Candidate {
                            op: inst.op,
                            preheader: pre,
                            header: h,
                            latch,
                            iv: k,
                            step,
                            factor,
                            offset,
                            product: inst.results[0],
                        });
                    }
                }
            }
        }
    }
    None
}

fn apply(f: &mut Function, c: &Candidate) {
    let ty = f.value_type(c.product);
    let Terminator::Br(_, init) = f.block(c.preheader).term.clone() else {
        return;
    };
    let loc = f.block(c.header).term_loc;
    // In the preheader: the first value and the step of the new variable.
    let first = match c.offset {
        Some(off) => {
            let shifted = new_inst(f, Op::Add, ty, vec![init[c.iv], off], loc);
            f.blocks[c.preheader.index()].insts.push(shifted);
            f.insts[shifted.index()].results[0]
        }
        None => init[c.iv],
    };
    let start = new_inst(f, c.op, ty, vec![first, c.factor], loc);
    let start_v = f.insts[start.index()].results[0];
    f.blocks[c.preheader.index()].insts.push(start);
    let stride_v = if c.op == Op::Mul {
        let stride = new_inst(f, Op::Mul, ty, vec![c.step, c.factor], loc);
        f.blocks[c.preheader.index()].insts.push(stride);
        f.insts[stride.index()].results[0]
    } else {
        c.step
    };
    // In the header: the variable; in the latch: its next value.
    let var = new_value(f, ty);
    f.blocks[c.header.index()].params.push(var);
    let bump = new_inst(f, Op::Add, ty, vec![var, stride_v], loc);
    let bump_v = f.insts[bump.index()].results[0];
    f.blocks[c.latch.index()].insts.push(bump);
    for (b, v) in [(c.preheader, start_v), (c.latch, bump_v)] {
        if let Terminator::Br(t, args) = &mut f.blocks[b.index()].term
            && *t == c.header
        {
            args.push(v);
        }
    }
    let mut subst = Substitution::new(f);
    subst.set(c.product, var);
    subst.apply(f);
    for data in &mut f.blocks {
        data.insts
            .retain(|&i| f.insts[i.index()].results.first() != Some(&c.product));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::dce::eliminate_dead_code;
    use crate::{parse_module, verify_function};

    #[test]
    fn multiplication_by_the_induction_variable_becomes_an_addition() {
        let text = "kernel k {\n  param buffer(0) a device type \"uint\" size 4 align 4\nbb0:\n v0 = buffer_addr.0\n v1 = ld.device.u32 v0\n v2 = const.u32 0\n v7 = const.u32 1\n br bb1(v2)\nbb1(v3:u32):\n v4 = cmp.lt.u32 v3, v1\n br_if v4, bb2, bb3\nbb2:\n v5 = mul.u32 v3, v1\n v6 = ptradd.4 v0, v5\n st.device.u32 v6, v3\n v8 = add.u32 v3, v7\n br bb1(v8)\nbb3:\n ret\n}\n";
        let mut m = parse_module(text).unwrap();
        let f = &mut m.functions[0];
        assert_eq!(reduce_induction_variables(f), 1);
        eliminate_dead_code(f);
        verify_function(f, 0).unwrap();
        let printed = f.to_string();
        assert!(!printed.contains("mul.u32 v3"), "{printed}");
        assert!(printed.contains("bb1(v3:u32, v11:u32)"), "{printed}");
    }
}
