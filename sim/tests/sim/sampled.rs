//! Sampled timing (`RunOptions::sampling`): outputs, counters and findings are those of a
//! full run, and the estimated cycles lie within the reported bound of the full run's,
//! for uniform grids and grids with two kinds of threadgroups.

use metalsim_isa::{Module, Type};
use metalsim_launch::{Grid, Launch};
use metalsim_sim::{RunOptions, RunOutcome, SamplingPlan};

use crate::common::*;

/// Threadgroups of 32 threads loop `light` times, or `heavy` times where `heavy_at` says
/// (a function of the threadgroup index `tg`), then store their result.
fn kernel(heavy_at: &str) -> Module {
    let src = format!(
        r#"#include <metal_stdlib>
using namespace metal;

kernel void k(device float* out [[buffer(0)]],
              constant uint& light [[buffer(1)]],
              constant uint& heavy [[buffer(2)]],
              uint gid [[thread_position_in_grid]],
              uint tg [[threadgroup_position_in_grid]],
              uint groups [[threadgroups_per_grid]]) {{
    uint n = ({heavy_at}) ? heavy : light;
    float acc = float(gid);
    for (uint i = 0; i < n; ++i) {{
        acc = fma(acc, 0.999f, float(i & 7));
    }}
    out[gid] = acc;
}}
"#
    );
    let (m, d, s) = metalsim_frontend::compile_str("sampled.metal", &src);
    m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)))
}

fn grid(groups: u32, light: u32, heavy: u32) -> Launch {
    let word = |v: u32| buffer(0, "n", Type::U32, v.to_le_bytes().to_vec());
    let mut l = launch(
        Grid::Threadgroups([groups, 1, 1]),
        [32, 1, 1],
        vec![
            buffer(0, "out", Type::F32, vec![0; groups as usize * 32 * 4]),
            word(light),
            word(heavy),
        ],
    );
    l.buffers[1].index = 1;
    l.buffers[2].index = 2;
    l
}

/// A plan small enough for test grids: two windows of three waves, up to 10%.
fn plan() -> SamplingPlan {
    SamplingPlan {
        timed_percent: 10,
        waves_per_window: 3,
        warmup_waves: 1,
        min_windows: 2,
        extra_windows: 2,
    }
}

fn run(m: &Module, l: &Launch, sampling: Option<SamplingPlan>) -> RunOutcome {
    let opts = RunOptions {
        sampling,
        ..RunOptions::default()
    };
    metalsim_sim::run(m, "k", l, &m1(), &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `l` fully and sampled: the same buffers, counters (but the timing model's) and
/// findings, and the full run's cycles within the sampled run's bound. The sampled
/// outcome.
fn check(m: &Module, l: &Launch) -> RunOutcome {
    let full = run(m, l, None);
    let sampled = run(m, l, Some(plan()));
    assert_eq!(sampled.fault, None);
    assert_eq!(
        sampled.buffers, full.buffers,
        "sampling changed the outputs"
    );
    assert_eq!(sampled.findings, full.findings);
    let counters = |o: &RunOutcome| {
        let mut s = o.stats.clone();
        (s.cycles, s.dram_bytes) = (0, 0);
        s
    };
    assert_eq!(counters(&sampled), counters(&full));
    let p = sampled
        .sampling
        .clone()
        .expect("a sampled run says how it sampled");
    let (est, exact) = (sampled.stats.cycles as f64, full.stats.cycles as f64);
    assert!(
        (est - exact).abs() <= p.bound_cycles as f64,
        "estimate {est} vs full {exact}: off by {:.2}%, bound {:.2}% ({p:?})",
        (est / exact - 1.0) * 100.0,
        p.bound_cycles as f64 * 100.0 / est
    );
    sampled
}

#[test]
fn a_uniform_grid_is_estimated_within_its_bound() {
    let s = check(&kernel("false"), &grid(6144, 24, 24));
    let p = s.sampling.unwrap();
    assert!(!p.timed_fully);
    assert!(p.windows >= 2 && p.threadgroups_timed <= 6144 / 4, "{p:?}");
    assert_eq!(p.unmeasured_classes, 0);
}

#[test]
fn half_the_threadgroups_doing_ten_times_the_work_are_estimated_within_the_bound() {
    let s = check(&kernel("tg >= groups / 2"), &grid(6144, 8, 80));
    let p = s.sampling.unwrap();
    assert_eq!((p.classes, p.unmeasured_classes), (2, 0), "{p:?}");
}

#[test]
fn interleaved_heavy_threadgroups_are_estimated_within_the_bound() {
    check(&kernel("tg % 2 == 1"), &grid(6144, 8, 80));
}

#[test]
fn a_class_between_the_windows_gets_a_window_of_its_own() {
    // Threadgroups 2000..3000 are heavy: the evenly spaced windows (at 0 and the end)
    // miss them, the untimed stretch that meets them times them at once.
    let s = check(&kernel("tg >= 2000 && tg < 3000"), &grid(6144, 8, 80));
    let p = s.sampling.unwrap();
    assert_eq!(p.windows, 3, "{p:?}");
    assert_eq!(p.unmeasured_classes, 0, "{p:?}");
}

#[test]
fn a_small_grid_is_timed_fully_with_the_full_runs_time() {
    let m = kernel("tg % 2 == 1");
    let l = grid(64, 8, 80);
    let s = run(&m, &l, Some(plan()));
    let p = s.sampling.unwrap();
    assert!(p.timed_fully && p.bound_cycles == 0, "{p:?}");
    assert_eq!(s.stats, run(&m, &l, None).stats);
}
