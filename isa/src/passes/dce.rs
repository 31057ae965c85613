//! Dead-code elimination: instructions whose results nobody needs, and block parameters
//! nobody reads.

use crate::entity::Value;
use crate::function::Function;
use crate::passes::edit::{Def, def_sites, for_each_edge};

/// Removes instructions whose results are never used and that have no effect beyond their
/// result, and block parameters whose values are never used (with the arguments passed to
/// them). Loads count as effects (a load can fault), so they are kept. A value used only
/// to compute dead values, or passed only to dead parameters, is dead too. Returns how
/// many instructions and parameters were removed. The instruction arena keeps the removed
/// instructions (detached).
pub fn eliminate_dead_code(f: &mut Function) -> usize {
    let defs = def_sites(f);
    let live = live_values(f, &defs);
    let mut removed = 0;
    for data in &mut f.blocks {
        let before = data.insts.len();
        data.insts.retain(|&i| {
            let inst = &f.insts[i.index()];
            keeps_itself(inst.op) || inst.results.iter().any(|r| live[r.index()])
        });
        removed += before - data.insts.len();
    }
    // Dead parameters: drop them and the arguments every edge passes to them.
    let dead_params: Vec<Vec<bool>> = f
        .blocks
        .iter()
        .enumerate()
        .map(|(b, data)| {
            data.params
                .iter()
                .map(|p| b != 0 && !live[p.index()])
                .collect()
        })
        .collect();
    for data in &mut f.blocks {
        for_each_edge(&mut data.term, |t, args| {
            let dead = &dead_params[t.index()];
            if dead.len() == args.len() {
                let mut k = 0;
                args.retain(|_| {
                    k += 1;
                    !dead[k - 1]
                });
            }
        });
    }
    for (b, data) in f.blocks.iter_mut().enumerate() {
        let dead = &dead_params[b];
        removed += dead.iter().filter(|d| **d).count();
        let mut k = 0;
        data.params.retain(|_| {
            k += 1;
            !dead[k - 1]
        });
    }
    removed
}

/// Operations kept whatever their results: effects, and loads (which can fault).
fn keeps_itself(op: crate::op::Op) -> bool {
    op.has_side_effect() || op.reads_memory()
}

/// Marks the values something needs: operands of effects and of branch conditions, and
/// everything those are computed from, through instructions and block parameters.
fn live_values(f: &Function, defs: &[Def]) -> Vec<bool> {
    let n = f.value_types.len();
    let mut live = vec![false; n];
    let mut work: Vec<Value> = Vec::new();
    let mark = |v: Value, live: &mut Vec<bool>, work: &mut Vec<Value>| {
        if let Some(l) = live.get_mut(v.index())
            && !*l
        {
            *l = true;
            work.push(v);
        }
    };
    // Arguments passed to each parameter, indexed by the parameter's value.
    let mut passed: Vec<Vec<Value>> = vec![Vec::new(); n];
    for data in &f.blocks {
        for &i in &data.insts {
            let inst = f.inst(i);
            if keeps_itself(inst.op) {
                for &a in &inst.args {
                    mark(a, &mut live, &mut work);
                }
            }
        }
        match &data.term {
            crate::function::Terminator::BrIf { cond, .. } => mark(*cond, &mut live, &mut work),
            crate::function::Terminator::Br(..) | crate::function::Terminator::Ret => {}
        }
        for (t, args) in data.term.targets() {
            if let Some(target) = f.blocks.get(t.index()) {
                for (p, a) in target.params.iter().zip(args) {
                    passed[p.index()].push(*a);
                }
            }
        }
    }
    // The entry block has no parameters; a parameter of an unreachable block may still be
    // read by an instruction and is handled like any other.
    while let Some(v) = work.pop() {
        match defs.get(v.index()).copied().unwrap_or(Def::None) {
            Def::Inst(_, i) => {
                for &a in &f.inst(i).args {
                    mark(a, &mut live, &mut work);
                }
            }
            Def::Param(..) => {
                for &a in &passed[v.index()] {
                    mark(a, &mut live, &mut work);
                }
            }
            Def::None => {}
        }
    }
    live
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_module, verify_function};

    fn check(body: &str, removed: usize, expect: &str) {
        let text = format!(
            "kernel k {{\n  param buffer(0) a device type \"float\" size 4 align 4\n{body}}}\n"
        );
        let mut m = parse_module(&text).unwrap();
        let f = &mut m.functions[0];
        assert_eq!(eliminate_dead_code(f), removed);
        verify_function(f, 0).unwrap();
        assert_eq!(crate::passes::body_text(f), expect);
    }

    #[test]
    fn removes_unused_pure_instructions_only() {
        check(
            "bb0:\n  v0 = const.i32 16\n  v1 = const.u32 4\n  v2 = buffer_addr.0\n  v3 = ld.device.f32 v2\n  v4 = add.f32 v3, v3\n  v5 = mul.f32 v4, v4\n  st.device.f32 v2, v4\n  ret\n",
            3,
            "bb0:\nv2 = buffer_addr.0\nv3 = ld.device.f32 v2\nv4 = add.f32 v3, v3\nst.device.f32 v2, v4\nret\n",
        );
    }

    #[test]
    fn removes_parameters_only_passed_around_a_loop() {
        // v2 is only passed back to itself; v1 decides the branch.
        check(
            "bb0:\n  v0 = const.u32 0\n  br bb1(v0, v0)\nbb1(v1:u32, v2:u32):\n  v3 = const.u32 1\n  v4 = add.u32 v1, v3\n  v5 = add.u32 v2, v3\n  v6 = cmp.lt.u32 v4, v3\n  br_if v6, bb1(v4, v5), bb2\nbb2:\n  ret\n",
            2,
            "bb0:\nv0 = const.u32 0\nbr bb1(v0)\nbb1(v1:u32):\nv3 = const.u32 1\nv4 = add.u32 v1, v3\nv6 = cmp.lt.u32 v4, v3\nbr_if v6, bb1(v4), bb2\nbb2:\nret\n",
        );
    }
}
