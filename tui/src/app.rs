//! The application's state and the one function that changes it: [`update`] applies a
//! [`Msg`] (what the user asked for, already decoded from keys by [`crate::keymap`]) to
//! an [`App`]. Rendering only reads the state (see [`crate::ui`]).

use metalsim_traces::Trace;

use crate::digest::{Digest, IsaRow};

/// The views, in Tab order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// The dashboard.
    Overview,
    /// Charts over time and the core × time heat map.
    Timeline,
    /// The kernel source with per-line costs.
    Source,
    /// The lowered instructions with their costs.
    Isa,
    /// One SIMD-group stepped through its instructions.
    Teaching,
}

impl View {
    /// Every view, in Tab order.
    pub const ALL: [View; 5] = [
        View::Overview,
        View::Timeline,
        View::Source,
        View::Isa,
        View::Teaching,
    ];

    /// Its name on the tab bar.
    pub fn title(self) -> &'static str {
        match self {
            View::Overview => "Overview",
            View::Timeline => "Timeline",
            View::Source => "Source",
            View::Isa => "ISA",
            View::Teaching => "Teaching",
        }
    }

    /// Its position in [`View::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Leave the application.
    Quit,
    /// The next view (Tab).
    NextView,
    /// The previous view (Shift-Tab).
    PrevView,
    /// A given view (number keys).
    Show(View),
    /// Cursor up.
    Up,
    /// Cursor down.
    Down,
    /// Cursor left (earlier in time, previous step).
    Left,
    /// Cursor right.
    Right,
    /// A page up.
    PageUp,
    /// A page down.
    PageDown,
    /// To the first item.
    Top,
    /// To the last item.
    Bottom,
    /// Zoom the timeline in around the cursor.
    ZoomIn,
    /// Zoom the timeline out.
    ZoomOut,
    /// Show the whole run on the timeline.
    ZoomReset,
    /// Follow the selection: a source line to its ISA, an instruction to its line, a
    /// recorded step to its instruction.
    Select,
    /// Source view: source order or costliest lines first.
    ToggleSort,
    /// Source view: the next source file.
    NextFile,
    /// Timeline: the heat map's metric.
    ToggleHeat,
    /// Teaching view: the next step with an event (divergence, reconvergence, barrier).
    NextEvent,
    /// Teaching view: the previous step with an event.
    PrevEvent,
    /// Show or hide the help.
    Help,
    /// Start typing a search.
    SearchStart,
    /// A character of the search being typed.
    SearchInput(char),
    /// Delete the last character of the search being typed.
    SearchBackspace,
    /// Search for what was typed.
    SearchSubmit,
    /// The next match of the last search.
    SearchNext,
    /// The previous match of the last search.
    SearchPrev,
    /// Close the help, cancel the search being typed, clear the message.
    Dismiss,
    /// The terminal's new size, columns × rows.
    Resize(u16, u16),
}

/// What the heat map colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeatMetric {
    /// Issued instructions over issue slots.
    Issue,
    /// Resident SIMD-groups over the core's maximum.
    Residency,
}

/// The timeline's cursor and zoom.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineState {
    /// The bin under the cursor.
    pub cursor: usize,
    /// Bins shown at once (the whole run when it has fewer).
    pub span: usize,
    /// What the heat map shows.
    pub heat: HeatMetric,
}

impl TimelineState {
    /// The first bin shown, keeping the cursor in view: `[first, first + span)`.
    pub fn first(&self, bins: usize) -> usize {
        let span = self.span.min(bins);
        self.cursor
            .saturating_sub(span / 2)
            .min(bins.saturating_sub(span))
    }
}

/// The source view's cursor.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceState {
    /// The file shown in source order.
    pub file: u32,
    /// In source order the 0-based line; sorted, the position in the cost ranking.
    pub cursor: usize,
    /// Whether lines are listed costliest first.
    pub sorted: bool,
}

