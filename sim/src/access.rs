//! Loads, stores and atomics of one instruction across its active lanes.
//!
//! Every active lane's access is checked before any takes effect, so a faulting
//! instruction changes nothing. Stores of several lanes to one address land in ascending
//! lane order (the highest lane's value stays). Atomics run lane by lane in ascending lane
//! order, each returning the value it found.

use metalsim_isa::{AtomicOp, Space, Type};

use crate::alu::{self, FloatBinOp, FloatTy, IntBinOp, Width};
use crate::fault::Trap;
use crate::memory::{AccessKind, Located, Regions, Spaces, offset_of};
use crate::simt::LaneMask;

fn lanes(mask: LaneMask) -> impl Iterator<Item = u32> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros();
            m &= m - 1;
            Some(l)
        }
    })
}

/// Checks every active lane's access; the located accesses in lane order.
fn locate_all(
    regions: &Regions,
    space: Space,
    addrs: &[u64; 32],
    bytes: u32,
    kind: AccessKind,
    mask: LaneMask,
) -> Result<[Located; 32], Trap> {
    let mut out = [Located::Threadgroup(0); 32];
    if let Some(base) = regions.locate_all_in_one(space, addrs, bytes, kind, mask) {
        for l in lanes(mask) {
            out[l as usize] = base.at(offset_of(addrs[l as usize]));
        }
        return Ok(out);
    }
    for l in lanes(mask) {
        out[l as usize] = regions.locate(space, addrs[l as usize], bytes, kind, l)?;
    }
    Ok(out)
}

/// Loads a value of `ty` in each active lane (canonical bits, widened to 64).
pub(crate) fn load(
    regions: &Regions,
    spaces: &mut Spaces,
    space: Space,
    ty: Type,
    addrs: &[u64; 32],
    mask: LaneMask,
) -> Result<[u64; 32], Trap> {
    let n = ty.bytes();
    let at = locate_all(regions, space, addrs, n, AccessKind::Load, mask)?;
    let mut out = [0u64; 32];
    for l in lanes(mask) {
        let v = spaces.read(at[l as usize], l, n);
        out[l as usize] = if ty == Type::Pred { (v != 0) as u64 } else { v };
    }
    Ok(out)
}

/// Stores each active lane's value of `ty`.
pub(crate) fn store(
    regions: &Regions,
    spaces: &mut Spaces,
    space: Space,
    ty: Type,
    addrs: &[u64; 32],
    values: &[u64; 32],
    mask: LaneMask,
) -> Result<(), Trap> {
    let n = ty.bytes();
    let at = locate_all(regions, space, addrs, n, AccessKind::Store, mask)?;
    for l in lanes(mask) {
        let v = values[l as usize];
        let v = if ty == Type::Pred { v & 1 } else { v };
        spaces.write(at[l as usize], l, n, v);
    }
    Ok(())
}

/// The operands of an atomic instruction.
pub(crate) struct AtomicArgs<'a> {
    /// The operation.
    pub op: AtomicOp,
    /// Its address space.
    pub space: Space,
    /// `i32`, `u32` or `f32`.
    pub ty: Type,
    /// Addresses.
    pub addrs: &'a [u64; 32],
    /// First value operand (the expected value of `cmpxchg`).
    pub b: &'a [u32; 32],
    /// Second value operand (the desired value of `cmpxchg`).
    pub c: &'a [u32; 32],
}

/// Runs an atomic lane by lane in ascending order; each lane gets the old value.
pub(crate) fn atomic(
    regions: &Regions,
    spaces: &mut Spaces,
    args: &AtomicArgs,
    mask: LaneMask,
) -> Result<[u32; 32], Trap> {
    let kind = if args.op == AtomicOp::Load {
        AccessKind::Load
    } else {
        AccessKind::Atomic
    };
    let at = locate_all(regions, args.space, args.addrs, 4, kind, mask)?;
    let w = Width::of(args.ty);
    let ft = FloatTy::of(args.ty);
    let mut out = [0u32; 32];
    for l in lanes(mask) {
        let i = l as usize;
        let old = spaces.read(at[i], l, 4) as u32;
        let (x, y) = (args.b[i], args.c[i]);
        let int = |op| alu::int_bin(op, w, old, x);
        let float = |op| ft.map(|f| alu::float_bin(op, f, old, x));
        let new = match args.op {
            AtomicOp::Load => None,
            AtomicOp::Store | AtomicOp::Exchange => Some(x),
            AtomicOp::CmpXchg => (old == x).then_some(y),
            AtomicOp::Add => Some(float(FloatBinOp::Add).unwrap_or_else(|| int(IntBinOp::Add))),
            AtomicOp::Sub => Some(float(FloatBinOp::Sub).unwrap_or_else(|| int(IntBinOp::Sub))),
            AtomicOp::Min => Some(float(FloatBinOp::Min).unwrap_or_else(|| int(IntBinOp::Min))),
            AtomicOp::Max => Some(float(FloatBinOp::Max).unwrap_or_else(|| int(IntBinOp::Max))),
            AtomicOp::And => Some(int(IntBinOp::And)),
            AtomicOp::Or => Some(int(IntBinOp::Or)),
            AtomicOp::Xor => Some(int(IntBinOp::Xor)),
        };
        if let Some(v) = new {
            spaces.write(at[i], l, 4, v as u64);
        }
        out[i] = old;
    }
    Ok(out)
}
