//! Top-level declarations: functions, structs, program-scope variables, aliases,
//! namespaces, `using`, `static_assert`, and the constructs recognized but not supported yet
//! (templates, enums, unions, vertex and fragment functions).

use chumsky::prelude::*;

use crate::ast::{
    Attribute, Block, Field, FnSpecifiers, FunctionDef, Ident, Item, Param, StructDef,
    TranslationUnit,
};
use crate::source::Span;
use crate::token::{Keyword, Punct, Token};

use super::common::{custom_error, guard, ident, kw, path, punct, skip_with};
use super::expr::{ExprParsers, expr_parsers};
use super::stmt::{global_var_decl, stmt_parsers};
use super::types::{Declarator, PtrOp, Spec, build_type, named_type};
use super::{BoxedP, Ctx, Ex, In, sp};

/// A parsed function head and body, before deciding what item it becomes.
struct FnParts {
    attrs: Vec<Attribute>,
    spec: Spec,
    ptrs: Vec<PtrOp>,
    name: Ident,
    params: Vec<Param>,
    body: Option<Block>,
    span: Span,
}

/// A data member's declarator, with what makes it unsupported.
#[derive(Clone)]
struct FieldDeclarator {
    declarator: Declarator,
    bit_field: bool,
    initialized: bool,
    span: Span,
}

