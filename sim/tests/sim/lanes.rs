//! SIMD-group and quad-group operations, with full and partial masks.

use metalsim_isa::Type;
use metalsim_launch::Grid;

use crate::common::*;

/// The guide's reduction: shuffle_down within each SIMD-group, partial sums through
/// threadgroup memory and a barrier, then an atomic add per threadgroup.
pub const GUIDE_REDUCTION: &str = r#"file 0 "reduce.metal"
kernel k {
  param buffer(0) input device readonly type "float" size 4 align 4
  param buffer(1) output device atomic type "atomic_float" size 4 align 4
  param buffer(2) count constant readonly ref type "uint" size 4 align 4
  tgalloc 0 size 128 align 4 "partials"
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = sreg.thread_index_in_threadgroup
  v2 = sreg.thread_index_in_simdgroup
  v3 = sreg.simdgroup_index_in_threadgroup
  v4 = sreg.threads_per_threadgroup.x
  v50 = const.u32 0
  v51 = const.u32 1
  v52 = const.u32 16
  v53 = const.u32 31
  v54 = const.u32 5
  v55 = const.f32 0.0
  v5 = buffer_addr.2
  v6 = ld.constant.u32 v5
  v7 = cmp.lt.u32 v0, v6
  br_if v7, bb1, bb2(v55)
bb1:
  v8 = buffer_addr.0
  v9 = ptradd.4 v8, v0
  v10 = ld.device.f32 v9
  br bb2(v10)
bb2(v11:f32):
  br bb3(v11, v52)
bb3(v12:f32, v13:u32):
  v14 = cmp.gt.u32 v13, v50
  br_if v14, bb4, bb5
bb4:
  v15 = simd.shuffle_down.f32 v12, v13
  v16 = add.f32 v12, v15
  v17 = shr.u32 v13, v51
  br bb3(v16, v17)
bb5:
  v18 = cmp.eq.u32 v2, v50
  br_if v18, bb6, bb7
bb6:
  v19 = tg_addr.0
  v20 = ptradd.4 v19, v3
  st.threadgroup.f32 v20, v12
  br bb7
bb7:
  barrier.threadgroup.threadgroup
  v21 = cmp.eq.u32 v3, v50
  br_if v21, bb8, bb15
bb8:
  v22 = add.u32 v4, v53
  v23 = shr.u32 v22, v54
  v24 = cmp.lt.u32 v1, v23
  br_if v24, bb9, bb10(v55)
bb9:
  v25 = tg_addr.0
  v26 = ptradd.4 v25, v1
  v27 = ld.threadgroup.f32 v26
  br bb10(v27)
bb10(v28:f32):
  br bb11(v28, v52)
bb11(v29:f32, v30:u32):
  v31 = cmp.gt.u32 v30, v50
  br_if v31, bb12, bb13
bb12:
  v32 = simd.shuffle_down.f32 v29, v30
  v33 = add.f32 v29, v32
  v34 = shr.u32 v30, v51
  br bb11(v33, v34)
bb13:
  v35 = cmp.eq.u32 v1, v50
  br_if v35, bb14, bb15
bb14:
  v36 = buffer_addr.1
  v37 = atomic.add.device.f32 v36, v29
  br bb15
bb15:
  ret
}
"#;

/// The reduction's launch: `count` inputs 1..=count over `threads` threads.
pub fn reduction_launch(count: u32, threads: u32, tg: u32) -> metalsim_launch::Launch {
    let input: Vec<f32> = (0..threads).map(|i| (i + 1) as f32).collect();
    launch(
        Grid::Threads([threads, 1, 1]),
        [tg, 1, 1],
        vec![
            buffer(0, "input", Type::F32, f32s(&input)),
            buffer(1, "output", Type::F32, zeros(4)),
            buffer(2, "count", Type::U32, u32s(&[count])),
        ],
    )
}

#[test]
fn guide_reduction_with_shuffle_down_sums_exactly() {
    let m = module(GUIDE_REDUCTION);
    // Whole SIMD-groups only: in a partial one, shuffle_down from a lane past the last
    // thread returns the reader's own value (the guide dispatches multiples of 32).
    for (count, threads, tg) in [(1000, 1024, 256), (1000, 1024, 96), (77, 128, 64)] {
        let out = run_both(&m, &reduction_launch(count, threads, tg));
        let want = (count as f32) * (count as f32 + 1.0) / 2.0;
        assert_eq!(
            as_f32s(&out.buffers[1]),
            [want],
            "count {count}, threads {threads}"
        );
    }
}

