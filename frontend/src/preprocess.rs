//! The preprocessor: directives, conditional compilation and macro expansion on tokens.
//!
//! It lexes each file with [`lex`], walks it line by line, runs directives (`#define`,
//! `#undef`, `#include`, `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/`#endif`, `#error`,
//! `#warning`, `#pragma`, `#line`) and expands macros in the text lines between them. Macro
//! expansion follows C's rules through hide sets (Prosser's algorithm): every token carries
//! the set of macros it came out of, and a macro is not expanded again inside its own
//! expansion, so `#define A A` and mutually recursive macros terminate. Arguments are fully
//! expanded before substitution except next to `#` and `##`.
//!
//! Every token a macro body produces takes the span of the macro name at the use site (the
//! tokens of an argument keep their own spans, which are at the use site too), so
//! diagnostics point at the user's code. Limits on include depth, argument nesting and the
//! number of tokens expansion may produce turn pathological inputs into diagnostics instead
//! of stack overflows or hangs.
//!
//! `#include <metal_stdlib>` and every other `<metal_*>` header are built in and produce no
//! tokens. Predefined macros live in a `<built-in>` file added to the [`SourceMap`]:
//! `__METAL_VERSION__` (320), `__METAL__`, `__METAL_MACOS__`, `__HAVE_BFLOAT__` (1 each) and
//! `METAL_FUNC` (`inline`); [`PreprocessOptions::defines`] may override them. Finally,
//! `__attribute__((...))` groups and `_Pragma(...)` are removed from the output.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::diag::Diagnostic;
use crate::lexer::{lex, spell};
use crate::source::Expansion;
use crate::source::{FileId, SourceMap, Span};
use crate::token::{Punct, Spanned, Token};

mod condition;

use condition::Eval;

/// How to preprocess: include folders and command-line macros.
#[derive(Default, Clone, Debug)]
pub struct PreprocessOptions {
    /// Folders searched for `#include` files after the including file's own folder (`-I`).
    pub include_dirs: Vec<PathBuf>,
    /// Macros defined before the first line: `(NAME, None)` is `-D NAME` (defined as `1`),
    /// `(NAME, Some(VALUE))` is `-D NAME=VALUE`. They override the predefined macros.
    pub defines: Vec<(String, Option<String>)>,
}

/// How deeply `#include`s may nest.
const MAX_INCLUDE_DEPTH: usize = 64;
/// How deeply macro invocations may nest inside macro arguments.
const MAX_ARG_NESTING: usize = 64;
/// How many tokens macro expansion may produce in one preprocessing run.
const MAX_EXPANDED_TOKENS: usize = 1_000_000;
/// How deeply a `#if` expression may nest.
const MAX_IF_NESTING: usize = 256;

/// The predefined macros, as source text.
const PREDEFINED: &str = "#define __METAL_VERSION__ 320
#define __METAL__ 1
#define __METAL_MACOS__ 1
#define __HAVE_BFLOAT__ 1
#define METAL_FUNC inline
";

/// Lexes `main` (already added to `sources`), runs directives and macro expansion, reads
/// `#include "x"` files into `sources` (relative to the including file's folder, then
/// `include_dirs`), and returns the token stream for the parser, without
/// [`Token::Newline`]s. Adds a `<built-in>` file holding the predefined macros to `sources`.
pub fn preprocess(
    sources: &mut SourceMap,
    main: FileId,
    options: &PreprocessOptions,
) -> (Vec<Spanned>, Vec<Diagnostic>) {
    let mut pp = Preprocessor {
        sources,
        include_dirs: options.include_dirs.clone(),
        macros: HashMap::new(),
        out: Vec::new(),
        diags: Vec::new(),
        once: HashSet::new(),
        expanded: 0,
        budget_reported: false,
        nesting_reported: false,
        counter: 0,
    };
    let mut builtin = String::from(PREDEFINED);
    for (name, value) in &options.defines {
        let value = value.as_deref().unwrap_or("1").replace(['\n', '\r'], " ");
        builtin.push_str(&format!("#undef {name}\n#define {name} {value}\n"));
    }
    let builtin_file = pp.sources.add("<built-in>", None, builtin);
    pp.run_file(builtin_file, 0);
    pp.out.clear();
    pp.run_file(main, 0);
    let out = strip_attributes(std::mem::take(&mut pp.out));
    let mut diags = pp.diags;
    diags.sort_by_key(|d| d.span().map(|s| (s.file, s.start)));
    (out, diags)
}

/// The set of macros a token came out of (`None` is the empty set); sorted, no duplicates.
type HideSet = Option<Rc<Vec<Rc<str>>>>;

fn hide_contains(h: &HideSet, name: &str) -> bool {
    h.as_ref().is_some_and(|v| v.iter().any(|n| &**n == name))
}

fn hide_union(a: &HideSet, b: &HideSet) -> HideSet {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(x), Some(y)) => {
            if Rc::ptr_eq(x, y) {
                return a.clone();
            }
            let mut v: Vec<Rc<str>> = x.iter().chain(y.iter()).cloned().collect();
            v.sort();
            v.dedup();
            Some(Rc::new(v))
        }
    }
}

fn hide_intersect(a: &HideSet, b: &HideSet) -> HideSet {
    match (a, b) {
        (Some(x), Some(y)) => {
            let v: Vec<Rc<str>> = x.iter().filter(|n| y.contains(n)).cloned().collect();
            (!v.is_empty()).then(|| Rc::new(v))
        }
        _ => None,
    }
}

fn hide_add(h: &HideSet, name: &Rc<str>) -> HideSet {
    if hide_contains(h, name) {
        return h.clone();
    }
    hide_union(h, &Some(Rc::new(vec![name.clone()])))
}

/// A token during expansion.
#[derive(Clone, Debug)]
struct PTok {
    tok: Spanned,
    hide: HideSet,
}

impl PTok {
    fn new(tok: Spanned) -> PTok {
        PTok { tok, hide: None }
    }

    fn is(&self, p: Punct) -> bool {
        self.tok.token == Token::Punct(p)
    }
}

