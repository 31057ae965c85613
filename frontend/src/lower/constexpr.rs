//! Constant evaluation: array sizes, template arguments, `static_assert`, `case` labels,
//! `if constexpr`, enumerators and program-scope constants, calls to `constexpr`
//! functions included (their bodies are interpreted on the AST with C++'s typing and
//! wrapping rules). Also program-scope variables and function constants.
//!
//! Evaluation is bounded: [`MAX_STEPS`] expression steps per constant, and the
//! instantiation depth limit for nested calls, so no input loops forever.

use std::collections::HashMap;

use metalsim_isa::DataObject;

use crate::ast::{
    BinaryOp, CastKind, Expr, ExprKind, FnKind, Init, PostfixOp, Stmt, StmtKind, TypeKind, UnaryOp,
    VarDecl,
};
use crate::lower::bitfield::{InitMember, init_members, write_bits};
use crate::lower::consteval::{self, Const};
use crate::lower::constobj::{ConstCall, ConstObj};
use crate::lower::names::{DeclId, DeclKind, Env};
use crate::lower::resolve::Resolved;
use crate::lower::templates::{MAX_INSTANTIATION_DEPTH, TArg};
use crate::lower::types::{Scalar, Ty};
use crate::lower::{Binding, FnLowerer, GlobalValue, Globals, ValueKey};
use crate::source::Span;

/// How many expression steps one constant evaluation may take.
pub const MAX_STEPS: u64 = 1_000_000;

/// How a statement finished during constant evaluation.
enum Flow {
    Next,
    Return(Option<ConstObj>),
    Break,
    Continue,
}

impl<'a> Globals<'a> {
    /// Checks a namespace-scope `static_assert`.
    pub fn static_assert(&mut self, env: &Env, cond: &Expr, message: Option<&str>, span: Span) {
        let mut l = self.scratch(env.clone());
        l.check_static_assert(cond, message, span);
    }
}