/// The ISA view's cursor.
#[derive(Clone, Debug, PartialEq)]
pub struct IsaState {
    /// The selected row.
    pub cursor: usize,
    /// The source line whose instructions are highlighted (after a jump from the source).
    pub line: Option<(u32, u32)>,
}

/// The search being typed and the last one made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchState {
    /// Whether the search line is open for typing.
    pub typing: bool,
    /// What has been typed.
    pub input: String,
    /// The last search submitted.
    pub last: Option<String>,
}

/// Everything the UI shows and remembers.
#[derive(Clone, Debug)]
pub struct App {
    /// The trace being explored.
    pub trace: Trace,
    /// What the views show, derived from it.
    pub digest: Digest,
    /// The view on screen.
    pub view: View,
    /// Timeline cursor and zoom.
    pub timeline: TimelineState,
    /// Source view cursor.
    pub source: SourceState,
    /// ISA view cursor.
    pub isa: IsaState,
    /// The recorded step shown in the teaching view.
    pub step: usize,
    /// Lines the teaching view's register pane is scrolled down by.
    pub register_scroll: usize,
    /// Whether the help is open.
    pub help: bool,
    /// The search.
    pub search: SearchState,
    /// A message for the status line ("no match for ...").
    pub message: Option<String>,
    /// The terminal's size, columns × rows.
    pub size: (u16, u16),
    /// Whether the user asked to quit.
    pub quit: bool,
}

impl App {
    /// The state for `trace`, on the overview, sized `columns × rows`.
    pub fn new(trace: Trace, size: (u16, u16)) -> App {
        let digest = Digest::new(&trace);
        let costliest = digest
            .lines_by_cost
            .first()
            .map(|&i| &trace.profile.lines[i]);
        let source = SourceState {
            file: costliest.map_or(0, |l| l.file),
            cursor: costliest.map_or(0, |l| (l.line as usize).saturating_sub(1)),
            sorted: false,
        };
        let isa = IsaState {
            cursor: next_inst_row(&digest.isa_rows, 0, 1).unwrap_or(0),
            line: None,
        };
        App {
            timeline: TimelineState {
                cursor: 0,
                span: digest.series.len().max(1),
                heat: HeatMetric::Issue,
            },
            source,
            isa,
            step: 0,
            register_scroll: 0,
            help: false,
            search: SearchState::default(),
            message: None,
            view: View::Overview,
            size,
            quit: false,
            trace,
            digest,
        }
    }

    /// Rows a page moves: the body's height less its frame.
    pub fn page(&self) -> usize {
        (self.size.1 as usize).saturating_sub(10).max(1)
    }

    /// Lines in the source view's list.
    pub fn source_len(&self) -> usize {
        if self.source.sorted {
            self.digest.lines_by_cost.len()
        } else {
            self.digest
                .files
                .get(self.source.file as usize)
                .map_or(0, Vec::len)
        }
    }

    /// The `(file, line)` under the source view's cursor.
    pub fn source_selection(&self) -> Option<(u32, u32)> {
        if self.source.sorted {
            let i = *self.digest.lines_by_cost.get(self.source.cursor)?;
            let l = &self.trace.profile.lines[i];
            Some((l.file, l.line))
        } else {
            (self.source.cursor < self.source_len())
                .then(|| (self.source.file, self.source.cursor as u32 + 1))
        }
    }

    /// Steps in the recording (0 without one).
    pub fn steps(&self) -> usize {
        self.trace.recording.as_ref().map_or(0, |r| r.steps.len())
    }
}

/// The first instruction row at or after `from` going in `direction` (1 or -1).
fn next_inst_row(rows: &[IsaRow], from: usize, direction: isize) -> Option<usize> {
    let mut i = from as isize;
    while i >= 0 && (i as usize) < rows.len() {
        if !matches!(rows[i as usize], IsaRow::Block { .. }) {
            return Some(i as usize);
        }
        i += direction;
    }
    None
}

/// `cursor` moved by `delta` within `[0, len)`.
fn moved(cursor: usize, delta: isize, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    cursor.saturating_add_signed(delta).min(len - 1)
}

