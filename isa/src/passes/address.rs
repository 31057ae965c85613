//! Address arithmetic: constant parts of `ptradd` chains are gathered into one constant
//! byte offset applied last, so the variable part is computed once and shared.
//!
//! - `ptradd.s p, c` (constant index) becomes `ptradd.1 p, off` with `off = c * s` as an
//!   `i64` constant, and a constant-offset `ptradd` of a constant-offset `ptradd` becomes
//!   one.
//! - `ptradd.s (ptradd.1 q, off), x` becomes `ptradd.1 (ptradd.s q, x), off`.
//! - `ptradd.s p, (x + c)` becomes `ptradd.1 (ptradd.s p, x), c * s` when `x + c` cannot
//!   wrap in the index's type (by [`Ranges`]), since the index is extended to 64 bits
//!   after the addition; likewise `x - c`. Done when the addition has no other use, or
//!   when `ptradd.s p, x` is computed anyway.
//! - `ptradd.s p, (x * c)` (or `x << k`) becomes `ptradd.(s*c) p, x` when the product
//!   cannot wrap.
//!
//! `ptradd` arithmetic is modulo 2^64, so moving constant offsets is always exact.

use std::collections::HashSet;

use crate::cfg::Cfg;
use crate::entity::{Inst, Value};
use crate::function::Function;
use crate::op::Op;
use crate::passes::edit::{
    Def, Substitution, constants, def_sites, new_const, new_inst, use_counts,
};
use crate::passes::eval::extend;
use crate::passes::ranges::{Range, Ranges};
use crate::types::Type;

/// Folds constant offsets of address arithmetic as the module documentation describes.
/// Returns the number of `ptradd` instructions rewritten.
pub fn fold_addresses(f: &mut Function) -> usize {
    let mut total = 0;
    for _ in 0..8 {
        let n = fold_round(f);
        if n == 0 {
            break;
        }
        total += n;
    }
    total
}

/// What a `ptradd` becomes.
enum Rewrite {
    /// Its base pointer (a zero offset).
    Base(Value),
    /// `ptradd.1 base, offset`.
    Offset(Value, i64),
    /// `ptradd.1 (ptradd.scale base, index), offset`.
    Split {
        base: Value,
        index: Value,
        scale: u32,
        offset: i64,
    },
    /// `ptradd.scale base, index`.
    Scaled(Value, Value, u32),
}

struct Facts<'a> {
    f: &'a Function,
    defs: Vec<Def>,
    consts: Vec<Option<u64>>,
    ranges: Ranges,
    uses: Vec<u32>,
    /// `(base, index, scale)` of every `ptradd` with a variable index.
    existing: HashSet<(Value, Value, u32)>,
}

