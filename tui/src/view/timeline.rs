//! Charts over time (occupancy, SIMD efficiency and issue; bandwidth per level against the
//! DRAM peak) with a cursor and zoom, and a core × time heat map of activity.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, Paragraph};

use crate::app::{App, HeatMetric};
use crate::digest::{Level, Series};
use crate::format::{self, ratio};
use crate::theme;

const LEVEL_COLORS: [Color; 4] = [Color::Cyan, Color::Green, Color::Yellow, Color::Red];

/// Draws the timeline into `area`.
pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let s = &app.digest.series;
    if s.is_empty() {
        frame.render_widget(
            Paragraph::new(
                "This trace has no time bins: it was made with timing off, or the run was empty.",
            )
            .style(theme::dim())
            .block(Block::bordered().title(" Timeline ")),
            area,
        );
        return;
    }
    let cores = s.core_issue.len().max(1);
    let heat_rows = (area.height as usize)
        .saturating_sub(1 + 12 + 3)
        .clamp(1, cores) as u16;
    let [readout, usage, bandwidth, heat] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Fill(1),
        Constraint::Length(heat_rows + 3),
    ])
    .areas(area);
    let span = app.timeline.span.clamp(1, s.len());
    let first = app.timeline.first(s.len());
    let cursor = app.timeline.cursor.min(s.len() - 1);
    let window = Window {
        first,
        span,
        cursor,
    };
    draw_readout(frame, app, &window, readout);
    draw_usage(frame, s, &window, usage);
    draw_bandwidth(frame, app, &window, bandwidth);
    draw_heat(frame, app, &window, heat_rows as usize, heat);
}

/// The bins on screen and the cursor.
struct Window {
    first: usize,
    span: usize,
    cursor: usize,
}

impl Window {
    /// The window's values scaled, at most `max_points` of them: bins are averaged in
    /// groups when there are more (a braille chart shows two points per column).
    fn points(&self, values: &[f64], scale: f64, max_points: usize) -> Vec<(f64, f64)> {
        let end = (self.first + self.span).min(values.len());
        let window = values.get(self.first..end).unwrap_or(&[]);
        let group = window.len().div_ceil(max_points.max(1)).max(1);
        window
            .chunks(group)
            .enumerate()
            .map(|(i, chunk)| {
                let mean = chunk.iter().filter(|v| v.is_finite()).sum::<f64>() / chunk.len() as f64;
                let x = self.first as f64 + (i * group) as f64 + (chunk.len() - 1) as f64 / 2.0;
                (x, mean * scale)
            })
            .collect()
    }

    fn x_bounds(&self) -> [f64; 2] {
        let last = (self.first + self.span - 1) as f64;
        [self.first as f64, last.max(self.first as f64 + 1.0)]
    }

    fn cursor_line(&self, top: f64) -> Vec<(f64, f64)> {
        let x = self.cursor as f64;
        vec![(x, 0.0), (x, top)]
    }
}

