//! Types: declaration specifiers (qualifiers, storage, base type), declarators (pointers,
//! references, array dimensions), template arguments and `[[attributes]]`.

use chumsky::prelude::*;

use crate::ast::{
    AddressSpace, Attribute, Expr, FnSpecifiers, Ident, Path, PathSegment, Qualifiers, Storage,
    TemplateArg, TypeExpr, TypeKind,
};
use crate::source::Span;
use crate::token::{Keyword, Punct, Token};

use super::common::{guard, ident, ident_named, kw, punct, skip_with};
use super::{BoxedP, Ctx, sp};

/// Declaration specifiers: everything before the declarator.
#[derive(Clone, Debug)]
pub struct Spec {
    /// `const`, `volatile` and the address space.
    pub quals: Qualifiers,
    /// `static`, `constexpr`.
    pub storage: Storage,
    /// `kernel`, `inline`, `static`, `constexpr` as function specifiers.
    pub fns: FnSpecifiers,
    /// `vertex` or `fragment`: the unsupported function kind.
    pub stage: Option<&'static str>,
    /// The message for a specifier MSL forbids (`virtual`).
    pub forbidden: Option<&'static str>,
    /// The base type.
    pub base: TypeExpr,
    /// The whole specifier sequence.
    pub span: Span,
}

/// A pointer or reference in a declarator.
#[derive(Clone, Debug)]
pub enum PtrOp {
    /// `*` with the pointer's own qualifiers.
    Pointer(Qualifiers, Span),
    /// `&` or `&&`.
    Reference(Span),
}

/// An array dimension `[n]` or `[]`.
#[derive(Clone, Debug)]
pub struct Dim {
    /// The element count.
    pub len: Option<Expr>,
    /// The brackets.
    pub span: Span,
}

/// A named declarator: pointers, the name, array dimensions and attributes.
#[derive(Clone, Debug)]
pub struct Declarator {
    /// Pointers and references, left to right.
    pub ptrs: Vec<PtrOp>,
    /// The declared name.
    pub name: Ident,
    /// Attributes after the name or after the dimensions.
    pub attrs: Vec<Attribute>,
    /// Array dimensions, left to right.
    pub dims: Vec<Dim>,
}

/// The type parsers, built over an expression parser (for array sizes and `decltype`).
#[derive(Clone)]
pub struct TypeParsers<'a> {
    /// Declaration specifiers.
    pub spec: BoxedP<'a, Spec>,
    /// `*`, `* const`, `&` sequences.
    pub ptr_ops: BoxedP<'a, Vec<PtrOp>>,
    /// `[n][m]` sequences.
    pub dims: BoxedP<'a, Vec<Dim>>,
    /// A type without a name: specifiers, pointers, dimensions (casts, `sizeof`, aliases).
    pub type_id: BoxedP<'a, TypeExpr>,
    /// A (qualified) type name with template arguments, e.g. `array<int, 3>`.
    pub named: BoxedP<'a, TypeExpr>,
    /// Template arguments `<...>` after a template name.
    pub targs: BoxedP<'a, Vec<TemplateArg>>,
    /// A qualified name whose segments may carry template arguments:
    /// `Loader<T, 4>::rows`, `T::template apply<U>`, `::metal::max`.
    pub path: BoxedP<'a, Path>,
    /// One path segment: a name with optional template arguments.
    pub segment: BoxedP<'a, PathSegment>,
    /// Zero or more `[[...]]` groups, flattened.
    pub attrs: BoxedP<'a, Vec<Attribute>>,
    /// A named declarator.
    pub declarator: BoxedP<'a, Declarator>,
}

