//! The command line end to end: exit codes, diagnostics, faults, `.npy` outputs and the
//! report.

use std::path::PathBuf;

use assert_cmd::Command;

fn metalsim() -> Command {
    let mut c = Command::cargo_bin("metalsim").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("metalsim-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn run_writes_npy_outputs_and_report() {
    let dir = out_dir("run");
    let out = metalsim()
        .args([
            "run",
            "examples/vector_add.metal",
            "--spec",
            "tests/data/vector_add_small.toml",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("kernel vector_add on m1"), "{stdout}");

    let bytes = std::fs::read(dir.join("out.npy")).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.shape(), &[100]);
    let values: Vec<f32> = npy.into_vec().unwrap();
    let want: Vec<f32> = (0..100).map(|i| 3.0 * i as f32).collect();
    assert_eq!(values, want);

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["kernel"], "vector_add");
    assert_eq!(report["model"], "m1");
    assert_eq!(report["threadgroups"], 4);
    assert_eq!(report["simdgroups"], 4);
    assert!(report["cycles"].as_u64().unwrap() > 0);
    assert!(report["time_us"].as_f64().unwrap() > 0.0);
    let simd = report["simd_instructions"].as_u64().unwrap();
    let thread = report["thread_instructions"].as_u64().unwrap();
    assert!(simd > 0 && thread <= 32 * simd && thread > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn syntax_error_is_reported_at_its_line_with_exit_code_2() {
    let out = metalsim()
        .args(["check", "tests/data/syntax_error.metal"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("tests/data/syntax_error.metal:7:"),
        "{stderr}"
    );
    insta::assert_snapshot!("syntax_error", stderr);
}

#[test]
fn type_errors_are_all_reported() {
    let out = metalsim()
        .args(["check", "tests/data/type_error.metal"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    insta::assert_snapshot!("type_error", stderr);
}

#[test]
fn out_of_bounds_write_is_a_kernel_fault_naming_thread_and_line() {
    let dir = out_dir("oob");
    let out = metalsim()
        .args([
            "run",
            "tests/data/oob_write.metal",
            "--spec",
            "tests/data/oob_write.toml",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("out_of_bounds"), "{stderr}");
    assert!(stderr.contains("oob_write.metal:8:"), "{stderr}");
    assert!(
        stderr.contains("[37, 0, 0]"),
        "the first faulting thread is 37: {stderr}"
    );
    // The report and the outputs are still written.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["fault"]["kind"], "out_of_bounds");
    assert_eq!(report["fault"]["line"], 8);
    assert!(dir.join("out.npy").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn spec_errors_are_bad_input() {
    let out = metalsim()
        .args([
            "run",
            "examples/vector_add.metal",
            "--spec",
            "tests/data/missing_buffer.toml",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("buffer(1)") || stderr.contains("buffer 1"),
        "{stderr}"
    );
}

#[test]
fn missing_files_are_bad_input() {
    let out = metalsim()
        .args([
            "run",
            "nope.metal",
            "--spec",
            "tests/data/vector_add_small.toml",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = metalsim()
        .args(["run", "examples/vector_add.metal", "--spec", "nope.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = metalsim()
        .args([
            "run",
            "examples/vector_add.metal",
            "--spec",
            "tests/data/vector_add_small.toml",
            "--model",
            "m99",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn asm_prints_the_isa_and_check_lists_kernels() {
    let out = metalsim()
        .args(["asm", "examples/vector_add.metal"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kernel vector_add {"), "{text}");
    let parsed = metalsim_isa::parse_module(&text).unwrap();
    assert_eq!(
        parsed.to_string(),
        text,
        "the printed ISA parses back to itself"
    );

    let out = metalsim()
        .args(["check", "--list-kernels", "examples/matmul_tiled.metal"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("list_kernels", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn models_lists_m1() {
    let out = metalsim()
        .args(["models", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["name"], "m1");
}

#[test]
fn compiler_spread_needs_a_gpu_run_not_a_measurement_file() {
    let out = metalsim()
        .args([
            "crosscheck",
            "--measured",
            "crosscheck/tests/data/measured/measured.json",
            "--compiler-spread",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("'--measured <FILE>' cannot be used with '--compiler-spread'"),
        "{stderr}"
    );
}
