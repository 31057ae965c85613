//! `metalsim tui` end to end: a trace that cannot be read is bad input (exit 2) with a
//! clear message, and a readable one is refused plainly when there is no terminal.

use std::path::PathBuf;

use assert_cmd::Command;
use metalsim_traces::{ModelInfo, Profile, Report, SourceFile, TRACE_FORMAT, TRACE_VERSION, Trace};

fn metalsim() -> Command {
    let mut c = Command::cargo_bin("metalsim").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("metalsim-tui-{}-{name}", std::process::id()));
    std::fs::write(&p, contents).unwrap();
    p
}

fn trace_json() -> String {
    Trace {
        format: TRACE_FORMAT.to_string(),
        version: TRACE_VERSION,
        metalsim_version: "0.1.0".to_string(),
        model: ModelInfo {
            name: "m1".to_string(),
            cores: 8,
            ..ModelInfo::default()
        },
        report: Report {
            kernel: "k".to_string(),
            ..Report::default()
        },
        profile: Profile::default(),
        sources: vec![SourceFile {
            path: "k.metal".to_string(),
            text: "kernel void k() {}\n".to_string(),
        }],
        isa: String::new(),
        recording: None,
    }
    .to_json()
}

/// Runs `metalsim tui FILE` with no terminal; the exit code and stderr.
fn check(file: &std::path::Path) -> (Option<i32>, String) {
    let out = metalsim().arg("tui").arg(file).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_truncated_trace_is_bad_input() {
    let json = trace_json();
    let file = temp_file("truncated.json", &json.as_bytes()[..json.len() / 2]);
    let (code, stderr) = check(&file);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains("not a readable metalsim trace file"),
        "{stderr}"
    );
    assert!(stderr.contains("truncated.json"), "{stderr}");
}

#[test]
fn corrupt_foreign_newer_and_missing_traces_are_bad_input() {
    let garbage = temp_file("garbage.json", &[0xff, 0xfe, 0x00, 0x13, 0x37]);
    let (code, stderr) = check(&garbage);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("not UTF-8"), "{stderr}");

    let foreign = temp_file("foreign.json", br#"{"traceEvents": []}"#);
    let (code, stderr) = check(&foreign);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("`format` field"), "{stderr}");

    let newer = trace_json().replacen(
        &format!("\"version\":{TRACE_VERSION}"),
        "\"version\":999",
        1,
    );
    let newer = temp_file("newer.json", newer.as_bytes());
    let (code, stderr) = check(&newer);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("schema version 999"), "{stderr}");

    let (code, stderr) = check(std::path::Path::new("no/such/trace.json"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no/such/trace.json"), "{stderr}");
}

#[test]
fn a_readable_trace_without_a_terminal_is_refused_plainly() {
    let file = temp_file("ok.json", trace_json().as_bytes());
    let (code, stderr) = check(&file);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("needs a terminal"), "{stderr}");
}
