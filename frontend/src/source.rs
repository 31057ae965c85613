//! Source files and byte spans into them.

use std::path::{Path, PathBuf};

/// Identifies a file in a [`SourceMap`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range `start..end` in one file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Span {
    /// The file.
    pub file: FileId,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span in `file` covering `start..end`.
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both (which must be in the same file; otherwise `self`).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The byte range as `usize`.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One loaded source file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The name shown in diagnostics (the path as the user gave it, or `<metal_stdlib>`).
    pub name: String,
    /// Where it was read from, when it came from disk.
    pub path: Option<PathBuf>,
    /// The text.
    pub text: String,
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// 1-based line and column (in bytes) of a byte offset, clamped to the file.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let offset = offset.min(self.text.len() as u32);
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        (line as u32 + 1, offset - self.line_starts[line] + 1)
    }
}

/// One macro expansion: tokens a macro produced carry the span of its use, and this
/// records which macro that was and where it is defined, for diagnostics.
#[derive(Clone, Debug, PartialEq)]
pub struct Expansion {
    /// The macro's name at the outermost use site (what the expanded tokens' spans are).
    pub use_span: Span,
    /// The macro expanded there (an outer one first, then the ones its body invoked).
    pub name: String,
    /// The macro's name in its `#define`.
    pub definition: Span,
}

/// How many expansions a [`SourceMap`] records; the rest go without a chain in
/// diagnostics (pathological inputs expand millions of times).
const MAX_EXPANSIONS: usize = 1 << 16;

/// Every file of one compilation: the user's kernel, its includes and built-in headers,
/// and the macro expansions the preprocessor made.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
    expansions: Vec<Expansion>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file and returns its id.
    pub fn add(
        &mut self,
        name: impl Into<String>,
        path: Option<&Path>,
        text: impl Into<String>,
    ) -> FileId {
        let text = text.into();
        let mut line_starts = vec![0u32];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        self.files.push(SourceFile {
            name: name.into(),
            path: path.map(Path::to_path_buf),
            text,
            line_starts,
        });
        FileId(self.files.len() as u32 - 1)
    }

    /// A file by id.
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// The already-loaded file read from `path`, if any.
    pub fn find_path(&self, path: &Path) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.path.as_deref() == Some(path))
            .map(|i| FileId(i as u32))
    }

    /// All files in id order.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// Records a macro expansion (once per use site and macro).
    pub fn record_expansion(&mut self, e: Expansion) {
        // The expansions of one use site are recorded one after another.
        let recent = self.expansions.iter().rev().take(16);
        if self.expansions.len() >= MAX_EXPANSIONS || recent.into_iter().any(|x| *x == e) {
            return;
        }
        self.expansions.push(e);
    }

    /// The expansions whose use site lies in `span`, outermost first.
    pub fn expansions_in(&self, span: Span) -> impl Iterator<Item = &Expansion> {
        self.expansions.iter().filter(move |e| {
            e.use_span.file == span.file
                && e.use_span.start >= span.start
                && e.use_span.start < span.end.max(span.start + 1)
        })
    }

    /// The text a span covers (empty if the span is out of range).
    pub fn slice(&self, span: Span) -> &str {
        self.file(span.file).text.get(span.range()).unwrap_or("")
    }

    /// 1-based line and column of a span's start.
    pub fn line_col(&self, span: Span) -> (u32, u32) {
        self.file(span.file).line_col(span.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let mut sm = SourceMap::new();
        let f = sm.add("a.metal", None, "ab\ncd\n\nx");
        assert_eq!(sm.file(f).line_col(0), (1, 1));
        assert_eq!(sm.file(f).line_col(4), (2, 2));
        assert_eq!(sm.file(f).line_col(7), (4, 1));
        assert_eq!(sm.file(f).line_col(100), (4, 2));
        assert_eq!(sm.slice(Span::new(f, 3, 5)), "cd");
    }
}
