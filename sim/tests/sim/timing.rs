//! Timing: each test isolates one mechanism of the timing model on a small kernel and
//! checks it against an expectation derived by hand from the model's figures.

use metalsim_isa::{Module, Type};
use metalsim_launch::{Grid, Launch};
use metalsim_models::{Gpu, SchedulerPolicy};
use metalsim_sim::{Limiter, RunOptions, RunOutcome};

use crate::common::*;

/// Runs `text` with timing on `gpu`.
fn timed(gpu: &Gpu, text: &str, l: &Launch) -> RunOutcome {
    let out = metalsim_sim::run(&module(text), "k", l, gpu, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.fault, None);
    out
}

fn model(name: &str) -> Gpu {
    metalsim_models::builtin(name).unwrap()
}

/// `threads` threads in threadgroups of `tg` writing one float each to `out`.
fn grid(threads: u32, tg: u32) -> Launch {
    launch(
        Grid::Threads([threads, 1, 1]),
        [tg, 1, 1],
        vec![buffer(0, "out", Type::F32, zeros(4 * threads as usize))],
    )
}

/// A kernel whose body (ISA lines using `v0` = 1.0, `v1` = lane index, `v2` = thread
/// position) leaves its result in `v{last}`, stored per thread.
fn kernel(body: &str, last: usize) -> String {
    format!(
        "kernel k {{\n  param buffer(0) out device type \"float\" size 4 align 4\nbb0:\n  v0 = const.f32 1.0\n  v1 = sreg.thread_index_in_simdgroup\n  v2 = sreg.thread_position_in_grid.x\n{body}  v9000 = buffer_addr.0\n  v9001 = ptradd.4 v9000, v2\n  st.device.f32 v9001, v{last}\n  ret\n}}\n"
    )
}

/// `n` dependent FMAs: v10 = fma(v0, v0, v0), v11 = fma(v10, v0, v0), ...
fn fma_chain(n: usize) -> String {
    let mut body = String::from("  v10 = fma.f32 v0, v0, v0\n");
    for i in 1..n {
        body += &format!("  v{} = fma.f32 v{}, v0, v0\n", 10 + i, 9 + i);
    }
    kernel(&body, 9 + n)
}

/// `chains` independent dependent chains of `len` FMAs each, interleaved (ILP `chains`).
fn fma_chains(chains: usize, len: usize) -> String {
    let mut body = String::new();
    for c in 0..chains {
        body += &format!("  v{} = fma.f32 v0, v0, v0\n", 10 + c);
    }
    for i in 1..len {
        for c in 0..chains {
            let v = 10 + i * chains + c;
            body += &format!("  v{v} = fma.f32 v{}, v0, v0\n", v - chains);
        }
    }
    // Sum the chains so every one is needed.
    let last = 10 + len * chains;
    body += &format!("  v{last} = add.f32 v{}, v0\n", last - 1);
    let mut acc = last;
    for c in 1..chains {
        body += &format!("  v{} = add.f32 v{acc}, v{}\n", acc + 1, last - 1 - c);
        acc += 1;
    }
    kernel(&body, acc)
}

#[test]
fn a_dependent_fma_chain_takes_latency_times_length() {
    let gpu = m1();
    let cycles = |n| timed(&gpu, &fma_chain(n), &grid(1, 1)).stats.cycles;
    let (c100, c200) = (cycles(100), cycles(200));
    assert_eq!(c200 - c100, 100 * gpu.latency.float_fma as u64);
}

