//! Barriers with threadgroup memory, and atomics.

use metalsim_isa::Type;
use metalsim_launch::Grid;
use metalsim_sim::FaultKind;

use crate::common::*;

/// Transposes an N x N matrix through a 16 x 16 threadgroup tile. Without the barrier a
/// SIMD-group would read tile entries other SIMD-groups have not written yet.
fn transpose(barrier: bool) -> String {
    format!(
        r#"kernel k {{
  param buffer(0) input device readonly type "float" size 4 align 4
  param buffer(1) output device type "float" size 4 align 4
  param buffer(2) n constant readonly ref type "uint" size 4 align 4
  tgalloc 0 size 1024 align 16 "tile"
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = sreg.thread_position_in_grid.y
  v2 = sreg.thread_position_in_threadgroup.x
  v3 = sreg.thread_position_in_threadgroup.y
  v4 = sreg.threadgroup_position_in_grid.x
  v5 = sreg.threadgroup_position_in_grid.y
  v6 = buffer_addr.2
  v7 = ld.constant.u32 v6
  v8 = const.u32 16
  v9 = fma.u32 v1, v7, v0
  v10 = buffer_addr.0
  v11 = ptradd.4 v10, v9
  v12 = ld.device.f32 v11
  v13 = fma.u32 v3, v8, v2
  v14 = tg_addr.0
  v15 = ptradd.4 v14, v13
  st.threadgroup.f32 v15, v12
  {barrier}
  v16 = fma.u32 v2, v8, v3
  v17 = ptradd.4 v14, v16
  v18 = ld.threadgroup.f32 v17
  v19 = fma.u32 v5, v8, v2
  v20 = fma.u32 v4, v8, v3
  v21 = fma.u32 v20, v7, v19
  v22 = buffer_addr.1
  v23 = ptradd.4 v22, v21
  st.device.f32 v23, v18
  ret
}}
"#,
        barrier = if barrier {
            "barrier.threadgroup.threadgroup"
        } else {
            ""
        }
    )
}

#[test]
fn tile_transpose_through_threadgroup_memory_needs_the_barrier() {
    let n = 64u32;
    let input: Vec<f32> = (0..n * n).map(|i| i as f32).collect();
    let l = launch(
        Grid::Threads([n, n, 1]),
        [16, 16, 1],
        vec![
            buffer(0, "input", Type::F32, f32s(&input)),
            buffer(1, "output", Type::F32, zeros(4 * (n * n) as usize)),
            buffer(2, "n", Type::U32, u32s(&[n])),
        ],
    );
    let out = run_both(&module(&transpose(true)), &l);
    let t = as_f32s(&out.buffers[1]);
    for y in 0..n {
        for x in 0..n {
            assert_eq!(
                t[(y * n + x) as usize],
                input[(x * n + y) as usize],
                "({x}, {y})"
            );
        }
    }
    assert_eq!(out.stats.threadgroups, 16);
    assert_eq!(out.stats.simdgroups, 16 * 8);
    let racy = run_functional(&module(&transpose(false)), &l);
    assert_ne!(
        racy.buffers[1], out.buffers[1],
        "the barrier made no difference"
    );
    // Without it, the sanitizer sees SIMD-groups read tile entries others write.
    let kinds = finding_kinds(&racy);
    assert!(kinds.contains(&FaultKind::ThreadgroupRace), "{kinds:?}");
}

#[test]
fn device_atomics_from_many_threadgroups_are_exact() {
    let text = r#"kernel k {
  param buffer(0) counters device atomic type "atomic_uint" size 4 align 4
  param buffer(1) fsum device atomic type "atomic_float" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = buffer_addr.0
  v2 = const.u32 1
  v3 = atomic.add.device.u32 v1, v2
  v4 = const.u32 1
  v5 = ptradd.4 v1, v4
  v6 = atomic.add.device.u32 v5, v0
  v7 = const.u32 2
  v8 = ptradd.4 v1, v7
  v30 = bitcast.u32.i32 v0
  v9 = atomic.max.device.i32 v8, v30
  v10 = const.u32 3
  v11 = ptradd.4 v1, v10
  v12 = atomic.sub.device.u32 v11, v2
  v13 = const.u32 4
  v14 = ptradd.4 v1, v13
  v15 = atomic.or.device.u32 v14, v0
  v16 = const.u32 7
  v17 = and.u32 v0, v16
  v18 = cvt.u32.f32 v17
  v19 = buffer_addr.1
  v20 = atomic.add.device.f32 v19, v18
  ret
}
"#;
    let n = 10_000u32;
    let l = launch(
        Grid::Threads([n, 1, 1]),
        [128, 1, 1],
        vec![
            buffer(0, "counters", Type::U32, zeros(20)),
            buffer(1, "fsum", Type::F32, zeros(4)),
        ],
    );
    let out = run_both(&module(text), &l);
    let c = as_u32s(&out.buffers[0]);
    assert_eq!(c[0], n);
    assert_eq!(c[1], n * (n - 1) / 2);
    assert_eq!(c[2], n - 1);
    assert_eq!(c[3], 0u32.wrapping_sub(n));
    assert_eq!(c[4], (0..n).fold(0, |a, x| a | x));
    let fsum: u32 = (0..n).map(|i| i & 7).sum();
    assert_eq!(as_f32s(&out.buffers[1]), [fsum as f32]);
    assert_eq!(out.stats.device_bytes_read, 6 * 4 * n as u64);
}

