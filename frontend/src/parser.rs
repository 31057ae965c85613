//! The parser: a preprocessed token stream to the [`ast`](crate::ast), with chumsky.
//!
//! The grammar lives in submodules: `expr` (Pratt parsing with C++'s precedence), `types`
//! (specifiers and declarators), `stmt`, `item`, and `lookahead`, the plain-Rust questions
//! that settle C++'s ambiguities. The parser input is the slice of [`Token`]s; chumsky spans
//! are token index ranges, turned into byte [`Span`]s through a context kept in chumsky's
//! parser state, which also holds the struct, typedef and template names declared anywhere
//! in the input (so `(T)x` is a cast, `T * p;` a declaration and `f<float>(x)` a template
//! call for user names too).
//!
//! Before chumsky runs, two cheap passes over the tokens: `>>` closing two template
//! argument lists is split into two `>` (`array<vec<float, 4>>`), and nesting is bounded
//! (brackets at most [`MAX_NESTING`] deep, at most [`MAX_COMPLEXITY`] operators nested in
//! one statement), so that no input can build an AST deep enough to overflow the stack of
//! this or a later pass.
//!
//! Errors are recovered: a broken statement becomes [`StmtKind::Error`](crate::ast::StmtKind)
//! and parsing resumes after its `;` or block; a broken declaration becomes
//! [`Item::Error`](crate::ast::Item). Constructs MSL forbids (lambdas, `goto`, `new`,
//! `delete`, exceptions, `virtual`, `dynamic_cast`) get a diagnostic naming them. Valid C++
//! that lowering does not support yet becomes [`Item::Unsupported`](crate::ast::Item) with
//! no diagnostic: templates, enums, unions, `using` declarations, vertex and fragment
//! functions, and structs with inheritance, static data members, default member
//! initializers, destructors, nested types or constructor initializer lists.
//!
//! Shapes the AST leaves open, as this parser fills them:
//! - `[[kernel]]` sets [`FnSpecifiers::kernel`](crate::ast::FnSpecifiers) too, and keeps the
//!   attribute. Attributes before a declaration, after its name and after the parameter
//!   list all go to `attrs`, in that order; a parameter's likewise.
//! - A constructor is a method named like its struct whose return type names the struct;
//!   an operator is a method or function named `operator+`, `operator()`, `operator[]`...
//! - Parentheses make no node: `(a + b)` is the `Binary` with the span of `a + b`.
//! - `this` and `nullptr` are [`ExprKind::Name`](crate::ast::ExprKind)s of that spelling.
//! - `-1` is `Unary { Neg, IntLit 1 }`; character literals are `IntLit`s.
//! - `(void)` parameter lists are empty; `T x(args)` is `Init::Ctor` only inside
//!   functions (at program scope it is a function declaration, as in C++).
//! - `typedef struct { ... } X;` is a struct named `X`; `typedef struct S { ... } X;` is a
//!   struct `S` followed by an alias `X` of `S`.
//! - A template argument or `sizeof` operand that is a name not known to be a type stays an
//!   expression (`vec<float, N>` has `TemplateArg::Expr(N)`, `texture2d<float,
//!   access::read>` has `TemplateArg::Expr(access::read)`); lowering resolves names.
//! - `using namespace x;` inside a function is an empty statement.

use std::collections::HashSet;

use chumsky::error::{Rich, RichPattern, RichReason};
use chumsky::extra;
use chumsky::input::MapExtra;
use chumsky::inspector::SimpleState;
use chumsky::prelude::*;

use crate::ast::TranslationUnit;
use crate::diag::Diagnostic;
use crate::source::Span;
use crate::token::{Keyword, Punct, Spanned, Token};

mod common;
mod expr;
mod item;
mod lookahead;
pub mod print;
mod stmt;
mod types;

pub use lookahead::{PRELUDE_TEMPLATES, TEXTURE_TEMPLATES, is_builtin_type, is_template_type};
pub use print::print_ast;

/// How deeply brackets may nest.
pub const MAX_NESTING: usize = 256;
/// How many operators, keywords and bracket groups one statement may nest.
pub const MAX_COMPLEXITY: usize = 2048;

/// What the grammar's actions and lookaheads read: the tokens, their spans and the type
/// names declared in the input.
pub(crate) struct Ctx<'a> {
    /// The token stream.
    pub tokens: &'a [Token],
    /// The span of each token.
    pub spans: &'a [Span],
    /// The span for "end of input".
    pub eoi: Span,
    /// Struct, class, enum, union and typedef names declared anywhere in the input.
    pub types: HashSet<String>,
    /// Names of function and struct templates declared anywhere in the input (after them,
    /// `<` opens template arguments).
    pub templates: HashSet<String>,
}

impl Ctx<'_> {
    /// The byte span of a token index range.
    pub fn span(&self, s: SimpleSpan) -> Span {
        let (start, end) = (s.start, s.end.min(self.spans.len()));
        if start < end {
            let a = self.spans[start];
            let b = self.spans[end - 1];
            if a.file == b.file && b.end >= a.start {
                Span {
                    file: a.file,
                    start: a.start,
                    end: b.end,
                }
            } else {
                a
            }
        } else if let Some(a) = self.spans.get(start) {
            Span { end: a.start, ..*a }
        } else {
            self.eoi
        }
    }
}

