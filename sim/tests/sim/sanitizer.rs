//! The sanitizer on MSL kernels: for every kind of finding, a kernel that makes the mistake
//! must report it at the line marked `// BUG`, and the same kernel fixed must report
//! nothing. The examples must report nothing; the reduction and tiled examples with a
//! barrier removed must report the race.

use std::path::Path;

use metalsim_isa::{Module, Type};
use metalsim_launch::{Grid, Launch, LaunchSpec};
use metalsim_sim::{FaultKind, RunOptions, RunOutcome, Severity};

use crate::common::*;

/// Compiles MSL source, panicking with the diagnostics.
fn compile(src: &str) -> Module {
    let (m, d, s) = metalsim_frontend::compile_str("k.metal", src);
    m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)))
}

/// The 1-based line of the first line containing `marker`.
fn line_of(src: &str, marker: &str) -> u32 {
    src.lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no {marker} in the kernel")) as u32
        + 1
}

/// Runs functionally and with timing (and a budget); the two outcomes.
fn run_both_ways(m: &Module, l: &Launch, budget: Option<u64>) -> [RunOutcome; 2] {
    [false, true].map(|timing| {
        let opts = RunOptions {
            timing,
            max_instructions: budget,
            ..RunOptions::default()
        };
        metalsim_sim::run(m, &l.kernel, l, &m1(), &opts).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// A launch of `threads` threads in threadgroups of `tg`, kernel `k`, with float
/// buffers of the given element counts.
fn float_launch(threads: u32, tg: u32, buffers: &[usize]) -> Launch {
    let buffers = buffers
        .iter()
        .enumerate()
        .map(|(i, &n)| buffer(i as u32, &format!("b{i}"), Type::F32, zeros(4 * n)))
        .collect();
    launch(Grid::Threads([threads, 1, 1]), [tg, 1, 1], buffers)
}

/// Checks that the buggy kernel reports `kind` (and nothing else) at the `// BUG` line in
/// both modes, and that the fixed one (`bug` replaced by `fix`) reports nothing.
fn check(kind: FaultKind, src: &str, bug: &str, fix: &str, l: &Launch, budget: Option<u64>) {
    let line = line_of(src, "// BUG");
    for out in run_both_ways(&compile(src), l, budget) {
        let kinds = finding_kinds(&out);
        assert!(
            kinds.contains(&kind),
            "expected {kind}, found {:#?}",
            out.findings
        );
        for f in &out.findings {
            let first = &f.first;
            assert_eq!(f.kind(), kind, "{f}");
            assert_eq!(first.loc.line, line, "{f}");
            assert_eq!(first.location.split(':').next(), Some("k.metal"));
            assert!(f.count >= 1);
        }
        let severity = out.findings[0].severity();
        let warning = matches!(kind, FaultKind::DeviceRace | FaultKind::InactiveLaneRead);
        assert_eq!(severity == Severity::Warning, warning, "{kind}");
    }
    let fixed = src.replace(bug, fix);
    assert_ne!(fixed, src, "the fix changed nothing");
    for out in run_both_ways(&compile(&fixed), l, budget) {
        assert_eq!(out.findings, [], "the fixed kernel still reports");
        assert_eq!(out.fault, None);
    }
}

const HEAD: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

#[test]
fn out_of_bounds_write() {
    let src = format!(
        "{HEAD}kernel void k(device float* out [[buffer(0)]],
              uint gid [[thread_position_in_grid]]) {{
    out[gid + 1] = 1.0f; // BUG
}}
"
    );
    check(
        FaultKind::OutOfBounds,
        &src,
        "out[gid + 1]",
        "out[gid]",
        &float_launch(64, 32, &[64]),
        None,
    );
}

#[test]
fn misaligned_store() {
    let src = format!(
        "{HEAD}kernel void k(device uint* out [[buffer(0)]],
              uint gid [[thread_position_in_grid]]) {{
    device char* bytes = (device char*)out;
    device uint* p = (device uint*)(bytes + 4 * gid + 2);
    *p = gid; // BUG
}}
"
    );
    check(
        FaultKind::Misaligned,
        &src,
        "4 * gid + 2",
        "4 * gid",
        &float_launch(32, 32, &[64]),
        None,
    );
}

#[test]
fn threadgroup_race_without_a_barrier() {
    // Without the barrier, a SIMD-group reads tile entries another one writes. Which of
    // the two accesses comes second depends on the schedule: the race is reported there,
    // naming the other.
    let src = format!(
        "{HEAD}kernel void k(device float* out [[buffer(0)]],
              uint tid [[thread_index_in_threadgroup]]) {{
    threadgroup float t[64];
    t[tid] = float(tid); // WRITE
    threadgroup_barrier(mem_flags::mem_threadgroup); // FIX
    out[tid] = t[63 - tid]; // BUG
}}
"
    );
    let racy = src.replace(
        "    threadgroup_barrier(mem_flags::mem_threadgroup); // FIX\n",
        "",
    );
    let (write, read) = (line_of(&racy, "// WRITE"), line_of(&racy, "// BUG"));
    let l = float_launch(64, 64, &[64]);
    for out in run_both_ways(&compile(&racy), &l, None) {
        let race = out
            .findings
            .iter()
            .find(|f| f.kind() == FaultKind::ThreadgroupRace)
            .unwrap_or_else(|| panic!("no race in {:#?}", out.findings));
        let (here, other) = if race.first.loc.line == write {
            (write, read)
        } else {
            (read, write)
        };
        assert_eq!(race.first.loc.line, here);
        assert!(
            race.first.message.contains(&format!("k.metal:{other}:")),
            "{}",
            race.first.message
        );
        assert_eq!(race.first.buffer.as_deref(), Some("t"));
    }
    for out in run_both_ways(&compile(&src), &l, None) {
        assert_eq!(out.findings, []);
    }
}

