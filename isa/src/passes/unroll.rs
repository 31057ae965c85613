//! Full unrolling of loops with a small constant trip count.
//!
//! A loop qualifies when it has a single latch that jumps back with `br`, a header that
//! ends in the only exit (`br_if` to the body or out), and a trip count the constant
//! evaluator finds by running the header's test on constant induction values (the values
//! every edge entering the loop gives them, and what the body computes from those):
//! at most [`MAX_TRIPS`] iterations and [`MAX_UNROLLED`] instructions once unrolled. The
//! loop becomes a straight chain of copies of the header and body; the last header copy
//! jumps out. Later folding turns each copy's test into a constant and the chain into one
//! block.
//!
//! The copies execute the same instructions as the loop, in the same order, on the same
//! lanes: every active lane runs the same number of iterations (the count is a constant),
//! so the header's branch never diverged, and a branch inside the body reconverges at
//! the same point of its copy (the body's only way out is back to the header).

use std::collections::HashMap;

use crate::cfg::Cfg;
use crate::entity::{Block, Value};
use crate::function::{Function, Terminator};
use crate::passes::clone::{ValueMap, clone_blocks, mapped};
use crate::passes::edit::{Substitution, constants, for_each_edge};
use crate::passes::eval::eval;
use crate::passes::loops::{Loop, find_loops};
use crate::passes::simplify_cfg::remove_unreachable;

/// The most iterations a loop may have to be unrolled.
pub const MAX_TRIPS: usize = 16;

/// The most instructions (terminators included) a loop may have once unrolled.
pub const MAX_UNROLLED: usize = 512;

/// Unrolls every qualifying loop, innermost first. Returns how many loops were unrolled.
pub fn unroll_loops(f: &mut Function) -> usize {
    let mut unrolled = 0;
    // Each unrolling changes the graph; look again until nothing qualifies.
    for _ in 0..64 {
        let cfg = Cfg::new(f);
        let plan = find_loops(f, &cfg)
            .iter()
            .find_map(|lp| analyze(f, &cfg, lp));
        let Some(plan) = plan else { break };
        unroll(f, &plan);
        unrolled += 1;
    }
    // The loops' old blocks are unreachable now (and their edges may no longer match).
    remove_unreachable(f);
    unrolled
}

/// A loop to unroll.
struct Plan {
    header: Block,
    /// The loop's blocks, header first, then in reverse postorder.
    blocks: Vec<Block>,
    latch: Block,
    /// The blocks outside the loop that enter it.
    entries: Vec<Block>,
    /// The header's edge into the body.
    body_edge: (Block, Vec<Value>),
    /// The header's edge out of the loop.
    exit_edge: (Block, Vec<Value>),
    trips: usize,
}

fn analyze(f: &Function, cfg: &Cfg, lp: &Loop) -> Option<Plan> {
    let h = lp.header;
    let latch = lp.single_latch()?;
    let Terminator::Br(t, _) = &f.block(latch).term else {
        return None;
    };
    if *t != h || latch == h {
        return None;
    }
    let entries: Vec<Block> = cfg
        .predecessors(h)
        .iter()
        .copied()
        .filter(|&p| !lp.contains(p) && cfg.is_reachable(p))
        .collect();
    let Terminator::BrIf { then_, else_, .. } = &f.block(h).term else {
        return None;
    };
    let (body_edge, exit_edge) = match (lp.contains(then_.0), lp.contains(else_.0)) {
        (true, false) => (then_.clone(), else_.clone()),
        (false, true) => (else_.clone(), then_.clone()),
        _ => return None,
    };
    if lp.exits(cfg) != [(h, exit_edge.0)] {
        return None;
    }
    let size = lp.size(f);
    let blocks = lp.blocks_header_first(cfg);
    let trips = trip_count(
        f,
        &blocks,
        latch,
        &initial_values(f, h, &entries),
        &exit_edge.0,
    )?;
    if trips > MAX_TRIPS || (trips + 1) * size > MAX_UNROLLED {
        return None;
    }
    Some(Plan {
        header: h,
        blocks,
        latch,
        entries,
        body_edge,
        exit_edge,
        trips,
    })
}

/// Runs the loop's control on constants: the number of times the body runs, when every
/// header test along the way folds to a constant and the loop exits within
/// [`MAX_TRIPS`] iterations.
fn trip_count(
    f: &Function,
    blocks: &[Block],
    latch: Block,
    init: &[Option<u64>],
    exit: &Block,
) -> Option<usize> {
    let consts = constants(f);
    let h = blocks[0];
    let header = f.block(h);
    let Terminator::Br(_, next) = &f.block(latch).term else {
        return None;
    };
    let Terminator::BrIf { cond, then_, else_ } = &header.term else {
        return None;
    };
    let mut params: Vec<Option<u64>> = init.to_vec();
    for n in 0..=MAX_TRIPS {
        let mut known: HashMap<Value, u64> = HashMap::new();
        for (&p, c) in header.params.iter().zip(&params) {
            if let Some(c) = c {
                known.insert(p, *c);
            }
        }
        let value =
            |known: &HashMap<Value, u64>, v: Value| known.get(&v).copied().or(consts[v.index()]);
        for &b in blocks {
            for &i in &f.block(b).insts {
                let inst = f.inst(i);
                let Some(r) = inst.result() else { continue };
                if !crate::passes::licm::is_speculatable(inst.op) || inst.results.len() != 1 {
                    continue;
                }
                let operands: Option<Vec<(u64, crate::types::Type)>> = inst
                    .args
                    .iter()
                    .map(|&a| value(&known, a).map(|c| (c, f.value_type(a))))
                    .collect();
                if let Some(c) = operands.and_then(|ops| eval(inst.op, inst.ty, &ops)) {
                    known.insert(r, c);
                }
            }
        }
        let taken = value(&known, *cond)? & 1 == 1;
        let target = if taken { then_.0 } else { else_.0 };
        if target == *exit {
            return Some(n);
        }
        params = next.iter().map(|&a| value(&known, a)).collect();
    }
    None
}