/// A macro definition.
#[derive(Debug)]
struct Macro {
    /// `None` for object-like macros; for variadic ones the last parameter is the variadic one
    /// (`__VA_ARGS__` unless named).
    params: Option<Vec<Rc<str>>>,
    variadic: bool,
    body: Vec<Spanned>,
    /// The macro name in its `#define`.
    name_span: Span,
}

impl Macro {
    /// Same parameters and body spelling (the C rule for a harmless redefinition).
    fn same_as(&self, other: &Macro) -> bool {
        self.params == other.params
            && self.variadic == other.variadic
            && self.body.len() == other.body.len()
            && self
                .body
                .iter()
                .zip(&other.body)
                .enumerate()
                .all(|(i, (a, b))| {
                    a.token == b.token && (i == 0 || a.space_before == b.space_before)
                })
    }

    fn param_index(&self, token: &Token) -> Option<usize> {
        let name = token.name()?;
        self.params.as_ref()?.iter().position(|p| &**p == name)
    }
}

/// The state of one `#if` group.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum CondState {
    /// The current branch is being compiled.
    Active,
    /// An earlier branch was taken; skip the rest.
    Done,
    /// No branch taken yet; the current one is skipped.
    Waiting,
    /// The whole group sits in a skipped region.
    Dead,
}

struct Cond {
    state: CondState,
    had_else: bool,
    span: Span,
}

struct Preprocessor<'s> {
    sources: &'s mut SourceMap,
    include_dirs: Vec<PathBuf>,
    macros: HashMap<Rc<str>, Rc<Macro>>,
    out: Vec<Spanned>,
    diags: Vec<Diagnostic>,
    once: HashSet<FileId>,
    /// Tokens produced by macro bodies so far.
    expanded: usize,
    budget_reported: bool,
    nesting_reported: bool,
    counter: u64,
}

fn line_span(line: &[Spanned]) -> Span {
    match (line.first(), line.last()) {
        (Some(a), Some(b)) => a.span.to(b.span),
        _ => Span::default(),
    }
}

