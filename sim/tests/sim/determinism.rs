//! Determinism: the same dispatch gives bit-identical buffers, counters, timing summary,
//! profile and findings on every run and for 1, 2 or 4 worker threads, with and without
//! the timing model, also for kernels whose result depends on the order threads run in
//! (atomics whose returned tickets and float rounding depend on it, plain stores and
//! loads racing between threadgroups, a threadgroup spinning on another's atomic), and
//! watching a run's progress changes nothing.

use metalsim_isa::Type;
use metalsim_launch::{Grid, Launch};
use metalsim_sim::{Progress, RunOptions, RunOutcome, SamplingPlan};

use crate::common::*;

/// Order-dependent on purpose: tickets from an atomic counter, a float atomic sum (its
/// rounding depends on the order of the adds), and stores and loads of the same words by
/// every threadgroup (a race between threadgroups the sanitizer reports).
const RACY: &str = r#"#include <metal_stdlib>
using namespace metal;

kernel void k(device atomic_uint*  counter [[buffer(0)]],
              device uint*         order   [[buffer(1)]],
              device uint*         racy    [[buffer(2)]],
              device atomic_float* fsum    [[buffer(3)]],
              uint gid [[thread_position_in_grid]],
              uint tg  [[threadgroup_position_in_grid]]) {
    uint ticket = atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed);
    racy[gid % 16] = tg * 1000u + ticket;
    atomic_fetch_add_explicit(fsum, 1.0f / float(gid + 1u), memory_order_relaxed);
    for (uint i = 0; i < (gid % 7u); ++i) {
        ticket += racy[(gid + i) % 16u];
    }
    order[gid] = ticket;
}
"#;

const THREADS: u32 = 64 * 48;

fn racy_launch() -> Launch {
    launch(
        Grid::Threads([THREADS, 1, 1]),
        [64, 1, 1],
        vec![
            buffer(0, "counter", Type::U32, u32s(&[0])),
            buffer(1, "order", Type::U32, u32s(&vec![0; THREADS as usize])),
            buffer(2, "racy", Type::U32, u32s(&[0; 16])),
            buffer(3, "fsum", Type::F32, f32s(&[0.0])),
        ],
    )
}

fn racy_module() -> metalsim_isa::Module {
    let (m, d, s) = metalsim_frontend::compile_str("racy.metal", RACY);
    m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)))
}

