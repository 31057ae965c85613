//! Value ranges of integers: for each value, an interval its value (sign-extended for
//! signed types) always lies in. The passes use it to prove that an addition or a
//! multiplication cannot wrap, so `ptr + (x + 4)` may become `(ptr + x) + 4`.
//!
//! Special registers take their ranges from the shape of a dispatch: a threadgroup has at
//! most [`MAX_THREADS_PER_THREADGROUP`] threads and a SIMD-group 32 lanes.

use crate::cfg::Cfg;
use crate::entity::Value;
use crate::function::Function;
use crate::op::{Op, SpecialReg};
use crate::passes::eval::extend;
use crate::types::Type;

/// The most threads a threadgroup can have: Metal's limit on every Apple GPU
/// (`maxTotalThreadsPerThreadgroup`). The passes rely on it for the ranges of the
/// threadgroup-relative special registers; the simulator must refuse larger threadgroups.
pub const MAX_THREADS_PER_THREADGROUP: u32 = 1024;

/// Lanes of a SIMD-group: the value of `threads_per_simdgroup` and
/// `thread_execution_width`.
pub const SIMD_WIDTH: u32 = 32;

/// A closed interval of integers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Range {
    /// Smallest value.
    pub lo: i128,
    /// Largest value.
    pub hi: i128,
}

impl Range {
    /// Every value of a type (predicates 0 and 1, floats nothing useful).
    pub fn of_type(ty: Type) -> Range {
        match ty {
            Type::Pred => Range { lo: 0, hi: 1 },
            t if t.is_signed() => Range {
                lo: -(1i128 << (t.bits() - 1)),
                hi: (1i128 << (t.bits() - 1)) - 1,
            },
            t if t.is_int() => Range {
                lo: 0,
                hi: (1i128 << t.bits()) - 1,
            },
            _ => Range {
                lo: i128::MIN / 4,
                hi: i128::MAX / 4,
            },
        }
    }

    /// One value.
    pub fn exactly(v: i128) -> Range {
        Range { lo: v, hi: v }
    }

    fn new(lo: i128, hi: i128) -> Range {
        Range { lo, hi }
    }

    /// Whether every value of the interval is a value of `ty`.
    pub fn fits(self, ty: Type) -> bool {
        let t = Range::of_type(ty);
        self.lo >= t.lo && self.hi <= t.hi
    }

    /// The interval if it fits `ty`, else every value of `ty` (the operation may wrap).
    fn or_type(self, ty: Type) -> Range {
        if self.fits(ty) {
            self
        } else {
            Range::of_type(ty)
        }
    }

    fn union(self, o: Range) -> Range {
        Range::new(self.lo.min(o.lo), self.hi.max(o.hi))
    }

    /// Whether the values are all non-negative.
    pub fn non_negative(self) -> bool {
        self.lo >= 0
    }
}

/// The range of every value of a function.
pub(crate) struct Ranges {
    ranges: Vec<Range>,
}

impl Ranges {
    /// Computes the ranges, visiting blocks in reverse postorder. A block parameter gets
    /// the union of what its incoming edges pass, or its type's range when an edge comes
    /// back from a block it dominates (a loop) or from an unreachable block.
    pub fn new(f: &Function, cfg: &Cfg) -> Ranges {
        let mut r: Vec<Range> = f.value_types.iter().map(|&t| Range::of_type(t)).collect();
        let mut incoming: Vec<Vec<(usize, Option<Value>)>> = vec![Vec::new(); f.blocks.len()];
        for b in f.block_ids() {
            for (t, args) in f.block(b).term.targets() {
                let from_loop = !cfg.is_reachable(b) || cfg.dominates(t, b);
                for (n, &a) in args.iter().enumerate() {
                    incoming[t.index()].push((n, (!from_loop).then_some(a)));
                }
            }
        }
        for &b in cfg.reverse_postorder() {
            let data = f.block(b);
            for (n, &p) in data.params.iter().enumerate() {
                let mut acc: Option<Range> = None;
                let mut full = false;
                for &(m, a) in &incoming[b.index()] {
                    if m != n {
                        continue;
                    }
                    match a {
                        Some(a) => acc = Some(acc.map_or(r[a.index()], |x| x.union(r[a.index()]))),
                        None => full = true,
                    }
                }
                if !full && let Some(acc) = acc {
                    r[p.index()] = acc.or_type(f.value_type(p));
                }
            }
            for &i in &data.insts {
                let inst = f.inst(i);
                let Some(res) = inst.result() else { continue };
                let ty = f.value_type(res);
                if !(ty.is_int() || ty == Type::Pred) {
                    continue;
                }
                let arg = |k: usize| r[inst.args[k].index()];
                r[res.index()] = transfer(inst.op, ty, &arg).or_type(ty);
            }
        }
        Ranges { ranges: r }
    }

