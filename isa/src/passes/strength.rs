//! Strength reduction: integer multiplication, division and remainder by a power of two
//! become shifts and masks where that is exact.
//!
//! - `x * 2^k` is `x << k` for every integer type (both wrap the same way).
//! - `x / 2^k` is `x >> k` and `x % 2^k` is `x & (2^k - 1)` for unsigned `x`, and for
//!   signed `x` that [`Ranges`] shows is never negative (for negative `x` division rounds
//!   toward zero, the shift toward negative infinity).

use crate::cfg::Cfg;
use crate::function::Function;
use crate::op::Op;
use crate::passes::edit::{constants, new_const};
use crate::passes::eval::extend;
use crate::passes::ranges::Ranges;

/// Rewrites multiplications, divisions and remainders by powers of two. Returns how many
/// instructions were rewritten.
pub fn reduce_strength(f: &mut Function) -> usize {
    let cfg = Cfg::new(f);
    let ranges = Ranges::new(f, &cfg);
    let consts = constants(f);
    let mut plan = Vec::new();
    for data in &f.blocks {
        for &i in &data.insts {
            let inst = f.inst(i);
            let ty = inst.ty;
            if !ty.is_int() || inst.args.len() != 2 {
                continue;
            }
            let power = |k: usize| {
                let v = inst.args[k];
                let c = extend(consts[v.index()]?, ty);
                (c > 1 && c.count_ones() == 1).then(|| c.trailing_zeros() as u64)
            };
            let x_ok = !ty.is_signed() || ranges.get(inst.args[0]).non_negative();
            let rewrite = match inst.op {
                Op::Mul => match (power(0), power(1)) {
                    (_, Some(k)) => Some((Op::Shl, inst.args[0], k)),
                    (Some(k), _) => Some((Op::Shl, inst.args[1], k)),
                    _ => None,
                },
                Op::Div if x_ok => power(1).map(|k| (Op::Shr, inst.args[0], k)),
                Op::Rem if x_ok => power(1).map(|k| (Op::And, inst.args[0], (1u64 << k) - 1)),
                _ => None,
            };
            if let Some(r) = rewrite {
                plan.push((i, r));
            }
        }
    }
    let n = plan.len();
    for (i, (op, x, c)) in plan {
        let ty = f.insts[i.index()].ty;
        let loc = f.inst_locs[i.index()];
        let (ci, cv) = new_const(f, ty, c, loc);
        f.blocks[0].insts.insert(0, ci);
        let d = &mut f.insts[i.index()];
        d.op = op;
        d.args = vec![x, cv];
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::dce::eliminate_dead_code;
    use crate::{parse_module, verify_function};

    fn check(body: &str, expect: &str) {
        let mut m = parse_module(&format!("kernel k {{\n{body}}}\n")).unwrap();
        let f = &mut m.functions[0];
        reduce_strength(f);
        eliminate_dead_code(f);
        verify_function(f, 0).unwrap();
        let got = crate::passes::body_text(f);
        assert_eq!(got, expect);
    }

    #[test]
    fn unsigned_and_non_negative_signed_reduce() {
        check(
            "bb0:\n v0 = sreg.thread_position_in_grid.x\n v1 = const.u32 8\n v2 = div.u32 v0, v1\n v3 = rem.u32 v2, v1\n v4 = mul.u32 v3, v1\n v5 = cvt.u32.i32 v4\n v6 = const.i32 4\n v7 = div.i32 v5, v6\n v8 = cvt.u32.i32 v0\n v9 = div.i32 v8, v6\n v10 = add.i32 v7, v9\n v11 = cmp.lt.i32 v10, v6\n br_if v11, bb1, bb1\nbb1:\n ret\n",
            "bb0:\nv15 = const.i32 2\nv14 = const.u32 3\nv13 = const.u32 7\nv12 = const.u32 3\nv0 = sreg.thread_position_in_grid.x\nv2 = shr.u32 v0, v12\nv3 = and.u32 v2, v13\nv4 = shl.u32 v3, v14\nv5 = cvt.u32.i32 v4\nv6 = const.i32 4\nv7 = shr.i32 v5, v15\nv8 = cvt.u32.i32 v0\nv9 = div.i32 v8, v6\nv10 = add.i32 v7, v9\nv11 = cmp.lt.i32 v10, v6\nbr_if v11, bb1, bb1\nbb1:\nret\n",
        );
    }
}
