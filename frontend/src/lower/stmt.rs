//! Statements: declarations, control flow, and the scopes and loop contexts they open.

use std::collections::HashMap;

use metalsim_isa::{Alloc, CmpCond, Op, Space, Type};

use crate::ast::{self, Expr, ExprKind, Init, Stmt, StmtKind, TypeKind};
use crate::lower::consteval;
use crate::lower::constobj::{ConstKey, ConstObj};
use crate::lower::names::DeclId;
use crate::lower::templates::TArg;
use crate::lower::types::Ty;
use crate::lower::{Binding, FnLowerer, LoopCtx, Operand, Place, ReturnSlot, Val};

impl<'a> FnLowerer<'_, 'a> {
    /// Lowers a list of statements in a new scope.
    pub fn block(&mut self, stmts: &'a [Stmt]) {
        self.scopes.push(HashMap::new());
        for s in stmts {
            self.stmt(s);
        }
        self.scopes.pop();
    }

    /// Starts a fresh block for code that follows a jump (it is unreachable unless a label
    /// leads to it).
    fn after_jump(&mut self) {
        let b = self.s.create_block();
        self.s.seal(b);
        self.s.switch_to(b);
    }

    /// Lowers one statement.
    pub fn stmt(&mut self, st: &'a Stmt) {
        if self.s.is_terminated() {
            self.after_jump();
        }
        self.at(st.span);
        match &st.kind {
            StmtKind::Decl(vars) => {
                for v in vars {
                    self.local_var(v);
                }
            }
            StmtKind::Expr(e) => {
                self.rvalue(e);
            }
            StmtKind::Block(b) => self.block(&b.stmts),
            StmtKind::Items(items) => self.local_items(items),
            StmtKind::If {
                constexpr_: true,
                cond,
                then_,
                else_,
            } => {
                // Only the taken branch is compiled (the other may not even type-check).
                let Some(c) = self.const_expr(cond, "an `if constexpr` condition") else {
                    return;
                };
                if c.as_bool() {
                    self.scoped(then_);
                } else if let Some(e) = else_ {
                    self.scoped(e);
                }
            }
            StmtKind::If {
                constexpr_: false,
                cond,
                then_,
                else_,
            } => {
                let Some(c) = self.rvalue(cond).and_then(|c| self.condition(c, cond.span)) else {
                    return;
                };
                self.at(st.span);
                let tb = self.s.create_block();
                let join = self.s.create_block();
                let fb = if else_.is_some() {
                    self.s.create_block()
                } else {
                    join
                };
                self.s.br_if(c, tb, fb);
                self.s.seal(tb);
                self.s.switch_to(tb);
                self.scoped(then_);
                self.s.br(join);
                if let Some(e) = else_ {
                    self.s.seal(fb);
                    self.s.switch_to(fb);
                    self.scoped(e);
                    self.s.br(join);
                }
                self.s.seal(join);
                self.s.switch_to(join);
            }
            StmtKind::While { cond, body } => {
                self.lower_loop(None, Some(cond), None, body, false, st)
            }
            StmtKind::DoWhile { body, cond } => {
                self.lower_loop(None, Some(cond), None, body, true, st)
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.scopes.push(HashMap::new());
                self.lower_loop(
                    init.as_deref(),
                    cond.as_ref(),
                    step.as_ref(),
                    body,
                    false,
                    st,
                );
                self.scopes.pop();
            }
            StmtKind::Switch { cond, body } => self.switch(cond, body, st),
            StmtKind::Case(_) | StmtKind::Default => {
                self.error(
                    "`case` and `default` labels must be directly inside a `switch` body",
                    st.span,
                );
            }
            StmtKind::Break => {
                let base = self.inlines.last().map_or(0, |c| c.loops_base);
                match self.loops.last() {
                    Some(l) if self.loops.len() > base => {
                        let t = l.break_to;
                        self.s.br(t);
                    }
                    _ => self.error("`break` outside a loop or switch", st.span),
                }
            }
            StmtKind::Continue => {
                let base = self.inlines.last().map_or(0, |c| c.loops_base);
                let target = self.loops[base.min(self.loops.len())..]
                    .iter()
                    .rev()
                    .find_map(|l| l.continue_to);
                match target {
                    Some(t) => self.s.br(t),
                    None => self.error("`continue` outside a loop", st.span),
                }
            }
            StmtKind::Return(value) => self.ret(value.as_ref(), st),
            StmtKind::StaticAssert { cond, message } => {
                self.check_static_assert(cond, message.as_deref(), st.span)
            }
            StmtKind::Empty | StmtKind::Error => {}
        }
    }

    /// A statement in its own scope (the body of an `if` or loop).
    fn scoped(&mut self, st: &'a Stmt) {
        match &st.kind {
            StmtKind::Block(b) => self.block(&b.stmts),
            _ => self.block(std::slice::from_ref(st)),
        }
    }

    fn ret(&mut self, value: Option<&Expr>, st: &Stmt) {
        let Some(ctx) = self.inlines.last() else {
            if let Some(v) = value {
                self.error(
                    "a kernel returns `void`; `return` takes no value here",
                    v.span,
                );
                return;
            }
            self.s.ret();
            return;
        };
        let ret_block = ctx.ret_block;
        match &ctx.ret {
            ReturnSlot::Value { ty, slots } => {
                let (ty, slots) = (ty.clone(), slots.clone());
                match (value, &ty) {
                    (None, Ty::Void) => {}
                    (Some(v), Ty::Void) => {
                        // `return f();` where f returns void is allowed.
                        if let Some(r) = self.rvalue(v)
                            && r.ty != Ty::Void
                        {
                            self.error("this function returns `void`", v.span);
                            return;
                        }
                    }
                    (None, _) => {
                        self.error("this function must return a value", st.span);
                        return;
                    }
                    (Some(v), ty) => {
                        let Some(val) = self.init_value(ty, v) else {
                            return;
                        };
                        for (s, p) in slots.iter().zip(&val.parts) {
                            self.s.write(*s, *p);
                        }
                    }
                }
            }
            ReturnSlot::Deduced(known) => {
                let known = known.clone();
                let val = match value {
                    Some(v) => match self.rvalue(v) {
                        Some(val) => val,
                        None => return,
                    },
                    None => Val::void(),
                };
                let slots = match known {
                    Some((ty, slots)) => {
                        let Some(val2) = self.convert(val.clone(), &ty, false, st.span) else {
                            return;
                        };
                        for (s, p) in slots.iter().zip(&val2.parts) {
                            self.s.write(*s, *p);
                        }
                        None
                    }
                    None => {
                        let slots = self.new_slots(&val.ty);
                        for (s, p) in slots.iter().zip(&val.parts) {
                            self.s.write(*s, *p);
                        }
                        Some((val.ty.clone(), slots))
                    }
                };
                if let Some(first) = slots
                    && let Some(ctx) = self.inlines.last_mut()
                {
                    ctx.ret = ReturnSlot::Deduced(Some(first));
                }
            }
            ReturnSlot::Reference { is_const, place } => {
                let (is_const, known) = (*is_const, place.clone());
                let Some(v) = value else {
                    self.error("this function must return a reference", st.span);
                    return;
                };
                let Some(p) = self.place(v) else { return };
                let p = match p {
                    Place::Var { ty, slots, .. } => Place::Var {
                        ty,
                        slots,
                        is_const,
                    },
                    Place::Mem {
                        ty,
                        addr,
                        offset,
                        space,
                        is_const: c,
                    } => Place::Mem {
                        ty,
                        addr,
                        offset,
                        space,
                        is_const: c || is_const,
                    },
                    other => other,
                };
                let new = match (&known, &p) {
                    (None, Place::Mem { addr, offset, .. }) => {
                        let a = self.mem_addr(*addr, *offset);
                        let slot = self.s.new_slot(Type::U64);
                        self.s.write(slot, a);
                        Some((p.clone(), Some(slot)))
                    }
                    (None, _) => Some((p.clone(), None)),
                    (
                        Some((Place::Mem { ty, space, .. }, Some(slot))),
                        Place::Mem {
                            ty: t2,
                            space: s2,
                            addr,
                            offset,
                            ..
                        },
                    ) if ty == t2 && space == s2 => {
                        let a = self.mem_addr(*addr, *offset);
                        self.s.write(*slot, a);
                        None
                    }
                    (Some((Place::Var { slots, .. }, _)), Place::Var { slots: s2, .. })
                        if slots == s2 =>
                    {
                        None
                    }
                    _ => {
                        self.error(
                            "returning references to different kinds of objects from one function is not supported",
                            v.span,
                        );
                        return;
                    }
                };
                if let Some(n) = new
                    && let Some(ctx) = self.inlines.last_mut()
                {
                    ctx.ret = ReturnSlot::Reference {
                        is_const,
                        place: Some(n),
                    };
                }
            }
        }
        self.at(st.span);
        self.s.br(ret_block);
    }

    /// `for`, `while` and `do`-`while`.
    fn lower_loop(
        &mut self,
        init: Option<&'a Stmt>,
        cond: Option<&Expr>,
        step: Option<&Expr>,
        body: &'a Stmt,
        do_while: bool,
        st: &Stmt,
    ) {
        if let Some(i) = init {
            self.stmt(i);
        }
        self.at(st.span);
        let header = self.s.create_block();
        let body_block = self.s.create_block();
        let latch = self.s.create_block();
        let exit = self.s.create_block();
        if do_while {
            self.s.br(body_block);
        } else {
            self.s.br(header);
        }
        // The header tests the condition; the latch runs the step then jumps back.
        self.s.switch_to(header);
        match cond {
            Some(c) => {
                let v = self.rvalue(c).and_then(|v| self.condition(v, c.span));
                self.at(c.span);
                match v {
                    Some(v) => self.s.br_if(v, body_block, exit),
                    None => self.s.br(exit),
                }
            }
            None => self.s.br(body_block),
        }
        self.s.seal(body_block);
        self.s.switch_to(body_block);
        self.loops.push(LoopCtx {
            break_to: exit,
            continue_to: Some(latch),
        });
        self.scoped(body);
        self.loops.pop();
        self.s.br(latch);
        self.s.seal(latch);
        self.s.switch_to(latch);
        if let Some(s) = step {
            self.rvalue(s);
        }
        self.at(st.span);
        self.s.br(header);
        self.s.seal(header);
        self.s.seal(exit);
        self.s.switch_to(exit);
    }

    /// `switch`: a chain of comparisons to the case blocks, which fall through in order.
    fn switch(&mut self, cond: &Expr, body: &'a Stmt, st: &Stmt) {
        let Some(v) = self.rvalue(cond) else { return };
        let Some(s) =
            v.ty.elem_scalar()
                .filter(|s| s.is_int() && matches!(v.ty, Ty::Scalar(_)))
        else {
            let t = self.show(&v.ty);
            self.error(format!("`switch` needs an integer, found `{t}`"), cond.span);
            return;
        };
        let stmts: &'a [Stmt] = match &body.kind {
            StmtKind::Block(b) => &b.stmts,
            _ => std::slice::from_ref(body),
        };
        // Split the body at its labels.
        let mut labels: Vec<(Option<i128>, usize, ast::Stmt)> = Vec::new();
        for (i, s2) in stmts.iter().enumerate() {
            match &s2.kind {
                StmtKind::Case(e) => match self.const_expr(e, "a `case` label") {
                    Some(c) if !c.ty.is_float() => {
                        let k = c.cast(s).as_i128();
                        if labels.iter().any(|l| l.0 == Some(k)) {
                            self.error(format!("duplicate case value {k}"), e.span);
                        }
                        labels.push((Some(k), i, s2.clone()));
                    }
                    Some(_) => self.error("a case label must be an integer constant", e.span),
                    None => {}
                },
                StmtKind::Default => {
                    if labels.iter().any(|l| l.0.is_none()) {
                        self.error("two `default` labels", s2.span);
                    }
                    labels.push((None, i, s2.clone()));
                }
                _ => {}
            }
        }
        if labels.first().is_some_and(|l| l.1 != 0) || (labels.is_empty() && !stmts.is_empty()) {
            let sp = stmts[0].span;
            self.error(
                "statements before the first `case` label are never executed",
                sp,
            );
        }
        self.at(st.span);
        let exit = self.s.create_block();
        let blocks: Vec<_> = labels.iter().map(|_| self.s.create_block()).collect();
        let default = labels
            .iter()
            .position(|l| l.0.is_none())
            .map(|i| blocks[i])
            .unwrap_or(exit);
        for (i, (k, _, lst)) in labels.iter().enumerate() {
            let Some(k) = k else { continue };
            self.at(lst.span);
            let kc = self.constant(consteval::Const::int(s, *k));
            let c = self.s.val(Op::Cmp(CmpCond::Eq), s.isa(), &[v.parts[0], kc]);
            let next = self.s.create_block();
            self.s.br_if(c, blocks[i], next);
            self.s.seal(next);
            self.s.switch_to(next);
        }
        self.s.br(default);
        self.loops.push(LoopCtx {
            break_to: exit,
            continue_to: None,
        });
        self.scopes.push(HashMap::new());
        for (i, (_, start, _)) in labels.iter().enumerate() {
            // Fall through from the previous case.
            self.s.br(blocks[i]);
            self.s.seal(blocks[i]);
            self.s.switch_to(blocks[i]);
            let end = labels.get(i + 1).map_or(stmts.len(), |l| l.1);
            for s2 in &stmts[start + 1..end] {
                self.stmt(s2);
            }
        }
        self.scopes.pop();
        self.loops.pop();
        self.s.br(exit);
        self.s.seal(exit);
        self.s.switch_to(exit);
    }

    /// Types declared in a function: aliases, enums (scoped ones too) and classes.
    fn local_items(&mut self, items: &'a [ast::Item]) {
        for item in items {
            match item {
                ast::Item::Struct(def) => self.local_class(item, def),
                // `struct { ... } v;` declares the class, then its variables.
                ast::Item::Vars(vars) => vars.iter().for_each(|v| self.local_var(v)),
                ast::Item::Alias { name, ty, .. } => {
                    if let Some(d) = self.resolve_type(ty) {
                        self.bind(&name.name, Binding::Type(d.ty));
                    }
                }
                ast::Item::Enum(e) => {
                    let ty = match &e.underlying {
                        None => Ty::INT,
                        Some(t) => match self.resolve_type(t) {
                            Some(d) => d.ty,
                            None => continue,
                        },
                    };
                    let Ty::Scalar(s) = ty else {
                        self.error("an enum's underlying type must be an integer", e.span);
                        continue;
                    };
                    if let Some(n) = &e.name
                        && !e.scoped
                    {
                        self.bind(&n.name, Binding::Type(ty.clone()));
                    }
                    // Earlier enumerators are visible to later initializers, unqualified; a
                    // scoped enum's are then only reachable through its name.
                    if e.scoped {
                        self.scopes.push(Default::default());
                    }
                    let mut values = Vec::with_capacity(e.variants.len());
                    let mut next = consteval::Const::int(s, 0);
                    for (v, value) in &e.variants {
                        let c = match value {
                            Some(x) => match self.const_expr(x, "an enumerator value") {
                                Some(c) => c.cast(s),
                                None => next,
                            },
                            None => next,
                        };
                        self.bind(&v.name, Binding::Const(c));
                        values.push((v.name.clone(), c));
                        next = consteval::Const::int(s, c.as_i128() + 1);
                    }
                    if e.scoped {
                        self.scopes.pop();
                        match &e.name {
                            Some(n) => {
                                let decl = self.local_decl(item, &n.name);
                                if let Some(decl) = decl {
                                    self.bind(&n.name, Binding::ScopedEnum { ty, values, decl });
                                }
                            }
                            None => self.error("a scoped enum needs a name", e.span),
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// A class declared in a function (`struct S { ... };`): its name means the class from
    /// here to the end of the block.
    ///
    /// The class is collected into a namespace of its own (one per declaration and
    /// instantiation of the enclosing function, so `f<float>` and `f<int>` declare different
    /// classes, and every call of `f` the same one) whose scope is the function's: its
    /// members see the function's template parameters and namespaces, and the local types
    /// and constants visible at the declaration, bound as template parameters are.
    fn local_class(&mut self, item: &'a ast::Item, def: &'a ast::StructDef) {
        if def.forward {
            // A later definition in the block declares the class; until then it is
            // incomplete, so nothing can use it.
            return;
        }
        let Some(decl) = self.local_decl(item, &def.name.name) else {
            return;
        };
        let Some(env) = self.g.decl(decl).home.clone() else {
            return;
        };
        if let Some(ty) = self.class_type(decl, &env, &[], def.name.span) {
            self.bind(&def.name.name, Binding::Type(ty));
        }
    }

    /// Declares a type declared in a function (a class or a scoped enum) for the classes
    /// declared after it: collected into a namespace of its own whose scope is the
    /// function's, with the local types, constants and scoped enums visible here. One per
    /// declaration and instantiation of the enclosing function.
    fn local_decl(&mut self, item: &'a ast::Item, name: &str) -> Option<DeclId> {
        let home = self.env.params(self.visible_local_types());
        let key = (std::ptr::from_ref(item) as usize, home.instance());
        let ns = match self.g.local_namespaces.get(&key) {
            Some(ns) => *ns,
            None => {
                let ns = self.g.add_local_namespace(home);
                self.g.local_namespaces.insert(key, ns);
                let enums: Vec<(String, DeclId)> = self
                    .scopes
                    .iter()
                    .flat_map(|s| s.iter())
                    .filter_map(|(n, b)| match b {
                        Binding::ScopedEnum { decl, .. } => Some((n.clone(), *decl)),
                        _ => None,
                    })
                    .collect();
                let entries = &mut self.g.namespaces[ns.0 as usize].entries;
                for (n, decl) in enums {
                    // Inner scopes' enums shadow outer ones of the same name.
                    entries.insert(n, vec![decl]);
                }
                self.g.collect(std::slice::from_ref(item), ns);
                ns
            }
        };
        self.g.namespaces[ns.0 as usize]
            .entries
            .get(name)
            .and_then(|ids| ids.last().copied())
    }

    /// The local types and constants in scope, as template parameter bindings (inner ones
    /// last, so that they shadow outer ones of the same name).
    fn visible_local_types(&self) -> Vec<(String, TArg)> {
        let mut out = Vec::new();
        for scope in &self.scopes {
            let mut binds: Vec<(String, TArg)> = scope
                .iter()
                .filter_map(|(name, b)| match b {
                    Binding::Type(t) => Some((name.clone(), TArg::Type(t.clone()))),
                    Binding::Const(c) => Some((name.clone(), TArg::Value(*c))),
                    _ => None,
                })
                .collect();
            // Sorted, so that the scope (a key of the class's instantiation) does not
            // depend on hash-map order.
            binds.sort_by(|a, b| a.0.cmp(&b.0));
            out.extend(binds);
        }
        out
    }

    /// A local variable declaration.
    fn local_var(&mut self, v: &ast::VarDecl) {
        let name = v.name.name.clone();
        let auto = matches!(strip_quals(&v.ty), TypeKind::Auto)
            || matches!(strip_quals(&v.ty), TypeKind::Reference { referent }
                if matches!(strip_quals(referent), TypeKind::Auto));
        if auto {
            self.auto_var(v, &name);
            return;
        }
        let Some(mut d) = self.resolve_type(&v.ty) else {
            return;
        };
        let list = |items: &Vec<Expr>, span| Expr {
            kind: ExprKind::InitList(items.clone()),
            span,
        };
        if d.unsized_array {
            let n = match &v.init {
                Some(Init::Assign(Expr {
                    kind: ExprKind::InitList(items),
                    ..
                }))
                | Some(Init::Brace(items)) => items.len(),
                _ => 0,
            };
            match &d.ty {
                Ty::Array(e, _) if n > 0 => d.ty = Ty::Array(e.clone(), n as u32),
                _ => {
                    self.error("an array without a size needs an initializer list", v.span);
                    return;
                }
            }
        }
        let leaves = self.g.structs.leaf_count(&d.ty);
        if !d.is_ref && d.space.is_none_or(|s| s == Space::Thread) && leaves > MAX_THREAD_VAR_LEAVES
        {
            self.error(
                format!(
                    "the thread-local variable `{name}` holds {leaves} scalars; metalsim supports at most {MAX_THREAD_VAR_LEAVES} per variable (put it in threadgroup or device memory)"
                ),
                v.span,
            );
            return;
        }
        // Atomics live only in memory: a threadgroup atomic is fine, a thread-local one is not.
        let atomic_here = matches!(d.ty, Ty::Atomic(_)) && d.space != Some(Space::Threadgroup);
        if (matches!(d.ty, Ty::Void) || atomic_here) && !d.is_ref {
            let t = self.show(&d.ty);
            self.error(
                format!("cannot declare a local variable of type `{t}`"),
                v.span,
            );
            return;
        }
        // Compile-time constants.
        if (v.storage.constexpr || d.is_const)
            && !d.is_ref
            && let Ty::Scalar(s) = d.ty
        {
            let e = match &v.init {
                Some(Init::Assign(e)) => Some(e),
                Some(Init::Ctor(a) | Init::Brace(a)) if a.len() == 1 => Some(&a[0]),
                _ => None,
            };
            if let Some(e) = e {
                if let Some(c) = self.try_const(e) {
                    self.bind(&name, Binding::Const(c.cast(s)));
                    return;
                }
                if v.storage.constexpr {
                    self.const_expr(e, "a `constexpr` variable's initializer");
                    return;
                }
            }
        }
        if d.is_ref {
            let e = match &v.init {
                Some(Init::Assign(e)) => e,
                Some(Init::Ctor(a) | Init::Brace(a)) if a.len() == 1 => &a[0],
                _ => {
                    self.error("a reference needs an initializer", v.span);
                    return;
                }
            };
            self.bind_reference(&name, &d, e);
            return;
        }
        let space = d.space.unwrap_or(Space::Thread);
        match space {
            Space::Threadgroup => {
                if v.init.is_some() {
                    self.error("threadgroup variables cannot have initializers", v.span);
                    return;
                }
                let size = self.g.structs.size(&d.ty);
                let align = self.g.structs.align(&d.ty);
                let id = self.tg_allocs.len() as u32;
                self.tg_allocs.push(Alloc {
                    size,
                    align,
                    name: name.clone(),
                });
                let addr = self.s.val(Op::ThreadgroupAddr(id), Type::U64, &[]);
                self.bind(
                    &name,
                    Binding::Place(Place::Mem {
                        ty: d.ty,
                        addr,
                        offset: 0,
                        space: Space::Threadgroup,
                        is_const: d.is_const,
                    }),
                );
            }
            Space::Constant => {
                let e = match &v.init {
                    Some(Init::Assign(e)) => e.clone(),
                    Some(Init::Brace(items)) => list(items, v.span),
                    _ => {
                        self.error("a `constant` variable needs an initializer", v.span);
                        return;
                    }
                };
                let size = self.g.structs.size(&d.ty);
                let mut bytes = vec![0u8; size as usize];
                if !self.const_init_bytes(&d.ty, &e, 0, &mut bytes) {
                    return;
                }
                let id = self.g.data.len() as u32;
                let addr = self.s.val(Op::DataAddr(id), Type::U64, &[]);
                if matches!(d.ty, Ty::Struct(_) | Ty::Array(..)) {
                    let obj = ConstObj {
                        ty: d.ty.clone(),
                        bytes: bytes.clone(),
                    };
                    self.const_objects.insert(ConstKey::Addr(addr), obj);
                }
                self.g.data.push(metalsim_isa::DataObject {
                    bytes,
                    align: self.g.structs.align(&d.ty),
                    name: name.clone(),
                });
                self.bind(
                    &name,
                    Binding::Place(Place::Mem {
                        ty: d.ty,
                        addr,
                        offset: 0,
                        space: Space::Constant,
                        is_const: true,
                    }),
                );
            }
            Space::Device => {
                self.error(
                    "local variables cannot be in the device address space",
                    v.span,
                );
            }
            Space::Thread => {
                let mark = self.g.diags.len();
                let value = match &v.init {
                    Some(Init::Assign(e)) => self.init_value(&d.ty, e),
                    Some(Init::Brace(items)) => self.init_value(&d.ty, &list(items, v.span)),
                    Some(Init::Ctor(args)) => self.construct_value(&d.ty, args, v.span),
                    None => match d.ty {
                        Ty::Struct(id) => self.default_construct(id, v.span),
                        _ => Some(self.zero(&d.ty)),
                    },
                };
                let value = match value {
                    Some(value) => value,
                    // The initializer's error is reported (so no module comes out); the
                    // variable still exists, so its uses raise no follow-on errors.
                    None if crate::has_errors(&self.g.diags[mark..]) => self.zero(&d.ty),
                    None => return,
                };
                self.at(v.span);
                let place = self.fresh_var(&name, &value, d.is_const);
                if (v.storage.constexpr || d.is_const)
                    && let (Some(key), Some(init)) = (ConstKey::of(&place), &v.init)
                {
                    match self.const_init_object(&d.ty, init, v.span) {
                        Some(obj) => {
                            self.const_objects.insert(key, obj);
                        }
                        None if v.storage.constexpr
                            && !crate::has_errors(&self.g.diags[mark..])
                            && self.is_aggregate(&d.ty) =>
                        {
                            self.error(
                                "a `constexpr` variable's initializer must be a constant expression",
                                v.span,
                            );
                        }
                        None => {}
                    }
                }
                self.bind(&name, Binding::Place(place));
            }
        }
    }

    /// `auto x = e;`, `const auto& r = e;`.
    fn auto_var(&mut self, v: &ast::VarDecl, name: &str) {
        let e = match &v.init {
            Some(Init::Assign(e)) => e.clone(),
            Some(Init::Ctor(a) | Init::Brace(a)) if a.len() == 1 => a[0].clone(),
            _ => {
                self.error("`auto` needs an initializer", v.span);
                return;
            }
        };
        let is_ref = matches!(strip_quals(&v.ty), TypeKind::Reference { .. });
        let is_const = matches!(&v.ty.kind, TypeKind::Qualified { quals, .. } if quals.is_const)
            || matches!(strip_quals(&v.ty), TypeKind::Reference { referent }
                if matches!(&referent.kind, TypeKind::Qualified { quals, .. } if quals.is_const));
        if is_ref {
            let Some(op) = self.operand(&e) else { return };
            match op {
                Operand::Place { place, cached } => {
                    let b = match cached {
                        Some(value) if is_const => Binding::Cached { place, value },
                        _ => Binding::Place(place),
                    };
                    self.bind(name, b);
                }
                Operand::Value(val) => {
                    if !is_const {
                        self.error("a non-const reference must be bound to an object", e.span);
                        return;
                    }
                    let p = self.temp(&val, true);
                    self.bind(name, Binding::Place(p));
                }
            }
            return;
        }
        if v.storage.constexpr || is_const {
            match self.try_const(&e) {
                Some(c) => {
                    self.bind(name, Binding::Const(c));
                    return;
                }
                None if v.storage.constexpr => {
                    self.const_expr(&e, "a `constexpr` variable's initializer");
                    return;
                }
                None => {}
            }
        }
        let Some(val) = self.rvalue(&e) else { return };
        if val.ty == Ty::Void {
            self.error("cannot declare a variable of type `void`", v.span);
            return;
        }
        self.at(v.span);
        let place = self.fresh_var(name, &val, is_const);
        self.bind(name, Binding::Place(place));
    }

    /// Binds a reference variable `T& r = e;` to its object (a `const` reference to a value
    /// gets a temporary).
    fn bind_reference(&mut self, name: &str, d: &crate::lower::DeclType, e: &Expr) {
        let Some(op) = self.operand(e) else { return };
        match op {
            Operand::Place {
                place: Place::BitField { field, .. },
                ..
            } if !d.is_const => {
                self.error(
                    format!(
                        "a non-const reference cannot bind to the bit-field `{}`",
                        field.name
                    ),
                    e.span,
                );
            }
            Operand::Place { place, cached } => {
                let pty = self.place_ty(&place);
                if pty == d.ty && !matches!(place, Place::BitField { .. }) {
                    let b = match cached {
                        Some(value) if d.is_const => Binding::Cached { place, value },
                        _ => Binding::Place(place),
                    };
                    self.bind(name, b);
                    return;
                }
                if let (Ty::Struct(have), Ty::Struct(want)) = (&pty, &d.ty)
                    && let Some(b) = self.base_place(place.clone(), *have, *want)
                {
                    self.bind(name, Binding::Place(b));
                    return;
                }
                if !d.is_const {
                    let (a, b) = (self.show(&pty), self.show(&d.ty));
                    self.error(
                        format!("cannot bind a `{a}` to a reference to `{b}`"),
                        e.span,
                    );
                    return;
                }
                let Some(v) = self.load(&place, e.span) else {
                    return;
                };
                let Some(v) = self.convert(v, &d.ty, false, e.span) else {
                    return;
                };
                let p = self.temp(&v, true);
                self.bind(name, Binding::Place(p));
            }
            Operand::Value(v) => {
                if !d.is_const {
                    self.error("a reference must be bound to an object", e.span);
                    return;
                }
                let Some(v) = self.convert(v, &d.ty, false, e.span) else {
                    return;
                };
                let p = self.temp(&v, true);
                self.bind(name, Binding::Place(p));
            }
        }
    }

    /// A struct variable declared without an initializer: its default constructor, or its
    /// default member initializers.
    pub fn default_construct(
        &mut self,
        id: crate::lower::types::StructId,
        span: crate::source::Span,
    ) -> Option<Val> {
        if self.g.has_constructors(id) {
            return self.construct_object(id, Vec::new(), span);
        }
        self.default_object(id, span)
    }

    /// A new local variable holding `value`: in memory when its address is taken or it
    /// holds an array (arrays are indexed at run time), in SSA registers otherwise.
    pub fn fresh_var(&mut self, name: &str, value: &Val, is_const: bool) -> Place {
        if self.g.addr_taken.contains(name) {
            return self.memory_var(name, value, is_const);
        }
        self.temp(value, is_const)
    }

    /// A new variable in thread memory holding `value`.
    pub fn memory_var(&mut self, name: &str, value: &Val, is_const: bool) -> Place {
        let size = self.g.structs.size(&value.ty);
        let align = self.g.structs.align(&value.ty);
        let id = self.locals.len() as u32;
        self.locals.push(Alloc {
            size: size.max(1),
            align,
            name: name.to_string(),
        });
        let addr = self.s.val(Op::LocalAddr(id), Type::U64, &[]);
        let place = Place::Mem {
            ty: value.ty.clone(),
            addr,
            offset: 0,
            space: Space::Thread,
            is_const: false,
        };
        self.store(&place, value, crate::source::Span::default());
        Place::Mem {
            ty: value.ty.clone(),
            addr,
            offset: 0,
            space: Space::Thread,
            is_const,
        }
    }
}

/// The most scalars one thread-local variable may hold: each is a register (or a word of
/// thread memory) the lowering handles one by one, and a kernel's thread needs far fewer.
const MAX_THREAD_VAR_LEAVES: usize = 1 << 14;

fn strip_quals(t: &ast::TypeExpr) -> &TypeKind {
    match &t.kind {
        TypeKind::Qualified { inner, .. } => strip_quals(inner),
        k => k,
    }
}

/// Arrays live in memory (they are indexed at run time); so do structs holding them,
/// except those whose arrays stay in registers (matrices).
pub fn contains_array(ty: &Ty, structs: &crate::lower::types::Structs) -> bool {
    match ty {
        Ty::Array(..) => true,
        Ty::Struct(id) => {
            let info = structs.get(*id);
            !info.arrays_in_registers && info.fields.iter().any(|f| contains_array(&f.1, structs))
        }
        _ => false,
    }
}

/// Collects the names whose address is taken (`&x`) anywhere in a body, so those variables
/// are given memory.
pub fn addr_taken_names(stmts: &[Stmt], out: &mut std::collections::HashSet<String>) {
    fn expr(e: &Expr, out: &mut std::collections::HashSet<String>) {
        use ExprKind::*;
        match &e.kind {
            Unary { op, operand } => {
                if *op == ast::UnaryOp::AddrOf {
                    let mut base = operand.as_ref();
                    while let Member {
                        base: b,
                        arrow: false,
                        ..
                    }
                    | Index { base: b, .. } = &base.kind
                    {
                        base = b;
                    }
                    if let Name(path) = &base.kind {
                        out.insert(path.last().to_string());
                    }
                }
                expr(operand, out);
            }
            Postfix { operand, .. } => expr(operand, out),
            Binary { lhs, rhs, .. } | Assign { lhs, rhs, .. } => {
                expr(lhs, out);
                expr(rhs, out);
            }
            Conditional { cond, then_, else_ } => {
                expr(cond, out);
                expr(then_, out);
                expr(else_, out);
            }
            Call { callee, args } => {
                expr(callee, out);
                for a in args {
                    expr(a, out);
                }
            }
            Member { base, .. } => expr(base, out),
            Index { base, index } => {
                expr(base, out);
                expr(index, out);
            }
            Cast { expr: x, .. } | SizeofExpr(x) | PackExpansion(x) => expr(x, out),
            InitList(items) | TypedInitList { elems: items, .. } => {
                for i in items {
                    expr(i, out);
                }
            }
            _ => {}
        }
    }
    fn stmt(s: &Stmt, out: &mut std::collections::HashSet<String>) {
        match &s.kind {
            StmtKind::Decl(vars) => {
                for v in vars {
                    match &v.init {
                        Some(Init::Assign(e)) => expr(e, out),
                        Some(Init::Ctor(es) | Init::Brace(es)) => {
                            es.iter().for_each(|e| expr(e, out))
                        }
                        None => {}
                    }
                }
            }
            StmtKind::Expr(e) | StmtKind::Case(e) => expr(e, out),
            StmtKind::Return(Some(e)) => expr(e, out),
            StmtKind::Block(b) => b.stmts.iter().for_each(|s| stmt(s, out)),
            StmtKind::If {
                cond, then_, else_, ..
            } => {
                expr(cond, out);
                stmt(then_, out);
                if let Some(e) = else_ {
                    stmt(e, out);
                }
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                if let Some(i) = init {
                    stmt(i, out);
                }
                if let Some(c) = cond {
                    expr(c, out);
                }
                if let Some(s2) = step {
                    expr(s2, out);
                }
                stmt(body, out);
            }
            StmtKind::While { cond, body }
            | StmtKind::DoWhile { body, cond }
            | StmtKind::Switch { cond, body } => {
                expr(cond, out);
                stmt(body, out);
            }
            StmtKind::Items(items) => items.iter().for_each(|i| item(i, out)),
            _ => {}
        }
    }
    // The methods of a class declared in a function.
    fn item(i: &ast::Item, out: &mut std::collections::HashSet<String>) {
        match i {
            ast::Item::Function(f) => {
                if let Some(b) = &f.body {
                    b.stmts.iter().for_each(|s| stmt(s, out));
                }
            }
            ast::Item::Struct(s) => s.members.iter().for_each(|m| item(m, out)),
            ast::Item::Template { item: t, .. } => item(t, out),
            _ => {}
        }
    }
    for s in stmts {
        stmt(s, out);
    }
}

#[cfg(test)]
mod tests {
    /// Compiles `program`, then a kernel whose body is `body`; the rendered diagnostics on
    /// failure.
    fn check(program: &str, body: &str) -> Result<(), String> {
        let src = format!(
            "#include <metal_stdlib>\nusing namespace metal;\n{program}\n\
             kernel void k(device int* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {{\n{body}\n}}\n"
        );
        let (m, diags, sources) = crate::compile_str("t.metal", &src);
        match m {
            Some(_) if !crate::has_errors(&diags) => Ok(()),
            _ => Err(crate::render_short(&diags, &sources)),
        }
    }

    #[test]
    fn scoped_enums_in_a_function_are_named_through_their_type() {
        let decl = "enum class Mode : short { copy = 3, twice, negate = copy + 7 };\n\
                    enum class Other { copy };\n";
        check("", &format!(
            "{decl}static_assert(int(Mode::twice) == 4 && int(Mode::negate) == 10, \"values\");\n\
             static_assert(sizeof(Mode) == 2 && int(Other::copy) == 0, \"types\");\n\
             Mode m = gid % 2 ? Mode::twice : Mode::negate;\n\
             switch (m) {{ case Mode::copy: out[gid] = 1; break; default: out[gid] = int(m); }}"
        ))
        .unwrap();
        let err = check("", &format!("{decl}out[gid] = copy;")).unwrap_err();
        assert!(err.contains("unknown name `copy`"), "{err}");
        let err = check("", &format!("{decl}out[gid] = int(Mode::triple);")).unwrap_err();
        assert!(err.contains("`Mode` has no enumerator `triple`"), "{err}");
    }

    #[test]
    fn classes_declared_in_a_function_have_members_constructors_and_operators() {
        check(
            "",
            "struct Acc {\n\
               int sum;\n\
               static constexpr int scale = 3;\n\
               Acc(int s) : sum(s) {}\n\
               void add(int v) { sum += v * scale; }\n\
               Acc operator+(Acc o) const { return Acc(sum + o.sum); }\n\
             };\n\
             Acc a(1); a.add(int(gid)); Acc b = a + Acc(2);\n\
             static_assert(Acc::scale == 3 && sizeof(Acc) == 4, \"members\");\n\
             typedef union { float f; uint u; } Bits;\n\
             Bits bits; bits.f = 1.0f;\n\
             struct { int lo, hi; } range = {1, 2}, spans[2];\n\
             spans[1] = range;\n\
             out[gid] = b.sum + int(bits.u >> 23) + spans[1].hi;",
        )
        .unwrap();
    }

    #[test]
    fn a_local_class_sees_the_local_types_and_constants_declared_before_it() {
        check(
            "",
            "constexpr int n = 4; using E = short;\n\
             struct Buf { E v[n]; E first() const { return v[0]; } };\n\
             struct Pair { Buf a, b; };\n\
             static_assert(sizeof(Buf) == 8 && sizeof(Pair) == 16, \"layout\");\n\
             Pair p; p.a.v[0] = 7; out[gid] = p.a.first();",
        )
        .unwrap();
    }

    #[test]
    fn a_local_class_sees_the_scoped_enums_declared_before_it() {
        check(
            "",
            "constexpr int base = 5;\n\
             enum class Mode : short { keep = base, twice };\n\
             struct Op { Mode m; int apply(int x) const { return m == Mode::twice ? 2 * x : x; } };\n\
             static_assert(int(Mode::twice) == 6, \"values\");\n\
             Op op{gid % 2 ? Mode::twice : Mode::keep}; out[gid] = op.apply(int(gid));",
        )
        .unwrap();
        let err = check(
            "",
            "enum class Mode { a };\n\
             struct Op { int f() const { return int(Mode::b); } }; out[gid] = Op().f();",
        )
        .unwrap_err();
        assert!(err.contains("`Mode` has no enumerator `b`"), "{err}");
    }

    #[test]
    fn a_local_class_is_visible_to_the_end_of_its_block_and_shadows_outer_names() {
        let program = "struct S { int outer; };";
        check(
            program,
            "{ struct S { int inner; }; S s{1}; out[gid] = s.inner; }\n\
             S t{2}; out[gid] += t.outer;",
        )
        .unwrap();
        let err = check("", "{ struct T { int v; }; } T t{1}; out[gid] = t.v;").unwrap_err();
        assert!(err.contains("`T`"), "{err}");
    }

    #[test]
    fn a_local_class_in_a_function_template_uses_the_template_parameters() {
        check(
            "template <typename T, int N> T sum(T x) {\n\
               struct Acc { T v[N]; T total() const { T t = 0; for (int i = 0; i < N; i++) t += v[i]; return t; } };\n\
               static_assert(sizeof(Acc) == sizeof(T) * N, \"layout\");\n\
               Acc a; for (int i = 0; i < N; i++) a.v[i] = x;\n\
               return a.total();\n\
             }",
            "out[gid] = sum<int, 3>(int(gid)) + int(sum<float, 2>(0.5f)) + int(sum<half, 4>(1.0h));",
        )
        .unwrap();
    }

    #[test]
    fn deeply_nested_local_classes_compile_or_are_an_error() {
        let nested = |depth: usize| {
            let mut body = String::from("return 1;");
            for i in (0..depth).rev() {
                body =
                    format!("struct S{i} {{ int f() const {{ {body} }} }}; return S{i}().f() + 1;");
            }
            check(
                "",
                &format!("struct T {{ int f() const {{ {body} }} }}; out[gid] = T().f();"),
            )
        };
        nested(60).unwrap();
        // Each level takes two of the 256 brace levels the parser allows; the calls nest
        // deeper than inlining allows.
        let err = nested(120).unwrap_err();
        assert!(err.contains("calls are nested too deeply"), "{err}");
        let err = check("", &"struct S { int f() { ".repeat(200)).unwrap_err();
        assert!(err.contains("nested too deeply"), "{err}");
    }

    #[test]
    fn templates_declared_in_a_function_are_refused_as_cpp_does() {
        let err = check("", "template <typename T> struct B { T v; };").unwrap_err();
        assert!(
            err.contains("templates cannot be declared inside a function"),
            "{err}"
        );
    }
}
