//! Name resolution: what a (qualified, templated) path and a written type denote in the
//! current scope, instantiating class, alias and variable templates on the way.

use metalsim_isa::Space;

use crate::ast::{self, PathSegment, TemplateArg, TypeExpr, TypeKind};
use crate::lower::consteval::{self, Const};
use crate::lower::names::{DeclId, DeclKind, Env, Hit, NsId};
use crate::lower::templates::{MAX_INSTANTIATION_DEPTH, TArg};
use crate::lower::texture::{is_unsupported_texture as is_texture, texture_refusal};
use crate::lower::types::{Scalar, StructId, Ty, builtin_type};
use crate::lower::{Binding, DeclType, FnLowerer, GlobalValue, Operand};
use crate::source::Span;

/// What a path denotes.
#[derive(Clone, Debug)]
pub enum Resolved {
    /// A type.
    Type(Ty),
    /// An enumeration (a type, and the scope of its enumerators).
    Enum(DeclId),
    /// A compile-time constant.
    Const(Const),
    /// A program-scope object or function constant.
    Global(GlobalValue),
    /// An overload set: functions and function templates (with explicit template
    /// arguments, if written).
    Overloads(Vec<FnRef>),
    /// A standard-library function implemented by the lowering itself (`precise::` and
    /// `fast::` kept in the name), with explicit template arguments.
    Builtin {
        /// The name.
        name: String,
        /// Template arguments (`make_filled_simdgroup_matrix<half, 8, 8>`).
        targs: Vec<TArg>,
    },
    /// A namespace.
    Namespace(NsId),
    /// A class template named without arguments.
    ClassTemplate(DeclId),
    /// A data member of a class: `this`'s when written unqualified in a method.
    Field(StructId, usize),
    /// A template parameter pack's arguments.
    Pack(Vec<TArg>),
    /// A local variable, constant, alias or parameter pack.
    Local(Binding),
}

/// A function (or function template) found by name, with where it lives.
#[derive(Clone, Debug)]
pub struct FnRef {
    /// The declaration.
    pub decl: DeclId,
    /// The scope its body and signature are resolved in (a class's for methods).
    pub env: Env,
    /// Explicit template arguments (`f<float>`).
    pub targs: Option<Vec<TArg>>,
}

/// Builtin template types (`vec<T, N>`...) by name.
fn is_builtin_template(name: &str) -> bool {
    matches!(
        name,
        "vec" | "array" | "atomic" | "simdgroup_matrix" | "packed_vec"
    )
}

impl FnLowerer<'_, '_> {
    /// Resolves a written type in the current scope.
    pub fn resolve_type(&mut self, te: &TypeExpr) -> Option<DeclType> {
        let plain = |ty: Ty| DeclType {
            ty,
            space: None,
            is_const: false,
            is_ref: false,
            unsized_array: false,
        };
        match &te.kind {
            TypeKind::Named(path) => self.resolve_named_type(path, te.span).map(plain),
            TypeKind::Qualified { quals, inner } => {
                let mut d = self.resolve_type(inner)?;
                d.is_const |= quals.is_const;
                if let Some(s) = quals.space {
                    let s = self.map_space(s, te.span)?;
                    if d.space.is_some_and(|o| o != s) {
                        self.error("a type cannot have two address spaces", te.span);
                        return None;
                    }
                    d.space = Some(s);
                }
                Some(d)
            }
            TypeKind::Pointer { pointee, quals } => {
                let p = self.resolve_type(pointee)?;
                if p.is_ref {
                    self.error("pointers to references are not allowed", te.span);
                    return None;
                }
                let space = p.space.unwrap_or(Space::Thread);
                Some(DeclType {
                    ty: Ty::pointer(p.ty, space, p.is_const),
                    space: None,
                    is_const: quals.is_const,
                    is_ref: false,
                    unsized_array: false,
                })
            }
            TypeKind::Reference { referent } => {
                let r = self.resolve_type(referent)?;
                Some(DeclType { is_ref: true, ..r })
            }
            TypeKind::Array { elem, len } => {
                let e = self.resolve_type(elem)?;
                if e.is_ref {
                    self.error("arrays of references are not allowed", te.span);
                    return None;
                }
                let (n, unsized_array) = match len {
                    None => (0, true),
                    Some(len) => match self.const_expr(len, "an array size") {
                        Some(c)
                            if !c.ty.is_float()
                                && c.as_i128() > 0
                                && c.as_i128() <= u32::MAX as i128 =>
                        {
                            (c.as_i128() as u32, false)
                        }
                        Some(_) => {
                            self.error("an array size must be a positive integer", len.span);
                            return None;
                        }
                        None => return None,
                    },
                };
                let ty = Ty::Array(Box::new(e.ty), n);
                if self.g.structs.size(&ty) > 1 << 30 {
                    self.error("this array is larger than 1 GiB", te.span);
                    return None;
                }
                Some(DeclType {
                    ty,
                    unsized_array,
                    ..e
                })
            }
            TypeKind::Auto => {
                self.error(
                    "`auto` is only allowed for variables with an initializer and for function return types",
                    te.span,
                );
                None
            }
            TypeKind::Decltype(e) => {
                // A trailing return type may name the function's own call
                // (`auto g(T x) -> decltype(g(x + 1))`): bounded like instantiations.
                self.g.depth += 1;
                let ty = self.type_of_expr(e);
                self.g.depth -= 1;
                Some(plain(ty?))
            }
        }
    }

