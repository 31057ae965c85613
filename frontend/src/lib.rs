//! metalsim's frontend: Metal Shading Language source to the ISA.
//!
//! The stages, each in its own module: [`lexer`] turns text into tokens (line ends kept,
//! for the preprocessor),
//! [`preprocess`] runs directives and expands macros, [`parser`] (chumsky with Pratt
//! parsing) builds the [`ast`], and [`lower`] type-checks the AST and lowers it to an
//! [`metalsim_isa::Module`]. Every stage returns its output together with a list of
//! [`Diagnostic`]s; nothing reachable from user input panics. [`compile`] runs them all.
//!
//! The type-level part of the standard library (type traits, `numeric_limits`, the
//! `mem_flags` and `memory_order` enums) is MSL source, [`prelude`], compiled in front of
//! every kernel file; the functions are lowered directly (`lower::builtins`).

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod prelude;
pub mod preprocess;
pub mod source;
pub mod token;

use std::path::PathBuf;

pub use diag::{Diagnostic, Label, Severity, has_errors, render, render_short};
pub use source::{FileId, SourceFile, SourceMap, Span};

/// What the user can set about a compilation: include folders and macro definitions
/// (`-I` and `-D` on the command line), and the values a pipeline fixes when it is made.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// Folders searched by `#include "..."` after the including file's own.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME` (`None`) and `-D NAME=VALUE`.
    pub defines: Vec<(String, Option<String>)>,
    /// Function constant values and the kernel template to instantiate.
    pub specialization: Specialization,
    /// Run each kernel exactly as lowered, without `metalsim_isa::optimize` (`--no-opt`): for
    /// reading the ISA next to the source, or for ruling the optimizer out.
    pub unoptimized: bool,
}

/// A value given from outside the source (a launch spec) for a function constant or a
/// template parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum SpecValue {
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A type name (`"float"`, `"half4"`, a struct's name), for template parameters.
    Type(String),
    /// The components of a vector, for a vector function constant.
    List(Vec<SpecValue>),
}

/// What a pipeline fixes when it is made: the values of function constants and the
/// template arguments of the kernel to run (a launch spec's `[constants]` and `template`).
#[derive(Clone, Debug, Default)]
pub struct Specialization {
    /// Function constant values, each keyed by the constant's name or by its index written
    /// as a number (`"0"`). `None` when no launch spec is given (`check`, `asm`): unset
    /// function constants then read as zero and `is_function_constant_defined` is false.
    /// With `Some`, reading a function constant without a value is an error.
    pub function_constants: Option<Vec<(String, SpecValue)>>,
    /// A kernel template to instantiate, named by its function name, with its template
    /// arguments by parameter name; it becomes a kernel with that name.
    pub kernel_template: Option<(String, Vec<(String, SpecValue)>)>,
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
    let (mut all, prelude_diags) = prelude::parse(sources);
    diags.extend(prelude_diags);
    all.items.extend(tu.items);
    let (mut module, lower_diags) = lower::lower(&all, sources, &options.specialization);
    diags.extend(lower_diags);
    if let Some(m) = module.as_mut().filter(|_| !options.unoptimized) {
        optimize_module(m, main, &mut diags);
    }
    (module, diags)
}

/// Optimizes every kernel like Apple's compiler would (unrolling, hoisting, folding,
/// strength reduction), so instruction counts and times resemble the GPU's. The optimizer
/// is tested to preserve every result and fault; should it ever produce a function the
/// verifier rejects, the kernel runs unoptimized and a warning says so.
fn optimize_module(m: &mut metalsim_isa::Module, main: FileId, diags: &mut Vec<Diagnostic>) {
    let data_len = m.data.len();
    for f in &mut m.functions {
        let lowered = f.clone();
        metalsim_isa::optimize(f);
        if let Err(e) = metalsim_isa::verify_function(f, data_len) {
            let span = Span::new(main, 0, 0);
            diags.push(Diagnostic::warning(
                format!(
                    "internal: the optimizer broke kernel `{}` ({e}); it runs unoptimized (a bug in metalsim)",
                    f.name
                ),
                span,
            ));
            *f = lowered;
        }
    }
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