impl Preprocessor<'_> {
    fn error(&mut self, message: impl Into<String>, label: &str, span: Span) {
        self.diags
            .push(Diagnostic::error(message, span).with_label_message(label));
    }

    /// Preprocesses one file, appending its tokens to `out`.
    fn run_file(&mut self, file: FileId, depth: usize) {
        let (tokens, lex_diags) = lex(file, &self.sources.file(file).text);
        let text_len = self.sources.file(file).text.len() as u32;
        let mut conds: Vec<Cond> = Vec::new();
        let mut text: Vec<PTok> = Vec::new();
        let mut skipped: Vec<(u32, u32)> = Vec::new();
        let mut line: Vec<Spanned> = Vec::new();
        let mut line_start = 0u32;
        let mut iter = tokens.into_iter();
        loop {
            let next = iter.next();
            let line_end = match &next {
                Some(t) if t.token == Token::Newline => t.span.start,
                Some(t) => {
                    line.push(t.clone());
                    continue;
                }
                None => text_len,
            };
            let active = conds.last().is_none_or(|c| c.state == CondState::Active);
            if !line.is_empty() {
                let is_directive = line[0].token == Token::Punct(Punct::Hash);
                if is_directive {
                    let name = line.get(1).and_then(|t| t.token.name()).unwrap_or("");
                    let conditional = matches!(
                        name,
                        "if" | "ifdef"
                            | "ifndef"
                            | "elif"
                            | "else"
                            | "endif"
                            | "elifdef"
                            | "elifndef"
                    );
                    if conditional {
                        if active {
                            self.flush(&mut text);
                        } else {
                            skipped.push((line_start, line_end));
                        }
                        self.conditional(name, &line, &mut conds);
                    } else if active {
                        self.flush(&mut text);
                        self.directive(file, &line, depth);
                    } else {
                        skipped.push((line_start, line_end));
                    }
                } else if active {
                    text.extend(line.drain(..).map(PTok::new));
                } else {
                    skipped.push((line_start, line_end));
                }
                line.clear();
            }
            let Some(newline) = next else { break };
            line_start = newline.span.end;
        }
        self.flush(&mut text);
        for c in conds {
            self.diags.push(
                Diagnostic::error("unterminated conditional directive", c.span)
                    .with_label_message("this `#if` has no `#endif`"),
            );
        }
        for d in lex_diags {
            let start = d.span().map_or(0, |s| s.start);
            if !skipped.iter().any(|&(a, b)| a <= start && start <= b) {
                self.diags.push(d);
            }
        }
    }

    /// Expands the pending text lines and appends them to the output.
    fn flush(&mut self, text: &mut Vec<PTok>) {
        if text.is_empty() {
            return;
        }
        let toks = std::mem::take(text);
        let expanded = self.expand(toks, 0);
        self.out.extend(expanded.into_iter().map(|p| p.tok));
    }

    fn conditional(&mut self, name: &str, line: &[Spanned], conds: &mut Vec<Cond>) {
        let span = line_span(line);
        let args = &line[2..];
        let active = conds.last().is_none_or(|c| c.state == CondState::Active);
        match name {
            "if" | "ifdef" | "ifndef" => {
                let state = if !active {
                    CondState::Dead
                } else if self.condition(name, args, span) {
                    CondState::Active
                } else {
                    CondState::Waiting
                };
                conds.push(Cond {
                    state,
                    had_else: false,
                    span,
                });
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                let Some(top) = conds.last() else {
                    self.error(
                        format!("`#{name}` without `#if`"),
                        "no `#if` is open here",
                        span,
                    );
                    return;
                };
                if top.had_else {
                    self.error(
                        format!("`#{name}` after `#else`"),
                        "this group already had its `#else`",
                        span,
                    );
                    return;
                }
                let state = top.state;
                let new_state = match state {
                    CondState::Active => CondState::Done,
                    CondState::Waiting if name == "else" => CondState::Active,
                    CondState::Waiting => {
                        let kind = match name {
                            "elifdef" => "ifdef",
                            "elifndef" => "ifndef",
                            _ => "if",
                        };
                        if self.condition(kind, args, span) {
                            CondState::Active
                        } else {
                            CondState::Waiting
                        }
                    }
                    other => other,
                };
                if let Some(top) = conds.last_mut() {
                    top.state = new_state;
                    top.had_else = name == "else";
                }
            }
            _ => {
                if conds.pop().is_none() {
                    self.error("`#endif` without `#if`", "no `#if` is open here", span);
                }
            }
        }
    }

    /// Evaluates the condition of `#if` (`kind` "if"), `#ifdef` or `#ifndef`.
    fn condition(&mut self, kind: &str, args: &[Spanned], span: Span) -> bool {
        if kind == "if" {
            return self.eval_if(args, span);
        }
        let Some(name) = args.first().and_then(|t| t.token.name()) else {
            self.error(
                format!("`#{kind}` needs a macro name"),
                "macro name missing",
                span,
            );
            return false;
        };
        let defined = self.macros.contains_key(name) || is_dynamic_macro(name);
        defined == (kind == "ifdef")
    }

    fn directive(&mut self, file: FileId, line: &[Spanned], depth: usize) {
        let span = line_span(line);
        let Some(name_tok) = line.get(1) else { return };
        let Some(name) = name_tok.token.name() else {
            // GCC line markers (`# 12 "file"`) are ignored.
            if !matches!(name_tok.token, Token::Int(_)) {
                self.error(
                    "invalid preprocessing directive",
                    "not a directive name",
                    span,
                );
            }
            return;
        };
        let args = &line[2..];
        match name {
            "define" => self.define(args, span),
            "undef" => match args.first().and_then(|t| t.token.name()) {
                Some(n) => {
                    self.macros.remove(n);
                }
                None => self.error("`#undef` needs a macro name", "macro name missing", span),
            },
            "include" | "include_next" | "import" => self.include(file, args, span, depth),
            "error" | "warning" => {
                let text = self.rest_of_line(args);
                let message = if text.is_empty() {
                    format!("`#{name}` directive")
                } else {
                    text
                };
                let d = if name == "error" {
                    Diagnostic::error(message, span)
                } else {
                    Diagnostic::warning(message, span)
                };
                self.diags
                    .push(d.with_label_message(format!("`#{name}` directive")));
            }
            "pragma" => {
                if args.first().and_then(|t| t.token.name()) == Some("once") {
                    self.once.insert(file);
                }
            }
            "line" | "ident" | "sccs" | "assert" | "unassert" => {}
            other => self.error(
                format!("unknown preprocessor directive `#{other}`"),
                "unknown directive",
                span,
            ),
        }
    }

    /// The source text of a directive's arguments, as written.
    fn rest_of_line(&self, args: &[Spanned]) -> String {
        match (args.first(), args.last()) {
            (Some(a), Some(b)) if a.span.file == b.span.file => {
                self.sources.slice(a.span.to(b.span)).trim().to_string()
            }
            _ => String::new(),
        }
    }

    fn define(&mut self, args: &[Spanned], span: Span) {
        let Some(first) = args.first() else {
            self.error("`#define` needs a macro name", "macro name missing", span);
            return;
        };
        let Some(name) = first.token.name() else {
            self.error(
                "macro name must be an identifier",
                "not an identifier",
                first.span,
            );
            return;
        };
        if name == "defined" {
            self.error(
                "`defined` cannot be used as a macro name",
                "reserved name",
                first.span,
            );
            return;
        }
        let name: Rc<str> = Rc::from(name);
        let mut params = None;
        let mut variadic = false;
        let mut body_start = 1;
        if args
            .get(1)
            .is_some_and(|t| t.token == Token::Punct(Punct::LParen) && !t.space_before)
        {
            let mut list: Vec<Rc<str>> = Vec::new();
            let mut i = 2;
            let mut ok = false;
            let mut expect_name = true;
            while let Some(t) = args.get(i) {
                i += 1;
                match &t.token {
                    Token::Punct(Punct::RParen) if !expect_name || list.is_empty() => {
                        ok = true;
                        break;
                    }
                    Token::Punct(Punct::Ellipsis) if expect_name => {
                        variadic = true;
                        list.push(Rc::from("__VA_ARGS__"));
                        ok = args
                            .get(i)
                            .is_some_and(|t| t.token == Token::Punct(Punct::RParen));
                        i += 1;
                        break;
                    }
                    Token::Punct(Punct::Comma) if !expect_name => expect_name = true,
                    tok if expect_name && tok.name().is_some() => {
                        let p: Rc<str> = Rc::from(tok.name().unwrap_or_default());
                        if list.contains(&p) {
                            self.error(
                                format!("duplicate macro parameter `{p}`"),
                                "declared twice",
                                t.span,
                            );
                            return;
                        }
                        list.push(p);
                        expect_name = false;
                        // GNU named variadic parameter: `args...`.
                        if args
                            .get(i)
                            .is_some_and(|t| t.token == Token::Punct(Punct::Ellipsis))
                        {
                            variadic = true;
                            ok = args
                                .get(i + 1)
                                .is_some_and(|t| t.token == Token::Punct(Punct::RParen));
                            i += 2;
                            break;
                        }
                    }
                    _ => break,
                }
            }
            if !ok {
                self.error(
                    format!("invalid parameter list in definition of macro `{name}`"),
                    "expected `name, ...)` or `...)`",
                    span,
                );
                return;
            }
            params = Some(list);
            body_start = i;
        }
        let body: Vec<Spanned> = args.get(body_start..).unwrap_or_default().to_vec();
        let mac = Macro {
            params,
            variadic,
            body,
            name_span: first.span,
        };
        if let Some(bad) = mac
            .body
            .first()
            .filter(|t| t.token == Token::Punct(Punct::HashHash))
        {
            self.error(
                "`##` cannot appear at either end of a macro body",
                "nothing to paste with",
                bad.span,
            );
            return;
        }
        if let Some(bad) = mac
            .body
            .last()
            .filter(|t| t.token == Token::Punct(Punct::HashHash))
        {
            self.error(
                "`##` cannot appear at either end of a macro body",
                "nothing to paste with",
                bad.span,
            );
            return;
        }
        if mac.params.is_some() {
            for (i, t) in mac.body.iter().enumerate() {
                if t.token == Token::Punct(Punct::Hash)
                    && mac
                        .body
                        .get(i + 1)
                        .is_none_or(|n| mac.param_index(&n.token).is_none())
                {
                    self.error(
                        "`#` is not followed by a macro parameter",
                        "`#` stringizes a parameter",
                        t.span,
                    );
                    return;
                }
            }
        }
        if let Some(old) = self.macros.get(&name).filter(|old| !old.same_as(&mac)) {
            let d = Diagnostic::warning(format!("`{name}` redefined"), first.span)
                .with_label_message("redefined here")
                .with_label(old.name_span, "previous definition");
            self.diags.push(d);
        }
        self.macros.insert(name, Rc::new(mac));
    }

    fn include(&mut self, file: FileId, args: &[Spanned], span: Span, depth: usize) {
        let Some((name, angled)) = self.include_name(args) else {
            self.error(
                "expected \"FILE\" or <FILE> after `#include`",
                "no file name",
                span,
            );
            return;
        };
        if name.starts_with("metal_") || name == "simd/simd.h" {
            return;
        }
        let mut candidates: Vec<PathBuf> = Vec::new();
        if !angled
            && let Some(dir) = self
                .sources
                .file(file)
                .path
                .as_deref()
                .and_then(Path::parent)
        {
            candidates.push(dir.join(&name));
        }
        candidates.extend(self.include_dirs.iter().map(|d| d.join(&name)));
        let Some(path) = candidates.into_iter().find(|p| p.is_file()) else {
            let where_ = if angled {
                "not found in the include paths"
            } else {
                "not found next to this file or in the include paths"
            };
            self.error(format!("file not found: `{name}`"), where_, span);
            return;
        };
        if depth + 1 >= MAX_INCLUDE_DEPTH {
            self.error(
                format!("`#include` nested too deeply (more than {MAX_INCLUDE_DEPTH} levels)"),
                "included here",
                span,
            );
            return;
        }
        let id = match self.sources.find_path(&path) {
            Some(id) => id,
            None => match std::fs::read_to_string(&path) {
                Ok(text) => self
                    .sources
                    .add(path.display().to_string(), Some(&path), text),
                Err(e) => {
                    self.error(
                        format!("cannot read `{}`: {e}", path.display()),
                        "included here",
                        span,
                    );
                    return;
                }
            },
        };
        if self.once.contains(&id) {
            return;
        }
        self.run_file(id, depth + 1);
    }

    /// The file name of an `#include` and whether it was written `<...>`.
    fn include_name(&mut self, args: &[Spanned]) -> Option<(String, bool)> {
        let direct = |sources: &SourceMap, args: &[Spanned]| -> Option<(String, bool)> {
            match &args.first()?.token {
                Token::Str(s) => Some((s.to_string(), false)),
                Token::Punct(Punct::Lt) => {
                    let close = args
                        .iter()
                        .position(|t| t.token == Token::Punct(Punct::Gt))?;
                    let (a, b) = (args[0].span, args[close].span);
                    let name = if a.file == b.file
                        && !args[1..close].iter().any(|t| t.span.file != a.file)
                    {
                        sources
                            .slice(Span {
                                file: a.file,
                                start: a.end,
                                end: b.start,
                            })
                            .trim()
                            .to_string()
                    } else {
                        args[1..close].iter().map(|t| spell(&t.token)).collect()
                    };
                    Some((name, true))
                }
                _ => None,
            }
        };
        if let Some(found) = direct(self.sources, args) {
            return Some(found);
        }
        // `#include MACRO`.
        let expanded: Vec<Spanned> = self
            .expand(args.iter().cloned().map(PTok::new).collect(), 0)
            .into_iter()
            .map(|p| p.tok)
            .collect();
        match &expanded.first()?.token {
            Token::Str(s) => Some((s.to_string(), false)),
            Token::Punct(Punct::Lt) => {
                let close = expanded
                    .iter()
                    .position(|t| t.token == Token::Punct(Punct::Gt))?;
                Some((
                    expanded[1..close].iter().map(|t| spell(&t.token)).collect(),
                    true,
                ))
            }
            _ => None,
        }
    }

    fn over_budget(&mut self, span: Span) -> bool {
        if self.expanded <= MAX_EXPANDED_TOKENS {
            return false;
        }
        if !self.budget_reported {
            self.budget_reported = true;
            self.error(
                format!(
                    "macro expansion produces too many tokens (more than {MAX_EXPANDED_TOKENS})"
                ),
                "expanded here",
                span,
            );
        }
        true
    }

    /// Expands every macro in `input` (C's rescanning rules, with hide sets).
    fn expand(&mut self, input: Vec<PTok>, nesting: usize) -> Vec<PTok> {
        let mut stack = input;
        stack.reverse();
        let mut out: Vec<PTok> = Vec::with_capacity(stack.len());
        while let Some(t) = stack.pop() {
            if self.over_budget(t.tok.span) {
                out.push(t);
                out.extend(stack.drain(..).rev());
                break;
            }
            let Some(name) = t.tok.token.name() else {
                out.push(t);
                continue;
            };
            let Some((key, mac)) = self
                .macros
                .get_key_value(name)
                .map(|(k, m)| (k.clone(), m.clone()))
            else {
                if let Some(tok) = self.dynamic_macro(name, t.tok.span) {
                    out.push(PTok {
                        tok: Spanned {
                            token: tok,
                            ..t.tok
                        },
                        hide: t.hide,
                    });
                } else {
                    out.push(t);
                }
                continue;
            };
            if hide_contains(&t.hide, name) {
                out.push(t);
                continue;
            }
            let use_span = t.tok.span;
            let expansion = Expansion {
                use_span,
                name: key.to_string(),
                definition: mac.name_span,
            };
            match &mac.params {
                None => {
                    self.sources.record_expansion(expansion);
                    let hs = hide_add(&t.hide, &key);
                    let body = self.subst(&mac, &[], &hs, use_span, t.tok.space_before, nesting);
                    self.expanded += body.len();
                    stack.extend(body.into_iter().rev());
                }
                Some(params) => {
                    if !stack.last().is_some_and(|p| p.is(Punct::LParen)) {
                        out.push(t);
                        continue;
                    }
                    let split_limit = if mac.variadic {
                        params.len() - 1
                    } else {
                        usize::MAX
                    };
                    let (mut args, rparen_hide, invocation) =
                        match collect_args(&mut stack, split_limit) {
                            Ok(found) => found,
                            Err(consumed) => {
                                self.error(
                                    format!("unterminated argument list invoking macro `{key}`"),
                                    "the `(` is never closed",
                                    use_span,
                                );
                                out.push(t);
                                out.extend(consumed);
                                continue;
                            }
                        };
                    if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                        args.clear();
                    }
                    if mac.variadic && args.len() == params.len() - 1 {
                        args.push(Vec::new());
                    }
                    if args.len() != params.len() {
                        let wanted = if mac.variadic {
                            format!("at least {}", params.len() - 1)
                        } else {
                            params.len().to_string()
                        };
                        self.diags.push(
                            Diagnostic::error(
                                format!(
                                    "macro `{key}` takes {wanted} argument{}, but {} given",
                                    if params.len() == 1 && !mac.variadic {
                                        ""
                                    } else {
                                        "s"
                                    },
                                    args.len()
                                ),
                                use_span,
                            )
                            .with_label_message("invoked here")
                            .with_label(mac.name_span, "macro defined here"),
                        );
                        // Leave the invocation unexpanded, as C compilers do.
                        out.push(t);
                        out.extend(invocation);
                        continue;
                    }
                    self.sources.record_expansion(expansion);
                    let hs = hide_add(&hide_intersect(&t.hide, &rparen_hide), &key);
                    let body = self.subst(&mac, &args, &hs, use_span, t.tok.space_before, nesting);
                    self.expanded += body.len();
                    stack.extend(body.into_iter().rev());
                }
            }
        }
        out
    }

    /// `__LINE__`, `__FILE__` and `__COUNTER__`.
    fn dynamic_macro(&mut self, name: &str, span: Span) -> Option<Token> {
        match name {
            "__LINE__" => {
                let (line, _) = self.sources.line_col(span);
                Some(Token::Int(Rc::from(line.to_string())))
            }
            "__FILE__" => Some(Token::Str(Rc::from(
                self.sources.file(span.file).name.as_str(),
            ))),
            "__COUNTER__" => {
                self.counter += 1;
                Some(Token::Int(Rc::from((self.counter - 1).to_string())))
            }
            _ => None,
        }
    }

    /// Substitutes arguments into a macro body, handling `#` and `##`.
    fn subst(
        &mut self,
        mac: &Macro,
        args: &[Vec<PTok>],
        hs: &HideSet,
        use_span: Span,
        space_before: bool,
        nesting: usize,
    ) -> Vec<PTok> {
        let body = &mac.body;
        let mut expanded: Vec<Option<Vec<PTok>>> = vec![None; args.len()];
        // `None` entries are placemarkers (empty arguments next to `##`).
        let mut out: Vec<Option<PTok>> = Vec::new();
        let mut paste = false;
        let mut i = 0;
        let with_hide = |p: &PTok| PTok {
            tok: p.tok.clone(),
            hide: hide_union(&p.hide, hs),
        };
        while i < body.len() {
            let t = &body[i];
            let first = out.is_empty();
            if mac.params.is_some()
                && t.token == Token::Punct(Punct::Hash)
                && let Some(pi) = body.get(i + 1).and_then(|n| mac.param_index(&n.token))
            {
                let text = stringize(&args[pi]);
                let tok = PTok {
                    tok: Spanned {
                        token: Token::Str(Rc::from(text)),
                        span: use_span,
                        space_before: if first { space_before } else { t.space_before },
                    },
                    hide: hs.clone(),
                };
                self.emit(&mut out, vec![Some(tok)], &mut paste, hs, use_span);
                i += 2;
                continue;
            }
            if t.token == Token::Punct(Punct::HashHash) {
                paste = true;
                i += 1;
                continue;
            }
            let next_is_paste = body
                .get(i + 1)
                .is_some_and(|n| n.token == Token::Punct(Punct::HashHash));
            if let Some(pi) = mac.param_index(&t.token) {
                let arg = &args[pi];
                let is_va = mac.variadic && pi + 1 == args.len();
                if paste && is_va && matches!(out.last(), Some(Some(c)) if c.is(Punct::Comma)) {
                    // GNU `, ## __VA_ARGS__`: the comma goes away with empty arguments.
                    paste = false;
                    if arg.is_empty() {
                        out.pop();
                    }
                    out.extend(arg.iter().map(|p| Some(with_hide(p))));
                    i += 1;
                    continue;
                }
                let toks: Vec<Option<PTok>> = if paste || next_is_paste {
                    if arg.is_empty() {
                        vec![None]
                    } else {
                        arg.iter().map(|p| Some(with_hide(p))).collect()
                    }
                } else {
                    if expanded[pi].is_none() {
                        let e = if nesting >= MAX_ARG_NESTING {
                            if !self.nesting_reported {
                                self.nesting_reported = true;
                                self.error(
                                    format!(
                                        "macro invocations nested too deeply (more than {MAX_ARG_NESTING} levels)"
                                    ),
                                    "expanded here",
                                    use_span,
                                );
                            }
                            arg.clone()
                        } else {
                            self.expanded += arg.len();
                            self.expand(arg.clone(), nesting + 1)
                        };
                        expanded[pi] = Some(e);
                    }
                    expanded[pi]
                        .as_deref()
                        .unwrap_or_default()
                        .iter()
                        .map(|p| Some(with_hide(p)))
                        .collect()
                };
                let mut toks = toks;
                if first && let Some(Some(p)) = toks.first_mut() {
                    p.tok.space_before = space_before;
                }
                self.emit(&mut out, toks, &mut paste, hs, use_span);
            } else {
                let tok = PTok {
                    tok: Spanned {
                        token: t.token.clone(),
                        span: use_span,
                        space_before: if first { space_before } else { t.space_before },
                    },
                    hide: hs.clone(),
                };
                self.emit(&mut out, vec![Some(tok)], &mut paste, hs, use_span);
            }
            i += 1;
        }
        out.into_iter().flatten().collect()
    }

    /// Appends `toks` to `out`, pasting the first onto the last of `out` after a `##`.
    fn emit(
        &mut self,
        out: &mut Vec<Option<PTok>>,
        toks: Vec<Option<PTok>>,
        paste: &mut bool,
        hs: &HideSet,
        use_span: Span,
    ) {
        let mut toks = toks.into_iter();
        if std::mem::take(paste)
            && let Some(rhs) = toks.next()
        {
            match (out.pop().flatten(), rhs) {
                (None, rhs) => out.push(rhs),
                (Some(lhs), None) => out.push(Some(lhs)),
                (Some(lhs), Some(rhs)) => {
                    let text = format!("{}{}", spell(&lhs.tok.token), spell(&rhs.tok.token));
                    let (mut lexed, diags) = lex(use_span.file, &text);
                    lexed.retain(|t| t.token != Token::Newline);
                    if lexed.len() == 1 && diags.is_empty() {
                        out.push(Some(PTok {
                            tok: Spanned {
                                token: lexed.remove(0).token,
                                span: use_span,
                                space_before: lhs.tok.space_before,
                            },
                            hide: hs.clone(),
                        }));
                    } else {
                        self.error(
                            format!(
                                "pasting `{}` and `{}` does not give a valid token",
                                spell(&lhs.tok.token),
                                spell(&rhs.tok.token)
                            ),
                            "in this macro expansion",
                            use_span,
                        );
                        out.push(Some(lhs));
                        out.push(Some(rhs));
                    }
                }
            }
        }
        out.extend(toks);
    }

    /// Evaluates a `#if` expression.
    fn eval_if(&mut self, args: &[Spanned], span: Span) -> bool {
        if args.is_empty() {
            self.error("`#if` with no expression", "condition missing", span);
            return false;
        }
        let with_defined = self.replace_defined(args.iter().cloned().map(PTok::new).collect());
        let expanded = self.expand(with_defined, 0);
        let resolved = self.replace_defined(expanded);
        let mut toks: Vec<Spanned> = Vec::with_capacity(resolved.len());
        let mut i = 0;
        while i < resolved.len() {
            let t = &resolved[i].tok;
            match t.token.name() {
                Some(name) if name.starts_with("__has_") => {
                    // `__has_include(...)`, `__has_feature(...)` and friends: not available.
                    let mut j = i + 1;
                    if resolved.get(j).is_some_and(|p| p.is(Punct::LParen)) {
                        let mut depth = 0;
                        while let Some(p) = resolved.get(j) {
                            if p.is(Punct::LParen) {
                                depth += 1;
                            } else if p.is(Punct::RParen) {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            j += 1;
                        }
                    }
                    toks.push(Spanned {
                        token: Token::Int(Rc::from("0")),
                        ..t.clone()
                    });
                    i = j + 1;
                    continue;
                }
                Some(name) => toks.push(Spanned {
                    token: Token::Int(Rc::from(if name == "true" { "1" } else { "0" })),
                    ..t.clone()
                }),
                None => toks.push(t.clone()),
            }
            i += 1;
        }
        let mut eval = Eval {
            toks: &toks,
            pos: 0,
            depth: 0,
            live: true,
            end_span: span,
        };
        let result = eval.comma().and_then(|v| match toks.get(eval.pos) {
            None => Ok(v),
            Some(t) => Err((
                format!(
                    "unexpected `{}` in preprocessor expression",
                    spell(&t.token)
                ),
                t.span,
            )),
        });
        match result {
            Ok(v) => v.v != 0,
            Err((message, at)) => {
                self.error(message, "in this `#if` condition", at);
                false
            }
        }
    }

    /// Replaces `defined X` and `defined(X)` with `1` or `0`.
    fn replace_defined(&mut self, toks: Vec<PTok>) -> Vec<PTok> {
        let mut out = Vec::with_capacity(toks.len());
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            if t.tok.token.name() != Some("defined") {
                out.push(t.clone());
                i += 1;
                continue;
            }
            let (name, next) = match toks.get(i + 1) {
                Some(p) if p.is(Punct::LParen) => {
                    let name = toks.get(i + 2).and_then(|p| p.tok.token.name());
                    let closed = toks.get(i + 3).is_some_and(|p| p.is(Punct::RParen));
                    (name.filter(|_| closed), i + 4)
                }
                Some(p) => (p.tok.token.name(), i + 2),
                None => (None, i + 1),
            };
            let Some(name) = name else {
                self.error(
                    "`defined` needs a macro name",
                    "expected `defined(NAME)`",
                    t.tok.span,
                );
                out.push(t.clone());
                i += 1;
                continue;
            };
            let value = self.macros.contains_key(name) || is_dynamic_macro(name);
            out.push(PTok {
                tok: Spanned {
                    token: Token::Int(Rc::from(if value { "1" } else { "0" })),
                    ..t.tok.clone()
                },
                hide: None,
            });
            i = next;
        }
        out
    }
}

