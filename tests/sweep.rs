//! `metalsim sweep` end to end: ranking, the agreement check, the output formats, and a
//! sweep spread as emitted jobs then merged giving the same table.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn metalsim() -> Command {
    let mut c = Command::cargo_bin("metalsim").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("metalsim-sweep-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs metalsim with `args`, expecting exit code `code`; returns stdout.
fn check(args: &[&str], out: Option<&Path>, code: i32) -> String {
    let mut c = metalsim();
    c.args(args);
    if let Some(o) = out {
        c.arg("--out").arg(o);
    }
    let o = c.output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

const MATMUL: [&str; 4] = [
    "sweep",
    "examples/matmul_sweep.metal",
    "--spec",
    "tests/data/sweep/naive.toml,tests/data/sweep/tiled16.toml",
];

#[test]
fn tiled_matmul_outranks_naive_and_both_agree() {
    let dir = out_dir("rank");
    let text = check(&MATMUL, Some(&dir), 0);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("rank  variant"), "{text}");
    assert!(lines[1].contains("   1  spec=tiled16"), "{text}");
    assert!(lines[2].contains("   2  spec=naive"), "{text}");
    assert!(lines[2].contains("1.00x"), "{text}");
    assert_eq!(lines[3], "all 2 variants agree on their outputs");
    assert!(dir.join("sweep.png").is_file());
    assert!(dir.join("000-spec-naive-m1/C.npy").is_file());
}

#[test]
fn a_variant_whose_outputs_differ_is_flagged_not_ranked() {
    let dir = out_dir("flag");
    let json = check(
        &[
            "sweep",
            "tests/data/sweep/tg_size.metal",
            "--spec",
            "tests/data/sweep/tg_size.toml",
            "--vary",
            "threadgroup=32,64",
            "--format",
            "json",
        ],
        Some(&dir),
        0,
    );
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["params"][0][1], "32");
    assert_eq!(rows[0]["rank"], 1);
    assert_eq!(rows[1]["params"][0][1], "64");
    assert!(rows[1]["rank"].is_null());
    let flag = rows[1]["flag"].as_str().unwrap();
    assert!(
        flag.starts_with("output out disagrees with 000-threadgroup-32-m1"),
        "{flag}"
    );
}

#[test]
fn emitted_jobs_run_by_a_shell_then_merged_reproduce_the_table() {
    let local = out_dir("local");
    let local_csv = check(
        &[&MATMUL[..], &["--format", "csv", "--model", "m1,m2"]].concat(),
        Some(&local),
        0,
    );
    assert_eq!(local_csv.lines().count(), 5, "{local_csv}");

    let spread = out_dir("spread");
    let jobs = spread.with_extension("jobs");
    let program = env!("CARGO_BIN_EXE_metalsim");
    let emitted = check(
        &[
            &MATMUL[..],
            &[
                "--format",
                "csv",
                "--model",
                "m1,m2",
                "--program",
                program,
                "--emit-jobs",
            ],
            &[jobs.to_str().unwrap()],
        ]
        .concat(),
        Some(&spread),
        0,
    );
    assert_eq!(emitted, "", "emitting runs nothing");
    let lines: Vec<String> = std::fs::read_to_string(&jobs)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 4);
    assert!(
        lines[0].contains(" run ") && lines[0].contains("--out"),
        "{}",
        lines[0]
    );
    // Two "machines": each runs half of the commands with a plain shell.
    let halves = [&lines[..2], &lines[2..]];
    std::thread::scope(|s| {
        for half in halves {
            s.spawn(move || {
                for line in half {
                    let st = std::process::Command::new("sh")
                        .arg("-c")
                        .arg(line)
                        .output()
                        .unwrap();
                    assert!(st.status.success(), "{line}: {st:?}");
                }
            });
        }
    });
    let merged = check(
        &[
            "sweep",
            "merge",
            spread.to_str().unwrap(),
            "--format",
            "csv",
        ],
        None,
        0,
    );
    assert_eq!(merged, local_csv);
    assert!(spread.join("sweep.png").is_file());
    // Merging the variant folders one by one gives the same table.
    let folders: Vec<String> = std::fs::read_dir(&spread)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    let mut args = vec!["sweep", "merge", "--format", "csv"];
    args.extend(folders.iter().map(String::as_str));
    assert_eq!(check(&args, None, 0), local_csv);
}

#[test]
fn merging_before_the_jobs_ran_flags_every_variant() {
    let dir = out_dir("unrun");
    let jobs = dir.with_extension("jobs");
    check(
        &[&MATMUL[..], &["--emit-jobs", jobs.to_str().unwrap()]].concat(),
        Some(&dir),
        0,
    );
    let text = check(&["sweep", "merge", dir.to_str().unwrap()], None, 0);
    assert!(text.contains("flagged, not ranked:"), "{text}");
    assert!(
        text.contains("spec=naive: no report (not run yet?)"),
        "{text}"
    );
}

#[test]
fn bad_sweeps_exit_with_code_2() {
    let o = metalsim()
        .args([&MATMUL[..], &["--vary", "grid=8"]].concat())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot vary `grid`"));
    let o = metalsim()
        .args([&MATMUL[..], &["--model", "m1,nosuchchip"]].concat())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = metalsim()
        .args(["sweep", "merge", "tests/data/sweep"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds no sweep variant"));
}
