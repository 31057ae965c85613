//! The executors of the bulky instructions: integer functions, vector and matrix memory
//! accesses, the matrix multiply, atomics and cross-lane operations. Kept out of
//! `execute` (and out of line) so its stack frame stays small for the common
//! instructions.

use metalsim_isa::{AtomicOp, IntFn, MathFn, SimdOp, Space, Type};

use super::Context;
use crate::access::{self, AtomicArgs};
use crate::alu::{self, FloatTy};
use crate::fault::Trap;
use crate::lanes;
use crate::math::{self, Precision};
use crate::matrix;
use crate::memory::AccessKind;
use crate::program::{Instr, Program};
use crate::regs::{Registers, map1, narrow, widen};
use crate::sanitize::Touch;
use crate::simt::LaneMask;

/// `dst = f(a[, b])`, a math function.
#[inline(never)]
pub(super) fn math(
    regs: &mut Registers,
    f: MathFn,
    p: Precision,
    ft: FloatTy,
    ins: Instr,
    mask: LaneMask,
) {
    let (dst, a, b) = (ins.dst, ins.a, ins.b);
    if f.arity() == 2 {
        regs.bin32(dst, a, b, mask, |x, y| math::eval(f, p, ft, x, y))
    } else {
        regs.un32(dst, a, mask, |x| math::eval(f, p, ft, x, 0))
    }
}

/// `dst = f(...)` on integers of type `ty`.
#[inline(never)]
pub(super) fn int_fn(
    program: &Program,
    regs: &mut Registers,
    f: IntFn,
    ty: Type,
    ins: Instr,
    mask: LaneMask,
) {
    let (dst, a, b, c) = (ins.dst, ins.a, ins.b, ins.c);
    let wide = ty.is_wide();
    let slots = if f == IntFn::InsertBits {
        let at = c as usize;
        [a, b, program.operands[at], program.operands[at + 1]]
    } else {
        [a, b, c, 0]
    };
    let operand = |i: usize| {
        if i >= f.arity() {
            [0; 32]
        } else if i < f.typed_operands() && wide {
            regs.r64[slots[i] as usize]
        } else {
            widen(&regs.r32[slots[i] as usize])
        }
    };
    let (x, y, z, t) = (operand(0), operand(1), operand(2), operand(3));
    let (bits, signed) = (ty.bits(), ty.is_signed());
    let out: [u64; 32] =
        std::array::from_fn(|l| alu::int_fn(f, bits, signed, x[l], y[l], z[l], t[l]));
    regs.put(wide, dst, &out, mask);
}

/// Executes `load_vec`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn load_vec(
    cx: &mut Context,
    regs: &mut Registers,
    space: Space,
    ty: Type,
    n: u8,
    ins: Instr,
    mask: LaneMask,
    pc: u32,
) -> Result<(), Trap> {
    let (a, b) = (ins.a, ins.b);
    let base = regs.r64[a as usize];
    let pieces = vector_pieces(&base, ty, n);
    let pieces = &pieces[..n as usize];
    access::check_pieces(
        cx.regions,
        space,
        ty.bytes(),
        AccessKind::Load,
        pieces,
        mask,
    )?;
    for (i, p) in pieces.iter().enumerate() {
        let v = access::load(cx.regions, &mut cx.spaces, space, ty, p, mask)?;
        regs.put(ty.is_wide(), cx.program.operands[b as usize + i], &v, mask);
    }
    cx.record(space, AccessKind::Load, ty.bytes() * n as u32, &base, mask);
    cx.watch(space, Touch::Read, &base, ty.bytes() * n as u32, mask, pc);
    Ok(())
}

