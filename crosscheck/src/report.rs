//! The cross-check's results: one row per kernel, summary statistics over the suite,
//! and the table people read (Markdown) and programs read (JSON).

use serde::Serialize;

use crate::measurement::{Counters, OtherBuild};

/// The largest relative difference of a counter that counts as agreement (the
/// cross-check issue's 10%).
pub const COUNTER_TOLERANCE: f64 = 0.10;

/// DRAM traffic below this many bytes is not compared: a few sectors more or less
/// would be a large share of it.
pub const DRAM_FLOOR_BYTES: f64 = 1e6;

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
    /// The same kernel's other builds, as measured.
    pub other_builds: Vec<OtherBuild>,
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
        isa_efficiency(&self.measured, &self.simulated)
    }
}

/// [`Row::isa_simd_efficiency`] of any build's counters.
fn isa_efficiency(measured: &Counters, simulated: &SimCounters) -> Option<f64> {
    let idle = (1.0 - measured.simd_efficiency?) * measured.simd_instructions?;
    let own = simulated.simd_instructions.filter(|&n| n > 0.0)?;
    let e = 1.0 - idle / own;
    (0.0..=1.0).contains(&e).then_some(e)
}

/// A counter the cross-check holds to [`COUNTER_TOLERANCE`].
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub enum CheckedCounter {
    /// DRAM bytes read and written, on kernels that move [`DRAM_FLOOR_BYTES`] or more.
    DramBytes,
    /// SIMD efficiency over the ISA's instructions ([`Row::isa_simd_efficiency`]).
    IsaSimdEfficiency,
}

impl CheckedCounter {
    /// Every checked counter, in the table's order.
    pub const ALL: [CheckedCounter; 2] =
        [CheckedCounter::DramBytes, CheckedCounter::IsaSimdEfficiency];

    /// Its name in the table, with the kernels it is compared on.
    pub fn title(self) -> String {
        match self {
            CheckedCounter::DramBytes => format!(
                "DRAM bytes (kernels measured at {} MB or more)",
                DRAM_FLOOR_BYTES / 1e6
            ),
            CheckedCounter::IsaSimdEfficiency => "SIMD efficiency (ISA)".into(),
        }
    }

    /// As one build of `row` measured it (`counters`), where it is compared.
    fn measured(self, row: &Row, counters: &Counters) -> Option<f64> {
        match self {
            CheckedCounter::DramBytes => counters.dram_bytes().filter(|&b| b >= DRAM_FLOOR_BYTES),
            CheckedCounter::IsaSimdEfficiency => isa_efficiency(counters, &row.simulated),
        }
    }

    /// As the simulation counted it.
    fn simulated(self, row: &Row) -> Option<f64> {
        match self {
            CheckedCounter::DramBytes => row.simulated.dram_bytes,
            CheckedCounter::IsaSimdEfficiency => row.simulated.simd_efficiency,
        }
    }

    /// A figure of it, as the table writes it.
    fn number(self, x: f64) -> String {
        match self {
            CheckedCounter::DramBytes => megabytes(x),
            CheckedCounter::IsaSimdEfficiency => percent(x),
        }
    }

    /// The unit after a figure (or after the second of two).
    fn unit(self) -> &'static str {
        match self {
            CheckedCounter::DramBytes => " MB",
            CheckedCounter::IsaSimdEfficiency => "",
        }
    }
}

/// How one counter compares over the suite at [`COUNTER_TOLERANCE`].
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct CounterCheck {
    /// The counter.
    pub counter: CheckedCounter,
    /// Kernels with the counter on both sides.
    pub compared: usize,
    /// How many of them agree within the tolerance.
    pub within: usize,
    /// The others.
    pub off: Vec<CounterOff>,
}

/// A kernel whose counter is off by more than the tolerance.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct CounterOff {
    /// The kernel.
    pub kernel: String,
    /// The main build's figure.
    pub measured: f64,
    /// The simulated figure.
    pub simulated: f64,
    /// The lowest and highest measured figure over the kernel's builds, when it has
    /// other builds.
    pub builds_range: Option<(f64, f64)>,
}

impl CounterOff {
    /// `(simulated − measured) / measured`.
    pub fn error(&self) -> f64 {
        (self.simulated - self.measured) / self.measured
    }

    /// How far the builds' figures spread, over the main build's.
    pub fn builds_spread(&self) -> Option<f64> {
        let (lo, hi) = self.builds_range?;
        Some((hi - lo) / self.measured)
    }

    /// Whether the simulated figure lies within the builds' range.
    pub fn inside_builds(&self) -> Option<bool> {
        let (lo, hi) = self.builds_range?;
        Some((lo..=hi).contains(&self.simulated))
    }
}

