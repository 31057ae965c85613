//! Property test: whatever `fold_constants` folds, it folds to the bits the simulator
//! computes. Every operation of every type runs on the simulator on operands loaded from
//! memory (32 lanes, random and special values), and the same operations on the same
//! operands as constants go through the folder; each folded result must equal the
//! simulator's.

use std::path::Path;

use metalsim_isa::{
    CmpCond, Function, FunctionBuilder, Inst, KernelParam, MathFn, Module, Op, ParamKind, Space,
    Terminator, Type, Value, fold_constants, verify_function,
};
use metalsim_launch::LaunchSpec;
use metalsim_sim::RunOptions;
use proptest::prelude::*;

const LANES: usize = 32;

/// One operation to check: the operation, its type, its operands' types.
#[derive(Clone, Debug)]
struct Case {
    op: Op,
    ty: Type,
    args: Vec<Type>,
}

fn cases() -> Vec<Case> {
    let ints = [
        Type::I8,
        Type::U8,
        Type::I16,
        Type::U16,
        Type::I32,
        Type::U32,
        Type::I64,
        Type::U64,
    ];
    let floats = [Type::F32, Type::F16, Type::BF16];
    let mut out = Vec::new();
    let mut add = |op: Op, ty: Type, args: Vec<Type>| out.push(Case { op, ty, args });
    for &t in &ints {
        for op in [
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::Div,
            Op::Rem,
            Op::Min,
            Op::Max,
            Op::And,
            Op::Or,
            Op::Xor,
            Op::Shl,
            Op::Shr,
            Op::MulHi,
        ] {
            add(op, t, vec![t, t]);
        }
        for op in [Op::Neg, Op::Abs, Op::Not, Op::Clz, Op::Ctz, Op::Popcount] {
            add(op, t, vec![t]);
        }
        add(Op::Fma, t, vec![t, t, t]);
        for scale in [1, 4, 12] {
            add(Op::PtrAdd { scale }, Type::U64, vec![Type::U64, t]);
        }
    }
    for op in [Op::And, Op::Or, Op::Xor] {
        add(op, Type::Pred, vec![Type::Pred, Type::Pred]);
    }
    add(Op::Not, Type::Pred, vec![Type::Pred]);
    for &t in &floats {
        for op in [Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Min, Op::Max] {
            add(op, t, vec![t, t]);
        }
        for op in [Op::Neg, Op::Abs].into_iter().chain(
            [
                MathFn::Floor,
                MathFn::Ceil,
                MathFn::Trunc,
                MathFn::Round,
                MathFn::Rint,
            ]
            .map(Op::Math),
        ) {
            add(op, t, vec![t]);
        }
        add(Op::Fma, t, vec![t, t, t]);
    }
    for t in Type::ALL {
        for c in CmpCond::ALL {
            add(Op::Cmp(*c), t, vec![t, t]);
        }
        add(Op::Select, t, vec![Type::Pred, t, t]);
        for to in Type::ALL.into_iter().filter(|&to| to != Type::Pred) {
            for sat in [false, true] {
                add(Op::Cvt { from: t, sat }, to, vec![t]);
            }
            if t != Type::Pred && to.bits() == t.bits() {
                add(Op::Bitcast { from: t }, to, vec![t]);
            }
        }
    }
    out
}

/// Interesting bits of a type, picked by `k` when it is below their number.
fn special(ty: Type, k: u8) -> Option<u64> {
    let list: &[u64] = match ty {
        Type::F32 => &[
            0,
            0x8000_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x0000_0001,
            0x7f7f_ffff,
            0x3f00_0000,
            0x3fc0_0000,
            0x4b80_0000,
            0x4f00_0000,
        ],
        Type::F16 => &[
            0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x7bff, 0x3800,
        ],
        Type::BF16 => &[
            0, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x7f7f, 0x3f00,
        ],
        Type::Pred => &[0, 1],
        t => {
            let m = t.mask();
            let min = if t.is_signed() {
                1 << (t.bits() - 1)
            } else {
                0
            };
            return [0, 1, m, min, min.wrapping_sub(1) & m, 2, 3, 8, 16, 31, 32]
                .get(k as usize)
                .copied();
        }
    };
    list.get(k as usize).copied()
}

