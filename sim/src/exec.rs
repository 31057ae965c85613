//! The functional step: runs the next instruction of one SIMD-group for its active lanes
//! and reports what happened as data ([`Executed`]). It computes values and never counts
//! cycles; the timing model reads the record.

use metalsim_isa::{BarrierScope, CmpCond, OpClass, Space, Type};

use crate::access::{self, AtomicArgs};
use crate::alu::{self, FloatBinOp, FloatTy, FloatUnOp, IntBinOp, IntUnOp, Width};
use crate::cvt;
use crate::dispatch::{Geometry, Shape};
use crate::fault::Trap;
use crate::lanes;
use crate::memory::{AccessKind, Regions, Spaces};
use crate::program::{EXIT, Edge, Kind, Program};
use crate::regalloc::Bank;
use crate::regs::{Registers, blend, map1, map2, map3};
use crate::simt::{LaneMask, Reconvergence};

/// What an executed instruction did beyond writing its result.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Effect {
    /// Nothing beyond its result.
    None,
    /// A memory access; see [`Access`].
    Memory,
    /// A branch: each edge with the lanes that took it (an empty mask for none).
    Branch {
        /// The then-edge (or the only edge of `br`) and its lanes.
        then_: (u32, LaneMask),
        /// The else-edge and its lanes.
        else_: (u32, LaneMask),
    },
    /// The SIMD-group reached a threadgroup barrier and waits; `released` when its arrival
    /// released the barrier (set by the machine).
    Barrier {
        /// This arrival released every waiting SIMD-group.
        released: bool,
    },
    /// The active lanes finished.
    Exit {
        /// Every lane of the SIMD-group has finished.
        done: bool,
        /// Its finishing released a barrier the others wait at (set by the machine).
        released: bool,
    },
}

/// The record of one executed instruction.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Executed {
    /// The instruction's index in the program.
    pub pc: u32,
    /// Its timing class.
    pub class: OpClass,
    /// The lanes that executed it.
    pub active: LaneMask,
    /// What else happened.
    pub effect: Effect,
}

/// The last memory access, read by the timing model when an instruction reports
/// [`Effect::Memory`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    /// The address space.
    pub space: Space,
    /// Load, store or atomic.
    pub kind: AccessKind,
    /// Bytes per lane.
    pub bytes: u32,
    /// The lanes that accessed memory.
    pub mask: LaneMask,
    /// Each lane's address.
    pub addrs: [u64; 32],
}

impl Default for Access {
    fn default() -> Self {
        Access {
            space: Space::Device,
            kind: AccessKind::Load,
            bytes: 0,
            mask: 0,
            addrs: [0; 32],
        }
    }
}

/// Everything an instruction can touch besides its SIMD-group's registers.
pub(crate) struct Context<'a, 'b> {
    /// The program.
    pub program: &'a Program,
    /// The address space's regions.
    pub regions: &'a Regions,
    /// The storage reachable from this SIMD-group.
    pub spaces: Spaces<'b>,
    /// The grid.
    pub geometry: &'a Geometry,
    /// The SIMD-group's threadgroup.
    pub shape: &'a Shape,
    /// The SIMD-group's index in it.
    pub simd: u32,
    /// Where memory accesses are recorded.
    pub access: &'a mut Access,
}

/// Specializes a closure for each variant of a field-less operation enum, so each lane
/// loop is compiled (and vectorized) for one constant operation.
macro_rules! specialize {
    ($v:expr; $t:ident { $($var:ident),* } => |$o:ident| $body:expr) => {
        match $v { $( $t::$var => { let $o = $t::$var; $body } )* }
    };
}

/// The lanes of a predicate register that hold true.
#[inline(always)]
fn true_lanes(p: &[u32; 32]) -> LaneMask {
    p.iter()
        .enumerate()
        .fold(0, |m, (i, &v)| m | (((v != 0) as u32) << i))
}

/// Applies an edge's copies in `lanes`.
#[inline]
fn copy_along(regs: &mut Registers, program: &Program, e: &Edge, lanes: LaneMask) {
    if lanes == 0 {
        return;
    }
    for c in &program.copies[e.copies_start as usize..e.copies_end as usize] {
        match c.bank {
            Bank::B32 => {
                let v = regs.r32[c.src as usize];
                blend(&mut regs.r32[c.dst as usize], &v, lanes);
            }
            Bank::B64 => {
                let v = regs.r64[c.src as usize];
                blend(&mut regs.r64[c.dst as usize], &v, lanes);
            }
        }
    }
}

