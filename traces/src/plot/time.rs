//! The plots over time: occupancy, bandwidth per level, SIMD efficiency, issue mix and the
//! core × time heat map.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::series::{
    end_us, gb_per_s, groups, max_simdgroups, mean, per_bin, top, total, us_per_cycle,
};
use super::{Area, draw_error, title};
use crate::limiter::class_name;
use crate::trace::Trace;

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A chart with time in µs across and `y_desc` up to `y_top`, white background.
fn time_chart<'a, DB: DrawingBackend>(
    area: &'a Area<DB>,
    caption: &str,
    x_end: f64,
    y_top: f64,
    y_desc: &str,
) -> Result<Chart<'a, DB>, String>
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE).map_err(draw_error)?;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d(0.0..x_end, 0.0..y_top)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_desc("time (µs)")
        .y_desc(y_desc)
        .label_style(("sans-serif", 17))
        .axis_desc_style(("sans-serif", 19))
        .light_line_style(BLACK.mix(0.06))
        .draw()
        .map_err(draw_error)?;
    Ok(chart)
}

fn legend<'a, DB: DrawingBackend + 'a>(chart: &mut Chart<'a, DB>) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .border_style(BLACK.mix(0.5))
        .background_style(WHITE.mix(0.85))
        .label_font(("sans-serif", 17))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(draw_error)
}

/// Achieved occupancy (resident SIMD-groups over the GPU's maximum) per bin, with the
/// theoretical occupancy as a dashed line.
pub(super) fn occupancy<DB: DrawingBackend>(area: &Area<DB>, t: &Trace) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let max = max_simdgroups(t);
    let bins = &t.profile.counters.bins;
    let points = per_bin(t, |range, _| {
        if max > 0.0 {
            mean(t, range, |i| bins[i].resident_simdgroups) / max * 100.0
        } else {
            0.0
        }
    });
    let end = end_us(t);
    let mut chart = time_chart(
        area,
        &title("Occupancy", t),
        end,
        105.0,
        "resident SIMD-groups (% of the GPU's maximum)",
    )?;
    chart
        .draw_series(LineSeries::new(points, BLUE.stroke_width(2)))
        .map_err(draw_error)?
        .label("achieved")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLUE.stroke_width(2)));
    if let Some(o) = &t.report.occupancy {
        let level = o.theoretical * 100.0;
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, level), (end, level)],
                10,
                6,
                BLACK.stroke_width(2),
            ))
            .map_err(draw_error)?
            .label(format!(
                "theoretical ({level:.0}%, {})",
                o.limiter.replace('_', " ")
            ))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK.stroke_width(2)));
    }
    legend(&mut chart)
}

/// The colour of each memory level, in the order L1, L2, SLC, DRAM.
const LEVEL_COLOURS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(214, 39, 40),
];