/// Applies `msg` to `app`.
pub fn update(app: &mut App, msg: Msg) {
    if !matches!(msg, Msg::Resize(..)) {
        app.message = None;
    }
    if app.search.typing {
        search_typing(app, msg);
        return;
    }
    if app.help {
        match msg {
            Msg::Quit => app.quit = true,
            Msg::Resize(w, h) => app.size = (w, h),
            _ => app.help = false,
        }
        return;
    }
    let page = app.page() as isize;
    match msg {
        Msg::Quit => app.quit = true,
        Msg::NextView => app.view = View::ALL[(app.view.index() + 1) % View::ALL.len()],
        Msg::PrevView => {
            app.view = View::ALL[(app.view.index() + View::ALL.len() - 1) % View::ALL.len()]
        }
        Msg::Show(v) => app.view = v,
        Msg::Help => app.help = true,
        Msg::Dismiss => {}
        Msg::Resize(w, h) => app.size = (w, h),
        Msg::SearchStart => {
            app.search.typing = true;
            app.search.input.clear();
        }
        Msg::SearchNext => repeat_search(app, true),
        Msg::SearchPrev => repeat_search(app, false),
        Msg::Up if app.view == View::Teaching => {
            app.register_scroll = app.register_scroll.saturating_sub(1)
        }
        Msg::Down if app.view == View::Teaching => app.register_scroll += 1,
        Msg::Up | Msg::Left if app.view != View::Timeline => step_cursor(app, -1),
        Msg::Down | Msg::Right if app.view != View::Timeline => step_cursor(app, 1),
        Msg::PageUp => step_cursor(app, -page),
        Msg::PageDown => step_cursor(app, page),
        Msg::Top => step_cursor(app, isize::MIN / 2),
        Msg::Bottom => step_cursor(app, isize::MAX / 2),
        Msg::Left => step_cursor(app, -1),
        Msg::Right => step_cursor(app, 1),
        Msg::Up | Msg::Down => {}
        Msg::ZoomIn | Msg::ZoomOut | Msg::ZoomReset | Msg::ToggleHeat => timeline(app, msg),
        Msg::Select => select(app),
        Msg::ToggleSort if app.view == View::Source => {
            let selection = app.source_selection();
            app.source.sorted = !app.source.sorted;
            if let Some((file, line)) = selection {
                place_source_cursor(app, file, line);
            }
        }
        Msg::NextFile if app.view == View::Source && !app.digest.files.is_empty() => {
            app.source.file = (app.source.file + 1) % app.digest.files.len() as u32;
            app.source.sorted = false;
            app.source.cursor = 0;
        }
        Msg::NextEvent | Msg::PrevEvent if app.view == View::Teaching => {
            next_event(app, msg == Msg::NextEvent)
        }
        Msg::ToggleSort | Msg::NextFile | Msg::NextEvent | Msg::PrevEvent => {}
        Msg::SearchInput(_) | Msg::SearchBackspace | Msg::SearchSubmit => {}
    }
}

fn search_typing(app: &mut App, msg: Msg) {
    match msg {
        Msg::SearchInput(c) => app.search.input.push(c),
        Msg::SearchBackspace => {
            app.search.input.pop();
        }
        Msg::SearchSubmit => {
            app.search.typing = false;
            if !app.search.input.is_empty() {
                app.search.last = Some(app.search.input.clone());
                repeat_search(app, true);
            }
        }
        Msg::Resize(w, h) => app.size = (w, h),
        Msg::Quit | Msg::Dismiss => app.search.typing = false,
        _ => {}
    }
}

