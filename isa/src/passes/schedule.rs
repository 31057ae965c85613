//! Load scheduling: within each block, loads move up above arithmetic that does not feed
//! them, with the arithmetic that computes their addresses, so that several are in flight
//! before the first of their results is used (the timing model stalls a SIMD-group only
//! when it reads a register a load has not yet written). The address arithmetic of loads
//! that must wait for a store, atomic or barrier stays where it is: moved above it, it
//! would only hold registers (64-bit addresses, two each) across it.
//!
//! Only pure instructions (no memory access, no side effect, not cross-lane) change their
//! order relative to others; every other instruction (loads, stores, atomics, barriers,
//! SIMD-group operations) keeps its order relative to the rest of them, and nothing
//! leaves its block. So memory sees the same accesses in the same order, a fault happens
//! at the same instruction, and each instruction runs on the same lanes.
//!
//! At most [`MAX_LOADS_AHEAD`] loads are moved ahead of the first use of an earlier one,
//! which bounds the registers the longer-lived results cost.

use crate::entity::Inst;
use crate::function::Function;
use crate::op::Op;
use crate::passes::licm::is_speculatable;

/// The most loads whose results are waiting for their first use that the scheduler lets
/// build up by moving loads early.
pub const MAX_LOADS_AHEAD: usize = 8;

/// Reorders every block as the module documentation describes. Returns how many blocks
/// changed.
pub fn schedule_loads(f: &mut Function) -> usize {
    let mut changed = 0;
    for b in 0..f.blocks.len() {
        let order = schedule_block(f, &f.blocks[b].insts);
        if order != f.blocks[b].insts {
            f.blocks[b].insts = order;
            changed += 1;
        }
    }
    changed
}

fn is_load(op: Op) -> bool {
    matches!(op, Op::Load(_) | Op::LoadVec(..) | Op::MatrixLoad(..))
}

fn schedule_block(f: &Function, insts: &[Inst]) -> Vec<Inst> {
    let n = insts.len();
    // Position in the block of the instruction defining each value defined here.
    let mut pos_of = std::collections::HashMap::new();
    for (k, &i) in insts.iter().enumerate() {
        for &r in &f.inst(i).results {
            pos_of.insert(r, k);
        }
    }
    // Dependencies: operands defined in the block (`preds`, `users`), and for an ordered
    // instruction the previous ordered one (counted in `waiting` only).
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting = vec![0usize; n];
    let mut last_ordered = None;
    for (k, &i) in insts.iter().enumerate() {
        let inst = f.inst(i);
        for a in &inst.args {
            if let Some(&d) = pos_of.get(a) {
                preds[k].push(d);
                users[d].push(k);
            }
        }
        waiting[k] = preds[k].len();
        if !is_speculatable(inst.op) {
            if last_ordered.is_some() {
                waiting[k] += 1;
            }
            last_ordered = Some(k);
        }
    }
    // The ordered instructions in order, and for each pure instruction the first of them
    // that is a load it feeds (transitively), as a position in that chain.
    let chain: Vec<usize> = (0..n)
        .filter(|&k| !is_speculatable(f.inst(insts[k]).op))
        .collect();
    let mut first_fed = vec![usize::MAX; n];
    for (c, &k) in chain.iter().enumerate() {
        if is_load(f.inst(insts[k]).op) {
            first_fed[k] = c;
        }
    }
    for k in (0..n).rev() {
        let fed = first_fed[k];
        if fed == usize::MAX {
            continue;
        }
        for &d in &preds[k] {
            if is_speculatable(f.inst(insts[d]).op) {
                first_fed[d] = first_fed[d].min(fed);
            }
        }
    }
    // The next ordered instruction not yet scheduled, as a chain position.
    let mut chain_next = 0usize;
    let mut done = vec![false; n];
    // Loads scheduled whose results no scheduled instruction has read yet.
    let mut unread = vec![false; n];
    let mut ahead = 0usize;
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        // The loads that may go next: those before the next ordered instruction that is
        // not a load, within the budget. Only their address arithmetic moves up (not
        // that of loads past a store or barrier, which would only hold registers).
        let budget = MAX_LOADS_AHEAD.saturating_sub(ahead);
        let window_end = chain[chain_next..]
            .iter()
            .take_while(|&&k| is_load(f.inst(insts[k]).op))
            .take(budget)
            .count()
            + chain_next;
        let ready = (0..n).filter(|&k| !done[k] && waiting[k] == 0);
        let rank = |k: usize| {
            let op = f.inst(insts[k]).op;
            if budget > 0 && is_load(op) {
                0
            } else if is_speculatable(op) && first_fed[k] < window_end {
                1
            } else {
                2
            }
        };
        let Some(k) = ready.min_by_key(|&k| (rank(k), k)) else {
            // Unreachable for a verified function (a block's instructions form a DAG);
            // keep the rest in their order.
            order.extend((0..n).filter(|&k| !done[k]));
            break;
        };
        done[k] = true;
        order.push(k);
        for &d in &preds[k] {
            if unread[d] {
                unread[d] = false;
                ahead -= 1;
            }
        }
        if is_load(f.inst(insts[k]).op) && !users[k].is_empty() {
            unread[k] = true;
            ahead += 1;
        }
        for &u in &users[k] {
            waiting[u] -= 1;
        }
        if !is_speculatable(f.inst(insts[k]).op) {
            chain_next += 1;
            if let Some(&next) = chain.get(chain_next) {
                waiting[next] -= 1;
            }
        }
    }
    order.into_iter().map(|k| insts[k]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_module, verify_function};

    #[test]
    fn loads_move_above_arithmetic_that_does_not_feed_them() {
        let text = "kernel k {\n  param buffer(0) a device type \"float\" size 4 align 4\nbb0:\n v0 = buffer_addr.0\n v1 = ld.device.f32 v0\n v2 = add.f32 v1, v1\n v3 = const.i64 4\n v4 = ptradd.1 v0, v3\n v5 = ld.device.f32 v4\n v6 = add.f32 v5, v2\n st.device.f32 v0, v6\n ret\n}\n";
        let mut m = parse_module(text).unwrap();
        let f = &mut m.functions[0];
        assert_eq!(schedule_loads(f), 1);
        verify_function(f, 0).unwrap();
        let printed = f.to_string();
        let second_load = printed.find("v5 = ld").unwrap();
        let first_add = printed.find("v2 = add").unwrap();
        assert!(second_load < first_add, "{printed}");
        assert_eq!(schedule_loads(f), 0);
    }
}
