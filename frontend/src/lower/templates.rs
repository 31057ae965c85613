//! Templates: argument values, binding parameters to arguments (explicit, deduced and
//! default), deducing arguments from the types of call arguments, and choosing a class
//! template's specialization.
//!
//! Instantiation itself is substitution by scope: a template's body is lowered (or its
//! struct laid out) in an [`Env`] where each parameter name is bound to its argument, so
//! no instantiated copy of the AST is ever made. Substitution failures while a candidate
//! is being considered (SFINAE) are undone by dropping the diagnostics they produced.

use std::collections::HashMap;

use crate::ast::{self, TemplateArg, TemplateParam, TemplateParamKind, TypeExpr, TypeKind};
use crate::lower::consteval::Const;
use crate::lower::names::{DeclId, DeclKind, Env};
use crate::lower::resolve::FnRef;
use crate::lower::types::{Scalar, Ty};
use crate::lower::{Binding, FnLowerer, Resolved};
use crate::source::Span;

/// A template argument's value.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TArg {
    /// A type.
    Type(Ty),
    /// A constant.
    Value(Const),
    /// The arguments of a parameter pack.
    Pack(Vec<TArg>),
    /// A function, for a function pointer parameter (`template <float (*F)(float)>`).
    Function(DeclId),
    /// A class template, for a template template parameter (`template <typename> class
    /// Op`): the primary template's declaration.
    Template(DeclId),
}

/// Template parameter names bound so far while deducing.
pub type Deduced = HashMap<String, TArg>;

/// How deeply instantiations (and constant evaluations) may nest.
pub const MAX_INSTANTIATION_DEPTH: u32 = 64;

/// The name a template parameter is bound under (unnamed ones get a placeholder that no
/// expression can spell).
pub fn param_name(p: &TemplateParam, index: usize) -> String {
    p.name
        .as_ref()
        .map(|n| n.name.clone())
        .unwrap_or_else(|| format!("<unnamed {index}>"))
}

impl FnLowerer<'_, '_> {
    /// The display form of a template argument.
    pub fn show_targ(&self, a: &TArg) -> String {
        match a {
            TArg::Type(t) => self.show(t),
            TArg::Value(c) => c.to_string(),
            TArg::Pack(items) => items
                .iter()
                .map(|a| self.show_targ(a))
                .collect::<Vec<_>>()
                .join(", "),
            TArg::Function(d) | TArg::Template(d) => self.g.decl(*d).name.clone(),
        }
    }

    /// `name<args>` for messages.
    pub fn show_specialization(&self, name: &str, args: &[TArg]) -> String {
        let parts: Vec<String> = args.iter().map(|a| self.show_targ(a)).collect();
        format!("{name}<{}>", parts.join(", "))
    }

