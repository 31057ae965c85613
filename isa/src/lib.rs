//! metalsim's register-based virtual ISA.
//!
//! A [`Module`] holds one [`Function`] per kernel. A function is in SSA form: typed
//! virtual registers ([`Value`]s), basic blocks with block parameters, and terminators
//! (`br`, `br_if`, `ret`). Each instruction has per-thread scalar semantics; the
//! simulator runs 32 lanes of it at a time.
//!
//! The crate knows nothing of MSL, of cycles or of hardware. It provides:
//! - the data types ([`Type`], [`Op`], [`InstData`], [`Function`], [`Module`]),
//! - a text format that prints ([`std::fmt::Display`]) and parses back ([`parse_module`])
//!   losslessly,
//! - the control-flow graph with dominators and immediate post-dominators ([`Cfg`]),
//!   which the simulator uses as reconvergence points,
//! - a verifier ([`verify_function`]): a function that passes it is safe to simulate,
//! - passes that keep a function's meaning, one per module of `passes/`, and
//!   [`optimize`], the fixed pipeline of them.

mod builder;
mod cfg;
mod entity;
mod function;
mod op;
mod parse;
mod passes;
mod print;
pub mod scalar;
mod types;
mod verify;

pub use builder::FunctionBuilder;
pub use cfg::Cfg;
pub use entity::{Block, Inst, Value};
pub use function::{
    Alloc, BlockData, DataObject, Function, InstData, KernelParam, Module, ParamKind, SrcLoc,
    Terminator,
};
pub use op::{
    AtomicOp, BarrierScope, CmpCond, IntFn, MathFn, MemFlags, Op, OpClass, SimdOp, Space,
    SpecialReg, matrix_element,
};
pub use parse::{ParseError, parse_module};
pub use passes::{
    MAX_HEADER, MAX_THREADS_PER_THREADGROUP, MAX_TRIPS, MAX_UNROLLED, PASSES, Pass, SIMD_WIDTH,
    cleanup, eliminate_common_subexpressions, eliminate_dead_code, fold_addresses, fold_constants,
    hoist_loop_invariants, optimize, pass_by_name, propagate_copies, reduce_induction_variables,
    reduce_strength, rotate_loops, simplify_cfg, unroll_loops,
};
pub use types::Type;
pub use verify::{VerifyError, verify_function, verify_module};
