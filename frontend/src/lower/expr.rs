//! Expressions: type checking and lowering to instructions. An expression lowers to an
//! [`Operand`]: an object (a [`Place`]) or a value.

use metalsim_isa::{CmpCond, Op, Space, Type, Value};

use crate::ast::{self, BinaryOp, CastKind, Expr, ExprKind, Path, PostfixOp, UnaryOp};
use crate::lower::consteval::{self, Const};
use crate::lower::resolve::Resolved;
use crate::lower::types::{Scalar, Ty};
use crate::lower::{Binding, FnLowerer, GlobalValue, Operand, Place, Val};
use crate::source::Span;

/// Whether an expression is `this`.
pub fn is_this(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Name(p) if p.is_plain() && p.last() == "this")
}

impl FnLowerer<'_, '_> {
    /// Lowers an expression for its value (an array decays to a pointer to its first
    /// element; initializations of arrays take the array itself through
    /// [`FnLowerer::init_value`]).
    pub fn rvalue(&mut self, e: &Expr) -> Option<Val> {
        let op = self.operand(e)?;
        let op = self.decay(op);
        self.load_operand(op, e.span)
    }

    /// The value of an operand (loading an object).
    pub fn load_operand(&mut self, op: Operand, span: Span) -> Option<Val> {
        match op {
            Operand::Value(v) => Some(v),
            Operand::Place {
                cached: Some(v), ..
            } => Some(v),
            Operand::Place { place, .. } => self.load(&place, span),
        }
    }

    /// Array-to-pointer decay: an array object in memory as a pointer to its first
    /// element; other operands unchanged.
    pub fn decay(&mut self, op: Operand) -> Operand {
        match op {
            Operand::Place {
                place:
                    Place::Mem {
                        ty: Ty::Array(elem, _),
                        addr,
                        offset,
                        space,
                        is_const,
                    },
                ..
            } => {
                let a = self.mem_addr(addr, offset);
                Operand::Value(Val {
                    ty: Ty::pointer(*elem, space, is_const),
                    parts: vec![a],
                })
            }
            other => other,
        }
    }

    /// Lowers an expression that denotes an object.
    pub fn place(&mut self, e: &Expr) -> Option<Place> {
        match self.operand(e)? {
            Operand::Place { place, .. } => Some(place),
            Operand::Value(_) => {
                self.error(
                    "this expression is not an object that can be assigned or addressed",
                    e.span,
                );
                None
            }
        }
    }

    /// The type an expression would have, found by lowering it into unreachable code (its
    /// errors are reported, its instructions never run).
    pub fn type_of_expr(&mut self, e: &Expr) -> Option<Ty> {
        let cur = self.s.current();
        let dead = self.s.create_block();
        self.s.seal(dead);
        self.s.switch_to(dead);
        let op = self.operand(e);
        let ty = op.map(|op| match op {
            Operand::Value(v) => v.ty,
            Operand::Place { place, .. } => self.place_ty(&place),
        });
        self.s.ret();
        self.s.switch_to(cur);
        ty
    }

    /// The type `sizeof` measures: a type named in parentheses the parser could not
    /// classify, or an expression's type.
    pub fn sizeof_operand_type(&mut self, e: &Expr) -> Option<Ty> {
        if let ExprKind::Name(p) = &e.kind {
            let mark = self.g.diags.len();
            match self.resolve_path(p, false) {
                Some(Resolved::Type(t)) | Some(Resolved::Local(Binding::Type(t))) => {
                    return Some(t);
                }
                Some(Resolved::Enum(id)) => return Some(self.enum_type(id)),
                _ => self.g.diags.truncate(mark),
            }
        }
        self.type_of_expr(e)
    }

    /// The object `this` refers to inside a method.
    pub fn this_place(&mut self, span: Span) -> Option<Place> {
        match self.implicit_this() {
            Some(p) => Some(p),
            None => {
                self.error("`this` is only available inside a method", span);
                None
            }
        }
    }

    /// Lowers an expression to an object or a value. Each kind of expression is lowered
    /// in a function of its own, so this one's stack frame stays small for deep trees.
    pub fn operand(&mut self, e: &Expr) -> Option<Operand> {
        let value = |v: Option<Val>| v.map(Operand::Value);
        match &e.kind {
            ExprKind::IntLit {
                value: n,
                unsigned,
                long,
                non_decimal,
            } => {
                self.at(e.span);
                value(Some(self.const_val(consteval::int_literal(
                    *n,
                    *unsigned,
                    *long,
                    *non_decimal,
                ))))
            }
            ExprKind::FloatLit { value: x, suffix } => {
                self.at(e.span);
                value(Some(self.const_val(consteval::float_literal(*x, *suffix))))
            }
            ExprKind::BoolLit(b) => {
                self.at(e.span);
                value(Some(self.const_val(Const::bool(*b))))
            }
            ExprKind::StringLit(_) => {
                self.error("string literals are not values in MSL", e.span);
                None
            }
            ExprKind::Name(path) => self.name_operand(path, e.span),
            ExprKind::Unary { op, operand } => self.unary(*op, operand, e.span),
            ExprKind::Postfix { op, operand } => self.postfix(*op, operand, e.span),
            ExprKind::Binary { op, lhs, rhs } => value(self.binary(*op, lhs, rhs, e.span)),
            ExprKind::Assign { op, lhs, rhs } => self.assign(*op, lhs, rhs, e.span),
            ExprKind::Conditional { cond, then_, else_ } => {
                value(self.conditional(cond, then_, else_, e.span))
            }
            ExprKind::Call { callee, args } => self.call(callee, args, e.span),
            ExprKind::Member {
                base,
                name,
                targs,
                arrow,
            } => {
                if !targs.is_empty() {
                    self.error(
                        format!(
                            "`{}` with template arguments names a member template; call it",
                            name.name
                        ),
                        name.span,
                    );
                    return None;
                }
                self.member(base, &name.name, name.span, *arrow)
            }
            ExprKind::Index { base, index } => self.index_operand(base, index, e.span),
            ExprKind::Cast { kind, ty, expr } => self.cast(*kind, ty, expr, e.span),
            ExprKind::SizeofType(_)
            | ExprKind::AlignofType(_)
            | ExprKind::SizeofExpr(_)
            | ExprKind::SizeofPack(_) => self.size_query(e),
            ExprKind::PackExpansion(_) => {
                self.error(
                    "a pack expansion `...` is only supported in call arguments and initializer lists",
                    e.span,
                );
                None
            }
            ExprKind::InitList(_) => {
                self.error("an initializer list needs a known type here", e.span);
                None
            }
            ExprKind::TypedInitList { ty, elems } => self.typed_init(ty, elems, e.span),
            ExprKind::Error => None,
        }
    }

