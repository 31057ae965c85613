//! The cross-check's results: one row per kernel, summary statistics over the suite,
//! and the table people read (Markdown) and programs read (JSON).

use serde::Serialize;

use crate::measurement::Counters;

/// The simulator's counterparts of [`Counters`].
#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct SimCounters {
    /// Achieved occupancy, 0 to 1.
    pub achieved_occupancy: Option<f64>,
    /// DRAM bytes read and written.
    pub dram_bytes: Option<f64>,
    /// L2 hit rate, 0 to 1.
    pub l2_hit_rate: Option<f64>,
    /// SIMD efficiency, 0 to 1.
    pub simd_efficiency: Option<f64>,
    /// Threadgroup-memory bank-conflict replays.
    pub bank_conflicts: Option<f64>,
    /// SIMD-group instructions (of the ISA).
    pub simd_instructions: Option<f64>,
    /// Registers per thread, as the simulator counts them for occupancy.
    pub registers_per_thread: Option<f64>,
}

/// One kernel of the cross-check.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Row {
    /// The entry's name.
    pub name: String,
    /// Whether every output buffer matched (`None`: no outputs to compare).
    pub outputs_match: Option<bool>,
    /// Per buffer: name and verdict.
    pub output_details: Vec<String>,
    /// Measured time, microseconds.
    pub measured_us: f64,
    /// Simulated time, microseconds (`None` when the simulation failed).
    pub simulated_us: Option<f64>,
    /// Why the simulation failed, if it did.
    pub simulation_error: Option<String>,
    /// Measured counters.
    pub measured: Counters,
    /// Simulated counters.
    pub simulated: SimCounters,
}

impl Row {
    /// `(simulated − measured) / measured`.
    pub fn time_error(&self) -> Option<f64> {
        self.simulated_us
            .map(|s| (s - self.measured_us) / self.measured_us)
    }

    /// The measured SIMD efficiency over the simulated kernel's own instructions: one
    /// less the measured idle lane slots (`(1 − efficiency) × instructions`, Nsight
    /// Compute's `32 × inst_executed − thread_inst_executed` over 32) per simulated
    /// SIMD-group instruction. A GPU that runs more instructions than the ISA (the
    /// generated CUDA's thread-position prologue, bounds checks, 64-bit address
    /// arithmetic) has a higher plain efficiency when those extras run with every lane
    /// active; this figure leaves them out, on that assumption, so that it compares
    /// with the simulated efficiency (docs/validation.md). `None` without both
    /// instruction counts and the measured efficiency, or when the measured idle slots
    /// exceed the simulated instructions (the assumption fails).
    pub fn isa_simd_efficiency(&self) -> Option<f64> {
        let idle = (1.0 - self.measured.simd_efficiency?) * self.measured.simd_instructions?;
        let own = self.simulated.simd_instructions.filter(|&n| n > 0.0)?;
        let e = 1.0 - idle / own;
        (0.0..=1.0).contains(&e).then_some(e)
    }
}

/// Statistics of the time error over the kernels that have both times.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Summary {
    /// Kernels compared.
    pub kernels: usize,
    /// Kernels whose outputs all matched.
    pub outputs_matched: usize,
    /// Kernels with output buffers compared.
    pub outputs_compared: usize,
    /// Mean absolute percentage error of the time.
    pub mape: f64,
    /// Pearson correlation of simulated and measured times.
    pub correlation: f64,
    /// Pearson correlation of their logarithms (kernels span orders of magnitude).
    pub log_correlation: f64,
    /// 90th percentile of the absolute percentage error (nearest rank).
    pub p90_error: f64,
    /// The largest absolute percentage error and its kernel.
    pub worst_error: f64,
    /// The kernel with the largest error.
    pub worst_kernel: String,
}

