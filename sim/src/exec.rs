//! The functional step: runs the next instruction of one SIMD-group for its active lanes
//! and reports what happened as data ([`Executed`]). It computes values and never counts
//! cycles; the timing model reads the record.

use metalsim_isa::{BarrierScope, OpClass, Space, Type};

use crate::access;
use crate::dispatch::{Geometry, Shape};
use crate::fault::{FaultKind, Trap};
use crate::memory::{AccessKind, Regions, Spaces};
use crate::program::{EXIT, Edge, Kind, Program};
use crate::regalloc::Bank;
use crate::regs::{Registers, blend};
use crate::sanitize::{Pending, Sanitizer, TgShadow, Touch};

mod arith;
mod wide;
use crate::simt::{Joined, LaneMask, Reconvergence};

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
        /// The groups of lanes it brought to a divergent branch's reconvergence point.
        joined: Joined,
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
///
/// Each active lane accesses the `bytes` bytes from its address in `addrs` (a vector
/// access covers all its elements, a matrix access both of the lane's elements when they
/// are adjacent), and, for a transposed matrix access, whose two elements per lane are a
/// row apart, also `bytes` bytes from its address in `second`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    /// The address space.
    pub space: Space,
    /// Load, store or atomic.
    pub kind: AccessKind,
    /// Bytes per lane from each address.
    pub bytes: u32,
    /// The lanes that accessed memory.
    pub mask: LaneMask,
    /// Each lane's address.
    pub addrs: [u64; 32],
    /// Each lane's second address, for accesses of two separate pieces per lane.
    pub second: Option<[u64; 32]>,
}

impl Access {
    /// Bytes the active lanes accessed in all.
    pub fn total_bytes(&self) -> u64 {
        let pieces = if self.second.is_some() { 2 } else { 1 };
        self.bytes as u64 * self.mask.count_ones() as u64 * pieces
    }
}