    #[inline(never)]
    fn postfix(&mut self, op: PostfixOp, operand: &Expr, span: Span) -> Option<Operand> {
        let value = |v: Option<Val>| v.map(Operand::Value);

        let target = self.operand(operand)?;
        let sym = if op == PostfixOp::Inc { "++" } else { "--" };
        let ty = match &target {
            Operand::Value(v) => v.ty.clone(),
            Operand::Place { place, .. } => self.place_ty(place),
        };
        if matches!(ty, Ty::Struct(_)) {
            // `operator++(int)`: the dummy argument says "postfix".
            let dummy = Operand::Value(self.const_val(Const::int(Scalar::Int, 0)));
            return match self.user_operator(sym, vec![(target, operand.span), (dummy, span)], span)
            {
                Some(r) => r,
                None => {
                    let t = self.show(&ty);
                    self.error(format!("`{t}` has no postfix `operator{sym}`"), span);
                    None
                }
            };
        }
        let Operand::Place { place, .. } = target else {
            self.error("`++` and `--` need an object", operand.span);
            return None;
        };
        let delta = if op == PostfixOp::Inc { 1 } else { -1 };
        value(self.inc_dec(&place, delta, false, span))
    }

    #[inline(never)]
    fn member(&mut self, base: &Expr, name: &str, name_span: Span, arrow: bool) -> Option<Operand> {
        let b = if arrow {
            if is_this(base) {
                Operand::Place {
                    place: self.this_place(base.span)?,
                    cached: None,
                }
            } else {
                let p = self.rvalue(base)?;
                Operand::Place {
                    place: self.deref(p, base.span)?,
                    cached: None,
                }
            }
        } else {
            self.operand(base)?
        };
        self.member_operand(b, name, name_span)
    }

    #[inline(never)]
    fn cast(
        &mut self,
        kind: CastKind,
        ty: &crate::ast::TypeExpr,
        expr: &Expr,
        span: Span,
    ) -> Option<Operand> {
        let value = |v: Option<Val>| v.map(Operand::Value);

        let target = self.resolve_type(ty)?;
        if target.is_ref {
            // `(device T&)x`, `static_cast<T&>(x)`: the object, seen as a `T`.
            let p = self.place(expr)?;
            let pty = self.place_ty(&p);
            if pty != target.ty {
                let (a, b) = (self.show(&pty), self.show(&target.ty));
                self.error(
                    format!("cannot cast a `{a}` object to a reference to `{b}`"),
                    ty.span,
                );
                return None;
            }
            return Some(Operand::Place {
                place: p,
                cached: None,
            });
        }
        if let Ty::Struct(id) = target.ty
            && kind != CastKind::AsType
        {
            let args = self.lower_args(std::slice::from_ref(expr))?;
            return value(self.construct_object(id, args, span));
        }
        let v = self.rvalue(expr)?;
        self.at(span);
        match kind {
            CastKind::AsType => value(self.as_type(v, &target.ty, span)),
            _ => value(self.convert(v, &target.ty, true, span)),
        }
    }

    /// `sizeof`, `alignof` and `sizeof...`.
    #[inline(never)]
    fn size_query(&mut self, e: &Expr) -> Option<Operand> {
        let value = |v: Option<Val>| v.map(Operand::Value);
        match &e.kind {
            ExprKind::SizeofType(t) | ExprKind::AlignofType(t) => {
                let d = self.resolve_type(t)?;
                let n = if matches!(e.kind, ExprKind::SizeofType(_)) {
                    self.g.structs.size(&d.ty)
                } else {
                    self.g.structs.align(&d.ty)
                };
                self.at(e.span);
                value(Some(self.const_val(Const::int(Scalar::ULong, n as i128))))
            }
            ExprKind::SizeofExpr(inner) => {
                let t = self.sizeof_operand_type(inner)?;
                let n = self.g.structs.size(&t);
                self.at(e.span);
                value(Some(self.const_val(Const::int(Scalar::ULong, n as i128))))
            }
            ExprKind::SizeofPack(name) => {
                let Some(n) = self.pack_len(&name.name) else {
                    self.error(
                        format!("`{}` is not a parameter pack", name.name),
                        name.span,
                    );
                    return None;
                };
                self.at(e.span);
                value(Some(self.const_val(Const::int(Scalar::ULong, n as i128))))
            }
            _ => None,
        }
    }

    #[inline(never)]
    fn typed_init(
        &mut self,
        ty: &crate::ast::TypeExpr,
        elems: &[Expr],
        span: Span,
    ) -> Option<Operand> {
        let value = |v: Option<Val>| v.map(Operand::Value);

        let d = self.resolve_type(ty)?;
        let list = Expr {
            kind: ExprKind::InitList(elems.to_vec()),
            span,
        };
        match d.ty {
            Ty::Scalar(_) | Ty::Vector { .. } => value(self.construct(&d.ty, elems, span)),
            _ => value(self.init_value(&d.ty, &list)),
        }
    }

