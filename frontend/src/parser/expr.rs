//! Expressions: atoms and a Pratt parser with C++'s precedence and associativity.
//!
//! Binding powers, loosest first: assignment (right), `?:` (right), `||`, `&&`, `|`, `^`,
//! `&`, `==`/`!=`, relational, shifts, additive, multiplicative (all left), then prefix
//! operators and C-style casts, then postfix operators (`++`, `--`, calls, `[]`, `.`, `->`).
//! The comma operator sits outside the Pratt parser, so argument lists and initializers use
//! the assignment-expression parser directly.

use chumsky::pratt::{infix, left, postfix, prefix, right};
use chumsky::prelude::*;

use crate::ast::{BinaryOp, CastKind, Expr, ExprKind, Path, PathSegment, PostfixOp, UnaryOp};
use crate::lexer::{parse_float, parse_int};
use crate::source::Span;
use crate::token::{Keyword, Punct, Token};

use super::common::{custom_error, guard, ident, ident_named, kw, punct, skip_with};
use super::types::TypeParsers;
use super::{BoxedP, Ctx, Ex, Extra, In, sp};

/// The expression parsers and the type parsers built over them.
#[derive(Clone)]
pub(crate) struct ExprParsers<'a> {
    /// An assignment expression (no top-level comma).
    pub assign: BoxedP<'a, Expr>,
    /// A full expression, comma operator included.
    pub expr: BoxedP<'a, Expr>,
    /// `(a, b)`: a parenthesized argument list.
    pub args: BoxedP<'a, Vec<Expr>>,
    /// `{a, b,}`: a braced list.
    pub brace_list: BoxedP<'a, Vec<Expr>>,
    /// Adjacent string literals, concatenated.
    pub string: BoxedP<'a, String>,
    /// Types.
    pub types: TypeParsers<'a>,
}

fn expr(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

/// Builds the expression parsers.
pub(crate) fn expr_parsers<'a>() -> ExprParsers<'a> {
    let assign = recursive(|assign| pieces(assign.boxed()).assign_level()).boxed();
    pieces(assign)
}

/// Everything built over a given assignment-expression parser.
fn pieces<'a>(assign: BoxedP<'a, Expr>) -> ExprParsers<'a> {
    let expr = assign
        .clone()
        .foldl_with(
            punct(Punct::Comma)
                .labelled("operator")
                .ignore_then(assign.clone())
                .repeated(),
            |lhs, rhs, e| {
                expr(
                    ExprKind::Binary {
                        op: BinaryOp::Comma,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    },
                    sp(e),
                )
            },
        )
        .labelled("expression")
        .boxed();
    let types = TypeParsers::new(assign.clone(), expr.clone());
    // A list element may be a pack expansion `xs...`.
    let element = assign
        .clone()
        .then(punct(Punct::Ellipsis).or_not())
        .map_with(|(x, pack), e| match pack {
            Some(_) => self::expr(ExprKind::PackExpansion(Box::new(x)), sp(e)),
            None => x,
        })
        .boxed();
    let args = element
        .clone()
        .separated_by(punct(Punct::Comma))
        .collect::<Vec<_>>()
        .delimited_by(punct(Punct::LParen), punct(Punct::RParen))
        .boxed();
    let brace_list = element
        .separated_by(punct(Punct::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(punct(Punct::LBrace), punct(Punct::RBrace))
        .boxed();
    let string = select! { Token::Str(s) => s }
        .repeated()
        .at_least(1)
        .collect::<Vec<_>>()
        .map(|parts| parts.iter().map(|s| &**s).collect::<String>())
        .boxed();
    ExprParsers {
        assign,
        expr,
        args,
        brace_list,
        string,
        types,
    }
}

/// Integer, floating, character, boolean and string literals.
fn literal<'a>(string: BoxedP<'a, String>) -> BoxedP<'a, ExprKind> {
    let number = select! {
        Token::Int(s) => (s, false),
        Token::Float(s) => (s, true),
    }
    .validate(|(text, is_float), e, emitter| {
        let parsed = if is_float {
            parse_float(&text).map(|(value, suffix)| ExprKind::FloatLit { value, suffix })
        } else {
            parse_int(&text).map(|v| ExprKind::IntLit {
                value: v.value,
                unsigned: v.unsigned,
                long: v.long,
                non_decimal: v.non_decimal,
            })
        };
        parsed.unwrap_or_else(|message| {
            emitter.emit(custom_error(e.span(), &message, "invalid literal"));
            ExprKind::Error
        })
    });
    let other = select! {
        Token::Char(c) => ExprKind::IntLit { value: c as u64, unsigned: false, long: false, non_decimal: false },
        Token::Keyword(Keyword::True) => ExprKind::BoolLit(true),
        Token::Keyword(Keyword::False) => ExprKind::BoolLit(false),
    };
    choice((number, other, string.map(ExprKind::StringLit)))
        .labelled("expression")
        .boxed()
}

