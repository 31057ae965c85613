//! Declarations: functions, structs and their members, enums, program-scope variables,
//! aliases, namespaces, `using`, templates (heads, specializations, explicit
//! instantiations) and `static_assert`, plus the constructs recognized but not supported
//! yet (vertex and fragment functions).

use chumsky::prelude::*;

use crate::ast::{
    Attribute, Block, EnumDef, Expr, ExprKind, Field, FnKind, FnSpecifiers, FunctionDef, Ident,
    Init, Instantiation, Item, MemberInit, Param, Path, PathSegment, Qualifiers, Storage,
    StructDef, TemplateArg, TemplateParam, TemplateParamKind, TranslationUnit, TypeExpr, TypeKind,
};
use crate::source::Span;
use crate::token::{Keyword, Punct, Token};

use super::common::{custom_error, guard, ident, kw, punct, skip_with};
use super::expr::{ExprParsers, expr_parsers};
use super::stmt::{global_var_decl, local_var_decl, make_vars, stmt_parsers};
use super::types::{Declarator, Dim, PtrOp, Spec, build_type, named_type};
use super::{BoxedP, Ctx, Ex, In, sp};

/// How a function's declaration ends.
#[derive(Clone)]
enum FnBody {
    /// `{ ... }`
    Block(Block),
    /// `;`
    Declaration,
    /// `= default;`
    Default,
    /// `= delete;`
    Delete,
}

/// A parsed function head and body, before deciding what item it becomes.
struct FnParts {
    attrs: Vec<Attribute>,
    spec: Spec,
    ptrs: Vec<PtrOp>,
    name: Path,
    params: Vec<Param>,
    quals: Qualifiers,
    trailing: Option<TypeExpr>,
    body: FnBody,
    span: Span,
}

/// A data member's declarator, with what makes it unsupported.
#[derive(Clone)]
struct FieldDeclarator {
    declarator: Declarator,
    bit_width: Option<Expr>,
    init: Option<Init>,
    span: Span,
}

/// The whole-file parser.
pub(crate) fn translation_unit<'a>() -> impl Parser<'a, In<'a>, TranslationUnit, Ex<'a>> {
    let ep = expr_parsers();
    let item = item_parser(&ep);
    item.recover_with(via_parser(
        skip_with("declaration", Ctx::skip_one).map_with(|_, e| vec![Item::Error(sp(e))]),
    ))
    .repeated()
    .collect::<Vec<Vec<Item>>>()
    .then_ignore(end())
    .map(|items| TranslationUnit {
        items: items.into_iter().flatten().collect(),
    })
}

/// Splits a declarator-id `a::B<T>::f<int>` into the qualifier segments, the name and the
/// name's template arguments.
fn split_name(mut name: Path) -> (Vec<PathSegment>, Ident, Option<Vec<TemplateArg>>) {
    let last = name.segments.pop().unwrap_or(PathSegment {
        name: Ident {
            name: String::new(),
            span: name.span,
        },
        args: Vec::new(),
    });
    let args = (!last.args.is_empty()).then_some(last.args);
    (name.segments, last.name, args)
}

/// Finishes a function: a [`FunctionDef`], or an `Unsupported` item for vertex and fragment
/// functions; fails with the message for a specifier MSL forbids (`virtual`). `None` for a
/// defaulted function other than a default constructor (the implicit one is the same).
fn finish_function(parts: FnParts, kind: FnKind) -> Result<Option<Item>, &'static str> {
    let FnParts {
        attrs,
        spec,
        ptrs,
        name,
        params,
        quals,
        trailing,
        body,
        span,
    } = parts;
    if let Some(message) = spec.forbidden {
        return Err(message);
    }
    let stage = spec.stage.or_else(|| {
        attrs.iter().find_map(|a| match a.name.name.as_str() {
            "vertex" => Some("vertex functions"),
            "fragment" => Some("fragment functions"),
            _ => None,
        })
    });
    if let Some(what) = stage {
        return Ok(Some(Item::Unsupported {
            what: what.to_string(),
            span,
        }));
    }
    let mut specifiers = spec.fns;
    specifiers.kernel |= attrs.iter().any(|a| a.name.name == "kernel");
    let (scope, name, spec_args) = split_name(name);
    let (body, deleted) = match body {
        FnBody::Block(b) => (Some(b), false),
        FnBody::Declaration => (None, false),
        FnBody::Delete => (None, true),
        FnBody::Default if params.is_empty() && kind == FnKind::Constructor => (
            Some(Block {
                stmts: Vec::new(),
                span,
            }),
            false,
        ),
        FnBody::Default => return Ok(None),
    };
    let ret = match trailing {
        Some(t) => t,
        None => build_type(&spec, &ptrs, &[]),
    };
    Ok(Some(Item::Function(FunctionDef {
        name,
        scope,
        spec_args,
        kind,
        specifiers,
        attrs,
        ret,
        params,
        method_quals: quals,
        inits: Vec::new(),
        deleted,
        body,
        span,
    })))
}

/// `(void)` means no parameters.
fn drop_void(params: Vec<Param>) -> Vec<Param> {
    let is_void = |p: &Param| {
        p.name.is_none()
            && matches!(&p.ty.kind, TypeKind::Named(path) if path.is_plain() && path.last() == "void")
    };
    if params.len() == 1 && is_void(&params[0]) {
        Vec::new()
    } else {
        params
    }
}

