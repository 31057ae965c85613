//! SIMD-group-uniform values: values that every lane executing an instruction together
//! holds with the same bits.
//!
//! A value is uniform when it is a constant, a buffer or threadgroup address, a special
//! register that is the same for every lane of a SIMD-group (threadgroup position, grid
//! and threadgroup sizes, the SIMD-group's index), a pure operation of uniform values, or
//! a load (not from thread memory) of a uniform address: the lanes read the same bytes in
//! the same instruction. Block parameters are never uniform (lanes may arrive from
//! different edges).
//!
//! Lanes that leave a loop at different iterations hold the values of different
//! iterations, so a value is uniform only *for* a loop when every loop around its
//! definition also contains that loop: its lanes then executed the definition together.

use crate::cfg::Cfg;
use crate::entity::Value;
use crate::function::Function;
use crate::op::{Op, Space, SpecialReg};
use crate::passes::edit::{Def, def_block, def_sites};
use crate::passes::licm::is_speculatable;
use crate::passes::loops::Loop;

/// Which values are uniform by their definition (before the loop condition).
pub(crate) struct Uniformity {
    uniform: Vec<bool>,
    defs: Vec<Def>,
}

impl Uniformity {
    /// Computes the uniform values of `f`.
    pub fn new(f: &Function, cfg: &Cfg) -> Self {
        let defs = def_sites(f);
        let mut uniform = vec![false; f.value_types.len()];
        // Definitions dominate their uses, so reverse postorder sees operands first
        // (block parameters, the only values a back edge carries, are never uniform).
        for &b in cfg.reverse_postorder() {
            for &i in &f.block(b).insts {
                let inst = f.inst(i);
                let args_uniform = inst.args.iter().all(|a| uniform[a.index()]);
                let is_uniform = match inst.op {
                    Op::Const(_)
                    | Op::BufferAddr(_)
                    | Op::ThreadgroupParamAddr(_)
                    | Op::ThreadgroupAddr(_)
                    | Op::DataAddr(_) => true,
                    Op::Sreg(r) => uniform_register(r),
                    Op::Load(s) | Op::LoadVec(s, _) => s != Space::Thread && args_uniform,
                    Op::LocalAddr(_) => false,
                    op => is_speculatable(op) && args_uniform,
                };
                if is_uniform {
                    for &r in &inst.results {
                        uniform[r.index()] = true;
                    }
                }
            }
        }
        Uniformity { uniform, defs }
    }

    /// Whether `v` has the same bits in every lane that runs `lp` together: it is uniform
    /// and every loop around its definition contains `lp`.
    pub fn is_uniform_for(&self, v: Value, lp: &Loop, loops: &[Loop]) -> bool {
        if !self.uniform[v.index()] {
            return false;
        }
        let Some(b) = def_block(self.defs[v.index()]) else {
            return false;
        };
        loops
            .iter()
            .filter(|m| m.contains(b))
            .all(|m| m.contains(lp.header))
    }
}

/// Special registers with one value per SIMD-group.
fn uniform_register(r: SpecialReg) -> bool {
    use SpecialReg::*;
    matches!(
        r,
        ThreadgroupPositionInGridX
            | ThreadgroupPositionInGridY
            | ThreadgroupPositionInGridZ
            | ThreadsPerGridX
            | ThreadsPerGridY
            | ThreadsPerGridZ
            | ThreadsPerThreadgroupX
            | ThreadsPerThreadgroupY
            | ThreadsPerThreadgroupZ
            | DispatchThreadsPerThreadgroupX
            | DispatchThreadsPerThreadgroupY
            | DispatchThreadsPerThreadgroupZ
            | ThreadgroupsPerGridX
            | ThreadgroupsPerGridY
            | ThreadgroupsPerGridZ
            | ThreadExecutionWidth
            | ThreadsPerSimdgroup
            | SimdgroupIndexInThreadgroup
            | SimdgroupsPerThreadgroup
            | DispatchSimdgroupsPerThreadgroup
            | QuadgroupsPerThreadgroup
            | DispatchQuadgroupsPerThreadgroup
    )
}
