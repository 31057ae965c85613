//! Address arithmetic folded into memory instructions.
//!
//! Apple's memory instructions address `base + index`, the index a register or a 16-bit
//! immediate scaled by the element size (Dougall Johnson's G13 ISA notes, `device_load`:
//! "The base address (A) is a 64-bit value from either uniform or general-purpose
//! registers. The offset (O) may be a signed 16-bit immediate, or a signed or unsigned
//! 32-bit general-purpose register"; `threadgroup_load`: "Like with global memory
//! instructions, the offset is in terms of elements, as defined by the format, added to
//! the base"). So a `ptradd` that only forms such an address ([`Program::folded`], the
//! same decision that gives it no register in `regalloc::pressure`) is no instruction of
//! its own on the GPU. NVIDIA's load and store instructions take `[R + imm]` too (SASS
//! `LDS`/`LDG`), so this holds for every model.
//!
//! The timing model still runs it (its value is computed, checked and used as before), in
//! the cycle of the instruction issued before it, without an issue slot: its result is
//! ready when its operands are, so the memory instruction waits for those.

use super::core::{Decoded, Warp};
use super::profiler::Profiler;
use crate::fault::KernelFault;
use crate::machine::Machine;

/// Runs the folded instructions that SIMD-group `w` reaches next, from `first` (its next
/// pc, a folded instruction), at `now`, after it issued an instruction that left it free
/// to go on (not waiting at a barrier), and returns the pc it goes on at (`None` when it
/// has none: it waits at its exit). The caller checks for a folded next instruction, so
/// that the common case (none) costs no call.
pub(super) fn run_folded(
    m: &mut Machine,
    insts: &[Decoded],
    w: &mut Warp,
    mut prof: Option<&mut Profiler>,
    now: u64,
    first: u32,
) -> Result<Option<u32>, Box<KernelFault>> {
    let mut pc = first;
    loop {
        let step = m.step_on(w.group, w.sg)?;
        let ex = step.ex;
        debug_assert_eq!(ex.pc, pc);
        let ops = &insts[pc as usize].ops;
        // Ready when the latest operand is, and from memory when that one is.
        let latest = ops
            .srcs()
            .iter()
            .map(|&r| (w.ready[r as usize], r as usize))
            .max_by_key(|&(t, _)| t);
        let t = latest.map_or(0, |(t, _)| t);
        for &d in ops.dsts() {
            w.ready[d as usize] = t;
        }
        if let (Some(p), Some(wp)) = (prof.as_deref_mut(), w.prof.as_deref_mut()) {
            let memory = latest.is_some_and(|(_, r)| wp.memory[r]);
            for &d in ops.dsts() {
                wp.memory[d as usize] = memory;
            }
            p.folded(wp, pc, ex.active.count_ones(), now);
        }
        match step.next {
            Some(n) if insts[n as usize].cost.folded => pc = n,
            next => return Ok(next),
        }
    }
}

#[cfg(test)]
mod tests {
    use metalsim_isa::{Type, parse_module};
    use metalsim_launch::{BufferBinding, ElemType, Grid, Launch};

    use crate::{RunOptions, RunOutcome};

    /// A one-thread pointer chase of `hops` through threadgroup memory (every word holds
    /// 0, so each hop reads word 0 again): each address is the allocation's base plus the
    /// last loaded index, a `ptradd` folded into the load; the last index is stored.
    fn chase(hops: usize) -> String {
        let mut t = String::from(
            "kernel k {\n  param buffer(0) out device type \"uint\" size 4 align 4\n  tgalloc 0 size 256 align 4 \"t\"\nbb0:\n  v0 = tg_addr.0\n  v1 = const.u32 0\n",
        );
        for i in 0..hops {
            t += &format!(
                "  v{} = ptradd.4 v0, v{}\n  v{} = ld.threadgroup.u32 v{}\n",
                100 + i,
                if i == 0 { 1 } else { 1000 + i - 1 },
                1000 + i,
                100 + i
            );
        }
        t += &format!(
            "  v9000 = buffer_addr.0\n  st.device.u32 v9000, v{}\n  ret\n}}\n",
            1000 + hops - 1
        );
        t
    }

    /// Runs `text` with timing (profiled) on the M1 model, one thread.
    fn check(text: &str) -> RunOutcome {
        let m = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let elem = ElemType {
            scalar: Type::U32,
            lanes: 1,
        };
        let l = Launch {
            kernel: "k".into(),
            grid: Grid::Threads([1, 1, 1]),
            threadgroup: [1, 1, 1],
            buffers: vec![BufferBinding {
                index: 0,
                name: "out".into(),
                elem,
                count: 1,
                bytes: vec![7; 4],
                output: true,
            }],
            threadgroup_memory: vec![],
        };
        let gpu = metalsim_models::builtin("m1").unwrap();
        let opts = RunOptions {
            profile: true,
            ..RunOptions::default()
        };
        let out = crate::run(&m, "k", &l, &gpu, &opts).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.fault, None);
        out
    }

    #[test]
    fn a_folded_address_adds_no_latency_and_takes_no_issue_slot() {
        let gpu = metalsim_models::builtin("m1").unwrap();
        let (short, long) = (check(&chase(10)), check(&chase(20)));
        // Ten more hops cost ten threadgroup latencies: nothing for their `ptradd`s.
        assert_eq!(
            long.stats.cycles - short.stats.cycles,
            10 * gpu.latency.threadgroup_memory as u64
        );
        // The `ptradd`s still ran: the chase read word 0 and stored its 0.
        assert_eq!(long.buffers[0], vec![0; 4]);
        // The profile lists them, executed once each, with no issue cycles.
        let profile = long.profile.expect("profiled");
        let ptradds: Vec<_> = profile
            .instructions
            .iter()
            .filter(|i| i.text.contains("ptradd"))
            .collect();
        assert_eq!(ptradds.len(), 20);
        for i in ptradds {
            assert_eq!((i.executions, i.issue_cycles), (1, 0), "{}", i.text);
        }
        let issued: u64 = profile.issued.iter().sum();
        let executed: u64 = profile.instructions.iter().map(|i| i.executions).sum();
        assert_eq!(executed - issued, 20);
    }
}