/// Qualifiers after a parameter list: `const`, `volatile`, `noexcept`, address spaces.
fn method_quals<'a>() -> impl Parser<'a, In<'a>, Qualifiers, Ex<'a>> + Clone {
    #[derive(Clone, Copy)]
    enum Q {
        Const,
        Volatile,
        Space(crate::ast::AddressSpace),
        Other,
    }
    use crate::ast::AddressSpace as A;
    select! {
        Token::Keyword(Keyword::Const) => Q::Const,
        Token::Keyword(Keyword::Volatile) => Q::Volatile,
        Token::Keyword(Keyword::Noexcept) => Q::Other,
        Token::Keyword(Keyword::Device) => Q::Space(A::Device),
        Token::Keyword(Keyword::Constant) => Q::Space(A::Constant),
        Token::Keyword(Keyword::Threadgroup) => Q::Space(A::Threadgroup),
        Token::Keyword(Keyword::Thread) => Q::Space(A::Thread),
    }
    .repeated()
    .collect::<Vec<_>>()
    .map(|qs| {
        let mut out = Qualifiers::default();
        for q in qs {
            match q {
                Q::Const => out.is_const = true,
                Q::Volatile => out.is_volatile = true,
                Q::Space(s) => out.space = Some(s),
                Q::Other => {}
            }
        }
        out
    })
}

/// `template <params>`.
fn template_head<'a>(ep: &ExprParsers<'a>) -> BoxedP<'a, Vec<TemplateParam>> {
    let ty = &ep.types;
    let ellipsis = || punct(Punct::Ellipsis).or_not().map(|e| e.is_some());
    let type_default = punct(Punct::Assign)
        .ignore_then(ty.type_id.clone())
        .map(TemplateArg::Type);
    let type_param = guard("template parameter", Ctx::type_param_starts)
        .ignore_then(choice((kw(Keyword::Typename), kw(Keyword::Class))))
        .ignore_then(ellipsis())
        .then(ident().or_not())
        .then(type_default.or_not())
        .map_with(|((pack, name), default), e| TemplateParam {
            kind: TemplateParamKind::Type,
            name,
            pack,
            default,
            span: sp(e),
        });
    let template_param = kw(Keyword::Template)
        .ignore_then(skip_with("`<`", Ctx::skip_angles))
        .ignore_then(choice((kw(Keyword::Typename), kw(Keyword::Class))))
        .ignore_then(ellipsis())
        .then(ident().or_not())
        .then(
            punct(Punct::Assign)
                .ignore_then(ty.type_id.clone())
                .map(TemplateArg::Type)
                .or_not(),
        )
        .map_with(|((pack, name), default), e| TemplateParam {
            kind: TemplateParamKind::Template,
            name,
            pack,
            default,
            span: sp(e),
        });
    let value_default = punct(Punct::Assign).ignore_then(choice((
        guard("type", Ctx::type_starts)
            .ignore_then(ty.type_id.clone())
            .map(TemplateArg::Type),
        super::expr::template_arg_expr(ep.expr.clone(), ty.path.clone()).map(TemplateArg::Expr),
    )));
    let value_param = ty
        .spec
        .clone()
        .then(ty.ptr_ops.clone())
        .then(ellipsis())
        .then(ident().or_not())
        .then(value_default.or_not())
        .map_with(|((((spec, ptrs), pack), name), default), e| TemplateParam {
            kind: TemplateParamKind::Value(build_type(&spec, &ptrs, &[])),
            name,
            pack,
            default,
            span: sp(e),
        });
    // `float (*F)(float)`: a function pointer parameter. Its argument names a function;
    // the parameter's type (kept as the return type) is not checked against it.
    let fn_ptr_param = ty
        .spec
        .clone()
        .then_ignore(punct(Punct::LParen))
        .then_ignore(punct(Punct::Star))
        .then(ident())
        .then_ignore(punct(Punct::RParen))
        .then_ignore(skip_with("`(`", Ctx::skip_group))
        .map_with(|(spec, name), e| TemplateParam {
            kind: TemplateParamKind::Value(build_type(&spec, &[], &[])),
            name: Some(name),
            pack: false,
            default: None,
            span: sp(e),
        });
    kw(Keyword::Template)
        .ignore_then(
            choice((type_param, template_param, fn_ptr_param, value_param))
                .labelled("template parameter")
                .separated_by(punct(Punct::Comma))
                .collect::<Vec<_>>()
                .delimited_by(punct(Punct::Lt), punct(Punct::Gt)),
        )
        .boxed()
}