#[test]
fn independent_chains_reach_the_modeled_throughput() {
    // 4 SIMD-groups per scheduler: every extra 100 FMAs of each SIMD-group cost 4 x 100
    // cycles per scheduler when the pipeline's throughput (1 per cycle) is reached.
    let mut gpu = m1();
    let per_scheduler = 4u64;
    let threads = gpu.cores * gpu.schedulers_per_core * 32 * per_scheduler as u32;
    let expect = per_scheduler * 100 * gpu.issue.float_fma as u64;
    let extra = |gpu: &Gpu, chains: usize| {
        let c = |n: usize| {
            let text = fma_chains(chains, n / chains);
            timed(gpu, &text, &grid(threads, 128)).stats.cycles
        };
        c(200) - c(100)
    };
    // ILP 4: 4 chains of 4 SIMD-groups cover the 11-cycle latency when the scheduler
    // takes them in turn.
    gpu.scheduler_policy = SchedulerPolicy::LooseRoundRobin;
    let got = extra(&gpu, 4);
    assert!(
        (got as f64 - expect as f64).abs() <= 0.05 * expect as f64,
        "round-robin, ILP 4: {got} cycles, modeled {expect}"
    );
    // Greedy-then-oldest starves the youngest SIMD-group until the others finish, which
    // then runs alone at its latency; ILP 8 covers that.
    gpu.scheduler_policy = SchedulerPolicy::GreedyThenOldest;
    let greedy4 = extra(&gpu, 4);
    let got = extra(&gpu, 8);
    assert!(
        (got as f64 - expect as f64).abs() <= 0.05 * expect as f64,
        "greedy, ILP 8: {got} cycles, modeled {expect}"
    );
    assert!(greedy4 > got, "{greedy4} vs {got}");
    // With one SIMD-group per scheduler and one chain, latency rules instead.
    let one = |len| {
        timed(&gpu, &fma_chains(1, len), &grid(gpu.cores * 128, 128))
            .stats
            .cycles
    };
    assert_eq!(one(200) - one(100), 100 * gpu.latency.float_fma as u64);
}

/// Each of 1024 threads (one threadgroup, one core) loads `loads` times from threadgroup
/// word `(lane * stride) % 1024`, then stores the last value.
fn bank_kernel(stride: u32, loads: usize) -> String {
    let mut t = format!(
        "kernel k {{\n  param buffer(0) out device type \"float\" size 4 align 4\n  tgalloc 0 size 4096 align 16 \"t\"\nbb0:\n  v1 = sreg.thread_index_in_simdgroup\n  v2 = sreg.thread_position_in_grid.x\n  v3 = const.u32 {stride}\n  v4 = mul.u32 v1, v3\n  v5 = const.u32 1023\n  v6 = and.u32 v4, v5\n  v7 = tg_addr.0\n  v8 = ptradd.4 v7, v6\n"
    );
    for i in 0..loads {
        t += &format!("  v{} = ld.threadgroup.f32 v8\n", 10 + i);
    }
    t += &format!(
        "  v9000 = buffer_addr.0\n  v9001 = ptradd.4 v9000, v2\n  st.device.f32 v9001, v{}\n  ret\n}}\n",
        9 + loads
    );
    t
}

#[test]
fn a_k_way_bank_conflict_costs_k() {
    let gpu = m1();
    let l = grid(1024, 1024);
    let cycles = |stride, loads| timed(&gpu, &bank_kernel(stride, loads), &l).stats.cycles;
    // The extra 64 loads of each of 32 SIMD-groups, port-bound: 32 x 64 x k wavefronts.
    let per_access = |stride| (cycles(stride, 96) - cycles(stride, 32)) as f64 / (32.0 * 64.0);
    let one = per_access(1);
    assert!(
        (one - gpu.threadgroup_wavefront_cycles()).abs() < 0.05,
        "{one}"
    );
    for k in [2u32, 4, 8, 32] {
        let ratio = per_access(k) / one;
        assert!(
            (ratio - k as f64).abs() <= 0.05 * k as f64,
            "stride {k}: {ratio:.2}x the conflict-free cost"
        );
    }
    // Stride 3 words spreads over every bank, and a broadcast is one word.
    assert!((per_access(3) / one - 1.0).abs() < 0.05);
    assert!((per_access(0) / one - 1.0).abs() < 0.05);
    let out = timed(&gpu, &bank_kernel(4, 32), &l);
    assert_eq!(out.timing.unwrap().bank_conflict_replays, 32 * 32 * 3);
}

/// `b[i] = a[i]` for every thread.
const COPY: &str = r#"kernel k {
  param buffer(0) a device readonly type "float" size 4 align 4
  param buffer(1) b device type "float" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = buffer_addr.0
  v2 = ptradd.4 v1, v0
  v3 = ld.device.f32 v2
  v4 = buffer_addr.1
  v5 = ptradd.4 v4, v0
  st.device.f32 v5, v3
  ret
}
"#;

