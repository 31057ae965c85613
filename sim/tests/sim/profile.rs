//! The profile of a timed run: every counter checked against values worked out by hand on
//! small kernels, and the books balanced (bins against totals, instructions against
//! `Stats`, resident cycles against issue and stall cycles).

use metalsim_isa::{OpClass, Type};
use metalsim_launch::{Grid, Launch};
use metalsim_sim::{RunOptions, RunOutcome};
use metalsim_traces::{InstProfile, Profile, StallReason};

use crate::common::*;

/// Runs `text` with timing and profiling on M1.
fn profiled(text: &str, l: &Launch) -> (RunOutcome, Profile) {
    profiled_on(text, l, &m1())
}

/// Runs `text` with timing and profiling on `gpu`, and checks the profile's books.
fn profiled_on(text: &str, l: &Launch, gpu: &metalsim_models::Gpu) -> (RunOutcome, Profile) {
    let opts = RunOptions {
        profile: true,
        ..RunOptions::default()
    };
    let mut out =
        metalsim_sim::run(&module(text), "k", l, gpu, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.fault, None);
    let p = out
        .profile
        .take()
        .expect("a profiled timed run has a profile");
    check_books(&out, &p);
    (out, p)
}

/// What every profile must satisfy: bins add up to the totals, instructions to `Stats`,
/// and each SIMD-group's resident cycles to its issue and stall cycles.
fn check_books(out: &RunOutcome, p: &Profile) {
    let s = &out.stats;
    let c = &p.counters;
    assert!(c.bin_cycles >= 16 && c.bin_cycles.is_power_of_two());
    assert!(!c.bins.is_empty() && c.bins.len() <= 4096);
    assert_eq!(c.bins.len() as u64, s.cycles.max(1).div_ceil(c.bin_cycles));
    // Totals are the sums of the bins.
    let mut issued = vec![0u64; p.classes.len()];
    let mut stalls = vec![0u64; StallReason::ALL.len()];
    let mut memory = metalsim_traces::MemoryTraffic::default();
    let (mut lanes, mut resident) = (0u64, 0f64);
    for (k, b) in c.bins.iter().enumerate() {
        assert_eq!(b.start, k as u64 * c.bin_cycles);
        issued.iter_mut().zip(&b.issued).for_each(|(a, x)| *a += x);
        stalls.iter_mut().zip(&b.stalls).for_each(|(a, x)| *a += x);
        memory.add(&b.memory);
        lanes += b.active_lanes;
        let len = c.bin_cycles.min(s.cycles.max(1) - b.start) as f64;
        resident += b.resident_simdgroups * len;
        assert_eq!(b.core_issued.iter().sum::<u64>(), b.simd_instructions());
        let per_core: f64 = b.core_resident_simdgroups.iter().sum();
        assert!((per_core - b.resident_simdgroups).abs() < 1e-6, "bin {k}");
    }
    assert_eq!(issued, p.issued);
    assert_eq!(stalls, p.stalls);
    assert_eq!(memory, p.memory);
    // Against the functional counters: every executed instruction issued, except the
    // address arithmetic folded into memory instructions (run without issue cycles).
    let mut folded = vec![0u64; p.classes.len()];
    for i in p.instructions.iter().filter(|i| i.issue_cycles == 0) {
        let k = p
            .classes
            .iter()
            .position(|c| *c == i.class)
            .expect("a class");
        folded[k] += i.executions;
    }
    for (k, n) in &s.instructions_by_class {
        assert_eq!(
            p.issued[*k as usize] + folded[*k as usize],
            *n,
            "{}",
            k.name()
        );
        assert_eq!(p.classes[*k as usize], k.name());
    }
    assert_eq!(lanes, s.thread_instructions);
    assert_eq!(
        p.instructions.iter().map(|i| i.executions).sum::<u64>(),
        s.simd_instructions
    );
    assert_eq!(
        p.instructions.iter().map(|i| i.active_lanes).sum::<u64>(),
        s.thread_instructions
    );
    assert_eq!(memory.requested.read_bytes, s.device_bytes_read);
    assert_eq!(memory.requested.write_bytes, s.device_bytes_written);
    assert_eq!(memory.dram.bytes(), s.dram_bytes);
    let t = out.timing.as_ref().expect("timed");
    assert_eq!((memory.l1.hits, memory.l1.misses), (t.l1.hits, t.l1.misses));
    assert_eq!((memory.l2.hits, memory.l2.misses), (t.l2.hits, t.l2.misses));
    assert_eq!(memory.bank_conflict_replays, t.bank_conflict_replays);
    // Per instruction, stalls add up to the run's.
    let mut per_inst = vec![0u64; StallReason::ALL.len()];
    for i in &p.instructions {
        per_inst
            .iter_mut()
            .zip(&i.stalls)
            .for_each(|(a, x)| *a += x);
    }
    assert_eq!(per_inst, p.stalls);
    // Every resident cycle of a SIMD-group issued one instruction or stalled.
    let issued_total: u64 = p.issued.iter().sum();
    let busy = issued_total + p.stalls.iter().sum::<u64>();
    assert!(
        (resident - busy as f64).abs() < 1e-6 * busy as f64 + 1e-3,
        "resident {resident} != issued {issued_total} + stalls {:?}",
        p.stalls
    );
    // Lines add up the instructions that have one.
    let with_line: u64 = p
        .instructions
        .iter()
        .filter(|i| i.line != 0)
        .map(|i| i.executions)
        .sum();
    assert_eq!(p.lines.iter().map(|l| l.executions).sum::<u64>(), with_line);
    // One span per threadgroup, on a real core, inside the run.
    assert_eq!(p.threadgroup_spans.len() as u64, s.threadgroups);
    for sp in &p.threadgroup_spans {
        assert!(sp.start < sp.end && sp.end <= s.cycles, "{sp:?}");
        assert!(sp.core < c.cores);
    }
}