/// The summary of a set of rows (`None` when no row has both times).
pub fn summarize(rows: &[Row]) -> Option<Summary> {
    let timed: Vec<(&Row, f64)> = rows
        .iter()
        .filter_map(|r| r.time_error().map(|e| (r, e.abs() * 100.0)))
        .collect();
    if timed.is_empty() {
        return None;
    }
    let n = timed.len();
    let mape = timed.iter().map(|(_, e)| e).sum::<f64>() / n as f64;
    let mut errors: Vec<f64> = timed.iter().map(|(_, e)| *e).collect();
    errors.sort_by(f64::total_cmp);
    let rank = ((0.9 * n as f64).ceil() as usize).clamp(1, n);
    let (worst_row, worst) = timed
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(r, e)| (*r, *e))
        .unwrap_or((timed[0].0, 0.0));
    let xs: Vec<f64> = timed.iter().map(|(r, _)| r.measured_us).collect();
    let ys: Vec<f64> = timed.iter().filter_map(|(r, _)| r.simulated_us).collect();
    let log = |v: &[f64]| v.iter().map(|x| x.max(1e-9).ln()).collect::<Vec<_>>();
    Some(Summary {
        kernels: n,
        outputs_matched: rows
            .iter()
            .filter(|r| r.outputs_match == Some(true))
            .count(),
        outputs_compared: rows.iter().filter(|r| r.outputs_match.is_some()).count(),
        mape,
        correlation: pearson(&xs, &ys),
        log_correlation: pearson(&log(&xs), &log(&ys)),
        p90_error: errors[rank - 1],
        worst_error: worst,
        worst_kernel: worst_row.name.clone(),
    })
}