    /// Maps an AST address space to the ISA's.
    pub fn map_space(&mut self, s: ast::AddressSpace, span: Span) -> Option<Space> {
        Some(match s {
            ast::AddressSpace::Device => Space::Device,
            ast::AddressSpace::Constant => Space::Constant,
            ast::AddressSpace::Threadgroup => Space::Threadgroup,
            ast::AddressSpace::Thread => Space::Thread,
            ast::AddressSpace::ThreadgroupImageblock => {
                self.error("threadgroup_imageblock memory is not supported", span);
                return None;
            }
        })
    }

    fn resolve_named_type(&mut self, path: &ast::Path, span: Span) -> Option<Ty> {
        let name = path.last();
        let bare = path.segments.len() == 1
            || (path.segments.len() == 2 && path.segments[0].name.name == "metal");
        if bare
            && path.last_args().is_empty()
            && let Some(t) = self.builtin_named_type(name, path.span)
        {
            return t;
        }
        if bare && !path.last_args().is_empty() && is_builtin_template(name) {
            return self.builtin_template_type(name, path.last_args(), span);
        }
        if bare && is_texture(name) {
            self.error(texture_refusal(name), path.span);
            return None;
        }
        match self.resolve_path(path, true)? {
            Resolved::Type(t) => Some(t),
            Resolved::Enum(id) => Some(self.enum_type(id)),
            Resolved::Local(Binding::Type(t)) => Some(t),
            Resolved::ClassTemplate(id) => {
                if let Some(t) = self.all_defaults_class(id, path.span) {
                    return Some(t);
                }
                self.error(
                    format!("`{name}` is a template; give its arguments: `{name}<...>`"),
                    path.span,
                );
                None
            }
            _ => {
                self.error(format!("`{}` is not a type", path.to_text()), path.span);
                None
            }
        }
    }

    /// A builtin type spelled by one name: `Some(None)` after reporting a refused one.
    fn builtin_named_type(&mut self, name: &str, span: Span) -> Option<Option<Ty>> {
        if name == "void" {
            return Some(Some(Ty::Void));
        }
        if let Some(t) = builtin_type(name) {
            return Some(Some(t));
        }
        if let Some(s) = name.strip_prefix("atomic_").and_then(Scalar::from_name) {
            return Some(Some(Ty::Atomic(s)));
        }
        if let Some(s) = name
            .strip_prefix("simdgroup_")
            .and_then(|r| r.strip_suffix("8x8"))
            .and_then(Scalar::from_name)
            .filter(|s| matches!(s, Scalar::Float | Scalar::Half | Scalar::BFloat))
        {
            return Some(Some(Ty::SimdMatrix(s)));
        }
        // `floatNxM` and `halfNxM` are the prelude's `matrix` typedefs.
        if is_matrix_name(name) && !name.starts_with("float") && !name.starts_with("half") {
            self.error(
                format!(
                    "`{name}`: MSL has matrices of `float` and `half` only (`floatNxM`, `halfNxM`)"
                ),
                span,
            );
            return Some(None);
        }
        if is_texture(name) {
            self.error(texture_refusal(name), span);
            return Some(None);
        }
        None
    }

