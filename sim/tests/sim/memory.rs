//! Loads and stores in every space, and the faults of bad accesses.

use metalsim_isa::Type;
use metalsim_launch::Grid;
use metalsim_sim::{FaultKind, RunOptions};

use crate::common::*;

/// Every type through thread memory (per lane) and threadgroup memory and back.
#[test]
fn every_type_round_trips_through_thread_and_threadgroup_memory() {
    for t in [
        "pred", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32",
    ] {
        let s = ty(t).bytes();
        let text = format!(
            r#"kernel k {{
  param buffer(0) a device readonly type "x" size {s} align {s}
  param buffer(1) out device type "x" size {s} align {s}
  tgalloc 0 size {tg} align 8 "tile"
  local 0 size 32 align 8 "arr"
bb0:
  v0 = sreg.thread_index_in_threadgroup
  v1 = buffer_addr.0
  v2 = ptradd.{s} v1, v0
  v3 = ld.device.{t} v2
  v4 = local_addr.0
  v5 = const.u32 2
  v6 = ptradd.{s} v4, v5
  st.thread.{t} v6, v3
  v7 = ld.thread.{t} v6
  v8 = tg_addr.0
  v9 = ptradd.{s} v8, v0
  st.threadgroup.{t} v9, v7
  v10 = ld.threadgroup.{t} v9
  v11 = buffer_addr.1
  v12 = ptradd.{s} v11, v0
  st.device.{t} v12, v10
  ret
}}
"#,
            tg = 64 * s
        );
        let vals: Vec<u64> = samples(64, 3).iter().map(|v| v & ty(t).mask()).collect();
        let l = launch(
            Grid::Threads([64, 1, 1]),
            [64, 1, 1],
            vec![
                buffer(0, "a", ty(t), to_bytes(ty(t), &vals)),
                buffer(1, "out", ty(t), zeros(64 * s as usize)),
            ],
        );
        let out = run_both(&module(&text), &l);
        assert_eq!(from_bytes(ty(t), &out.buffers[1]), vals, "{t}");
    }
}

/// A kernel that first writes `out[gid] = 1`, then reads `a[gid + offset]` (as `ty` with
/// the given scale) into `out`.
fn reader(offset: &str, scale: u32, t: &str) -> String {
    format!(
        r#"file 0 "faults.metal"
kernel k {{
  param buffer(0) a device readonly type "float" size 4 align 4
  param buffer(1) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = buffer_addr.1
  v2 = ptradd.4 v1, v0
  v3 = const.u32 1
  st.device.u32 v2, v3  @3:5
  v4 = buffer_addr.0
  v5 = const.u32 {offset}
  v6 = add.u32 v0, v5
  v7 = ptradd.{scale} v4, v6
  v8 = ld.device.{t} v7  @4:13
  ret
}}
"#
    )
}

fn fault_launch(n: u32, a_elems: usize) -> metalsim_launch::Launch {
    launch(
        Grid::Threads([n, 1, 1]),
        [64, 1, 1],
        vec![
            buffer(0, "a", Type::F32, zeros(4 * a_elems)),
            buffer(1, "out", Type::U32, zeros(4 * n as usize)),
        ],
    )
}

#[test]
fn out_of_bounds_read_names_thread_lane_buffer_and_line() {
    let m = module(&reader("0", 4, "f32"));
    let l = fault_launch(128, 100);
    for out in [run_functional(&m, &l), run_timed(&m, &l)] {
        let f = out.fault.expect("a fault");
        assert_eq!(f.kind, FaultKind::OutOfBounds);
        assert_eq!(f.kind.name(), "out_of_bounds");
        assert_eq!(f.thread, [100, 0, 0]);
        assert_eq!(f.threadgroup, [1, 0, 0]);
        assert_eq!((f.simdgroup, f.lane), (1, 4));
        assert_eq!(f.buffer.as_deref(), Some("a"));
        assert_eq!(f.offset, Some(400));
        assert_eq!(f.location, "faults.metal:4:13");
        assert_eq!(f.loc.line, 4);
        assert!(
            f.message.contains("400") && f.message.contains("`a`"),
            "{}",
            f.message
        );
        // Threadgroup 0 finished; the faulting instruction had no effect.
        let written = as_u32s(&out.buffers[1]);
        assert!(written[..64].iter().all(|&w| w == 1));
    }
}