/// `using X = T;` and `typedef T X, *Y;`: aliases, also allowed inside functions.
fn alias_items<'a>(ep: &ExprParsers<'a>) -> BoxedP<'a, Vec<Item>> {
    let ty = &ep.types;
    let semi = || punct(Punct::Semi);
    let using_alias = kw(Keyword::Using)
        .ignore_then(ident())
        .then_ignore(ty.attrs.clone())
        .then_ignore(punct(Punct::Assign))
        .then(ty.type_id.clone())
        .then_ignore(semi())
        .map_with(|(name, ty), e| {
            vec![Item::Alias {
                name,
                ty,
                span: sp(e),
            }]
        });
    let alias_declarator = ty
        .ptr_ops
        .clone()
        .then(ident())
        .then(ty.dims.clone())
        .map(|((ptrs, name), dims)| (ptrs, name, dims));
    let typedef = kw(Keyword::Typedef)
        .ignore_then(ty.spec.clone())
        .then(
            alias_declarator
                .separated_by(punct(Punct::Comma))
                .at_least(1)
                .collect::<Vec<_>>(),
        )
        .then_ignore(semi())
        .map_with(|(spec, ds), e| {
            let span = sp(e);
            ds.into_iter()
                .map(|(ptrs, name, dims)| Item::Alias {
                    name,
                    ty: build_type(&spec, &ptrs, &dims),
                    span,
                })
                .collect::<Vec<_>>()
        });
    choice((using_alias, typedef)).boxed()
}

/// The body of an enum: `{ A, B = 3, }`.
fn enum_body<'a>(ep: &ExprParsers<'a>) -> BoxedP<'a, Vec<(Ident, Option<Expr>)>> {
    ident()
        .then_ignore(ep.types.attrs.clone())
        .then(punct(Punct::Assign).ignore_then(ep.assign.clone()).or_not())
        .separated_by(punct(Punct::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(punct(Punct::LBrace), punct(Punct::RBrace))
        .boxed()
}

/// `enum E : T { ... };`, `enum class E { ... };`, `typedef enum { ... } E;`.
fn enum_items<'a>(ep: &ExprParsers<'a>) -> BoxedP<'a, Vec<Item>> {
    let ty = &ep.types;
    let scoped = choice((kw(Keyword::Class), kw(Keyword::Struct)))
        .or_not()
        .map(|s| s.is_some());
    let plain = kw(Keyword::Enum)
        .ignore_then(scoped)
        .then_ignore(ty.attrs.clone())
        .then(ident().or_not())
        .then(punct(Punct::Colon).ignore_then(ty.type_id.clone()).or_not())
        .then(enum_body(ep))
        .then_ignore(punct(Punct::Semi))
        .map_with(|(((scoped, name), underlying), variants), e| {
            vec![Item::Enum(EnumDef {
                name,
                scoped,
                underlying,
                variants,
                span: sp(e),
            })]
        });
    let typedef = kw(Keyword::Typedef)
        .ignore_then(kw(Keyword::Enum))
        .ignore_then(ident().or_not())
        .then(punct(Punct::Colon).ignore_then(ty.type_id.clone()).or_not())
        .then(enum_body(ep))
        .then(ident())
        .then_ignore(punct(Punct::Semi))
        .map_with(|(((tag, underlying), variants), alias), e| {
            let span = sp(e);
            let mut items = vec![Item::Enum(EnumDef {
                name: Some(tag.clone().unwrap_or_else(|| alias.clone())),
                scoped: false,
                underlying,
                variants,
                span,
            })];
            if let Some(tag) = tag.filter(|t| t.name != alias.name) {
                items.push(Item::Alias {
                    name: alias,
                    ty: named_type(&tag.name, tag.span),
                    span,
                });
            }
            items
        });
    let forward = kw(Keyword::Enum)
        .then(choice((kw(Keyword::Class), kw(Keyword::Struct))).or_not())
        .then(ident())
        .then(punct(Punct::Colon).ignore_then(ty.type_id.clone()).or_not())
        .then(punct(Punct::Semi))
        .to(Vec::new());
    choice((plain, typedef, forward)).boxed()
}

/// The declarations allowed inside a function body: aliases and enums.
pub(crate) fn local_items<'a>(ep: &ExprParsers<'a>) -> BoxedP<'a, Vec<Item>> {
    choice((alias_items(ep), enum_items(ep))).boxed()
}

fn item_parser<'a>(ep: &ExprParsers<'a>) -> BoxedP<'a, Vec<Item>> {
    recursive(|item| item_parser_with(ep, item.boxed())).boxed()
}

