//! The profile's figures as the report gives them: issue, stalls, memory per level and the
//! costliest source lines ([`summarize`] fills them into a [`Report`]).
//!
//! Everything here is computed from a [`Profile`], the model's [`ModelInfo`] and the
//! sources alone, so a trace file reproduces its report exactly.

use serde::{Deserialize, Serialize};

use crate::limiter;
use crate::profile::{LevelTraffic, LineProfile, Profile, StallReason};
use crate::report::Report;
use crate::trace::{ModelInfo, SourceFile};

/// How many of the costliest source lines `report.json` lists.
pub const REPORTED_LINES: usize = 10;

/// One instruction class's share of the issue slots and of its pipeline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassIssue {
    /// The timing class (`float_alu`).
    pub class: String,
    /// SIMD-group instructions of the class issued.
    pub issued: u64,
    /// `issued` as a fraction of all instructions issued.
    pub share: f64,
    /// `issued` as a fraction of the issue slots (`IssueReport::slots`).
    pub slot_share: f64,
    /// Cycles the class kept its pipeline busy, as a fraction of the pipeline cycles of
    /// the run (`cycles × cores × schedulers per core`, one pipeline of each kind per
    /// scheduler): the ALU utilisation of the class.
    pub pipe_busy: f64,
}

/// Instruction issue over the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IssueReport {
    /// Issue slots of the run: `cycles × cores × schedulers per core`.
    pub slots: u64,
    /// SIMD-group instructions issued / `slots`.
    pub slot_utilisation: f64,
    /// Every class that issued, most issued first.
    pub classes: Vec<ClassIssue>,
}

/// One stall reason's cycles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StallShare {
    /// The reason (`memory`, `alu`, `barrier`, `pipeline`, `not_selected`, `control`,
    /// `drain`).
    pub reason: String,
    /// SIMD-group × cycles charged to it.
    pub cycles: u64,
    /// `cycles` as a fraction of all stall cycles.
    pub share: f64,
    /// `cycles` as a fraction of `StallsReport::resident_cycles`.
    pub of_resident: f64,
}

/// Why resident SIMD-groups did not issue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StallsReport {
    /// SIMD-group × cycles the SIMD-groups were resident: instructions issued plus stall
    /// cycles.
    pub resident_cycles: u64,
    /// Stall cycles, all reasons.
    pub total: u64,
    /// Per reason, in a fixed order (memory, alu, barrier, pipeline, not_selected,
    /// control, drain).
    pub reasons: Vec<StallShare>,
}

/// Traffic and bandwidth at one memory level.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryLevelReport {
    /// `requested` (what the lanes asked for), `l1`, `l2`, `slc` or `dram`.
    pub level: String,
    /// Bytes read from the level.
    pub read_bytes: u64,
    /// Bytes written to it.
    pub write_bytes: u64,
    /// Cache-line requests it served (caches only).
    pub hits: u64,
    /// Cache-line requests it passed on (caches only).
    pub misses: u64,
    /// `hits / (hits + misses)`, 0 without requests.
    pub hit_rate: f64,
    /// Bytes read and written per second of modeled time, in GB/s.
    pub gb_per_s: f64,
    /// The model's peak for the level in GB/s (0 when it has none, as for `requested`).
    pub peak_gb_per_s: f64,
    /// `gb_per_s / peak_gb_per_s` (0 without a peak).
    pub peak_fraction: f64,
}

/// Threadgroup memory and atomics over the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadgroupMemoryReport {
    /// Threadgroup-memory instructions issued (SIMD-group accesses).
    pub accesses: u64,
    /// Wavefronts beyond one per access: bank-conflict replays.
    pub bank_conflict_replays: u64,
    /// `bank_conflict_replays / accesses` (0 without accesses).
    pub replays_per_access: f64,
    /// Atomic SIMD-group instructions (device and threadgroup).
    pub atomics: u64,
    /// Threadgroup bandwidth used: the wavefronts served (accesses plus replays) times the
    /// bytes a wavefront serves, over the run's time (0 when the model does not say how
    /// many bytes a wavefront serves).
    #[serde(default)]
    pub gb_per_s: f64,
    /// `gb_per_s` over the model's threadgroup bandwidth, all cores (0 without a peak): how
    /// busy the cores' threadgroup-memory ports were.
    #[serde(default)]
    pub peak_fraction: f64,
}

