//! Control-flow simplification: fewer blocks and fewer branches, with the same lanes
//! executing the same instructions in the same order.
//!
//! - A `br_if` whose two edges are the same becomes a `br`; so does a `br_if` on a
//!   constant when no other branch's reconvergence point moves (see `fold_branches`).
//! - A block entered only by an unconditional `br` from its single predecessor is merged
//!   into it.
//! - An empty block that only jumps on (a forwarding block) is bypassed: its predecessors
//!   jump straight to its target.
//! - A `br` to an empty block that only returns becomes a `ret`.
//! - Unreachable blocks are removed and the rest renumbered in order (the entry stays
//!   `bb0`).
//!
//! Why reconvergence is unchanged: the simulator reconverges divergent lanes at the
//! immediate post-dominator of the branch. Merging a block into its only predecessor, and
//! bypassing a block that has no instructions, remove no path and add none; the post-
//! dominators of every other block stay the same, and a branch whose post-dominator was
//! a bypassed block now reconverges at that block's target, where the lanes went next
//! anyway without executing anything between. A block that only returns is no place
//! where anything happens after lanes wait there, so lanes returning at once instead of
//! waiting to return together execute the same instructions.

use crate::cfg::Cfg;
use crate::entity::{Block, Value};
use crate::function::{BlockData, Function, SrcLoc, Terminator};
use crate::passes::edit::{Substitution, constants, for_each_edge};

/// Simplifies the control-flow graph as described in the module documentation. Returns
/// the number of changes made.
pub fn simplify_cfg(f: &mut Function) -> usize {
    let mut changes = remove_unreachable(f);
    loop {
        let round = fold_branches(f) + bypass_forwarders(f) + return_directly(f);
        let round = round + remove_unreachable(f) + merge_blocks(f);
        if round == 0 {
            break;
        }
        changes += round;
    }
    changes
}

/// `br_if` with two identical edges becomes `br`. So does a `br_if` on a constant, unless
/// removing its untaken edge would move where some other branch reconverges: the
/// simulator reconverges at immediate post-dominators of the graph as it stands, so a path
/// no lane takes (say, to a `return`) still decides where lanes wait for each other.
fn fold_branches(f: &mut Function) -> usize {
    let consts = constants(f);
    let mut n = 0;
    let mut current: Option<Cfg> = None;
    for b in f.block_ids().collect::<Vec<_>>() {
        let Terminator::BrIf { cond, then_, else_ } = &f.block(b).term else {
            continue;
        };
        if then_ == else_ {
            // The same successor either way: the graph does not change.
            let t = then_.clone();
            f.blocks[b.index()].term = Terminator::Br(t.0, t.1);
            n += 1;
            continue;
        }
        let taken = match consts.get(cond.index()).copied().flatten() {
            Some(bits) if bits & 1 == 1 => then_.clone(),
            Some(_) => else_.clone(),
            None => continue,
        };
        let before = current.take().unwrap_or_else(|| Cfg::new(f));
        let old = std::mem::replace(
            &mut f.blocks[b.index()].term,
            Terminator::Br(taken.0, taken.1),
        );
        let after = Cfg::new(f);
        if same_reconvergence(f, &before, &after) {
            current = Some(after);
            n += 1;
        } else {
            f.blocks[b.index()].term = old;
            current = Some(before);
        }
    }
    n
}

/// Whether every conditional branch still reachable reconverges where it did.
fn same_reconvergence(f: &Function, before: &Cfg, after: &Cfg) -> bool {
    f.block_ids()
        .filter(|&x| after.is_reachable(x) && matches!(f.block(x).term, Terminator::BrIf { .. }))
        .all(|x| before.immediate_post_dominator(x) == after.immediate_post_dominator(x))
}

/// A block with no instructions whose terminator is `br T(args)`, and whose parameters
/// only feed those arguments.
fn forward_target(f: &Function, b: Block) -> Option<(Block, Vec<Value>)> {
    let data = f.block(b);
    let Terminator::Br(t, args) = &data.term else {
        return None;
    };
    if b == f.entry() || *t == b || !data.insts.is_empty() {
        return None;
    }
    Some((*t, args.clone()))
}

/// Redirects every edge into a forwarding block to the block's target.
fn bypass_forwarders(f: &mut Function) -> usize {
    let mut n = 0;
    for b in f.block_ids().collect::<Vec<_>>() {
        let Some((target, targs)) = forward_target(f, b) else {
            continue;
        };
        let params = f.block(b).params.clone();
        if params_used_elsewhere(f, b, &params) {
            continue;
        }
        for q in 0..f.blocks.len() {
            if q == b.index() {
                continue;
            }
            let mut term = std::mem::replace(&mut f.blocks[q].term, Terminator::Ret);
            for_each_edge(&mut term, |t, args| {
                if *t != b {
                    return;
                }
                let forwarded: Vec<Value> = targs
                    .iter()
                    .map(|v| match params.iter().position(|p| p == v) {
                        Some(k) => args[k],
                        None => *v,
                    })
                    .collect();
                *t = target;
                *args = forwarded;
                n += 1;
            });
            f.blocks[q].term = term;
        }
    }
    n
}