/// Executes `store_vec`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn store_vec(
    cx: &mut Context,
    regs: &mut Registers,
    space: Space,
    ty: Type,
    n: u8,
    ins: Instr,
    mask: LaneMask,
    pc: u32,
) -> Result<(), Trap> {
    let (a, b) = (ins.a, ins.b);
    let base = regs.r64[a as usize];
    let pieces = vector_pieces(&base, ty, n);
    let pieces = &pieces[..n as usize];
    let kind = AccessKind::Store;
    access::check_pieces(cx.regions, space, ty.bytes(), kind, pieces, mask)?;
    for (i, p) in pieces.iter().enumerate() {
        let v = regs.get(ty.is_wide(), cx.program.operands[b as usize + i]);
        access::store(cx.regions, &mut cx.spaces, space, ty, p, &v, mask)?;
    }
    cx.record(space, kind, ty.bytes() * n as u32, &base, mask);
    cx.watch(space, Touch::Write, &base, ty.bytes() * n as u32, mask, pc);
    Ok(())
}

/// Executes `matrix_load`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn matrix_load(
    cx: &mut Context,
    regs: &mut Registers,
    space: Space,
    ty: Type,
    transpose: bool,
    ins: Instr,
    mask: LaneMask,
    pc: u32,
) -> Result<(), Trap> {
    let (dst, a, b, c) = (ins.dst, ins.a, ins.b, ins.c);
    let pieces = matrix_pieces(&regs.r64[a as usize], &regs.r32[b as usize], ty, transpose);
    access::check_pieces(
        cx.regions,
        space,
        ty.bytes(),
        AccessKind::Load,
        &pieces,
        mask,
    )?;
    for (p, slot) in pieces.iter().zip([dst, c]) {
        let v = access::load(cx.regions, &mut cx.spaces, space, ty, p, mask)?;
        regs.set32(slot, &narrow(&v), mask);
    }
    record_matrix(cx, space, AccessKind::Load, ty, &pieces, transpose, mask);
    for p in &pieces {
        cx.watch(space, Touch::Read, p, ty.bytes(), mask, pc);
    }
    Ok(())
}

/// Executes `matrix_store`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn matrix_store(
    cx: &mut Context,
    regs: &mut Registers,
    space: Space,
    ty: Type,
    transpose: bool,
    ins: Instr,
    mask: LaneMask,
    pc: u32,
) -> Result<(), Trap> {
    let (a, b, c) = (ins.a, ins.b, ins.c);
    let pieces = matrix_pieces(&regs.r64[a as usize], &regs.r32[b as usize], ty, transpose);
    let kind = AccessKind::Store;
    access::check_pieces(cx.regions, space, ty.bytes(), kind, &pieces, mask)?;
    for (k, p) in pieces.iter().enumerate() {
        let v = widen(&regs.r32[cx.program.operands[c as usize + k] as usize]);
        access::store(cx.regions, &mut cx.spaces, space, ty, p, &v, mask)?;
    }
    record_matrix(cx, space, kind, ty, &pieces, transpose, mask);
    for p in &pieces {
        cx.watch(space, Touch::Write, p, ty.bytes(), mask, pc);
    }
    Ok(())
}

/// Executes `matrix_mac`.
#[inline(never)]
pub(super) fn matrix_mac(
    cx: &mut Context,
    regs: &mut Registers,
    ft: FloatTy,
    ins: Instr,
    mask: LaneMask,
    pc: u32,
) {
    let program = cx.program;
    let (dst, a, c) = (ins.dst, ins.a, ins.c);
    let ops = &program.operands[a as usize..a as usize + 6];
    let operand = |i: usize| &regs.r32[ops[i] as usize];
    let m = matrix::multiply_accumulate(
        ft,
        [operand(0), operand(1)],
        [operand(2), operand(3)],
        [operand(4), operand(5)],
    );
    regs.set32(dst, &m[0], mask);
    regs.set32(c, &m[1], mask);
    if mask != u32::MAX {
        cx.inactive_read("matrix_mac", mask, pc);
    }
}

