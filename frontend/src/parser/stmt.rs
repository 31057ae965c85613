//! Statements and local declarations.

use chumsky::prelude::*;

use crate::ast::{Block, Init, Item, Stmt, StmtKind, VarDecl};
use crate::source::Span;
use crate::token::{Keyword, Punct};

use super::common::{custom_error, guard, kw, punct, skip_with};
use super::expr::ExprParsers;
use super::item::local_items;
use super::types::{Declarator, Spec, build_type};
use super::{BoxedP, Ctx, sp};

/// The statement parsers.
pub(crate) struct StmtParsers<'a> {
    /// A `{ ... }` block.
    pub block: BoxedP<'a, Block>,
}

/// One declarator of a variable declaration with its initializer.
type VarDeclarator = (Declarator, Option<Init>, Span);

/// Turns specifiers and declarators into variable declarations.
pub(crate) fn make_vars(spec: &Spec, declarators: Vec<VarDeclarator>) -> Vec<VarDecl> {
    declarators
        .into_iter()
        .map(|(d, init, span)| VarDecl {
            storage: spec.storage,
            ty: build_type(spec, &d.ptrs, &d.dims),
            name: d.name,
            init,
            attrs: d.attrs,
            span: spec.span.to(span),
        })
        .collect()
}

/// A local declaration `float a = 1, b[2] = {1, 2}, *p, v(1.0f)` (no `;`).
pub(crate) fn local_var_decl<'a>(ep: &ExprParsers<'a>) -> BoxedP<'a, Vec<VarDecl>> {
    let init = choice((
        punct(Punct::Assign)
            .ignore_then(ep.assign.clone())
            .map(Init::Assign),
        ep.args.clone().map(Init::Ctor),
        ep.brace_list.clone().map(Init::Brace),
    ));
    var_decl_with(ep, init.boxed())
}

/// A program-scope declaration: like a local one, but `T x(...)` is left to the function
/// parser (at program scope C++ reads it as a function declaration).
pub(crate) fn global_var_decl<'a>(ep: &ExprParsers<'a>) -> BoxedP<'a, Vec<VarDecl>> {
    let init = choice((
        punct(Punct::Assign)
            .ignore_then(ep.assign.clone())
            .map(Init::Assign),
        ep.brace_list.clone().map(Init::Brace),
    ));
    var_decl_with(ep, init.boxed())
}

fn var_decl_with<'a>(ep: &ExprParsers<'a>, init: BoxedP<'a, Init>) -> BoxedP<'a, Vec<VarDecl>> {
    let one = ep
        .types
        .declarator
        .clone()
        .then(init.or_not())
        .map_with(|(d, init), e| (d, init, sp(e)));
    ep.types
        .spec
        .clone()
        .then(
            one.separated_by(punct(Punct::Comma))
                .at_least(1)
                .collect::<Vec<_>>(),
        )
        .validate(|(spec, ds), e, emitter| {
            if let Some(message) = spec.forbidden {
                emitter.emit(custom_error(e.span(), message, "not available in MSL"));
            }
            make_vars(&spec, ds)
        })
        .boxed()
}