/// A memory level: its name, its peak in GB/s and its bytes in a bin's traffic.
type Level = (&'static str, f64, fn(&crate::MemoryTraffic) -> u64);

/// Bandwidth per level per bin, each with its modeled peak as a dashed line of its colour.
pub(super) fn bandwidth<DB: DrawingBackend>(area: &Area<DB>, t: &Trace) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let bins = &t.profile.counters.bins;
    let p = &t.model.peaks;
    let levels: [Level; 4] = [
        ("L1", p.l1_gb_per_s, |m| m.l1.bytes()),
        ("L2", p.l2_gb_per_s, |m| m.l2.bytes()),
        ("SLC", p.slc_gb_per_s, |m| m.slc.bytes()),
        ("DRAM", p.dram_gb_per_s, |m| m.dram.bytes()),
    ];
    let series: Vec<Vec<(f64, f64)>> = levels
        .iter()
        .map(|(_, _, bytes)| {
            per_bin(t, |range, cycles| {
                gb_per_s(t, total(range, |i| bytes(&bins[i].memory)), cycles)
            })
        })
        .collect();
    // Peaks far above every measured value would flatten the curves: show those that are
    // within 3x of the highest curve, and say so for the rest in the legend.
    let highest = series.iter().map(|s| top(s, 0.0)).fold(1e-9, f64::max);
    let shown_peak = |peak: f64| peak > 0.0 && peak <= highest * 3.0;
    let y_top = levels
        .iter()
        .filter(|l| shown_peak(l.1))
        .map(|l| l.1)
        .fold(highest, f64::max)
        * 1.1;
    let end = end_us(t);
    let mut chart = time_chart(
        area,
        &title("Bandwidth per level", t),
        end,
        y_top,
        "bandwidth (GB/s)",
    )?;
    for (((name, peak, _), points), colour) in levels.iter().zip(series).zip(LEVEL_COLOURS) {
        let label = if shown_peak(*peak) {
            format!("{name} (dashed: peak {peak:.0} GB/s)")
        } else if *peak > 0.0 {
            format!("{name} (peak {peak:.0} GB/s, off the chart)")
        } else {
            name.to_string()
        };
        chart
            .draw_series(LineSeries::new(points, colour.stroke_width(2)))
            .map_err(draw_error)?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3))
            });
        if shown_peak(*peak) {
            chart
                .draw_series(DashedLineSeries::new(
                    [(0.0, *peak), (end, *peak)],
                    10,
                    6,
                    colour.stroke_width(2),
                ))
                .map_err(draw_error)?;
        }
    }
    legend(&mut chart)
}

/// Active lanes per issued SIMD-group instruction per bin, in percent.
pub(super) fn simd_efficiency<DB: DrawingBackend>(area: &Area<DB>, t: &Trace) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let bins = &t.profile.counters.bins;
    // Groups that issued nothing have no efficiency and are left out.
    let points: Vec<(f64, f64)> = per_bin(t, |range, _| {
        let n = total(range.clone(), |i| bins[i].simd_instructions());
        let lanes = total(range, |i| bins[i].active_lanes);
        if n == 0 {
            -1.0
        } else {
            lanes as f64 * 100.0 / (32.0 * n as f64)
        }
    })
    .into_iter()
    .filter(|p| p.1 >= 0.0)
    .collect();
    let mut chart = time_chart(
        area,
        &title("SIMD efficiency", t),
        end_us(t),
        105.0,
        "active lanes per instruction (% of 32)",
    )?;
    let overall = t.report.simd_efficiency * 100.0;
    chart
        .draw_series(LineSeries::new(points, BLUE.stroke_width(2)))
        .map_err(draw_error)?
        .label(format!("per bin (whole run {overall:.1}%)"))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLUE.stroke_width(2)));
    legend(&mut chart)
}

/// A colour per class, stable across plots.
pub(super) fn palette(i: usize) -> RGBColor {
    const COLOURS: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    COLOURS[i % COLOURS.len()]
}