/// What a struct member turned into.
#[derive(Clone)]
enum Member {
    Fields(Vec<Field>),
    Method(FunctionDef),
    Nothing,
    Unsupported(&'static str, Span),
    Invalid,
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

/// Finishes a function: a [`FunctionDef`], or an `Unsupported` item for vertex and fragment
/// functions; fails with the message for a specifier MSL forbids (`virtual`).
fn finish_function(parts: FnParts) -> Result<Item, &'static str> {
    let FnParts {
        attrs,
        spec,
        ptrs,
        name,
        params,
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
        return Ok(Item::Unsupported {
            what: what.to_string(),
            span,
        });
    }
    let mut specifiers = spec.fns;
    specifiers.kernel |= attrs.iter().any(|a| a.name.name == "kernel");
    Ok(Item::Function(FunctionDef {
        name,
        specifiers,
        attrs,
        ret: build_type(&spec, &ptrs, &[]),
        params,
        body,
        span,
    }))
}

/// `(void)` means no parameters.
fn drop_void(params: Vec<Param>) -> Vec<Param> {
    let is_void = |p: &Param| {
        p.name.is_none()
            && matches!(&p.ty.kind, crate::ast::TypeKind::Named { path, args }
                if args.is_empty() && path.to_text() == "void")
    };
    if params.len() == 1 && is_void(&params[0]) {
        Vec::new()
    } else {
        params
    }
}

fn item_parser<'a>(ep: &ExprParsers<'a>) -> BoxedP<'a, Vec<Item>> {
    let sp_ = stmt_parsers(ep);
    let ty = ep.types.clone();
    let semi = || punct(Punct::Semi);

    let param = ty
        .attrs
        .clone()
        .then(ty.spec.clone())
        .then(ty.ptr_ops.clone())
        .then(ident().or_not())
        .then(ty.attrs.clone())
        .then(ty.dims.clone())
        .then(ty.attrs.clone())
        .then(punct(Punct::Assign).ignore_then(ep.assign.clone()).or_not())
        .map_with(
            |(((((((mut attrs, spec), ptrs), name), a1), dims), a2), default), e| {
                attrs.extend(a1);
                attrs.extend(a2);
                Param {
                    ty: build_type(&spec, &ptrs, &dims),
                    name,
                    attrs,
                    default,
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
    let fn_name = ty
        .ptr_ops
        .clone()
        .then(choice((ident(), operator_name)))
        .labelled("identifier");
    let trailing = select! {
        Token::Keyword(Keyword::Const) => (),
        Token::Keyword(Keyword::Volatile) => (),
        Token::Keyword(Keyword::Noexcept) => (),
        Token::Keyword(Keyword::Device) => (),
        Token::Keyword(Keyword::Constant) => (),
        Token::Keyword(Keyword::Threadgroup) => (),
        Token::Keyword(Keyword::Thread) => (),
    }
    .repeated();
    let body = choice((sp_.block.clone().map(Some), semi().to(None)));
    let function = ty
        .attrs
        .clone()
        .then(ty.spec.clone())
        .then(fn_name)
        .then(ty.attrs.clone())
        .then(params.clone())
        .then_ignore(trailing)
        .then(ty.attrs.clone())
        .then(body.clone())
        .map_with(
            |((((((mut attrs, spec), (ptrs, name)), a1), params), a2), body), e| {
                attrs.extend(a1);
                attrs.extend(a2);
                FnParts {
                    attrs,
                    spec,
                    ptrs,
                    name,
                    params,
                    body,
                    span: sp(e),
                }
            },
        )
        .boxed();
    let as_item = |parts: FnParts, e: &mut super::Extra<'a, '_>| {
        finish_function(parts).unwrap_or_else(|message| {
            let span = e.span();
            e.emit(custom_error(span, message, "not available in MSL"));
            Item::Error(sp(e))
        })
    };

    // Struct members.
    let access = select! {
        Token::Keyword(Keyword::Public) => (),
        Token::Keyword(Keyword::Private) => (),
        Token::Keyword(Keyword::Protected) => (),
    }
    .then(punct(Punct::Colon))
    .to(Member::Nothing);
    let member_static_assert = kw(Keyword::StaticAssert)
        .then(skip_with("`;`", Ctx::skip_decl))
        .to(Member::Nothing);
    let ctor = guard("constructor", Ctx::ctor_starts)
        .ignore_then(ident())
        .then(params.clone())
        .then(
            punct(Punct::Colon)
                .ignore_then(skip_with("`{`", Ctx::skip_to_brace))
                .or_not(),
        )
        .then(body.clone())
        .map_with(|(((name, params), init), body), e| {
            let span = sp(e);
            if init.is_some() {
                return Member::Unsupported("constructor initializer lists", span);
            }
            Member::Method(FunctionDef {
                ret: named_type(&name.name, name.span),
                name,
                specifiers: FnSpecifiers::default(),
                attrs: Vec::new(),
                params,
                body,
                span,
            })
        });
    let dtor = punct(Punct::Tilde)
        .ignore_then(skip_with("declaration", Ctx::skip_decl))
        .map_with(|_, e| Member::Unsupported("destructors", sp(e)));
    let nested = guard("member", Ctx::type_definition_starts)
        .ignore_then(skip_with("declaration", Ctx::skip_decl))
        .map_with(|_, e| Member::Unsupported("nested type declarations", sp(e)));
    let method = function
        .clone()
        .map_with(move |parts, e| match as_item(parts, e) {
            Item::Function(f) => Member::Method(f),
            Item::Unsupported { span, .. } => {
                Member::Unsupported("vertex and fragment functions", span)
            }
            _ => Member::Invalid,
        });
    let field_declarator = ty
        .declarator
        .clone()
        .then(punct(Punct::Colon).ignore_then(ep.assign.clone()).or_not())
        .then(
            choice((
                punct(Punct::Assign)
                    .ignore_then(ep.assign.clone())
                    .ignored(),
                ep.brace_list.clone().ignored(),
            ))
            .or_not(),
        )
        .map_with(|((declarator, bits), init), e| FieldDeclarator {
            declarator,
            bit_field: bits.is_some(),
            initialized: init.is_some(),
            span: sp(e),
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
            if spec.storage.is_static || spec.storage.constexpr {
                return Member::Unsupported("static data members", span);
            }
            if ds.iter().any(|d| d.bit_field) {
                return Member::Unsupported("bit-fields", span);
            }
            if ds.iter().any(|d| d.initialized) {
                return Member::Unsupported("default member initializers", span);
            }
            Member::Fields(
                ds.into_iter()
                    .map(|fd| {
                        let d = fd.declarator;
                        let mut all = attrs.clone();
                        all.extend(d.attrs);
                        Field {
                            ty: build_type(&spec, &d.ptrs, &d.dims),
                            name: d.name,
                            attrs: all,
                            span: spec.span.to(fd.span),
                        }
                    })
                    .collect(),
            )
        });
    let member = choice((
        access.boxed(),
        semi().to(Member::Nothing).boxed(),
        member_static_assert.boxed(),
        ctor.boxed(),
        dtor.boxed(),
        nested.boxed(),
        method.boxed(),
        fields.boxed(),
    ))
    .labelled("member declaration")
    .recover_with(via_parser(
        skip_with("member declaration", Ctx::skip_decl).to(Member::Invalid),
    ))
    .boxed();
    let members = member
        .repeated()
        .collect::<Vec<_>>()
        .delimited_by(punct(Punct::LBrace), punct(Punct::RBrace))
        .boxed();
    let struct_kw = || choice((kw(Keyword::Struct), kw(Keyword::Class)));
    let make_struct = |name: Ident, inherits: bool, members: Vec<Member>, span: Span| -> Item {
        if inherits {
            return Item::Unsupported {
                what: "struct inheritance".into(),
                span,
            };
        }
        let mut fields = Vec::new();
        let mut methods = Vec::new();
        for m in members {
            match m {
                Member::Fields(f) => fields.extend(f),
                Member::Method(f) => methods.push(f),
                Member::Nothing => {}
                Member::Unsupported(what, at) => {
                    return Item::Unsupported {
                        what: what.into(),
                        span: at,
                    };
                }
                Member::Invalid => return Item::Error(span),
            }
        }
        Item::Struct(StructDef {
            name,
            fields,
            methods,
            span,
        })
    };
    let struct_def = struct_kw()
        .ignore_then(ty.attrs.clone())
        .ignore_then(ident())
        .then(
            punct(Punct::Colon)
                .ignore_then(skip_with("`{`", Ctx::skip_to_brace))
                .or_not(),
        )
        .then(members.clone())
        .then_ignore(semi())
        .map_with(move |((name, base), members), e| {
            vec![make_struct(name, base.is_some(), members, sp(e))]
        })
        .boxed();
    let struct_fwd = struct_kw()
        .then(ident())
        .then(semi())
        .to(Vec::new())
        .boxed();
    let typedef_struct = kw(Keyword::Typedef)
        .ignore_then(struct_kw())
        .ignore_then(ident().or_not())
        .then(members)
        .then(ident())
        .then_ignore(semi())
        .map_with(move |((tag, members), alias), e| {
            let span = sp(e);
            let name = tag.clone().unwrap_or_else(|| alias.clone());
            let mut items = vec![make_struct(name, false, members, span)];
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
        })
        .boxed();
    let using_namespace = kw(Keyword::Using)
        .ignore_then(kw(Keyword::Namespace))
        .ignore_then(path())
        .then_ignore(semi())
        .map_with(|p, e| vec![Item::UsingNamespace(p, sp(e))])
        .boxed();
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
        })
        .boxed();
    let using_decl = kw(Keyword::Using)
        .ignore_then(path())
        .then_ignore(semi())
        .map_with(|_, e| unsupported("using-declarations", sp(e)))
        .boxed();
    let template = kw(Keyword::Template)
        .ignore_then(skip_with("declaration", Ctx::skip_decl))
        .map_with(|_, e| unsupported("templates", sp(e)))
        .boxed();
    let enum_or_union = guard("declaration", Ctx::type_definition_starts)
        .ignore_then(select! {
            Token::Keyword(Keyword::Enum) => "enums",
            Token::Keyword(Keyword::Union) => "unions",
        })
        .then_ignore(skip_with("declaration", Ctx::skip_decl))
        .map_with(|what, e| unsupported(what, sp(e)))
        .boxed();
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
    let functions = function
        .map_with(move |parts, e| vec![as_item(parts, e)])
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

    recursive(|item| {
        let namespace = kw(Keyword::Namespace)
            .ignore_then(
                ident()
                    .separated_by(punct(Punct::ColonColon))
                    .collect::<Vec<_>>(),
            )
            .then(
                item.repeated()
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
        choice((
            namespace.boxed(),
            using_namespace.clone(),
            using_alias.clone(),
            using_decl.clone(),
            typedef_struct.clone(),
            typedef.clone(),
            template.clone(),
            enum_or_union.clone(),
            static_assert.clone(),
            semi().to(Vec::new()).boxed(),
            struct_def.clone(),
            struct_fwd.clone(),
            functions.clone(),
            vars.clone(),
        ))
        .labelled("declaration")
        .recover_with(via_parser(
            skip_with("declaration", Ctx::skip_decl).map_with(|_, e| vec![Item::Error(sp(e))]),
        ))
        .boxed()
    })
    .boxed()
}

fn unsupported(what: &str, span: Span) -> Vec<Item> {
    vec![Item::Unsupported {
        what: what.to_string(),
        span,
    }]
}
