//! `RunOptions::record_simdgroup`: one SIMD-group's steps with their registers, lanes and
//! control-flow events.

use metalsim_isa::{Module, Type};
use metalsim_launch::{Grid, Launch};
use metalsim_sim::{RunOptions, RunOutcome};
use metalsim_traces::{RecordedStep, RegisterValues, SimdgroupRecording};

use crate::common::*;

/// Even lanes double their thread position, odd lanes subtract 1.5; every thread stores
/// its value to threadgroup memory, waits at a barrier and writes the value of the thread
/// 32 places on (in the other SIMD-group) to the output.
const PARITY: &str = r#"kernel k {
  param buffer(0) out device type "float" size 4 align 4
  tgalloc 0 size 256 align 4 "tile"
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = sreg.thread_index_in_threadgroup
  v2 = const.u32 1
  v3 = and.u32 v0, v2
  v4 = const.u32 0
  v5 = cmp.eq.u32 v3, v4
  v6 = cvt.u32.f32 v0
  br_if v5, bb1, bb2
bb1:
  v7 = const.f32 2.0
  v8 = mul.f32 v6, v7
  br bb3(v8)
bb2:
  v9 = const.f32 -1.5
  v10 = add.f32 v6, v9
  br bb3(v10)
bb3(v11:f32):
  v12 = tg_addr.0
  v13 = ptradd.4 v12, v1
  st.threadgroup.f32 v13, v11
  barrier.threadgroup.threadgroup
  v14 = const.u32 32
  v15 = add.u32 v1, v14
  v16 = const.u32 63
  v17 = and.u32 v15, v16
  v18 = ptradd.4 v12, v17
  v19 = ld.threadgroup.f32 v18
  v20 = buffer_addr.0
  v21 = ptradd.4 v20, v0
  st.device.f32 v21, v19
  ret
}
"#;

/// What thread `t` computes before the barrier.
fn parity_value(t: u32) -> f32 {
    if t.is_multiple_of(2) {
        t as f32 * 2.0
    } else {
        t as f32 - 1.5
    }
}

/// Two threadgroups of 64 threads (two SIMD-groups each).
fn parity_launch() -> Launch {
    launch(
        Grid::Threads([128, 1, 1]),
        [64, 1, 1],
        vec![buffer(0, "out", Type::F32, zeros(4 * 128))],
    )
}

fn run_recording(
    m: &Module,
    l: &Launch,
    timing: bool,
    target: Option<([u32; 3], u32)>,
) -> RunOutcome {
    let opts = RunOptions {
        timing,
        record_simdgroup: target,
        ..RunOptions::default()
    };
    let out = metalsim_sim::run(m, "k", l, &m1(), &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.fault, None);
    out
}

/// The recording of SIMD-group `sg` of threadgroup `tg` in an untimed run.
fn record(tg: u32, sg: u32) -> SimdgroupRecording {
    let out = run_recording(
        &module(PARITY),
        &parity_launch(),
        false,
        Some(([tg, 0, 0], sg)),
    );
    out.recording.expect("the SIMD-group exists")
}

fn events(r: &SimdgroupRecording) -> Vec<&str> {
    r.steps.iter().filter_map(|s| s.event.as_deref()).collect()
}

/// The register named `name` among `regs`.
fn reg<'a>(regs: &'a [RegisterValues], name: &str) -> &'a RegisterValues {
    regs.iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no {name} in {regs:?}"))
}

/// The first step that writes `name`.
fn step_writing<'a>(r: &'a SimdgroupRecording, name: &str) -> &'a RecordedStep {
    r.steps
        .iter()
        .find(|s| s.writes.iter().any(|w| w.name == name))
        .unwrap_or_else(|| panic!("no step writes {name}"))
}

#[test]
fn lane_parity_branch_diverges_16_16_and_reconverges() {
    let r = record(1, 1);
    assert_eq!(
        (r.threadgroup, r.simdgroup, r.truncated),
        ([1, 0, 0], 1, false)
    );
    let branch = r
        .steps
        .iter()
        .find(|s| s.event.is_some())
        .expect("an event");
    assert_eq!(
        branch.event.as_deref(),
        Some("diverged: 16 lanes to bb1, 16 to bb2")
    );
    assert_eq!(branch.active, u32::MAX);
    assert_eq!(reg(&branch.reads, "v5").ty, "pred");
    assert_eq!(
        reg(&branch.reads, "v5").lanes[..3],
        ["true", "false", "true"]
    );
    assert_eq!(
        events(&r),
        [
            "diverged: 16 lanes to bb1, 16 to bb2",
            "reconverged at bb3: 32 lanes",
            "arrives last at barrier: releases the threadgroup",
            "exited"
        ]
    );
    // The then side runs first, in the even lanes; the else side in the odd ones.
    assert_eq!(step_writing(&r, "v8").active, 0x5555_5555);
    assert_eq!(step_writing(&r, "v10").active, 0xaaaa_aaaa);
    // bb0 (6 instructions, constants hoisted), one side of 2 for each half, bb3 (12).
    assert_eq!(r.steps.len(), 6 + 2 + 2 + 12);
}

