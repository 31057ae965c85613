//! Struct and array values in constant evaluation: the bytes of a `constexpr` object
//! (program-scope data, a `constexpr` local, a `constexpr` function's result), its members
//! and elements (`params.bm`, `v.a[2].f`, bit-fields included), and `constexpr` methods
//! called on it (`params.area()`).

use crate::ast::{BinaryOp, Expr, ExprKind, Init, MemberInit};
use crate::lower::bitfield::{read_bits, write_bits};
use crate::lower::consteval::{self, Const};
use crate::lower::constexpr::MAX_STEPS;
use crate::lower::names::{DeclKind, Hit};
use crate::lower::resolve::Resolved;
use crate::lower::ssa::Slot;
use crate::lower::types::{Scalar, StructId, Structs, Ty};
use crate::lower::{Binding, FnLowerer, GlobalValue, Place};
use crate::source::Span;
use metalsim_isa::{Space, Value};

/// A constant object: its type and its bytes as laid out in memory.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ConstObj {
    /// Its type (a struct or an array).
    pub ty: Ty,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Where a local constant object lives: its first SSA slot, or its thread memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ConstKey {
    /// A variable in registers.
    Slot(Slot),
    /// A variable in thread or constant memory, by its address.
    Addr(Value),
}

impl ConstKey {
    /// The key of a whole local variable's place.
    pub fn of(place: &Place) -> Option<ConstKey> {
        match place {
            Place::Var { slots, .. } => slots.first().map(|s| ConstKey::Slot(*s)),
            Place::Mem {
                addr,
                offset: 0,
                space: Space::Thread | Space::Constant,
                ..
            } => Some(ConstKey::Addr(*addr)),
            _ => None,
        }
    }
}

/// A `constexpr` call being interpreted.
#[derive(Clone, Debug)]
pub(crate) struct ConstCall {
    /// The object a method runs on (`None` for a function that is not a method).
    pub this: Option<ConstObj>,
    /// Its declared return type (`None` when deduced).
    pub ret: Option<Ty>,
}

impl ConstObj {
    /// The part of `ty` at byte `offset`.
    fn part(&self, ty: Ty, offset: u32, structs: &Structs) -> Option<ConstObj> {
        let size = structs.size(&ty) as usize;
        let start = offset as usize;
        let bytes = self.bytes.get(start..start + size)?.to_vec();
        Some(ConstObj { ty, bytes })
    }

    /// Member `name` of a struct object (a field or a bit-field's value).
    pub fn member(&self, name: &str, structs: &Structs) -> Option<ConstObj> {
        let Ty::Struct(id) = self.ty else {
            return None;
        };
        let info = structs.get(id);
        if let Some(b) = info.bit_fields.iter().rev().find(|b| b.name == name) {
            let c = Const::from_bits(b.ty, read_bits(&self.bytes, b));
            return Some(ConstObj::scalar(c));
        }
        let (_, ty, off) = info.fields.iter().rev().find(|(n, _, _)| n == name)?;
        self.part(ty.clone(), *off, structs)
    }

    /// Element `i` of an array object, or component `i` of a vector one.
    pub fn element(&self, i: i128, structs: &Structs) -> Option<ConstObj> {
        let (elem, n) = match &self.ty {
            Ty::Array(elem, n) => ((**elem).clone(), *n as i128),
            Ty::Vector { elem, len, .. } => (Ty::Scalar(*elem), *len as i128),
            _ => return None,
        };
        if i < 0 || i >= n {
            return None;
        }
        let stride = structs.size(&elem);
        self.part(elem, i as u32 * stride, structs)
    }

    /// A scalar as an object.
    pub fn scalar(c: Const) -> ConstObj {
        let n = c.ty.size() as usize;
        ConstObj {
            ty: Ty::Scalar(c.ty),
            bytes: c.bits().to_le_bytes()[..n].to_vec(),
        }
    }

    /// The value of a scalar object.
    pub fn as_scalar(&self) -> Option<Const> {
        let Ty::Scalar(s) = self.ty else {
            return None;
        };
        let mut b = [0u8; 8];
        let n = (s.size() as usize).min(8);
        b[..n].copy_from_slice(self.bytes.get(..n)?);
        Some(Const::from_bits(s, u64::from_le_bytes(b)))
    }
}

