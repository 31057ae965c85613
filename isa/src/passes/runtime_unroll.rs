//! Unrolling of counted loops whose trip count is known only at run time.
//!
//! A loop qualifies when it is innermost, has no barrier, has a preheader, a single latch that jumps back
//! with `br`, and a header that ends in its only exit, a `br_if` that stays in the loop
//! while `i < n`: `i` a header parameter that the latch advances by a constant step `s`
//! (`i + s`), `n` defined outside the loop, compared as `i`'s integer type. The loop
//! becomes a main loop that runs [`UNROLL_FACTOR`] iterations at a time (fewer when the
//! body is large, see [`MAX_UNROLLED_BODY`]) and the original loop, which runs what is
//! left:
//!
//! ```text
//! preheader: lim = max(n, MIN + D) - D      (D = (factor - 1) * s, MIN the type's least)
//!            br main(init)
//! main(p):   br_if i < lim, copy_0(p), header(p)
//! copy_k:    the header's instructions, the body; the latch goes to copy_k+1, the last
//!            one back to main
//! header:    the original loop, unchanged: it runs the remaining iterations and exits
//! ```
//!
//! `i < lim` holds exactly when `i + D < n` without wrapping, so the next `factor` header
//! tests (`i`, `i + s`, ..., `i + D` against `n`) all pass and the copies' tests can be
//! dropped; when `n < MIN + D` no `i` passes (`lim` is `MIN`). Every header value the exit
//! reads still comes from the original header, which runs last.
//!
//! The lanes must agree on the trip count, or the main loop and the remainder would run
//! different iterations on different lanes together: the initial `i` and `n` must be
//! SIMD-group uniform (see `uniform`). Then every active lane runs the same iterations,
//! the header never diverges, and the lanes execute the same instructions in the same
//! order as before, together (plus one guard per `factor` iterations, minus the copies'
//! branches).
//!
//! Each loop is unrolled once per call: the pass collects the loops that qualify before
//! changing any.

use crate::cfg::Cfg;
use crate::entity::{Block, Value};
use crate::function::{BlockData, Function, Terminator};
use crate::op::{CmpCond, Op};
use crate::passes::clone::{ValueMap, clone_blocks, mapped};
use crate::passes::edit::{Def, constants, def_block, def_sites, new_const, new_inst, new_value};
use crate::passes::loops::{Loop, create_preheaders, find_loops};
use crate::passes::uniform::Uniformity;
use crate::types::Type;

/// How many iterations the main loop runs at a time.
pub const UNROLL_FACTOR: usize = 4;

/// The most instructions (terminators included) the main loop's body may have: a loop
/// whose body is too large for [`UNROLL_FACTOR`] copies gets two, or stays as it is.
pub const MAX_UNROLLED_BODY: usize = 256;

/// The largest step the pass accepts (so that `(factor - 1) * step` stays small).
const MAX_STEP: u64 = 1 << 16;

/// Unrolls every qualifying loop. Returns how many loops were unrolled.
pub fn unroll_runtime_loops(f: &mut Function) -> usize {
    create_preheaders(f, |_| true);
    let cfg = Cfg::new(f);
    let loops = find_loops(f, &cfg);
    let uniform = Uniformity::new(f, &cfg);
    let headers: Vec<Block> = loops
        .iter()
        .filter(|lp| analyze(f, &cfg, lp, &loops, &uniform).is_some())
        .map(|lp| lp.header)
        .collect();
    let mut unrolled = 0;
    for h in headers {
        // Unrolling adds blocks and changes a preheader: analyze each loop afresh.
        let cfg = Cfg::new(f);
        let loops = find_loops(f, &cfg);
        let uniform = Uniformity::new(f, &cfg);
        let plan = loops
            .iter()
            .find(|lp| lp.header == h)
            .and_then(|lp| analyze(f, &cfg, lp, &loops, &uniform));
        if let Some(plan) = plan {
            unroll(f, &plan);
            unrolled += 1;
        }
    }
    unrolled
}

/// A loop to unroll.
struct Plan {
    header: Block,
    preheader: Block,
    /// The loop's blocks, header first, then in reverse postorder.
    blocks: Vec<Block>,
    latch: Block,
    /// The header's edge into the body.
    body_edge: (Block, Vec<Value>),
    /// Position of `i` among the header's parameters.
    iv: usize,
    /// The latch's `i + s`.
    next: Value,
    step: u64,
    bound: Value,
    /// The type `i` and `n` are compared in.
    ty: Type,
    factor: usize,
}

