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
//! - Values the same for the whole dispatch are computed once, by a preamble, and held in
//!   uniform registers, which ALU instructions read as any source of at most 32 bits
//!   (Mesa, `agx_lower_uniform_sources.c`: memory instructions take a uniform only as
//!   their base, the default case "ALU cannot access 64-bit uniforms"; Mesa's
//!   `agx_nir_opt_preamble.c` hoists them, and Apple's own compiler does the same: DJ's
//!   disassembly of its output loads from a buffer at a uniform address, computes, and
//!   ends with `uniform_store`s). Such values are loads from the `constant` address space
//!   at a dispatch-uniform address (kernel arguments such as `constant uint& n`), the
//!   grid's and dispatched threadgroup's sizes, and ALU results and addresses of only
//!   such values and constants. Those the rest of the function reads take no
//!   general-purpose register while the file holds them (its size is the model's
//!   `occupancy.uniform_registers`, 256 words on Apple GPUs), addresses first;
//!   the rest, and 64-bit values other than addresses, are held in general-purpose
//!   registers. A uniform operand an instruction cannot read from the file (a memory
//!   instruction's index or data, a cross-lane or matrix operand) takes a copy live only
//!   up to that instruction. Values used only within the preamble take nothing. The
//!   preamble's instructions still run in every SIMD-group (how often Apple's preamble
//!   runs is not published): only the registers are modelled.
//!
//! Constants are immediates and take none. Thread-memory (stack) addresses and every other
//! 64-bit value keep four halves. The peak is the most halves live at once
//! (results counted with the values live across their instruction): what an allocator
//! that packs SSA values without waste needs, as Apple's compiler is taken to.

use metalsim_isa::{Block, Cfg, Function, InstData, Op, Space, SpecialReg, Type, Value};

use super::{BitSet, RegisterUse, liveness};

/// Half-registers of a value that takes none.
const NONE: u32 = 0;

