//! The trace file and its writers end to end through the command line: `run --trace`,
//! `--perfetto`, `--plots`, `metalsim plot` and `metalsim export`.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use metalsim_traces::{Report, Trace};

fn metalsim() -> Command {
    let mut c = Command::cargo_bin("metalsim").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("metalsim-trace-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `metalsim` with `args` and checks its exit code; its stdout.
fn check(args: &[&str], extra: &[&Path], code: i32) -> (String, String) {
    let out = metalsim().args(args).args(extra).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    (String::from_utf8_lossy(&out.stdout).to_string(), stderr)
}

/// Runs the small vector add (100 floats) with every output; the folder.
fn traced_run(name: &str) -> PathBuf {
    let dir = out_dir(name);
    check(
        &[
            "run",
            "examples/vector_add.metal",
            "--spec",
            "tests/data/vector_add_small.toml",
            "--json",
            "--out",
        ],
        &[
            &dir,
            Path::new("--trace"),
            &dir.join("trace.json"),
            Path::new("--perfetto"),
            &dir.join("perfetto.json"),
            Path::new("--plots"),
            &dir.join("plots"),
        ],
        0,
    );
    dir
}

/// `a` and `b` are the same JSON, numbers equal to a relative 1e-12.
fn assert_same(a: &serde_json::Value, b: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
                "{at}: {x} != {y}"
            );
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                assert_same(x, y, &format!("{at}[{i}]"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(
                x.keys().collect::<Vec<_>>(),
                y.keys().collect::<Vec<_>>(),
                "{at}"
            );
            for (k, v) in x {
                assert_same(v, &y[k], &format!("{at}.{k}"));
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

#[test]
fn the_trace_loads_back_and_reproduces_the_report() {
    let dir = traced_run("roundtrip");
    let trace = Trace::read_file(&dir.join("trace.json")).unwrap();
    let report: Report =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    // JSON numbers parse back to within an ulp, not always bit for bit.
    let json = |r: &Report| serde_json::to_value(r).unwrap();
    assert_same(&json(&trace.report), &json(&report), "report");
    assert_same(&json(&trace.summary()), &json(&report), "summary");
    assert_eq!(trace.summary().to_text(), report.to_text());
    assert_eq!(trace.model.name, "m1");
    assert!(trace.sources[0].text.contains("kernel void vector_add"));
    assert!(trace.isa.contains("vector_add"), "{}", trace.isa);
    // Each of the 100 lanes reads x[i], y[i] and n and writes out[i], 4 bytes each.
    let requested = &report.memory.levels[0];
    assert_eq!(requested.level, "requested");
    assert_eq!((requested.read_bytes, requested.write_bytes), (1200, 400));
    assert!(report.limiter.is_some());
    assert!(!report.lines.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perfetto_output_has_a_track_per_core_and_counter_tracks() {
    let dir = traced_run("perfetto");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("perfetto.json")).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let cores = events
        .iter()
        .filter(|e| {
            e["name"] == "thread_name" && e["args"]["name"].as_str().unwrap().starts_with("core ")
        })
        .count();
    assert_eq!(cores, 8, "one track per core of the M1");
    // 100 threads in threadgroups of 32: 4 threadgroups.
    assert_eq!(events.iter().filter(|e| e["ph"] == "X").count(), 4);
    for counter in ["occupancy (%)", "bandwidth (GB/s)"] {
        assert!(
            events
                .iter()
                .any(|e| e["ph"] == "C" && e["name"] == counter),
            "no {counter} counter"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plot_and_export_write_their_files() {
    let dir = traced_run("plot");
    let trace = dir.join("trace.json");
    for name in [
        "occupancy",
        "bandwidth",
        "simd_efficiency",
        "issue_mix",
        "core_heatmap",
    ] {
        for ext in ["png", "svg"] {
            assert!(
                dir.join(format!("plots/{name}.{ext}")).is_file(),
                "{name}.{ext}"
            );
        }
    }
    let plots = dir.join("again");
    check(&["plot"], &[&trace, Path::new("--out"), &plots], 0);
    assert!(plots.join("bandwidth.png").is_file());
    let csv = dir.join("csv");
    check(&["export"], &[&trace, Path::new("--out"), &csv], 0);
    for name in ["bins", "cores", "lines", "instructions"] {
        let text = std::fs::read_to_string(csv.join(format!("{name}.csv"))).unwrap();
        assert!(text.lines().count() >= 2, "{name}.csv has no rows");
    }
    let lines = std::fs::read_to_string(csv.join("lines.csv")).unwrap();
    assert!(
        lines.contains("out[i] = x[i] + y[i]") || lines.contains("out[id]"),
        "{lines}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_truncated_trace_is_bad_input() {
    let dir = traced_run("truncated");
    let text = std::fs::read_to_string(dir.join("trace.json")).unwrap();
    let cut = dir.join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    for command in ["plot", "export"] {
        let (_, stderr) = check(&[command], &[&cut, Path::new("--out"), &dir.join("x")], 2);
        assert!(
            stderr.contains("not a readable metalsim trace file"),
            "{stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_outputs_need_the_timing_model() {
    let dir = out_dir("untimed");
    let (_, stderr) = check(
        &[
            "run",
            "examples/vector_add.metal",
            "--spec",
            "tests/data/vector_add_small.toml",
            "--timing",
            "off",
            "--trace",
        ],
        &[&dir.join("t.json")],
        2,
    );
    assert!(stderr.contains("need the timing model"), "{stderr}");
}