    fn builtin_template_type(
        &mut self,
        name: &str,
        args: &[TemplateArg],
        span: Span,
    ) -> Option<Ty> {
        let vals = self.targ_values(args)?;
        let scalar = |a: Option<&TArg>| match a {
            Some(TArg::Type(Ty::Scalar(s))) => Some(*s),
            _ => None,
        };
        let int = |a: Option<&TArg>| match a {
            Some(TArg::Value(c)) if !c.ty.is_float() => Some(c.as_i128()),
            _ => None,
        };
        match name {
            "vec" | "packed_vec" => match (scalar(vals.first()), int(vals.get(1)), vals.len()) {
                (Some(s), Some(n @ 1..=4), 2) => Some(if name == "vec" || n == 1 {
                    Ty::vector(s, n as u8)
                } else {
                    Ty::Vector {
                        elem: s,
                        len: n as u8,
                        packed: true,
                    }
                }),
                _ => {
                    self.error(
                        format!("`{name}<T, N>` needs a scalar type and N from 1 to 4"),
                        span,
                    );
                    None
                }
            },
            "array" => match (vals.first(), int(vals.get(1)), vals.len()) {
                (Some(TArg::Type(t)), Some(n), 2) if n > 0 && n <= u32::MAX as i128 => {
                    Some(Ty::Array(Box::new(t.clone()), n as u32))
                }
                _ => {
                    self.error("`array<T, N>` needs a type and a positive constant N", span);
                    None
                }
            },
            "atomic" => match (scalar(vals.first()), vals.len()) {
                (Some(s @ (Scalar::Int | Scalar::UInt | Scalar::Float | Scalar::Bool)), 1) => {
                    Some(Ty::Atomic(s))
                }
                _ => {
                    self.error("`atomic<T>` needs int, uint, float or bool", span);
                    None
                }
            },
            _ => match (scalar(vals.first()), int(vals.get(1)), int(vals.get(2))) {
                (Some(s @ (Scalar::Float | Scalar::Half | Scalar::BFloat)), Some(8), Some(8)) => {
                    Some(Ty::SimdMatrix(s))
                }
                _ => {
                    self.error(
                        "`simdgroup_matrix<T, 8, 8>` needs float, half or bfloat and 8x8 (the only size Metal has)",
                        span,
                    );
                    None
                }
            },
        }
    }

    /// Resolves a path in the current scope. `report` says whether a name that is not
    /// found is an error (the caller may want to try another reading).
    pub fn resolve_path(&mut self, path: &ast::Path, report: bool) -> Option<Resolved> {
        if self.g.depth > MAX_INSTANTIATION_DEPTH {
            self.g.limit_hit = true;
            self.error(
                format!("templates instantiate each other too deeply (more than {MAX_INSTANTIATION_DEPTH} levels)"),
                path.span,
            );
            return None;
        }
        let segs = &path.segments;
        let first = segs.first()?;
        if !path.global
            && first.args.is_empty()
            && let Some(Binding::ScopedEnum { ty, values, .. }) =
                self.lookup(&first.name.name).cloned()
        {
            return match segs.as_slice() {
                [_] => Some(Resolved::Local(Binding::Type(ty))),
                [_, v] => {
                    let found = values.iter().find(|(n, _)| *n == v.name.name);
                    if found.is_none() && report {
                        self.error(
                            format!("`{}` has no enumerator `{}`", first.name.name, v.name.name),
                            v.name.span,
                        );
                    }
                    found.map(|(_, c)| Resolved::Const(*c))
                }
                _ => {
                    if report {
                        self.error("an enumerator has no members", path.span);
                    }
                    None
                }
            };
        }
        let mut cur = if path.global {
            self.member_of(Resolved::Namespace(NsId(0)), first, path.span, report)?
        } else {
            self.resolve_first(first, report)?
        };
        for seg in &segs[1..] {
            cur = self.member_of(cur, seg, path.span, report)?;
        }
        Some(cur)
    }

    /// The first segment of a path: locals, then the scope chain, then builtins.
    fn resolve_first(&mut self, seg: &PathSegment, report: bool) -> Option<Resolved> {
        let name = seg.name.name.as_str();
        if seg.args.is_empty()
            && let Some(b) = self.lookup(name).cloned()
        {
            return Some(Resolved::Local(b));
        }
        let env = self.env.clone();
        if let Some(hit) = self.g.lookup(&env, name) {
            return self.resolve_hit(hit, seg, &env);
        }
        // A member of a union or of an anonymous union or struct, inside a method.
        if seg.args.is_empty()
            && let Some(this) = self.implicit_this()
            && let Ty::Struct(id) = self.place_ty(&this)
            && self.has_member(id, name)
            && let Some(Operand::Place { place, .. }) = self.member_operand(
                Operand::Place {
                    place: this,
                    cached: None,
                },
                name,
                seg.name.span,
            )
        {
            return Some(Resolved::Local(Binding::Place(place)));
        }
        self.builtin_name(seg, "", report)
    }

