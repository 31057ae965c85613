//! A small synthetic trace for the writers' tests: 2 cores at 1000 MHz, 4 bins of 100
//! cycles, two threadgroups, two source lines.

use crate::profile::{
    Bin, Counters, InstProfile, LevelTraffic, LineProfile, MemoryTraffic, Profile, ThreadgroupSpan,
};
use crate::report::Report;
use crate::trace::{ModelInfo, Peaks, SourceFile, TRACE_FORMAT, TRACE_VERSION, Trace};

/// The trace; its report is summarized from its profile.
pub(crate) fn sample_trace() -> Trace {
    let classes: Vec<String> = ["float_alu", "device_memory", "control"]
        .map(String::from)
        .to_vec();
    let bin = |i: u64| {
        let memory = MemoryTraffic {
            dram: LevelTraffic {
                read_bytes: 1000 / (i + 1),
                ..Default::default()
            },
            l1: LevelTraffic {
                read_bytes: 4000,
                write_bytes: 1000,
                hits: 30,
                misses: 10,
            },
            ..Default::default()
        };
        Bin {
            start: i * 100,
            resident_simdgroups: 8.0 - i as f64,
            resident_threadgroups: 2.0,
            issued: vec![40, 10 + i, 5],
            active_lanes: (55 + i) * 24,
            stalls: vec![300, 20, 0, 0, 10, 5, i],
            memory,
            core_issued: vec![30, 25 + i],
            core_resident_simdgroups: vec![4.0, 4.0 - i as f64],
        }
    };
    let bins: Vec<Bin> = (0..4).map(bin).collect();
    let mut memory = MemoryTraffic::default();
    for b in &bins {
        memory.add(&b.memory);
    }
    let sum = |f: &dyn Fn(&Bin) -> &Vec<u64>| {
        let mut total = vec![0u64; f(&bins[0]).len()];
        for b in &bins {
            for (t, x) in total.iter_mut().zip(f(b)) {
                *t += x;
            }
        }
        total
    };
    let issued = sum(&|b| &b.issued);
    let stalls = sum(&|b| &b.stalls);
    let inst = |pc: u32, class: &str, line: u32, executions: u64| InstProfile {
        pc,
        block: "bb0".into(),
        text: format!("v{pc} = op"),
        class: class.into(),
        file: 0,
        line,
        col: 5,
        reconvergence: false,
        executions,
        active_lanes: executions * 24,
        issue_cycles: executions,
        stalls: vec![executions * 2, 1, 0, 0, 0, 0, 0],
        bytes: executions * 128,
        transactions: executions,
        divergent: 0,
    };
    let instructions = vec![
        inst(0, "float_alu", 2, 160),
        inst(1, "device_memory", 3, 46),
        inst(2, "control", 3, 20),
    ];
    let line = |line: u32, of: &[&InstProfile]| LineProfile {
        file: 0,
        line,
        executions: of.iter().map(|i| i.executions).sum(),
        active_lanes: of.iter().map(|i| i.active_lanes).sum(),
        issue_cycles: of.iter().map(|i| i.issue_cycles).sum(),
        stalls: (0..7)
            .map(|r| of.iter().map(|i| i.stalls[r]).sum())
            .collect(),
        bytes: of.iter().map(|i| i.bytes).sum(),
        divergent: 0,
    };
    let lines = vec![
        line(2, &[&instructions[0]]),
        line(3, &[&instructions[1], &instructions[2]]),
    ];
    let profile = Profile {
        classes,
        schedulers_per_core: 4,
        counters: Counters {
            bin_cycles: 100,
            cores: 2,
            bins,
        },
        instructions,
        lines,
        memory,
        stalls,
        issued,
        threadgroup_spans: vec![
            ThreadgroupSpan {
                position: [0, 0, 0],
                core: 0,
                start: 0,
                end: 390,
            },
            ThreadgroupSpan {
                position: [1, 0, 0],
                core: 1,
                start: 100,
                end: 400,
            },
        ],
        threadgroup_spans_dropped: 0,
    };
    let model = ModelInfo {
        name: "m1".into(),
        display_name: "Apple M1 (8-core GPU)".into(),
        cores: 2,
        clock_mhz: 1000.0,
        schedulers_per_core: 4,
        issue_width: 1,
        max_simdgroups_per_core: 24,
        threadgroup_wavefront_bytes: 128,
        peaks: Peaks {
            l1_gb_per_s: 100.0,
            l2_gb_per_s: 50.0,
            slc_gb_per_s: 30.0,
            dram_gb_per_s: 10.0,
            threadgroup_gb_per_s: 200.0,
        },
    };
    let sources = vec![SourceFile {
        path: "k.metal".into(),
        text: "kernel void k(device float* a [[buffer(0)]]) {\n    float x = a[0] * 2.0f;\n    a[1] = x;\n}\n"
            .into(),
    }];
    let mut report = Report {
        kernel: "k".into(),
        model: "m1".into(),
        cycles: 400,
        time_us: 0.4,
        timing: "full".into(),
        ..Report::default()
    };
    crate::summary::summarize(&mut report, &profile, &model, &sources);
    Trace {
        format: TRACE_FORMAT.into(),
        version: TRACE_VERSION,
        metalsim_version: "0.1.0".into(),
        model,
        report,
        profile,
        sources,
        isa: "kernel k() {\n}\n".into(),
        recording: None,
    }
}
