//! The sweep's plot (PNG): a bar per ranked variant (simulated time), or, when exactly two
//! parameters vary, a heat map of time over the two, drawn with plotters and the font
//! the cross-check plots use, compiled in.

use std::path::Path;
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

use super::table::{Row, label};

/// DejaVu Sans (its licence is `crosscheck/assets/DejaVuSans.LICENSE`).
const FONT: &[u8] = include_bytes!("../../../crosscheck/assets/DejaVuSans.ttf");

static REGISTER: Once = Once::new();

fn register_font() {
    REGISTER.call_once(|| {
        // The font is compiled in and known to parse; a failure would only lose text.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Draws the ranked rows (flagged ones are left out) to `png`.
pub fn draw(rows: &[Row], title: &str, png: &Path) -> Result<(), String> {
    register_font();
    let ranked: Vec<&Row> = rows
        .iter()
        .filter(|r| r.flag.is_none() && r.time_us.is_some())
        .collect();
    if ranked.is_empty() {
        return Err("no variant has a time to plot".into());
    }
    let area = BitMapBackend::new(png, (1000, 700)).into_drawing_area();
    let e = |x: &dyn std::fmt::Display| format!("cannot draw the plot: {x}");
    area.fill(&WHITE).map_err(|x| e(&x))?;
    let keys: Vec<&str> = ranked[0].params.iter().map(|(k, _)| k.as_str()).collect();
    if keys.len() == 2 {
        heat_map(&area, &ranked, &keys, title).map_err(|x| e(&x))?;
    } else {
        bars(&area, &ranked, title).map_err(|x| e(&x))?;
    }
    area.present().map_err(|x| e(&x))
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;
type DrawResult =
    Result<(), DrawingAreaErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>>;

/// Time per variant, in the table's order (fastest first).
fn bars(area: &Area, rows: &[&Row], title: &str) -> DrawResult {
    let max = rows.iter().filter_map(|r| r.time_us).fold(0.0f64, f64::max) * 1.15;
    let n = rows.len();
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..max.max(1e-9))?;
    // A segmented range has one segment more than its end: 0..n-1 holds n bars.
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| match x {
            SegmentValue::CenterOf(i) => rows.get(*i).map(|r| label(&r.params)).unwrap_or_default(),
            _ => String::new(),
        })
        .y_desc("simulated time (µs)")
        .label_style(("sans-serif", 14))
        .draw()?;
    chart.draw_series(rows.iter().enumerate().map(|(i, r)| {
        let t = r.time_us.unwrap_or(0.0);
        let mut bar = Rectangle::new(
            [
                (SegmentValue::Exact(i), 0.0),
                (SegmentValue::Exact(i + 1), t),
            ],
            BLUE.mix(0.6).filled(),
        );
        bar.set_margin(0, 0, 12, 12);
        bar
    }))?;
    chart.draw_series(rows.iter().enumerate().map(|(i, r)| {
        let t = r.time_us.unwrap_or(0.0);
        Text::new(
            format!("{t:.1} µs ({:.2}x)", r.speedup.unwrap_or(1.0)),
            (SegmentValue::CenterOf(i), t + max * 0.02),
            ("sans-serif", 14).into_font(),
        )
    }))?;
    Ok(())
}

/// Time over the two varied parameters: one cell per pair of values, darker is slower;
/// values in the order the sweep gave them.
fn heat_map(area: &Area, rows: &[&Row], keys: &[&str], title: &str) -> DrawResult {
    let mut in_order = rows.to_vec();
    in_order.sort_by_key(|r| r.index);
    let values = |k: usize| {
        let mut v: Vec<&str> = Vec::new();
        for r in &in_order {
            let x = r.params[k].1.as_str();
            if !v.contains(&x) {
                v.push(x);
            }
        }
        v
    };
    let (xs, ys) = (values(0), values(1));
    let (lo, hi) = rows
        .iter()
        .filter_map(|r| r.time_us)
        .fold((f64::INFINITY, 0.0f64), |(a, b), t| (a.min(t), b.max(t)));
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(60)
        .y_label_area_size(120)
        .build_cartesian_2d(
            (0..xs.len() - 1).into_segmented(),
            (0..ys.len() - 1).into_segmented(),
        )?;
    let name = |values: &[&str], v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) => values.get(*i).map(|s| s.to_string()).unwrap_or_default(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(xs.len())
        .y_labels(ys.len())
        .x_label_formatter(&|v| name(&xs, v))
        .y_label_formatter(&|v| name(&ys, v))
        .x_desc(keys[0])
        .y_desc(keys[1])
        .label_style(("sans-serif", 16))
        .draw()?;
    let cell = |r: &Row| {
        let x = xs.iter().position(|v| *v == r.params[0].1).unwrap_or(0);
        let y = ys.iter().position(|v| *v == r.params[1].1).unwrap_or(0);
        (x, y)
    };
    chart.draw_series(rows.iter().map(|r| {
        let (x, y) = cell(r);
        let t = r.time_us.unwrap_or(0.0);
        let f = if hi > lo { (t - lo) / (hi - lo) } else { 0.0 };
        let shade = (235.0 - 150.0 * f) as u8;
        Rectangle::new(
            [
                (SegmentValue::Exact(x), SegmentValue::Exact(y)),
                (SegmentValue::Exact(x + 1), SegmentValue::Exact(y + 1)),
            ],
            RGBColor(shade, shade, 255).filled(),
        )
    }))?;
    chart.draw_series(rows.iter().map(|r| {
        let (x, y) = cell(r);
        let t = r.time_us.unwrap_or(0.0);
        let style = ("sans-serif", 18).into_font().into_text_style(area).pos(
            plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Center,
            ),
        );
        Text::new(
            format!(
                "{t:.1} µs (#{}, {:.2}x)",
                r.rank.unwrap_or(0),
                r.speedup.unwrap_or(1.0)
            ),
            (SegmentValue::CenterOf(x), SegmentValue::CenterOf(y)),
            style,
        )
    }))?;
    Ok(())
}
