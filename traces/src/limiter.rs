//! What limited a run, named in words with its figure ("DRAM bandwidth: 91% of peak").
//!
//! Every throughput resource gets a utilisation between 0 and 1: each memory level's
//! bandwidth against the model's peak, the threadgroup-memory ports' wavefronts against
//! theirs, each instruction class's pipeline (busy cycles over
//! the run's pipeline cycles), and the issue slots. A resource at [`SATURATED`] or more is
//! the limiter, the most used first. When none is, nothing was saturated: the SIMD-groups
//! spent their time waiting, and the limiter is latency, named by the stall reason with
//! the most cycles and the achieved occupancy (more resident SIMD-groups would hide it).

use serde::{Deserialize, Serialize};

use crate::report::Report;

/// The utilisation from which a throughput resource counts as the limiter.
pub const SATURATED: f64 = 0.5;

/// One resource that could limit the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LimiterCandidate {
    /// Machine-readable name: `dram_bandwidth`, `slc_bandwidth`, `l2_bandwidth`,
    /// `l1_bandwidth`, `threadgroup_bandwidth`, `pipeline.<class>` (`pipeline.float_alu`),
    /// `bank_conflicts`, `issue_slots` or `latency`.
    pub kind: String,
    /// In words, with its figure: "DRAM bandwidth: 91% of peak".
    pub description: String,
    /// How close the resource came to its limit (0 to 1); for `latency`, the share of
    /// resident SIMD-group cycles stalled for the top reason.
    pub utilisation: f64,
}

/// The limiter of a run and the candidates it was chosen from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LimiterReport {
    /// The top limiter's `kind`.
    pub kind: String,
    /// The top limiter in words, with its figure.
    pub description: String,
    /// The top limiter's utilisation.
    pub utilisation: f64,
    /// Every candidate, the limiter first, then the throughput resources from the most
    /// used down, `latency` last unless it is the limiter.
    pub candidates: Vec<LimiterCandidate>,
}

/// The limiter of a report whose `issue`, `stalls` and `memory.levels` are filled.
pub fn find(report: &Report) -> LimiterReport {
    let mut throughput = throughput_candidates(report);
    throughput.sort_by(|a, b| rank(b).total_cmp(&rank(a)).then(a.kind.cmp(&b.kind)));
    let latency = latency_candidate(report);
    let saturated = throughput
        .first()
        .is_some_and(|c| c.utilisation >= SATURATED);
    let candidates: Vec<LimiterCandidate> = if saturated {
        throughput.into_iter().chain(latency).collect()
    } else {
        latency.into_iter().chain(throughput).collect()
    };
    let top = candidates
        .first()
        .cloned()
        .unwrap_or_else(|| LimiterCandidate {
            kind: "none".into(),
            description: "nothing ran".into(),
            utilisation: 0.0,
        });
    LimiterReport {
        kind: top.kind,
        description: top.description,
        utilisation: top.utilisation,
        candidates,
    }
}

/// The key candidates are ranked by: their utilisation, except that the issue slots
/// (which every class shares) rank below a pipeline unless more than 10% busier, since a
/// busy pipeline says more about what to change.
fn rank(c: &LimiterCandidate) -> f64 {
    if c.kind == "issue_slots" {
        c.utilisation / 1.1
    } else {
        c.utilisation
    }
}

/// A level's name as people write it.
pub fn level_name(level: &str) -> &str {
    match level {
        "l1" => "L1",
        "l2" => "L2",
        "slc" => "SLC",
        "dram" => "DRAM",
        other => other,
    }
}

/// An instruction class's pipeline as people say it.
pub fn class_name(class: &str) -> &str {
    match class {
        "float_alu" => "ALU FP32",
        "half_alu" => "ALU FP16",
        "int_alu" => "ALU integer",
        "int_mul" => "integer multiply",
        "special" => "special functions",
        "convert" => "conversions",
        "move" => "moves",
        "device_memory" => "device memory load/store",
        "threadgroup_memory" => "threadgroup memory",
        "thread_memory" => "thread memory",
        "atomic" => "atomics",
        "simd_shuffle" => "SIMD-group shuffles",
        "simd_reduce" => "SIMD-group reductions",
        "simd_matrix" => "SIMD-group matrix",
        "control" => "branches",
        other => other,
    }
}

fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn throughput_candidates(report: &Report) -> Vec<LimiterCandidate> {
    let mut out = Vec::new();
    for l in report
        .memory
        .levels
        .iter()
        .filter(|l| l.peak_gb_per_s > 0.0 && l.gb_per_s > 0.0)
    {
        out.push(LimiterCandidate {
            kind: format!("{}_bandwidth", l.level),
            description: format!(
                "{} bandwidth: {} of peak ({:.1} of {:.1} GB/s)",
                level_name(&l.level),
                percent(l.peak_fraction),
                l.gb_per_s,
                l.peak_gb_per_s
            ),
            utilisation: l.peak_fraction,
        });
    }
    let threadgroup = report.memory.threadgroup.as_ref();
    let replays = threadgroup.map_or(0.0, |t| t.replays_per_access);
    let port_busy = threadgroup.map_or(0.0, |t| t.peak_fraction);
    let conflicts = replays >= 0.5;
    // With conflicts, the replays are what fill the ports: the bank-conflict candidate
    // below stands for both.
    if let Some(t) = threadgroup.filter(|t| t.peak_fraction > 0.0 && !conflicts) {
        out.push(LimiterCandidate {
            kind: "threadgroup_bandwidth".into(),
            description: format!(
                "threadgroup memory bandwidth: {} of peak ({:.1} of {:.1} GB/s)",
                percent(port_busy),
                t.gb_per_s,
                t.gb_per_s / port_busy
            ),
            utilisation: port_busy,
        });
    }
    let Some(issue) = &report.issue else {
        return out;
    };
    for c in issue
        .classes
        .iter()
        .filter(|c| c.class != "barrier" && c.pipe_busy > 0.0)
    {
        out.push(if conflicts && c.class == "threadgroup_memory" {
            LimiterCandidate {
                kind: "bank_conflicts".into(),
                description: format!(
                    "threadgroup memory bank conflicts: {replays:.1} replays per access \
                     (its pipeline {} busy)",
                    percent(c.pipe_busy)
                ),
                utilisation: c.pipe_busy.max(port_busy),
            }
        } else {
            LimiterCandidate {
                kind: format!("pipeline.{}", c.class),
                description: format!(
                    "{} pipeline: {} busy",
                    class_name(&c.class),
                    percent(c.pipe_busy)
                ),
                utilisation: c.pipe_busy,
            }
        });
    }
    if issue.slots > 0 {
        out.push(LimiterCandidate {
            kind: "issue_slots".into(),
            description: format!(
                "instruction issue: {} of issue slots used",
                percent(issue.slot_utilisation)
            ),
            utilisation: issue.slot_utilisation,
        });
    }
    out
}

fn stall_words(reason: &str) -> &str {
    match reason {
        "memory" => "memory stalls",
        "alu" => "ALU-result stalls",
        "barrier" => "barrier waits",
        "pipeline" => "busy-pipeline stalls",
        "not_selected" => "ready but not selected",
        "control" => "branch and fetch stalls",
        "drain" => "draining memory at the end",
        other => other,
    }
}

fn latency_candidate(report: &Report) -> Option<LimiterCandidate> {
    let stalls = report.stalls.as_ref()?;
    let top = stalls
        .reasons
        .iter()
        .filter(|r| r.cycles > 0)
        .max_by(|a, b| a.cycles.cmp(&b.cycles).then(b.reason.cmp(&a.reason)))?;
    let occupancy = report
        .occupancy
        .as_ref()
        .map(|o| format!(", occupancy {}", percent(o.achieved)))
        .unwrap_or_default();
    Some(LimiterCandidate {
        kind: "latency".into(),
        description: format!(
            "latency: {} {} of resident cycles{occupancy}",
            stall_words(&top.reason),
            percent(top.of_resident)
        ),
        utilisation: top.of_resident,
    })
}
