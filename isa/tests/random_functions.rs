//! Property test: random small kernels (integer, float and narrow arithmetic, selects,
//! shuffles, branches, loops with constant, per-thread and uniform run-time trip counts, early returns,
//! barriers, loads that may fall out of bounds) give bit-identical buffers and the same
//! fault on the simulator with and without `optimize`, and still verify after it. The
//! buffers are compared as they stand after the run, or at the fault: the lanes of a
//! SIMD-group that ran, and in what order, must be the same.

use std::fmt::Write as _;
use std::path::Path;

use metalsim_isa::{Module, optimize, parse_module, verify_function};
use metalsim_launch::LaunchSpec;
use metalsim_sim::{RunOptions, RunOutcome};
use proptest::prelude::*;

/// Threads in the grid (two threadgroups of two SIMD-groups).
const THREADS: u32 = 128;
/// Output slots per thread.
const SLOTS: u32 = 8;
/// Elements of the input buffer; loads index it modulo 72, so some fall past its end.
const INPUTS: u32 = 64;

/// A statement of a random kernel. Operand numbers pick values from those in scope
/// (modulo how many there are).
#[derive(Clone, Debug)]
enum Stmt {
    /// An integer operation on two values, in the type `ty` picks.
    Int(u8, u8, u8, u8),
    /// A float operation on two values converted to a float type.
    Float(u8, u8, u8, u8),
    /// A comparison and a select.
    Select(u8, u8, u8, u8),
    /// A constant.
    Const(u32),
    /// A SIMD-group shuffle by a constant lane mask.
    Shuffle(u8, u8),
    /// `out[thread * SLOTS + slot] = value`.
    Store(u8),
    /// `in[value % 72]` (out of bounds past 63).
    Load(u8),
    /// `in[value % 64 + c]` with a small constant `c` (out of bounds past 63): an index
    /// the address folding splits into a base and a constant offset.
    LoadOffset(u8, u8),
    /// `in[value + c]` with `c` one of 1, 2, 3 or -1: wraps around 2^32 for some values,
    /// which the address folding must not split.
    LoadWrap(u8, u8),
    /// A threadgroup barrier.
    Barrier,
    /// `if (value & 1) { .. } else { .. }`, merging the last value of each side.
    If(u8, Vec<Stmt>, Vec<Stmt>),
    /// `for (k = 0; k < n; ++k) { .. }` with a constant `n`, accumulating a value.
    Loop(u8, Vec<Stmt>),
    /// The same with `n = value & 7`, different per thread.
    VarLoop(u8, Vec<Stmt>),
    /// The same with `n = in[c] & 15` (for a constant `c`): a bound every lane reads
    /// alike, known only at run time (the loop the optimizer unrolls by four).
    UniformLoop(u8, Vec<Stmt>),
    /// `if ((value & 15) == 3) return;`
    Return(u8),
}

fn stmt() -> impl Strategy<Value = Stmt> {
    let leaf = prop_oneof![
        6 => (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(a, b, c, d)| Stmt::Int(a, b, c, d)),
        3 => (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(a, b, c, d)| Stmt::Float(a, b, c, d)),
        2 => (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(a, b, c, d)| Stmt::Select(a, b, c, d)),
        2 => prop_oneof![Just(0u32), Just(1), Just(2), Just(16), Just(u32::MAX), Just(u32::MAX - 1), Just(0x8000_0000), any::<u32>()].prop_map(Stmt::Const),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Stmt::Shuffle(a, b)),
        3 => any::<u8>().prop_map(Stmt::Store),
        2 => any::<u8>().prop_map(Stmt::Load),
        2 => (any::<u8>(), 0u8..12).prop_map(|(a, c)| Stmt::LoadOffset(a, c)),
        1 => (any::<u8>(), 0u8..4).prop_map(|(a, c)| Stmt::LoadWrap(a, c)),
        1 => Just(Stmt::Barrier),
        1 => any::<u8>().prop_map(Stmt::Return),
    ];
    leaf.prop_recursive(3, 40, 6, |inner| {
        prop_oneof![
            (
                any::<u8>(),
                prop::collection::vec(inner.clone(), 0..5),
                prop::collection::vec(inner.clone(), 0..5)
            )
                .prop_map(|(c, t, e)| Stmt::If(c, t, e)),
            (0u8..6, prop::collection::vec(inner.clone(), 1..5))
                .prop_map(|(n, b)| Stmt::Loop(n, b)),
            (any::<u8>(), prop::collection::vec(inner.clone(), 1..5))
                .prop_map(|(n, b)| Stmt::VarLoop(n, b)),
            (0u8..64, prop::collection::vec(inner, 1..5))
                .prop_map(|(c, b)| Stmt::UniformLoop(c, b)),
        ]
    })
}

