//! metalsim's frontend: Metal Shading Language source to the ISA.
//!
//! The stages, each in its own module: [`lexer`] (chumsky) turns text into tokens,
//! [`preprocess`] expands directives and macros, [`parser`] (chumsky with Pratt parsing)
//! builds the [`ast`], and [`lower`] type-checks the AST and lowers it to an
//! [`metalsim_isa::Module`]. Every stage returns its output together with a list of
//! [`Diagnostic`]s; nothing reachable from user input panics.

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod preprocess;
pub mod source;
pub mod token;

pub use diag::{Diagnostic, Label, Severity, has_errors, render, render_short};
pub use source::{FileId, SourceFile, SourceMap, Span};