/// A template argument value: literals, names (`Traits<T>::size`), `sizeof`,
/// parenthesized expressions and arithmetic, but no `<`, `>` or anything looser
/// (`vec<float, N * 2>`).
pub(crate) fn template_arg_expr<'a>(
    full: BoxedP<'a, Expr>,
    path: BoxedP<'a, Path>,
) -> BoxedP<'a, Expr> {
    let string = select! { Token::Str(s) => s.to_string() }.boxed();
    let sizeof_pack = kw(Keyword::Sizeof)
        .then(punct(Punct::Ellipsis))
        .ignore_then(ident().delimited_by(punct(Punct::LParen), punct(Punct::RParen)))
        .map(ExprKind::SizeofPack);
    let atom = choice((
        literal(string).map_with(|k, e| expr(k, sp(e))),
        sizeof_pack.map_with(|k, e| expr(k, sp(e))),
        path.map_with(|path, e| expr(ExprKind::Name(path), sp(e))),
        full.clone()
            .delimited_by(punct(Punct::LParen), punct(Punct::RParen)),
    ));
    // Members, elements and calls of constant objects (`f<params.bm>`, `f<p.a[2]>`,
    // `f<p.area()>`).
    let member = punct(Punct::Dot).ignore_then(ident());
    let index = full
        .clone()
        .delimited_by(punct(Punct::LBracket), punct(Punct::RBracket));
    let call_args = full
        .separated_by(punct(Punct::Comma))
        .collect::<Vec<_>>()
        .delimited_by(punct(Punct::LParen), punct(Punct::RParen));
    atom.pratt((
        postfix(14, member, |base, name, e: &mut Extra<'a, '_>| {
            expr(
                ExprKind::Member {
                    base: Box::new(base),
                    name,
                    targs: Vec::new(),
                    arrow: false,
                },
                sp(e),
            )
        }),
        postfix(14, index, |base, i, e: &mut Extra<'a, '_>| {
            index_of(base, i, e)
        }),
        postfix(14, call_args, |callee, args, e: &mut Extra<'a, '_>| {
            call(callee, args, e)
        }),
        prefix(13, unary_op(), |op, operand, e: &mut Extra<'a, '_>| {
            unary(op, operand, e)
        }),
        infix(left(12), mul_op(), |l, op, r, e: &mut Extra<'a, '_>| {
            binary(l, op, r, e)
        }),
        infix(left(11), add_op(), |l, op, r, e: &mut Extra<'a, '_>| {
            binary(l, op, r, e)
        }),
        infix(
            left(10),
            punct(Punct::Shl).to(BinaryOp::Shl),
            |l, op, r, e: &mut Extra<'a, '_>| binary(l, op, r, e),
        ),
        infix(
            left(7),
            punct(Punct::Amp).to(BinaryOp::BitAnd),
            |l, op, r, e: &mut Extra<'a, '_>| binary(l, op, r, e),
        ),
        infix(
            left(6),
            punct(Punct::Caret).to(BinaryOp::BitXor),
            |l, op, r, e: &mut Extra<'a, '_>| binary(l, op, r, e),
        ),
        infix(
            left(5),
            punct(Punct::Pipe).to(BinaryOp::BitOr),
            |l, op, r, e: &mut Extra<'a, '_>| binary(l, op, r, e),
        ),
    ))
    .labelled("expression")
    .boxed()
}

fn unary_op<'a>() -> impl Parser<'a, In<'a>, UnaryOp, Ex<'a>> + Clone {
    select! {
        Token::Punct(Punct::Minus) => UnaryOp::Neg,
        Token::Punct(Punct::Plus) => UnaryOp::Plus,
        Token::Punct(Punct::Bang) => UnaryOp::Not,
        Token::Punct(Punct::Tilde) => UnaryOp::BitNot,
        Token::Punct(Punct::Star) => UnaryOp::Deref,
        Token::Punct(Punct::Amp) => UnaryOp::AddrOf,
        Token::Punct(Punct::PlusPlus) => UnaryOp::PreInc,
        Token::Punct(Punct::MinusMinus) => UnaryOp::PreDec,
    }
}

