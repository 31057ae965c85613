//! Grids, threadgroup shapes, special registers, the instruction budget, determinism and
//! the errors of bad launches.

use metalsim_isa::Type;
use metalsim_launch::Grid;
use metalsim_sim::{FaultKind, RunOptions, SimError};

use crate::common::*;

/// Writes 16 special registers per thread at `out[linear_thread * 16 + k]`, where the
/// linear thread index is `z * W * H + y * W + x` of its grid position.
const SREGS: &[&str] = &[
    "thread_position_in_grid.x",
    "thread_position_in_grid.y",
    "thread_position_in_grid.z",
    "thread_position_in_threadgroup.x",
    "thread_position_in_threadgroup.y",
    "thread_position_in_threadgroup.z",
    "thread_index_in_threadgroup",
    "threadgroup_position_in_grid.x",
    "threadgroup_position_in_grid.y",
    "threads_per_threadgroup.x",
    "threads_per_threadgroup.y",
    "dispatch_threads_per_threadgroup.x",
    "simdgroups_per_threadgroup",
    "thread_index_in_simdgroup",
    "simdgroup_index_in_threadgroup",
    "quadgroups_per_threadgroup",
];

fn sreg_kernel() -> String {
    let k = SREGS.len();
    let mut t = String::from(
        "kernel k {\n  param buffer(0) out device type \"uint\" size 4 align 4\nbb0:\n",
    );
    t += "  v0 = sreg.thread_position_in_grid.x\n  v1 = sreg.thread_position_in_grid.y\n  v2 = sreg.thread_position_in_grid.z\n";
    t += "  v3 = sreg.threads_per_grid.x\n  v4 = sreg.threads_per_grid.y\n  v5 = mul.u32 v2, v4\n  v6 = add.u32 v5, v1\n  v7 = fma.u32 v6, v3, v0\n";
    t += &format!("  v8 = const.u32 {k}\n  v9 = mul.u32 v7, v8\n  v10 = buffer_addr.0\n");
    for (i, s) in SREGS.iter().enumerate() {
        let r = 100 + 4 * i;
        t += &format!(
            "  v{r} = sreg.{s}\n  v{} = const.u32 {i}\n  v{} = add.u32 v9, v{}\n  v{} = ptradd.4 v10, v{}\n  st.device.u32 v{}, v{r}\n",
            r + 1,
            r + 2,
            r + 1,
            r + 3,
            r + 2,
            r + 3
        );
    }
    t + "  ret\n}\n"
}

#[test]
fn partial_edge_threadgroups_of_a_threads_grid() {
    let (w, h) = (10u32, 5u32);
    let k = SREGS.len();
    let l = launch(
        Grid::Threads([w, h, 1]),
        [4, 4, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * k * (w * h) as usize))],
    );
    let out = run_both(&module(&sreg_kernel()), &l);
    assert_eq!(out.stats.threadgroups, 3 * 2);
    let v = as_u32s(&out.buffers[0]);
    for y in 0..h {
        for x in 0..w {
            let r = &v[((y * w + x) as usize) * k..][..k];
            let (tx, ty) = (x / 4, y / 4);
            let sx = 4.min(w - tx * 4);
            let sy = 4.min(h - ty * 4);
            let (lx, ly) = (x % 4, y % 4);
            let index = ly * sx + lx;
            let threads = sx * sy;
            let want = [
                x,
                y,
                0,
                lx,
                ly,
                0,
                index,
                tx,
                ty,
                sx,
                sy,
                4,
                threads.div_ceil(32),
                index % 32,
                index / 32,
                threads.div_ceil(4),
            ];
            assert_eq!(r, want, "thread ({x}, {y})");
        }
    }
}

#[test]
fn threadgroup_grids_in_three_dimensions() {
    let (gw, gh, gd) = (3u32, 2u32, 2u32);
    let tg = [8u32, 2, 3];
    let (w, h, d) = (gw * tg[0], gh * tg[1], gd * tg[2]);
    let k = SREGS.len();
    let l = launch(
        Grid::Threadgroups([gw, gh, gd]),
        tg,
        vec![buffer(
            0,
            "out",
            Type::U32,
            zeros(4 * k * (w * h * d) as usize),
        )],
    );
    let out = run_both(&module(&sreg_kernel()), &l);
    assert_eq!(out.stats.threadgroups, 12);
    assert_eq!(out.stats.simdgroups, 12 * 2);
    let v = as_u32s(&out.buffers[0]);
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                let r = &v[((z * w * h + y * w + x) as usize) * k..][..k];
                let (lx, ly, lz) = (x % tg[0], y % tg[1], z % tg[2]);
                let index = lz * 16 + ly * 8 + lx;
                assert_eq!(
                    &r[..9],
                    [x, y, z, lx, ly, lz, index, x / 8, y / 2],
                    "thread ({x}, {y}, {z})"
                );
                assert_eq!(
                    &r[12..],
                    [2, index % 32, index / 32, 12],
                    "thread ({x}, {y}, {z})"
                );
            }
        }
    }
}