    /// A name of the standard library the lowering implements itself: types, constants
    /// and functions.
    fn builtin_name(&mut self, seg: &PathSegment, ns: &str, report: bool) -> Option<Resolved> {
        let name = seg.name.name.as_str();
        if seg.args.is_empty() {
            if let Some(t) = self.builtin_named_type(name, seg.name.span) {
                return t.map(Resolved::Type);
            }
            if let Some(c) = consteval::builtin_constant(name) {
                return Some(Resolved::Const(c));
            }
        } else if is_builtin_template(name) {
            return self
                .builtin_template_type(name, &seg.args, seg.name.span)
                .map(Resolved::Type);
        }
        if crate::lower::builtins::is_builtin(name) {
            let targs = self.targ_values(&seg.args)?;
            let name = match ns.rsplit("::").next() {
                Some(p @ ("precise" | "fast")) => format!("{p}::{name}"),
                _ => name.to_string(),
            };
            return Some(Resolved::Builtin { name, targs });
        }
        if report {
            let msg = if is_texture(name) {
                texture_refusal(name)
            } else {
                format!("unknown name `{name}`")
            };
            self.error(msg, seg.name.span);
        }
        None
    }

    /// Turns a lookup hit into what it denotes, applying the segment's template arguments.
    fn resolve_hit(&mut self, hit: Hit, seg: &PathSegment, env: &Env) -> Option<Resolved> {
        let name = seg.name.name.as_str();
        let span = seg.name.span;
        match hit {
            // A template template parameter: the class template it is bound to.
            Hit::Param(TArg::Template(decl)) => {
                if seg.args.is_empty() {
                    return Some(Resolved::ClassTemplate(decl));
                }
                let home = self
                    .g
                    .decl(decl)
                    .home
                    .clone()
                    .unwrap_or_else(|| self.g.ns_env(NsId(0)));
                self.resolve_decls(vec![(decl, home)], seg)
            }
            Hit::Param(a) => {
                if !seg.args.is_empty() {
                    // The injected class name (`F` inside `template <int N> struct F`) with
                    // arguments names the template.
                    if let Some(Hit::Decls(decls)) = self.g.lookup_template(env, name) {
                        return self.resolve_decls(decls, seg);
                    }
                    self.error(format!("`{name}` takes no template arguments"), span);
                    return None;
                }
                Some(match a {
                    TArg::Type(t) => Resolved::Type(t),
                    TArg::Value(c) => Resolved::Const(c),
                    TArg::Pack(items) => Resolved::Pack(items),
                    TArg::Template(decl) => Resolved::ClassTemplate(decl),
                    TArg::Function(decl) => {
                        let env = self
                            .g
                            .decl(decl)
                            .home
                            .clone()
                            .unwrap_or_else(|| self.g.ns_env(NsId(0)));
                        Resolved::Overloads(vec![FnRef {
                            decl,
                            env,
                            targs: None,
                        }])
                    }
                })
            }
            Hit::Field(id, i) => Some(Resolved::Field(id, i)),
            Hit::Decls(decls) => self.resolve_decls(decls, seg),
        }
    }