fn operand(ty: Type, bits: u64, k: u8) -> u64 {
    match special(ty, k % 24) {
        Some(s) => s,
        None if ty == Type::Pred => bits & 1,
        // Small values half of the time, so divisions, shifts and conversions see them.
        None if k.is_multiple_of(2) => (bits % 300) & ty.mask(),
        None => bits & ty.mask(),
    }
}

/// Loads an operand of type `ty` from `addr` (predicates as a byte, then `!= 0`).
fn load(b: &mut FunctionBuilder, ty: Type, addr: Value) -> Value {
    if ty == Type::Pred {
        let byte = b.ins_value(Op::Load(Space::Device), Type::U8, &[addr]);
        let zero = b.ins_value(Op::Const(0), Type::U8, &[]);
        return b.ins_value(Op::Cmp(CmpCond::Ne), Type::U8, &[byte, zero]);
    }
    b.ins_value(Op::Load(Space::Device), ty, &[addr])
}

fn param(index: u32, name: &str, readonly: bool) -> KernelParam {
    KernelParam {
        kind: ParamKind::Buffer,
        index,
        name: name.into(),
        space: Space::Device,
        type_name: "ulong".into(),
        elem_size: 8,
        elem_align: 8,
        readonly,
        is_ref: false,
        atomic: false,
        is_struct: false,
    }
}

/// A kernel computing every case in each of 32 lanes: operands from `input` (8-byte
/// slots, `(case * 32 + lane) * 3 + k`), results to `out` (slot `case * 32 + lane`).
fn simulator_kernel(cases: &[Case]) -> Function {
    let mut b = FunctionBuilder::new("k");
    b.func_mut().params = vec![param(0, "input", true), param(1, "out", false)];
    let input = b.ins_value(Op::BufferAddr(0), Type::U64, &[]);
    let out = b.ins_value(Op::BufferAddr(1), Type::U64, &[]);
    let lane = b.ins_value(
        Op::Sreg(metalsim_isa::SpecialReg::ThreadPositionInGridX),
        Type::U32,
        &[],
    );
    let lane_in = b.ins_value(Op::PtrAdd { scale: 24 }, Type::U64, &[input, lane]);
    let lane_out = b.ins_value(Op::PtrAdd { scale: 8 }, Type::U64, &[out, lane]);
    for (c, case) in cases.iter().enumerate() {
        let args: Vec<Value> = case
            .args
            .iter()
            .enumerate()
            .map(|(k, &t)| {
                let off = b.ins_value(Op::Const(((c * LANES * 3 + k) * 8) as u64), Type::I64, &[]);
                let addr = b.ins_value(Op::PtrAdd { scale: 1 }, Type::U64, &[lane_in, off]);
                load(&mut b, t, addr)
            })
            .collect();
        let r = b.ins_value(case.op, case.ty, &args);
        let rt = case.op.result_type(case.ty).unwrap();
        let off = b.ins_value(Op::Const((c * LANES * 8) as u64), Type::I64, &[]);
        let addr = b.ins_value(Op::PtrAdd { scale: 1 }, Type::U64, &[lane_out, off]);
        let (r, st) = if rt == Type::Pred {
            let one = b.ins_value(Op::Const(1), Type::U8, &[]);
            let zero = b.ins_value(Op::Const(0), Type::U8, &[]);
            (b.ins_value(Op::Select, Type::U8, &[r, one, zero]), Type::U8)
        } else {
            (r, rt)
        };
        b.ins(Op::Store(Space::Device), st, &[addr, r]);
    }
    b.terminate(Terminator::Ret);
    b.finish()
}

