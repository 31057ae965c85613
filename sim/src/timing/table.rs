//! What each decoded instruction costs: its timing class, the pipeline it issues to, the
//! cycles that pipeline stays busy and the latency to its result, looked up once per
//! program so that the hot loop reads one small record per instruction.

use metalsim_isa::OpClass;
use metalsim_models::{Gpu, PerClass};

use crate::alu::{FloatBinOp, FloatTy, IntBinOp};
use crate::program::{Kind, Program};

/// Pipelines a scheduler can have at most.
pub(crate) const MAX_PIPES: usize = 16;

/// The timing classes of the model (the entries of [`PerClass`]), in its order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Class {
    FloatAlu,
    FloatFma,
    HalfAlu,
    IntAlu,
    IntMul,
    Special,
    Convert,
    Move,
    DeviceMemory,
    ThreadgroupMemory,
    ThreadMemory,
    SimdShuffle,
    SimdReduce,
    SimdMatrix,
    Atomic,
    Barrier,
    Control,
}

impl Class {
    /// The class of a decoded instruction: its ISA class, with 32-bit float FMA apart.
    pub fn of(kind: Kind, class: OpClass) -> Class {
        if let Kind::FloatFma(FloatTy::F32) = kind {
            return Class::FloatFma;
        }
        match class {
            OpClass::FloatAlu => Class::FloatAlu,
            OpClass::HalfAlu => Class::HalfAlu,
            OpClass::IntAlu => Class::IntAlu,
            OpClass::IntMul => Class::IntMul,
            OpClass::Special => Class::Special,
            OpClass::Convert => Class::Convert,
            OpClass::Move => Class::Move,
            OpClass::DeviceMemory => Class::DeviceMemory,
            OpClass::ThreadgroupMemory => Class::ThreadgroupMemory,
            OpClass::ThreadMemory => Class::ThreadMemory,
            OpClass::Atomic => Class::Atomic,
            OpClass::Barrier => Class::Barrier,
            OpClass::SimdShuffle => Class::SimdShuffle,
            OpClass::SimdReduce => Class::SimdReduce,
            OpClass::SimdMatrix => Class::SimdMatrix,
            OpClass::Control => Class::Control,
        }
    }

    /// Its value in a per-class table of the model.
    pub fn pick<T: Copy>(self, p: &PerClass<T>) -> T {
        match self {
            Class::FloatAlu => p.float_alu,
            Class::FloatFma => p.float_fma,
            Class::HalfAlu => p.half_alu,
            Class::IntAlu => p.int_alu,
            Class::IntMul => p.int_mul,
            Class::Special => p.special,
            Class::Convert => p.convert,
            Class::Move => p.move_,
            Class::DeviceMemory => p.device_memory,
            Class::ThreadgroupMemory => p.threadgroup_memory,
            Class::ThreadMemory => p.thread_memory,
            Class::SimdShuffle => p.simd_shuffle,
            Class::SimdReduce => p.simd_reduce,
            Class::SimdMatrix => p.simd_matrix,
            Class::Atomic => p.atomic,
            Class::Barrier => p.barrier,
            Class::Control => p.control,
        }
    }

    /// Its pipeline name in the model.
    fn pipe_name(self, gpu: &Gpu) -> &str {
        let p = &gpu.pipe;
        match self {
            Class::FloatAlu => &p.float_alu,
            Class::FloatFma => &p.float_fma,
            Class::HalfAlu => &p.half_alu,
            Class::IntAlu => &p.int_alu,
            Class::IntMul => &p.int_mul,
            Class::Special => &p.special,
            Class::Convert => &p.convert,
            Class::Move => &p.move_,
            Class::DeviceMemory => &p.device_memory,
            Class::ThreadgroupMemory => &p.threadgroup_memory,
            Class::ThreadMemory => &p.thread_memory,
            Class::SimdShuffle => &p.simd_shuffle,
            Class::SimdReduce => &p.simd_reduce,
            Class::SimdMatrix => &p.simd_matrix,
            Class::Atomic => &p.atomic,
            Class::Barrier => &p.barrier,
            Class::Control => &p.control,
        }
    }

    const ALL: [Class; 17] = [
        Class::FloatAlu,
        Class::FloatFma,
        Class::HalfAlu,
        Class::IntAlu,
        Class::IntMul,
        Class::Special,
        Class::Convert,
        Class::Move,
        Class::DeviceMemory,
        Class::ThreadgroupMemory,
        Class::ThreadMemory,
        Class::SimdShuffle,
        Class::SimdReduce,
        Class::SimdMatrix,
        Class::Atomic,
        Class::Barrier,
        Class::Control,
    ];
}

/// The name a model's `op_costs` gives an instruction's operation (`div_i32`,
/// `sin_f32`), for the operations it can name: division, remainder, math functions.
fn op_name(kind: Kind) -> Option<String> {
    let float = |ty: FloatTy| match ty {
        FloatTy::F32 => "f32",
        FloatTy::F16 => "f16",
        FloatTy::BF16 => "bf16",
    };
    let int_op = |op: IntBinOp| match op {
        IntBinOp::Div => Some("div"),
        IntBinOp::Rem => Some("rem"),
        _ => None,
    };
    let sign = |signed: bool| if signed { 'i' } else { 'u' };
    match kind {
        Kind::IntBin(op, w) => Some(format!("{}_{}{}", int_op(op)?, sign(w.signed), w.bits)),
        Kind::LongBin(op, signed) => Some(format!("{}_{}64", int_op(op)?, sign(signed))),
        Kind::FloatBin(FloatBinOp::Div, ty) => Some(format!("div_{}", float(ty))),
        Kind::Math(f, _, ty) => Some(format!("{}_{}", f.name(), float(ty))),
        _ => None,
    }
}

