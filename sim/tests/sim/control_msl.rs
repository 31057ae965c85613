//! Control flow in MSL: `switch` with fallthrough, `do`/`while`, nested loops with
//! divergent `break` and `continue`, per-lane trip counts and early `return`. Each kernel
//! stores, at chosen points, how many lanes of its SIMD-group are active there
//! (`popcount(simd_active_threads_mask())`): lanes reconverge at the immediate
//! post-dominator of every divergent branch, so after each construct all 32 are back.

use metalsim_isa::Type;
use metalsim_launch::Grid;

use crate::common::*;

const KERNEL: &str = r#"#include <metal_stdlib>
using namespace metal;

uint active_lanes() {
    return popcount(uint(simd_active_threads_mask()));
}

kernel void k(device uint* out [[buffer(0)]],
              device uint* active [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
    uint lane = gid % 32;
    uint v = 0;
    switch (lane % 4) {
    case 0:
        v += 1;
    case 1:
        v += 10;
        break;
    case 2:
        v += 100;
    default:
        v += 1000;
        active[gid * 6 + 0] = active_lanes();
    }
    active[gid * 6 + 1] = active_lanes();
    uint n = 0;
    do {
        n += 1;
    } while (n < lane % 5);
    active[gid * 6 + 2] = active_lanes();
    uint acc = 0;
    for (uint i = 0; i < 8; ++i) {
        if (i == lane % 8) {
            break;
        }
        for (uint j = 0; j < 4; ++j) {
            if ((i + j + lane) % 3 == 0) {
                continue;
            }
            acc += i * j + 1;
        }
        active[gid * 6 + 3] = active_lanes();
    }
    active[gid * 6 + 4] = active_lanes();
    out[gid] = v * 1000000 + n * 10000 + acc;
    if (lane % 3 == 0) {
        return;
    }
    active[gid * 6 + 5] = active_lanes();
}
"#;

/// What each thread computes, on the CPU.
fn reference(lane: u32) -> u32 {
    let mut v = 0;
    match lane % 4 {
        0 => v += 11,
        1 => v += 10,
        2 => v += 1100,
        _ => v += 1000,
    }
    let mut n = 0;
    loop {
        n += 1;
        if n >= lane % 5 {
            break;
        }
    }
    let mut acc = 0;
    for i in 0..8 {
        if i == lane % 8 {
            break;
        }
        for j in 0..4 {
            if (i + j + lane).is_multiple_of(3) {
                continue;
            }
            acc += i * j + 1;
        }
    }
    v * 1_000_000 + n * 10_000 + acc
}

#[test]
fn lanes_reconverge_after_switch_loops_and_early_returns() {
    let (m, d, s) = metalsim_frontend::compile_str("control.metal", KERNEL);
    let m = m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)));
    let threads = 64;
    let untouched = u32::MAX;
    let l = launch(
        Grid::Threads([threads, 1, 1]),
        [threads, 1, 1],
        vec![
            buffer(0, "out", Type::U32, zeros(4 * threads as usize)),
            buffer(
                1,
                "active",
                Type::U32,
                u32s(&vec![untouched; 6 * threads as usize]),
            ),
        ],
    );
    let out = run_both(&m, &l);
    let got = as_u32s(&out.buffers[0]);
    let active = as_u32s(&out.buffers[1]);
    for gid in 0..threads {
        let lane = gid % 32;
        assert_eq!(got[gid as usize], reference(lane), "thread {gid}");
        let a = &active[gid as usize * 6..gid as usize * 6 + 6];
        // Inside `default`: the lanes that fall through from `case 2` and those that jump
        // there meet first, since `default` is the immediate post-dominator of the test
        // that tells them apart: 16 lanes.
        let in_default = if lane % 4 >= 2 { 16 } else { untouched };
        assert_eq!(a[0], in_default, "thread {gid}: in default");
        assert_eq!(a[1], 32, "thread {gid}: after the switch");
        assert_eq!(a[2], 32, "thread {gid}: after the do/while");
        // Inside the outer loop body, at iteration i the lanes with lane % 8 > i are
        // left; the last iteration a lane runs is i = lane % 8 - 1.
        let last = (lane % 8).checked_sub(1);
        let want = last.map_or(untouched, |i| (0..32).filter(|l| l % 8 > i).count() as u32);
        assert_eq!(a[3], want, "thread {gid}: in the loop");
        assert_eq!(a[4], 32, "thread {gid}: after the loops");
        let stayed = (0..32).filter(|l| l % 3 != 0).count() as u32;
        let want = if lane % 3 == 0 { untouched } else { stayed };
        assert_eq!(a[5], want, "thread {gid}: after the early return");
    }
}