fn mul_op<'a>() -> impl Parser<'a, In<'a>, BinaryOp, Ex<'a>> + Clone {
    select! {
        Token::Punct(Punct::Star) => BinaryOp::Mul,
        Token::Punct(Punct::Slash) => BinaryOp::Div,
        Token::Punct(Punct::Percent) => BinaryOp::Rem,
    }
    .labelled("operator")
}

fn add_op<'a>() -> impl Parser<'a, In<'a>, BinaryOp, Ex<'a>> + Clone {
    select! {
        Token::Punct(Punct::Plus) => BinaryOp::Add,
        Token::Punct(Punct::Minus) => BinaryOp::Sub,
    }
    .labelled("operator")
}

fn unary(op: UnaryOp, operand: Expr, e: &mut Extra<'_, '_>) -> Expr {
    expr(
        ExprKind::Unary {
            op,
            operand: Box::new(operand),
        },
        sp(e),
    )
}

fn binary(lhs: Expr, op: BinaryOp, rhs: Expr, e: &mut Extra<'_, '_>) -> Expr {
    expr(
        ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        sp(e),
    )
}

fn call(callee: Expr, args: Vec<Expr>, e: &mut Extra<'_, '_>) -> Expr {
    expr(
        ExprKind::Call {
            callee: Box::new(callee),
            args,
        },
        sp(e),
    )
}

fn index_of(base: Expr, index: Expr, e: &mut Extra<'_, '_>) -> Expr {
    expr(
        ExprKind::Index {
            base: Box::new(base),
            index: Box::new(index),
        },
        sp(e),
    )
}

impl<'a> ExprParsers<'a> {
    /// The assignment-expression parser: atoms and every operator but the comma.
    fn assign_level(&self) -> BoxedP<'a, Expr> {
        let ty = &self.types;
        let paren = self
            .expr
            .clone()
            .delimited_by(punct(Punct::LParen), punct(Punct::RParen))
            .recover_with(via_parser(
                nested_delimiters(
                    Token::Punct(Punct::LParen),
                    Token::Punct(Punct::RParen),
                    [
                        (Token::Punct(Punct::LBracket), Token::Punct(Punct::RBracket)),
                        (Token::Punct(Punct::LBrace), Token::Punct(Punct::RBrace)),
                    ],
                    |_| (),
                )
                .map_with(|_, e| expr(ExprKind::Error, sp(e))),
            ))
            .boxed();
        let paren_expr = self
            .expr
            .clone()
            .delimited_by(punct(Punct::LParen), punct(Punct::RParen));
        let angled_type = ty
            .type_id
            .clone()
            .delimited_by(punct(Punct::Lt), punct(Punct::Gt));

        let keyword_cast = select! {
            Token::Keyword(Keyword::StaticCast) => CastKind::Static,
            Token::Keyword(Keyword::ReinterpretCast) => CastKind::Reinterpret,
            Token::Keyword(Keyword::ConstCast) => CastKind::Const,
        }
        .then(angled_type.clone())
        .then(paren_expr.clone())
        .map(|((kind, ty), e)| ExprKind::Cast {
            kind,
            ty,
            expr: Box::new(e),
        });
        let as_type = ident_named("metal")
            .then(punct(Punct::ColonColon))
            .or_not()
            .ignore_then(ident_named("as_type"))
            .ignore_then(angled_type.clone())
            .then(paren_expr.clone())
            .map(|(ty, e)| ExprKind::Cast {
                kind: CastKind::AsType,
                ty,
                expr: Box::new(e),
            });
        let dynamic_cast = kw(Keyword::DynamicCast)
            .ignore_then(angled_type)
            .ignore_then(paren_expr)
            .validate(|_, e, emitter| {
                emitter.emit(custom_error(
                    e.span(),
                    "`dynamic_cast` is not supported",
                    "not available in MSL",
                ));
                ExprKind::Error
            });
        let sizeof_type = kw(Keyword::Sizeof)
            .ignore_then(guard("type", Ctx::cast_starts))
            .ignore_then(
                ty.type_id
                    .clone()
                    .delimited_by(punct(Punct::LParen), punct(Punct::RParen)),
            )
            .map(ExprKind::SizeofType);
        let alignof = kw(Keyword::Alignof)
            .ignore_then(
                ty.type_id
                    .clone()
                    .delimited_by(punct(Punct::LParen), punct(Punct::RParen)),
            )
            .map(ExprKind::AlignofType);
        let typed_init = guard("type", Ctx::named_type_starts)
            .ignore_then(ty.named.clone())
            .then(self.brace_list.clone())
            .map(|(ty, elems)| ExprKind::TypedInitList { ty, elems });
        let name = ty.path.clone().map(ExprKind::Name);
        let sizeof_pack = kw(Keyword::Sizeof)
            .then(punct(Punct::Ellipsis))
            .ignore_then(ident().delimited_by(punct(Punct::LParen), punct(Punct::RParen)))
            .map(ExprKind::SizeofPack);
        let this_or_null = select! {
            Token::Keyword(Keyword::This) => "this",
            Token::Keyword(Keyword::Nullptr) => "nullptr",
        }
        .map_with(|n, e| ExprKind::Name(Path::simple(n, sp(e))));
        let lambda = skip_with("expression", Ctx::skip_lambda).validate(|_, e, emitter| {
            emitter.emit(custom_error(
                e.span(),
                "lambda expressions are not supported yet",
                "metalsim does not support this construct yet",
            ));
            ExprKind::Error
        });
        let atom = choice((
            literal(self.string.clone()),
            keyword_cast,
            as_type,
            dynamic_cast,
            sizeof_pack,
            sizeof_type,
            alignof,
            typed_init,
            name,
            this_or_null,
            self.brace_list.clone().map(ExprKind::InitList),
            lambda,
        ))
        .map_with(|kind, e| expr(kind, sp(e)))
        .or(paren)
        .labelled("expression")
        .boxed();

