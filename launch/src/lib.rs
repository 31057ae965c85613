//! What to run and with which data.
//!
//! [`Launch`] is a resolved dispatch (grid, threadgroup size, buffers with their bytes),
//! plain data the simulator consumes. The launch spec (`spec` module, TOML) describes one
//! in a file and resolves against a kernel's parameters into a `Launch`; after the run,
//! output buffers are written as `.npy`.

mod dispatch;

pub use dispatch::{BufferBinding, ElemType, Grid, Launch, ThreadgroupBinding};