/// Moves the current view's cursor by `delta` items.
fn step_cursor(app: &mut App, delta: isize) {
    match app.view {
        View::Overview => {}
        View::Timeline => {
            let len = app.digest.series.len();
            // One step moves one screen column's worth of bins when zoomed out.
            let per_column = (app.timeline.span.min(len) / (app.size.0 as usize).max(1)).max(1);
            let delta = if delta.abs() == 1 {
                delta * per_column as isize
            } else if delta.abs() < isize::MAX / 4 {
                delta.signum() * (app.timeline.span.min(len) / 4).max(1) as isize
            } else {
                delta
            };
            app.timeline.cursor = moved(app.timeline.cursor, delta, len);
        }
        View::Source => app.source.cursor = moved(app.source.cursor, delta, app.source_len()),
        View::Isa => {
            let rows = &app.digest.isa_rows;
            let target = moved(app.isa.cursor, delta, rows.len());
            let direction = if delta < 0 { -1 } else { 1 };
            app.isa.cursor = next_inst_row(rows, target, direction)
                .or_else(|| next_inst_row(rows, target, -direction))
                .unwrap_or(app.isa.cursor);
        }
        View::Teaching => {
            app.step = moved(app.step, delta, app.steps());
            app.register_scroll = 0;
        }
    }
}

fn timeline(app: &mut App, msg: Msg) {
    if app.view != View::Timeline {
        return;
    }
    let len = app.digest.series.len().max(1);
    let t = &mut app.timeline;
    match msg {
        Msg::ZoomIn => t.span = (t.span.min(len) / 2).max(len.min(8)),
        Msg::ZoomOut => t.span = t.span.saturating_mul(2).min(len),
        Msg::ZoomReset => t.span = len,
        Msg::ToggleHeat => {
            t.heat = match t.heat {
                HeatMetric::Issue => HeatMetric::Residency,
                HeatMetric::Residency => HeatMetric::Issue,
            }
        }
        _ => {}
    }
}

/// Puts the source cursor on `(file, line)` in the current order.
fn place_source_cursor(app: &mut App, file: u32, line: u32) {
    if app.source.sorted {
        let lines = &app.trace.profile.lines;
        if let Some(pos) = app
            .digest
            .lines_by_cost
            .iter()
            .position(|&i| lines[i].file == file && lines[i].line == line)
        {
            app.source.cursor = pos;
        } else {
            app.source.cursor = 0;
        }
    } else {
        app.source.file = file;
        app.source.cursor = (line as usize).saturating_sub(1);
        app.source.cursor = moved(app.source.cursor, 0, app.source_len());
    }
}

fn select(app: &mut App) {
    match app.view {
        View::Source => {
            let Some((file, line)) = app.source_selection() else {
                return;
            };
            match app.digest.rows_of_line(&app.trace, file, line).next() {
                Some(row) => {
                    app.isa.cursor = row;
                    app.isa.line = Some((file, line));
                    app.view = View::Isa;
                }
                None => app.message = Some(format!("line {line} has no instructions")),
            }
        }
        View::Isa => {
            let Some(IsaRow::Inst(i)) = app.digest.isa_rows.get(app.isa.cursor) else {
                return;
            };
            let inst = &app.trace.profile.instructions[*i];
            let (file, line) = (inst.file, inst.line);
            if line == 0 || app.digest.source_line(file, line).is_none() {
                app.message = Some("this instruction has no source line in the trace".into());
                return;
            }
            app.source.sorted = false;
            place_source_cursor(app, file, line);
            app.isa.line = Some((file, line));
            app.view = View::Source;
        }
        View::Teaching => match app.digest.step_rows.get(app.step).copied().flatten() {
            Some(row) => {
                app.isa.cursor = row;
                app.isa.line = None;
                app.view = View::Isa;
            }
            None => app.message = Some("this step's instruction is not in the trace".into()),
        },
        View::Overview | View::Timeline => {}
    }
}

fn next_event(app: &mut App, forward: bool) {
    let Some(rec) = &app.trace.recording else {
        return;
    };
    let has_event = |i: &usize| rec.steps[*i].event.is_some();
    let found = if forward {
        (app.step + 1..rec.steps.len()).find(has_event)
    } else {
        (0..app.step).rev().find(has_event)
    };
    match found {
        Some(i) => {
            app.step = i;
            app.register_scroll = 0;
        }
        None => app.message = Some("no further event in the recording".into()),
    }
}

