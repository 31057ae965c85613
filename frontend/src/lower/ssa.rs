//! SSA construction while lowering (Braun et al., "Simple and Efficient Construction of
//! Static Single Assignment Form", 2013), with block parameters in place of phis.
//!
//! Lowering writes and reads *slots* (one per register leaf of a local variable); this
//! builder turns them into SSA values, adding block parameters where control flow merges
//! and passing them along the incoming branches. Trivial parameters (all incoming values
//! the same) are removed when the function is finished.

use std::collections::HashMap;

use metalsim_isa::{Block, Function, FunctionBuilder, Op, SrcLoc, Terminator, Type, Value};

/// A variable leaf tracked by SSA construction.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Slot(u32);

/// A [`FunctionBuilder`] with SSA variables and predecessor tracking.
pub struct SsaBuilder {
    /// The underlying builder (instructions go to its current block).
    pub b: FunctionBuilder,
    slot_types: Vec<Type>,
    defs: HashMap<(Slot, Block), Value>,
    sealed: Vec<bool>,
    incomplete: Vec<Vec<(Slot, Value)>>,
    preds: Vec<Vec<Block>>,
    undefs: HashMap<Type, Value>,
    consts: HashMap<Value, u64>,
}

impl SsaBuilder {
    /// Starts a function whose entry block `bb0` is sealed (it has no predecessors).
    pub fn new(name: &str) -> Self {
        SsaBuilder {
            b: FunctionBuilder::new(name),
            slot_types: Vec::new(),
            defs: HashMap::new(),
            sealed: vec![true],
            incomplete: vec![Vec::new()],
            preds: vec![Vec::new()],
            undefs: HashMap::new(),
            consts: HashMap::new(),
        }
    }

    /// A new variable slot of an ISA type.
    pub fn new_slot(&mut self, ty: Type) -> Slot {
        self.slot_types.push(ty);
        Slot(self.slot_types.len() as u32 - 1)
    }

    /// The type of a slot.
    pub fn slot_type(&self, s: Slot) -> Type {
        self.slot_types[s.0 as usize]
    }

    /// A new, unsealed block.
    pub fn create_block(&mut self) -> Block {
        let b = self.b.create_block();
        self.sealed.push(false);
        self.incomplete.push(Vec::new());
        self.preds.push(Vec::new());
        b
    }

    /// The block instructions go to.
    pub fn current(&self) -> Block {
        self.b.current_block()
    }

    /// Whether the current block already ended (code after `return`, `break`...).
    pub fn is_terminated(&self) -> bool {
        self.b.is_terminated(self.current())
    }

    /// Makes `block` current.
    pub fn switch_to(&mut self, block: Block) {
        self.b.switch_to(block);
    }

    /// Appends an instruction to the current block.
    pub fn ins(&mut self, op: Op, ty: Type, args: &[Value]) -> Option<Value> {
        self.b.ins(op, ty, args)
    }

    /// Appends an instruction that has a result.
    pub fn val(&mut self, op: Op, ty: Type, args: &[Value]) -> Value {
        let v = self.b.ins_value(op, ty, args);
        if let Op::Const(bits) = op {
            self.consts.insert(v, bits);
        }
        v
    }

    /// The bits of a value defined by a `const` instruction.
    pub fn const_bits(&self, v: Value) -> Option<u64> {
        self.consts.get(&v).copied()
    }

    /// Sets the location of following instructions.
    pub fn set_loc(&mut self, loc: SrcLoc) {
        self.b.set_loc(loc);
    }

    /// Writes a slot in the current block.
    pub fn write(&mut self, slot: Slot, v: Value) {
        let cur = self.current();
        self.defs.insert((slot, cur), v);
    }

    /// Reads a slot at the end of the current block.
    pub fn read(&mut self, slot: Slot) -> Value {
        let cur = self.current();
        self.read_in(slot, cur)
    }

    fn undef(&mut self, ty: Type) -> Value {
        if let Some(v) = self.undefs.get(&ty) {
            return *v;
        }
        let cur = self.current();
        let loc = self.b.loc();
        self.b.switch_to(Block(0));
        self.b.set_loc(SrcLoc::UNKNOWN);
        let v = self.b.ins_value(Op::Const(0), ty, &[]);
        self.b.switch_to(cur);
        self.b.set_loc(loc);
        self.undefs.insert(ty, v);
        v
    }

