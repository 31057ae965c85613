//! The optimizer end to end: kernels compiled by the frontend run on the simulator with
//! and without `metalsim_isa::optimize`, and must give bit-identical buffers and the same
//! fault (thread, instruction, address), while the examples issue fewer instructions.
//!
//! Runs without timing compare everything, faults and floating-point atomics included
//! (threadgroups then run in a fixed order). Runs with timing compare the buffers of
//! kernels whose results do not depend on the order threadgroups finish in.

use std::path::Path;

use metalsim_isa::{Module, optimize, verify_function};
use metalsim_launch::{Launch, LaunchSpec};
use metalsim_sim::{RunOptions, RunOutcome};

/// The kernel as lowered, before the optimizer (which `compile` runs by default).
fn compile(name: &str, src: &str) -> Module {
    let mut sources = metalsim_frontend::SourceMap::new();
    let id = sources.add(name, None, src);
    let options = metalsim_frontend::CompileOptions {
        unoptimized: true,
        ..Default::default()
    };
    let (module, diags) = metalsim_frontend::compile(&mut sources, id, &options);
    module.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&diags, &sources, false)))
}

/// The module with every kernel optimized (and verified).
fn optimized(m: &Module) -> Module {
    let mut o = m.clone();
    for f in &mut o.functions {
        optimize(f);
        verify_function(f, m.data.len())
            .unwrap_or_else(|e| panic!("optimized kernel does not verify: {e}\n{f}"));
    }
    o
}

fn launch(m: &Module, spec: &str) -> (String, Launch) {
    let spec = LaunchSpec::from_str(spec, Path::new(env!("CARGO_MANIFEST_DIR")), "test spec")
        .unwrap_or_else(|e| panic!("{e}"));
    let f = m.function(&spec.kernel).expect("the spec's kernel");
    let launch = spec.resolve(f, 1 << 30).unwrap_or_else(|e| panic!("{e}"));
    (spec.kernel, launch)
}

fn run(m: &Module, kernel: &str, launch: &Launch, timing: bool) -> RunOutcome {
    let gpu = metalsim_models::builtin("m1").unwrap();
    let options = RunOptions {
        timing,
        ..RunOptions::default()
    };
    metalsim_sim::run(m, kernel, launch, &gpu, &options).unwrap_or_else(|e| panic!("{e}"))
}

/// What a check saw: SIMD-group instructions issued as compiled and optimized (without
/// timing), and the fault both runs stopped at.
struct Seen {
    before: u64,
    after: u64,
    fault: Option<metalsim_sim::KernelFault>,
}

/// Runs the kernel of `spec` as compiled and as optimized; checks they agree.
fn check_same(name: &str, src: &str, spec: &str, order_free: bool) -> Seen {
    let base = compile(name, src);
    let opt = optimized(&base);
    let (kernel, l) = launch(&base, spec);
    let a = run(&base, &kernel, &l, false);
    let b = run(&opt, &kernel, &l, false);
    assert_eq!(a.fault, b.fault, "{name}: faults differ");
    for (i, (x, y)) in a.buffers.iter().zip(&b.buffers).enumerate() {
        assert!(x == y, "{name}: buffer {i} differs without timing");
    }
    if order_free {
        let a = run(&base, &kernel, &l, true);
        let b = run(&opt, &kernel, &l, true);
        assert_eq!(
            a.fault.is_some(),
            b.fault.is_some(),
            "{name}: faults differ"
        );
        if a.fault.is_none() {
            assert!(a.buffers == b.buffers, "{name}: buffers differ with timing");
        }
    }
    Seen {
        before: a.stats.simd_instructions,
        after: b.stats.simd_instructions,
        fault: a.fault,
    }
}

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

