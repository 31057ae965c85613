//! What each decoded instruction costs: its timing class, the pipeline it issues to, the
//! cycles that pipeline stays busy and the latency to its result, looked up once per
//! program so that the hot loop reads one small record per instruction.

use metalsim_isa::OpClass;
use metalsim_models::{Gpu, PerClass};

use crate::alu::FloatTy;
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
            .map(|ins| per_class[Class::of(ins.kind, ins.class) as usize])
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