/// Runs the next instruction of a SIMD-group.
#[inline]
pub(crate) fn execute(
    cx: &mut Context,
    regs: &mut Registers,
    simt: &mut Reconvergence,
) -> Result<Executed, Trap> {
    let Some((pc, mask)) = simt.top() else {
        return Ok(Executed {
            pc: 0,
            class: OpClass::Control,
            active: 0,
            effect: Effect::Exit {
                done: true,
                released: false,
            },
        });
    };
    if pc == EXIT {
        // Lanes waiting at the exit with nothing left to run above them: they finish.
        simt.exit(mask);
        return Ok(Executed {
            pc: 0,
            class: OpClass::Control,
            active: 0,
            effect: Effect::Exit {
                done: simt.is_done(),
                released: false,
            },
        });
    }
    let program = cx.program;
    let ins = program.insts[pc as usize];
    let (dst, a, b, c) = (ins.dst, ins.a, ins.b, ins.c);
    let mut effect = Effect::None;
    match ins.kind {
        Kind::IntUn(op, w) => specialize!(op; IntUnOp { Neg, Abs, Not, Clz, Ctz, Popcount } =>
            |o| regs.un32(dst, a, mask, |x| alu::int_un(o, w, x))),
        Kind::IntBin(op, w) => {
            specialize!(op; IntBinOp { Add, Sub, Mul, Div, Rem, Min, Max, And, Or, Xor, Shl, Shr, MulHi } =>
            |o| regs.bin32(dst, a, b, mask, |x, y| alu::int_bin(o, w, x, y)))
        }
        Kind::IntFma(w) => regs.tri32(dst, a, b, c, mask, |x, y, z| alu::int_fma(w, x, y, z)),
        Kind::IntCmp(cond, w) => specialize!(cond; CmpCond { Eq, Ne, Lt, Le, Gt, Ge } =>
            |k| regs.bin32(dst, a, b, mask, |x, y| alu::int_cmp(k, w, x, y) as u32)),
        Kind::LongUn(op, s) => regs.un64(dst, a, mask, |x| alu::long_un(op, s, x)),
        Kind::LongBin(op, s) => {
            specialize!(op; IntBinOp { Add, Sub, Mul, Div, Rem, Min, Max, And, Or, Xor, Shl, Shr, MulHi } =>
            |o| regs.bin64(dst, a, b, mask, |x, y| alu::long_bin(o, s, x, y)))
        }
        Kind::LongFma => {
            let out = map3(
                &regs.r64[a as usize],
                &regs.r64[b as usize],
                &regs.r64[c as usize],
                |x: u64, y: u64, z: u64| x.wrapping_mul(y).wrapping_add(z),
            );
            regs.set64(dst, &out, mask);
        }
        Kind::LongCmp(cond, s) => {
            let out = specialize!(cond; CmpCond { Eq, Ne, Lt, Le, Gt, Ge } =>
                |k| map2(&regs.r64[a as usize], &regs.r64[b as usize], |x, y| alu::long_cmp(k, s, x, y) as u32));
            regs.set32(dst, &out, mask);
        }
        Kind::FloatUn(op, ft) => match op {
            FloatUnOp::Neg => regs.un32(dst, a, mask, |x| x ^ ft.sign_bit()),
            FloatUnOp::Abs => regs.un32(dst, a, mask, |x| x & !ft.sign_bit()),
            FloatUnOp::Math(_) => regs.un32(dst, a, mask, |x| alu::float_un(op, ft, x)),
        },
        Kind::FloatBin(op, FloatTy::F32) => {
            specialize!(op; FloatBinOp { Add, Sub, Mul, Div, Min, Max, Pow } =>
            |o| regs.bin32(dst, a, b, mask, |x, y| alu::f32_bin(o, f32::from_bits(x), f32::from_bits(y)).to_bits()))
        }
        Kind::FloatBin(op, ft) => regs.bin32(dst, a, b, mask, |x, y| alu::float_bin(op, ft, x, y)),
        Kind::FloatFma(FloatTy::F32) => regs.tri32(dst, a, b, c, mask, |x, y, z| {
            alu::fma_f32(f32::from_bits(x), f32::from_bits(y), f32::from_bits(z)).to_bits()
        }),
        Kind::FloatFma(ft) => regs.tri32(dst, a, b, c, mask, |x, y, z| alu::float_fma(ft, x, y, z)),
        Kind::FloatCmp(cond, FloatTy::F32) => {
            specialize!(cond; CmpCond { Eq, Ne, Lt, Le, Gt, Ge } =>
            |k| regs.bin32(dst, a, b, mask, |x, y| alu::compare(k, f32::from_bits(x), f32::from_bits(y)) as u32))
        }
        Kind::FloatCmp(cond, ft) => regs.bin32(dst, a, b, mask, |x, y| {
            alu::float_cmp(cond, ft, x, y) as u32
        }),
        Kind::Select32 => regs.tri32(dst, a, b, c, mask, |p, x, y| if p != 0 { x } else { y }),
        Kind::Select64 => {
            let out = map3(
                &regs.r32[a as usize],
                &regs.r64[b as usize],
                &regs.r64[c as usize],
                |p, x, y| {
                    if p != 0 { x } else { y }
                },
            );
            regs.set64(dst, &out, mask);
        }
        Kind::Copy32 => regs.un32(dst, a, mask, |x| x),
        Kind::Copy64 => regs.un64(dst, a, mask, |x| x),
        Kind::Cvt { from, to, sat } => {
            let src = regs.get(from.is_wide(), a);
            let out = map1(&src, |x| cvt::convert(x, from, to, sat));
            regs.put(to.is_wide(), dst, &out, mask);
        }
        Kind::PtrAdd { index } => {
            let scale = c as u64;
            let idx = if index.is_wide() {
                regs.r64[b as usize]
            } else {
                let w = Width::of(index);
                map1(&regs.r32[b as usize], |x| w.extend(x) as u64)
            };
            let out = map2(&regs.r64[a as usize], &idx, |p, i| {
                p.wrapping_add(i.wrapping_mul(scale))
            });
            regs.set64(dst, &out, mask);
        }
        Kind::Load(space, ty) => {
            let addrs = regs.r64[a as usize];
            let v = access::load(cx.regions, &mut cx.spaces, space, ty, &addrs, mask)?;
            regs.put(ty.is_wide(), dst, &v, mask);
            record(cx.access, space, AccessKind::Load, ty, &addrs, mask);
            effect = Effect::Memory;
        }
        Kind::Store(space, ty) => {
            let addrs = regs.r64[a as usize];
            let v = regs.get(ty.is_wide(), b);
            access::store(cx.regions, &mut cx.spaces, space, ty, &addrs, &v, mask)?;
            record(cx.access, space, AccessKind::Store, ty, &addrs, mask);
            effect = Effect::Memory;
        }
        Kind::Atomic(op, space, ty) => {
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
            record(cx.access, space, AccessKind::Atomic, ty, &addrs, mask);
            effect = Effect::Memory;
        }
        Kind::Barrier(scope) => {
            if scope == BarrierScope::Threadgroup {
                effect = Effect::Barrier { released: false };
            }
        }
        Kind::Cross { op, quad, ty } => {
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
            let out = lanes::cross(op, quad, ty, &x, &y, mask);
            regs.put(op.result_type(ty).is_wide(), dst, &out, mask);
        }
        Kind::Sreg(r) => {
            let v = cx.geometry.special(r, cx.shape, cx.simd);
            regs.set32(dst, &v, mask);
        }
        Kind::Uniform64 => {
            let v = [program.uniforms[a as usize]; 32];
            regs.set64(dst, &v, mask);
        }
        Kind::Br => {
            let e = &program.edges[a as usize];
            copy_along(regs, program, e, mask);
            simt.jump(e.target);
            return Ok(Executed {
                pc,
                class: ins.class,
                active: mask,
                effect: Effect::Branch {
                    then_: (a, mask),
                    else_: (0, 0),
                },
            });
        }
        Kind::BrIf => {
            let taken = mask & true_lanes(&regs.r32[a as usize]);
            let not = mask & !taken;
            let (te, ee) = (&program.edges[b as usize], &program.edges[c as usize]);
            copy_along(regs, program, te, taken);
            copy_along(regs, program, ee, not);
            if not == 0 {
                simt.jump(te.target);
            } else if taken == 0 {
                simt.jump(ee.target);
            } else {
                simt.diverge(dst, (te.target, taken), (ee.target, not));
            }
            return Ok(Executed {
                pc,
                class: ins.class,
                active: mask,
                effect: Effect::Branch {
                    then_: (b, taken),
                    else_: (c, not),
                },
            });
        }
        Kind::Ret => {
            simt.exit(mask);
            return Ok(Executed {
                pc,
                class: ins.class,
                active: mask,
                effect: Effect::Exit {
                    done: simt.is_done(),
                    released: false,
                },
            });
        }
    }
    simt.advance();
    Ok(Executed {
        pc,
        class: ins.class,
        active: mask,
        effect,
    })
}

fn record(
    access: &mut Access,
    space: Space,
    kind: AccessKind,
    ty: Type,
    addrs: &[u64; 32],
    mask: LaneMask,
) {
    access.space = space;
    access.kind = kind;
    access.bytes = ty.bytes();
    access.mask = mask;
    access.addrs = *addrs;
}
