//! MLX's arguments as given: from an `[mlx]` table, from command-line flags, or both
//! (the flags override the table, key by key, and `template` and `inputs` entry by
//! entry).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::SpecError;
use crate::spec::{Dims, SpecValue, syntax_error};

use super::input::MlxInputSource;

/// The arguments of MLX's `mx.fast.metal_kernel` and its call, each as given or not.
/// Paths are already resolved against the folder they are relative to.
#[derive(Clone, Default, PartialEq, Debug)]
pub struct MlxFields {
    /// `name`: the kernel is `custom_kernel_{name}`.
    pub name: Option<String>,
    /// `source`: the body file.
    pub source: Option<PathBuf>,
    /// `input_names`, in order.
    pub input_names: Option<Vec<String>>,
    /// `output_names`, in order.
    pub output_names: Option<Vec<String>>,
    /// `template` arguments by name: types as dtype names, ints and bools as values.
    pub template: BTreeMap<String, SpecValue>,
    /// `grid`: threads in the grid.
    pub grid: Option<Dims>,
    /// `threadgroup`: threads per threadgroup.
    pub threadgroup: Option<Dims>,
    /// `output_shapes`, one per output.
    pub output_shapes: Option<Vec<Vec<u64>>>,
    /// `output_dtypes`, one per output.
    pub output_dtypes: Option<Vec<String>>,
    /// `atomic_outputs`.
    pub atomic_outputs: Option<bool>,
    /// `init_value`.
    pub init_value: Option<f64>,
    /// `ensure_row_contiguous`.
    pub ensure_row_contiguous: Option<bool>,
    /// `[mlx.inputs]`: where each input's data comes from.
    pub inputs: BTreeMap<String, MlxInputSource>,
}

/// The `[mlx]` table as serde reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    mlx: RawMlx,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMlx {
    name: Option<String>,
    source: Option<String>,
    input_names: Option<Vec<String>>,
    output_names: Option<Vec<String>>,
    #[serde(default)]
    template: BTreeMap<String, SpecValue>,
    grid: Option<Dims>,
    threadgroup: Option<Dims>,
    output_shapes: Option<Vec<Vec<u64>>>,
    output_dtypes: Option<Vec<String>>,
    atomic_outputs: Option<bool>,
    init_value: Option<f64>,
    ensure_row_contiguous: Option<bool>,
    #[serde(default)]
    inputs: BTreeMap<String, toml::Value>,
}