    fn read_in(&mut self, slot: Slot, block: Block) -> Value {
        // Walk up single-predecessor chains iteratively (deep nesting must not recurse).
        let mut chain = Vec::new();
        let mut b = block;
        let v = loop {
            if let Some(v) = self.defs.get(&(slot, b)) {
                break *v;
            }
            let bi = b.index();
            if self.sealed[bi] && self.preds[bi].len() == 1 {
                chain.push(b);
                b = self.preds[bi][0];
                if chain.len() > self.preds.len() {
                    // A cycle of single-predecessor blocks: unreachable code.
                    let ty = self.slot_type(slot);
                    break self.undef(ty);
                }
                continue;
            }
            let ty = self.slot_type(slot);
            let v = if !self.sealed[bi] {
                let p = self.b.add_block_param(b, ty);
                self.incomplete[bi].push((slot, p));
                p
            } else if self.preds[bi].is_empty() {
                self.undef(ty)
            } else {
                let p = self.b.add_block_param(b, ty);
                self.defs.insert((slot, b), p);
                self.add_operands(slot, b);
                p
            };
            self.defs.insert((slot, b), v);
            break v;
        };
        for c in chain {
            self.defs.insert((slot, c), v);
        }
        v
    }

    fn add_operands(&mut self, slot: Slot, block: Block) {
        let preds = self.preds[block.index()].clone();
        for p in preds {
            let arg = self.read_in(slot, p);
            push_edge_arg(self.b.func_mut(), p, block, arg);
        }
    }

    /// Declares that every predecessor of `block` is known.
    pub fn seal(&mut self, block: Block) {
        let bi = block.index();
        if self.sealed[bi] {
            return;
        }
        self.sealed[bi] = true;
        let pending = std::mem::take(&mut self.incomplete[bi]);
        for (slot, _) in pending {
            self.add_operands(slot, block);
        }
    }

    fn add_pred(&mut self, target: Block, from: Block) {
        let p = &mut self.preds[target.index()];
        if !p.contains(&from) {
            p.push(from);
        }
    }

    /// Ends the current block with a jump (nothing happens if it already ended).
    pub fn br(&mut self, target: Block) {
        if self.is_terminated() {
            return;
        }
        let cur = self.current();
        self.b.terminate(Terminator::Br(target, Vec::new()));
        self.add_pred(target, cur);
    }

    /// Ends the current block with a conditional jump.
    pub fn br_if(&mut self, cond: Value, then_: Block, else_: Block) {
        if self.is_terminated() {
            return;
        }
        let cur = self.current();
        self.b.terminate(Terminator::BrIf {
            cond,
            then_: (then_, Vec::new()),
            else_: (else_, Vec::new()),
        });
        self.add_pred(then_, cur);
        self.add_pred(else_, cur);
    }

    /// Ends the current block with `ret`.
    pub fn ret(&mut self) {
        if self.is_terminated() {
            return;
        }
        self.b.terminate(Terminator::Ret);
    }

    /// Seals every block and removes trivial block parameters.
    pub fn finish(mut self) -> Function {
        for b in 0..self.sealed.len() {
            self.seal(Block(b as u32));
        }
        let mut f = self.b.finish();
        remove_trivial_params(&mut f);
        f
    }
}

fn push_edge_arg(f: &mut Function, from: Block, to: Block, arg: Value) {
    match &mut f.blocks[from.index()].term {
        Terminator::Br(t, args) => {
            if *t == to {
                args.push(arg);
            }
        }
        Terminator::BrIf { then_, else_, .. } => {
            if then_.0 == to {
                then_.1.push(arg);
            }
            if else_.0 == to {
                else_.1.push(arg);
            }
        }
        Terminator::Ret => {}
    }
}

fn resolve(subst: &HashMap<Value, Value>, mut v: Value) -> Value {
    let mut steps = 0;
    while let Some(&n) = subst.get(&v) {
        v = n;
        steps += 1;
        if steps > subst.len() {
            break;
        }
    }
    v
}

