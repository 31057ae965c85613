//! The lowered instructions grouped by basic block, each with its executions, active
//! lanes, issue and stall cycles; reconvergence points marked; the selected instruction's
//! details.

use metalsim_traces::{InstProfile, StallReason};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::app::App;
use crate::digest::IsaRow;
use crate::format::{self, fit, ratio};
use crate::theme;
use crate::view::first_row;

const HEADER: &str = " cost   execs lanes   issue   stall S    pc  instruction";
const GUTTER_WIDTH: usize = 45;

/// Draws the ISA view into `area`.
pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let [list, detail] = Layout::vertical([Constraint::Fill(1), Constraint::Length(6)]).areas(area);
    draw_list(frame, app, list);
    draw_detail(frame, app, detail);
}

fn inst_cost(inst: &InstProfile) -> u64 {
    inst.issue_cycles + inst.stalls.iter().sum::<u64>()
}

fn inst_spans(app: &App, inst: &InstProfile, text_width: usize) -> Vec<Span<'static>> {
    let cost = inst_cost(inst);
    let share = ratio(cost as f64, app.digest.max_inst_cost as f64);
    let stalled: u64 = inst.stalls.iter().sum();
    let lanes = inst.simd_efficiency();
    let top = theme::top_stall(&inst.stalls);
    let mut spans = vec![
        Span::raw(" "),
        theme::meter(share, 5),
        Span::raw(format!("{:>7} ", format::count(inst.executions))),
        Span::raw(format!(
            "{:>5} ",
            if inst.executions > 0 {
                format::percent(lanes)
            } else {
                String::new()
            }
        )),
        Span::raw(format!("{:>7} ", format::count(inst.issue_cycles))),
        Span::styled(
            format!("{:>7} ", format::count(stalled)),
            Style::new().fg(theme::heat(share)),
        ),
        match top {
            Some(r) => Span::styled(theme::stall_letter(r), Style::new().fg(theme::stall(r))),
            None => Span::raw(" "),
        },
        Span::styled(format!(" {:>5}  ", inst.pc), theme::dim()),
    ];
    let mut note = String::new();
    if inst.divergent > 0 {
        note = format!(
            "  ⑂ {} divergent",
            format::percent(ratio(inst.divergent as f64, inst.executions as f64))
        );
    }
    let width = text_width.saturating_sub(note.chars().count());
    spans.push(Span::raw(fit(&inst.text, width)));
    if !note.is_empty() {
        spans.push(Span::styled(note, Style::new().fg(Color::Yellow)));
    }
    spans
}

