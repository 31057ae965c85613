//! The decoded form of a kernel: one flat instruction array the engine runs.
//!
//! Decoding (of a function that passed the verifier) gives every value a register slot ([`crate::regalloc`]),
//! hoists constants into a template register file, flattens the reachable blocks into one
//! array (branch targets become instruction indices), turns block parameters into
//! per-edge parallel copies and records each branch's reconvergence point (its immediate
//! post-dominator). An [`Instr`] holds three operand slots and one result; instructions
//! with more (vector loads and stores, matrix operations, `insert_bits`) keep the rest in
//! one side table, [`Program::operands`], so the common instruction stays small.

use metalsim_isa::{
    AtomicOp, BarrierScope, Block, Cfg, CmpCond, Function, Inst, IntFn, MathFn, Op, OpClass,
    SimdOp, Space, SpecialReg, SrcLoc, Terminator, Type, Value,
};

use crate::alu::{FloatBinOp, FloatTy, FloatUnOp, IntBinOp, IntUnOp, Width};
use crate::math::Precision;
use crate::memory::AddressMap;
use crate::regalloc::{self, Bank, Slots};

/// The reconvergence pc meaning "the function's exit".
pub(crate) const EXIT: u32 = u32::MAX;

/// What a decoded instruction does. Operand slots are in [`Instr`]; the bank of each is
/// implied by the kind.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Kind {
    /// 32-bit bank: `dst = op(a)`.
    IntUn(IntUnOp, Width),
    /// 32-bit bank: `dst = op(a, b)`.
    IntBin(IntBinOp, Width),
    /// 32-bit bank: `dst = a * b + c`.
    IntFma(Width),
    /// 32-bit bank: `dst = a cond b` (pred).
    IntCmp(CmpCond, Width),
    /// 64-bit bank: `dst = op(a)`.
    LongUn(IntUnOp, bool),
    /// 64-bit bank: `dst = op(a, b)`; the flag says signed.
    LongBin(IntBinOp, bool),
    /// 64-bit bank: `dst = a * b + c`.
    LongFma,
    /// `dst` (32-bit, pred) `= a cond b` on 64-bit operands; the flag says signed.
    LongCmp(CmpCond, bool),
    /// 32-bit bank float: `dst = op(a)`.
    FloatUn(FloatUnOp, FloatTy),
    /// 32-bit bank float: `dst = op(a, b)`.
    FloatBin(FloatBinOp, FloatTy),
    /// 32-bit bank float: `dst = a * b + c` (fused).
    FloatFma(FloatTy),
    /// 32-bit bank float: `dst = f(a)` or `f(a, b)` (`ldexp`'s `b` is an `i32`).
    Math(MathFn, Precision, FloatTy),
    /// `dst = f(a, b, c)` on integers of the type: operands of the type in its bank, bit
    /// positions in the 32-bit bank; `insert_bits`' two bit positions are the slots at
    /// `Program::operands[c..]`.
    IntFn(IntFn, Type),
    /// `dst = a cond b` (pred) on floats.
    FloatCmp(CmpCond, FloatTy),
    /// 32-bit bank: `dst = a ? b : c` (`a` is a pred).
    Select32,
    /// 64-bit bank: `dst = a ? b : c` (`a` is a pred in the 32-bit bank).
    Select64,
    /// 32-bit bank copy (`bitcast`).
    Copy32,
    /// 64-bit bank copy (`bitcast`).
    Copy64,
    /// `dst = convert(a)`; banks from the types.
    Cvt {
        /// Source type.
        from: Type,
        /// Target type.
        to: Type,
        /// Saturate integer results.
        sat: bool,
    },
    /// `dst (64) = a (64) + ext(b) * c` where `c` holds the scale and `b`'s bank and
    /// extension come from `index`.
    PtrAdd {
        /// The index operand's type.
        index: Type,
    },
    /// `dst = load(a)`.
    Load(Space, Type),
    /// `store(a, b)`.
    Store(Space, Type),
    /// `n` consecutive elements from address `a`; the results are the `n` slots at
    /// `Program::operands[b..]` (the first is also `dst`).
    LoadVec(Space, Type, u8),
    /// Stores `n` consecutive elements at address `a`; the values are the `n` slots at
    /// `Program::operands[b..]`.
    StoreVec(Space, Type, u8),
    /// This lane's two elements of an 8x8 matrix at address `a` with row stride `b`
    /// (elements); the flag says transposed. Results: `dst` (element 0) and `c`.
    MatrixLoad(Space, Type, bool),
    /// Stores this lane's two elements (`Program::operands[c]` and the next) of an 8x8
    /// matrix at address `a` with row stride `b`; the flag says transposed.
    MatrixStore(Space, Type, bool),
    /// `D = A x B + C` on 8x8 SIMD-group matrices: operands `a0, a1, b0, b1, c0, c1` are
    /// the six slots at `Program::operands[a..]`; results `dst` (d0) and `c` (d1).
    MatrixMac(FloatTy),
    /// `dst = atomic(a, b[, c])`.
    Atomic(AtomicOp, Space, Type),
    /// A barrier.
    Barrier(BarrierScope),
    /// A cross-lane operation; `quad` selects groups of 4 lanes.
    Cross {
        /// The operation.
        op: SimdOp,
        /// Quad-group (4 lanes) rather than SIMD-group.
        quad: bool,
        /// The operand type.
        ty: Type,
    },
    /// `dst = special register`.
    Sreg(SpecialReg),
    /// `dst (64) = program.uniforms[a]` (an address known before the run).
    Uniform64,
    /// Jump along edge `a`.
    Br,
    /// Branch on pred `a`: then edge `b`, else edge `c`; `dst` holds the reconvergence pc
    /// (or [`EXIT`]).
    BrIf,
    /// The active lanes finish.
    Ret,
}