impl Facts<'_> {
    fn def(&self, v: Value) -> Option<&crate::function::InstData> {
        match self.defs[v.index()] {
            Def::Inst(_, i) => Some(self.f.inst(i)),
            _ => None,
        }
    }

    /// The value of a constant integer operand, extended by its type.
    fn constant(&self, v: Value) -> Option<i128> {
        self.consts[v.index()].map(|bits| extend(bits, self.f.value_type(v)))
    }

    /// `p` as `(base, constant byte offset)` when it is a `ptradd` with a constant index.
    fn const_offset(&self, p: Value) -> Option<(Value, i64)> {
        let d = self.def(p)?;
        let Op::PtrAdd { scale } = d.op else {
            return None;
        };
        let c = self.constant(d.args[1])?;
        Some((d.args[0], (c as u64).wrapping_mul(scale as u64) as i64))
    }

    fn rewrite(&self, inst: &crate::function::InstData, scale: u32) -> Option<Rewrite> {
        let (p, x) = (inst.args[0], inst.args[1]);
        let xty = self.f.value_type(x);
        let inner = self.const_offset(p);
        if let Some(c) = self.constant(x) {
            let off = (c as u64).wrapping_mul(scale as u64) as i64;
            let (base, off) = match inner {
                Some((q, d)) => (q, off.wrapping_add(d)),
                None => (p, off),
            };
            if off == 0 {
                return Some(Rewrite::Base(base));
            }
            let canonical = scale == 1 && xty == Type::I64 && inner.is_none();
            return (!canonical).then_some(Rewrite::Offset(base, off));
        }
        let (base, carried) = inner.unwrap_or((p, 0));
        if let Some((y, c)) = self.split_add(x, xty, base, scale) {
            let off = (c as u64).wrapping_mul(scale as u64) as i64;
            return Some(Rewrite::Split {
                base,
                index: y,
                scale,
                offset: off.wrapping_add(carried),
            });
        }
        if inner.is_none()
            && let Some((y, k)) = self.scaled(x, xty)
            && let Some(s) = scale.checked_mul(k)
        {
            return Some(Rewrite::Scaled(p, y, s));
        }
        inner.map(|(q, d)| Rewrite::Split {
            base: q,
            index: x,
            scale,
            offset: d,
        })
    }

    /// `x = y + c` (or `y - c`) that cannot wrap, worth splitting: `(y, c)`.
    fn split_add(&self, x: Value, xty: Type, base: Value, scale: u32) -> Option<(Value, i128)> {
        let d = self.def(x)?;
        let (y, c) = match d.op {
            Op::Add => match (self.constant(d.args[0]), self.constant(d.args[1])) {
                (None, Some(c)) => (d.args[0], c),
                (Some(c), None) => (d.args[1], c),
                _ => return None,
            },
            Op::Sub => (d.args[0], -self.constant(d.args[1])?),
            _ => return None,
        };
        let r = self.ranges.get(y);
        let sum = Range {
            lo: r.lo + c,
            hi: r.hi + c,
        };
        let worth = self.uses[x.index()] == 1 || self.existing.contains(&(base, y, scale));
        (sum.fits(xty) && worth).then_some((y, c))
    }

    /// `x = y * c` or `y << k` that cannot wrap: `(y, multiplier)`.
    fn scaled(&self, x: Value, xty: Type) -> Option<(Value, u32)> {
        let d = self.def(x)?;
        let (y, m) = match d.op {
            Op::Mul => match (self.constant(d.args[0]), self.constant(d.args[1])) {
                (None, Some(c)) => (d.args[0], c),
                (Some(c), None) => (d.args[1], c),
                _ => return None,
            },
            Op::Shl => {
                let k = self.constant(d.args[1])?;
                if !(0..31).contains(&k) {
                    return None;
                }
                (d.args[0], 1i128 << k)
            }
            _ => return None,
        };
        if !(1..=u32::MAX as i128).contains(&m) {
            return None;
        }
        let r = self.ranges.get(y);
        let product = Range {
            lo: r.lo * m,
            hi: r.hi * m,
        };
        product.fits(xty).then_some((y, m as u32))
    }
}

fn fold_round(f: &mut Function) -> usize {
    let cfg = Cfg::new(f);
    let facts = Facts {
        defs: def_sites(f),
        consts: constants(f),
        ranges: Ranges::new(f, &cfg),
        uses: use_counts(f),
        existing: existing_ptradds(f),
        f,
    };
    let mut plan: Vec<(Inst, Rewrite)> = Vec::new();
    for data in &f.blocks {
        for &i in &data.insts {
            let inst = f.inst(i);
            if let Op::PtrAdd { scale } = inst.op
                && let Some(rw) = facts.rewrite(inst, scale)
            {
                plan.push((i, rw));
            }
        }
    }
    drop(facts);
    if plan.is_empty() {
        return 0;
    }
    let mut subst = Substitution::new(f);
    let mut before: Vec<Vec<Inst>> = vec![Vec::new(); f.insts.len()];
    let mut dropped = vec![false; f.insts.len()];
    let n = plan.len();
    for (i, rw) in plan {
        let loc = f.inst_locs[i.index()];
        let r = f.insts[i.index()].results[0];
        match rw {
            Rewrite::Base(p) => {
                subst.set(r, p);
                dropped[i.index()] = true;
            }
            Rewrite::Offset(base, off) => {
                let (ci, cv) = new_const(f, Type::I64, off as u64, loc);
                before[i.index()].push(ci);
                set_ptradd(f, i, base, cv, 1);
            }
            Rewrite::Split {
                base,
                index,
                scale,
                offset,
            } => {
                let j = new_inst(f, Op::PtrAdd { scale }, Type::U64, vec![base, index], loc);
                let jv = f.insts[j.index()].results[0];
                before[i.index()].push(j);
                if offset == 0 {
                    subst.set(r, jv);
                    dropped[i.index()] = true;
                } else {
                    let (ci, cv) = new_const(f, Type::I64, offset as u64, loc);
                    before[i.index()].push(ci);
                    set_ptradd(f, i, jv, cv, 1);
                }
            }
            Rewrite::Scaled(base, index, scale) => set_ptradd(f, i, base, index, scale),
        }
    }
    for data in &mut f.blocks {
        let old = std::mem::take(&mut data.insts);
        for i in old {
            data.insts
                .extend(before.get(i.index()).into_iter().flatten().copied());
            if !dropped.get(i.index()).copied().unwrap_or(false) {
                data.insts.push(i);
            }
        }
    }
    subst.apply(f);
    n
}

