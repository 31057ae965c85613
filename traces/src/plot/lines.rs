//! The per-line cost plot: a bar per costliest source line, split into issue cycles and
//! stall cycles by reason, labelled with the line's place and text.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::time::palette;
use super::{Area, draw_error, title};
use crate::profile::StallReason;
use crate::summary::{costliest_lines, ranked_lines};
use crate::trace::Trace;

/// How many lines the plot shows.
const SHOWN: usize = 10;

/// Longest source text shown beside a bar, in characters.
const TEXT_CHARS: usize = 70;

pub(super) fn line_cost<DB: DrawingBackend>(area: &Area<DB>, t: &Trace) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE).map_err(draw_error)?;
    let lines = costliest_lines(&t.profile, &t.sources, SHOWN);
    let total: u64 = t.profile.lines.iter().map(|l| l.cost_cycles()).sum();
    let pct = |c: u64| {
        if total == 0 {
            0.0
        } else {
            c as f64 * 100.0 / total as f64
        }
    };
    let n = lines.len().max(1) as f64;
    let x_top = lines.first().map_or(1.0, |l| pct(l.cost_cycles)) * 1.08 + 1e-9;
    let mut chart = ChartBuilder::on(area)
        .caption(title("Costliest source lines", t), ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(20)
        .build_cartesian_2d(0.0..x_top, 0.0..n)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_desc("share of all lines' SIMD-group cycles, issuing or stalled (%)")
        .label_style(("sans-serif", 17))
        .axis_desc_style(("sans-serif", 19))
        .light_line_style(BLACK.mix(0.06))
        .draw()
        .map_err(draw_error)?;
    // Segments: issue cycles, then each stall reason, in a fixed colour each.
    let mut segment_names = vec!["issuing".to_string()];
    segment_names.extend(
        StallReason::ALL
            .iter()
            .map(|r| format!("stalled: {}", r.describe())),
    );
    let by_line: Vec<Vec<u64>> = ranked_lines(&t.profile)
        .into_iter()
        .take(SHOWN)
        .map(|p| {
            let mut parts = vec![p.issue_cycles];
            parts.extend(
                StallReason::ALL
                    .iter()
                    .map(|r| p.stalls.get(r.index()).copied().unwrap_or(0)),
            );
            parts
        })
        .collect();
    for (k, name) in segment_names.iter().enumerate() {
        if by_line.iter().all(|parts| parts[k] == 0) {
            continue;
        }
        let colour = palette(k);
        let bars = by_line.iter().enumerate().map(|(i, parts)| {
            let y = n - 1.0 - i as f64;
            let x0 = pct(parts[..k].iter().sum());
            let x1 = x0 + pct(parts[k]);
            Rectangle::new([(x0, y + 0.08), (x1, y + 0.58)], colour.filled())
        });
        chart
            .draw_series(bars)
            .map_err(draw_error)?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], colour.filled()));
    }
    let label_style =
        TextStyle::from(("sans-serif", 16).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let labels = lines.iter().enumerate().map(|(i, l)| {
        let y = n - 1.0 - i as f64;
        let file = l.file.rsplit('/').next().unwrap_or(&l.file);
        let mut text: String = l.text.chars().take(TEXT_CHARS).collect();
        if l.text.chars().count() > TEXT_CHARS {
            text.push('…');
        }
        Text::new(
            format!(
                "{file}:{}  {:.1}%  SIMD eff. {:.0}%   {text}",
                l.line,
                l.share * 100.0,
                l.simd_efficiency * 100.0
            ),
            (0.0, y + 0.79),
            label_style.clone(),
        )
    });
    chart.draw_series(labels).map_err(draw_error)?;
    chart
        .configure_series_labels()
        .border_style(BLACK.mix(0.5))
        .background_style(WHITE.mix(0.9))
        .label_font(("sans-serif", 15))
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(draw_error)
}
