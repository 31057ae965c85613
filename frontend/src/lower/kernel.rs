//! Kernels: the signature (buffer and threadgroup bindings, thread-position attributes)
//! and the driver that lowers one kernel's body into an ISA function.

use std::collections::{HashMap, HashSet};

use metalsim_isa::{
    Function, KernelParam, Op, ParamKind, Space, SpecialReg, Type, verify_function,
};

use crate::ast::{self, ExprKind};
use crate::lower::consteval;
use crate::lower::ssa::SsaBuilder;
use crate::lower::stmt::addr_taken_names;
use crate::lower::types::{Scalar, Ty};
use crate::lower::{Binding, FnLowerer, Globals, Place, Val};
use crate::source::Span;

/// The special registers of a thread-position attribute, one per component, or `None` if
/// the attribute is not one.
fn position_attribute(name: &str) -> Option<&'static [SpecialReg]> {
    use SpecialReg::*;
    Some(match name {
        "thread_position_in_grid" => &[
            ThreadPositionInGridX,
            ThreadPositionInGridY,
            ThreadPositionInGridZ,
        ],
        "thread_position_in_threadgroup" => &[
            ThreadPositionInThreadgroupX,
            ThreadPositionInThreadgroupY,
            ThreadPositionInThreadgroupZ,
        ],
        "threadgroup_position_in_grid" => &[
            ThreadgroupPositionInGridX,
            ThreadgroupPositionInGridY,
            ThreadgroupPositionInGridZ,
        ],
        "threads_per_grid" | "grid_size" | "grid_origin" => {
            &[ThreadsPerGridX, ThreadsPerGridY, ThreadsPerGridZ]
        }
        "threads_per_threadgroup" => &[
            ThreadsPerThreadgroupX,
            ThreadsPerThreadgroupY,
            ThreadsPerThreadgroupZ,
        ],
        "dispatch_threads_per_threadgroup" => &[
            DispatchThreadsPerThreadgroupX,
            DispatchThreadsPerThreadgroupY,
            DispatchThreadsPerThreadgroupZ,
        ],
        "threadgroups_per_grid" => &[
            ThreadgroupsPerGridX,
            ThreadgroupsPerGridY,
            ThreadgroupsPerGridZ,
        ],
        "thread_index_in_threadgroup" => &[ThreadIndexInThreadgroup],
        "thread_execution_width" => &[ThreadExecutionWidth],
        "threads_per_simdgroup" => &[ThreadsPerSimdgroup],
        "thread_index_in_simdgroup" => &[ThreadIndexInSimdgroup],
        "simdgroup_index_in_threadgroup" => &[SimdgroupIndexInThreadgroup],
        "simdgroups_per_threadgroup" => &[SimdgroupsPerThreadgroup],
        "dispatch_simdgroups_per_threadgroup" => &[DispatchSimdgroupsPerThreadgroup],
        "thread_index_in_quadgroup" => &[ThreadIndexInQuadgroup],
        "quadgroup_index_in_threadgroup" => &[QuadgroupIndexInThreadgroup],
        "quadgroups_per_threadgroup" => &[QuadgroupsPerThreadgroup],
        "dispatch_quadgroups_per_threadgroup" => &[DispatchQuadgroupsPerThreadgroup],
        _ => return None,
    })
}

/// The integer argument of a binding attribute (`buffer(3)`).
fn binding_index(g: &mut Globals, a: &ast::Attribute) -> Option<u32> {
    let lookup = |n: &str| match g.values.get(n) {
        Some(crate::lower::GlobalValue::Const(c)) => Some(*c),
        _ => None,
    };
    let v = match a.args.as_slice() {
        [e] => consteval::eval(e, &lookup),
        _ => None,
    };
    match v {
        Some(c) if !c.ty.is_float() && (0..=30).contains(&c.as_i128()) => Some(c.as_i128() as u32),
        _ => {
            let n = &a.name.name;
            g.error(format!("`[[{n}(n)]]` needs an index from 0 to 30"), a.span);
            None
        }
    }
}