fn set_ptradd(f: &mut Function, i: Inst, base: Value, index: Value, scale: u32) {
    let d = &mut f.insts[i.index()];
    d.op = Op::PtrAdd { scale };
    d.args = vec![base, index];
}

fn existing_ptradds(f: &Function) -> HashSet<(Value, Value, u32)> {
    let mut set = HashSet::new();
    for data in &f.blocks {
        for &i in &data.insts {
            let inst = f.inst(i);
            if let Op::PtrAdd { scale } = inst.op {
                set.insert((inst.args[0], inst.args[1], scale));
            }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::{dce::eliminate_dead_code, gvn::eliminate_common_subexpressions};
    use crate::{parse_module, verify_function};

    fn check(body: &str, expect: &str) {
        let text = format!(
            "kernel k {{\n  param buffer(0) a device type \"float\" size 4 align 4\n{body}}}\n"
        );
        let mut m = parse_module(&text).unwrap();
        let f = &mut m.functions[0];
        fold_addresses(f);
        eliminate_common_subexpressions(f);
        eliminate_dead_code(f);
        verify_function(f, 0).unwrap();
        let got = crate::passes::body_text(f);
        assert_eq!(got, expect);
    }

    #[test]
    fn offsets_of_a_shared_base_become_constants() {
        check(
            "bb0:\n v0 = buffer_addr.0\n v1 = sreg.thread_position_in_threadgroup.y\n v2 = const.u32 16\n v3 = mul.u32 v1, v2\n v4 = const.u32 1\n v5 = add.u32 v3, v4\n v6 = ptradd.4 v0, v5\n v7 = ld.device.f32 v6\n v8 = const.u32 2\n v9 = add.u32 v3, v8\n v10 = ptradd.4 v0, v9\n v11 = ld.device.f32 v10\n ret\n",
            "bb0:\nv13 = const.i64 4\nv15 = const.i64 8\nv0 = buffer_addr.0\nv1 = sreg.thread_position_in_threadgroup.y\nv12 = ptradd.64 v0, v1\nv6 = ptradd.1 v12, v13\nv7 = ld.device.f32 v6\nv10 = ptradd.1 v12, v15\nv11 = ld.device.f32 v10\nret\n",
        );
    }

    #[test]
    fn wrapping_indices_are_not_split() {
        check(
            "bb0:\n v0 = buffer_addr.0\n v1 = sreg.thread_position_in_grid.x\n v4 = const.u32 1\n v5 = add.u32 v1, v4\n v6 = ptradd.4 v0, v5\n v7 = ld.device.f32 v6\n ret\n",
            "bb0:\nv4 = const.u32 1\nv0 = buffer_addr.0\nv1 = sreg.thread_position_in_grid.x\nv5 = add.u32 v1, v4\nv6 = ptradd.4 v0, v5\nv7 = ld.device.f32 v6\nret\n",
        );
    }
}
