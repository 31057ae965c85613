//! Transformations that keep a function's meaning: dead-code elimination.

use crate::entity::Value;
use crate::function::Function;

/// Removes instructions whose results are never used and that have no effect beyond their
/// result. Loads count as effects (a load can fault), so they are kept. Returns how many
/// instructions were removed. The instruction arena keeps the removed entries (detached).
pub fn eliminate_dead_code(f: &mut Function) -> usize {
    let mut live = vec![false; f.value_types.len()];
    let mut work: Vec<Value> = Vec::new();
    let mark = |v: Value, live: &mut Vec<bool>, work: &mut Vec<Value>| {
        if let Some(l) = live.get_mut(v.index())
            && !*l
        {
            *l = true;
            work.push(v);
        }
    };
    // Roots: operands of effectful instructions and of terminators.
    let mut def_of = vec![None; f.value_types.len()];
    for data in &f.blocks {
        for &i in &data.insts {
            let inst = &f.insts[i.index()];
            for &r in &inst.results {
                if let Some(d) = def_of.get_mut(r.index()) {
                    *d = Some(i);
                }
            }
            if inst.op.has_side_effect() || inst.op.reads_memory() {
                for &a in &inst.args {
                    mark(a, &mut live, &mut work);
                }
                for &r in &inst.results {
                    mark(r, &mut live, &mut work);
                }
            }
        }
        for v in data.term.uses() {
            mark(v, &mut live, &mut work);
        }
    }
    while let Some(v) = work.pop() {
        if let Some(Some(i)) = def_of.get(v.index()) {
            for &a in &f.insts[i.index()].args {
                mark(a, &mut live, &mut work);
            }
        }
    }
    let mut removed = 0;
    for data in &mut f.blocks {
        let before = data.insts.len();
        data.insts.retain(|&i| {
            let inst = &f.insts[i.index()];
            inst.op.has_side_effect()
                || inst.op.reads_memory()
                || inst.results.iter().any(|r| live[r.index()])
        });
        removed += before - data.insts.len();
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_module, verify_function};

    #[test]
    fn removes_unused_pure_instructions_only() {
        let text = "kernel k {\n  param buffer(0) a device type \"float\" size 4 align 4\nbb0:\n  v0 = const.i32 16\n  v1 = const.u32 4\n  v2 = buffer_addr.0\n  v3 = ld.device.f32 v2\n  v4 = add.f32 v3, v3\n  v5 = mul.f32 v4, v4\n  st.device.f32 v2, v4\n  ret\n}\n";
        let mut m = parse_module(text).unwrap();
        let f = &mut m.functions[0];
        assert_eq!(eliminate_dead_code(f), 3);
        verify_function(f, 0).unwrap();
        let printed = f.to_string();
        assert!(
            !printed.contains("const.i32") && !printed.contains("mul.f32"),
            "{printed}"
        );
        assert!(
            printed.contains("ld.device.f32") && printed.contains("add.f32"),
            "{printed}"
        );
    }
}