/// The parser input: the token slice.
pub(crate) type In<'a> = &'a [Token];
/// Chumsky's error type for the parser.
pub(crate) type Error<'a> = Rich<'a, Token>;
/// Parser extras: rich errors and the [`Ctx`] as state.
pub(crate) type Ex<'a> = extra::Full<Error<'a>, SimpleState<Ctx<'a>>, ()>;
/// A boxed parser over the token slice.
pub(crate) type BoxedP<'a, O> = Boxed<'a, 'a, In<'a>, O, Ex<'a>>;
/// The extra argument of chumsky's mapping closures.
pub(crate) type Extra<'a, 'b> = MapExtra<'a, 'b, In<'a>, Ex<'a>>;

/// Parses a preprocessed token stream. `eoi` is the span to use for "end of input" errors
/// (an empty span at the end of the main file). Recovers from errors (reports several in one
/// run), producing `Item::Error` / `StmtKind::Error` / `ExprKind::Error` nodes where it had to
/// skip.
pub fn parse(tokens: &[Spanned], eoi: Span) -> (TranslationUnit, Vec<Diagnostic>) {
    let names = declared_names(tokens);
    let (toks, spans) = split_shift_right(tokens, &names.templates);
    if let Some(d) = check_nesting(&toks, &spans) {
        let span = spans.first().map_or(eoi, |s| *s);
        let tu = TranslationUnit {
            items: vec![crate::ast::Item::Error(span)],
        };
        return (tu, vec![d]);
    }
    let mut state = SimpleState(Ctx {
        tokens: &toks,
        spans: &spans,
        eoi,
        types: names.types,
        templates: names.templates,
    });
    let parser = item::translation_unit();
    let (tu, errors) = parser
        .parse_with_state(toks.as_slice(), &mut state)
        .into_output_errors();
    let mut diags: Vec<Diagnostic> = Vec::new();
    for e in errors {
        let d = to_diagnostic(&e, &state);
        if !diags.contains(&d) {
            diags.push(d);
        }
    }
    diags.sort_by_key(|d| d.span().map(|s| (s.file, s.start)));
    (tu.unwrap_or_default(), diags)
}

/// Separates a custom error's headline from its label message (see [`common::custom_error`]).
const LABEL_SEPARATOR: char = '\u{1f}';

/// Turns a chumsky error into a diagnostic: "expected `;`, found `}`".
fn to_diagnostic(e: &Error<'_>, ctx: &Ctx<'_>) -> Diagnostic {
    let index_span = *e.span();
    let span = ctx.span(index_span);
    match e.reason() {
        RichReason::Custom(msg) => {
            let (message, label) = msg.split_once(LABEL_SEPARATOR).unwrap_or((msg, "here"));
            Diagnostic::error(message, span).with_label_message(label)
        }
        RichReason::ExpectedFound { expected, found } => {
            let mut items: Vec<String> = Vec::new();
            for pattern in expected {
                let s = match pattern {
                    RichPattern::Token(t) => format!("`{}`", &**t),
                    RichPattern::Label(l) => l.to_string(),
                    RichPattern::EndOfInput => "end of input".to_string(),
                    RichPattern::Identifier(s) => format!("`{s}`"),
                    RichPattern::Any => "any token".to_string(),
                    _ => "something else".to_string(),
                };
                if !items.contains(&s) {
                    items.push(s);
                }
            }
            if items.len() > 1 {
                items.retain(|s| s != "operator" && s != "something else");
            }
            // A missing `;` is by far the likeliest reason a declaration or statement
            // cannot continue; the other ways it could have gone on are noise.
            let semicolon = items.iter().any(|s| s == "`;`");
            if semicolon {
                items.retain(|s| s == "`;`");
            }
            // Likewise inside a list: the next element or the end of the list.
            for close in ["`)`", "`}`", "`]`"] {
                if items.iter().any(|s| s == "`,`") && items.iter().any(|s| s == close) {
                    items.retain(|s| s == "`,`" || s == close);
                }
            }
            let found_text = match found {
                Some(t) => format!("`{}`", &**t),
                None => "end of input".to_string(),
            };
            let message = match items.len() {
                0 => format!("unexpected {found_text}"),
                1 => format!("expected {}, found {found_text}", items[0]),
                n => format!(
                    "expected {} or {}, found {found_text}",
                    items[..n - 1].join(", "),
                    items[n - 1]
                ),
            };
            // Point a missing `;` at the token it should follow, as C compilers do.
            let previous = index_span
                .start
                .checked_sub(1)
                .and_then(|i| ctx.spans.get(i));
            match previous {
                Some(prev) if semicolon => {
                    Diagnostic::error(message, *prev).with_label_message("expected `;` after this")
                }
                _ if found.is_none() => {
                    Diagnostic::error(message, span).with_label_message("the input ends here")
                }
                _ => Diagnostic::error(message, span).with_label_message("unexpected here"),
            }
        }
    }
}

