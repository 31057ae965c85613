//! Sampled timing: every threadgroup runs functionally, windows of them are timed by the
//! [`Model`], the rest of the time is extrapolated with an error bound.
//!
//! The plan: windows of consecutive threadgroups, each a few *waves* (the threadgroups the
//! GPU holds at once), evenly spaced from the first threadgroup to the last, together at
//! most [`SamplingPlan::timed_percent`] of the dispatch; the stretches between them run
//! untimed, a wave at a time in the parallel rounds of `--timing off` (on every worker,
//! with the same outcome for any number of them, see [`super::untimed`]). Each window is a fresh model run on
//! an idle GPU; the estimate (see [`estimate`]) is the first window's time plus every
//! other threadgroup's instructions at the rate the windows' steady parts measured for
//! its class (and at least the DRAM traffic's time). Where an untimed stretch meets a
//! class of threadgroups no window has timed yet, the next threadgroups are timed at once
//! (up to [`SamplingPlan::extra_windows`] times). A grid too small for the windows to
//! save time is timed fully.
//!
//! Outputs, instruction counts and findings are those of any other run (for race-free
//! kernels); the timing model's counters (occupancy, caches, DRAM bytes) are those of
//! the timed windows, unscaled, and the profile is the first window's.

mod estimate;

use std::collections::BTreeSet;

use metalsim_isa::Function;
use metalsim_models::Gpu;

use self::estimate::{ClassTotals, Window, add_to, class_of};
use super::occupancy::Residency;
use super::untimed::Parallel;
use super::{Cycle, Model, Timing, TimingReport};
use crate::fault::KernelFault;
use crate::machine::Machine;
use crate::outcome::LevelCounters;

/// How a sampled run picks the threadgroups it times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SamplingPlan {
    /// The percentage of the dispatch's threadgroups the evenly spaced windows time
    /// together, at most (there are at least [`SamplingPlan::min_windows`] of them).
    pub timed_percent: u32,
    /// Waves (threadgroups the GPU holds at once) per window: the first
    /// [`SamplingPlan::warmup_waves`] warm the caches, the last drains the GPU, those
    /// between are measured.
    pub waves_per_window: u32,
    /// Waves at the start of each window that only warm it up (not measured), at least.
    /// In a grid of more than one row the warm-up covers a row of threadgroups too (up
    /// to 4 waves): 2D kernels share data along rows, and a window must
    /// have touched a whole row's data before it is as warm as the full run.
    pub warmup_waves: u32,
    /// Evenly spaced windows, at least; a grid with room for fewer than twice as many
    /// threadgroups as they hold is timed fully.
    pub min_windows: u32,
    /// Windows the run may add where a class of threadgroups (by instruction count) that
    /// no window timed shows up in an untimed stretch.
    pub extra_windows: u32,
}

impl Default for SamplingPlan {
    fn default() -> Self {
        SamplingPlan {
            timed_percent: 15,
            waves_per_window: 3,
            warmup_waves: 1,
            min_windows: 3,
            extra_windows: 4,
        }
    }
}

/// How a sampled run's time was estimated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sampling {
    /// The grid was too small to sample: every threadgroup was timed, the time is exact.
    pub timed_fully: bool,
    /// Threadgroups timed by the model.
    pub threadgroups_timed: u64,
    /// Timed windows.
    pub windows: u32,
    /// Threadgroups the GPU holds at once (a wave).
    pub wave: u64,
    /// The half-width of the estimate's error bound, in cycles (`Stats::cycles` is the
    /// estimate): a 95% confidence interval of the rate plus a share of the time of
    /// threadgroup classes no window measured.
    pub bound_cycles: u64,
    /// Cycles the windows took together.
    pub timed_cycles: u64,
    /// Cycles the first window took (the profile's span).
    pub first_window_cycles: u64,
    /// Classes of threadgroups (by SIMD-group instruction count) outside the first window.
    pub classes: u32,
    /// Of those, classes no window measured (timed at the nearest class's rate).
    pub unmeasured_classes: u32,
    /// Threadgroups in them.
    pub unmeasured_threadgroups: u64,
    /// Cycles per 1000 SIMD-group instructions that each rate sample (a window's steady
    /// part) measured.
    pub rate_samples: Vec<f64>,
    /// The estimate is the DRAM-traffic floor (the windows' DRAM bytes per instruction,
    /// for all instructions, at DRAM bandwidth), above the issue-rate estimate.
    pub dram_bound: bool,
}

