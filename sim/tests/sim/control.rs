//! Divergence: if/else, loops with break and continue, early returns, reconvergence at
//! the immediate post-dominator, and block-parameter copies.

use metalsim_isa::Type;
use metalsim_launch::Grid;

use crate::common::*;

/// Runs a one-SIMD-group-per-32-threads kernel writing one u32 per thread to buffer 0.
fn run_u32(text: &str, n: u32) -> (Vec<u32>, metalsim_sim::Stats) {
    let out = run_both(&module(text), &launch_u32(n));
    (as_u32s(&out.buffers[0]), out.stats)
}

/// The launch of [`run_u32`]: `n` threads, one u32 each in buffer 0.
fn launch_u32(n: u32) -> metalsim_launch::Launch {
    launch(
        Grid::Threads([n, 1, 1]),
        [n.min(256), 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * n as usize))],
    )
}

/// [`run_u32`]'s `n` threads on M1 with `reconvergence_instruction` set, untimed and
/// timed: both outcomes.
fn run_with_reconvergence_instructions(text: &str, n: u32) -> [metalsim_sim::RunOutcome; 2] {
    let mut gpu = m1();
    gpu.reconvergence_instruction = Some(true);
    let (m, l) = (module(text), launch_u32(n));
    [false, true].map(|timing| run_on(&m, &l, &gpu, timing))
}

/// bb0: 4 instructions with 32 lanes; then (lanes < 10): 2; else (22 lanes): 3; join: 4
/// with all 32 lanes again.
const IF_ELSE: &str = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = const.u32 10
  v2 = cmp.lt.u32 v0, v1
  v3 = add.u32 v0, v1
  br_if v2, bb1, bb2
bb1:
  v4 = mul.u32 v0, v1
  br bb3(v4)
bb2:
  v5 = sub.u32 v0, v1
  v6 = add.u32 v5, v3
  br bb3(v6)
bb3(v7:u32):
  v8 = buffer_addr.0
  v9 = ptradd.4 v8, v0
  st.device.u32 v9, v7
  ret
}
"#;

/// Lane i loops i times; after the loop one store runs once with all lanes.
const LOOP_EXITS: &str = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = const.u32 0
  v2 = const.u32 1
  br bb1(v1)
bb1(v3:u32):
  v4 = cmp.lt.u32 v3, v0
  br_if v4, bb2, bb3
bb2:
  v5 = add.u32 v3, v2
  br bb1(v5)
bb3:
  v6 = buffer_addr.0
  v7 = ptradd.4 v6, v0
  st.device.u32 v7, v3
  ret
}
"#;

#[test]
fn nested_if_else_gives_per_lane_results() {
    let text = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = const.u32 16
  v2 = cmp.lt.u32 v0, v1
  br_if v2, bb1, bb4
bb1:
  v3 = const.u32 8
  v4 = cmp.lt.u32 v0, v3
  br_if v4, bb2, bb3
bb2:
  v5 = const.u32 1
  br bb7(v5)
bb3:
  v6 = const.u32 2
  br bb7(v6)
bb4:
  v7 = const.u32 1
  v8 = and.u32 v0, v7
  v9 = const.u32 0
  v10 = cmp.eq.u32 v8, v9
  br_if v10, bb5, bb6
bb5:
  v11 = const.u32 3
  br bb7(v11)
bb6:
  v12 = const.u32 4
  v13 = add.u32 v12, v0
  br bb7(v13)
bb7(v14:u32):
  v15 = buffer_addr.0
  v16 = ptradd.4 v15, v0
  st.device.u32 v16, v14
  ret
}
"#;
    let (out, _) = run_u32(text, 64);
    for (i, &r) in out.iter().enumerate() {
        let i = i as u32;
        let want = if i < 16 {
            if i < 8 { 1 } else { 2 }
        } else if i.is_multiple_of(2) {
            3
        } else {
            4 + i
        };
        assert_eq!(r, want, "thread {i}");
    }
}