/// What each value costs and which values a memory instruction addresses through.
struct Costs {
    /// Half-registers of each value (indexed by `Value`).
    halves: Vec<u32>,
    /// For a `ptradd` folded into the addressing of its memory instructions, its operands.
    folded: Vec<Option<[Value; 2]>>,
    /// Whether each value is a scalar the shader reads from a uniform register.
    uniform_scalar: Vec<bool>,
    /// Whether each value is the same for the whole dispatch (computed by the preamble).
    preamble: Vec<bool>,
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

/// Whether `op` is an ALU operation, whose every source may be a uniform register of at
/// most 32 bits (Mesa, `agx_lower_uniform_sources.c`).
fn is_alu(op: Op) -> bool {
    matches!(
        op,
        Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Div
            | Op::Rem
            | Op::Neg
            | Op::Abs
            | Op::Min
            | Op::Max
            | Op::Fma
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::Not
            | Op::Shl
            | Op::Shr
            | Op::Clz
            | Op::Ctz
            | Op::Popcount
            | Op::MulHi
            | Op::Math(_)
            | Op::PreciseMath(_)
            | Op::Int(_)
            | Op::Cmp(_)
            | Op::Select
            | Op::Cvt { .. }
            | Op::Bitcast { .. }
    )
}

/// Whether a special register is the same for every thread of a dispatch (the grid's and
/// the dispatched threadgroup's sizes; DJ names `threads_per_grid` as a uniform).
fn dispatch_uniform_sreg(s: SpecialReg) -> bool {
    use SpecialReg as S;
    matches!(
        s,
        S::ThreadsPerGridX
            | S::ThreadsPerGridY
            | S::ThreadsPerGridZ
            | S::DispatchThreadsPerThreadgroupX
            | S::DispatchThreadsPerThreadgroupY
            | S::DispatchThreadsPerThreadgroupZ
            | S::ThreadgroupsPerGridX
            | S::ThreadgroupsPerGridY
            | S::ThreadgroupsPerGridZ
            | S::ThreadExecutionWidth
            | S::ThreadsPerSimdgroup
            | S::DispatchSimdgroupsPerThreadgroup
            | S::DispatchQuadgroupsPerThreadgroup
    )
}

/// Whether an instruction belongs to the preamble: every result is dispatch-uniform
/// (`dispatch_uniform`, by value), so it runs once, apart from the SIMD-groups.
fn in_preamble(inst: &InstData, dispatch_uniform: &[bool]) -> bool {
    !inst.results.is_empty() && inst.results.iter().all(|r| dispatch_uniform[r.index()])
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
    /// The costs of the values of `f`, with a uniform register file of `uniform_halves`
    /// 16-bit halves.
    fn new(f: &Function, rpo: &[Block], uniform_halves: u32) -> Costs {
        let nv = f.value_types.len();
        let defs = definitions(f, rpo);
        let is_const = |v: Value| matches!(defs[v.index()], Some((Op::Const(_), _)));

        // Values the same for the whole dispatch (constants included), in definition
        // order: block parameters are never counted as such.
        let mut dispatch_uniform = vec![false; nv];
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
                    let a = &inst.args;
                    let all_uniform = a.iter().all(|v| dispatch_uniform[v.index()]);
                    let d = match inst.op {
                        Op::Const(_)
                        | Op::BufferAddr(_)
                        | Op::DataAddr(_)
                        | Op::ThreadgroupAddr(_)
                        | Op::ThreadgroupParamAddr(_) => true,
                        Op::Sreg(s) => dispatch_uniform_sreg(s),
                        Op::PtrAdd { .. } => all_uniform,
                        Op::Load(Space::Constant) | Op::LoadVec(Space::Constant, _) => {
                            uniform[a[0].index()] && all_uniform
                        }
                        op => is_alu(op) && all_uniform,
                    };
                    for &r in &inst.results {
                        dispatch_uniform[r.index()] = d;
                    }
                    let Some(r) = inst.result() else { continue };
                    let (u, t) = match inst.op {
                        Op::BufferAddr(_) | Op::DataAddr(_) => (true, false),
                        Op::ThreadgroupAddr(_) | Op::ThreadgroupParamAddr(_) => (true, true),
                        Op::PtrAdd { .. } => (
                            uniform[a[0].index()] && dispatch_uniform[a[1].index()],
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
        // What the shader (not the preamble) reads, through folded addresses: the
        // preamble's values the shader reads are held in uniform registers.
        let mut read_by_shader = vec![false; nv];
        for &b in rpo {
            let data = f.block(b);
            for &i in &data.insts {
                let inst = f.inst(i);
                if in_preamble(inst, &dispatch_uniform) {
                    continue;
                }
                for &a in &inst.args {
                    read_by_shader[a.index()] = true;
                    for o in folded[a.index()].into_iter().flatten() {
                        read_by_shader[o.index()] = true;
                    }
                }
            }
            for v in data.term.uses() {
                read_by_shader[v.index()] = true;
            }
        }

        // The uniform registers the shader reads: addresses first (memory instructions
        // take their base from the low half of the file), then scalars of at most 32
        // bits in definition order, as long as the file holds them; the rest are held
        // in general-purpose registers. A 64-bit value other than an address stays in
        // general-purpose registers (ALU instructions cannot read 64-bit uniforms).
        let mut uniform_file = 0u32;
        for v in 0..nv {
            if uniform[v] && read_by_shader[v] && folded[v].is_none() {
                uniform_file += if threadgroup[v] { 1 } else { 4 };
            }
        }
        let mut uniform_scalar = vec![false; nv];
        for &b in rpo {
            for &i in &f.block(b).insts {
                for &r in &f.inst(i).results {
                    let (v, ty) = (r.index(), f.value_type(r));
                    if dispatch_uniform[v]
                        && !uniform[v]
                        && !is_const(r)
                        && read_by_shader[v]
                        && ty.bits() <= 32
                        && uniform_file + halves_of(ty) <= uniform_halves
                    {
                        uniform_file += halves_of(ty);
                        uniform_scalar[v] = true;
                    }
                }
            }
        }

        let halves = (0..nv)
            .map(|v| {
                let value = Value(v as u32);
                let preamble_only = dispatch_uniform[v] && !read_by_shader[v];
                if is_const(value)
                    || uniform[v]
                    || uniform_scalar[v]
                    || preamble_only
                    || folded[v].is_some()
                {
                    NONE
                } else if threadgroup[v] {
                    1
                } else {
                    halves_of(f.value_type(value))
                }
            })
            .collect();
        Costs {
            halves,
            folded,
            uniform_scalar,
            preamble: dispatch_uniform,
        }
    }

    /// The half-registers an instruction of the shader (not of the preamble) needs for
    /// copies of uniform operands it cannot read from the uniform file, live only up to
    /// it: memory instructions read a uniform only as their base address, and
    /// instructions other than ALU ones (cross-lane, matrix) none.
    fn copies(&self, f: &Function, inst: &InstData) -> u64 {
        if in_preamble(inst, &self.preamble) {
            return 0;
        }
        let memory = addresses_memory(inst.op);
        let alu = is_alu(inst.op) || matches!(inst.op, Op::PtrAdd { .. });
        let mut copied: Vec<Value> = Vec::new();
        let mut need = |v: Value| {
            if self.uniform_scalar[v.index()] && !copied.contains(&v) {
                copied.push(v);
            }
        };
        for (k, &a) in inst.args.iter().enumerate() {
            if memory && k == 0 {
                // The base is read from the uniform file; a folded index is not.
                if let Some([_, index]) = self.folded[a.index()] {
                    need(index);
                }
            } else if !alu {
                need(a);
            }
        }
        copied
            .iter()
            .map(|&v| halves_of(f.value_type(v)) as u64)
            .sum()
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

/// Whether each value (indexed by `Value`) of the reachable blocks of a verified function
/// is a `ptradd` folded into the addressing of the memory instructions that use it (it
/// takes no register, and the timing model charges it no issue slot).
pub(super) fn folded(f: &Function, cfg: &Cfg) -> Vec<bool> {
    // The size of the uniform file decides which scalars take a register, never what
    // folds (addresses are placed in it first): any size gives the same answer.
    let costs = Costs::new(f, cfg.reverse_postorder(), 0);
    costs.folded.iter().map(Option::is_some).collect()
}

/// The registers per thread of the reachable blocks of a verified function, as the module
/// documentation describes, with a uniform register file of `uniform_halves` 16-bit
/// halves.
pub(super) fn register_use(f: &Function, cfg: &Cfg, uniform_halves: u32) -> RegisterUse {
    let rpo = cfg.reverse_postorder();
    let costs = Costs::new(f, rpo, uniform_halves);
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
            peak = peak.max(live.halves + costs.copies(f, inst));
        }
    }
    RegisterUse {
        peak: peak.div_ceil(2) as u32,
        mean: after_sum as f64 / points.max(1) as f64 / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metalsim_isa::parse_module;

    /// The uniform file of an Apple GPU (M1's model) in halves.
    fn apple_uniform_halves() -> u32 {
        metalsim_models::builtin("m1")
            .unwrap()
            .occupancy
            .uniform_registers
            * 2
    }

    /// The register use of a kernel whose blocks are `body`, with a uniform file of
    /// `uniform_halves`.
    fn check_with(header: &str, body: &str, uniform_halves: u32) -> RegisterUse {
        let text = format!("kernel k {{\n{header}{body}}}\n");
        let m = parse_module(&text).unwrap();
        let f = &m.functions[0];
        register_use(f, &Cfg::new(f), uniform_halves)
    }

    /// The register use of a kernel whose blocks are `body` on an Apple GPU.
    fn check(header: &str, body: &str) -> RegisterUse {
        check_with(header, body, apple_uniform_halves())
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

    /// A kernel argument `constant uint& n` (buffer 0) and an output buffer (buffer 1).
    const ARGUMENT: &str = "  param buffer(0) n constant readonly ref type \"uint\" size 4 align 4\n  param buffer(1) out device type \"uint\" size 4 align 4\n";

    /// A loop over `i < n` that keeps `i`, a thread value and the sum live, with `n`
    /// loaded from `space`.
    fn loop_over_argument(space: &str) -> String {
        format!(
            "bb0:\n v0 = buffer_addr.0\n v1 = ld.{space}.u32 v0\n v2 = sreg.thread_position_in_grid.x\n v3 = const.u32 0\n v4 = const.u32 1\n v20 = mul.u32 v1, v1\n br bb1(v3, v3)\nbb1(v5:u32, v6:u32):\n v7 = add.u32 v5, v2\n v8 = add.u32 v6, v7\n v9 = add.u32 v8, v20\n v10 = add.u32 v5, v4\n v11 = cmp.lt.u32 v10, v1\n br_if v11, bb1(v10, v9), bb2\nbb2:\n v12 = buffer_addr.1\n v13 = ptradd.4 v12, v2\n st.device.u32 v13, v9\n ret\n"
        )
    }

    #[test]
    fn dispatch_uniform_scalars_live_in_uniform_registers() {
        // n (a `constant` load at a buffer's address) and n * n are the same for the
        // whole dispatch: the loop holds i, the thread's x and the sum (6 halves) and,
        // at the adds, one temporary (2): 8 halves, 4 registers.
        assert_eq!(check(ARGUMENT, &loop_over_argument("constant")).peak, 4);
        // Loaded from `device` memory, n can change during the dispatch: n and n * n
        // are held too, 4 halves more.
        assert_eq!(check(ARGUMENT, &loop_over_argument("device")).peak, 6);
    }

    #[test]
    fn a_uniform_operand_a_memory_instruction_cannot_take_is_copied_up_to_it() {
        // n stored as data: the store reads it from a general-purpose copy (2 halves)
        // next to the index (2 halves); n itself takes none before.
        let u = check(
            ARGUMENT,
            "bb0:\n v0 = buffer_addr.0\n v1 = ld.constant.u32 v0\n v2 = sreg.thread_position_in_grid.x\n v3 = buffer_addr.1\n v4 = ptradd.4 v3, v2\n st.device.u32 v4, v1\n ret\n",
        );
        assert_eq!(u.peak, 2);
        // Stored as data next to three thread values: the copy is the fourth register.
        let u = check(
            ARGUMENT,
            "bb0:\n v0 = buffer_addr.0\n v1 = ld.constant.u32 v0\n v2 = sreg.thread_position_in_grid.x\n v5 = sreg.thread_position_in_grid.y\n v6 = sreg.thread_position_in_grid.z\n v3 = buffer_addr.1\n v4 = ptradd.4 v3, v2\n st.device.u32 v4, v1\n v7 = add.u32 v5, v6\n st.device.u32 v4, v7\n ret\n",
        );
        assert_eq!(u.peak, 4);
    }

    #[test]
    fn uniforms_past_the_file_are_held_in_registers() {
        // 300 kernel-argument words read after the thread's x: the buffer address takes
        // 4 of the file's 512 halves, 254 words fit, and the last 46 are held (92
        // halves) until the chain of adds reads them, next to the sum (2).
        let mut body =
            String::from("bb0:\n v0 = buffer_addr.0\n v1 = sreg.thread_position_in_grid.x\n");
        for k in 0..300 {
            body += &format!(
                " v{} = const.i64 {}\n v{} = ptradd.1 v0, v{}\n v{} = ld.constant.u32 v{}\n",
                1000 + k,
                4 * k,
                2000 + k,
                1000 + k,
                3000 + k,
                2000 + k
            );
        }
        let mut acc = 1;
        for k in 0..300 {
            body += &format!(" v{} = add.u32 v{acc}, v{}\n", 4000 + k, 3000 + k);
            acc = 4000 + k;
        }
        body += &format!(
            " v9 = buffer_addr.1\n v10 = ptradd.4 v9, v1\n st.device.u32 v10, v{acc}\n ret\n"
        );
        let u = check(ARGUMENT, &body);
        // 92 halves of held words, x and the sum: 96 halves, 48 registers.
        assert_eq!(u.peak, 48);
        // With the H100's 63 words the address takes 4 halves, 61 words fit and 239
        // are held (478 halves): 482 halves, 241 registers.
        assert_eq!(check_with(ARGUMENT, &body, 126).peak, 241);
        // The model's figure is the file's size.
        let h100 = metalsim_models::builtin("h100").unwrap();
        assert_eq!(h100.occupancy.uniform_registers * 2, 126);
        assert_eq!(apple_uniform_halves(), 512);
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
        let costs = Costs::new(f, Cfg::new(f).reverse_postorder(), apple_uniform_halves());
        assert_eq!([3, 4, 7].map(|v| costs.halves[v]), [1, 4, 4]);
    }
}