#[test]
fn values_are_what_the_kernel_computes() {
    let (tg, sg) = (1u32, 1u32);
    let r = record(tg, sg);
    let thread = |lane: usize| tg * 64 + sg * 32 + lane as u32;
    let mul = step_writing(&r, "v8");
    assert_eq!(reg(&mul.reads, "v6").ty, "f32");
    assert_eq!(reg(&mul.reads, "v7").lanes[0], "2.0");
    let v8 = reg(&mul.writes, "v8");
    for lane in (0..32).step_by(2) {
        assert_eq!(
            reg(&mul.reads, "v6").lanes[lane],
            format!("{:?}", thread(lane) as f32)
        );
        assert_eq!(v8.lanes[lane], format!("{:?}", parity_value(thread(lane))));
    }
    // The branch into bb3 writes its parameter in the lanes that take it.
    let phi = step_writing(&r, "v11");
    assert_eq!(phi.active, 0x5555_5555);
    assert_eq!(reg(&phi.reads, "v8").name, "v8");
    // After the else side's branch, every lane holds its value in v11.
    let last_phi = r
        .steps
        .iter()
        .rfind(|s| s.writes.iter().any(|w| w.name == "v11"))
        .unwrap();
    assert_eq!(last_phi.active, 0xaaaa_aaaa);
    let v11 = reg(&last_phi.writes, "v11");
    for lane in 0..32 {
        assert_eq!(v11.lanes[lane], format!("{:?}", parity_value(thread(lane))));
    }
    // Pointers are hex, integers decimal.
    let addr = step_writing(&r, "v13");
    assert_eq!(reg(&addr.writes, "v13").ty, "ptr.threadgroup");
    assert!(reg(&addr.writes, "v13").lanes[0].starts_with("0x"));
    assert_eq!(reg(&addr.reads, "v1").ty, "u32");
    assert_eq!(reg(&addr.reads, "v1").lanes[5], "37");
    // The value read back after the barrier is the other SIMD-group's.
    let ld = step_writing(&r, "v19");
    for lane in 0..32 {
        let other = tg * 64 + lane as u32;
        assert_eq!(
            reg(&ld.writes, "v19").lanes[lane],
            format!("{:?}", parity_value(other))
        );
    }
    let out = run_recording(&module(PARITY), &parity_launch(), false, None);
    assert_eq!(out.recording, None, "nothing was asked for");
    assert_eq!(
        as_f32s(&out.buffers[0])[64 + 32 + 3],
        parity_value(64 + 3),
        "the kernel's output agrees"
    );
}

#[test]
fn first_simdgroup_waits_at_the_barrier_and_is_released() {
    let r = record(0, 0);
    let e = events(&r);
    assert_eq!(
        e,
        [
            "diverged: 16 lanes to bb1, 16 to bb2",
            "reconverged at bb3: 32 lanes",
            "waits at barrier",
            "released from barrier",
            "exited"
        ]
    );
    let wait = r
        .steps
        .iter()
        .position(|s| s.event.as_deref() == Some("waits at barrier"))
        .unwrap();
    let released = &r.steps[wait + 1];
    assert_eq!(released.pc, r.steps[wait].pc + 1);
    assert!(r.steps.iter().all(|s| s.cycle.is_none()));
}

#[test]
fn timed_run_records_the_same_instructions() {
    let m = module(PARITY);
    let l = parity_launch();
    let untimed = record(1, 0);
    let timed = run_recording(&m, &l, true, Some(([1, 0, 0], 0)))
        .recording
        .unwrap();
    let key = |r: &SimdgroupRecording| -> Vec<(u32, u32, Vec<RegisterValues>)> {
        r.steps
            .iter()
            .map(|s| (s.pc, s.active, s.writes.clone()))
            .collect()
    };
    assert_eq!(key(&timed), key(&untimed));
}

#[test]
fn a_simdgroup_outside_the_dispatch_gives_none() {
    let m = module(PARITY);
    let l = parity_launch();
    for target in [([2, 0, 0], 0), ([0, 1, 0], 0), ([0, 0, 0], 2)] {
        for timing in [false, true] {
            let out = run_recording(&m, &l, timing, Some(target));
            assert_eq!(out.recording, None, "{target:?}");
        }
    }
}

#[test]
fn tiled_matmul_in_msl_names_its_registers_and_barriers() {
    let src = include_str!("../../../examples/matmul_tiled.metal");
    let (m, d, s) = metalsim_frontend::compile_str("matmul_tiled.metal", src);
    let m = m.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&d, &s, false)));
    let n = 32u32;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 - 2.0).collect();
    let mut l = with_tg_memory(
        launch(
            Grid::Threadgroups([2, 2, 1]),
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
    l.kernel = "matmul_tiled".into();
    let opts = RunOptions {
        record_simdgroup: Some(([1, 0, 0], 2)),
        ..RunOptions::default()
    };
    let out = metalsim_sim::run(&m, "matmul_tiled", &l, &m1(), &opts).unwrap();
    assert_eq!(out.fault, None);
    let r = out.recording.unwrap();
    // Two tiles, two barriers each.
    let barriers = events(&r)
        .iter()
        .filter(|e| e.contains("at barrier"))
        .count();
    assert_eq!(barriers, 4, "{:?}", events(&r));
    assert_eq!(events(&r).last(), Some(&"exited"));
    // The last store writes the accumulator to C: its lanes are C's values.
    let store = r
        .steps
        .iter()
        .rfind(|s| s.reads.iter().any(|x| x.ty == "ptr.device"))
        .unwrap();
    let acc = store.reads.iter().find(|x| x.ty == "f32").unwrap();
    let c = as_f32s(&out.buffers[2]);
    for lane in 0..32u32 {
        // Threads 64..96 of the threadgroup at (1, 0): rows 4 and 5, columns 16..32.
        let t = 64 + lane;
        let (row, col) = (t / 16, 16 + t % 16);
        assert_eq!(
            acc.lanes[lane as usize],
            format!("{:?}", c[(row * n + col) as usize]),
            "lane {lane}"
        );
    }
}
