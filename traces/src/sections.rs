//! The human report's profile sections: issue, stalls, memory levels, threadgroup memory,
//! limiter and the costliest lines (each only when the report has it).

use std::fmt::Write;

use crate::limiter::{class_name, level_name};
use crate::report::{Report, group_digits, human_bytes};

/// How many of the costliest lines the human report shows.
const SHOWN_LINES: usize = 3;

/// Appends the sections `r` has data for to `s`.
pub(crate) fn write(r: &Report, s: &mut String) {
    if let Some(issue) = &r.issue {
        let busy: Vec<String> = issue
            .classes
            .iter()
            .filter(|c| c.pipe_busy >= 0.005)
            .take(4)
            .map(|c| format!("{} {:.0}%", class_name(&c.class), c.pipe_busy * 100.0))
            .collect();
        let _ = write!(
            s,
            "  issue        {:.1}% of issue slots used",
            issue.slot_utilisation * 100.0
        );
        if !busy.is_empty() {
            let _ = write!(s, "; pipelines busy: {}", busy.join(", "));
        }
        s.push('\n');
    }
    if let Some(stalls) = &r.stalls
        && stalls.resident_cycles > 0
    {
        let mut reasons: Vec<_> = stalls
            .reasons
            .iter()
            .filter(|x| x.of_resident >= 0.005)
            .collect();
        reasons.sort_by_key(|x| std::cmp::Reverse(x.cycles));
        let parts: Vec<String> = reasons
            .iter()
            .take(4)
            .map(|x| {
                format!(
                    "{} {:.0}%",
                    x.reason.replace('_', " "),
                    x.of_resident * 100.0
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "  stalls       {:.0}% of resident SIMD-group cycles{}{}",
            stalls.total as f64 * 100.0 / stalls.resident_cycles as f64,
            if parts.is_empty() { "" } else { ": " },
            parts.join(", ")
        );
    }
    let levels: Vec<_> = r
        .memory
        .levels
        .iter()
        .filter(|l| l.level != "requested")
        .collect();
    if !levels.is_empty() {
        let _ = writeln!(
            s,
            "  levels       {:<5} {:>10} {:>10} {:>9} {:>12} {:>8}",
            "", "read", "written", "hit rate", "bandwidth", "of peak"
        );
        for l in levels {
            let hit_rate = if l.hits + l.misses > 0 {
                format!("{:.1}%", l.hit_rate * 100.0)
            } else {
                "-".to_string()
            };
            let _ = writeln!(
                s,
                "               {:<5} {:>10} {:>10} {:>9} {:>7.1} GB/s {:>7.0}%",
                level_name(&l.level),
                human_bytes(l.read_bytes),
                human_bytes(l.write_bytes),
                hit_rate,
                l.gb_per_s,
                l.peak_fraction * 100.0
            );
        }
    }
    if let Some(t) = &r.memory.threadgroup
        && (t.accesses > 0 || t.atomics > 0)
    {
        let _ = writeln!(
            s,
            "  threadgroup  {} accesses, {:.2} bank-conflict replays per access; {} atomics",
            group_digits(t.accesses),
            t.replays_per_access,
            group_digits(t.atomics)
        );
    }
    if let Some(l) = &r.limiter {
        let _ = writeln!(s, "  LIMITER      {}", l.description);
        let next: Vec<&str> = l
            .candidates
            .iter()
            .skip(1)
            .take(2)
            .map(|c| c.description.as_str())
            .collect();
        if !next.is_empty() {
            let _ = writeln!(s, "               then {}", next.join("; "));
        }
    }
    if !r.lines.is_empty() {
        let _ = writeln!(
            s,
            "  costliest lines (share of SIMD-group cycles issuing or stalled)"
        );
        for l in r.lines.iter().take(SHOWN_LINES) {
            let file = l.file.rsplit('/').next().unwrap_or(&l.file);
            let stall = if l.top_stall.is_empty() {
                String::new()
            } else {
                format!(", mostly {}", l.top_stall.replace('_', " "))
            };
            let _ = writeln!(
                s,
                "    {:>5.1}%  {file}:{}  {}  (SIMD efficiency {:.0}%{stall})",
                l.share * 100.0,
                l.line,
                l.text,
                l.simd_efficiency * 100.0
            );
        }
    }
}
