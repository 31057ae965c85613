//! The run summary (`report.json`) and its human-readable form.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::limiter::LimiterReport;
use crate::summary::{
    IssueReport, LineReport, MemoryLevelReport, StallsReport, ThreadgroupMemoryReport,
};

/// Memory traffic of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemorySummary {
    /// Bytes of device and constant memory that active lanes read.
    pub device_bytes_read: u64,
    /// Bytes of device memory that active lanes wrote.
    pub device_bytes_written: u64,
    /// Bytes moved between the caches and DRAM (whole cache lines).
    pub dram_bytes: u64,
    /// DRAM traffic per second of simulated time, in GB/s (0 when timing was off).
    pub dram_gb_per_s: f64,
    /// Per level (`requested`, `l1`, `l2`, `slc`, `dram`): bytes, hits, bandwidth and its
    /// share of the modeled peak (empty without a profile).
    #[serde(default)]
    pub levels: Vec<MemoryLevelReport>,
    /// Threadgroup-memory accesses, bank-conflict replays and atomics (`null` without a
    /// profile).
    #[serde(default)]
    pub threadgroup: Option<ThreadgroupMemoryReport>,
}

/// Residency of a timed run: how full the cores were.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OccupancyReport {
    /// Resident SIMD-groups per core the limits allow, as a fraction of the most a core
    /// holds.
    pub theoretical: f64,
    /// Resident SIMD-groups per core averaged over cores and time, same scale.
    pub achieved: f64,
    /// What limits `theoretical`: `registers`, `threads`, `threadgroup_memory` or
    /// `threadgroups`.
    pub limiter: String,
    /// Threadgroups a core holds at once.
    pub threadgroups_per_core: u32,
    /// 32-bit registers per thread charged against the register file (the mean live count
    /// on GPUs with Dynamic Caching).
    pub registers_per_thread: f64,
}

/// Requests one cache level served and passed on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelReport {
    /// Cache-line requests it served.
    pub hits: u64,
    /// Cache-line requests it passed to the level below.
    pub misses: u64,
}

impl LevelReport {
    /// `hits / (hits + misses)`, 0 without requests.
    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

/// What the caches and threadgroup memory saw in a timed run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheReport {
    /// The per-core L1 data caches together.
    pub l1: LevelReport,
    /// The GPU L2.
    pub l2: LevelReport,
    /// The system-level cache.
    pub slc: LevelReport,
    /// Threadgroup-memory wavefronts replayed for bank conflicts.
    pub bank_conflict_replays: u64,
}

/// How a sampled run (`--timing sampled`) estimated its time. Its `cycles` and
/// `time_us` are the estimate; its occupancy, caches, DRAM bytes and profile sections
/// come from the timed windows only, unscaled.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplingReport {
    /// The grid was too small to sample: every threadgroup was timed, the time is exact.
    pub timed_fully: bool,
    /// Half-width of the estimate's error bound, in cycles (a 95% confidence interval of
    /// the measured rate plus a share of the time of threadgroup classes never measured).
    pub bound_cycles: u64,
    /// `bound_cycles` at the model's clock, in microseconds.
    pub bound_us: f64,
    /// `bound_cycles` as a percentage of `cycles`.
    pub bound_percent: f64,
    /// Threadgroups timed by the model.
    pub threadgroups_timed: u64,
    /// Their share of all threadgroups, in percent.
    pub timed_percent: f64,
    /// Timed windows (runs of consecutive threadgroups, each on an idle GPU).
    pub windows: u32,
    /// Threadgroups the GPU holds at once (a wave).
    pub wave: u64,
    /// Cycles the timed windows took together (the occupancy and cache counters are
    /// theirs).
    pub timed_cycles: u64,
    /// Classes of threadgroups (by SIMD-group instruction count) outside the first window.
    pub classes: u32,
    /// Of those, classes no window measured (extrapolated at the nearest class's rate).
    pub unmeasured_classes: u32,
    /// Threadgroups in those classes.
    pub unmeasured_threadgroups: u64,
    /// Cycles per 1000 SIMD-group instructions measured by each rate sample.
    pub rate_samples: Vec<f64>,
    /// The estimate is the DRAM-traffic floor (the windows' DRAM bytes per instruction,
    /// for all instructions, at DRAM bandwidth), above the issue-rate estimate.
    #[serde(default)]
    pub dram_bound: bool,
}