fn is_dynamic_macro(name: &str) -> bool {
    matches!(name, "__LINE__" | "__FILE__" | "__COUNTER__")
}

/// Pops a parenthesized argument list off the expansion stack (whose top is `(`). Splits at
/// top-level commas, at most `split_limit` times. On success returns the arguments, the
/// hide set of the closing `)` and every token popped; when the input ends first, returns
/// what it popped.
#[allow(clippy::type_complexity)]
fn collect_args(
    stack: &mut Vec<PTok>,
    split_limit: usize,
) -> Result<(Vec<Vec<PTok>>, HideSet, Vec<PTok>), Vec<PTok>> {
    let mut consumed: Vec<PTok> = Vec::new();
    let mut args: Vec<Vec<PTok>> = vec![Vec::new()];
    let mut depth = 0usize;
    let Some(open) = stack.pop() else {
        return Err(consumed);
    };
    consumed.push(open);
    while let Some(t) = stack.pop() {
        consumed.push(t.clone());
        if t.is(Punct::LParen) {
            depth += 1;
        } else if t.is(Punct::RParen) {
            if depth == 0 {
                return Ok((args, t.hide, consumed));
            }
            depth -= 1;
        } else if t.is(Punct::Comma) && depth == 0 && args.len() <= split_limit {
            args.push(Vec::new());
            continue;
        }
        if let Some(last) = args.last_mut() {
            last.push(t);
        }
    }
    Err(consumed)
}

