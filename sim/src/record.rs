//! The step-by-step record of one SIMD-group (`RunOptions::record_simdgroup`): for each
//! instruction it executes, the pc, the active lanes, the registers it reads (values
//! before) and writes (values after) under their ISA names, and what happened to control
//! flow, in words.
//!
//! The decoded program knows register slots, not ISA values, so [`RegisterMap`] rebuilds
//! the decoder's layout from the [`Function`] (reachable blocks in index order, constants
//! skipped, one terminator per block, edges in terminator order) and names every slot an
//! instruction touches. Nothing here runs unless a recording was asked for.

use metalsim_isa::{Block, Cfg, Function, Op, Space, Terminator, Type, Value, scalar};
use metalsim_traces::{RecordedStep, RegisterValues, SimdgroupRecording};

use crate::exec::{self, Context, Effect, Executed};
use crate::fault::Trap;
use crate::program::{EXIT, Program};
use crate::regalloc::{self, Bank, Slots};
use crate::regs::Registers;
use crate::simt::Reconvergence;

/// The most steps a recording keeps; later steps set `truncated`.
pub(crate) const MAX_STEPS: usize = 100_000;

/// How a register's lanes are written out.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Format {
    /// `true` / `false`.
    Bool,
    /// Decimal, sign-extended for signed types.
    Int(Type),
    /// A float of the type, shortest round-trip decimal.
    Float(Type),
    /// An address, in hex.
    Pointer,
}

/// One ISA value and where it lives.
#[derive(Clone, Debug)]
struct Named {
    /// `v12`.
    name: String,
    /// `f32`, `ptr.device`...
    ty: String,
    format: Format,
    bank: Bank,
    slot: u32,
}

impl Named {
    /// The value's 32 lanes as they stand in `regs`.
    fn values(&self, regs: &Registers) -> RegisterValues {
        let lanes = match self.bank {
            Bank::B32 => regs.r32.get(self.slot as usize).map(|l| {
                l.iter()
                    .map(|&b| format_bits(self.format, b as u64))
                    .collect()
            }),
            Bank::B64 => regs
                .r64
                .get(self.slot as usize)
                .map(|l| l.iter().map(|&b| format_bits(self.format, b)).collect()),
        };
        RegisterValues {
            name: self.name.clone(),
            ty: self.ty.clone(),
            lanes: lanes.unwrap_or_default(),
        }
    }
}

/// One lane's bits written out for its type: floats like the ISA printer (shortest
/// round-trip decimal; 16-bit floats converted to it too, and `inf`/`NaN` by name),
/// integers in decimal, pointers in hex, predicates as `true`/`false`.
fn format_bits(format: Format, bits: u64) -> String {
    match format {
        Format::Bool => (if bits != 0 { "true" } else { "false" }).into(),
        Format::Int(ty) => scalar::int_value(bits, ty).to_string(),
        Format::Pointer => format!("{bits:#x}"),
        Format::Float(ty) => {
            let x = match ty {
                Type::F16 => half::f16::from_bits(bits as u16).to_f32(),
                Type::BF16 => half::bf16::from_bits(bits as u16).to_f32(),
                _ => f32::from_bits(bits as u32),
            };
            if x.is_nan() {
                "NaN".into()
            } else if x.is_infinite() {
                (if x > 0.0 { "inf" } else { "-inf" }).into()
            } else {
                format!("{x:?}")
            }
        }
    }
}

/// The ISA values behind the decoded program's register slots and pcs.
#[derive(Clone, Debug, Default)]
pub(crate) struct RegisterMap {
    /// Per pc: the values it reads (a branch: its condition and the arguments it passes).
    reads: Vec<Vec<Named>>,
    /// Per pc: the values it defines.
    writes: Vec<Vec<Named>>,
    /// Per edge: the target's parameters it sets.
    edge_params: Vec<Vec<Named>>,
    /// Per edge: its target block.
    edge_block: Vec<Block>,
    /// The first pc of each laid-out block, ascending.
    blocks: Vec<(u32, Block)>,
}