/// Splits `>>` into two `>` where it closes two template argument lists, and drops the
/// tokens' whitespace flags. Returns the tokens and their spans.
fn split_shift_right(tokens: &[Spanned], templates: &HashSet<String>) -> (Vec<Token>, Vec<Span>) {
    #[derive(PartialEq)]
    enum Open {
        Angle,
        Bracket,
    }
    let mut toks: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut spans: Vec<Span> = Vec::with_capacity(tokens.len());
    let mut stack: Vec<Open> = Vec::new();
    for t in tokens {
        match &t.token {
            Token::Newline => continue,
            Token::Punct(Punct::Lt) => {
                let opener = match toks.last() {
                    Some(Token::Ident(s)) => {
                        is_template_type(s) || &**s == "as_type" || templates.contains(&**s)
                    }
                    Some(Token::Keyword(k)) => matches!(
                        k,
                        Keyword::StaticCast
                            | Keyword::ReinterpretCast
                            | Keyword::ConstCast
                            | Keyword::DynamicCast
                            | Keyword::Template
                    ),
                    _ => false,
                };
                if opener {
                    stack.push(Open::Angle);
                }
            }
            Token::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => {
                stack.push(Open::Bracket)
            }
            Token::Punct(Punct::RParen | Punct::RBracket | Punct::RBrace) => {
                while let Some(o) = stack.pop() {
                    if o == Open::Bracket {
                        break;
                    }
                }
            }
            Token::Punct(Punct::Gt) if stack.last() == Some(&Open::Angle) => {
                stack.pop();
            }
            Token::Punct(Punct::Semi) => {
                while stack.last() == Some(&Open::Angle) {
                    stack.pop();
                }
            }
            Token::Punct(Punct::Shr) if stack.last() == Some(&Open::Angle) => {
                stack.pop();
                if stack.last() == Some(&Open::Angle) {
                    stack.pop();
                }
                let mid = (t.span.start + 1).min(t.span.end);
                for (start, end) in [(t.span.start, mid), (mid, t.span.end)] {
                    toks.push(Token::Punct(Punct::Gt));
                    spans.push(Span {
                        start,
                        end,
                        ..t.span
                    });
                }
                continue;
            }
            _ => {}
        }
        toks.push(t.token.clone());
        spans.push(t.span);
    }
    (toks, spans)
}

/// Bounds how deeply the input nests: brackets at most [`MAX_NESTING`] deep, and within a
/// statement at most [`MAX_COMPLEXITY`] operators, keywords and bracket groups counted along
/// the open brackets (statement ends, and commas in initializer lists, start a new count).
/// That bounds the depth of every AST the parser can build, so recursive passes over it
/// cannot overflow the stack.
fn check_nesting(toks: &[Token], spans: &[Span]) -> Option<Diagnostic> {
    struct Frame {
        count: usize,
        init_list: bool,
    }
    let mut frames = vec![Frame {
        count: 0,
        init_list: false,
    }];
    let mut total = 1usize;
    for (i, t) in toks.iter().enumerate() {
        let next_is_else = toks.get(i + 1) == Some(&Token::Keyword(Keyword::Else));
        let reset = |frames: &mut Vec<Frame>, total: &mut usize| {
            if let Some(f) = frames.last_mut() {
                *total -= f.count;
                f.count = 0;
            }
        };
        match t {
            Token::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => {
                if frames.len() > MAX_NESTING {
                    return Some(Diagnostic::error(
                        format!("brackets nested too deeply (more than {MAX_NESTING} levels)"),
                        spans[i],
                    ));
                }
                let parent_init = frames.last().is_some_and(|f| f.init_list);
                let init_list = *t == Token::Punct(Punct::LBrace)
                    && match i.checked_sub(1).map(|j| &toks[j]) {
                        Some(Token::Punct(
                            Punct::Assign | Punct::Comma | Punct::LParen | Punct::Gt,
                        )) => true,
                        Some(Token::Keyword(Keyword::Return)) | Some(Token::Ident(_)) => true,
                        Some(Token::Punct(Punct::LBrace)) => parent_init,
                        _ => false,
                    };
                if let Some(f) = frames.last_mut() {
                    f.count += 1;
                }
                frames.push(Frame {
                    count: 0,
                    init_list,
                });
                total += 2;
            }
            Token::Punct(Punct::RParen | Punct::RBracket | Punct::RBrace) => {
                if frames.len() > 1 {
                    let f = frames.pop().unwrap_or(Frame {
                        count: 0,
                        init_list: false,
                    });
                    total -= f.count + 1;
                }
                if *t == Token::Punct(Punct::RBrace) && !next_is_else {
                    reset(&mut frames, &mut total);
                }
            }
            Token::Punct(Punct::Semi) if !next_is_else => reset(&mut frames, &mut total),
            Token::Punct(Punct::Semi) => {}
            Token::Punct(Punct::Comma) if frames.last().is_some_and(|f| f.init_list) => {
                reset(&mut frames, &mut total);
            }
            Token::Punct(_) | Token::Keyword(_) => {
                if let Some(f) = frames.last_mut() {
                    f.count += 1;
                }
                total += 1;
            }
            _ => {}
        }
        if total > MAX_COMPLEXITY {
            return Some(Diagnostic::error(
                format!(
                    "statement too complex (more than {MAX_COMPLEXITY} nested operators and brackets)"
                ),
                spans[i],
            ));
        }
    }
    None
}

/// Names the input declares, found by a scan before parsing.
struct DeclaredNames {
    /// Structs, classes, enums, unions, typedefs and `using` aliases.
    types: HashSet<String>,
    /// Function and struct templates.
    templates: HashSet<String>,
}