/// The instruction whose text starts with `prefix` (the first in pc order).
fn inst<'p>(p: &'p Profile, prefix: &str) -> &'p InstProfile {
    p.instructions
        .iter()
        .find(|i| i.text.starts_with(prefix))
        .unwrap_or_else(|| panic!("no instruction `{prefix}`"))
}

const VECTOR_ADD: &str = r#"file 0 "vector_add.metal"
kernel k {
  param buffer(0) a device readonly type "float" size 4 align 4
  param buffer(1) b device readonly type "float" size 4 align 4
  param buffer(2) out device type "float" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x  @4:5
  v1 = buffer_addr.0
  v2 = ptradd.4 v1, v0  @5:15
  v3 = ld.device.f32 v2  @5:15
  v4 = buffer_addr.1
  v5 = ptradd.4 v4, v0  @5:22
  v6 = ld.device.f32 v5  @5:22
  v7 = add.f32 v3, v6  @5:20
  v8 = buffer_addr.2
  v9 = ptradd.4 v8, v0  @5:5
  st.device.f32 v9, v7  @5:12
  ret  @6:1
}
"#;

fn vector_add(n: usize) -> Launch {
    launch(
        Grid::Threads([n as u32, 1, 1]),
        [256, 1, 1],
        vec![
            buffer(0, "a", Type::F32, f32s(&vec![1.0; n])),
            buffer(1, "b", Type::F32, f32s(&vec![2.0; n])),
            buffer(2, "out", Type::F32, zeros(4 * n)),
        ],
    )
}