/// What one source line cost, with its text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LineReport {
    /// The source file's path.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// The line's text, trimmed (empty when the source is not in the trace).
    pub text: String,
    /// Issue plus stall cycles charged to its instructions (SIMD-group × cycles).
    pub cost_cycles: u64,
    /// `cost_cycles` as a fraction of all lines' cost.
    pub share: f64,
    /// SIMD-group instructions issued from the line.
    pub executions: u64,
    /// Active lanes / (32 × executions).
    pub simd_efficiency: f64,
    /// Stall cycles charged to the line.
    pub stall_cycles: u64,
    /// The stall reason with the most cycles on the line (empty without stalls).
    pub top_stall: String,
    /// Device and constant memory bytes its lanes requested.
    pub bytes: u64,
    /// Branch executions from the line whose lanes went both ways.
    pub divergent: u64,
}

/// Fills the profile-derived fields of `report` (`issue`, `stalls`, `memory.levels`,
/// `memory.threadgroup`, `limiter`, `lines`) from `profile`, the model and the sources.
/// `report.cycles` and `report.time_us` must already be set.
pub fn summarize(
    report: &mut Report,
    profile: &Profile,
    model: &ModelInfo,
    sources: &[SourceFile],
) {
    let slots = report.cycles
        * u64::from(model.cores)
        * u64::from(model.schedulers_per_core)
        * u64::from(model.issue_width.max(1));
    report.issue = Some(issue(profile, slots));
    report.stalls = Some(stalls(profile));
    report.memory.levels = levels(profile, model, report.time_us);
    let m = &profile.memory;
    let wavefront_bytes = (m.threadgroup_accesses + m.bank_conflict_replays)
        * u64::from(model.threadgroup_wavefront_bytes);
    let gb_per_s = gb_per_s(wavefront_bytes, report.time_us);
    let peak = model.peaks.threadgroup_gb_per_s;
    report.memory.threadgroup = Some(ThreadgroupMemoryReport {
        accesses: m.threadgroup_accesses,
        bank_conflict_replays: m.bank_conflict_replays,
        replays_per_access: ratio(m.bank_conflict_replays, m.threadgroup_accesses),
        atomics: m.atomics,
        gb_per_s,
        peak_fraction: if peak > 0.0 { gb_per_s / peak } else { 0.0 },
    });
    report.lines = costliest_lines(profile, sources, REPORTED_LINES);
    report.limiter = Some(limiter::find(report));
}