/// Writes a kernel's ISA text from statements.
struct Writer {
    text: String,
    values: u32,
    blocks: u32,
    /// Values in scope (all `u32`).
    scope: Vec<String>,
    slot: u32,
    tid: String,
    out_base: String,
    in_base: String,
}

const INT_OPS: [&str; 13] = [
    "add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr", "mulhi",
];
const INT_TYPES: [&str; 6] = ["u32", "i32", "u8", "i16", "u64", "i64"];
const FLOAT_OPS: [&str; 6] = ["add", "sub", "mul", "div", "min", "max"];
const FLOAT_TYPES: [&str; 3] = ["f32", "f16", "bf16"];
const CONDS: [&str; 6] = ["eq", "ne", "lt", "le", "gt", "ge"];

impl Writer {
    fn value(&mut self) -> String {
        self.values += 1;
        format!("v{}", self.values - 1)
    }

    fn block(&mut self) -> String {
        self.blocks += 1;
        format!("bb{}", self.blocks - 1)
    }

    fn line(&mut self, s: &str) {
        let _ = writeln!(self.text, "  {s}");
    }

    fn pick(&self, n: u8) -> String {
        self.scope[n as usize % self.scope.len()].clone()
    }

    fn constant(&mut self, ty: &str, v: &str) -> String {
        let c = self.value();
        self.line(&format!("{c} = const.{ty} {v}"));
        c
    }

    /// Converts a `u32` to `ty` (integer types wrap; 16-bit floats by bits).
    fn widen_from_u32(&mut self, v: &str, ty: &str) -> String {
        if ty == "u32" {
            return v.to_string();
        }
        let r = self.value();
        match ty {
            "i32" | "f32" => self.line(&format!("{r} = bitcast.u32.{ty} {v}")),
            "f16" | "bf16" => {
                let h = self.value();
                self.line(&format!("{h} = cvt.u32.u16 {v}"));
                self.line(&format!("{r} = bitcast.u16.{ty} {h}"));
            }
            _ => self.line(&format!("{r} = cvt.u32.{ty} {v}")),
        }
        r
    }

