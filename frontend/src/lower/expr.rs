//! Expressions: type checking and lowering to instructions.

use metalsim_isa::{CmpCond, Op, Space, Type, Value};

use crate::ast::{BinaryOp, CastKind, Expr, ExprKind, PostfixOp, UnaryOp};
use crate::lower::consteval::{self, Const};
use crate::lower::types::{Scalar, Ty};
use crate::lower::{Binding, FnLowerer, GlobalValue, Place, Val};
use crate::source::Span;

/// Parses a swizzle (`xyz`, `rgba`) into component indices.
fn swizzle(name: &str, len: u8) -> Option<Vec<u8>> {
    if name.is_empty() || name.len() > 4 {
        return None;
    }
    let xyzw = name.chars().all(|c| "xyzw".contains(c));
    let rgba = name.chars().all(|c| "rgba".contains(c));
    if !xyzw && !rgba {
        return None;
    }
    let set = if xyzw { "xyzw" } else { "rgba" };
    name.chars()
        .map(|c| set.find(c).map(|i| i as u8).filter(|i| *i < len))
        .collect()
}

impl FnLowerer<'_, '_> {
    /// The type of a place.
    pub fn place_ty(&self, p: &Place) -> Ty {
        match p {
            Place::Var { ty, .. } | Place::Mem { ty, .. } => ty.clone(),
            Place::Swizzle { base, comps } => {
                let elem = self.place_ty(base).elem_scalar().unwrap_or(Scalar::Float);
                Ty::vector(elem, comps.len() as u8)
            }
            Place::DynComponent { base, .. } => {
                Ty::Scalar(self.place_ty(base).elem_scalar().unwrap_or(Scalar::Float))
            }
        }
    }

    /// `addr + offset` as an address register.
    pub fn mem_addr(&mut self, addr: Value, offset: u32) -> Value {
        if offset == 0 {
            return addr;
        }
        let c = self.const_u32(offset);
        self.s.val(Op::PtrAdd { scale: 1 }, Type::U64, &[addr, c])
    }

    /// Reads a place.
    pub fn load(&mut self, p: &Place, span: Span) -> Option<Val> {
        match p {
            Place::Var { ty, slots, .. } => Some(Val {
                ty: ty.clone(),
                parts: slots.iter().map(|s| self.s.read(*s)).collect(),
            }),
            Place::Mem {
                ty,
                addr,
                offset,
                space,
                ..
            } => {
                if contains_atomic(ty, &self.g.structs) {
                    self.error(
                        "atomic objects can only be used through the atomic functions (atomic_load_explicit...)",
                        span,
                    );
                    return None;
                }
                let leaves = self.g.structs.leaves(ty);
                let mut parts = Vec::with_capacity(leaves.len());
                for (t, off) in leaves {
                    let a = self.mem_addr(*addr, offset + off);
                    parts.push(self.s.val(Op::Load(*space), t, &[a]));
                }
                Some(Val {
                    ty: ty.clone(),
                    parts,
                })
            }
            Place::Swizzle { base, comps } => {
                let b = self.load(base, span)?;
                let elem = b.ty.elem_scalar()?;
                Some(Val {
                    ty: Ty::vector(elem, comps.len() as u8),
                    parts: comps.iter().map(|c| b.parts[*c as usize]).collect(),
                })
            }
            Place::DynComponent { base, index } => {
                let b = self.load(base, span)?;
                let elem = b.ty.elem_scalar()?;
                let v = self.dyn_pick(&b.parts, *index, elem);
                Some(Val {
                    ty: Ty::Scalar(elem),
                    parts: vec![v],
                })
            }
        }
    }

    /// Selects `parts[index]` with a chain of selects (index is a u32 register).
    fn dyn_pick(&mut self, parts: &[Value], index: Value, elem: Scalar) -> Value {
        let mut r = parts[0];
        for (k, p) in parts.iter().enumerate().skip(1) {
            let kc = self.const_u32(k as u32);
            let c = self.s.val(Op::Cmp(CmpCond::Eq), Type::U32, &[index, kc]);
            r = self.s.val(Op::Select, elem.isa(), &[c, *p, r]);
        }
        r
    }