fn run_with(timing: bool, progress: Option<&Progress>) -> RunOutcome {
    let opts = RunOptions {
        timing,
        ..RunOptions::default()
    };
    metalsim_sim::run_with_progress(&racy_module(), "k", &racy_launch(), &m1(), &opts, progress)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs three times each way: every outcome equals the first of its way.
fn check(timing: bool) {
    let first = run_with(timing, None);
    assert_eq!(first.fault, None);
    assert!(
        !first.findings.is_empty(),
        "the kernel races between threadgroups; the sanitizer should say so"
    );
    assert_eq!(
        as_u32s(&first.buffers[0]),
        [THREADS],
        "every ticket taken once"
    );
    if timing {
        assert!(first.stats.cycles > 0 && first.timing.is_some());
    }
    for _ in 0..2 {
        assert_eq!(run_with(timing, None), first, "a second run differed");
    }
    let progress = Progress::new();
    assert_eq!(
        run_with(timing, Some(&progress)),
        first,
        "watching the progress changed the outcome"
    );
    assert_eq!(progress.total(), (THREADS / 64) as u64);
    assert_eq!(progress.done(), progress.total());
}

#[test]
fn racy_kernel_is_deterministic_with_timing() {
    check(true);
}

#[test]
fn racy_kernel_is_deterministic_without_timing() {
    check(false);
}

/// Runs `kernel` of `m` with 1, 2 and 4 workers (and the first twice): every outcome
/// equals the one-worker outcome, which it returns.
fn same_for_every_worker_count(
    m: &metalsim_isa::Module,
    kernel: &str,
    l: &Launch,
    timing: bool,
) -> RunOutcome {
    let run = |workers: usize| {
        let opts = RunOptions {
            timing,
            profile: timing,
            workers,
            ..RunOptions::default()
        };
        metalsim_sim::run(m, kernel, l, &m1(), &opts).unwrap_or_else(|e| panic!("{e}"))
    };
    let first = run(1);
    for workers in [1, 2, 4] {
        let other = run(workers);
        assert!(
            other.buffers == first.buffers,
            "{workers} workers: buffers differ"
        );
        assert_eq!(other.stats, first.stats, "{workers} workers: stats");
        assert_eq!(
            other.findings, first.findings,
            "{workers} workers: findings"
        );
        assert_eq!(other.timing, first.timing, "{workers} workers: timing");
        assert_eq!(other.profile, first.profile, "{workers} workers: profile");
        assert_eq!(other, first, "{workers} workers: outcome");
    }
    first
}

#[test]
fn racy_kernel_is_the_same_for_every_worker_count() {
    for timing in [false, true] {
        let out = same_for_every_worker_count(&racy_module(), "k", &racy_launch(), timing);
        assert_eq!(out.fault, None);
        assert_eq!(
            as_u32s(&out.buffers[0]),
            [THREADS],
            "every ticket taken once"
        );
        assert!(
            out.findings
                .iter()
                .any(|f| f.kind() == metalsim_sim::FaultKind::DeviceRace),
            "the race between threadgroups is found: {:?}",
            out.findings
        );
    }
}

/// Threadgroup 0 waits for the last threadgroup's atomic flag; the others fill `out`.
const SPIN: &str = r#"#include <metal_stdlib>
using namespace metal;

kernel void k(device atomic_uint* flag [[buffer(0)]],
              device uint*        out  [[buffer(1)]],
              uint tg  [[threadgroup_position_in_grid]],
              uint tid [[thread_index_in_threadgroup]],
              uint gid [[thread_position_in_grid]]) {
    if (tg == 0u && tid == 0u) {
        uint spins = 0u;
        while (atomic_load_explicit(flag, memory_order_relaxed) == 0u) {
            spins += 1u;
        }
        out[0] = spins;
    } else if (tg == 7u && tid == 0u) {
        atomic_store_explicit(flag, 1u, memory_order_relaxed);
    } else {
        out[gid] = gid;
    }
}
"#;

#[test]
fn a_threadgroup_spinning_on_another_threadgroups_atomic_makes_progress() {
    let (m, d, s) = metalsim_frontend::compile_str("spin.metal", SPIN);
    let m = m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)));
    let l = launch(
        Grid::Threadgroups([8, 1, 1]),
        [32, 1, 1],
        vec![
            buffer(0, "flag", Type::U32, u32s(&[0])),
            buffer(1, "out", Type::U32, u32s(&[0; 256])),
        ],
    );
    for timing in [false, true] {
        let out = same_for_every_worker_count(&m, "k", &l, timing);
        assert_eq!(out.fault, None, "timing {timing}");
        assert_eq!(as_u32s(&out.buffers[0]), [1]);
        let o = as_u32s(&out.buffers[1]);
        assert!(o[0] >= 1, "threadgroup 0 waited for the flag: {}", o[0]);
        assert!((1..256).filter(|&g| g != 224).all(|g| o[g] == g as u32));
    }
}

/// The tiled matrix multiply example at N = 64 (4 x 4 threadgroups of 16 x 16).
#[test]
fn tiled_matmul_example_is_the_same_for_every_worker_count() {
    let src = include_str!("../../../examples/matmul_tiled.metal");
    let (m, d, s) = metalsim_frontend::compile_str("matmul_tiled.metal", src);
    let m = m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)));
    let n = 64u32;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 - 2.0).collect();
    let l = with_tg_memory(
        launch(
            Grid::Threadgroups([n / 16, n / 16, 1]),
            [16, 16, 1],
            vec![
                buffer(0, "A", Type::F32, f32s(&a)),
                buffer(1, "B", Type::F32, f32s(&b)),
                buffer(2, "C", Type::F32, zeros(4 * (n * n) as usize)),
                buffer(3, "N", Type::U32, u32s(&[n])),
            ],
        ),
        &[(0, 1024), (1, 1024)],
    );
    let mut outs = Vec::new();
    for timing in [false, true] {
        let out = same_for_every_worker_count(&m, "matmul_tiled", &l, timing);
        assert_eq!(out.fault, None);
        let c = as_f32s(&out.buffers[2]);
        let (i, j) = (5usize, 9usize);
        let want: f32 = (0..n as usize)
            .map(|k| a[i * n as usize + k] * b[k * n as usize + j])
            .sum();
        assert_eq!(c[i * n as usize + j], want);
        outs.push(out.buffers);
    }
    assert_eq!(
        outs[0], outs[1],
        "a race-free kernel: same buffers with and without timing"
    );
}

/// Each threadgroup writes its slot, then reads its predecessor's: what it sees depends
/// on which threadgroups' writes have landed, never on the worker count.
const NEIGHBOUR: &str = r#"#include <metal_stdlib>
using namespace metal;

