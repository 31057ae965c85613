//! What to run and with which data.
//!
//! [`Launch`] is a resolved dispatch (grid, threadgroup size, buffers with their bytes),
//! plain data the simulator consumes. A [`LaunchSpec`] describes one in a TOML file
//! (`docs/launch-spec.md` is the format's reference):
//!
//! 1. [`LaunchSpec::from_file`] reads and checks the file on its own: TOML syntax, known
//!    keys, element types, the grid. Errors give the line and column.
//! 2. [`LaunchSpec::resolve`] checks it against the kernel's parameters
//!    ([`metalsim_isa::KernelParam`]), compares the total size with a memory limit before
//!    allocating anything, then materializes every buffer: zeros, a fill value, an iota,
//!    seeded random numbers (the same on every platform, forever) or a `.npy` file.
//! 3. After the run, [`write_outputs`] writes the buffers marked `output = true` as
//!    `.npy` files.
//!
//! Textures (`[[texture]]` tables, [`TextureSpec`]) become buffers too: the frontend
//! lowers a texture parameter to a device buffer at
//! [`metalsim_isa::KernelParam::TEXTURE_BUFFER_BASE`]` + n`, and `texture` converts its
//! texels from the pixel format when resolving and back when writing outputs. Samplers
//! (`[[sampler]]` tables, [`SamplerSpec`]) become small constant buffers of their state.
//!
//! Every failure is a [`SpecError`] whose message names the spec file, the binding and
//! the key at fault.

mod dispatch;
mod error;
mod init;
mod mlx;
mod npy;
mod resolve;
mod rng;
mod sampler;
mod spec;
mod texture;
mod value;

pub use dispatch::{BufferBinding, ElemType, Grid, Launch, ThreadgroupBinding};
pub use error::SpecError;
pub use init::{Distribution, Init};
pub use mlx::{
    MlxFields, MlxInput, MlxInputSource, MlxKernel, MlxOrigins, MlxOutput, MlxSpec, is_mlx_spec,
};
pub use npy::{read_npy, write_outputs};
pub use sampler::{AddressMode, BorderColor, CompareFunc, Coord, Filter, MipFilter, SamplerSpec};
pub use spec::{
    BufferSpec, Dims, LaunchSpec, MAX_THREADS_PER_THREADGROUP, SpecValue, ThreadgroupMemorySpec,
};
pub use texture::{Channel, PIXEL_FORMATS, PixelFormat, TextureSpec};
pub use value::Scalar;