/// A kernel fault: what went wrong, where in the source, and on which thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultReport {
    /// Machine-readable kind (`out_of_bounds`, `misaligned`, ...).
    pub kind: String,
    /// The full message.
    pub message: String,
    /// Source file.
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// `thread_position_in_grid` of the faulting thread.
    pub thread: [u32; 3],
    /// `threadgroup_position_in_grid` of its threadgroup.
    pub threadgroup: [u32; 3],
    /// Its lane in the SIMD-group.
    pub lane: u32,
}

/// A finding of the sanitizer (or the fault that stopped the run): its kind, where in
/// the source and on which thread it first happened, and how often.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingReport {
    /// `out_of_bounds`, `misaligned`, `read_only_write`, `threadgroup_race`,
    /// `device_race`, `divergent_barrier`, `uninitialized_threadgroup_read`,
    /// `inactive_lane_read` or `instruction_budget`.
    pub kind: String,
    /// `error` (the run exits with code 1) or `warning`.
    pub severity: String,
    /// The full message.
    pub message: String,
    /// Source file.
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// `thread_position_in_grid` of the thread of the first occurrence.
    pub thread: [u32; 3],
    /// `threadgroup_position_in_grid` of its threadgroup.
    pub threadgroup: [u32; 3],
    /// Its SIMD-group in the threadgroup.
    pub simdgroup: u32,
    /// Its lane in the SIMD-group.
    pub lane: u32,
    /// The address accessed, for memory findings.
    pub address: Option<u64>,
    /// The buffer, threadgroup or thread allocation the address is in.
    pub buffer: Option<String>,
    /// The byte offset in it.
    pub offset: Option<u64>,
    /// Executions of the instruction that showed the same kind of mistake.
    pub count: u64,
}

/// The summary of one simulated dispatch. Field names are stable: later versions add
/// fields, never rename them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The kernel's host name.
    pub kernel: String,
    /// The GPU model's short name.
    pub model: String,
    /// Simulated GPU cycles from dispatch to the last SIMD-group's end (0 with timing off).
    pub cycles: u64,
    /// `cycles` at the model's clock, in microseconds.
    pub time_us: f64,
    /// Threadgroups dispatched.
    pub threadgroups: u64,
    /// SIMD-groups run.
    pub simdgroups: u64,
    /// SIMD-group instructions issued.
    pub simd_instructions: u64,
    /// Instructions times the lanes active for each.
    pub thread_instructions: u64,
    /// `thread_instructions / (32 x simd_instructions)`: the fraction of lanes doing work.
    pub simd_efficiency: f64,
    /// Threads per grid.
    pub grid: [u32; 3],
    /// Threads per threadgroup.
    pub threadgroup_size: [u32; 3],
    /// Whether the timing model ran (`full`) or only the functional engine (`off`).
    pub timing: String,
    /// SIMD-group instructions per timing class (`float_alu`, `device_memory`...).
    pub instructions_by_class: BTreeMap<String, u64>,
    /// Memory traffic.
    pub memory: MemorySummary,
    /// The kernel fault that stopped the run, if one did.
    pub fault: Option<FaultReport>,
    /// Residency (`null` with timing off).
    #[serde(default)]
    pub occupancy: Option<OccupancyReport>,
    /// Cache and threadgroup-memory traffic (`null` with timing off).
    #[serde(default)]
    pub caches: Option<CacheReport>,
    /// What the sanitizer found, each kind once per source instruction, in the order first
    /// seen; the fault, if any, last.
    #[serde(default)]
    pub findings: Vec<FindingReport>,
    /// Instruction issue per class, issue-slot and pipeline utilisation (`null` without a
    /// profile).
    #[serde(default)]
    pub issue: Option<IssueReport>,
    /// Stall cycles per reason (`null` without a profile).
    #[serde(default)]
    pub stalls: Option<StallsReport>,
    /// What limited the run, in words, and the candidates (`null` without a profile).
    #[serde(default)]
    pub limiter: Option<LimiterReport>,
    /// The costliest source lines, costliest first (empty without a profile).
    #[serde(default)]
    pub lines: Vec<LineReport>,
    /// How the time of a sampled run was estimated (`null` unless `timing` is
    /// `sampled`).
    #[serde(default)]
    pub sampling: Option<SamplingReport>,
}