/// Every [`CheckedCounter`] over the suite.
pub fn check_counters(rows: &[Row]) -> Vec<CounterCheck> {
    CheckedCounter::ALL
        .iter()
        .map(|&counter| {
            let mut check = CounterCheck {
                counter,
                compared: 0,
                within: 0,
                off: Vec::new(),
            };
            for r in rows {
                let (Some(m), Some(x)) = (counter.measured(r, &r.measured), counter.simulated(r))
                else {
                    continue;
                };
                if m <= 0.0 {
                    continue;
                }
                check.compared += 1;
                if ((x - m) / m).abs() <= COUNTER_TOLERANCE {
                    check.within += 1;
                    continue;
                }
                let all: Vec<f64> = std::iter::once(&r.measured)
                    .chain(r.other_builds.iter().map(|b| &b.counters))
                    .filter_map(|c| counter.measured(r, c))
                    .collect();
                check.off.push(CounterOff {
                    kernel: r.name.clone(),
                    measured: m,
                    simulated: x,
                    builds_range: (all.len() > 1).then(|| {
                        let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        (lo, hi)
                    }),
                });
            }
            check
        })
        .collect()
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
    for check in check_counters(rows) {
        s += &counter_text(&check);
    }
    s += &builds_table(rows);
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

/// One counter's agreement over the suite, as a paragraph (empty when no kernel has it
/// on both sides).
fn counter_text(check: &CounterCheck) -> String {
    if check.compared == 0 {
        return String::new();
    }
    let number = |x| check.counter.number(x);
    let unit = check.counter.unit();
    let off: Vec<String> = check
        .off
        .iter()
        .map(|o| {
            let mut t = format!("`{}` {:+.0}%", o.kernel, o.error() * 100.0);
            if let (Some((lo, hi)), Some(spread), Some(inside)) =
                (o.builds_range, o.builds_spread(), o.inside_builds())
            {
                t += &format!(
                    " (its builds measured {} to {}{unit}, a spread of {:.0}% of the main \
                     build's; the simulated {}{unit} lies {} them)",
                    number(lo),
                    number(hi),
                    spread * 100.0,
                    number(o.simulated),
                    if inside { "between" } else { "outside" }
                );
            }
            t
        })
        .collect();
    format!(
        "\n{}: within {:.0}% on {} of {} kernel{}{}\n",
        check.counter.title(),
        COUNTER_TOLERANCE * 100.0,
        check.within,
        check.compared,
        if check.compared == 1 { "" } else { "s" },
        if off.is_empty() {
            ".".to_string()
        } else {
            format!("; off: {}.", off.join("; "))
        }
    )
}

/// The kernels' other builds beside their main ones (empty when none has any).
fn builds_table(rows: &[Row]) -> String {
    if rows.iter().all(|r| r.other_builds.is_empty()) {
        return String::new();
    }
    let mut s = String::from(
        "\nBuilds: the same source built in other ways and measured alike; the main \
         build's figures are the table's. Outputs: whether a build wrote the main \
         build's bytes.\n\n\
         | kernel | build | outputs | measured µs | occupancy | registers | DRAM MB | SIMD eff. (ISA) |\n\
         |---|---|---|---:|---|---|---|---|\n",
    );
    let cell = |x: Option<f64>, f: fn(f64) -> String| x.map(f).unwrap_or_else(|| "–".into());
    for r in rows.iter().filter(|r| !r.other_builds.is_empty()) {
        let main = std::iter::once(("main", "–", r.measured_us, &r.measured));
        let others = r.other_builds.iter().map(|b| {
            let outputs = match b.outputs_identical {
                Some(true) => "same",
                Some(false) => "DIFFER",
                None => "–",
            };
            (b.build.as_str(), outputs, b.time_us, &b.counters)
        });
        for (build, outputs, time, c) in main.chain(others) {
            s += &format!(
                "| {} | {build} | {outputs} | {time:.2} | {} | {} | {} | {} |\n",
                r.name,
                cell(c.achieved_occupancy, percent),
                cell(c.registers_per_thread, count),
                cell(c.dram_bytes(), megabytes),
                cell(isa_efficiency(c, &r.simulated), percent),
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
            other_builds: vec![],
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

    /// A row moving `measured` DRAM bytes, simulated as `simulated`.
    fn dram_row(name: &str, measured: f64, simulated: f64) -> Row {
        let mut r = row(name, 1.0, Some(1.0));
        r.measured.dram_bytes_read = Some(measured);
        r.measured.dram_bytes_written = Some(0.0);
        r.simulated.dram_bytes = Some(simulated);
        r
    }

    fn build(name: &str, dram: f64, same: Option<bool>) -> OtherBuild {
        OtherBuild {
            build: name.into(),
            time_us: 2.0,
            counters: Counters {
                dram_bytes_read: Some(dram),
                dram_bytes_written: Some(0.0),
                ..Counters::default()
            },
            outputs_identical: same,
        }
    }

    #[test]
    fn counters_are_held_to_the_tolerance_and_builds_give_their_range() {
        let mut spread = dram_row("spread", 30e6, 39e6);
        spread.other_builds = vec![build("-O1", 34e6, Some(true)), build("-O0", 47e6, None)];
        let mut narrow = dram_row("narrow", 30e6, 39e6);
        narrow.other_builds = vec![build("-O1", 31e6, Some(false))];
        let rows = [
            dram_row("close", 100e6, 109e6),
            dram_row("tiny", 0.5e6, 5e6),
            spread,
            narrow,
        ];
        let checks = check_counters(&rows);
        let dram = &checks[0];
        // `tiny` is under the floor: three kernels compared, one within 10%.
        assert_eq!((dram.compared, dram.within), (3, 1));
        let spread = &dram.off[0];
        assert_eq!(spread.builds_range, Some((30e6, 47e6)));
        assert!((spread.error() - 0.3).abs() < 1e-9);
        assert!((spread.builds_spread().unwrap() - 17.0 / 30.0).abs() < 1e-9);
        assert_eq!(spread.inside_builds(), Some(true));
        assert_eq!(dram.off[1].inside_builds(), Some(false));
        // Every row measures 100% against 50% simulated.
        assert_eq!((checks[1].compared, checks[1].within), (0, 0));
        insta::assert_snapshot!(table(&rows, "GPU", "h100"));
    }
}