#[test]
fn a_streaming_copy_saturates_the_modeled_dram_bandwidth() {
    for name in ["m1", "m2-pro"] {
        let gpu = model(name);
        // Twice the SLC, so that the copy streams from and to DRAM.
        let n = (2 * gpu.memory.slc.size_bytes / 4) as usize;
        let l = launch(
            Grid::Threads([n as u32, 1, 1]),
            [256, 1, 1],
            vec![
                buffer(0, "a", Type::F32, zeros(4 * n)),
                buffer(1, "b", Type::F32, zeros(4 * n)),
            ],
        );
        let s = timed(&gpu, COPY, &l).stats;
        // Every line read once and written back once.
        assert_eq!(s.dram_bytes, 2 * 4 * n as u64, "{s:?}");
        let rate = s.dram_bytes as f64 / s.cycles as f64;
        let modeled = gpu.dram_bytes_per_cycle();
        assert!(
            (rate / modeled - 1.0).abs() <= 0.10,
            "{name}: {rate:.1} bytes/cycle, modeled {modeled:.1}"
        );
    }
}

#[test]
fn writes_still_cached_at_the_end_are_written_back_to_dram() {
    // 256 KB in and out: the written lines are still in L2 when the last SIMD-group
    // finishes; the dispatch ends only when they are in DRAM.
    let gpu = model("m1");
    let n = 64 * 1024;
    let l = launch(
        Grid::Threads([n as u32, 1, 1]),
        [256, 1, 1],
        vec![
            buffer(0, "a", Type::F32, zeros(4 * n)),
            buffer(1, "b", Type::F32, zeros(4 * n)),
        ],
    );
    let s = timed(&gpu, COPY, &l).stats;
    assert_eq!(s.dram_bytes, 2 * 4 * n as u64, "{s:?}");
    // The write-back takes DRAM time: the whole run moves its bytes no faster than DRAM.
    let rate = s.dram_bytes as f64 / s.cycles as f64;
    assert!(
        rate <= gpu.dram_bytes_per_cycle() * 1.01,
        "{rate:.1} bytes/cycle"
    );
}

/// One thread follows `hops` links of the chain in buffer 0 (`next[i]` is the next index)
/// from index 0, then stores where it ended.
const CHASE: &str = r#"kernel k {
  param buffer(0) next device readonly type "uint" size 4 align 4
  param buffer(1) out device type "uint" size 4 align 4
  param buffer(2) hops constant readonly ref type "uint" size 4 align 4
bb0:
  v0 = buffer_addr.0
  v1 = buffer_addr.2
  v2 = ld.constant.u32 v1
  v3 = const.u32 0
  v4 = const.u32 1
  br bb1(v3, v3)
bb1(v10:u32, v11:u32):
  v12 = ptradd.4 v0, v11
  v13 = ld.device.u32 v12
  v14 = add.u32 v10, v4
  v15 = cmp.lt.u32 v14, v2
  br_if v15, bb1(v14, v13), bb2
bb2:
  v20 = buffer_addr.1
  st.device.u32 v20, v13
  ret
}
"#;

/// Cycles per hop of a pointer chase over `bytes` (one link per cache line, in a random
/// cyclic order), in the steady state: after one full pass when `warm`.
fn chase(gpu: &Gpu, bytes: u64, warm: bool) -> f64 {
    let line_words = (gpu.memory.line_bytes / 4) as usize;
    let lines = (bytes / gpu.memory.line_bytes as u64) as usize;
    // Sattolo's algorithm: a random cyclic permutation of the lines.
    let mut order: Vec<usize> = (0..lines).collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..lines).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let j = (seed >> 33) as usize % i;
        order.swap(i, j);
    }
    let mut next = vec![0u32; lines * line_words];
    for (i, &to) in order.iter().enumerate() {
        next[i * line_words] = (to * line_words) as u32;
    }
    let run = |hops: u32| {
        let l = launch(
            Grid::Threads([1, 1, 1]),
            [1, 1, 1],
            vec![
                buffer(0, "next", Type::U32, u32s(&next)),
                buffer(1, "out", Type::U32, zeros(4)),
                buffer(2, "hops", Type::U32, u32s(&[hops])),
            ],
        );
        timed(gpu, CHASE, &l).stats.cycles
    };
    let (a, b) = if warm {
        (lines as u32 + 100, 2 * lines as u32 + 100)
    } else {
        (1000, 3000)
    };
    (run(b) - run(a)) as f64 / (b - a) as f64
}