impl RegisterMap {
    /// The map of `f` as decoded into `program`; an empty map (steps without registers)
    /// if the layout does not match the program's.
    pub fn new(f: &Function, program: &Program) -> RegisterMap {
        let cfg = Cfg::new(f);
        let slots = regalloc::assign(f, &cfg);
        let pointers = pointer_spaces(f);
        let named = |v: Value| -> Option<Named> {
            let slot = *slots.slot.get(v.index())?;
            if slot == u32::MAX {
                return None;
            }
            let ty = f.value_type(v);
            let (format, ty_name) = match (pointers[v.index()], ty) {
                (Some(space), _) => (Format::Pointer, format!("ptr.{}", space.name())),
                (None, Type::Pred) => (Format::Bool, ty.name().to_string()),
                (None, Type::F16 | Type::BF16 | Type::F32) => {
                    (Format::Float(ty), ty.name().to_string())
                }
                (None, _) => (Format::Int(ty), ty.name().to_string()),
            };
            Some(Named {
                name: v.to_string(),
                ty: ty_name,
                format,
                bank: Slots::bank(f, v),
                slot,
            })
        };
        let names = |vs: &[Value]| -> Vec<Named> { vs.iter().filter_map(|&v| named(v)).collect() };
        let mut map = RegisterMap::default();
        let mut order: Vec<Block> = cfg.reverse_postorder().to_vec();
        order.sort();
        let mut locs = Vec::new();
        for &b in &order {
            map.blocks.push((map.reads.len() as u32, b));
            let data = f.block(b);
            for &i in &data.insts {
                let inst = f.inst(i);
                if let Op::Const(_) = inst.op {
                    continue;
                }
                map.reads.push(names(&inst.args));
                map.writes.push(names(&inst.results));
                locs.push(f.inst_locs[i.index()]);
            }
            let mut reads = Vec::new();
            if let Terminator::BrIf { cond, .. } = &data.term {
                reads.extend(named(*cond));
            }
            for (target, args) in data.term.targets() {
                reads.extend(names(args));
                map.edge_params.push(names(&f.block(target).params));
                map.edge_block.push(target);
            }
            map.reads.push(reads);
            map.writes.push(Vec::new());
            locs.push(data.term_loc);
        }
        if locs != program.locs || map.edge_block.len() != program.edges.len() {
            return RegisterMap::default();
        }
        map
    }

    /// The block starting at or containing `pc`.
    fn block_at(&self, pc: u32) -> Option<Block> {
        let i = self.blocks.partition_point(|&(start, _)| start <= pc);
        i.checked_sub(1).map(|i| self.blocks[i].1)
    }

    /// The name of the block at `pc` (`bb3`), or the pc when unknown.
    fn block_name(&self, pc: u32) -> String {
        match self.block_at(pc) {
            Some(b) => b.to_string(),
            None => format!("pc {pc}"),
        }
    }

    /// The name of an edge's target block.
    fn edge_target(&self, edge: u32) -> String {
        match self.edge_block.get(edge as usize) {
            Some(b) => b.to_string(),
            None => format!("edge {edge}"),
        }
    }
}

/// The address space of every value that holds a pointer (`None` for the others):
/// addresses of buffers, allocations and data objects, and the values derived from them
/// or used as addresses, followed through `ptradd`, `select` and block parameters.
fn pointer_spaces(f: &Function) -> Vec<Option<Space>> {
    let mut space: Vec<Option<Space>> = vec![None; f.value_types.len()];
    let set = |space: &mut Vec<Option<Space>>, v: Value, s: Space| -> bool {
        match space.get_mut(v.index()) {
            Some(slot @ None) if f.value_type(v).is_wide() => {
                *slot = Some(s);
                true
            }
            _ => false,
        }
    };
    for b in f.block_ids() {
        for &i in &f.block(b).insts {
            let inst = f.inst(i);
            let result = inst.result();
            let seed = match inst.op {
                Op::BufferAddr(n) => Some(
                    f.params
                        .iter()
                        .find(|p| p.index == n && p.kind == metalsim_isa::ParamKind::Buffer)
                        .map_or(Space::Device, |p| p.space),
                ),
                Op::ThreadgroupParamAddr(_) | Op::ThreadgroupAddr(_) => Some(Space::Threadgroup),
                Op::LocalAddr(_) => Some(Space::Thread),
                Op::DataAddr(_) => Some(Space::Constant),
                _ => None,
            };
            if let (Some(s), Some(r)) = (seed, result) {
                set(&mut space, r, s);
            }
            let address_space = match inst.op {
                Op::Load(s)
                | Op::Store(s)
                | Op::Atomic(_, s)
                | Op::LoadVec(s, _)
                | Op::StoreVec(s, _)
                | Op::MatrixLoad(s, _)
                | Op::MatrixStore(s, _) => Some(s),
                _ => None,
            };
            if let (Some(s), Some(&a)) = (address_space, inst.args.first()) {
                set(&mut space, a, s);
            }
        }
    }
    // Propagate along `ptradd`, `select` and edges until nothing changes (each pass sets
    // at least one value, so this ends).
    loop {
        let mut changed = false;
        for b in f.block_ids() {
            let data = f.block(b);
            for &i in &data.insts {
                let inst = f.inst(i);
                let (Some(r), 1) = (inst.result(), inst.results.len()) else {
                    continue;
                };
                let sources: &[Value] = match inst.op {
                    Op::PtrAdd { .. } => &inst.args[..1.min(inst.args.len())],
                    Op::Select if inst.args.len() == 3 => &inst.args[1..],
                    _ => continue,
                };
                for &a in sources {
                    if let Some(s) = space[a.index()] {
                        changed |= set(&mut space, r, s);
                    }
                    if let Some(s) = space[r.index()] {
                        changed |= set(&mut space, a, s);
                    }
                }
            }
            for (target, args) in data.term.targets() {
                for (&p, &a) in f.block(target).params.iter().zip(args) {
                    if let Some(s) = space[a.index()] {
                        changed |= set(&mut space, p, s);
                    }
                    if let Some(s) = space[p.index()] {
                        changed |= set(&mut space, a, s);
                    }
                }
            }
        }
        if !changed {
            return space;
        }
    }
}