/// SIMD-group instructions issued per cycle (all cores) per class, stacked.
pub(super) fn issue_mix<DB: DrawingBackend>(area: &Area<DB>, t: &Trace) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let bins = &t.profile.counters.bins;
    let classes = &t.profile.classes;
    // Only classes that issued, most issued first at the bottom.
    let mut order: Vec<usize> = (0..classes.len())
        .filter(|&c| t.profile.issued.get(c).copied().unwrap_or(0) > 0)
        .collect();
    order.sort_by_key(|&c| std::cmp::Reverse(t.profile.issued[c]));
    let rate = |range: std::ops::Range<usize>, c: usize, cycles: u64| {
        let n = total(range, |i| bins[i].issued.get(c).copied().unwrap_or(0));
        if cycles == 0 {
            0.0
        } else {
            n as f64 / cycles as f64
        }
    };
    let mut below = vec![0.0f64; groups(t).len()];
    let mut layers = Vec::new();
    for &c in &order {
        let lower = below.clone();
        let upper: Vec<(f64, f64)> = per_bin(t, |range, cycles| rate(range, c, cycles))
            .into_iter()
            .zip(&below)
            .map(|((x, y), b)| (x, y + b))
            .collect();
        for (b, u) in below.iter_mut().zip(&upper) {
            *b = u.1;
        }
        layers.push((c, lower, upper));
    }
    let y_top = below.iter().copied().fold(1e-9, f64::max) * 1.15;
    let slots = f64::from(t.model.cores) * f64::from(t.model.schedulers_per_core);
    let mut chart = time_chart(
        area,
        &title("Issue mix", t),
        end_us(t),
        y_top,
        &format!("SIMD-group instructions per cycle (GPU issue slots: {slots:.0})"),
    )?;
    for (k, (c, lower, upper)) in layers.into_iter().enumerate() {
        let colour = palette(k);
        let mut outline: Vec<(f64, f64)> = upper.clone();
        outline.extend(upper.iter().zip(&lower).rev().map(|(u, l)| (u.0, *l)));
        chart
            .draw_series(std::iter::once(Polygon::new(
                outline,
                colour.mix(0.75).filled(),
            )))
            .map_err(draw_error)?
            .label(class_name(&classes[c]).to_string())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], colour.filled()));
    }
    legend(&mut chart)
}

/// White to dark blue: `v` from 0 to 1.
fn heat(v: f64) -> RGBColor {
    let v = v.clamp(0.0, 1.0);
    let mix = |hi: f64, lo: f64| (hi + (lo - hi) * v).round() as u8;
    RGBColor(mix(247.0, 8.0), mix(251.0, 48.0), mix(255.0, 107.0))
}

/// Occupancy per core over time: a row per core, a cell per bin.
pub(super) fn core_heatmap<DB: DrawingBackend>(area: &Area<DB>, t: &Trace) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE).map_err(draw_error)?;
    let (main, bar) = area.split_horizontally(area.dim_in_pixel().0 - 140);
    let cores = t.profile.counters.cores.max(1);
    let per_core = f64::from(t.model.max_simdgroups_per_core.max(1));
    let end = end_us(t);
    let us = us_per_cycle(t);
    let mut chart = ChartBuilder::on(&main)
        .caption(title("Occupancy per core", t), ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d(0.0..end, -0.5..f64::from(cores) - 0.5)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("time (µs)")
        .y_desc("core")
        .y_labels((cores as usize).min(16))
        // Row c spans c - 0.5 to c + 0.5, so whole ticks sit at the rows' middles.
        .y_label_formatter(&|y| {
            if y.fract() == 0.0 {
                format!("{y:.0}")
            } else {
                String::new()
            }
        })
        .label_style(("sans-serif", 17))
        .axis_desc_style(("sans-serif", 19))
        .draw()
        .map_err(draw_error)?;
    let bins = &t.profile.counters.bins;
    let cells = bins.iter().enumerate().flat_map(|(i, b)| {
        let x0 = b.start as f64 * us;
        let x1 = (b.start + crate::perfetto::bin_cycles(t, i)) as f64 * us;
        (0..cores as usize).map(move |c| {
            let v = b.core_resident_simdgroups.get(c).copied().unwrap_or(0.0) / per_core;
            Rectangle::new(
                [(x0, c as f64 - 0.5), (x1, c as f64 + 0.5)],
                heat(v).filled(),
            )
        })
    });
    chart.draw_series(cells).map_err(draw_error)?;
    // The colour scale.
    let mut scale = ChartBuilder::on(&bar)
        .margin_top(70)
        .margin_bottom(75)
        .margin_right(20)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..1.0, 0.0..100.0)
        .map_err(draw_error)?;
    scale
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_desc("% of a core's SIMD-groups")
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(draw_error)?;
    scale
        .draw_series((0..50).map(|k| {
            let lo = k as f64 * 2.0;
            Rectangle::new(
                [(0.0, lo), (1.0, lo + 2.0)],
                heat(lo / 100.0 + 0.01).filled(),
            )
        }))
        .map_err(draw_error)?;
    Ok(())
}
