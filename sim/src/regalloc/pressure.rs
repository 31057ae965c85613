//! Registers per thread as an Apple GPU's register file would hold a function, for
//! occupancy.
//!
//! The slots of the parent module are the simulator's own layout (every address in a
//! 64-bit slot, every narrow value in a 32-bit one). Occupancy needs what the hardware
//! reserves instead, and Apple GPUs hold a kernel's values more compactly in three ways:
//! - Registers are counted in 16-bit halves: each 32-bit register's halves are separately
//!   addressable (`r0l`/`r0h`, Dougall Johnson's G13 ISA notes, `DJ` in
//!   `shared/reference/apple-gpu.md` §2), and Mesa's occupancy table counts half-registers
//!   (§2.1). A value of at most 16 bits takes one half, a 32-bit value two, a 64-bit
//!   value four. A predicate takes one half (estimated: DJ lists no predicate registers,
//!   so a condition is held in a general-purpose register, and a half holds it).
//! - Threadgroup addresses are 16-bit: local-memory instructions take 16-bit offsets
//!   (Mesa, `src/asahi/compiler/agx_nir_lower_shared_bitsize.c`), which covers the 32 KiB
//!   a threadgroup may allocate (§2). An address derived from a threadgroup base takes one
//!   half.
//! - A memory instruction addresses `base + index` (the index a register or an
//!   immediate), and its base may be a uniform register (Mesa,
//!   `src/asahi/compiler/agx_lower_uniform_sources.c`: "memory instructions can take
//!   uniforms, but only for their base (first) source"; 256 uniform registers, §2).
//!   Addresses that are the same for the whole dispatch (buffers, threadgroup
//!   allocations, data objects, and constant offsets of them) live in uniform registers
//!   and take no general-purpose register. A `ptradd` of such a base, or of any address by
//!   a constant, whose every use is the address of a memory instruction is that
//!   instruction's addressing mode: it takes no register, and its operands stay live up to
//!   the memory instruction instead.
//!
//! Constants are immediates and take none. Thread-memory (stack) addresses and every other
//! 64-bit value keep four halves. The peak is the most halves live at once
//! (results counted with the values live across their instruction): what an allocator
//! that packs SSA values without waste needs, as Apple's compiler is taken to.

use metalsim_isa::{Block, Cfg, Function, Op, Type, Value};

use super::{BitSet, RegisterUse, liveness};

/// Half-registers of a value that takes none.
const NONE: u32 = 0;

/// What each value costs and which values a memory instruction addresses through.
struct Costs {
    /// Half-registers of each value (indexed by `Value`).
    halves: Vec<u32>,
    /// For a `ptradd` folded into the addressing of its memory instructions, its operands.
    folded: Vec<Option<[Value; 2]>>,
}

/// The defining operation and operands of each value defined by an instruction.
fn definitions(f: &Function, rpo: &[Block]) -> Vec<Option<(Op, Vec<Value>)>> {
    let mut defs = vec![None; f.value_types.len()];
    for &b in rpo {
        for &i in &f.block(b).insts {
            let inst = f.inst(i);
            for &r in &inst.results {
                defs[r.index()] = Some((inst.op, inst.args.clone()));
            }
        }
    }
    defs
}

/// Whether `op` reads or writes memory at the address in its first operand.
fn addresses_memory(op: Op) -> bool {
    matches!(
        op,
        Op::Load(_)
            | Op::Store(_)
            | Op::Atomic(..)
            | Op::LoadVec(..)
            | Op::StoreVec(..)
            | Op::MatrixLoad(..)
            | Op::MatrixStore(..)
    )
}

/// The half-registers of a value of type `ty` held in general-purpose registers.
fn halves_of(ty: Type) -> u32 {
    match ty.bits() {
        0..=16 => 1,
        17..=32 => 2,
        _ => 4,
    }
}

