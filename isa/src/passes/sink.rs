//! Code sinking: a pure instruction whose results are used only under a branch moves
//! into that branch, so the paths that do not use it do not run it.
//!
//! Compilers do this on both sides of the cross-check: LLVM's machine sinking (Apple's
//! compiler is LLVM-based) and ptxas, which re-reads a buffer's address from its
//! constant bank inside the one-lane branch that stores through it
//! (`validation/h100/probe9/sass/`). Without it, the frontend's `buffer_addr` reads at
//! the kernel's entry run with every lane even where only one lane uses them.
//!
//! An instruction moves from its block `A` to the nearest block `T` that dominates every
//! use, when `T` is not `A`, does not post-dominate `A` (every path through `A` would run
//! it anyway), and lies in no loop that `A` is outside of (it would run once per
//! iteration). Only speculatable instructions move (those loop-invariant code motion may
//! hoist: no memory access, side effect or cross-lane operation), and not constants,
//! which the simulator reads as immediates. In `T` it goes before its first user.

use crate::cfg::Cfg;
use crate::entity::{Block, Inst};
use crate::function::Function;
use crate::op::Op;
use crate::passes::licm::is_speculatable;
use crate::passes::loops::find_loops;

/// Sinks pure instructions into the branches that use them. Returns how many moved.
pub fn sink_into_branches(f: &mut Function) -> usize {
    let cfg = Cfg::new(f);
    let loops = find_loops(f, &cfg);
    // Per value, the block of each of its uses (with repeats), kept current as
    // instructions move. Unreachable blocks count too: a value used in one stays put
    // (nothing but itself dominates an unreachable block).
    let mut use_blocks: Vec<Vec<Block>> = vec![Vec::new(); f.value_types.len()];
    for b in f.block_ids() {
        let data = f.block(b);
        for &i in &data.insts {
            for a in &f.inst(i).args {
                use_blocks[a.index()].push(b);
            }
        }
        for a in data.term.uses() {
            use_blocks[a.index()].push(b);
        }
    }
    let in_no_other_loop =
        |from: Block, to: Block| loops.iter().all(|lp| !lp.contains(to) || lp.contains(from));
    let mut moved = 0;
    // Later blocks first, and each block's instructions last to first, so that a chain
    // (an address and the offset taken from it) moves as a whole.
    for &a in cfg.reverse_postorder().iter().rev() {
        let mut k = f.blocks[a.index()].insts.len();
        while k > 0 {
            k -= 1;
            let i = f.blocks[a.index()].insts[k];
            let Some(target) = sink_target(f, &cfg, &use_blocks, a, i) else {
                continue;
            };
            if !in_no_other_loop(a, target) {
                continue;
            }
            f.blocks[a.index()].insts.remove(k);
            let results = f.inst(i).results.clone();
            let at = f.blocks[target.index()]
                .insts
                .iter()
                .position(|&u| f.inst(u).args.iter().any(|v| results.contains(v)))
                .unwrap_or(f.blocks[target.index()].insts.len());
            f.blocks[target.index()].insts.insert(at, i);
            for arg in f.inst(i).args.clone() {
                let blocks = &mut use_blocks[arg.index()];
                if let Some(slot) = blocks.iter_mut().find(|b| **b == a) {
                    *slot = target;
                }
            }
            moved += 1;
        }
    }
    moved
}

/// Where instruction `i` of block `a` would sink to: the nearest common dominator of its
/// uses, when that is a block other than `a` that does not post-dominate it.
fn sink_target(
    f: &Function,
    cfg: &Cfg,
    use_blocks: &[Vec<Block>],
    a: Block,
    i: Inst,
) -> Option<Block> {
    let inst = f.inst(i);
    if matches!(inst.op, Op::Const(_)) || !is_speculatable(inst.op) {
        return None;
    }
    let mut uses = inst
        .results
        .iter()
        .flat_map(|r| use_blocks[r.index()].iter().copied());
    let mut target = uses.next()?;
    for b in uses {
        while !cfg.dominates(target, b) {
            target = cfg.immediate_dominator(target)?;
        }
    }
    if target == a || cfg.post_dominates(target, a) {
        return None;
    }
    Some(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_module, verify_function};

    /// Asserts that the pass leaves `body` as it is.
    fn assert_unchanged(body: &str) {
        let want: String = body.lines().map(|l| format!("{}\n", l.trim())).collect();
        assert_eq!(run(body), want);
    }

    fn run(body: &str) -> String {
        let text = format!(
            "kernel k {{\n  param buffer(0) a device type \"float\" size 4 align 4\n  param buffer(1) b device type \"float\" size 4 align 4\n{body}}}\n"
        );
        let mut m = parse_module(&text).unwrap();
        let f = &mut m.functions[0];
        sink_into_branches(f);
        verify_function(f, 0).unwrap();
        crate::passes::body_text(f)
    }

    #[test]
    fn an_address_used_under_a_branch_moves_into_it_with_its_offset() {
        let got = run(
            "bb0:\n v0 = buffer_addr.1\n v1 = sreg.thread_index_in_simdgroup\n v2 = const.u32 0\n v3 = ptradd.4 v0, v1\n v4 = cmp.eq.u32 v1, v2\n br_if v4, bb1, bb2\nbb1:\n v5 = const.f32 1.0\n st.device.f32 v3, v5\n ret\nbb2:\n ret\n",
        );
        assert_eq!(
            got,
            "bb0:\nv1 = sreg.thread_index_in_simdgroup\nv2 = const.u32 0\nv4 = cmp.eq.u32 v1, v2\nbr_if v4, bb1, bb2\nbb1:\nv5 = const.f32 1.0\nv0 = buffer_addr.1\nv3 = ptradd.4 v0, v1\nst.device.f32 v3, v5\nret\nbb2:\nret\n"
        );
    }

    #[test]
    fn nothing_moves_into_a_join_a_loop_or_past_a_load() {
        // bb2 post-dominates bb0 (every path runs it); bb1 is a loop; the load stays.
        let body = "bb0:\n v0 = buffer_addr.0\n v1 = sreg.thread_position_in_grid.x\n v2 = const.u32 0\n v3 = ptradd.4 v0, v1\n v4 = ld.device.f32 v3\n v5 = mul.u32 v1, v1\n br bb1(v2)\nbb1(v6:u32):\n v7 = add.u32 v6, v5\n v8 = cmp.lt.u32 v7, v1\n br_if v8, bb1(v7), bb2\nbb2:\n st.device.f32 v3, v4\n ret\n";
        assert_unchanged(body);
    }

    #[test]
    fn uses_in_both_arms_keep_an_instruction_where_it_is() {
        let body = "bb0:\n v0 = buffer_addr.0\n v1 = sreg.thread_index_in_simdgroup\n v2 = const.u32 0\n v3 = cmp.eq.u32 v1, v2\n br_if v3, bb1, bb2\nbb1:\n v4 = const.f32 1.0\n st.device.f32 v0, v4\n ret\nbb2:\n v5 = const.f32 2.0\n st.device.f32 v0, v5\n ret\n";
        assert_unchanged(body);
    }
}