#[test]
fn a_working_set_shows_the_latency_of_the_level_it_fits_in() {
    let gpu = m1();
    let m = &gpu.memory;
    // Each hop: the load; the `ptradd` of the next address is the load's addressing
    // (folded into it: no latency of its own).
    let hop = |level: u32| level as f64;
    let check = |bytes: u64, warm: bool, level: u32, name: &str| {
        let got = chase(&gpu, bytes, warm);
        assert!(
            (got - hop(level)).abs() <= 0.03 * hop(level),
            "{name}: {got:.1} cycles per hop, expected {}",
            hop(level)
        );
    };
    check(2048, true, m.l1.latency, "L1");
    check(m.l2.size_bytes / 4, true, m.l2.latency, "L2");
    check(m.slc.size_bytes / 2, true, m.slc.latency, "SLC");
    check(4 * m.slc.size_bytes, false, m.dram.latency, "DRAM");
}

/// Each thread runs `iters` iterations of a loop of 16 independent FMAs; with `parity`,
/// odd and even lanes run the same 16 FMAs on two branches (without, all take one).
fn divergent(parity: bool, iters: u32) -> String {
    let body = |first: usize| {
        let mut b = String::new();
        for i in 0..16 {
            b += &format!("  v{} = fma.f32 v{}, v0, v0\n", first + i, 12 + (i % 4));
        }
        b
    };
    // Odd lanes take bb2, even ones bb3; without `parity` every lane takes bb2.
    let cond = if parity {
        "eq.u32 v21, v20"
    } else {
        "ge.u32 v21, v3"
    };
    let branch = format!(
        "  v20 = const.u32 1\n  v21 = and.u32 v1, v20\n  v22 = cmp.{cond}\n  br_if v22, bb2, bb3\nbb2:\n{}  br bb4(v45)\nbb3:\n{}  br bb4(v75)\n",
        body(30),
        body(60)
    );
    format!(
        "kernel k {{\n  param buffer(0) out device type \"float\" size 4 align 4\nbb0:\n  v0 = const.f32 1.0\n  v1 = sreg.thread_index_in_simdgroup\n  v2 = sreg.thread_position_in_grid.x\n  v3 = const.u32 0\n  v4 = const.u32 1\n  v5 = const.u32 {iters}\n  br bb1(v3, v0)\nbb1(v10:u32, v11:f32):\n  v12 = add.f32 v11, v0\n  v13 = add.f32 v11, v0\n  v14 = add.f32 v11, v0\n  v15 = add.f32 v11, v0\n{branch}bb4(v50:f32):\n  v51 = add.u32 v10, v4\n  v52 = cmp.lt.u32 v51, v5\n  br_if v52, bb1(v51, v50), bb5\nbb5:\n  v9000 = buffer_addr.0\n  v9001 = ptradd.4 v9000, v2\n  st.device.f32 v9001, v50\n  ret\n}}\n"
    )
}

#[test]
fn a_lane_parity_branch_halves_the_throughput_of_its_body() {
    let gpu = m1();
    let l = grid(gpu.cores * 1024, 256);
    let run = |parity, iters| timed(&gpu, &divergent(parity, iters), &l);
    // The loop's cost per iteration: the difference between 40 and 20 iterations.
    let per_iter = |parity| (run(parity, 40).stats.cycles - run(parity, 20).stats.cycles) as f64;
    let ratio = per_iter(true) / per_iter(false);
    // Issue-bound, so time follows SIMD-group instructions per iteration: 4 adds and 3 of
    // branching, the 16 FMAs and a branch once (uniform) or on each side (split: each half
    // of the lanes, so half the throughput), 3 of loop control: 27 against 44.
    let expect = 44.0 / 27.0;
    assert!(
        (ratio - expect).abs() <= 0.05 * expect,
        "split / uniform time per iteration {ratio:.2}, expected {expect:.2}"
    );
    let s = run(true, 40).stats;
    let efficiency = s.thread_instructions as f64 / (32.0 * s.simd_instructions as f64);
    assert!(efficiency < 0.8, "{efficiency}");
}

#[test]
fn occupancy_limited_by_registers_matches_the_calculator() {
    // 120 values loaded and all live at once, then summed: about 120 registers.
    let n = 120;
    let mut body = String::from("  v3 = buffer_addr.0\n  v4 = ptradd.4 v3, v2\n");
    for i in 0..n {
        body += &format!("  v{} = ld.device.f32 v4\n", 100 + i);
    }
    body += "  v300 = add.f32 v100, v101\n";
    for i in 2..n {
        body += &format!("  v{} = add.f32 v{}, v{}\n", 299 + i, 298 + i, 100 + i);
    }
    let text = kernel(&body, 298 + n);
    let gpu = m1();
    let o = timed(&gpu, &text, &grid(gpu.cores * 64 * 40, 64))
        .timing
        .unwrap()
        .occupancy;
    assert_eq!(o.limiter, Limiter::Registers);
    let regs = o.registers_per_thread;
    assert!((n as f64..n as f64 + 12.0).contains(&regs), "{regs}");
    // The calculator: 212992 B / (regs x 4 B) threads, in steps of 64; 64-thread groups.
    let threads = (gpu.register_file_bytes as f64 / (regs * 4.0)) as u32 / 64 * 64;
    let groups = threads / 64;
    assert_eq!(o.threadgroups_per_core, groups);
    let theoretical = (groups * 2) as f64 / 96.0;
    assert!((o.theoretical - theoretical).abs() < 1e-9);
    assert!(o.achieved <= o.theoretical + 1e-9 && o.achieved > 0.5 * o.theoretical);
}

