//! A spec asking for more memory than allowed fails at once, allocating nothing.

use std::path::Path;
use std::time::{Duration, Instant};

use metalsim_isa::parse_module;
use metalsim_launch::{LaunchSpec, SpecError};

#[test]
fn a_petabyte_is_refused_before_anything_is_allocated() {
    let spec = LaunchSpec::from_str(
        r#"
kernel = "k"
threads = [64]
threadgroup = [64]

[[buffer]]
index = 0
name = "huge"
type = "float4"
count = 1000000000000000
init = { random = "normal", seed = 1 }
"#,
        Path::new("."),
        "huge.toml",
    )
    .unwrap();
    let module = parse_module(
        "kernel k {\n  param buffer(0) a device type \"float4\" size 16 align 16\nbb0:\n  ret\n}\n",
    )
    .unwrap();
    let start = Instant::now();
    let err = spec.resolve(&module.functions[0], 24 << 30).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(1));
    match err {
        SpecError::MemoryLimit {
            needed,
            largest_name,
            ..
        } => {
            assert_eq!(needed, 16_000_000_000_000_000);
            assert_eq!(largest_name, "huge");
        }
        e => panic!("expected MemoryLimit, got {e}"),
    }
}

#[test]
fn a_limit_above_the_machine_gives_an_error_not_an_abort() {
    let spec = LaunchSpec::from_str(
        "kernel = \"k\"\nthreads = [64]\nthreadgroup = [64]\n\n[[buffer]]\nindex = 0\n\
         name = \"huge\"\ntype = \"float4\"\ncount = 1000000000000000\n",
        Path::new("."),
        "huge.toml",
    )
    .unwrap();
    let module = parse_module(
        "kernel k {\n  param buffer(0) a device type \"float4\" size 16 align 16\nbb0:\n  ret\n}\n",
    )
    .unwrap();
    let err = spec.resolve(&module.functions[0], u64::MAX).unwrap_err();
    assert_eq!(
        err.to_string(),
        "huge.toml: buffer 0 (huge): cannot allocate 14.2 PiB (16000000000000000 bytes)"
    );
}