    /// A name used as an expression.
    #[inline(never)]
    fn name_operand(&mut self, path: &Path, span: Span) -> Option<Operand> {
        if path.is_plain() {
            match path.last() {
                "this" => {
                    let p = self.this_place(span)?;
                    return match p {
                        Place::Mem {
                            ty,
                            addr,
                            offset,
                            space,
                            is_const,
                        } => {
                            let a = self.mem_addr(addr, offset);
                            Some(Operand::Value(Val {
                                ty: Ty::pointer(ty, space, is_const),
                                parts: vec![a],
                            }))
                        }
                        _ => {
                            self.error(
                                "`this` as a pointer is only supported for objects in memory; use `*this` or `this->member`",
                                span,
                            );
                            None
                        }
                    };
                }
                "nullptr" => {
                    self.error("`nullptr` is not supported yet", span);
                    return None;
                }
                _ => {}
            }
        }
        let r = self.resolve_path(path, true)?;
        self.operand_of(r, path, span)
    }

    /// A function constant without a value: an error where a launch spec gives the
    /// constants (`None`), accepted by `check` without one, where any value type-checks
    /// the same.
    fn unset_function_constant(&mut self, name: &str, span: Span) -> Option<()> {
        if self.g.options.function_constants.is_some() {
            self.error(
                format!(
                    "function constant `{name}` has no value: set it in the launch spec's [constants] table"
                ),
                span,
            );
            return None;
        }
        Some(())
    }

    /// The operand a resolved name denotes.
    pub fn operand_of(&mut self, r: Resolved, path: &Path, span: Span) -> Option<Operand> {
        let name = path.to_text();
        match r {
            Resolved::Local(Binding::Place(p)) => Some(Operand::Place {
                place: p,
                cached: None,
            }),
            Resolved::Local(Binding::Cached { place, value }) => Some(Operand::Place {
                place,
                cached: Some(value),
            }),
            Resolved::Local(Binding::This(p)) => Some(Operand::Place {
                place: p,
                cached: None,
            }),
            Resolved::Local(Binding::Const(c)) | Resolved::Const(c) => {
                self.at(span);
                Some(Operand::Value(self.const_val(c)))
            }
            Resolved::Local(Binding::Type(_) | Binding::ScopedEnum { .. })
            | Resolved::Type(_)
            | Resolved::Enum(_) => {
                self.error(
                    format!("`{name}` is a type; construct a value with `{name}(...)` or `{name}{{...}}`"),
                    span,
                );
                None
            }
            Resolved::Local(Binding::Pack(_)) | Resolved::Pack(_) => {
                self.error(
                    format!("the parameter pack `{name}` must be expanded with `...`"),
                    span,
                );
                None
            }
            Resolved::Global(GlobalValue::Data { id, ty }) => {
                self.at(span);
                let addr = self.s.val(Op::DataAddr(id), Type::U64, &[]);
                Some(Operand::Place {
                    place: Place::Mem {
                        ty,
                        addr,
                        offset: 0,
                        space: Space::Constant,
                        is_const: true,
                    },
                    cached: None,
                })
            }
            Resolved::Global(GlobalValue::Inline {
                init,
                ty,
                env,
                span: decl_span,
            }) => {
                self.at(span);
                let v = self.in_env(env, |me| match &init {
                    ast::Init::Ctor(args) => me.construct_value(&ty, args, decl_span),
                    ast::Init::Assign(e) => me.init_value(&ty, e),
                    ast::Init::Brace(items) => me.init_value(
                        &ty,
                        &Expr {
                            kind: ExprKind::InitList(items.clone()),
                            span: decl_span,
                        },
                    ),
                })?;
                Some(Operand::Value(v))
            }
            Resolved::Global(GlobalValue::Spec { name, value, ty }) => {
                let c = match value {
                    Some(c) => c,
                    None => {
                        self.unset_function_constant(&name, span)?;
                        Const::int(ty, 0).cast(ty)
                    }
                };
                self.at(span);
                Some(Operand::Value(self.const_val(c)))
            }
            Resolved::Global(GlobalValue::SpecVector { name, value, ty }) => {
                let components = match value {
                    Some(cs) => cs,
                    None => {
                        self.unset_function_constant(&name, span)?;
                        let Ty::Vector { elem, len, .. } = ty else {
                            return None;
                        };
                        vec![Const::int(elem, 0).cast(elem); len as usize]
                    }
                };
                self.at(span);
                let parts = components.into_iter().map(|c| self.constant(c)).collect();
                Some(Operand::Value(Val { ty, parts }))
            }
            Resolved::Global(_) => None,
            Resolved::Field(id, i) => {
                let Some(this) = self.implicit_this() else {
                    self.error(
                        format!("the member `{name}` needs an object; it is only available inside a method"),
                        span,
                    );
                    return None;
                };
                let this = match self.place_ty(&this) {
                    Ty::Struct(have) if have != id => {
                        self.base_place(this.clone(), have, id).unwrap_or(this)
                    }
                    _ => this,
                };
                Some(Operand::Place {
                    place: self.field_place(this, id, i),
                    cached: None,
                })
            }
            Resolved::Overloads(_) | Resolved::Builtin { .. } => {
                self.error(
                    format!("`{name}` is a function; call it with `{name}(...)`"),
                    span,
                );
                None
            }
            Resolved::Namespace(_) => {
                self.error(format!("`{name}` is a namespace, not a value"), span);
                None
            }
            Resolved::ClassTemplate(_) => {
                self.error(format!("`{name}` is a template, not a value"), span);
                None
            }
        }
    }

    /// Whether a call's callee is a function without side effects (a pure builtin or a
    /// type conversion), so the call can be evaluated speculatively.
    fn pure_callee(&mut self, path: &Path) -> bool {
        if path.is_plain() && crate::lower::types::builtin_type(path.last()).is_some() {
            return true;
        }
        let mark = self.g.diags.len();
        let r = self.resolve_path(path, false);
        self.g.diags.truncate(mark);
        match r {
            Some(Resolved::Builtin { name, .. }) => is_pure_builtin(&name),
            Some(Resolved::Type(t)) => matches!(t, Ty::Scalar(_) | Ty::Vector { .. }),
            _ => false,
        }
    }

