//! ISA filetests, in the manner of Cranelift's: every `.isa` file under
//! `tests/filetests/` is one test.
//!
//! ```text
//! test fold dce          <- the passes to run, in order (names from `metalsim_isa::PASSES`)
//! ; What the test shows.
//!
//! kernel k {             <- the input: a module in the ISA text format
//! ...
//! }
//!
//! ; expect:              <- the output: each function after the passes, verified, as
//! ; kernel k {              comment lines
//! ; ...
//! ```
//!
//! Run `METALSIM_BLESS=1 cargo test -p metalsim-isa --test filetests` to rewrite the
//! expected sections from what the passes now produce (then read the diff).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use metalsim_isa::{parse_module, pass_by_name, verify_function};

const EXPECT: &str = "; expect:";

/// The passes named by the header, the input text, and the expected output.
struct FileTest {
    passes: Vec<String>,
    input: String,
    expected: Option<String>,
}

fn read(text: &str) -> Result<FileTest, String> {
    let mut passes = Vec::new();
    let mut input = String::new();
    let mut expected: Option<String> = None;
    let mut in_header = true;
    for line in text.lines() {
        if let Some(exp) = expected.as_mut() {
            let body = line
                .strip_prefix("; ")
                .or_else(|| line.strip_prefix(";"))
                .ok_or_else(|| format!("non-comment line after `{EXPECT}`: {line:?}"))?;
            exp.push_str(body);
            exp.push('\n');
            continue;
        }
        if line.trim_end() == EXPECT {
            expected = Some(String::new());
            continue;
        }
        if in_header && let Some(names) = line.strip_prefix("test ") {
            passes.extend(names.split_whitespace().map(str::to_string));
            input.push('\n');
            continue;
        }
        if !line.trim().is_empty() && !line.starts_with(';') {
            in_header = false;
        }
        input.push_str(line);
        input.push('\n');
    }
    if passes.is_empty() {
        return Err("no `test <pass>...` line".into());
    }
    Ok(FileTest {
        passes,
        input,
        expected,
    })
}

/// Runs the passes on every function; returns the output text.
fn run(t: &FileTest) -> Result<String, String> {
    let mut module = parse_module(&t.input).map_err(|e| format!("parse: {e}"))?;
    let data = module.data.len();
    let mut out = String::new();
    for f in &mut module.functions {
        verify_function(f, data).map_err(|e| format!("input does not verify: {e}"))?;
        for name in &t.passes {
            let pass = pass_by_name(name).ok_or_else(|| format!("unknown pass `{name}`"))?;
            pass(f);
            verify_function(f, data)
                .map_err(|e| format!("after `{name}` the function does not verify: {e}\n{f}"))?;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&f.to_string());
    }
    Ok(out)
}

fn bless(path: &Path, text: &str, got: &str) {
    let keep: Vec<&str> = text
        .lines()
        .take_while(|l| l.trim_end() != EXPECT)
        .collect();
    let mut new = keep.join("\n").trim_end().to_string();
    let _ = write!(new, "\n\n{EXPECT}\n");
    for line in got.lines() {
        if line.is_empty() {
            new.push_str(";\n");
        } else {
            let _ = writeln!(new, "; {line}");
        }
    }
    std::fs::write(path, new).unwrap();
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "isa") {
            out.push(p);
        }
    }
}

#[test]
fn filetests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests");
    let mut paths = Vec::new();
    files(&root, &mut paths);
    assert!(!paths.is_empty(), "no filetests under {}", root.display());
    let bless_mode = std::env::var("METALSIM_BLESS").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    for path in &paths {
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        let result = read(&text).and_then(|t| run(&t).map(|got| (t, got)));
        match result {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok((t, got)) => {
                if t.expected.as_deref() == Some(got.as_str()) {
                    continue;
                }
                if bless_mode {
                    bless(path, &text, &got);
                } else {
                    failures.push(format!(
                        "{name}: output differs (METALSIM_BLESS=1 rewrites it)\n--- expected\n{}\n--- got\n{got}",
                        t.expected.as_deref().unwrap_or("(no `; expect:` section)")
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} filetests failed:\n\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n\n")
    );
}
