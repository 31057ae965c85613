//! Calls: overload resolution with MSL's implicit conversions, template argument
//! deduction for function templates, and inlining of the chosen function — helpers,
//! methods (with `this` bound to the object), constructors, conversion functions and
//! overloaded operators. MSL has no recursion, so every call is inlined.

use std::collections::HashMap;

use metalsim_isa::{Space, Value};

use crate::ast::{self, Expr, ExprKind, FnKind, FunctionDef};
use crate::lower::bitfield::{BitField, InitMember, init_members};
use crate::lower::consteval::Const;
use crate::lower::names::{DeclId, DeclKind, Env, Hit};
use crate::lower::resolve::{FnRef, Resolved};
use crate::lower::templates::{Deduced, TArg, specificity};
use crate::lower::types::{Scalar, StructId, Ty};
use crate::lower::{Binding, DeclType, FnLowerer, InlineCtx, Operand, Place, ReturnSlot, Val};
use crate::source::Span;

/// How many inlined calls may nest.
pub const MAX_CALL_DEPTH: usize = 64;

/// How many calls one kernel may inline in all.
pub const MAX_INLINED_CALLS: usize = 20_000;

/// What overload resolution knows about an argument.
#[derive(Clone, Debug)]
pub struct ArgInfo {
    /// Its type (`None` for a braced list, which converts to whatever the parameter is).
    pub ty: Option<Ty>,
    /// It is an object (can bind to a non-const reference).
    pub lvalue: bool,
    /// The object is `const`.
    pub is_const: bool,
    /// The object's address space (for arrays, which decay to pointers into it).
    pub space: Option<Space>,
}

impl ArgInfo {
    /// A plain value of a type.
    pub fn value(ty: Ty) -> ArgInfo {
        ArgInfo {
            ty: Some(ty),
            lvalue: false,
            is_const: false,
            space: None,
        }
    }
}

/// A lowered call argument.
#[derive(Clone, Debug)]
pub enum Arg<'e> {
    /// An expression's operand.
    Op(Operand, Span),
    /// A braced list, lowered once the parameter type is known.
    List(&'e Expr),
}

impl Arg<'_> {
    fn span(&self) -> Span {
        match self {
            Arg::Op(_, s) => *s,
            Arg::List(e) => e.span,
        }
    }
}

/// The function overload resolution chose, with its signature resolved.
#[derive(Clone, Debug)]
pub struct Chosen<'a> {
    /// The declaration.
    pub decl: DeclId,
    /// The definition (a specialization's, when one matches).
    pub def: &'a FunctionDef,
    /// The scope of its signature and body (template parameters bound).
    pub env: Env,
    /// The type of each parameter, a parameter pack expanded to one per argument.
    pub params: Vec<DeclType>,
    /// For a parameter pack: its name, first argument and argument count.
    pub pack: Option<(String, usize, usize)>,
    /// The return type (`None` when deduced from the body, `auto`).
    pub ret: Option<DeclType>,
    /// The class of a method (its scope's class).
    pub class: Option<StructId>,
}

/// Conversion ranks, best first.
const EXACT: u8 = 0;
const PROMOTION: u8 = 1;
const CONVERSION: u8 = 2;
const USER: u8 = 3;

/// A viable candidate during overload resolution.
struct Viable<'a> {
    chosen: Chosen<'a>,
    ranks: Vec<u8>,
    is_template: bool,
    specificity: u32,
}

impl Viable<'_> {
    fn better_than(&self, other: &Viable<'_>) -> bool {
        let mut strictly = false;
        for (a, b) in self.ranks.iter().zip(&other.ranks) {
            if a > b {
                return false;
            }
            strictly |= a < b;
        }
        if strictly {
            return true;
        }
        if !self.is_template && other.is_template {
            return true;
        }
        self.is_template && other.is_template && self.specificity > other.specificity
    }
}

/// Whether a function is a method that needs an object (declared in a class, not static,
/// not a constructor).
fn needs_object(def: &FunctionDef, env: &Env) -> bool {
    env.class_id().is_some()
        && !def.specifiers.is_static
        && def.kind != FnKind::Constructor
        && def.scope.is_empty()
        || !def.scope.is_empty() && !def.specifiers.is_static
}

