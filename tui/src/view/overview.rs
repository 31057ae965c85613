//! The dashboard: what ran where, how long it took, what limited it, bandwidth per level
//! against the model's peaks, stall reasons, sparklines over time and the costliest lines.

use metalsim_traces::StallReason;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Sparkline};

use crate::app::App;
use crate::digest::Level;
use crate::format::{self, fit, ratio};
use crate::theme;
use crate::view::resample;

/// Draws the overview into `area`.
pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let top_lines = 7;
    let [top, middle, bottom] = Layout::vertical([
        Constraint::Length(top_lines + 2),
        Constraint::Fill(1),
        Constraint::Length(5),
    ])
    .areas(area);
    let [run, bandwidth] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(top);
    draw_run(frame, app, run);
    draw_bandwidth(frame, app, bandwidth);
    draw_sparklines(frame, app, middle);
    draw_costliest(frame, app, bottom);
}

fn pane(title: &str) -> Block<'_> {
    Block::bordered()
        .title(Span::styled(format!(" {title} "), theme::title()))
        .border_style(theme::dim())
}

fn field(name: &'static str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{name:<10}"), theme::label()),
        Span::raw(value),
    ])
}

/// The limiter in words: the report's when it names one, else the top stall reason, else
/// what limits occupancy.
fn limiter(app: &App) -> String {
    let r = &app.trace.report;
    if let Some(l) = r.limiter.as_ref().filter(|l| !l.description.is_empty()) {
        return l.description.clone();
    }
    let stalls = &app.trace.profile.stalls;
    match (theme::top_stall(stalls), &r.occupancy) {
        (Some(reason), _) => {
            let total: u64 = stalls.iter().sum();
            format!(
                "stalls mostly {} ({})",
                reason.describe(),
                format::percent(ratio(stalls[reason.index()] as f64, total as f64))
            )
        }
        (None, Some(o)) => format!("occupancy limited by {}", o.limiter.replace('_', " ")),
        (None, None) => "not known (no profile)".to_string(),
    }
}

fn draw_run(frame: &mut Frame, app: &App, area: Rect) {
    let r = &app.trace.report;
    let m = &app.trace.model;
    let [gx, gy, gz] = r.grid;
    let [tx, ty, tz] = r.threadgroup_size;
    let width = area.width.saturating_sub(12) as usize;
    let occupancy = match &r.occupancy {
        Some(o) => format!(
            "{} of {} max ({})",
            format::percent(o.achieved),
            format::percent(o.theoretical),
            o.limiter.replace('_', " ")
        ),
        None => "not simulated".to_string(),
    };
    let time = if r.cycles == 0 {
        "not simulated".to_string()
    } else {
        format!(
            "{} cycles, {}",
            format::count(r.cycles),
            format::time_us(r.time_us)
        )
    };
    let model = if m.display_name.is_empty() {
        m.name.clone()
    } else {
        m.display_name.clone()
    };
    let lines = vec![
        field("kernel", fit(&r.kernel, width)),
        field("model", fit(&model, width)),
        field(
            "launch",
            fit(&format!("{gx}x{gy}x{gz} in {tx}x{ty}x{tz} groups"), width),
        ),
        field("time", fit(&time, width)),
        field("limiter", fit(&limiter(app), width)),
        field("occupancy", fit(&occupancy, width)),
        field(
            "SIMD eff.",
            fit(
                &format!(
                    "{:.1}% ({} SIMD instr.)",
                    r.simd_efficiency * 100.0,
                    format::count(r.simd_instructions)
                ),
                width,
            ),
        ),
    ];
    frame.render_widget(Paragraph::new(lines).block(pane("Run")), area);
}

fn draw_bandwidth(frame: &mut Frame, app: &App, area: Rect) {
    let inner = area.width.saturating_sub(2) as usize;
    let bar_width = inner.saturating_sub(27).max(4);
    let mut lines: Vec<Line> = Level::ALL
        .iter()
        .enumerate()
        .map(|(i, level)| {
            let bw = app.digest.bandwidth[i];
            let peak = level.peak(&app.trace);
            let share = ratio(bw, peak);
            Line::from(vec![
                Span::styled(format!("{:<5}", level.name()), theme::label()),
                theme::meter(share, bar_width),
                Span::raw(format!(" {:>11} ", format::gb_per_s(bw))),
                Span::styled(
                    if peak > 0.0 {
                        format!("{:>4} pk", format::percent(share))
                    } else {
                        "no peak".to_string()
                    },
                    theme::dim(),
                ),
            ])
        })
        .collect();
    let stalls = &app.trace.profile.stalls;
    let total: u64 = stalls.iter().sum();
    let mut bar = vec![Span::styled(format!("{:<5}", "stall"), theme::label())];
    bar.extend(theme::stall_bar(stalls, inner.saturating_sub(5)));
    lines.push(Line::from(bar));
    let mut legend = Vec::new();
    for (reason, n) in StallReason::ALL.iter().zip(stalls) {
        if *n > 0 {
            legend.push(Span::styled(
                format!(
                    "{} {} ",
                    reason.name(),
                    format::percent(ratio(*n as f64, total as f64))
                ),
                Style::new().fg(theme::stall(*reason)),
            ));
        }
    }
    if legend.is_empty() {
        legend.push(Span::styled("no stall cycles recorded", theme::dim()));
    }
    lines.push(Line::from(legend));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: true })
            .block(pane("Bandwidth vs modeled peak, stalls")),
        area,
    );
}