/// The cost of one instruction.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Cost {
    /// Cycles from issue to its result (memory: from the memory system instead).
    pub latency: u32,
    /// Cycles its pipeline stays busy.
    pub busy: u32,
    /// Its pipeline's index.
    pub pipe: u8,
    /// Whether its pipeline may take part in dual issue.
    pub dual: bool,
    /// Whether it is folded into the addressing of the memory instructions that use it
    /// ([`Program::folded`]): it runs in the cycle of the instruction before it, without
    /// an issue slot or a latency of its own (see [`super::folded`]).
    pub folded: bool,
}

/// The cost of every instruction of a program, and the pipelines.
#[derive(Clone, Debug)]
pub(crate) struct Table {
    /// Per pc.
    pub costs: Vec<Cost>,
    /// Whether the scheduler may issue two instructions per cycle.
    pub dual_issue: bool,
    /// Latency of a branch before the next instruction issues.
    pub branch: u64,
    /// Delay from a barrier's release until its SIMD-groups issue again.
    pub barrier: u64,
    /// Latency of threadgroup-memory and thread-memory accesses.
    pub threadgroup_latency: u64,
    /// Latency of thread-memory accesses.
    pub thread_latency: u64,
    /// Cycles the core's threadgroup memory is busy per wavefront (all its ports).
    pub wavefront: f64,
    /// Latency of a device atomic (at L2, from its arrival).
    pub atomic_latency: u64,
    /// Cycles one device atomic occupies its address.
    pub atomic_busy: u64,
}

impl Table {
    /// The table of `program` on `gpu`. Pipelines are numbered in order of first mention
    /// in the model's `[pipe]` table.
    pub fn new(gpu: &Gpu, program: &Program) -> Table {
        let mut names: Vec<&str> = Vec::new();
        let mut per_class = [Cost {
            latency: 0,
            busy: 1,
            pipe: 0,
            dual: false,
            folded: false,
        }; 17];
        for (i, c) in Class::ALL.iter().enumerate() {
            let name = c.pipe_name(gpu);
            let pipe = match names.iter().position(|n| *n == name) {
                Some(p) => p,
                None => {
                    names.push(name);
                    names.len() - 1
                }
            }
            .min(MAX_PIPES - 1);
            per_class[i] = Cost {
                latency: c.pick(&gpu.latency),
                busy: c.pick(&gpu.issue).max(1),
                pipe: pipe as u8,
                dual: gpu.dual_issue_pipes.iter().any(|d| d == name),
                folded: false,
            };
        }
        // Memory instructions occupy their pipeline one issue slot; the ports of the
        // memory system (threadgroup banks, L1, atomics) account for the rest.
        for c in [Class::ThreadgroupMemory, Class::ThreadMemory, Class::Atomic] {
            per_class[c as usize].busy = 1;
        }
        let costs = program
            .insts
            .iter()
            .zip(&program.folded)
            .map(|(ins, &folded)| {
                let mut cost = per_class[Class::of(ins.kind, ins.class) as usize];
                if folded {
                    // Issued only where nothing issues before it (a SIMD-group's first
                    // instruction, or its first after a barrier): one slot, no latency.
                    return Cost {
                        latency: 0,
                        busy: 1,
                        folded,
                        ..cost
                    };
                }
                let own = gpu
                    .op_costs
                    .as_ref()
                    .and_then(|ops| ops.get(&op_name(ins.kind)?));
                if let Some(own) = own {
                    cost.latency = own.latency;
                    cost.busy = own.issue.max(1);
                }
                cost
            })
            .collect();
        Table {
            costs,
            dual_issue: !gpu.dual_issue_pipes.is_empty(),
            branch: gpu.latency.control as u64,
            barrier: gpu.latency.barrier as u64,
            threadgroup_latency: gpu.latency.threadgroup_memory as u64,
            thread_latency: gpu.latency.thread_memory as u64,
            wavefront: gpu.threadgroup_wavefront_cycles(),
            atomic_latency: gpu.latency.atomic as u64,
            atomic_busy: gpu.issue.atomic.max(1) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alu::Width;
    use crate::math::Precision;
    use metalsim_isa::MathFn;
    use metalsim_models::{OP_COST_OPERATIONS, OP_COST_TYPES};

    /// `kind`'s `op_costs` name is `expect`.
    fn check(kind: Kind, expect: Option<&str>) {
        assert_eq!(op_name(kind).as_deref(), expect, "{kind:?}");
    }

    #[test]
    fn op_costs_name_division_remainder_and_math() {
        let w = |bits, signed| Width { bits, signed };
        check(Kind::IntBin(IntBinOp::Div, w(32, true)), Some("div_i32"));
        check(Kind::IntBin(IntBinOp::Rem, w(16, false)), Some("rem_u16"));
        check(Kind::IntBin(IntBinOp::Mul, w(32, true)), None);
        check(Kind::LongBin(IntBinOp::Div, false), Some("div_u64"));
        check(
            Kind::FloatBin(FloatBinOp::Div, FloatTy::F32),
            Some("div_f32"),
        );
        check(Kind::FloatBin(FloatBinOp::Add, FloatTy::F32), None);
        check(
            Kind::Math(MathFn::Sin, Precision::Fast, FloatTy::F16),
            Some("sin_f16"),
        );
        // Every name the sim can give is one a model file may use.
        for f in MathFn::ALL {
            assert!(OP_COST_OPERATIONS.contains(&f.name()), "{}", f.name());
        }
        for ty in [FloatTy::F32, FloatTy::F16, FloatTy::BF16] {
            let name = op_name(Kind::FloatBin(FloatBinOp::Div, ty)).unwrap();
            assert!(OP_COST_TYPES.contains(&name.rsplit_once('_').unwrap().1));
        }
    }
}