impl<'a> FnLowerer<'_, 'a> {
    /// Checks `static_assert(cond, message)`.
    pub fn check_static_assert(&mut self, cond: &Expr, message: Option<&str>, span: Span) {
        if let Some(c) = self.const_expr(cond, "a `static_assert` condition")
            && !c.as_bool()
        {
            let m = message.unwrap_or("static assertion failed");
            self.error(format!("static_assert failed: {m}"), span);
        }
    }

    /// Evaluates `e` as a constant expression, silently: `None` (and no diagnostic left
    /// behind) when it is not one.
    pub fn try_const(&mut self, e: &Expr) -> Option<Const> {
        let outer = self.g.const_steps == 0;
        if outer {
            self.g.const_steps = MAX_STEPS;
        }
        let mark = self.g.diags.len();
        let r = self.interp(e);
        if r.is_none() && self.g.const_steps > 0 && !self.g.limit_hit {
            self.g.diags.truncate(mark);
        }
        if outer {
            if self.g.const_steps == 0 && r.is_none() {
                self.error(
                    format!("constant evaluation takes more than {MAX_STEPS} steps"),
                    e.span,
                );
            }
            self.g.const_steps = 0;
        }
        r
    }

    /// Evaluates `e`, which must be a constant expression (`what` names the context for
    /// the error: "an array size").
    pub fn const_expr(&mut self, e: &Expr, what: &str) -> Option<Const> {
        if let Some(c) = self.try_const(e) {
            return Some(c);
        }
        if self.g.limit_hit {
            // The limit's error says what is wrong.
            return None;
        }
        // Lowering it (in dead code) reports what is wrong with it, if anything.
        let mark = self.g.diags.len();
        let _ = self.type_of_expr(e);
        if self.g.diags.len() == mark {
            self.error(format!("{what} must be a constant expression"), e.span);
        }
        None
    }

    fn step(&mut self) -> Option<()> {
        if self.g.const_steps <= 1 {
            self.g.const_steps = 0;
            return None;
        }
        self.g.const_steps -= 1;
        Some(())
    }

    pub(crate) fn interp(&mut self, e: &Expr) -> Option<Const> {
        self.step()?;
        match &e.kind {
            ExprKind::IntLit {
                value,
                unsigned,
                long,
                non_decimal,
            } => Some(consteval::int_literal(
                *value,
                *unsigned,
                *long,
                *non_decimal,
            )),
            ExprKind::FloatLit { value, suffix } => Some(consteval::float_literal(*value, *suffix)),
            ExprKind::BoolLit(b) => Some(Const::bool(*b)),
            ExprKind::Name(path) => {
                if path.is_plain() {
                    let name = path.last();
                    if let Some(c) = self.cframes.last().and_then(|f| f.get(name)) {
                        return Some(*c);
                    }
                    if let Some(c) = self.this_member_value(name) {
                        return Some(c);
                    }
                    if name == "nullptr" || name == "this" {
                        return None;
                    }
                }
                match self.resolve_path(path, false)? {
                    Resolved::Const(c) | Resolved::Local(Binding::Const(c)) => Some(c),
                    Resolved::Global(GlobalValue::Spec { value, ty, .. }) if self.spec_ok => {
                        self.touched_spec = true;
                        Some(value.unwrap_or_else(|| Const::int(ty, 0).cast(ty)))
                    }
                    _ => None,
                }
            }
            ExprKind::Unary { op, operand } => match op {
                UnaryOp::PreInc | UnaryOp::PreDec => {
                    let d = if *op == UnaryOp::PreInc { 1 } else { -1 };
                    self.frame_update(operand, d, true)
                }
                UnaryOp::Deref | UnaryOp::AddrOf => None,
                _ => consteval::unary(*op, self.interp(operand)?),
            },
            ExprKind::Postfix { op, operand } => {
                let d = if *op == PostfixOp::Inc { 1 } else { -1 };
                self.frame_update(operand, d, false)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.interp(lhs)?;
                match op {
                    BinaryOp::LogAnd if !a.as_bool() => return Some(Const::bool(false)),
                    BinaryOp::LogOr if a.as_bool() => return Some(Const::bool(true)),
                    _ => {}
                }
                let b = self.interp(rhs)?;
                consteval::binary(*op, a, b)
            }
            ExprKind::Assign { op, lhs, rhs } => {
                let name = match &lhs.kind {
                    ExprKind::Name(p) => p.last().to_string(),
                    ExprKind::Member {
                        base, name, arrow, ..
                    } if *arrow && is_this(base) => {
                        return self.interp_member_assign(&name.name, *op, rhs);
                    }
                    _ => return None,
                };
                let Some(&old) = self.cframes.last()?.get(&name) else {
                    return self.interp_member_assign(&name, *op, rhs);
                };
                let r = self.interp(rhs)?;
                let new = match op {
                    None => r,
                    Some(o) => consteval::binary(*o, old, r)?,
                }
                .cast(old.ty);
                self.cframes.last_mut()?.insert(name, new);
                Some(new)
            }
            ExprKind::Conditional { cond, then_, else_ } => {
                let c = self.interp(cond)?;
                let (taken, other) = if c.as_bool() {
                    (then_, else_)
                } else {
                    (else_, then_)
                };
                let v = self.interp(taken)?;
                let mark = self.g.diags.len();
                let o = self.interp(other);
                self.g.diags.truncate(mark);
                Some(match o {
                    Some(o) => v.cast(Scalar::common(v.ty, o.ty)),
                    None => v,
                })
            }
            ExprKind::Cast { kind, ty, expr } => {
                let target = self.resolve_type(ty)?;
                let Ty::Scalar(s) = target.ty else {
                    return None;
                };
                let v = self.interp(expr)?;
                if *kind == CastKind::AsType {
                    if v.ty.size() != s.size() {
                        return None;
                    }
                    return Some(Const::from_bits(s, v.bits()));
                }
                Some(v.cast(s))
            }
            ExprKind::SizeofType(t) | ExprKind::AlignofType(t) => {
                let d = self.resolve_type(t)?;
                let n = if matches!(e.kind, ExprKind::SizeofType(_)) {
                    self.g.structs.size(&d.ty)
                } else {
                    self.g.structs.align(&d.ty)
                };
                Some(Const::int(Scalar::ULong, n as i128))
            }
            ExprKind::SizeofExpr(inner) => {
                let ty = self.sizeof_operand_type(inner)?;
                Some(Const::int(Scalar::ULong, self.g.structs.size(&ty) as i128))
            }
            ExprKind::SizeofPack(name) => {
                let n = self.pack_len(&name.name)?;
                Some(Const::int(Scalar::ULong, n as i128))
            }
            ExprKind::Call { callee, args } => self.interp_call(callee, args, e.span),
            ExprKind::TypedInitList { ty, elems } if elems.len() <= 1 => {
                let d = self.resolve_type(ty)?;
                let Ty::Scalar(s) = d.ty else {
                    return None;
                };
                match elems.first() {
                    Some(x) => Some(self.interp(x)?.cast(s)),
                    None => Some(Const::int(Scalar::Int, 0).cast(s)),
                }
            }
            ExprKind::Index { .. } | ExprKind::Member { arrow: false, .. } => self.const_part(e),
            ExprKind::Member { base, .. } if is_this(base) => self.const_part(e),
            _ => None,
        }
    }

    /// The number of elements of a template parameter pack or function parameter pack.
    pub fn pack_len(&mut self, name: &str) -> Option<usize> {
        if let Some(Binding::Pack(items)) = self.lookup(name) {
            return Some(items.len());
        }
        match self.resolve_path(&crate::ast::Path::simple(name, Span::default()), false)? {
            Resolved::Pack(items) => Some(items.len()),
            Resolved::Local(Binding::Pack(items)) => Some(items.len()),
            _ => None,
        }
    }

    /// `++x` / `x--` on a variable of the `constexpr` function being evaluated.
    fn frame_update(&mut self, operand: &Expr, delta: i128, prefix: bool) -> Option<Const> {
        let ExprKind::Name(p) = &operand.kind else {
            return None;
        };
        let name = p.last().to_string();
        let old = *self.cframes.last()?.get(&name)?;
        let new = if old.ty.is_float() {
            Const::float(old.ty, old.as_f64() + delta as f64)
        } else {
            Const::int(old.ty, old.as_i128() + delta)
        };
        self.cframes.last_mut()?.insert(name, new);
        Some(if prefix { new } else { old })
    }

    pub(crate) fn interp_call(
        &mut self,
        callee: &Expr,
        args: &[Expr],
        span: Span,
    ) -> Option<Const> {
        self.interp_call_obj(callee, args, span)?.as_scalar()
    }

    /// A call's constant result, of any type (a `constexpr` function returning a struct).
    pub(crate) fn interp_call_obj(
        &mut self,
        callee: &Expr,
        args: &[Expr],
        span: Span,
    ) -> Option<ConstObj> {
        if let ExprKind::Member {
            base,
            name,
            arrow: false,
            ..
        } = &callee.kind
        {
            return self.interp_method(base, &name.name, args, span);
        }
        let ExprKind::Name(path) = &callee.kind else {
            return None;
        };
        if path.last() == "is_function_constant_defined" && args.len() == 1 {
            let ExprKind::Name(p) = &args[0].kind else {
                return None;
            };
            let found = match self.resolve_path(p, false)? {
                Resolved::Global(GlobalValue::Spec { value, .. }) => {
                    self.touched_spec = true;
                    Some(Const::bool(value.is_some()))
                }
                Resolved::Global(GlobalValue::SpecVector { value, .. }) => {
                    self.touched_spec = true;
                    Some(Const::bool(value.is_some()))
                }
                _ => None,
            };
            return found.map(ConstObj::scalar);
        }
        let r = self.resolve_path(path, false)?;
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.interp(a)?);
        }
        match r {
            Resolved::Type(Ty::Struct(id)) | Resolved::Local(Binding::Type(Ty::Struct(id))) => {
                self.interp_constructor(id, &vals, span)
            }
            Resolved::Type(Ty::Scalar(s)) | Resolved::Local(Binding::Type(Ty::Scalar(s))) => {
                match vals.as_slice() {
                    [] => Some(ConstObj::scalar(Const::int(Scalar::Int, 0).cast(s))),
                    [v] => Some(ConstObj::scalar(v.cast(s))),
                    _ => None,
                }
            }
            Resolved::Builtin { name, .. } => builtin_const(&name, &vals).map(ConstObj::scalar),
            Resolved::Overloads(fns) => {
                let infos: Vec<_> = vals
                    .iter()
                    .map(|v| crate::lower::call::ArgInfo::value(Ty::Scalar(v.ty)))
                    .collect();
                let name = path.last().to_string();
                let chosen = self.choose(fns, &infos, None, &name, span, false)?;
                self.interp_function(&chosen, &vals, None, span)
            }
            _ => None,
        }
    }

    /// Interprets a call of a (`constexpr`) function with constant arguments (a method's
    /// on the constant object `this`).
    pub(crate) fn interp_function(
        &mut self,
        chosen: &crate::lower::call::Chosen<'a>,
        vals: &[Const],
        this: Option<ConstObj>,
        span: Span,
    ) -> Option<ConstObj> {
        let body = chosen.def.body.as_ref()?;
        if self.g.depth > MAX_INSTANTIATION_DEPTH {
            self.error(
                format!("constant evaluation nests calls too deeply (more than {MAX_INSTANTIATION_DEPTH})"),
                span,
            );
            self.g.const_steps = 0;
            return None;
        }
        let mut frame = HashMap::new();
        for (i, p) in chosen.def.params.iter().enumerate() {
            let (Some(name), Some(v)) = (&p.name, vals.get(i)) else {
                continue;
            };
            let v = match chosen.params.get(i).map(|d| &d.ty) {
                Some(Ty::Scalar(s)) => v.cast(*s),
                _ => return None,
            };
            frame.insert(name.name.clone(), v);
        }
        let ret = chosen.ret.clone().map(|d| d.ty);
        self.g.depth += 1;
        self.cframes.push(frame);
        self.const_calls.push(ConstCall {
            this,
            ret: ret.clone(),
        });
        let ctor = chosen.def.kind == FnKind::Constructor;
        let flow = self.in_env(chosen.env.clone(), |me| {
            if ctor {
                me.interp_member_inits(&chosen.def.inits)?;
            }
            me.interp_stmts(&body.stmts)
        });
        let call = self.const_calls.pop();
        self.cframes.pop();
        self.g.depth -= 1;
        if ctor {
            return match flow? {
                Flow::Next | Flow::Return(None) => call?.this,
                _ => None,
            };
        }
        let Flow::Return(Some(v)) = flow? else {
            return None;
        };
        match (ret, v.as_scalar()) {
            (Some(Ty::Scalar(s)), Some(c)) => Some(ConstObj::scalar(c.cast(s))),
            (None, _) => Some(v),
            (Some(t), _) => (v.ty == t).then_some(v),
        }
    }

    fn interp_stmts(&mut self, stmts: &[Stmt]) -> Option<Flow> {
        for s in stmts {
            match self.interp_stmt(s)? {
                Flow::Next => {}
                other => return Some(other),
            }
        }
        Some(Flow::Next)
    }

    fn interp_stmt(&mut self, st: &Stmt) -> Option<Flow> {
        self.step()?;
        match &st.kind {
            StmtKind::Decl(vars) => {
                for v in vars {
                    let init = match &v.init {
                        Some(Init::Assign(e)) => Some(self.interp(e)?),
                        Some(Init::Ctor(a) | Init::Brace(a)) if a.len() == 1 => {
                            Some(self.interp(&a[0])?)
                        }
                        None => None,
                        _ => return None,
                    };
                    let value = if matches!(strip_quals(&v.ty.kind), TypeKind::Auto) {
                        init?
                    } else {
                        let Ty::Scalar(s) = self.resolve_type(&v.ty)?.ty else {
                            return None;
                        };
                        init.unwrap_or(Const::int(Scalar::Int, 0)).cast(s)
                    };
                    self.cframes.last_mut()?.insert(v.name.name.clone(), value);
                }
                Some(Flow::Next)
            }
            StmtKind::Expr(e) => {
                self.interp(e)?;
                Some(Flow::Next)
            }
            StmtKind::Block(b) => self.interp_stmts(&b.stmts),
            StmtKind::If {
                cond, then_, else_, ..
            } => {
                if self.interp(cond)?.as_bool() {
                    self.interp_stmt(then_)
                } else if let Some(e) = else_ {
                    self.interp_stmt(e)
                } else {
                    Some(Flow::Next)
                }
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                if let Some(i) = init {
                    self.interp_stmt(i)?;
                }
                loop {
                    if let Some(c) = cond
                        && !self.interp(c)?.as_bool()
                    {
                        break;
                    }
                    match self.interp_stmt(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Some(Flow::Return(v)),
                        Flow::Next | Flow::Continue => {}
                    }
                    if let Some(s) = step {
                        self.interp(s)?;
                    }
                }
                Some(Flow::Next)
            }
            StmtKind::While { cond, body } => {
                while self.interp(cond)?.as_bool() {
                    match self.interp_stmt(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Some(Flow::Return(v)),
                        Flow::Next | Flow::Continue => {}
                    }
                }
                Some(Flow::Next)
            }
            StmtKind::DoWhile { body, cond } => {
                loop {
                    match self.interp_stmt(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Some(Flow::Return(v)),
                        Flow::Next | Flow::Continue => {}
                    }
                    if !self.interp(cond)?.as_bool() {
                        break;
                    }
                }
                Some(Flow::Next)
            }
            StmtKind::Return(v) => Some(Flow::Return(match v {
                Some(e) => Some(self.interp_return(e)?),
                None => None,
            })),
            StmtKind::Break => Some(Flow::Break),
            StmtKind::Continue => Some(Flow::Continue),
            StmtKind::StaticAssert { cond, .. } => {
                self.interp(cond)?.as_bool().then_some(Flow::Next)
            }
            StmtKind::Empty => Some(Flow::Next),
            _ => None,
        }
    }

    /// The value of a program-scope variable, static data member or variable template
    /// specialization, evaluated on first use.
    pub fn global_value(
        &mut self,
        decl: DeclId,
        home: &Env,
        args: &[TArg],
        span: Span,
    ) -> Option<GlobalValue> {
        let d = self.g.decl(decl).clone();
        let DeclKind::Var(v) = d.kind else {
            return None;
        };
        let binds = match d.tparams {
            Some(params) if !params.is_empty() => {
                self.bind_template(params, args, &Default::default(), home, &d.name, span)?
            }
            _ => Vec::new(),
        };
        let key = ValueKey {
            decl,
            class: home.class_id(),
            args: binds.iter().map(|(_, a)| a.clone()).collect(),
        };
        match self.g.values.get(&key) {
            Some(GlobalValue::InProgress) => {
                self.error(format!("`{}` is defined in terms of itself", d.name), span);
                return Some(GlobalValue::Poisoned);
            }
            Some(v) => return Some(v.clone()),
            None => {}
        }
        self.g.values.insert(key.clone(), GlobalValue::InProgress);
        let env = home.params(binds);
        self.g.depth += 1;
        let value = self
            .in_env(env, |me| me.eval_global(v))
            .unwrap_or(GlobalValue::Poisoned);
        self.g.depth -= 1;
        self.g.values.insert(key, value.clone());
        Some(value)
    }

    fn eval_global(&mut self, v: &VarDecl) -> Option<GlobalValue> {
        if v.attrs.iter().any(|a| a.name.name == "function_constant") {
            return self.function_constant(v);
        }
        let Some(init) = &v.init else {
            self.error(
                format!(
                    "program-scope variable `{}` needs an initializer",
                    v.name.name
                ),
                v.name.span,
            );
            return None;
        };
        let init_expr = match init {
            Init::Assign(e) => e.clone(),
            Init::Brace(es) | Init::Ctor(es) => match es.as_slice() {
                [one] if !matches!(init, Init::Brace(_)) => one.clone(),
                _ => Expr {
                    kind: ExprKind::InitList(es.clone()),
                    span: v.span,
                },
            },
        };
        let auto = matches!(strip_quals(&v.ty.kind), TypeKind::Auto);
        let mut d = if auto {
            None
        } else {
            Some(self.resolve_type(&v.ty)?)
        };
        let scalar = match &d {
            None => None,
            Some(d) => match d.ty {
                Ty::Scalar(s) => Some(Some(s)),
                _ => None,
            },
        };
        let scalar_init = match &init_expr.kind {
            ExprKind::InitList(items) if items.len() == 1 => items[0].clone(),
            _ => init_expr.clone(),
        };
        if auto || scalar.is_some() {
            // This may run nested in another evaluation (a kernel parameter's
            // `[[function_constant(c)]]`, another global's initializer): restore its state.
            let (outer_ok, outer_touched) = (self.spec_ok, self.touched_spec);
            self.spec_ok = true;
            self.touched_spec = false;
            let c = self.try_const(&scalar_init);
            let touched = self.touched_spec;
            self.spec_ok = outer_ok;
            self.touched_spec = outer_touched || touched;
            let Some(c) = c else {
                if auto {
                    self.error(
                        "a program-scope `auto` variable needs a scalar constant initializer",
                        init_expr.span,
                    );
                } else {
                    self.const_expr(&scalar_init, "a program-scope constant's initializer");
                }
                return None;
            };
            let c = match scalar.flatten() {
                Some(s) => c.cast(s),
                None => c,
            };
            if touched {
                return Some(GlobalValue::Spec {
                    name: v.name.name.clone(),
                    value: Some(c),
                    ty: c.ty,
                });
            }
            return Some(GlobalValue::Const(c));
        }
        let d = d.as_mut()?;
        let built = match init {
            Init::Ctor(_) => true,
            Init::Assign(e) => !matches!(
                e.kind,
                ExprKind::InitList(_) | ExprKind::TypedInitList { .. }
            ),
            Init::Brace(_) => false,
        };
        if built && let Some(obj) = self.const_init_object(&d.ty, init, v.span) {
            return Some(self.push_data(obj, &v.name.name));
        }
        if built && matches!(d.ty, Ty::Struct(_)) {
            return Some(GlobalValue::Inline {
                init: init.clone(),
                ty: d.ty.clone(),
                env: self.env.clone(),
                span: v.span,
            });
        }
        if d.unsized_array
            && let (Ty::Array(e, _), ExprKind::InitList(items)) = (&d.ty, &init_expr.kind)
        {
            d.ty = Ty::Array(e.clone(), items.len().max(1) as u32);
        }
        let size = self.g.structs.size(&d.ty);
        let mut bytes = vec![0u8; size as usize];
        if !self.const_init_bytes(&d.ty, &init_expr, 0, &mut bytes) {
            return None;
        }
        let id = self.g.data.len() as u32;
        self.g.data.push(DataObject {
            bytes,
            align: self.g.structs.align(&d.ty),
            name: v.name.name.clone(),
        });
        Some(GlobalValue::Data {
            id,
            ty: d.ty.clone(),
        })
    }

    /// `constant T name [[function_constant(n)]];`: its value from the specialization (by
    /// name, or by index written as a number).
    fn function_constant(&mut self, v: &VarDecl) -> Option<GlobalValue> {
        let attr = v
            .attrs
            .iter()
            .find(|a| a.name.name == "function_constant")?;
        let index = match attr.args.as_slice() {
            [e] => self.const_expr(e, "a function constant index")?,
            _ => {
                self.error("`[[function_constant(n)]]` needs one index", attr.span);
                return None;
            }
        };
        let d = self.resolve_type(&v.ty)?;
        let name = v.name.name.clone();
        let index_text = index.as_i128().to_string();
        let given = self.g.options.function_constants.as_ref().and_then(|list| {
            list.iter()
                .find(|(k, _)| *k == name || *k == index_text)
                .map(|(_, val)| val.clone())
        });
        let ty = match d.ty {
            Ty::Scalar(s) => s,
            Ty::Vector { elem, len, .. } => {
                return self.vector_function_constant(v, name, d.ty.clone(), elem, len, given);
            }
            _ => {
                let t = self.show(&d.ty);
                self.error(
                    format!("a function constant cannot have the type `{t}`: MSL 4.9.1: \"Functions constants can only be a scalar or vector type. Using a user-defined type or an array of a scalar or vector type for a function constant results in a compilation error.\""),
                    v.ty.span,
                );
                return None;
            }
        };
        let value = match given {
            Some(val) => match self.spec_value(&val, ty) {
                Some(c) => Some(c),
                None => {
                    self.error(
                        format!("the value given for function constant `{name}` must be a number or a bool"),
                        v.span,
                    );
                    return None;
                }
            },
            None => None,
        };
        Some(GlobalValue::Spec { name, value, ty })
    }

    /// Writes a constant initializer's bytes; reports and returns false when it is not
    /// constant or does not fit the type.
    pub fn const_init_bytes(&mut self, ty: &Ty, e: &Expr, offset: u32, out: &mut [u8]) -> bool {
        let write = |out: &mut [u8], off: u32, c: Const| {
            let n = c.ty.size() as usize;
            let b = c.bits().to_le_bytes();
            if let Some(dst) = out.get_mut(off as usize..off as usize + n) {
                dst.copy_from_slice(&b[..n]);
            }
        };
        match (ty, &e.kind) {
            (Ty::Scalar(_), ExprKind::InitList(items)) if items.len() == 1 => {
                self.const_init_bytes(ty, &items[0], offset, out)
            }
            (Ty::Scalar(s), _) => match self.const_expr(e, "a program-scope initializer") {
                Some(c) => {
                    write(out, offset, c.cast(*s));
                    true
                }
                None => false,
            },
            (Ty::Vector { elem, len, .. }, ExprKind::InitList(items))
            | (Ty::Vector { elem, len, .. }, ExprKind::Call { args: items, .. })
            | (Ty::Vector { elem, len, .. }, ExprKind::TypedInitList { elems: items, .. }) => {
                let elem = *elem;
                if items.len() == 1 && !matches!(e.kind, ExprKind::InitList(_)) {
                    let mut ok = true;
                    for i in 0..*len as u32 {
                        ok &= self.const_init_bytes(
                            &Ty::Scalar(elem),
                            &items[0],
                            offset + i * elem.size(),
                            out,
                        );
                    }
                    return ok;
                }
                self.const_list(items, *len as usize, e.span, |me, i, item| {
                    me.const_init_bytes(
                        &Ty::Scalar(elem),
                        item,
                        offset + i as u32 * elem.size(),
                        out,
                    )
                })
            }
            (Ty::Array(elem, n), ExprKind::InitList(items)) => {
                let stride = self.g.structs.size(elem);
                let elem = (**elem).clone();
                self.const_list(items, *n as usize, e.span, |me, i, item| {
                    me.const_init_bytes(&elem, item, offset + i as u32 * stride, out)
                })
            }
            (Ty::Struct(id), ExprKind::InitList(items))
            | (Ty::Struct(id), ExprKind::TypedInitList { elems: items, .. }) => {
                let fields = self.g.structs.get(*id).fields.clone();
                let members = init_members(self.g.structs.get(*id), 0);
                self.const_list(items, members.len(), e.span, |me, i, item| {
                    match &members[i] {
                        InitMember::Field(f) => {
                            me.const_init_bytes(&fields[*f].1, item, offset + fields[*f].2, out)
                        }
                        InitMember::Bits(b) => {
                            match me.const_expr(item, "a program-scope initializer") {
                                Some(c) => {
                                    write_bits(out, offset, b, c.cast(b.ty).bits());
                                    true
                                }
                                None => false,
                            }
                        }
                    }
                })
            }
            _ => {
                let t = self.show(ty);
                self.error(
                    format!("cannot initialize `{t}` from this expression at program scope"),
                    e.span,
                );
                false
            }
        }
    }

    fn const_list(
        &mut self,
        items: &[Expr],
        max: usize,
        span: Span,
        mut each: impl FnMut(&mut Self, usize, &Expr) -> bool,
    ) -> bool {
        if items.len() > max {
            self.error(
                format!(
                    "too many initializers: expected at most {max}, found {}",
                    items.len()
                ),
                span,
            );
            return false;
        }
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            ok &= each(self, i, item);
        }
        ok
    }
}