fn analyze(
    f: &Function,
    cfg: &Cfg,
    lp: &Loop,
    loops: &[Loop],
    uniform: &Uniformity,
) -> Option<Plan> {
    let h = lp.header;
    if loops.iter().any(|m| m.header != h && lp.contains(m.header)) {
        return None;
    }
    let latch = lp.single_latch()?;
    let Terminator::Br(t, next) = &f.block(latch).term else {
        return None;
    };
    if *t != h || latch == h {
        return None;
    }
    let preheader = lp.preheader(f, cfg)?;
    let Terminator::Br(_, init) = &f.block(preheader).term else {
        return None;
    };
    let Terminator::BrIf { cond, then_, else_ } = &f.block(h).term else {
        return None;
    };
    let (body_edge, exit, stays_when) = match (lp.contains(then_.0), lp.contains(else_.0)) {
        (true, false) => (then_, else_.0, true),
        (false, true) => (else_, then_.0, false),
        _ => return None,
    };
    if lp.exits(cfg) != [(h, exit)] {
        return None;
    }
    let defs = def_sites(f);
    let inside = |v: Value| def_block(defs[v.index()]).is_none_or(|b| lp.contains(b));
    // The test: the loop goes on while `i < n`.
    let Def::Inst(cb, ci) = defs[cond.index()] else {
        return None;
    };
    let test = f.inst(ci);
    if cb != h || !test.ty.is_int() {
        return None;
    }
    let (i, n) = match (test.op, stays_when) {
        (Op::Cmp(CmpCond::Lt), true) | (Op::Cmp(CmpCond::Ge), false) => {
            (test.args[0], test.args[1])
        }
        (Op::Cmp(CmpCond::Gt), true) | (Op::Cmp(CmpCond::Le), false) => {
            (test.args[1], test.args[0])
        }
        _ => return None,
    };
    let iv = f.block(h).params.iter().position(|&p| p == i)?;
    if inside(n) {
        return None;
    }
    // The latch passes `i + s`.
    let Def::Inst(_, ni) = defs[next.get(iv)?.index()] else {
        return None;
    };
    let bump = f.inst(ni);
    let consts = constants(f);
    let step_value = match (bump.op, bump.args.first(), bump.args.get(1)) {
        (Op::Add, Some(&a), Some(&b)) if a == i => b,
        (Op::Add, Some(&a), Some(&b)) if b == i => a,
        _ => return None,
    };
    if bump.ty != test.ty {
        return None;
    }
    let step = consts[step_value.index()]?;
    if step == 0 || step > MAX_STEP {
        return None;
    }
    // Every lane runs the same iterations.
    if !uniform.is_uniform_for(init[iv], lp, loops) || !uniform.is_uniform_for(n, lp, loops) {
        return None;
    }
    // A loop with a barrier synchronizes every iteration (a tiled loop): copies of it
    // would keep each copy's tile addresses live across the barriers, costing registers
    // and occupancy for no memory-level parallelism (the loads wait at the barrier).
    let has_barrier = lp
        .blocks
        .iter()
        .flat_map(|&b| &f.block(b).insts)
        .any(|&i| matches!(f.inst(i).op, Op::Barrier(..)));
    if has_barrier {
        return None;
    }
    let size = lp.size(f);
    let factor = [UNROLL_FACTOR, 2]
        .into_iter()
        .find(|&k| k * size <= MAX_UNROLLED_BODY)?;
    let blocks = lp.blocks_header_first(cfg);
    Some(Plan {
        header: h,
        preheader,
        blocks,
        latch,
        body_edge: body_edge.clone(),
        iv,
        next: next[iv],
        step,
        bound: n,
        ty: test.ty,
        factor,
    })
}