/// The text a search matches against for each item of the current view's list.
fn search_texts(app: &App) -> Option<Vec<String>> {
    let t = &app.trace;
    let d = &app.digest;
    Some(match app.view {
        View::Source if app.source.sorted => d
            .lines_by_cost
            .iter()
            .map(|&i| {
                let l = &t.profile.lines[i];
                d.source_line(l.file, l.line).unwrap_or("").to_string()
            })
            .collect(),
        View::Source => d.files.get(app.source.file as usize)?.clone(),
        View::Isa => d
            .isa_rows
            .iter()
            .map(|r| match r {
                IsaRow::Block { name, .. } => format!("{name}:"),
                IsaRow::Inst(i) => t.profile.instructions[*i].text.clone(),
                IsaRow::Text(s) => s.clone(),
            })
            .collect(),
        View::Teaching => {
            let rec = t.recording.as_ref()?;
            rec.steps
                .iter()
                .zip(&d.step_rows)
                .map(|(s, row)| {
                    let inst = match row.and_then(|r| d.isa_rows.get(r)) {
                        Some(IsaRow::Inst(i)) => t.profile.instructions[*i].text.as_str(),
                        _ => "",
                    };
                    format!("{inst} {}", s.event.as_deref().unwrap_or(""))
                })
                .collect()
        }
        View::Overview | View::Timeline => return None,
    })
}