#[test]
fn a_vector_add_moves_three_times_four_bytes_per_element() {
    let n = 1 << 16;
    let (out, p) = profiled(VECTOR_ADD, &vector_add(n));
    let n = n as u64;
    let m = &p.memory;
    assert_eq!(
        (m.requested.read_bytes, m.requested.write_bytes),
        (8 * n, 4 * n)
    );
    // Every line is read once from DRAM and written back once at the end.
    assert_eq!((m.dram.read_bytes, m.dram.write_bytes), (8 * n, 4 * n));
    assert_eq!(m.dram.bytes(), 12 * n);
    // Each load and store of 32 consecutive floats is one 128-byte line through L1.
    let lines = n / 32;
    assert_eq!((m.l1.read_bytes, m.l1.write_bytes), (8 * n, 4 * n));
    assert_eq!((m.l1.hits, m.l1.misses), (0, 2 * lines));
    assert_eq!((m.l2.read_bytes, m.l2.write_bytes), (8 * n, 4 * n));
    assert_eq!(
        (m.threadgroup_accesses, m.bank_conflict_replays, m.atomics),
        (0, 0, 0)
    );
    let ld = inst(&p, "v3 = ld.device.f32 v2");
    assert_eq!(
        (ld.executions, ld.transactions, ld.bytes),
        (n / 32, lines, 4 * n)
    );
    assert_eq!((ld.line, ld.col, ld.block.as_str()), (5, 15, "bb0"));
    assert_eq!(ld.class, "device_memory");
    let st = inst(&p, "st.device.f32 v9, v7");
    assert_eq!((st.transactions, st.bytes), (lines, 4 * n));
    assert_eq!(inst(&p, "ret").text, "ret");
    // Every instruction ran once per SIMD-group with all lanes; all but the address
    // computations (folded into the loads and the store) issued.
    for i in &p.instructions {
        assert_eq!(i.executions, n / 32, "{}", i.text);
        assert_eq!(i.active_lanes, n, "{}", i.text);
        if i.text.contains("ptradd") {
            assert_eq!(i.issue_cycles, 0, "{}", i.text);
        } else {
            assert!(i.issue_cycles >= i.executions, "{}", i.text);
        }
    }
    // Line 5: two loads, two address computations, the add, one more address, the
    // store.
    let line5 = p.lines.iter().find(|l| l.line == 5).unwrap();
    assert_eq!(line5.executions, 7 * n / 32);
    assert_eq!(line5.bytes, 12 * n);
    assert_eq!(line5.simd_efficiency(), 1.0);
    // Loads wait for DRAM: memory is the first stall reason.
    let worst = StallReason::ALL
        .iter()
        .max_by_key(|r| p.stalls[r.index()])
        .unwrap();
    assert_eq!(*worst, StallReason::Memory, "{:?}", p.stalls);
    assert!(p.stalls[StallReason::Drain.index()] > 0, "the stores drain");
    assert_eq!(out.stats.threadgroups, n / 256);
    assert_eq!(p.schedulers_per_core, m1().schedulers_per_core);
}

/// Even lanes take bb1, odd lanes bb2; both reconverge at bb3 (source lines 3-10).
const PARITY: &str = r#"file 0 "parity.metal"
kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x  @3:5
  v1 = const.u32 1
  v2 = and.u32 v0, v1  @4:9
  v3 = const.u32 0
  v4 = cmp.eq.u32 v2, v3  @4:13
  br_if v4, bb1, bb2  @4:5
bb1:
  v5 = mul.u32 v0, v0  @5:13
  v6 = add.u32 v5, v1  @5:17
  br bb3(v6)  @5:9
bb2:
  v7 = shl.u32 v0, v1  @7:13
  br bb3(v7)  @7:9
bb3(v8:u32):
  v9 = buffer_addr.0
  v10 = ptradd.4 v9, v0  @9:5
  st.device.u32 v10, v8  @9:12
  ret  @10:1
}
"#;

/// [`PARITY`] over `n` threads in threadgroups of 128.
fn parity_launch(n: u64) -> Launch {
    launch(
        Grid::Threads([n as u32, 1, 1]),
        [128, 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * n as usize))],
    )
}

#[test]
fn a_lane_parity_branch_runs_each_arm_at_half_efficiency() {
    let n = 1024u64;
    let l = parity_launch(n);
    let (out, p) = profiled(PARITY, &l);
    let sgs = n / 32;
    let branch = inst(&p, "br_if v4, bb1, bb2");
    assert_eq!((branch.executions, branch.divergent), (sgs, sgs));
    assert_eq!(branch.active_lanes, n);
    for arm in ["v5 = mul.u32", "v6 = add.u32", "v7 = shl.u32"] {
        let i = inst(&p, arm);
        assert_eq!((i.executions, i.active_lanes), (sgs, 16 * sgs), "{arm}");
    }
    for line in [5, 7] {
        let l = p.lines.iter().find(|l| l.line == line).unwrap();
        assert_eq!(l.simd_efficiency(), 0.5, "line {line}");
        assert_eq!(l.divergent, 0);
    }
    let l4 = p.lines.iter().find(|l| l.line == 4).unwrap();
    assert_eq!((l4.simd_efficiency(), l4.divergent), (1.0, sgs));
    // The lanes reconverge at bb3's first instruction, and only there.
    let reconverging: Vec<&str> = p
        .instructions
        .iter()
        .filter(|i| i.reconvergence)
        .map(|i| i.block.as_str())
        .collect();
    assert_eq!(reconverging, ["bb3"]);
    assert_eq!(inst(&p, "v10 = ptradd.4").block, "bb3");
    // Branches wait `latency.control` before the next instruction.
    assert!(p.stalls[StallReason::Control.index()] > 0);
    // Each arm's instructions: half the lanes; the run's efficiency sits in between.
    let eff = out.stats.thread_instructions as f64 / (32.0 * out.stats.simd_instructions as f64);
    let binned: u64 = p.counters.bins.iter().map(|b| b.active_lanes).sum();
    assert_eq!(binned, out.stats.thread_instructions);
    assert!(eff > 0.5 && eff < 1.0, "{eff}");
}

