//! CSV tables of a trace (`metalsim export`): the binned counters (`bins.csv`), the
//! per-core counters per bin (`cores.csv`), the per-line and the per-instruction tables
//! (`lines.csv`, `instructions.csv`). One header row each; docs/trace.md names every
//! column.

use std::path::{Path, PathBuf};

use crate::perfetto::bin_cycles;
use crate::profile::{LevelTraffic, StallReason};
use crate::trace::Trace;

/// A file of the output could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {reason}")]
pub struct OutputError {
    /// The file or folder.
    pub path: String,
    /// What went wrong.
    pub reason: String,
}

impl OutputError {
    pub(crate) fn new(path: &Path, reason: impl std::fmt::Display) -> Self {
        OutputError {
            path: path.display().to_string(),
            reason: reason.to_string(),
        }
    }
}

/// Writes the four CSV tables into `dir` (created if missing); the paths written.
pub fn write_csv(trace: &Trace, dir: &Path) -> Result<Vec<PathBuf>, OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| OutputError::new(dir, e))?;
    let tables: [(&str, Vec<Vec<String>>); 4] = [
        ("bins.csv", bins(trace)),
        ("cores.csv", cores(trace)),
        ("lines.csv", lines(trace)),
        ("instructions.csv", instructions(trace)),
    ];
    let mut written = Vec::new();
    for (name, rows) in tables {
        let path = dir.join(name);
        let mut w = csv::Writer::from_path(&path).map_err(|e| OutputError::new(&path, e))?;
        for row in rows {
            w.write_record(&row)
                .map_err(|e| OutputError::new(&path, e))?;
        }
        w.flush().map_err(|e| OutputError::new(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

const LEVELS: [&str; 5] = ["requested", "l1", "l2", "slc", "dram"];

fn stall_columns() -> impl Iterator<Item = String> {
    StallReason::ALL
        .iter()
        .map(|r| format!("stall_{}", r.name()))
}

fn numbers<T: ToString>(values: impl IntoIterator<Item = T>) -> impl Iterator<Item = String> {
    values.into_iter().map(|v| v.to_string())
}

/// `values` padded with zeros (or cut) to `n` entries, so a row always fits its header.
fn fixed(values: &[u64], n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| values.get(i).copied().unwrap_or(0))
        .collect()
}

fn bins(trace: &Trace) -> Vec<Vec<String>> {
    let p = &trace.profile;
    let us_per_cycle = 1.0 / trace.model.clock_mhz.max(1e-9);
    let max_simdgroups =
        f64::from(trace.model.max_simdgroups_per_core) * f64::from(trace.model.cores.max(1));
    let mut header: Vec<String> = [
        "bin",
        "start_cycle",
        "cycles",
        "start_us",
        "resident_simdgroups",
        "resident_threadgroups",
        "occupancy",
        "simd_instructions",
        "active_lanes",
        "simd_efficiency",
    ]
    .map(String::from)
    .to_vec();
    header.extend(p.classes.iter().map(|c| format!("issued_{c}")));
    header.extend(stall_columns());
    for l in LEVELS {
        header.extend(
            ["read_bytes", "write_bytes", "hits", "misses", "gb_per_s"].map(|f| format!("{l}_{f}")),
        );
    }
    header.extend(["threadgroup_accesses", "bank_conflict_replays", "atomics"].map(String::from));
    let mut rows = vec![header];
    for (i, b) in p.counters.bins.iter().enumerate() {
        let cycles = bin_cycles(trace, i);
        let mut row = vec![
            i.to_string(),
            b.start.to_string(),
            cycles.to_string(),
            format!("{}", b.start as f64 * us_per_cycle),
            b.resident_simdgroups.to_string(),
            b.resident_threadgroups.to_string(),
            if max_simdgroups > 0.0 {
                (b.resident_simdgroups / max_simdgroups).to_string()
            } else {
                "0".into()
            },
            b.simd_instructions().to_string(),
            b.active_lanes.to_string(),
            b.simd_efficiency().to_string(),
        ];
        row.extend(numbers(fixed(&b.issued, p.classes.len())));
        row.extend(numbers(fixed(&b.stalls, StallReason::ALL.len())));
        let m = &b.memory;
        let level = |t: &LevelTraffic| {
            let gbps = if cycles == 0 {
                0.0
            } else {
                t.bytes() as f64 / (cycles as f64 * us_per_cycle * 1e3)
            };
            [
                t.read_bytes.to_string(),
                t.write_bytes.to_string(),
                t.hits.to_string(),
                t.misses.to_string(),
                gbps.to_string(),
            ]
        };
        for t in [&m.requested, &m.l1, &m.l2, &m.slc, &m.dram] {
            row.extend(level(t));
        }
        row.extend(numbers([
            m.threadgroup_accesses,
            m.bank_conflict_replays,
            m.atomics,
        ]));
        rows.push(row);
    }
    rows
}

fn cores(trace: &Trace) -> Vec<Vec<String>> {
    let mut rows = vec![
        [
            "bin",
            "start_cycle",
            "core",
            "issued",
            "resident_simdgroups",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (i, b) in trace.profile.counters.bins.iter().enumerate() {
        for core in 0..trace.profile.counters.cores as usize {
            rows.push(vec![
                i.to_string(),
                b.start.to_string(),
                core.to_string(),
                b.core_issued.get(core).copied().unwrap_or(0).to_string(),
                b.core_resident_simdgroups
                    .get(core)
                    .copied()
                    .unwrap_or(0.0)
                    .to_string(),
            ]);
        }
    }
    rows
}

fn file_name(trace: &Trace, file: u32) -> String {
    trace
        .sources
        .get(file as usize)
        .map(|s| s.path.clone())
        .unwrap_or_default()
}

fn line_text(trace: &Trace, file: u32, line: u32) -> String {
    trace
        .sources
        .get(file as usize)
        .and_then(|s| s.text.lines().nth((line as usize).checked_sub(1)?))
        .unwrap_or("")
        .trim()
        .to_string()
}

fn lines(trace: &Trace) -> Vec<Vec<String>> {
    let mut header: Vec<String> = [
        "file",
        "line",
        "text",
        "executions",
        "active_lanes",
        "simd_efficiency",
        "issue_cycles",
    ]
    .map(String::from)
    .to_vec();
    header.extend(stall_columns());
    header.extend(["cost_cycles", "bytes", "divergent"].map(String::from));
    let mut rows = vec![header];
    for l in &trace.profile.lines {
        let mut row = vec![
            file_name(trace, l.file),
            l.line.to_string(),
            line_text(trace, l.file, l.line),
            l.executions.to_string(),
            l.active_lanes.to_string(),
            l.simd_efficiency().to_string(),
            l.issue_cycles.to_string(),
        ];
        row.extend(numbers(fixed(&l.stalls, StallReason::ALL.len())));
        row.extend(numbers([l.cost_cycles(), l.bytes, l.divergent]));
        rows.push(row);
    }
    rows
}

fn instructions(trace: &Trace) -> Vec<Vec<String>> {
    let mut header: Vec<String> = [
        "pc",
        "block",
        "text",
        "class",
        "file",
        "line",
        "col",
        "reconvergence",
        "executions",
        "active_lanes",
        "simd_efficiency",
        "issue_cycles",
    ]
    .map(String::from)
    .to_vec();
    header.extend(stall_columns());
    header.extend(["bytes", "transactions", "divergent"].map(String::from));
    let mut rows = vec![header];
    for i in &trace.profile.instructions {
        let efficiency = i.simd_efficiency();
        let mut row = vec![
            i.pc.to_string(),
            i.block.clone(),
            i.text.clone(),
            i.class.clone(),
            file_name(trace, i.file),
            i.line.to_string(),
            i.col.to_string(),
            i.reconvergence.to_string(),
            i.executions.to_string(),
            i.active_lanes.to_string(),
            efficiency.to_string(),
            i.issue_cycles.to_string(),
        ];
        row.extend(numbers(fixed(&i.stalls, StallReason::ALL.len())));
        row.extend(numbers([i.bytes, i.transactions, i.divergent]));
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_trace::sample_trace;

    /// Writes the tables of the sample trace and returns one file's rows.
    fn check(file: &str) -> Vec<csv::StringRecord> {
        let dir =
            std::env::temp_dir().join(format!("metalsim-export-{}-{file}", std::process::id()));
        let written = write_csv(&sample_trace(), &dir).unwrap();
        assert_eq!(written.len(), 4);
        let mut r = csv::Reader::from_path(dir.join(file)).unwrap();
        let mut rows = vec![r.headers().unwrap().clone()];
        rows.extend(r.records().map(|x| x.unwrap()));
        let _ = std::fs::remove_dir_all(&dir);
        rows
    }

    #[test]
    fn bins_have_one_row_per_bin_and_rows_fit_the_header() {
        let rows = check("bins.csv");
        assert_eq!(rows.len(), 1 + 4);
        assert!(rows.iter().all(|r| r.len() == rows[0].len()));
        let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
        assert_eq!(&rows[1][col("issued_device_memory")], "10");
        assert_eq!(&rows[2][col("dram_read_bytes")], "500");
        // 500 bytes in 100 cycles of 1 ns: 5 GB/s.
        assert_eq!(&rows[2][col("dram_gb_per_s")], "5");
    }

    #[test]
    fn lines_carry_their_source_text() {
        let rows = check("lines.csv");
        assert_eq!(rows.len(), 3);
        assert_eq!(&rows[1][2], "float x = a[0] * 2.0f;");
        assert_eq!(&rows[2][1], "3");
    }

    #[test]
    fn instructions_and_cores_tables() {
        let rows = check("instructions.csv");
        assert_eq!(rows.len(), 4);
        assert_eq!(&rows[2][3], "device_memory");
        let rows = check("cores.csv");
        assert_eq!(rows.len(), 1 + 4 * 2);
    }
}