fn repeat_search(app: &mut App, forward: bool) {
    let Some(needle) = app.search.last.clone() else {
        app.message = Some("no search yet: press / to search".into());
        return;
    };
    let Some(texts) = search_texts(app) else {
        app.message = Some("search works in the Source, ISA and Teaching views".into());
        return;
    };
    let needle_lower = needle.to_lowercase();
    let cursor = match app.view {
        View::Source => app.source.cursor,
        View::Isa => app.isa.cursor,
        _ => app.step,
    };
    let n = texts.len();
    let found = (1..=n)
        .map(|k| {
            if forward {
                (cursor + k) % n
            } else {
                (cursor + n * 2 - k) % n
            }
        })
        .find(|&i| texts[i].to_lowercase().contains(&needle_lower));
    match found {
        Some(i) => match app.view {
            View::Source => app.source.cursor = i,
            View::Isa => app.isa.cursor = i,
            _ => {
                app.step = i;
                app.register_scroll = 0;
            }
        },
        None => app.message = Some(format!("no match for \"{needle}\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn check(trace: Trace, msgs: &[Msg], expect: impl Fn(&App)) {
        let mut app = App::new(trace, (80, 24));
        for m in msgs {
            update(&mut app, m.clone());
        }
        expect(&app);
    }

    #[test]
    fn tab_cycles_through_the_views() {
        check(fixture::trace(), &[Msg::NextView, Msg::NextView], |a| {
            assert_eq!(a.view, View::Source)
        });
        check(fixture::trace(), &[Msg::PrevView], |a| {
            assert_eq!(a.view, View::Teaching)
        });
    }

    #[test]
    fn the_source_view_opens_on_the_costliest_line_and_jumps_to_its_isa() {
        let t = fixture::trace();
        check(t.clone(), &[Msg::Show(View::Source), Msg::Select], |a| {
            assert_eq!(a.view, View::Isa);
            let (file, line) = a.isa.line.expect("a highlighted line");
            let IsaRow::Inst(i) = a.digest.isa_rows[a.isa.cursor] else {
                panic!("the cursor is on a block row");
            };
            assert_eq!(
                (
                    a.trace.profile.instructions[i].file,
                    a.trace.profile.instructions[i].line
                ),
                (file, line)
            );
        });
    }

    #[test]
    fn sorting_keeps_the_selected_line() {
        check(
            fixture::trace(),
            &[
                Msg::Show(View::Source),
                Msg::Top,
                Msg::Down,
                Msg::Down,
                Msg::Down,
                Msg::Down,
                Msg::Down,
                Msg::Down,
                Msg::ToggleSort,
            ],
            |a| {
                assert!(a.source.sorted);
                let (file, line) = a.source_selection().unwrap();
                assert_eq!((file, line), (0, 7));
            },
        );
    }

    #[test]
    fn the_isa_cursor_skips_block_labels_and_jumps_back_to_the_source() {
        check(
            fixture::trace(),
            &[Msg::Show(View::Isa), Msg::Bottom, Msg::Select],
            |a| {
                assert_eq!(a.view, View::Source);
                assert_eq!(a.source_selection(), Some((0, 12)));
            },
        );
    }

    #[test]
    fn events_step_the_recording() {
        check(
            fixture::trace(),
            &[Msg::Show(View::Teaching), Msg::NextEvent, Msg::NextEvent],
            |a| assert_eq!(a.step, 9),
        );
        check(
            fixture::trace(),
            &[Msg::Show(View::Teaching), Msg::Bottom, Msg::NextEvent],
            |a| {
                assert_eq!(a.step, 12);
                assert_eq!(
                    a.message.as_deref(),
                    Some("no further event in the recording")
                );
            },
        );
    }

    #[test]
    fn search_finds_wraps_and_reports_misses() {
        let typed = |s: &str| {
            let mut m = vec![Msg::SearchStart];
            m.extend(s.chars().map(Msg::SearchInput));
            m.push(Msg::SearchSubmit);
            m
        };
        let mut msgs = vec![Msg::Show(View::Isa)];
        msgs.extend(typed("BARRIER"));
        check(fixture::trace(), &msgs, |a| {
            let IsaRow::Inst(i) = a.digest.isa_rows[a.isa.cursor] else {
                panic!("not an instruction");
            };
            assert_eq!(a.trace.profile.instructions[i].text, "barrier.threadgroup");
        });
        let mut msgs = vec![Msg::Show(View::Source)];
        msgs.extend(typed("nowhere"));
        check(fixture::trace(), &msgs, |a| {
            assert_eq!(a.message.as_deref(), Some("no match for \"nowhere\""))
        });
        let mut msgs = typed("x");
        msgs.push(Msg::SearchNext);
        check(fixture::trace(), &msgs, |a| {
            assert_eq!(
                a.message.as_deref(),
                Some("search works in the Source, ISA and Teaching views")
            )
        });
    }

    #[test]
    fn zoom_stays_within_the_run() {
        check(
            fixture::trace(),
            &[
                Msg::Show(View::Timeline),
                Msg::ZoomIn,
                Msg::ZoomIn,
                Msg::ZoomIn,
            ],
            |a| assert_eq!(a.timeline.span, 8),
        );
        check(
            fixture::trace(),
            &[
                Msg::Show(View::Timeline),
                Msg::ZoomIn,
                Msg::ZoomOut,
                Msg::ZoomOut,
            ],
            |a| assert_eq!(a.timeline.span, fixture::BINS),
        );
        check(
            fixture::trace(),
            &[Msg::Show(View::Timeline), Msg::ZoomIn, Msg::Bottom],
            |a| {
                assert_eq!(a.timeline.cursor, fixture::BINS - 1);
                assert_eq!(a.timeline.first(fixture::BINS), fixture::BINS - 20);
            },
        );
    }

    #[test]
    fn every_key_on_an_empty_trace_is_harmless() {
        let all = [
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
            Msg::SearchNext,
        ];
        for trace in [fixture::empty(), fixture::out_of_range()] {
            let mut msgs = Vec::new();
            for v in View::ALL {
                msgs.push(Msg::Show(v));
                msgs.extend(all.iter().cloned());
            }
            check(trace, &msgs, |a| assert!(!a.quit));
        }
    }

    #[test]
    fn help_closes_on_any_key_and_q_quits() {
        check(fixture::trace(), &[Msg::Help, Msg::Down], |a| {
            assert!(!a.help);
            assert_eq!(a.view, View::Overview);
        });
        check(fixture::trace(), &[Msg::Help, Msg::Quit], |a| {
            assert!(a.quit)
        });
    }
}