/// Builds the statement parsers. `item` parses a declaration: a function body may declare
/// classes (`struct S { ... };`), which hold functions, which hold statements.
pub(crate) fn stmt_parsers<'a>(
    ep: &ExprParsers<'a>,
    item: BoxedP<'a, Vec<Item>>,
) -> StmtParsers<'a> {
    let decl = local_var_decl(ep);
    let semi = || punct(Punct::Semi);
    let stmt = recursive(|stmt| {
        let block = block_of(stmt.clone().boxed());
        let cond = ep
            .expr
            .clone()
            .delimited_by(punct(Punct::LParen), punct(Punct::RParen))
            .boxed();
        let boxed_stmt = || stmt.clone().map(Box::new);
        let if_ = kw(Keyword::If)
            .ignore_then(kw(Keyword::Constexpr).or_not())
            .then(cond.clone())
            .then(boxed_stmt())
            .then(kw(Keyword::Else).ignore_then(boxed_stmt()).or_not())
            .map(|(((constexpr_, cond), then_), else_)| StmtKind::If {
                constexpr_: constexpr_.is_some(),
                cond,
                then_,
                else_,
            })
            .boxed();
        let for_init = choice((
            guard("declaration", Ctx::decl_starts)
                .ignore_then(decl.clone())
                .then_ignore(semi())
                .map_with(|d, e| {
                    Some(Box::new(Stmt {
                        kind: StmtKind::Decl(d),
                        span: sp(e),
                    }))
                }),
            ep.expr.clone().then_ignore(semi()).map_with(|x, e| {
                Some(Box::new(Stmt {
                    kind: StmtKind::Expr(x),
                    span: sp(e),
                }))
            }),
            semi().to(None),
        ));
        let for_ = kw(Keyword::For)
            .ignore_then(punct(Punct::LParen))
            .ignore_then(for_init)
            .then(ep.expr.clone().or_not())
            .then_ignore(semi())
            .then(ep.expr.clone().or_not())
            .then_ignore(punct(Punct::RParen))
            .then(boxed_stmt())
            .map(|(((init, cond), step), body)| StmtKind::For {
                init,
                cond,
                step,
                body,
            })
            .boxed();
        let while_ = kw(Keyword::While)
            .ignore_then(cond.clone())
            .then(boxed_stmt())
            .map(|(cond, body)| StmtKind::While { cond, body });
        let do_ = kw(Keyword::Do)
            .ignore_then(boxed_stmt())
            .then_ignore(kw(Keyword::While))
            .then(cond.clone())
            .then_ignore(semi())
            .map(|(body, cond)| StmtKind::DoWhile { body, cond });
        let switch_ = kw(Keyword::Switch)
            .ignore_then(cond)
            .then(boxed_stmt())
            .map(|(cond, body)| StmtKind::Switch { cond, body });
        let case_ = kw(Keyword::Case)
            .ignore_then(ep.expr.clone())
            .then_ignore(punct(Punct::Colon))
            .map(StmtKind::Case);
        let default_ = kw(Keyword::Default)
            .then(punct(Punct::Colon))
            .to(StmtKind::Default);
        let jump = choice((
            kw(Keyword::Break).to(StmtKind::Break),
            kw(Keyword::Continue).to(StmtKind::Continue),
            kw(Keyword::Return)
                .ignore_then(ep.expr.clone().or_not())
                .map(StmtKind::Return),
        ))
        .then_ignore(semi());
        let static_assert = kw(Keyword::StaticAssert)
            .ignore_then(
                ep.assign
                    .clone()
                    .then(punct(Punct::Comma).ignore_then(ep.string.clone()).or_not())
                    .delimited_by(punct(Punct::LParen), punct(Punct::RParen)),
            )
            .then_ignore(semi())
            .map(|(cond, message)| StmtKind::StaticAssert { cond, message });
        let goto = kw(Keyword::Goto)
            .ignore_then(skip_with("`;`", Ctx::skip_stmt))
            .validate(|_, e, emitter| {
                emitter.emit(custom_error(
                    e.span(),
                    "`goto` is not supported",
                    "not available in MSL",
                ));
                StmtKind::Error
            });
        let group = || skip_with("`{`", Ctx::skip_group);
        let try_ = kw(Keyword::Try)
            .ignore_then(group())
            .ignore_then(kw(Keyword::Catch).then(group()).then(group()).repeated())
            .validate(|_, e, emitter| {
                emitter.emit(custom_error(
                    e.span(),
                    "exceptions are not supported",
                    "not available in MSL",
                ));
                StmtKind::Error
            });
        let using_namespace = kw(Keyword::Using)
            .then(kw(Keyword::Namespace))
            .then(ep.types.path.clone())
            .then(semi())
            .to(StmtKind::Empty);
        let local_item = local_items(ep).map(StmtKind::Items);
        let local_class = guard("statement", Ctx::local_class_starts)
            .ignore_then(item.clone())
            .map(StmtKind::Items);
        // C++ has no local templates (and a local class no member templates).
        let local_template = guard("statement", Ctx::template_starts)
            .ignore_then(skip_with("declaration", Ctx::skip_decl))
            .validate(|_, e, emitter| {
                emitter.emit(custom_error(
                    e.span(),
                    "templates cannot be declared inside a function",
                    "C++ has no local templates: move this declaration out of the function",
                ));
                StmtKind::Error
            });
        let decl_stmt = guard("declaration", Ctx::decl_starts)
            .ignore_then(decl.clone())
            .then_ignore(semi())
            .map(StmtKind::Decl);
        let expr_stmt = ep.expr.clone().then_ignore(semi()).map(StmtKind::Expr);
        // Statement attributes (`[[fallthrough]];`, `[[likely]]`) only advise the compiler.
        let stmt_attrs =
            guard("statement", Ctx::attribute_starts).ignore_then(ep.types.attrs.clone());
        stmt_attrs
            .or_not()
            .ignore_then(choice((
                block.map(StmtKind::Block),
                if_,
                for_,
                while_.boxed(),
                do_.boxed(),
                switch_.boxed(),
                case_.boxed(),
                default_.boxed(),
                jump.boxed(),
                static_assert.boxed(),
                semi().to(StmtKind::Empty),
                goto.boxed(),
                try_.boxed(),
                using_namespace.boxed(),
                local_item.boxed(),
                local_class.boxed(),
                local_template.boxed(),
                decl_stmt.boxed(),
                expr_stmt.boxed(),
            )))
            .map_with(|kind, e| Stmt { kind, span: sp(e) })
            .labelled("statement")
            .recover_with(via_parser(skip_with("statement", Ctx::skip_stmt).map_with(
                |_, e| Stmt {
                    kind: StmtKind::Error,
                    span: sp(e),
                },
            )))
            .boxed()
    })
    .boxed();
    StmtParsers {
        block: block_of(stmt),
    }
}

fn block_of<'a>(stmt: BoxedP<'a, Stmt>) -> BoxedP<'a, Block> {
    // A block the input ends inside is reported and closed there, so the statements parsed
    // so far (and their errors) are kept.
    let close = punct(Punct::RBrace)
        .ignored()
        .recover_with(via_parser(end()));
    stmt.repeated()
        .collect::<Vec<_>>()
        .delimited_by(punct(Punct::LBrace), close)
        .map_with(|stmts, e| Block { stmts, span: sp(e) })
        .boxed()
}