impl Report {
    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// The short human report.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let [gx, gy, gz] = self.grid;
        let [tx, ty, tz] = self.threadgroup_size;
        let _ = writeln!(s, "kernel {} on {}", self.kernel, self.model);
        let _ = writeln!(
            s,
            "  grid         {gx} x {gy} x {gz} threads, threadgroups of {tx} x {ty} x {tz}"
        );
        if self.timing == "off" {
            let _ = writeln!(s, "  time         not simulated (--timing off)");
        } else if let Some(p) = self.sampling.as_ref().filter(|p| !p.timed_fully) {
            let _ = writeln!(
                s,
                "  time         {} cycles = {} ± {:.1}% at the model's clock (sampled: {:.0}% of threadgroups timed in {} window{})",
                group_digits(self.cycles),
                human_time(self.time_us),
                p.bound_percent,
                p.timed_percent,
                p.windows,
                if p.windows == 1 { "" } else { "s" }
            );
            let _ = writeln!(
                s,
                "  sampled      occupancy, caches, DRAM bytes and the profile below are the timed windows' ({} cycles), unscaled",
                group_digits(p.timed_cycles)
            );
        } else {
            let _ = writeln!(
                s,
                "  time         {} cycles = {} at the model's clock{}",
                group_digits(self.cycles),
                human_time(self.time_us),
                if self.sampling.is_some() {
                    " (sampled: grid small, timed fully)"
                } else {
                    ""
                }
            );
        }
        let _ = writeln!(
            s,
            "  work         {} threadgroups, {} SIMD-groups, {} SIMD-group instructions",
            group_digits(self.threadgroups),
            group_digits(self.simdgroups),
            group_digits(self.simd_instructions)
        );
        let _ = writeln!(
            s,
            "  divergence   SIMD efficiency {:.1}% ({} thread instructions)",
            self.simd_efficiency * 100.0,
            group_digits(self.thread_instructions)
        );
        let m = &self.memory;
        let _ = write!(
            s,
            "  memory       {} read, {} written by lanes; {} to and from DRAM",
            human_bytes(m.device_bytes_read),
            human_bytes(m.device_bytes_written),
            human_bytes(m.dram_bytes)
        );
        if self.timing != "off" && self.cycles > 0 {
            let _ = write!(s, " ({:.1} GB/s)", m.dram_gb_per_s);
        }
        s.push('\n');
        if let Some(o) = &self.occupancy {
            let _ = writeln!(
                s,
                "  occupancy    theoretical {:.1}%, achieved {:.1}% (limited by {}: {} threadgroup{} per core, {:.1} registers per thread)",
                o.theoretical * 100.0,
                o.achieved * 100.0,
                o.limiter.replace('_', " "),
                o.threadgroups_per_core,
                if o.threadgroups_per_core == 1 {
                    ""
                } else {
                    "s"
                },
                o.registers_per_thread
            );
        }
        if let Some(c) = &self.caches {
            let _ = writeln!(
                s,
                "  caches       hit rates L1 {:.1}%, L2 {:.1}%, SLC {:.1}%; {} threadgroup bank-conflict replays",
                c.l1.hit_rate() * 100.0,
                c.l2.hit_rate() * 100.0,
                c.slc.hit_rate() * 100.0,
                group_digits(c.bank_conflict_replays)
            );
        }
        let total: u64 = self.instructions_by_class.values().sum();
        if total > 0 {
            let mut mix: Vec<(&String, &u64)> = self
                .instructions_by_class
                .iter()
                .filter(|(_, n)| **n > 0)
                .collect();
            mix.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let parts: Vec<String> = mix
                .iter()
                .take(6)
                .map(|(k, n)| format!("{k} {:.0}%", **n as f64 * 100.0 / total as f64))
                .collect();
            let _ = writeln!(s, "  mix          {}", parts.join(", "));
        }
        crate::sections::write(self, &mut s);
        if let Some(f) = &self.fault {
            let _ = writeln!(
                s,
                "  FAULT        {} at {}:{}:{} (thread {:?}, threadgroup {:?}, lane {}): {}",
                f.kind, f.file, f.line, f.column, f.thread, f.threadgroup, f.lane, f.message
            );
        }
        if !self.findings.is_empty() {
            let errors = self
                .findings
                .iter()
                .filter(|f| f.severity == "error")
                .count();
            let warnings = self.findings.len() - errors;
            let plural = |n: usize| if n == 1 { "" } else { "s" };
            let _ = writeln!(
                s,
                "  sanitizer    {errors} error{}, {warnings} warning{}",
                plural(errors),
                plural(warnings)
            );
            for f in &self.findings {
                let _ = write!(
                    s,
                    "    {:<7} {} at {}:{}:{} (thread {:?}, threadgroup {:?}, SIMD-group {}, lane {}",
                    f.severity,
                    f.kind,
                    f.file,
                    f.line,
                    f.column,
                    f.thread,
                    f.threadgroup,
                    f.simdgroup,
                    f.lane
                );
                if let (Some(b), Some(o)) = (&f.buffer, f.offset) {
                    let _ = write!(s, ", `{b}` + {o}");
                }
                let times = if f.count > 1 {
                    format!(", {} times", group_digits(f.count))
                } else {
                    String::new()
                };
                let _ = writeln!(s, "{times}): {}", f.message);
            }
        }
        s
    }
}