/// The same cases on constants, one instruction per case and lane; returns the function
/// and the instructions to inspect after folding.
fn constant_function(cases: &[Case], operands: &[Vec<[u64; 3]>]) -> (Function, Vec<Inst>) {
    let mut b = FunctionBuilder::new("k");
    let mut insts = Vec::new();
    for (case, lanes) in cases.iter().zip(operands) {
        for ops in lanes {
            let args: Vec<Value> = case
                .args
                .iter()
                .zip(ops)
                .map(|(&t, &bits)| b.ins_value(Op::Const(bits), t, &[]))
                .collect();
            b.ins(case.op, case.ty, &args);
            insts.push(Inst(b.func().insts.len() as u32 - 1));
        }
    }
    b.terminate(Terminator::Ret);
    (b.finish(), insts)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn folded_constants_equal_the_simulators_results(
        bits in prop::collection::vec(any::<u64>(), LANES * 3),
        picks in prop::collection::vec(any::<u8>(), LANES * 3),
    ) {
        let cases = cases();
        let operands: Vec<Vec<[u64; 3]>> = cases
            .iter()
            .enumerate()
            .map(|(c, case)| {
                (0..LANES)
                    .map(|l| {
                        let mut ops = [0u64; 3];
                        for (k, &t) in case.args.iter().enumerate() {
                            // Rotate through the random picks so each case sees a mix.
                            let i = (l * 3 + k + c * 7) % (LANES * 3);
                            ops[k] = operand(t, bits[i], picks[i]);
                        }
                        ops
                    })
                    .collect()
            })
            .collect();

        let kernel = simulator_kernel(&cases);
        verify_function(&kernel, 0).unwrap();
        let module = Module { functions: vec![kernel], ..Module::default() };
        let slots = cases.len() * LANES;
        let spec = format!(
            "kernel = \"k\"\nthreads = [32, 1, 1]\nthreadgroup = [32, 1, 1]\n[[buffer]]\nindex = 0\nname = \"input\"\ntype = \"ulong\"\ncount = {}\n[[buffer]]\nindex = 1\nname = \"out\"\ntype = \"ulong\"\ncount = {slots}\noutput = true\n",
            slots * 3
        );
        let spec = LaunchSpec::from_str(&spec, Path::new("."), "test").unwrap();
        let mut launch = spec.resolve(&module.functions[0], 1 << 26).unwrap();
        let input = &mut launch.buffers[0].bytes;
        for (c, lanes) in operands.iter().enumerate() {
            for (l, ops) in lanes.iter().enumerate() {
                for (k, v) in ops.iter().enumerate() {
                    let at = ((c * LANES + l) * 3 + k) * 8;
                    input[at..at + 8].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
        let gpu = metalsim_models::builtin("m1").unwrap();
        let options = RunOptions {
        timing: false,
        ..RunOptions::default()
    };
        let outcome = metalsim_sim::run(&module, "k", &launch, &gpu, &options).unwrap();
        prop_assert!(outcome.fault.is_none(), "{:?}", outcome.fault);
        let results = &outcome.buffers[1];

        let (mut folded, insts) = constant_function(&cases, &operands);
        fold_constants(&mut folded);
        let mut n_folded = 0;
        for (c, case) in cases.iter().enumerate() {
            for l in 0..LANES {
                let inst = &folded.insts[insts[c * LANES + l].index()];
                let Op::Const(got) = inst.op else { continue };
                n_folded += 1;
                let rt = case.op.result_type(case.ty).unwrap();
                let at = (c * LANES + l) * 8;
                let sim = u64::from_le_bytes(results[at..at + 8].try_into().unwrap()) & rt.mask();
                prop_assert_eq!(
                    got, sim,
                    "{:?}.{} on {:x?}: folded {:#x}, simulator {:#x}",
                    case.op, case.ty, &operands[c][l][..case.args.len()], got, sim
                );
            }
        }
        // Most operations on most operands fold (NaN results and the like do not).
        prop_assert!(n_folded > slots / 2, "only {} of {} folded", n_folded, slots);
    }
}