#[test]
fn occupancy_limited_by_threadgroup_memory_matches_the_calculator() {
    let text = bank_kernel(1, 1).replace("tgalloc 0 size 4096", "tgalloc 0 size 20480");
    let gpu = m1();
    let o = timed(&gpu, &text, &grid(gpu.cores * 256 * 12, 256))
        .timing
        .unwrap()
        .occupancy;
    assert_eq!(o.limiter, Limiter::ThreadgroupMemory);
    // 61440 B per core / 20480 B per threadgroup = 3 threadgroups of 8 SIMD-groups.
    let groups = gpu.threadgroup_memory_per_core / 20480;
    assert_eq!(o.threadgroups_per_core, groups);
    assert!((o.theoretical - (groups * 8) as f64 / 96.0).abs() < 1e-9);
    // On Apple9 the same kernel draws on one pool for registers and threadgroup memory.
    let m3 = model("m3");
    let o = timed(&m3, &text, &grid(m3.cores * 256 * 12, 256))
        .timing
        .unwrap()
        .occupancy;
    let pool = m3.occupancy.on_chip_memory_bytes as f64;
    let per_group = 20480.0 + 256.0 * 4.0 * o.registers_per_thread;
    assert_eq!(o.threadgroups_per_core, (pool / per_group.ceil()) as u32);
}

#[test]
fn more_threadgroups_than_fit_run_in_waves() {
    // Each thread runs 64 dependent FMAs; 32 KiB of threadgroup memory lets one 1024-thread
    // group per core be resident, so the threadgroups run in waves of one per core.
    let gpu = m1();
    let text = fma_chain(64).replace("bb0:", "  tgalloc 0 size 32768 align 16 \"t\"\nbb0:");
    let run = |groups: u32| timed(&gpu, &text, &grid(groups * 1024, 1024)).stats.cycles;
    let one = run(gpu.cores);
    let just_over = run(gpu.cores + 1);
    let two = run(2 * gpu.cores);
    let over_two = run(2 * gpu.cores + 1);
    assert!(just_over as f64 > 1.7 * one as f64, "{one} -> {just_over}");
    assert!(
        (two as f64 - just_over as f64).abs() < 0.02 * two as f64,
        "{just_over} vs {two}"
    );
    assert!(over_two as f64 > 1.4 * two as f64, "{two} -> {over_two}");
}

#[test]
fn scheduling_policies_pick_differently() {
    // SIMD-groups with long chains: greedy-then-oldest runs one far ahead while
    // round-robin keeps them together; both finish the same work.
    let mut gpu = m1();
    let text = fma_chains(2, 64);
    let l = grid(gpu.cores * 512, 512);
    let gto = timed(&gpu, &text, &l);
    gpu.scheduler_policy = SchedulerPolicy::LooseRoundRobin;
    let lrr = timed(&gpu, &text, &l);
    assert_eq!(gto.buffers, lrr.buffers);
    assert_eq!(gto.stats.simd_instructions, lrr.stats.simd_instructions);
    let (a, b) = (gto.stats.cycles as f64, lrr.stats.cycles as f64);
    assert!((a / b - 1.0).abs() < 0.2, "{a} vs {b}");
}

/// Half the instructions integer adds, half float FMAs, all independent.
fn mixed(pairs: usize) -> String {
    let mut body = String::from("  v3 = const.u32 7\n");
    for i in 0..pairs {
        body += &format!("  v{} = fma.f32 v0, v0, v0\n", 10 + 2 * i);
        body += &format!("  v{} = add.u32 v1, v3\n", 11 + 2 * i);
    }
    kernel(&body, 8 + 2 * pairs)
}