    /// Writes a value (already of the place's type) to a place.
    pub fn store(&mut self, p: &Place, v: &Val, span: Span) -> Option<()> {
        match p {
            Place::Var {
                slots, is_const, ..
            } => {
                if *is_const {
                    self.error("cannot assign to a `const` variable", span);
                    return None;
                }
                for (s, part) in slots.iter().zip(&v.parts) {
                    self.s.write(*s, *part);
                }
                Some(())
            }
            Place::Mem {
                ty,
                addr,
                offset,
                space,
                is_const,
            } => {
                if *is_const || *space == Space::Constant {
                    self.error("cannot assign to `const` or `constant` memory", span);
                    return None;
                }
                if contains_atomic(ty, &self.g.structs) {
                    self.error(
                        "atomic objects can only be written with atomic_store_explicit",
                        span,
                    );
                    return None;
                }
                let leaves = self.g.structs.leaves(ty);
                for ((t, off), part) in leaves.into_iter().zip(&v.parts) {
                    let a = self.mem_addr(*addr, offset + off);
                    self.s.ins(Op::Store(*space), t, &[a, *part]);
                }
                Some(())
            }
            Place::Swizzle { base, comps } => {
                for (i, c) in comps.iter().enumerate() {
                    if comps[..i].contains(c) {
                        self.error("cannot assign to a swizzle that repeats a component", span);
                        return None;
                    }
                }
                for (i, c) in comps.iter().enumerate() {
                    let cp = self.component_place(base, *c);
                    let one = Val {
                        ty: self.place_ty(&cp),
                        parts: vec![v.parts[i]],
                    };
                    self.store(&cp, &one, span)?;
                }
                Some(())
            }
            Place::DynComponent { base, index } => {
                let old = self.load(base, span)?;
                let elem = old.ty.elem_scalar()?;
                let mut parts = old.parts.clone();
                for (k, part) in parts.iter_mut().enumerate() {
                    let kc = self.const_u32(k as u32);
                    let c = self.s.val(Op::Cmp(CmpCond::Eq), Type::U32, &[*index, kc]);
                    *part = self.s.val(Op::Select, elem.isa(), &[c, v.parts[0], *part]);
                }
                self.store(base, &Val { ty: old.ty, parts }, span)
            }
        }
    }

    /// The place of one component of a vector place.
    pub fn component_place(&mut self, base: &Place, comp: u8) -> Place {
        match base {
            Place::Var {
                ty,
                slots,
                is_const,
            } => Place::Var {
                ty: Ty::Scalar(ty.elem_scalar().unwrap_or(Scalar::Float)),
                slots: vec![slots[comp as usize]],
                is_const: *is_const,
            },
            Place::Mem {
                ty,
                addr,
                offset,
                space,
                is_const,
            } => {
                let elem = ty.elem_scalar().unwrap_or(Scalar::Float);
                Place::Mem {
                    ty: Ty::Scalar(elem),
                    addr: *addr,
                    offset: offset + comp as u32 * elem.size(),
                    space: *space,
                    is_const: *is_const,
                }
            }
            Place::Swizzle { base, comps } => self.component_place(base, comps[comp as usize]),
            Place::DynComponent { .. } => base.clone(),
        }
    }

