//! Cross-checks metalsim against real GPUs.
//!
//! - [`cuda`]: CUDA C++ generated from the lowered ISA (the module `metalsim run`
//!   simulates), so any kernel metalsim runs can run on an NVIDIA GPU with the same
//!   launch spec and inputs; [`bundle`] writes a generated program with its inputs.
//! - [`measurement`]: the measurement file, one format for every source of real
//!   numbers: the NVIDIA driver here ([`gpu`]: nvcc, CUDA events, Nsight Compute), the
//!   Mac harness in `tools/`, or a file written by hand.
//! - [`compare`] (outputs), [`report`] (per-kernel rows, summary statistics, the table)
//!   and [`plot`] (predicted against measured time) turn measurements and simulations
//!   into the cross-check.
//! - [`run_crosscheck`] drives it all over a suite ([`suite`]) for a caller that compiles
//!   and simulates (the CLI, which owns the frontend and the simulator).

pub mod bundle;
pub mod compare;
pub mod cuda;
pub mod driver;
pub mod gpu;
pub mod measurement;
pub mod plot;
pub mod report;
pub mod suite;

pub use driver::{Backend, CrosscheckError, Options, Simulated, run_crosscheck};