    /// What a set of declarations with one name denotes.
    pub fn resolve_decls(
        &mut self,
        decls: Vec<(DeclId, Env)>,
        seg: &PathSegment,
    ) -> Option<Resolved> {
        let name = seg.name.name.as_str();
        let span = seg.name.span;
        let explicit = if seg.args.is_empty() {
            None
        } else {
            Some(self.targ_values(&seg.args)?)
        };
        let functions: Vec<FnRef> = decls
            .iter()
            .filter(|(id, _)| matches!(self.g.decl(*id).kind, DeclKind::Function(_)))
            .map(|(id, env)| FnRef {
                decl: *id,
                env: env.clone(),
                targs: explicit.clone(),
            })
            .collect();
        if !functions.is_empty() {
            return Some(Resolved::Overloads(functions));
        }
        let (id, env) = decls.into_iter().next()?;
        let decl = self.g.decl(id).clone();
        let home = decl.home.clone().unwrap_or(env);
        match decl.kind {
            DeclKind::Function(_) => None,
            DeclKind::Struct(_) => {
                if decl.tparams.is_some_and(|p| !p.is_empty()) && explicit.is_none() {
                    // Inside a class template, its own name means the current instantiation.
                    if let Some(cur) = self.env.class_id()
                        && self.g.classes[cur.0].template == Some(id)
                    {
                        return Some(Resolved::Type(Ty::Struct(cur)));
                    }
                    return Some(Resolved::ClassTemplate(id));
                }
                let args = explicit.unwrap_or_default();
                let ty = self.class_type(id, &home, &args, span)?;
                Some(Resolved::Type(ty))
            }
            DeclKind::Alias(te) => {
                let env = match decl.tparams {
                    Some(params) => {
                        let args = explicit.unwrap_or_default();
                        let binds = self.bind_template(
                            params,
                            &args,
                            &Default::default(),
                            &home,
                            name,
                            span,
                        )?;
                        home.params(binds)
                    }
                    None => home,
                };
                // An alias may name a member alias of another instantiation
                // (`typedef typename S<S<T>>::type type;`): bounded like instantiations.
                self.g.depth += 1;
                let ty = self.in_env(env, |me| me.resolve_type(te));
                self.g.depth -= 1;
                let ty = ty?;
                if ty.is_ref {
                    return Some(Resolved::Type(ty.ty));
                }
                Some(Resolved::Type(ty.ty))
            }
            DeclKind::Var(_) => {
                let args = match decl.tparams {
                    Some(_) => explicit.unwrap_or_default(),
                    None => Vec::new(),
                };
                let v = self.global_value(id, &home, &args, span)?;
                Some(match v {
                    GlobalValue::Const(c) => Resolved::Const(c),
                    other => Resolved::Global(other),
                })
            }
            DeclKind::Enum(_) => {
                self.g.enum_homes.entry(id).or_insert(home);
                Some(Resolved::Enum(id))
            }
            DeclKind::Enumerator { owner, index } => {
                self.g.enum_homes.entry(owner).or_insert(home);
                let values = self.enum_values(owner)?;
                values.get(index).copied().map(Resolved::Const)
            }
            DeclKind::Namespace(ns) => Some(Resolved::Namespace(ns)),
            DeclKind::Using(path) => {
                self.g.depth += 1;
                let r = self.in_env(home, |me| me.resolve_path(path, true));
                self.g.depth -= 1;
                r
            }
        }
    }

    /// The member `seg` of what `scope` denotes.
    fn member_of(
        &mut self,
        scope: Resolved,
        seg: &PathSegment,
        span: Span,
        report: bool,
    ) -> Option<Resolved> {
        let name = seg.name.name.as_str();
        match scope {
            Resolved::Namespace(ns) => {
                let found = self.g.ns_lookup(ns, name);
                if !found.is_empty() {
                    return self.resolve_decls(found, seg);
                }
                // `metal::max`, `metal::fast::exp`, `metal::precise::sqrt`: the builtins.
                let ns_name = self.g.namespaces[ns.0 as usize].name.clone();
                if ns_name == "metal" || ns_name.starts_with("metal::") {
                    return self.builtin_name(seg, &ns_name, report);
                }
                if report {
                    let shown = if ns_name.is_empty() {
                        "::".into()
                    } else {
                        ns_name
                    };
                    self.error(format!("`{shown}` has no member `{name}`"), seg.name.span);
                }
                None
            }
            Resolved::Type(Ty::Struct(id)) | Resolved::Local(Binding::Type(Ty::Struct(id))) => {
                match self.g.class_member(id, name) {
                    Some(Hit::Decls(d)) => self.resolve_decls(d, seg),
                    Some(Hit::Field(c, i)) => Some(Resolved::Field(c, i)),
                    Some(Hit::Param(a)) => self.resolve_hit(Hit::Param(a), seg, &self.env.clone()),
                    None => {
                        if report {
                            let t = self.show(&Ty::Struct(id));
                            self.error(format!("`{t}` has no member `{name}`"), seg.name.span);
                        }
                        None
                    }
                }
            }
            Resolved::Enum(id) => {
                let DeclKind::Enum(def) = self.g.decl(id).kind else {
                    return None;
                };
                let Some(index) = def.variants.iter().position(|(v, _)| v.name == name) else {
                    if report {
                        let e = def.name.as_ref().map_or("enum", |n| n.name.as_str());
                        self.error(format!("`{e}` has no enumerator `{name}`"), seg.name.span);
                    }
                    return None;
                };
                let values = self.enum_values(id)?;
                values.get(index).copied().map(Resolved::Const)
            }
            Resolved::ClassTemplate(id) => {
                if let Some(t) = self.all_defaults_class(id, span) {
                    return self.member_of(Resolved::Type(t), seg, span, report);
                }
                let n = self.g.decl(id).name.clone();
                self.error(
                    format!("`{n}` is a template; give its arguments: `{n}<...>::{name}`"),
                    span,
                );
                None
            }
            other => {
                if report {
                    let what = match &other {
                        Resolved::Type(t) | Resolved::Local(Binding::Type(t)) => {
                            format!("`{}`", self.show(t))
                        }
                        _ => "this".to_string(),
                    };
                    self.error(format!("{what} has no member `{name}`"), seg.name.span);
                }
                None
            }
        }
    }

