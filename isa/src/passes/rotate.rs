//! Loop rotation: a loop that tests at its top (`header: test; br_if body, exit` ...
//! `latch: br header`) becomes one that tests at its bottom, so each iteration takes one
//! branch instead of two. The header's instructions are copied into the preheader (the
//! first test, before the loop) and into the latch (the test for the next iteration);
//! the header itself disappears. Values the header defined reach the body and the exit
//! through new block parameters.
//!
//! The copies run exactly when the header ran (entering the loop, and at the end of each
//! iteration), on the same lanes. Divergent lanes leaving the loop still reconverge at
//! the exit block: the immediate post-dominator of both new tests is the exit, as it was
//! the header's, and the body's own branches reconverge where they did.

use crate::cfg::Cfg;
use crate::entity::{Block, Value};
use crate::function::{Function, Terminator};
use crate::passes::clone::{ValueMap, mapped};
use crate::passes::edit::{for_each_term_use, new_inst, new_value};
use crate::passes::loops::{Loop, create_preheaders, find_loops};
use crate::passes::simplify_cfg::remove_unreachable;

/// The most instructions a header may have to be copied twice.
pub const MAX_HEADER: usize = 8;

/// Rotates every qualifying loop. Returns how many were rotated.
pub fn rotate_loops(f: &mut Function) -> usize {
    let mut rotated = 0;
    for _ in 0..64 {
        // A loop of one block already tests at its bottom.
        rotated += create_preheaders(f, |lp| lp.blocks.len() > 1);
        let cfg = Cfg::new(f);
        let plan = find_loops(f, &cfg)
            .iter()
            .find_map(|lp| analyze(f, &cfg, lp));
        let Some(plan) = plan else { break };
        rotate(f, &cfg, &plan);
        rotated += 1;
    }
    // The loops' old blocks are unreachable now (and their edges may no longer match).
    remove_unreachable(f);
    rotated
}

struct Plan {
    header: Block,
    preheader: Block,
    latch: Block,
    /// The header's successor in the loop, entered only from the header.
    body: Block,
    /// The header's successor outside the loop, entered only from the header.
    exit: Block,
    /// Values the header defines that blocks under `body` use, and under `exit`.
    to_body: Vec<Value>,
    to_exit: Vec<Value>,
}

fn analyze(f: &Function, cfg: &Cfg, lp: &Loop) -> Option<Plan> {
    let h = lp.header;
    let latch = lp.single_latch()?;
    if latch == h || !matches!(f.block(latch).term, Terminator::Br(t, _) if t == h) {
        return None;
    }
    let preheader = lp.preheader(f, cfg)?;
    let header = f.block(h);
    if header.insts.len() > MAX_HEADER {
        return None;
    }
    let Terminator::BrIf { then_, else_, .. } = &header.term else {
        return None;
    };
    let (body, exit) = match (lp.contains(then_.0), lp.contains(else_.0)) {
        (true, false) => (then_.0, else_.0),
        (false, true) => (else_.0, then_.0),
        _ => return None,
    };
    if body == h || cfg.predecessors(body) != [h] || cfg.predecessors(exit) != [h] {
        return None;
    }
    // Every use of a header value outside the header must lie under the body or the exit.
    let mut defined = vec![false; f.value_types.len()];
    for &p in &header.params {
        defined[p.index()] = true;
    }
    for &i in &header.insts {
        for &r in &f.inst(i).results {
            defined[r.index()] = true;
        }
    }
    let mut to_body = Vec::new();
    let mut to_exit = Vec::new();
    for b in f.block_ids().filter(|&b| b != h && cfg.is_reachable(b)) {
        let data = f.block(b);
        let used = data
            .insts
            .iter()
            .flat_map(|&i| f.inst(i).args.iter().copied())
            .chain(data.term.uses());
        for v in used.filter(|v| defined[v.index()]) {
            let list = if cfg.dominates(body, b) {
                &mut to_body
            } else if cfg.dominates(exit, b) {
                &mut to_exit
            } else {
                return None;
            };
            if !list.contains(&v) {
                list.push(v);
            }
        }
    }
    Some(Plan {
        header: h,
        preheader,
        latch,
        body,
        exit,
        to_body,
        to_exit,
    })
}