fn matmul_spec(kernel: &str, n: u32, seed: u32, tiled: bool) -> String {
    let grid = if tiled {
        let g = n.div_ceil(16);
        format!("threadgroups = [{g}, {g}, 1]")
    } else {
        format!("threads = [{n}, {n}, 1]")
    };
    let tg = if tiled {
        "[[threadgroup_memory]]\nindex = 0\nbytes = 1024\n[[threadgroup_memory]]\nindex = 1\nbytes = 1024\n"
    } else {
        ""
    };
    let nn = n * n;
    format!(
        r#"
kernel = "{kernel}"
{grid}
threadgroup = [16, 16, 1]
[[buffer]]
index = 0
name = "A"
type = "float"
count = {nn}
init = {{ random = "uniform", min = -1.0, max = 1.0, seed = {seed} }}
[[buffer]]
index = 1
name = "B"
type = "float"
count = {nn}
init = {{ random = "uniform", min = -1.0, max = 1.0, seed = {s2} }}
[[buffer]]
index = 2
name = "C"
type = "float"
count = {nn}
output = true
[[buffer]]
index = 3
name = "N"
type = "uint"
init = {{ values = [{n}] }}
{tg}"#,
        s2 = seed + 100
    )
}

#[test]
fn examples_give_the_same_outputs_with_fewer_instructions() {
    let mut counts = Vec::new();
    for seed in [1, 2] {
        let n = 1000 + seed * 37;
        let spec = format!(
            r#"
kernel = "vector_add"
threads = [{n}, 1, 1]
threadgroup = [256, 1, 1]
[[buffer]]
index = 0
name = "x"
type = "float"
count = {n}
init = {{ random = "uniform", min = -10.0, max = 10.0, seed = {seed} }}
[[buffer]]
index = 1
name = "y"
type = "float"
count = {n}
init = {{ random = "normal", mean = 0.0, std = 3.0, seed = {s2} }}
[[buffer]]
index = 2
name = "out"
type = "float"
count = {n}
output = true
[[buffer]]
index = 3
name = "n"
type = "uint"
init = {{ values = [{n}] }}
"#,
            s2 = seed + 10
        );
        counts.push((
            "vector_add",
            check_same(
                "vector_add.metal",
                &example("vector_add.metal"),
                &spec,
                true,
            ),
        ));

        let (w, h) = (37 + seed, 23);
        let px = w * h;
        let spec = format!(
            r#"
kernel = "brightness"
threads = [{w}, {h}, 1]
threadgroup = [8, 8, 1]
[[buffer]]
index = 0
name = "src"
type = "uchar4"
count = {px}
init = {{ random = "uniform", min = 0, max = 255, seed = {seed} }}
[[buffer]]
index = 1
name = "dst"
type = "uchar4"
count = {px}
output = true
[[buffer]]
index = 2
name = "gain"
type = "float"
init = {{ values = [1.37] }}
[[buffer]]
index = 3
name = "size"
type = "uint2"
init = {{ values = [{w}, {h}] }}
"#
        );
        counts.push((
            "brightness",
            check_same(
                "brightness.metal",
                &example("brightness.metal"),
                &spec,
                true,
            ),
        ));

        let n = 5000 + seed * 111;
        let groups = n / 256 + 1;
        let spec = format!(
            r#"
kernel = "reduce_sum"
threadgroups = [{groups}, 1, 1]
threadgroup = [256, 1, 1]
[[buffer]]
index = 0
name = "data"
type = "float"
count = {n}
init = {{ random = "uniform", min = 0.0, max = 1.0, seed = {seed} }}
[[buffer]]
index = 1
name = "total"
type = "float"
count = 1
output = true
[[buffer]]
index = 2
name = "count"
type = "uint"
init = {{ values = [{n}] }}
[[threadgroup_memory]]
index = 0
bytes = 32
"#
        );
        // Float atomics from several threadgroups: the sum's rounding depends on the
        // order they finish in, which timing decides; compared without timing only.
        counts.push((
            "reduce_sum",
            check_same(
                "reduce_sum.metal",
                &example("reduce_sum.metal"),
                &spec,
                false,
            ),
        ));

        let n = 37 + seed;
        counts.push((
            "matmul_naive",
            check_same(
                "matmul_naive.metal",
                &example("matmul_naive.metal"),
                &matmul_spec("matmul_naive", n, seed, false),
                true,
            ),
        ));
        counts.push((
            "matmul_tiled",
            check_same(
                "matmul_tiled.metal",
                &example("matmul_tiled.metal"),
                &matmul_spec("matmul_tiled", n, seed, true),
                true,
            ),
        ));
    }
    for (name, seen) in counts {
        assert!(seen.fault.is_none(), "{name}: {:?}", seen.fault);
        assert!(
            seen.after < seen.before,
            "{name}: {} SIMD-group instructions optimized, {} before",
            seen.after,
            seen.before
        );
    }
}

