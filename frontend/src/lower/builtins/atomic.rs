//! Synchronization (6.10: barriers and fences) and atomic functions (6.13).

use metalsim_isa::{AtomicOp, BarrierScope, CmpCond, MemFlags, Op, Space};

use crate::lower::types::{Scalar, Ty};
use crate::lower::{FnLowerer, Place, Val};
use crate::source::Span;

/// The atomic operation of an `atomic_*` function and how many values it takes.
pub fn op_of(name: &str) -> Option<(AtomicOp, usize)> {
    let base = name.strip_prefix("atomic_")?;
    let base = base.strip_suffix("_explicit").unwrap_or(base);
    Some(match base {
        "load" => (AtomicOp::Load, 0),
        "store" => (AtomicOp::Store, 1),
        "exchange" => (AtomicOp::Exchange, 1),
        "fetch_add" => (AtomicOp::Add, 1),
        "fetch_sub" => (AtomicOp::Sub, 1),
        "fetch_min" => (AtomicOp::Min, 1),
        "fetch_max" => (AtomicOp::Max, 1),
        "fetch_and" => (AtomicOp::And, 1),
        "fetch_or" => (AtomicOp::Or, 1),
        "fetch_xor" => (AtomicOp::Xor, 1),
        "compare_exchange_weak" | "compare_exchange_strong" => (AtomicOp::CmpXchg, 2),
        _ => return None,
    })
}

impl FnLowerer<'_, '_> {
    /// Barriers and fences; `None` when `name` is none of them.
    pub fn sync(&mut self, name: &str, vals: &[Val], span: Span) -> Option<Option<Val>> {
        match name {
            "threadgroup_barrier" | "simdgroup_barrier" => {}
            "atomic_thread_fence" => {
                // Each simulated thread's accesses are performed in program order and a
                // quantum's writes become visible together, so a fence orders nothing
                // further; its arguments are still checked.
                let constant = vals.iter().all(|v| {
                    v.parts
                        .first()
                        .is_some_and(|p| self.s.const_bits(*p).is_some())
                });
                if !constant {
                    self.error(
                        "`atomic_thread_fence` takes `mem_flags`, `memory_order` and `thread_scope` constants",
                        span,
                    );
                    return Some(None);
                }
                return Some(Some(Val::void()));
            }
            _ => return None,
        }
        let scope = if name == "threadgroup_barrier" {
            BarrierScope::Threadgroup
        } else {
            BarrierScope::Simdgroup
        };
        Some((|| {
            let flags = match vals {
                [] => MemFlags::NONE,
                [f] => match f.parts.first().and_then(|p| self.s.const_bits(*p)) {
                    Some(bits) if bits < 16 => MemFlags(bits as u8),
                    _ => {
                        self.error("barrier flags must be `mem_flags::...` constants", span);
                        return None;
                    }
                },
                _ => {
                    self.error(format!("`{name}` takes one argument"), span);
                    return None;
                }
            };
            self.s
                .ins(Op::Barrier(scope, flags), metalsim_isa::Type::Pred, &[]);
            Some(Val::void())
        })())
    }

    /// `atomic_*_explicit` functions; `None` when `name` is not one.
    pub fn atomic(&mut self, name: &str, vals: &[Val], span: Span) -> Option<Option<Val>> {
        let (op, nvals) = op_of(name)?;
        Some((|| {
            // Object, values, then one memory order (two for compare-exchange).
            let orders = if op == AtomicOp::CmpXchg { 2 } else { 1 };
            if vals.len() < 1 + nvals || vals.len() > 1 + nvals + orders {
                self.error(
                    format!("`{name}` takes {} arguments", 1 + nvals + orders),
                    span,
                );
                return None;
            }
            for o in &vals[1 + nvals..] {
                if o.parts
                    .first()
                    .and_then(|p| self.s.const_bits(*p))
                    .is_none()
                {
                    self.error("a memory order must be a `memory_order_...` constant", span);
                    return None;
                }
            }
            let obj = &vals[0];
            let (scalar, space) = match &obj.ty {
                Ty::Pointer(p) => match (&p.pointee, p.space) {
                    (Ty::Atomic(s), sp @ (Space::Device | Space::Threadgroup)) => (*s, sp),
                    _ => {
                        let t = self.show(&obj.ty);
                        self.error(
                            format!("`{name}` needs a pointer to an atomic in device or threadgroup memory, found `{t}`"),
                            span,
                        );
                        return None;
                    }
                },
                other => {
                    let t = self.show(other);
                    self.error(
                        format!("`{name}` needs a pointer to an atomic object, found `{t}`"),
                        span,
                    );
                    return None;
                }
            };
            if scalar == Scalar::Bool {
                self.error("atomic_bool is not supported yet", span);
                return None;
            }
            if scalar == Scalar::Float
                && matches!(
                    op,
                    AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Min | AtomicOp::Max
                )
            {
                self.error(format!("`{name}` needs an integer atomic"), span);
                return None;
            }
            let t = scalar.isa();
            let addr = obj.parts[0];
            if op == AtomicOp::CmpXchg {
                // bool atomic_compare_exchange_weak_explicit(obj, thread T* expected, T desired, ...)
                let exp_ptr = &vals[1];
                let exp_place = match &exp_ptr.ty {
                    Ty::Pointer(p) if p.pointee == Ty::Scalar(scalar) => Place::Mem {
                        ty: Ty::Scalar(scalar),
                        addr: exp_ptr.parts[0],
                        offset: 0,
                        space: p.space,
                        is_const: p.is_const,
                    },
                    other => {
                        let t = self.show(other);
                        self.error(
                            format!(
                                "the expected value must be a pointer to `{scalar}`, found `{t}`"
                            ),
                            span,
                        );
                        return None;
                    }
                };
                let desired = self.convert(vals[2].clone(), &Ty::Scalar(scalar), false, span)?;
                let expected = self.load(&exp_place, span)?;
                let old = self.s.val(
                    Op::Atomic(op, space),
                    t,
                    &[addr, expected.parts[0], desired.parts[0]],
                );
                let ok = self
                    .s
                    .val(Op::Cmp(CmpCond::Eq), t, &[old, expected.parts[0]]);
                // On failure the expected value becomes the current one; on success it
                // already is.
                self.store(
                    &exp_place,
                    &Val {
                        ty: Ty::Scalar(scalar),
                        parts: vec![old],
                    },
                    span,
                )?;
                return Some(Val {
                    ty: Ty::BOOL,
                    parts: vec![ok],
                });
            }
            let mut ops = vec![addr];
            if nvals == 1 {
                let v = self.convert(vals[1].clone(), &Ty::Scalar(scalar), false, span)?;
                ops.push(v.parts[0]);
            }
            let r = self.s.ins(Op::Atomic(op, space), t, &ops);
            Some(match r {
                Some(v) => Val {
                    ty: Ty::Scalar(scalar),
                    parts: vec![v],
                },
                None => Val::void(),
            })
        })())
    }
}
