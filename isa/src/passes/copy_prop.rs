//! Copy propagation: values that are copies of other values are replaced by those values.
//!
//! The copies are a `bitcast` to the same type, an integer `cvt` to the same type, and a
//! block parameter that every edge entering its block sets to the same value (or to the
//! parameter itself, around a loop); such a parameter is removed with its arguments.

use crate::cfg::Cfg;
use crate::entity::Value;
use crate::function::Function;
use crate::op::Op;
use crate::passes::edit::{Substitution, for_each_edge};

/// Replaces copies by their sources and removes parameters that are copies. Returns the
/// number of copies removed.
pub fn propagate_copies(f: &mut Function) -> usize {
    let mut subst = Substitution::new(f);
    for data in &mut f.blocks {
        data.insts.retain(|&i| {
            let inst = &f.insts[i.index()];
            let is_copy = match inst.op {
                Op::Bitcast { from } => from == inst.ty,
                Op::Cvt { from, .. } => from == inst.ty && inst.ty.is_int(),
                _ => false,
            };
            !(is_copy && subst.set(inst.results[0], inst.args[0]))
        });
    }
    let mut removed = subst.len();
    subst.apply(f);
    removed += remove_copy_params(f);
    removed
}

/// Removes block parameters that receive one value on every edge from a reachable block.
fn remove_copy_params(f: &mut Function) -> usize {
    let mut removed = 0;
    loop {
        let cfg = Cfg::new(f);
        let mut subst = Substitution::new(f);
        // For each block and parameter position: the one value passed, if so far one.
        let mut passed: Vec<Vec<Incoming>> = f
            .blocks
            .iter()
            .map(|d| vec![Incoming::Nothing; d.params.len()])
            .collect();
        for b in f.block_ids().filter(|&b| cfg.is_reachable(b)) {
            for (t, args) in f.block(b).term.targets() {
                let params = &f.block(t).params;
                for (k, (&p, &a)) in params.iter().zip(args).enumerate() {
                    passed[t.index()][k].add(p, a);
                }
            }
        }
        let mut dead: Vec<Vec<bool>> = Vec::with_capacity(f.blocks.len());
        for (b, data) in f.blocks.iter().enumerate() {
            let mut d = vec![false; data.params.len()];
            if b != 0 && cfg.is_reachable(crate::entity::Block(b as u32)) {
                for (k, &p) in data.params.iter().enumerate() {
                    if let Incoming::One(v) = passed[b][k]
                        && subst.set(p, v)
                    {
                        d[k] = true;
                    }
                }
            }
            dead.push(d);
        }
        let round: usize = dead.iter().map(|d| d.iter().filter(|x| **x).count()).sum();
        if round == 0 {
            return removed;
        }
        removed += round;
        for data in &mut f.blocks {
            for_each_edge(&mut data.term, |t, args| {
                let d = &dead[t.index()];
                if d.len() == args.len() {
                    let mut k = 0;
                    args.retain(|_| {
                        k += 1;
                        !d[k - 1]
                    });
                }
            });
        }
        for (data, d) in f.blocks.iter_mut().zip(&dead) {
            let mut k = 0;
            data.params.retain(|_| {
                k += 1;
                !d[k - 1]
            });
        }
        subst.apply(f);
    }
}

/// What the edges into a block pass to one of its parameters.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Incoming {
    /// No edge seen yet.
    Nothing,
    /// One value (besides the parameter itself).
    One(Value),
    /// Several values.
    Many,
}

impl Incoming {
    fn add(&mut self, param: Value, a: Value) {
        if a == param {
            return;
        }
        *self = match *self {
            Incoming::Nothing => Incoming::One(a),
            Incoming::One(v) if v == a => Incoming::One(v),
            _ => Incoming::Many,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_module, verify_function};

    fn check(body: &str, expect: &str) {
        let mut m = parse_module(&format!("kernel k {{\n{body}}}\n")).unwrap();
        let f = &mut m.functions[0];
        propagate_copies(f);
        verify_function(f, 0).unwrap();
        let got = crate::passes::body_text(f);
        assert_eq!(got, expect);
    }

    #[test]
    fn loop_invariant_parameters_and_same_type_casts_go() {
        check(
            "bb0:\n v0 = sreg.thread_index_in_simdgroup\n v1 = bitcast.u32.u32 v0\n br bb1(v1, v0)\nbb1(v2:u32, v3:u32):\n v4 = add.u32 v2, v3\n v5 = cmp.lt.u32 v4, v3\n br_if v5, bb1(v4, v3), bb2\nbb2:\n ret\n",
            "bb0:\nv0 = sreg.thread_index_in_simdgroup\nbr bb1(v0)\nbb1(v2:u32):\nv4 = add.u32 v2, v0\nv5 = cmp.lt.u32 v4, v0\nbr_if v5, bb1(v4), bb2\nbb2:\nret\n",
        );
    }
}