    /// The range of a value.
    pub fn get(&self, v: Value) -> Range {
        self.ranges[v.index()]
    }
}

/// The range of an operation's result from its operands' ranges (before checking that it
/// fits the type).
fn transfer(op: Op, ty: Type, arg: &dyn Fn(usize) -> Range) -> Range {
    let full = Range::of_type(ty);
    let exact = |k: usize| {
        let a = arg(k);
        (a.lo == a.hi).then_some(a.lo)
    };
    match op {
        Op::Const(bits) => Range::exactly(extend(bits, ty)),
        Op::Sreg(s) => sreg_range(s),
        Op::Add => {
            let (a, b) = (arg(0), arg(1));
            Range::new(a.lo + b.lo, a.hi + b.hi)
        }
        Op::Sub => {
            let (a, b) = (arg(0), arg(1));
            Range::new(a.lo - b.hi, a.hi - b.lo)
        }
        Op::Mul => mul(arg(0), arg(1)),
        Op::Fma => {
            let p = mul(arg(0), arg(1));
            let c = arg(2);
            Range::new(p.lo + c.lo, p.hi + c.hi)
        }
        Op::Shl => match exact(1) {
            Some(k) if (0..ty.bits() as i128).contains(&k) => mul(arg(0), Range::exactly(1 << k)),
            _ => full,
        },
        Op::Shr => match exact(1) {
            Some(k) if (0..ty.bits() as i128).contains(&k) => {
                let a = arg(0);
                Range::new(a.lo >> k, a.hi >> k)
            }
            _ => full,
        },
        Op::Div => match exact(1) {
            Some(d) if d > 0 => {
                let a = arg(0);
                Range::new(a.lo / d, a.hi / d)
            }
            _ => full,
        },
        Op::Rem => match exact(1) {
            Some(d) if d > 0 && arg(0).non_negative() => Range::new(0, (d - 1).min(arg(0).hi)),
            _ => full,
        },
        Op::And => {
            let (a, b) = (arg(0), arg(1));
            match (a.non_negative(), b.non_negative()) {
                (true, true) => Range::new(0, a.hi.min(b.hi)),
                (true, false) => Range::new(0, a.hi),
                (false, true) => Range::new(0, b.hi),
                _ => full,
            }
        }
        Op::Min => {
            let (a, b) = (arg(0), arg(1));
            Range::new(a.lo.min(b.lo), a.hi.min(b.hi))
        }
        Op::Max => {
            let (a, b) = (arg(0), arg(1));
            Range::new(a.lo.max(b.lo), a.hi.max(b.hi))
        }
        Op::Select => arg(1).union(arg(2)),
        Op::Cvt { from, sat } if from.is_int() || from == Type::Pred => {
            let a = arg(0);
            if sat {
                let t = Range::of_type(ty);
                Range::new(a.lo.clamp(t.lo, t.hi), a.hi.clamp(t.lo, t.hi))
            } else {
                a
            }
        }
        Op::Bitcast { from } if from.is_int() => arg(0),
        Op::Clz | Op::Ctz | Op::Popcount => Range::new(0, ty.bits() as i128),
        Op::Cmp(_) => Range::new(0, 1),
        _ => full,
    }
}