fn unroll(f: &mut Function, plan: &Plan) {
    let h = plan.header;
    let ty = plan.ty;
    let loc = f.block(h).term_loc;
    // In the preheader: lim = max(n, MIN + D) - D.
    let distance = (plan.factor as u64 - 1) * plan.step;
    let min = if ty.is_signed() {
        1u64 << (ty.bits() - 1)
    } else {
        0
    };
    let (c_floor, floor) = new_const(f, ty, min.wrapping_add(distance), loc);
    let (c_dist, dist) = new_const(f, ty, distance, loc);
    let clamp = new_inst(f, Op::Max, ty, vec![plan.bound, floor], loc);
    let clamped = f.insts[clamp.index()].results[0];
    let limit = new_inst(f, Op::Sub, ty, vec![clamped, dist], loc);
    let lim = f.insts[limit.index()].results[0];
    f.blocks[plan.preheader.index()]
        .insts
        .extend([c_floor, c_dist, clamp, limit]);
    // The main loop's header: the guard.
    let main = Block(f.blocks.len() as u32);
    let params: Vec<Value> = f
        .block(h)
        .params
        .clone()
        .iter()
        .map(|&p| new_value(f, f.value_type(p)))
        .collect();
    let guard = new_inst(f, Op::Cmp(CmpCond::Lt), ty, vec![params[plan.iv], lim], loc);
    let go = f.insts[guard.index()].results[0];
    f.blocks.push(BlockData {
        params: params.clone(),
        insts: vec![guard],
        term: Terminator::Ret,
        term_loc: loc,
    });
    if let Terminator::Br(t, _) = &mut f.blocks[plan.preheader.index()].term {
        *t = main;
    }
    // The copies, chained: each latch copy enters the next header copy.
    let latch_pos = plan.blocks.iter().position(|&b| b == plan.latch);
    let body_pos = plan.blocks.iter().position(|&b| b == plan.body_edge.0);
    let (Some(latch_pos), Some(body_pos)) = (latch_pos, body_pos) else {
        return;
    };
    let mut first = None;
    let mut prev_latch: Option<Block> = None;
    for copy in 0..plan.factor {
        let mut map = ValueMap::new();
        let copies = clone_blocks(f, &plan.blocks, &mut map);
        let header_copy = copies[0];
        let body_args = plan.body_edge.1.iter().map(|&v| mapped(&map, v)).collect();
        f.blocks[header_copy.index()].term = Terminator::Br(copies[body_pos], body_args);
        // This copy's `i + s` becomes `i0 + (copy + 1) * s` from the main loop's `i0`
        // (the same bits, as integer addition wraps): the copies' values do not chain,
        // and the last one is the main loop's step.
        if let Some(&bump) = map.get(&plan.next) {
            let offset = (copy as u64 + 1) * plan.step;
            let (c, v) = new_const(f, ty, offset, loc);
            f.blocks[plan.preheader.index()].insts.push(c);
            let defs = def_sites(f);
            if let Def::Inst(_, bi) = defs[bump.index()] {
                f.insts[bi.index()].args = vec![params[plan.iv], v];
            }
        }
        match prev_latch {
            Some(l) => retarget_latch(f, l, header_copy),
            None => first = Some(header_copy),
        }
        prev_latch = Some(copies[latch_pos]);
    }
    if let Some(l) = prev_latch {
        retarget_latch(f, l, main);
    }
    let Some(first) = first else { return };
    f.blocks[main.index()].term = Terminator::BrIf {
        cond: go,
        then_: (first, params.clone()),
        else_: (h, params),
    };
}

/// Points a latch copy's `br` (to a header) at `to`, keeping its arguments.
fn retarget_latch(f: &mut Function, latch: Block, to: Block) {
    if let Terminator::Br(t, _) = &mut f.blocks[latch.index()].term {
        *t = to;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::cleanup;
    use crate::{parse_module, verify_function};

    fn check(body: &str) -> (usize, String) {
        let text = format!(
            "kernel k {{\n  param buffer(0) a device type \"uint\" size 4 align 4\n{body}}}\n"
        );
        let mut m = parse_module(&text).unwrap();
        let f = &mut m.functions[0];
        let n = unroll_runtime_loops(f);
        verify_function(f, 0).unwrap();
        cleanup(f);
        verify_function(f, 0).unwrap();
        (n, f.to_string())
    }

    // for (i = 0; i < a[0]; ++i) a[i] = i;
    const LOOP: &str = "bb0:\n v0 = buffer_addr.0\n v1 = ld.device.u32 v0\n v2 = const.u32 0\n br bb1(v2)\nbb1(v3:u32):\n v4 = cmp.lt.u32 v3, v1\n br_if v4, bb2, bb3\nbb2:\n v5 = ptradd.4 v0, v3\n st.device.u32 v5, v3\n v6 = const.u32 1\n v7 = add.u32 v3, v6\n br bb1(v7)\nbb3:\n ret\n";

    #[test]
    fn uniform_runtime_bound_unrolls_by_four() {
        let (n, text) = check(LOOP);
        assert_eq!(n, 1, "{text}");
        assert_eq!(text.matches("st.device.u32").count(), 5, "{text}");
        assert!(text.contains("max.u32 v1"), "{text}");
    }

    #[test]
    fn loop_with_a_barrier_stays_rolled() {
        let with_barrier = LOOP.replace(
            " st.device.u32 v5, v3\n",
            " st.device.u32 v5, v3\n barrier.threadgroup.threadgroup\n",
        );
        assert!(with_barrier.contains("barrier"));
        assert_eq!(check(&with_barrier).0, 0);
    }

    #[test]
    fn per_lane_bound_stays_rolled() {
        let per_lane = LOOP.replace(
            "v1 = ld.device.u32 v0",
            "v1 = sreg.thread_position_in_grid.x",
        );
        assert_eq!(check(&per_lane).0, 0);
    }
}
