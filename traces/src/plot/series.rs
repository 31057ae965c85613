//! The bins of a trace as plot series: time in microseconds and one value per bin.

use crate::perfetto::bin_cycles;
use crate::trace::Trace;

/// Microseconds per cycle at the model's clock.
pub(super) fn us_per_cycle(trace: &Trace) -> f64 {
    if trace.model.clock_mhz > 0.0 {
        1.0 / trace.model.clock_mhz
    } else {
        1.0
    }
}

/// The run's end in microseconds (at least the end of the last bin).
pub(super) fn end_us(trace: &Trace) -> f64 {
    let bins = &trace.profile.counters.bins;
    let last = bins
        .last()
        .map_or(0, |b| b.start + bin_cycles(trace, bins.len() - 1));
    (trace.report.cycles.max(last).max(1)) as f64 * us_per_cycle(trace)
}

/// The most points a curve over time has: bins are merged in runs of equal length to stay
/// under it, so that a curve shows the trend rather than the noise of short bins.
pub(super) const MAX_POINTS: usize = 240;

/// The bins merged for plotting: runs of consecutive bins, each as (its bins, its cycles).
pub(super) fn groups(trace: &Trace) -> Vec<(std::ops::Range<usize>, u64)> {
    let n = trace.profile.counters.bins.len();
    let per = n.div_ceil(MAX_POINTS).max(1);
    (0..n)
        .step_by(per)
        .map(|first| {
            let range = first..(first + per).min(n);
            let cycles = range.clone().map(|i| bin_cycles(trace, i)).sum();
            (range, cycles)
        })
        .collect()
}

/// `(middle of the group in µs, value(its bins, its cycles))` for every group of
/// [`groups`].
pub(super) fn per_bin(
    trace: &Trace,
    mut value: impl FnMut(std::ops::Range<usize>, u64) -> f64,
) -> Vec<(f64, f64)> {
    let us = us_per_cycle(trace);
    let bins = &trace.profile.counters.bins;
    groups(trace)
        .into_iter()
        .map(|(range, cycles)| {
            let start = bins[range.start].start as f64;
            ((start + cycles as f64 / 2.0) * us, value(range, cycles))
        })
        .collect()
}

/// The cycle-weighted mean of `f` over the bins of `range`.
pub(super) fn mean(trace: &Trace, range: std::ops::Range<usize>, f: impl Fn(usize) -> f64) -> f64 {
    let (mut sum, mut cycles) = (0.0, 0u64);
    for i in range {
        let c = bin_cycles(trace, i);
        sum += f(i) * c as f64;
        cycles += c;
    }
    if cycles == 0 {
        0.0
    } else {
        sum / cycles as f64
    }
}

/// The sum of `f` over the bins of `range`.
pub(super) fn total(range: std::ops::Range<usize>, f: impl Fn(usize) -> u64) -> u64 {
    range.map(f).sum()
}

/// Bytes over `cycles` at the model's clock, in GB/s.
pub(super) fn gb_per_s(trace: &Trace, bytes: u64, cycles: u64) -> f64 {
    if cycles == 0 {
        0.0
    } else {
        bytes as f64 / (cycles as f64 * us_per_cycle(trace) * 1e3)
    }
}

/// The most SIMD-groups the whole GPU holds.
pub(super) fn max_simdgroups(trace: &Trace) -> f64 {
    f64::from(trace.model.max_simdgroups_per_core) * f64::from(trace.model.cores.max(1))
}

/// The largest value of the series, at least `floor`.
pub(super) fn top(points: &[(f64, f64)], floor: f64) -> f64 {
    points.iter().map(|p| p.1).fold(floor, f64::max)
}
