//! A generated CUDA program on disk with everything it reads: `kernel.cu`, the launch's
//! buffers as raw bytes (`inputs/<binding>.bin`, what the program reads) and as `.npy`
//! (`inputs/<name>.npy`, for people and other tools), and `launch.json`.

use std::path::{Path, PathBuf};

use metalsim_isa::{Function, Module};
use metalsim_launch::{Grid, Launch};
use serde::Serialize;

use crate::cuda::{self, EmitError};

/// Why a bundle could not be written.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The kernel has no CUDA version.
    #[error(transparent)]
    Emit(#[from] EmitError),
    /// A file could not be written.
    #[error("cannot write {path}: {message}")]
    Write {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// What `launch.json` says: the dispatch, for a reader who did not see the spec.
#[derive(Serialize, Debug)]
pub struct LaunchDescription {
    /// The kernel's name in the Metal source.
    pub kernel: String,
    /// The `__global__` function's name in `kernel.cu`.
    pub cuda_kernel: String,
    /// `threads` (dispatchThreads) or `threadgroups` (dispatchThreadgroups).
    pub grid_kind: &'static str,
    /// Threads per grid in each dimension.
    pub threads_per_grid: [u32; 3],
    /// Threadgroups per grid (CUDA's grid).
    pub threadgroups_per_grid: [u32; 3],
    /// Threads per threadgroup as dispatched (CUDA blocks are one-dimensional with their
    /// product of threads).
    pub threads_per_threadgroup: [u32; 3],
    /// The buffers in binding order.
    pub buffers: Vec<BufferDescription>,
    /// The threadgroup-memory bindings: `(index, bytes)`.
    pub threadgroup_memory: Vec<(u32, u32)>,
}

/// One buffer of `launch.json`.
#[derive(Serialize, Debug)]
pub struct BufferDescription {
    /// `[[buffer(index)]]`.
    pub index: u32,
    /// The spec's name, also the `.npy` file's.
    pub name: String,
    /// The MSL element type.
    pub r#type: String,
    /// Elements.
    pub count: u64,
    /// Bytes (MSL layout).
    pub bytes: u64,
    /// Written out after the run.
    pub output: bool,
}

/// Writes `dir/kernel.cu`, `dir/inputs/*` and `dir/launch.json`; returns the `.cu` path.
pub fn write_bundle(
    module: &Module,
    f: &Function,
    launch: &Launch,
    dir: &Path,
) -> Result<PathBuf, BundleError> {
    let source = cuda::emit_program(module, f, launch)?;
    let inputs = dir.join("inputs");
    let fail = |p: &Path, e: &dyn std::fmt::Display| BundleError::Write {
        path: p.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(&inputs).map_err(|e| fail(&inputs, &e))?;
    let cu = dir.join("kernel.cu");
    std::fs::write(&cu, source).map_err(|e| fail(&cu, &e))?;
    for b in &launch.buffers {
        let p = inputs.join(format!("{}.bin", b.index));
        std::fs::write(&p, &b.bytes).map_err(|e| fail(&p, &e))?;
    }
    let mut all = launch.clone();
    for b in &mut all.buffers {
        b.output = true;
    }
    let bytes: Vec<Vec<u8>> = launch.buffers.iter().map(|b| b.bytes.clone()).collect();
    metalsim_launch::write_outputs(&all, &bytes, &inputs).map_err(|e| fail(&inputs, &e))?;
    let description = describe(f, launch);
    let p = dir.join("launch.json");
    let text = serde_json::to_string_pretty(&description).map_err(|e| fail(&p, &e))?;
    std::fs::write(&p, text + "\n").map_err(|e| fail(&p, &e))?;
    Ok(cu)
}

/// The launch as `launch.json` gives it.
pub fn describe(f: &Function, launch: &Launch) -> LaunchDescription {
    let mut buffers: Vec<BufferDescription> = launch
        .buffers
        .iter()
        .map(|b| BufferDescription {
            index: b.index,
            name: b.name.clone(),
            r#type: b.elem.msl_name(),
            count: b.count,
            bytes: b.bytes.len() as u64,
            output: b.output,
        })
        .collect();
    buffers.sort_by_key(|b| b.index);
    LaunchDescription {
        kernel: f.name.clone(),
        cuda_kernel: cuda::cuda_name(f),
        grid_kind: match launch.grid {
            Grid::Threads(_) => "threads",
            Grid::Threadgroups(_) => "threadgroups",
        },
        threads_per_grid: launch.threads_per_grid(),
        threadgroups_per_grid: launch.threadgroups_per_grid(),
        threads_per_threadgroup: launch.threadgroup,
        buffers,
        threadgroup_memory: launch
            .threadgroup_memory
            .iter()
            .map(|t| (t.index, t.bytes))
            .collect(),
    }
}