fn draw_list(frame: &mut Frame, app: &App, area: Rect) {
    let rows_all = &app.digest.isa_rows;
    let costs = !app.trace.profile.instructions.is_empty();
    let title = if costs {
        " ISA by basic block (⟲ reconvergence point) "
    } else {
        " ISA (this trace has no per-instruction costs) "
    };
    let block = Block::bordered()
        .title(Span::styled(title, theme::title()))
        .border_style(theme::dim());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut lines = Vec::new();
    if costs {
        lines.push(Line::styled(HEADER, theme::dim()));
    }
    if rows_all.is_empty() {
        lines.push(Line::styled("This trace holds no ISA.", theme::dim()));
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let rows = (inner.height as usize).saturating_sub(lines.len());
    let first = first_row(app.isa.cursor, rows_all.len(), rows);
    let text_width = (inner.width as usize).saturating_sub(GUTTER_WIDTH);
    for (i, row) in rows_all.iter().enumerate().skip(first).take(rows) {
        let mut line = match row {
            IsaRow::Block {
                name,
                reconvergence,
            } => {
                let mut spans = vec![Span::styled(
                    format!("{name}:"),
                    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
                )];
                if *reconvergence {
                    spans.push(Span::styled(
                        "  ⟲ reconvergence point: diverged lanes rejoin here",
                        Style::new().fg(Color::Magenta),
                    ));
                }
                Line::from(spans)
            }
            IsaRow::Inst(k) => {
                let inst = &app.trace.profile.instructions[*k];
                let l = Line::from(inst_spans(app, inst, text_width));
                if app.isa.line == Some((inst.file, inst.line)) && i != app.isa.cursor {
                    l.style(Style::new().add_modifier(Modifier::UNDERLINED))
                } else {
                    l
                }
            }
            IsaRow::Text(t) => Line::raw(fit(t, inner.width as usize)),
        };
        if i == app.isa.cursor {
            line = line.style(theme::selected());
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_detail(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::bordered()
        .title(Span::styled(" Instruction ", theme::title()))
        .border_style(theme::dim());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(IsaRow::Inst(k)) = app.digest.isa_rows.get(app.isa.cursor) else {
        frame.render_widget(
            Paragraph::new("No instruction selected.").style(theme::dim()),
            inner,
        );
        return;
    };
    let inst = &app.trace.profile.instructions[*k];
    let stalled: u64 = inst.stalls.iter().sum();
    let source = match app.digest.source_line(inst.file, inst.line) {
        Some(text) => format!("line {}: {}", inst.line, text.trim()),
        None if inst.line == 0 => "no source line".to_string(),
        None => format!("line {} (not in the trace's sources)", inst.line),
    };
    let width = inner.width as usize;
    let mut lines = vec![
        Line::from(vec![
            Span::styled("class ", theme::label()),
            Span::raw(format!("{}  ", inst.class)),
            Span::styled("bytes ", theme::label()),
            Span::raw(format!("{}  ", format::bytes(inst.bytes))),
            Span::styled("transactions ", theme::label()),
            Span::raw(format!("{}  ", format::count(inst.transactions))),
            Span::styled("divergent ", theme::label()),
            Span::raw(format::count(inst.divergent)),
        ]),
        Line::from(vec![
            Span::styled("source ", theme::label()),
            Span::raw(fit(&source, width.saturating_sub(7))),
        ]),
        Line::from(theme::stall_bar(&inst.stalls, width)),
    ];
    let mut legend = Vec::new();
    for (reason, n) in StallReason::ALL.iter().zip(&inst.stalls) {
        if *n > 0 {
            legend.push(Span::styled(
                format!("{} {}  ", reason.name(), format::count(*n)),
                Style::new().fg(theme::stall(*reason)),
            ));
        }
    }
    if legend.is_empty() && stalled == 0 {
        legend.push(Span::styled("no stall cycles", theme::dim()));
    }
    lines.push(Line::from(legend));
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
}

#[cfg(test)]
mod tests {
    use crate::app::{Msg, View};
    use crate::fixture;
    use crate::ui::tests::screen;

    fn check(trace: metalsim_traces::Trace, size: (u16, u16), msgs: &[Msg]) -> String {
        let mut all = vec![Msg::Show(View::Isa)];
        all.extend_from_slice(msgs);
        screen(trace, size, &all)
    }

    #[test]
    fn isa_at_80x24() {
        insta::assert_snapshot!(check(fixture::trace(), (80, 24), &[]));
    }

    #[test]
    fn isa_after_a_jump_from_the_source_at_140x40() {
        insta::assert_snapshot!(screen(
            fixture::trace(),
            (140, 40),
            &[
                Msg::Show(View::Source),
                Msg::Top,
                Msg::Down,
                Msg::Down,
                Msg::Down,
                Msg::Down,
                Msg::Select
            ]
        ));
    }

    #[test]
    fn isa_without_costs_shows_the_text() {
        let mut t = fixture::trace();
        t.profile.instructions.clear();
        let s = check(t, (80, 24), &[Msg::Down]);
        assert!(s.contains("no per-instruction costs"), "{s}");
        assert!(s.contains("barrier.threadgroup"), "{s}");
        let s = check(fixture::empty(), (80, 24), &[]);
        assert!(s.contains("holds no ISA"), "{s}");
        let s = check(fixture::out_of_range(), (80, 24), &[Msg::Top]);
        assert!(s.contains("not in the trace's sources"), "{s}");
    }
}
