//! Helpers shared by the simulator's tests: launches, runs and buffer conversions.

use metalsim_isa::{Module, Type, parse_module};
use metalsim_launch::{BufferBinding, ElemType, Grid, Launch, ThreadgroupBinding};
use metalsim_models::Gpu;
use metalsim_sim::{FaultKind, RunOptions, RunOutcome};

/// The M1 model.
pub fn m1() -> Gpu {
    metalsim_models::builtin("m1").unwrap()
}

/// Parses ISA text, panicking with the parse error.
pub fn module(text: &str) -> Module {
    parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A buffer binding of `bytes` at `index`.
pub fn buffer(index: u32, name: &str, scalar: Type, bytes: Vec<u8>) -> BufferBinding {
    let elem = ElemType { scalar, lanes: 1 };
    BufferBinding {
        index,
        name: name.to_string(),
        elem,
        count: bytes.len() as u64 / elem.size() as u64,
        bytes,
        output: true,
    }
}

/// A launch of kernel `k`.
pub fn launch(grid: Grid, tg: [u32; 3], buffers: Vec<BufferBinding>) -> Launch {
    Launch {
        kernel: "k".into(),
        grid,
        threadgroup: tg,
        buffers,
        threadgroup_memory: vec![],
    }
}

/// Adds threadgroup memory bindings.
pub fn with_tg_memory(mut l: Launch, tg: &[(u32, u32)]) -> Launch {
    l.threadgroup_memory = tg
        .iter()
        .map(|&(index, bytes)| ThreadgroupBinding { index, bytes })
        .collect();
    l
}

/// Runs functionally only.
pub fn run_functional(m: &Module, l: &Launch) -> RunOutcome {
    run_on(m, l, &m1(), false)
}

/// Runs with timing.
pub fn run_timed(m: &Module, l: &Launch) -> RunOutcome {
    run_on(m, l, &m1(), true)
}

/// Runs kernel `k` on `gpu`, timed or functionally only (then with no instruction budget).
pub fn run_on(m: &Module, l: &Launch, gpu: &Gpu, timing: bool) -> RunOutcome {
    let opts = RunOptions {
        timing,
        max_instructions: if timing {
            RunOptions::default().max_instructions
        } else {
            None
        },
        ..RunOptions::default()
    };
    metalsim_sim::run(m, "k", l, gpu, &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs both ways, checks the buffers agree, no fault happened and both runs found the
/// same kinds of mistakes at the same places; the functional outcome (findings included).
pub fn run_both_with_findings(m: &Module, l: &Launch) -> RunOutcome {
    let f = run_functional(m, l);
    let t = run_timed(m, l);
    assert_eq!(f.fault, None, "functional run faulted");
    assert_eq!(t.fault, None, "timed run faulted");
    assert_eq!(f.buffers, t.buffers, "timing changed the results");
    let places = |o: &RunOutcome| -> Vec<(FaultKind, u32)> {
        let mut v: Vec<_> = o
            .findings
            .iter()
            .map(|x| (x.kind(), x.first.loc.line))
            .collect();
        v.sort_by_key(|p| (p.0.name(), p.1));
        v
    };
    assert_eq!(places(&f), places(&t), "timing changed the findings");
    f
}

/// The kinds of a run's findings, in order.
pub fn finding_kinds(o: &RunOutcome) -> Vec<FaultKind> {
    o.findings.iter().map(|f| f.kind()).collect()
}

/// Runs both ways, checks the buffers agree and no fault happened; the functional outcome.
pub fn run_both(m: &Module, l: &Launch) -> RunOutcome {
    let f = run_functional(m, l);
    let t = run_timed(m, l);
    assert_eq!(f.fault, None, "functional run faulted");
    assert_eq!(t.fault, None, "timed run faulted");
    assert_eq!(f.findings, [], "the sanitizer found something");
    assert_eq!(t.findings, [], "the sanitizer found something with timing");
    assert_eq!(f.buffers, t.buffers, "timing changed the results");
    assert_eq!(f.stats.simd_instructions, t.stats.simd_instructions);
    f
}

/// Little-endian bytes of u32s.
pub fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// u32s of little-endian bytes.
pub fn as_u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Little-endian bytes of f32s.
pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// f32s of little-endian bytes.
pub fn as_f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Zeroed bytes.
pub fn zeros(n: usize) -> Vec<u8> {
    vec![0; n]
}

/// The ISA type of a name.
pub fn ty(name: &str) -> Type {
    name.parse().unwrap_or_else(|_| panic!("type {name}"))
}

/// Canonical bits of lane values as little-endian bytes of `t`'s size.
pub fn to_bytes(t: Type, vals: &[u64]) -> Vec<u8> {
    let n = t.bytes() as usize;
    vals.iter()
        .flat_map(|v| v.to_le_bytes()[..n].to_vec())
        .collect()
}

/// Little-endian values of `t`'s size as u64s.
pub fn from_bytes(t: Type, b: &[u8]) -> Vec<u64> {
    let n = t.bytes() as usize;
    b.chunks_exact(n)
        .map(|c| {
            let mut v = [0u8; 8];
            v[..n].copy_from_slice(c);
            u64::from_le_bytes(v)
        })
        .collect()
}

/// Evaluates one instruction per thread: operand `i` of thread `t` is `args[i].1[t]`
/// (canonical bits of type `args[i].0`), loaded from a buffer; the result, of type
/// `result`, is stored and returned. `inst` is the mnemonic (`add.i8`, `cmp.lt.f32`,
/// `cvt.sat.f32.u8`).
pub fn eval(inst: &str, args: &[(&str, &[u64])], result: &str) -> Vec<u64> {
    let n = args.first().map_or(32, |a| a.1.len());
    let mut text = String::from("kernel k {\n");
    for (i, (t, _)) in args.iter().enumerate() {
        let s = ty(t).bytes();
        text +=
            &format!("  param buffer({i}) in{i} device readonly type \"x\" size {s} align {s}\n");
    }
    let rt = ty(result);
    let rs = rt.bytes();
    let o = args.len();
    text += &format!("  param buffer({o}) out device type \"x\" size {rs} align {rs}\nbb0:\n");
    text += "  v0 = sreg.thread_position_in_grid.x\n";
    let mut operands = Vec::new();
    for (i, (t, _)) in args.iter().enumerate() {
        let s = ty(t).bytes();
        let v = 1 + 3 * i;
        text += &format!(
            "  v{v} = buffer_addr.{i}\n  v{} = ptradd.{s} v{v}, v0\n  v{} = ld.device.{t} v{}\n",
            v + 1,
            v + 2,
            v + 1
        );
        operands.push(format!("v{}", v + 2));
    }
    text += &format!("  v100 = {inst} {}\n", operands.join(", "));
    text += &format!(
        "  v101 = buffer_addr.{o}\n  v102 = ptradd.{rs} v101, v0\n  st.device.{result} v102, v100\n  ret\n}}\n"
    );
    let m = module(&text);
    let mut buffers: Vec<_> = args
        .iter()
        .enumerate()
        .map(|(i, (t, vals))| buffer(i as u32, &format!("in{i}"), ty(t), to_bytes(ty(t), vals)))
        .collect();
    buffers.push(buffer(o as u32, "out", rt, zeros(n * rs as usize)));
    let l = launch(Grid::Threads([n as u32, 1, 1]), [64, 1, 1], buffers);
    let out = run_functional(&m, &l);
    assert_eq!(out.fault, None, "{text}");
    from_bytes(rt, &out.buffers[o])
}

/// Deterministic pseudo-random u64s (xorshift), with the edge values of every width first.
pub fn samples(n: usize, seed: u64) -> Vec<u64> {
    let mut v = vec![
        0,
        1,
        2,
        u64::MAX,
        0x7f,
        0x80,
        0xff,
        0x7fff,
        0x8000,
        0xffff,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        i64::MAX as u64,
        i64::MIN as u64,
        3,
        31,
        32,
        33,
        63,
        64,
    ];
    let mut x = seed | 1;
    while v.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Mix widths so small values and sign bits of narrow types are common.
        let w = [8, 16, 32, 64][(x >> 60) as usize % 4];
        v.push(if w == 64 { x } else { x & ((1u64 << w) - 1) });
    }
    v.truncate(n);
    v
}