#[test]
fn apple9_co_issues_fp32_and_integer_work() {
    let run = |name: &str, pairs| {
        let gpu = model(name);
        let l = grid(gpu.cores * 1024, 256);
        timed(&gpu, &mixed(pairs), &l).stats.cycles
    };
    // 100 more pairs per SIMD-group, 8 SIMD-groups per scheduler; both runs long enough
    // that writing back their results is not what bounds them (DRAM bandwidth).
    let m1 = (run("m1", 200) - run("m1", 100)) as f64;
    let m3 = (run("m3", 200) - run("m3", 100)) as f64;
    assert!((m1 / (8.0 * 200.0) - 1.0).abs() < 0.05, "{m1}");
    assert!((m3 / (8.0 * 100.0) - 1.0).abs() < 0.05, "{m3}");
}

#[test]
fn a_core_launches_its_threadgroups_one_after_another() {
    // Four small threadgroups per core, all resident at once: with a launch cost the
    // last one starts three launches after the first, and the dispatch ends that much
    // later (less a little: the late ones share the core with fewer others).
    let mut gpu = m1();
    let text = fma_chain(32);
    let l = grid(gpu.cores * 4 * 32, 32);
    let free = timed(&gpu, &text, &l).stats.cycles;
    gpu.threadgroup_launch_cycles = Some(1000);
    let launched = timed(&gpu, &text, &l).stats.cycles;
    let extra = launched - free;
    assert!((2700..=3000).contains(&extra), "{free} -> {launched}");
}

#[test]
fn a_threadgroup_starts_after_launching_each_of_its_simdgroups() {
    // One threadgroup per core: it starts its SIMD-groups' launches later, so the
    // dispatch ends that much later, in proportion to its SIMD-groups.
    let mut gpu = m1();
    let text = fma_chain(32);
    let extra = |gpu: &mut Gpu, simdgroups: u32| {
        let l = grid(gpu.cores * 32 * simdgroups, 32 * simdgroups);
        gpu.simdgroup_launch_cycles = None;
        let free = timed(gpu, &text, &l).stats.cycles;
        gpu.simdgroup_launch_cycles = Some(100);
        timed(gpu, &text, &l).stats.cycles - free
    };
    assert_eq!(extra(&mut gpu, 4), 400);
    assert_eq!(extra(&mut gpu, 8), 800);
    // Two threadgroups of 8 per core: the second's launch waits for the first's (800
    // cycles, more than `threadgroup_launch_cycles`), then takes its own, so it starts
    // at 1,600 where it started at 300.
    gpu.threadgroup_launch_cycles = Some(300);
    gpu.simdgroup_launch_cycles = None;
    let l = grid(gpu.cores * 512, 256);
    let free = timed(&gpu, &text, &l).stats.cycles;
    gpu.simdgroup_launch_cycles = Some(100);
    let launched = timed(&gpu, &text, &l).stats.cycles;
    assert!(
        (1200..=1400).contains(&(launched - free)),
        "{free} -> {launched}"
    );
}

/// Every lane adds to `out[index]`; `index` is the lane or 0.
fn atomics(same: bool) -> String {
    let index = if same { "v3" } else { "v1" };
    format!(
        "kernel k {{\n  param buffer(0) out device type \"uint\" size 4 align 4\nbb0:\n  v1 = sreg.thread_index_in_simdgroup\n  v2 = const.u32 1\n  v3 = const.u32 0\n  v4 = buffer_addr.0\n  v5 = ptradd.4 v4, {index}\n  v6 = atomic.add.device.u32 v5, v2\n  v7 = atomic.add.device.u32 v5, v6\n  ret\n}}\n"
    )
}

#[test]
fn device_atomics_on_one_address_serialize_at_l2() {
    let gpu = m1();
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * 32))],
    );
    let same = timed(&gpu, &atomics(true), &l);
    let spread = timed(&gpu, &atomics(false), &l);
    assert_eq!(as_u32s(&same.buffers[0])[0], 32 + 31 * 32 / 2);
    // The second atomic of 32 lanes on one address waits 31 more turns than when each
    // lane has its own.
    let extra = same.stats.cycles - spread.stats.cycles;
    assert_eq!(extra, 2 * 31 * gpu.issue.atomic as u64);
}