const ENDLESS: &str = r#"file 0 "spin.metal"
kernel k {
bb0:
  v0 = const.u32 1
  br bb1(v0)
bb1(v1:u32):
  v2 = add.u32 v1, v0  @7:9
  br bb1(v2)  @8:3
}
"#;

#[test]
fn an_endless_loop_runs_out_of_budget() {
    let m = module(ENDLESS);
    let l = launch(Grid::Threads([64, 1, 1]), [64, 1, 1], vec![]);
    for timing in [false, true] {
        let opts = RunOptions {
            timing,
            max_instructions: Some(1000),
            ..RunOptions::default()
        };
        let out = metalsim_sim::run(&m, "k", &l, &m1(), &opts).unwrap();
        let f = out.fault.expect("budget fault");
        assert_eq!(f.kind, FaultKind::InstructionBudget);
        assert_eq!(f.kind.name(), "instruction_budget");
        assert!(f.location.starts_with("spin.metal:"), "{}", f.location);
        assert_eq!(out.stats.simd_instructions, 1000);
    }
}

#[test]
fn runs_are_deterministic() {
    let m = module(crate::lanes::GUIDE_REDUCTION);
    let l = crate::lanes::reduction_launch(5000, 8192, 256);
    let a = run_timed(&m, &l);
    let b = run_timed(&m, &l);
    assert_eq!(a, b);
    assert!(a.stats.cycles > 0 && a.stats.dram_bytes > 0);
    let c = run_functional(&m, &l);
    assert_eq!(c, run_functional(&m, &l));
    assert_eq!(c.stats.cycles, 0);
}

fn run_err(text: &str, kernel: &str, l: &metalsim_launch::Launch) -> SimError {
    metalsim_sim::run(&module(text), kernel, l, &m1(), &RunOptions::default()).unwrap_err()
}

#[test]
fn bad_input_is_an_error_not_a_fault() {
    let text = r#"kernel k {
  param buffer(0) a device type "float" size 4 align 4
  param buffer(2) s constant readonly ref type "Params" size 16 align 4
  param threadgroup(0) tile threadgroup type "float" size 4 align 4
bb0:
  ret
}
"#;
    let good = || {
        with_tg_memory(
            launch(
                Grid::Threads([64, 1, 1]),
                [64, 1, 1],
                vec![
                    buffer(0, "a", Type::F32, zeros(256)),
                    buffer(2, "s", Type::U32, zeros(16)),
                ],
            ),
            &[(0, 256)],
        )
    };
    let ok = metalsim_sim::run(&module(text), "k", &good(), &m1(), &RunOptions::default()).unwrap();
    assert_eq!(ok.fault, None);
    assert!(matches!(
        run_err(text, "nope", &good()),
        SimError::UnknownKernel { .. }
    ));
    let bad = text
        .replace("  ret\n", "  v0 = add.f32 v1, v1\n  ret\n")
        .replace("bb0:\n", "bb0:\n  v1 = const.u32 1\n");
    assert!(matches!(run_err(&bad, "k", &good()), SimError::Verify(_)));
    let mut l = good();
    l.buffers.remove(1);
    assert_eq!(
        run_err(text, "k", &l),
        SimError::MissingBuffer {
            index: 2,
            name: "s".into()
        }
    );
    let mut l = good();
    l.threadgroup_memory.clear();
    assert_eq!(
        run_err(text, "k", &l),
        SimError::MissingThreadgroupMemory {
            index: 0,
            name: "tile".into()
        }
    );
    let mut l = good();
    l.buffers[1].bytes.truncate(8);
    assert!(matches!(run_err(text, "k", &l), SimError::BadLaunch(m) if m.contains("`s`")));
    let mut l = good();
    l.threadgroup = [0, 1, 1];
    assert!(matches!(run_err(text, "k", &l), SimError::BadLaunch(_)));
    let mut l = good();
    l.threadgroup = [1024, 2, 1];
    assert!(matches!(run_err(text, "k", &l), SimError::BadLaunch(m) if m.contains("2048")));
    let mut l = good();
    l.grid = Grid::Threadgroups([0, 1, 1]);
    assert!(matches!(run_err(text, "k", &l), SimError::BadLaunch(_)));
    let mut l = good();
    l.threadgroup_memory[0].bytes = 40_000;
    assert!(
        matches!(run_err(text, "k", &l), SimError::BadLaunch(m) if m.contains("threadgroup memory"))
    );
}