/// SIMD-group 0 of each threadgroup of 4 runs `chain` dependent FMAs before a barrier
/// that the other three reach at once.
fn barrier_kernel(chain: usize) -> String {
    let mut body = String::from("  v20 = fma.f32 v10, v10, v10\n");
    for i in 1..chain {
        body += &format!("  v{} = fma.f32 v{}, v10, v10\n", 20 + i, 19 + i);
    }
    format!(
        r#"kernel k {{
  param buffer(0) out device type "float" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = sreg.simdgroup_index_in_threadgroup
  v2 = const.u32 0
  v3 = cmp.eq.u32 v1, v2
  v10 = const.f32 1.0
  br_if v3, bb1, bb2(v10)
bb1:
{body}  br bb2(v{last})
bb2(v11:f32):
  barrier.threadgroup.threadgroup
  v12 = buffer_addr.0
  v13 = ptradd.4 v12, v0
  st.device.f32 v13, v11
  ret
}}
"#,
        last = 19 + chain
    )
}

#[test]
fn simd_groups_waiting_at_a_barrier_stall_on_it() {
    let chain = 200;
    let l = launch(
        Grid::Threads([128, 1, 1]),
        [128, 1, 1],
        vec![buffer(0, "out", Type::F32, zeros(4 * 128))],
    );
    let (_, p) = profiled(&barrier_kernel(chain), &l);
    // Three SIMD-groups wait for the fourth's chain of FMAs.
    let chain_cycles = chain as u64 * m1().latency.float_fma as u64;
    let barrier = p.stalls[StallReason::Barrier.index()];
    assert!(
        barrier >= 3 * (chain_cycles - 100) && barrier <= 3 * (chain_cycles + 100),
        "barrier stalls {barrier}, chain {chain_cycles}"
    );
    // Charged to the instruction after the barrier, which each SIMD-group waited to issue.
    let after = inst(&p, "v12 = buffer_addr.0");
    assert_eq!(after.stalls[StallReason::Barrier.index()], barrier);
    // The chain itself waits on ALU results.
    let alu = p.stalls[StallReason::Alu.index()];
    assert!(alu >= chain_cycles - chain as u64 - 100, "alu {alu}");
}

