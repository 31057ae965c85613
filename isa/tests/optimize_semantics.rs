//! Kernels where the optimizer could change which lanes run together, or in what order,
//! run on the simulator with and without `optimize`: the buffers must be the same, and
//! the ones the test knows must hold what the simulator's reconvergence rules give.

use std::path::Path;

use metalsim_isa::{optimize, parse_module, verify_function};
use metalsim_launch::LaunchSpec;
use metalsim_sim::RunOptions;

/// Runs `text` (kernel `k`, one output buffer of 32 `uint`s, one SIMD-group) as written
/// and optimized; checks both give the same output and returns it.
fn check(text: &str) -> Vec<u32> {
    let base = parse_module(text).unwrap();
    verify_function(&base.functions[0], 0).unwrap();
    let mut opt = base.clone();
    optimize(&mut opt.functions[0]);
    verify_function(&opt.functions[0], 0).unwrap();
    let spec = "kernel = \"k\"\nthreads = [32, 1, 1]\nthreadgroup = [32, 1, 1]\n[[buffer]]\nindex = 0\nname = \"out\"\ntype = \"uint\"\ncount = 32\noutput = true\n";
    let spec = LaunchSpec::from_str(spec, Path::new("."), "test").unwrap();
    let launch = spec.resolve(&base.functions[0], 1 << 20).unwrap();
    let gpu = metalsim_models::builtin("m1").unwrap();
    let options = RunOptions {
        timing: false,
        ..RunOptions::default()
    };
    let out = |m| {
        let r = metalsim_sim::run(m, "k", &launch, &gpu, &options).unwrap();
        assert!(r.fault.is_none(), "{:?}", r.fault);
        r.buffers[0]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect::<Vec<u32>>()
    };
    let (a, b) = (out(&base), out(&opt));
    assert_eq!(a, b, "optimized:\n{}", opt.functions[0]);
    a
}

/// Lanes leave a loop after `lane & 3` iterations. A branch that is never taken (its
/// condition is the constant false) leads to `ret`, so the loop's exit is not where lanes
/// reconverge: each group of lanes leaving together sums over itself after the loop.
/// Folding the branch away would reconverge them first and sum over all 32.
#[test]
fn a_never_taken_return_keeps_lanes_apart() {
    let out = check(
        "kernel k {\n  param buffer(0) out device type \"uint\" size 4 align 4\nbb0:\n  v0 = buffer_addr.0\n  v1 = sreg.thread_index_in_simdgroup\n  v2 = const.u32 3\n  v3 = and.u32 v1, v2\n  v4 = const.u32 0\n  v5 = const.pred false\n  br bb1(v4)\nbb1(v6:u32):\n  v7 = cmp.lt.u32 v6, v3\n  br_if v7, bb2, bb3\nbb2:\n  v8 = const.u32 1\n  v9 = add.u32 v6, v8\n  br_if v5, bb4, bb1(v9)\nbb4:\n  ret\nbb3:\n  v10 = const.u32 1\n  v11 = simd.sum.u32 v10\n  v12 = ptradd.4 v0, v1\n  st.device.u32 v12, v11\n  ret\n}\n",
    );
    assert_eq!(out, vec![8; 32], "each group of 8 lanes sums on its own");
}

/// Two sides of a branch store to the same address and both return: the side the
/// simulator runs first (the taken one) stores first, whatever happens to the blocks.
#[test]
fn divergent_stores_keep_their_order() {
    let out = check(
        "kernel k {\n  param buffer(0) out device type \"uint\" size 4 align 4\nbb0:\n  v0 = buffer_addr.0\n  v1 = sreg.thread_index_in_simdgroup\n  v2 = const.u32 1\n  v3 = and.u32 v1, v2\n  v4 = const.u32 0\n  v5 = cmp.ne.u32 v3, v4\n  br_if v5, bb1, bb2\nbb1:\n  v6 = const.u32 11\n  st.device.u32 v0, v6\n  br bb3\nbb2:\n  v7 = const.u32 22\n  st.device.u32 v0, v7\n  br bb3\nbb3:\n  br bb4\nbb4:\n  ret\n}\n",
    );
    assert_eq!(out[0], 22, "the odd lanes store first, then the even ones");
}

/// A loop of four iterations with a shuffle inside unrolls; lanes that skip the loop (a
/// per-lane condition around it) must still be inactive for every shuffle.
#[test]
fn unrolled_shuffles_see_the_same_lanes() {
    let out = check(
        "kernel k {\n  param buffer(0) out device type \"uint\" size 4 align 4\nbb0:\n  v0 = buffer_addr.0\n  v1 = sreg.thread_index_in_simdgroup\n  v2 = const.u32 20\n  v3 = cmp.lt.u32 v1, v2\n  v4 = const.u32 0\n  br_if v3, bb1(v4, v1), bb3(v1)\nbb1(v5:u32, v6:u32):\n  v7 = const.u32 4\n  v8 = cmp.lt.u32 v5, v7\n  br_if v8, bb2, bb3(v6)\nbb2:\n  v9 = const.u32 1\n  v10 = shl.u32 v9, v5\n  v11 = simd.shuffle_xor.u32 v6, v10\n  v12 = add.u32 v6, v11\n  v13 = add.u32 v5, v9\n  br bb1(v13, v12)\nbb3(v14:u32):\n  v15 = ptradd.4 v0, v1\n  st.device.u32 v15, v14\n  ret\n}\n",
    );
    // Lane 0's partners within the first 16 lanes are all active: the sum of 0..16.
    assert_eq!(out[0], (0..16).sum::<u32>());
    // Lanes 20 and up never ran the loop.
    assert_eq!(out[25], 25);
}
