//! Rendering: the tab bar, the current view, the status line and the overlays (help,
//! search). Pure functions of the [`App`]: they read the state and draw a frame.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Tabs, Wrap};

use crate::app::{App, View};
use crate::theme;
use crate::view;

/// The smallest terminal the views lay out in.
pub const MIN_SIZE: (u16, u16) = (60, 16);

/// Draws the whole screen for `app`.
pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        let text = format!(
            "The terminal is {}x{}; metalsim tui needs at least {}x{}. Enlarge it, or press q to quit.",
            area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
        );
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
        return;
    }
    let [tabs, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_tabs(frame, app, tabs);
    match app.view {
        View::Overview => view::overview::draw(frame, app, body),
        View::Timeline => view::timeline::draw(frame, app, body),
        View::Source => view::source::draw(frame, app, body),
        View::Isa => view::isa::draw(frame, app, body),
        View::Teaching => view::teaching::draw(frame, app, body),
    }
    draw_status(frame, app, status);
    if app.help {
        draw_help(frame, app, body);
    }
}

fn draw_tabs(frame: &mut Frame, app: &App, area: Rect) {
    let titles = View::ALL
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{} {}", i + 1, v.title()));
    let heading = if app.trace.report.kernel.is_empty() {
        String::new()
    } else {
        format!("{} on {} ", app.trace.report.kernel, app.trace.model.name)
    };
    let heading_width = (heading.chars().count() as u16).min(area.width / 3);
    let [left, right] =
        Layout::horizontal([Constraint::Fill(1), Constraint::Length(heading_width)]).areas(area);
    frame.render_widget(
        Tabs::new(titles)
            .select(app.view.index())
            .style(theme::dim())
            .highlight_style(
                Style::new()
                    .fg(Color::Black)
                    .bg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            )
            .divider("│")
            .padding(" ", " "),
        left,
    );
    frame.render_widget(
        Paragraph::new(crate::format::fit(&heading, heading_width as usize))
            .style(theme::title())
            .right_aligned(),
        right,
    );
}

/// The keys each view adds to the global ones, for the status line.
fn view_keys(view: View) -> &'static str {
    match view {
        View::Overview => "",
        View::Timeline => "←→ move  +/- zoom  0 all  m heat metric",
        View::Source => "↑↓ move  s sort by cost  f file  ⏎ ISA",
        View::Isa => "↑↓ move  ⏎ source line",
        View::Teaching => "←→ step  e/E event  ↑↓ registers  ⏎ ISA",
    }
}

