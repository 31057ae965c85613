//! Common-subexpression elimination by dominator-scoped value numbering: an instruction
//! that computes what a dominating instruction already computed (same operation, type and
//! operands) is removed and its uses read the earlier result.
//!
//! - Constants are free (the simulator hoists them), so every constant moves to the entry
//!   block first, where identical ones merge.
//! - Cross-lane operations (SIMD-group, quad-group and matrix operations) depend on the
//!   active lanes, which can differ between blocks: they merge only within one block.
//! - Loads merge only when they read read-only memory: a constant buffer, a `const`
//!   device buffer or a module data object, reached from its base address by offsets
//!   that cannot leave it. The first load did not fault, so the second reads the same
//!   bytes. Other loads, atomics and effects never merge.
//! - Integer additions, multiplications, logic, min/max and integer (in)equality are
//!   commutative; their operands are ordered before lookup. Float operations are not
//!   reordered (which NaN comes out depends on the order).

use std::collections::HashMap;

use crate::cfg::Cfg;
use crate::entity::{Block, Inst, Value};
use crate::function::{Function, ParamKind};
use crate::op::{CmpCond, Op, Space};
use crate::passes::edit::{Def, Substitution, def_sites};
use crate::passes::ranges::Ranges;
use crate::types::Type;

type Key = (Op, Type, Vec<Value>);

/// Removes instructions that recompute a dominating instruction's results. Returns how
/// many were removed.
pub fn eliminate_common_subexpressions(f: &mut Function) -> usize {
    hoist_constants(f);
    let cfg = Cfg::new(f);
    let ranges = Ranges::new(f, &cfg);
    let defs = def_sites(f);
    let readonly = ReadOnly {
        f,
        defs: &defs,
        ranges: &ranges,
    };
    let loads: Vec<bool> = (0..f.insts.len())
        .map(|i| {
            let inst = &f.insts[i];
            matches!(inst.op, Op::Load(_)) && readonly.reads_readonly(inst.args[0])
        })
        .collect();
    let mut children: Vec<Vec<Block>> = vec![Vec::new(); f.blocks.len()];
    for &b in cfg.reverse_postorder() {
        if let Some(d) = cfg.immediate_dominator(b) {
            children[d.index()].push(b);
        }
    }
    let mut subst = Substitution::new(f);
    let mut table: HashMap<Key, Vec<Value>> = HashMap::new();
    let mut removed_insts: Vec<bool> = vec![false; f.insts.len()];
    let mut removed = 0;
    // Depth-first over the dominator tree; `scopes` holds the keys each block added.
    let mut stack: Vec<(Block, bool)> = vec![(f.entry(), false)];
    let mut scopes: Vec<Vec<Key>> = Vec::new();
    while let Some((b, done)) = stack.pop() {
        if done {
            for key in scopes.pop().unwrap_or_default() {
                table.remove(&key);
            }
            continue;
        }
        let mut added = Vec::new();
        let mut local: HashMap<Key, Vec<Value>> = HashMap::new();
        for &i in &f.blocks[b.index()].insts {
            let inst = &f.insts[i.index()];
            if inst.results.is_empty() {
                continue;
            }
            let args: Vec<Value> = inst.args.iter().map(|&a| subst.resolve(a)).collect();
            let cross_lane = inst.op.is_cross_lane();
            let pure = !inst.op.has_side_effect() && !inst.op.reads_memory();
            if !(pure || loads[i.index()]) {
                continue;
            }
            let key = normalize(inst.op, inst.ty, args);
            let scope = if cross_lane { &mut local } else { &mut table };
            match scope.get(&key) {
                Some(earlier) => {
                    for (&r, &e) in inst.results.iter().zip(earlier) {
                        subst.set(r, e);
                    }
                    removed_insts[i.index()] = true;
                    removed += 1;
                }
                None => {
                    scope.insert(key.clone(), inst.results.clone());
                    if !cross_lane {
                        added.push(key);
                    }
                }
            }
        }
        scopes.push(added);
        stack.push((b, true));
        for &c in children[b.index()].iter().rev() {
            stack.push((c, false));
        }
    }
    for data in &mut f.blocks {
        data.insts.retain(|i| !removed_insts[i.index()]);
    }
    subst.apply(f);
    removed
}

/// Moves every constant to the start of the entry block.
fn hoist_constants(f: &mut Function) {
    let mut consts: Vec<Inst> = Vec::new();
    for data in &mut f.blocks {
        data.insts.retain(|&i| {
            let is_const = matches!(f.insts[i.index()].op, Op::Const(_));
            if is_const {
                consts.push(i);
            }
            !is_const
        });
    }
    let entry = &mut f.blocks[0].insts;
    consts.append(entry);
    *entry = consts;
}

/// The lookup key: operands of commutative operations in a fixed order.
fn normalize(op: Op, ty: Type, mut args: Vec<Value>) -> Key {
    let commutes = match op {
        Op::Add | Op::Mul | Op::Min | Op::Max | Op::MulHi => ty.is_int(),
        Op::And | Op::Or | Op::Xor => true,
        Op::Cmp(CmpCond::Eq | CmpCond::Ne) => !ty.is_float(),
        _ => false,
    };
    if commutes && args.len() == 2 && args[1] < args[0] {
        args.swap(0, 1);
    }
    (op, ty, args)
}