/// Lowers one kernel to an ISA function; `None` after reporting errors.
pub fn lower_kernel(g: &mut Globals<'_>, def: &ast::FunctionDef) -> Option<Function> {
    let host_name = def
        .attrs
        .iter()
        .find(|a| a.name.name == "host_name")
        .and_then(|a| match a.args.as_slice() {
            [
                ast::Expr {
                    kind: ExprKind::StringLit(s),
                    ..
                },
            ] => Some(s.clone()),
            _ => None,
        })
        .unwrap_or_else(|| def.name.name.clone());
    let errors_before = g.diags.iter().filter(|d| d.is_error()).count();
    let body = def.body.as_ref()?;
    let mut addr_taken = HashSet::new();
    addr_taken_names(&body.stmts, &mut addr_taken);
    let helper_bodies: Vec<_> = g
        .functions
        .values()
        .flatten()
        .filter_map(|f| f.body.as_ref())
        .collect();
    for b in helper_bodies {
        addr_taken_names(&b.stmts, &mut addr_taken);
    }
    let mut l = FnLowerer {
        g,
        s: SsaBuilder::new(&host_name),
        scopes: vec![HashMap::new()],
        loops: Vec::new(),
        inlines: Vec::new(),
        locals: Vec::new(),
        tg_allocs: Vec::new(),
        addr_taken,
    };
    match l.resolve_type(&def.ret) {
        Some(d) if d.ty == Ty::Void && !d.is_ref => {}
        Some(_) => l.error("a kernel must return `void`", def.ret.span),
        None => {}
    }
    l.at(def.name.span);
    let mut params = Vec::new();
    for p in &def.params {
        if let Some(kp) = l.kernel_param(p) {
            if params
                .iter()
                .any(|q: &KernelParam| q.kind == kp.kind && q.index == kp.index)
            {
                l.error(
                    format!(
                        "another parameter is already bound to {}({})",
                        kp.kind.name(),
                        kp.index
                    ),
                    p.span,
                );
            } else {
                params.push(kp);
            }
        }
    }
    // bb0 holds the parameter setup (and the values of never-written variables); the body
    // starts in its own block.
    let start = l.s.create_block();
    l.s.br(start);
    l.s.seal(start);
    l.s.switch_to(start);
    l.block(&body.stmts);
    l.at(body.span);
    l.s.set_loc(metalsim_isa::SrcLoc {
        line: l
            .g
            .loc(Span {
                start: body.span.end.saturating_sub(1),
                ..body.span
            })
            .line,
        ..l.g.loc(body.span)
    });
    l.s.ret();
    let FnLowerer {
        g,
        s,
        locals,
        tg_allocs,
        ..
    } = l;
    let mut f = s.finish();
    metalsim_isa::eliminate_dead_code(&mut f);
    f.params = params;
    f.locals = locals;
    f.threadgroup_allocs = tg_allocs;
    let errors_after = g.diags.iter().filter(|d| d.is_error()).count();
    if errors_after > errors_before {
        return None;
    }
    if let Err(e) = verify_function(&f, g.data.len()) {
        g.error(
            format!(
                "internal compiler error (a bug in metalsim): the lowered kernel is invalid: {e}"
            ),
            def.name.span,
        );
        return None;
    }
    Some(f)
}

impl FnLowerer<'_, '_> {
    /// Checks one kernel parameter, binds its name, and returns its host binding if it has one.
    fn kernel_param(&mut self, p: &ast::Param) -> Option<KernelParam> {
        let d = self.resolve_type(&p.ty)?;
        let name = p.name.as_ref().map(|n| n.name.clone()).unwrap_or_default();
        let known: Vec<&ast::Attribute> = p
            .attrs
            .iter()
            .filter(|a| {
                matches!(a.name.name.as_str(), "buffer" | "threadgroup")
                    || position_attribute(&a.name.name).is_some()
            })
            .collect();
        let Some(attr) = known.first().copied() else {
            if let Some(a) = p.attrs.first() {
                self.error(
                    format!(
                        "`[[{}]]` is not supported on kernel parameters yet",
                        a.name.name
                    ),
                    a.span,
                );
            } else {
                self.error(
                    format!("kernel parameter `{name}` needs an attribute: [[buffer(n)]], [[threadgroup(n)]] or a thread-position attribute such as [[thread_position_in_grid]]"),
                    p.span,
                );
            }
            return None;
        };
        let aname = attr.name.name.as_str();
        if let Some(regs) = position_attribute(aname) {
            self.position_param(p, &d, &name, regs, aname);
            return None;
        }
        let index = binding_index(self.g, attr)?;
        let kind = if aname == "buffer" {
            ParamKind::Buffer
        } else {
            ParamKind::Threadgroup
        };
        // The pointee or referent.
        let (elem, space, is_const, is_ref) = match &d.ty {
            Ty::Pointer(pt) if !d.is_ref => (pt.pointee.clone(), pt.space, pt.is_const, false),
            t if d.is_ref => (
                t.clone(),
                d.space.unwrap_or(Space::Thread),
                d.is_const,
                true,
            ),
            _ => {
                self.error(
                    format!(
                        "`[[{aname}({index})]]` parameter `{name}` must be a pointer or a reference"
                    ),
                    p.span,
                );
                return None;
            }
        };
        let allowed = if kind == ParamKind::Buffer {
            matches!(space, Space::Device | Space::Constant)
        } else {
            space == Space::Threadgroup
        };
        if !allowed {
            let want = if kind == ParamKind::Buffer {
                "`device` or `constant`"
            } else {
                "`threadgroup`"
            };
            self.error(
                format!("`[[{aname}({index})]]` parameter `{name}` must point into {want} memory"),
                p.span,
            );
            return None;
        }
        if matches!(elem, Ty::Void | Ty::Pointer(_)) {
            let t = self.show(&elem);
            self.error(format!("a kernel buffer of `{t}` is not supported"), p.span);
            return None;
        }
        let (type_name, atomic, is_struct) = match &elem {
            Ty::Atomic(s) => (format!("atomic_{}", s.name()), true, false),
            Ty::Struct(_) => (self.show(&elem), false, true),
            Ty::Array(..) => (self.show(&elem), false, true),
            other => (self.show(other), false, false),
        };
        let kp = KernelParam {
            kind,
            index,
            name: name.clone(),
            space,
            type_name,
            elem_size: self.g.structs.size(&elem).max(1),
            elem_align: self.g.structs.align(&elem),
            readonly: is_const || space == Space::Constant,
            is_ref,
            atomic,
            is_struct,
        };
        let op = if kind == ParamKind::Buffer {
            Op::BufferAddr(index)
        } else {
            Op::ThreadgroupParamAddr(index)
        };
        let addr = self.s.val(op, Type::U64, &[]);
        if name.is_empty() {
            return Some(kp);
        }
        if is_ref {
            let place = Place::Mem {
                ty: elem.clone(),
                addr,
                offset: 0,
                space,
                is_const: kp.readonly,
            };
            // A small `constant` reference is loaded once, as Apple's compiler keeps such
            // arguments in uniform registers.
            let small = self.g.structs.leaf_count(&elem) <= 16;
            if space == Space::Constant && small && !kp.atomic {
                let span = p.span;
                if let Some(value) = self.load(&place, span) {
                    self.bind(&name, Binding::Cached { place, value });
                    return Some(kp);
                }
            }
            self.bind(&name, Binding::Place(place));
        } else {
            let v = Val {
                ty: d.ty.clone(),
                parts: vec![addr],
            };
            self.bind_value(&name, v, d.is_const);
        }
        Some(kp)
    }

