//! The part of Metal's standard library written in MSL: type traits (`is_same`,
//! `enable_if`, `conditional`...), `numeric_limits`, and the `mem_flags`, `memory_order`
//! and `thread_scope` enums. It is compiled in front of every kernel file, in namespace
//! `metal` (which every kernel sees, as if it had written `using namespace metal;`).
//!
//! The names of its class, alias and variable templates are also in
//! [`crate::parser::PRELUDE_TEMPLATES`] (textures: [`crate::parser::TEXTURE_TEMPLATES`]) so the parser reads `is_same_v<T, U>`
//! as a template anywhere; a test checks the two lists agree.

use crate::ast::TranslationUnit;
use crate::diag::Diagnostic;
use crate::preprocess::{PreprocessOptions, preprocess};
use crate::source::{SourceMap, Span};

/// The prelude's source.
pub const SOURCE: &str = include_str!("prelude.metal");

/// The name the prelude's file has in diagnostics and source locations.
pub const FILE_NAME: &str = "<metal_stdlib>";

/// Adds the prelude to `sources` and parses it.
pub fn parse(sources: &mut SourceMap) -> (TranslationUnit, Vec<Diagnostic>) {
    let id = sources.add(FILE_NAME, None, SOURCE);
    let (tokens, mut diags) = preprocess(sources, id, &PreprocessOptions::default());
    let end = SOURCE.len();
    let (tu, parse_diags) = crate::parser::parse(&tokens, Span::new(id, end, end));
    diags.extend(parse_diags);
    (tu, diags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Item;
    use crate::parser::{PRELUDE_TEMPLATES, TEXTURE_TEMPLATES};

    fn templates(items: &[Item], out: &mut Vec<String>) {
        for item in items {
            match item {
                Item::Namespace { items, .. } => templates(items, out),
                Item::Template { item, .. } => match &**item {
                    Item::Struct(s) if s.spec_args.is_none() => out.push(s.name.name.clone()),
                    Item::Alias { name, .. } => out.push(name.name.clone()),
                    Item::Vars(vs) => out.extend(vs.iter().map(|v| v.name.name.clone())),
                    _ => {}
                },
                _ => {}
            }
        }
    }

    #[test]
    fn parses_cleanly_and_declares_the_listed_templates() {
        let mut sources = SourceMap::new();
        let (tu, diags) = parse(&mut sources);
        assert!(
            diags.is_empty(),
            "{}",
            crate::render(&diags, &sources, false)
        );
        let mut declared = Vec::new();
        templates(&tu.items, &mut declared);
        declared.sort();
        declared.dedup();
        let mut listed: Vec<String> = PRELUDE_TEMPLATES
            .iter()
            .chain(TEXTURE_TEMPLATES)
            .map(|s| s.to_string())
            .collect();
        listed.sort();
        assert_eq!(declared, listed);
    }
}
