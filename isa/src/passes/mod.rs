//! Transformations that keep a function's meaning, and [`optimize`], the fixed pipeline
//! of them that brings instruction counts near what Apple's compiler emits.
//!
//! Every pass preserves what the simulator computes exactly: the same outputs bit for bit,
//! the same faults at the same thread, and the same lanes executing each remaining
//! instruction whose result depends on them together. Concretely:
//! - Nothing that can fault (loads, stores, atomics) or synchronize (barriers) is
//!   moved past a branch or hoisted out of a loop, nor removed, except a load of
//!   read-only memory that repeats a dominating one (it cannot fault where that one did
//!   not, and reads the same bytes); cross-lane operations
//!   (SIMD-group, quad-group and matrix operations) stay in their block, since their
//!   result depends on which lanes are active there. Pure instructions may move across
//!   branches (out of loops in `licm`, into the one branch that uses them in `sink`),
//!   where other lanes run them: what each lane computes does not change.
//! - Arithmetic is folded only where it is computed exactly as the simulator would
//!   (see `eval`); float identities that differ on signed zeros or NaNs are not applied.
//! - The control-flow graph changes only in ways that keep every divergent branch's
//!   reconvergence point (its immediate post-dominator) where lanes met before.
//!
//! Each pass expects a function the verifier accepts and leaves one it accepts; it returns
//! how many changes it made (0 when the function is already as the pass leaves it), and
//! [`pass_by_name`] finds one by the name filetests use.

mod address;
mod clone;
mod copy_prop;
mod dce;
mod edit;
mod eval;
mod fold;
mod gvn;
mod induction;
mod licm;
mod loops;
mod ranges;
mod rotate;
mod runtime_unroll;
mod schedule;
mod simplify_cfg;
mod sink;
mod strength;
mod uniform;
mod unroll;

pub use address::fold_addresses;
pub use copy_prop::propagate_copies;
pub use dce::eliminate_dead_code;
pub use fold::fold_constants;
pub use gvn::eliminate_common_subexpressions;
pub use induction::reduce_induction_variables;
pub use licm::hoist_loop_invariants;
pub use ranges::{MAX_THREADS_PER_THREADGROUP, SIMD_WIDTH};
pub use rotate::{MAX_HEADER, rotate_loops};
pub use runtime_unroll::unroll_runtime_loops;
pub use schedule::schedule_loads;
pub use simplify_cfg::simplify_cfg;
pub use sink::sink_into_branches;
pub use strength::reduce_strength;
pub use unroll::{MAX_TRIPS, MAX_UNROLLED, unroll_loops};

use crate::function::Function;
use crate::verify::verify_function;

/// A function's text without its header line, kernel parameters and closing brace, each
/// line trimmed: what the passes' tests compare.
#[cfg(test)]
pub(crate) fn body_text(f: &Function) -> String {
    f.to_string()
        .lines()
        .filter(|l| !l.starts_with("kernel") && !l.starts_with("  param") && *l != "}")
        .map(|l| format!("{}\n", l.trim()))
        .collect()
}

/// A pass: transforms a function in place and returns how many changes it made.
pub type Pass = fn(&mut Function) -> usize;

/// Every pass with its name, in the order [`optimize`] first runs them.
pub const PASSES: [(&str, Pass); 16] = [
    ("simplify_cfg", simplify_cfg),
    ("fold", fold_constants),
    ("copy_prop", propagate_copies),
    ("gvn", eliminate_common_subexpressions),
    ("dce", eliminate_dead_code),
    ("licm", hoist_loop_invariants),
    ("unroll", unroll_loops),
    ("unroll_runtime", unroll_runtime_loops),
    ("address", fold_addresses),
    ("strength", reduce_strength),
    ("induction", reduce_induction_variables),
    ("rotate", rotate_loops),
    ("sink", sink_into_branches),
    ("schedule", schedule_loads),
    ("cleanup", cleanup),
    ("optimize", optimize_counted),
];

/// The pass with this name (see [`PASSES`]).
pub fn pass_by_name(name: &str) -> Option<Pass> {
    PASSES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// The optimization pipeline: CFG simplification, then folding, copy propagation, value
/// numbering and dead-code elimination to a fixed point, loop-invariant code motion, full
/// unrolling of small constant loops, unrolling by four of counted loops with a
/// run-time trip count the SIMD-group agrees on, address folding, strength reduction (of powers of
/// two and of induction-variable products), loop rotation, with clean-ups in between, the
/// sinking of pure instructions into the branches that use them, and last the scheduling
/// of loads early in their blocks.
/// The result passes the verifier when the input does; a function the verifier rejects is
/// left as it is.
pub fn optimize(f: &mut Function) {
    optimize_counted(f);
}

fn optimize_counted(f: &mut Function) -> usize {
    // The passes rely on what the verifier guarantees (operand counts, types, SSA); data
    // objects belong to the module, so any data index is accepted here.
    if verify_function(f, usize::MAX).is_err() {
        return 0;
    }
    let mut n = simplify_cfg(f) + cleanup(f);
    n += hoist_loop_invariants(f) + cleanup(f);
    for _ in 0..4 {
        let unrolled = unroll_loops(f);
        if unrolled == 0 {
            break;
        }
        n += unrolled + cleanup(f);
    }
    n += unroll_runtime_loops(f) + cleanup(f);
    n += fold_addresses(f) + reduce_strength(f) + cleanup(f);
    n += hoist_loop_invariants(f) + reduce_induction_variables(f) + cleanup(f);
    n += rotate_loops(f) + cleanup(f);
    n += sink_into_branches(f);
    n += schedule_loads(f);
    edit::compact_instructions(f);
    n
}

/// Folding, copy propagation, value numbering, dead-code elimination and CFG
/// simplification, repeated until none changes anything (at most 16 rounds).
pub fn cleanup(f: &mut Function) -> usize {
    let mut total = 0;
    for _ in 0..16 {
        let n = fold_constants(f)
            + propagate_copies(f)
            + eliminate_common_subexpressions(f)
            + eliminate_dead_code(f)
            + simplify_cfg(f);
        if n == 0 {
            break;
        }
        total += n;
    }
    total
}