        let cast = guard("expression", Ctx::cast_starts).ignore_then(
            ty.type_id
                .clone()
                .delimited_by(punct(Punct::LParen), punct(Punct::RParen)),
        );
        let sizeof = kw(Keyword::Sizeof)
            .labelled("expression")
            .ignore_then(guard("expression", |c, i| {
                !c.cast_starts(i) && !c.is(i, Punct::Ellipsis)
            }));
        let forbidden = select! {
            Token::Keyword(Keyword::New) => "`new` is not supported: MSL has no dynamic memory allocation",
            Token::Keyword(Keyword::Delete) => "`delete` is not supported: MSL has no dynamic memory allocation",
            Token::Keyword(Keyword::Throw) => "exceptions are not supported",
        }
        .labelled("expression");
        let incdec = select! {
            Token::Punct(Punct::PlusPlus) => PostfixOp::Inc,
            Token::Punct(Punct::MinusMinus) => PostfixOp::Dec,
        }
        .labelled("operator");
        let member = select! {
            Token::Punct(Punct::Dot) => false,
            Token::Punct(Punct::Arrow) => true,
        }
        .labelled("operator")
        .then_ignore(kw(Keyword::Template).or_not())
        .then(ty.segment.clone());
        let index = self.expr.clone().delimited_by(
            punct(Punct::LBracket).labelled("operator"),
            punct(Punct::RBracket),
        );
        let call_args = punct(Punct::LParen)
            .labelled("operator")
            .rewind()
            .ignore_then(self.args.clone());
        let shift_op = select! {
            Token::Punct(Punct::Shl) => BinaryOp::Shl,
            Token::Punct(Punct::Shr) => BinaryOp::Shr,
        }
        .labelled("operator");
        let rel_op = select! {
            Token::Punct(Punct::Lt) => BinaryOp::Lt,
            Token::Punct(Punct::Le) => BinaryOp::Le,
            Token::Punct(Punct::Gt) => BinaryOp::Gt,
            Token::Punct(Punct::Ge) => BinaryOp::Ge,
        }
        .labelled("operator");
        let eq_op = select! {
            Token::Punct(Punct::EqEq) => BinaryOp::Eq,
            Token::Punct(Punct::Ne) => BinaryOp::Ne,
        }
        .labelled("operator");
        let single = |p: Punct, op: BinaryOp| punct(p).to(op).labelled("operator");
        let ternary = punct(Punct::Question)
            .labelled("operator")
            .ignore_then(self.expr.clone())
            .then_ignore(punct(Punct::Colon));
        let assign_op = select! {
            Token::Punct(Punct::Assign) => None,
            Token::Punct(Punct::PlusAssign) => Some(BinaryOp::Add),
            Token::Punct(Punct::MinusAssign) => Some(BinaryOp::Sub),
            Token::Punct(Punct::StarAssign) => Some(BinaryOp::Mul),
            Token::Punct(Punct::SlashAssign) => Some(BinaryOp::Div),
            Token::Punct(Punct::PercentAssign) => Some(BinaryOp::Rem),
            Token::Punct(Punct::ShlAssign) => Some(BinaryOp::Shl),
            Token::Punct(Punct::ShrAssign) => Some(BinaryOp::Shr),
            Token::Punct(Punct::AndAssign) => Some(BinaryOp::BitAnd),
            Token::Punct(Punct::OrAssign) => Some(BinaryOp::BitOr),
            Token::Punct(Punct::XorAssign) => Some(BinaryOp::BitXor),
        }
        .labelled("operator");

