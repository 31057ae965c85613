//! Odd but valid kernels: whatever passes the verifier runs without a panic.

use metalsim_isa::Type;
use metalsim_launch::Grid;
use metalsim_sim::{FaultKind, RunOptions};

use crate::common::*;

fn run_with_budget(text: &str, threads: u32, out_words: usize) -> metalsim_sim::RunOutcome {
    let l = launch(
        Grid::Threads([threads, 1, 1]),
        [threads.min(64), 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * out_words))],
    );
    let opts = RunOptions {
        timing: true,
        max_instructions: Some(100_000),
        ..RunOptions::default()
    };
    metalsim_sim::run(&module(text), "k", &l, &m1(), &opts).unwrap()
}

#[test]
fn sparse_values_unreachable_blocks_and_same_target_branches() {
    // br_if to one block with different arguments acts as a select; bb2 is unreachable
    // and uses a value that does not dominate it.
    let text = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v9000000 = sreg.thread_position_in_grid.x
  v1 = const.u32 1
  v2 = and.u32 v9000000, v1
  v3 = cmp.eq.u32 v2, v1
  v4 = const.u32 7
  br_if v3, bb1(v4), bb1(v9000000)
bb1(v5:u32):
  v6 = buffer_addr.0
  v7 = ptradd.4 v6, v9000000
  st.device.u32 v7, v5
  ret
bb2:
  v8 = add.u32 v5, v5
  br bb1(v8)
}
"#;
    let out = run_with_budget(text, 64, 64);
    assert_eq!(out.fault, None);
    let o = as_u32s(&out.buffers[0]);
    for (i, &v) in o.iter().enumerate() {
        assert_eq!(v, if i % 2 == 1 { 7 } else { i as u32 });
    }
}

#[test]
fn barrier_in_divergent_code_and_an_endless_branch() {
    // Odd lanes hit a barrier alone (allowed for now); even lanes of SIMD-group 1 loop
    // forever, which only the budget stops.
    let text = r#"file 0 "odd.metal"
kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = const.u32 1
  v2 = and.u32 v0, v1
  v3 = cmp.eq.u32 v2, v1
  br_if v3, bb1, bb2
bb1:
  barrier.threadgroup.threadgroup
  br bb4
bb2:
  v4 = const.u32 32
  v5 = cmp.lt.u32 v0, v4
  br_if v5, bb4, bb3
bb3:
  v6 = add.u32 v0, v1  @12:5
  br bb3  @12:5
bb4:
  v7 = buffer_addr.0
  v8 = ptradd.4 v7, v0
  st.device.u32 v8, v1
  ret
}
"#;
    let out = run_with_budget(text, 64, 64);
    let f = out.fault.expect("the endless branch runs out of budget");
    assert_eq!(f.kind, FaultKind::InstructionBudget);
    assert_eq!(f.location, "odd.metal:12:5");
    assert_eq!(f.simdgroup, 1);
    // SIMD-group 0 finished.
    assert!(as_u32s(&out.buffers[0])[..32].iter().all(|&v| v == 1));
}
