//! The estimate of a sampled run from its timed windows, and its error bound.
//!
//! Each timed window starts on an idle GPU with cold caches and ends by draining it, so
//! only its middle is what the full run looks like: the *steady part*, from its
//! `warmup`-th finished threadgroup (the first waves have warmed the caches) to the last
//! one that finished before the window ran out of threadgroups to admit (a `wave` before
//! its end). There the model's cycles per SIMD-group instruction (CPI) is the whole
//! GPU's throughput for that kind of work.
//!
//! The first window starts where the full run starts and drains as the full run drains,
//! so the estimate is its time plus every other threadgroup's instructions at the CPI of
//! its class (threadgroups grouped by instruction count, [`class_of`]). The bound adds a
//! 95% confidence interval from the spread of the windows' CPIs; for classes no window
//! measured, half of their share (or the spread between the measured classes, if
//! larger); and a wave at the steady rate, since the full run's ramp and last wave differ
//! from the first window's (its last wave may be partly empty, where the estimate counts
//! threadgroups as a continuous stream).
//!
//! A timed run ends no earlier than its DRAM traffic takes at DRAM bandwidth, and stores
//! reach DRAM mostly when dirty lines are written back, which a window's small footprint
//! puts off to its end, outside its steady part. So the estimate is at least the windows'
//! DRAM bytes per SIMD-group instruction, times all instructions, at DRAM bandwidth
//! (bounded by the spread of the windows' bytes per instruction). Windows start with cold
//! caches and write back partly written lines at their end, so for kernels that share
//! data or cache lines between far-apart threadgroups this floor is high. Where it
//! exceeds the issue-rate estimate it is the estimate, and the bound reaches down to the
//! issue-rate estimate at least: the truth lies between the two.

use std::collections::BTreeMap;

use distrs::StudentsT;

use crate::machine::Retired;

/// Classes per doubling of the instruction count: threadgroups whose counts differ by
/// less than about 19% fall in the same or neighbouring classes.
const CLASSES_PER_OCTAVE: f64 = 4.0;

/// The share of their time charged to the bound for threadgroups of a class no window
/// measured (they are timed at the nearest measured class's rate).
const UNMEASURED_SHARE: f64 = 0.5;

/// The relative bound of the rate when fewer than two rate samples exist.
const SINGLE_SAMPLE_SHARE: f64 = 0.5;

/// The class of a threadgroup that ran `instructions` SIMD-group instructions: threadgroups
/// that run the same blocks the same number of times (the same basic-block profile)
/// share it.
pub(crate) fn class_of(instructions: u64) -> i32 {
    if instructions == 0 {
        return i32::MIN;
    }
    ((instructions as f64).log2() * CLASSES_PER_OCTAVE).round() as i32
}

/// Threadgroups and their SIMD-group instructions, per class.
pub(crate) type ClassTotals = BTreeMap<i32, (u64, u64)>;

/// Adds a threadgroup of `instructions` to `totals`.
pub(crate) fn add_to(totals: &mut ClassTotals, instructions: u64) {
    let e = totals.entry(class_of(instructions)).or_default();
    e.0 += 1;
    e.1 += instructions;
}

/// One window timed by the model.
#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    /// The cycles the model took for it, from an idle GPU until it drained.
    pub cycles: u64,
    /// Its threadgroups in the order they finished.
    pub retired: Vec<Retired>,
    /// Bytes it moved to and from DRAM, its final write-back included.
    pub dram_bytes: u64,
}

impl Window {
    fn instructions(&self) -> u64 {
        self.retired.iter().map(|r| r.instructions).sum()
    }
}

/// What the steady part of a window (or a piece of it) measured.
#[derive(Clone, Debug, Default, PartialEq)]
struct Rate {
    cycles: f64,
    instructions: f64,
    /// Instructions of the threadgroups that finished in it, per class.
    finished: BTreeMap<i32, u64>,
}

impl Rate {
    fn cpi(&self) -> f64 {
        self.cycles / self.instructions
    }
}

