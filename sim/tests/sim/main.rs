//! Tests of the simulator through its public API, with kernels written in the ISA text
//! format.

mod arith;
mod common;
mod control;
mod dispatch;
mod lanes;
mod memory;
mod robust;
mod smoke;
mod sync;
mod timing;