    /// A class template whose parameters all have defaults (or are packs), named with an
    /// empty argument list (`Reducer<>::run`, which the AST spells as `Reducer`): the
    /// instantiation with the defaults. `None` for other templates.
    fn all_defaults_class(&mut self, id: DeclId, span: Span) -> Option<Ty> {
        let d = self.g.decl(id).clone();
        let params = d.tparams?;
        if !params.iter().all(|p| p.default.is_some() || p.pack) {
            return None;
        }
        let home = d.home.unwrap_or_else(|| self.env.clone());
        self.class_type(id, &home, &[], span)
    }

    /// Runs `f` with the current scope replaced by `env` and no local variables visible.
    pub fn in_env<T>(&mut self, env: Env, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = std::mem::replace(&mut self.env, env);
        let saved_scopes = std::mem::take(&mut self.scopes);
        let r = f(self);
        self.env = saved;
        self.scopes = saved_scopes;
        r
    }

    /// The type an enum stands for (its underlying integer type).
    pub fn enum_type(&mut self, id: DeclId) -> Ty {
        let DeclKind::Enum(def) = self.g.decl(id).kind else {
            return Ty::INT;
        };
        match &def.underlying {
            None => Ty::INT,
            Some(te) => {
                let home = self.enum_home(id);
                match self.in_env(home, |me| me.resolve_type(te)) {
                    Some(d) if matches!(d.ty, Ty::Scalar(s) if s.is_int() || s == Scalar::Bool) => {
                        d.ty
                    }
                    Some(_) => {
                        self.error("an enum's underlying type must be an integer", te.span);
                        Ty::INT
                    }
                    None => Ty::INT,
                }
            }
        }
    }

    fn enum_home(&self, id: DeclId) -> Env {
        self.g
            .enum_homes
            .get(&id)
            .cloned()
            .or_else(|| self.g.decl(id).home.clone())
            .unwrap_or_else(|| self.g.ns_env(NsId(0)))
    }

    /// The values of an enum's enumerators (each one more than the previous unless given).
    pub fn enum_values(&mut self, id: DeclId) -> Option<Vec<Const>> {
        if let Some(v) = self.g.enum_values.get(&id) {
            return v.clone();
        }
        self.g.enum_values.insert(id, None);
        let DeclKind::Enum(def) = self.g.decl(id).kind else {
            return None;
        };
        let Ty::Scalar(ty) = self.enum_type(id) else {
            return None;
        };
        let home = self.enum_home(id);
        let mut values: Vec<Const> = Vec::with_capacity(def.variants.len());
        let mut ok = true;
        self.in_env(home, |me| {
            // Earlier enumerators are visible to later initializers.
            me.scopes.push(Default::default());
            let mut next = Const::int(ty, 0);
            for (name, value) in &def.variants {
                let v = match value {
                    Some(e) => match me.const_expr(e, "an enumerator value") {
                        Some(c) => c.cast(ty),
                        None => {
                            ok = false;
                            next
                        }
                    },
                    None => next,
                };
                me.bind(&name.name, Binding::Const(v));
                values.push(v);
                next = Const::int(ty, v.as_i128() + 1);
            }
        });
        let r = ok.then_some(values);
        self.g.enum_values.insert(id, r.clone());
        r
    }
}

/// Whether a name is a matrix type (`float4x4`, `half2x3`).
pub fn is_matrix_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 4
        && b[b.len() - 2] == b'x'
        && b[b.len() - 1].is_ascii_digit()
        && b[b.len() - 3].is_ascii_digit()
        && Scalar::from_name(&name[..name.len() - 3]).is_some()
}