/// One specifier word.
#[derive(Clone, Copy, Debug)]
enum Word {
    Const,
    Volatile,
    Space(AddressSpace),
    Static,
    Constexpr,
    Inline,
    Kernel,
    Stage(&'static str),
    Ignored,
    Forbidden(&'static str),
}

/// A word of a multi-word integer type.
#[derive(Clone, Copy, PartialEq, Debug)]
enum IntWord {
    Unsigned,
    Signed,
    Int,
    Char,
    Short,
    Long,
}

/// `unsigned int` → `uint`, `long long` → `long`, `signed char` → `char`, `unsigned` → `uint`.
fn int_type_name(words: &[IntWord]) -> &'static str {
    let unsigned = words.contains(&IntWord::Unsigned);
    if words.contains(&IntWord::Char) {
        if unsigned { "uchar" } else { "char" }
    } else if words.contains(&IntWord::Short) {
        if unsigned { "ushort" } else { "short" }
    } else if words.contains(&IntWord::Long) {
        if unsigned { "ulong" } else { "long" }
    } else if unsigned {
        "uint"
    } else {
        "int"
    }
}

/// A `Named` type of one segment.
pub fn named_type(name: &str, span: Span) -> TypeExpr {
    TypeExpr {
        kind: TypeKind::Named(Path::simple(name, span)),
        span,
    }
}

/// Builds a declared type from specifiers, pointers and dimensions, following the AST's
/// conventions: with pointers or references the qualifiers go on the pointee
/// (`device const float* p` is `Pointer { Qualified { const device, float } }`); without,
/// they go on top of the array (`threadgroup float t[16]` is
/// `Qualified { threadgroup, Array { float, 16 } }`). Dimensions wrap outermost-first
/// (`float t[4][8]` is `Array { Array { float, 8 }, 4 }`).
pub fn build_type(spec: &Spec, ptrs: &[PtrOp], dims: &[Dim]) -> TypeExpr {
    let start = spec.span;
    let qualify = |t: TypeExpr| {
        if spec.quals == Qualifiers::default() {
            t
        } else {
            TypeExpr {
                span: start.to(t.span),
                kind: TypeKind::Qualified {
                    quals: spec.quals,
                    inner: Box::new(t),
                },
            }
        }
    };
    let wrap_dims = |mut t: TypeExpr| {
        for dim in dims.iter().rev() {
            t = TypeExpr {
                span: start.to(dim.span),
                kind: TypeKind::Array {
                    elem: Box::new(t),
                    len: dim.len.clone().map(Box::new),
                },
            };
        }
        t
    };
    if ptrs.is_empty() {
        return qualify(wrap_dims(spec.base.clone()));
    }
    let mut t = qualify(spec.base.clone());
    for op in ptrs {
        t = match op {
            PtrOp::Pointer(quals, span) => TypeExpr {
                span: start.to(*span),
                kind: TypeKind::Pointer {
                    pointee: Box::new(t),
                    quals: *quals,
                },
            },
            PtrOp::Reference(span) => TypeExpr {
                span: start.to(*span),
                kind: TypeKind::Reference {
                    referent: Box::new(t),
                },
            },
        };
    }
    wrap_dims(t)
}

/// Qualifier words allowed after a base type or a `*`.
fn cv_word<'a>() -> impl Parser<'a, super::In<'a>, Word, super::Ex<'a>> + Clone {
    select! {
        Token::Keyword(Keyword::Const) => Word::Const,
        Token::Keyword(Keyword::Volatile) => Word::Volatile,
        Token::Keyword(Keyword::Restrict) => Word::Ignored,
        Token::Keyword(Keyword::Device) => Word::Space(AddressSpace::Device),
        Token::Keyword(Keyword::Constant) => Word::Space(AddressSpace::Constant),
        Token::Keyword(Keyword::Threadgroup) => Word::Space(AddressSpace::Threadgroup),
        Token::Keyword(Keyword::Thread) => Word::Space(AddressSpace::Thread),
        Token::Keyword(Keyword::ThreadgroupImageblock) => Word::Space(AddressSpace::ThreadgroupImageblock),
    }
}

fn quals_of(words: &[Word]) -> Qualifiers {
    let mut q = Qualifiers::default();
    for w in words {
        match w {
            Word::Const => q.is_const = true,
            Word::Volatile => q.is_volatile = true,
            Word::Space(s) => q.space = Some(*s),
            _ => {}
        }
    }
    q
}

impl<'a> TypeParsers<'a> {
    /// Builds the type parsers. `assign` parses assignment expressions (array sizes,
    /// `decltype`, attribute arguments); `full` parses a full expression (inside the
    /// parentheses of a template argument value).
    pub fn new(assign: BoxedP<'a, Expr>, full: BoxedP<'a, Expr>) -> TypeParsers<'a> {
        let attrs = attributes(assign.clone());
        let ptr_ops = ptr_ops();
        let dims = guard("`[`", Ctx::array_dim_starts)
            .ignore_then(
                assign
                    .clone()
                    .or_not()
                    .delimited_by(punct(Punct::LBracket), punct(Punct::RBracket)),
            )
            .map_with(|len, e| Dim { len, span: sp(e) })
            .repeated()
            .collect::<Vec<_>>()
            .boxed();
        let type_id = recursive(|type_id| {
            let (spec, ..) = spec_parsers(type_id.boxed(), assign.clone(), full.clone());
            spec.then(ptr_ops.clone())
                .then(dims.clone())
                .map(|((spec, ptrs), dims)| build_type(&spec, &ptrs, &dims))
                .labelled("type")
        })
        .boxed();
        let (spec, named, targs, path, segment) =
            spec_parsers(type_id.clone(), assign.clone(), full);
        let declarator = ptr_ops
            .clone()
            .then(ident())
            .labelled("identifier")
            .then(attrs.clone())
            .then(dims.clone())
            .then(attrs.clone())
            .map(|((((ptrs, name), mut a1), dims), a2)| {
                a1.extend(a2);
                Declarator {
                    ptrs,
                    name,
                    attrs: a1,
                    dims,
                }
            })
            .boxed();
        TypeParsers {
            spec,
            ptr_ops,
            dims,
            type_id,
            named,
            targs,
            path,
            segment,
            attrs,
            declarator,
        }
    }
}