/// A kernel running each named instruction on `tid` (and operand `v90` = the given
/// constant) inside a branch taken by the lanes where `tid % 3 != 0` (or all lanes), and
/// storing every result to `out[tid * K + k]` as a u64.
fn cross_lane_kernel(insts: &[&str], all_lanes: bool) -> String {
    let k = insts.len();
    let mut t = String::from(
        "kernel k {\n  param buffer(0) out device type \"ulong\" size 8 align 8\nbb0:\n  v0 = sreg.thread_index_in_simdgroup\n  v1 = const.u32 3\n  v2 = rem.u32 v0, v1\n  v3 = const.u32 0\n",
    );
    t += &format!(
        "  v4 = cmp.ne.u32 v2, v3\n  v5 = const.pred {all_lanes}\n  v6 = or.pred v4, v5\n  v7 = const.u32 1\n  v8 = and.u32 v0, v7\n  v9 = cmp.ne.u32 v8, v3\n"
    );
    t += &format!(
        "  v10 = cvt.u32.f32 v0\n  v11 = const.u32 {k}\n  v12 = mul.u32 v0, v11\n  v13 = buffer_addr.0\n  br_if v6, bb1, bb2\nbb1:\n"
    );
    for (i, inst) in insts.iter().enumerate() {
        let r = 100 + 4 * i;
        t += &format!("  v{r} = {inst}\n");
        let widen =
            if inst.contains("ballot") || inst.contains("active_mask") || inst.contains(".u64") {
                format!("  v{} = bitcast.u64.u64 v{r}\n", r + 1)
            } else if inst.contains(".f32") {
                format!("  v{} = cvt.f32.u64 v{r}\n", r + 1)
            } else if inst.contains(".pred")
                || inst.contains("is_first")
                || inst.contains(".all")
                || inst.contains(".any")
            {
                format!("  v{} = cvt.pred.u64 v{r}\n", r + 1)
            } else {
                format!("  v{} = cvt.u32.u64 v{r}\n", r + 1)
            };
        t += &widen;
        t += &format!(
            "  v{} = const.u32 {i}\n  v{} = add.u32 v12, v{}\n",
            r + 2,
            r + 3,
            r + 2
        );
        t += &format!(
            "  v{} = ptradd.8 v13, v{}\n  st.device.u64 v{}, v{}\n",
            r + 400,
            r + 3,
            r + 400,
            r + 1
        );
    }
    t += "  br bb2\nbb2:\n  ret\n}\n";
    t
}

fn run_cross(insts: &[&str], all_lanes: bool) -> Vec<Vec<u64>> {
    let text = cross_lane_kernel(insts, all_lanes);
    let k = insts.len();
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![buffer(0, "out", Type::U64, zeros(8 * 32 * k))],
    );
    let out = run_both(&module(&text), &l);
    let v = from_bytes(Type::U64, &out.buffers[0]);
    (0..32).map(|t| v[t * k..(t + 1) * k].to_vec()).collect()
}

#[test]
fn reductions_scans_and_votes_over_a_partial_mask() {
    let insts = [
        "simd.sum.u32 v0",
        "simd.prefix_exclusive_sum.u32 v0",
        "simd.prefix_inclusive_sum.u32 v0",
        "simd.ballot.pred v9",
        "simd.broadcast_first.u32 v0",
        "simd.is_first",
        "simd.active_mask",
        "simd.max.u32 v0",
        "simd.min.u32 v0",
        "simd.all.pred v9",
        "simd.any.pred v9",
        "simd.product.f32 v10",
        "simd.xor.u32 v0",
    ];
    let got = run_cross(&insts, false);
    let active: Vec<u64> = (0..32).filter(|t| t % 3 != 0).collect();
    let mask: u64 = active.iter().map(|t| 1u64 << t).sum();
    for t in 0..32u64 {
        let r = &got[t as usize];
        if t % 3 == 0 {
            assert!(r.iter().all(|&x| x == 0), "inactive lane {t} wrote");
            continue;
        }
        let below: u64 = active.iter().filter(|&&a| a < t).sum();
        let product: f32 = active.iter().map(|&a| a as f32).product();
        assert_eq!(r[0], active.iter().sum::<u64>(), "sum");
        assert_eq!(r[1], below, "exclusive prefix, lane {t}");
        assert_eq!(r[2], below + t, "inclusive prefix, lane {t}");
        assert_eq!(r[3], mask & 0xaaaa_aaaa, "ballot");
        assert_eq!(r[4], 1, "broadcast_first");
        assert_eq!(r[5], (t == 1) as u64, "is_first");
        assert_eq!(r[6], mask, "active_mask");
        assert_eq!((r[7], r[8]), (31, 1), "max/min");
        assert_eq!((r[9], r[10]), (0, 1), "all/any");
        assert_eq!(r[11], product as u64, "product");
        assert_eq!(r[12], active.iter().fold(0, |x, a| x ^ a), "xor");
    }
}