impl Costs {
    fn new(f: &Function, rpo: &[Block]) -> Costs {
        let nv = f.value_types.len();
        let defs = definitions(f, rpo);
        let is_const = |v: Value| matches!(defs[v.index()], Some((Op::Const(_), _)));

        // Dispatch-uniform addresses (uniform registers), in definition order.
        let mut uniform = vec![false; nv];
        // Threadgroup addresses: bases, `ptradd`s and `select`s of them, and block
        // parameters only ever passed them (the largest such set: start with every
        // 64-bit parameter and drop those passed anything else).
        let mut threadgroup = vec![false; nv];
        for &b in rpo {
            for &p in &f.block(b).params {
                threadgroup[p.index()] = f.value_type(p) == Type::U64;
            }
        }
        loop {
            for &b in rpo {
                for &i in &f.block(b).insts {
                    let inst = f.inst(i);
                    let Some(r) = inst.result() else { continue };
                    let a = &inst.args;
                    let (u, t) = match inst.op {
                        Op::BufferAddr(_) | Op::DataAddr(_) => (true, false),
                        Op::ThreadgroupAddr(_) | Op::ThreadgroupParamAddr(_) => (true, true),
                        Op::PtrAdd { .. } => (
                            uniform[a[0].index()] && is_const(a[1]),
                            threadgroup[a[0].index()],
                        ),
                        Op::Select => (
                            false,
                            threadgroup[a[1].index()] && threadgroup[a[2].index()],
                        ),
                        _ => (false, false),
                    };
                    uniform[r.index()] = u;
                    threadgroup[r.index()] = t;
                }
            }
            let mut changed = false;
            for &b in rpo {
                for (target, args) in f.block(b).term.targets() {
                    let params = &f.block(target).params;
                    for (p, a) in params.iter().zip(args) {
                        if threadgroup[p.index()] && !threadgroup[a.index()] {
                            threadgroup[p.index()] = false;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }

        // Addresses used only as the address of memory instructions, and computed as a
        // uniform base plus an index or any address plus a constant, are folded into
        // those instructions.
        let mut only_addressing = vec![true; nv];
        for &b in rpo {
            let data = f.block(b);
            for &i in &data.insts {
                let inst = f.inst(i);
                let first_is_address = addresses_memory(inst.op);
                for (k, &a) in inst.args.iter().enumerate() {
                    if !(first_is_address && k == 0) {
                        only_addressing[a.index()] = false;
                    }
                }
            }
            for v in data.term.uses() {
                only_addressing[v.index()] = false;
            }
        }
        let mut folded = vec![None; nv];
        for (v, def) in defs.iter().enumerate() {
            if let Some((Op::PtrAdd { .. }, a)) = def
                && only_addressing[v]
                && (uniform[a[0].index()] || is_const(a[1]))
            {
                folded[v] = Some([a[0], a[1]]);
            }
        }

        let halves = (0..nv)
            .map(|v| {
                let value = Value(v as u32);
                if is_const(value) || uniform[v] || folded[v].is_some() {
                    NONE
                } else if threadgroup[v] {
                    1
                } else {
                    halves_of(f.value_type(value))
                }
            })
            .collect();
        Costs { halves, folded }
    }

    /// The values an instruction's operand keeps in registers up to the instruction.
    fn operand_values(&self, a: Value) -> impl Iterator<Item = Value> + '_ {
        let (one, two) = match self.folded[a.index()] {
            Some([base, index]) => (base, Some(index)),
            None => (a, None),
        };
        std::iter::once(one).chain(two)
    }
}

/// The live set of one point of a block walk, with its half-register total.
struct Live<'a> {
    set: BitSet,
    halves: u64,
    costs: &'a Costs,
}

impl Live<'_> {
    fn insert(&mut self, v: Value) {
        let w = self.costs.halves[v.index()];
        if w != NONE && !self.set.contains(v.index()) {
            self.set.insert(v.index());
            self.halves += w as u64;
        }
    }
    fn remove(&mut self, v: Value) {
        if self.set.contains(v.index()) {
            self.set.remove(v.index());
            self.halves -= self.costs.halves[v.index()] as u64;
        }
    }
}

/// How an Apple GPU would hold a function: its registers per thread and its folded
/// addresses.
pub(super) struct Pressure {
    /// Registers per thread.
    pub usage: RegisterUse,
    /// Whether each value (indexed by `Value`) is a `ptradd` folded into the addressing of
    /// the memory instructions that use it (it takes no register, and the timing model
    /// charges it no issue slot).
    pub folded: Vec<bool>,
}

/// The registers per thread of the reachable blocks of a verified function, as the module
/// documentation describes, with its folded addresses.
pub(super) fn register_use(f: &Function, cfg: &Cfg) -> Pressure {
    let rpo = cfg.reverse_postorder();
    let costs = Costs::new(f, rpo);
    let folded = costs.folded.iter().map(Option::is_some).collect();
    let nv = f.value_types.len();

    // Upward-exposed uses and definitions of each block.
    let nb = f.blocks.len();
    let mut gen_ = vec![BitSet::new(nv); nb];
    let mut kill = vec![BitSet::new(nv); nb];
    for &b in rpo {
        let data = f.block(b);
        let (g, k) = (&mut gen_[b.index()], &mut kill[b.index()]);
        for p in &data.params {
            k.insert(p.index());
        }
        for &i in &data.insts {
            let inst = f.inst(i);
            for v in inst.args.iter().flat_map(|&a| costs.operand_values(a)) {
                if !k.contains(v.index()) {
                    g.insert(v.index());
                }
            }
            for &r in &inst.results {
                k.insert(r.index());
            }
        }
        for v in data.term.uses() {
            if !k.contains(v.index()) {
                g.insert(v.index());
            }
        }
    }
    let (_, live_out) = liveness(cfg, rpo, &gen_, &kill, nv);

    // Walk each block backwards from what is live at its end.
    let (mut peak, mut after_sum, mut points) = (0u64, 0u64, 0u64);
    for &b in rpo {
        let data = f.block(b);
        let mut live = Live {
            set: BitSet::new(nv),
            halves: 0,
            costs: &costs,
        };
        for v in live_out[b.index()].iter() {
            live.insert(Value(v as u32));
        }
        for v in data.term.uses() {
            live.insert(v);
        }
        peak = peak.max(live.halves);
        for &i in data.insts.iter().rev() {
            let inst = f.inst(i);
            after_sum += live.halves;
            points += 1;
            // A result takes its register while the values live across the instruction
            // keep theirs (an operand that dies here may give its register to a result).
            let dead_results: u64 = inst
                .results
                .iter()
                .filter(|r| !live.set.contains(r.index()))
                .map(|r| costs.halves[r.index()] as u64)
                .sum();
            peak = peak.max(live.halves + dead_results);
            for &r in &inst.results {
                live.remove(r);
            }
            for v in inst.args.iter().flat_map(|&a| costs.operand_values(a)) {
                live.insert(v);
            }
            peak = peak.max(live.halves);
        }
    }
    Pressure {
        usage: RegisterUse {
            peak: peak.div_ceil(2) as u32,
            mean: after_sum as f64 / points.max(1) as f64 / 2.0,
        },
        folded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metalsim_isa::parse_module;

    /// The register use of a kernel whose blocks are `body`.
    fn check(header: &str, body: &str) -> RegisterUse {
        let text = format!("kernel k {{\n{header}{body}}}\n");
        let m = parse_module(&text).unwrap();
        let f = &m.functions[0];
        register_use(f, &Cfg::new(f)).usage
    }

    const BUFFER: &str = "  param buffer(0) out device type \"float\" size 4 align 4\n";

    #[test]
    fn registers_are_counted_in_halves_and_rounded_up() {
        // Three 16-bit values live at once: three halves, two 32-bit registers.
        let u = check(
            "",
            "bb0:\n v0 = sreg.thread_index_in_simdgroup\n v1 = cvt.u32.f16 v0\n v2 = add.f16 v1, v1\n v3 = add.f16 v2, v1\n v4 = add.f16 v3, v2\n v5 = add.f16 v4, v1\n ret\n",
        );
        assert_eq!(u.peak, 2);
        // The same with 32-bit values: six halves, three registers.
        let u = check(
            "",
            "bb0:\n v0 = sreg.thread_index_in_simdgroup\n v1 = cvt.u32.f32 v0\n v2 = add.f32 v1, v1\n v3 = add.f32 v2, v1\n v4 = add.f32 v3, v2\n v5 = add.f32 v4, v1\n ret\n",
        );
        assert_eq!(u.peak, 3);
    }

    #[test]
    fn a_buffer_base_plus_index_is_the_memory_instructions_addressing() {
        // The 64-bit address is never held: the index (32 bits) lives to the store, and
        // the buffer base is a uniform register.
        let u = check(
            BUFFER,
            "bb0:\n v0 = buffer_addr.0\n v1 = sreg.thread_position_in_grid.x\n v2 = ptradd.4 v0, v1\n v3 = cvt.u32.f32 v1\n st.device.f32 v2, v3\n ret\n",
        );
        assert_eq!(u.peak, 2);
        // An address used otherwise (here stored as a value) is held, 64 bits, next to
        // the index that is still needed.
        let u = check(
            BUFFER,
            "bb0:\n v0 = buffer_addr.0\n v1 = sreg.thread_position_in_grid.x\n v2 = ptradd.4 v0, v1\n st.device.u64 v2, v2\n v3 = cvt.u32.f32 v1\n st.device.f32 v2, v3\n ret\n",
        );
        assert_eq!(u.peak, 3);
    }

    #[test]
    fn constant_offsets_are_immediates_of_one_held_address() {
        // p = out + x * 4 is held (its uses are address arithmetic), once; each access
        // adds a constant as an immediate, so the four loaded values and p are live.
        let mut body = String::from(
            "bb0:\n v0 = buffer_addr.0\n v1 = sreg.thread_position_in_grid.x\n v2 = ptradd.4 v0, v1\n",
        );
        for k in 0..4 {
            body += &format!(
                " v{} = const.i64 {}\n v{} = ptradd.1 v2, v{}\n v{} = ld.device.f32 v{}\n",
                10 + k,
                4 * k,
                20 + k,
                10 + k,
                30 + k,
                20 + k
            );
        }
        body += " v40 = add.f32 v30, v31\n v41 = add.f32 v32, v33\n v42 = add.f32 v40, v41\n st.device.f32 v2, v42\n ret\n";
        let u = check(BUFFER, &body);
        // Four f32 (8 halves) and the 64-bit p (4 halves) at the last load.
        assert_eq!(u.peak, 6);
    }

    #[test]
    fn threadgroup_addresses_take_one_half_through_loops() {
        // q walks a threadgroup allocation through a loop parameter: one half, like the
        // 16-bit counter next to it; the loaded value and the sum take two each.
        let u = check(
            "  tgalloc 0 size 4096 align 4 \"t\"\n",
            "bb0:\n v0 = tg_addr.0\n v1 = sreg.thread_index_in_threadgroup\n v2 = ptradd.4 v0, v1\n v3 = const.f32 0.0\n v4 = const.u16 0\n br bb1(v2, v3, v4)\nbb1(v5:u64, v6:f32, v7:u16):\n v8 = ld.threadgroup.f32 v5\n v9 = add.f32 v6, v8\n v10 = const.i64 128\n v11 = ptradd.1 v5, v10\n v12 = const.u16 1\n v13 = add.u16 v7, v12\n v14 = const.u16 8\n v15 = cmp.lt.u16 v13, v14\n br_if v15, bb1(v11, v9, v13), bb2\nbb2:\n ret\n",
        );
        // Before the add: q (1), the counter (1), the sum (2) and the loaded value (2); a
        // 64-bit q would make it 9 halves, 5 registers.
        assert_eq!(u.peak, 3);
        // A 64-bit parameter also passed a device address is held at 64 bits; the
        // threadgroup address passed to it, at 16.
        let text = format!(
            "kernel k {{\n  tgalloc 0 size 4096 align 4 \"t\"\n{BUFFER}{}}}\n",
            "bb0:\n v0 = tg_addr.0\n v1 = buffer_addr.0\n v2 = sreg.thread_index_in_threadgroup\n v3 = ptradd.4 v0, v2\n v4 = ptradd.4 v1, v2\n v5 = const.u32 0\n v6 = cmp.eq.u32 v2, v5\n br_if v6, bb1(v3), bb1(v4)\nbb1(v7:u64):\n v8 = ld.device.f32 v7\n st.device.f32 v7, v8\n ret\n"
        );
        let m = parse_module(&text).unwrap();
        let f = &m.functions[0];
        let costs = Costs::new(f, Cfg::new(f).reverse_postorder());
        assert_eq!([3, 4, 7].map(|v| costs.halves[v]), [1, 4, 4]);
    }
}