kernel void k(device uint* slots [[buffer(0)]],
              device uint* seen  [[buffer(1)]],
              uint tg  [[threadgroup_position_in_grid]],
              uint tid [[thread_index_in_threadgroup]],
              uint groups [[threadgroups_per_grid]]) {
    if (tid == 0u) {
        slots[tg] = tg + 1u;
    }
    threadgroup_barrier(mem_flags::mem_device);
    if (tid == 0u) {
        seen[tg] = slots[(tg + groups - 1u) % groups];
    }
}
"#;

#[test]
fn reads_of_other_threadgroups_writes_are_the_same_for_every_worker_count() {
    let (m, d, s) = metalsim_frontend::compile_str("neighbour.metal", NEIGHBOUR);
    let m = m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)));
    let groups = 200u32;
    let l = launch(
        Grid::Threadgroups([groups, 1, 1]),
        [32, 1, 1],
        vec![
            buffer(0, "slots", Type::U32, zeros(4 * groups as usize)),
            buffer(1, "seen", Type::U32, zeros(4 * groups as usize)),
        ],
    );
    for timing in [false, true] {
        let out = same_for_every_worker_count(&m, "k", &l, timing);
        assert_eq!(out.fault, None);
        let slots = as_u32s(&out.buffers[0]);
        assert!(slots.iter().zip(1..).all(|(&s, t)| s == t));
        // Each saw its predecessor's write or the initial zero.
        let seen = as_u32s(&out.buffers[1]);
        assert!(
            seen.iter()
                .zip(0..groups)
                .all(|(&v, t)| v == 0 || v == (t + groups - 1) % groups + 1),
            "{seen:?}"
        );
    }
}

/// Threadgroups from 5 on store out of bounds; threadgroup 2 loops until the budget ends
/// when asked to.
const FAULTY: &str = r#"#include <metal_stdlib>
using namespace metal;

kernel void k(device uint* out  [[buffer(0)]],
              device uint* spin [[buffer(1)]],
              uint tg  [[threadgroup_position_in_grid]],
              uint gid [[thread_position_in_grid]]) {
    uint x = gid;
    if (tg == 2u) {
        for (uint i = 0u; i < spin[0]; ++i) {
            x = x * 3u + 1u;
        }
    }
    out[tg >= 5u ? gid * 1000u : gid] = x;
}
"#;

#[test]
fn the_first_fault_and_what_ran_before_it_are_the_same_for_every_worker_count() {
    let (m, d, s) = metalsim_frontend::compile_str("faulty.metal", FAULTY);
    let m = m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)));
    for spin in [0u32, u32::MAX] {
        let l = launch(
            Grid::Threadgroups([100, 1, 1]),
            [32, 1, 1],
            vec![
                buffer(0, "out", Type::U32, zeros(4 * 3200)),
                buffer(1, "spin", Type::U32, u32s(&[spin])),
            ],
        );
        for timing in [false, true] {
            let run = |workers: usize| {
                let opts = RunOptions {
                    timing,
                    workers,
                    max_instructions: Some(20_000),
                    ..RunOptions::default()
                };
                metalsim_sim::run(&m, "k", &l, &m1(), &opts).unwrap_or_else(|e| panic!("{e}"))
            };
            let first = run(1);
            let f = first.fault.as_ref().expect("a fault");
            if spin == 0 {
                assert_eq!(f.kind, metalsim_sim::FaultKind::OutOfBounds);
                if !timing {
                    // The first faulting threadgroup in dispatch order (with timing,
                    // the first in simulated time).
                    assert_eq!(f.threadgroup, [5, 0, 0]);
                }
            } else if !timing {
                assert_eq!(f.kind, metalsim_sim::FaultKind::InstructionBudget);
                assert_eq!(f.threadgroup, [2, 0, 0]);
            }
            for workers in [2, 4] {
                assert!(
                    run(workers) == first,
                    "{workers} workers, spin {spin}, timing {timing}"
                );
            }
        }
    }
}

/// Each thread writes 4096 words: a threadgroup's stretch logs more global writes than a
/// stretch may hold, so its SIMD-groups yield and go on in later rounds.
const WRITER: &str = r#"#include <metal_stdlib>
using namespace metal;

kernel void k(device uint* out [[buffer(0)]],
              uint gid [[thread_position_in_grid]],
              uint threads [[threads_per_grid]]) {
    for (uint i = 0u; i < 4096u; ++i) {
        out[i * threads + gid] = i ^ gid;
    }
}
"#;

