//! Register slots: every SSA value gets a slot in one of the two banks (32-bit or 64-bit).
//!
//! Constants get slots of their own that nothing else uses (the decoder pre-fills them in
//! a template register file). Every other value gets a slot by a tree scan over the
//! blocks in dominance order: a slot is reused once the value in it is dead. This is sound
//! per lane even under divergence, because every lane follows one path of the CFG and the
//! engine writes a register only in the lanes that execute the instruction; a cross-lane
//! read only reads lanes that execute it, for which the operand is live.
//!
//! The registers a thread is charged for occupancy are counted apart, in [`pressure`], as
//! an Apple GPU would hold the function.

use metalsim_isa::{Block, Cfg, Function, Op, Value};

mod pressure;

/// Which register bank a value lives in.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) enum Bank {
    /// `[u32; 32]` per slot: every type of at most 32 bits.
    B32 = 0,
    /// `[u64; 32]` per slot: `i64`, `u64` and addresses.
    B64 = 1,
}

/// The slot assignment of a function.
#[derive(Clone, Debug)]
pub(crate) struct Slots {
    /// Slot of each value (indexed by `Value`); `u32::MAX` for values never placed.
    pub slot: Vec<u32>,
    /// Slots used in each bank (constants first).
    pub count: [u32; 2],
    /// Constant slots with their bits: `(bank, slot, bits)`.
    pub constants: Vec<(Bank, u32, u64)>,
    /// Whether each value (indexed by `Value`) is a `ptradd` folded into the addressing of
    /// the memory instructions that use it, as [`pressure`] decides.
    pub folded: Vec<bool>,
}

/// How many 32-bit registers a thread holds (counted in 16-bit halves, rounded up; see
/// [`pressure`]): at most at once, and on average over the instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct RegisterUse {
    /// The most live at once.
    pub peak: u32,
    /// The mean over the instructions of the registers live after each.
    pub mean: f64,
}

impl Slots {
    /// The bank of a value.
    pub fn bank(f: &Function, v: Value) -> Bank {
        if f.value_type(v).is_wide() {
            Bank::B64
        } else {
            Bank::B32
        }
    }
}

fn bank_index(b: Bank) -> usize {
    match b {
        Bank::B32 => 0,
        Bank::B64 => 1,
    }
}

/// Live-in and live-out sets of every block (indexed by block), by iterating the backward
/// data-flow equations to their fixed point: `gen_` and `kill` are each block's upward-exposed
/// uses and definitions over `nv` values, `rpo` the blocks in reverse postorder.
fn liveness(
    cfg: &Cfg,
    rpo: &[Block],
    gen_: &[BitSet],
    kill: &[BitSet],
    nv: usize,
) -> (Vec<BitSet>, Vec<BitSet>) {
    let nb = gen_.len();
    let mut live_in = vec![BitSet::new(nv); nb];
    let mut live_out = vec![BitSet::new(nv); nb];
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().rev() {
            let mut out = BitSet::new(nv);
            for s in cfg.successors(b) {
                out.union_with(&live_in[s.index()]);
            }
            let mut inn = out.clone();
            for (w, (kw, gw)) in inn
                .0
                .iter_mut()
                .zip(kill[b.index()].0.iter().zip(&gen_[b.index()].0))
            {
                *w = (*w & !kw) | gw;
            }
            if inn != live_in[b.index()] {
                live_in[b.index()] = inn;
                changed = true;
            }
            live_out[b.index()] = out;
        }
    }
    (live_in, live_out)
}

/// A fixed-size bit set over values.
#[derive(Clone, PartialEq, Eq)]
struct BitSet(Vec<u64>);

impl BitSet {
    fn new(n: usize) -> Self {
        BitSet(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
    fn contains(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 != 0
    }
    fn union_with(&mut self, o: &BitSet) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            let mut b = bits;
            std::iter::from_fn(move || {
                if b == 0 {
                    None
                } else {
                    let t = b.trailing_zeros() as usize;
                    b &= b - 1;
                    Some(w * 64 + t)
                }
            })
        })
    }
}

/// Free/used slots of one bank while scanning a block.
struct Pool {
    used: Vec<bool>,
    high: u32,
}