#[test]
fn a_dependent_load_chain_stalls_on_memory() {
    // Each thread follows `hops` pointers: idx = next[idx].
    let hops = 8;
    let mut body = String::new();
    for h in 0..hops {
        let (idx, addr, next) = (10 + 2 * h, 11 + 2 * h, 12 + 2 * h);
        body += &format!("  v{addr} = ptradd.4 v1, v{idx}\n  v{next} = ld.device.u32 v{addr}\n");
    }
    let last = 10 + 2 * hops;
    let text = format!(
        r#"kernel k {{
  param buffer(0) next device readonly type "uint" size 4 align 4
  param buffer(1) out device type "uint" size 4 align 4
bb0:
  v10 = sreg.thread_position_in_grid.x
  v1 = buffer_addr.0
{body}  v2 = buffer_addr.1
  v3 = ptradd.4 v2, v10
  st.device.u32 v3, v{last}
  ret
}}
"#
    );
    let n = 1u32 << 16;
    // A stride of 4097 elements: every hop of every SIMD-group reads lines nobody read.
    let next: Vec<u32> = (0..n).map(|i| (i + 4097) % n).collect();
    let l = launch(
        Grid::Threads([256, 1, 1]),
        [256, 1, 1],
        vec![
            buffer(0, "next", Type::U32, u32s(&next)),
            buffer(1, "out", Type::U32, zeros(4 * 256)),
        ],
    );
    let (out, p) = profiled(&text, &l);
    let memory = p.stalls[StallReason::Memory.index()];
    let total: u64 = p.stalls.iter().sum::<u64>() + out.stats.simd_instructions;
    assert!(
        memory * 10 >= total * 8,
        "memory stalls {memory} of {total} resident cycles: {:?}",
        p.stalls
    );
    // Each of the 8 SIMD-groups waits `hops` DRAM round trips (less the cycle of the
    // load itself and a few of queueing differences).
    let dram = m1().memory.dram.latency as u64;
    assert!(
        memory >= 8 * hops as u64 * (dram - 10) && memory <= 8 * (hops as u64 + 1) * dram,
        "{memory} {:?}",
        p.stalls
    );
    // The load of each hop after the first waits for the load before it (its address
    // computation is folded into it), and so does the store.
    let waits = p
        .instructions
        .iter()
        .filter(|i| i.text.contains("ld.device") && i.stalls[StallReason::Memory.index()] > 0)
        .count();
    assert_eq!(waits, hops - 1);
    assert!(inst(&p, "st.device.u32").stalls[StallReason::Memory.index()] > 0);
}

#[test]
fn threadgroup_memory_counts_accesses_and_bank_conflicts() {
    // Each lane stores to word 32 * lane of a threadgroup array: a 32-way conflict.
    let text = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
  tgalloc 0 size 4096 align 16 "t"
bb0:
  v0 = sreg.thread_index_in_simdgroup
  v1 = const.u32 32
  v2 = mul.u32 v0, v1
  v3 = tg_addr.0
  v4 = ptradd.4 v3, v2
  st.threadgroup.u32 v4, v0
  v5 = ld.threadgroup.u32 v4
  v6 = sreg.thread_position_in_grid.x
  v7 = buffer_addr.0
  v8 = ptradd.4 v7, v6
  st.device.u32 v8, v5
  ret
}
"#;
    let l = launch(
        Grid::Threads([64, 1, 1]),
        [32, 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * 64))],
    );
    let (out, p) = profiled(text, &l);
    // Lane i writes byte 128 * i: the most loaded bank takes that many wavefronts.
    let mem = m1().memory;
    let (banks, bank_bytes) = (
        mem.threadgroup_banks as u64,
        mem.threadgroup_bank_bytes as u64,
    );
    let mut per_bank = vec![0u64; banks as usize];
    for lane in 0..32u64 {
        per_bank[((128 * lane / bank_bytes) % banks) as usize] += 1;
    }
    let waves = *per_bank.iter().max().unwrap();
    assert!(waves > 1);
    assert_eq!(p.memory.threadgroup_accesses, 2 * 2);
    assert_eq!(p.memory.bank_conflict_replays, 2 * 2 * (waves - 1));
    let st = inst(&p, "st.threadgroup.u32");
    assert_eq!((st.transactions, st.bytes), (2 * waves, 0));
    assert_eq!(
        out.timing.unwrap().bank_conflict_replays,
        p.memory.bank_conflict_replays
    );
    assert_eq!(
        p.issued[OpClass::ThreadgroupMemory as usize],
        out.stats
            .instructions_by_class
            .iter()
            .find(|(k, _)| *k == OpClass::ThreadgroupMemory)
            .unwrap()
            .1
    );
}

#[test]
fn long_runs_keep_a_few_thousand_bins_at_most() {
    let n = 1 << 20;
    let (out, p) = profiled(VECTOR_ADD, &vector_add(n));
    let bins = p.counters.bins.len();
    assert!(
        bins <= 4096 && bins > 1024,
        "{bins} bins of {}",
        p.counters.bin_cycles
    );
    // The cores were busy: resident SIMD-groups on every core in the middle of the run.
    let mid = &p.counters.bins[bins / 2];
    assert!(
        mid.core_resident_simdgroups.iter().all(|&r| r > 0.0),
        "{mid:?}"
    );
    assert!(mid.resident_threadgroups > 0.0);
    assert_eq!(p.memory.dram.bytes(), 12 * n as u64);
    assert_eq!(out.stats.dram_bytes, 12 * n as u64);
}

