//! The run summary (`report.json`) and its human-readable form.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

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

/// The summary of one simulated dispatch. Field names are stable: later versions add
/// fields, never rename them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
        } else {
            let _ = writeln!(
                s,
                "  time         {} cycles = {} at the model's clock",
                group_digits(self.cycles),
                human_time(self.time_us)
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
        if let Some(f) = &self.fault {
            let _ = writeln!(
                s,
                "  FAULT        {} at {}:{}:{} (thread {:?}, threadgroup {:?}, lane {}): {}",
                f.kind, f.file, f.line, f.column, f.thread, f.threadgroup, f.lane, f.message
            );
        }
        s
    }
}

/// `1234567` as `1,234,567`.
pub fn group_digits(n: u64) -> String {
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

fn human_bytes(b: u64) -> String {
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
            },
            fault: None,
        }
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
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        let back: Report = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn digits() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(1234567), "1,234,567");
    }
}