    /// Converts a value of `ty` back to `u32` keeping its bits.
    fn bits_as_u32(&mut self, v: &str, ty: &str) -> String {
        if ty == "u32" {
            return v.to_string();
        }
        let r = self.value();
        match ty {
            "i32" | "f32" => self.line(&format!("{r} = bitcast.{ty}.u32 {v}")),
            "f16" | "bf16" => {
                let h = self.value();
                self.line(&format!("{h} = bitcast.{ty}.u16 {v}"));
                self.line(&format!("{r} = cvt.u16.u32 {h}"));
            }
            _ => self.line(&format!("{r} = cvt.{ty}.u32 {v}")),
        }
        r
    }

    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Int(op, ty, a, b) => {
                let (op, ty) = (INT_OPS[*op as usize % 13], INT_TYPES[*ty as usize % 6]);
                // The simulator divides every lane, inactive ones included, and an inactive
                // lane's register may hold a reused slot's wider bits: a narrow signed
                // division then divides by zero in Rust (reported; `alu::int_bin` tests
                // the raw bits for zero, not the sign-extended divisor).
                let ty = if ty == "i16" && matches!(op, "div" | "rem") {
                    "i32"
                } else {
                    ty
                };
                let (a, b) = (self.pick(*a), self.pick(*b));
                let (x, y) = (self.widen_from_u32(&a, ty), self.widen_from_u32(&b, ty));
                let r = self.value();
                self.line(&format!("{r} = {op}.{ty} {x}, {y}"));
                let u = self.bits_as_u32(&r, ty);
                self.scope.push(u);
            }
            Stmt::Float(op, ty, a, b) => {
                let (op, ty) = (FLOAT_OPS[*op as usize % 6], FLOAT_TYPES[*ty as usize % 3]);
                let (a, b) = (self.pick(*a), self.pick(*b));
                // One operand converted by value, one by bits (so NaNs and infinities occur).
                let x = self.value();
                self.line(&format!("{x} = cvt.u32.{ty} {a}"));
                let y = self.widen_from_u32(&b, ty);
                let r = self.value();
                self.line(&format!("{r} = {op}.{ty} {x}, {y}"));
                let u = self.bits_as_u32(&r, ty);
                self.scope.push(u);
            }
            Stmt::Select(c, ty, a, b) => {
                let (c, ty) = (CONDS[*c as usize % 6], INT_TYPES[*ty as usize % 2]);
                let (a, b) = (self.pick(*a), self.pick(*b));
                let (x, y) = (self.widen_from_u32(&a, ty), self.widen_from_u32(&b, ty));
                let p = self.value();
                self.line(&format!("{p} = cmp.{c}.{ty} {x}, {y}"));
                let r = self.value();
                self.line(&format!("{r} = select.u32 {p}, {a}, {b}"));
                self.scope.push(r);
            }
            Stmt::Const(v) => {
                let c = self.constant("u32", &v.to_string());
                self.scope.push(c);
            }
            Stmt::Shuffle(a, m) => {
                let a = self.pick(*a);
                let m = self.constant("u32", &(m % 32).to_string());
                let r = self.value();
                self.line(&format!("{r} = simd.shuffle_xor.u32 {a}, {m}"));
                self.scope.push(r);
            }
            Stmt::Store(a) => {
                let a = self.pick(*a);
                let slots = self.constant("u32", &SLOTS.to_string());
                let idx = self.value();
                self.line(&format!("{idx} = mul.u32 {}, {slots}", self.tid));
                let slot = self.constant("u32", &(self.slot % SLOTS).to_string());
                self.slot += 1;
                let at = self.value();
                self.line(&format!("{at} = add.u32 {idx}, {slot}"));
                let p = self.value();
                self.line(&format!("{p} = ptradd.4 {}, {at}", self.out_base));
                self.line(&format!("st.device.u32 {p}, {a}"));
            }
            Stmt::Load(a) => {
                let a = self.pick(*a);
                let m = self.constant("u32", "72");
                let i = self.value();
                self.line(&format!("{i} = rem.u32 {a}, {m}"));
                let p = self.value();
                self.line(&format!("{p} = ptradd.4 {}, {i}", self.in_base));
                let r = self.value();
                self.line(&format!("{r} = ld.device.u32 {p}"));
                self.scope.push(r);
            }
            Stmt::LoadOffset(a, c) => {
                let a = self.pick(*a);
                let m = self.constant("u32", "64");
                let i = self.value();
                self.line(&format!("{i} = rem.u32 {a}, {m}"));
                let c = self.constant("u32", &c.to_string());
                let j = self.value();
                self.line(&format!("{j} = add.u32 {i}, {c}"));
                let p = self.value();
                self.line(&format!("{p} = ptradd.4 {}, {j}", self.in_base));
                let r = self.value();
                self.line(&format!("{r} = ld.device.u32 {p}"));
                self.scope.push(r);
            }
            Stmt::LoadWrap(a, c) => {
                let a = self.pick(*a);
                let c = self.constant("u32", ["1", "2", "3", "4294967295"][*c as usize % 4]);
                let j = self.value();
                self.line(&format!("{j} = add.u32 {a}, {c}"));
                let p = self.value();
                self.line(&format!("{p} = ptradd.4 {}, {j}", self.in_base));
                let r = self.value();
                self.line(&format!("{r} = ld.device.u32 {p}"));
                self.scope.push(r);
            }
            Stmt::Barrier => self.line("barrier.threadgroup.threadgroup"),
            Stmt::Return(a) => {
                let a = self.pick(*a);
                let m = self.constant("u32", "15");
                let x = self.value();
                self.line(&format!("{x} = and.u32 {a}, {m}"));
                let three = self.constant("u32", "3");
                let c = self.value();
                self.line(&format!("{c} = cmp.eq.u32 {x}, {three}"));
                let (r, next) = (self.block(), self.block());
                self.line(&format!("br_if {c}, {r}, {next}"));
                let _ = writeln!(self.text, "{r}:\n  ret\n{next}:");
            }
            Stmt::If(c, then_, else_) => {
                let a = self.pick(*c);
                let one = self.constant("u32", "1");
                let x = self.value();
                self.line(&format!("{x} = and.u32 {a}, {one}"));
                let zero = self.constant("u32", "0");
                let p = self.value();
                self.line(&format!("{p} = cmp.ne.u32 {x}, {zero}"));
                let (t, e, j) = (self.block(), self.block(), self.block());
                self.line(&format!("br_if {p}, {t}, {e}"));
                let depth = self.scope.len();
                let _ = writeln!(self.text, "{t}:");
                self.stmts(then_);
                let tv = self.scope.last().cloned().unwrap_or_default();
                self.scope.truncate(depth);
                self.line(&format!("br {j}({tv})"));
                let _ = writeln!(self.text, "{e}:");
                self.stmts(else_);
                let ev = self.scope.last().cloned().unwrap_or_default();
                self.scope.truncate(depth);
                self.line(&format!("br {j}({ev})"));
                let m = self.value();
                let _ = writeln!(self.text, "{j}({m}:u32):");
                self.scope.push(m);
            }
            Stmt::Loop(n, body) => {
                let n = self.constant("u32", &n.to_string());
                self.counted(&n, body);
            }
            Stmt::VarLoop(a, body) => {
                let a = self.pick(*a);
                let seven = self.constant("u32", "7");
                let n = self.value();
                self.line(&format!("{n} = and.u32 {a}, {seven}"));
                self.counted(&n, body);
            }
            Stmt::UniformLoop(c, body) => {
                let c = self.constant("u32", &c.to_string());
                let p = self.value();
                self.line(&format!("{p} = ptradd.4 {}, {c}", self.in_base));
                let r = self.value();
                self.line(&format!("{r} = ld.device.u32 {p}"));
                let fifteen = self.constant("u32", "15");
                let n = self.value();
                self.line(&format!("{n} = and.u32 {r}, {fifteen}"));
                self.counted(&n, body);
            }
        }
    }

    /// `for (k = 0; k < n; ++k) { acc += body's last value; }`, then `acc` is in scope.
    fn counted(&mut self, n: &str, body: &[Stmt]) {
        let zero = self.constant("u32", "0");
        let init = self.scope.last().cloned().unwrap_or_default();
        let (h, b, e) = (self.block(), self.block(), self.block());
        self.line(&format!("br {h}({zero}, {init})"));
        let (k, acc) = (self.value(), self.value());
        let _ = writeln!(self.text, "{h}({k}:u32, {acc}:u32):");
        let c = self.value();
        self.line(&format!("{c} = cmp.lt.u32 {k}, {n}"));
        self.line(&format!("br_if {c}, {b}, {e}"));
        let _ = writeln!(self.text, "{b}:");
        let depth = self.scope.len();
        self.scope.push(k.clone());
        self.scope.push(acc.clone());
        self.stmts(body);
        let last = self.scope.last().cloned().unwrap_or_default();
        self.scope.truncate(depth);
        let sum = self.value();
        self.line(&format!("{sum} = add.u32 {acc}, {last}"));
        let one = self.constant("u32", "1");
        let k2 = self.value();
        self.line(&format!("{k2} = add.u32 {k}, {one}"));
        self.line(&format!("br {h}({k2}, {sum})"));
        let _ = writeln!(self.text, "{e}:");
        self.scope.push(acc);
    }
}