fn mul(a: Range, b: Range) -> Range {
    let c = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi];
    Range::new(
        c.iter().copied().min().unwrap_or(0),
        c.iter().copied().max().unwrap_or(0),
    )
}

/// The values a special register can hold.
fn sreg_range(s: SpecialReg) -> Range {
    use SpecialReg as S;
    let tg = MAX_THREADS_PER_THREADGROUP as i128;
    let simd = SIMD_WIDTH as i128;
    let u32_max = u32::MAX as i128;
    match s {
        S::ThreadPositionInThreadgroupX
        | S::ThreadPositionInThreadgroupY
        | S::ThreadPositionInThreadgroupZ
        | S::ThreadIndexInThreadgroup => Range::new(0, tg - 1),
        S::ThreadsPerThreadgroupX
        | S::ThreadsPerThreadgroupY
        | S::ThreadsPerThreadgroupZ
        | S::DispatchThreadsPerThreadgroupX
        | S::DispatchThreadsPerThreadgroupY
        | S::DispatchThreadsPerThreadgroupZ => Range::new(1, tg),
        S::ThreadExecutionWidth | S::ThreadsPerSimdgroup => Range::exactly(simd),
        S::ThreadIndexInSimdgroup => Range::new(0, simd - 1),
        S::SimdgroupIndexInThreadgroup => Range::new(0, tg / simd - 1),
        S::SimdgroupsPerThreadgroup | S::DispatchSimdgroupsPerThreadgroup => {
            Range::new(1, tg / simd)
        }
        S::ThreadIndexInQuadgroup => Range::new(0, 3),
        S::QuadgroupIndexInThreadgroup => Range::new(0, tg / 4 - 1),
        S::QuadgroupsPerThreadgroup | S::DispatchQuadgroupsPerThreadgroup => Range::new(1, tg / 4),
        S::ThreadsPerGridX
        | S::ThreadsPerGridY
        | S::ThreadsPerGridZ
        | S::ThreadgroupsPerGridX
        | S::ThreadgroupsPerGridY
        | S::ThreadgroupsPerGridZ => Range::new(1, u32_max),
        S::ThreadPositionInGridX
        | S::ThreadPositionInGridY
        | S::ThreadPositionInGridZ
        | S::ThreadgroupPositionInGridX
        | S::ThreadgroupPositionInGridY
        | S::ThreadgroupPositionInGridZ => Range::new(0, u32_max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_module;

    fn check(body: &str, value: u32, lo: i128, hi: i128) {
        let m = parse_module(&format!("kernel k {{\n{body}}}\n")).unwrap();
        let f = &m.functions[0];
        let r = Ranges::new(f, &Cfg::new(f)).get(Value(value));
        assert_eq!((r.lo, r.hi), (lo, hi), "v{value}");
    }

    #[test]
    fn thread_positions_scale_without_wrapping() {
        let body = "bb0:\n v0 = sreg.thread_position_in_threadgroup.y\n v1 = const.u32 16\n v2 = mul.u32 v0, v1\n v3 = const.u32 15\n v4 = add.u32 v2, v3\n ret\n";
        check(body, 2, 0, 16 * 1023);
        check(body, 4, 15, 16 * 1023 + 15);
    }

    #[test]
    fn wrapping_operations_give_the_whole_type() {
        let body = "bb0:\n v0 = sreg.thread_position_in_grid.x\n v1 = const.u32 16\n v2 = mul.u32 v0, v1\n v3 = and.u32 v0, v1\n ret\n";
        check(body, 2, 0, u32::MAX as i128);
        check(body, 3, 0, 16);
    }

    #[test]
    fn loop_parameters_are_not_narrowed() {
        let body = "bb0:\n v0 = const.i32 0\n br bb1(v0)\nbb1(v1:i32):\n v2 = const.i32 1\n v3 = add.i32 v1, v2\n br bb1(v3)\n";
        check(body, 1, i32::MIN as i128, i32::MAX as i128);
    }
}
