//! Tests of the simulator through its public API, with kernels written in the ISA text
//! format.

mod arith;
mod atomics;
mod common;
mod control;
mod control_msl;
mod determinism;
mod dispatch;
mod lanes;
mod memory;
mod profile;
mod props;
mod record;
mod robust;
mod sampled;
mod sanitizer;
mod smoke;
mod stdlib;
mod sync;
mod timing;
mod vector_matrix;