/// A kernel whose threads past the end write out of bounds: the same thread faults at the
/// same store, with the buffer as it stood.
#[test]
fn faults_are_the_same() {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oob_write.metal"),
    )
    .unwrap();
    let spec = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oob_write.toml"),
    )
    .unwrap();
    let seen = check_same("oob_write.metal", &src, &spec, false);
    assert_eq!(seen.fault.map(|f| f.thread), Some([37, 0, 0]));

    // A fault inside a loop that unrolls, after a barrier, past a folded address.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              threadgroup float* tile [[threadgroup(0)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]])
{
    tile[l] = a[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float acc = 0.0f;
    for (uint k = 0; k < 4; ++k) {
        acc += tile[(l + k) % 32] * a[i * 4 + k];
    }
    out[i] = acc;
}
"#;
    let spec = r#"
kernel = "k"
threads = [64, 1, 1]
threadgroup = [32, 1, 1]
[[buffer]]
index = 0
name = "a"
type = "float"
count = 200
init = { random = "uniform", min = -1.0, max = 1.0, seed = 3 }
[[buffer]]
index = 1
name = "out"
type = "float"
count = 64
output = true
[[threadgroup_memory]]
index = 0
bytes = 128
"#;
    let seen = check_same("fault_in_loop.metal", src, spec, false);
    // a[i * 4 + k] leaves the 200 elements at i = 50, k = 0.
    assert_eq!(seen.fault.map(|f| f.thread), Some([50, 0, 0]));
}

/// Loops the passes transform or must leave alone: constant trips with shuffles and a
/// barrier, trip counts that differ per thread (rotation), a break, an early return, and
/// signed division by powers of two of negative values.
#[test]
fn loops_and_arithmetic_keep_their_results() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void loops(device const int* a [[buffer(0)]], device int* out [[buffer(1)]],
                  threadgroup int* shared [[threadgroup(0)]],
                  uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
                  uint lane [[thread_index_in_simdgroup]])
{
    int x = a[i];
    // Constant trip count with a shuffle and a barrier inside.
    for (uint s = 1; s < 8; s <<= 1) {
        x += simd_shuffle_xor(x, s);
        shared[l] = x;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        x -= shared[(l + s) % 64] / 4;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    // A trip count per thread: lanes leave the loop at different iterations.
    int acc = 0;
    for (uint k = 0; k < (i % 7); ++k) {
        acc += a[(i + k * 3) % 64] * int(k + 1);
        if (acc > 1000) {
            break;
        }
    }
    // A loop with an early return on some lanes.
    for (uint k = 0; k < 3; ++k) {
        if (a[(i + k) % 64] == 17) {
            out[i] = -1;
            return;
        }
        acc ^= int(k) << 2;
    }
    // Signed division and remainder by powers of two of negative values.
    int q = (x - 500) / 8 + (acc - 77) % 16 + x / 4;
    out[i] = q + acc * 3 + x;
}
"#;
    for seed in [5, 6, 7] {
        let spec = format!(
            r#"
kernel = "loops"
threads = [128, 1, 1]
threadgroup = [64, 1, 1]
[[buffer]]
index = 0
name = "a"
type = "int"
count = 128
init = {{ random = "uniform", min = -40, max = 40, seed = {seed} }}
[[buffer]]
index = 1
name = "out"
type = "int"
count = 128
output = true
[[threadgroup_memory]]
index = 0
bytes = 256
"#
        );
        let seen = check_same("loops.metal", src, &spec, true);
        assert!(seen.fault.is_none(), "{:?}", seen.fault);
    }
}
