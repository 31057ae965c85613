//! Diagnostics: one type for every problem the frontend reports, rendered in one place.

use ariadne::{Color, Config, IndexType, Label as AriadneLabel, Report, ReportKind};

use crate::source::{FileId, SourceMap, Span};

/// How bad a diagnostic is.
#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub enum Severity {
    /// The kernel cannot be compiled.
    Error,
    /// Suspicious but compiled.
    Warning,
}

/// A span with a message, part of a [`Diagnostic`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What is there (may be empty).
    pub message: String,
}

/// A problem in the user's kernel source: data, not a failure.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The headline.
    pub message: String,
    /// The primary label first, then secondary ones.
    pub labels: Vec<Label>,
    /// Extra lines (hints, "in expansion of macro X").
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error pointing at `span`.
    pub fn error(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            labels: vec![Label {
                span,
                message: String::new(),
            }],
            notes: Vec::new(),
        }
    }

    /// A warning pointing at `span`.
    pub fn warning(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message, span)
        }
    }

    /// Sets the primary label's message.
    pub fn with_label_message(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(l) = self.labels.first_mut() {
            l.message = message.into();
        }
        self
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// The primary span.
    pub fn span(&self) -> Option<Span> {
        self.labels.first().map(|l| l.span)
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Whether any diagnostic is an error.
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(Diagnostic::is_error)
}

struct Cache<'a>(&'a SourceMap, Vec<ariadne::Source<&'a str>>);

impl<'a> ariadne::Cache<FileId> for Cache<'a> {
    type Storage = &'a str;

    fn fetch(&mut self, id: &FileId) -> Result<&ariadne::Source<&'a str>, impl std::fmt::Debug> {
        self.1
            .get(id.0 as usize)
            .ok_or_else(|| format!("unknown file {}", id.0))
    }

    fn display<'b>(&self, id: &'b FileId) -> Option<impl std::fmt::Display + 'b> {
        self.0.files().get(id.0 as usize).map(|f| f.name.clone())
    }
}

impl ariadne::Span for Span {
    type SourceId = FileId;
    fn source(&self) -> &FileId {
        &self.file
    }
    fn start(&self) -> usize {
        self.start as usize
    }
    fn end(&self) -> usize {
        self.end as usize
    }
}

/// Moves a span's ends onto character boundaries inside its file so the renderer never
/// slices a multi-byte character.
fn clamp_span(sources: &SourceMap, span: Span) -> Span {
    let Some(file) = sources.files().get(span.file.0 as usize) else {
        return Span::default();
    };
    let text = &file.text;
    let mut start = (span.start as usize).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (span.end as usize).clamp(start, text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    Span::new(span.file, start, end)
}

/// Renders diagnostics with ariadne: file, line, column, the source line and a caret.
/// `color` is for terminals; snapshots and files use plain text.
pub fn render(diags: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let mut cache = Cache(
        sources,
        sources
            .files()
            .iter()
            .map(|f| ariadne::Source::from(f.text.as_str()))
            .collect(),
    );
    let mut out = Vec::new();
    for d in diags {
        let kind = match d.severity {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
        };
        let primary = d.span().map(|s| clamp_span(sources, s)).unwrap_or_default();
        let mut report = Report::build(kind, primary)
            .with_config(
                Config::new()
                    .with_index_type(IndexType::Byte)
                    .with_color(color),
            )
            .with_message(&d.message);
        for (i, l) in d.labels.iter().enumerate() {
            // ariadne draws no underline for a label without text.
            let text = if l.message.is_empty() {
                if i == 0 { "here" } else { "related" }
            } else {
                l.message.as_str()
            };
            let mut label = AriadneLabel::new(clamp_span(sources, l.span)).with_message(text);
            if color {
                label = label.with_color(if i == 0 { Color::Red } else { Color::Blue });
            }
            report = report.with_label(label);
        }
        for label in expansion_labels(sources, d, color) {
            report = report.with_label(label);
        }
        for n in &d.notes {
            report = report.with_note(n);
        }
        let _ = report.finish().write(&mut cache, &mut out);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The longest primary span (in bytes) whose macro expansions a report shows: beyond
/// that the span is a whole construct, and a list of every macro in it would be noise.
const MAX_EXPANDED_SPAN: u32 = 200;

/// How many macros of an expansion chain a report shows.
const MAX_CHAIN: usize = 4;

/// Labels at the definitions of the macros whose expansion produced the code at the
/// diagnostic's primary span ("in the expansion of macro `M`, defined here").
fn expansion_labels(sources: &SourceMap, d: &Diagnostic, color: bool) -> Vec<AriadneLabel<Span>> {
    let Some(primary) = d.span() else {
        return Vec::new();
    };
    if primary.end.saturating_sub(primary.start) > MAX_EXPANDED_SPAN {
        return Vec::new();
    }
    let mut names: Vec<&str> = Vec::new();
    let mut labels = Vec::new();
    for e in sources.expansions_in(primary) {
        // The predefined macros (`__METAL_VERSION__`) are no news to the user.
        let builtin = sources
            .files()
            .get(e.definition.file.0 as usize)
            .is_none_or(|f| f.name.starts_with('<'));
        if builtin || names.len() == MAX_CHAIN || names.contains(&e.name.as_str()) {
            continue;
        }
        names.push(&e.name);
        let mut label = AriadneLabel::new(clamp_span(sources, e.definition)).with_message(format!(
            "in the expansion of macro `{}`, defined here",
            e.name
        ));
        if color {
            label = label.with_color(Color::Cyan);
        }
        labels.push(label);
    }
    labels
}

/// One line per diagnostic, `file:line:col: error: message`, for logs and quick tests.
pub fn render_short(diags: &[Diagnostic], sources: &SourceMap) -> String {
    let mut out = String::new();
    for d in diags {
        let sev = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match d.span() {
            Some(s) if (s.file.0 as usize) < sources.files().len() => {
                let (line, col) = sources.line_col(s);
                let name = &sources.file(s.file).name;
                out.push_str(&format!("{name}:{line}:{col}: {sev}: {}\n", d.message));
            }
            _ => out.push_str(&format!("{sev}: {}\n", d.message)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_file_line_and_caret() {
        let mut sm = SourceMap::new();
        let f = sm.add("k.metal", None, "kernel void f() {\n  int x = ;\n}\n");
        let d = Diagnostic::error("expected an expression", Span::new(f, 28, 29))
            .with_label_message("here");
        let text = render(std::slice::from_ref(&d), &sm, false);
        assert!(text.contains("k.metal:2:11"), "{text}");
        assert!(text.contains("expected an expression"), "{text}");
        assert_eq!(
            render_short(&[d], &sm),
            "k.metal:2:11: error: expected an expression\n"
        );
    }

    #[test]
    fn labels_without_text_still_get_a_caret() {
        let mut sm = SourceMap::new();
        let f = sm.add("k.metal", None, "kernel void f() {\n  int x = y;\n}\n");
        let text = render(
            &[Diagnostic::error("unknown name", Span::new(f, 28, 29))],
            &sm,
            false,
        );
        assert!(text.contains("here"), "{text}");
    }

    #[test]
    fn survives_spans_inside_multibyte_characters() {
        let mut sm = SourceMap::new();
        let f = sm.add("u.metal", None, "// é\nx");
        let d = Diagnostic::error("bad", Span::new(f, 4, 5));
        let _ = render(&[d], &sm, false);
        let d = Diagnostic::error("bad", Span::new(f, 400, 500));
        let _ = render(&[d], &sm, false);
    }
}