/// The vector component a member name selects (`v.y`, `v.b`), if it names one.
fn component(name: &str) -> Option<i128> {
    Some(match name {
        "x" | "r" => 0,
        "y" | "g" => 1,
        "z" | "b" => 2,
        "w" | "a" => 3,
        _ => return None,
    })
}

impl<'a> FnLowerer<'_, 'a> {
    /// The constant object `e` denotes: a constant struct, array or vector object or one
    /// of its parts; `None` when it is not one.
    pub(crate) fn const_object(&mut self, e: &Expr) -> Option<ConstObj> {
        match &e.kind {
            ExprKind::Name(path) => {
                if path.is_plain() {
                    let name = path.last();
                    if let Some(c) = self.cframes.last().and_then(|f| f.get(name)) {
                        return Some(ConstObj::scalar(*c));
                    }
                    if let Some(m) = self.this_member(name) {
                        return Some(m);
                    }
                }
                match self.resolve_path(path, false)? {
                    Resolved::Global(GlobalValue::Data { id, ty }) => {
                        let bytes = self.g.data.get(id as usize)?.bytes.clone();
                        Some(ConstObj { ty, bytes })
                    }
                    Resolved::Local(Binding::Place(p)) => {
                        self.const_objects.get(&ConstKey::of(&p)?).cloned()
                    }
                    Resolved::Const(c) | Resolved::Local(Binding::Const(c)) => {
                        Some(ConstObj::scalar(c))
                    }
                    _ => None,
                }
            }
            ExprKind::Member {
                base, name, arrow, ..
            } => {
                let obj = match (&base.kind, arrow) {
                    (ExprKind::Name(p), true) if p.is_plain() && p.last() == "this" => {
                        self.const_calls.last()?.this.clone()?
                    }
                    (_, false) => self.const_object(base)?,
                    _ => return None,
                };
                if matches!(obj.ty, Ty::Vector { .. }) {
                    return obj.element(component(&name.name)?, &self.g.structs);
                }
                obj.member(&name.name, &self.g.structs)
            }
            ExprKind::Index { base, index } => {
                let i = self.interp(index)?.as_i128();
                self.const_object(base)?.element(i, &self.g.structs)
            }
            ExprKind::Call { callee, args } => self.interp_call_obj(callee, args, e.span),
            ExprKind::TypedInitList { ty, .. } => {
                let t = self.resolve_type(ty)?.ty;
                let init = Init::Assign(e.clone());
                match t {
                    Ty::Struct(id) if self.g.has_constructors(id) => {
                        let ExprKind::TypedInitList { elems, .. } = &e.kind else {
                            return None;
                        };
                        self.construct_const(id, elems, e.span)
                    }
                    Ty::Struct(_) | Ty::Array(..) => self.const_init_object(&t, &init, e.span),
                    _ => Some(ConstObj::scalar(self.interp(e)?)),
                }
            }
            _ => Some(ConstObj::scalar(self.interp(e)?)),
        }
    }

    /// Member `name` of the object of the `constexpr` method being interpreted.
    fn this_member(&self, name: &str) -> Option<ConstObj> {
        let this = self.const_calls.last()?.this.as_ref()?;
        this.member(name, &self.g.structs)
    }

    /// The value of scalar member `name` of the object of the `constexpr` method being
    /// interpreted.
    pub(crate) fn this_member_value(&self, name: &str) -> Option<Const> {
        self.this_member(name)?.as_scalar()
    }

    /// The value of a scalar member, element or component of a constant object
    /// (`params.bm`, `v.a[2].f`).
    pub(crate) fn const_part(&mut self, e: &Expr) -> Option<Const> {
        self.const_object(e)?.as_scalar()
    }

    /// A constant object of type `ty` initialized from `init` (aggregate initialization,
    /// or a constant object of that type), silently `None` when it is not constant.
    pub(crate) fn const_init_object(
        &mut self,
        ty: &Ty,
        init: &Init,
        span: Span,
    ) -> Option<ConstObj> {
        let outer = self.g.const_steps == 0;
        if outer {
            self.g.const_steps = MAX_STEPS;
        }
        let obj = self.const_init_object_in_budget(ty, init, span);
        if outer {
            self.g.const_steps = 0;
        }
        obj
    }

    /// [`Self::const_init_object`] within the current evaluation's step budget.
    fn const_init_object_in_budget(
        &mut self,
        ty: &Ty,
        init: &Init,
        span: Span,
    ) -> Option<ConstObj> {
        match (ty, init) {
            (Ty::Struct(id), Init::Ctor(items) | Init::Brace(items))
                if self.g.has_constructors(*id) =>
            {
                return self.construct_const(*id, items, span);
            }
            (Ty::Struct(id), Init::Assign(e)) if self.g.has_constructors(*id) => {
                if let ExprKind::InitList(items) = &e.kind {
                    return self.construct_const(*id, items, span);
                }
            }
            (Ty::Struct(_) | Ty::Array(..), _) => {}
            _ => return None,
        }
        let e = match init {
            Init::Assign(e) => e.clone(),
            Init::Brace(items) => Expr {
                kind: ExprKind::InitList(items.clone()),
                span,
            },
            Init::Ctor(_) => return None,
        };
        let mark = self.g.diags.len();
        let typed_aggregate =
            matches!(e.kind, ExprKind::TypedInitList { .. }) && self.is_aggregate(ty);
        if matches!(e.kind, ExprKind::InitList(_)) || typed_aggregate {
            let mut bytes = vec![0u8; self.g.structs.size(ty) as usize];
            let ok = self.const_init_bytes(ty, &e, 0, &mut bytes);
            self.g.diags.truncate(mark);
            return ok.then(|| ConstObj {
                ty: ty.clone(),
                bytes,
            });
        }
        let obj = self.const_object(&e);
        self.g.diags.truncate(mark);
        obj.filter(|o| o.ty == *ty)
    }

    /// A constructor call on constant arguments, silently `None` when not constant.
    fn construct_const(&mut self, id: StructId, args: &[Expr], span: Span) -> Option<ConstObj> {
        let mark = self.g.diags.len();
        let mut vals = Some(Vec::with_capacity(args.len()));
        for a in args {
            vals = vals.zip(self.try_const(a)).map(|(mut v, c)| {
                v.push(c);
                v
            });
        }
        let obj = vals.and_then(|v| self.interp_constructor(id, &v, span));
        self.g.diags.truncate(mark);
        obj
    }

    /// Whether `ty` is an array or a struct without constructors, whose constant objects
    /// [`Self::const_init_object`] evaluates.
    pub(crate) fn is_aggregate(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Struct(id) => !self.g.has_constructors(*id),
            Ty::Array(..) => true,
            _ => false,
        }
    }

    /// The value a `return e;` of the `constexpr` call being interpreted returns: an
    /// object of its struct or array return type, or a scalar.
    pub(crate) fn interp_return(&mut self, e: &Expr) -> Option<ConstObj> {
        match self.const_calls.last().and_then(|c| c.ret.clone()) {
            Some(ty @ (Ty::Struct(_) | Ty::Array(..))) => {
                self.const_init_object(&ty, &Init::Assign(e.clone()), e.span)
            }
            _ => Some(ConstObj::scalar(self.interp(e)?)),
        }
    }

    /// A constant object as a module data object in the constant address space.
    pub(crate) fn push_data(&mut self, obj: ConstObj, name: &str) -> GlobalValue {
        let id = self.g.data.len() as u32;
        self.g.data.push(metalsim_isa::DataObject {
            align: self.g.structs.align(&obj.ty),
            bytes: obj.bytes,
            name: name.to_string(),
        });
        GlobalValue::Data { id, ty: obj.ty }
    }

    /// A constant object of class `id` built by a `constexpr` constructor from constant
    /// arguments.
    pub(crate) fn interp_constructor(
        &mut self,
        id: StructId,
        vals: &[Const],
        span: Span,
    ) -> Option<ConstObj> {
        let ty = Ty::Struct(id);
        if !self.g.has_constructors(id) {
            return None;
        }
        let cands = self.constructors(id);
        let infos: Vec<_> = vals
            .iter()
            .map(|v| crate::lower::call::ArgInfo::value(Ty::Scalar(v.ty)))
            .collect();
        let name = self.show(&ty);
        let chosen = self.choose(cands, &infos, None, &name, span, false)?;
        let this = ConstObj {
            bytes: vec![0; self.g.structs.size(&ty) as usize],
            ty,
        };
        self.interp_function(&chosen, vals, Some(this), span)
    }

    /// A constructor's member initializers (`: bm(m), bn(2 * m)`), run on the object
    /// being built.
    pub(crate) fn interp_member_inits(&mut self, inits: &[MemberInit]) -> Option<()> {
        for mi in inits {
            let name = mi.name.last();
            let Ty::Struct(id) = self.const_calls.last()?.this.as_ref()?.ty else {
                return None;
            };
            let info = self.g.structs.get(id);
            let field_ty = match info.fields.iter().rev().find(|(n, _, _)| n == name) {
                Some((_, t, _)) => t.clone(),
                None if info.bit_fields.iter().any(|b| b.name == name) => Ty::Void,
                None => return None,
            };
            let value = match (&field_ty, mi.args.as_slice()) {
                (Ty::Scalar(_) | Ty::Void, []) => ConstObj::scalar(Const::int(Scalar::Int, 0)),
                (Ty::Scalar(_) | Ty::Void, [a]) => ConstObj::scalar(self.interp(a)?),
                (Ty::Struct(fid), args) if self.g.has_constructors(*fid) => {
                    let mut vals = Vec::with_capacity(args.len());
                    for a in args {
                        vals.push(self.interp(a)?);
                    }
                    self.interp_constructor(*fid, &vals, mi.span)?
                }
                (t, [a]) if !mi.brace => {
                    self.const_init_object(t, &Init::Assign(a.clone()), mi.span)?
                }
                (t, args) => self.const_init_object(t, &Init::Brace(args.to_vec()), mi.span)?,
            };
            self.set_this_member(name, value)?;
        }
        Some(())
    }

    /// `member = rhs` (or a compound assignment) on the object of the `constexpr`
    /// constructor or method being interpreted.
    pub(crate) fn interp_member_assign(
        &mut self,
        name: &str,
        op: Option<BinaryOp>,
        rhs: &Expr,
    ) -> Option<Const> {
        let old = self.this_member_value(name)?;
        let r = self.interp(rhs)?;
        let new = match op {
            None => r,
            Some(o) => consteval::binary(o, old, r)?,
        }
        .cast(old.ty);
        self.set_this_member(name, ConstObj::scalar(new))?;
        Some(new)
    }

    /// Stores `value` into member `name` of the object being built (converting a scalar
    /// to the member's type).
    fn set_this_member(&mut self, name: &str, value: ConstObj) -> Option<()> {
        let structs = &self.g.structs;
        let this = self.const_calls.last_mut()?.this.as_mut()?;
        let Ty::Struct(id) = this.ty else {
            return None;
        };
        let info = structs.get(id);
        if let Some(b) = info.bit_fields.iter().rev().find(|b| b.name == name) {
            let c = value.as_scalar()?.cast(b.ty);
            write_bits(&mut this.bytes, 0, b, c.bits());
            return Some(());
        }
        let (_, ty, off) = info.fields.iter().rev().find(|(n, _, _)| n == name)?;
        let bytes = match (ty, value.as_scalar()) {
            (Ty::Scalar(s), Some(c)) => ConstObj::scalar(c.cast(*s)).bytes,
            (t, _) if *t == value.ty => value.bytes,
            _ => return None,
        };
        let start = *off as usize;
        this.bytes
            .get_mut(start..start + bytes.len())?
            .copy_from_slice(&bytes);
        Some(())
    }

    /// `obj.name(args)` for a `constexpr` method of a constant object.
    pub(crate) fn interp_method(
        &mut self,
        base: &Expr,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Option<ConstObj> {
        let obj = self.const_object(base)?;
        if let (Ty::Array(_, n), "size" | "max_size", []) = (&obj.ty, name, args) {
            return Some(ConstObj::scalar(Const::int(Scalar::ULong, i128::from(*n))));
        }
        let Ty::Struct(id) = obj.ty else {
            return None;
        };
        let cands: Vec<_> = match self.g.class_member(id, name) {
            Some(Hit::Decls(ds)) => ds
                .into_iter()
                .filter(|(d, _)| matches!(self.g.decl(*d).kind, DeclKind::Function(_)))
                .map(|(decl, env)| crate::lower::resolve::FnRef {
                    decl,
                    env,
                    targs: None,
                })
                .collect(),
            _ => return None,
        };
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.interp(a)?);
        }
        let infos: Vec<_> = vals
            .iter()
            .map(|v| crate::lower::call::ArgInfo::value(Ty::Scalar(v.ty)))
            .collect();
        let this_info = crate::lower::call::ArgInfo {
            ty: Some(obj.ty.clone()),
            lvalue: true,
            is_const: true,
            space: None,
        };
        let chosen = self.choose(cands, &infos, Some(&this_info), name, span, false)?;
        self.interp_function(&chosen, &vals, Some(obj), span)
    }
}