    /// Whether an expression denotes an object (and so has a place).
    pub fn is_place_expr(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name { path, args } => {
                args.is_empty()
                    && match self.lookup(path.last()) {
                        Some(Binding::Place(_) | Binding::Cached { .. }) => true,
                        Some(Binding::Const(_)) => false,
                        None => matches!(
                            self.g.values.get(path.last()),
                            Some(GlobalValue::Data { .. })
                        ),
                    }
            }
            ExprKind::Unary {
                op: UnaryOp::Deref, ..
            } => true,
            ExprKind::Index { .. } => true,
            ExprKind::Member { base, arrow, .. } => *arrow || self.is_place_expr(base),
            _ => false,
        }
    }

    /// Lowers an expression that denotes an object.
    pub fn place(&mut self, e: &Expr) -> Option<Place> {
        match &e.kind {
            ExprKind::Name { path, .. } => {
                let name = path.last();
                match self.lookup(name).cloned() {
                    Some(Binding::Place(p)) => Some(p),
                    Some(Binding::Cached { place, .. }) => Some(place),
                    Some(Binding::Const(_)) => {
                        self.error(format!("`{name}` is a constant, not an object"), e.span);
                        None
                    }
                    None => match self.g.values.get(name).cloned() {
                        Some(GlobalValue::Data { id, ty }) => {
                            self.at(e.span);
                            let addr = self.s.val(Op::DataAddr(id), Type::U64, &[]);
                            Some(Place::Mem {
                                ty,
                                addr,
                                offset: 0,
                                space: Space::Constant,
                                is_const: true,
                            })
                        }
                        Some(GlobalValue::Const(_)) => {
                            self.error(format!("`{name}` is a constant, not an object"), e.span);
                            None
                        }
                        Some(GlobalValue::Poisoned) => None,
                        None => {
                            self.error(format!("unknown name `{name}`"), path.span);
                            None
                        }
                    },
                }
            }
            ExprKind::Unary {
                op: UnaryOp::Deref,
                operand,
            } => {
                let p = self.rvalue(operand)?;
                self.deref(p, e.span)
            }
            ExprKind::Index { base, index } => self.index_place(base, index, e.span),
            ExprKind::Member { base, name, arrow } => {
                let bp = if *arrow {
                    let p = self.rvalue(base)?;
                    self.deref(p, base.span)?
                } else {
                    self.place(base)?
                };
                self.member_place(bp, &name.name, name.span)
            }
            ExprKind::Error => None,
            _ => {
                self.error(
                    "this expression is not an object that can be assigned or addressed",
                    e.span,
                );
                None
            }
        }
    }

    /// The memory a pointer value points to.
    fn deref(&mut self, p: Val, span: Span) -> Option<Place> {
        match &p.ty {
            Ty::Pointer(pt) => {
                if pt.pointee == Ty::Void {
                    self.error("cannot dereference a `void` pointer", span);
                    return None;
                }
                Some(Place::Mem {
                    ty: pt.pointee.clone(),
                    addr: p.parts[0],
                    offset: 0,
                    space: pt.space,
                    is_const: pt.is_const,
                })
            }
            other => {
                let t = self.show(other);
                self.error(format!("cannot dereference a value of type `{t}`"), span);
                None
            }
        }
    }

    fn member_place(&mut self, base: Place, name: &str, span: Span) -> Option<Place> {
        let ty = self.place_ty(&base);
        match &ty {
            Ty::Struct(id) => {
                let info = self.g.structs.get(*id).clone();
                let Some(fi) = info.fields.iter().position(|f| f.0 == name) else {
                    self.error(format!("`{}` has no field `{name}`", info.name), span);
                    return None;
                };
                let (_, fty, foff) = info.fields[fi].clone();
                match base {
                    Place::Var {
                        slots, is_const, ..
                    } => {
                        let start: usize = info.fields[..fi]
                            .iter()
                            .map(|f| self.g.structs.leaf_count(&f.1))
                            .sum();
                        let n = self.g.structs.leaf_count(&fty);
                        Some(Place::Var {
                            ty: fty,
                            slots: slots[start..start + n].to_vec(),
                            is_const,
                        })
                    }
                    Place::Mem {
                        addr,
                        offset,
                        space,
                        is_const,
                        ..
                    } => Some(Place::Mem {
                        ty: fty,
                        addr,
                        offset: offset + foff,
                        space,
                        is_const,
                    }),
                    _ => None,
                }
            }
            Ty::Vector { len, .. } => {
                let Some(comps) = swizzle(name, *len) else {
                    let t = self.show(&ty);
                    self.error(format!("`{name}` is not a component of `{t}`"), span);
                    return None;
                };
                if comps.len() == 1 {
                    Some(self.component_place(&base, comps[0]))
                } else {
                    Some(Place::Swizzle {
                        base: Box::new(base),
                        comps,
                    })
                }
            }
            other => {
                let t = self.show(other);
                self.error(format!("`{t}` has no members"), span);
                None
            }
        }
    }

    /// Lowers an index into an integer register of type `uint` or `int`.
    fn index_value(&mut self, index: &Expr) -> Option<(Value, Scalar)> {
        let v = self.rvalue(index)?;
        match v.ty {
            Ty::Scalar(s) if s.is_int() || s == Scalar::Bool => {
                let to = if s == Scalar::Bool {
                    Scalar::UInt
                } else if s.size() < 4 {
                    if s.is_signed() {
                        Scalar::Int
                    } else {
                        Scalar::UInt
                    }
                } else {
                    s
                };
                Some((self.scalar_cvt(v.parts[0], s, to), to))
            }
            ref t => {
                let t = self.show(t);
                self.error(
                    format!("an index must be an integer, found `{t}`"),
                    index.span,
                );
                None
            }
        }
    }

    fn index_place(&mut self, base: &Expr, index: &Expr, span: Span) -> Option<Place> {
        let constant = { self.eval_const(index) };
        if self.is_place_expr(base) {
            let bp = self.place(base)?;
            let bty = self.place_ty(&bp);
            match bty {
                Ty::Pointer(_) => {
                    let p = self.load(&bp, base.span)?;
                    return self.pointer_index(p, index, span);
                }
                Ty::Array(elem, n) => {
                    let stride = self.g.structs.size(&elem);
                    if let Some(c) = constant
                        && !c.ty.is_float()
                    {
                        let i = c.as_i128();
                        if i < 0 || i >= n as i128 {
                            self.error(
                                format!("index {i} is out of bounds for an array of {n}"),
                                index.span,
                            );
                            return None;
                        }
                        return Some(self.array_element(bp, *elem, i as u32, stride));
                    }
                    match bp {
                        Place::Mem {
                            addr,
                            offset,
                            space,
                            is_const,
                            ..
                        } => {
                            let (iv, _) = self.index_value(index)?;
                            self.at(span);
                            let a = self.mem_addr(addr, offset);
                            let a = self
                                .s
                                .val(Op::PtrAdd { scale: stride }, Type::U64, &[a, iv]);
                            return Some(Place::Mem {
                                ty: *elem,
                                addr: a,
                                offset: 0,
                                space,
                                is_const,
                            });
                        }
                        _ => {
                            self.error(
                                "indexing this array with a run-time index is not supported yet",
                                span,
                            );
                            return None;
                        }
                    }
                }
                Ty::Vector { len, .. } => {
                    if let Some(c) = constant {
                        let i = c.as_i128();
                        if i < 0 || i >= len as i128 {
                            self.error(
                                format!("index {i} is out of bounds for a vector of {len}"),
                                index.span,
                            );
                            return None;
                        }
                        return Some(self.component_place(&bp, i as u8));
                    }
                    let (iv, s) = self.index_value(index)?;
                    self.at(span);
                    let iv = self.scalar_cvt(iv, s, Scalar::UInt);
                    return match bp {
                        Place::Mem {
                            ty,
                            addr,
                            offset,
                            space,
                            is_const,
                        } => {
                            let elem = ty.elem_scalar().unwrap_or(Scalar::Float);
                            let a = self.mem_addr(addr, offset);
                            let a =
                                self.s
                                    .val(Op::PtrAdd { scale: elem.size() }, Type::U64, &[a, iv]);
                            Some(Place::Mem {
                                ty: Ty::Scalar(elem),
                                addr: a,
                                offset: 0,
                                space,
                                is_const,
                            })
                        }
                        other => Some(Place::DynComponent {
                            base: Box::new(other),
                            index: iv,
                        }),
                    };
                }
                other => {
                    let t = self.show(&other);
                    self.error(format!("cannot index a value of type `{t}`"), base.span);
                    return None;
                }
            }
        }
        let b = self.rvalue(base)?;
        match &b.ty {
            Ty::Pointer(_) => self.pointer_index(b, index, span),
            other => {
                let t = self.show(other);
                self.error(
                    format!("cannot index a value of type `{t}` here"),
                    base.span,
                );
                None
            }
        }
    }

    fn array_element(&mut self, bp: Place, elem: Ty, i: u32, stride: u32) -> Place {
        match bp {
            Place::Var {
                slots, is_const, ..
            } => {
                let n = self.g.structs.leaf_count(&elem);
                let start = i as usize * n;
                Place::Var {
                    ty: elem,
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
                ty: elem,
                addr,
                offset: offset + i * stride,
                space,
                is_const,
            },
            other => other,
        }
    }

    fn pointer_index(&mut self, p: Val, index: &Expr, span: Span) -> Option<Place> {
        let (iv, _) = self.index_value(index)?;
        self.at(span);
        let q = self.ptr_offset(p, iv, span)?;
        self.deref(q, span)
    }

    /// `p + i` for a pointer value and an integer register.
    fn ptr_offset(&mut self, p: Val, i: Value, span: Span) -> Option<Val> {
        let Ty::Pointer(pt) = &p.ty else {
            return None;
        };
        let size = self.g.structs.size(&pt.pointee);
        if size == 0 {
            self.error("arithmetic on a pointer to `void`", span);
            return None;
        }
        let a = self
            .s
            .val(Op::PtrAdd { scale: size }, Type::U64, &[p.parts[0], i]);
        Some(Val {
            ty: p.ty.clone(),
            parts: vec![a],
        })
    }

    /// Lowers an expression for its value.
    pub fn rvalue(&mut self, e: &Expr) -> Option<Val> {
        match &e.kind {
            ExprKind::IntLit {
                value,
                unsigned,
                long,
                non_decimal,
            } => {
                self.at(e.span);
                Some(self.const_val(consteval::int_literal(
                    *value,
                    *unsigned,
                    *long,
                    *non_decimal,
                )))
            }
            ExprKind::FloatLit { value, suffix } => {
                self.at(e.span);
                Some(self.const_val(consteval::float_literal(*value, *suffix)))
            }
            ExprKind::BoolLit(b) => {
                self.at(e.span);
                Some(self.const_val(Const::bool(*b)))
            }
            ExprKind::StringLit(_) => {
                self.error("string literals are not values in MSL", e.span);
                None
            }
            ExprKind::Name { path, args } => {
                if !args.is_empty() {
                    self.error("template arguments are not supported here yet", e.span);
                    return None;
                }
                let name = path.last();
                match self.lookup(name).cloned() {
                    Some(Binding::Cached { value, .. }) => Some(value),
                    Some(Binding::Const(c)) => {
                        self.at(e.span);
                        Some(self.const_val(c))
                    }
                    Some(Binding::Place(p)) => self.load(&p, e.span),
                    None => match self.g.values.get(name).cloned() {
                        Some(GlobalValue::Const(c)) => {
                            self.at(e.span);
                            Some(self.const_val(c))
                        }
                        Some(GlobalValue::Data { .. }) => {
                            let p = self.place(e)?;
                            self.load(&p, e.span)
                        }
                        Some(GlobalValue::Poisoned) => None,
                        None => {
                            if let Some(c) = consteval::builtin_constant(name) {
                                self.at(e.span);
                                return Some(self.const_val(c));
                            }
                            if self.g.function(name).is_some() {
                                self.error(
                                    format!("`{name}` is a function; call it with `{name}(...)`"),
                                    e.span,
                                );
                            } else {
                                self.error(format!("unknown name `{name}`"), path.span);
                            }
                            None
                        }
                    },
                }
            }
            ExprKind::Unary { op, operand } => self.unary(*op, operand, e.span),
            ExprKind::Postfix { op, operand } => {
                let p = self.place(operand)?;
                let delta = if *op == PostfixOp::Inc { 1 } else { -1 };
                self.inc_dec(&p, delta, false, e.span)
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, e.span),
            ExprKind::Assign { op, lhs, rhs } => self.assign(*op, lhs, rhs, e.span),
            ExprKind::Conditional { cond, then_, else_ } => {
                self.conditional(cond, then_, else_, e.span)
            }
            ExprKind::Call { callee, args } => self.call(callee, args, e.span),
            ExprKind::Member { base, name, arrow } => {
                if *arrow || self.is_place_expr(base) {
                    let p = self.place(e)?;
                    return self.load(&p, e.span);
                }
                let b = self.rvalue(base)?;
                self.member_value(b, &name.name, name.span)
            }
            ExprKind::Index { base, index } => {
                if !self.is_place_expr(base) {
                    let b = self.rvalue(base)?;
                    if let Ty::Vector { len, .. } = b.ty {
                        let elem = b.ty.elem_scalar()?;
                        let (iv, s) = self.index_value(index)?;
                        let iv = self.scalar_cvt(iv, s, Scalar::UInt);
                        let _ = len;
                        let v = self.dyn_pick(&b.parts, iv, elem);
                        return Some(Val {
                            ty: Ty::Scalar(elem),
                            parts: vec![v],
                        });
                    }
                    let p = self.pointer_index(b, index, e.span)?;
                    return self.load(&p, e.span);
                }
                let p = self.place(e)?;
                self.load(&p, e.span)
            }
            ExprKind::Cast { kind, ty, expr } => {
                let target = self.resolve_type(ty)?;
                if target.is_ref {
                    self.error("casts to reference types are not supported", ty.span);
                    return None;
                }
                let v = self.rvalue(expr)?;
                self.at(e.span);
                match kind {
                    CastKind::AsType => self.as_type(v, &target.ty, e.span),
                    _ => self.convert(v, &target.ty, true, e.span),
                }
            }
            ExprKind::SizeofType(t) => {
                let d = self.resolve_type(t)?;
                let n = self.g.structs.size(&d.ty);
                self.at(e.span);
                Some(self.const_val(Const::int(Scalar::ULong, n as i128)))
            }
            ExprKind::AlignofType(t) => {
                let d = self.resolve_type(t)?;
                let n = self.g.structs.align(&d.ty);
                self.at(e.span);
                Some(self.const_val(Const::int(Scalar::ULong, n as i128)))
            }
            ExprKind::SizeofExpr(inner) => {
                let ty = match &inner.kind {
                    ExprKind::Name { path, .. } => match self.lookup(path.last()).cloned() {
                        Some(Binding::Place(p) | Binding::Cached { place: p, .. }) => {
                            Some(self.place_ty(&p))
                        }
                        Some(Binding::Const(c)) => Some(Ty::Scalar(c.ty)),
                        None => None,
                    },
                    _ => None,
                };
                match ty {
                    Some(t) => {
                        let n = self.g.structs.size(&t);
                        Some(self.const_val(Const::int(Scalar::ULong, n as i128)))
                    }
                    None => {
                        self.error(
                            "`sizeof` of an expression is only supported for variable names",
                            e.span,
                        );
                        None
                    }
                }
            }
            ExprKind::InitList(_) => {
                self.error("an initializer list needs a known type here", e.span);
                None
            }
            ExprKind::TypedInitList { ty, elems } => {
                let d = self.resolve_type(ty)?;
                let list = Expr {
                    kind: ExprKind::InitList(elems.clone()),
                    span: e.span,
                };
                match d.ty {
                    Ty::Scalar(_) | Ty::Vector { .. } => self.construct(&d.ty, elems, e.span),
                    _ => self.init_value(&d.ty, &list),
                }
            }
            ExprKind::Error => None,
        }
    }

    fn member_value(&mut self, b: Val, name: &str, span: Span) -> Option<Val> {
        match &b.ty {
            Ty::Struct(id) => {
                let info = self.g.structs.get(*id).clone();
                let Some(fi) = info.fields.iter().position(|f| f.0 == name) else {
                    self.error(format!("`{}` has no field `{name}`", info.name), span);
                    return None;
                };
                let start: usize = info.fields[..fi]
                    .iter()
                    .map(|f| self.g.structs.leaf_count(&f.1))
                    .sum();
                let fty = info.fields[fi].1.clone();
                let n = self.g.structs.leaf_count(&fty);
                Some(Val {
                    ty: fty,
                    parts: b.parts[start..start + n].to_vec(),
                })
            }
            Ty::Vector { len, elem, .. } => {
                let Some(comps) = swizzle(name, *len) else {
                    let t = self.show(&b.ty);
                    self.error(format!("`{name}` is not a component of `{t}`"), span);
                    return None;
                };
                Some(Val {
                    ty: Ty::vector(*elem, comps.len() as u8),
                    parts: comps.iter().map(|c| b.parts[*c as usize]).collect(),
                })
            }
            other => {
                let t = self.show(other);
                self.error(format!("`{t}` has no members"), span);
                None
            }
        }
    }

    fn unary(&mut self, op: UnaryOp, operand: &Expr, span: Span) -> Option<Val> {
        match op {
            UnaryOp::Deref => {
                let p = self.rvalue(operand)?;
                let place = self.deref(p, span)?;
                self.load(&place, span)
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
                        Some(Val {
                            ty: Ty::pointer(ty, space, is_const),
                            parts: vec![a],
                        })
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
                let p = self.place(operand)?;
                let d = if op == UnaryOp::PreInc { 1 } else { -1 };
                self.inc_dec(&p, d, true, span)
            }
            UnaryOp::Neg | UnaryOp::Plus | UnaryOp::Not | UnaryOp::BitNot => {
                let v = self.rvalue(operand)?;
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
                        Some(Val { ty: b.ty, parts })
                    }
                    _ => {
                        let to = if is_vec { elem } else { elem.promoted() };
                        if op == UnaryOp::BitNot && to.is_float() {
                            self.error("`~` needs an integer operand", span);
                            return None;
                        }
                        let v = self.convert(v.clone(), &v.ty.with_elem(to), true, span)?;
                        if op == UnaryOp::Plus {
                            return Some(v);
                        }
                        let o = if op == UnaryOp::Neg { Op::Neg } else { Op::Not };
                        let parts = v
                            .parts
                            .iter()
                            .map(|p| self.s.val(o, to.isa(), &[*p]))
                            .collect();
                        Some(Val { ty: v.ty, parts })
                    }
                }
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
            BinaryOp::LogAnd | BinaryOp::LogOr => return self.logical(op, lhs, rhs, span),
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
        let a = self.rvalue(lhs)?;
        let b = self.rvalue(rhs)?;
        self.at(span);
        self.arith(op, a, b, span)
    }

    /// Contracts `a * b + c`, `c + a * b`, `a * b - c` and `c - a * b` on floats into an FMA,
    /// as Metal's default fast-math does. `acc` supplies `c` already lowered (for `c += a * b`).
    /// Returns `None` when the pattern does not apply (nothing was emitted then).
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
        let parts: Vec<Value> = a
            .parts
            .iter()
            .zip(&b.parts)
            .map(|(x, y)| self.s.val(o, t, &[*x, *y]))
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
    pub fn speculatable(&self, e: &Expr) -> bool {
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
                    ExprKind::Name { path, .. } => {
                        let n = path.last();
                        self.g.function(n).is_none() && is_pure_builtin(n)
                    }
                    _ => false,
                };
                pure && args.iter().all(|a| self.speculatable(a))
            }
            ExprKind::SizeofType(_) | ExprKind::AlignofType(_) | ExprKind::SizeofExpr(_) => true,
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

    fn assign(&mut self, op: Option<BinaryOp>, lhs: &Expr, rhs: &Expr, span: Span) -> Option<Val> {
        let p = self.place(lhs)?;
        let pty = self.place_ty(&p);
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
        Some(v)
    }

    /// The value of an initializer (`= expr` or `= {...}`) for a target type.
    pub fn init_value(&mut self, ty: &Ty, e: &Expr) -> Option<Val> {
        let ExprKind::InitList(items) = &e.kind else {
            let v = self.rvalue(e)?;
            self.at(e.span);
            return self.convert(v, ty, false, e.span);
        };
        match ty {
            Ty::Scalar(_) => match items.as_slice() {
                [] => Some(self.zero(ty)),
                [x] => self.init_value(ty, x),
                _ => {
                    self.error("too many initializers for a scalar", e.span);
                    None
                }
            },
            Ty::Vector { .. } => {
                if items.is_empty() {
                    return Some(self.zero(ty));
                }
                self.construct(ty, items, e.span)
            }
            Ty::Array(elem, n) => {
                if items.len() > *n as usize {
                    self.error(
                        format!("too many initializers: the array has {n} elements"),
                        e.span,
                    );
                    return None;
                }
                let mut parts = Vec::new();
                for i in 0..*n as usize {
                    let v = match items.get(i) {
                        Some(item) => self.init_value(elem, item)?,
                        None => self.zero(elem),
                    };
                    parts.extend(v.parts);
                }
                Some(Val {
                    ty: ty.clone(),
                    parts,
                })
            }
            Ty::Struct(id) => {
                let fields = self.g.structs.get(*id).fields.clone();
                if items.len() > fields.len() {
                    self.error(
                        format!(
                            "too many initializers: `{}` has {} fields",
                            self.show(ty),
                            fields.len()
                        ),
                        e.span,
                    );
                    return None;
                }
                let mut parts = Vec::new();
                for (i, (_, fty, _)) in fields.iter().enumerate() {
                    let v = match items.get(i) {
                        Some(item) => self.init_value(fty, item)?,
                        None => self.zero(fty),
                    };
                    parts.extend(v.parts);
                }
                Some(Val {
                    ty: ty.clone(),
                    parts,
                })
            }
            _ => {
                let t = self.show(ty);
                self.error(
                    format!("cannot initialize `{t}` with an initializer list"),
                    e.span,
                );
                None
            }
        }
    }

    /// A vector or scalar constructor `float4(a, b)`, `float(x)`, `uint2(v)`.
    pub fn construct(&mut self, ty: &Ty, args: &[Expr], span: Span) -> Option<Val> {
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.rvalue(a)?);
        }
        self.at(span);
        match ty {
            Ty::Scalar(_) => match vals.len() {
                0 => Some(self.zero(ty)),
                1 => {
                    let v = vals.pop()?;
                    if !matches!(v.ty, Ty::Scalar(_) | Ty::Pointer(_)) {
                        let (a, b) = (self.show(&v.ty), self.show(ty));
                        self.error(format!("cannot convert `{a}` to `{b}`"), span);
                        return None;
                    }
                    self.convert(v, ty, true, span)
                }
                _ => {
                    self.error("a scalar constructor takes one argument", span);
                    None
                }
            },
            Ty::Vector { elem, len, .. } => {
                if vals.is_empty() {
                    return Some(self.zero(ty));
                }
                if vals.len() == 1 {
                    let v = vals.pop()?;
                    return match v.ty {
                        Ty::Scalar(_) | Ty::Vector { .. } => self.convert(v, ty, true, span),
                        _ => {
                            let (a, b) = (self.show(&v.ty), self.show(ty));
                            self.error(format!("cannot convert `{a}` to `{b}`"), span);
                            None
                        }
                    };
                }
                let mut parts = Vec::new();
                for v in vals {
                    let Some(s) = v.ty.elem_scalar() else {
                        let t = self.show(&v.ty);
                        self.error(format!("a vector constructor cannot take a `{t}`"), span);
                        return None;
                    };
                    for p in v.parts {
                        parts.push(self.scalar_cvt(p, s, *elem));
                    }
                }
                if parts.len() != *len as usize {
                    let t = self.show(ty);
                    self.error(
                        format!(
                            "`{t}` needs {len} components, the arguments give {}",
                            parts.len()
                        ),
                        span,
                    );
                    return None;
                }
                Some(Val {
                    ty: Ty::vector(*elem, *len),
                    parts,
                })
            }
            _ => {
                let t = self.show(ty);
                self.error(
                    format!("`{t}` cannot be constructed with parentheses; use `{t}{{...}}`"),
                    span,
                );
                None
            }
        }
    }

    /// `as_type<T>(v)`: reinterpret the bits of a value as another type of the same size.
    fn as_type(&mut self, v: Val, to: &Ty, span: Span) -> Option<Val> {
        let from_leaves = self.g.structs.leaves(&v.ty);
        let to_leaves = self.g.structs.leaves(to);
        let bits = |l: &[(Type, u32)]| l.iter().map(|(t, _)| t.bits()).sum::<u32>();
        let scalarish = |t: &Ty| matches!(t, Ty::Scalar(_) | Ty::Vector { .. });
        if !scalarish(&v.ty) || !scalarish(to) || bits(&from_leaves) != bits(&to_leaves) {
            let (a, b) = (self.show(&v.ty), self.show(to));
            self.error(
                format!("as_type cannot reinterpret `{a}` as `{b}` (sizes differ)"),
                span,
            );
            return None;
        }
        // Concatenate the source bits into 32/64-bit words, then cut the target leaves out.
        let fw = from_leaves[0].0.bits();
        let tw = to_leaves[0].0.bits();
        if fw == tw {
            let parts = v
                .parts
                .iter()
                .zip(&to_leaves)
                .map(|(p, (t, _))| {
                    if from_leaves[0].0 == *t {
                        *p
                    } else {
                        self.s.val(
                            Op::Bitcast {
                                from: from_leaves[0].0,
                            },
                            *t,
                            &[*p],
                        )
                    }
                })
                .collect();
            return Some(Val {
                ty: to.clone(),
                parts,
            });
        }
        let uint_of = |w: u32| match w {
            8 => Type::U8,
            16 => Type::U16,
            32 => Type::U32,
            _ => Type::U64,
        };
        let as_uint = |me: &mut Self, p: Value, t: Type| -> Value {
            let u = uint_of(t.bits());
            if t == u {
                p
            } else {
                me.s.val(Op::Bitcast { from: t }, u, &[p])
            }
        };
        let mut out = Vec::new();
        if fw < tw {
            // Pack several narrow leaves into each wide one, low bits first.
            let per = (tw / fw) as usize;
            let wide = uint_of(tw);
            for chunk in v.parts.chunks(per) {
                let mut acc: Option<Value> = None;
                for (k, p) in chunk.iter().enumerate() {
                    let u = as_uint(self, *p, from_leaves[0].0);
                    let w = self.s.val(
                        Op::Cvt {
                            from: uint_of(fw),
                            sat: false,
                        },
                        wide,
                        &[u],
                    );
                    let w = if k == 0 {
                        w
                    } else {
                        let sh =
                            self.constant(Const::int(uint_scalar(tw), (k as u32 * fw) as i128));
                        self.s.val(Op::Shl, wide, &[w, sh])
                    };
                    acc = Some(match acc {
                        None => w,
                        Some(a) => self.s.val(Op::Or, wide, &[a, w]),
                    });
                }
                let a = acc?;
                let t = to_leaves[0].0;
                out.push(if t == wide {
                    a
                } else {
                    self.s.val(Op::Bitcast { from: wide }, t, &[a])
                });
            }
        } else {
            // Split each wide leaf into several narrow ones.
            let per = fw / tw;
            let wide = uint_of(fw);
            let narrow = uint_of(tw);
            for p in &v.parts {
                let u = as_uint(self, *p, from_leaves[0].0);
                for k in 0..per {
                    let w = if k == 0 {
                        u
                    } else {
                        let sh = self.constant(Const::int(uint_scalar(fw), (k * tw) as i128));
                        self.s.val(Op::Shr, wide, &[u, sh])
                    };
                    let n = self.s.val(
                        Op::Cvt {
                            from: wide,
                            sat: false,
                        },
                        narrow,
                        &[w],
                    );
                    let t = to_leaves[0].0;
                    out.push(if t == narrow {
                        n
                    } else {
                        self.s.val(Op::Bitcast { from: narrow }, t, &[n])
                    });
                }
            }
        }
        Some(Val {
            ty: to.clone(),
            parts: out,
        })
    }
}

/// The unsigned scalar type of a width in bits.
fn uint_scalar(bits: u32) -> Scalar {
    match bits {
        8 => Scalar::UChar,
        16 => Scalar::UShort,
        32 => Scalar::UInt,
        _ => Scalar::ULong,
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

fn contains_atomic(ty: &Ty, structs: &crate::lower::types::Structs) -> bool {
    match ty {
        Ty::Atomic(_) => true,
        Ty::Array(e, _) => contains_atomic(e, structs),
        Ty::Struct(id) => structs
            .get(*id)
            .fields
            .iter()
            .any(|f| contains_atomic(&f.1, structs)),
        _ => false,
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