#[test]
fn no_profile_unless_asked_for_with_timing() {
    let m = module(VECTOR_ADD);
    let l = vector_add(256);
    let plain = metalsim_sim::run(&m, "k", &l, &m1(), &RunOptions::default()).unwrap();
    assert_eq!(plain.profile, None);
    let untimed = RunOptions {
        timing: false,
        profile: true,
        ..RunOptions::default()
    };
    let untimed = metalsim_sim::run(&m, "k", &l, &m1(), &untimed).unwrap();
    assert_eq!(untimed.profile, None);
    // Profiling changes no result and no cycle.
    let (profiled, _) = profiled(VECTOR_ADD, &l);
    assert_eq!(profiled.stats, plain.stats);
    assert_eq!(profiled.buffers, plain.buffers);
    assert_eq!(profiled.timing, plain.timing);
}

#[test]
fn a_busy_pipeline_holds_back_the_next_instruction() {
    // One SIMD-group, 16 independent integer multiplies: each after the first waits for
    // the multiplier to take an instruction again.
    let muls = 16;
    let mut body = String::new();
    for i in 0..muls {
        body += &format!("  v{} = mul.u32 v0, v0\n", 10 + i);
    }
    let text = format!(
        r#"kernel k {{
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
{body}  v1 = buffer_addr.0
  v2 = ptradd.4 v1, v0
  st.device.u32 v2, v{last}
  ret
}}
"#,
        last = 9 + muls
    );
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * 32))],
    );
    let (_, p) = profiled(&text, &l);
    let busy = m1().issue.int_mul as u64;
    let pipeline: Vec<u64> = p
        .instructions
        .iter()
        .filter(|i| i.text.contains("mul.u32"))
        .map(|i| i.stalls[StallReason::Pipeline.index()])
        .collect();
    let mut expect = vec![busy - 1; muls];
    expect[0] = 0;
    assert_eq!(pipeline, expect);
    for i in p.instructions.iter().filter(|i| i.text.contains("mul.u32")) {
        assert_eq!(i.issue_cycles, busy, "{}", i.text);
    }
}

#[test]
fn a_run_stopped_by_a_fault_still_has_its_profile() {
    // Thread 40 stores far past the end of its buffer.
    let text = r#"kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = const.u32 40
  v2 = cmp.eq.u32 v0, v1
  v3 = const.u32 1000000
  v4 = select.u32 v2, v3, v0
  v5 = buffer_addr.0
  v6 = ptradd.4 v5, v4
  st.device.u32 v6, v0
  ret
}
"#;
    let l = launch(
        Grid::Threads([256, 1, 1]),
        [64, 1, 1],
        vec![buffer(0, "out", Type::U32, zeros(4 * 256))],
    );
    let opts = RunOptions {
        profile: true,
        ..RunOptions::default()
    };
    let out = metalsim_sim::run(&module(text), "k", &l, &m1(), &opts).unwrap();
    assert!(out.fault.is_some());
    let p = out.profile.expect("a profile up to the fault");
    assert_eq!(
        p.instructions.iter().map(|i| i.executions).sum::<u64>(),
        out.stats.simd_instructions
    );
    // Folded address arithmetic runs without issuing (no issue cycles).
    let folded: u64 = p
        .instructions
        .iter()
        .filter(|i| i.issue_cycles == 0)
        .map(|i| i.executions)
        .sum();
    assert_eq!(
        p.issued.iter().sum::<u64>() + folded,
        out.stats.simd_instructions
    );
    assert!(!p.threadgroup_spans.is_empty());
}

#[test]
fn reconvergence_instructions_are_in_the_profile_with_the_branches_that_bring_them_about() {
    let n = 1024u64;
    let l = parity_launch(n);
    let mut gpu = m1();
    gpu.reconvergence_instruction = Some(true);
    // `profiled_on` checks the books: the profile's issues, lanes and per-instruction
    // counts against the run's counters, which count the reconvergence instructions.
    let (out, p) = profiled_on(PARITY, &l, &gpu);
    let (plain, _) = profiled(PARITY, &l);
    let sgs = n / 32;
    assert_eq!(
        out.stats.simd_instructions,
        plain.stats.simd_instructions + 2 * sgs
    );
    // Each arm's last branch brings its 16 lanes to bb3: one instruction more each.
    for arm in ["br bb3(v6)", "br bb3(v7)"] {
        let i = inst(&p, arm);
        assert_eq!((i.executions, i.active_lanes), (2 * sgs, 32 * sgs), "{arm}");
    }
}