fn ptr_ops<'a>() -> BoxedP<'a, Vec<PtrOp>> {
    let pointer = punct(Punct::Star)
        .ignore_then(cv_word().repeated().collect::<Vec<_>>())
        .map_with(|words, e| PtrOp::Pointer(quals_of(&words), sp(e)));
    let reference =
        choice((punct(Punct::Amp), punct(Punct::AndAnd))).map_with(|_, e| PtrOp::Reference(sp(e)));
    choice((pointer, reference))
        .repeated()
        .collect::<Vec<_>>()
        .boxed()
}

/// `[[name]]`, `[[name(args)]]`, `[[a, b]]`, `[[gnu::x]]`, repeated and flattened.
fn attributes<'a>(assign: BoxedP<'a, Expr>) -> BoxedP<'a, Vec<Attribute>> {
    let word = select! {
        Token::Ident(s) => s.to_string(),
        Token::Keyword(k) => k.as_str().to_string(),
    };
    let name = word
        .then(punct(Punct::ColonColon).ignore_then(word).or_not())
        .map_with(|(a, b), e| Ident {
            name: match b {
                Some(b) => format!("{a}::{b}"),
                None => a,
            },
            span: sp(e),
        });
    let attr = name
        .then(
            assign
                .separated_by(punct(Punct::Comma))
                .collect::<Vec<_>>()
                .delimited_by(punct(Punct::LParen), punct(Punct::RParen))
                .or_not(),
        )
        .map_with(|(name, args), e| Attribute {
            name,
            args: args.unwrap_or_default(),
            span: sp(e),
        });
    punct(Punct::LBracket)
        .then(punct(Punct::LBracket))
        .ignore_then(
            attr.separated_by(punct(Punct::Comma))
                .allow_trailing()
                .collect::<Vec<_>>(),
        )
        .then_ignore(punct(Punct::RBracket))
        .then_ignore(punct(Punct::RBracket))
        .repeated()
        .collect::<Vec<Vec<_>>>()
        .map(|groups| groups.into_iter().flatten().collect())
        .boxed()
}

