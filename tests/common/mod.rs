//! Shared helpers of the end-to-end tests: compile a kernel file, resolve a spec given
//! as text, run it.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use metalsim_launch::{Launch, LaunchSpec};
use metalsim_sim::{RunOptions, RunOutcome};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compiles `kernel` (relative to the root), resolves `spec` (TOML text, paths relative to
/// the kernel's folder) and runs it on the m1 model.
pub fn run(kernel: &str, spec: &str, timing: bool) -> (Launch, RunOutcome) {
    let path = root().join(kernel);
    let text = std::fs::read_to_string(&path).unwrap();
    let (module, diags, sources) = metalsim_frontend::compile_str(kernel, &text);
    let module =
        module.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&diags, &sources, false)));
    let spec =
        LaunchSpec::from_str(spec, path.parent().unwrap_or(Path::new(".")), "test spec").unwrap();
    let f = module.function(&spec.kernel).unwrap();
    let launch = spec.resolve(f, 1 << 30).unwrap();
    let gpu = metalsim_models::builtin("m1").unwrap();
    let options = RunOptions {
        timing,
        max_instructions: None,
    };
    let out = metalsim_sim::run(&module, &spec.kernel, &launch, &gpu, &options).unwrap();
    assert!(out.fault.is_none(), "unexpected fault: {:?}", out.fault);
    (launch, out)
}

/// Compiles MSL source text, resolves `spec` and runs it on the m1 model with timing;
/// returns the outcome (faults included) and the launch.
pub fn run_source(src: &str, spec: &str) -> (Launch, RunOutcome) {
    let (module, diags, sources) = metalsim_frontend::compile_str("test.metal", src);
    let module =
        module.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&diags, &sources, false)));
    let spec = LaunchSpec::from_str(spec, &root(), "test spec").unwrap();
    let f = module.function(&spec.kernel).unwrap();
    let launch = spec.resolve(f, 1 << 30).unwrap();
    let gpu = metalsim_models::builtin("m1").unwrap();
    let out =
        metalsim_sim::run(&module, &spec.kernel, &launch, &gpu, &RunOptions::default()).unwrap();
    (launch, out)
}

/// Little-endian u32s of a byte buffer.
pub fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Little-endian i32s of a byte buffer.
pub fn i32s(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Little-endian f32s of a byte buffer.
pub fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
