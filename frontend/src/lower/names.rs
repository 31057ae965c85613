//! Declarations and scopes: what a name means where it is written.
//!
//! Collection walks the items once and records every declaration ([`Decl`]) in its
//! namespace (or in its struct's member table), without resolving anything: structs are
//! laid out, types resolved and constants evaluated lazily, on first use, which is also
//! how templates are instantiated. A scope chain ([`Env`]) says where unqualified names
//! are looked up: template parameter bindings, the members of a class, then namespaces
//! outward to the global one (and finally `metal`, which every kernel sees as if it had
//! written `using namespace metal;`).

use std::collections::HashMap;
use std::rc::Rc;

use crate::ast::{self, Item, TemplateParam};
use crate::lower::templates::TArg;
use crate::lower::types::{StructId, Ty};
use crate::lower::{Globals, KernelSource};
use crate::source::Span;

/// Identifies a declaration.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct DeclId(pub u32);

/// Identifies a namespace (`NsId(0)` is the global one).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct NsId(pub u32);

/// What a declaration declares.
#[derive(Clone, Copy, Debug)]
pub enum DeclKind<'a> {
    /// A function, method, constructor or operator (or a template of one).
    Function(&'a ast::FunctionDef),
    /// A struct or class (or a template of one, or a specialization).
    Struct(&'a ast::StructDef),
    /// `using X = T;` / `typedef T X;` (or an alias template).
    Alias(&'a ast::TypeExpr),
    /// A program-scope variable, a static data member or a variable template.
    Var(&'a ast::VarDecl),
    /// An enumeration.
    Enum(&'a ast::EnumDef),
    /// One enumerator of an enum.
    Enumerator {
        /// The enum.
        owner: DeclId,
        /// Its position.
        index: usize,
    },
    /// A namespace.
    Namespace(NsId),
    /// A using-declaration (`using metal::min;`), resolved where it is used.
    Using(&'a ast::Path),
}

/// One declaration.
#[derive(Clone, Debug)]
pub struct Decl<'a> {
    /// The declared name.
    pub name: String,
    /// What it is.
    pub kind: DeclKind<'a>,
    /// Its template parameters (`Some(&[])` for an explicit specialization).
    pub tparams: Option<&'a [TemplateParam]>,
    /// The scope it was declared in, for namespace members (class members take theirs from
    /// the class instantiation they are found in).
    pub home: Option<Env>,
    /// Where.
    pub span: Span,
}

/// A namespace's declarations.
#[derive(Clone, Debug, Default)]
pub struct Namespace {
    /// Its qualified name (`metal::fast`), empty for the global namespace.
    pub name: String,
    /// Declarations by name.
    pub entries: HashMap<String, Vec<DeclId>>,
    /// `using namespace` directives written in it.
    pub usings: Vec<NsId>,
}

/// The members of one struct definition (shared by all its instantiations), other than its
/// data members.
#[derive(Clone, Debug, Default)]
pub struct MemberTable {
    /// Member declarations by name (methods, static members, nested types, aliases,
    /// enumerators of unscoped member enums, member templates).
    pub entries: HashMap<String, Vec<DeclId>>,
}

/// The member-table key of a class's constructors.
pub const CONSTRUCTORS: &str = "<constructors>";

/// A scope chain: where unqualified names are looked up.
#[derive(Clone, Debug)]
pub struct Env(pub Rc<EnvNode>);

/// One link of a scope chain.
#[derive(Debug)]
pub enum EnvNode {
    /// A namespace (the global one has no parent).
    Ns {
        /// The namespace.
        ns: NsId,
        /// The enclosing scope.
        parent: Option<Env>,
    },
    /// The members of a class instantiation.
    Class {
        /// The class.
        id: StructId,
        /// The enclosing scope.
        parent: Env,
    },
    /// Template parameters bound to arguments.
    Params {
        /// Name and argument of each parameter.
        binds: Vec<(String, TArg)>,
        /// The enclosing scope.
        parent: Env,
    },
}

impl Env {
    /// What makes this scope one instantiation: the template arguments bound along the
    /// chain and the classes it is inside (as `Ty::Struct` arguments).
    pub fn instance(&self) -> Vec<TArg> {
        let mut out = Vec::new();
        let mut e = Some(self);
        while let Some(env) = e {
            match &*env.0 {
                EnvNode::Params { binds, .. } => out.extend(binds.iter().map(|(_, a)| a.clone())),
                EnvNode::Class { id, .. } => out.push(TArg::Type(Ty::Struct(*id))),
                EnvNode::Ns { .. } => {}
            }
            e = env.parent();
        }
        out
    }

    /// A namespace scope.
    pub fn ns(ns: NsId, parent: Option<Env>) -> Env {
        Env(Rc::new(EnvNode::Ns { ns, parent }))
    }

    /// A class scope inside `self`.
    pub fn class(&self, id: StructId) -> Env {
        Env(Rc::new(EnvNode::Class {
            id,
            parent: self.clone(),
        }))
    }

    /// Template parameter bindings inside `self` (`self` itself when there are none).
    pub fn params(&self, binds: Vec<(String, TArg)>) -> Env {
        if binds.is_empty() {
            return self.clone();
        }
        Env(Rc::new(EnvNode::Params {
            binds,
            parent: self.clone(),
        }))
    }

    /// The enclosing scope.
    pub fn parent(&self) -> Option<&Env> {
        match &*self.0 {
            EnvNode::Ns { parent, .. } => parent.as_ref(),
            EnvNode::Class { parent, .. } | EnvNode::Params { parent, .. } => Some(parent),
        }
    }

    /// The innermost class scope, if any.
    pub fn class_id(&self) -> Option<StructId> {
        let mut e = Some(self);
        while let Some(env) = e {
            if let EnvNode::Class { id, .. } = &*env.0 {
                return Some(*id);
            }
            e = env.parent();
        }
        None
    }

    /// The innermost namespace.
    pub fn namespace(&self) -> NsId {
        let mut e = Some(self);
        while let Some(env) = e {
            if let EnvNode::Ns { ns, .. } = &*env.0 {
                return *ns;
            }
            e = env.parent();
        }
        NsId(0)
    }
}

/// What an unqualified or member lookup found.
#[derive(Clone, Debug)]
pub enum Hit {
    /// Declarations (an overload set for functions), each with the scope it lives in.
    Decls(Vec<(DeclId, Env)>),
    /// A template parameter.
    Param(TArg),
    /// A data member of a class (its index in the class's flattened field list).
    Field(StructId, usize),
}

impl<'a> Globals<'a> {
    /// A new namespace named `name` inside `parent`.
    fn add_namespace(&mut self, name: &str, parent: NsId) -> NsId {
        let id = NsId(self.namespaces.len() as u32);
        let parent_name = &self.namespaces[parent.0 as usize].name;
        let full = if parent_name.is_empty() {
            name.to_string()
        } else {
            format!("{parent_name}::{name}")
        };
        self.namespaces.push(Namespace {
            name: full,
            ..Namespace::default()
        });
        let env = Env::ns(id, Some(self.ns_envs[parent.0 as usize].clone()));
        self.ns_envs.push(env);
        id
    }

    /// A new namespace for a type declared in a function: unnamed, and looked up from
    /// inside before `parent` (the function's scope).
    pub fn add_local_namespace(&mut self, parent: Env) -> NsId {
        let id = NsId(self.namespaces.len() as u32);
        self.namespaces.push(Namespace::default());
        self.ns_envs.push(Env::ns(id, Some(parent)));
        id
    }

    /// Adds a declaration and returns its id.
    pub fn add_decl(&mut self, decl: Decl<'a>) -> DeclId {
        let id = DeclId(self.decls.len() as u32);
        self.decls.push(decl);
        id
    }

    /// A declaration by id.
    pub fn decl(&self, id: DeclId) -> &Decl<'a> {
        &self.decls[id.0 as usize]
    }

    /// The scope of a namespace.
    pub fn ns_env(&self, ns: NsId) -> Env {
        self.ns_envs[ns.0 as usize].clone()
    }

    /// Records the declarations of `items` in namespace `ns`.
    pub fn collect(&mut self, items: &'a [Item], ns: NsId) {
        for item in items {
            self.collect_item(item, ns, None);
        }
    }

    fn collect_item(&mut self, item: &'a Item, ns: NsId, tparams: Option<&'a [TemplateParam]>) {
        let home = Some(self.ns_env(ns));
        let add = |g: &mut Self, name: &str, kind: DeclKind<'a>, span: Span| {
            let id = g.add_decl(Decl {
                name: name.to_string(),
                kind,
                tparams,
                home: home.clone(),
                span,
            });
            g.namespaces[ns.0 as usize]
                .entries
                .entry(name.to_string())
                .or_default()
                .push(id);
            id
        };
        match item {
            Item::Function(f) => {
                if !f.scope.is_empty() {
                    self.collect_out_of_class(f, ns, tparams);
                    return;
                }
                if f.spec_args.is_some() {
                    let id = self.add_decl(Decl {
                        name: f.name.name.clone(),
                        kind: DeclKind::Function(f),
                        tparams,
                        home: home.clone(),
                        span: f.span,
                    });
                    self.fn_specializations.push((ns, id));
                    return;
                }
                let id = add(self, &f.name.name, DeclKind::Function(f), f.span);
                let is_kernel =
                    f.specifiers.kernel || f.attrs.iter().any(|a| a.name.name == "kernel");
                if f.body.is_some() {
                    if is_kernel && tparams.is_none() {
                        self.kernel_sources.push(KernelSource::Plain(id));
                    } else if !is_kernel && tparams.is_none() {
                        self.helpers.push(id);
                    }
                }
            }
            Item::Struct(s) => {
                if s.spec_args.is_some() {
                    let id = self.add_decl(Decl {
                        name: s.name.name.clone(),
                        kind: DeclKind::Struct(s),
                        tparams,
                        home: home.clone(),
                        span: s.span,
                    });
                    self.collect_members(id, s);
                    self.struct_specializations.push((ns, id));
                    return;
                }
                // A definition replaces earlier forward declarations; a forward declaration
                // after the definition adds nothing.
                let same: Vec<DeclId> = self.namespaces[ns.0 as usize]
                    .entries
                    .get(&s.name.name)
                    .map(|ids| {
                        ids.iter()
                            .copied()
                            .filter(|id| matches!(self.decl(*id).kind, DeclKind::Struct(_)))
                            .collect()
                    })
                    .unwrap_or_default();
                if s.forward && !same.is_empty() {
                    return;
                }
                if let Some(ids) = self.namespaces[ns.0 as usize].entries.get_mut(&s.name.name) {
                    ids.retain(|id| !same.contains(id));
                }
                let id = add(self, &s.name.name, DeclKind::Struct(s), s.span);
                self.collect_members(id, s);
                if tparams.is_none() && !s.forward {
                    self.plain_structs.push(id);
                }
            }
            Item::Enum(e) => {
                let id = match &e.name {
                    Some(n) => add(self, &n.name, DeclKind::Enum(e), e.span),
                    None => self.add_decl(Decl {
                        name: String::new(),
                        kind: DeclKind::Enum(e),
                        tparams: None,
                        home: home.clone(),
                        span: e.span,
                    }),
                };
                if !e.scoped {
                    for (index, (v, _)) in e.variants.iter().enumerate() {
                        add(
                            self,
                            &v.name,
                            DeclKind::Enumerator { owner: id, index },
                            v.span,
                        );
                    }
                }
            }
            Item::Vars(vars) => {
                for v in vars {
                    let id = add(self, &v.name.name, DeclKind::Var(v), v.span);
                    if tparams.is_none() {
                        self.plain_globals.push(id);
                    }
                }
            }
            Item::UsingNamespace(path, span) => match self.namespace_path(ns, path) {
                Some(target) => self.namespaces[ns.0 as usize].usings.push(target),
                None => self.error(format!("unknown namespace `{}`", path.to_text()), *span),
            },
            // The alias is another name of the same namespace.
            Item::NamespaceAlias { name, target, span } => match self.namespace_path(ns, target) {
                Some(t) => {
                    add(self, &name.name, DeclKind::Namespace(t), name.span);
                }
                None => self.error(format!("unknown namespace `{}`", target.to_text()), *span),
            },
            Item::UsingDecl(path, span) => {
                add(self, path.last(), DeclKind::Using(path), *span);
            }
            Item::Alias { name, ty, span } => {
                add(self, &name.name, DeclKind::Alias(ty), *span);
            }
            Item::Namespace { name, items, .. } => {
                let child = match name {
                    None => ns,
                    Some(n) => {
                        let existing = self.namespaces[ns.0 as usize]
                            .entries
                            .get(&n.name)
                            .and_then(|ids| {
                                ids.iter().find_map(|id| match self.decl(*id).kind {
                                    DeclKind::Namespace(c) => Some(c),
                                    _ => None,
                                })
                            });
                        match existing {
                            Some(c) => c,
                            None => {
                                let c = self.add_namespace(&n.name, ns);
                                add(self, &n.name, DeclKind::Namespace(c), n.span);
                                c
                            }
                        }
                    }
                };
                self.collect(items, child);
            }
            Item::Template { params, item, .. } => {
                self.collect_item(item, ns, Some(params.as_slice()));
            }
            Item::Instantiation(inst) => {
                self.kernel_sources
                    .push(KernelSource::Instantiation(inst, self.ns_env(ns)));
            }
            Item::StaticAssert {
                cond,
                message,
                span,
            } => {
                let env = self.ns_env(ns);
                self.static_assert(&env, cond, message.as_deref(), *span);
            }
            Item::Unsupported { what, span } => {
                self.error(format!("{what} are not supported yet"), *span);
            }
            Item::Error(_) => {}
        }
    }

    /// A method defined outside its class (`void Tile::load() { ... }`): it joins the
    /// class's member table.
    fn collect_out_of_class(
        &mut self,
        f: &'a ast::FunctionDef,
        ns: NsId,
        tparams: Option<&'a [TemplateParam]>,
    ) {
        let class = f.scope.last().map(|s| s.name.name.as_str()).unwrap_or("");
        let owner = self.namespaces[ns.0 as usize]
            .entries
            .get(class)
            .and_then(|ids| {
                ids.iter()
                    .copied()
                    .find(|id| matches!(self.decl(*id).kind, DeclKind::Struct(_)))
            });
        let Some(owner) = owner else {
            self.error(
                format!("`{class}` is not a struct declared in this namespace"),
                f.name.span,
            );
            return;
        };
        // The class's own template parameters come from the class; a method template
        // defined out of class would have two heads, which we do not support.
        let class_is_template = self.decl(owner).tparams.is_some();
        let method_tparams = if class_is_template { None } else { tparams };
        let id = self.add_decl(Decl {
            name: f.name.name.clone(),
            kind: DeclKind::Function(f),
            tparams: method_tparams,
            home: None,
            span: f.span,
        });
        self.members
            .entry(owner)
            .or_default()
            .entries
            .entry(f.name.name.clone())
            .or_default()
            .push(id);
    }

    /// Records a struct's member declarations in its member table.
    fn collect_members(&mut self, owner: DeclId, s: &'a ast::StructDef) {
        self.members.entry(owner).or_default();
        for m in &s.members {
            self.collect_member(owner, m, None);
        }
    }

    fn collect_member(
        &mut self,
        owner: DeclId,
        item: &'a Item,
        tparams: Option<&'a [TemplateParam]>,
    ) {
        let add = |g: &mut Self, name: &str, kind: DeclKind<'a>, span: Span| {
            let id = g.add_decl(Decl {
                name: name.to_string(),
                kind,
                tparams,
                home: None,
                span,
            });
            g.members
                .entry(owner)
                .or_default()
                .entries
                .entry(name.to_string())
                .or_default()
                .push(id);
            id
        };
        match item {
            Item::Function(f) => {
                // Constructors are found by [`CONSTRUCTORS`]: the class's own name means the
                // class inside it (the injected class name).
                let key = if f.kind == ast::FnKind::Constructor {
                    CONSTRUCTORS
                } else {
                    f.name.name.as_str()
                };
                add(self, key, DeclKind::Function(f), f.span);
            }
            Item::Struct(s) => {
                let id = add(self, &s.name.name, DeclKind::Struct(s), s.span);
                self.collect_members(id, s);
            }
            Item::Enum(e) => {
                let id = match &e.name {
                    Some(n) => add(self, &n.name, DeclKind::Enum(e), e.span),
                    None => self.add_decl(Decl {
                        name: String::new(),
                        kind: DeclKind::Enum(e),
                        tparams: None,
                        home: None,
                        span: e.span,
                    }),
                };
                if !e.scoped {
                    for (index, (v, _)) in e.variants.iter().enumerate() {
                        add(
                            self,
                            &v.name,
                            DeclKind::Enumerator { owner: id, index },
                            v.span,
                        );
                    }
                }
            }
            Item::Vars(vars) => {
                for v in vars {
                    add(self, &v.name.name, DeclKind::Var(v), v.span);
                }
            }
            Item::Alias { name, ty, span } => {
                add(self, &name.name, DeclKind::Alias(ty), *span);
            }
            Item::UsingDecl(path, span) => {
                add(self, path.last(), DeclKind::Using(path), *span);
            }
            Item::Template { params, item, .. } => {
                self.collect_member(owner, item, Some(params.as_slice()));
            }
            Item::StaticAssert { .. } => {
                self.member_asserts.entry(owner).or_default().push(item);
            }
            Item::Unsupported { what, span } => {
                self.error(format!("{what} are not supported yet"), *span);
            }
            Item::UsingNamespace(_, span)
            | Item::Namespace { span, .. }
            | Item::NamespaceAlias { span, .. } => {
                self.error("namespaces cannot be declared inside a struct", *span);
            }
            Item::Instantiation(inst) => {
                self.error(
                    "explicit instantiations cannot appear inside a struct",
                    inst.span,
                );
            }
            Item::Error(_) => {}
        }
    }

    /// The namespace a `using namespace` path names, looked up from `ns` outward.
    pub fn namespace_path(&self, ns: NsId, path: &ast::Path) -> Option<NsId> {
        let mut start = if path.global { NsId(0) } else { ns };
        loop {
            if let Some(found) = self.namespace_path_from(start, path) {
                return Some(found);
            }
            if path.global || start == NsId(0) {
                return None;
            }
            start = self.parent_ns(start);
        }
    }

    fn namespace_path_from(&self, start: NsId, path: &ast::Path) -> Option<NsId> {
        let mut cur = start;
        for seg in &path.segments {
            let ids = self.namespaces[cur.0 as usize]
                .entries
                .get(&seg.name.name)?;
            cur = ids.iter().find_map(|id| match self.decl(*id).kind {
                DeclKind::Namespace(c) => Some(c),
                _ => None,
            })?;
        }
        Some(cur)
    }

    fn parent_ns(&self, ns: NsId) -> NsId {
        match self.ns_envs[ns.0 as usize].parent() {
            Some(p) => p.namespace(),
            None => NsId(0),
        }
    }

    /// The declarations named `name` directly in namespace `ns` or in a namespace it uses.
    pub fn ns_lookup(&self, ns: NsId, name: &str) -> Vec<(DeclId, Env)> {
        let mut out = Vec::new();
        let mut seen = vec![ns];
        let mut queue = vec![ns];
        while let Some(n) = queue.pop() {
            if let Some(ids) = self.namespaces[n.0 as usize].entries.get(name) {
                let env = self.ns_env(n);
                for id in ids {
                    if !out.iter().any(|(d, _)| d == id) {
                        out.push((*id, env.clone()));
                    }
                }
            }
            for u in &self.namespaces[n.0 as usize].usings {
                if !seen.contains(u) {
                    seen.push(*u);
                    queue.push(*u);
                }
            }
        }
        out
    }

    /// Looks `name` up from `env` outward.
    pub fn lookup(&mut self, env: &Env, name: &str) -> Option<Hit> {
        self.lookup_in(env, name, false)
    }

    /// Looks `name` up as a template: template parameters and injected class names are
    /// passed over, so inside a class template `F<N - 1>` names the template.
    pub fn lookup_template(&mut self, env: &Env, name: &str) -> Option<Hit> {
        self.lookup_in(env, name, true)
    }

    fn lookup_in(&mut self, env: &Env, name: &str, skip_params: bool) -> Option<Hit> {
        let mut e = Some(env.clone());
        while let Some(env) = e {
            match &*env.0 {
                EnvNode::Params { .. } if skip_params => {}
                EnvNode::Params { binds, .. } => {
                    if let Some((_, a)) = binds.iter().rev().find(|(n, _)| n == name) {
                        return Some(Hit::Param(a.clone()));
                    }
                }
                EnvNode::Class { id, .. } => {
                    match self.class_member(*id, name) {
                        // The injected class name is a parameter-like hit.
                        Some(Hit::Param(_)) if skip_params => {}
                        Some(h) => return Some(h),
                        None => {}
                    }
                }
                EnvNode::Ns { ns, .. } => {
                    let found = self.ns_lookup(*ns, name);
                    if !found.is_empty() {
                        return Some(Hit::Decls(found));
                    }
                }
            }
            e = env.parent().cloned();
        }
        // Every kernel sees the standard library as if it had `using namespace metal;`.
        let metal = self.metal_ns?;
        let found = self.ns_lookup(metal, name);
        (!found.is_empty()).then_some(Hit::Decls(found))
    }
}