#[test]
fn out_of_bounds_write_and_null_and_wrong_space() {
    let text = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = buffer_addr.0
  v2 = const.u32 7
  v3 = mul.u32 v0, v2
  v4 = ptradd.4 v1, v3
  st.device.u32 v4, v0
  ret
}
"#;
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * 50))],
    );
    let f = run_functional(&module(text), &l).fault.unwrap();
    assert_eq!(f.kind, FaultKind::OutOfBounds);
    assert_eq!(
        (f.lane, f.offset, f.address.map(|a| a & 0xff_ffff_ffff)),
        (8, Some(224), Some(224))
    );

    let null = r#"kernel k {
bb0:
  v0 = const.u64 0
  v1 = ld.device.u32 v0
  ret
}
"#;
    let l = launch(Grid::Threads([1, 1, 1]), [1, 1, 1], vec![]);
    let f = run_functional(&module(null), &l).fault.unwrap();
    assert_eq!(
        (f.kind, f.address, f.buffer),
        (FaultKind::OutOfBounds, Some(0), None)
    );

    let wrong_space = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = buffer_addr.0
  v1 = ld.threadgroup.u32 v0
  ret
}
"#;
    let l = launch(
        Grid::Threads([1, 1, 1]),
        [1, 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4))],
    );
    let f = run_functional(&module(wrong_space), &l).fault.unwrap();
    assert_eq!(f.kind, FaultKind::OutOfBounds);
    assert!(f.message.contains("threadgroup"), "{}", f.message);
}

#[test]
fn misaligned_access() {
    let m = module(&reader("1", 2, "f32"));
    let f = run_functional(&m, &fault_launch(32, 100)).fault.unwrap();
    assert_eq!(f.kind, FaultKind::Misaligned);
    assert_eq!((f.thread, f.lane, f.offset), ([0, 0, 0], 0, Some(2)));
    assert_eq!(f.kind.name(), "misaligned");
}

#[test]
fn writes_to_read_only_memory() {
    let text = r#"data 0 align 4 "table" x"0000803f00000040"
kernel k {
  param buffer(0) a device readonly type "float" size 4 align 4
  param buffer(1) c constant readonly type "float" size 4 align 4
bb0:
  v0 = buffer_addr.{n}
  v1 = const.f32 1.0
  st.device.f32 v0, v1
  ret
}
"#;
    for (n, name) in [("0", "a"), ("1", "c")] {
        let m = module(&text.replace("{n}", n));
        let l = launch(
            Grid::Threads([1, 1, 1]),
            [1, 1, 1],
            vec![
                buffer(0, "a", Type::F32, zeros(8)),
                buffer(1, "c", Type::F32, zeros(8)),
            ],
        );
        let out = run_functional(&m, &l);
        let f = out.fault.unwrap();
        assert_eq!(
            (f.kind, f.buffer.as_deref()),
            (FaultKind::ReadOnlyWrite, Some(name))
        );
        assert_eq!(f.kind.name(), "read_only_write");
        assert_eq!(out.buffers[0], zeros(8));
    }
    let m = module(&text.replace("buffer_addr.{n}", "data_addr.0"));
    let l = launch(
        Grid::Threads([1, 1, 1]),
        [1, 1, 1],
        vec![
            buffer(0, "a", Type::F32, zeros(8)),
            buffer(1, "c", Type::F32, zeros(8)),
        ],
    );
    let f = run_functional(&m, &l).fault.unwrap();
    assert_eq!(
        (f.kind, f.buffer.as_deref()),
        (FaultKind::ReadOnlyWrite, Some("table"))
    );
}