/// One decoded instruction.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) struct Instr {
    /// What it does.
    pub kind: Kind,
    /// Its timing class.
    pub class: OpClass,
    /// Destination slot (or the reconvergence pc of a `BrIf`).
    pub dst: u32,
    /// First operand.
    pub a: u32,
    /// Second operand.
    pub b: u32,
    /// Third operand (or the scale of a `PtrAdd`).
    pub c: u32,
}

/// A register reference: bank and slot.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Reg {
    /// The bank.
    pub bank: Bank,
    /// The slot in it.
    pub slot: u32,
}

/// The most operands an instruction reads (`matrix_mac`).
pub(crate) const MAX_SRCS: usize = 6;

/// The registers an instruction reads and writes, for the timing model's scoreboard.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct Deps {
    /// Registers read.
    pub srcs: [Option<Reg>; MAX_SRCS],
    /// Register written (the first result of a multi-result instruction).
    pub dst: Option<Reg>,
    /// The other results of multi-result instructions (vector loads, matrix operations).
    pub more_dsts: [Option<Reg>; 3],
}

impl Deps {
    /// Every register the instruction writes.
    pub fn dsts(&self) -> impl Iterator<Item = Reg> + '_ {
        self.dst
            .iter()
            .chain(self.more_dsts.iter().flatten())
            .copied()
    }
}

/// One register copy of a block-parameter edge.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct ParamCopy {
    /// The bank of both slots.
    pub bank: Bank,
    /// Destination slot.
    pub dst: u32,
    /// Source slot.
    pub src: u32,
}

/// A control-flow edge: where it goes and the copies that pass block parameters along it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Edge {
    /// The target's first instruction.
    pub target: u32,
    /// First copy in [`Program::copies`].
    pub copies_start: u32,
    /// One past the last copy.
    pub copies_end: u32,
}

/// Where a decoded instruction came from in the ISA function, for profiles.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Origin {
    /// Its block.
    pub block: Block,
    /// The instruction, or `None` for the block's terminator.
    pub inst: Option<Inst>,
}