fn rotate(f: &mut Function, cfg: &Cfg, plan: &Plan) {
    let h = plan.header;
    // New parameters for the header's values, and their uses renamed.
    let mut in_body = ValueMap::new();
    for &v in &plan.to_body {
        let p = new_value(f, f.value_type(v));
        f.blocks[plan.body.index()].params.push(p);
        in_body.insert(v, p);
    }
    let mut in_exit = ValueMap::new();
    for &v in &plan.to_exit {
        let p = new_value(f, f.value_type(v));
        f.blocks[plan.exit.index()].params.push(p);
        in_exit.insert(v, p);
    }
    for b in f.block_ids().collect::<Vec<_>>() {
        if b == h || !cfg.is_reachable(b) {
            continue;
        }
        let map = if cfg.dominates(plan.body, b) {
            &in_body
        } else if cfg.dominates(plan.exit, b) {
            &in_exit
        } else {
            continue;
        };
        for k in 0..f.blocks[b.index()].insts.len() {
            let i = f.blocks[b.index()].insts[k];
            for a in &mut f.insts[i.index()].args {
                *a = mapped(map, *a);
            }
        }
        for_each_term_use(&mut f.blocks[b.index()].term, |v| *v = mapped(map, *v));
    }
    for from in [plan.preheader, plan.latch] {
        let Terminator::Br(_, args) = f.block(from).term.clone() else {
            continue;
        };
        copy_test(f, plan, from, &args);
    }
}

/// Replaces `from`'s `br header(args)` by a copy of the header's instructions (its
/// parameters set to `args`) and of its `br_if`, passing the header's values on.
fn copy_test(f: &mut Function, plan: &Plan, from: Block, args: &[Value]) {
    let header = f.block(plan.header).clone();
    let mut map = ValueMap::new();
    for (&p, &a) in header.params.iter().zip(args) {
        map.insert(p, a);
    }
    for &i in &header.insts {
        let inst = f.inst(i).clone();
        let loc = f.inst_locs[i.index()];
        let operands = inst.args.iter().map(|&a| mapped(&map, a)).collect();
        let j = new_inst(f, inst.op, inst.ty, operands, loc);
        for (&r, &s) in inst.results.iter().zip(&f.insts[j.index()].results) {
            map.insert(r, s);
        }
        f.blocks[from.index()].insts.push(j);
    }
    let Terminator::BrIf { cond, then_, else_ } = &header.term else {
        return;
    };
    let edge = |(t, targs): &(Block, Vec<Value>)| {
        let mut targs: Vec<Value> = targs.iter().map(|&v| mapped(&map, v)).collect();
        let extra = if *t == plan.body {
            &plan.to_body
        } else {
            &plan.to_exit
        };
        targs.extend(extra.iter().map(|&v| mapped(&map, v)));
        (*t, targs)
    };
    f.blocks[from.index()].term = Terminator::BrIf {
        cond: mapped(&map, *cond),
        then_: edge(then_),
        else_: edge(else_),
    };
    f.blocks[from.index()].term_loc = header.term_loc;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_module, verify_function};

    fn check(body: &str, expect: &str) {
        let text = format!(
            "kernel k {{\n  param buffer(0) a device type \"uint\" size 4 align 4\n{body}}}\n"
        );
        let mut m = parse_module(&text).unwrap();
        let f = &mut m.functions[0];
        assert_eq!(rotate_loops(f), 1);
        crate::passes::simplify_cfg::simplify_cfg(f);
        verify_function(f, 0).unwrap();
        let got = crate::passes::body_text(f);
        assert_eq!(got, expect);
    }

    #[test]
    fn top_tested_loop_tests_at_the_bottom() {
        // for (i = 0; i < n; ++i) a[i] = i; then a[0] = i.
        check(
            "bb0:\n v0 = buffer_addr.0\n v1 = ld.device.u32 v0\n v2 = const.u32 0\n br bb1(v2)\nbb1(v3:u32):\n v4 = cmp.lt.u32 v3, v1\n br_if v4, bb2, bb3\nbb2:\n v5 = ptradd.4 v0, v3\n st.device.u32 v5, v3\n v6 = const.u32 1\n v7 = add.u32 v3, v6\n br bb1(v7)\nbb3:\n st.device.u32 v0, v3\n ret\n",
            "bb0:\nv0 = buffer_addr.0\nv1 = ld.device.u32 v0\nv2 = const.u32 0\nv10 = cmp.lt.u32 v2, v1\nbr_if v10, bb1(v2), bb2(v2)\nbb1(v8:u32):\nv5 = ptradd.4 v0, v8\nst.device.u32 v5, v8\nv6 = const.u32 1\nv7 = add.u32 v8, v6\nv11 = cmp.lt.u32 v7, v1\nbr_if v11, bb1(v7), bb2(v7)\nbb2(v9:u32):\nst.device.u32 v0, v9\nret\n",
        );
    }
}