/// The constant each header parameter receives on every edge entering the loop, if any.
fn initial_values(f: &Function, h: Block, entries: &[Block]) -> Vec<Option<u64>> {
    let consts = constants(f);
    let mut init: Vec<Option<Option<u64>>> = vec![None; f.block(h).params.len()];
    for &p in entries {
        for (t, args) in f.block(p).term.targets() {
            if t != h {
                continue;
            }
            for (slot, a) in init.iter_mut().zip(args) {
                let c = consts[a.index()];
                *slot = match *slot {
                    None => Some(c),
                    Some(prev) if prev == c => Some(c),
                    Some(_) => Some(None),
                };
            }
        }
    }
    init.into_iter().map(Option::flatten).collect()
}

fn unroll(f: &mut Function, plan: &Plan) {
    let h = plan.header;
    // The blocks whose branches enter the next copy, and the header they point to now.
    let mut owners = plan.entries.clone();
    let mut owner_target = h;
    let latch_pos = plan
        .blocks
        .iter()
        .position(|&b| b == plan.latch)
        .unwrap_or(0);
    let body_pos = plan
        .blocks
        .iter()
        .position(|&b| b == plan.body_edge.0)
        .unwrap_or(0);
    for _ in 0..plan.trips {
        let mut map = ValueMap::new();
        let copies = clone_blocks(f, &plan.blocks, &mut map);
        let header_copy = copies[0];
        let body_args = plan.body_edge.1.iter().map(|&v| mapped(&map, v)).collect();
        f.blocks[header_copy.index()].term = Terminator::Br(copies[body_pos], body_args);
        for &o in &owners {
            retarget(f, o, owner_target, header_copy);
        }
        owners = vec![copies[latch_pos]];
        owner_target = header_copy;
    }
    let mut map = ValueMap::new();
    let last = clone_blocks(f, &[h], &mut map)[0];
    let exit_args = plan.exit_edge.1.iter().map(|&v| mapped(&map, v)).collect();
    f.blocks[last.index()].term = Terminator::Br(plan.exit_edge.0, exit_args);
    for &o in &owners {
        retarget(f, o, owner_target, last);
    }
    // Outside the loop, the header's values are those of its last copy.
    let mut subst = Substitution::new(f);
    let header = f.block(h).clone();
    for &p in &header.params {
        subst.set(p, mapped(&map, p));
    }
    for &i in &header.insts {
        for &r in &f.inst(i).results {
            subst.set(r, mapped(&map, r));
        }
    }
    // The original loop is unreachable now; `unroll_loops` removes it.
    subst.apply(f);
}

/// Points `block`'s edges to `from` at `to` instead.
fn retarget(f: &mut Function, block: Block, from: Block, to: Block) {
    for_each_edge(&mut f.blocks[block.index()].term, |t, _| {
        if *t == from {
            *t = to;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::optimize;
    use crate::{parse_module, verify_function};

    fn check(body: &str, expect: &str) {
        let text = format!(
            "kernel k {{\n  param buffer(0) a device type \"uint\" size 4 align 4\n{body}}}\n"
        );
        let mut m = parse_module(&text).unwrap();
        let f = &mut m.functions[0];
        assert_eq!(unroll_loops(f), 1);
        verify_function(f, 0).unwrap();
        optimize(f);
        verify_function(f, 0).unwrap();
        let got = crate::passes::body_text(f);
        assert_eq!(got, expect);
    }

    #[test]
    fn counted_loop_becomes_straight_line() {
        // for (i = 0; i < 3; ++i) a[i] = i * 5;
        check(
            "bb0:\n v0 = buffer_addr.0\n v1 = const.u32 0\n br bb1(v1)\nbb1(v2:u32):\n v3 = const.u32 3\n v4 = cmp.lt.u32 v2, v3\n br_if v4, bb2, bb3\nbb2:\n v5 = const.u32 5\n v6 = mul.u32 v2, v5\n v7 = ptradd.4 v0, v2\n st.device.u32 v7, v6\n v8 = const.u32 1\n v9 = add.u32 v2, v8\n br bb1(v9)\nbb3:\n ret\n",
            "bb0:\nv1 = const.u32 0\nv13 = const.u32 5\nv30 = const.u32 10\nv37 = const.i64 4\nv38 = const.i64 8\nv0 = buffer_addr.0\nst.device.u32 v0, v1\nv23 = ptradd.1 v0, v37\nst.device.u32 v23, v13\nv31 = ptradd.1 v0, v38\nst.device.u32 v31, v30\nret\n",
        );
    }
}