#[cfg(test)]
mod tests {
    /// Compiles `src` and returns the printed ISA, or the short diagnostics.
    fn check(src: &str) -> Result<String, String> {
        let (m, diags, sources) = crate::compile_str("t.metal", src);
        match m {
            Some(m) if !crate::has_errors(&diags) => Ok(m.to_string()),
            _ => Err(crate::render_short(&diags, &sources)),
        }
    }

    const KERNEL: &str =
        "kernel void k(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]])";

    #[test]
    fn members_of_program_scope_objects_are_constants() {
        check(&format!(
            "struct P {{ uint bm; uint bn; constexpr uint area() const {{ return bm * bn; }} }};\n\
             struct Q {{ P p[2]; array<uint, 3> a; uint2 v; uint f : 3; uint g : 5; }};\n\
             constexpr constant P params = {{32, 16}};\n\
             constexpr constant Q q = {{{{{{1, 2}}, {{3, 4}}}}, {{5, 6, 7}}, {{8, 9}}, 5, 17}};\n\
             static_assert(params.bm % 8 == 0 && params.area() == 512, \"p\");\n\
             static_assert(q.p[1].bn == 4 && q.a[2] == 7 && q.a.size() == 3, \"nested\");\n\
             static_assert(q.v.y == 9 && q.f == 5 && q.g == 17, \"vector and bit-fields\");\n\
             {KERNEL} {{ uint a[params.bn]; a[0] = 1; o[i] = a[0] + params.area(); }}\n"
        ))
        .unwrap();
        let err = check(&format!(
            "struct P {{ uint bm; }};\nconstexpr constant P params = {{32}};\n\
             static_assert(params.bm == 31, \"bm is 31\");\n{KERNEL} {{ o[i] = 0; }}\n"
        ))
        .unwrap_err();
        assert!(err.contains("static_assert failed: bm is 31"), "{err}");
    }

