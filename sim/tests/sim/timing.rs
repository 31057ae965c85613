//! Timing: each test isolates one mechanism of the v1 model on a small kernel.

use metalsim_isa::Type;
use metalsim_launch::Grid;

use crate::common::*;

/// One thread runs `n` dependent float adds, then stores the result.
fn chain(n: usize) -> String {
    let mut t = String::from(
        "kernel k {\n  param buffer(0) out device type \"float\" size 4 align 4\nbb0:\n  v0 = const.f32 1.0\n  v1 = add.f32 v0, v0\n",
    );
    for i in 1..n {
        t += &format!("  v{} = add.f32 v{i}, v0\n", i + 1);
    }
    t += &format!("  v9000 = buffer_addr.0\n  st.device.f32 v9000, v{n}\n  ret\n}}\n");
    t
}

/// One thread runs `n` independent float adds (each of the constant), then stores one.
fn independent(n: usize) -> String {
    let mut t = String::from(
        "kernel k {\n  param buffer(0) out device type \"float\" size 4 align 4\nbb0:\n  v0 = const.f32 1.0\n",
    );
    for i in 1..=n {
        t += &format!("  v{i} = add.f32 v0, v0\n");
    }
    t += &format!("  v9000 = buffer_addr.0\n  st.device.f32 v9000, v{n}\n  ret\n}}\n");
    t
}

fn cycles_of(text: &str) -> u64 {
    let l = launch(
        Grid::Threads([1, 1, 1]),
        [1, 1, 1],
        vec![buffer(0, "out", Type::F32, zeros(4))],
    );
    let out = run_timed(&module(text), &l);
    assert_eq!(out.fault, None);
    out.stats.cycles
}

#[test]
fn a_dependent_chain_takes_latency_times_length() {
    let gpu = m1();
    let lat = gpu.latency.float_alu as u64;
    let (c100, c200) = (cycles_of(&chain(100)), cycles_of(&chain(200)));
    assert!(c200 > c100);
    assert_eq!(c200 - c100, 100 * lat);
    // Independent instructions issue back to back, limited by the pipe's issue cost.
    let (i100, i200) = (cycles_of(&independent(100)), cycles_of(&independent(200)));
    assert_eq!(i200 - i100, 100 * gpu.issue.float_alu as u64);
    assert!(i200 < c200);
}

/// Each thread sums `a[gid + k * threads]` for k < 4 and writes one float.
const STREAM: &str = r#"kernel k {
  param buffer(0) a device readonly type "float" size 4 align 4
  param buffer(1) out device type "float" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = sreg.threads_per_grid.x
  v2 = buffer_addr.0
  v3 = const.u32 0
  v4 = const.u32 1
  v5 = const.u32 4
  v6 = const.f32 0.0
  br bb1(v3, v0, v6)
bb1(v10:u32, v11:u32, v12:f32):
  v13 = ptradd.4 v2, v11
  v14 = ld.device.f32 v13
  v15 = add.f32 v12, v14
  v16 = add.u32 v11, v1
  v17 = add.u32 v10, v4
  v18 = cmp.lt.u32 v17, v5
  br_if v18, bb1(v17, v16, v15), bb2
bb2:
  v19 = buffer_addr.1
  v20 = ptradd.4 v19, v0
  st.device.f32 v20, v15
  ret
}
"#;

#[test]
fn streaming_is_bounded_by_dram_bandwidth() {
    let threads = 256 * 1024u32;
    let n = 4 * threads as usize;
    let l = launch(
        Grid::Threads([threads, 1, 1]),
        [256, 1, 1],
        vec![
            buffer(0, "a", Type::F32, zeros(4 * n)),
            buffer(1, "out", Type::F32, zeros(4 * threads as usize)),
        ],
    );
    let out = run_timed(&module(STREAM), &l);
    let gpu = m1();
    let rate = gpu.dram_bytes_per_cycle();
    let s = &out.stats;
    // Every line of `a` is a cold miss: at least the bytes read come from DRAM.
    assert!(s.dram_bytes >= s.device_bytes_read, "{s:?}");
    let bound = s.dram_bytes as f64 / rate;
    let ratio = s.cycles as f64 / bound;
    assert!(
        (0.97..1.15).contains(&ratio),
        "cycles {} vs DRAM bound {bound:.0}: {ratio:.3}",
        s.cycles
    );
}

/// Every thread reads the same 4 KiB 16 times: after the first touch the caches serve it.
#[test]
fn reused_lines_come_from_the_caches() {
    let text = STREAM
        .replace("v1 = sreg.threads_per_grid.x", "v1 = const.u32 0")
        .replace("v5 = const.u32 4", "v5 = const.u32 16");
    let text = text.replace(
        "v0 = sreg.thread_position_in_grid.x",
        "v0 = sreg.thread_position_in_grid.x\n  v40 = const.u32 1023\n  v41 = and.u32 v0, v40",
    );
    let text = text.replace("br bb1(v3, v0, v6)", "br bb1(v3, v41, v6)");
    let threads = 64 * 1024u32;
    let l = launch(
        Grid::Threads([threads, 1, 1]),
        [256, 1, 1],
        vec![
            buffer(0, "a", Type::F32, zeros(4096)),
            buffer(1, "out", Type::F32, zeros(4 * threads as usize)),
        ],
    );
    let out = run_timed(&module(&text), &l);
    assert_eq!(out.fault, None);
    let s = &out.stats;
    assert_eq!(s.device_bytes_read, 16 * 4 * threads as u64);
    // The 4 KiB input comes from DRAM once; the 256 KiB output stays in L2 and the SLC.
    assert_eq!(s.dram_bytes, 4096, "{s:?}");
}

/// Each thread runs a loop of 64 dependent float multiply-adds: compute bound.
const COMPUTE: &str = r#"kernel k {
  param buffer(0) out device type "float" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = const.u32 0
  v2 = const.u32 1
  v3 = const.u32 64
  v4 = const.f32 0.5
  v5 = cvt.u32.f32 v0
  br bb1(v1, v5)
bb1(v6:u32, v7:f32):
  v8 = fma.f32 v7, v4, v4
  v9 = add.u32 v6, v2
  v10 = cmp.lt.u32 v9, v3
  br_if v10, bb1(v9, v8), bb2
bb2:
  v11 = buffer_addr.0
  v12 = ptradd.4 v11, v0
  st.device.f32 v12, v8
  ret
}
"#;

#[test]
fn more_threadgroups_than_fit_run_in_waves() {
    let run = |groups: u32| {
        let threads = groups * 1024;
        let l = launch(
            Grid::Threads([threads, 1, 1]),
            [1024, 1, 1],
            vec![buffer(0, "out", Type::F32, zeros(4 * threads as usize))],
        );
        run_timed(&module(COMPUTE), &l).stats.cycles
    };
    let cores = m1().cores;
    let one = run(cores);
    let just_over = run(cores + 1);
    let two = run(2 * cores);
    let over_two = run(2 * cores + 1);
    // One more threadgroup than cores doubles the time of the core that gets two; then the
    // time stays flat until every core has two.
    assert!(just_over as f64 > 1.7 * one as f64, "{one} -> {just_over}");
    assert!(
        (two as f64 - just_over as f64).abs() < 0.05 * two as f64,
        "{just_over} vs {two}"
    );
    assert!(over_two as f64 > 1.3 * two as f64, "{two} -> {over_two}");
}