fn draw_readout(frame: &mut Frame, app: &App, w: &Window, area: Rect) {
    let s = &app.digest.series;
    let i = w.cursor;
    let mut spans = vec![
        Span::styled("cursor ", theme::label()),
        Span::raw(format!(
            "cycle {}+{} ",
            format::count(s.start[i]),
            format::count(s.cycles[i])
        )),
        Span::styled(format!("bin {}/{} ", i + 1, s.len()), theme::dim()),
        Span::styled("occ ", theme::label()),
        Span::raw(format!("{} ", format::percent(s.occupancy[i]))),
        Span::styled("SIMD ", theme::label()),
        Span::raw(format!("{} ", format::percent(s.simd_efficiency[i]))),
        Span::styled("issue ", theme::label()),
        Span::raw(format!("{} ", format::percent(s.issue[i]))),
    ];
    for (l, level) in Level::ALL.iter().enumerate() {
        spans.push(Span::styled(
            format!("{} ", level.name()),
            Style::new().fg(LEVEL_COLORS[l]),
        ));
        spans.push(Span::raw(format!("{:.0} ", s.bandwidth[l][i])));
    }
    spans.push(Span::styled("GB/s", theme::dim()));
    if w.span < s.len() {
        spans.push(Span::styled(
            format!("  zoom ×{:.0}", ratio(s.len() as f64, w.span as f64)),
            theme::dim(),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn cursor_dataset(points: &[(f64, f64)]) -> Dataset<'_> {
    Dataset::default()
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(Style::new().fg(Color::White).add_modifier(Modifier::DIM))
        .data(points)
}

fn draw_usage(frame: &mut Frame, s: &Series, w: &Window, area: Rect) {
    let max_points = area.width as usize * 2;
    let occupancy = w.points(&s.occupancy, 100.0, max_points);
    let simd = w.points(&s.simd_efficiency, 100.0, max_points);
    let issue = w.points(&s.issue, 100.0, max_points);
    let cursor = w.cursor_line(100.0);
    let datasets = vec![
        cursor_dataset(&cursor),
        Dataset::default()
            .name("occupancy")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(Color::Cyan))
            .data(&occupancy),
        Dataset::default()
            .name("SIMD eff.")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(Color::Green))
            .data(&simd),
        Dataset::default()
            .name("issue")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(Color::Yellow))
            .data(&issue),
    ];
    let chart = Chart::new(datasets)
        .block(
            Block::bordered()
                .title(Line::from(vec![
                    Span::styled(" Percent: ", theme::title()),
                    Span::styled("occupancy ", Style::new().fg(Color::Cyan)),
                    Span::styled("SIMD efficiency ", Style::new().fg(Color::Green)),
                    Span::styled("issue slots used ", Style::new().fg(Color::Yellow)),
                ]))
                .border_style(theme::dim()),
        )
        .x_axis(Axis::default().bounds(w.x_bounds()))
        .y_axis(
            Axis::default()
                .bounds([0.0, 100.0])
                .labels(["0", "100"])
                .style(theme::dim()),
        )
        .legend_position(None);
    frame.render_widget(chart, area);
}

fn draw_bandwidth(frame: &mut Frame, app: &App, w: &Window, area: Rect) {
    let s = &app.digest.series;
    let max_points = area.width as usize * 2;
    let points: Vec<Vec<(f64, f64)>> = (0..4)
        .map(|l| w.points(&s.bandwidth[l], 1.0, max_points))
        .collect();
    let peak = Level::Dram.peak(&app.trace);
    let top = points
        .iter()
        .flatten()
        .map(|p| p.1)
        .fold(peak, f64::max)
        .max(1.0);
    let [x0, x1] = w.x_bounds();
    let peak_line = [(x0, peak), (x1, peak)];
    let cursor = w.cursor_line(top);
    let mut datasets = vec![cursor_dataset(&cursor)];
    if peak > 0.0 {
        datasets.push(
            Dataset::default()
                .name("DRAM peak")
                .marker(Marker::Dot)
                .graph_type(GraphType::Line)
                .style(Style::new().fg(Color::Red).add_modifier(Modifier::DIM))
                .data(&peak_line),
        );
    }
    for (l, level) in Level::ALL.iter().enumerate() {
        datasets.push(
            Dataset::default()
                .name(level.name())
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(Style::new().fg(LEVEL_COLORS[l]))
                .data(&points[l]),
        );
    }
    let chart = Chart::new(datasets)
        .block(
            Block::bordered()
                .title(bandwidth_title(peak))
                .border_style(theme::dim()),
        )
        .x_axis(Axis::default().bounds([x0, x1]))
        .y_axis(
            Axis::default()
                .bounds([0.0, top])
                .labels(["0".to_string(), format!("{top:.0}")])
                .style(theme::dim()),
        )
        .legend_position(None);
    frame.render_widget(chart, area);
}

/// The bandwidth chart's title, naming each level in its colour.
fn bandwidth_title(peak: f64) -> Line<'static> {
    let mut spans = vec![Span::styled(" GB/s: ", theme::title())];
    for (l, level) in Level::ALL.iter().enumerate() {
        spans.push(Span::styled(
            format!("{} ", level.name()),
            Style::new().fg(LEVEL_COLORS[l]),
        ));
    }
    if peak > 0.0 {
        spans.push(Span::styled(
            format!("(dots: DRAM peak {peak:.0}) "),
            Style::new().fg(Color::Red),
        ));
    }
    spans.into()
}

/// The heat map's rows: each a range of cores averaged together.
fn core_groups(cores: usize, rows: usize) -> Vec<(usize, usize)> {
    let rows = rows.clamp(1, cores.max(1));
    (0..rows)
        .map(|r| {
            (
                r * cores / rows,
                ((r + 1) * cores / rows).max(r * cores / rows + 1),
            )
        })
        .collect()
}

