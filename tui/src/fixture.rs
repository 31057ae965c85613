//! Synthetic traces for the tests: a small kernel with a lane-parity branch, a barrier,
//! counters over a few dozen bins on four cores, and a SIMD-group recording; and the odd
//! cases (an empty trace, lines out of range).

use metalsim_traces::{
    Bin, Counters, InstProfile, LevelTraffic, LineProfile, MemoryTraffic, ModelInfo,
    OccupancyReport, Peaks, Profile, RecordedStep, RegisterValues, Report, SimdgroupRecording,
    SourceFile, StallReason, TRACE_FORMAT, TRACE_VERSION, ThreadgroupSpan, Trace,
};

/// Bins in [`trace`].
pub const BINS: usize = 40;

const CORES: u32 = 4;
const BIN_CYCLES: u64 = 100;

const SOURCE: &str = "\
kernel void parity(device float* out [[buffer(0)]],
                   uint id [[thread_position_in_grid]],
                   uint lane [[thread_index_in_simdgroup]])
{
    float x = out[id];
    if (lane % 2 == 0) {
        x = x * 2.0f;
    } else {
        x = x + 1.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[id] = x;
}
";

/// One instruction of the fixture: pc, block, text, class, line, reconvergence.
const INSTRUCTIONS: [(&str, &str, &str, u32, bool); 12] = [
    ("bb0", "v0 = buffer_addr.0", "control", 1, false),
    (
        "bb0",
        "v1 = sreg.thread_position_in_grid.x",
        "control",
        2,
        false,
    ),
    ("bb0", "v2 = ptradd.4 v0, v1", "int_alu", 5, false),
    ("bb0", "v3 = ld.device.f32 v2", "device_memory", 5, false),
    (
        "bb0",
        "v4 = sreg.thread_index_in_simdgroup",
        "control",
        3,
        false,
    ),
    ("bb0", "v5 = and.u32 v4, 1", "int_alu", 6, false),
    ("bb0", "br_if v5, bb2, bb1", "control", 6, false),
    ("bb1", "v6 = fmul.f32 v3, 2.0", "float_alu", 7, false),
    ("bb2", "v7 = fadd.f32 v3, 1.0", "float_alu", 9, false),
    ("bb3", "v8 = phi v6, v7", "control", 11, true),
    ("bb3", "barrier.threadgroup", "barrier", 11, false),
    ("bb3", "st.device.f32 v2, v8", "device_memory", 12, false),
];

fn stalls(seed: u64) -> Vec<u64> {
    StallReason::ALL
        .iter()
        .enumerate()
        .map(|(i, _)| (seed * (i as u64 + 3)) % 97)
        .collect()
}

fn level(bytes: u64) -> LevelTraffic {
    LevelTraffic {
        read_bytes: bytes * 2 / 3,
        write_bytes: bytes / 3,
        hits: bytes / 128,
        misses: bytes / 512,
    }
}

fn bin(i: usize) -> Bin {
    // A ramp up, a plateau and a tail, so charts have a shape.
    let load = match i {
        0..=4 => i as f64 / 5.0,
        5..=29 => 1.0,
        _ => (BINS - i) as f64 / 10.0,
    };
    let issued = (load * 600.0) as u64;
    Bin {
        start: i as u64 * BIN_CYCLES,
        resident_simdgroups: load * 40.0,
        resident_threadgroups: load * 10.0,
        issued: vec![issued / 2, issued / 4, issued / 4, 0],
        active_lanes: issued * 24,
        stalls: stalls(i as u64),
        memory: MemoryTraffic {
            requested: level(issued * 64),
            l1: level(issued * 64),
            l2: level(issued * 16),
            slc: level(issued * 8),
            dram: level(issued * 4),
            threadgroup_accesses: issued / 8,
            bank_conflict_replays: issued / 32,
            atomics: 0,
        },
        core_issued: (0..CORES as u64).map(|c| issued * (c + 1) / 10).collect(),
        core_resident_simdgroups: (0..CORES).map(|c| load * 10.0 - c as f64).collect(),
    }
}

fn instruction(pc: usize) -> InstProfile {
    let (block, text, class, line, reconvergence) = INSTRUCTIONS[pc];
    let executions = if block == "bb1" || block == "bb2" {
        64
    } else {
        128
    };
    InstProfile {
        pc: pc as u32,
        block: block.to_string(),
        text: text.to_string(),
        class: class.to_string(),
        file: 0,
        line,
        col: 5,
        reconvergence,
        executions,
        active_lanes: if block == "bb1" || block == "bb2" {
            executions * 16
        } else {
            executions * 32
        },
        issue_cycles: executions * (1 + pc as u64 % 3),
        stalls: stalls(pc as u64 * 7 + 1),
        bytes: if class == "device_memory" {
            executions * 128
        } else {
            0
        },
        transactions: if class == "device_memory" {
            executions
        } else {
            0
        },
        divergent: if text.starts_with("br_if") {
            executions
        } else {
            0
        },
    }
}

fn lines(instructions: &[InstProfile]) -> Vec<LineProfile> {
    let mut lines: Vec<LineProfile> = Vec::new();
    for inst in instructions {
        let l = match lines.iter_mut().find(|l| l.line == inst.line) {
            Some(l) => l,
            None => {
                lines.push(LineProfile {
                    file: inst.file,
                    line: inst.line,
                    stalls: vec![0; StallReason::ALL.len()],
                    ..LineProfile::default()
                });
                lines.last_mut().expect("just pushed")
            }
        };
        l.executions += inst.executions;
        l.active_lanes += inst.active_lanes;
        l.issue_cycles += inst.issue_cycles;
        for (s, x) in l.stalls.iter_mut().zip(&inst.stalls) {
            *s += x;
        }
        l.bytes += inst.bytes;
        l.divergent += inst.divergent;
    }
    lines.sort_by_key(|l| (l.file, l.line));
    lines
}

fn lanes(f: impl Fn(u32) -> String) -> Vec<String> {
    (0..32).map(f).collect()
}

fn register(name: &str, ty: &str, f: impl Fn(u32) -> String) -> RegisterValues {
    RegisterValues {
        name: name.to_string(),
        ty: ty.to_string(),
        lanes: lanes(f),
    }
}

fn step(pc: u32, cycle: u64, active: u32, event: Option<&str>) -> RecordedStep {
    RecordedStep {
        pc,
        cycle: Some(cycle),
        active,
        reads: Vec::new(),
        writes: Vec::new(),
        event: event.map(str::to_string),
    }
}

fn recording() -> SimdgroupRecording {
    const EVEN: u32 = 0x5555_5555;
    const ODD: u32 = 0xAAAA_AAAA;
    let mut steps = vec![
        step(0, 10, u32::MAX, None),
        step(1, 12, u32::MAX, None),
        step(2, 14, u32::MAX, None),
        step(3, 16, u32::MAX, None),
        step(4, 90, u32::MAX, None),
        step(5, 92, u32::MAX, None),
        step(
            6,
            94,
            u32::MAX,
            Some("diverged: 16 lanes to bb1, 16 to bb2"),
        ),
        step(7, 100, EVEN, None),
        step(8, 104, ODD, None),
        step(9, 108, u32::MAX, Some("reconverged at bb3: 32 lanes")),
        step(10, 110, u32::MAX, Some("waits at barrier")),
        step(11, 180, u32::MAX, Some("released from barrier")),
    ];
    steps[2].reads = vec![
        register("v0", "ptr.device", |_| "0x1000".to_string()),
        register("v1", "u32", |l| (64 + l).to_string()),
    ];
    steps[2].writes = vec![register("v2", "ptr.device", |l| {
        format!("{:#x}", 0x1000 + 4 * (64 + l))
    })];
    steps[7].reads = vec![register("v3", "f32", |l| format!("{}.5", l))];
    steps[7].writes = vec![register("v6", "f32", |l| format!("{}", 2 * l + 1))];
    steps.push(step(11, 182, u32::MAX, Some("exited")));
    SimdgroupRecording {
        threadgroup: [2, 0, 0],
        simdgroup: 1,
        steps,
        truncated: false,
    }
}

/// A trace of the parity kernel on a four-core model, with a recording.
pub fn trace() -> Trace {
    let instructions: Vec<InstProfile> = (0..INSTRUCTIONS.len()).map(instruction).collect();
    let bins: Vec<Bin> = (0..BINS).map(bin).collect();
    let mut memory = MemoryTraffic::default();
    let mut total_stalls = vec![0; StallReason::ALL.len()];
    let mut issued = vec![0; 4];
    for b in &bins {
        memory.add(&b.memory);
        for (t, s) in total_stalls.iter_mut().zip(&b.stalls) {
            *t += s;
        }
        for (t, s) in issued.iter_mut().zip(&b.issued) {
            *t += s;
        }
    }
    let cycles = BINS as u64 * BIN_CYCLES - 40;
    Trace {
        format: TRACE_FORMAT.to_string(),
        version: TRACE_VERSION,
        metalsim_version: "0.1.0".to_string(),
        model: ModelInfo {
            name: "tiny4".to_string(),
            display_name: "Tiny test GPU (4 cores)".to_string(),
            cores: CORES,
            clock_mhz: 1000.0,
            schedulers_per_core: 4,
            issue_width: 1,
            max_simdgroups_per_core: 24,
            threadgroup_wavefront_bytes: 128,
            peaks: Peaks {
                l1_gb_per_s: 4000.0,
                l2_gb_per_s: 1000.0,
                slc_gb_per_s: 500.0,
                dram_gb_per_s: 100.0,
                threadgroup_gb_per_s: 4000.0,
            },
        },
        report: Report {
            kernel: "parity".to_string(),
            model: "tiny4".to_string(),
            cycles,
            time_us: cycles as f64 / 1000.0,
            threadgroups: 16,
            simdgroups: 128,
            simd_instructions: 1408,
            thread_instructions: 1408 * 28,
            simd_efficiency: 0.875,
            grid: [4096, 1, 1],
            threadgroup_size: [256, 1, 1],
            timing: "full".to_string(),
            occupancy: Some(OccupancyReport {
                theoretical: 1.0,
                achieved: 0.62,
                limiter: "threads".to_string(),
                threadgroups_per_core: 3,
                registers_per_thread: 12.0,
            }),
            ..Report::default()
        },
        profile: Profile {
            classes: ["float_alu", "int_alu", "device_memory", "barrier"]
                .map(String::from)
                .to_vec(),
            schedulers_per_core: 4,
            counters: Counters {
                bin_cycles: BIN_CYCLES,
                cores: CORES,
                bins,
            },
            lines: lines(&instructions),
            instructions,
            memory,
            stalls: total_stalls,
            issued,
            threadgroup_spans: vec![ThreadgroupSpan {
                position: [0, 0, 0],
                core: 0,
                start: 0,
                end: 500,
            }],
            threadgroup_spans_dropped: 0,
        },
        sources: vec![SourceFile {
            path: "parity.metal".to_string(),
            text: SOURCE.to_string(),
        }],
        isa: INSTRUCTIONS
            .iter()
            .map(|i| format!("  {}\n", i.1))
            .collect(),
        recording: Some(recording()),
    }
}

/// A trace with nothing in it: no bins, no sources, no instructions, zero cycles.
pub fn empty() -> Trace {
    Trace {
        format: TRACE_FORMAT.to_string(),
        version: TRACE_VERSION,
        metalsim_version: "0.1.0".to_string(),
        model: ModelInfo::default(),
        report: Report::default(),
        profile: Profile::default(),
        sources: Vec::new(),
        isa: String::new(),
        recording: None,
    }
}

/// [`trace`] with costs on lines the source does not have, an instruction naming a file
/// that does not exist, short per-core arrays and a recording step with an unknown pc.
pub fn out_of_range() -> Trace {
    let mut t = trace();
    t.profile.lines[0].line = 500;
    t.profile.lines[1].file = 9;
    t.profile.instructions[0].file = 7;
    t.profile.instructions[1].line = 0;
    t.profile.instructions[2].stalls.clear();
    t.profile.counters.bins[3].core_issued.clear();
    t.profile.counters.bins[4].stalls.clear();
    t.profile.counters.bins[5].issued.clear();
    if let Some(r) = &mut t.recording {
        r.steps[1].pc = 999;
        r.steps[2].reads[0].lanes.truncate(3);
    }
    t
}

/// [`trace`] stretched to `bins` bins on `cores` cores, the size of real runs.
pub fn large(bins: usize, cores: u32) -> Trace {
    let mut t = trace();
    t.model.cores = cores;
    t.profile.counters.cores = cores;
    t.profile.counters.bins = (0..bins)
        .map(|i| {
            let mut b = bin(i % BINS);
            b.start = i as u64 * BIN_CYCLES;
            b.core_issued = (0..cores as u64)
                .map(|c| (c * 7 + i as u64) % 500)
                .collect();
            b.core_resident_simdgroups =
                (0..cores).map(|c| ((c as usize + i) % 24) as f64).collect();
            b
        })
        .collect();
    t.report.cycles = bins as u64 * BIN_CYCLES;
    t
}
