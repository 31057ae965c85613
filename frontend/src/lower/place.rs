//! Places: objects that can be read and written (SSA variables, memory, bit-fields, vector
//! components), and how to load, store, index and take members of them.

use metalsim_isa::{CmpCond, Op, Space, Type, Value};

use crate::ast::Expr;
use crate::lower::names::Hit;
use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Operand, Place, Val};
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
            Place::DynElement { elem, .. } => elem.clone(),
            Place::BitField { field, .. } => Ty::Scalar(field.ty),
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
                let mut parts = Vec::with_capacity(self.g.structs.leaf_count(ty));
                for acc in self.g.structs.mem_accesses(ty) {
                    let a = self.mem_addr(*addr, offset + acc.offset);
                    if acc.count == 1 {
                        parts.push(self.s.val(Op::Load(*space), acc.ty, &[a]));
                    } else {
                        let op = Op::LoadVec(*space, acc.count);
                        parts.extend(self.s.b.ins_multi(op, acc.ty, &[a]));
                    }
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
            Place::DynElement { base, index, elem } => {
                let b = self.load(base, span)?;
                let leaves = self.g.structs.leaves(elem);
                let n = leaves.len().max(1);
                let parts = leaves
                    .iter()
                    .enumerate()
                    .map(|(j, (t, _))| {
                        let column: Vec<Value> =
                            b.parts.iter().skip(j).step_by(n).copied().collect();
                        self.dyn_pick_isa(&column, *index, *t)
                    })
                    .collect();
                Some(Val {
                    ty: elem.clone(),
                    parts,
                })
            }
            Place::BitField { base, field } => {
                let v = self.load_bit_field(base, field, span)?;
                Some(Val {
                    ty: Ty::Scalar(field.ty),
                    parts: vec![v],
                })
            }
        }
    }

    /// Selects `parts[index]` with a chain of selects (index is a u32 register).
    pub fn dyn_pick(&mut self, parts: &[Value], index: Value, elem: Scalar) -> Value {
        self.dyn_pick_isa(parts, index, elem.isa())
    }

    /// [`Self::dyn_pick`] for registers of ISA type `ty`.
    pub fn dyn_pick_isa(&mut self, parts: &[Value], index: Value, ty: Type) -> Value {
        let mut r = parts[0];
        for (k, p) in parts.iter().enumerate().skip(1) {
            let kc = self.const_u32(k as u32);
            let c = self.s.val(Op::Cmp(CmpCond::Eq), Type::U32, &[index, kc]);
            r = self.s.val(Op::Select, ty, &[c, *p, r]);
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
                let mut parts = v.parts.iter().copied();
                for acc in self.g.structs.mem_accesses(ty) {
                    let a = self.mem_addr(*addr, offset + acc.offset);
                    let mut args = vec![a];
                    args.extend(parts.by_ref().take(acc.count as usize));
                    if args.len() != acc.count as usize + 1 {
                        break;
                    }
                    let op = if acc.count == 1 {
                        Op::Store(*space)
                    } else {
                        Op::StoreVec(*space, acc.count)
                    };
                    self.s.ins(op, acc.ty, &args);
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
            Place::DynElement { base, index, elem } => {
                let old = self.load(base, span)?;
                let leaves = self.g.structs.leaves(elem);
                let n = leaves.len().max(1);
                let mut parts = old.parts.clone();
                for (i, part) in parts.iter_mut().enumerate() {
                    let kc = self.const_u32((i / n) as u32);
                    let c = self.s.val(Op::Cmp(CmpCond::Eq), Type::U32, &[*index, kc]);
                    let t = leaves[i % n].0;
                    *part = self.s.val(Op::Select, t, &[c, v.parts[i % n], *part]);
                }
                self.store(base, &Val { ty: old.ty, parts }, span)
            }
            Place::BitField { base, field } => {
                if crate::lower::call::place_is_const(base) {
                    self.error(
                        format!(
                            "cannot assign to the bit-field `{}` of a `const` object",
                            field.name
                        ),
                        span,
                    );
                    return None;
                }
                self.store_bit_field(base, field, v.parts[0], span)
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
            // A component of a column chosen at run time: picked like a run-time component
            // whose index is a constant (the optimizer folds the selects).
            Place::DynElement { .. } => Place::DynComponent {
                base: Box::new(base.clone()),
                index: self.const_u32(comp as u32),
            },
            // A bit-field is a scalar: its only component is itself.
            Place::BitField { .. } => base.clone(),
        }
    }

    /// The memory a pointer value points to.
    pub fn deref(&mut self, p: Val, span: Span) -> Option<Place> {
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

    /// Lowers an index into an integer register of type `uint` or `int`.
    pub fn index_value(&mut self, index: &Expr) -> Option<(Value, Scalar)> {
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

    /// Element `i` of an array place.
    pub fn array_element(&mut self, bp: Place, elem: Ty, i: u32, stride: u32) -> Place {
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

    /// `p[i]`: the element a pointer value and an index expression designate.
    pub fn pointer_index(&mut self, p: Val, index: &Expr, span: Span) -> Option<Place> {
        let (iv, _) = self.index_value(index)?;
        self.at(span);
        let q = self.ptr_offset(p, iv, span)?;
        self.deref(q, span)
    }

    /// `p + i` for a pointer value and an integer register.
    pub fn ptr_offset(&mut self, p: Val, i: Value, span: Span) -> Option<Val> {
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

    /// `base.name`: a field or a swizzle of an object, or of a value.
    #[inline(never)]
    pub fn member_operand(&mut self, base: Operand, name: &str, span: Span) -> Option<Operand> {
        let ty = match &base {
            Operand::Value(v) => v.ty.clone(),
            Operand::Place { place, .. } => self.place_ty(place),
        };
        match &ty {
            Ty::Struct(id) => {
                if let Some(field) = self.bit_field(*id, name) {
                    return self.bit_field_operand(base, field, span);
                }
                let index = match self.g.class_member(*id, name) {
                    Some(Hit::Field(_, i)) => i,
                    Some(Hit::Decls(ds)) => {
                        // A static data member through an object.
                        let seg = crate::ast::PathSegment {
                            name: crate::ast::Ident {
                                name: name.to_string(),
                                span,
                            },
                            args: Vec::new(),
                        };
                        let r = self.resolve_decls(ds, &seg)?;
                        let path = crate::ast::Path::simple(name, span);
                        return self.operand_of(r, &path, span);
                    }
                    _ => {
                        if let Some(r) = self.union_member(base, *id, name, span) {
                            return r;
                        }
                        let t = self.show(&ty);
                        self.error(format!("`{t}` has no member `{name}`"), span);
                        return None;
                    }
                };
                Some(match base {
                    Operand::Place { place, cached } => {
                        let cached = cached.map(|v| self.field_value(v, *id, index));
                        Operand::Place {
                            place: self.field_place(place, *id, index),
                            cached,
                        }
                    }
                    Operand::Value(v) => Operand::Value(self.field_value(v, *id, index)),
                })
            }
            Ty::Vector { len, elem, .. } => {
                let Some(comps) = swizzle(name, *len) else {
                    let t = self.show(&ty);
                    self.error(format!("`{name}` is not a component of `{t}`"), span);
                    return None;
                };
                let pick = |v: &Val| Val {
                    ty: Ty::vector(*elem, comps.len() as u8),
                    parts: comps.iter().map(|c| v.parts[*c as usize]).collect(),
                };
                Some(match base {
                    Operand::Value(v) => Operand::Value(pick(&v)),
                    Operand::Place { place, cached } => {
                        let cached = cached.as_ref().map(pick);
                        let place = if comps.len() == 1 {
                            self.component_place(&place, comps[0])
                        } else {
                            Place::Swizzle {
                                base: Box::new(place),
                                comps,
                            }
                        };
                        Operand::Place { place, cached }
                    }
                })
            }
            other => {
                let t = self.show(other);
                self.error(format!("`{t}` has no members (`{name}`)"), span);
                None
            }
        }
    }

    /// A field of a struct value (by flattened field index).
    pub fn field_value(&self, v: Val, id: crate::lower::types::StructId, index: usize) -> Val {
        let info = self.g.structs.get(id);
        let start: usize = info.fields[..index]
            .iter()
            .map(|f| self.g.structs.leaf_count(&f.1))
            .sum();
        let fty = info.fields[index].1.clone();
        let n = self.g.structs.leaf_count(&fty);
        Val {
            ty: fty,
            parts: v.parts[start..start + n].to_vec(),
        }
    }

    /// `base.name` for a member of a union, or of an anonymous union member of a struct
    /// (`None` when `name` is neither). Unions live in memory, so the member is the memory
    /// at its offset read as its type; a union value is first put in a temporary.
    fn union_member(
        &mut self,
        base: Operand,
        id: crate::lower::types::StructId,
        name: &str,
        span: Span,
    ) -> Option<Option<Operand>> {
        let info = self.g.structs.get(id).clone();
        let anonymous_with = |me: &Self, n: &str, t: &Ty| match t {
            Ty::Struct(uid) => {
                n.starts_with(crate::ast::ANONYMOUS_MEMBER) && me.has_member(*uid, name)
            }
            _ => false,
        };
        if let Some((mname, mty, off)) = info
            .union_members
            .iter()
            .find(|(n, t, _)| n == name || anonymous_with(self, n, t))
            .cloned()
        {
            let place = match base {
                Operand::Place { place, .. } => place,
                Operand::Value(v) => self.temp(&v, true),
            };
            let Place::Mem {
                addr,
                offset,
                space,
                is_const,
                ..
            } = place
            else {
                self.error(
                    format!("the union member `{name}` can only be read from memory"),
                    span,
                );
                return Some(None);
            };
            let member = Operand::Place {
                place: Place::Mem {
                    ty: mty,
                    addr,
                    offset: offset + off,
                    space,
                    is_const,
                },
                cached: None,
            };
            if mname == name {
                return Some(Some(member));
            }
            return Some(self.member_operand(member, name, span));
        }
        let index = info
            .fields
            .iter()
            .position(|(n, t, _)| anonymous_with(self, n, t))?;
        let inner = match base {
            Operand::Place { place, .. } => Operand::Place {
                place: self.field_place(place, id, index),
                cached: None,
            },
            Operand::Value(v) => Operand::Value(self.field_value(v, id, index)),
        };
        Some(self.member_operand(inner, name, span))
    }

    /// Whether class `id` has a data member `name`, its own, a union's, or one of an
    /// anonymous member's.
    pub fn has_member(&self, id: crate::lower::types::StructId, name: &str) -> bool {
        let info = self.g.structs.get(id);
        let anonymous_with = |(n, t, _): &(String, Ty, u32)| match t {
            Ty::Struct(uid) => {
                n.starts_with(crate::ast::ANONYMOUS_MEMBER) && self.has_member(*uid, name)
            }
            _ => false,
        };
        matches!(self.g.class_member(id, name), Some(Hit::Field(..)))
            || info.bit_fields.iter().any(|f| f.name == name)
            || info.union_members.iter().any(|m| m.0 == name)
            || info.fields.iter().any(anonymous_with)
            || info.union_members.iter().any(anonymous_with)
    }

    /// `base[index]` on an object or a value: array elements, vector components, pointer
    /// targets, and `operator[]` of structs.
    #[inline(never)]
    pub fn index_operand(&mut self, base: &Expr, index: &Expr, span: Span) -> Option<Operand> {
        let b = self.operand(base)?;
        let bty = match &b {
            Operand::Value(v) => v.ty.clone(),
            Operand::Place { place, .. } => self.place_ty(place),
        };
        let constant = self.try_const(index);
        match (&bty, b) {
            (Ty::Pointer(_), b) => {
                let p = self.load_operand(b, base.span)?;
                let place = self.pointer_index(p, index, span)?;
                Some(Operand::Place {
                    place,
                    cached: None,
                })
            }
            (Ty::Struct(_), b) => {
                let idx = self.operand(index)?;
                match self.user_operator("[]", vec![(b, base.span), (idx, index.span)], span) {
                    Some(r) => r,
                    None => {
                        let t = self.show(&bty);
                        self.error(format!("`{t}` has no `operator[]`"), base.span);
                        None
                    }
                }
            }
            (Ty::Array(elem, n), Operand::Place { place, .. }) => {
                let stride = self.g.structs.size(elem);
                if let Some(c) = constant
                    && !c.ty.is_float()
                {
                    let i = c.as_i128();
                    if i < 0 || i >= *n as i128 {
                        self.error(
                            format!("index {i} is out of bounds for an array of {n}"),
                            index.span,
                        );
                        return None;
                    }
                    return Some(Operand::Place {
                        place: self.array_element(place, (**elem).clone(), i as u32, stride),
                        cached: None,
                    });
                }
                match place {
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
                        Some(Operand::Place {
                            place: Place::Mem {
                                ty: (**elem).clone(),
                                addr: a,
                                offset: 0,
                                space,
                                is_const,
                            },
                            cached: None,
                        })
                    }
                    place @ (Place::Var { .. } | Place::DynElement { .. }) => {
                        // An array in registers (a matrix's columns): selects.
                        let (iv, s) = self.index_value(index)?;
                        self.at(span);
                        let iv = self.scalar_cvt(iv, s, Scalar::UInt);
                        Some(Operand::Place {
                            place: Place::DynElement {
                                base: Box::new(place),
                                index: iv,
                                elem: (**elem).clone(),
                            },
                            cached: None,
                        })
                    }
                    _ => {
                        self.error(
                            "indexing this array with a run-time index is not supported yet",
                            span,
                        );
                        None
                    }
                }
            }
            (Ty::Array(..), Operand::Value(_)) => {
                self.error(
                    "indexing an array value (not a variable) is not supported yet",
                    span,
                );
                None
            }
            (Ty::Vector { len, elem, .. }, b) => {
                let len = *len;
                let elem = *elem;
                if let Some(c) = constant {
                    let i = c.as_i128();
                    if i < 0 || i >= len as i128 {
                        self.error(
                            format!("index {i} is out of bounds for a vector of {len}"),
                            index.span,
                        );
                        return None;
                    }
                    return Some(match b {
                        Operand::Value(v) => Operand::Value(Val {
                            ty: Ty::Scalar(elem),
                            parts: vec![v.parts[i as usize]],
                        }),
                        Operand::Place { place, cached } => Operand::Place {
                            place: self.component_place(&place, i as u8),
                            cached: cached.map(|v| Val {
                                ty: Ty::Scalar(elem),
                                parts: vec![v.parts[i as usize]],
                            }),
                        },
                    });
                }
                let (iv, s) = self.index_value(index)?;
                self.at(span);
                let iv = self.scalar_cvt(iv, s, Scalar::UInt);
                match b {
                    Operand::Value(v) => {
                        let p = self.dyn_pick(&v.parts, iv, elem);
                        Some(Operand::Value(Val {
                            ty: Ty::Scalar(elem),
                            parts: vec![p],
                        }))
                    }
                    Operand::Place {
                        place:
                            Place::Mem {
                                addr,
                                offset,
                                space,
                                is_const,
                                ..
                            },
                        ..
                    } => {
                        let a = self.mem_addr(addr, offset);
                        let a = self
                            .s
                            .val(Op::PtrAdd { scale: elem.size() }, Type::U64, &[a, iv]);
                        Some(Operand::Place {
                            place: Place::Mem {
                                ty: Ty::Scalar(elem),
                                addr: a,
                                offset: 0,
                                space,
                                is_const,
                            },
                            cached: None,
                        })
                    }
                    Operand::Place { place, .. } => Some(Operand::Place {
                        place: Place::DynComponent {
                            base: Box::new(place),
                            index: iv,
                        },
                        cached: None,
                    }),
                }
            }
            (other, _) => {
                let t = self.show(other);
                self.error(format!("cannot index a value of type `{t}`"), base.span);
                None
            }
        }
    }
}

/// Whether a type holds an atomic anywhere.
pub fn contains_atomic(ty: &Ty, structs: &crate::lower::types::Structs) -> bool {
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

#[cfg(test)]
mod tests {
    /// Compiles `src` and returns the printed ISA's memory instructions (`ld.device.x4.f32`,
    /// `st.thread.f32`...), one per line in program order.
    fn check(src: &str) -> String {
        let (m, diags, sources) = crate::compile_str("t.metal", src);
        match m {
            Some(m) if !crate::has_errors(&diags) => m
                .to_string()
                .lines()
                .filter_map(|l| {
                    let op = l.split('=').next_back()?.split_whitespace().next()?;
                    (op.starts_with("ld.") || op.starts_with("st.")).then(|| op.to_string())
                })
                .collect::<Vec<_>>()
                .join("\n"),
            _ => panic!("{}", crate::render_short(&diags, &sources)),
        }
    }

    const HEAD: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

    #[test]
    fn whole_vectors_are_one_access_in_every_space() {
        for (ty, n, elem) in [
            ("float4", 4, "f32"),
            ("half2", 2, "f16"),
            ("float3", 3, "f32"),
        ] {
            let src = format!(
                "{HEAD}kernel void k(device {ty}* d [[buffer(0)]], constant {ty}* c [[buffer(1)]],\n\
                 uint i [[thread_position_in_grid]]) {{\n\
                 threadgroup {ty} t[32];\n  thread {ty} l[4];\n\
                 t[i % 32] = c[i];\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n\
                 l[i % 4] = t[(i + 1) % 32];\n  d[i] = l[(i + 1) % 4];\n}}\n"
            );
            let x = |dir: &str, space: &str| format!("{dir}.{space}.x{n}.{elem}");
            let want = [
                x("ld", "constant"),
                x("st", "threadgroup"),
                x("ld", "threadgroup"),
                x("st", "thread"),
                x("ld", "thread"),
                x("st", "device"),
            ];
            let got = check(&src);
            // The local array's zero initialization comes first, one store per element.
            let got: Vec<&str> = got.lines().collect();
            assert!(
                got.ends_with(&want.each_ref().map(|s| s.as_str())),
                "{ty}: {got:?}"
            );
            assert!(
                got.iter().all(|l| l.contains(&format!(".x{n}."))),
                "{ty}: {got:?}"
            );
        }
    }

    #[test]
    fn packed_vectors_and_components_stay_scalar() {
        let got = check(&format!(
            "{HEAD}kernel void k(device packed_float3* p [[buffer(0)]], device float4* f [[buffer(1)]],\n\
             uint i [[thread_position_in_grid]]) {{\n\
             p[i] = p[i + 1];\n  f[i].y = f[i + 1].x;\n  f[i].zw = float2(i);\n}}\n"
        ));
        assert_eq!(
            got,
            "ld.device.f32\nld.device.f32\nld.device.f32\n\
             st.device.f32\nst.device.f32\nst.device.f32\n\
             ld.device.f32\nst.device.f32\nst.device.f32\nst.device.f32"
        );
    }

    #[test]
    fn structs_keep_vector_members_whole_and_wide_elements_split_at_128_bits() {
        let got = check(&format!(
            "{HEAD}struct S {{ float a; float4 v; ushort2 h; }};\n\
             kernel void k(device S* s [[buffer(0)]], device long4* l [[buffer(1)]],\n\
             uint i [[thread_position_in_grid]]) {{\n\
             s[i] = s[i + 1];\n  l[i] = l[i + 1];\n}}\n"
        ));
        assert_eq!(
            got,
            "ld.device.f32\nld.device.x4.f32\nld.device.x2.u16\n\
             st.device.f32\nst.device.x4.f32\nst.device.x2.u16\n\
             ld.device.x2.i64\nld.device.x2.i64\nst.device.x2.i64\nst.device.x2.i64"
        );
    }
}