/// The spelling of an argument as a string literal's contents (`#x`).
fn stringize(arg: &[PTok]) -> String {
    let mut s = String::new();
    for (i, p) in arg.iter().enumerate() {
        if i > 0 && p.tok.space_before {
            s.push(' ');
        }
        s.push_str(&spell(&p.tok.token));
    }
    s
}

/// Removes `__attribute__((...))`, `_Pragma(...)` and `__restrict`-style spellings.
fn strip_attributes(toks: Vec<Spanned>) -> Vec<Spanned> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let name = match &toks[i].token {
            Token::Ident(s) => Some(&**s),
            _ => None,
        };
        match name {
            Some("__attribute__" | "__attribute" | "_Pragma")
                if toks
                    .get(i + 1)
                    .is_some_and(|t| t.token == Token::Punct(Punct::LParen)) =>
            {
                let mut depth = 0usize;
                let mut j = i + 1;
                while j < toks.len() {
                    match toks[j].token {
                        Token::Punct(Punct::LParen) => depth += 1,
                        Token::Punct(Punct::RParen) => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                i = j + 1;
            }
            Some("__restrict" | "__restrict__") => i += 1,
            _ => {
                out.push(toks[i].clone());
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::render_short;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Writes `files` (name, text) into a fresh temporary folder, preprocesses the first one
    /// with `-I <folder>/inc` and `defines`, and compares the output spelled with spaces,
    /// followed by the short-form diagnostics, with `expect`.
    fn check_with(files: &[(&str, &str)], defines: &[(&str, Option<&str>)], expect: &str) {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "metalsim-pp-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        let main_path = dir.join(files[0].0);
        let mut sources = SourceMap::new();
        let main = sources.add(files[0].0, Some(&main_path), files[0].1);
        let options = PreprocessOptions {
            include_dirs: vec![dir.join("inc")],
            defines: defines
                .iter()
                .map(|(n, v)| (n.to_string(), v.map(str::to_string)))
                .collect(),
        };
        let (toks, diags) = preprocess(&mut sources, main, &options);
        let _ = std::fs::remove_dir_all(&dir);
        let mut got = toks
            .iter()
            .map(|t| spell(&t.token))
            .collect::<Vec<_>>()
            .join(" ");
        let short = render_short(&diags, &sources).replace(&format!("{}/", dir.display()), "");
        if !short.is_empty() {
            got.push('\n');
            got.push_str(short.trim_end());
        }
        assert_eq!(got, expect);
    }

    fn check(src: &str, expect: &str) {
        check_with(&[("main.metal", src)], &[], expect);
    }

    #[test]
    fn object_like_macros() {
        check(
            "#define N 16\n#define M (N*2)\nint a[M];",
            "int a [ ( 16 * 2 ) ] ;",
        );
    }

    #[test]
    fn undef() {
        check("#define N 1\n#undef N\nN", "N");
    }

    #[test]
    fn function_like_macros() {
        check(
            "#define MAX(a, b) ((a) > (b) ? (a) : (b))\nMAX(x, MAX(y, 1))",
            "( ( x ) > ( ( ( y ) > ( 1 ) ? ( y ) : ( 1 ) ) ) ? ( x ) : ( ( ( y ) > ( 1 ) ? ( y ) : ( 1 ) ) ) )",
        );
    }

    #[test]
    fn function_like_name_without_parens_is_not_expanded() {
        check("#define F(x) x\nF + F(1)", "F + 1");
    }

    #[test]
    fn space_before_paren_makes_object_like() {
        check("#define F (x) x\nF(1)", "( x ) x ( 1 )");
    }

    #[test]
    fn arguments_spanning_lines() {
        check("#define ADD(a, b) a + b\nADD(1,\n 2)", "1 + 2");
    }

    #[test]
    fn stringizing() {
        check("#define S(x) #x\nS(a + \"b\"  c)", r#""a + \"b\" c""#);
    }

    #[test]
    fn pasting() {
        check(
            "#define CAT(a, b) a ## b\n#define V(n) float ## n\nCAT(x, 1) V(4) CAT(, y) CAT(<, <)",
            "x1 float4 y <<",
        );
    }

    #[test]
    fn invalid_paste() {
        check(
            "#define CAT(a, b) a ## b\nCAT(+, -)",
            "+ -\nmain.metal:2:1: error: pasting `+` and `-` does not give a valid token",
        );
    }

    #[test]
    fn pasted_arguments_are_not_expanded_first() {
        check(
            "#define N 4\n#define CAT(a, b) a ## b\n#define XCAT(a, b) CAT(a, b)\nCAT(float, N) XCAT(float, N)",
            "floatN float4",
        );
    }

    #[test]
    fn variadic_macros() {
        check(
            "#define P(fmt, ...) f(fmt, __VA_ARGS__)\n#define Q(fmt, ...) f(fmt, ## __VA_ARGS__)\nP(1, 2, 3) Q(1) Q(1, 2)",
            "f ( 1 , 2 , 3 ) f ( 1 ) f ( 1 , 2 )",
        );
    }

    #[test]
    fn self_reference_terminates() {
        check("#define A A\nA", "A");
    }

    #[test]
    fn mutual_recursion_terminates() {
        check("#define A B\n#define B A\nA B", "A B");
    }

    #[test]
    fn recursion_through_function_like_macros() {
        check(
            "#define f(x) g(x)\n#define g(x) f(x) + 1\nf(2)",
            "f ( 2 ) + 1",
        );
    }

    #[test]
    fn c_standard_example() {
        // From C11 6.10.3.5, trimmed.
        check(
            "#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define g f\n#define z z[0]\nf(y+1) + f(f(z)) % g(z)",
            "f ( 2 * ( y + 1 ) ) + f ( 2 * ( f ( 2 * ( z [ 0 ] ) ) ) ) % f ( 2 * ( z [ 0 ] ) )",
        );
    }

    #[test]
    fn macro_argument_count_is_checked() {
        check(
            "#define F(a, b) a\nF(1)",
            "F ( 1 )\nmain.metal:2:1: error: macro `F` takes 2 arguments, but 1 given",
        );
    }

    #[test]
    fn unterminated_invocation() {
        check(
            "#define F(a) a\nF(1, 2",
            "F ( 1 , 2\nmain.metal:2:1: error: unterminated argument list invoking macro `F`",
        );
    }

    #[test]
    fn conditionals() {
        check(
            "#define A 1\n#if A == 1 && !defined(B)\nyes\n#elif 1\nno1\n#else\nno2\n#endif\n#ifdef B\nno3\n#elif defined A\nyes2\n#endif",
            "yes yes2",
        );
    }

    #[test]
    fn nested_skipped_groups() {
        check(
            "#if 0\n#if 1\nno\n#else\nno\n#endif\n#error not reached\n#else\nyes\n#endif",
            "yes",
        );
    }

    #[test]
    fn if_expressions() {
        check(
            "#if (1 ? 2 : 0) == 2 && (-1 < 0) && (-1 > 0u) && (7 / 2 == 3) && (1 << 4) == 16 && 'a' == 97 && UNDEFINED == 0 && true\nok\n#endif",
            "ok",
        );
    }

    #[test]
    fn short_circuit_skips_division_by_zero() {
        check("#if 0 && (1 / 0)\nno\n#else\nyes\n#endif", "yes");
    }

    #[test]
    fn division_by_zero_is_an_error() {
        check(
            "#if 1 / 0\nno\n#endif",
            "\nmain.metal:1:7: error: division by zero in preprocessor expression",
        );
    }

    #[test]
    fn bad_if_expression() {
        check(
            "#if 1 +\n#endif\n#if 1.0\n#endif\n#if (1\n#endif",
            "\nmain.metal:1:1: error: expected an expression in `#if`\nmain.metal:3:5: error: floating-point literal in preprocessor expression\nmain.metal:5:1: error: expected `)` in preprocessor expression",
        );
    }

    #[test]
    fn predefined_macros() {
        check(
            "__METAL_VERSION__ __METAL__ METAL_FUNC\n#ifdef __METAL_IOS__\nios\n#endif\n#if __HAVE_BFLOAT__\nbf\n#endif",
            "320 1 inline bf",
        );
    }

    #[test]
    fn command_line_defines_override() {
        check_with(
            &[("main.metal", "__METAL_VERSION__ FAST WIDTH")],
            &[
                ("__METAL_VERSION__", Some("310")),
                ("FAST", None),
                ("WIDTH", Some("8")),
            ],
            "310 1 8",
        );
    }

    #[test]
    fn builtin_headers_produce_nothing() {
        check(
            "#include <metal_stdlib>\n#include <metal_atomic>\nusing namespace metal;",
            "using namespace metal ;",
        );
    }

    #[test]
    fn includes_relative_then_include_dirs() {
        check_with(
            &[
                ("main.metal", "#include \"a.h\"\n#include <b.h>\nmain"),
                ("a.h", "#pragma once\n#define A_VALUE 7\na A_VALUE"),
                ("inc/b.h", "b"),
            ],
            &[],
            "a 7 b main",
        );
    }

    #[test]
    fn pragma_once() {
        check_with(
            &[
                (
                    "main.metal",
                    "#include \"a.h\"\n#include \"a.h\"\n#include \"b.h\"\n#include \"b.h\"",
                ),
                ("a.h", "#pragma once\na"),
                ("b.h", "b"),
            ],
            &[],
            "a b b",
        );
    }

    #[test]
    fn missing_include() {
        check(
            "#include \"nope.h\"\nx",
            "x\nmain.metal:1:1: error: file not found: `nope.h`",
        );
    }

    #[test]
    fn error_and_warning_directives() {
        check(
            "#error this kernel needs  Metal 3\n#warning careful\nx",
            "x\nmain.metal:1:1: error: this kernel needs  Metal 3\nmain.metal:2:1: warning: careful",
        );
    }

    #[test]
    fn unterminated_if() {
        check(
            "#ifdef X\nx",
            "\nmain.metal:1:1: error: unterminated conditional directive",
        );
    }

    #[test]
    fn stray_else_and_endif() {
        check(
            "#else\n#endif\n#if 1\n#else\n#else\n#endif",
            "\nmain.metal:1:1: error: `#else` without `#if`\nmain.metal:2:1: error: `#endif` without `#if`\nmain.metal:5:1: error: `#else` after `#else`",
        );
    }

    #[test]
    fn unknown_directive() {
        check(
            "#frobnicate\n#pragma unroll\n#line 4\nx",
            "x\nmain.metal:1:1: error: unknown preprocessor directive `#frobnicate`",
        );
    }

    #[test]
    fn lexer_errors_in_skipped_groups_are_dropped() {
        check(
            "#if 0\ndon't @\n#endif\n@",
            "\nmain.metal:4:1: error: unexpected character `@`",
        );
    }

    #[test]
    fn redefinition_warns_only_when_different() {
        check(
            "#define A 1\n#define A 1\n#define A 2\nA",
            "2\nmain.metal:3:9: warning: `A` redefined",
        );
    }

    #[test]
    fn bad_definitions() {
        check(
            "#define F(x) #y\n#define G(x) ## x\n#define 3 x\n#define H(x x\n#define defined",
            "\nmain.metal:1:14: error: `#` is not followed by a macro parameter\nmain.metal:2:14: error: `##` cannot appear at either end of a macro body\nmain.metal:3:9: error: macro name must be an identifier\nmain.metal:4:1: error: invalid parameter list in definition of macro `H`\nmain.metal:5:9: error: `defined` cannot be used as a macro name",
        );
    }

    #[test]
    fn attributes_are_dropped() {
        check(
            "__attribute__((always_inline)) METAL_FUNC float f() __attribute__((unused, x(1)));",
            "inline float f ( ) ;",
        );
    }

    #[test]
    fn line_and_file() {
        check("\n__LINE__ __FILE__", "2 \"main.metal\"");
    }

    #[test]
    fn deeply_nested_if_expression_is_limited() {
        let src = format!("#if {}1\n#endif", "(".repeat(10_000));
        check(
            &src,
            "\nmain.metal:1:261: error: preprocessor expression nested too deeply",
        );
    }
}
