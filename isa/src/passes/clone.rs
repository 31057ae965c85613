//! Copying blocks, for unrolling and rotating loops.

use std::collections::HashMap;

use crate::entity::{Block, Inst, Value};
use crate::function::{BlockData, Function};
use crate::passes::edit::{for_each_edge, for_each_term_use, new_inst, new_value};

/// A value map: copies of values, and the values to use in place of others.
pub(crate) type ValueMap = HashMap<Value, Value>;

/// What `v` becomes under `map` (itself when unmapped).
pub(crate) fn mapped(map: &ValueMap, v: Value) -> Value {
    map.get(&v).copied().unwrap_or(v)
}

/// Copies `blocks`: each copy gets fresh parameters, instructions and results (entered
/// in `map`); operands are renamed through `map`, and branches to a copied block go to
/// its copy. Returns the copies in the order of `blocks`.
pub(crate) fn clone_blocks(f: &mut Function, blocks: &[Block], map: &mut ValueMap) -> Vec<Block> {
    let mut copies = Vec::with_capacity(blocks.len());
    let mut block_map: HashMap<Block, Block> = HashMap::new();
    for &b in blocks {
        let data = f.block(b).clone();
        let params: Vec<Value> = data
            .params
            .iter()
            .map(|&p| {
                let q = new_value(f, f.value_type(p));
                map.insert(p, q);
                q
            })
            .collect();
        let insts: Vec<Inst> = data
            .insts
            .iter()
            .map(|&i| {
                let inst = f.inst(i).clone();
                let loc = f.inst_locs[i.index()];
                let j = new_inst(f, inst.op, inst.ty, inst.args.clone(), loc);
                for (&r, &s) in inst.results.iter().zip(&f.insts[j.index()].results) {
                    map.insert(r, s);
                }
                j
            })
            .collect();
        let nb = Block(f.blocks.len() as u32);
        f.blocks.push(BlockData {
            params,
            insts,
            term: data.term,
            term_loc: data.term_loc,
        });
        block_map.insert(b, nb);
        copies.push(nb);
    }
    for &nb in &copies {
        for k in 0..f.blocks[nb.index()].insts.len() {
            let j = f.blocks[nb.index()].insts[k];
            for a in &mut f.insts[j.index()].args {
                *a = mapped(map, *a);
            }
        }
        let term = &mut f.blocks[nb.index()].term;
        for_each_term_use(term, |v| *v = mapped(map, *v));
        for_each_edge(term, |t, _| {
            if let Some(c) = block_map.get(t) {
                *t = *c;
            }
        });
    }
    copies
}