/// Scans the tokens for the names of declared types and templates, wherever they are.
fn declared_names(tokens: &[Spanned]) -> DeclaredNames {
    let toks: Vec<&Token> = tokens
        .iter()
        .map(|t| &t.token)
        .filter(|t| **t != Token::Newline)
        .collect();
    let mut types = HashSet::new();
    let mut templates = HashSet::new();
    let ident = |i: usize| match toks.get(i) {
        Some(Token::Ident(s)) => Some(s.to_string()),
        _ => None,
    };
    let is = |i: usize, p: Punct| toks.get(i) == Some(&&Token::Punct(p));
    for (i, t) in toks.iter().enumerate() {
        match t {
            Token::Keyword(Keyword::Struct | Keyword::Class | Keyword::Union | Keyword::Enum) => {
                let mut j = i + 1;
                if matches!(
                    toks.get(j),
                    Some(Token::Keyword(Keyword::Class | Keyword::Struct))
                ) {
                    j += 1;
                }
                types.extend(ident(j));
            }
            Token::Keyword(Keyword::Using) if is(i + 2, Punct::Assign) => {
                types.extend(ident(i + 1));
            }
            Token::Keyword(Keyword::Typedef) => {
                let mut depth = 0usize;
                for (j, u) in toks.iter().enumerate().skip(i + 1) {
                    match u {
                        Token::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => depth += 1,
                        Token::Punct(Punct::RParen | Punct::RBracket | Punct::RBrace) => {
                            depth = depth.saturating_sub(1);
                        }
                        Token::Punct(Punct::Semi) if depth == 0 => break,
                        Token::Ident(s)
                            if depth == 0
                                && (is(j + 1, Punct::Semi)
                                    || is(j + 1, Punct::Comma)
                                    || is(j + 1, Punct::LBracket)) =>
                        {
                            types.insert(s.to_string());
                        }
                        _ => {}
                    }
                }
            }
            Token::Keyword(Keyword::Template) if !is(i + 1, Punct::Lt) => {
                // An explicit instantiation names a template: `template [[host_name("x")]]
                // kernel void k<float>(...)`.
                let mut brackets = 0usize;
                for (j, tok) in toks.iter().enumerate().skip(i + 1) {
                    match tok {
                        Token::Punct(Punct::LBracket) => brackets += 1,
                        Token::Punct(Punct::RBracket) => brackets = brackets.saturating_sub(1),
                        Token::Punct(Punct::Lt) if brackets == 0 => {
                            templates.extend(ident(j - 1));
                            break;
                        }
                        Token::Punct(Punct::Semi | Punct::LParen | Punct::LBrace)
                            if brackets == 0 =>
                        {
                            break;
                        }
                        _ => {}
                    }
                }
            }
            Token::Keyword(Keyword::Template) if is(i + 1, Punct::Lt) => {
                // Skip the parameter list (its type parameters are type names), then the
                // declared name is the identifier after `struct`/`class`, or the last one
                // before the first `(` or `=`.
                let mut angles = 0usize;
                let mut parens = 0usize;
                let mut j = i + 1;
                while let Some(u) = toks.get(j) {
                    match u {
                        Token::Punct(Punct::LParen) => parens += 1,
                        Token::Punct(Punct::RParen) => parens = parens.saturating_sub(1),
                        Token::Punct(Punct::Lt) if parens == 0 => angles += 1,
                        Token::Punct(Punct::Gt) if parens == 0 => angles = angles.saturating_sub(1),
                        Token::Punct(Punct::Shr) if parens == 0 => {
                            angles = angles.saturating_sub(2)
                        }
                        Token::Punct(Punct::Semi | Punct::LBrace) => break,
                        Token::Keyword(Keyword::Typename | Keyword::Class) => {
                            let k = if is(j + 1, Punct::Ellipsis) {
                                j + 2
                            } else {
                                j + 1
                            };
                            if let Some(name) = ident(k).filter(|_| {
                                matches!(
                                    toks.get(k + 1),
                                    Some(Token::Punct(Punct::Comma | Punct::Gt | Punct::Assign))
                                )
                            }) {
                                types.insert(name);
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                    if angles == 0 {
                        break;
                    }
                }
                let mut last = None;
                while let Some(u) = toks.get(j) {
                    // Attribute groups (`[[kernel, max_total_threads_per_threadgroup(n)]]`)
                    // name nothing.
                    if is(j, Punct::LBracket) && is(j + 1, Punct::LBracket) {
                        let mut depth = 0usize;
                        while let Some(v) = toks.get(j) {
                            match v {
                                Token::Punct(Punct::LBracket) => depth += 1,
                                Token::Punct(Punct::RBracket) => {
                                    depth = depth.saturating_sub(1);
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                            j += 1;
                        }
                        j += 1;
                        continue;
                    }
                    match u {
                        Token::Keyword(Keyword::Struct | Keyword::Class) => {
                            last = ident(j + 1);
                            break;
                        }
                        Token::Ident(s) => last = Some(s.to_string()),
                        Token::Punct(Punct::LParen | Punct::Assign) => break,
                        Token::Punct(Punct::Semi | Punct::LBrace) => {
                            last = None;
                            break;
                        }
                        _ => {}
                    }
                    j += 1;
                }
                templates.extend(last);
            }
            _ => {}
        }
    }
    DeclaredNames { types, templates }
}

/// The byte span of what a chumsky action matched.
pub(crate) fn sp(e: &mut Extra<'_, '_>) -> Span {
    let s = e.span();
    e.state().span(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::render_short;
    use crate::preprocess::{PreprocessOptions, preprocess};
    use crate::source::SourceMap;

    /// Preprocesses and parses `src`, and compares the printed AST followed by the short
    /// diagnostics with `expect` (both trimmed).
    fn check(src: &str, expect: &str) {
        let mut sources = SourceMap::new();
        let main = sources.add("t.metal", None, src);
        let (toks, mut diags) = preprocess(&mut sources, main, &PreprocessOptions::default());
        let eoi = Span::new(main, src.len(), src.len());
        let (tu, pdiags) = parse(&toks, eoi);
        diags.extend(pdiags);
        let mut got = print_ast(&tu);
        let short = render_short(&diags, &sources);
        if !short.is_empty() {
            got.push_str("---\n");
            got.push_str(&short);
        }
        assert_eq!(got.trim(), expect.trim(), "\nsource:\n{src}");
    }

    /// Parses `src` as the body of a function and compares the printed statements.
    fn check_body(src: &str, expect: &str) {
        let full = format!("void f() {{\n{src}\n}}");
        let mut sources = SourceMap::new();
        let main = sources.add("t.metal", None, full.as_str());
        let (toks, mut diags) = preprocess(&mut sources, main, &PreprocessOptions::default());
        let (tu, pdiags) = parse(&toks, Span::new(main, full.len(), full.len()));
        diags.extend(pdiags);
        let printed = print_ast(&tu);
        let mut got: String = printed
            .lines()
            .skip(2)
            .map(|l| l.strip_prefix("    ").unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n");
        got = got
            .trim_end()
            .strip_suffix("))")
            .unwrap_or(&got)
            .to_string();
        let short = render_short(&diags, &sources);
        if !short.is_empty() {
            got.push_str("\n---\n");
            got.push_str(&short);
        }
        assert_eq!(got.trim(), expect.trim(), "\nsource:\n{src}");
    }

    /// Parses `src` as one expression statement and compares its printed form.
    fn check_expr(src: &str, expect: &str) {
        check_body(&format!("{src};"), &format!("(expr {expect})"));
    }

    #[test]
    fn precedence_and_associativity() {
        check_expr("a + b * c - d", "(- (+ a (* b c)) d)");
        check_expr("a = b = c", "(= a (= b c))");
        check_expr("a += b -= c", "(+= a (-= b c))");
        check_expr(
            "a || b && c | d ^ e & f",
            "(|| a (&& b (| c (^ d (& e f)))))",
        );
        check_expr("a == b < c", "(== a (< b c))");
        check_expr("a << 1 + 2", "(<< a (+ 1 2))");
        check_expr("a ? b : c ? d : e", "(? a b (? c d e))");
        check_expr("a, b = c", "(, a (= b c))");
        check_expr("-a[0].x++", "(- (post++ (. (index a 0) x)))");
        check_expr("!~*p", "(! (~ (deref p)))");
        check_expr("&a->b", "(addr (-> a b))");
        check_expr("++i + i--", "(+ (pre++ i) (post-- i))");
        check_expr("a % b / c", "(/ (% a b) c)");
        check_expr("x = c ? a : b", "(= x (? c a b))");
    }

    #[test]
    fn literals() {
        check_expr("16", "16");
        check_expr("0xffu", "0xffu");
        check_expr("1ul", "1ul");
        check_expr("1.5f", "1.5f");
        check_expr("1.f", "1.0f");
        check_expr(".5", "0.5");
        check_expr("1e-3f", "0.001f");
        check_expr("2.0h", "2.0h");
        check_expr("true", "true");
        check_expr("'a'", "97");
        check_expr("f(\"a\" \"b\")", "(call f \"ab\")");
    }

    #[test]
    fn bad_literals_are_reported() {
        check_body(
            "x = 1f + 09;",
            "(expr (= x (+ <error> <error>)))\n---\nt.metal:2:5: error: invalid suffix `f` on integer literal `1f`\nt.metal:2:10: error: invalid digit `9` in octal literal `09`",
        );
    }

    #[test]
    fn names_and_calls() {
        check_expr("metal::max(a, b)", "(call metal::max a b)");
        check_expr("::x", "::x");
        check_expr(
            "threadgroup_barrier(mem_flags::mem_threadgroup)",
            "(call threadgroup_barrier mem_flags::mem_threadgroup)",
        );
        check_expr("float4(a, b)", "(call float4 a b)");
        check_expr("f()", "(call f)");
    }

    #[test]
    fn casts() {
        check_expr("(float)x", "(cast float x)");
        check_expr(
            "(device float*)p + 1",
            "(+ (cast (ptr (device float)) p) 1)",
        );
        check_expr("(x) + 1", "(+ x 1)");
        check_expr("(uint)(a.x) * 2", "(* (cast uint (. a x)) 2)");
        check_expr("static_cast<int>(x)", "(static_cast int x)");
        check_expr(
            "reinterpret_cast<device uint*>(p)",
            "(reinterpret_cast (ptr (device uint)) p)",
        );
        check_expr("as_type<uint>(f)", "(as_type uint f)");
        check_expr("as_type<vec<ushort, 2>>(f)", "(as_type vec<ushort, 2> f)");
        check_expr("(unsigned int)x", "(cast uint x)");
    }

    #[test]
    fn casts_to_user_types() {
        check(
            "struct S { int a; };\nvoid f() { x = (S)y; S * p; S & r = q; T * t = 0; a * b; }",
            "(struct S\n  (field int a))\n(fn f -> void\n  (block\n    (expr (= x (cast S y)))\n    (decl (ptr S) p)\n    (decl (ref S) r = q)\n    (decl (ptr T) t = 0)\n    (decl (ptr a) b)))",
        );
    }

    #[test]
    fn sizeof_and_alignof() {
        check_expr("sizeof(float4)", "(sizeof-type float4)");
        check_expr("sizeof x", "(sizeof x)");
        check_expr("sizeof(x) * 2", "(* (sizeof x) 2)");
        check_expr("alignof(float)", "(alignof float)");
    }

    #[test]
    fn init_lists() {
        check_expr("x = {1, 2, }", "(= x (init 1 2))");
        check_expr("float2{1, 2}", "(typed-init float2 1 2)");
        check_expr("array<int, 3>{1, 2, 3}", "(typed-init array<int, 3> 1 2 3)");
        check_expr("vec<float, 4>(1.0f)", "(call vec<float, 4> 1.0f)");
    }

    #[test]
    fn less_than_is_not_a_template() {
        check_expr("a < b > c", "(> (< a b) c)");
        check_expr("i < N && j > 0", "(&& (< i N) (> j 0))");
    }

    #[test]
    fn declarations() {
        check_body(
            "float a = 1, b[2] = {1, 2}, *p;\nthreadgroup float tile[16][16];\ndevice const float* q = x;\nconst device float* r;\nconstant uint& n = m;\nfloat4 v(1.0f);\nS s{1, 2};\nconstexpr int K = 4;\nunsigned u; long long l; signed char c; unsigned short us;\nint * const * pp;",
            "(decl float a = 1)\n(decl (array float 2) b = (init 1 2))\n(decl (ptr float) p)\n(decl (threadgroup (array (array float 16) 16)) tile)\n(decl (ptr (const device float)) q = x)\n(decl (ptr (const device float)) r)\n(decl (ref (constant uint)) n = m)\n(decl float4 v (ctor 1.0f))\n(decl S s (brace 1 2))\n(decl constexpr int K = 4)\n(decl uint u)\n(decl long l)\n(decl char c)\n(decl ushort us)\n(decl (ptr (ptr const int)) pp)",
        );
    }

    #[test]
    fn control_flow() {
        check_body(
            "if (a) b = 1; else if (c) { d(); } else e();\nfor (int i = 0; i < n; ++i) { if (i == 2) continue; break; }\nfor (;;) ;\nwhile (x) x--;\ndo { y++; } while (y < 3);\nswitch (k) { case 1: case 2: r = 1; break; default: r = 0; }\nreturn;",
            "(if a\n  (expr (= b 1))\n  (if c\n    (block\n      (expr (call d)))\n    (expr (call e))))\n(for (decl int i = 0) (< i n) (pre++ i)\n  (block\n    (if (== i 2)\n      continue)\n    break))\n(for _ _ _\n  empty)\n(while x\n  (expr (post-- x)))\n(do\n  (block\n    (expr (post++ y)))\n  (< y 3))\n(switch k\n  (block\n    (case 1)\n    (case 2)\n    (expr (= r 1))\n    break\n    default\n    (expr (= r 0))))\n(return)",
        );
    }

    #[test]
    fn swizzle_assignment_and_compound_ops() {
        check_body(
            "p.rgb = clamp(p.rgb * f, 0.0f, 1.0f);\nx <<= 2; y %= 3; z ^= w;",
            "(expr (= (. p rgb) (call clamp (* (. p rgb) f) 0.0f 1.0f)))\n(expr (<<= x 2))\n(expr (%= y 3))\n(expr (^= z w))",
        );
    }

    #[test]
    fn kernel_signature() {
        check(
            "kernel void k(device float* a [[buffer(0)]], uint2 gid [[thread_position_in_grid]], threadgroup float* t [[threadgroup(0)]]) {}",
            "(fn kernel k -> void\n  (param (ptr (device float)) a [[buffer(0)]])\n  (param uint2 gid [[thread_position_in_grid]])\n  (param (ptr (threadgroup float)) t [[threadgroup(0)]])\n  (block))",
        );
    }

    #[test]
    fn attribute_kernel_and_prototypes() {
        check(
            "[[kernel]] void k(void);\nstatic inline float sq(float x) { return x * x; }\nMETAL_FUNC float h(float, int = 2);\n[[host_name(\"k2\")]] constexpr int c() { return 1; }",
            "(fn kernel k -> void [[kernel]])\n(fn static inline sq -> float\n  (param float x)\n  (block\n    (return (* x x))))\n(fn inline h -> float\n  (param float)\n  (param int = 2))\n(fn constexpr c -> int [[host_name(\"k2\")]]\n  (block\n    (return 1)))",
        );
    }

    #[test]
    fn member_templates_statement_attributes_and_function_parameters() {
        check(
            "template <float (*F)(float), int N> void f(L l) { [[likely]] x = l.template load<float, N>(1) + p->get(); [[fallthrough]]; }",
            "(template <float F, int N>\n  (fn f -> void\n    (param L l)\n    (block\n      (expr (= x (+ (call (. l load<float, N>) 1) (call (-> p get)))))\n      empty)))",
        );
    }

    #[test]
    fn program_scope_variables() {
        check(
            "constant float W[3] = {1, 2, 3};\nconstexpr constant uint T = 16;\nconstant constexpr int K = 4;\nstatic constant float s = 1;\nconstant bool b [[function_constant(0)]];",
            "(vars (decl (constant (array float 3)) W = (init 1 2 3)))\n(vars (decl constexpr (constant uint) T = 16))\n(vars (decl constexpr (constant int) K = 4))\n(vars (decl static (constant float) s = 1))\n(vars (decl (constant bool) b [[function_constant(0)]]))",
        );
    }

    #[test]
    fn structs() {
        check(
            "struct P { float a, b; float4 c[2]; float len() const { return a; } P(float x) {} };\ntypedef struct { int x; } Q;\ntypedef float4 F;\nusing G = device float*;\nstruct Fwd;",
            "(struct P\n  (field float a)\n  (field float b)\n  (field (array float4 2) c)\n  (fn len -> float (this const)\n    (block\n      (return a)))\n  (fn ctor P -> P\n    (param float x)\n    (block)))\n(struct Q\n  (field int x))\n(alias F float4)\n(alias G (ptr (device float)))\n(struct-decl Fwd)",
        );
    }

    #[test]
    fn a_static_bit_field_is_an_error() {
        check(
            "struct V { static uint x : 3; int y; };",
            "(struct V\n  (field int y)\n  (error))\n---\nt.metal:1:12: error: a static data member cannot be a bit-field (C++ gives a width only to non-static members)",
        );
    }

    #[test]
    fn struct_members() {
        check(
            "struct S { static constant int N = 4; int a; };\nstruct T : S { int b = 2; };\nstruct U { explicit U(int x) : a(x), b{1} {} U() = default; int a, b; \
             float operator[](int i) const device; operator float() const { return a; } \
             ~U() {} struct In { int c; }; using F = float; enum E { A }; \
             template <typename X> X get() { return X(a); } };\nstruct V { int x : 3; uint : 0; uint y : N + 1; };",
            "(struct S\n  (field int a)\n  (vars (decl static (constant int) N = 4)))\n\
             (struct T : S\n  (field int b = 2))\n\
             (struct U\n  (field int a)\n  (field int b)\n  (fn ctor U -> U (init a (paren x)) (init b (brace 1))\n    (param int x)\n    (block))\n  \
             (fn ctor U -> U\n    (block))\n  (fn operator[] -> float (this const device)\n    (param int i))\n  \
             (fn conversion operator conversion -> float (this const)\n    (block\n      (return a)))\n  \
             (fn dtor U -> void\n    (block))\n  (struct In\n    (field int c))\n  (alias F float)\n  (enum E A)\n  \
             (template <typename X>\n    (fn get -> X\n      (block\n        (return (call X a))))))\n\
             (struct V\n  (field int x : 3)\n  (field uint  : 0)\n  (field uint y : (+ N 1)))",
        );
    }

    #[test]
    fn enums() {
        check(
            "enum E { A, B = 4, C, };\nenum class F : uchar { X = 1 };\nenum { N = 8 };\ntypedef enum { P, Q } G;",
            "(enum E A B=4 C)\n(enum class F : uchar X=1)\n(enum _ N=8)\n(enum G P Q)",
        );
    }

    #[test]
    fn namespaces_and_using() {
        check(
            "using namespace metal;\nnamespace a { namespace b { constant int x = 1; } }\nnamespace { void f(); }\nnamespace c::d { }\nstatic_assert(sizeof(int) == 4, \"int\");",
            "(using-namespace metal)\n(namespace a\n  (namespace b\n    (vars (decl (constant int) x = 1))))\n(namespace _\n  (fn f -> void))\n(namespace c\n  (namespace d))\n(static-assert (== (sizeof-type int) 4) \"int\")",
        );
    }

    #[test]
    fn namespace_aliases() {
        check(
            "namespace a { namespace b {} }\nnamespace ab = a::b;\nnamespace m = ::metal;",
            "(namespace a\n  (namespace b))\n(namespace-alias ab a::b)\n(namespace-alias m ::metal)",
        );
    }

    #[test]
    fn unions_named_and_anonymous() {
        check(
            "union U { uint u; float f; };\nstruct B { union { struct { half d; half m; }; half2 dm; }; char q; };",
            "(union U\n  (field uint u)\n  (field float f))\n(struct B\n  (field __anonymous41 __anonymous41)\n  (field char q)\n  (union __anonymous41\n    (field __anonymous49 __anonymous49)\n    (field half2 dm)\n    (struct __anonymous49\n      (field half d)\n      (field half m))))",
        );
    }

    #[test]
    fn templates() {
        check(
            "template <typename T, int N = (1 > 2)> T f(T x) { return x; }\ntemplate <typename T> struct S { T a; };\ntemplate [[host_name(\"f1\")]] kernel void k<float>(device float*);\nkernel void g() {}",
            "(template <typename T, int N = (> 1 2)>\n  (fn f -> T\n    (param T x)\n    (block\n      (return x))))\n(template <typename T>\n  (struct S\n    (field T a)))\n(instantiate k<float> [[host_name(\"f1\")]] (param (ptr (device float))))\n(fn kernel g -> void\n  (block))",
        );
    }

    #[test]
    fn specializations_packs_and_sfinae() {
        check(
            "template <typename T, typename = void> struct is_f { static constexpr bool value = false; };\n\
             template <> struct is_f<float> { static constexpr bool value = true; };\n\
             template <typename T> struct P<T*> {};\n\
             template <typename... Ts> uint count(Ts... xs) { return sizeof...(Ts) + f(xs...); }\n\
             template <typename T, enable_if_t<is_f<T>::value, int> = 0> T g(T x) { return x; }\n\
             template <typename T> using V4 = vec<T, 4>;\n\
             template [[host_name(\"g_f\")]] [[kernel]] decltype(g<float>) g<float>;\n\
             template <typename T> auto h(T a) -> decltype(a * 2) { if constexpr (is_f<T>::value) return a; else return a * 2; }",
            "(template <typename T, typename = void>\n  (struct is_f\n    (vars (decl static constexpr bool value = false))))\n\
             (template <>\n  (struct is_f<float>\n    (vars (decl static constexpr bool value = true))))\n\
             (template <typename T>\n  (struct P<(ptr T)>))\n\
             (template <typename... Ts>\n  (fn count -> uint\n    (param Ts... xs)\n    (block\n      (return (+ (sizeof... Ts) (call f (expand xs)))))))\n\
             (template <typename T, enable_if_t<is_f<T>::value, int> = 0>\n  (fn g -> T\n    (param T x)\n    (block\n      (return x))))\n\
             (template <typename T>\n  (alias V4 vec<T, 4>))\n\
             (instantiate g<float> [[host_name(\"g_f\")]] [[kernel]])\n\
             (template <typename T>\n  (fn h -> (decltype (* a 2))\n    (param T a)\n    (block\n      (if-constexpr is_f<T>::value\n        (return a)\n        (return (* a 2))))))",
        );
    }

    #[test]
    fn template_types() {
        check_body(
            "vec<float, 4> v; array<int, 3> a; atomic<uint> c; array<vec<float, 2>, N*2> m; texture2d<float, access::read> t;",
            "(decl vec<float, 4> v)\n(decl array<int, 3> a)\n(decl atomic<uint> c)\n(decl array<vec<float, 2>, (* N 2)> m)\n(decl texture2d<float, access::read> t)",
        );
    }

    #[test]
    fn user_templates_take_arguments() {
        check(
            "template <typename T> T twice(T x) { return x + x; }\ntypedef decltype(twice<float>) twice_t;\nvoid f() { y = twice<float>(1.0f) + (a < b) + (c > d); }",
            "(template <typename T>\n  (fn twice -> T\n    (param T x)\n    (block\n      (return (+ x x)))))\n(alias twice_t (decltype twice<float>))\n(fn f -> void\n  (block\n    (expr (= y (+ (+ (call twice<float> 1.0f) (< a b)) (> c d))))))",
        );
    }

    #[test]
    fn auto_and_decltype() {
        check_body(
            "auto x = 1; decltype(x) y = x; const auto& z = y;",
            "(decl auto x = 1)\n(decl (decltype x) y = x)\n(decl (ref (const auto)) z = y)",
        );
    }

    #[test]
    fn statement_errors_recover() {
        check_body(
            "x = ;\ny = 2;\nz = (1 +);\nw = 3",
            "(error)\n(expr (= y 2))\n(expr (= z <error>))\n(error)\n---\nt.metal:2:5: error: expected expression, found `;`\nt.metal:4:9: error: expected expression, found `)`\nt.metal:5:5: error: expected `;`, found `}`",
        );
    }

    #[test]
    fn item_errors_recover() {
        check(
            "kernel void f() { x = ; }\nint 3x;\nstruct S { int a b; float c; };\n}\nfloat y;",
            "(fn kernel f -> void\n  (block\n    (error)))\n(error)\n(struct S\n  (field float c)\n  (error))\n(error)\n(vars (decl float y))\n---\nt.metal:1:23: error: expected expression, found `;`\nt.metal:2:5: error: expected identifier, found `3x`\nt.metal:3:16: error: expected `;`, found `b`\nt.metal:4:1: error: expected declaration, found `}`",
        );
    }

    #[test]
    fn unbalanced_function_header() {
        check(
            "kernel void f( { }\nint x = 1;",
            "(error)\n(vars (decl int x = 1))\n---\nt.metal:1:16: error: expected parameter or `)`, found `{`",
        );
    }

    #[test]
    fn forbidden_constructs_are_named() {
        check_body(
            "auto l = [](int x) { return x; };\ngoto end;\nint* p = new int;\ndelete p;\nthrow 1;\ntry { } catch (...) { }",
            "(decl auto l = <error>)\n(error)\n(decl (ptr int) p = <error>)\n(expr <error>)\n(expr <error>)\n(error)\n---\nt.metal:2:10: error: lambda expressions are not supported yet\nt.metal:3:1: error: `goto` is not supported\nt.metal:4:10: error: `new` is not supported: MSL has no dynamic memory allocation\nt.metal:5:1: error: `delete` is not supported: MSL has no dynamic memory allocation\nt.metal:6:1: error: exceptions are not supported\nt.metal:7:1: error: exceptions are not supported",
        );
    }

    #[test]
    fn virtual_is_named() {
        check(
            "struct S { virtual float f(); };",
            "(struct S\n  (error))\n---\nt.metal:1:12: error: virtual functions are not supported",
        );
    }

    #[test]
    fn vertex_functions_are_unsupported() {
        check(
            "vertex float4 v(uint id [[vertex_id]]) { return 0; }\n[[fragment]] float4 f() { return 0; }",
            "(unsupported \"vertex functions\")\n(unsupported \"fragment functions\")",
        );
    }

    #[test]
    fn deep_parentheses_are_an_error() {
        let src = format!("int x = {}1{};", "(".repeat(10_000), ")".repeat(10_000));
        check(
            &src,
            "(error)\n---\nt.metal:1:265: error: brackets nested too deeply (more than 256 levels)",
        );
    }

    #[test]
    fn long_operator_chains_are_an_error() {
        let src = format!("int x = {}1;", "!".repeat(5_000));
        check(
            &src,
            "(error)\n---\nt.metal:1:2055: error: statement too complex (more than 2048 nested operators and brackets)",
        );
    }

    #[test]
    fn shift_right_still_shifts() {
        check_expr("a >> 2", "(>> a 2)");
        check_expr("(a >> b) >> c", "(>> (>> a b) c)");
    }

    #[test]
    fn empty_input() {
        check("", "");
    }
}
