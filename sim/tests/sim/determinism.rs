//! Determinism: the same dispatch gives bit-identical buffers, counters, timing summary
//! and findings on every run, with and without the timing model, also for kernels whose
//! result depends on the order threads run in (atomics whose returned tickets and float
//! rounding depend on it, plain stores and loads racing between threadgroups), and
//! watching a run's progress changes nothing.

use metalsim_isa::Type;
use metalsim_launch::{Grid, Launch};
use metalsim_sim::{Progress, RunOptions, RunOutcome};

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