#[test]
fn shuffles_with_full_and_partial_masks() {
    let insts = [
        "simd.shuffle.u32 v0, v100",
        "simd.shuffle_up.u32 v0, v7",
        "simd.shuffle_down.u32 v0, v1",
        "simd.shuffle_xor.u32 v0, v1",
        "simd.shuffle_rotate_up.u32 v0, v7",
        "simd.shuffle_rotate_down.u32 v0, v1",
        "simd.broadcast.u32 v0, v1",
        "quad.sum.u32 v0",
        "quad.shuffle_xor.u32 v0, v7",
        "quad.broadcast.u32 v0, v1",
        "quad.prefix_exclusive_sum.u32 v0",
        "quad.ballot.pred v9",
        "quad.shuffle_rotate_down.u32 v0, v7",
    ];
    // The first instruction's lane operand is its own result's slot: rewrite it to read
    // lane 31 - tid, computed first.
    let mut insts: Vec<String> = insts.iter().map(|s| s.to_string()).collect();
    insts.insert(0, "sub.u32 v53, v0".to_string());
    insts[1] = "simd.shuffle.u32 v0, v100".to_string();
    let text_insts: Vec<&str> = insts.iter().map(String::as_str).collect();
    for all in [true, false] {
        let text = cross_lane_kernel(&text_insts, all).replace(
            "  v1 = const.u32 3\n",
            "  v1 = const.u32 3\n  v53 = const.u32 31\n",
        );
        let k = text_insts.len();
        let l = launch(
            Grid::Threads([32, 1, 1]),
            [32, 1, 1],
            vec![buffer(0, "out", Type::U64, zeros(8 * 32 * k))],
        );
        let out = run_both_with_findings(&module(&text), &l);
        let v = from_bytes(Type::U64, &out.buffers[0]);
        let active = |s: u64| all || !s.is_multiple_of(3);
        // Reading an inactive lane is reported (a warning) by each shuffle that does.
        let kinds = finding_kinds(&out);
        assert!(
            kinds
                .iter()
                .all(|&k| k == metalsim_sim::FaultKind::InactiveLaneRead),
            "{kinds:?}"
        );
        assert_eq!(kinds.is_empty(), all, "{:#?}", out.findings);
        for t in 0..32u64 {
            if !active(t) {
                continue;
            }
            let r = &v[t as usize * k..(t as usize + 1) * k];
            // A shuffle from an inactive or out-of-range lane gives the lane's own value.
            let from = |s: Option<u64>| match s {
                Some(s) if s < 32 && active(s) => s,
                _ => t,
            };
            let q = t & !3;
            let quad: Vec<u64> = (q..q + 4).filter(|&s| active(s)).collect();
            assert_eq!(r[0], 31 - t);
            assert_eq!(r[1], from(Some(31 - t)), "shuffle, lane {t}");
            assert_eq!(r[2], from(t.checked_sub(1)), "shuffle_up, lane {t}");
            assert_eq!(r[3], from(Some(t + 3)), "shuffle_down, lane {t}");
            assert_eq!(r[4], from(Some(t ^ 3)), "shuffle_xor, lane {t}");
            assert_eq!(r[5], from(Some((t + 31) % 32)), "rotate_up, lane {t}");
            assert_eq!(r[6], from(Some((t + 3) % 32)), "rotate_down, lane {t}");
            assert_eq!(r[7], from(Some(3)), "broadcast, lane {t}");
            assert_eq!(r[8], quad.iter().sum::<u64>(), "quad sum, lane {t}");
            let qfrom = |s: u64| if active(s) { s } else { t };
            assert_eq!(r[9], qfrom(t ^ 1), "quad xor, lane {t}");
            assert_eq!(r[10], qfrom(q + 3), "quad broadcast, lane {t}");
            assert_eq!(
                r[11],
                quad.iter().filter(|&&s| s < t).sum::<u64>(),
                "quad prefix, lane {t}"
            );
            let ballot: u64 = quad
                .iter()
                .filter(|&&s| s % 2 == 1)
                .map(|&s| 1 << (s - q))
                .sum();
            assert_eq!(r[12], ballot, "quad ballot, lane {t}");
            assert_eq!(
                r[13],
                qfrom(q + (t - q + 1) % 4),
                "quad rotate_down, lane {t}"
            );
        }
    }
}