/// The rate between the `a`-th and the `b`-th threadgroup to finish (1-based).
fn rate(w: &Window, a: usize, b: usize) -> Option<Rate> {
    if a == 0 || b <= a || b > w.retired.len() {
        return None;
    }
    let (from, to) = (&w.retired[a - 1], &w.retired[b - 1]);
    let cycles = to.cycle.checked_sub(from.cycle)?;
    let instructions = to
        .machine_instructions
        .checked_sub(from.machine_instructions)?;
    if cycles == 0 || instructions == 0 {
        return None;
    }
    let mut finished = BTreeMap::new();
    for r in &w.retired[a..b] {
        *finished.entry(class_of(r.instructions)).or_default() += r.instructions;
    }
    Some(Rate {
        cycles: cycles as f64,
        instructions: instructions as f64,
        finished,
    })
}

/// The steady part of a window (after `warmup` threadgroups finished, until a `wave`
/// before its end) cut into `pieces` (none when it has no steady part).
fn steady(w: &Window, (warmup, wave): (usize, usize), pieces: usize) -> Vec<Rate> {
    let n = w.retired.len();
    let (a, b) = (warmup.max(1), n.saturating_sub(wave));
    if b <= a {
        return Vec::new();
    }
    let len = (b - a) as f64 / pieces as f64;
    (0..pieces)
        .filter_map(|i| {
            let from = a + (len * i as f64).round() as usize;
            let to = a + (len * (i + 1) as f64).round() as usize;
            rate(w, from, to)
        })
        .collect()
}

/// The estimate of a sampled run.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Estimate {
    /// The estimated cycles of the whole dispatch.
    pub cycles: u64,
    /// The half-width of its error bound, in cycles.
    pub bound: u64,
    /// Classes of threadgroups outside the first window.
    pub classes: u32,
    /// Of those, classes whose rate no window measured.
    pub unmeasured_classes: u32,
    /// Threadgroups in them.
    pub unmeasured_threadgroups: u64,
    /// Cycles per 1000 SIMD-group instructions of each rate sample.
    pub samples: Vec<f64>,
    /// The DRAM-traffic floor set the estimate.
    pub dram_bound: bool,
}

/// Estimates the dispatch's cycles from its timed `windows` (the first starts at the
/// dispatch's first threadgroup) and `rest`, the threadgroups outside the first window
/// per class; `wave` is how many threadgroups the GPU holds at once, `warmup` how many
/// finish in a window before its steady part, `dram_bytes_per_cycle` the DRAM bandwidth.
pub(crate) fn estimate(
    windows: &[Window],
    (wave, warmup): (u64, u64),
    dram_bytes_per_cycle: f64,
    rest: &ClassTotals,
) -> Estimate {
    let Some(first) = windows.first() else {
        return Estimate::default();
    };
    let cut = (warmup.max(1) as usize, wave.max(1) as usize);
    let mut samples: Vec<Rate> = windows.iter().flat_map(|w| steady(w, cut, 1)).collect();
    if samples.len() < 2 {
        // One window with a steady part: its two halves give a spread.
        samples = windows.iter().flat_map(|w| steady(w, cut, 2)).collect();
    }
    // Per class, the cycles and instructions of the steady parts, split among the
    // classes in proportion to the instructions of the threadgroups that finished there.
    let mut measured: BTreeMap<i32, (f64, f64)> = BTreeMap::new();
    for s in &samples {
        let total: u64 = s.finished.values().sum();
        for (&class, &n) in &s.finished {
            let share = n as f64 / total.max(1) as f64;
            let e = measured.entry(class).or_default();
            e.0 += s.cycles * share;
            e.1 += s.instructions * share;
        }
    }
    let (all_cycles, all_instructions) = if samples.is_empty() {
        // No steady part anywhere: the windows' whole time, ramps included.
        windows.iter().fold((0.0, 0.0), |(c, i), w| {
            (c + w.cycles as f64, i + w.instructions() as f64)
        })
    } else {
        samples
            .iter()
            .fold((0.0, 0.0), |(c, i), s| (c + s.cycles, i + s.instructions))
    };
    let pooled = if all_instructions > 0.0 {
        all_cycles / all_instructions
    } else {
        0.0
    };
    let cpi: BTreeMap<i32, f64> = measured
        .iter()
        .filter(|(_, (_, i))| *i > 0.0)
        .map(|(&k, &(c, i))| (k, c / i))
        .collect();
    let spread = cpi
        .values()
        .map(|&c| (c / pooled - 1.0).abs())
        .fold(0.0, f64::max);
    let unmeasured_share = UNMEASURED_SHARE.max(spread);
    let mut e = Estimate {
        classes: rest.len() as u32,
        samples: samples.iter().map(|s| s.cpi() * 1000.0).collect(),
        ..Estimate::default()
    };
    let (mut measured_cycles, mut unmeasured_cycles) = (0.0, 0.0);
    for (&class, &(groups, instructions)) in rest {
        let rate = cpi.get(&class).copied();
        let nearest = || {
            cpi.iter()
                .min_by_key(|(k, _)| (i64::from(**k) - i64::from(class)).abs())
                .map_or(pooled, |(_, &c)| c)
        };
        let cycles = instructions as f64 * rate.unwrap_or_else(nearest);
        if rate.is_some() {
            measured_cycles += cycles;
        } else {
            e.unmeasured_classes += 1;
            e.unmeasured_threadgroups += groups;
            unmeasured_cycles += cycles;
        }
    }
    let rate_share = relative_interval(&e.samples);
    let (groups, instructions) = rest
        .values()
        .fold((0, 0), |(g, i), &(g2, i2)| (g + g2, i + i2));
    let per_group = instructions as f64 / groups.max(1) as f64;
    let one_wave = if groups > 0 {
        wave as f64 * per_group * pooled
    } else {
        0.0
    };
    let issue = first.cycles as f64 + measured_cycles + unmeasured_cycles;
    e.cycles = issue.round() as u64;
    e.bound = (measured_cycles * rate_share + unmeasured_cycles * unmeasured_share + one_wave)
        .ceil() as u64;
    let all_instructions = (first.instructions() + instructions) as f64;
    if let Some((floor, share)) = dram_floor(windows, all_instructions, dram_bytes_per_cycle)
        && floor > issue
    {
        // A wave of the traffic, as for the issue-rate estimate.
        let all_groups = (first.retired.len() as u64 + groups).max(1) as f64;
        let one_wave = wave as f64 / all_groups;
        e.cycles = floor.round() as u64;
        e.bound = (floor * (share + one_wave)).max(floor - issue).ceil() as u64;
        e.dram_bound = true;
    }
    e
}