/// A decoded kernel.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    /// The instructions; the entry is at 0.
    pub insts: Vec<Instr>,
    /// Source location of each instruction.
    pub locs: Vec<SrcLoc>,
    /// The ISA instruction or terminator each instruction was decoded from.
    pub origins: Vec<Origin>,
    /// Scoreboard dependencies of each instruction.
    pub deps: Vec<Deps>,
    /// Whether each instruction is a `ptradd` folded into the addressing of the memory
    /// instructions that use it (decided with the register count, see
    /// `regalloc::pressure`): it runs, but the timing model charges it no issue slot and
    /// no latency.
    pub folded: Vec<bool>,
    /// Edges of branches.
    pub edges: Vec<Edge>,
    /// Parallel copies of the edges, sequentialized (through temporaries where needed).
    pub copies: Vec<ParamCopy>,
    /// 64-bit values known before the run ([`Kind::Uniform64`]).
    pub uniforms: Vec<u64>,
    /// Register slots of the operands and results that do not fit in [`Instr`] (vector
    /// loads and stores, matrix operations), which point into it.
    pub operands: Vec<u32>,
    /// Slots per bank, temporaries included.
    pub slots: [u32; 2],
    /// Registers per thread (from the register allocation), for occupancy.
    pub register_use: regalloc::RegisterUse,
    /// The 32-bit bank as a new SIMD-group starts: constants filled in, the rest zero.
    pub template32: Vec<[u32; 32]>,
    /// The 64-bit bank as a new SIMD-group starts.
    pub template64: Vec<[u64; 32]>,
    /// Whether each group of lanes that reaches a divergent branch's reconvergence point
    /// apart runs one more instruction there (the model's `reconvergence_instruction`).
    pub join_instructions: bool,
}

/// Decodes a kernel that passed the ISA verifier; `addresses` gives the addresses of
/// buffers, threadgroup memory, thread memory and data objects, `math` the variant of the
/// math functions that do not ask for the precise one, `uniform_halves` the size of the
/// GPU's uniform register file in 16-bit halves (for the registers per thread), and
/// `join_instructions` whether lanes run an instruction as they reconverge
/// ([`Program::join_instructions`]).
pub(crate) fn decode(
    f: &Function,
    addresses: &AddressMap,
    math: Precision,
    uniform_halves: u32,
    join_instructions: bool,
) -> Program {
    let cfg = Cfg::new(f);
    let slots = regalloc::assign(f, &cfg);
    Decoder {
        f,
        cfg: &cfg,
        slots: &slots,
        addresses,
        math,
        p: Program {
            insts: Vec::new(),
            locs: Vec::new(),
            origins: Vec::new(),
            deps: Vec::new(),
            folded: Vec::new(),
            edges: Vec::new(),
            copies: Vec::new(),
            uniforms: Vec::new(),
            operands: Vec::new(),
            slots: slots.count,
            register_use: regalloc::register_use(f, &cfg, uniform_halves),
            template32: Vec::new(),
            template64: Vec::new(),
            join_instructions,
        },
        block_start: vec![EXIT; f.blocks.len()],
        temp_high: slots.count,
    }
    .run()
}

struct Decoder<'a> {
    f: &'a Function,
    cfg: &'a Cfg,
    slots: &'a Slots,
    addresses: &'a AddressMap,
    math: Precision,
    p: Program,
    block_start: Vec<u32>,
    /// Slots per bank including edge temporaries.
    temp_high: [u32; 2],
}

/// Where each branch's targets must be patched once every block has its start.
struct PendingEdge {
    edge: usize,
    block: Block,
}