fn draw_heat(frame: &mut Frame, app: &App, w: &Window, rows: usize, area: Rect) {
    let s = &app.digest.series;
    let (per_core, what) = match app.timeline.heat {
        HeatMetric::Issue => (&s.core_issue, "issue slots used"),
        HeatMetric::Residency => (&s.core_residency, "SIMD-groups resident"),
    };
    let block = Block::bordered()
        .title(Span::styled(
            format!(" Core × time: {what} (m switches) "),
            theme::title(),
        ))
        .border_style(theme::dim());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let label_width = 7usize;
    let columns = (inner.width as usize).saturating_sub(label_width);
    if columns == 0 || per_core.is_empty() {
        return;
    }
    let cursor_column = ((w.cursor - w.first) * columns / w.span).min(columns - 1);
    let mut lines = Vec::new();
    for (a, b) in core_groups(per_core.len(), rows) {
        let name = if b - a == 1 {
            format!("core {a}")
        } else {
            format!("c{a}-{}", b - 1)
        };
        let mut spans = vec![Span::styled(
            format!(
                "{:<width$}",
                format::fit(&name, label_width - 1),
                width = label_width
            ),
            theme::label(),
        )];
        for c in 0..columns {
            let lo = w.first + c * w.span / columns;
            let hi = (w.first + (c + 1) * w.span / columns).max(lo + 1);
            let mut sum = 0.0;
            let mut n = 0usize;
            for core in &per_core[a..b] {
                for v in core.get(lo..hi.min(core.len())).unwrap_or(&[]) {
                    sum += v;
                    n += 1;
                }
            }
            let mut cell = theme::heat_cell(ratio(sum, n as f64));
            if c == cursor_column {
                cell = cell.patch_style(Style::new().bg(Color::DarkGray));
            }
            spans.push(cell);
        }
        lines.push(Line::from(spans));
    }
    let first_cycle = s.start[w.first];
    let last = w.first + w.span - 1;
    let end_cycle = s.start[last] + s.cycles[last];
    let left = format!("cycle {}", format::count(first_cycle));
    let right = format::count(end_cycle);
    let gap = columns.saturating_sub(left.chars().count() + right.chars().count());
    lines.push(Line::from(vec![
        Span::raw(" ".repeat(label_width)),
        Span::styled(format!("{left}{}{right}", " ".repeat(gap)), theme::dim()),
    ]));
    frame.render_widget(Paragraph::new(lines), inner);
}

#[cfg(test)]
mod tests {
    use super::core_groups;
    use crate::app::{Msg, View};
    use crate::fixture;
    use crate::ui::tests::screen;

    fn check(trace: metalsim_traces::Trace, size: (u16, u16), msgs: &[Msg]) -> String {
        let mut all = vec![Msg::Show(View::Timeline)];
        all.extend_from_slice(msgs);
        screen(trace, size, &all)
    }

    #[test]
    fn timeline_at_80x24() {
        insta::assert_snapshot!(check(fixture::trace(), (80, 24), &[]));
    }

    #[test]
    fn timeline_zoomed_with_the_cursor_moved_at_160x48() {
        insta::assert_snapshot!(check(
            fixture::trace(),
            (160, 48),
            &[
                Msg::ZoomIn,
                Msg::Right,
                Msg::Right,
                Msg::Right,
                Msg::ToggleHeat
            ]
        ));
    }

    #[test]
    fn timeline_of_odd_traces() {
        let empty = check(fixture::empty(), (80, 24), &[Msg::Right]);
        assert!(empty.contains("no time bins"), "{empty}");
        let odd = check(fixture::out_of_range(), (80, 24), &[Msg::Bottom]);
        assert!(odd.contains("bin 40/40"), "{odd}");
    }

    #[test]
    fn long_runs_are_averaged_to_the_chart_width() {
        let w = super::Window {
            first: 2,
            span: 6,
            cursor: 3,
        };
        let values = [9.0, 9.0, 1.0, 3.0, 5.0, 7.0, 2.0, 2.0];
        assert_eq!(
            w.points(&values, 1.0, 3),
            vec![(2.5, 2.0), (4.5, 6.0), (6.5, 2.0)]
        );
        assert_eq!(w.points(&values, 10.0, 100).len(), 6);
    }

    #[test]
    fn cores_group_into_the_rows_there_are() {
        assert_eq!(core_groups(4, 8), vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert_eq!(core_groups(8, 3), vec![(0, 2), (2, 5), (5, 8)]);
        assert_eq!(core_groups(0, 3), vec![(0, 1)]);
    }
}