/// `bytes` moved in `time_us` as GB/s (0 without time).
fn gb_per_s(bytes: u64, time_us: f64) -> f64 {
    if time_us > 0.0 {
        bytes as f64 / (time_us * 1e3)
    } else {
        0.0
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// The profile's lines with a known place and a cost, costliest first (ties in source
/// order): the order of [`costliest_lines`].
pub(crate) fn ranked_lines(profile: &Profile) -> Vec<&LineProfile> {
    let mut lines: Vec<&LineProfile> = profile
        .lines
        .iter()
        .filter(|l| l.line > 0 && l.cost_cycles() > 0)
        .collect();
    lines.sort_by(|a, b| {
        b.cost_cycles()
            .cmp(&a.cost_cycles())
            .then((a.file, a.line).cmp(&(b.file, b.line)))
    });
    lines
}

fn issue(profile: &Profile, slots: u64) -> IssueReport {
    let total: u64 = profile.issued.iter().sum();
    let mut busy = vec![0u64; profile.classes.len()];
    for inst in &profile.instructions {
        if let Some(i) = profile.classes.iter().position(|c| *c == inst.class) {
            busy[i] += inst.issue_cycles;
        }
    }
    let mut classes: Vec<ClassIssue> = profile
        .classes
        .iter()
        .zip(&profile.issued)
        .zip(&busy)
        .filter(|((_, n), _)| **n > 0)
        .map(|((class, &issued), &busy)| ClassIssue {
            class: class.clone(),
            issued,
            share: ratio(issued, total),
            slot_share: ratio(issued, slots),
            pipe_busy: ratio(busy, slots),
        })
        .collect();
    classes.sort_by(|a, b| b.issued.cmp(&a.issued).then(a.class.cmp(&b.class)));
    IssueReport {
        slots,
        slot_utilisation: ratio(total, slots),
        classes,
    }
}

fn stalls(profile: &Profile) -> StallsReport {
    let total: u64 = profile.stalls.iter().sum();
    let issued: u64 = profile.issued.iter().sum();
    let resident = total + issued;
    let reasons = StallReason::ALL
        .iter()
        .map(|r| {
            let cycles = profile.stalls.get(r.index()).copied().unwrap_or(0);
            StallShare {
                reason: r.name().to_string(),
                cycles,
                share: ratio(cycles, total),
                of_resident: ratio(cycles, resident),
            }
        })
        .collect();
    StallsReport {
        resident_cycles: resident,
        total,
        reasons,
    }
}

fn levels(profile: &Profile, model: &ModelInfo, time_us: f64) -> Vec<MemoryLevelReport> {
    let m = &profile.memory;
    let p = &model.peaks;
    let level = |name: &str, t: &LevelTraffic, peak: f64| {
        let gb_per_s = gb_per_s(t.bytes(), time_us);
        MemoryLevelReport {
            level: name.to_string(),
            read_bytes: t.read_bytes,
            write_bytes: t.write_bytes,
            hits: t.hits,
            misses: t.misses,
            hit_rate: ratio(t.hits, t.hits + t.misses),
            gb_per_s,
            peak_gb_per_s: peak,
            peak_fraction: if peak > 0.0 { gb_per_s / peak } else { 0.0 },
        }
    };
    vec![
        level("requested", &m.requested, 0.0),
        level("l1", &m.l1, p.l1_gb_per_s),
        level("l2", &m.l2, p.l2_gb_per_s),
        level("slc", &m.slc, p.slc_gb_per_s),
        level("dram", &m.dram, p.dram_gb_per_s),
    ]
}

/// The `n` source lines with the most issue plus stall cycles, costliest first.
pub fn costliest_lines(profile: &Profile, sources: &[SourceFile], n: usize) -> Vec<LineReport> {
    let total: u64 = profile.lines.iter().map(|l| l.cost_cycles()).sum();
    ranked_lines(profile)
        .into_iter()
        .take(n)
        .map(|l| {
            let source = sources.get(l.file as usize);
            let text = source
                .and_then(|s| s.text.lines().nth(l.line as usize - 1))
                .unwrap_or("")
                .trim()
                .to_string();
            let top_stall = StallReason::ALL
                .iter()
                .filter_map(|r| l.stalls.get(r.index()).map(|c| (*c, *r)))
                .filter(|(c, _)| *c > 0)
                .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
                .map(|(_, r)| r.name().to_string())
                .unwrap_or_default();
            LineReport {
                file: source.map(|s| s.path.clone()).unwrap_or_default(),
                line: l.line,
                text,
                cost_cycles: l.cost_cycles(),
                share: ratio(l.cost_cycles(), total),
                executions: l.executions,
                simd_efficiency: l.simd_efficiency(),
                stall_cycles: l.stalls.iter().sum(),
                top_stall,
                bytes: l.bytes,
                divergent: l.divergent,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::MemoryTraffic;
    use crate::report::OccupancyReport;
    use crate::trace::Peaks;

    /// 8 cores of 4 schedulers at 1 GHz: 10^6 cycles are 1000 µs and 32 * 10^6 issue slots.
    fn model() -> ModelInfo {
        ModelInfo {
            name: "m1".into(),
            display_name: "Apple M1 (8-core GPU)".into(),
            cores: 8,
            clock_mhz: 1000.0,
            schedulers_per_core: 4,
            issue_width: 1,
            max_simdgroups_per_core: 48,
            threadgroup_wavefront_bytes: 128,
            peaks: Peaks {
                l1_gb_per_s: 1000.0,
                l2_gb_per_s: 500.0,
                slc_gb_per_s: 200.0,
                dram_gb_per_s: 60.0,
                threadgroup_gb_per_s: 2000.0,
            },
        }
    }

    fn classes() -> Vec<String> {
        [
            "float_alu",
            "device_memory",
            "threadgroup_memory",
            "control",
        ]
        .map(String::from)
        .to_vec()
    }

    /// A profile issuing `issued` per class (one issue cycle each), with `stalls` per
    /// reason and `memory` traffic, over two source lines.
    fn profile(issued: [u64; 4], stalls: [u64; 7], memory: MemoryTraffic) -> Profile {
        let instructions = classes()
            .iter()
            .zip(issued)
            .enumerate()
            .map(|(pc, (class, n))| crate::InstProfile {
                pc: pc as u32,
                class: class.clone(),
                line: 2 + pc as u32 % 2,
                executions: n,
                issue_cycles: n,
                ..Default::default()
            })
            .collect();
        let line = |line, executions, stalls: Vec<u64>| LineProfile {
            file: 0,
            line,
            executions,
            active_lanes: executions * 16,
            issue_cycles: executions,
            stalls,
            bytes: 0,
            divergent: 0,
        };
        Profile {
            classes: classes(),
            schedulers_per_core: 4,
            instructions,
            lines: vec![
                line(2, issued[0] + issued[2], stalls.to_vec()),
                line(3, issued[1] + issued[3], vec![0; 7]),
            ],
            memory,
            stalls: stalls.to_vec(),
            issued: issued.to_vec(),
            ..Default::default()
        }
    }

    fn sources() -> Vec<SourceFile> {
        vec![SourceFile {
            path: "/src/k.metal".into(),
            text: "kernel void k(device float* a) {\n    a[i] = a[i] * 2.0f;\n    return;\n}\n"
                .into(),
        }]
    }

    /// The report of `profile` over 10^6 cycles.
    fn check(p: &Profile) -> Report {
        let mut r = Report {
            kernel: "k".into(),
            model: "m1".into(),
            cycles: 1_000_000,
            time_us: 1000.0,
            timing: "full".into(),
            occupancy: Some(OccupancyReport {
                theoretical: 1.0,
                achieved: 0.33,
                limiter: "threads".into(),
                threadgroups_per_core: 4,
                registers_per_thread: 20.0,
            }),
            ..Report::default()
        };
        summarize(&mut r, p, &model(), &sources());
        r
    }

    fn dram(read: u64, write: u64) -> MemoryTraffic {
        let mut m = MemoryTraffic::default();
        m.dram.read_bytes = read;
        m.dram.write_bytes = write;
        m
    }

    #[test]
    fn streaming_near_peak_is_dram_bound() {
        // 54.6 MB in 1 ms is 54.6 GB/s, 91% of 60.
        let r = check(&profile(
            [1000, 2000, 0, 100],
            [900_000, 0, 0, 0, 0, 0, 10],
            dram(36_400_000, 18_200_000),
        ));
        let l = r.limiter.unwrap();
        assert_eq!(l.kind, "dram_bandwidth");
        assert_eq!(
            l.description,
            "DRAM bandwidth: 91% of peak (54.6 of 60.0 GB/s)"
        );
        assert_eq!(l.candidates.last().unwrap().kind, "latency");
    }

    #[test]
    fn nothing_saturated_is_latency_bound_by_the_top_stall_reason() {
        let r = check(&profile(
            [1000, 2000, 0, 100],
            [6_000, 0, 3_000, 0, 0, 0, 0],
            dram(1_000_000, 0),
        ));
        let l = r.limiter.unwrap();
        assert_eq!(l.kind, "latency");
        // 6,000 of 12,100 resident cycles.
        assert_eq!(
            l.description,
            "latency: memory stalls 50% of resident cycles, occupancy 33%"
        );
        let stalls = r.stalls.unwrap();
        assert_eq!(stalls.resident_cycles, 12_100);
        assert_eq!(stalls.reasons[2].reason, "barrier");
        assert_eq!(stalls.reasons[2].cycles, 3_000);
    }

    #[test]
    fn busy_threadgroup_memory_with_replays_is_bank_conflict_bound() {
        let mut m = MemoryTraffic {
            threadgroup_accesses: 5_000_000,
            bank_conflict_replays: 15_500_000,
            ..Default::default()
        };
        m.dram.read_bytes = 1000;
        // 20 of 32 million pipeline cycles (62.5%, printed rounding half to even).
        let r = check(&profile([1000, 1000, 20_000_000, 0], [0; 7], m));
        let l = r.limiter.unwrap();
        assert_eq!(l.kind, "bank_conflicts");
        assert_eq!(
            l.description,
            "threadgroup memory bank conflicts: 3.1 replays per access (its pipeline 62% busy)"
        );
    }

    #[test]
    fn busy_threadgroup_ports_without_replays_are_threadgroup_bandwidth_bound() {
        // 13.44 M one-wavefront accesses of 128 B in 1 ms: 1720.3 GB/s, 86% of 2000, while
        // the pipelines are idle and the SIMD-groups wait on the port's queue.
        let m = MemoryTraffic {
            threadgroup_accesses: 13_440_000,
            ..Default::default()
        };
        let r = check(&profile(
            [1000, 1000, 1000, 0],
            [900_000, 0, 0, 0, 0, 0, 0],
            m,
        ));
        let l = r.limiter.unwrap();
        assert_eq!(l.kind, "threadgroup_bandwidth");
        assert_eq!(
            l.description,
            "threadgroup memory bandwidth: 86% of peak (1720.3 of 2000.0 GB/s)"
        );
        assert_eq!(l.candidates.last().unwrap().kind, "latency");
        let t = r.memory.threadgroup.unwrap();
        assert!((t.peak_fraction - 0.86016).abs() < 1e-9);
    }

    #[test]
    fn alu_bound_names_the_pipeline_and_issue_shares() {
        let r = check(&profile([25_000_000, 0, 0, 0], [0; 7], dram(1000, 0)));
        assert_eq!(r.limiter.as_ref().unwrap().kind, "pipeline.float_alu");
        assert_eq!(
            r.limiter.unwrap().description,
            "ALU FP32 pipeline: 78% busy"
        );
        let issue = r.issue.unwrap();
        assert_eq!(issue.slots, 32_000_000);
        assert_eq!(issue.classes.len(), 1);
        assert!((issue.slot_utilisation - 25.0 / 32.0).abs() < 1e-12);
    }

    #[test]
    fn costliest_lines_carry_their_text_and_share() {
        let r = check(&profile(
            [1000, 2000, 0, 100],
            [6_000, 0, 0, 0, 0, 0, 0],
            dram(1000, 0),
        ));
        let l = &r.lines[0];
        assert_eq!((l.line, l.text.as_str()), (2, "a[i] = a[i] * 2.0f;"));
        assert_eq!(l.cost_cycles, 7_000);
        assert_eq!(l.top_stall, "memory");
        assert!((l.simd_efficiency - 0.5).abs() < 1e-12);
        assert_eq!(r.lines[1].text, "return;");
        assert!((l.share + r.lines[1].share - 1.0).abs() < 1e-12);
    }

    #[test]
    fn memory_levels_give_bandwidth_and_share_of_peak() {
        let mut m = dram(30_000_000, 0);
        m.l1 = LevelTraffic {
            read_bytes: 100_000_000,
            write_bytes: 0,
            hits: 900,
            misses: 100,
        };
        let r = check(&profile([1, 1, 0, 1], [0; 7], m));
        let l1 = &r.memory.levels[1];
        assert_eq!(l1.level, "l1");
        assert!((l1.gb_per_s - 100.0).abs() < 1e-9);
        assert!((l1.peak_fraction - 0.1).abs() < 1e-9);
        assert!((l1.hit_rate - 0.9).abs() < 1e-12);
        assert!((r.memory.levels[4].peak_fraction - 0.5).abs() < 1e-9);
    }

    #[test]
    fn text_report_with_profile_sections() {
        let mut m = dram(36_400_000, 18_200_000);
        m.l1 = LevelTraffic {
            read_bytes: 100_000_000,
            write_bytes: 18_200_000,
            hits: 900,
            misses: 100,
        };
        m.threadgroup_accesses = 1000;
        m.bank_conflict_replays = 250;
        let r = check(&profile(
            [1000, 2000, 1000, 100],
            [900_000, 2000, 0, 0, 500, 0, 10],
            m,
        ));
        insta::assert_snapshot!(r.to_text());
    }
}
