//! Building a function one instruction at a time.

use crate::entity::{Block, Inst, Value};
use crate::function::{BlockData, Function, InstData, SrcLoc, Terminator};
use crate::op::Op;
use crate::types::Type;

/// Appends blocks and instructions to a [`Function`], tracking the current block and the
/// source location given to new instructions.
///
/// New blocks end in `ret` until [`FunctionBuilder::terminate`] sets their terminator.
pub struct FunctionBuilder {
    func: Function,
    current: Block,
    loc: SrcLoc,
    terminated: Vec<bool>,
}

impl FunctionBuilder {
    /// Starts a function with an empty entry block.
    pub fn new(name: &str) -> Self {
        let mut b = FunctionBuilder {
            func: Function {
                name: name.to_string(),
                ..Function::default()
            },
            current: Block(0),
            loc: SrcLoc::UNKNOWN,
            terminated: Vec::new(),
        };
        b.create_block();
        b
    }

    /// The function built so far (parameters and allocations are set through it).
    pub fn func_mut(&mut self) -> &mut Function {
        &mut self.func
    }

    /// The function built so far.
    pub fn func(&self) -> &Function {
        &self.func
    }

    /// Finishes building.
    pub fn finish(self) -> Function {
        self.func
    }

    /// Sets the location given to the instructions and terminators that follow.
    pub fn set_loc(&mut self, loc: SrcLoc) {
        self.loc = loc;
    }

    /// The location given to new instructions.
    pub fn loc(&self) -> SrcLoc {
        self.loc
    }

    /// Creates a new empty block.
    pub fn create_block(&mut self) -> Block {
        let b = Block(self.func.blocks.len() as u32);
        self.func.blocks.push(BlockData {
            params: Vec::new(),
            insts: Vec::new(),
            term: Terminator::Ret,
            term_loc: SrcLoc::UNKNOWN,
        });
        self.terminated.push(false);
        b
    }

    /// Adds a parameter of type `ty` to a block.
    pub fn add_block_param(&mut self, block: Block, ty: Type) -> Value {
        let v = self.new_value(ty);
        self.func.blocks[block.index()].params.push(v);
        v
    }

    /// Makes `block` the one new instructions go to.
    pub fn switch_to(&mut self, block: Block) {
        self.current = block;
    }

    /// The block new instructions go to.
    pub fn current_block(&self) -> Block {
        self.current
    }

    /// Whether a block already has its terminator.
    pub fn is_terminated(&self, block: Block) -> bool {
        self.terminated[block.index()]
    }

    fn new_value(&mut self, ty: Type) -> Value {
        let v = Value(self.func.value_types.len() as u32);
        self.func.value_types.push(ty);
        v
    }

    /// Appends an instruction to the current block and returns its first result (if any).
    pub fn ins(&mut self, op: Op, ty: Type, args: &[Value]) -> Option<Value> {
        self.ins_multi(op, ty, args).first().copied()
    }

    /// Appends an instruction to the current block and returns all its results.
    pub fn ins_multi(&mut self, op: Op, ty: Type, args: &[Value]) -> Vec<Value> {
        let results: Vec<Value> = match op.result_type(ty) {
            Some(rt) => (0..op.result_count()).map(|_| self.new_value(rt)).collect(),
            None => Vec::new(),
        };
        let inst = Inst(self.func.insts.len() as u32);
        self.func.insts.push(InstData {
            op,
            ty,
            args: args.to_vec(),
            results: results.clone(),
        });
        self.func.inst_locs.push(self.loc);
        self.func.blocks[self.current.index()].insts.push(inst);
        results
    }

    /// Appends an instruction that produces a value.
    ///
    /// # Panics
    /// If the operation produces no value (a bug in the caller).
    pub fn ins_value(&mut self, op: Op, ty: Type, args: &[Value]) -> Value {
        self.ins(op, ty, args)
            .expect("ins_value used with an operation that produces no value")
    }

    /// Sets the current block's terminator.
    pub fn terminate(&mut self, term: Terminator) {
        let b = self.current.index();
        self.func.blocks[b].term = term;
        self.func.blocks[b].term_loc = self.loc;
        self.terminated[b] = true;
    }
}