/// The declaration parser, given itself as `item`: namespaces and templates hold
/// declarations, and function bodies may declare classes.
fn item_parser_with<'a>(
    ep: &ExprParsers<'a>,
    item: BoxedP<'a, Vec<Item>>,
) -> BoxedP<'a, Vec<Item>> {
    let sp_ = stmt_parsers(ep, item.clone());
    let ty = ep.types.clone();
    let semi = || punct(Punct::Semi);

    let param = ty
        .attrs
        .clone()
        .then(ty.spec.clone())
        .then(ty.ptr_ops.clone())
        .then(punct(Punct::Ellipsis).or_not())
        .then(ident().or_not())
        .then(ty.attrs.clone())
        .then(ty.dims.clone())
        .then(ty.attrs.clone())
        .then(punct(Punct::Assign).ignore_then(ep.assign.clone()).or_not())
        .map_with(
            |((((((((mut attrs, spec), ptrs), pack), name), a1), dims), a2), default), e| {
                attrs.extend(a1);
                attrs.extend(a2);
                Param {
                    ty: build_type(&spec, &ptrs, &dims),
                    name,
                    attrs,
                    default,
                    pack: pack.is_some(),
                    span: sp(e),
                }
            },
        )
        .labelled("parameter");
    let params = param
        .separated_by(punct(Punct::Comma))
        .collect::<Vec<_>>()
        .delimited_by(punct(Punct::LParen), punct(Punct::RParen))
        .map(drop_void)
        .labelled("parameter list")
        .boxed();
    let operator_name = kw(Keyword::Operator)
        .ignore_then(choice((
            punct(Punct::LParen)
                .then(punct(Punct::RParen))
                .to("()".to_string()),
            punct(Punct::LBracket)
                .then(punct(Punct::RBracket))
                .to("[]".to_string()),
            select! { Token::Punct(p) => p.as_str().to_string() },
        )))
        .map_with(|op, e| Ident {
            name: format!("operator{op}"),
            span: sp(e),
        });
    // A declarator-id: `f`, `f<int>`, `Tile<T>::load`, `operator+`, `Tile<T>::operator[]`.
    let declarator_id = ty
        .segment
        .clone()
        .then_ignore(punct(Punct::ColonColon))
        .repeated()
        .collect::<Vec<_>>()
        .then(choice((
            operator_name.map(|name| PathSegment {
                name,
                args: Vec::new(),
            }),
            ty.segment.clone(),
        )))
        .map_with(|(mut segments, last), e| {
            segments.push(last);
            Path {
                global: false,
                segments,
                span: sp(e),
            }
        })
        .boxed();
    let fn_name = ty
        .ptr_ops
        .clone()
        .then(declarator_id.clone())
        .labelled("identifier");
    let body = choice((
        sp_.block.clone().map(FnBody::Block),
        semi().to(FnBody::Declaration),
        punct(Punct::Assign)
            .ignore_then(choice((
                kw(Keyword::Default).to(FnBody::Default),
                kw(Keyword::Delete).to(FnBody::Delete),
            )))
            .then_ignore(semi()),
    ))
    .boxed();
    let trailing_ret = punct(Punct::Arrow).ignore_then(ty.type_id.clone()).or_not();
    let function = ty
        .attrs
        .clone()
        .then(ty.spec.clone())
        .then(fn_name)
        .then(ty.attrs.clone())
        .then(params.clone())
        .then(method_quals())
        .then(trailing_ret)
        .then(ty.attrs.clone())
        .then(body.clone())
        .map_with(
            |(
                (((((((mut attrs, spec), (ptrs, name)), a1), params), quals), trailing), a2),
                body,
            ),
             e| {
                attrs.extend(a1);
                attrs.extend(a2);
                FnParts {
                    attrs,
                    spec,
                    ptrs,
                    name,
                    params,
                    quals,
                    trailing,
                    body,
                    span: sp(e),
                }
            },
        )
        .boxed();
    let as_items =
        |parts: FnParts, kind: FnKind, e: &mut super::Extra<'a, '_>| match finish_function(
            parts, kind,
        ) {
            Ok(item) => item.into_iter().collect::<Vec<_>>(),
            Err(message) => {
                let span = e.span();
                e.emit(custom_error(span, message, "not available in MSL"));
                vec![Item::Error(sp(e))]
            }
        };
    let fn_words = select! {
        Token::Keyword(Keyword::Inline) => FnSpecifiers { inline: true, ..FnSpecifiers::default() },
        Token::Keyword(Keyword::Constexpr) => FnSpecifiers { constexpr: true, ..FnSpecifiers::default() },
        Token::Keyword(Keyword::Explicit) => FnSpecifiers::default(),
        Token::Keyword(Keyword::Static) => FnSpecifiers { is_static: true, ..FnSpecifiers::default() },
        Token::Keyword(Keyword::Friend) => FnSpecifiers::default(),
    }
    .repeated()
    .collect::<Vec<_>>()
    .map(|ws| {
        ws.into_iter().fold(FnSpecifiers::default(), |a, w| FnSpecifiers {
            kernel: a.kernel || w.kernel,
            inline: a.inline || w.inline,
            is_static: a.is_static || w.is_static,
            constexpr: a.constexpr || w.constexpr,
        })
    });

    // Struct members.
    let access = select! {
        Token::Keyword(Keyword::Public) => (),
        Token::Keyword(Keyword::Private) => (),
        Token::Keyword(Keyword::Protected) => (),
    }
    .then(punct(Punct::Colon))
    .to(Vec::new());
    let member_init = ty
        .path
        .clone()
        .then(choice((
            ep.args.clone().map(|a| (a, false)),
            ep.brace_list.clone().map(|a| (a, true)),
        )))
        .map_with(|(name, (args, brace)), e| MemberInit {
            name,
            args,
            brace,
            span: sp(e),
        });
    let ctor = guard("constructor", Ctx::ctor_starts)
        .ignore_then(ty.attrs.clone())
        .then(fn_words)
        .then(ident())
        .then(params.clone())
        .then(method_quals())
        .then(
            punct(Punct::Colon)
                .ignore_then(
                    member_init
                        .separated_by(punct(Punct::Comma))
                        .at_least(1)
                        .collect::<Vec<_>>(),
                )
                .or_not(),
        )
        .then(body.clone())
        .map_with(
            |((((((attrs, specifiers), name), params), quals), inits), body), e| {
                let span = sp(e);
                let (body, deleted) = match body {
                    FnBody::Block(b) => (Some(b), false),
                    FnBody::Declaration => (None, false),
                    FnBody::Delete => (None, true),
                    FnBody::Default if params.is_empty() => (
                        Some(Block {
                            stmts: Vec::new(),
                            span,
                        }),
                        false,
                    ),
                    FnBody::Default => return Vec::new(),
                };
                vec![Item::Function(FunctionDef {
                    ret: named_type(&name.name, name.span),
                    name,
                    scope: Vec::new(),
                    spec_args: None,
                    kind: FnKind::Constructor,
                    specifiers,
                    attrs,
                    params,
                    method_quals: quals,
                    inits: inits.unwrap_or_default(),
                    deleted,
                    body,
                    span,
                })]
            },
        );
    let dtor = fn_words
        .ignore_then(punct(Punct::Tilde))
        .ignore_then(ident())
        .then_ignore(punct(Punct::LParen))
        .then_ignore(punct(Punct::RParen))
        .then_ignore(method_quals())
        .then(body.clone())
        .map_with(|(name, body), e| {
            let span = sp(e);
            let body = match body {
                FnBody::Block(b) => Some(b),
                _ => None,
            };
            vec![Item::Function(FunctionDef {
                ret: named_type("void", name.span),
                name,
                scope: Vec::new(),
                spec_args: None,
                kind: FnKind::Destructor,
                specifiers: FnSpecifiers::default(),
                attrs: Vec::new(),
                params: Vec::new(),
                method_quals: Qualifiers::default(),
                inits: Vec::new(),
                deleted: false,
                body,
                span,
            })]
        });
    let conversion = fn_words
        .then_ignore(kw(Keyword::Operator))
        .then(ty.type_id.clone())
        .then_ignore(punct(Punct::LParen))
        .then_ignore(punct(Punct::RParen))
        .then(method_quals())
        .then(body.clone())
        .map_with(|(((specifiers, target), quals), body), e| {
            let span = sp(e);
            let body = match body {
                FnBody::Block(b) => Some(b),
                _ => return Vec::new(),
            };
            vec![Item::Function(FunctionDef {
                name: Ident {
                    name: "operator conversion".into(),
                    span: target.span,
                },
                ret: target,
                scope: Vec::new(),
                spec_args: None,
                kind: FnKind::Conversion,
                specifiers,
                attrs: Vec::new(),
                params: Vec::new(),
                method_quals: quals,
                inits: Vec::new(),
                deleted: false,
                body,
                span,
            })]
        });
    let method = function
        .clone()
        .map_with(move |parts, e| as_items(parts, FnKind::Normal, e));
    // An unnamed bit-field (`uint : 0;`) declares no name: it is padding.
    let unnamed_bit_field = punct(Punct::Colon).rewind().map_with(|_, e| Declarator {
        ptrs: Vec::new(),
        name: Ident {
            name: String::new(),
            span: sp(e),
        },
        attrs: Vec::new(),
        dims: Vec::new(),
    });
    let field_declarator = ty
        .declarator
        .clone()
        .or(unnamed_bit_field)
        .then(punct(Punct::Colon).ignore_then(ep.assign.clone()).or_not())
        .then(
            choice((
                punct(Punct::Assign)
                    .ignore_then(ep.assign.clone())
                    .map(Init::Assign),
                ep.brace_list.clone().map(Init::Brace),
            ))
            .or_not(),
        )
        .map_with(|((declarator, bit_width), init), e| {
            // The width is a conditional expression: in `uint n : 3 = 1;` the `= 1` is the
            // default member initializer.
            let (bit_width, init) = match bit_width {
                Some(Expr {
                    kind:
                        ExprKind::Assign {
                            op: None, lhs, rhs, ..
                        },
                    ..
                }) if init.is_none() => (Some(*lhs), Some(Init::Assign(*rhs))),
                w => (w, init),
            };
            FieldDeclarator {
                declarator,
                bit_width,
                init,
                span: sp(e),
            }
        });
    let fields = ty
        .attrs
        .clone()
        .then(ty.spec.clone())
        .then(
            field_declarator
                .separated_by(punct(Punct::Comma))
                .at_least(1)
                .collect::<Vec<_>>(),
        )
        .then_ignore(semi())
        .map_with(|((attrs, spec), ds), e| {
            let span = sp(e);
            if (spec.storage.is_static || spec.storage.constexpr)
                && ds.iter().any(|d| d.bit_width.is_some())
            {
                // C++ gives a width only to non-static data members.
                let whole = e.span();
                e.emit(custom_error(
                    whole,
                    "a static data member cannot be a bit-field (C++ gives a width only to non-static members)",
                    "not available in MSL",
                ));
                return MemberOrField::Items(vec![Item::Error(span)]);
            }
            if spec.storage.is_static || spec.storage.constexpr {
                let vars = ds
                    .into_iter()
                    .map(|fd| {
                        let d = fd.declarator;
                        let mut all = attrs.clone();
                        all.extend(d.attrs);
                        crate::ast::VarDecl {
                            storage: spec.storage,
                            ty: build_type(&spec, &d.ptrs, &d.dims),
                            name: d.name,
                            init: fd.init,
                            attrs: all,
                            span: spec.span.to(fd.span),
                        }
                    })
                    .collect();
                return MemberOrField::Items(vec![Item::Vars(vars)]);
            }
            MemberOrField::Fields(
                ds.into_iter()
                    .map(|fd| {
                        let d = fd.declarator;
                        let mut all = attrs.clone();
                        all.extend(d.attrs);
                        Field {
                            ty: build_type(&spec, &d.ptrs, &d.dims),
                            name: d.name,
                            attrs: all,
                            init: fd.init,
                            bit_width: fd.bit_width,
                            span: spec.span.to(fd.span),
                        }
                    })
                    .collect(),
            )
        });
    let static_assert = kw(Keyword::StaticAssert)
        .ignore_then(
            ep.assign
                .clone()
                .then(punct(Punct::Comma).ignore_then(ep.string.clone()).or_not())
                .delimited_by(punct(Punct::LParen), punct(Punct::RParen)),
        )
        .then_ignore(semi())
        .map_with(|(cond, message), e| {
            vec![Item::StaticAssert {
                cond,
                message,
                span: sp(e),
            }]
        })
        .boxed();
    let using_namespace = kw(Keyword::Using)
        .ignore_then(kw(Keyword::Namespace))
        .ignore_then(ty.path.clone())
        .then_ignore(semi())
        .map_with(|p, e| vec![Item::UsingNamespace(p, sp(e))])
        .boxed();
    let using_decl = kw(Keyword::Using)
        .ignore_then(kw(Keyword::Typename).or_not())
        .ignore_then(ty.path.clone())
        .then_ignore(semi())
        .map_with(|p, e| vec![Item::UsingDecl(p, sp(e))])
        .boxed();
    let friend = kw(Keyword::Friend)
        .ignore_then(skip_with("declaration", Ctx::skip_decl))
        .to(Vec::new())
        .boxed();
    let head = template_head(ep);
    let aliases = alias_items(ep);
    let enums = enum_items(ep);
    let struct_kw = || {
        choice((
            kw(Keyword::Struct).to(false),
            kw(Keyword::Class).to(false),
            kw(Keyword::Union).to(true),
        ))
    };
    let base = select! {
        Token::Keyword(Keyword::Public) => (),
        Token::Keyword(Keyword::Private) => (),
        Token::Keyword(Keyword::Protected) => (),
        Token::Keyword(Keyword::Virtual) => (),
    }
    .repeated()
    .ignore_then(ty.type_id.clone());
    let bases = punct(Punct::Colon)
        .ignore_then(
            base.separated_by(punct(Punct::Comma))
                .at_least(1)
                .collect::<Vec<_>>(),
        )
        .or_not()
        .map(Option::unwrap_or_default)
        .boxed();

    // Structs nest (a struct member may be a struct), so members and structs are built
    // together.
    let struct_parts = recursive(|struct_parts| {
        let nested_struct = struct_kw()
            .then_ignore(ty.attrs.clone())
            .then(ident())
            .then(ty.targs.clone().or_not())
            .then(bases.clone())
            .then(struct_parts.clone())
            .then_ignore(semi())
            .map_with(|((((is_union, name), spec_args), bases), members), e| {
                vec![make_struct(
                    name,
                    spec_args,
                    bases,
                    members,
                    is_union,
                    sp(e),
                )]
            });
        // `union { uint u; float f; };` (or an anonymous struct, as in a union of a struct
        // of halves and a word): its members are members of the enclosing struct.
        // `union { uint u; float f; } bits;` declares members of an unnamed type (arrays of
        // it too: `} v[2];`).
        let anonymous_member = struct_kw()
            .then(struct_parts)
            .then(
                ident()
                    .then(ty.dims.clone())
                    .separated_by(punct(Punct::Comma))
                    .collect::<Vec<_>>(),
            )
            .then_ignore(semi())
            .map_with(|((is_union, members), names), e| {
                let span = sp(e);
                let prefix = if names.is_empty() {
                    crate::ast::ANONYMOUS_MEMBER
                } else {
                    "__unnamed"
                };
                let name = Ident {
                    name: format!("{prefix}{}", span.start),
                    span,
                };
                match make_struct(name, None, Vec::new(), members, is_union, span) {
                    Item::Struct(def) => MemberOrField::Anonymous(def, names),
                    other => MemberOrField::Items(vec![other]),
                }
            });
        let member = recursive(|member| {
            let templated = head.clone().then(member).map_with(
                |(params, items): (Vec<TemplateParam>, Vec<MemberOrField>), e| {
                    let span = sp(e);
                    let items: Vec<Item> = items
                        .into_iter()
                        .flat_map(|m| match m {
                            MemberOrField::Items(i) => i,
                            MemberOrField::Anonymous(u, _) => {
                                vec![unsupported_item("templated data members", u.span)]
                            }
                            MemberOrField::Fields(f) => f
                                .into_iter()
                                .map(|f| unsupported_item("templated data members", f.span))
                                .collect(),
                        })
                        .collect();
                    items
                        .into_iter()
                        .map(|item| Item::Template {
                            params: params.clone(),
                            item: Box::new(item),
                            span,
                        })
                        .collect::<Vec<_>>()
                },
            );
            let items = choice((
                access.clone().boxed(),
                semi().to(Vec::new()).boxed(),
                static_assert.clone(),
                templated.boxed(),
                enums.clone(),
                aliases.clone(),
                using_decl.clone(),
                friend.clone(),
                nested_struct.boxed(),
                ctor.clone().boxed(),
                dtor.clone().boxed(),
                conversion.clone().boxed(),
                method.clone().boxed(),
            ))
            .map(MemberOrField::Items);
            choice((anonymous_member.boxed(), items, fields.clone()))
                .labelled("member declaration")
                .recover_with(via_parser(
                    skip_with("member declaration", Ctx::skip_decl)
                        .map_with(|_, e| MemberOrField::Items(vec![Item::Error(sp(e))])),
                ))
                .map(|m| vec![m])
                .boxed()
        });
        member
            .repeated()
            .collect::<Vec<Vec<MemberOrField>>>()
            .map(|ms| ms.into_iter().flatten().collect::<Vec<_>>())
            .delimited_by(punct(Punct::LBrace), punct(Punct::RBrace))
            .boxed()
    })
    .boxed();

    let struct_def = struct_kw()
        .then_ignore(ty.attrs.clone())
        .then(ident())
        .then(ty.targs.clone().or_not())
        .then(bases.clone())
        .then(struct_parts.clone())
        .then_ignore(semi())
        .map_with(|((((is_union, name), spec_args), bases), members), e| {
            vec![make_struct(
                name,
                spec_args,
                bases,
                members,
                is_union,
                sp(e),
            )]
        })
        .boxed();
    let struct_fwd = struct_kw()
        .then(ident())
        .then(ty.targs.clone().or_not())
        .then_ignore(semi())
        .map_with(|((is_union, name), spec_args), e| {
            vec![Item::Struct(StructDef {
                name,
                spec_args,
                bases: Vec::new(),
                fields: Vec::new(),
                members: Vec::new(),
                forward: true,
                is_union,
                span: sp(e),
            })]
        })
        .boxed();
    // `struct { float a, b; } v, w = {1, 2};`: a class and variables of it.
    let var_init = choice((
        punct(Punct::Assign)
            .ignore_then(ep.assign.clone())
            .map(Init::Assign),
        ep.brace_list.clone().map(Init::Brace),
    ));
    let struct_with_vars = guard("declaration", Ctx::class_with_vars_starts)
        .ignore_then(struct_kw())
        .then_ignore(ty.attrs.clone())
        .then(ident().or_not())
        .then(bases.clone())
        .then(struct_parts.clone())
        .then(
            ty.declarator
                .clone()
                .then(var_init.or_not())
                .map_with(|(d, init), e| (d, init, sp(e)))
                .separated_by(punct(Punct::Comma))
                .at_least(1)
                .collect::<Vec<_>>(),
        )
        .then_ignore(semi())
        .map_with(|((((is_union, name), bases), members), declarators), e| {
            let span = sp(e);
            let name = name.unwrap_or_else(|| Ident {
                name: format!("__unnamed{}", span.start),
                span,
            });
            let spec = Spec {
                quals: Qualifiers::default(),
                storage: Storage::default(),
                fns: FnSpecifiers::default(),
                stage: None,
                forbidden: None,
                base: named_type(&name.name, name.span),
                span: name.span,
            };
            let vars = make_vars(&spec, declarators);
            vec![
                make_struct(name, None, bases, members, is_union, span),
                Item::Vars(vars),
            ]
        })
        .boxed();
    let typedef_struct = kw(Keyword::Typedef)
        .ignore_then(struct_kw())
        .then(ident().or_not())
        .then(struct_parts)
        .then(ident())
        .then_ignore(semi())
        .map_with(move |(((is_union, tag), members), alias), e| {
            let span = sp(e);
            let name = tag.clone().unwrap_or_else(|| alias.clone());
            let mut items = vec![make_struct(name, None, Vec::new(), members, is_union, span)];
            if let Some(tag) = tag.filter(|t| t.name != alias.name) {
                items.push(Item::Alias {
                    name: alias,
                    ty: named_type(&tag.name, tag.span),
                    span,
                });
            }
            items
        })
        .boxed();
    let functions = function
        .clone()
        .map_with(move |parts, e| as_items(parts, FnKind::Normal, e))
        .boxed();
    let vars = ty
        .attrs
        .clone()
        .then(global_var_decl(ep))
        .then_ignore(semi())
        .map(|(attrs, mut vars)| {
            for v in &mut vars {
                v.attrs.splice(0..0, attrs.iter().cloned());
            }
            vec![Item::Vars(vars)]
        })
        .boxed();
    let sampler_vars = guard("a sampler", Ctx::starts_sampler_var)
        .ignore_then(local_var_decl(ep))
        .then_ignore(semi())
        .map(|vars| vec![Item::Vars(vars)])
        .boxed();
    // `template [[host_name("k_f32")]] [[kernel]] decltype(k<float>) k<float>;` or with a
    // written-out parameter list; `template struct S<float>;` instantiates nothing we need.
    let instantiation = kw(Keyword::Template)
        .ignore_then(guard("`<`", |c, i| !c.is(i, Punct::Lt)))
        .ignore_then(choice((
            struct_kw()
                .then(ty.path.clone())
                .then(semi())
                .to(Vec::new()),
            ty.attrs
                .clone()
                .then(ty.spec.clone())
                .then(ty.ptr_ops.clone())
                .then(declarator_id)
                .then(ty.attrs.clone())
                .then(params.clone().or_not())
                .then_ignore(method_quals())
                .then(ty.attrs.clone())
                .then_ignore(semi())
                .map_with(|((((((mut attrs, spec), _), name), a1), params), a2), e| {
                    attrs.extend(a1);
                    attrs.extend(a2);
                    let mut specifiers = spec.fns;
                    specifiers.kernel |= attrs.iter().any(|a| a.name.name == "kernel");
                    vec![Item::Instantiation(Instantiation {
                        attrs,
                        specifiers,
                        name,
                        params,
                        span: sp(e),
                    })]
                }),
        )))
        .boxed();

    let namespace_alias = kw(Keyword::Namespace)
        .ignore_then(ident())
        .then_ignore(punct(Punct::Assign))
        .then(ty.path.clone())
        .then_ignore(semi())
        .map_with(|(name, target), e| {
            vec![Item::NamespaceAlias {
                name,
                target,
                span: sp(e),
            }]
        });
    let namespace = kw(Keyword::Namespace)
        .ignore_then(
            ident()
                .separated_by(punct(Punct::ColonColon))
                .collect::<Vec<_>>(),
        )
        .then(
            item.clone()
                .repeated()
                .collect::<Vec<Vec<Item>>>()
                .delimited_by(punct(Punct::LBrace), punct(Punct::RBrace)),
        )
        .map_with(|(names, items), e| {
            let span = sp(e);
            let mut items: Vec<Item> = items.into_iter().flatten().collect();
            let mut names = names.into_iter().rev().peekable();
            if names.peek().is_none() {
                return vec![Item::Namespace {
                    name: None,
                    items,
                    span,
                }];
            }
            for name in names {
                items = vec![Item::Namespace {
                    name: Some(name),
                    items,
                    span,
                }];
            }
            items
        });
    let templated =
        head.clone()
            .then(item)
            .map_with(|(params, items): (Vec<TemplateParam>, Vec<Item>), e| {
                let span = sp(e);
                items
                    .into_iter()
                    .map(|item| Item::Template {
                        params: params.clone(),
                        item: Box::new(item),
                        span,
                    })
                    .collect::<Vec<_>>()
            });
    choice((
        namespace_alias.boxed(),
        namespace.boxed(),
        using_namespace.clone(),
        typedef_struct.clone(),
        enums.clone(),
        aliases.clone(),
        using_decl.clone(),
        templated.boxed(),
        instantiation.clone(),
        static_assert.clone(),
        semi().to(Vec::new()).boxed(),
        struct_def.clone(),
        struct_fwd.clone(),
        struct_with_vars.clone(),
        sampler_vars.clone(),
        functions.clone(),
        vars.clone(),
    ))
    .labelled("declaration")
    .recover_with(via_parser(
        skip_with("declaration", Ctx::skip_decl).map_with(|_, e| vec![Item::Error(sp(e))]),
    ))
    .boxed()
}

