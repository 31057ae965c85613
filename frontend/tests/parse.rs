//! Snapshot tests of the front half of the frontend (preprocessor and parser).
//!
//! `tests/data/parse/*.metal` must preprocess and parse without errors; their snapshot is
//! the compact AST printout. `tests/data/parse_errors/*.metal` are wrong on purpose; their
//! snapshot is the plain-text diagnostics followed by the AST the parser recovered.
//! Re-bless with `INSTA_UPDATE=always cargo test -p metalsim-frontend --test parse`, then
//! read every changed `.snap` file.

use std::path::Path;

use metalsim_frontend::ast::{ExprKind, Item, StmtKind, TranslationUnit};
use metalsim_frontend::parser::{parse, print_ast};
use metalsim_frontend::preprocess::{PreprocessOptions, preprocess};
use metalsim_frontend::{Diagnostic, SourceMap, Span, has_errors, render};

/// Preprocesses and parses a fixture. It is registered under its path relative to the crate
/// root, so `#include "x.h"` resolves next to it and rendered names are stable.
fn run(path: &Path) -> (SourceMap, TranslationUnit, Vec<Diagnostic>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rel = path.strip_prefix(root).unwrap_or(path);
    // Through a symlinked checkout the path may not start with the crate root; keep the
    // part from `tests/` on either way.
    let shown = rel.display().to_string();
    let rel = Path::new(
        shown
            .find("tests/data/")
            .map_or(shown.as_str(), |i| &shown[i..]),
    );
    let text = std::fs::read_to_string(path).expect("fixture is readable");
    let len = text.len();
    let mut sources = SourceMap::new();
    let main = sources.add(rel.display().to_string(), Some(rel), text);
    let (tokens, mut diags) = preprocess(&mut sources, main, &PreprocessOptions::default());
    let (tu, parse_diags) = parse(&tokens, Span::new(main, len, len));
    diags.extend(parse_diags);
    (sources, tu, diags)
}

#[test]
fn parses_valid_kernels() {
    insta::glob!("data/parse/*.metal", |path| {
        let (sources, tu, diags) = run(path);
        assert!(
            !has_errors(&diags),
            "{} has errors:\n{}",
            path.display(),
            render(&diags, &sources, false)
        );
        let mut out = print_ast(&tu);
        if !diags.is_empty() {
            out.push_str("--- warnings ---\n");
            out.push_str(&render(&diags, &sources, false));
        }
        insta::assert_snapshot!(out);
    });
}

#[test]
fn reports_errors_in_wrong_kernels() {
    insta::glob!("data/parse_errors/*.metal", |path| {
        let (sources, tu, diags) = run(path);
        assert!(has_errors(&diags), "{} has no errors", path.display());
        let mut out = render(&diags, &sources, false);
        out.push_str("--- recovered AST ---\n");
        out.push_str(&print_ast(&tu));
        insta::assert_snapshot!(out);
    });
}

/// Preprocesses and parses `src` given as a string named `t.metal`.
fn run_str(
    src: &str,
) -> (
    SourceMap,
    Vec<metalsim_frontend::token::Spanned>,
    TranslationUnit,
) {
    let mut sources = SourceMap::new();
    let main = sources.add("t.metal", None, src);
    let (tokens, diags) = preprocess(&mut sources, main, &PreprocessOptions::default());
    assert!(diags.is_empty(), "{diags:?}");
    let (tu, diags) = parse(&tokens, Span::new(main, src.len(), src.len()));
    assert!(diags.is_empty(), "{diags:?}");
    (sources, tokens, tu)
}

#[test]
fn macro_output_points_at_the_use_site() {
    let (sources, tokens, _) = run_str("#define N (1 + 2)\n#define F(a) (a)\nint x = N + F(y);");
    let spans: Vec<&str> = tokens.iter().map(|t| sources.slice(t.span)).collect();
    assert_eq!(
        spans,
        [
            "int", "x", "=", "N", "N", "N", "N", "N", "+", "F", "y", "F", ";"
        ]
    );
}

#[test]
fn ast_spans_cover_the_source() {
    let src = "kernel void k() {\n  x = (a + b) * c;\n}";
    let (sources, _, tu) = run_str(src);
    let Item::Function(f) = &tu.items[0] else {
        panic!("not a function: {tu:?}");
    };
    assert_eq!(sources.slice(f.span), src);
    assert_eq!(sources.slice(f.name.span), "k");
    let body = f.body.as_ref().expect("a body");
    assert_eq!(sources.slice(body.stmts[0].span), "x = (a + b) * c;");
    let StmtKind::Expr(e) = &body.stmts[0].kind else {
        panic!("not an expression statement");
    };
    assert_eq!(sources.slice(e.span), "x = (a + b) * c");
    let ExprKind::Assign { rhs, .. } = &e.kind else {
        panic!("not an assignment");
    };
    assert_eq!(sources.slice(rhs.span), "(a + b) * c");
    let ExprKind::Binary { lhs, .. } = &rhs.kind else {
        panic!("not a product");
    };
    // Parentheses make no node; the inner expression keeps its own span.
    assert_eq!(sources.slice(lhs.span), "a + b");
}