#[test]
fn atomics_of_one_instruction_run_in_lane_order() {
    // Every lane: old = cmpxchg(a[0], 0, lane + 1); old2 = xchg(a[1], lane + 100).
    let text = r#"kernel k {
  param buffer(0) a device atomic type "atomic_uint" size 4 align 4
  param buffer(1) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_index_in_simdgroup
  v1 = buffer_addr.0
  v2 = const.u32 0
  v3 = const.u32 1
  v4 = add.u32 v0, v3
  v5 = atomic.cmpxchg.device.u32 v1, v2, v4
  v6 = ptradd.4 v1, v3
  v7 = const.u32 100
  v8 = add.u32 v0, v7
  v9 = atomic.xchg.device.u32 v6, v8
  v10 = buffer_addr.1
  v11 = const.u32 2
  v12 = mul.u32 v0, v11
  v13 = ptradd.4 v10, v12
  st.device.u32 v13, v5
  v14 = ptradd.4 v13, v3
  st.device.u32 v14, v9
  ret
}
"#;
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![
            buffer(0, "a", Type::U32, u32s(&[0, 7])),
            buffer(1, "out", Type::U32, zeros(256)),
        ],
    );
    let out = run_both(&module(text), &l);
    assert_eq!(as_u32s(&out.buffers[0]), [1, 131]);
    let o = as_u32s(&out.buffers[1]);
    for lane in 0..32 {
        assert_eq!(
            o[2 * lane],
            if lane == 0 { 0 } else { 1 },
            "cmpxchg, lane {lane}"
        );
        assert_eq!(
            o[2 * lane + 1],
            if lane == 0 { 7 } else { 99 + lane as u32 },
            "xchg, lane {lane}"
        );
    }
}

#[test]
fn threadgroup_atomics_count_the_threads_of_partial_threadgroups() {
    // Thread 0 zeroes the counter (threadgroup memory starts undefined), everyone adds 1,
    // thread 0 writes the total.
    let text = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
  tgalloc 0 size 4 align 4 "count"
bb0:
  v0 = tg_addr.0
  v1 = const.u32 1
  v3 = sreg.thread_index_in_threadgroup
  v4 = const.u32 0
  v5 = cmp.eq.u32 v3, v4
  br_if v5, bb3, bb4
bb3:
  st.threadgroup.u32 v0, v4
  br bb4
bb4:
  barrier.threadgroup.threadgroup
  v2 = atomic.add.threadgroup.u32 v0, v1
  barrier.threadgroup.threadgroup
  br_if v5, bb1, bb2
bb1:
  v6 = ld.threadgroup.u32 v0
  v7 = sreg.threadgroup_position_in_grid.x
  v8 = buffer_addr.0
  v9 = ptradd.4 v8, v7
  st.device.u32 v9, v6
  br bb2
bb2:
  ret
}
"#;
    let l = launch(
        Grid::Threads([1000, 1, 1]),
        [96, 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * 11))],
    );
    let out = run_both(&module(text), &l);
    let mut want = vec![96; 10];
    want.push(1000 - 960);
    assert_eq!(as_u32s(&out.buffers[0]), want);
}

#[test]
fn barrier_is_released_when_every_live_simdgroup_arrived() {
    // SIMD-group 1 returns early; SIMD-group 0 passes its barrier and writes. Metal
    // requires every thread to reach the barrier, so the sanitizer reports it.
    let text = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.simdgroup_index_in_threadgroup
  v1 = const.u32 1
  v2 = cmp.eq.u32 v0, v1
  br_if v2, bb1, bb2
bb1:
  ret
bb2:
  barrier.threadgroup.device
  v3 = sreg.thread_position_in_grid.x
  v4 = buffer_addr.0
  v5 = ptradd.4 v4, v3
  st.device.u32 v5, v1
  ret
}
"#;
    let l = launch(
        Grid::Threads([128, 1, 1]),
        [64, 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(512))],
    );
    let out = run_both_with_findings(&module(text), &l);
    let o = as_u32s(&out.buffers[0]);
    for (i, &v) in o.iter().enumerate() {
        assert_eq!(v, ((i % 64) < 32) as u32, "thread {i}");
    }
    assert_eq!(finding_kinds(&out), [FaultKind::DivergentBarrier]);
    assert_eq!(out.findings[0].count, 2, "once per threadgroup");
}