/// Executes an atomic.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn atomic(
    cx: &mut Context,
    regs: &mut Registers,
    op: AtomicOp,
    space: Space,
    ty: Type,
    ins: Instr,
    mask: LaneMask,
    pc: u32,
) -> Result<(), Trap> {
    let (dst, a, b, c) = (ins.dst, ins.a, ins.b, ins.c);
    let addrs = regs.r64[a as usize];
    let zero = [0u32; 32];
    let n = op.value_operands();
    let args = AtomicArgs {
        op,
        space,
        ty,
        addrs: &addrs,
        b: if n >= 1 { &regs.r32[b as usize] } else { &zero },
        c: if n >= 2 { &regs.r32[c as usize] } else { &zero },
    };
    let old = access::atomic(cx.regions, &mut cx.spaces, &args, mask)?;
    if op.has_result() {
        regs.set32(dst, &old, mask);
    }
    cx.record(space, AccessKind::Atomic, ty.bytes(), &addrs, mask);
    if space == Space::Threadgroup {
        let touch = Touch::Atomic {
            reads: op != AtomicOp::Store,
            writes: op != AtomicOp::Load,
        };
        cx.watch(space, touch, &addrs, ty.bytes(), mask, pc);
    }
    Ok(())
}

/// Executes a SIMD-group or quad-group operation.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn cross(
    cx: &mut Context,
    regs: &mut Registers,
    op: SimdOp,
    quad: bool,
    ty: Type,
    ins: Instr,
    mask: LaneMask,
    pc: u32,
) {
    let (dst, a, b) = (ins.dst, ins.a, ins.b);
    let arity = op.arity();
    let x = if arity >= 1 {
        regs.get(ty.is_wide(), a)
    } else {
        [0; 32]
    };
    let y = if arity >= 2 {
        regs.r32[b as usize]
    } else {
        [0; 32]
    };
    let (out, inactive) = lanes::cross(op, quad, ty, &x, &y, mask);
    regs.put(op.result_type(ty).is_wide(), dst, &out, mask);
    if inactive != 0 {
        let what = if quad { "quad_" } else { "simd_" };
        cx.inactive_read(&format!("{what}{}", op.name()), inactive, pc);
    }
}

/// Records a matrix access: one piece of both elements per lane when they are adjacent
/// (a row-major matrix), two pieces a row apart when transposed.
#[allow(clippy::too_many_arguments)]
fn record_matrix(
    cx: &mut Context,
    space: Space,
    kind: AccessKind,
    ty: Type,
    pieces: &[[u64; 32]; 2],
    transpose: bool,
    mask: LaneMask,
) {
    if transpose {
        cx.record(space, kind, ty.bytes(), &pieces[0], mask);
        cx.access.second = Some(pieces[1]);
    } else {
        cx.record(space, kind, 2 * ty.bytes(), &pieces[0], mask);
    }
}

/// The address of each element of an `n`-element vector access, per lane.
#[inline]
fn vector_pieces(base: &[u64; 32], ty: Type, n: u8) -> [[u64; 32]; 4] {
    let size = ty.bytes() as u64;
    std::array::from_fn(|i| {
        let off = if i < n as usize { i as u64 * size } else { 0 };
        map1(base, |p| p.wrapping_add(off))
    })
}

/// The address of each lane's two elements of an 8x8 matrix at `base` with a row stride
/// of `stride` elements (`matrix_element` gives which elements a lane holds); transposed,
/// element `(row, column)` comes from `base[column * stride + row]`.
#[inline]
fn matrix_pieces(
    base: &[u64; 32],
    stride: &[u32; 32],
    ty: Type,
    transpose: bool,
) -> [[u64; 32]; 2] {
    let size = ty.bytes() as u64;
    std::array::from_fn(|k| {
        std::array::from_fn(|lane| {
            let (r, c) = metalsim_isa::matrix_element(lane as u32, k as u32);
            let (major, minor) = if transpose { (c, r) } else { (r, c) };
            let index = major as u64 * stride[lane] as u64 + minor as u64;
            base[lane].wrapping_add(index * size)
        })
    })
}