impl Default for Access {
    fn default() -> Self {
        Access {
            space: Space::Device,
            kind: AccessKind::Load,
            bytes: 0,
            mask: 0,
            addrs: [0; 32],
            second: None,
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
    /// Whether `access` gets the lanes' addresses (a timing model reads them; an untimed
    /// run reads only the counts and saves copying 32 addresses per access).
    pub keep_addrs: bool,
    /// The sanitizer's findings and device-memory tags.
    pub sanitizer: &'b mut Sanitizer,
    /// The sanitizer's shadow of the threadgroup's memory.
    pub shadow: TgShadow<'b>,
}

impl Context<'_, '_> {
    /// Records an access in `access` (its addresses only with `keep_addrs`).
    #[inline(always)]
    pub(crate) fn record(
        &mut self,
        space: Space,
        kind: AccessKind,
        bytes: u32,
        addrs: &[u64; 32],
        mask: LaneMask,
    ) {
        let access = &mut *self.access;
        access.space = space;
        access.kind = kind;
        access.bytes = bytes;
        access.mask = mask;
        if self.keep_addrs {
            access.addrs = *addrs;
        }
        access.second = None;
    }

    /// Lets the sanitizer see a successful access of `bytes` bytes at each active lane's
    /// address: threadgroup accesses for races and uninitialized reads, plain device
    /// stores for races between threadgroups.
    #[inline(always)]
    fn watch(
        &mut self,
        space: Space,
        touch: Touch,
        addrs: &[u64; 32],
        bytes: u32,
        mask: LaneMask,
        pc: u32,
    ) {
        match space {
            Space::Threadgroup => self.sanitizer.threadgroup_access(
                &mut self.shadow,
                self.regions,
                touch,
                addrs,
                bytes,
                mask,
                self.simd,
                pc,
            ),
            Space::Device if touch == Touch::Write => self.sanitizer.device_store(
                self.regions,
                addrs,
                bytes,
                mask,
                self.shape.linear,
                self.simd,
                pc,
            ),
            _ => {}
        }
    }

    /// Reports a cross-lane operation (or matrix multiply) whose lanes in `readers` read
    /// an inactive lane.
    #[cold]
    fn inactive_read(&mut self, what: &str, readers: LaneMask, pc: u32) {
        if !self.sanitizer.first(FaultKind::InactiveLaneRead, pc) {
            return;
        }
        let lane = readers.trailing_zeros();
        self.sanitizer.report(Pending {
            trap: Trap {
                kind: FaultKind::InactiveLaneRead,
                message: format!(
                    "`{what}` in lane {lane} reads a lane that is inactive here; MSL leaves that value undefined (the simulator gives the reading lane its own value)"
                ),
                lane,
                address: None,
                buffer: None,
                offset: None,
            },
            pc,
            simd: self.simd,
            other_pc: None,
        });
    }
}

/// Specializes a closure for each variant of a field-less operation enum, so each lane
/// loop is compiled (and vectorized) for one constant operation.
macro_rules! specialize {
    ($v:expr; $t:ident { $($var:ident),* } => |$o:ident| $body:expr) => {
        match $v { $( $t::$var => { let $o = $t::$var; $body } )* }
    };
}
pub(crate) use specialize;

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
        Kind::IntUn(op, w) => arith::int_un(regs, op, w, ins, mask),
        Kind::IntBin(op, w) => arith::int_bin(regs, op, w, ins, mask),
        Kind::IntFma(w) => arith::int_fma(regs, w, ins, mask),
        Kind::IntCmp(cond, w) => arith::int_cmp(regs, cond, w, ins, mask),
        Kind::LongUn(op, s) => arith::long_un(regs, op, s, ins, mask),
        Kind::LongBin(op, s) => arith::long_bin(regs, op, s, ins, mask),
        Kind::LongFma => arith::long_fma(regs, ins, mask),
        Kind::LongCmp(cond, s) => arith::long_cmp(regs, cond, s, ins, mask),
        Kind::FloatUn(op, ft) => arith::float_un(regs, op, ft, ins, mask),
        Kind::Math(f, p, ft) => wide::math(regs, f, p, ft, ins, mask),
        Kind::IntFn(f, ty) => wide::int_fn(program, regs, f, ty, ins, mask),
        Kind::FloatBin(op, ft) => arith::float_bin(regs, op, ft, ins, mask),
        Kind::FloatFma(ft) => arith::float_fma(regs, ft, ins, mask),
        Kind::FloatCmp(cond, ft) => arith::float_cmp(regs, cond, ft, ins, mask),
        Kind::Select32 => arith::select32(regs, ins, mask),
        Kind::Select64 => arith::select64(regs, ins, mask),
        Kind::Copy32 => regs.un32(dst, a, mask, |x| x),
        Kind::Copy64 => regs.un64(dst, a, mask, |x| x),
        Kind::Cvt { from, to, sat } => arith::cvt(regs, from, to, sat, ins, mask),
        Kind::PtrAdd { index } => arith::ptr_add(regs, index, ins, mask),
        Kind::Load(space, ty) if !ty.is_wide() && ty != Type::Pred => {
            // The 32-bit bank: the destination cannot be the address register.
            let addrs = &regs.r64[a as usize];
            let v = access::load32(cx.regions, &mut cx.spaces, space, ty, addrs, mask)?;
            cx.record(space, AccessKind::Load, ty.bytes(), addrs, mask);
            if space == Space::Threadgroup {
                cx.watch(space, Touch::Read, addrs, ty.bytes(), mask, pc);
            }
            regs.set32(dst, &v, mask);
            effect = Effect::Memory;
        }
        Kind::Load(space, ty) => {
            let addrs = regs.r64[a as usize];
            let v = access::load(cx.regions, &mut cx.spaces, space, ty, &addrs, mask)?;
            regs.put(ty.is_wide(), dst, &v, mask);
            cx.record(space, AccessKind::Load, ty.bytes(), &addrs, mask);
            if space == Space::Threadgroup {
                cx.watch(space, Touch::Read, &addrs, ty.bytes(), mask, pc);
            }
            effect = Effect::Memory;
        }
        Kind::LoadVec(space, ty, n) => {
            wide::load_vec(cx, regs, space, ty, n, ins, mask, pc)?;
            effect = Effect::Memory;
        }
        Kind::StoreVec(space, ty, n) => {
            wide::store_vec(cx, regs, space, ty, n, ins, mask, pc)?;
            effect = Effect::Memory;
        }
        Kind::MatrixLoad(space, ty, transpose) => {
            wide::matrix_load(cx, regs, space, ty, transpose, ins, mask, pc)?;
            effect = Effect::Memory;
        }
        Kind::MatrixStore(space, ty, transpose) => {
            wide::matrix_store(cx, regs, space, ty, transpose, ins, mask, pc)?;
            effect = Effect::Memory;
        }
        Kind::MatrixMac(ft) => wide::matrix_mac(cx, regs, ft, ins, mask, pc),
        Kind::Store(space, ty) => {
            let addrs = regs.r64[a as usize];
            let v = regs.get(ty.is_wide(), b);
            access::store(cx.regions, &mut cx.spaces, space, ty, &addrs, &v, mask)?;
            cx.record(space, AccessKind::Store, ty.bytes(), &addrs, mask);
            cx.watch(space, Touch::Write, &addrs, ty.bytes(), mask, pc);
            effect = Effect::Memory;
        }
        Kind::Atomic(op, space, ty) => {
            wide::atomic(cx, regs, op, space, ty, ins, mask, pc)?;
            effect = Effect::Memory;
        }
        Kind::Barrier(scope) => {
            if scope == BarrierScope::Threadgroup {
                effect = Effect::Barrier { released: false };
            }
        }
        Kind::Cross { op, quad, ty } => wide::cross(cx, regs, op, quad, ty, ins, mask, pc),
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
            let joined = simt.jump(e.target);
            return Ok(Executed {
                pc,
                class: ins.class,
                active: mask,
                effect: Effect::Branch {
                    then_: (a, mask),
                    else_: (0, 0),
                    joined,
                },
            });
        }
        Kind::BrIf => {
            let taken = mask & true_lanes(&regs.r32[a as usize]);
            let not = mask & !taken;
            let (te, ee) = (&program.edges[b as usize], &program.edges[c as usize]);
            copy_along(regs, program, te, taken);
            copy_along(regs, program, ee, not);
            let joined = if not == 0 {
                simt.jump(te.target)
            } else if taken == 0 {
                simt.jump(ee.target)
            } else {
                simt.diverge(dst, (te.target, taken), (ee.target, not))
            };
            return Ok(Executed {
                pc,
                class: ins.class,
                active: mask,
                effect: Effect::Branch {
                    then_: (b, taken),
                    else_: (c, not),
                    joined,
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