/// Runs the next instruction of the recorded SIMD-group ([`exec::execute`]) and records
/// it. Kept out of line so the engine's loop stays small.
#[inline(never)]
pub(crate) fn execute(
    recorder: &mut Recorder,
    cx: &mut Context,
    regs: &mut Registers,
    simt: &mut Reconvergence,
) -> Result<Executed, Trap> {
    recorder.begin(regs, simt);
    let result = exec::execute(cx, regs, simt);
    match &result {
        Ok(ex) => recorder.finish(regs, simt, ex),
        Err(trap) => recorder.fault(&trap.message),
    }
    result
}

/// Records one SIMD-group as it runs.
#[derive(Debug)]
pub(crate) struct Recorder {
    threadgroup: [u32; 3],
    simdgroup: u32,
    map: RegisterMap,
    steps: Vec<RecordedStep>,
    truncated: bool,
    /// The cycle the next step issues at, as the timing model last said.
    cycle: Option<u64>,
    /// The SIMD-group waits at a barrier: its next step is its release.
    waiting: bool,
    /// The last step is begun but not finished.
    open: bool,
}

impl Recorder {
    /// A recorder of SIMD-group `simdgroup` of the threadgroup at `threadgroup`.
    pub fn new(threadgroup: [u32; 3], simdgroup: u32, map: RegisterMap) -> Recorder {
        Recorder {
            threadgroup,
            simdgroup,
            map,
            steps: Vec::new(),
            truncated: false,
            cycle: None,
            waiting: false,
            open: false,
        }
    }

    /// Whether it records this SIMD-group.
    #[inline]
    pub fn records(&self, threadgroup: [u32; 3], simdgroup: u32) -> bool {
        self.simdgroup == simdgroup && self.threadgroup == threadgroup
    }

    /// Sets the cycle the next step issues at.
    pub fn set_cycle(&mut self, cycle: u64) {
        self.cycle = Some(cycle);
    }

    /// Starts the step the SIMD-group is about to execute: its pc, lanes and the values
    /// it reads. A step of lanes waiting at the kernel's end has no instruction: it is
    /// not a step of its own (its event goes to the step before).
    pub fn begin(&mut self, regs: &Registers, simt: &Reconvergence) {
        self.open = false;
        let Some((pc, active)) = simt.top() else {
            return;
        };
        if pc == EXIT {
            return;
        }
        if self.steps.len() >= MAX_STEPS {
            self.truncated = true;
            return;
        }
        let reads = self
            .map
            .reads
            .get(pc as usize)
            .map_or(Vec::new(), |rs| rs.iter().map(|r| r.values(regs)).collect());
        let event = std::mem::take(&mut self.waiting).then(|| "released from barrier".to_string());
        self.steps.push(RecordedStep {
            pc,
            cycle: self.cycle,
            active,
            reads,
            writes: Vec::new(),
            event,
        });
        self.open = true;
    }

    /// Finishes the step begun last, now that it has executed: the values it wrote and
    /// what happened to control flow.
    pub fn finish(&mut self, regs: &Registers, simt: &Reconvergence, ex: &Executed) {
        let mut events = Vec::new();
        match ex.effect {
            Effect::Branch { then_, else_, .. } => {
                if then_.1 != 0 && else_.1 != 0 {
                    events.push(format!(
                        "diverged: {} lanes to {}, {} to {}",
                        then_.1.count_ones(),
                        self.map.edge_target(then_.0),
                        else_.1.count_ones(),
                        self.map.edge_target(else_.0)
                    ));
                }
            }
            Effect::Barrier { .. } => {
                events.push("waits at barrier".into());
                self.waiting = true;
            }
            Effect::Exit { done: true, .. } => events.push("exited".into()),
            Effect::Exit { done: false, .. } => {
                events.push(format!("{} lanes exited", ex.active.count_ones()))
            }
            Effect::None | Effect::Memory => {}
        }
        if let Some((pc, lanes)) = simt.top()
            && lanes != ex.active
            && lanes & ex.active == ex.active
            && pc != EXIT
        {
            events.push(format!(
                "reconverged at {}: {} lanes",
                self.map.block_name(pc),
                lanes.count_ones()
            ));
        }
        let writes = self.writes(regs, ex);
        let Some(step) = self.last_open() else {
            // Lanes waiting at the kernel's end finished: the step before says so.
            if let Some(step) = self.steps.last_mut()
                && !events.is_empty()
            {
                append(&mut step.event, &events.join("; "));
            }
            return;
        };
        step.writes = writes;
        if !events.is_empty() {
            append(&mut step.event, &events.join("; "));
        }
        self.open = false;
    }