#[test]
fn loop_with_per_lane_trip_counts_break_and_continue() {
    // sum = 0; for (i = 0; i < tid; ) { i++; if (i % 3 == 0) continue; if (sum > 50) break; sum += i; }
    let text = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = const.u32 0
  v2 = const.u32 1
  v3 = const.u32 3
  v4 = const.u32 50
  br bb1(v1, v1)
bb1(v10:u32, v11:u32):
  v12 = cmp.lt.u32 v10, v0
  br_if v12, bb2, bb5(v11)
bb2:
  v13 = add.u32 v10, v2
  v14 = rem.u32 v13, v3
  v15 = cmp.eq.u32 v14, v1
  br_if v15, bb1(v13, v11), bb3
bb3:
  v16 = cmp.gt.u32 v11, v4
  br_if v16, bb5(v11), bb4
bb4:
  v17 = add.u32 v11, v13
  br bb1(v13, v17)
bb5(v20:u32):
  v21 = buffer_addr.0
  v22 = ptradd.4 v21, v0
  st.device.u32 v22, v20
  ret
}
"#;
    let (out, _) = run_u32(text, 96);
    for (t, &r) in out.iter().enumerate() {
        let (mut sum, mut i) = (0u32, 0u32);
        while i < t as u32 {
            i += 1;
            if i % 3 == 0 {
                continue;
            }
            if sum > 50 {
                break;
            }
            sum += i;
        }
        assert_eq!(r, sum, "thread {t}");
    }
}

#[test]
fn early_return_of_some_lanes_then_work_of_the_others() {
    // if (tid % 4 == 0) return; x = tid; for (k = 0; k < tid % 5; k++) x *= 2; out[tid] = x;
    let text = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = const.u32 3
  v2 = and.u32 v0, v1
  v3 = const.u32 0
  v4 = cmp.eq.u32 v2, v3
  br_if v4, bb1, bb2
bb1:
  ret
bb2:
  v5 = const.u32 5
  v6 = rem.u32 v0, v5
  br bb3(v3, v0)
bb3(v7:u32, v8:u32):
  v9 = cmp.lt.u32 v7, v6
  br_if v9, bb4, bb5
bb4:
  v10 = const.u32 1
  v11 = add.u32 v7, v10
  v12 = shl.u32 v8, v10
  br bb3(v11, v12)
bb5:
  v13 = buffer_addr.0
  v14 = ptradd.4 v13, v0
  st.device.u32 v14, v8
  ret
}
"#;
    let (out, _) = run_u32(text, 64);
    for (t, &r) in out.iter().enumerate() {
        let t = t as u32;
        let want = if t.is_multiple_of(4) { 0 } else { t << (t % 5) };
        assert_eq!(r, want, "thread {t}");
    }
}

#[test]
fn lanes_reconverge_at_the_immediate_post_dominator() {
    let (out, stats) = run_u32(IF_ELSE, 32);
    assert_eq!(stats.simd_instructions, 4 + 2 + 3 + 4);
    assert_eq!(stats.thread_instructions, 4 * 32 + 2 * 10 + 3 * 22 + 4 * 32);
    assert_eq!(out[3], 30);
    assert_eq!(out[12], 2 + 22);
    let by_class: std::collections::HashMap<_, _> =
        stats.instructions_by_class.iter().copied().collect();
    assert_eq!(by_class[&metalsim_isa::OpClass::Control], 4);
    assert_eq!(by_class[&metalsim_isa::OpClass::DeviceMemory], 1);
    assert_eq!(
        stats.instructions_by_class.len(),
        metalsim_isa::OpClass::ALL.len()
    );
}

#[test]
fn loop_exits_wait_for_the_last_lane_then_run_once() {
    let (out, stats) = run_u32(LOOP_EXITS, 32);
    assert_eq!(out, (0..32).collect::<Vec<_>>());
    // bb0: 2 (sreg, br) x 32 lanes. Header: 32 iterations (0..=31), lanes i..31 at
    // iteration i: 2 instructions each. Body: lanes i+1..31 at iteration i (i < 31).
    // Exit block: 4 instructions x 32 lanes, once.
    let header: u64 = (0..32).map(|i| 32 - i).sum::<u64>() * 2;
    let body: u64 = (0..31).map(|i| 31 - i).sum::<u64>() * 2;
    assert_eq!(stats.thread_instructions, 2 * 32 + header + body + 4 * 32);
    assert_eq!(stats.simd_instructions, 2 + 32 * 2 + 31 * 2 + 4);
}