#[test]
fn uninitialized_threadgroup_read() {
    let src = format!(
        "{HEAD}kernel void k(device float* out [[buffer(0)]],
              uint tid [[thread_index_in_threadgroup]]) {{
    threadgroup float t[64];
    t[tid] = 2.0f * float(tid); // INIT
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = t[tid]; // BUG
}}
"
    );
    let bug = src.replace("    t[tid] = 2.0f * float(tid); // INIT\n", "    // INIT\n");
    let l = float_launch(64, 64, &[64]);
    let line = line_of(&bug, "// BUG");
    for out in run_both_ways(&compile(&bug), &l, None) {
        assert_eq!(
            finding_kinds(&out),
            [FaultKind::UninitializedThreadgroupRead]
        );
        assert_eq!(out.findings[0].first.loc.line, line);
        assert_eq!(out.findings[0].count, 2, "once per SIMD-group");
    }
    for out in run_both_ways(&compile(&src), &l, None) {
        assert_eq!(out.findings, []);
    }
}

#[test]
fn uninitialized_word_of_a_threadgroup_vector_is_named() {
    // Each thread writes only the .x of its float4, then reads the whole vector: one
    // vector load per lane, whose first uninitialised word is the .y at byte 4.
    let src = format!(
        "{HEAD}kernel void k(device float4* out [[buffer(0)]],
              uint tid [[thread_index_in_threadgroup]]) {{
    threadgroup float4 t[32];
    t[tid].x = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = t[tid]; // BUG
}}
"
    );
    let l = float_launch(32, 32, &[128]);
    let line = line_of(&src, "// BUG");
    for out in run_both_ways(&compile(&src), &l, None) {
        assert_eq!(
            finding_kinds(&out),
            [FaultKind::UninitializedThreadgroupRead]
        );
        let first = &out.findings[0].first;
        assert_eq!(first.loc.line, line);
        assert_eq!(first.buffer.as_deref(), Some("t"));
        assert_eq!(first.offset, Some(4), "the .y of thread 0's vector");
    }
}

#[test]
fn divergent_barrier() {
    let src = format!(
        "{HEAD}kernel void k(device float* out [[buffer(0)]],
              uint tid [[thread_index_in_threadgroup]]) {{
    threadgroup float t[64];
    t[tid] = float(tid);
    if (tid % 2 == 0) {{
        threadgroup_barrier(mem_flags::mem_threadgroup); // BUG
    }}
    out[tid] = t[tid];
}}
"
    );
    check(
        FaultKind::DivergentBarrier,
        &src,
        "tid % 2 == 0",
        "tid < 1000",
        &float_launch(64, 64, &[64]),
        None,
    );
}

#[test]
fn device_race_between_threadgroups() {
    let src = format!(
        "{HEAD}kernel void k(device float* out [[buffer(0)]],
              uint gid [[thread_position_in_grid]],
              uint group [[threadgroup_position_in_grid]]) {{
    out[gid % 32] = float(group); // BUG
}}
"
    );
    check(
        FaultKind::DeviceRace,
        &src,
        "out[gid % 32]",
        "out[gid]",
        &float_launch(128, 32, &[128]),
        None,
    );
}

#[test]
fn inactive_lane_read() {
    let src = format!(
        "{HEAD}kernel void k(device float* out [[buffer(0)]],
              uint gid [[thread_position_in_grid]],
              uint lane [[thread_index_in_simdgroup]]) {{
    float v = float(lane);
    if (lane < 16) {{
        v = simd_shuffle_down(v, 8u); // BUG
    }}
    out[gid] = v;
}}
"
    );
    // Fixed: the shuffle runs in every lane, the branch only picks the result.
    let fixed_shuffle =
        "float w = simd_shuffle_down(v, 8u);\n    if (lane < 16) {\n        v = w; // BUG";
    check(
        FaultKind::InactiveLaneRead,
        &src,
        "if (lane < 16) {\n        v = simd_shuffle_down(v, 8u); // BUG",
        fixed_shuffle,
        &float_launch(32, 32, &[32]),
        None,
    );
}