/// The kernel's text: the statements on the thread's id, its lane and an input value.
fn kernel_text(body: &[Stmt]) -> String {
    let mut w = Writer {
        text: String::new(),
        values: 0,
        blocks: 1,
        scope: Vec::new(),
        slot: 0,
        tid: String::new(),
        out_base: String::new(),
        in_base: String::new(),
    };
    w.text.push_str(
        "kernel k {\n  param buffer(0) input device readonly type \"uint\" size 4 align 4\n  param buffer(1) out device type \"uint\" size 4 align 4\nbb0:\n",
    );
    w.in_base = w.value();
    w.line(&format!("{} = buffer_addr.0", w.in_base));
    w.out_base = w.value();
    w.line(&format!("{} = buffer_addr.1", w.out_base));
    w.tid = w.value();
    w.line(&format!("{} = sreg.thread_position_in_grid.x", w.tid));
    let lane = w.value();
    w.line(&format!("{lane} = sreg.thread_index_in_simdgroup"));
    let local = w.value();
    w.line(&format!("{local} = sreg.thread_position_in_threadgroup.x"));
    let p = w.value();
    w.line(&format!("{p} = ptradd.4 {}, {}", w.in_base, w.tid));
    let x = w.value();
    w.line(&format!("{x} = ld.device.u32 {p}"));
    w.scope = vec![w.tid.clone(), lane, x, local];
    w.stmts(body);
    // Every value in scope at the end is stored, so nothing is dead by accident.
    for k in 0..w.scope.len().min(SLOTS as usize) {
        w.stmt(&Stmt::Store(k as u8));
    }
    w.line("ret");
    w.text.push_str("}\n");
    w.text
}