#[test]
fn constant_data_and_constant_buffers_are_readable() {
    let text = r#"data 0 align 4 "table" x"0000803f000000400000404000008040"
kernel k {
  param buffer(0) scale constant readonly ref type "float" size 4 align 4
  param buffer(1) out device type "float" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = data_addr.0
  v2 = ptradd.4 v1, v0
  v3 = ld.constant.f32 v2
  v4 = buffer_addr.0
  v5 = ld.constant.f32 v4
  v6 = mul.f32 v3, v5
  v7 = buffer_addr.1
  v8 = ptradd.4 v7, v0
  st.device.f32 v8, v6
  ret
}
"#;
    let l = launch(
        Grid::Threads([4, 1, 1]),
        [4, 1, 1],
        vec![
            buffer(0, "scale", Type::F32, f32s(&[10.0])),
            buffer(1, "out", Type::F32, zeros(16)),
        ],
    );
    let out = run_both(&module(text), &l);
    assert_eq!(as_f32s(&out.buffers[1]), [10.0, 20.0, 30.0, 40.0]);
    assert_eq!(out.stats.device_bytes_read, 4 * 4 + 4 * 4);
    assert_eq!(out.stats.device_bytes_written, 4 * 4);
}

#[test]
fn a_fault_stops_the_run_with_budget_options_untouched() {
    // Faults are reported, not errors, whatever the options.
    let m = module(&reader("0", 4, "f32"));
    let opts = RunOptions {
        timing: false,
        max_instructions: Some(1_000_000),
        ..RunOptions::default()
    };
    let out = metalsim_sim::run(&m, "k", &fault_launch(128, 100), &m1(), &opts).unwrap();
    assert!(out.fault.is_some());
}

#[test]
fn host_sized_threadgroup_memory_and_per_lane_thread_memory_overflow() {
    // Reverse each threadgroup's values through `[[threadgroup(0)]]` memory.
    let text = r#"kernel k {
  param buffer(0) a device type "uint" size 4 align 4
  param threadgroup(0) tmp threadgroup type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = sreg.thread_index_in_threadgroup
  v2 = sreg.threads_per_threadgroup.x
  v3 = buffer_addr.0
  v4 = ptradd.4 v3, v0
  v5 = ld.device.u32 v4
  v6 = tg_param_addr.0
  v7 = ptradd.4 v6, v1
  st.threadgroup.u32 v7, v5
  barrier.threadgroup.threadgroup
  v8 = const.u32 1
  v9 = sub.u32 v2, v8
  v10 = sub.u32 v9, v1
  v11 = ptradd.4 v6, v10
  v12 = ld.threadgroup.u32 v11
  st.device.u32 v4, v12
  ret
}
"#;
    let vals: Vec<u32> = (0..128).collect();
    let l = with_tg_memory(
        launch(
            Grid::Threads([128, 1, 1]),
            [64, 1, 1],
            vec![buffer(0, "a", Type::U32, u32s(&vals))],
        ),
        &[(0, 256)],
    );
    let out = run_both(&module(text), &l);
    let want: Vec<u32> = (0..128).map(|i| (i / 64) * 64 + 63 - i % 64).collect();
    assert_eq!(as_u32s(&out.buffers[0]), want);
    // Too little threadgroup memory for 64 threads: thread 32 (lane 0 of SIMD-group 1) is
    // the first to store past the end.
    let small = with_tg_memory(l.clone(), &[(0, 128)]);
    let f = run_functional(&module(text), &small).fault.unwrap();
    assert_eq!(
        (f.kind, f.buffer.as_deref(), f.thread, f.lane),
        (FaultKind::OutOfBounds, Some("tmp"), [32, 0, 0], 0)
    );

    // A thread-private array of 4 uints indexed by the lane: lane 4 overflows its own.
    let local = r#"file 0 "local.metal"
kernel k {
  local 0 size 16 align 4 "arr"
bb0:
  v0 = sreg.thread_index_in_simdgroup
  v1 = local_addr.0
  v2 = ptradd.4 v1, v0
  st.thread.u32 v2, v0  @9:14
  ret
}
"#;
    let l = launch(Grid::Threads([32, 1, 1]), [32, 1, 1], vec![]);
    let f = run_functional(&module(local), &l).fault.unwrap();
    assert_eq!(
        (f.kind, f.buffer.as_deref(), f.lane, f.offset),
        (FaultKind::OutOfBounds, Some("arr"), 4, Some(16))
    );
    assert_eq!(f.location, "local.metal:9:14");
}