/// Removes block parameters whose incoming values are all one value (or the parameter
/// itself), replacing their uses with that value, until none is left.
fn remove_trivial_params(f: &mut Function) {
    let mut subst: HashMap<Value, Value> = HashMap::new();
    loop {
        let mut changed = false;
        for b in 0..f.blocks.len() {
            let target = Block(b as u32);
            let mut i = f.blocks[b].params.len();
            while i > 0 {
                i -= 1;
                let p = f.blocks[b].params[i];
                let mut unique: Option<Value> = None;
                let mut trivial = true;
                let mut any_edge = false;
                for data in &f.blocks {
                    for (t, args) in data.term.targets() {
                        if t != target {
                            continue;
                        }
                        any_edge = true;
                        let a = resolve(&subst, args[i]);
                        if a == p {
                            continue;
                        }
                        match unique {
                            None => unique = Some(a),
                            Some(u) if u == a => {}
                            Some(_) => trivial = false,
                        }
                    }
                }
                let Some(u) = unique else { continue };
                if !trivial || !any_edge {
                    continue;
                }
                subst.insert(p, u);
                f.blocks[b].params.remove(i);
                for data in &mut f.blocks {
                    match &mut data.term {
                        Terminator::Br(t, args) if *t == target => {
                            args.remove(i);
                        }
                        Terminator::BrIf { then_, else_, .. } => {
                            if then_.0 == target {
                                then_.1.remove(i);
                            }
                            if else_.0 == target {
                                else_.1.remove(i);
                            }
                        }
                        _ => {}
                    }
                }
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    if subst.is_empty() {
        return;
    }
    for inst in &mut f.insts {
        for a in &mut inst.args {
            *a = resolve(&subst, *a);
        }
    }
    for data in &mut f.blocks {
        match &mut data.term {
            Terminator::Br(_, args) => {
                for a in args {
                    *a = resolve(&subst, *a);
                }
            }
            Terminator::BrIf { cond, then_, else_ } => {
                *cond = resolve(&subst, *cond);
                for a in then_.1.iter_mut().chain(else_.1.iter_mut()) {
                    *a = resolve(&subst, *a);
                }
            }
            Terminator::Ret => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metalsim_isa::{CmpCond, verify_function};

    #[test]
    fn loop_counter_gets_one_parameter() {
        // i = 0; while (i < 10) i = i + 1;
        let mut s = SsaBuilder::new("k");
        let i = s.new_slot(Type::U32);
        let zero = s.val(Op::Const(0), Type::U32, &[]);
        s.write(i, zero);
        let header = s.create_block();
        let body = s.create_block();
        let exit = s.create_block();
        s.br(header);
        s.switch_to(header);
        let iv = s.read(i);
        let ten = s.val(Op::Const(10), Type::U32, &[]);
        let c = s.val(Op::Cmp(CmpCond::Lt), Type::U32, &[iv, ten]);
        s.br_if(c, body, exit);
        s.seal(body);
        s.switch_to(body);
        let iv = s.read(i);
        let one = s.val(Op::Const(1), Type::U32, &[]);
        let n = s.val(Op::Add, Type::U32, &[iv, one]);
        s.write(i, n);
        s.br(header);
        s.seal(header);
        s.seal(exit);
        s.switch_to(exit);
        let _ = s.read(i);
        s.ret();
        let f = s.finish();
        verify_function(&f, 0).unwrap();
        assert_eq!(f.blocks[1].params.len(), 1, "{f}");
        assert!(f.blocks[3].params.is_empty(), "{f}");
    }

    #[test]
    fn unchanged_variable_needs_no_parameter() {
        let mut s = SsaBuilder::new("k");
        let x = s.new_slot(Type::F32);
        let v = s.val(Op::Const(0), Type::F32, &[]);
        s.write(x, v);
        let c = s.val(Op::Const(1), Type::Pred, &[]);
        let (t, e, j) = (s.create_block(), s.create_block(), s.create_block());
        s.br_if(c, t, e);
        s.seal(t);
        s.seal(e);
        s.switch_to(t);
        s.br(j);
        s.switch_to(e);
        s.br(j);
        s.seal(j);
        s.switch_to(j);
        // The read makes a join parameter, which finishing removes as trivial.
        let read = s.read(x);
        s.ins(
            Op::Store(metalsim_isa::Space::Device),
            Type::F32,
            &[read, read],
        );
        s.ret();
        let f = s.finish();
        assert!(f.blocks.iter().all(|b| b.params.is_empty()), "{f}");
        let store = f.blocks[3].insts[0];
        assert_eq!(f.inst(store).args[1], v, "{f}");
    }
}