    /// The values of written template arguments, with packs (`Ts...`) expanded.
    pub fn targ_values(&mut self, args: &[TemplateArg]) -> Option<Vec<TArg>> {
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            match a {
                TemplateArg::Pack(inner) => match self.targ_value(inner)? {
                    TArg::Pack(items) => out.extend(items),
                    other => {
                        let span = targ_span(inner);
                        let _ = other;
                        self.error("`...` needs a parameter pack before it", span);
                        return None;
                    }
                },
                _ => out.push(self.targ_value(a)?),
            }
        }
        Some(out)
    }

    /// The value of one written template argument. A name the parser could not classify
    /// is a type when it names one, a constant otherwise.
    pub fn targ_value(&mut self, a: &TemplateArg) -> Option<TArg> {
        match a {
            TemplateArg::Type(t) => {
                // A name the parser took for a type may be a value parameter here.
                if let TypeKind::Named(path) = &t.kind
                    && !(path.is_plain()
                        && crate::lower::types::builtin_type(path.last()).is_some())
                {
                    let mark = self.g.diags.len();
                    match self.resolve_path(path, false) {
                        Some(Resolved::Const(c)) => return Some(TArg::Value(c)),
                        Some(Resolved::Pack(items)) => return Some(TArg::Pack(items)),
                        Some(Resolved::Overloads(fns)) => return self.function_targ(fns, t.span),
                        Some(Resolved::Type(t)) | Some(Resolved::Local(Binding::Type(t))) => {
                            return Some(TArg::Type(t));
                        }
                        Some(Resolved::ClassTemplate(id)) => return Some(TArg::Template(id)),
                        _ => self.g.diags.truncate(mark),
                    }
                }
                let d = self.resolve_type(t)?;
                Some(TArg::Type(d.ty))
            }
            TemplateArg::Expr(e) => {
                // `&f` names the function `f` too.
                let named = match &e.kind {
                    ast::ExprKind::Unary {
                        op: ast::UnaryOp::AddrOf,
                        operand,
                    } => operand,
                    _ => e,
                };
                if let ast::ExprKind::Name(path) = &named.kind {
                    let mark = self.g.diags.len();
                    if let Some(Resolved::Overloads(fns)) = self.resolve_path(path, false) {
                        return self.function_targ(fns, e.span);
                    }
                    self.g.diags.truncate(mark);
                }
                if let ast::ExprKind::Name(path) = &e.kind {
                    let mark = self.g.diags.len();
                    match self.resolve_path(path, false) {
                        Some(Resolved::Type(t)) => return Some(TArg::Type(t)),
                        Some(Resolved::Enum(id)) => {
                            return Some(TArg::Type(self.enum_type(id)));
                        }
                        Some(Resolved::Pack(items)) => return Some(TArg::Pack(items)),
                        Some(Resolved::ClassTemplate(id)) => return Some(TArg::Template(id)),
                        _ => self.g.diags.truncate(mark),
                    }
                }
                let c = self.const_expr(e, "a template argument")?;
                Some(TArg::Value(c))
            }
            TemplateArg::Pack(inner) => self.targ_value(inner),
        }
    }

    /// A function named as a template argument: one function that is not a template.
    fn function_targ(&mut self, fns: Vec<FnRef>, span: Span) -> Option<TArg> {
        match fns.as_slice() {
            [f] if f.targs.is_none() && self.g.decl(f.decl).tparams.is_none() => {
                Some(TArg::Function(f.decl))
            }
            _ => {
                self.error(
                    "a function template argument must name one function that is not a template or overloaded",
                    span,
                );
                None
            }
        }
    }

    /// Binds a template's parameters to arguments: explicit ones first, then deduced ones,
    /// then defaults (evaluated with the parameters bound so far). `home` is the scope the
    /// template was declared in. Reports (unless the caller is only probing) and returns
    /// `None` when a parameter has no argument or an argument has the wrong kind.
    pub fn bind_template(
        &mut self,
        tparams: &[TemplateParam],
        explicit: &[TArg],
        deduced: &Deduced,
        home: &Env,
        what: &str,
        span: Span,
    ) -> Option<Vec<(String, TArg)>> {
        let mut binds: Vec<(String, TArg)> = Vec::with_capacity(tparams.len());
        let mut next = 0usize;
        for (i, p) in tparams.iter().enumerate() {
            let name = param_name(p, i);
            if p.pack {
                let mut items: Vec<TArg> = explicit.get(next..).unwrap_or(&[]).to_vec();
                next = explicit.len();
                if let Some(TArg::Pack(d)) = deduced.get(&name)
                    && d.len() > items.len()
                {
                    items.extend(d[items.len()..].iter().cloned());
                }
                binds.push((name, TArg::Pack(items)));
                continue;
            }
            let arg = if let Some(a) = explicit.get(next) {
                next += 1;
                Some(a.clone())
            } else if let Some(a) = deduced.get(&name) {
                Some(a.clone())
            } else if let Some(d) = &p.default {
                let env = home.params(binds.clone());
                let saved = std::mem::replace(&mut self.env, env);
                let saved_scopes = std::mem::take(&mut self.scopes);
                let v = self.targ_value(d);
                self.env = saved;
                self.scopes = saved_scopes;
                v
            } else {
                None
            };
            let Some(arg) = arg else {
                self.error(
                    format!("cannot tell template parameter `{name}` of `{what}`; give it as `{what}<...>`"),
                    span,
                );
                return None;
            };
            let arg = match (&p.kind, arg) {
                (TemplateParamKind::Type, TArg::Type(t)) => TArg::Type(t),
                (TemplateParamKind::Value(te), TArg::Value(c)) => {
                    let env = home.params(binds.clone());
                    let saved = std::mem::replace(&mut self.env, env);
                    let saved_scopes = std::mem::take(&mut self.scopes);
                    let ty = self.resolve_type(te);
                    self.env = saved;
                    self.scopes = saved_scopes;
                    match ty.map(|d| d.ty) {
                        Some(Ty::Scalar(s)) => TArg::Value(c.cast(s)),
                        Some(_) => TArg::Value(c),
                        None => return None,
                    }
                }
                (TemplateParamKind::Value(_), TArg::Function(d)) => TArg::Function(d),
                (TemplateParamKind::Type, TArg::Function(d)) => {
                    let f = self.g.decl(d).name.clone();
                    self.error(
                        format!("template parameter `{name}` of `{what}` is a type, but `{f}` is a function"),
                        span,
                    );
                    return None;
                }
                (TemplateParamKind::Template, TArg::Template(d)) => TArg::Template(d),
                (TemplateParamKind::Template, other) => {
                    let a = self.show_targ(&other);
                    self.error(
                        format!("template parameter `{name}` of `{what}` is a class template, but `{a}` is not one"),
                        span,
                    );
                    return None;
                }
                (TemplateParamKind::Type | TemplateParamKind::Value(_), TArg::Template(d)) => {
                    let t = self.g.decl(d).name.clone();
                    self.error(
                        format!("`{t}` is a template; give its arguments (`{t}<...>`) for template parameter `{name}` of `{what}`"),
                        span,
                    );
                    return None;
                }
                (TemplateParamKind::Type, TArg::Value(c)) => {
                    self.error(
                        format!("template parameter `{name}` of `{what}` is a type, but `{c}` is a value"),
                        span,
                    );
                    return None;
                }
                (TemplateParamKind::Value(_), TArg::Type(t)) => {
                    let t = self.show(&t);
                    self.error(
                        format!("template parameter `{name}` of `{what}` is a value, but `{t}` is a type"),
                        span,
                    );
                    return None;
                }
                (_, TArg::Pack(_)) => {
                    self.error(
                        format!("a parameter pack cannot be the argument of `{name}` of `{what}`"),
                        span,
                    );
                    return None;
                }
            };
            binds.push((name, arg));
        }
        if next < explicit.len() {
            self.error(
                format!(
                    "`{what}` takes {} template argument{}, {} given",
                    tparams.len(),
                    if tparams.len() == 1 { "" } else { "s" },
                    explicit.len()
                ),
                span,
            );
            return None;
        }
        Some(binds)
    }

    /// Deduces template parameters from one parameter type written in the template
    /// (`pattern`) and the type of the argument passed. Returns false on a conflict (two
    /// different deductions) or a shape mismatch; non-deduced contexts deduce nothing.
    pub fn deduce(
        &mut self,
        pattern: &TypeExpr,
        actual: &Ty,
        params: &[TemplateParam],
        home: &Env,
        out: &mut Deduced,
    ) -> bool {
        let is_param = |name: &str| {
            params
                .iter()
                .any(|p| p.name.as_ref().is_some_and(|n| n.name == name))
        };
        match &pattern.kind {
            TypeKind::Qualified { inner, .. } => self.deduce(inner, actual, params, home, out),
            TypeKind::Reference { referent } => self.deduce(referent, actual, params, home, out),
            TypeKind::Pointer { pointee, .. } => match actual {
                Ty::Pointer(p) => self.deduce(pointee, &p.pointee, params, home, out),
                // An array argument decays to a pointer to its elements.
                Ty::Array(e, _) => self.deduce(pointee, e, params, home, out),
                _ => !self.mentions_params(pattern, params),
            },
            TypeKind::Array { elem, len } => match actual {
                Ty::Array(e, n) => {
                    if !self.deduce(elem, e, params, home, out) {
                        return false;
                    }
                    match len.as_deref().map(|l| &l.kind) {
                        Some(ast::ExprKind::Name(p)) if p.is_plain() && is_param(p.last()) => bind(
                            out,
                            p.last(),
                            TArg::Value(Const::int(Scalar::Int, *n as i128)),
                        ),
                        _ => true,
                    }
                }
                _ => !self.mentions_params(pattern, params),
            },
            TypeKind::Named(path) => {
                let args = path.last_args();
                if path.segments.len() == 1 && args.is_empty() {
                    let name = path.last();
                    if is_param(name) {
                        return bind(out, name, TArg::Type(actual.clone()));
                    }
                    return true;
                }
                if path.segments.len() != 1 {
                    // `typename Traits<T>::type`: a non-deduced context.
                    return true;
                }
                let name = path.last();
                let actual_args: Option<Vec<TArg>> = match (name, actual) {
                    ("vec", Ty::Vector { elem, len, .. }) => Some(vec![
                        TArg::Type(Ty::Scalar(*elem)),
                        TArg::Value(Const::int(Scalar::Int, *len as i128)),
                    ]),
                    ("array", Ty::Array(e, n)) => Some(vec![
                        TArg::Type((**e).clone()),
                        TArg::Value(Const::int(Scalar::ULong, *n as i128)),
                    ]),
                    ("atomic", Ty::Atomic(s)) => Some(vec![TArg::Type(Ty::Scalar(*s))]),
                    ("simdgroup_matrix", Ty::SimdMatrix(s)) => Some(vec![
                        TArg::Type(Ty::Scalar(*s)),
                        TArg::Value(Const::int(Scalar::Int, 8)),
                        TArg::Value(Const::int(Scalar::Int, 8)),
                    ]),
                    // `Op<T>` with `template <typename> class Op`: `Op` is the argument's
                    // class template.
                    (_, Ty::Struct(id))
                        if params.iter().any(|p| {
                            p.kind == TemplateParamKind::Template
                                && p.name.as_ref().is_some_and(|n| n.name == name)
                        }) =>
                    {
                        let info = &self.g.classes[id.0];
                        let class_args = info.args.clone();
                        match info.template {
                            Some(t) if bind(out, name, TArg::Template(t)) => Some(class_args),
                            _ => return false,
                        }
                    }
                    (_, Ty::Struct(id)) => {
                        let info = &self.g.classes[id.0];
                        let template = info.template;
                        let class_args = info.args.clone();
                        let named = self.class_template_named(path, home);
                        match (template, named) {
                            (Some(t), Some(n)) if t == n => Some(class_args),
                            (_, Some(_)) => None,
                            _ => return true,
                        }
                    }
                    _ => None,
                };
                let Some(actual_args) = actual_args else {
                    return !self.mentions_params(pattern, params);
                };
                self.deduce_args(args, &actual_args, params, home, out)
            }
            TypeKind::Auto | TypeKind::Decltype(_) => true,
        }
    }

    /// Deduces from template argument patterns (`<T, N>`) against argument values.
    pub fn deduce_args(
        &mut self,
        patterns: &[TemplateArg],
        actual: &[TArg],
        params: &[TemplateParam],
        home: &Env,
        out: &mut Deduced,
    ) -> bool {
        let is_param = |name: &str| {
            params
                .iter()
                .any(|p| p.name.as_ref().is_some_and(|n| n.name == name))
        };
        for (i, pat) in patterns.iter().enumerate() {
            if let TemplateArg::Pack(inner) = pat {
                // `Ts...` takes every remaining argument.
                if let TemplateArg::Type(TypeExpr {
                    kind: TypeKind::Named(p),
                    ..
                })
                | TemplateArg::Expr(ast::Expr {
                    kind: ast::ExprKind::Name(p),
                    ..
                }) = &**inner
                    && p.is_plain()
                    && is_param(p.last())
                {
                    let rest = actual.get(i..).unwrap_or(&[]).to_vec();
                    return bind(out, p.last(), TArg::Pack(rest));
                }
                return true;
            }
            let Some(a) = actual.get(i) else {
                return patterns.len() <= actual.len();
            };
            let ok = match (pat, a) {
                (TemplateArg::Type(te), TArg::Type(t)) => self.deduce(te, t, params, home, out),
                (
                    TemplateArg::Type(TypeExpr {
                        kind: TypeKind::Named(p),
                        ..
                    }),
                    a @ TArg::Template(_),
                ) if p.is_plain() && is_param(p.last()) => bind(out, p.last(), a.clone()),
                (
                    TemplateArg::Expr(ast::Expr {
                        kind: ast::ExprKind::Name(p),
                        ..
                    }),
                    a,
                ) if p.is_plain() && is_param(p.last()) => bind(out, p.last(), a.clone()),
                (TemplateArg::Expr(e), TArg::Type(t)) => {
                    // A name the parser could not classify, naming a type.
                    if let ast::ExprKind::Name(p) = &e.kind {
                        let te = TypeExpr {
                            kind: TypeKind::Named(p.clone()),
                            span: e.span,
                        };
                        self.deduce(&te, t, params, home, out)
                    } else {
                        false
                    }
                }
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Whether a written type mentions one of the template parameters.
    fn mentions_params(&self, t: &TypeExpr, params: &[TemplateParam]) -> bool {
        let names: Vec<&str> = params
            .iter()
            .filter_map(|p| p.name.as_ref().map(|n| n.name.as_str()))
            .collect();
        type_mentions(t, &names)
    }

    /// The class template a written name refers to (for deduction), if it is one.
    fn class_template_named(&mut self, path: &ast::Path, home: &Env) -> Option<DeclId> {
        let seg = path.segments.last()?;
        // `lookup_template` passes over the injected class name, so inside a class
        // template `C<U>` names the template.
        let hits = self.g.lookup_template(home, &seg.name.name)?;
        match hits {
            crate::lower::names::Hit::Decls(ds) => ds.iter().find_map(|(id, _)| {
                let d = self.g.decl(*id);
                (matches!(d.kind, DeclKind::Struct(_)) && d.tparams.is_some()).then_some(*id)
            }),
            _ => None,
        }
    }
}

/// Binds a deduced argument, failing on a conflicting earlier deduction (integer values
/// compare by value whatever their type).
fn bind(out: &mut Deduced, name: &str, a: TArg) -> bool {
    match out.get(name) {
        None => {
            out.insert(name.to_string(), a);
            true
        }
        Some(TArg::Value(x)) => match a {
            TArg::Value(y) => x.as_i128() == y.as_i128(),
            _ => false,
        },
        Some(old) => *old == a,
    }
}

/// Whether a written type mentions one of `names` anywhere.
pub fn type_mentions(t: &TypeExpr, names: &[&str]) -> bool {
    match &t.kind {
        TypeKind::Named(p) => p.segments.iter().any(|s| {
            names.contains(&s.name.name.as_str()) || s.args.iter().any(|a| targ_mentions(a, names))
        }),
        TypeKind::Qualified { inner, .. } => type_mentions(inner, names),
        TypeKind::Pointer { pointee, .. } => type_mentions(pointee, names),
        TypeKind::Reference { referent } => type_mentions(referent, names),
        TypeKind::Array { elem, .. } => type_mentions(elem, names),
        TypeKind::Auto | TypeKind::Decltype(_) => false,
    }
}

fn targ_mentions(a: &TemplateArg, names: &[&str]) -> bool {
    match a {
        TemplateArg::Type(t) => type_mentions(t, names),
        TemplateArg::Expr(e) => match &e.kind {
            ast::ExprKind::Name(p) => p.segments.iter().any(|s| {
                names.contains(&s.name.name.as_str())
                    || s.args.iter().any(|a| targ_mentions(a, names))
            }),
            _ => false,
        },
        TemplateArg::Pack(inner) => targ_mentions(inner, names),
    }
}

/// How concrete a written type is: the number of its nodes that are not template
/// parameters (more concrete patterns are more specialized).
pub fn specificity(t: &TypeExpr, names: &[&str]) -> u32 {
    match &t.kind {
        TypeKind::Named(p) => {
            let own = if p.is_plain() && names.contains(&p.last()) {
                0
            } else {
                1
            };
            own + p
                .segments
                .iter()
                .flat_map(|s| s.args.iter())
                .map(|a| targ_specificity(a, names))
                .sum::<u32>()
        }
        TypeKind::Qualified { inner, .. } => 1 + specificity(inner, names),
        TypeKind::Pointer { pointee, .. } => 1 + specificity(pointee, names),
        TypeKind::Reference { referent } => specificity(referent, names),
        TypeKind::Array { elem, .. } => 1 + specificity(elem, names),
        TypeKind::Auto | TypeKind::Decltype(_) => 0,
    }
}

/// [`specificity`] of a template argument pattern.
pub fn targ_specificity(a: &TemplateArg, names: &[&str]) -> u32 {
    match a {
        TemplateArg::Type(t) => specificity(t, names),
        TemplateArg::Expr(e) => match &e.kind {
            ast::ExprKind::Name(p) if p.is_plain() && names.contains(&p.last()) => 0,
            _ => 1,
        },
        TemplateArg::Pack(_) => 0,
    }
}

fn targ_span(a: &TemplateArg) -> Span {
    match a {
        TemplateArg::Type(t) => t.span,
        TemplateArg::Expr(e) => e.span,
        TemplateArg::Pack(inner) => targ_span(inner),
    }
}

#[cfg(test)]
mod tests {
    /// Compiles `program`, then a kernel whose body is `body`; the rendered diagnostics on
    /// failure.
    fn check(program: &str, body: &str) -> Result<(), String> {
        let src = format!(
            "#include <metal_stdlib>\nusing namespace metal;\n{program}\n\
             kernel void k(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {{\n{body}\n}}\n"
        );
        let (m, diags, sources) = crate::compile_str("t.metal", &src);
        match m {
            Some(_) if !crate::has_errors(&diags) => Ok(()),
            _ => Err(crate::render_short(&diags, &sources)),
        }
    }

    const OPS: &str = "template <typename T> struct Plus { T operator()(T a, T b) const { return a + b; } };\n\
                       template <typename T> struct Max { T operator()(T a, T b) const { return max(a, b); } };\n\
                       template <typename T> struct Box { T v; };\n";

    #[test]
    fn a_member_alias_that_recurses_through_instantiations_is_refused() {
        // Each level names the member alias of the next instantiation: no stack overflow.
        let err = check(
            "template <typename T> struct S { typedef typename S<S<T>>::type type; };",
            "S<int>::type x; out[gid] = 1;",
        )
        .unwrap_err();
        assert!(err.contains("too deeply"), "{err}");
    }

    #[test]
    fn a_trailing_return_type_that_calls_itself_is_refused() {
        let err = check(
            "template <typename T> auto g(T x) -> decltype(g(x + 1)) { return g(x + 1); }",
            "out[gid] = g(1);",
        )
        .unwrap_err();
        assert!(err.contains("too deeply"), "{err}");
    }

    #[test]
    fn template_template_parameters_take_explicit_class_templates() {
        let program = format!(
            "{OPS}template <template <typename> class Op, typename T> T fold(T a, T b) {{ return Op<T>()(a, b); }}\n\
             template <template <typename> class Op = Plus> struct Reducer {{\n\
               template <typename T> static T run(T a, T b) {{ return Op<T>()(a, b); }}\n\
               static constant constexpr int id = 1;\n\
             }};\n\
             template <typename T = float, int N = 2> struct Pairs {{ static constexpr int n = N; T v[N]; }};\n\
             static_assert(Reducer<>::id == 1 && Pairs<>::n == 2 && sizeof(Pairs<>) == 8, \"defaults\");\n\
             template <typename T, template <typename> class Op = Plus> T fold2(T a, T b) {{ return Op<T>()(a, b); }}"
        );
        check(
            &program,
            "out[gid] = fold<Plus, float>(1.0f, 2.0f) + fold<Max>(3, 4) + Reducer<Max>::run(1.0f, 5.0f)\n\
               + fold2(1, 2) + fold2<float, Max>(1.0f, 2.0f);",
        )
        .unwrap();
    }

    #[test]
    fn template_template_parameters_are_deduced_from_an_argument() {
        let program = format!(
            "{OPS}template <template <typename> class Op, typename T> T apply(Op<T> op, T a, T b) {{ return op(a, b); }}\n\
             template <template <typename> class W, typename T> T unwrap(W<T> w) {{ return w.v; }}"
        );
        check(
            &program,
            "Box<float> b{2.5f}; out[gid] = apply(Plus<float>(), 1.0f, 2.0f) + apply(Max<int>(), 3, 4) + unwrap(b);",
        )
        .unwrap();
    }

    #[test]
    fn template_template_arguments_of_the_wrong_kind_are_errors() {
        let program = format!(
            "{OPS}template <template <typename> class Op> struct Reducer {{ static float run(float a) {{ return Op<float>()(a, a); }} }};\n\
             template <template <typename> class Op, typename T> T fold(T a, T b) {{ return Op<T>()(a, b); }}"
        );
        let err = check(&program, "out[gid] = Reducer<float>::run(1.0f);").unwrap_err();
        assert!(
            err.contains(
                "template parameter `Op` of `Reducer` is a class template, but `float` is not one"
            ),
            "{err}"
        );
        let err = check(&program, "Box<Plus> b; out[gid] = 1;").unwrap_err();
        assert!(
            err.contains("`Plus` is a template; give its arguments"),
            "{err}"
        );
        let err = check(&program, "out[gid] = fold<float, float>(1.0f, 2.0f);").unwrap_err();
        assert!(err.contains("no `fold` can be called"), "{err}");
    }
}