/// The most waves a row of threadgroups adds to a window's warm-up.
const MAX_WARMUP_WAVES: u64 = 4;

/// The sampled scheduler.
pub(crate) struct Sampled<'g> {
    gpu: &'g Gpu,
    profile: Option<&'g Function>,
    plan: SamplingPlan,
    /// Worker threads of the untimed stretches.
    workers: usize,
}

/// What the windows so far gave.
#[derive(Default)]
struct Gathered {
    windows: Vec<Window>,
    /// The threadgroups outside the first window, per class.
    rest: ClassTotals,
    /// Classes some window timed.
    timed: BTreeSet<i32>,
    /// The first window's report; the others' counters are added to its summary.
    report: TimingReport,
    threadgroups_timed: u64,
    extra_left: u32,
}

impl<'g> Sampled<'g> {
    /// Sampled timing of `gpu` as `plan` says, its untimed stretches on `workers`
    /// threads; with `profile`, the function the machine runs, the first window is
    /// profiled.
    pub fn new(
        gpu: &'g Gpu,
        profile: Option<&'g Function>,
        plan: SamplingPlan,
        workers: usize,
    ) -> Self {
        Sampled {
            gpu,
            profile,
            plan,
            workers,
        }
    }

    /// Runs every threadgroup of the dispatch on `m`: what the timing model reports (its
    /// cycles the estimate) and how it was sampled.
    pub fn run(&self, m: &mut Machine) -> (TimingReport, Sampling) {
        let total = m.threadgroup_count();
        let wave = self.wave(m);
        let [row, rows, layers] = m.threadgroups_per_grid();
        let row_waves = if rows > 1 || layers > 1 {
            (row as u64).div_ceil(wave).min(MAX_WARMUP_WAVES)
        } else {
            1
        };
        let warmup = wave * row_waves.max(self.plan.warmup_waves.max(1) as u64);
        // Warm-up, a measured wave at least, and the drain.
        let window = wave * (self.plan.waves_per_window as u64).max(warmup / wave + 2);
        let by_share = total * self.plan.timed_percent as u64 / 100 / window;
        let count = by_share.max(self.plan.min_windows.max(1) as u64);
        if count * window * 2 > total {
            let report = Model::new(self.gpu, self.profile).run(m);
            let sampling = Sampling {
                timed_fully: true,
                threadgroups_timed: m.started(),
                windows: 1,
                wave,
                timed_cycles: report.cycles.0,
                first_window_cycles: report.cycles.0,
                ..Sampling::default()
            };
            return (report, sampling);
        }
        let starts: Vec<u64> = (0..count)
            .map(|j| j * (total - window) / (count - 1).max(1))
            .collect();
        m.log_retired();
        let mut g = Gathered {
            extra_left: self.plan.extra_windows,
            ..Gathered::default()
        };
        let mut fault = None;
        // The workers' machines, kept from one untimed stretch to the next.
        let mut spare = Vec::new();
        for (j, &start) in starts.iter().enumerate() {
            fault = self
                .untimed_until(m, start, (wave, window), &mut g, &mut spare)
                .or_else(|| self.time_window(m, start + window, j == 0, &mut g));
            if fault.is_some() {
                break;
            }
        }
        if fault.is_none() {
            fault = self.untimed_until(m, total, (wave, window), &mut g, &mut spare);
        }
        let e = estimate::estimate(
            &g.windows,
            (wave, warmup),
            self.gpu.dram_bytes_per_cycle(),
            &g.rest,
        );
        let mut report = g.report;
        report.cycles = Cycle(e.cycles);
        report.fault = fault;
        let sampling = Sampling {
            timed_fully: false,
            threadgroups_timed: g.threadgroups_timed,
            windows: g.windows.len() as u32,
            wave,
            bound_cycles: e.bound,
            timed_cycles: g.windows.iter().map(|w| w.cycles).sum(),
            first_window_cycles: g.windows.first().map_or(0, |w| w.cycles),
            classes: e.classes,
            unmeasured_classes: e.unmeasured_classes,
            unmeasured_threadgroups: e.unmeasured_threadgroups,
            rate_samples: e.samples,
            dram_bound: e.dram_bound,
        };
        (report, sampling)
    }