    #[inline(never)]
    fn unary(&mut self, op: UnaryOp, operand: &Expr, span: Span) -> Option<Operand> {
        match op {
            UnaryOp::Deref => {
                if is_this(operand) {
                    return self.this_place(operand.span).map(|place| Operand::Place {
                        place,
                        cached: None,
                    });
                }
                let p = self.operand(operand)?;
                if let Some(r) = self.user_unary("*", p.clone(), operand.span, span) {
                    return r;
                }
                let p = self.load_operand(p, operand.span)?;
                let place = self.deref(p, span)?;
                Some(Operand::Place {
                    place,
                    cached: None,
                })
            }
            UnaryOp::AddrOf => {
                let p = self.place(operand)?;
                match p {
                    Place::Mem {
                        ty,
                        addr,
                        offset,
                        space,
                        is_const,
                    } => {
                        self.at(span);
                        let a = self.mem_addr(addr, offset);
                        Some(Operand::Value(Val {
                            ty: Ty::pointer(ty, space, is_const),
                            parts: vec![a],
                        }))
                    }
                    Place::BitField { field, .. } => {
                        self.error(
                            format!("cannot take the address of the bit-field `{}`", field.name),
                            span,
                        );
                        None
                    }
                    _ => {
                        self.error(
                            "cannot take the address of this object (only of memory)",
                            span,
                        );
                        None
                    }
                }
            }
            UnaryOp::PreInc | UnaryOp::PreDec => {
                let target = self.operand(operand)?;
                let sym = if op == UnaryOp::PreInc { "++" } else { "--" };
                if let Some(r) = self.user_unary(sym, target.clone(), operand.span, span) {
                    return r;
                }
                let Operand::Place { place, .. } = target else {
                    self.error("`++` and `--` need an object", operand.span);
                    return None;
                };
                let d = if op == UnaryOp::PreInc { 1 } else { -1 };
                self.inc_dec(&place, d, true, span).map(Operand::Value)
            }
            UnaryOp::Neg | UnaryOp::Plus | UnaryOp::Not | UnaryOp::BitNot => {
                let o = self.operand(operand)?;
                let sym = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Plus => "+",
                    UnaryOp::Not => "!",
                    _ => "~",
                };
                if let Some(r) = self.user_unary(sym, o.clone(), operand.span, span) {
                    return r;
                }
                let v = self.load_operand(o, operand.span)?;
                let v = self.scalar_of_struct(v, span)?;
                self.at(span);
                let Some(elem) = v.ty.elem_scalar() else {
                    let t = self.show(&v.ty);
                    self.error(format!("operator cannot be applied to `{t}`"), span);
                    return None;
                };
                let is_vec = matches!(v.ty, Ty::Vector { .. });
                match op {
                    UnaryOp::Not => {
                        let b =
                            self.convert(v.clone(), &v.ty.with_elem(Scalar::Bool), true, span)?;
                        let parts = b
                            .parts
                            .iter()
                            .map(|p| self.s.val(Op::Not, Type::Pred, &[*p]))
                            .collect();
                        Some(Operand::Value(Val { ty: b.ty, parts }))
                    }
                    _ => {
                        let to = if is_vec { elem } else { elem.promoted() };
                        if op == UnaryOp::BitNot && to.is_float() {
                            self.error("`~` needs an integer operand", span);
                            return None;
                        }
                        let v = self.convert(v.clone(), &v.ty.with_elem(to), true, span)?;
                        if op == UnaryOp::Plus {
                            return Some(Operand::Value(v));
                        }
                        let o = if op == UnaryOp::Neg { Op::Neg } else { Op::Not };
                        let parts = v
                            .parts
                            .iter()
                            .map(|p| self.s.val(o, to.isa(), &[*p]))
                            .collect();
                        Some(Operand::Value(Val { ty: v.ty, parts }))
                    }
                }
            }
        }
    }

    /// A unary operator of a struct operand: its `operator<sym>`. `None` when the operand
    /// is not a struct (the builtin operator applies).
    fn user_unary(
        &mut self,
        sym: &str,
        o: Operand,
        ospan: Span,
        span: Span,
    ) -> Option<Option<Operand>> {
        let ty = match &o {
            Operand::Value(v) => v.ty.clone(),
            Operand::Place { place, .. } => self.place_ty(place),
        };
        if !matches!(ty, Ty::Struct(_)) {
            return None;
        }
        match self.user_operator(sym, vec![(o, ospan)], span) {
            Some(r) => Some(r),
            None => {
                let t = self.show(&ty);
                self.error(format!("`{t}` has no `operator{sym}`"), span);
                Some(None)
            }
        }
    }

    fn inc_dec(&mut self, p: &Place, delta: i128, prefix: bool, span: Span) -> Option<Val> {
        let old = self.load(p, span)?;
        self.at(span);
        let new = match &old.ty {
            Ty::Pointer(_) => {
                let d = self.constant(Const::int(Scalar::Int, delta));
                self.ptr_offset(old.clone(), d, span)?
            }
            Ty::Scalar(s) if *s != Scalar::Bool => {
                let one = if s.is_float() {
                    Const::float(*s, delta as f64)
                } else {
                    Const::int(*s, delta)
                };
                let one = self.constant(one);
                let r = self.s.val(Op::Add, s.isa(), &[old.parts[0], one]);
                Val {
                    ty: old.ty.clone(),
                    parts: vec![r],
                }
            }
            Ty::Vector { elem, .. } if *elem != Scalar::Bool => {
                let one = if elem.is_float() {
                    Const::float(*elem, delta as f64)
                } else {
                    Const::int(*elem, delta)
                };
                let one = self.constant(one);
                let parts = old
                    .parts
                    .iter()
                    .map(|x| self.s.val(Op::Add, elem.isa(), &[*x, one]))
                    .collect();
                Val {
                    ty: old.ty.clone(),
                    parts,
                }
            }
            other => {
                let t = self.show(other);
                self.error(format!("cannot increment or decrement a `{t}`"), span);
                return None;
            }
        };
        self.store(p, &new, span)?;
        Some(if prefix { new } else { old })
    }

    fn binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr, span: Span) -> Option<Val> {
        match op {
            BinaryOp::LogAnd | BinaryOp::LogOr => {
                if self.struct_operand(lhs) {
                    let a = self.operand(lhs)?;
                    let b = self.operand(rhs)?;
                    return self.binop_operands(op, a, lhs.span, b, rhs.span, span);
                }
                return self.logical(op, lhs, rhs, span);
            }
            BinaryOp::Comma => {
                self.rvalue(lhs)?;
                return self.rvalue(rhs);
            }
            BinaryOp::Add | BinaryOp::Sub => {
                if let Some(v) = self.try_contract(op, lhs, rhs, None, span) {
                    return v;
                }
            }
            _ => {}
        }
        let a = self.operand(lhs)?;
        let b = self.operand(rhs)?;
        self.binop_operands(op, a, lhs.span, b, rhs.span, span)
    }

    /// A binary operator on lowered operands: a struct's `operator<op>` when an operand is
    /// a struct, the builtin operator otherwise.
    #[inline(never)]
    pub fn binop_operands(
        &mut self,
        op: BinaryOp,
        a: Operand,
        aspan: Span,
        b: Operand,
        bspan: Span,
        span: Span,
    ) -> Option<Val> {
        let sym = op.symbol();
        let (a, b) = (self.decay(a), self.decay(b));
        if let Some(r) = self.user_operator(sym, vec![(a.clone(), aspan), (b.clone(), bspan)], span)
        {
            let r = r?;
            return self.load_operand(r, span);
        }
        let a = self.load_operand(a, aspan)?;
        let b = self.load_operand(b, bspan)?;
        let a = self.scalar_of_struct(a, aspan)?;
        let b = self.scalar_of_struct(b, bspan)?;
        self.at(span);
        self.arith(op, a, b, span)
    }

    /// Whether an expression is (likely) of struct type, for choosing how to lower `&&`
    /// and `||` (a struct's operators evaluate both sides).
    fn struct_operand(&mut self, e: &Expr) -> bool {
        let mark = self.g.diags.len();
        let r = self.type_of_expr(e);
        self.g.diags.truncate(mark);
        matches!(r, Some(Ty::Struct(_)))
    }

    /// A struct value used where a scalar or vector is needed: through its conversion
    /// function when it has exactly one target; other values unchanged.
    pub fn scalar_of_struct(&mut self, v: Val, span: Span) -> Option<Val> {
        let Ty::Struct(id) = v.ty else {
            return Some(v);
        };
        let Some(crate::lower::names::Hit::Decls(ds)) =
            self.g.class_member(id, "operator conversion")
        else {
            return Some(v);
        };
        let targets: Vec<Ty> = ds
            .iter()
            .filter_map(|(d, env)| {
                let crate::lower::names::DeclKind::Function(f) = self.g.decl(*d).kind else {
                    return None;
                };
                let mark = self.g.diags.len();
                let t = self.in_env(env.clone(), |me| me.resolve_type(&f.ret));
                self.g.diags.truncate(mark);
                t.map(|t| t.ty)
            })
            .collect();
        match targets.as_slice() {
            [t] => {
                let t = t.clone();
                self.call_conversion(v, &t, span)
            }
            _ => Some(v),
        }
    }

    /// Contracts `a * b + c`, `c + a * b`, `a * b - c` and `c - a * b` on floats into an FMA,
    /// as Metal's default fast-math does. `acc` supplies `c` already lowered (for `c += a * b`).
    /// Returns `None` when the pattern does not apply (nothing was emitted then).
    #[inline(never)]
    pub fn try_contract(
        &mut self,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        acc: Option<Val>,
        span: Span,
    ) -> Option<Option<Val>> {
        let as_mul = |e: &Expr| match &e.kind {
            ExprKind::Binary {
                op: BinaryOp::Mul,
                lhs,
                rhs,
            } => Some((lhs.as_ref().clone(), rhs.as_ref().clone())),
            _ => None,
        };
        let (mul, other, mul_on_left) = match (acc.is_some(), as_mul(lhs), as_mul(rhs)) {
            (true, _, Some(m)) => (m, None, false),
            (false, Some(m), _) => (m, Some(rhs), true),
            (false, None, Some(m)) => (m, Some(lhs), false),
            _ => return None,
        };
        // Only float arithmetic contracts; decide from the operand types without emitting.
        let a = self.rvalue(&mul.0);
        let b = self.rvalue(&mul.1);
        let c = match (acc, other) {
            (Some(v), _) => Some(v),
            (None, Some(o)) => self.rvalue(o),
            (None, None) => None,
        };
        let (Some(a), Some(b), Some(c)) = (a, b, c) else {
            return Some(None);
        };
        self.at(span);
        if [&a, &b, &c].iter().any(|v| matches!(v.ty, Ty::Struct(_))) {
            // A struct's operators: no contraction.
            let p = self.binop_operands(
                BinaryOp::Mul,
                Operand::Value(a),
                mul.0.span,
                Operand::Value(b),
                mul.1.span,
                span,
            );
            let Some(p) = p else {
                return Some(None);
            };
            let (x, y) = if mul_on_left { (p, c) } else { (c, p) };
            return Some(self.binop_operands(
                op,
                Operand::Value(x),
                span,
                Operand::Value(y),
                span,
                span,
            ));
        }
        let prod_ty = self.arith_type(BinaryOp::Mul, &a.ty, &b.ty, span);
        let is_float = prod_ty
            .as_ref()
            .and_then(|t| t.elem_scalar())
            .is_some_and(|s| s.is_float());
        let Some(prod_ty) = prod_ty else {
            return Some(None);
        };
        if !is_float {
            let p = self.arith(BinaryOp::Mul, a, b, span);
            let Some(p) = p else {
                return Some(None);
            };
            return Some(if mul_on_left {
                self.arith(op, p, c, span)
            } else {
                self.arith(op, c, p, span)
            });
        }
        let Some(ty) = self.arith_type(op, &prod_ty, &c.ty, span) else {
            return Some(None);
        };
        let elem = ty.elem_scalar()?;
        let a = self.convert(a, &ty, true, span)?;
        let b = self.convert(b, &ty, true, span)?;
        let c = self.convert(c, &ty, true, span)?;
        let t = elem.isa();
        let parts = (0..a.parts.len())
            .map(|i| {
                let (mut x, y, mut z) = (a.parts[i], b.parts[i], c.parts[i]);
                if op == BinaryOp::Sub {
                    if mul_on_left {
                        z = self.s.val(Op::Neg, t, &[z]);
                    } else {
                        x = self.s.val(Op::Neg, t, &[x]);
                    }
                }
                self.s.val(Op::Fma, t, &[x, y, z])
            })
            .collect();
        Some(Some(Val { ty, parts }))
    }

    /// The operand type of an arithmetic or comparison operator on two types (before the
    /// result of comparisons becomes bool), by MSL's conversion rules.
    pub fn arith_type(&mut self, op: BinaryOp, a: &Ty, b: &Ty, span: Span) -> Option<Ty> {
        let shift = matches!(op, BinaryOp::Shl | BinaryOp::Shr);
        let r = match (a, b) {
            (Ty::Scalar(x), Ty::Scalar(y)) => {
                if shift {
                    Some(Ty::Scalar(x.promoted()))
                } else {
                    Some(Ty::Scalar(Scalar::common(*x, *y)))
                }
            }
            (Ty::Vector { elem, len, .. }, Ty::Scalar(_)) => Some(Ty::vector(*elem, *len)),
            (Ty::Scalar(_), Ty::Vector { elem, len, .. }) if !shift => {
                Some(Ty::vector(*elem, *len))
            }
            (
                Ty::Vector {
                    elem: e1, len: n1, ..
                },
                Ty::Vector {
                    elem: e2, len: n2, ..
                },
            ) if n1 == n2 && (e1 == e2 || shift) => Some(Ty::vector(*e1, *n1)),
            _ => None,
        };
        if r.is_none() {
            let (x, y) = (self.show(a), self.show(b));
            self.error(
                format!("operator cannot be applied to `{x}` and `{y}`"),
                span,
            );
        }
        r
    }

    /// Emits a binary operator on two lowered values.
    #[inline(never)]
    pub fn arith(&mut self, op: BinaryOp, a: Val, b: Val, span: Span) -> Option<Val> {
        use BinaryOp::*;
        // Pointer arithmetic and comparison.
        match (&a.ty, &b.ty, op) {
            (Ty::Pointer(_), Ty::Scalar(s), Add | Sub) if s.is_int() => {
                let mut i = self.scalar_cvt(
                    b.parts[0],
                    *s,
                    if s.is_signed() {
                        Scalar::Long
                    } else {
                        Scalar::ULong
                    },
                );
                if op == Sub {
                    let t = if s.is_signed() { Type::I64 } else { Type::U64 };
                    i = self.s.val(Op::Neg, t, &[i]);
                }
                return self.ptr_offset(a, i, span);
            }
            (Ty::Scalar(s), Ty::Pointer(_), Add) if s.is_int() => {
                let i = self.scalar_cvt(
                    a.parts[0],
                    *s,
                    if s.is_signed() {
                        Scalar::Long
                    } else {
                        Scalar::ULong
                    },
                );
                return self.ptr_offset(b, i, span);
            }
            (Ty::Pointer(p), Ty::Pointer(q), Sub) if p.pointee == q.pointee => {
                let size = self.g.structs.size(&p.pointee).max(1);
                let d = self.s.val(Op::Sub, Type::U64, &[a.parts[0], b.parts[0]]);
                let d = self.s.val(Op::Bitcast { from: Type::U64 }, Type::I64, &[d]);
                let sz = self.constant(Const::int(Scalar::Long, size as i128));
                let r = self.s.val(Op::Div, Type::I64, &[d, sz]);
                return Some(Val {
                    ty: Ty::Scalar(Scalar::Long),
                    parts: vec![r],
                });
            }
            (Ty::Pointer(_), Ty::Pointer(_), Eq | Ne | Lt | Le | Gt | Ge) => {
                let r = self
                    .s
                    .val(Op::Cmp(cmp_cond(op)), Type::U64, &[a.parts[0], b.parts[0]]);
                return Some(Val {
                    ty: Ty::BOOL,
                    parts: vec![r],
                });
            }
            (Ty::Pointer(_), _, _) | (_, Ty::Pointer(_), _) => {
                let (x, y) = (self.show(&a.ty), self.show(&b.ty));
                self.error(
                    format!("operator cannot be applied to `{x}` and `{y}`"),
                    span,
                );
                return None;
            }
            _ => {}
        }
        let ty = self.arith_type(op, &a.ty, &b.ty, span)?;
        let elem = ty.elem_scalar()?;
        let is_cmp = matches!(op, Lt | Le | Gt | Ge | Eq | Ne);
        let bitwise = matches!(op, BitAnd | BitOr | BitXor);
        // Bitwise operators on bools: C++ promotes to int, except bool vectors stay bool.
        let (ty, elem) = if bitwise && elem == Scalar::Bool && matches!(ty, Ty::Scalar(_)) {
            (Ty::INT, Scalar::Int)
        } else {
            (ty, elem)
        };
        if elem.is_float() && matches!(op, Rem | BitAnd | BitOr | BitXor | Shl | Shr) {
            let t = self.show(&ty);
            let hint = if op == Rem { "; use fmod()" } else { "" };
            self.error(
                format!("this operator needs integer operands, found `{t}`{hint}"),
                span,
            );
            return None;
        }
        if elem == Scalar::Bool && !is_cmp && !bitwise {
            // Arithmetic on bools promotes to int.
            let ty = ty.with_elem(Scalar::Int);
            let a = self.convert(a, &ty, true, span)?;
            let b = self.convert(b, &ty, true, span)?;
            return self.arith(op, a, b, span);
        }
        let a = self.convert(a, &ty, true, span)?;
        let b = self.convert(b, &ty, true, span)?;
        let t = elem.isa();
        let o = match op {
            Add => Op::Add,
            Sub => Op::Sub,
            Mul => Op::Mul,
            Div => Op::Div,
            Rem => Op::Rem,
            Shl => Op::Shl,
            Shr => Op::Shr,
            BitAnd => Op::And,
            BitOr => Op::Or,
            BitXor => Op::Xor,
            Lt | Le | Gt | Ge | Eq | Ne => Op::Cmp(cmp_cond(op)),
            LogAnd | LogOr | Comma => return None,
        };
        // Constant operands fold (so `mem_flags::a | mem_flags::b` stays a constant).
        let parts: Vec<Value> = a
            .parts
            .iter()
            .zip(&b.parts)
            .map(|(x, y)| {
                if let (Some(bx), Some(by)) = (self.s.const_bits(*x), self.s.const_bits(*y))
                    && !elem.is_float()
                    && let Some(c) = consteval::binary(
                        op,
                        Const::from_bits(elem, bx),
                        Const::from_bits(elem, by),
                    )
                {
                    let c = if is_cmp { c } else { c.cast(elem) };
                    return self.constant(c);
                }
                self.s.val(o, t, &[*x, *y])
            })
            .collect();
        let rty = if is_cmp {
            ty.with_elem(Scalar::Bool)
        } else {
            ty
        };
        Some(Val { ty: rty, parts })
    }

    /// Whether evaluating an expression on lanes that would not evaluate it is harmless (no
    /// memory access, no effect), so `?:` and `&&` can compute both sides and select.
    pub fn speculatable(&mut self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::IntLit { .. } | ExprKind::FloatLit { .. } | ExprKind::BoolLit(_) => true,
            ExprKind::Name { .. } => true,
            ExprKind::Unary { op, operand } => {
                matches!(
                    op,
                    UnaryOp::Neg | UnaryOp::Plus | UnaryOp::Not | UnaryOp::BitNot
                ) && self.speculatable(operand)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                *op != BinaryOp::Comma && self.speculatable(lhs) && self.speculatable(rhs)
            }
            ExprKind::Conditional { cond, then_, else_ } => {
                self.speculatable(cond) && self.speculatable(then_) && self.speculatable(else_)
            }
            ExprKind::Cast { expr, .. } => self.speculatable(expr),
            ExprKind::Member { base, arrow, .. } => !arrow && self.speculatable(base),
            ExprKind::Call { callee, args } => {
                let pure = match &callee.kind {
                    ExprKind::Name(path) => self.pure_callee(path),
                    _ => false,
                };
                pure && args.iter().all(|a| self.speculatable(a))
            }
            ExprKind::SizeofType(_)
            | ExprKind::AlignofType(_)
            | ExprKind::SizeofExpr(_)
            | ExprKind::SizeofPack(_) => true,
            _ => false,
        }
    }

    fn logical(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr, span: Span) -> Option<Val> {
        let a = self.rvalue(lhs)?;
        let a = self.condition(a, lhs.span)?;
        if self.speculatable(rhs) {
            let b = self.rvalue(rhs)?;
            let b = self.condition(b, rhs.span)?;
            self.at(span);
            let o = if op == BinaryOp::LogAnd {
                Op::And
            } else {
                Op::Or
            };
            let r = self.s.val(o, Type::Pred, &[a, b]);
            return Some(Val {
                ty: Ty::BOOL,
                parts: vec![r],
            });
        }
        self.at(span);
        let slot = self.s.new_slot(Type::Pred);
        let short = self.constant(Const::bool(op == BinaryOp::LogOr));
        self.s.write(slot, short);
        let rhs_block = self.s.create_block();
        let join = self.s.create_block();
        if op == BinaryOp::LogAnd {
            self.s.br_if(a, rhs_block, join);
        } else {
            self.s.br_if(a, join, rhs_block);
        }
        self.s.seal(rhs_block);
        self.s.switch_to(rhs_block);
        let b = self.rvalue(rhs).and_then(|b| self.condition(b, rhs.span));
        if let Some(b) = b {
            self.s.write(slot, b);
        }
        self.s.br(join);
        self.s.seal(join);
        self.s.switch_to(join);
        b?;
        let r = self.s.read(slot);
        Some(Val {
            ty: Ty::BOOL,
            parts: vec![r],
        })
    }

    /// The type both arms of `?:` convert to.
    fn common_type(&mut self, a: &Ty, b: &Ty, span: Span) -> Option<Ty> {
        if a == b {
            return Some(a.clone());
        }
        match (a, b) {
            (Ty::Scalar(_) | Ty::Vector { .. }, Ty::Scalar(_) | Ty::Vector { .. }) => {
                self.arith_type(BinaryOp::Add, a, b, span)
            }
            (Ty::Pointer(p), Ty::Pointer(q)) if p.pointee == q.pointee && p.space == q.space => {
                Some(Ty::pointer(
                    p.pointee.clone(),
                    p.space,
                    p.is_const || q.is_const,
                ))
            }
            _ => {
                let (x, y) = (self.show(a), self.show(b));
                self.error(
                    format!("the arms of `?:` have incompatible types `{x}` and `{y}`"),
                    span,
                );
                None
            }
        }
    }

    #[inline(never)]
    fn conditional(&mut self, cond: &Expr, then_: &Expr, else_: &Expr, span: Span) -> Option<Val> {
        let c = self.rvalue(cond)?;
        let c = self.condition(c, cond.span)?;
        if self.speculatable(then_) && self.speculatable(else_) {
            let t = self.rvalue(then_);
            let f = self.rvalue(else_);
            let (t, f) = (t?, f?);
            self.at(span);
            let ty = self.common_type(&t.ty, &f.ty, span)?;
            let t = self.convert(t, &ty, true, span)?;
            let f = self.convert(f, &ty, true, span)?;
            let leaves = self.g.structs.leaves(&ty);
            let parts = leaves
                .iter()
                .zip(t.parts.iter().zip(&f.parts))
                .map(|((lt, _), (x, y))| self.s.val(Op::Select, *lt, &[c, *x, *y]))
                .collect();
            return Some(Val { ty, parts });
        }
        self.at(span);
        let tb = self.s.create_block();
        let fb = self.s.create_block();
        let join = self.s.create_block();
        self.s.br_if(c, tb, fb);
        self.s.seal(tb);
        self.s.seal(fb);
        self.s.switch_to(tb);
        let t = self.rvalue(then_);
        let t_end = self.s.current();
        self.s.switch_to(fb);
        let f = self.rvalue(else_);
        let f_end = self.s.current();
        let (t, f) = (t?, f?);
        let ty = self.common_type(&t.ty, &f.ty, span)?;
        let slots = self.new_slots(&ty);
        for (v, end, e) in [(t, t_end, then_), (f, f_end, else_)] {
            self.s.switch_to(end);
            self.at(e.span);
            let v = self.convert(v, &ty, true, e.span)?;
            for (s, p) in slots.iter().zip(&v.parts) {
                self.s.write(*s, *p);
            }
            self.s.br(join);
        }
        self.s.seal(join);
        self.s.switch_to(join);
        let parts = slots.iter().map(|s| self.s.read(*s)).collect();
        Some(Val { ty, parts })
    }

    #[inline(never)]
    fn assign(
        &mut self,
        op: Option<BinaryOp>,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Option<Operand> {
        let target = self.operand(lhs)?;
        let Operand::Place { place: p, .. } = target.clone() else {
            self.error(
                "this expression is not an object that can be assigned",
                lhs.span,
            );
            return None;
        };
        let pty = self.place_ty(&p);
        if let Ty::Struct(id) = pty {
            let sym = match op {
                None => "=".to_string(),
                Some(o) => format!("{}=", o.symbol()),
            };
            let has_op = matches!(
                self.g.class_member(id, &format!("operator{sym}")),
                Some(crate::lower::names::Hit::Decls(_))
            ) || op.is_some();
            if has_op {
                let r = match &rhs.kind {
                    ExprKind::InitList(_) => {
                        let v = self.init_value(&pty, rhs)?;
                        Operand::Value(v)
                    }
                    _ => self.operand(rhs)?,
                };
                return match self.user_operator(&sym, vec![(target, lhs.span), (r, rhs.span)], span)
                {
                    Some(r) => r,
                    None => {
                        let t = self.show(&pty);
                        self.error(format!("`{t}` has no `operator{sym}`"), span);
                        None
                    }
                };
            }
        }
        let v = match op {
            None => self.init_value(&pty, rhs)?,
            Some(o) => {
                let cur = self.load(&p, lhs.span)?;
                let r = match o {
                    BinaryOp::Add | BinaryOp::Sub => {
                        match self.try_contract(o, lhs, rhs, Some(cur.clone()), span) {
                            Some(v) => v?,
                            None => {
                                let r = self.rvalue(rhs)?;
                                self.at(span);
                                self.arith(o, cur, r, span)?
                            }
                        }
                    }
                    _ => {
                        let r = self.rvalue(rhs)?;
                        let r = self.scalar_of_struct(r, rhs.span)?;
                        self.at(span);
                        self.arith(o, cur, r, span)?
                    }
                };
                self.at(span);
                self.convert(r, &pty, true, span)?
            }
        };
        self.at(span);
        self.store(&p, &v, span)?;
        Some(Operand::Place {
            place: p,
            cached: Some(v),
        })
    }
}