#[test]
fn device_atomics_can_serialise_per_line_per_request() {
    // 32 lanes on the 32 words of one line: one request per instruction. Per address
    // each takes `issue.atomic`; per line the request holds the line 50 cycles, once
    // for all its lanes, on each of the two dependent atomics.
    let mut gpu = m1();
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * 32))],
    );
    let per_address = timed(&gpu, &atomics(false), &l);
    gpu.memory.atomic_line_cycles = Some(50);
    let per_line = timed(&gpu, &atomics(false), &l);
    assert_eq!(per_address.buffers, per_line.buffers);
    let extra = per_line.stats.cycles - per_address.stats.cycles;
    assert_eq!(extra, 2 * (50 - gpu.issue.atomic as u64));
}

/// Each lane reads `c[index]` from constant memory 32 times; `index` is 0 or the lane.
fn constant_reads(broadcast: bool) -> String {
    let index = if broadcast { "v3" } else { "v1" };
    let mut t = format!(
        "kernel k {{\n  param buffer(0) c constant readonly type \"float\" size 4 align 4\n  param buffer(1) out device type \"float\" size 4 align 4\nbb0:\n  v1 = sreg.thread_index_in_simdgroup\n  v2 = sreg.thread_position_in_grid.x\n  v3 = const.u32 0\n  v4 = buffer_addr.0\n  v5 = ptradd.4 v4, {index}\n"
    );
    for i in 0..32 {
        t += &format!("  v{} = ld.constant.f32 v5\n", 10 + i);
    }
    t += "  v9000 = buffer_addr.1\n  v9001 = ptradd.4 v9000, v2\n  st.device.f32 v9001, v41\n  ret\n}\n";
    t
}

#[test]
fn constant_reads_of_one_address_are_broadcast() {
    let gpu = m1();
    let l = launch(
        Grid::Threads([gpu.cores * 1024, 1, 1]),
        [1024, 1, 1],
        vec![
            buffer(0, "c", Type::F32, zeros(4 * 32)),
            buffer(1, "out", Type::F32, zeros(4 * 1024 * gpu.cores as usize)),
        ],
    );
    let one = timed(&gpu, &constant_reads(true), &l).stats.cycles;
    let each = timed(&gpu, &constant_reads(false), &l).stats.cycles;
    // 32 distinct addresses are 32 transactions on the L1 port instead of one.
    assert!(each as f64 > 10.0 * one as f64, "{one} vs {each}");
}

/// SIMD-group 0 runs a 100-FMA chain, then (with `barrier`) the threadgroup waits at a
/// barrier, then every other SIMD-group runs a 100-FMA chain.
fn barrier_kernel(barrier: bool) -> String {
    let chain = |first: usize, from: &str| {
        let mut c = format!("  v{first} = fma.f32 {from}, v0, v0\n");
        for i in 1..100 {
            c += &format!("  v{} = fma.f32 v{}, v0, v0\n", first + i, first + i - 1);
        }
        c
    };
    format!(
        "kernel k {{\n  param buffer(0) out device type \"float\" size 4 align 4\nbb0:\n  v0 = const.f32 1.0\n  v2 = sreg.thread_position_in_grid.x\n  v3 = sreg.simdgroup_index_in_threadgroup\n  v4 = const.u32 0\n  v5 = cmp.eq.u32 v3, v4\n  br_if v5, bb1, bb2(v0)\nbb1:\n{}  br bb2(v199)\nbb2(v6:f32):\n{}  br_if v5, bb4(v6), bb3\nbb3:\n{}  br bb4(v399)\nbb4(v7:f32):\n  v9000 = buffer_addr.0\n  v9001 = ptradd.4 v9000, v2\n  st.device.f32 v9001, v7\n  ret\n}}\n",
        chain(100, "v0"),
        if barrier {
            "  barrier.threadgroup.threadgroup\n"
        } else {
            ""
        },
        chain(300, "v6"),
    )
}

#[test]
fn a_barrier_holds_every_simd_group_until_the_last_arrives() {
    let gpu = m1();
    let cycles = |barrier| {
        timed(&gpu, &barrier_kernel(barrier), &grid(128, 128))
            .stats
            .cycles
    };
    let chain = 100 * gpu.latency.float_fma as u64;
    let (free, held) = (cycles(false), cycles(true));
    // Without the barrier the chains overlap; with it they run one after the other.
    assert!(free < chain + 200, "{free}");
    assert!(held >= 2 * chain + gpu.latency.barrier as u64, "{held}");
    assert!(held < 2 * chain + 300, "{held}");
}