fn run(m: &Module, seed: u64) -> RunOutcome {
    let spec = format!(
        r#"
kernel = "k"
threads = [{THREADS}, 1, 1]
threadgroup = [64, 1, 1]
[[buffer]]
index = 0
name = "input"
type = "uint"
count = {INPUTS}
init = {{ random = "uniform", min = 0, max = 100, seed = {seed} }}
[[buffer]]
index = 1
name = "out"
type = "uint"
count = {n}
output = true
"#,
        n = THREADS * SLOTS
    );
    let spec = LaunchSpec::from_str(&spec, Path::new("."), "test").unwrap();
    let launch = spec.resolve(&m.functions[0], 1 << 24).unwrap();
    let gpu = metalsim_models::builtin("m1").unwrap();
    let options = RunOptions {
        timing: false,
        ..RunOptions::default()
    };
    metalsim_sim::run(m, "k", &launch, &gpu, &options).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn optimize_keeps_outputs_and_faults(body in prop::collection::vec(stmt(), 1..10), seed in 0u64..1000) {
        let text = kernel_text(&body);
        let base = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        verify_function(&base.functions[0], 0).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut opt = base.clone();
        optimize(&mut opt.functions[0]);
        verify_function(&opt.functions[0], 0)
            .unwrap_or_else(|e| panic!("{e}\n{text}\n{}", opt.functions[0]));
        let (a, b) = (run(&base, seed), run(&opt, seed));
        prop_assert_eq!(&a.fault, &b.fault, "faults differ\n{}\n{}", text, opt.functions[0]);
        prop_assert!(a.buffers == b.buffers, "buffers differ\n{}\n{}", text, opt.functions[0]);
    }
}

/// The generator reaches the run-time unrolling: a loop over a bound read from the input
/// becomes a main loop (its guard clamps the bound with `max`) and a remainder, and both
/// versions agree for several inputs (bounds of 0 to 15 iterations).
#[test]
fn uniform_loops_are_unrolled_and_agree() {
    let body = [
        Stmt::Store(0),
        Stmt::UniformLoop(
            5,
            vec![Stmt::Load(2), Stmt::Int(0, 1, 0, 0), Stmt::Store(1)],
        ),
        Stmt::Store(3),
    ];
    let text = kernel_text(&body);
    let base = parse_module(&text).unwrap();
    let mut opt = base.clone();
    optimize(&mut opt.functions[0]);
    verify_function(&opt.functions[0], 0).unwrap();
    let printed = opt.functions[0].to_string();
    assert!(printed.contains("max.u32"), "not unrolled:\n{printed}");
    for seed in 0..8 {
        let (a, b) = (run(&base, seed), run(&opt, seed));
        assert_eq!(a.fault, b.fault, "{text}\n{printed}");
        assert!(a.buffers == b.buffers, "{text}\n{printed}");
    }
}
