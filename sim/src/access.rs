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
    // Lane by lane, to report the first faulting lane.
    for l in lanes(mask) {
        out[l as usize] = regions.locate(space, addrs[l as usize], bytes, kind, l)?;
    }
    Ok(out)
}

/// Checks every active lane's access of `bytes` bytes at its address in each of `pieces`
/// (the elements of a vector or matrix access), before any takes effect; the first fault
/// in lane order, then piece order.
pub(crate) fn check_pieces(
    regions: &Regions,
    space: Space,
    bytes: u32,
    kind: AccessKind,
    pieces: &[[u64; 32]],
    mask: LaneMask,
) -> Result<(), Trap> {
    if pieces.iter().all(|p| {
        regions
            .locate_all_in_one(space, p, bytes, kind, mask)
            .is_some()
    }) {
        return Ok(());
    }
    for l in lanes(mask) {
        for p in pieces {
            regions.locate(space, p[l as usize], bytes, kind, l)?;
        }
    }
    Ok(())
}

/// Reads `N` bytes at each active lane's offset in `mem`, each made a lane value by
/// `cast` (all 32 lanes without a test per lane when every lane is active).
#[inline(always)]
fn gather<const N: usize, T: Copy + Default>(
    mem: &[u8],
    addrs: &[u64; 32],
    mask: LaneMask,
    cast: impl Fn(u64) -> T,
) -> [T; 32] {
    let read = |a: u64| {
        let off = offset_of(a) as usize;
        let mut b = [0u8; 8];
        b[..N].copy_from_slice(&mem[off..off + N]);
        cast(u64::from_le_bytes(b))
    };
    let mut out = [T::default(); 32];
    if mask == u32::MAX {
        for (o, &a) in out.iter_mut().zip(addrs) {
            *o = read(a);
        }
    } else {
        for (i, (o, &a)) in out.iter_mut().zip(addrs).enumerate() {
            if mask >> i & 1 != 0 {
                *o = read(a);
            }
        }
    }
    out
}

/// Writes the low `N` bytes of each active lane's value at its offset in `mem`, in
/// ascending lane order.
#[inline(always)]
fn scatter<const N: usize>(mem: &mut [u8], addrs: &[u64; 32], values: &[u64; 32], mask: LaneMask) {
    for (i, (&a, v)) in addrs.iter().zip(values).enumerate() {
        if mask >> i & 1 != 0 {
            let off = offset_of(a) as usize;
            mem[off..off + N].copy_from_slice(&v.to_le_bytes()[..N]);
        }
    }
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
    let mut out = load_lanes(regions, spaces, space, ty, addrs, mask, |v| v)?;
    if ty == Type::Pred {
        for v in &mut out {
            *v = (*v != 0) as u64;
        }
    }
    Ok(out)
}

/// Loads a value of `ty`, a type of at most 32 bits other than `bool`, in each active
/// lane (its canonical bits): [`load`] without widening to 64 bits and back.
pub(crate) fn load32(
    regions: &Regions,
    spaces: &mut Spaces,
    space: Space,
    ty: Type,
    addrs: &[u64; 32],
    mask: LaneMask,
) -> Result<[u32; 32], Trap> {
    debug_assert!(!ty.is_wide() && ty != Type::Pred);
    load_lanes(regions, spaces, space, ty, addrs, mask, |v| v as u32)
}

/// Loads `ty.bytes()` bytes in each active lane, each made a lane value by `cast`.
#[inline(always)]
fn load_lanes<T: Copy + Default>(
    regions: &Regions,
    spaces: &mut Spaces,
    space: Space,
    ty: Type,
    addrs: &[u64; 32],
    mask: LaneMask,
    cast: impl Fn(u64) -> T,
) -> Result<[T; 32], Trap> {
    let n = ty.bytes();
    let fast = regions
        .locate_all_in_one(space, addrs, n, AccessKind::Load, mask)
        .and_then(|base| spaces.shared(base));
    Ok(match fast {
        Some(mem) => match n {
            1 => gather::<1, T>(mem, addrs, mask, cast),
            2 => gather::<2, T>(mem, addrs, mask, cast),
            4 => gather::<4, T>(mem, addrs, mask, cast),
            _ => gather::<8, T>(mem, addrs, mask, cast),
        },
        None => {
            let at = locate_all(regions, space, addrs, n, AccessKind::Load, mask)?;
            let mut out = [T::default(); 32];
            for l in lanes(mask) {
                out[l as usize] = cast(spaces.read(at[l as usize], l, n));
            }
            out
        }
    })
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
    let values = &if ty == Type::Pred {
        values.map(|v| v & 1)
    } else {
        *values
    };
    let base = regions.locate_all_in_one(space, addrs, n, AccessKind::Store, mask);
    if let Some(Located::Global(storage, start)) = base
        && spaces.logging()
    {
        spaces.write_logged((storage, start), addrs, values, mask, n);
        return Ok(());
    }
    let fast = base.and_then(|base| spaces.shared_mut(base));
    match fast {
        Some(mem) => match n {
            1 => scatter::<1>(mem, addrs, values, mask),
            2 => scatter::<2>(mem, addrs, values, mask),
            4 => scatter::<4>(mem, addrs, values, mask),
            _ => scatter::<8>(mem, addrs, values, mask),
        },
        None => {
            let at = locate_all(regions, space, addrs, n, AccessKind::Store, mask)?;
            for l in lanes(mask) {
                spaces.write(at[l as usize], l, n, values[l as usize]);
            }
        }
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