impl MlxFields {
    /// Reads an `[mlx]` spec's text; paths resolve against `base_dir`. Errors name
    /// `origin` and the line.
    pub fn from_toml(text: &str, base_dir: &Path, origin: &str) -> Result<MlxFields, SpecError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| syntax_error(text, origin, &e))?;
        let m = raw.mlx;
        let mut inputs = BTreeMap::new();
        for (name, value) in &m.inputs {
            let source =
                MlxInputSource::from_toml(value, base_dir).map_err(|e| SpecError::Syntax {
                    origin: origin.to_string(),
                    line: key_line(text, name),
                    column: 1,
                    message: format!("`[mlx.inputs]` `{name}`: {e}"),
                })?;
            inputs.insert(name.clone(), source);
        }
        Ok(MlxFields {
            name: m.name,
            source: m.source.map(|s| base_dir.join(s)),
            input_names: m.input_names,
            output_names: m.output_names,
            template: m.template,
            grid: m.grid,
            threadgroup: m.threadgroup,
            output_shapes: m.output_shapes,
            output_dtypes: m.output_dtypes,
            atomic_outputs: m.atomic_outputs,
            init_value: m.init_value,
            ensure_row_contiguous: m.ensure_row_contiguous,
            inputs,
        })
    }

    /// These fields, with every one that `over` gives replaced by its (`template` and
    /// `inputs` entry by entry).
    pub fn overridden_by(mut self, over: &MlxFields) -> MlxFields {
        fn set<T: Clone>(mine: &mut Option<T>, theirs: &Option<T>) {
            if theirs.is_some() {
                mine.clone_from(theirs);
            }
        }
        set(&mut self.name, &over.name);
        set(&mut self.source, &over.source);
        set(&mut self.input_names, &over.input_names);
        set(&mut self.output_names, &over.output_names);
        set(&mut self.grid, &over.grid);
        set(&mut self.threadgroup, &over.threadgroup);
        set(&mut self.output_shapes, &over.output_shapes);
        set(&mut self.output_dtypes, &over.output_dtypes);
        set(&mut self.atomic_outputs, &over.atomic_outputs);
        set(&mut self.init_value, &over.init_value);
        set(&mut self.ensure_row_contiguous, &over.ensure_row_contiguous);
        for (k, v) in &over.template {
            self.template.insert(k.clone(), v.clone());
        }
        for (k, v) in &over.inputs {
            self.inputs.insert(k.clone(), v.clone());
        }
        self
    }

    /// Whether these fields give `key` (an `[mlx]` key, or an input or template
    /// argument's name).
    pub fn gives(&self, key: &str) -> bool {
        match key {
            "name" => self.name.is_some(),
            "source" => self.source.is_some(),
            "input_names" => self.input_names.is_some(),
            "output_names" => self.output_names.is_some(),
            "grid" => self.grid.is_some(),
            "threadgroup" => self.threadgroup.is_some(),
            "output_shapes" => self.output_shapes.is_some(),
            "output_dtypes" => self.output_dtypes.is_some(),
            "atomic_outputs" => self.atomic_outputs.is_some(),
            "init_value" => self.init_value.is_some(),
            "ensure_row_contiguous" => self.ensure_row_contiguous.is_some(),
            _ => self.inputs.contains_key(key) || self.template.contains_key(key),
        }
    }
}

/// The 1-based line where `key` is assigned (`key = ...`), or 1 when it is not written.
pub(crate) fn key_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<MlxFields, String> {
        MlxFields::from_toml(text, Path::new("/d"), "s.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn flags_override_key_by_key_and_entry_by_entry() {
        let spec = check(
            "[mlx]\nname = \"a\"\ngrid = [8]\ntemplate = { T = \"float\", N = 2 }\n\
             [mlx.inputs]\nx = \"x.npy\"\ny = \"y.npy\"\n",
        )
        .unwrap();
        let flags = MlxFields {
            grid: Some(Dims([16, 1, 1])),
            template: BTreeMap::from([("N".to_string(), SpecValue::Int(4))]),
            inputs: BTreeMap::from([(
                "y".to_string(),
                MlxInputSource::Npy {
                    path: "/cwd/z.npy".into(),
                    dtype: None,
                    shape: None,
                    strides: None,
                },
            )]),
            ..MlxFields::default()
        };
        let merged = spec.overridden_by(&flags);
        assert_eq!(merged.name.as_deref(), Some("a"));
        assert_eq!(merged.grid, Some(Dims([16, 1, 1])));
        assert_eq!(merged.template["T"], SpecValue::Type("float".into()));
        assert_eq!(merged.template["N"], SpecValue::Int(4));
        let path = |n: &str| match &merged.inputs[n] {
            MlxInputSource::Npy { path, .. } => path.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(path("x"), Path::new("/d/x.npy"));
        assert_eq!(path("y"), Path::new("/cwd/z.npy"));
        assert!(flags.gives("grid") && flags.gives("y") && flags.gives("N"));
        assert!(!flags.gives("name") && !flags.gives("x"));
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let err = check("[mlx]\ngird = [1]\n").unwrap_err();
        assert!(err.starts_with("s.toml:2:1: unknown key `gird`"), "{err}");
        let err = check("[mlx]\n[mlx.inputs]\nx = [1]\n").unwrap_err();
        assert!(
            err.starts_with("s.toml:3:1: `[mlx.inputs]` `x`: give"),
            "{err}"
        );
    }
}
