//! `metalsim run --timing sampled` end to end: the outputs and instruction counts of a
//! full run, the time within the bound it reports, the sampling fields in report.json.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use metalsim_traces::Report;

fn metalsim() -> Command {
    let mut c = Command::cargo_bin("metalsim").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Runs the 1M-element vector add with `--timing timing`, writing into a fresh folder;
/// the folder, the report and the text report's time line.
fn run(timing: &str) -> (PathBuf, Report, String) {
    let dir =
        std::env::temp_dir().join(format!("metalsim-sampled-{timing}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = metalsim()
        .args([
            "run",
            "examples/vector_add.metal",
            "--spec",
            "examples/vector_add.toml",
            "--timing",
            timing,
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Report =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let time = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("time"))
        .unwrap_or_default()
        .to_string();
    (dir, report, time)
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

#[test]
fn sampled_runs_give_full_outputs_and_a_time_within_their_bound() {
    let (full_dir, full, _) = run("full");
    let (dir, sampled, time) = run("sampled");
    assert_eq!(read(&dir, "out.npy"), read(&full_dir, "out.npy"));
    assert_eq!(sampled.timing, "sampled");
    assert_eq!(sampled.simd_instructions, full.simd_instructions);
    assert_eq!(sampled.instructions_by_class, full.instructions_by_class);
    assert_eq!(
        sampled.memory.device_bytes_read,
        full.memory.device_bytes_read
    );
    let p = sampled
        .sampling
        .clone()
        .expect("report.json has the sampling fields");
    assert!(!p.timed_fully && p.windows >= 3, "{p:?}");
    assert!(p.threadgroups_timed < sampled.threadgroups / 2, "{p:?}");
    let off = sampled.cycles.abs_diff(full.cycles);
    assert!(
        off <= p.bound_cycles,
        "sampled {} vs full {} cycles: bound {}",
        sampled.cycles,
        full.cycles,
        p.bound_cycles
    );
    assert!(time.contains('±') && time.contains("sampled:"), "{time}");
    assert!(full.sampling.is_none());
}

#[test]
fn traces_need_every_threadgroup_timed() {
    let out = metalsim()
        .args([
            "run",
            "examples/vector_add.metal",
            "--spec",
            "tests/data/vector_add_small.toml",
            "--timing",
            "sampled",
            "--trace",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("leave out --timing sampled"), "{stderr}");
}

#[test]
fn a_small_grid_is_timed_fully_and_says_so() {
    let out = metalsim()
        .args([
            "run",
            "examples/vector_add.metal",
            "--spec",
            "tests/data/vector_add_small.toml",
            "--timing",
            "sampled",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("(sampled: grid small, timed fully)"),
        "{stdout}"
    );
}
