//! The teaching view: one recorded SIMD-group stepped through its instructions, with its
//! 32 lanes' active mask, the values of the registers each instruction reads and writes,
//! and divergence, reconvergence and barrier waits as they happen.

use metalsim_traces::{RecordedStep, RegisterValues, SimdgroupRecording};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::app::App;
use crate::digest::IsaRow;
use crate::format::{fit, fit_value};
use crate::theme;

/// How to make a trace this view can show.
pub const NO_RECORDING: &str = "This trace has no SIMD-group recording, so there is nothing to \
step through.\n\nTo watch one SIMD-group run lane by lane (its active mask, the values its \
instructions read and write, divergence, reconvergence and barrier waits), make the trace \
again asking for a recording:\n\n    metalsim run KERNEL.metal --spec SPEC.toml --trace FILE \
--record-simdgroup TG,SG\n\nwhere TG is the threadgroup's index in the grid and SG the \
SIMD-group's index in it; then open FILE with metalsim tui.";

/// Draws the teaching view into `area`.
pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let Some(rec) = app.trace.recording.as_ref().filter(|r| !r.steps.is_empty()) else {
        frame.render_widget(
            Paragraph::new(NO_RECORDING)
                .wrap(Wrap { trim: false })
                .block(Block::bordered().title(Span::styled(" Teaching ", theme::title()))),
            area,
        );
        return;
    };
    let step_index = app.step.min(rec.steps.len() - 1);
    let step = &rec.steps[step_index];
    let [head, registers, strip] = Layout::vertical([
        Constraint::Length(6),
        Constraint::Fill(1),
        Constraint::Length(4),
    ])
    .areas(area);
    draw_step(frame, app, rec, step_index, head);
    draw_registers(frame, step, app.register_scroll, registers);
    draw_strip(frame, rec, step_index, strip);
}

/// The colour of an event: divergence, reconvergence, barrier, exit.
fn event_color(event: &str) -> Color {
    if event.starts_with("diverge") {
        Color::Yellow
    } else if event.starts_with("reconverge") {
        Color::Green
    } else if event.contains("barrier") {
        Color::Magenta
    } else {
        Color::Gray
    }
}

fn mask_spans(active: u32) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for lane in 0..32 {
        spans.push(if active & (1 << lane) != 0 {
            Span::styled("█", Style::new().fg(Color::Green))
        } else {
            Span::styled("·", theme::dim())
        });
        if lane % 8 == 7 {
            spans.push(Span::raw(" "));
        }
    }
    spans
}

fn draw_step(frame: &mut Frame, app: &App, rec: &SimdgroupRecording, index: usize, area: Rect) {
    let [x, y, z] = rec.threadgroup;
    let cycle = step_cycle(rec.steps[index].cycle);
    let title = format!(
        " SIMD-group {} of threadgroup ({x},{y},{z}): step {} of {}{}{cycle} ",
        rec.simdgroup,
        index + 1,
        rec.steps.len(),
        if rec.truncated {
            " (recording truncated)"
        } else {
            ""
        },
    );
    let block = Block::bordered()
        .title(Span::styled(title, theme::title()))
        .border_style(theme::dim());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let step = &rec.steps[index];
    let width = inner.width as usize;
    let inst = app
        .digest
        .step_rows
        .get(index)
        .copied()
        .flatten()
        .and_then(|row| match app.digest.isa_rows.get(row) {
            Some(IsaRow::Inst(i)) => app.trace.profile.instructions.get(*i),
            _ => None,
        });
    let (block_name, text, source) = match inst {
        Some(i) => (
            i.block.as_str(),
            i.text.as_str(),
            app.digest
                .source_line(i.file, i.line)
                .map(|t| format!("line {}: {}", i.line, t.trim())),
        ),
        None => ("?", "(instruction not in the trace)", None),
    };
    let active = step.active.count_ones();
    let mut mask = vec![Span::styled("lanes ", theme::label())];
    mask.extend(mask_spans(step.active));
    mask.push(Span::raw(format!("{active}/32 active")));
    let event = match &step.event {
        Some(e) => Line::from(vec![
            Span::styled("event ", theme::label()),
            Span::styled(
                e.clone(),
                Style::new().fg(event_color(e)).add_modifier(Modifier::BOLD),
            ),
        ]),
        None => Line::from(vec![
            Span::styled("event ", theme::label()),
            Span::styled("none (e: next event)", theme::dim()),
        ]),
    };
    let lines = vec![
        Line::from(vec![
            Span::styled(format!("pc {:<4} ", step.pc), theme::label()),
            Span::styled(format!("{block_name}  "), Style::new().fg(Color::Cyan)),
            Span::styled(
                fit(text, width.saturating_sub(10 + block_name.len())),
                Style::new().add_modifier(Modifier::BOLD),
            ),
        ]),
        Line::styled(
            fit(source.as_deref().unwrap_or("no source line"), width),
            theme::dim(),
        ),
        Line::from(mask),
        event,
    ];
    frame.render_widget(Paragraph::new(lines), inner);
}

fn step_cycle(cycle: Option<u64>) -> String {
    match cycle {
        Some(c) => format!(", cycle {c}"),
        None => String::new(),
    }
}