#[test]
fn instruction_budget_stops_an_endless_loop() {
    let src = format!(
        "{HEAD}kernel void k(device float* out [[buffer(0)]],
              device const uint* step [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {{
    float acc = 0.0f;
    for (uint i = 0; i < 16; i += step[0]) {{ // BUG
        acc += float(i);
    }}
    out[gid] = acc;
}}
"
    );
    let l = |step: u32| {
        launch(
            Grid::Threads([32, 1, 1]),
            [32, 1, 1],
            vec![
                buffer(0, "out", Type::F32, zeros(128)),
                buffer(1, "step", Type::U32, u32s(&[step])),
            ],
        )
    };
    let m = compile(&src);
    let line = line_of(&src, "// BUG");
    for out in run_both_ways(&m, &l(0), Some(10_000)) {
        let f = out.fault.as_ref().expect("the budget stops the run");
        assert_eq!(f.kind, FaultKind::InstructionBudget);
        assert_eq!(finding_kinds(&out), [FaultKind::InstructionBudget]);
        // The loop is the line the budget ran out in (its condition or body).
        assert!((line..=line + 1).contains(&f.loc.line), "{f}");
    }
    for out in run_both_ways(&m, &l(1), Some(10_000)) {
        assert_eq!(out.findings, []);
    }
}

/// An example's kernel and its spec with `edits` applied to the spec text (to shrink it).
fn example(name: &str, edits: &[(&str, &str)]) -> (String, LaunchSpec) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let src = std::fs::read_to_string(dir.join(format!("{name}.metal"))).unwrap();
    let mut spec = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
    for (from, to) in edits {
        assert!(spec.contains(from), "{name}.toml has no `{from}`");
        spec = spec.replace(from, to);
    }
    let spec = LaunchSpec::from_str(&spec, &dir, name).unwrap();
    (src, spec)
}

/// The examples, shrunk to test size.
fn examples() -> Vec<(&'static str, String, LaunchSpec)> {
    let m = [
        ("count = 1048576", "count = 4096"),
        ("values = [1024]", "values = [64]"),
    ];
    [
        (
            "vector_add",
            vec![
                ("threads = [1000000, 1, 1]", "threads = [1000, 1, 1]"),
                ("count = 1000000", "count = 1000"),
                ("values = [1000000]", "values = [1000]"),
            ],
        ),
        (
            "brightness",
            vec![
                ("threads = [3840, 2160, 1]", "threads = [48, 20, 1]"),
                ("count = 8294400", "count = 960"),
                ("values = [3840, 2160]", "values = [48, 20]"),
            ],
        ),
        (
            "matmul_naive",
            vec![
                ("threads = [1024, 1024, 1]", "threads = [64, 64, 1]"),
                m[0],
                m[1],
            ],
        ),
        (
            "matmul_tiled",
            vec![
                ("threadgroups = [64, 64, 1]", "threadgroups = [4, 4, 1]"),
                m[0],
                m[1],
            ],
        ),
        (
            "reduce_sum",
            vec![
                ("threads = [16777216, 1, 1]", "threads = [8192, 1, 1]"),
                ("count = 16777216", "count = 8192"),
                ("values = [16777216]", "values = [8192]"),
            ],
        ),
    ]
    .into_iter()
    .map(|(name, edits)| {
        let (src, spec) = example(name, &edits);
        (name, src, spec)
    })
    .collect()
}

fn run_spec(src: &str, spec: &LaunchSpec) -> [RunOutcome; 2] {
    let m = compile(src);
    let f = m.function(&spec.kernel).unwrap();
    let l = spec.resolve(f, 1 << 30).unwrap();
    run_both_ways(&m, &l, None)
}

#[test]
fn the_examples_report_nothing() {
    for (name, src, spec) in examples() {
        for out in run_spec(&src, &spec) {
            assert_eq!(out.findings, [], "{name}");
        }
    }
}

#[test]
fn the_examples_without_their_barrier_report_the_race() {
    let barrier = "threadgroup_barrier(mem_flags::mem_threadgroup);";
    for (name, src, spec) in examples() {
        let n = src.matches(barrier).count();
        for k in 0..n {
            // Remove the k-th barrier only.
            let mut at = 0;
            for _ in 0..=k {
                at += src[at..].find(barrier).unwrap() + 1;
            }
            let racy = format!("{}{}", &src[..at - 1], &src[at - 1 + barrier.len()..]);
            for out in run_spec(&racy, &spec) {
                let kinds = finding_kinds(&out);
                assert!(
                    kinds.contains(&FaultKind::ThreadgroupRace),
                    "{name} without barrier {k}: {kinds:?}"
                );
            }
        }
        assert!(
            n == 0 || matches!(name, "reduce_sum" | "matmul_tiled"),
            "{name}"
        );
    }
}