/// The model files and the functional results agree on every example-sized kernel here:
/// timing never changes what a kernel computes.
#[test]
fn timing_does_not_change_results() {
    let text = fma_chains(3, 8);
    let l = grid(4096, 256);
    let m: Module = module(&text);
    let t = metalsim_sim::run(&m, "k", &l, &m1(), &RunOptions::default()).unwrap();
    let f = run_functional(&m, &l);
    assert_eq!(t.buffers, f.buffers);
}

/// One sparse store (each lane writes one word of its own 32-byte sector) of `v10`, then
/// `chain` dependent FMAs of which the first writes a new value, stored whole at the end.
/// The FMA chain's first result takes the stored value's register (the slot allocator
/// reuses the lowest free slot, and `v10`'s is that once the store has read it).
fn store_then_chain(chain: usize) -> String {
    let mut body = String::from(
        "  v3 = const.u32 8\n  v4 = mul.u32 v2, v3\n  v5 = buffer_addr.0\n  v6 = ptradd.4 v5, v4\n  v10 = add.f32 v0, v0\n  st.device.f32 v6, v10\n  v11 = fma.f32 v0, v0, v0\n",
    );
    for i in 1..chain {
        body += &format!("  v{} = fma.f32 v{}, v0, v0\n", 11 + i, 10 + i);
    }
    kernel(&body, 10 + chain)
}

#[test]
fn a_store_that_reads_its_registers_at_leave_holds_the_next_write_of_them() {
    let mut gpu = model("h100");
    // A slow store path, so that the store is still in it when the chain starts.
    gpu.memory.store_sector_cycles = Some(100.0);
    gpu.memory.store_reads_at_leave = None;
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![buffer(0, "out", Type::F32, zeros(4 * 8 * 32))],
    );
    let chain = 100;
    let at_issue = timed(&gpu, &store_then_chain(chain), &l);
    gpu.memory.store_reads_at_leave = Some(true);
    let at_leave = timed(&gpu, &store_then_chain(chain), &l);
    assert_eq!(at_issue.buffers, at_leave.buffers);
    // Read at issue, the chain runs while the store is in the path (3,200 cycles and
    // more); read as it leaves, the chain starts only then.
    let fma = gpu.latency.float_fma as u64;
    let extra = at_leave.stats.cycles - at_issue.stats.cycles;
    assert!(
        extra >= (chain as u64 - 1) * fma,
        "the chain of {chain} waited {extra} cycles more"
    );
}

#[test]
fn a_load_waits_for_a_full_store_path_when_loads_share_it() {
    let mut gpu = model("h100");
    // One place, and a slow path, so that the sparse store fills it for 3,200 cycles.
    gpu.memory.store_queue = Some(1);
    gpu.memory.store_sector_cycles = Some(100.0);
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![buffer(0, "out", Type::F32, zeros(4 * 8 * 32))],
    );
    // A sparse store (each lane one word of its own sector), then a dense load of
    // another part of the buffer and a chain of FMAs from its value, which the final
    // store takes (that store waits for the sparse one to leave the path either way).
    let chain = 1000;
    let mut body = String::from(
        "  v3 = const.u32 8\n  v4 = mul.u32 v2, v3\n  v5 = buffer_addr.0\n  v6 = ptradd.4 v5, v4\n  v10 = add.f32 v0, v0\n  st.device.f32 v6, v10\n  v7 = ptradd.4 v5, v2\n  v11 = ld.device.f32 v7\n",
    );
    for i in 0..chain {
        body += &format!("  v{} = fma.f32 v{}, v0, v0\n", 12 + i, 11 + i);
    }
    // The stored value stays live to the end, so that no result takes its register
    // (which would hold the SIMD-group until the store leaves either way).
    body += &format!("  v{} = fma.f32 v{}, v10, v0\n", 12 + chain, 11 + chain);
    let text = kernel(&body, 12 + chain);
    gpu.memory.store_path_loads = None;
    let apart = timed(&gpu, &text, &l);
    gpu.memory.store_path_loads = Some(true);
    let shared = timed(&gpu, &text, &l);
    assert_eq!(apart.buffers, shared.buffers);
    // The chain (4,000 cycles) outlasts the store's time in the path (32 sectors at 100
    // cycles), so the run ends with it: sharing the path, it starts once the store has
    // left, about 3,200 cycles later than apart.
    let extra = shared.stats.cycles - apart.stats.cycles;
    assert!(
        (3000..=3300).contains(&extra),
        "the load waited {extra} cycles more ({} against {})",
        shared.stats.cycles,
        apart.stats.cycles
    );
}