/// Whether any of a block's parameters is read anywhere but in its own terminator.
fn params_used_elsewhere(f: &Function, b: Block, params: &[Value]) -> bool {
    if params.is_empty() {
        return false;
    }
    f.block_ids().filter(|&o| o != b).any(|o| {
        let data = f.block(o);
        data.insts
            .iter()
            .any(|&i| f.inst(i).args.iter().any(|a| params.contains(a)))
            || data.term.uses().iter().any(|a| params.contains(a))
    })
}

/// `br R` where `R` holds nothing but `ret` becomes `ret`.
fn return_directly(f: &mut Function) -> usize {
    let returns: Vec<bool> = f
        .blocks
        .iter()
        .map(|d| d.insts.is_empty() && d.params.is_empty() && d.term == Terminator::Ret)
        .collect();
    let mut n = 0;
    for data in &mut f.blocks {
        if let Terminator::Br(t, _) = data.term
            && returns[t.index()]
        {
            data.term = Terminator::Ret;
            n += 1;
        }
    }
    n
}

/// Merges each block entered by exactly one edge, an unconditional `br` from another
/// block, into that block.
fn merge_blocks(f: &mut Function) -> usize {
    let mut n = 0;
    loop {
        let cfg = Cfg::new(f);
        let mut edges_in = vec![0usize; f.blocks.len()];
        for data in &f.blocks {
            for (t, _) in data.term.targets() {
                edges_in[t.index()] += 1;
            }
        }
        let mut subst = Substitution::new(f);
        let mut merged = 0;
        for &p in cfg.reverse_postorder() {
            let Terminator::Br(b, args) = f.block(p).term.clone() else {
                continue;
            };
            if b == p || b == f.entry() || edges_in[b.index()] != 1 {
                continue;
            }
            let data = std::mem::replace(
                &mut f.blocks[b.index()],
                BlockData {
                    params: Vec::new(),
                    insts: Vec::new(),
                    term: Terminator::Ret,
                    term_loc: SrcLoc::UNKNOWN,
                },
            );
            for (&param, &a) in data.params.iter().zip(&args) {
                subst.set(param, a);
            }
            let pd = &mut f.blocks[p.index()];
            pd.insts.extend(data.insts);
            pd.term = data.term;
            pd.term_loc = data.term_loc;
            // `b` is now empty and unreachable; its successors gained no edge.
            edges_in[b.index()] = 0;
            merged += 1;
        }
        subst.apply(f);
        if merged == 0 {
            break;
        }
        n += merged;
    }
    n
}

/// Removes blocks the entry does not reach and renumbers the others in order. Their
/// instructions stay in the arena, detached.
pub(crate) fn remove_unreachable(f: &mut Function) -> usize {
    let cfg = Cfg::new(f);
    let keep: Vec<bool> = f.block_ids().map(|b| cfg.is_reachable(b)).collect();
    let removed = keep.iter().filter(|k| !**k).count();
    if removed == 0 {
        return 0;
    }
    let mut new_index = vec![u32::MAX; f.blocks.len()];
    let mut next = 0;
    for (b, k) in keep.iter().enumerate() {
        if *k {
            new_index[b] = next;
            next += 1;
        }
    }
    let blocks = std::mem::take(&mut f.blocks);
    for (b, mut data) in blocks.into_iter().enumerate() {
        if !keep[b] {
            continue;
        }
        for_each_edge(&mut data.term, |t, _| *t = Block(new_index[t.index()]));
        f.blocks.push(data);
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_module, verify_function};

    fn check(body: &str, expect: &str) {
        let mut m = parse_module(&format!("kernel k {{\n{body}}}\n")).unwrap();
        let f = &mut m.functions[0];
        simplify_cfg(f);
        verify_function(f, 0).unwrap();
        let got = crate::passes::body_text(f);
        assert_eq!(got, expect);
    }

    #[test]
    fn straight_line_blocks_merge() {
        check(
            "bb0:\n v0 = const.u32 1\n br bb1(v0)\nbb1(v1:u32):\n v2 = add.u32 v1, v1\n br bb2\nbb2:\n v3 = add.u32 v2, v1\n ret\n",
            "bb0:\nv0 = const.u32 1\nv2 = add.u32 v0, v0\nv3 = add.u32 v2, v0\nret\n",
        );
    }

    #[test]
    fn constant_branches_fold_and_dead_blocks_go() {
        check(
            "bb0:\n v0 = const.pred false\n br_if v0, bb1, bb2\nbb1:\n v1 = sreg.thread_index_in_simdgroup\n br bb2\nbb2:\n ret\n",
            "bb0:\nv0 = const.pred false\nret\n",
        );
    }

    #[test]
    fn forwarding_blocks_are_bypassed() {
        check(
            "bb0:\n v0 = sreg.thread_index_in_simdgroup\n v1 = const.u32 3\n v2 = cmp.lt.u32 v0, v1\n br_if v2, bb1(v0), bb2\nbb1(v3:u32):\n br bb3(v3)\nbb2:\n v4 = add.u32 v0, v0\n br bb3(v4)\nbb3(v5:u32):\n v6 = add.u32 v5, v5\n br bb4\nbb4:\n ret\n",
            "bb0:\nv0 = sreg.thread_index_in_simdgroup\nv1 = const.u32 3\nv2 = cmp.lt.u32 v0, v1\nbr_if v2, bb2(v0), bb1\nbb1:\nv4 = add.u32 v0, v0\nbr bb2(v4)\nbb2(v5:u32):\nv6 = add.u32 v5, v5\nret\n",
        );
    }
}