        atom.pratt((
            postfix(14, incdec, |operand, op, e: &mut Extra<'a, '_>| {
                expr(
                    ExprKind::Postfix {
                        op,
                        operand: Box::new(operand),
                    },
                    sp(e),
                )
            }),
            postfix(14, call_args, |callee, args, e: &mut Extra<'a, '_>| {
                call(callee, args, e)
            }),
            postfix(14, index, |base, i, e: &mut Extra<'a, '_>| {
                index_of(base, i, e)
            }),
            postfix(14, member, |base, (arrow, seg), e: &mut Extra<'a, '_>| {
                let PathSegment { name, args } = seg;
                expr(
                    ExprKind::Member {
                        base: Box::new(base),
                        name,
                        targs: args,
                        arrow,
                    },
                    sp(e),
                )
            }),
            prefix(13, cast, |ty, operand, e: &mut Extra<'a, '_>| {
                expr(
                    ExprKind::Cast {
                        kind: CastKind::CStyle,
                        ty,
                        expr: Box::new(operand),
                    },
                    sp(e),
                )
            }),
            prefix(
                13,
                unary_op().labelled("expression"),
                |op, operand, e: &mut Extra<'a, '_>| unary(op, operand, e),
            ),
            prefix(13, sizeof, |_, operand, e: &mut Extra<'a, '_>| {
                expr(ExprKind::SizeofExpr(Box::new(operand)), sp(e))
            }),
            prefix(13, forbidden, |message, _, e: &mut Extra<'a, '_>| {
                let span = e.span();
                e.emit(custom_error(span, message, "not available in MSL"));
                expr(ExprKind::Error, sp(e))
            }),
            infix(left(12), mul_op(), |l, op, r, e: &mut Extra<'a, '_>| {
                binary(l, op, r, e)
            }),
            infix(left(11), add_op(), |l, op, r, e: &mut Extra<'a, '_>| {
                binary(l, op, r, e)
            }),
            infix(left(10), shift_op, |l, op, r, e: &mut Extra<'a, '_>| {
                binary(l, op, r, e)
            }),
            infix(left(9), rel_op, |l, op, r, e: &mut Extra<'a, '_>| {
                binary(l, op, r, e)
            }),
            infix(left(8), eq_op, |l, op, r, e: &mut Extra<'a, '_>| {
                binary(l, op, r, e)
            }),
            infix(
                left(7),
                single(Punct::Amp, BinaryOp::BitAnd),
                |l, op, r, e: &mut Extra<'a, '_>| binary(l, op, r, e),
            ),
            infix(
                left(6),
                single(Punct::Caret, BinaryOp::BitXor),
                |l, op, r, e: &mut Extra<'a, '_>| binary(l, op, r, e),
            ),
            infix(
                left(5),
                single(Punct::Pipe, BinaryOp::BitOr),
                |l, op, r, e: &mut Extra<'a, '_>| binary(l, op, r, e),
            ),
            infix(
                left(4),
                single(Punct::AndAnd, BinaryOp::LogAnd),
                |l, op, r, e: &mut Extra<'a, '_>| binary(l, op, r, e),
            ),
            infix(
                left(3),
                single(Punct::OrOr, BinaryOp::LogOr),
                |l, op, r, e: &mut Extra<'a, '_>| binary(l, op, r, e),
            ),
            infix(
                right(2),
                ternary,
                |cond, then_, else_, e: &mut Extra<'a, '_>| {
                    expr(
                        ExprKind::Conditional {
                            cond: Box::new(cond),
                            then_: Box::new(then_),
                            else_: Box::new(else_),
                        },
                        sp(e),
                    )
                },
            ),
            infix(
                right(1),
                assign_op,
                |lhs, op, rhs, e: &mut Extra<'a, '_>| {
                    expr(
                        ExprKind::Assign {
                            op,
                            lhs: Box::new(lhs),
                            rhs: Box::new(rhs),
                        },
                        sp(e),
                    )
                },
            ),
        ))
        .labelled("expression")
        .boxed()
    }
}