/// Six stores of one value per thread, each lane's word `k` of its own 32-byte sector:
/// every store writes 32 sectors sparsely, and no register a store reads is written
/// again.
fn six_sparse_stores() -> String {
    let mut body = String::from(
        "kernel k {\n  param buffer(0) out device type \"float\" size 4 align 4\nbb0:\n  v0 = const.f32 1.0\n  v2 = sreg.thread_position_in_grid.x\n  v3 = const.u32 8\n  v4 = mul.u32 v2, v3\n  v5 = buffer_addr.0\n  v6 = ptradd.4 v5, v4\n  v10 = add.f32 v0, v0\n  st.device.f32 v6, v10\n",
    );
    for k in 1..6 {
        body += &format!(
            "  v{c} = const.i64 {off}\n  v{a} = ptradd.1 v6, v{c}\n  st.device.f32 v{a}, v10\n",
            c = 20 + 2 * k,
            a = 21 + 2 * k,
            off = 4 * k
        );
    }
    body + "  ret\n}\n"
}

/// Cycles one sparse store of `six_sparse_stores` spends in the store path of
/// [`five_sparse_storers`]: 32 sectors at 100 cycles.
const STORE: u64 = 32 * 100;

/// Five threadgroups of one SIMD-group each run `six_sparse_stores` on one core with a
/// store path of one place and slow stores (`STORE` cycles each), admitted one after
/// another and all soon waiting for a place; the fifth shares a scheduler with the
/// first (slot 4 of four schedulers), which looks for a SIMD-group to issue before the
/// others in every cycle. With the store path's starvation clock of period
/// `starve_cycles`. Returns the profile and each threadgroup's end, by position.
fn five_sparse_storers(starve_cycles: Option<u32>) -> (Profile, Vec<u64>) {
    let mut gpu = metalsim_models::builtin("h100").unwrap();
    gpu.cores = 1;
    gpu.schedulers_per_core = 4;
    gpu.memory.store_sector_cycles = Some(100.0);
    gpu.memory.store_queue = Some(1);
    gpu.memory.store_reads_at_leave = Some(true);
    gpu.memory.store_starve_cycles = starve_cycles;
    let l = launch(
        Grid::Threads([160, 1, 1]),
        [32, 1, 1],
        vec![buffer(0, "out", Type::F32, zeros(4 * 8 * 160))],
    );
    let (_, p) = profiled_on(&six_sparse_stores(), &l, &gpu);
    let end = (0..5)
        .map(|x| {
            p.threadgroup_spans
                .iter()
                .find(|s| s.position[0] == x)
                .expect("every threadgroup ran")
                .end
        })
        .collect();
    (p, end)
}

#[test]
fn a_freed_place_in_the_store_path_goes_to_the_oldest_simd_group_waiting() {
    let (p, end) = five_sparse_storers(None);
    // Each place goes to the oldest waiting: the threadgroups store, and finish, in the
    // order they were admitted, each one's six stores after the one before.
    for x in 0..4 {
        assert!(
            end[x + 1] >= end[x] + 5 * STORE,
            "{:?}",
            p.threadgroup_spans
        );
    }
    // Waiting for a place counts as waiting on memory.
    assert!(p.stalls[StallReason::Memory as usize] >= 4 * 6 * STORE);
}

#[test]
fn a_simd_group_starved_of_a_place_for_a_whole_period_goes_first() {
    // With the store path's starvation clock the youngest, waiting from the start, takes
    // places from the second tick on, while older ones still store, so it has fewer of
    // its six stores left once the fourth is done.
    let (p, end) = five_sparse_storers(Some(8192));
    // Oldest first, the fifth would end its six stores after the fourth's last, five
    // stores or more later (the test above).
    assert!(end[4] < end[3] + 5 * STORE, "{:?}", p.threadgroup_spans);
}