#[test]
fn block_parameters_swap_and_rotate_in_parallel() {
    // (a, b, c) = (1, 2, 3); repeat tid times: (a, b, c) = (b, c, a); also (x, y) = (y, x).
    let text = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = const.u32 1
  v2 = const.u32 2
  v3 = const.u32 3
  v4 = const.u32 0
  v5 = const.u32 10
  v6 = const.u32 20
  br bb1(v4, v1, v2, v3, v5, v6)
bb1(v10:u32, v11:u32, v12:u32, v13:u32, v14:u32, v15:u32):
  v16 = cmp.lt.u32 v10, v0
  v17 = add.u32 v10, v1
  br_if v16, bb1(v17, v12, v13, v11, v15, v14), bb2
bb2:
  v20 = const.u32 1000
  v21 = mul.u32 v11, v20
  v22 = const.u32 100
  v23 = mul.u32 v12, v22
  v24 = add.u32 v21, v23
  v25 = add.u32 v24, v14
  v26 = mul.u32 v13, v5
  v27 = add.u32 v25, v26
  v28 = buffer_addr.0
  v29 = ptradd.4 v28, v0
  st.device.u32 v29, v27
  ret
}
"#;
    let (out, _) = run_u32(text, 32);
    for (t, &r) in out.iter().enumerate() {
        let (mut a, mut b, mut c, mut x, mut y) = (1, 2, 3, 10, 20);
        for _ in 0..t {
            (a, b, c) = (b, c, a);
            (x, y) = (y, x);
        }
        assert_eq!(r, a * 1000 + b * 100 + x + c * 10, "thread {t}");
    }
}

#[test]
fn each_group_reaching_the_join_apart_runs_a_reconvergence_instruction_where_the_model_says_so() {
    // IF_ELSE's two sides (10 and 22 lanes) each run one at bb3: two instructions, 32
    // lanes, beyond `lanes_reconverge_at_the_immediate_post_dominator`'s counts.
    let plain = run_both(&module(IF_ELSE), &launch_u32(32)).stats;
    for o in run_with_reconvergence_instructions(IF_ELSE, 32) {
        assert_eq!(
            o.buffers[0],
            run_both(&module(IF_ELSE), &launch_u32(32)).buffers[0]
        );
        assert_eq!(o.stats.simd_instructions, plain.simd_instructions + 2);
        assert_eq!(o.stats.thread_instructions, plain.thread_instructions + 32);
        let by_class: std::collections::HashMap<_, _> =
            o.stats.instructions_by_class.iter().copied().collect();
        assert_eq!(by_class[&metalsim_isa::OpClass::Control], 4 + 2);
    }
}

#[test]
fn lanes_leaving_a_loop_at_different_iterations_each_run_a_reconvergence_instruction() {
    // LOOP_EXITS: lane i leaves at iteration i, alone: 32 groups of one lane, the last
    // one (lane 31) by the branch that no lane stays at.
    let plain = run_both(&module(LOOP_EXITS), &launch_u32(32)).stats;
    for o in run_with_reconvergence_instructions(LOOP_EXITS, 32) {
        assert_eq!(o.stats.simd_instructions, plain.simd_instructions + 32);
        assert_eq!(o.stats.thread_instructions, plain.thread_instructions + 32);
    }
}

#[test]
fn reconvergence_instructions_take_issue_slots() {
    let plain = run_timed(&module(IF_ELSE), &launch_u32(32)).stats.cycles;
    let [_, timed] = run_with_reconvergence_instructions(IF_ELSE, 32);
    assert!(
        timed.stats.cycles > plain,
        "{} cycles with the two reconvergence instructions, {plain} without",
        timed.stats.cycles
    );
}

#[test]
fn a_branch_every_lane_takes_the_same_way_runs_no_reconvergence_instruction() {
    // Threads 0..8 all take IF_ELSE's then side; lane 0 alone never enters LOOP_EXITS.
    for (text, n) in [(IF_ELSE, 8), (LOOP_EXITS, 1)] {
        let plain = run_both(&module(text), &launch_u32(n)).stats;
        for o in run_with_reconvergence_instructions(text, n) {
            assert_eq!(o.stats.simd_instructions, plain.simd_instructions);
            assert_eq!(o.stats.thread_instructions, plain.thread_instructions);
        }
    }
}
