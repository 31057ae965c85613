//! Small editing tools the passes share: value substitution, definition sites, use
//! counts, and the creation of values and instructions.

use crate::entity::{Block, Inst, Value};
use crate::function::{Function, InstData, SrcLoc, Terminator};
use crate::op::Op;
use crate::types::Type;

/// Replaces values by other values in every operand of a function. Chains (`a` by `b`,
/// `b` by `c`) resolve to their end.
#[derive(Clone, Debug)]
pub(crate) struct Substitution {
    map: Vec<Option<Value>>,
    count: usize,
}

impl Substitution {
    /// An empty substitution for the values of `f`.
    pub fn new(f: &Function) -> Self {
        Substitution {
            map: vec![None; f.value_types.len()],
            count: 0,
        }
    }

    /// Whether nothing is substituted.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Number of values substituted.
    pub fn len(&self) -> usize {
        self.count
    }

    /// What `v` stands for now.
    pub fn resolve(&self, mut v: Value) -> Value {
        while let Some(Some(to)) = self.map.get(v.index()) {
            v = *to;
        }
        v
    }

    /// Makes every use of `from` a use of `to`. Returns false (and does nothing) when that
    /// would make a cycle or `from` is already substituted.
    pub fn set(&mut self, from: Value, to: Value) -> bool {
        let to = self.resolve(to);
        if to == from || from.index() >= self.map.len() || self.map[from.index()].is_some() {
            return false;
        }
        self.map[from.index()] = Some(to);
        self.count += 1;
        true
    }

    /// Rewrites the operands of every placed instruction and terminator.
    pub fn apply(&self, f: &mut Function) {
        if self.is_empty() {
            return;
        }
        for b in 0..f.blocks.len() {
            for k in 0..f.blocks[b].insts.len() {
                let i = f.blocks[b].insts[k];
                for a in &mut f.insts[i.index()].args {
                    *a = self.resolve(*a);
                }
            }
            for_each_term_use(&mut f.blocks[b].term, |v| *v = self.resolve(*v));
        }
    }
}

/// Calls `g` on every value a terminator reads.
pub(crate) fn for_each_term_use(term: &mut Terminator, mut g: impl FnMut(&mut Value)) {
    match term {
        Terminator::Ret => {}
        Terminator::Br(_, args) => args.iter_mut().for_each(g),
        Terminator::BrIf { cond, then_, else_ } => {
            g(cond);
            then_.1.iter_mut().for_each(&mut g);
            else_.1.iter_mut().for_each(g);
        }
    }
}

/// Calls `g` on every edge of a terminator (target and arguments).
pub(crate) fn for_each_edge(term: &mut Terminator, mut g: impl FnMut(&mut Block, &mut Vec<Value>)) {
    match term {
        Terminator::Ret => {}
        Terminator::Br(t, args) => g(t, args),
        Terminator::BrIf { then_, else_, .. } => {
            g(&mut then_.0, &mut then_.1);
            g(&mut else_.0, &mut else_.1);
        }
    }
}

/// Where a value is defined.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Def {
    /// Nowhere (not yet, or its definition was removed).
    None,
    /// Parameter `n` of a block.
    Param(Block, usize),
    /// A result of an instruction placed in a block.
    Inst(Block, Inst),
}

/// The definition site of every value.
pub(crate) fn def_sites(f: &Function) -> Vec<Def> {
    let mut defs = vec![Def::None; f.value_types.len()];
    for b in f.block_ids() {
        let data = f.block(b);
        for (n, &p) in data.params.iter().enumerate() {
            defs[p.index()] = Def::Param(b, n);
        }
        for &i in &data.insts {
            for &r in &f.inst(i).results {
                defs[r.index()] = Def::Inst(b, i);
            }
        }
    }
    defs
}

/// The block a value is defined in.
pub(crate) fn def_block(d: Def) -> Option<Block> {
    match d {
        Def::None => None,
        Def::Param(b, _) | Def::Inst(b, _) => Some(b),
    }
}

/// The constant bits of every value defined by a placed `const` instruction.
pub(crate) fn constants(f: &Function) -> Vec<Option<u64>> {
    let mut c = vec![None; f.value_types.len()];
    for data in &f.blocks {
        for &i in &data.insts {
            let inst = f.inst(i);
            if let (Op::Const(bits), Some(r)) = (inst.op, inst.result()) {
                c[r.index()] = Some(bits);
            }
        }
    }
    c
}

/// Creates a new value of type `ty`.
pub(crate) fn new_value(f: &mut Function, ty: Type) -> Value {
    let v = Value(f.value_types.len() as u32);
    f.value_types.push(ty);
    v
}

/// Creates an instruction (not placed in any block) with fresh results.
pub(crate) fn new_inst(f: &mut Function, op: Op, ty: Type, args: Vec<Value>, loc: SrcLoc) -> Inst {
    let results = match op.result_type(ty) {
        Some(rt) => (0..op.result_count()).map(|_| new_value(f, rt)).collect(),
        None => Vec::new(),
    };
    let i = Inst(f.insts.len() as u32);
    f.insts.push(InstData {
        op,
        ty,
        args,
        results,
    });
    f.inst_locs.push(loc);
    i
}

/// Creates a `const` instruction (not placed) and returns it with its value.
pub(crate) fn new_const(f: &mut Function, ty: Type, bits: u64, loc: SrcLoc) -> (Inst, Value) {
    let i = new_inst(f, Op::Const(bits & ty.mask()), ty, Vec::new(), loc);
    let v = f.insts[i.index()].results[0];
    (i, v)
}

/// Turns a placed instruction into a `const` of its result's type, keeping its result.
pub(crate) fn make_const(f: &mut Function, i: Inst, bits: u64) {
    let inst = &mut f.insts[i.index()];
    let ty = inst
        .op
        .result_type(inst.ty)
        .expect("only instructions with a result become constants");
    inst.op = Op::Const(bits & ty.mask());
    inst.ty = ty;
    inst.args.clear();
}

/// How many times each value is read (by placed instructions and terminators).
pub(crate) fn use_counts(f: &Function) -> Vec<u32> {
    let mut n = vec![0u32; f.value_types.len()];
    for data in &f.blocks {
        for &i in &data.insts {
            for &a in &f.inst(i).args {
                n[a.index()] += 1;
            }
        }
        for v in data.term.uses() {
            n[v.index()] += 1;
        }
    }
    n
}

/// Drops the instructions no block holds from the arena (and their locations), renumbering
/// the rest in block order.
pub(crate) fn compact_instructions(f: &mut Function) {
    let mut insts = Vec::with_capacity(f.placed_inst_count());
    let mut locs = Vec::with_capacity(insts.capacity());
    for b in 0..f.blocks.len() {
        for k in 0..f.blocks[b].insts.len() {
            let i = f.blocks[b].insts[k];
            f.blocks[b].insts[k] = Inst(insts.len() as u32);
            insts.push(f.insts[i.index()].clone());
            locs.push(f.inst_locs[i.index()]);
        }
    }
    f.insts = insts;
    f.inst_locs = locs;
}