    /// Notes that the step begun last faulted (it had no effect).
    pub fn fault(&mut self, message: &str) {
        if let Some(step) = self.last_open() {
            append(&mut step.event, &format!("faulted: {message}"));
        }
        self.open = false;
    }

    /// Notes that the SIMD-group's last step (a barrier, or its exit) released the
    /// barrier its threadgroup waited at.
    pub fn released(&mut self) {
        self.waiting = false;
        if let Some(step) = self.steps.last_mut() {
            let text = match step.event.as_deref() {
                Some(e) if e.ends_with("waits at barrier") => {
                    let cut = e.len() - "waits at barrier".len();
                    format!(
                        "{}arrives last at barrier: releases the threadgroup",
                        &e[..cut]
                    )
                }
                Some(e) => format!("{e}; releases the barrier the others wait at"),
                None => "releases the barrier the others wait at".into(),
            };
            step.event = Some(text);
        }
    }

    /// The recording.
    pub fn into_recording(self) -> SimdgroupRecording {
        SimdgroupRecording {
            threadgroup: self.threadgroup,
            simdgroup: self.simdgroup,
            steps: self.steps,
            truncated: self.truncated,
        }
    }

    fn last_open(&mut self) -> Option<&mut RecordedStep> {
        if self.open {
            self.steps.last_mut()
        } else {
            None
        }
    }

    /// The values `ex` wrote: its results, or the parameters set along the edges lanes
    /// took.
    fn writes(&self, regs: &Registers, ex: &Executed) -> Vec<RegisterValues> {
        if !self.open {
            return Vec::new();
        }
        match ex.effect {
            Effect::Branch { then_, else_, .. } => [then_, else_]
                .iter()
                .filter(|(_, lanes)| *lanes != 0)
                .filter_map(|(e, _)| self.map.edge_params.get(*e as usize))
                .flatten()
                .map(|r| r.values(regs))
                .collect(),
            _ => self
                .map
                .writes
                .get(ex.pc as usize)
                .map_or(Vec::new(), |ws| ws.iter().map(|w| w.values(regs)).collect()),
        }
    }
}

/// Adds `text` to an event, after what it says already.
fn append(event: &mut Option<String>, text: &str) {
    match event {
        Some(e) => {
            e.push_str("; ");
            e.push_str(text);
        }
        None => *event = Some(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(format: Format, bits: u64, want: &str) {
        assert_eq!(format_bits(format, bits), want, "{format:?} {bits:#x}");
    }

    #[test]
    fn lanes_are_written_for_their_type() {
        check(Format::Float(Type::F32), 1.5f32.to_bits() as u64, "1.5");
        check(Format::Float(Type::F32), 0.1f32.to_bits() as u64, "0.1");
        check(
            Format::Float(Type::F32),
            f32::NEG_INFINITY.to_bits() as u64,
            "-inf",
        );
        check(Format::Float(Type::F32), f32::NAN.to_bits() as u64, "NaN");
        check(
            Format::Float(Type::F16),
            half::f16::from_f32(-2.25).to_bits() as u64,
            "-2.25",
        );
        check(Format::Int(Type::I32), 0xffff_ffff, "-1");
        check(Format::Int(Type::U32), 0xffff_ffff, "4294967295");
        check(Format::Int(Type::I8), 0x80, "-128");
        check(Format::Int(Type::I64), u64::MAX, "-1");
        check(Format::Pointer, 0x100_0000_0040, "0x10000000040");
        check(Format::Bool, 1, "true");
        check(Format::Bool, 0, "false");
    }

    #[test]
    fn recording_stops_at_the_step_limit() {
        let mut r = Recorder::new([0; 3], 0, RegisterMap::default());
        let regs = Registers::default();
        let mut simt = Reconvergence::default();
        simt.reset(0b1011);
        let ex = Executed {
            pc: 0,
            class: metalsim_isa::OpClass::Control,
            active: 0b1011,
            effect: Effect::None,
        };
        for _ in 0..MAX_STEPS + 3 {
            r.begin(&regs, &simt);
            r.finish(&regs, &simt, &ex);
        }
        let rec = r.into_recording();
        assert!(rec.truncated);
        assert_eq!(rec.steps.len(), MAX_STEPS);
        assert_eq!(rec.steps[0].active, 0b1011);
    }
}
