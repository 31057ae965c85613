//! A cross-check suite: kernels with their launch specs, found in folders.

use std::path::{Path, PathBuf};

/// One kernel and launch spec of a suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// A name unique in the suite: the spec's file stem.
    pub name: String,
    /// The kernel file (`.metal`).
    pub kernel: PathBuf,
    /// The launch spec (`.toml`).
    pub spec: PathBuf,
}

/// Every `NAME.toml` with a `NAME.metal` beside it under the given folders (searched
/// recursively; a file given directly is taken if it is such a spec), sorted by path.
/// A spec named `BASE@VARIANT.toml` runs `BASE.metal` (one kernel, several launches).
/// Two entries with the same name are an error.
pub fn discover(roots: &[PathBuf]) -> Result<Vec<Entry>, String> {
    let mut specs = Vec::new();
    for root in roots {
        if root.is_file() {
            specs.push(root.clone());
        } else if root.is_dir() {
            walk(root, &mut specs).map_err(|e| format!("cannot read {}: {e}", root.display()))?;
        } else {
            return Err(format!("{}: no such file or folder", root.display()));
        }
    }
    specs.sort();
    let mut entries: Vec<Entry> = Vec::new();
    for spec in specs {
        if spec.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let name = spec
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let base = name.split('@').next().unwrap_or(&name);
        let kernel = spec.with_file_name(format!("{base}.metal"));
        if !kernel.is_file() {
            continue;
        }
        if let Some(other) = entries.iter().find(|e| e.name == name) {
            return Err(format!(
                "two kernels named `{name}`: {} and {}",
                other.spec.display(),
                spec.display()
            ));
        }
        entries.push(Entry { name, kernel, spec });
    }
    Ok(entries)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(files: &[&str], want: &[&str]) {
        let dir = std::env::temp_dir().join(format!(
            "metalsim-suite-{}-{}",
            std::process::id(),
            files.len()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for f in files {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let got: Vec<String> = discover(std::slice::from_ref(&dir))
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(got, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn pairs_of_kernel_and_spec_are_found_recursively() {
        check(
            &[
                "a.metal",
                "a.toml",
                "a@2.toml",
                "sub/b.metal",
                "sub/b.toml",
                "c.toml",
                "c@1.toml",
                "d.metal",
                "e.txt",
            ],
            &["a", "a@2", "b"],
        );
    }

    #[test]
    fn duplicate_names_are_refused() {
        let dir = std::env::temp_dir().join(format!("metalsim-suite-dup-{}", std::process::id()));
        for sub in ["x", "y"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
            std::fs::write(dir.join(sub).join("k.metal"), "").unwrap();
            std::fs::write(dir.join(sub).join("k.toml"), "").unwrap();
        }
        let err = discover(std::slice::from_ref(&dir)).unwrap_err();
        assert!(err.contains("two kernels named `k`"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(discover(&[dir]).unwrap_err().contains("no such file"));
    }
}