fn cmp_cond(op: BinaryOp) -> CmpCond {
    match op {
        BinaryOp::Lt => CmpCond::Lt,
        BinaryOp::Le => CmpCond::Le,
        BinaryOp::Gt => CmpCond::Gt,
        BinaryOp::Ge => CmpCond::Ge,
        BinaryOp::Eq => CmpCond::Eq,
        _ => CmpCond::Ne,
    }
}

/// Builtins with no side effects and no memory access (safe to evaluate speculatively).
fn is_pure_builtin(name: &str) -> bool {
    if crate::lower::types::builtin_type(name).is_some() {
        return true;
    }
    matches!(
        name,
        "min"
            | "max"
            | "fmin"
            | "fmax"
            | "clamp"
            | "abs"
            | "fabs"
            | "floor"
            | "ceil"
            | "trunc"
            | "round"
            | "rint"
            | "sqrt"
            | "rsqrt"
            | "exp"
            | "exp2"
            | "log"
            | "log2"
            | "sin"
            | "cos"
            | "tan"
            | "pow"
            | "powr"
            | "fract"
            | "fma"
            | "mad"
            | "mix"
            | "saturate"
            | "sign"
            | "step"
            | "select"
            | "dot"
            | "length"
            | "length_squared"
            | "normalize"
            | "distance"
            | "cross"
            | "all"
            | "any"
            | "isnan"
            | "isinf"
            | "isfinite"
            | "clz"
            | "ctz"
            | "popcount"
            | "mulhi"
            | "exp10"
            | "log10"
            | "fmod"
            | "absdiff"
            | "smoothstep"
    )
}