impl Decoder<'_> {
    fn slot(&self, v: Value) -> u32 {
        self.slots.slot[v.index()]
    }

    fn reg(&self, v: Value) -> Reg {
        Reg {
            bank: Slots::bank(self.f, v),
            slot: self.slot(v),
        }
    }

    fn run(mut self) -> Program {
        let f = self.f;
        // Lay out the reachable blocks in index order.
        let mut order: Vec<Block> = self.cfg.reverse_postorder().to_vec();
        order.sort();
        let mut pending = Vec::new();
        for &b in &order {
            self.block_start[b.index()] = self.p.insts.len() as u32;
            let data = f.block(b);
            for &i in &data.insts {
                let inst = f.inst(i);
                if let Op::Const(_) = inst.op {
                    continue;
                }
                let loc = f.inst_locs[i.index()];
                let (ins, deps) = self.instruction(inst.op, inst.ty, &inst.args, &inst.results);
                self.push(ins, deps, loc);
                let folded = matches!(inst.op, Op::PtrAdd { .. })
                    && inst.results.iter().all(|r| self.slots.folded[r.index()]);
                *self.p.folded.last_mut().expect("just pushed") = folded;
                self.p.origins.push(Origin {
                    block: b,
                    inst: Some(i),
                });
            }
            self.terminator(b, &mut pending);
            self.p.origins.push(Origin {
                block: b,
                inst: None,
            });
        }
        for pe in pending {
            self.p.edges[pe.edge].target = self.block_start[pe.block.index()];
        }
        // Reconvergence pcs were recorded as block indices; map them to pcs.
        for ins in &mut self.p.insts {
            if ins.kind == Kind::BrIf && ins.dst != EXIT {
                ins.dst = self.block_start[ins.dst as usize];
            }
        }
        self.p.slots = self.temp_high;
        self.p.template32 = vec![[0; 32]; self.p.slots[0] as usize];
        self.p.template64 = vec![[0; 32]; self.p.slots[1] as usize];
        for &(bank, slot, bits) in &self.slots.constants {
            match bank {
                Bank::B32 => self.p.template32[slot as usize] = [bits as u32; 32],
                Bank::B64 => self.p.template64[slot as usize] = [bits; 32],
            }
        }
        self.p
    }

    fn push(&mut self, ins: Instr, deps: Deps, loc: SrcLoc) {
        self.p.insts.push(ins);
        self.p.deps.push(deps);
        self.p.locs.push(loc);
        self.p.folded.push(false);
    }

    /// Appends slots to [`Program::operands`]; the index of the first.
    fn side_table(&mut self, values: &[Value]) -> u32 {
        let at = self.p.operands.len() as u32;
        for &v in values {
            let s = self.slot(v);
            self.p.operands.push(s);
        }
        at
    }

    fn instruction(
        &mut self,
        op: Op,
        ty: Type,
        args: &[Value],
        results: &[Value],
    ) -> (Instr, Deps) {
        let arg = |i: usize| args.get(i).map(|&v| self.slot(v)).unwrap_or(0);
        let (a, b, c) = (arg(0), arg(1), arg(2));
        let dst = results.first().map(|&r| self.slot(r)).unwrap_or(0);
        let mut deps = Deps {
            dst: results.first().map(|&r| self.reg(r)),
            ..Deps::default()
        };
        for (d, &v) in deps.srcs.iter_mut().zip(args) {
            *d = Some(self.reg(v));
        }
        for (d, &v) in deps.more_dsts.iter_mut().zip(results.iter().skip(1)) {
            *d = Some(self.reg(v));
        }
        let class = op.class(ty);
        let wide = ty.is_wide();
        let w = Width::of(ty);
        let ft = FloatTy::of(ty);
        let (mut a_field, mut b_field, mut c_field) = (a, b, c);
        let kind = match op {
            Op::Const(_) => unreachable!("constants are hoisted"),
            Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Rem | Op::Min | Op::Max => {
                let (iop, fop) = match op {
                    Op::Add => (IntBinOp::Add, FloatBinOp::Add),
                    Op::Sub => (IntBinOp::Sub, FloatBinOp::Sub),
                    Op::Mul => (IntBinOp::Mul, FloatBinOp::Mul),
                    Op::Div => (IntBinOp::Div, FloatBinOp::Div),
                    Op::Rem => (IntBinOp::Rem, FloatBinOp::Div),
                    Op::Min => (IntBinOp::Min, FloatBinOp::Min),
                    _ => (IntBinOp::Max, FloatBinOp::Max),
                };
                match ft {
                    Some(ft) => Kind::FloatBin(fop, ft),
                    None if wide => Kind::LongBin(iop, ty.is_signed()),
                    None => Kind::IntBin(iop, w),
                }
            }
            Op::And | Op::Or | Op::Xor | Op::Shl | Op::Shr | Op::MulHi => {
                let iop = match op {
                    Op::And => IntBinOp::And,
                    Op::Or => IntBinOp::Or,
                    Op::Xor => IntBinOp::Xor,
                    Op::Shl => IntBinOp::Shl,
                    Op::Shr => IntBinOp::Shr,
                    _ => IntBinOp::MulHi,
                };
                if wide {
                    Kind::LongBin(iop, ty.is_signed())
                } else {
                    Kind::IntBin(iop, w)
                }
            }
            Op::Neg | Op::Abs | Op::Not | Op::Clz | Op::Ctz | Op::Popcount => {
                let iop = match op {
                    Op::Neg => IntUnOp::Neg,
                    Op::Abs => IntUnOp::Abs,
                    Op::Not => IntUnOp::Not,
                    Op::Clz => IntUnOp::Clz,
                    Op::Ctz => IntUnOp::Ctz,
                    _ => IntUnOp::Popcount,
                };
                match (ft, iop) {
                    (Some(ft), IntUnOp::Neg) => Kind::FloatUn(FloatUnOp::Neg, ft),
                    (Some(ft), _) => Kind::FloatUn(FloatUnOp::Abs, ft),
                    (None, _) if wide => Kind::LongUn(iop, ty.is_signed()),
                    (None, _) => Kind::IntUn(iop, w),
                }
            }
            Op::Fma => match ft {
                Some(ft) => Kind::FloatFma(ft),
                None if wide => Kind::LongFma,
                None => Kind::IntFma(w),
            },
            Op::Math(mf) => Kind::Math(mf, self.math, ft.unwrap_or(FloatTy::F32)),
            Op::PreciseMath(mf) => Kind::Math(mf, Precision::Precise, ft.unwrap_or(FloatTy::F32)),
            Op::Int(f) => {
                if f == IntFn::InsertBits {
                    c_field = self.side_table(&args[2..]);
                }
                Kind::IntFn(f, ty)
            }
            Op::Cmp(cond) => match ft {
                Some(ft) => Kind::FloatCmp(cond, ft),
                None if wide => Kind::LongCmp(cond, ty.is_signed()),
                None => Kind::IntCmp(cond, w),
            },
            Op::Select => {
                if wide {
                    Kind::Select64
                } else {
                    Kind::Select32
                }
            }
            Op::Cvt { from, sat } => Kind::Cvt { from, to: ty, sat },
            Op::Bitcast { .. } => {
                if wide {
                    Kind::Copy64
                } else {
                    Kind::Copy32
                }
            }
            Op::PtrAdd { scale } => {
                c_field = scale;
                Kind::PtrAdd {
                    index: self.f.value_type(args[1]),
                }
            }
            Op::LoadVec(s, n) => {
                b_field = self.side_table(results);
                Kind::LoadVec(s, ty, n)
            }
            Op::StoreVec(s, n) => {
                b_field = self.side_table(&args[1..]);
                Kind::StoreVec(s, ty, n)
            }
            Op::MatrixLoad(s, t) => {
                c_field = results.get(1).map_or(0, |&r| self.slot(r));
                Kind::MatrixLoad(s, ty, t)
            }
            Op::MatrixStore(s, t) => {
                c_field = self.side_table(&args[2..]);
                Kind::MatrixStore(s, ty, t)
            }
            Op::MatrixMac => {
                a_field = self.side_table(args);
                c_field = results.get(1).map_or(0, |&r| self.slot(r));
                Kind::MatrixMac(ft.unwrap_or(FloatTy::F32))
            }
            Op::Load(s) => Kind::Load(s, ty),
            Op::Store(s) => Kind::Store(s, ty),
            Op::Atomic(aop, s) => Kind::Atomic(aop, s, ty),
            Op::Barrier(scope, _) => Kind::Barrier(scope),
            Op::Simd(s) => Kind::Cross {
                op: s,
                quad: false,
                ty,
            },
            Op::Quad(s) => Kind::Cross {
                op: s,
                quad: true,
                ty,
            },
            Op::Sreg(r) => Kind::Sreg(r),
            Op::BufferAddr(_)
            | Op::ThreadgroupParamAddr(_)
            | Op::ThreadgroupAddr(_)
            | Op::LocalAddr(_)
            | Op::DataAddr(_) => {
                let value = self.addresses.of(op);
                let idx = self.p.uniforms.len() as u32;
                self.p.uniforms.push(value);
                return (
                    Instr {
                        kind: Kind::Uniform64,
                        class,
                        dst,
                        a: idx,
                        b: 0,
                        c: 0,
                    },
                    deps,
                );
            }
        };
        (
            Instr {
                kind,
                class,
                dst,
                a: a_field,
                b: b_field,
                c: c_field,
            },
            deps,
        )
    }

    fn terminator(&mut self, b: Block, pending: &mut Vec<PendingEdge>) {
        let data = self.f.block(b);
        let loc = data.term_loc;
        let mut deps = Deps::default();
        let ins = match &data.term {
            Terminator::Ret => Instr {
                kind: Kind::Ret,
                class: OpClass::Control,
                dst: 0,
                a: 0,
                b: 0,
                c: 0,
            },
            Terminator::Br(t, args) => {
                let e = self.edge(*t, args, pending);
                Instr {
                    kind: Kind::Br,
                    class: OpClass::Control,
                    dst: 0,
                    a: e,
                    b: 0,
                    c: 0,
                }
            }
            Terminator::BrIf { cond, then_, else_ } => {
                deps.srcs[0] = Some(self.reg(*cond));
                let te = self.edge(then_.0, &then_.1, pending);
                let ee = self.edge(else_.0, &else_.1, pending);
                let rpc = match self.cfg.immediate_post_dominator(b) {
                    Some(r) => r.0,
                    None => EXIT,
                };
                Instr {
                    kind: Kind::BrIf,
                    class: OpClass::Control,
                    dst: rpc,
                    a: self.slot(*cond),
                    b: te,
                    c: ee,
                }
            }
        };
        self.push(ins, deps, loc);
    }

    /// Records an edge with its parallel copies, sequentialized: when a destination is
    /// also a source, every source first goes to a temporary.
    fn edge(&mut self, target: Block, args: &[Value], pending: &mut Vec<PendingEdge>) -> u32 {
        let params = &self.f.block(target).params;
        let mut moves: Vec<ParamCopy> = params
            .iter()
            .zip(args)
            .map(|(&p, &a)| ParamCopy {
                bank: Slots::bank(self.f, p),
                dst: self.slot(p),
                src: self.slot(a),
            })
            .filter(|m| m.dst != m.src)
            .collect();
        let conflict = moves
            .iter()
            .any(|m| moves.iter().any(|n| n.bank == m.bank && n.src == m.dst));
        if conflict {
            let mut seq = Vec::with_capacity(moves.len() * 2);
            let mut temps = Vec::with_capacity(moves.len());
            let mut next = self.p.slots;
            for m in &moves {
                let bi = match m.bank {
                    Bank::B32 => 0,
                    Bank::B64 => 1,
                };
                let t = next[bi];
                next[bi] += 1;
                temps.push(t);
                seq.push(ParamCopy {
                    bank: m.bank,
                    dst: t,
                    src: m.src,
                });
            }
            for (m, t) in moves.iter().zip(&temps) {
                seq.push(ParamCopy {
                    bank: m.bank,
                    dst: m.dst,
                    src: *t,
                });
            }
            // Temporaries are only live inside one edge, so every edge reuses the same ones.
            for (bi, n) in next.iter().enumerate() {
                self.temp_high[bi] = self.temp_high[bi].max(*n);
            }
            moves = seq;
        }
        let start = self.p.copies.len() as u32;
        self.p.copies.extend(moves);
        let e = self.p.edges.len();
        self.p.edges.push(Edge {
            target: EXIT,
            copies_start: start,
            copies_end: self.p.copies.len() as u32,
        });
        pending.push(PendingEdge {
            edge: e,
            block: target,
        });
        e as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metalsim_isa::parse_module;

    /// Applies each edge's copies to a register file where every slot holds its own
    /// number; each target parameter must then hold what its argument held before.
    fn check_parallel_copies(text: &str) {
        let m = parse_module(text).unwrap();
        let f = &m.functions[0];
        metalsim_isa::verify_function(f, 0).unwrap();
        let cfg = Cfg::new(f);
        let slots = regalloc::assign(f, &cfg);
        let p = decode(f, &AddressMap::default(), Precision::Fast, 512, false);
        let mut edge = 0;
        for b in f.block_ids().filter(|&b| cfg.is_reachable(b)) {
            for (target, args) in f.block(b).term.targets() {
                let e = p.edges[edge];
                edge += 1;
                let mut regs: [Vec<u32>; 2] =
                    [(0..p.slots[0]).collect(), (0..p.slots[1]).collect()];
                for c in &p.copies[e.copies_start as usize..e.copies_end as usize] {
                    let bank = &mut regs[c.bank as usize];
                    bank[c.dst as usize] = bank[c.src as usize];
                }
                for (param, arg) in f.block(target).params.iter().zip(args) {
                    let bank = Slots::bank(f, *param) as usize;
                    assert_eq!(
                        regs[bank][slots.slot[param.index()] as usize],
                        slots.slot[arg.index()],
                        "edge {b} -> {target}: {param} = {arg}"
                    );
                }
            }
        }
        assert_eq!(edge, p.edges.len());
        assert!(
            p.slots[0] > slots.count[0] && p.slots[1] > slots.count[1],
            "the rotation should need temporaries in both banks"
        );
    }

    #[test]
    fn addresses_only_used_by_memory_instructions_are_folded() {
        // v2 (held: also the base of v4); v4 = v2 + a constant (the load's immediate);
        // v5 = base + index (the store's addressing); v6 (held: also stored as a value).
        let text = "kernel k {\n  param buffer(0) out device type \"float\" size 4 align 4\nbb0:\n v0 = buffer_addr.0\n v1 = sreg.thread_position_in_grid.x\n v2 = ptradd.4 v0, v1\n v3 = const.i64 8\n v4 = ptradd.1 v2, v3\n v5 = ptradd.4 v0, v1\n v6 = ptradd.1 v0, v3\n v7 = ld.device.f32 v4\n v8 = ld.device.f32 v2\n v9 = add.f32 v7, v8\n st.device.f32 v5, v9\n st.device.u64 v6, v6\n ret\n}\n";
        let m = parse_module(text).unwrap();
        let f = &m.functions[0];
        metalsim_isa::verify_function(f, 0).unwrap();
        let p = decode(f, &AddressMap::default(), Precision::Fast, 512, false);
        let folded: Vec<bool> = p
            .insts
            .iter()
            .zip(&p.folded)
            .filter(|(i, _)| matches!(i.kind, Kind::PtrAdd { .. }))
            .map(|(_, &f)| f)
            .collect();
        assert_eq!(folded, [false, true, true, false]);
        assert_eq!(p.folded.len(), p.insts.len());
    }

    #[test]
    fn edge_copies_swap_and_rotate_in_parallel() {
        check_parallel_copies(
            "kernel k {\nbb0:\n v0 = sreg.thread_index_in_simdgroup\n v1 = sreg.simdgroup_index_in_threadgroup\n v2 = sreg.threads_per_simdgroup\n v9 = cvt.u32.u64 v0\n v10 = cvt.u32.u64 v1\n br bb1(v0, v1, v2, v9, v10)\nbb1(v3:u32, v4:u32, v5:u32, v11:u64, v12:u64):\n v6 = cmp.lt.u32 v3, v4\n br_if v6, bb1(v4, v5, v3, v12, v11), bb2(v5, v3)\nbb2(v7:u32, v8:u32):\n v13 = add.u32 v7, v8\n ret\n}\n",
        );
    }
}