    /// Binds a name to a fresh variable holding `v` (in memory if its address is taken).
    fn bind_value(&mut self, name: &str, v: Val, is_const: bool) {
        if self.addr_taken.contains(name) {
            let size = self.g.structs.size(&v.ty);
            let align = self.g.structs.align(&v.ty);
            let id = self.locals.len() as u32;
            self.locals.push(metalsim_isa::Alloc {
                size,
                align,
                name: name.to_string(),
            });
            let addr = self.s.val(Op::LocalAddr(id), Type::U64, &[]);
            let place = Place::Mem {
                ty: v.ty.clone(),
                addr,
                offset: 0,
                space: Space::Thread,
                is_const: false,
            };
            let span = Span::default();
            self.store(&place, &v, span);
            if let Place::Mem {
                ty,
                addr,
                offset,
                space,
                ..
            } = place
            {
                self.bind(
                    name,
                    Binding::Place(Place::Mem {
                        ty,
                        addr,
                        offset,
                        space,
                        is_const,
                    }),
                );
            }
            return;
        }
        let slots = self.new_slots(&v.ty);
        for (s, p) in slots.iter().zip(&v.parts) {
            self.s.write(*s, *p);
        }
        self.bind(
            name,
            Binding::Place(Place::Var {
                ty: v.ty,
                slots,
                is_const,
            }),
        );
    }

    /// A thread-position parameter: checks its type and binds it to special registers.
    fn position_param(
        &mut self,
        p: &ast::Param,
        d: &crate::lower::DeclType,
        name: &str,
        regs: &[SpecialReg],
        aname: &str,
    ) {
        let (elem, len) = match &d.ty {
            Ty::Scalar(s) => (*s, 1u8),
            Ty::Vector { elem, len, .. } => (*elem, *len),
            _ => (Scalar::Bool, 0),
        };
        let ok_elem = matches!(elem, Scalar::UInt | Scalar::UShort);
        let ok_len = if regs.len() == 3 {
            (1..=3).contains(&len)
        } else {
            len == 1
        };
        if d.is_ref || !ok_elem || !ok_len {
            let t = self.show(&d.ty);
            let want = if regs.len() == 3 {
                "uint, uint2, uint3, ushort, ushort2 or ushort3"
            } else {
                "uint or ushort"
            };
            self.error(
                format!("`[[{aname}]]` must be declared as {want}, not `{t}`"),
                p.ty.span,
            );
            return;
        }
        if name.is_empty() {
            return;
        }
        let parts = regs[..len as usize]
            .iter()
            .map(|r| {
                // A compute dispatch's grid starts at the origin.
                let v = if aname == "grid_origin" {
                    self.const_u32(0)
                } else {
                    self.s.val(Op::Sreg(*r), Type::U32, &[])
                };
                self.scalar_cvt(v, Scalar::UInt, elem)
            })
            .collect();
        let v = Val {
            ty: Ty::vector(elem, len),
            parts,
        };
        self.bind_value(name, v, d.is_const);
    }
}
