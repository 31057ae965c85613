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
        ..RunOptions::default()
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

/// The function constant values and template arguments a spec gives, for the compiler.
pub fn specialization(spec: &LaunchSpec) -> metalsim_frontend::Specialization {
    use metalsim_frontend::SpecValue as F;
    use metalsim_launch::SpecValue as L;
    fn value(v: &L) -> F {
        match v {
            L::Bool(b) => F::Bool(*b),
            L::Int(i) => F::Int(*i),
            L::Float(f) => F::Float(*f),
            L::Type(t) => F::Type(t.clone()),
            L::List(items) => F::List(items.iter().map(value).collect()),
        }
    }
    metalsim_frontend::Specialization {
        function_constants: Some(
            spec.constants
                .iter()
                .map(|(k, v)| (k.clone(), value(v)))
                .collect(),
        ),
        kernel_template: Some((
            spec.kernel.clone(),
            spec.template
                .iter()
                .map(|(k, v)| (k.clone(), value(v)))
                .collect(),
        )),
    }
}

/// Compiles `kernel` (relative to the root) with the function constants and template
/// arguments of `spec`, resolves the spec and runs it on the m1 model without timing.
/// Panics with the rendered diagnostics if the kernel does not compile, and on a fault.
pub fn run_specialized(kernel: &str, spec: &str) -> (Launch, RunOutcome) {
    let path = root().join(kernel);
    let text = std::fs::read_to_string(&path).unwrap();
    let spec =
        LaunchSpec::from_str(spec, path.parent().unwrap_or(Path::new(".")), "test spec").unwrap();
    let mut sources = metalsim_frontend::SourceMap::new();
    let id = sources.add(kernel, Some(&path), text);
    let options = metalsim_frontend::CompileOptions {
        specialization: specialization(&spec),
        ..Default::default()
    };
    let (module, diags) = metalsim_frontend::compile(&mut sources, id, &options);
    let module =
        module.unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&diags, &sources, false)));
    let f = module
        .function(&spec.kernel)
        .unwrap_or_else(|| panic!("{kernel} has no kernel `{}`", spec.kernel));
    let launch = spec.resolve(f, 1 << 30).unwrap();
    let gpu = metalsim_models::builtin("m1").unwrap();
    let options = RunOptions {
        timing: false,
        ..RunOptions::default()
    };
    let out = metalsim_sim::run(&module, &spec.kernel, &launch, &gpu, &options).unwrap();
    assert!(out.fault.is_none(), "unexpected fault: {:?}", out.fault);
    (launch, out)
}

/// Little-endian f16s of a byte buffer, as f32.
pub fn f16s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(2)
        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
        .collect()
}