/// `1234567` as `1,234,567`.
pub(crate) fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.2} KB", b / 1e3)
    } else {
        format!("{b} B")
    }
}

fn human_time(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.3} ms", us / 1000.0)
    } else {
        format!("{us:.2} us")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        let mut mix = BTreeMap::new();
        mix.insert("float_alu".to_string(), 600);
        mix.insert("device_memory".to_string(), 300);
        mix.insert("control".to_string(), 100);
        Report {
            kernel: "vector_add".into(),
            model: "m1".into(),
            cycles: 1_234_567,
            time_us: 966.0,
            threadgroups: 3907,
            simdgroups: 31250,
            simd_instructions: 1000,
            thread_instructions: 16000,
            simd_efficiency: 0.5,
            grid: [1_000_000, 1, 1],
            threadgroup_size: [256, 1, 1],
            timing: "full".into(),
            instructions_by_class: mix,
            memory: MemorySummary {
                device_bytes_read: 8_000_000,
                device_bytes_written: 4_000_000,
                dram_bytes: 12_000_000,
                dram_gb_per_s: 12.4,
                ..MemorySummary::default()
            },
            fault: None,
            occupancy: Some(OccupancyReport {
                theoretical: 0.75,
                achieved: 0.6,
                limiter: "registers".into(),
                threadgroups_per_core: 9,
                registers_per_thread: 24.0,
            }),
            caches: Some(CacheReport {
                l1: LevelReport {
                    hits: 90,
                    misses: 10,
                },
                l2: LevelReport { hits: 5, misses: 5 },
                slc: LevelReport::default(),
                bank_conflict_replays: 1234,
            }),
            findings: Vec::new(),
            ..Report::default()
        }
    }

    /// A run with one error and one warning.
    fn with_findings() -> Report {
        let finding =
            |kind: &str, severity: &str, line, count, buffer: Option<&str>| FindingReport {
                kind: kind.into(),
                severity: severity.into(),
                message: format!("what happened ({kind})"),
                file: "reduce.metal".into(),
                line,
                column: 9,
                thread: [33, 0, 0],
                threadgroup: [1, 0, 0],
                simdgroup: 1,
                lane: 1,
                address: buffer.map(|_| 0x200_0000_0004),
                buffer: buffer.map(str::to_string),
                offset: buffer.map(|_| 4),
                count,
            };
        Report {
            findings: vec![
                finding("threadgroup_race", "error", 31, 1200, Some("partials")),
                finding("inactive_lane_read", "warning", 12, 1, None),
            ],
            ..sample()
        }
    }

    #[test]
    fn text_report_lists_findings() {
        insta::assert_snapshot!(with_findings().to_text());
    }

    #[test]
    fn json_findings_have_the_fields_the_issue_names() {
        let r = with_findings();
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        let f = &v["findings"][0];
        for key in [
            "kind",
            "message",
            "file",
            "line",
            "column",
            "thread",
            "threadgroup",
        ] {
            assert!(f.get(key).is_some(), "missing {key} in {f}");
        }
        assert_eq!(f["kind"], "threadgroup_race");
        assert_eq!(f["thread"], serde_json::json!([33, 0, 0]));
        let back: Report = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn text_report() {
        insta::assert_snapshot!(sample().to_text());
    }

    #[test]
    fn json_has_the_stable_fields_and_round_trips() {
        let r = sample();
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        for key in [
            "kernel",
            "model",
            "cycles",
            "time_us",
            "threadgroups",
            "simdgroups",
            "simd_instructions",
            "thread_instructions",
            "occupancy",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        let back: Report = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(back, r);
        let o = &v["occupancy"];
        for key in ["theoretical", "achieved", "limiter"] {
            assert!(o.get(key).is_some(), "missing occupancy.{key}");
        }
        assert_eq!(o["limiter"], "registers");
    }

    #[test]
    fn digits() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(1234567), "1,234,567");
    }
}