impl Pool {
    fn new(base: u32) -> Self {
        Pool {
            used: Vec::new(),
            high: base,
        }
    }
    fn take(&mut self, base: u32) -> u32 {
        let i = self.used.iter().position(|u| !u).unwrap_or(self.used.len());
        if i == self.used.len() {
            self.used.push(false);
        }
        self.used[i] = true;
        let slot = base + i as u32;
        self.high = self.high.max(slot + 1);
        slot
    }
    fn mark(&mut self, base: u32, slot: u32) {
        let i = (slot - base) as usize;
        if self.used.len() <= i {
            self.used.resize(i + 1, false);
        }
        self.used[i] = true;
    }
    fn free(&mut self, base: u32, slot: u32) {
        if let Some(u) = self.used.get_mut((slot - base) as usize) {
            *u = false;
        }
    }
    fn clear(&mut self) {
        self.used.iter_mut().for_each(|u| *u = false);
    }
}

/// Assigns slots to every value of the reachable blocks of a verified function.
pub(crate) fn assign(f: &Function, cfg: &Cfg) -> Slots {
    let nv = f.value_types.len();
    let mut slot = vec![u32::MAX; nv];
    let mut is_const = vec![false; nv];
    let rpo: Vec<Block> = cfg.reverse_postorder().to_vec();

    // Constants: one shared slot per distinct (bank, bits).
    let mut constants: Vec<(Bank, u32, u64)> = Vec::new();
    let mut count = [0u32; 2];
    for &b in &rpo {
        for &i in &f.block(b).insts {
            let inst = f.inst(i);
            if let (Op::Const(bits), Some(r)) = (inst.op, inst.result()) {
                let bank = Slots::bank(f, r);
                let s = match constants.iter().find(|c| c.0 == bank && c.2 == bits) {
                    Some(c) => c.1,
                    None => {
                        let s = count[bank_index(bank)];
                        count[bank_index(bank)] += 1;
                        constants.push((bank, s, bits));
                        s
                    }
                };
                slot[r.index()] = s;
                is_const[r.index()] = true;
            }
        }
    }
    let base = count;

    // Liveness (constants excluded: their slots are never reused), over a dense numbering
    // of the values the reachable blocks define.
    let mut dense = vec![u32::MAX; nv];
    let mut values: Vec<Value> = Vec::new();
    for &b in &rpo {
        let data = f.block(b);
        let results = data
            .insts
            .iter()
            .flat_map(|&i| f.inst(i).results.iter().copied());
        for v in data.params.iter().copied().chain(results) {
            if !is_const[v.index()] {
                dense[v.index()] = values.len() as u32;
                values.push(v);
            }
        }
    }
    let d = |v: Value| dense[v.index()] as usize;
    let nv = values.len();
    let nb = f.blocks.len();
    let mut gen_ = vec![BitSet::new(nv); nb];
    let mut kill = vec![BitSet::new(nv); nb];
    for &b in &rpo {
        let data = f.block(b);
        let (g, k) = (&mut gen_[b.index()], &mut kill[b.index()]);
        for p in &data.params {
            k.insert(d(*p));
        }
        let use_ = |v: Value, k: &BitSet, g: &mut BitSet| {
            if !is_const[v.index()] && !k.contains(d(v)) {
                g.insert(d(v));
            }
        };
        for &i in &data.insts {
            let inst = f.inst(i);
            for &a in &inst.args {
                use_(a, k, g);
            }
            for &r in &inst.results {
                if !is_const[r.index()] {
                    k.insert(d(r));
                }
            }
        }
        for v in data.term.uses() {
            use_(v, k, g);
        }
    }
    let (live_in, live_out) = liveness(cfg, &rpo, &gen_, &kill, nv);

    // Tree scan in reverse postorder (every block after its dominators).
    let mut pools = [Pool::new(base[0]), Pool::new(base[1])];
    for &b in &rpo {
        let data = f.block(b);
        for p in pools.iter_mut() {
            p.clear();
        }
        for v in live_in[b.index()].iter().map(|i| values[i]) {
            let bk = bank_index(Slots::bank(f, v));
            pools[bk].mark(base[bk], slot[v.index()]);
        }
        // Backward pass: which operands die at each instruction, which results are dead.
        let mut live = live_out[b.index()].clone();
        for v in data.term.uses() {
            if !is_const[v.index()] {
                live.insert(d(v));
            }
        }
        let n = data.insts.len();
        let mut dies: Vec<Vec<Value>> = vec![Vec::new(); n];
        let mut dead_results: Vec<Vec<Value>> = vec![Vec::new(); n];
        for (k, &i) in data.insts.iter().enumerate().rev() {
            let inst = f.inst(i);
            for &r in &inst.results {
                if !is_const[r.index()] {
                    if !live.contains(d(r)) {
                        dead_results[k].push(r);
                    }
                    live.remove(d(r));
                }
            }
            for &a in &inst.args {
                if !is_const[a.index()] && !live.contains(d(a)) {
                    if !dies[k].contains(&a) {
                        dies[k].push(a);
                    }
                    live.insert(d(a));
                }
            }
        }
        for &p in &data.params {
            let bk = bank_index(Slots::bank(f, p));
            slot[p.index()] = pools[bk].take(base[bk]);
        }
        for &p in &data.params {
            if !live.contains(d(p)) {
                let bk = bank_index(Slots::bank(f, p));
                pools[bk].free(base[bk], slot[p.index()]);
            }
        }
        for (k, &i) in data.insts.iter().enumerate() {
            let inst = f.inst(i);
            // Take every result's slot before freeing the operands, so no instruction
            // writes a slot it still reads (and the results of one instruction differ).
            for &r in &inst.results {
                if !is_const[r.index()] {
                    let rb = bank_index(Slots::bank(f, r));
                    slot[r.index()] = pools[rb].take(base[rb]);
                }
            }
            for &a in dies[k].iter().chain(&dead_results[k]) {
                let bk = bank_index(Slots::bank(f, a));
                pools[bk].free(base[bk], slot[a.index()]);
            }
        }
    }
    let count = [pools[0].high.max(base[0]), pools[1].high.max(base[1])];
    Slots {
        slot,
        count,
        constants,
        folded: pressure::folded(f, cfg),
    }
}