fn draw_sparklines(frame: &mut Frame, app: &App, area: Rect) {
    let block = pane("Over time");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let s = &app.digest.series;
    if s.is_empty() {
        frame.render_widget(
            Paragraph::new("No time bins in this trace (run with timing on to get them).")
                .style(theme::dim()),
            inner,
        );
        return;
    }
    // DRAM bandwidth is drawn against its own maximum so its shape shows even far below
    // the peak; the label gives the average and its share of the peak.
    let dram = &s.bandwidth[3];
    let dram_max = dram.iter().copied().fold(0.0, f64::max);
    let dram_share = ratio(mean(dram), Level::Dram.peak(&app.trace));
    let rows: [(&str, &[f64], f64, String, Color); 4] = [
        (
            "occupancy",
            &s.occupancy,
            1.0,
            format::percent(mean(&s.occupancy)),
            Color::Cyan,
        ),
        (
            "SIMD eff.",
            &s.simd_efficiency,
            1.0,
            format::percent(mean(&s.simd_efficiency)),
            Color::Green,
        ),
        (
            "issue",
            &s.issue,
            1.0,
            format::percent(mean(&s.issue)),
            Color::Yellow,
        ),
        (
            "DRAM",
            dram,
            dram_max,
            format!(
                "{} {}",
                format::gb_per_s(mean(dram)),
                format::percent(dram_share)
            ),
            Color::Red,
        ),
    ];
    // Equal rows, whatever is left over stays blank below.
    let row_height = (inner.height / 4).max(1);
    let heights = Layout::vertical([Constraint::Length(row_height); 4]).split(inner);
    for ((name, values, max, average, color), row) in rows.iter().zip(heights.iter()) {
        let [label, spark] =
            Layout::horizontal([Constraint::Length(26), Constraint::Fill(1)]).areas(*row);
        frame.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled(format!("{name:<10}"), theme::label()),
                Span::raw(format!("{average:>15}")),
            ])),
            label,
        );
        let scaled: Vec<u64> = resample(values, spark.width as usize)
            .iter()
            .map(|v| (ratio(*v, *max) * 1000.0).round().clamp(0.0, 1000.0) as u64)
            .collect();
        frame.render_widget(
            Sparkline::default()
                .data(&scaled)
                .max(1000)
                .style(Style::new().fg(*color)),
            spark,
        );
    }
}

/// The mean over bins (a time average: every bin but the last is equally long).
fn mean(values: &[f64]) -> f64 {
    ratio(values.iter().sum(), values.len() as f64)
}

fn draw_costliest(frame: &mut Frame, app: &App, area: Rect) {
    let total: u64 = app
        .trace
        .profile
        .lines
        .iter()
        .map(|l| l.cost_cycles())
        .sum();
    let width = area.width.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = app
        .digest
        .lines_by_cost
        .iter()
        .take(area.height.saturating_sub(2) as usize)
        .map(|&i| {
            let l = &app.trace.profile.lines[i];
            let share = ratio(l.cost_cycles() as f64, total as f64);
            let path = app
                .trace
                .sources
                .get(l.file as usize)
                .map_or("?", |f| f.path.rsplit('/').next().unwrap_or(&f.path));
            let text = app.digest.source_line(l.file, l.line).unwrap_or("").trim();
            let head = format!(
                "{:>4} {:>7} cyc  {}:{}  ",
                format::percent(share),
                format::count(l.cost_cycles()),
                path,
                l.line
            );
            let rest = width.saturating_sub(head.chars().count());
            Line::from(vec![
                Span::styled(head, Style::new().fg(theme::heat(share * 2.0))),
                Span::raw(fit(text, rest)),
            ])
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled(
            "No per-line costs in this trace.",
            theme::dim(),
        ));
    }
    frame.render_widget(
        Paragraph::new(lines).block(pane("Costliest lines (Source view: 3)")),
        area,
    );
}

#[cfg(test)]
mod tests {
    use crate::app::Msg;
    use crate::fixture;
    use crate::ui::tests::screen;

    fn check(trace: metalsim_traces::Trace, size: (u16, u16)) -> String {
        screen(trace, size, &[Msg::Show(crate::app::View::Overview)])
    }

    #[test]
    fn overview_at_80x24() {
        insta::assert_snapshot!(check(fixture::trace(), (80, 24)));
    }

    #[test]
    fn overview_at_160x48() {
        insta::assert_snapshot!(check(fixture::trace(), (160, 48)));
    }

    #[test]
    fn the_report_names_the_limiter_when_it_has_one() {
        let mut t = fixture::trace();
        t.report.limiter = Some(metalsim_traces::LimiterReport {
            kind: "dram_bandwidth".to_string(),
            description: "DRAM bandwidth: 91% of peak".to_string(),
            utilisation: 0.91,
            candidates: Vec::new(),
        });
        let s = check(t, (80, 24));
        assert!(s.contains("limiter   DRAM bandwidth: 91% of peak"), "{s}");
    }

    #[test]
    fn overview_of_an_empty_trace() {
        insta::assert_snapshot!(check(fixture::empty(), (80, 24)));
    }
}
