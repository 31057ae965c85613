//! Loop-invariant code motion: pure instructions whose operands do not change inside a
//! loop move to the loop's preheader, so they run once instead of once per iteration.
//!
//! Only instructions that can neither fault nor observe anything move: arithmetic,
//! conversions, comparisons, selects, special-register reads and addresses, except a
//! constant offset from an address (see `is_offset_address`). Loads, stores
//! and atomics (which can fault or see other threads' writes), barriers (fixed points)
//! and cross-lane operations (whose result depends on the lanes active where they stand)
//! stay where they are. A loop is handled when it has a preheader: a single block outside
//! it that enters it by an unconditional `br`.

use crate::cfg::Cfg;
use crate::entity::Inst;
use crate::function::Function;
use crate::op::Op;
use crate::passes::edit::{constants, def_block, def_sites};
use crate::passes::loops::{create_preheaders, find_loops};

/// Whether an operation may run where it was not going to, and more or fewer times.
pub(crate) fn is_speculatable(op: Op) -> bool {
    !(op.has_side_effect() || op.reads_memory() || op.is_cross_lane())
}

/// A constant byte offset from an address (`ptradd p, c`). On the GPU it is the
/// immediate offset of the load or store that uses it: free, and holding no register.
/// Hoisted out of a loop, every one would hold a 64-bit register for the whole loop (an
/// unrolled tile loop has dozens), costing occupancy the real kernel does not pay.
fn is_offset_address(consts: &[Option<u64>], inst: &crate::function::InstData) -> bool {
    matches!(inst.op, Op::PtrAdd { .. }) && consts[inst.args[1].index()].is_some()
}

/// Hoists loop-invariant pure instructions into preheaders (made where missing),
/// innermost loops first. Returns how many instructions moved and preheaders were made.
pub fn hoist_loop_invariants(f: &mut Function) -> usize {
    let mut moved = create_preheaders(f, |_| true);
    let cfg = Cfg::new(f);
    let consts = constants(f);
    for lp in find_loops(f, &cfg) {
        let Some(pre) = lp.preheader(f, &cfg) else {
            continue;
        };
        let defs = def_sites(f);
        // Blocks of values: where each is defined now (hoisting changes it).
        let mut block_of: Vec<Option<crate::entity::Block>> =
            defs.iter().map(|&d| def_block(d)).collect();
        let mut hoisted: Vec<Inst> = Vec::new();
        for &b in cfg.reverse_postorder() {
            if !lp.contains(b) {
                continue;
            }
            let mut keep = Vec::new();
            for &i in &f.blocks[b.index()].insts {
                let inst = f.inst(i);
                let invariant = is_speculatable(inst.op)
                    && !is_offset_address(&consts, inst)
                    && inst
                        .args
                        .iter()
                        .all(|a| block_of[a.index()].is_some_and(|d| !lp.contains(d)));
                if invariant {
                    for &r in &inst.results {
                        block_of[r.index()] = Some(pre);
                    }
                    hoisted.push(i);
                } else {
                    keep.push(i);
                }
            }
            f.blocks[b.index()].insts = keep;
        }
        moved += hoisted.len();
        f.blocks[pre.index()].insts.extend(hoisted);
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_module, verify_function};

    fn check(body: &str, expect: &str) {
        let text = format!(
            "kernel k {{\n  param buffer(0) a device type \"float\" size 4 align 4\n{body}}}\n"
        );
        let mut m = parse_module(&text).unwrap();
        let f = &mut m.functions[0];
        hoist_loop_invariants(f);
        verify_function(f, 0).unwrap();
        let got = crate::passes::body_text(f);
        assert_eq!(got, expect);
    }

    #[test]
    fn invariant_arithmetic_moves_loads_and_shuffles_stay() {
        check(
            "bb0:\n v0 = buffer_addr.0\n v1 = sreg.thread_position_in_grid.x\n v2 = const.u32 0\n br bb1(v2)\nbb1(v3:u32):\n v4 = const.u32 16\n v5 = mul.u32 v1, v4\n v6 = ptradd.4 v0, v5\n v7 = ld.device.f32 v6\n v8 = simd.shuffle.f32 v7, v4\n st.device.f32 v6, v8\n v9 = add.u32 v3, v4\n v10 = cmp.lt.u32 v9, v5\n br_if v10, bb1(v9), bb2\nbb2:\n ret\n",
            "bb0:\nv0 = buffer_addr.0\nv1 = sreg.thread_position_in_grid.x\nv2 = const.u32 0\nv4 = const.u32 16\nv5 = mul.u32 v1, v4\nv6 = ptradd.4 v0, v5\nbr bb1(v2)\nbb1(v3:u32):\nv7 = ld.device.f32 v6\nv8 = simd.shuffle.f32 v7, v4\nst.device.f32 v6, v8\nv9 = add.u32 v3, v4\nv10 = cmp.lt.u32 v9, v5\nbr_if v10, bb1(v9), bb2\nbb2:\nret\n",
        );
    }
}