/// Pearson's correlation coefficient (0 when either side is constant).
pub fn pearson(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len().min(ys.len());
    if n < 2 {
        return 0.0;
    }
    let mx = xs[..n].iter().sum::<f64>() / n as f64;
    let my = ys[..n].iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (xs[i] - mx, ys[i] - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

fn pair(m: Option<f64>, s: Option<f64>, fmt: fn(f64) -> String) -> String {
    let f = |x: Option<f64>| x.map(fmt).unwrap_or_else(|| "–".into());
    format!("{} / {}", f(m), f(s))
}

fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn megabytes(x: f64) -> String {
    format!("{:.1}", x / 1e6)
}

fn count(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// The table in Markdown: a header naming the device and the model, one row per
/// kernel (each counter as `measured / simulated`), then the summary.
pub fn table(rows: &[Row], device: &str, model: &str) -> String {
    let mut s = format!(
        "Cross-check: measured on {device}, simulated with model `{model}`.\n\
         Measured µs: median of CUDA-event (or other GPU-timestamp) timings, launch overhead\n\
         included; profiler µs: the kernel's duration under the profiler. Counters are\n\
         `measured / simulated`; – where one side has none.\n\n\
         SIMD eff. (ISA): the measured idle lane slots over the simulated instructions\n\
         (docs/validation.md).\n\n\
         | kernel | outputs | measured µs | simulated µs | error | profiler µs | occupancy | registers | DRAM MB | L2 hit | SIMD eff. | SIMD eff. (ISA) | bank conflicts | SIMD-group insts |\n\
         |---|---|---:|---:|---:|---:|---|---|---|---|---|---|---|---|\n"
    );
    for r in rows {
        let outputs = match r.outputs_match {
            Some(true) => "match",
            Some(false) => "DIFFER",
            None => "–",
        };
        let sim = match (r.simulated_us, &r.simulation_error) {
            (Some(t), _) => format!("{t:.2}"),
            (None, Some(_)) => "failed".into(),
            (None, None) => "–".into(),
        };
        let err = r
            .time_error()
            .map(|e| format!("{:+.0}%", e * 100.0))
            .unwrap_or_else(|| "–".into());
        let m = &r.measured;
        let x = &r.simulated;
        s += &format!(
            "| {} | {outputs} | {:.2} | {sim} | {err} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.name,
            r.measured_us,
            m.profiler_duration_us
                .map(|d| format!("{d:.2}"))
                .unwrap_or_else(|| "–".into()),
            pair(m.achieved_occupancy, x.achieved_occupancy, percent),
            pair(m.registers_per_thread, x.registers_per_thread, count),
            pair(m.dram_bytes(), x.dram_bytes, megabytes),
            pair(m.l2_hit_rate, x.l2_hit_rate, percent),
            pair(m.simd_efficiency, x.simd_efficiency, percent),
            pair(r.isa_simd_efficiency(), x.simd_efficiency, percent),
            pair(m.bank_conflicts, x.bank_conflicts, count),
            pair(m.simd_instructions, x.simd_instructions, count),
        );
    }
    match summarize(rows) {
        Some(sum) => {
            // A correlation needs two points at least.
            let correlation = if sum.kernels < 2 {
                "correlation – (one kernel)".to_string()
            } else {
                format!(
                    "correlation {:.3} (of logarithms {:.3})",
                    sum.correlation, sum.log_correlation
                )
            };
            s += &format!(
                "\nSummary over {} kernel{}: outputs matched in {} of {} compared; time MAPE \
                 {:.1}%, {correlation}, 90th percentile error {:.1}%, worst {:.1}% (`{}`).\n",
                sum.kernels,
                if sum.kernels == 1 { "" } else { "s" },
                sum.outputs_matched,
                sum.outputs_compared,
                sum.mape,
                sum.p90_error,
                sum.worst_error,
                sum.worst_kernel
            );
        }
        None => s += "\nNo kernel has both a measured and a simulated time.\n",
    }
    for r in rows {
        if let Some(e) = &r.simulation_error {
            s += &format!("\n`{}`: simulation failed: {e}\n", r.name);
        }
        if r.outputs_match == Some(false) {
            s += &format!(
                "\n`{}`: outputs differ: {}\n",
                r.name,
                r.output_details.join("; ")
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, measured: f64, simulated: Option<f64>) -> Row {
        Row {
            name: name.into(),
            outputs_match: Some(true),
            output_details: vec![],
            measured_us: measured,
            simulated_us: simulated,
            simulation_error: None,
            measured: Counters {
                simd_efficiency: Some(1.0),
                ..Counters::default()
            },
            simulated: SimCounters {
                simd_efficiency: Some(0.5),
                ..SimCounters::default()
            },
        }
    }

    #[test]
    fn summary_statistics_by_hand() {
        // Errors: +10%, -20%, +50%, 0%: MAPE 20%, p90 (nearest rank 4 of 4) 50%.
        let rows = [
            row("a", 10.0, Some(11.0)),
            row("b", 100.0, Some(80.0)),
            row("c", 2.0, Some(3.0)),
            row("d", 5.0, Some(5.0)),
            row("e", 7.0, None),
        ];
        let s = summarize(&rows).unwrap();
        assert_eq!(s.kernels, 4);
        assert!((s.mape - 20.0).abs() < 1e-9);
        assert!((s.p90_error - 50.0).abs() < 1e-9);
        assert_eq!(s.worst_kernel, "c");
        assert!(s.correlation > 0.99);
        assert_eq!(s.outputs_matched, 5);
    }

    #[test]
    fn isa_simd_efficiency_drops_the_extra_full_instructions() {
        // 3.38 M instructions at 61%: 1.318 M idle slots; over 2.82 M ISA instructions,
        // 53.3% (divergence@2 of run 5).
        let mut r = row("d", 1.0, Some(1.0));
        r.measured.simd_efficiency = Some(0.61);
        r.measured.simd_instructions = Some(3.38e6);
        r.simulated.simd_instructions = Some(2.82e6);
        let e = r.isa_simd_efficiency().unwrap();
        assert!((e - (1.0 - 0.39 * 3.38 / 2.82)).abs() < 1e-12, "{e}");
        // All lanes active: 100% whatever the counts.
        r.measured.simd_efficiency = Some(1.0);
        assert_eq!(r.isa_simd_efficiency(), Some(1.0));
        // More idle slots than ISA instructions: no figure.
        r.measured.simd_efficiency = Some(0.1);
        assert_eq!(r.isa_simd_efficiency(), None);
        r.simulated.simd_instructions = None;
        assert_eq!(r.isa_simd_efficiency(), None);
    }

    #[test]
    fn pearson_of_lines() {
        assert!((pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]) - 1.0).abs() < 1e-12);
        assert!((pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        assert_eq!(pearson(&[1.0, 1.0], &[1.0, 2.0]), 0.0);
    }

    #[test]
    fn table_text() {
        let mut failed = row("broken", 4.0, None);
        failed.simulation_error = Some("kernel fault".into());
        failed.outputs_match = None;
        let mut copy = row("copy", 10.0, Some(12.5));
        copy.measured.registers_per_thread = Some(40.0);
        copy.simulated.registers_per_thread = Some(16.0);
        let t = table(&[copy, failed], "GPU", "m1");
        insta::assert_snapshot!(t);
    }
}