fn draw_status(frame: &mut Frame, app: &App, area: Rect) {
    let line = if app.search.typing {
        Line::from(vec![
            Span::styled("/", theme::label()),
            Span::raw(app.search.input.clone()),
            Span::styled("▏", Style::new().fg(Color::Cyan)),
            Span::styled("  ⏎ search  Esc cancel", theme::dim()),
        ])
    } else if let Some(m) = &app.message {
        Line::from(Span::styled(m.clone(), Style::new().fg(Color::Yellow)))
    } else {
        let keys = view_keys(app.view);
        let sep = if keys.is_empty() { "" } else { "  " };
        Line::from(vec![
            Span::styled("Tab", theme::label()),
            Span::styled(" view  ", theme::dim()),
            Span::styled("?", theme::label()),
            Span::styled(" help  ", theme::dim()),
            Span::styled("/", theme::label()),
            Span::styled(" search  ", theme::dim()),
            Span::styled("q", theme::label()),
            Span::styled(" quit", theme::dim()),
            Span::styled(format!("{sep}{keys}"), theme::dim()),
        ])
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// The help's lines: global keys, then the current view's.
fn help_lines(view: View) -> Vec<Line<'static>> {
    let key = |k: &'static str, what: &'static str| {
        Line::from(vec![
            Span::styled(format!("{k:>12}  "), theme::label()),
            Span::raw(what),
        ])
    };
    let mut lines = vec![
        Line::styled("Everywhere", theme::title()),
        key("Tab Shift-Tab", "next / previous view"),
        key("1 … 5", "Overview, Timeline, Source, ISA, Teaching"),
        key("↑↓←→ hjkl", "move"),
        key("PgUp PgDn", "a page (also Space, Ctrl-u, Ctrl-d)"),
        key("g G Home End", "first / last"),
        key("/ n N", "search, next / previous match"),
        key("?", "this help (any key closes it)"),
        key("q Ctrl-c", "quit"),
        Line::raw(""),
        Line::styled(format!("{} view", view.title()), theme::title()),
    ];
    lines.extend(match view {
        View::Overview => vec![key("", "the run at a glance: Tab for the details")],
        View::Timeline => vec![
            key("← →", "move the cursor through time"),
            key("+ - z Z", "zoom in / out around the cursor"),
            key("0", "show the whole run"),
            key("m", "heat map: issue slots used / SIMD-groups resident"),
        ],
        View::Source => vec![
            key("s", "source order / costliest lines first"),
            key("f", "next source file"),
            key("Enter", "the ISA of this line"),
            key("gutter", "cost bar, cycles, top stall, bytes, active lanes"),
        ],
        View::Isa => vec![
            key("Enter", "the source line of this instruction"),
            key("⟲", "lanes reconverge at this block"),
        ],
        View::Teaching => vec![
            key("← → h l", "previous / next step"),
            key("↑ ↓ k j", "scroll the registers"),
            key("e E", "next / previous event (divergence, barrier...)"),
            key("Enter", "this step's instruction in the ISA view"),
        ],
    });
    lines
}

fn draw_help(frame: &mut Frame, app: &App, body: Rect) {
    let lines = help_lines(app.view);
    let height = (lines.len() as u16 + 2).min(body.height);
    let width = 64.min(body.width);
    let area = body.centered(Constraint::Length(width), Constraint::Length(height));
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(" Help ")
                .border_style(Style::new().fg(Color::Cyan)),
        ),
        area,
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use metalsim_traces::Trace;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::app::{Msg, update};
    use crate::fixture;

    /// The screen as plain text, one line per row, trailing blanks trimmed.
    pub(crate) fn screen(trace: Trace, size: (u16, u16), msgs: &[Msg]) -> String {
        let mut app = App::new(trace, size);
        for m in msgs {
            update(&mut app, m.clone());
        }
        let mut terminal = Terminal::new(TestBackend::new(size.0, size.1)).expect("test backend");
        terminal.draw(|f| draw(f, &app)).expect("draws");
        let buffer = terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buffer.area.height {
            let mut row = String::new();
            for x in 0..buffer.area.width {
                row.push_str(buffer[(x, y)].symbol());
            }
            out.push_str(row.trim_end());
            out.push('\n');
        }
        out
    }

    #[test]
    fn help_lists_the_keys_of_the_view() {
        let s = screen(
            fixture::trace(),
            (80, 24),
            &[Msg::Show(View::Source), Msg::Help],
        );
        insta::assert_snapshot!(s);
    }

    #[test]
    fn every_view_draws_a_long_run_on_many_cores_at_both_sizes() {
        for size in [(80, 24), (200, 60)] {
            for view in View::ALL {
                let s = screen(
                    fixture::large(5000, 32),
                    size,
                    &[Msg::Show(view), Msg::Bottom],
                );
                assert!(s.contains(view.title()), "{s}");
                if view == View::Timeline {
                    assert!(s.contains("bin 5000/5000"), "{s}");
                    // 32 cores share the heat map's rows at 80x24.
                    assert!(size.1 > 24 || s.contains("c0-"), "{s}");
                }
            }
        }
    }

    /// Every message there is (with a search and a few sizes), for the walk below.
    fn all_messages() -> Vec<Msg> {
        let mut m = vec![
            Msg::NextView,
            Msg::PrevView,
            Msg::Up,
            Msg::Down,
            Msg::Left,
            Msg::Right,
            Msg::PageUp,
            Msg::PageDown,
            Msg::Top,
            Msg::Bottom,
            Msg::ZoomIn,
            Msg::ZoomOut,
            Msg::ZoomReset,
            Msg::Select,
            Msg::ToggleSort,
            Msg::NextFile,
            Msg::ToggleHeat,
            Msg::NextEvent,
            Msg::PrevEvent,
            Msg::Help,
            Msg::SearchStart,
            Msg::SearchInput('v'),
            Msg::SearchInput('1'),
            Msg::SearchBackspace,
            Msg::SearchSubmit,
            Msg::SearchNext,
            Msg::SearchPrev,
            Msg::Dismiss,
            Msg::Resize(80, 24),
            Msg::Resize(61, 17),
        ];
        m.extend(View::ALL.map(Msg::Show));
        m
    }

    #[test]
    fn a_long_walk_of_keys_never_panics_on_odd_traces() {
        let messages = all_messages();
        for trace in [fixture::trace(), fixture::empty(), fixture::out_of_range()] {
            let mut app = App::new(trace, (80, 24));
            // A fixed linear congruential walk: the same keys every run.
            let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
            for step in 0..3000 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                update(
                    &mut app,
                    messages[(seed >> 33) as usize % messages.len()].clone(),
                );
                if step % 25 == 0 {
                    let (w, h) = app.size;
                    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("backend");
                    terminal.draw(|f| draw(f, &app)).expect("draws");
                }
            }
        }
    }

    #[test]
    fn a_tiny_terminal_says_so() {
        let s = screen(fixture::trace(), (30, 8), &[]);
        assert!(s.contains("needs at least 60x16"), "{s}");
    }

    #[test]
    fn the_status_line_shows_the_search_being_typed() {
        let s = screen(
            fixture::trace(),
            (80, 24),
            &[
                Msg::SearchStart,
                Msg::SearchInput('f'),
                Msg::SearchInput('m'),
            ],
        );
        assert!(s.lines().last().unwrap().starts_with("/fm"), "{s}");
    }
}
