//! Small parsers every part of the grammar uses: tokens, names, lookahead guards and
//! recovery skippers.

use chumsky::input::InputRef;
use chumsky::label::LabelError;
use chumsky::prelude::*;

use crate::ast::Ident;
use crate::token::{Keyword, Punct, Token};

use super::{Ctx, Error, Ex, In, sp};

/// Matches one punctuator.
pub fn punct<'a>(p: Punct) -> impl Parser<'a, In<'a>, Token, Ex<'a>> + Clone {
    just(Token::Punct(p))
}

/// Matches one keyword.
pub fn kw<'a>(k: Keyword) -> impl Parser<'a, In<'a>, Token, Ex<'a>> + Clone {
    just(Token::Keyword(k))
}

/// An identifier.
pub fn ident<'a>() -> impl Parser<'a, In<'a>, Ident, Ex<'a>> + Clone {
    select! { Token::Ident(s) => s }
        .map_with(|s, e| Ident {
            name: s.to_string(),
            span: sp(e),
        })
        .labelled("identifier")
}

/// An identifier spelled `name`.
pub fn ident_named<'a>(name: &'static str) -> impl Parser<'a, In<'a>, (), Ex<'a>> + Clone {
    select! { Token::Ident(s) if &*s == name => () }.labelled(name)
}

/// The "expected `label`, found ..." error at the token at `i`.
fn expected<'a>(ctx_len: usize, i: usize, found: Option<Token>, label: &'static str) -> Error<'a> {
    let end = if i < ctx_len { i + 1 } else { i };
    <Error<'a> as LabelError<'a, In<'a>, &'static str>>::expected_found(
        [label],
        found.map(chumsky::util::MaybeRef::Val),
        SimpleSpan::from(i..end),
    )
}

/// Succeeds, consuming nothing, where `test` holds at the current token; otherwise fails
/// with "expected `label`".
pub fn guard<'a>(
    label: &'static str,
    test: fn(&Ctx<'a>, usize) -> bool,
) -> impl Parser<'a, In<'a>, (), Ex<'a>> + Clone {
    custom(move |inp: &mut InputRef<'a, '_, In<'a>, Ex<'a>>| {
        let i = *inp.cursor().inner();
        let ctx: &Ctx<'a> = &inp.state().0;
        if test(ctx, i) {
            Ok(())
        } else {
            let len = ctx.tokens.len();
            let found = ctx.tokens.get(i).cloned();
            Err(expected(len, i, found, label))
        }
    })
}

/// Consumes the tokens up to the index `skip` returns (which must be past the current one);
/// fails, consuming nothing, where it returns `None`.
pub fn skip_with<'a>(
    label: &'static str,
    skip: fn(&Ctx<'a>, usize) -> Option<usize>,
) -> impl Parser<'a, In<'a>, (), Ex<'a>> + Clone {
    custom(move |inp: &mut InputRef<'a, '_, In<'a>, Ex<'a>>| {
        let i = *inp.cursor().inner();
        let ctx: &Ctx<'a> = &inp.state().0;
        match skip(ctx, i) {
            Some(j) if j > i => {
                for _ in i..j {
                    inp.skip();
                }
                Ok(())
            }
            _ => {
                let len = ctx.tokens.len();
                let found = ctx.tokens.get(i).cloned();
                Err(expected(len, i, found, label))
            }
        }
    })
}

/// A custom error with a headline and a label message for the primary span.
pub fn custom_error<'a>(span: SimpleSpan, message: &str, label: &str) -> Error<'a> {
    Rich::custom(span, format!("{message}{}{label}", super::LABEL_SEPARATOR))
}