/// The cycles `instructions` SIMD-group instructions take at least at DRAM bandwidth, at
/// the windows' DRAM bytes per instruction, and the relative bound of that (from the
/// spread of the windows' bytes per instruction).
fn dram_floor(windows: &[Window], instructions: f64, bytes_per_cycle: f64) -> Option<(f64, f64)> {
    if bytes_per_cycle <= 0.0 {
        return None;
    }
    let per_window: Vec<f64> = windows
        .iter()
        .filter(|w| w.instructions() > 0)
        .map(|w| w.dram_bytes as f64 / w.instructions() as f64)
        .collect();
    let (bytes, timed) = windows.iter().fold((0.0, 0.0), |(b, i), w| {
        (b + w.dram_bytes as f64, i + w.instructions() as f64)
    });
    if timed <= 0.0 {
        return None;
    }
    let cycles = bytes / timed * instructions / bytes_per_cycle;
    Some((cycles, relative_interval(&per_window)))
}

/// The half-width of the 95% confidence interval of the mean of `samples`, relative to
/// the mean (Student's t); [`SINGLE_SAMPLE_SHARE`] with fewer than two samples.
fn relative_interval(samples: &[f64]) -> f64 {
    let n = samples.len();
    if n < 2 {
        return SINGLE_SAMPLE_SHARE;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let var = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    if mean <= 0.0 {
        return SINGLE_SAMPLE_SHARE;
    }
    let t = StudentsT::ppf(0.975, (n - 1) as f64);
    t * var.sqrt() / (mean * (n as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window of `n` threadgroups of `instructions` each, the i-th finishing at
    /// `finish(i)`; the machine's counter grows by `ipc_instr` per finished threadgroup.
    fn window(n: u64, instructions: u64, cycles: u64, finish: impl Fn(u64) -> u64) -> Window {
        Window {
            cycles,
            retired: (0..n)
                .map(|i| Retired {
                    linear: i,
                    instructions,
                    cycle: finish(i),
                    machine_instructions: (i + 1) * instructions,
                })
                .collect(),
            dram_bytes: 0,
        }
    }

    fn check(windows: &[Window], wave: u64, rest: &[(u64, u64)], expect: (u64, u64)) {
        let mut totals = ClassTotals::new();
        for &(groups, each) in rest {
            for _ in 0..groups {
                add_to(&mut totals, each);
            }
        }
        let e = estimate(windows, (wave, wave), 0.0, &totals);
        assert_eq!((e.cycles, e.bound), expect, "{e:?}");
    }

    #[test]
    fn classes_group_counts_within_a_quarter_octave() {
        assert_eq!(class_of(1000), class_of(1050));
        assert_ne!(class_of(1000), class_of(10_000));
        assert_eq!(class_of(0), i32::MIN);
    }

    #[test]
    fn identical_windows_extrapolate_exactly_with_no_spread() {
        // 10 cycles per threadgroup of 100 instructions in steady state (CPI 0.1), a
        // first wave of 4 that takes 50 cycles.
        let w = || window(12, 100, 200, |i| if i < 4 { 50 } else { 50 + 10 * (i - 3) });
        // 100 more threadgroups at CPI 0.1: 1000 cycles; the bound is a wave (4
        // threadgroups of 100 instructions at CPI 0.1).
        check(&[w(), w()], 4, &[(100, 100)], (1200, 40));
    }

    #[test]
    fn a_single_window_is_split_in_halves_and_their_spread_bounds_the_rate() {
        // Steady part: completions 4..8 at 10 cycles each, then 8..12 at 20 cycles.
        let w = window(16, 100, 400, |i| match i {
            0..4 => 50,
            4..8 => 50 + 10 * (i - 3),
            _ => 90 + 20 * (i - 7),
        });
        let mut totals = ClassTotals::new();
        for _ in 0..100 {
            add_to(&mut totals, 100);
        }
        let e = estimate(&[w], (4, 4), 0.0, &totals);
        assert_eq!(e.samples, vec![100.0, 200.0]);
        // CPI 0.15 on 10,000 instructions; t(0.975, 1) = 12.71, sd 70.7, mean 150.
        assert_eq!(e.cycles, 400 + 1500);
        let rel = 12.706 * 70.71 / (150.0 * 2f64.sqrt());
        let one_wave = 4.0 * 100.0 * 0.15;
        assert!(
            (e.bound as f64 - 1500.0 * rel - one_wave).abs() < 5.0,
            "{e:?}"
        );
    }

    #[test]
    fn a_class_no_window_measured_takes_the_nearest_rate_and_half_its_share_as_bound() {
        let w = || window(12, 100, 200, |i| if i < 4 { 50 } else { 50 + 10 * (i - 3) });
        // 10 threadgroups of 1000 instructions: 1000 cycles at CPI 0.1, bound 500 plus
        // a wave (400).
        let mut totals = ClassTotals::new();
        for _ in 0..10 {
            add_to(&mut totals, 1000);
        }
        let e = estimate(&[w(), w()], (4, 4), 0.0, &totals);
        assert_eq!((e.cycles, e.bound), (1200, 900));
        assert_eq!((e.unmeasured_classes, e.unmeasured_threadgroups), (1, 10));
    }

    #[test]
    fn windows_without_a_steady_part_fall_back_to_their_whole_rate() {
        // Windows of one wave: 4 threadgroups of 100 instructions in 50 cycles.
        let w = || window(4, 100, 50, |_| 50);
        // CPI 50 / 400; 400 instructions more: 50 cycles, all of it unmeasured (25), and
        // a wave (50).
        check(&[w(), w()], 4, &[(4, 100)], (100, 75));
    }

    #[test]
    fn dram_traffic_sets_a_floor() {
        // The issue rate gives 200 + 11,200 instructions at CPI 0.1 = 1320 cycles; 12
        // threadgroups of 100 instructions moved 24,000 bytes per window: 20 bytes per
        // instruction, 12,400 instructions in all at 100 bytes per cycle is 2480 cycles.
        // The bound reaches down to the issue-rate estimate.
        let w = || Window {
            dram_bytes: 24_000,
            ..window(12, 100, 200, |i| if i < 4 { 50 } else { 50 + 10 * (i - 3) })
        };
        let mut totals = ClassTotals::new();
        for _ in 0..112 {
            add_to(&mut totals, 100);
        }
        let e = estimate(&[w(), w()], (4, 4), 100.0, &totals);
        assert_eq!((e.cycles, e.bound, e.dram_bound), (2480, 1160, true));
        let e = estimate(&[w(), w()], (4, 4), 1000.0, &totals);
        assert!(!e.dram_bound);
    }

    #[test]
    fn no_windows_estimate_nothing() {
        check(&[], 4, &[(4, 100)], (0, 0));
    }
}