    #[test]
    fn signed_bit_fields_of_constant_objects_are_sign_extended() {
        check(&format!(
            "struct H {{ int zp : 4; uint n : 4; short s : 7; }};\n\
             constexpr constant H h = {{-1, 15, -40}};\n\
             static_assert(h.zp == -1 && h.n == 15 && h.s == -40, \"signed\");\n\
             {KERNEL} {{ o[i] = h.zp; }}\n"
        ))
        .unwrap();
    }

    #[test]
    fn block_scope_objects_constructors_and_functions_returning_structs() {
        check(&format!(
            "struct P {{ uint bm; uint bn; }};\n\
             struct C {{ uint a; uint b : 4; uint c;\n\
               constexpr C(uint x) : a(x), b(x + 1) {{ c = a * 10; this->c += 1; }}\n\
               constexpr uint sum() const {{ return a + b + c; }} }};\n\
             constexpr P make(uint m) {{ return {{m, m * 2}}; }}\n\
             struct S {{ static constexpr P s = make(3); }};\n\
             template <uint N> uint get() {{ return N; }}\n\
             {KERNEL} {{\n\
               constexpr P q = {{4, 2}};\n\
               constexpr C c(3);\n\
               constexpr constant P cq = {{6, 7}};\n\
               static_assert(cq.bn == 7, \"constant local\");\n\
               static_assert(q.bn == 2 && c.c == 31 && c.sum() == 38, \"locals\");\n\
               static_assert(S::s.bn == 6 && make(5).bm == 5, \"functions\");\n\
               uint a[q.bm];\n\
               a[0] = get<S::s.bm>() + get<make(2).bn>() + get<S::s.bm * 2>();\n\
               if constexpr (C(2).b == 3) {{ o[i] = a[0]; }} else {{ o[i] = 1; }}\n}}\n"
        ))
        .unwrap();
    }

    #[test]
    fn non_constant_objects_stay_errors() {
        let err = check(&format!(
            "struct P {{ uint bm; uint bn; }};\n\
             {KERNEL} {{ constexpr P q = {{i, 2}}; P r = {{1, 2}};\n\
               static_assert(r.bn == 2, \"r\"); o[i] = q.bm; }}\n"
        ))
        .unwrap_err();
        assert!(
            err.contains("a `constexpr` variable's initializer must be a constant expression"),
            "{err}"
        );
        assert!(
            err.contains("a `static_assert` condition must be a constant expression"),
            "{err}"
        );
    }
}