/// A struct member: declarations, or data members.
#[derive(Clone)]
enum MemberOrField {
    Items(Vec<Item>),
    Fields(Vec<Field>),
    /// A union or struct type without a name, and the members declared of it; with none,
    /// an anonymous member named like the type.
    Anonymous(StructDef, Vec<(Ident, Vec<Dim>)>),
}

fn make_struct(
    name: Ident,
    spec_args: Option<Vec<TemplateArg>>,
    bases: Vec<TypeExpr>,
    members: Vec<MemberOrField>,
    is_union: bool,
    span: Span,
) -> Item {
    let mut fields = Vec::new();
    let mut items = Vec::new();
    for m in members {
        match m {
            MemberOrField::Fields(f) => fields.extend(f),
            MemberOrField::Items(i) => items.extend(i),
            MemberOrField::Anonymous(u, names) => {
                let names = if names.is_empty() {
                    vec![(u.name.clone(), Vec::new())]
                } else {
                    names
                };
                for (name, dims) in names {
                    let mut ty = named_type(&u.name.name, u.span);
                    for dim in dims.iter().rev() {
                        ty = TypeExpr {
                            span: u.span.to(dim.span),
                            kind: TypeKind::Array {
                                elem: Box::new(ty),
                                len: dim.len.clone().map(Box::new),
                            },
                        };
                    }
                    fields.push(Field {
                        ty,
                        name,
                        attrs: Vec::new(),
                        init: None,
                        bit_width: None,
                        span: u.span,
                    });
                }
                items.push(Item::Struct(u));
            }
        }
    }
    Item::Struct(StructDef {
        name,
        spec_args,
        bases,
        fields,
        members: items,
        forward: false,
        is_union,
        span,
    })
}

fn unsupported_item(what: &str, span: Span) -> Item {
    Item::Unsupported {
        what: what.to_string(),
        span,
    }
}