/// Registers per thread, in 32-bit registers, as Apple's register file would hold the
/// reachable blocks of a verified function (not the slots of [`assign`]: see
/// [`pressure`]), for occupancy, with a uniform register file of `uniform_halves` 16-bit
/// halves.
pub(crate) fn register_use(f: &Function, cfg: &Cfg, uniform_halves: u32) -> RegisterUse {
    pressure::register_use(f, cfg, uniform_halves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use metalsim_isa::parse_module;

    fn slots_of(body: &str) -> (Function, Slots) {
        let text = format!("kernel k {{\n{body}}}\n");
        let m = parse_module(&text).unwrap();
        let f = m.functions[0].clone();
        let cfg = Cfg::new(&f);
        let s = assign(&f, &cfg);
        (f, s)
    }

    #[test]
    fn dead_values_give_their_slots_back() {
        // v1..v4 form a chain: each dies where the next is made, so two slots suffice.
        let (_, s) = slots_of(
            "bb0:\n v0 = const.u32 1\n v1 = sreg.thread_index_in_simdgroup\n v2 = add.u32 v1, v0\n v3 = add.u32 v2, v0\n v4 = add.u32 v3, v0\n ret\n",
        );
        assert_eq!(s.count[0], 1 + 2);
        assert_eq!(s.constants.len(), 1);
    }

    #[test]
    fn results_of_one_instruction_get_distinct_slots_apart_from_its_operands() {
        let (f, s) = slots_of(
            "bb0:\n v0 = sreg.thread_index_in_simdgroup\n v1 = cvt.u32.u64 v0\n v2, v3, v4, v5 = ld.device.x4.f32 v1\n v6, v7 = matrix_mac.f32 v2, v3, v4, v5, v2, v3\n v8 = add.f32 v6, v7\n v9, v10 = ld.device.x2.f32 v1\n ret\n",
        );
        let sl = |v: u32| s.slot[v as usize];
        for group in [&[2, 3, 4, 5][..], &[6, 7, 2, 3, 4, 5], &[9, 10]] {
            for (i, &x) in group.iter().enumerate() {
                for &y in &group[i + 1..] {
                    assert_ne!(sl(x), sl(y), "v{x} and v{y} share a slot in {f}");
                }
            }
        }
        // Dead results give their slots back: v9 and v10 reuse dead slots.
        assert!(s.count[0] <= 7, "{} slots", s.count[0]);
    }

    #[test]
    fn values_live_across_a_loop_keep_their_slots() {
        let (f, s) = slots_of(
            "bb0:\n v0 = const.u32 0\n v9 = sreg.thread_index_in_simdgroup\n br bb1(v0)\nbb1(v1:u32):\n v2 = const.u32 1\n v3 = add.u32 v1, v2\n v4 = cmp.lt.u32 v3, v9\n br_if v4, bb1(v3), bb2\nbb2:\n ret\n",
        );
        let sl = |v: u32| s.slot[v as usize];
        // v9 is live through the loop: nothing in the loop may share its slot.
        for v in [1, 3, 4] {
            assert_ne!(sl(v), sl(9), "v{v} shares v9's slot in {f}");
        }
    }
}