    /// Threadgroups the GPU holds at once: the residency limits of the first one, times
    /// the cores.
    fn wave(&self, m: &Machine) -> u64 {
        let Some(shape) = m.peek_next() else { return 1 };
        let residency = Residency::new(self.gpu, m.program().register_use);
        let cost = residency.cost(shape.threads, m.threadgroup_bytes() as u64);
        let (groups, _) = residency.groups_per_core(&cost);
        groups.max(1) as u64 * self.gpu.cores.max(1) as u64
    }

    /// Runs the threadgroups up to linear index `end` untimed, a wave at a time, timing a
    /// window of `window` threadgroups at once after a wave with a class no window timed
    /// (while extra windows are left and it ends before `end`).
    fn untimed_until<'a>(
        &self,
        m: &mut Machine<'a>,
        end: u64,
        (wave, window): (u64, u64),
        g: &mut Gathered,
        spare: &mut Vec<Machine<'a>>,
    ) -> Option<KernelFault> {
        if m.started() >= end {
            return None;
        }
        // The workers run from here until a window is timed; their machines are kept
        // in `spare` in between.
        let mut workers = Parallel::begin_reusing(m, self.workers, std::mem::take(spare));
        while m.started() < end {
            // A wave at a time while a new class could still get a window; then the rest
            // at once (the same threadgroups, in fewer and fuller rounds).
            let step = if g.extra_left > 0 { wave } else { end };
            m.set_limit(m.started().saturating_add(step).min(end));
            if let Some(f) = workers.run(m) {
                *spare = workers.end(m);
                return Some(f);
            }
            let mut new_class = false;
            for r in m.take_retired() {
                add_to(&mut g.rest, r.instructions);
                new_class |= !g.timed.contains(&class_of(r.instructions));
            }
            if new_class && g.extra_left > 0 && m.started() + window <= end {
                g.extra_left -= 1;
                let until = m.started() + window;
                *spare = workers.end(m);
                if let Some(f) = self.time_window(m, until, false, g) {
                    return Some(f);
                }
                workers = Parallel::begin_reusing(m, self.workers, std::mem::take(spare));
            }
        }
        *spare = workers.end(m);
        None
    }

    /// Times the threadgroups up to linear index `end` with a fresh model.
    fn time_window(
        &self,
        m: &mut Machine,
        end: u64,
        first: bool,
        g: &mut Gathered,
    ) -> Option<KernelFault> {
        m.set_limit(end);
        let profile = if first { self.profile } else { None };
        let report = Model::new(self.gpu, profile).run(m);
        let retired = m.take_retired();
        g.threadgroups_timed += retired.len() as u64;
        for r in &retired {
            g.timed.insert(class_of(r.instructions));
            if !first {
                add_to(&mut g.rest, r.instructions);
            }
        }
        g.windows.push(Window {
            cycles: report.cycles.0,
            retired,
            dram_bytes: report.dram_bytes,
        });
        let fault = report.fault.clone();
        if first {
            g.report = report;
        } else {
            merge(
                &mut g.report,
                report,
                g.windows.iter().map(|w| w.cycles).sum(),
            );
        }
        fault
    }
}

/// Adds the counters of a later window's `report` to those gathered in `into` (achieved
/// occupancy weighted by cycles; `timed` is the windows' cycles with this one).
fn merge(into: &mut TimingReport, report: TimingReport, timed: u64) {
    into.dram_bytes += report.dram_bytes;
    let (Some(a), Some(b)) = (&mut into.summary, report.summary) else {
        return;
    };
    let add = |x: &mut LevelCounters, y: LevelCounters| {
        x.hits += y.hits;
        x.misses += y.misses;
    };
    add(&mut a.l1, b.l1);
    add(&mut a.l2, b.l2);
    add(&mut a.slc, b.slc);
    a.bank_conflict_replays += b.bank_conflict_replays;
    let before = timed.saturating_sub(report.cycles.0) as f64;
    let achieved = a.occupancy.achieved * before + b.occupancy.achieved * report.cycles.0 as f64;
    a.occupancy.achieved = achieved / (timed.max(1) as f64);
}
