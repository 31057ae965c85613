//! metalsim's frontend: Metal Shading Language source to the ISA.
//!
//! The stages, each in its own module: [`lexer`] turns text into tokens (line ends kept,
//! for the preprocessor),
//! [`preprocess`] runs directives and expands macros, [`parser`] (chumsky with Pratt
//! parsing) builds the [`ast`], and [`lower`] type-checks the AST and lowers it to an
//! [`metalsim_isa::Module`]. Every stage returns its output together with a list of
//! [`Diagnostic`]s; nothing reachable from user input panics. [`compile`] runs them all.

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod preprocess;
pub mod source;
pub mod token;

use std::path::PathBuf;

pub use diag::{Diagnostic, Label, Severity, has_errors, render, render_short};
pub use source::{FileId, SourceFile, SourceMap, Span};

/// What the user can set about a compilation: include folders and macro definitions
/// (`-I` and `-D` on the command line).
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// Folders searched by `#include "..."` after the including file's own.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME` (`None`) and `-D NAME=VALUE`.
    pub defines: Vec<(String, Option<String>)>,
}

/// Preprocesses and parses a file already in `sources`.
pub fn parse_source(
    sources: &mut SourceMap,
    main: FileId,
    options: &CompileOptions,
) -> (ast::TranslationUnit, Vec<Diagnostic>) {
    let pp = preprocess::PreprocessOptions {
        include_dirs: options.include_dirs.clone(),
        defines: options.defines.clone(),
    };
    let (tokens, mut diags) = preprocess::preprocess(sources, main, &pp);
    let end = sources.file(main).text.len();
    let eoi = Span::new(main, end, end);
    let (tu, parse_diags) = parser::parse(&tokens, eoi);
    diags.extend(parse_diags);
    (tu, diags)
}

/// Compiles a file already in `sources` to an ISA module: every kernel it defines, with
/// helpers inlined. Returns no module when there were errors (the diagnostics say which).
pub fn compile(
    sources: &mut SourceMap,
    main: FileId,
    options: &CompileOptions,
) -> (Option<metalsim_isa::Module>, Vec<Diagnostic>) {
    let (tu, mut diags) = parse_source(sources, main, options);
    if has_errors(&diags) {
        // Type-checking a tree with holes would report follow-on errors (a variable whose
        // declaration did not parse is "unknown"); stop at the syntax errors.
        return (None, diags);
    }
    let (module, lower_diags) = lower::lower(&tu, sources);
    diags.extend(lower_diags);
    (module, diags)
}

/// Compiles MSL source text given as a string (named `name` in diagnostics).
pub fn compile_str(
    name: &str,
    text: &str,
) -> (Option<metalsim_isa::Module>, Vec<Diagnostic>, SourceMap) {
    let mut sources = SourceMap::new();
    let id = sources.add(name, None, text);
    let (m, d) = compile(&mut sources, id, &CompileOptions::default());
    (m, d, sources)
}
