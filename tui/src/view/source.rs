//! The kernel source with each line's cost in coloured gutters (cost bar, cycles, top
//! stall reason, bytes, active lanes), in source order or costliest first, and the
//! selected line's details.

use metalsim_traces::{LineProfile, StallReason};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::app::App;
use crate::format::{self, fit, ratio};
use crate::theme;
use crate::view::first_row;

/// Width of the gutter before the line number.
const GUTTER: &str = " cost  cycles S    bytes lanes";

/// Draws the source view into `area`.
pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let [list, detail] = Layout::vertical([Constraint::Fill(1), Constraint::Length(6)]).areas(area);
    draw_list(frame, app, list);
    draw_detail(frame, app, detail);
}

/// The profile of `(file, line)`, if it has one.
fn cost(app: &App, file: u32, line: u32) -> Option<&LineProfile> {
    let i = *app.digest.line_costs.get(&(file, line))?;
    app.trace.profile.lines.get(i)
}

/// The gutter for a line's profile: as wide as [`GUTTER`].
fn gutter(app: &App, profile: Option<&LineProfile>) -> Vec<Span<'static>> {
    let Some(p) = profile else {
        return vec![Span::raw(" ".repeat(GUTTER.len()))];
    };
    let share = ratio(p.cost_cycles() as f64, app.digest.max_line_cost as f64);
    let top = theme::top_stall(&p.stalls);
    vec![
        Span::raw(" "),
        theme::meter(share, 5),
        Span::styled(
            format!("{:>7} ", format::count(p.cost_cycles())),
            Style::new().fg(theme::heat(share)),
        ),
        match top {
            Some(r) => Span::styled(theme::stall_letter(r), Style::new().fg(theme::stall(r))),
            None => Span::raw(" "),
        },
        Span::raw(format!(
            " {:>8}",
            if p.bytes > 0 {
                format::bytes(p.bytes)
            } else {
                String::new()
            }
        )),
        Span::raw(format!(
            " {:>5}",
            if p.executions > 0 {
                format::percent(p.simd_efficiency())
            } else {
                String::new()
            }
        )),
    ]
}

fn draw_list(frame: &mut Frame, app: &App, area: Rect) {
    let file_name = app
        .trace
        .sources
        .get(app.source.file as usize)
        .map_or("no source file", |f| f.path.as_str());
    let title = if app.source.sorted {
        " Source lines, costliest first (s: source order) ".to_string()
    } else {
        format!(" {file_name} (s: costliest first) ")
    };
    let block = Block::bordered()
        .title(Span::styled(title, theme::title()))
        .border_style(theme::dim());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let len = app.source_len();
    let mut lines = vec![Line::styled(
        format!("{GUTTER} {:>5}  {}", "line", "source"),
        theme::dim(),
    )];
    if len == 0 {
        lines.push(Line::styled(
            if app.trace.sources.is_empty() {
                "This trace holds no source text."
            } else {
                "No lines here."
            },
            theme::dim(),
        ));
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let rows = (inner.height as usize).saturating_sub(1);
    let first = first_row(app.source.cursor, len, rows);
    let text_width = (inner.width as usize).saturating_sub(GUTTER.len() + 8);
    for row in first..(first + rows).min(len) {
        let (file, line) = if app.source.sorted {
            let l = &app.trace.profile.lines[app.digest.lines_by_cost[row]];
            (l.file, l.line)
        } else {
            (app.source.file, row as u32 + 1)
        };
        let mut spans = gutter(app, cost(app, file, line));
        let number = if app.source.sorted && app.trace.sources.len() > 1 {
            format!("{file}:{line}")
        } else {
            line.to_string()
        };
        spans.push(Span::styled(format!(" {number:>5}  "), theme::dim()));
        let text = app.digest.source_line(file, line).unwrap_or("");
        spans.push(Span::raw(fit(text, text_width)));
        let mut l = Line::from(spans);
        if row == app.source.cursor {
            l = l.style(theme::selected());
        } else if app.isa.line == Some((file, line)) {
            l = l.style(Style::new().add_modifier(ratatui::style::Modifier::UNDERLINED));
        }
        lines.push(l);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_detail(frame: &mut Frame, app: &App, area: Rect) {
    let selection = app.source_selection();
    let title = match selection {
        Some((_, line)) => format!(" Line {line} "),
        None => " Line ".to_string(),
    };
    let block = Block::bordered()
        .title(Span::styled(title, theme::title()))
        .border_style(theme::dim());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(p) = selection.and_then(|(f, l)| cost(app, f, l)) else {
        frame.render_widget(
            Paragraph::new("No instruction of this line ran.").style(theme::dim()),
            inner,
        );
        return;
    };
    let stalled: u64 = p.stalls.iter().sum();
    let width = inner.width as usize;
    let mut lines = vec![
        Line::from(vec![
            Span::styled("executions ", theme::label()),
            Span::raw(format!("{}  ", format::count(p.executions))),
            Span::styled("issue ", theme::label()),
            Span::raw(format!("{} cyc  ", format::count(p.issue_cycles))),
            Span::styled("stalled ", theme::label()),
            Span::raw(format!("{} cyc  ", format::count(stalled))),
            Span::styled("bytes ", theme::label()),
            Span::raw(format!("{}  ", format::bytes(p.bytes))),
            Span::styled("lanes ", theme::label()),
            Span::raw(format!("{}  ", format::percent(p.simd_efficiency()))),
            Span::styled("divergent ", theme::label()),
            Span::raw(format::count(p.divergent)),
        ]),
        Line::from(theme::stall_bar(&p.stalls, width)),
    ];
    let mut legend = Vec::new();
    for (reason, n) in StallReason::ALL.iter().zip(&p.stalls) {
        if *n > 0 {
            legend.push(Span::styled(
                format!(
                    "{} {} ({})  ",
                    reason.name(),
                    format::count(*n),
                    format::percent(ratio(*n as f64, stalled as f64))
                ),
                Style::new().fg(theme::stall(*reason)),
            ));
        }
    }
    if legend.is_empty() {
        legend.push(Span::styled("no stall cycles", theme::dim()));
    }
    lines.push(Line::from(legend));
    frame.render_widget(
        Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: true }),
        inner,
    );
}

#[cfg(test)]
mod tests {
    use crate::app::{Msg, View};
    use crate::fixture;
    use crate::ui::tests::screen;

    fn check(trace: metalsim_traces::Trace, size: (u16, u16), msgs: &[Msg]) -> String {
        let mut all = vec![Msg::Show(View::Source)];
        all.extend_from_slice(msgs);
        screen(trace, size, &all)
    }

    #[test]
    fn source_at_80x24() {
        insta::assert_snapshot!(check(fixture::trace(), (80, 24), &[]));
    }

    #[test]
    fn source_sorted_by_cost_at_140x40() {
        insta::assert_snapshot!(check(fixture::trace(), (140, 40), &[Msg::ToggleSort]));
    }

    #[test]
    fn source_of_odd_traces() {
        let mut no_lines = fixture::trace();
        no_lines.sources[0].text.clear();
        let s = check(no_lines, (80, 24), &[Msg::Down]);
        assert!(s.contains("No lines here"), "{s}");
        let empty = check(fixture::empty(), (80, 24), &[]);
        assert!(empty.contains("holds no source text"), "{empty}");
        let odd = check(
            fixture::out_of_range(),
            (80, 24),
            &[Msg::ToggleSort, Msg::Bottom],
        );
        assert!(odd.contains("Line "), "{odd}");
    }
}