impl<'a> FnLowerer<'_, 'a> {
    /// Resolves an overload set for arguments of the given kinds. `this_arg` describes the
    /// object of a method call. Reports (when `report`) and returns `None` when no
    /// candidate is viable or several are equally good.
    pub fn choose(
        &mut self,
        cands: Vec<FnRef>,
        args: &[ArgInfo],
        this_arg: Option<&ArgInfo>,
        name: &str,
        span: Span,
        report: bool,
    ) -> Option<Chosen<'a>> {
        let mut viable: Vec<Viable<'a>> = Vec::new();
        let mut deleted = false;
        for c in cands {
            let mark = self.g.diags.len();
            let v = self.candidate(&c, args, this_arg, span);
            self.g.diags.truncate(mark);
            if let Some(v) = v {
                if v.chosen.def.deleted {
                    deleted = true;
                }
                viable.push(v);
            }
        }
        let best: Vec<usize> = (0..viable.len())
            .filter(|&i| (0..viable.len()).all(|j| i == j || viable[i].better_than(&viable[j])))
            .collect();
        match best.as_slice() {
            [i] => {
                let v = viable.swap_remove(*i);
                if v.chosen.def.deleted {
                    if report {
                        self.error(format!("`{name}` is deleted (`= delete`)"), span);
                    }
                    return None;
                }
                Some(v.chosen)
            }
            _ => {
                if report {
                    let types: Vec<String> = args
                        .iter()
                        .map(|a| a.ty.as_ref().map_or("{...}".into(), |t| self.show(t)))
                        .collect();
                    if viable.is_empty() {
                        self.error(
                            format!("no `{name}` can be called with ({})", types.join(", ")),
                            span,
                        );
                    } else {
                        let _ = deleted;
                        self.error(
                            format!(
                                "the call to `{name}` with ({}) is ambiguous: {} overloads match equally well",
                                types.join(", "),
                                viable.len()
                            ),
                            span,
                        );
                    }
                }
                None
            }
        }
    }

    /// Checks one candidate against the arguments: deduces its template arguments,
    /// resolves its signature and ranks each argument's conversion.
    fn candidate(
        &mut self,
        c: &FnRef,
        args: &[ArgInfo],
        this_arg: Option<&ArgInfo>,
        span: Span,
    ) -> Option<Viable<'a>> {
        let decl = self.g.decl(c.decl).clone();
        let DeclKind::Function(def) = decl.kind else {
            return None;
        };
        let home = decl.home.clone().unwrap_or_else(|| c.env.clone());
        let pack_index = def.params.iter().position(|p| p.pack);
        let fixed = pack_index.unwrap_or(def.params.len());
        let required = def.params[..fixed]
            .iter()
            .filter(|p| p.default.is_none())
            .count();
        if args.len() < required || (pack_index.is_none() && args.len() > def.params.len()) {
            return None;
        }
        let tparams = decl.tparams.filter(|p| !p.is_empty());
        let mut is_template = false;
        let mut env = home.clone();
        let mut spec = 0;
        if let Some(tparams) = tparams {
            is_template = true;
            let mut deduced: Deduced = HashMap::new();
            let mut pack_items: Vec<TArg> = Vec::new();
            let pack_name = pack_index.and_then(|i| pack_type_name(&def.params[i].ty));
            for (i, a) in args.iter().enumerate() {
                let Some(aty) = &a.ty else { continue };
                let p = &def.params[i.min(def.params.len() - 1)];
                if i >= fixed {
                    // Each argument of a pack deduces one element.
                    let mut one: Deduced = HashMap::new();
                    if !self.deduce(&p.ty, aty, tparams, &home, &mut one) {
                        return None;
                    }
                    if let Some(n) = &pack_name
                        && let Some(t) = one.remove(n)
                    {
                        pack_items.push(t);
                    }
                    for (k, v) in one {
                        if deduced.get(&k).is_some_and(|o| *o != v) {
                            return None;
                        }
                        deduced.insert(k, v);
                    }
                    continue;
                }
                let actual = deduction_type(aty, &p.ty);
                if !self.deduce(&p.ty, &actual, tparams, &home, &mut deduced) {
                    return None;
                }
            }
            if let Some(n) = pack_name {
                deduced.insert(n, TArg::Pack(pack_items));
            }
            let explicit = c.targs.clone().unwrap_or_default();
            let binds =
                self.bind_template(tparams, &explicit, &deduced, &home, &decl.name, span)?;
            let names: Vec<&str> = tparams
                .iter()
                .filter_map(|p| p.name.as_ref().map(|n| n.name.as_str()))
                .collect();
            spec = def.params.iter().map(|p| specificity(&p.ty, &names)).sum();
            env = home.params(binds);
        } else if c.targs.is_some() {
            return None;
        }
        // The signature, in the candidate's scope.
        let mut params = Vec::with_capacity(args.len().max(def.params.len()));
        let mut pack = None;
        for (i, p) in def.params.iter().enumerate() {
            if p.pack {
                let count = args.len().saturating_sub(i);
                let pname = pack_type_name(&p.ty);
                let items = match pname.as_deref().and_then(|n| match self.g.lookup(&env, n) {
                    Some(Hit::Param(TArg::Pack(items))) => Some(items),
                    _ => None,
                }) {
                    Some(items) if items.len() == count => items,
                    _ => return None,
                };
                for item in items {
                    let e = env.params(vec![(pname.clone().unwrap_or_default(), item)]);
                    params.push(self.in_env(e, |me| me.resolve_type(&p.ty))?);
                }
                if let Some(n) = &p.name {
                    pack = Some((n.name.clone(), i, count));
                }
                continue;
            }
            params.push(self.in_env(env.clone(), |me| me.resolve_type(&p.ty))?);
        }
        let ret = match constexpr_auto(&def.ret) || is_decltype(&def.ret) {
            // `decltype(expr)` may name the parameters: resolved once they are bound.
            true => None,
            false if def.kind == FnKind::Constructor => None,
            false => Some(self.in_env(env.clone(), |me| me.resolve_type(&def.ret))?),
        };
        let mut ranks = Vec::with_capacity(args.len() + 1);
        let class = c.env.class_id();
        if let Some(t) = this_arg {
            // The object: a `const` object only calls `const` methods.
            let is_const_method = def.method_quals.is_const;
            if t.is_const && !is_const_method && needs_object(def, &c.env) {
                return None;
            }
            ranks.push(if t.is_const == is_const_method {
                EXACT
            } else {
                PROMOTION
            });
        }
        for (a, p) in args.iter().zip(&params) {
            ranks.push(self.rank(a, p, true)?);
        }
        // Use an explicit specialization of the template if one matches.
        let (def, env, decl_used) = self.function_specialization(c.decl, def, env);
        Some(Viable {
            chosen: Chosen {
                decl: decl_used,
                def,
                env,
                params,
                pack,
                ret,
                class,
            },
            ranks,
            is_template,
            specificity: spec,
        })
    }

    /// The explicit specialization of a function template for the arguments bound in
    /// `env`, if one was declared.
    fn function_specialization(
        &mut self,
        primary: DeclId,
        def: &'a FunctionDef,
        env: Env,
    ) -> (&'a FunctionDef, Env, DeclId) {
        let Some(specs) = self.g.specializations.get(&primary).cloned() else {
            return (def, env, primary);
        };
        let bound: Vec<TArg> = match &*env.0 {
            crate::lower::names::EnvNode::Params { binds, .. } => {
                binds.iter().map(|(_, a)| a.clone()).collect()
            }
            _ => Vec::new(),
        };
        for s in specs {
            let d = self.g.decl(s).clone();
            let DeclKind::Function(sdef) = d.kind else {
                continue;
            };
            let Some(pattern) = &sdef.spec_args else {
                continue;
            };
            let home = d.home.clone().unwrap_or_else(|| env.clone());
            let mark = self.g.diags.len();
            let vals = self.in_env(home.clone(), |me| me.targ_values(pattern));
            self.g.diags.truncate(mark);
            if let Some(vals) = vals
                && crate::lower::class::targs_match(&vals, &bound[..vals.len().min(bound.len())])
            {
                return (sdef, home, s);
            }
        }
        (def, env, primary)
    }

    /// The rank of converting an argument to a parameter type, or `None` when it does not
    /// convert implicitly. `user` allows one user-defined conversion (a converting
    /// constructor or a conversion function).
    pub fn rank(&mut self, a: &ArgInfo, p: &DeclType, user: bool) -> Option<u8> {
        let Some(aty) = &a.ty else {
            return Some(USER);
        };
        if p.is_ref && !p.is_const_ref() {
            return (a.lvalue && !a.is_const && *aty == p.ty).then_some(EXACT);
        }
        if *aty == p.ty {
            return Some(EXACT);
        }
        match (aty, &p.ty) {
            (Ty::Scalar(x), Ty::Scalar(y)) => Some(
                if (x.size() < 4 && !x.is_float() && *y == Scalar::Int)
                    || (*x == Scalar::Half && *y == Scalar::Float)
                {
                    PROMOTION
                } else {
                    CONVERSION
                },
            ),
            (Ty::Scalar(_), Ty::Vector { .. }) => Some(CONVERSION),
            // An array decays to a pointer to its first element.
            (Ty::Array(e, _), Ty::Pointer(y)) => {
                (**e == y.pointee && a.space == Some(y.space) && (!a.is_const || y.is_const))
                    .then_some(EXACT)
            }
            (
                Ty::Vector {
                    elem: e1, len: n1, ..
                },
                Ty::Vector {
                    elem: e2, len: n2, ..
                },
            ) => (e1 == e2 && n1 == n2).then_some(PROMOTION),
            (Ty::Pointer(x), Ty::Pointer(y)) => {
                if x.space != y.space {
                    return None;
                }
                if x.pointee == y.pointee {
                    return (!x.is_const || y.is_const).then_some(PROMOTION);
                }
                (y.pointee == Ty::Void && (!x.is_const || y.is_const)).then_some(CONVERSION)
            }
            (Ty::Struct(from), Ty::Struct(to)) => {
                if self.base_path(*from, *to).is_some() {
                    return Some(CONVERSION);
                }
                (user && self.converts_by_constructor(aty, *to)).then_some(USER)
            }
            (Ty::Struct(from), to) => {
                (user && self.conversion_function(*from, to).is_some()).then_some(USER)
            }
            (_, Ty::Struct(to)) => (user && self.converts_by_constructor(aty, *to)).then_some(USER),
            _ => None,
        }
    }

    /// Whether `to` has a constructor taking one argument of type `from`.
    fn converts_by_constructor(&mut self, from: &Ty, to: StructId) -> bool {
        let ctors = self.constructors(to);
        if ctors.is_empty() || self.g.in_user_conversion {
            return false;
        }
        let info = ArgInfo::value(from.clone());
        let mark = self.g.diags.len();
        self.g.in_user_conversion = true;
        let ok = ctors.iter().any(|c| {
            self.candidate(c, std::slice::from_ref(&info), None, Span::default())
                .is_some_and(|v| v.ranks.iter().all(|r| *r < USER))
        });
        self.g.in_user_conversion = false;
        self.g.diags.truncate(mark);
        ok
    }

    /// The constructors of a class.
    pub fn constructors(&mut self, id: StructId) -> Vec<FnRef> {
        match self.g.class_member(id, crate::lower::names::CONSTRUCTORS) {
            Some(Hit::Decls(ds)) => ds
                .into_iter()
                .filter(|(d, _)| {
                    matches!(self.g.decl(*d).kind, DeclKind::Function(f) if f.kind == FnKind::Constructor)
                })
                .map(|(decl, env)| FnRef {
                    decl,
                    env,
                    targs: None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A conversion function of class `from` to type `to` (exact or by a standard
    /// conversion).
    pub fn conversion_function(&mut self, from: StructId, to: &Ty) -> Option<FnRef> {
        let Some(Hit::Decls(ds)) = self.g.class_member(from, "operator conversion") else {
            return None;
        };
        let mut fallback = None;
        for (decl, env) in ds {
            let DeclKind::Function(def) = self.g.decl(decl).kind else {
                continue;
            };
            let mark = self.g.diags.len();
            let r = self.in_env(env.clone(), |me| me.resolve_type(&def.ret));
            self.g.diags.truncate(mark);
            let Some(r) = r else { continue };
            let fref = FnRef {
                decl,
                env,
                targs: None,
            };
            if r.ty == *to {
                return Some(fref);
            }
            let info = ArgInfo::value(r.ty);
            if fallback.is_none()
                && self
                    .rank(&info, &DeclType::plain(to.clone()), false)
                    .is_some()
            {
                fallback = Some(fref);
            }
        }
        fallback
    }

    /// The chain of base classes from `from` to `to` (empty when they are the same).
    pub fn base_path(&self, from: StructId, to: StructId) -> Option<Vec<usize>> {
        if from == to {
            return Some(Vec::new());
        }
        let info = self.g.classes.get(from.0)?;
        for (i, b) in info.bases.iter().enumerate() {
            if let Some(mut rest) = self.base_path(b.id, to) {
                rest.insert(0, i);
                return Some(rest);
            }
        }
        None
    }

    /// The base class subobject of an object.
    pub fn base_place(&mut self, place: Place, from: StructId, to: StructId) -> Option<Place> {
        let path = self.base_path(from, to)?;
        let mut cur = place;
        let mut cur_id = from;
        for i in path {
            let b = self.g.classes[cur_id.0].bases[i];
            let leaf_start: usize = self.g.structs.get(cur_id).fields[..b.field_start]
                .iter()
                .map(|f| self.g.structs.leaf_count(&f.1))
                .sum();
            let n = self.g.structs.leaf_count(&Ty::Struct(b.id));
            cur = match cur {
                Place::Var {
                    slots, is_const, ..
                } => Place::Var {
                    ty: Ty::Struct(b.id),
                    slots: slots[leaf_start..leaf_start + n].to_vec(),
                    is_const,
                },
                Place::Mem {
                    addr,
                    offset,
                    space,
                    is_const,
                    ..
                } => Place::Mem {
                    ty: Ty::Struct(b.id),
                    addr,
                    offset: offset + b.offset,
                    space,
                    is_const,
                },
                other => other,
            };
            cur_id = b.id;
        }
        Some(cur)
    }

    /// What overload resolution knows about a lowered argument.
    pub fn arg_info(&self, a: &Arg<'_>) -> ArgInfo {
        match a {
            Arg::List(_) => ArgInfo {
                ty: None,
                lvalue: false,
                is_const: false,
                space: None,
            },
            Arg::Op(Operand::Value(v), _) => ArgInfo::value(v.ty.clone()),
            Arg::Op(Operand::Place { place, .. }, _) => ArgInfo {
                ty: Some(self.place_ty(place)),
                lvalue: true,
                is_const: place_is_const(place),
                space: match place {
                    Place::Mem { space, .. } => Some(*space),
                    _ => None,
                },
            },
        }
    }

    /// Lowers call arguments, expanding packs (`xs...`).
    pub fn lower_args<'e>(&mut self, args: &'e [Expr]) -> Option<Vec<Arg<'e>>> {
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            match &a.kind {
                ExprKind::InitList(_) => out.push(Arg::List(a)),
                ExprKind::PackExpansion(inner) => {
                    for op in self.expand_pack(inner)? {
                        out.push(Arg::Op(op, a.span));
                    }
                }
                _ => {
                    let op = self.operand(a)?;
                    out.push(Arg::Op(op, a.span));
                }
            }
        }
        Some(out)
    }

    /// Lowers `e...`: once per element of the packs `e` names.
    pub fn expand_pack(&mut self, e: &Expr) -> Option<Vec<Operand>> {
        let mut names = Vec::new();
        pack_names_in(e, &mut names);
        // A function parameter pack (`xs`) or a template parameter pack (`Ts`).
        let mut fn_packs: Vec<(String, Vec<Binding>)> = Vec::new();
        let mut t_packs: Vec<(String, Vec<TArg>)> = Vec::new();
        for n in names {
            if let Some(Binding::Pack(items)) = self.lookup(&n) {
                fn_packs.push((n, items.clone()));
            } else if let Some(Hit::Param(TArg::Pack(items))) = self.g.lookup(&self.env.clone(), &n)
            {
                t_packs.push((n, items));
            }
        }
        let len = fn_packs
            .first()
            .map(|p| p.1.len())
            .or_else(|| t_packs.first().map(|p| p.1.len()));
        let Some(len) = len else {
            self.error(
                "`...` needs a parameter pack in the expression before it",
                e.span,
            );
            return None;
        };
        if fn_packs.iter().any(|p| p.1.len() != len) || t_packs.iter().any(|p| p.1.len() != len) {
            self.error("packs of different lengths are expanded together", e.span);
            return None;
        }
        let mut out = Vec::with_capacity(len);
        for i in 0..len {
            let mut scope = HashMap::new();
            for (n, items) in &fn_packs {
                scope.insert(n.clone(), items[i].clone());
            }
            let binds: Vec<(String, TArg)> = t_packs
                .iter()
                .map(|(n, items)| (n.clone(), items[i].clone()))
                .collect();
            let saved_env = self.env.clone();
            self.env = self.env.params(binds);
            self.scopes.push(scope);
            let r = self.operand(e);
            self.scopes.pop();
            self.env = saved_env;
            out.push(r?);
        }
        Some(out)
    }

    /// Calls a chosen function: binds its parameters and inlines its body. `this` is the
    /// object for a method.
    pub fn inline(
        &mut self,
        chosen: Chosen<'a>,
        args: Vec<Arg<'_>>,
        this: Option<Place>,
        span: Span,
    ) -> Option<Operand> {
        let def = chosen.def;
        let name = def.name.name.clone();
        let instance = chosen.env.instance();
        if self
            .inlines
            .iter()
            .any(|c| c.decl == chosen.decl && c.instance == instance)
        {
            self.error(
                format!("`{name}` calls itself; recursion is not allowed in MSL"),
                span,
            );
            return None;
        }
        self.inlined += 1;
        if self.inlined > MAX_INLINED_CALLS {
            // Calls that each call the next twice grow exponentially.
            if self.inlined == MAX_INLINED_CALLS + 1 {
                self.error(
                    format!("this kernel inlines more than {MAX_INLINED_CALLS} calls; metalsim refuses kernels this large"),
                    span,
                );
            }
            return None;
        }
        if self.inlines.len() >= MAX_CALL_DEPTH {
            self.error(
                format!("calls are nested too deeply ({MAX_CALL_DEPTH} levels)"),
                span,
            );
            return None;
        }
        let Some(body) = def.body.as_ref() else {
            self.error(format!("`{name}` is declared but never defined"), span);
            return None;
        };
        self.g.lowered.insert(chosen.decl);
        if needs_object(def, &chosen.env) && this.is_none() {
            self.error(
                format!("calling the method `{name}` needs an object (`obj.{name}(...)`)"),
                span,
            );
            return None;
        }
        // Parameters: values are copied into fresh variables, references alias the
        // argument's object.
        let mut bindings: HashMap<String, Binding> = HashMap::new();
        let mut pack_items: Vec<Binding> = Vec::new();
        let mut args = args.into_iter();
        let mut index = 0usize;
        for (pi, p) in def.params.iter().enumerate() {
            let count = if p.pack {
                chosen.pack.as_ref().map_or(0, |x| x.2)
            } else {
                1
            };
            for _ in 0..count {
                let d = chosen.params.get(index)?.clone();
                index += 1;
                let arg = match args.next() {
                    Some(a) => a,
                    None => {
                        let Some(default) = &p.default else {
                            self.error(format!("`{name}` needs more arguments"), span);
                            return None;
                        };
                        let op = self.in_env(chosen.env.clone(), |me| me.operand(default))?;
                        Arg::Op(op, default.span)
                    }
                };
                let b = self.bind_param(&d, arg, p.name.as_ref().map(|n| n.name.as_str()))?;
                if p.pack {
                    pack_items.push(b);
                } else if let Some(n) = &p.name {
                    bindings.insert(n.name.clone(), b);
                }
            }
            if p.pack
                && let Some(n) = &p.name
            {
                bindings.insert(
                    n.name.clone(),
                    Binding::Pack(std::mem::take(&mut pack_items)),
                );
            }
            let _ = pi;
        }
        if let Some(obj) = this {
            let obj = match (chosen.class, self.place_ty(&obj)) {
                (Some(c), Ty::Struct(have)) if c != have => {
                    self.base_place(obj.clone(), have, c).unwrap_or(obj)
                }
                _ => obj,
            };
            bindings.insert("this".into(), Binding::This(obj));
        }
        let late_ret = if chosen.ret.is_none() && is_decltype(&def.ret) {
            let saved_scopes = std::mem::replace(&mut self.scopes, vec![bindings.clone()]);
            let saved_env = std::mem::replace(&mut self.env, chosen.env.clone());
            let r = self.resolve_type(&def.ret);
            self.scopes = saved_scopes;
            self.env = saved_env;
            Some(r?)
        } else {
            None
        };
        let ret = match late_ret.as_ref().or(chosen.ret.as_ref()) {
            None if def.kind == FnKind::Constructor => ReturnSlot::Value {
                ty: Ty::Void,
                slots: Vec::new(),
            },
            None => ReturnSlot::Deduced(None),
            Some(d) if d.is_ref => ReturnSlot::Reference {
                is_const: d.is_const,
                place: None,
            },
            Some(d) => ReturnSlot::Value {
                ty: d.ty.clone(),
                slots: self.new_slots(&d.ty),
            },
        };
        let ret_block = self.s.create_block();
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![bindings]);
        let saved_env = std::mem::replace(&mut self.env, chosen.env.clone());
        self.inlines.push(InlineCtx {
            decl: chosen.decl,
            instance,
            ret_block,
            ret,
            loops_base: self.loops.len(),
            call_span: span,
        });
        self.block(&body.stmts);
        self.s.br(ret_block);
        let ctx = self.inlines.pop()?;
        self.scopes = saved_scopes;
        self.env = saved_env;
        self.s.seal(ret_block);
        self.s.switch_to(ret_block);
        Some(match ctx.ret {
            ReturnSlot::Value { ty, slots } => Operand::Value(Val {
                ty,
                parts: slots.iter().map(|s| self.s.read(*s)).collect(),
            }),
            ReturnSlot::Deduced(None) => Operand::Value(Val::void()),
            ReturnSlot::Deduced(Some((ty, slots))) => Operand::Value(Val {
                ty,
                parts: slots.iter().map(|s| self.s.read(*s)).collect(),
            }),
            ReturnSlot::Reference { place, .. } => match place {
                None => {
                    self.error(format!("`{}` must return a reference", def.name.name), span);
                    return None;
                }
                Some((mut p, addr)) => {
                    if let (Some(slot), Place::Mem { addr, offset, .. }) = (addr, &mut p) {
                        *addr = self.s.read(slot);
                        *offset = 0;
                    }
                    Operand::Place {
                        place: p,
                        cached: None,
                    }
                }
            },
        })
    }

    /// Binds one parameter to its argument.
    fn bind_param(&mut self, d: &DeclType, arg: Arg<'_>, name: Option<&str>) -> Option<Binding> {
        if d.is_ref
            && let Arg::Op(Operand::Place { place, .. }, span) = &arg
            && let Place::BitField { field, .. } = place
            && !d.is_const_ref()
        {
            self.error(
                format!(
                    "a non-const reference cannot bind to the bit-field `{}`",
                    field.name
                ),
                *span,
            );
            return None;
        }
        if d.is_ref
            && let Arg::Op(Operand::Place { place, cached }, span) = &arg
            && !matches!(place, Place::BitField { .. })
        {
            let pty = self.place_ty(place);
            if pty == d.ty {
                if !d.is_const_ref() && place_is_const(place) {
                    self.error(
                        "a `const` object cannot bind to a non-const reference",
                        *span,
                    );
                    return None;
                }
                return Some(match cached {
                    Some(v) if d.is_const_ref() => Binding::Cached {
                        place: place.clone(),
                        value: v.clone(),
                    },
                    _ => Binding::Place(place.clone()),
                });
            }
            if let (Ty::Struct(have), Ty::Struct(want)) = (&pty, &d.ty)
                && self.base_path(*have, *want).is_some()
            {
                return self
                    .base_place(place.clone(), *have, *want)
                    .map(Binding::Place);
            }
            if !d.is_const_ref() {
                let (a, b) = (self.show(&pty), self.show(&d.ty));
                self.error(
                    format!("cannot bind a `{a}` to a reference to `{b}`"),
                    *span,
                );
                return None;
            }
        } else if d.is_ref && !d.is_const_ref() {
            self.error(
                "a non-const reference needs an object (a variable or memory)",
                arg.span(),
            );
            return None;
        }
        let v = self.arg_value(arg, &d.ty)?;
        if let Some(n) = name
            && self.g.addr_taken.contains(n)
        {
            return Some(Binding::Place(self.memory_var(n, &v, d.is_const)));
        }
        Some(Binding::Place(self.temp(&v, d.is_const)))
    }

    /// An argument's value converted (implicitly) to `ty`.
    pub fn arg_value(&mut self, arg: Arg<'_>, ty: &Ty) -> Option<Val> {
        match arg {
            Arg::List(e) => self.init_value(ty, e),
            Arg::Op(op, span) => {
                let op = if matches!(ty, Ty::Pointer(_)) {
                    self.decay(op)
                } else {
                    op
                };
                let v = self.load_operand(op, span)?;
                self.at(span);
                self.convert(v, ty, false, span)
            }
        }
    }

    /// Calls a method `name` on an object with arguments. `None` when the class has no such
    /// method (after reporting).
    pub fn call_method(
        &mut self,
        obj: Place,
        name: &str,
        args: Vec<Arg<'_>>,
        span: Span,
    ) -> Option<Operand> {
        self.call_method_with(obj, name, None, args, span)
    }

    /// [`Self::call_method`] with explicit template arguments (`obj.template f<T>(...)`).
    pub fn call_method_with(
        &mut self,
        obj: Place,
        name: &str,
        targs: Option<Vec<TArg>>,
        args: Vec<Arg<'_>>,
        span: Span,
    ) -> Option<Operand> {
        let ty = self.place_ty(&obj);
        if let Ty::Array(_, n) = ty
            && args.is_empty()
        {
            // `array<T, N>`'s size queries; its element access is `[]` on the array.
            let c = match name {
                "size" | "max_size" => Some(Const::int(Scalar::ULong, i128::from(n))),
                "empty" => Some(Const::bool(n == 0)),
                _ => None,
            };
            if let Some(c) = c {
                self.at(span);
                return Some(Operand::Value(self.const_val(c)));
            }
        }
        let Ty::Struct(id) = ty else {
            let t = self.show(&ty);
            self.error(format!("`{t}` has no methods (`{name}`)"), span);
            return None;
        };
        let cands = match self.g.class_member(id, name) {
            Some(Hit::Decls(ds)) => ds
                .into_iter()
                .filter(|(d, _)| matches!(self.g.decl(*d).kind, DeclKind::Function(_)))
                .map(|(decl, env)| FnRef {
                    decl,
                    env,
                    targs: targs.clone(),
                })
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        if cands.is_empty() {
            let t = self.show(&ty);
            self.error(format!("`{t}` has no method `{name}`"), span);
            return None;
        }
        self.call_candidates(cands, Some(obj), args, name, span)
    }

    /// Resolves an overload set against lowered arguments and inlines the choice.
    pub fn call_candidates(
        &mut self,
        cands: Vec<FnRef>,
        this: Option<Place>,
        args: Vec<Arg<'_>>,
        name: &str,
        span: Span,
    ) -> Option<Operand> {
        let infos: Vec<ArgInfo> = args.iter().map(|a| self.arg_info(a)).collect();
        let this_info = this.as_ref().map(|p| ArgInfo {
            ty: Some(self.place_ty(p)),
            lvalue: true,
            is_const: place_is_const(p),
            space: None,
        });
        let chosen = self.choose(cands, &infos, this_info.as_ref(), name, span, true)?;
        let this = if needs_object(chosen.def, &chosen.env) {
            this.or_else(|| self.implicit_this())
        } else {
            None
        };
        self.inline(chosen, args, this, span)
    }

    /// `this`'s object inside a method.
    pub fn implicit_this(&self) -> Option<Place> {
        match self.lookup("this") {
            Some(Binding::This(p)) => Some(p.clone()),
            _ => None,
        }
    }

    /// Constructs an object of class `id` from arguments: a copy, aggregate (member-wise)
    /// initialization when the class declares no constructor, or a constructor call.
    pub fn construct_object(
        &mut self,
        id: StructId,
        args: Vec<Arg<'_>>,
        span: Span,
    ) -> Option<Val> {
        let ty = Ty::Struct(id);
        if let [Arg::Op(op, s)] = args.as_slice() {
            let have = match op {
                Operand::Value(v) => v.ty.clone(),
                Operand::Place { place, .. } => self.place_ty(place),
            };
            if have == ty {
                return self.load_operand(op.clone(), *s);
            }
            if let Ty::Struct(from) = have
                && self.base_path(from, id).is_none()
                && !self.g.has_constructors(id)
                && self.conversion_function(from, &ty).is_some()
            {
                let v = self.load_operand(op.clone(), *s)?;
                return self.convert(v, &ty, true, *s);
            }
        }
        if !self.g.has_constructors(id) {
            return self.aggregate(id, args, span);
        }
        let cands = self.constructors(id);
        let infos: Vec<ArgInfo> = args.iter().map(|a| self.arg_info(a)).collect();
        let cname = self.show(&ty);
        let chosen = self.choose(cands, &infos, None, &cname, span, true)?;
        let obj = self.default_object(id, span)?;
        let place = self.temp(&obj, false);
        self.run_constructor(chosen, args, place.clone(), span)?;
        self.load(&place, span)
    }

    /// Runs a chosen constructor on an object: member initializers, then the body.
    fn run_constructor(
        &mut self,
        chosen: Chosen<'a>,
        args: Vec<Arg<'_>>,
        place: Place,
        span: Span,
    ) -> Option<()> {
        let def = chosen.def;
        if !def.inits.is_empty() {
            // The initializers see the parameters: bind them in a scope of their own, then
            // inline the body with the same bindings.
            let Ty::Struct(id) = self.place_ty(&place) else {
                return None;
            };
            let body_env = chosen.env.clone();
            let mut inits_done = Vec::new();
            let mut params_scope = self.param_scope(&chosen, args, span)?;
            params_scope.insert("this".into(), Binding::This(place.clone()));
            let saved_scopes = std::mem::replace(&mut self.scopes, vec![params_scope.clone()]);
            let saved_env = std::mem::replace(&mut self.env, body_env);
            for mi in &def.inits {
                inits_done.push(self.member_init(id, &place, mi));
            }
            self.scopes = saved_scopes;
            self.env = saved_env;
            // The body with the parameters already bound.
            let args2: Vec<Arg<'_>> = def
                .params
                .iter()
                .filter_map(|p| p.name.as_ref())
                .filter_map(|n| params_scope.get(&n.name))
                .map(|b| match b {
                    Binding::Place(p) => Arg::Op(
                        Operand::Place {
                            place: p.clone(),
                            cached: None,
                        },
                        span,
                    ),
                    Binding::Cached { place, value } => Arg::Op(
                        Operand::Place {
                            place: place.clone(),
                            cached: Some(value.clone()),
                        },
                        span,
                    ),
                    _ => Arg::Op(Operand::Value(Val::void()), span),
                })
                .collect();
            if args2.len() == def.params.len() {
                self.inline(chosen, args2, Some(place), span)?;
                return Some(());
            }
            return None;
        }
        self.inline(chosen, args, Some(place), span).map(|_| ())
    }

    /// The bindings of a chosen function's parameters, in a scope of their own.
    fn param_scope(
        &mut self,
        chosen: &Chosen<'a>,
        args: Vec<Arg<'_>>,
        span: Span,
    ) -> Option<HashMap<String, Binding>> {
        let mut scope = HashMap::new();
        let mut args = args.into_iter();
        for (i, p) in chosen.def.params.iter().enumerate() {
            let d = chosen.params.get(i)?.clone();
            let arg = match args.next() {
                Some(a) => a,
                None => {
                    let default = p.default.as_ref()?;
                    let op = self.in_env(chosen.env.clone(), |me| me.operand(default))?;
                    Arg::Op(op, default.span)
                }
            };
            let b = self.bind_param(&d, arg, p.name.as_ref().map(|n| n.name.as_str()))?;
            if let Some(n) = &p.name {
                scope.insert(n.name.clone(), b);
            }
        }
        let _ = span;
        Some(scope)
    }

    /// One member initializer `x(args)` of a constructor: a field or a base class.
    fn member_init(&mut self, id: StructId, obj: &Place, mi: &ast::MemberInit) -> Option<()> {
        let name = mi.name.last();
        let args: Vec<Expr> = mi.args.clone();
        let field = match self.bit_field(id, name) {
            Some(b) if mi.name.segments.len() == 1 => Some(Place::BitField {
                base: Box::new(obj.clone()),
                field: Box::new(b),
            }),
            _ => match self.g.class_member(id, name) {
                Some(Hit::Field(_, i)) if mi.name.segments.len() == 1 => {
                    Some(self.field_place(obj.clone(), id, i))
                }
                _ => None,
            },
        };
        if let Some(field) = field {
            let fty = self.place_ty(&field);
            let v = if mi.brace {
                let list = Expr {
                    kind: ExprKind::InitList(args),
                    span: mi.span,
                };
                self.init_value(&fty, &list)?
            } else {
                match args.as_slice() {
                    [one] if !matches!(fty, Ty::Struct(_)) => self.init_value(&fty, one)?,
                    _ => self.construct_value(&fty, &args, mi.span)?,
                }
            };
            return self.store(&field, &v, mi.span);
        }
        // A base class.
        let te = ast::TypeExpr {
            kind: ast::TypeKind::Named(mi.name.clone()),
            span: mi.name.span,
        };
        let d = self.resolve_type(&te)?;
        let Ty::Struct(bid) = d.ty else {
            self.error(
                format!("`{name}` is not a member or base of this class"),
                mi.span,
            );
            return None;
        };
        let Some(base) = self.base_place(obj.clone(), id, bid) else {
            self.error(format!("`{name}` is not a base of this class"), mi.span);
            return None;
        };
        let v = self.construct_value(&d.ty, &args, mi.span)?;
        self.store(&base, &v, mi.span)
    }

    /// A field's place inside an object (by flattened field index).
    pub fn field_place(&mut self, obj: Place, id: StructId, index: usize) -> Place {
        let info = self.g.structs.get(id).clone();
        let (_, fty, foff) = info.fields[index].clone();
        match obj {
            Place::Var {
                slots, is_const, ..
            } => {
                let start: usize = info.fields[..index]
                    .iter()
                    .map(|f| self.g.structs.leaf_count(&f.1))
                    .sum();
                let n = self.g.structs.leaf_count(&fty);
                Place::Var {
                    ty: fty,
                    slots: slots[start..start + n].to_vec(),
                    is_const,
                }
            }
            Place::Mem {
                addr,
                offset,
                space,
                is_const,
                ..
            } => Place::Mem {
                ty: fty,
                addr,
                offset: offset + foff,
                space,
                is_const,
            },
            other => other,
        }
    }

    /// An object of class `id` as default initialization leaves it: default member
    /// initializers applied, other fields zero.
    pub fn default_object(&mut self, id: StructId, span: Span) -> Option<Val> {
        let ty = Ty::Struct(id);
        let mut v = self.zero(&ty);
        let inits = self.g.classes[id.0].field_inits.clone();
        if inits.iter().all(Option::is_none) {
            return Some(v);
        }
        let fields = self.g.structs.get(id).fields.clone();
        let mut start = 0usize;
        for (i, (_, fty, _)) in fields.iter().enumerate() {
            let n = self.g.structs.leaf_count(fty);
            if let Some(Some((init, env))) = inits.get(i) {
                let fv = self.in_env(env.clone(), |me| match init {
                    ast::Init::Assign(e) => me.init_value(fty, e),
                    ast::Init::Brace(items) | ast::Init::Ctor(items) => {
                        let list = Expr {
                            kind: ExprKind::InitList(items.clone()),
                            span,
                        };
                        me.init_value(fty, &list)
                    }
                })?;
                v.parts[start..start + n].copy_from_slice(&fv.parts);
            }
            start += n;
        }
        Some(v)
    }

    /// A union's aggregate initialization: its first member from the one argument, through
    /// memory (where a union lives).
    fn union_aggregate(
        &mut self,
        ty: &Ty,
        first: &Ty,
        args: Vec<Arg<'_>>,
        span: Span,
    ) -> Option<Val> {
        if args.len() > 1 {
            self.error(
                "a union is initialized from one value (its first member)",
                span,
            );
            return None;
        }
        let zero = self.zero(ty);
        let place = self.temp(&zero, false);
        if let Some(arg) = args.into_iter().next() {
            let v = self.arg_value(arg, first)?;
            let Place::Mem {
                addr,
                offset,
                space,
                ..
            } = place
            else {
                return None;
            };
            let member = Place::Mem {
                ty: first.clone(),
                addr,
                offset,
                space,
                is_const: false,
            };
            self.store(&member, &v, span)?;
        }
        self.load(&place, span)
    }

    /// Aggregate initialization: fields in order from the arguments (a base class takes
    /// its whole subobject from one argument), the rest default-initialized.
    fn aggregate(&mut self, id: StructId, args: Vec<Arg<'_>>, span: Span) -> Option<Val> {
        let ty = Ty::Struct(id);
        let members = self.g.structs.get(id).union_members.clone();
        if let Some((_, first, _)) = members.first() {
            return self.union_aggregate(&ty, first, args, span);
        }
        let mut v = self.default_object(id, span)?;
        let fields = self.g.structs.get(id).fields.clone();
        let bases = self.g.classes[id.0].bases.clone();
        // Initializable members: each base, then each own field, in declaration order.
        let mut targets: Vec<(Ty, usize, usize)> = Vec::new();
        let mut bit_targets: Vec<Option<BitField>> = Vec::new();
        let own = self.g.classes[id.0].own_fields;
        let leaf_start = |me: &Self, fi: usize| -> usize {
            fields[..fi]
                .iter()
                .map(|f| me.g.structs.leaf_count(&f.1))
                .sum()
        };
        for b in &bases {
            let n = self.g.structs.leaf_count(&Ty::Struct(b.id));
            if n > 0 {
                targets.push((Ty::Struct(b.id), leaf_start(self, b.field_start), n));
                bit_targets.push(None);
            }
        }
        for m in init_members(self.g.structs.get(id), own) {
            match m {
                InitMember::Field(i) => {
                    let n = self.g.structs.leaf_count(&fields[i].1);
                    targets.push((fields[i].1.clone(), leaf_start(self, i), n));
                    bit_targets.push(None);
                }
                InitMember::Bits(b) => {
                    targets.push((Ty::Scalar(b.ty), 0, 0));
                    bit_targets.push(Some(b));
                }
            }
        }
        if args.len() > targets.len() {
            let t = self.show(&ty);
            self.error(
                format!("too many initializers: `{t}` has {} fields", targets.len()),
                span,
            );
            return None;
        }
        let leaves = self.g.structs.leaves(&ty);
        for ((arg, (fty, start, n)), bits) in args.into_iter().zip(targets).zip(bit_targets) {
            let fv = self.arg_value(arg, &fty)?;
            match bits {
                None => v.parts[start..start + n].copy_from_slice(&fv.parts),
                Some(b) => {
                    // The bit-field's storage words are leaves of the object.
                    let at: Vec<usize> = b
                        .words
                        .iter()
                        .filter_map(|(off, w)| {
                            leaves.iter().position(|(t, o)| o == off && *t == w.isa())
                        })
                        .collect();
                    if at.len() != b.words.len() {
                        self.error(
                            format!("initializing the union bit-field `{}` from a braced list is not supported", b.name),
                            span,
                        );
                        return None;
                    }
                    let old: Vec<Value> = at.iter().map(|i| v.parts[*i]).collect();
                    let new = self.insert_bits(&b, &old, fv.parts[0]);
                    for (i, n) in at.into_iter().zip(new) {
                        v.parts[i] = n;
                    }
                }
            }
        }
        Some(v)
    }

    /// A value of type `ty` built from constructor-style arguments `T(args)`.
    pub fn construct_value(&mut self, ty: &Ty, args: &[Expr], span: Span) -> Option<Val> {
        match ty {
            Ty::Struct(id) => {
                let lowered = self.lower_args(args)?;
                self.construct_object(*id, lowered, span)
            }
            _ => self.construct(ty, args, span),
        }
    }

    /// Looks an operator function up for operands (members of the first operand's class
    /// first, then free functions), and calls it. `None` when there is none that fits
    /// (the caller then uses the builtin operator).
    pub fn user_operator(
        &mut self,
        op: &str,
        operands: Vec<(Operand, Span)>,
        span: Span,
    ) -> Option<Option<Operand>> {
        let fname = format!("operator{op}");
        let tys: Vec<Ty> = operands
            .iter()
            .map(|(o, _)| match o {
                Operand::Value(v) => v.ty.clone(),
                Operand::Place { place, .. } => self.place_ty(place),
            })
            .collect();
        if !tys.iter().any(|t| matches!(t, Ty::Struct(_))) {
            return None;
        }
        // Members of the left operand's class.
        if let Ty::Struct(id) = &tys[0]
            && let Some(Hit::Decls(ds)) = self.g.class_member(*id, &fname)
        {
            let cands: Vec<FnRef> = ds
                .into_iter()
                .map(|(decl, env)| FnRef {
                    decl,
                    env,
                    targs: None,
                })
                .collect();
            let mut it = operands.clone().into_iter();
            let (obj, _) = it.next()?;
            let obj = match obj {
                Operand::Place { place, .. } => place,
                Operand::Value(v) => self.temp(&v, false),
            };
            let rest: Vec<Arg<'_>> = it.map(|(o, s)| Arg::Op(o, s)).collect();
            let infos: Vec<ArgInfo> = rest.iter().map(|a| self.arg_info(a)).collect();
            let this_info = ArgInfo {
                ty: Some(tys[0].clone()),
                lvalue: true,
                is_const: place_is_const(&obj),
                space: None,
            };
            let mark = self.g.diags.len();
            let chosen = self.choose(cands, &infos, Some(&this_info), &fname, span, false);
            self.g.diags.truncate(mark);
            if let Some(c) = chosen {
                return Some(self.inline(c, rest, Some(obj), span));
            }
        }
        // Free functions, found from here and in the operands' classes' namespaces.
        let mut cands: Vec<FnRef> = Vec::new();
        let env = self.env.clone();
        if let Some(Hit::Decls(ds)) = self.g.lookup(&env, &fname) {
            for (decl, env) in ds {
                if matches!(self.g.decl(decl).kind, DeclKind::Function(_)) {
                    cands.push(FnRef {
                        decl,
                        env,
                        targs: None,
                    });
                }
            }
        }
        for t in &tys {
            if let Ty::Struct(id) = t {
                let ns = self.g.classes[id.0].env.namespace();
                for (decl, env) in self.g.ns_lookup(ns, &fname) {
                    if !cands.iter().any(|c| c.decl == decl)
                        && matches!(self.g.decl(decl).kind, DeclKind::Function(_))
                    {
                        cands.push(FnRef {
                            decl,
                            env,
                            targs: None,
                        });
                    }
                }
            }
        }
        if cands.is_empty() {
            return None;
        }
        let args: Vec<Arg<'_>> = operands.into_iter().map(|(o, s)| Arg::Op(o, s)).collect();
        let infos: Vec<ArgInfo> = args.iter().map(|a| self.arg_info(a)).collect();
        let mark = self.g.diags.len();
        let chosen = self.choose(cands, &infos, None, &fname, span, false);
        self.g.diags.truncate(mark);
        let c = chosen?;
        Some(self.inline(c, args, None, span))
    }

    /// Calls a conversion function of an object's class to `to`.
    pub fn call_conversion(&mut self, v: Val, to: &Ty, span: Span) -> Option<Val> {
        let Ty::Struct(id) = v.ty else {
            return None;
        };
        let f = self.conversion_function(id, to)?;
        let obj = self.temp(&v, false);
        let infos: Vec<ArgInfo> = Vec::new();
        let this_info = ArgInfo {
            ty: Some(v.ty.clone()),
            lvalue: true,
            is_const: false,
            space: None,
        };
        let chosen = self.choose(
            vec![f],
            &infos,
            Some(&this_info),
            "operator conversion",
            span,
            true,
        )?;
        let r = self.inline(chosen, Vec::new(), Some(obj), span)?;
        let r = self.load_operand(r, span)?;
        self.convert(r, to, true, span)
    }

    /// Lowers a call expression.
    #[inline(never)]
    pub fn call(&mut self, callee: &Expr, args: &[Expr], span: Span) -> Option<Operand> {
        match &callee.kind {
            ExprKind::Member {
                base,
                name,
                targs,
                arrow,
            } => {
                let obj = if *arrow {
                    let p = self.rvalue(base)?;
                    self.deref(p, base.span)?
                } else {
                    match self.operand(base)? {
                        Operand::Place { place, .. } => place,
                        Operand::Value(v) => {
                            if !matches!(v.ty, Ty::Struct(_)) {
                                let t = self.show(&v.ty);
                                self.error(
                                    format!("`{t}` has no methods (`{}`)", name.name),
                                    name.span,
                                );
                                return None;
                            }
                            self.temp(&v, false)
                        }
                    }
                };
                if let Ty::SimdMatrix(_) = self.place_ty(&obj) {
                    return self.matrix_method(obj, &name.name, args, span);
                }
                let explicit = if targs.is_empty() {
                    None
                } else {
                    Some(self.targ_values(targs)?)
                };
                let lowered = self.lower_args(args)?;
                self.call_method_with(obj, &name.name, explicit, lowered, span)
            }
            ExprKind::Name(path) => {
                if path.is_plain() && path.last() == "is_function_constant_defined" {
                    return self
                        .function_constant_defined(args, span)
                        .map(Operand::Value);
                }
                let mark = self.g.diags.len();
                let Some(r) = self.resolve_path(path, false) else {
                    if self.g.diags.len() == mark {
                        self.error(format!("unknown function `{}`", path.to_text()), path.span);
                    }
                    return None;
                };
                self.call_resolved(r, path, args, callee.span, span)
            }
            _ => {
                let f = self.operand(callee)?;
                let lowered = self.lower_args(args)?;
                self.call_object(f, lowered, callee.span, span)
            }
        }
    }

    fn call_resolved(
        &mut self,
        r: Resolved,
        path: &ast::Path,
        args: &[Expr],
        callee_span: Span,
        span: Span,
    ) -> Option<Operand> {
        let name = path.last().to_string();
        match r {
            Resolved::Type(ty) | Resolved::Local(Binding::Type(ty)) => {
                self.construct_value(&ty, args, span).map(Operand::Value)
            }
            Resolved::Enum(id) => {
                let ty = self.enum_type(id);
                self.construct(&ty, args, span).map(Operand::Value)
            }
            Resolved::Overloads(cands) => {
                let lowered = self.lower_args(args)?;
                let infos: Vec<ArgInfo> = lowered.iter().map(|a| self.arg_info(a)).collect();
                // A builtin of the same name answers when no user function fits.
                if crate::lower::builtins::is_builtin(&name) {
                    let mark = self.g.diags.len();
                    let chosen = self.choose(cands, &infos, None, &name, span, false);
                    self.g.diags.truncate(mark);
                    return match chosen {
                        Some(c) => {
                            let this = if needs_object(c.def, &c.env) {
                                self.implicit_this()
                            } else {
                                None
                            };
                            self.inline(c, lowered, this, span)
                        }
                        None => self.builtin_call(&name, &[], lowered, span),
                    };
                }
                let this = self.implicit_this();
                self.call_candidates(cands, this, lowered, &name, span)
            }
            Resolved::Builtin { name, targs } => {
                let lowered = self.lower_args(args)?;
                self.builtin_call(&name, &targs, lowered, span)
            }
            Resolved::ClassTemplate(_) => {
                self.error(
                    format!("give the template arguments of `{name}`: `{name}<...>(...)`"),
                    callee_span,
                );
                None
            }
            Resolved::Local(_) | Resolved::Field(..) | Resolved::Global(_) => {
                let f = self.operand_of(r, path, callee_span)?;
                let lowered = self.lower_args(args)?;
                self.call_object(f, lowered, callee_span, span)
            }
            _ => {
                self.error(
                    format!("`{}` is not a function", path.to_text()),
                    callee_span,
                );
                None
            }
        }
    }

    /// `f(args)` where `f` is an object: its `operator()`.
    fn call_object(
        &mut self,
        f: Operand,
        args: Vec<Arg<'_>>,
        callee_span: Span,
        span: Span,
    ) -> Option<Operand> {
        let obj = match f {
            Operand::Place { place, .. } => place,
            Operand::Value(v) => self.temp(&v, false),
        };
        if !matches!(self.place_ty(&obj), Ty::Struct(_)) {
            let t = self.show(&self.place_ty(&obj));
            self.error(format!("a `{t}` cannot be called"), callee_span);
            return None;
        }
        self.call_method(obj, "operator()", args, span)
    }

    /// A builtin function call on lowered arguments.
    pub fn builtin_call(
        &mut self,
        name: &str,
        targs: &[TArg],
        args: Vec<Arg<'_>>,
        span: Span,
    ) -> Option<Operand> {
        let mut ops = Vec::with_capacity(args.len());
        for a in args {
            match a {
                Arg::Op(op, s) => ops.push((op, s)),
                Arg::List(e) => {
                    self.error(
                        format!(
                            "`{name}` cannot take a braced list; write the type: `float4{{...}}`"
                        ),
                        e.span,
                    );
                    return None;
                }
            }
        }
        self.builtin(name, targs, ops, span).map(Operand::Value)
    }

    /// `is_function_constant_defined(name)`.
    fn function_constant_defined(&mut self, args: &[Expr], span: Span) -> Option<Val> {
        let [arg] = args else {
            self.error(
                "`is_function_constant_defined` takes one function constant",
                span,
            );
            return None;
        };
        let ExprKind::Name(p) = &arg.kind else {
            self.error(
                "`is_function_constant_defined` takes the name of a function constant",
                arg.span,
            );
            return None;
        };
        match self.resolve_path(p, true)? {
            Resolved::Global(crate::lower::GlobalValue::Spec { value, .. }) => {
                self.at(span);
                Some(self.const_val(crate::lower::consteval::Const::bool(value.is_some())))
            }
            Resolved::Global(crate::lower::GlobalValue::SpecVector { value, .. }) => {
                self.at(span);
                Some(self.const_val(crate::lower::consteval::Const::bool(value.is_some())))
            }
            _ => {
                self.error(
                    format!("`{}` is not a function constant", p.to_text()),
                    arg.span,
                );
                None
            }
        }
    }
}

/// Whether a place is `const`.
pub fn place_is_const(p: &Place) -> bool {
    match p {
        Place::Var { is_const, .. } => *is_const,
        Place::Mem {
            is_const, space, ..
        } => *is_const || *space == Space::Constant,
        Place::Swizzle { base, .. }
        | Place::DynComponent { base, .. }
        | Place::DynElement { base, .. }
        | Place::BitField { base, .. } => place_is_const(base),
    }
}

/// The name of the template parameter pack a function parameter pack is declared with
/// (`Ts` in `Ts... xs`, `const Ts&... xs`).
fn pack_type_name(t: &ast::TypeExpr) -> Option<String> {
    match &t.kind {
        ast::TypeKind::Named(p) if p.is_plain() => Some(p.last().to_string()),
        ast::TypeKind::Qualified { inner, .. } => pack_type_name(inner),
        ast::TypeKind::Reference { referent } => pack_type_name(referent),
        ast::TypeKind::Pointer { pointee, .. } => pack_type_name(pointee),
        _ => None,
    }
}

/// The type deduction sees for an argument (arrays do not decay here: MSL passes them by
/// reference).
fn deduction_type(actual: &Ty, _param: &ast::TypeExpr) -> Ty {
    actual.clone()
}

/// Whether a return type is `auto` (deduced from the body).
/// Whether a return type is `decltype(...)` (possibly qualified).
fn is_decltype(t: &ast::TypeExpr) -> bool {
    match &t.kind {
        ast::TypeKind::Decltype(_) => true,
        ast::TypeKind::Qualified { inner, .. } => is_decltype(inner),
        _ => false,
    }
}

fn constexpr_auto(t: &ast::TypeExpr) -> bool {
    match &t.kind {
        ast::TypeKind::Auto => true,
        ast::TypeKind::Qualified { inner, .. } => constexpr_auto(inner),
        _ => false,
    }
}

/// The names an expression mentions (to find the packs a pack expansion expands).
fn pack_names_in(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Name(p) => {
            if p.is_plain() {
                out.push(p.last().to_string());
            }
            for s in &p.segments {
                for a in &s.args {
                    if let ast::TemplateArg::Type(ast::TypeExpr {
                        kind: ast::TypeKind::Named(q),
                        ..
                    }) = a
                        && q.is_plain()
                    {
                        out.push(q.last().to_string());
                    }
                }
            }
        }
        ExprKind::Unary { operand, .. } | ExprKind::Postfix { operand, .. } => {
            pack_names_in(operand, out)
        }
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Assign { lhs, rhs, .. } => {
            pack_names_in(lhs, out);
            pack_names_in(rhs, out);
        }
        ExprKind::Conditional { cond, then_, else_ } => {
            pack_names_in(cond, out);
            pack_names_in(then_, out);
            pack_names_in(else_, out);
        }
        ExprKind::Call { callee, args } => {
            pack_names_in(callee, out);
            for a in args {
                pack_names_in(a, out);
            }
        }
        ExprKind::Member { base, .. } => pack_names_in(base, out),
        ExprKind::Index { base, index } => {
            pack_names_in(base, out);
            pack_names_in(index, out);
        }
        ExprKind::Cast { ty, expr, .. } => {
            if let ast::TypeKind::Named(q) = &ty.kind
                && q.is_plain()
            {
                out.push(q.last().to_string());
            }
            pack_names_in(expr, out);
        }
        ExprKind::SizeofType(ast::TypeExpr {
            kind: ast::TypeKind::Named(q),
            ..
        }) if q.is_plain() => out.push(q.last().to_string()),
        ExprKind::InitList(items) | ExprKind::TypedInitList { elems: items, .. } => {
            for i in items {
                pack_names_in(i, out);
            }
        }
        _ => {}
    }
}