/// Decides whether an address lies in read-only memory.
struct ReadOnly<'a> {
    f: &'a Function,
    defs: &'a [Def],
    ranges: &'a Ranges,
}

/// Offsets from a region's base stay inside the region when they are below this (an
/// address is `(region << 40) | offset`; see the simulator's memory map).
const REGION_BYTES: i128 = 1 << 40;

impl ReadOnly<'_> {
    /// Whether `addr` is the base of a read-only region plus offsets that are never
    /// negative and never reach the next region.
    fn reads_readonly(&self, addr: Value) -> bool {
        let mut v = addr;
        let mut max_offset: i128 = 0;
        for _ in 0..64 {
            let Def::Inst(_, i) = self.defs[v.index()] else {
                return false;
            };
            let inst = self.f.inst(i);
            match inst.op {
                Op::PtrAdd { scale } => {
                    // Signed indices are sign-extended, unsigned ones zero-extended: the
                    // range is of the extended value.
                    let r = self.ranges.get(inst.args[1]);
                    if r.lo < 0 {
                        return false;
                    }
                    max_offset += r.hi * scale as i128;
                    if max_offset >= REGION_BYTES {
                        return false;
                    }
                    v = inst.args[0];
                }
                Op::BufferAddr(n) => {
                    return self
                        .f
                        .param(ParamKind::Buffer, n)
                        .is_some_and(|p| p.readonly || p.space == Space::Constant);
                }
                Op::DataAddr(_) => return true,
                _ => return false,
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::dce::eliminate_dead_code;
    use crate::{parse_module, verify_function};

    fn check(body: &str, expect: &str) {
        let text = format!(
            "kernel k {{\n  param buffer(0) a device readonly type \"uint\" size 4 align 4\n  param buffer(1) b device type \"uint\" size 4 align 4\n{body}}}\n"
        );
        let mut m = parse_module(&text).unwrap();
        let f = &mut m.functions[0];
        eliminate_common_subexpressions(f);
        eliminate_dead_code(f);
        verify_function(f, 0).unwrap();
        let got = crate::passes::body_text(f);
        assert_eq!(got, expect);
    }

    #[test]
    fn dominated_recomputations_merge() {
        check(
            "bb0:\n v0 = sreg.thread_index_in_simdgroup\n v1 = const.u32 3\n v2 = add.u32 v0, v1\n v3 = cmp.lt.u32 v0, v1\n br_if v3, bb1, bb2\nbb1:\n v4 = const.u32 3\n v5 = add.u32 v4, v0\n v6 = buffer_addr.1\n v7 = ptradd.4 v6, v5\n st.device.u32 v7, v2\n br bb2\nbb2:\n ret\n",
            "bb0:\nv1 = const.u32 3\nv0 = sreg.thread_index_in_simdgroup\nv2 = add.u32 v0, v1\nv3 = cmp.lt.u32 v0, v1\nbr_if v3, bb1, bb2\nbb1:\nv6 = buffer_addr.1\nv7 = ptradd.4 v6, v2\nst.device.u32 v7, v2\nbr bb2\nbb2:\nret\n",
        );
    }

    #[test]
    fn only_read_only_loads_merge() {
        check(
            "bb0:\n v0 = buffer_addr.0\n v1 = ld.device.u32 v0\n v2 = ld.device.u32 v0\n v3 = buffer_addr.1\n v4 = ld.device.u32 v3\n st.device.u32 v3, v1\n v5 = ld.device.u32 v3\n v6 = add.u32 v2, v4\n v7 = add.u32 v6, v5\n st.device.u32 v3, v7\n ret\n",
            "bb0:\nv0 = buffer_addr.0\nv1 = ld.device.u32 v0\nv3 = buffer_addr.1\nv4 = ld.device.u32 v3\nst.device.u32 v3, v1\nv5 = ld.device.u32 v3\nv6 = add.u32 v1, v4\nv7 = add.u32 v6, v5\nst.device.u32 v3, v7\nret\n",
        );
    }

    #[test]
    fn cross_lane_operations_stay_in_their_block() {
        check(
            "bb0:\n v0 = sreg.thread_index_in_simdgroup\n v1 = simd.sum.u32 v0\n v2 = simd.sum.u32 v0\n v3 = cmp.lt.u32 v0, v1\n br_if v3, bb1, bb2\nbb1:\n v4 = simd.sum.u32 v0\n v5 = add.u32 v4, v2\n v6 = buffer_addr.1\n st.device.u32 v6, v5\n br bb2\nbb2:\n ret\n",
            "bb0:\nv0 = sreg.thread_index_in_simdgroup\nv1 = simd.sum.u32 v0\nv3 = cmp.lt.u32 v0, v1\nbr_if v3, bb1, bb2\nbb1:\nv4 = simd.sum.u32 v0\nv5 = add.u32 v4, v1\nv6 = buffer_addr.1\nst.device.u32 v6, v5\nbr bb2\nbb2:\nret\n",
        );
    }
}