/// Lines showing one register's 32 lanes, `per_row` lanes a line.
fn register_lines(
    heading: &'static str,
    reg: &RegisterValues,
    active: u32,
    per_row: usize,
    width: usize,
) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(heading, theme::label()),
        Span::styled(
            format!(" {}", reg.name),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!(": {}", reg.ty), theme::dim()),
    ])];
    let cell = (width.saturating_sub(7) / per_row).max(2);
    for first in (0..32).step_by(per_row) {
        let mut spans = vec![Span::styled(
            format!("{:>2}-{:<2}  ", first, first + per_row - 1),
            theme::dim(),
        )];
        for lane in first..first + per_row {
            let value = reg.lanes.get(lane).map_or("?", String::as_str);
            let style = if active & (1 << lane) != 0 {
                Style::new()
            } else {
                theme::dim()
            };
            spans.push(Span::styled(
                format!("{:>w$} ", fit_value(value, cell - 1), w = cell - 1),
                style,
            ));
        }
        lines.push(Line::from(spans));
    }
    lines
}

fn draw_registers(frame: &mut Frame, step: &RecordedStep, scroll: usize, area: Rect) {
    let block = Block::bordered()
        .title(Span::styled(
            " Registers: read (before) and written (after); dim lanes are inactive ",
            theme::title(),
        ))
        .border_style(theme::dim());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let longest = step
        .reads
        .iter()
        .chain(&step.writes)
        .flat_map(|r| r.lanes.iter().map(|v| v.chars().count()))
        .max()
        .unwrap_or(1);
    // As many lanes a line as their values allow: fewer lines, more registers in view.
    let per_row = [32, 16, 8]
        .into_iter()
        .find(|n| width.saturating_sub(7) / n > longest)
        .unwrap_or(8);
    let mut lines = Vec::new();
    let regs = step
        .reads
        .iter()
        .map(|r| ("read ", r))
        .chain(step.writes.iter().map(|r| ("wrote", r)));
    for (heading, reg) in regs {
        lines.extend(register_lines(heading, reg, step.active, per_row, width));
    }
    if lines.is_empty() {
        lines.push(Line::styled(
            "This instruction reads and writes no register.",
            theme::dim(),
        ));
    }
    let rows = inner.height as usize;
    let scroll = scroll.min(lines.len().saturating_sub(rows));
    let mut lines: Vec<Line> = lines.into_iter().skip(scroll).collect();
    if lines.len() > rows && rows > 0 {
        let hidden = lines.len() - (rows - 1);
        lines.truncate(rows - 1);
        lines.push(Line::styled(
            format!("… {hidden} more lines below (↓ scrolls, or enlarge the terminal)"),
            Style::new().fg(Color::Yellow),
        ));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// A strip of the steps around the cursor: a bar per step as tall as its active lanes,
/// coloured by its event.
fn draw_strip(frame: &mut Frame, rec: &SimdgroupRecording, index: usize, area: Rect) {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let block = Block::bordered()
        .title(Span::styled(
            " Active lanes per step (yellow diverged, green reconverged, magenta barrier) ",
            theme::title(),
        ))
        .border_style(theme::dim());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    if width == 0 {
        return;
    }
    let first = crate::view::first_row(index, rec.steps.len(), width);
    let mut bars = Vec::new();
    let mut marker = String::new();
    for (i, step) in rec.steps.iter().enumerate().skip(first).take(width) {
        let active = step.active.count_ones() as usize;
        let symbol = if active == 0 {
            ' '
        } else {
            BARS[((active - 1) * 8 / 32).min(7)]
        };
        let color = step.event.as_deref().map_or(Color::Cyan, event_color);
        let mut style = Style::new().fg(color);
        if i == index {
            style = style.bg(Color::DarkGray);
        }
        bars.push(Span::styled(symbol.to_string(), style));
        marker.push(if i == index { '▲' } else { ' ' });
    }
    frame.render_widget(
        Paragraph::new(vec![
            Line::from(bars),
            Line::styled(marker, Style::new().fg(Color::White)),
        ]),
        inner,
    );
}

#[cfg(test)]
mod tests {
    use crate::app::{Msg, View};
    use crate::fixture;
    use crate::ui::tests::screen;

    fn check(trace: metalsim_traces::Trace, size: (u16, u16), msgs: &[Msg]) -> String {
        let mut all = vec![Msg::Show(View::Teaching)];
        all.extend_from_slice(msgs);
        screen(trace, size, &all)
    }

    #[test]
    fn teaching_at_a_divergence_at_80x24() {
        insta::assert_snapshot!(check(fixture::trace(), (80, 24), &[Msg::NextEvent]));
    }

    #[test]
    fn teaching_inside_a_branch_at_160x48() {
        insta::assert_snapshot!(check(
            fixture::trace(),
            (160, 48),
            &[Msg::NextEvent, Msg::Right]
        ));
    }

    #[test]
    fn teaching_reads_and_writes_at_80x24() {
        let s = check(fixture::trace(), (80, 24), &[Msg::Right, Msg::Right]);
        assert!(s.contains("read  v0: ptr.device"), "{s}");
        assert!(s.contains("more lines below"), "{s}");
        let s = check(
            fixture::trace(),
            (80, 24),
            &[
                Msg::Right,
                Msg::Right,
                Msg::Down,
                Msg::Down,
                Msg::Down,
                Msg::Down,
                Msg::Down,
                Msg::Down,
            ],
        );
        assert!(s.contains("wrote v2: ptr.device"), "{s}");
        assert!(!s.contains("read  v0"), "{s}");
    }

    #[test]
    fn teaching_without_a_recording_says_how_to_make_one() {
        let s = check(fixture::empty(), (80, 24), &[Msg::Right, Msg::NextEvent]);
        assert!(s.contains("--record-simdgroup"), "{s}");
        let s = check(fixture::out_of_range(), (80, 24), &[Msg::Right, Msg::Right]);
        assert!(s.contains("?"), "{s}");
    }
}