/// Builds the specifier, named-type, template-argument and path parsers over a type-id
/// parser.
#[allow(clippy::type_complexity)]
fn spec_parsers<'a>(
    type_id: BoxedP<'a, TypeExpr>,
    assign: BoxedP<'a, Expr>,
    full: BoxedP<'a, Expr>,
) -> (
    BoxedP<'a, Spec>,
    BoxedP<'a, TypeExpr>,
    BoxedP<'a, Vec<TemplateArg>>,
    BoxedP<'a, Path>,
    BoxedP<'a, PathSegment>,
) {
    // A template argument value may itself name a member of a specialization
    // (`enable_if_t<is_same<T, float>::value>`), so the path parser recurses through the
    // template argument parsers.
    let targs_over = |type_id: BoxedP<'a, TypeExpr>, path: BoxedP<'a, Path>| {
        let targ = choice((
            guard("type", Ctx::type_starts)
                .ignore_then(type_id)
                .map(TemplateArg::Type),
            super::expr::template_arg_expr(full.clone(), path).map(TemplateArg::Expr),
        ))
        .then(punct(Punct::Ellipsis).or_not())
        .map(|(a, pack)| match pack {
            Some(_) => TemplateArg::Pack(Box::new(a)),
            None => a,
        });
        guard("operator", Ctx::opens_template_args)
            .ignore_then(
                targ.separated_by(punct(Punct::Comma))
                    .collect::<Vec<_>>()
                    .delimited_by(punct(Punct::Lt), punct(Punct::Gt)),
            )
            .boxed()
    };
    let segment_over = |targs: BoxedP<'a, Vec<TemplateArg>>| {
        ident()
            .then(targs.or_not())
            .map(|(name, args)| PathSegment {
                name,
                args: args.unwrap_or_default(),
            })
            .boxed()
    };
    let path_over = |segment: BoxedP<'a, PathSegment>| {
        punct(Punct::ColonColon)
            .or_not()
            .then(
                segment
                    .separated_by(
                        punct(Punct::ColonColon)
                            .then(kw(Keyword::Template).or_not())
                            .labelled("operator"),
                    )
                    .at_least(1)
                    .collect::<Vec<_>>(),
            )
            .map_with(|(global, segments), e| Path {
                global: global.is_some(),
                segments,
                span: sp(e),
            })
            .boxed()
    };
    let path = recursive(|path| {
        let targs = targs_over(type_id.clone(), path.boxed());
        path_over(segment_over(targs))
    })
    .boxed();
    let targs = targs_over(type_id, path.clone());
    let segment = segment_over(targs.clone());
    let named = path
        .clone()
        .map_with(|path, e| TypeExpr {
            kind: TypeKind::Named(path),
            span: sp(e),
        })
        .boxed();
    let int_word = select! {
        Token::Keyword(Keyword::Unsigned) => IntWord::Unsigned,
        Token::Keyword(Keyword::Signed) => IntWord::Signed,
        Token::Ident(s) if &*s == "int" => IntWord::Int,
        Token::Ident(s) if &*s == "char" => IntWord::Char,
        Token::Ident(s) if &*s == "short" => IntWord::Short,
        Token::Ident(s) if &*s == "long" => IntWord::Long,
    };
    let int_type = int_word
        .repeated()
        .at_least(1)
        .collect::<Vec<_>>()
        .map_with(|words, e| named_type(int_type_name(&words), sp(e)));
    let simple = select! {
        Token::Keyword(Keyword::Void) => false,
        Token::Keyword(Keyword::Auto) => true,
    }
    .map_with(|auto, e| {
        let span = sp(e);
        if auto {
            TypeExpr {
                kind: TypeKind::Auto,
                span,
            }
        } else {
            named_type("void", span)
        }
    });
    let decltype = kw(Keyword::Decltype)
        .ignore_then(assign.delimited_by(punct(Punct::LParen), punct(Punct::RParen)))
        .map_with(|e_, e| TypeExpr {
            kind: TypeKind::Decltype(Box::new(e_)),
            span: sp(e),
        });
    let elaborated = choice((
        kw(Keyword::Struct),
        kw(Keyword::Class),
        kw(Keyword::Union),
        kw(Keyword::Enum),
    ))
    .ignore_then(named.clone());
    let base = choice((int_type, simple, decltype, elaborated, named.clone()))
        .labelled("type")
        .boxed();

    let word = select! {
        Token::Keyword(Keyword::Static) => Word::Static,
        Token::Keyword(Keyword::Constexpr) => Word::Constexpr,
        Token::Keyword(Keyword::Inline) => Word::Inline,
        Token::Keyword(Keyword::Kernel) => Word::Kernel,
        Token::Keyword(Keyword::Vertex) => Word::Stage("vertex functions"),
        Token::Keyword(Keyword::Fragment) => Word::Stage("fragment functions"),
        Token::Keyword(Keyword::Extern) => Word::Ignored,
        Token::Keyword(Keyword::Typename) => Word::Ignored,
        Token::Keyword(Keyword::Mutable) => Word::Ignored,
        Token::Keyword(Keyword::Explicit) => Word::Ignored,
        Token::Keyword(Keyword::Friend) => Word::Ignored,
        Token::Keyword(Keyword::Virtual) => Word::Forbidden("virtual functions are not supported"),
        Token::Keyword(Keyword::RayData) => Word::Forbidden("the `ray_data` address space is not supported"),
        Token::Keyword(Keyword::ObjectData) => Word::Forbidden("the `object_data` address space is not supported"),
    };
    let alignas = ident_named("alignas")
        .ignore_then(skip_with("`(`", Ctx::skip_group))
        .to(Word::Ignored);
    let prefix = choice((cv_word(), word, alignas))
        .repeated()
        .collect::<Vec<_>>();
    let suffix = cv_word().repeated().collect::<Vec<_>>();
    let spec = prefix
        .then(base)
        .then(suffix)
        .map_with(|((pre, base), post), e| {
            let mut spec = Spec {
                quals: Qualifiers::default(),
                storage: Storage::default(),
                fns: FnSpecifiers::default(),
                stage: None,
                forbidden: None,
                base,
                span: sp(e),
            };
            for w in pre.iter().chain(&post) {
                match *w {
                    Word::Const => spec.quals.is_const = true,
                    Word::Volatile => spec.quals.is_volatile = true,
                    Word::Space(s) => spec.quals.space = Some(s),
                    Word::Static => {
                        spec.storage.is_static = true;
                        spec.fns.is_static = true;
                    }
                    Word::Constexpr => {
                        spec.storage.constexpr = true;
                        spec.fns.constexpr = true;
                    }
                    Word::Inline => spec.fns.inline = true,
                    Word::Kernel => spec.fns.kernel = true,
                    Word::Stage(s) => spec.stage = Some(s),
                    Word::Ignored => {}
                    Word::Forbidden(message) => {
                        spec.forbidden.get_or_insert(message);
                    }
                }
            }
            spec
        })
        .labelled("type")
        .boxed();
    (spec, named, targs, path, segment)
}