/// The builtins that are constant expressions on constant arguments.
fn builtin_const(name: &str, v: &[Const]) -> Option<Const> {
    let common = |a: Const, b: Const| {
        let t = Scalar::common(a.ty, b.ty);
        (a.cast(t), b.cast(t))
    };
    let less = |a: Const, b: Const| {
        if a.ty.is_float() {
            a.as_f64() < b.as_f64()
        } else {
            a.as_i128() < b.as_i128()
        }
    };
    match (name, v) {
        ("min", [a, b]) => {
            let (a, b) = common(*a, *b);
            Some(if less(b, a) { b } else { a })
        }
        ("max", [a, b]) => {
            let (a, b) = common(*a, *b);
            Some(if less(a, b) { b } else { a })
        }
        ("clamp", [x, lo, hi]) => {
            let (x, lo) = common(*x, *lo);
            let (x, hi) = common(x, *hi);
            let lo = lo.cast(x.ty);
            Some(if less(x, lo) {
                lo
            } else if less(hi, x) {
                hi
            } else {
                x
            })
        }
        ("abs", [a]) => Some(if a.ty.is_float() {
            Const::float(a.ty, a.as_f64().abs())
        } else {
            Const::int(a.ty, a.as_i128().abs())
        }),
        _ => None,
    }
}

/// Whether `e` is `this`.
fn is_this(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Name(p) if p.is_plain() && p.last() == "this")
}

/// A written type without its qualifiers.
pub fn strip_quals(t: &TypeKind) -> &TypeKind {
    match t {
        TypeKind::Qualified { inner, .. } => strip_quals(&inner.kind),
        other => other,
    }
}