#[test]
fn a_threadgroup_that_writes_much_yields_and_finishes() {
    let (m, d, s) = metalsim_frontend::compile_str("writer.metal", WRITER);
    let m = m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)));
    let threads = 64u32;
    let l = launch(
        Grid::Threads([threads, 1, 1]),
        [32, 1, 1],
        vec![buffer(
            0,
            "out",
            Type::U32,
            zeros(4 * 4096 * threads as usize),
        )],
    );
    let untimed = same_for_every_worker_count(&m, "k", &l, false);
    assert_eq!(untimed.fault, None);
    let out = as_u32s(&untimed.buffers[0]);
    assert!((0..4096u32).all(|i| (0..threads).all(|g| out[(i * threads + g) as usize] == i ^ g)));
    assert!(run_with_timing_is_the_same(&m, &l, &untimed));
}

/// Whether a timed run gives the same buffers (a race-free kernel).
fn run_with_timing_is_the_same(m: &metalsim_isa::Module, l: &Launch, untimed: &RunOutcome) -> bool {
    let timed = metalsim_sim::run(m, "k", l, &m1(), &RunOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    timed.buffers == untimed.buffers
}

/// Threadgroups 1500 to 2499 loop ten times longer (a class of their own between the
/// evenly spaced windows); every thread takes a ticket from an atomic counter, adds to a
/// float atomic sum and stores over other threadgroups' words (a race).
const SAMPLED: &str = r#"#include <metal_stdlib>
using namespace metal;

kernel void k(device atomic_uint*  counter [[buffer(0)]],
              device float*        out     [[buffer(1)]],
              device uint*         racy    [[buffer(2)]],
              device atomic_float* fsum    [[buffer(3)]],
              uint gid [[thread_position_in_grid]],
              uint tg  [[threadgroup_position_in_grid]]) {
    uint n = (tg >= 1500u && tg < 2500u) ? 80u : 8u;
    float acc = float(gid);
    for (uint i = 0; i < n; ++i) {
        acc = fma(acc, 0.999f, float(i & 7u));
    }
    uint ticket = atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed);
    racy[gid % 64u] = ticket;
    atomic_fetch_add_explicit(fsum, acc * 1e-6f, memory_order_relaxed);
    out[gid] = acc + float(racy[(gid + 1u) % 64u] & 1u);
}
"#;

#[test]
fn sampled_timing_is_the_same_for_every_worker_count() {
    let (m, d, s) = metalsim_frontend::compile_str("sampled.metal", SAMPLED);
    let m = m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)));
    let groups = 4096u32;
    let l = launch(
        Grid::Threadgroups([groups, 1, 1]),
        [32, 1, 1],
        vec![
            buffer(0, "counter", Type::U32, u32s(&[0])),
            buffer(1, "out", Type::F32, zeros(4 * 32 * groups as usize)),
            buffer(2, "racy", Type::U32, u32s(&[0; 64])),
            buffer(3, "fsum", Type::F32, f32s(&[0.0])),
        ],
    );
    let run = |workers: usize| {
        let opts = RunOptions {
            workers,
            profile: true,
            sampling: Some(SamplingPlan {
                timed_percent: 10,
                waves_per_window: 3,
                warmup_waves: 1,
                min_windows: 2,
                extra_windows: 2,
            }),
            ..RunOptions::default()
        };
        metalsim_sim::run(&m, "k", &l, &m1(), &opts).unwrap_or_else(|e| panic!("{e}"))
    };
    let first = run(1);
    assert_eq!(first.fault, None);
    assert_eq!(
        as_u32s(&first.buffers[0]),
        [32 * groups],
        "every ticket once"
    );
    let p = first.sampling.clone().expect("a sampled run says how");
    assert!(!p.timed_fully && p.windows >= 3, "{p:?}");
    assert!(
        first
            .findings
            .iter()
            .any(|f| f.kind() == metalsim_sim::FaultKind::DeviceRace),
        "{:?}",
        first.findings
    );
    for workers in [1, 2, 4] {
        let other = run(workers);
        assert_eq!(
            other.sampling, first.sampling,
            "{workers} workers: sampling"
        );
        assert_eq!(other.stats, first.stats, "{workers} workers: stats");
        assert!(
            other.buffers == first.buffers,
            "{workers} workers: buffers differ"
        );
        assert_eq!(other, first, "{workers} workers: outcome");
    }
}
