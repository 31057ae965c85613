//! MLX mode's command-line flags: the arguments of MLX's `mx.fast.metal_kernel` and of
//! its call, spelled after MLX's Python keywords (`--input-names`, `--output-shapes`...).
//! Without `--spec` they describe the whole launch (`--mlx-name` starts MLX mode); with
//! an MLX-form spec they override its keys, and `--template` and `--input` its entries.

use std::collections::BTreeMap;
use std::path::Path;

use clap::Args;
use metalsim_launch::{Dims, MlxFields, MlxInputSource, SpecValue};

use crate::cli::Failure;

/// The help heading of MLX mode's flags.
const HEADING: &str = "MLX mode (the kernel file is an mx.fast.metal_kernel body)";

/// MLX mode's flags (see `docs/launch-spec.md`, "MLX mode").
#[derive(Args, Debug, Default)]
pub struct MlxArgs {
    /// MLX's `name`: the generated kernel is `custom_kernel_NAME`. Starts MLX mode when
    /// there is no `--spec`.
    #[arg(help_heading = HEADING, long = "mlx-name", value_name = "NAME")]
    pub mlx_name: Option<String>,
    /// MLX's `input_names`, in order, comma-separated (`x,grid`).
    #[arg(help_heading = HEADING, long, value_name = "A,B")]
    pub input_names: Option<String>,
    /// MLX's `output_names`, in order, comma-separated.
    #[arg(help_heading = HEADING, long, value_name = "A,B")]
    pub output_names: Option<String>,
    /// One input's data: `NAME=FILE.npy`, a literal scalar (`NAME=2.5`, `NAME=7`,
    /// `NAME=true`), or a TOML inline table as in `[mlx.inputs]`
    /// (`NAME={ npy = "x.npy", strides = [1, 64] }`). Repeat for each input.
    #[arg(help_heading = HEADING, long = "input", value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// One template argument: `T=float16` (a dtype), `N=4`, `FLAG=true`. Repeatable.
    #[arg(help_heading = HEADING, long = "template", value_name = "NAME=VALUE")]
    pub template: Vec<String>,
    /// MLX's `grid`: threads in the grid, `X[,Y[,Z]]`.
    #[arg(help_heading = HEADING, long, value_name = "X,Y,Z")]
    pub grid: Option<String>,
    /// MLX's `threadgroup`: threads per threadgroup, `X[,Y[,Z]]`.
    #[arg(help_heading = HEADING, long, value_name = "X,Y,Z")]
    pub threadgroup: Option<String>,
    /// MLX's `output_shapes`: one flag per output, in order, dimensions comma-separated
    /// (`64,64`; `()` for a scalar).
    #[arg(help_heading = HEADING, long = "output-shapes", value_name = "D0,D1,..")]
    pub output_shapes: Vec<String>,
    /// MLX's `output_dtypes`, comma-separated (`float32,float16`; MSL names work too).
    #[arg(help_heading = HEADING, long, value_name = "A,B")]
    pub output_dtypes: Option<String>,
    /// MLX's `atomic_outputs`: outputs are `device atomic<T>*`.
    #[arg(help_heading = HEADING, long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true")]
    pub atomic_outputs: Option<bool>,
    /// MLX's `init_value`: every output element starts as this number.
    #[arg(help_heading = HEADING, long, value_name = "X", allow_negative_numbers = true)]
    pub init_value: Option<f64>,
    /// MLX's `ensure_row_contiguous` (default true); `=false` binds strided inputs as
    /// they lie, with their real strides.
    #[arg(help_heading = HEADING, long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true")]
    pub ensure_row_contiguous: Option<bool>,
}

impl MlxArgs {
    /// The fields these flags give; paths are relative to the current folder. `None`
    /// when no MLX flag is given.
    pub fn fields(&self) -> Result<Option<MlxFields>, Failure> {
        let f = MlxFields {
            name: self.mlx_name.clone(),
            source: None,
            input_names: self.input_names.as_deref().map(names),
            output_names: self.output_names.as_deref().map(names),
            template: self
                .template
                .iter()
                .map(|t| template_argument(t))
                .collect::<Result<BTreeMap<_, _>, _>>()?,
            grid: self
                .grid
                .as_deref()
                .map(|g| dims("--grid", g))
                .transpose()?,
            threadgroup: self
                .threadgroup
                .as_deref()
                .map(|g| dims("--threadgroup", g))
                .transpose()?,
            output_shapes: if self.output_shapes.is_empty() {
                None
            } else {
                Some(
                    self.output_shapes
                        .iter()
                        .map(|s| shape(s))
                        .collect::<Result<_, _>>()?,
                )
            },
            output_dtypes: self.output_dtypes.as_deref().map(names),
            atomic_outputs: self.atomic_outputs,
            init_value: self.init_value,
            ensure_row_contiguous: self.ensure_row_contiguous,
            inputs: self
                .inputs
                .iter()
                .map(|i| input(i))
                .collect::<Result<BTreeMap<_, _>, _>>()?,
        };
        Ok((f != MlxFields::default()).then_some(f))
    }
}

/// How the command line spells the flag that gives `key` (an `[mlx]` key, or an input
/// or template argument's name, as `fields` tells apart).
pub fn flag_name(fields: &MlxFields, key: &str) -> String {
    match key {
        "name" => "--mlx-name".into(),
        "input_names"
        | "output_names"
        | "grid"
        | "threadgroup"
        | "output_shapes"
        | "output_dtypes"
        | "atomic_outputs"
        | "init_value"
        | "ensure_row_contiguous" => {
            format!("--{}", key.replace('_', "-"))
        }
        "template" => "--template".into(),
        _ if fields.template.contains_key(key) => format!("--template {key}"),
        _ => format!("--input {key}"),
    }
}

fn bad(flag: &str, message: String) -> Failure {
    Failure::BadInput(format!("{flag}: {message}"))
}

/// A comma-separated list; empty for an empty string.
fn names(list: &str) -> Vec<String> {
    list.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// `NAME=VALUE` split at the first `=`.
fn assignment<'a>(flag: &str, text: &'a str) -> Result<(&'a str, &'a str), Failure> {
    text.split_once('=')
        .map(|(n, v)| (n.trim(), v.trim()))
        .filter(|(n, _)| !n.is_empty())
        .ok_or_else(|| bad(flag, format!("`{text}` is not NAME=VALUE")))
}

/// Reads `VALUE` as a TOML value, when it is one.
fn toml_value(value: &str) -> Option<toml::Value> {
    format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
}

fn template_argument(text: &str) -> Result<(String, SpecValue), Failure> {
    let (name, value) = assignment("--template", text)?;
    let value = match toml_value(value) {
        Some(toml::Value::Integer(i)) => SpecValue::Int(i),
        Some(toml::Value::Boolean(b)) => SpecValue::Bool(b),
        Some(toml::Value::Float(x)) => SpecValue::Float(x),
        _ => SpecValue::Type(value.to_string()),
    };
    Ok((name.to_string(), value))
}

fn input(text: &str) -> Result<(String, MlxInputSource), Failure> {
    let (name, value) = assignment("--input", text)?;
    let flag = format!("--input {name}");
    let source = match toml_value(value) {
        Some(
            v @ (toml::Value::Integer(_)
            | toml::Value::Float(_)
            | toml::Value::Boolean(_)
            | toml::Value::Table(_)
            | toml::Value::String(_)),
        ) => MlxInputSource::from_toml(&v, Path::new("")),
        // Anything else is a file name as written.
        _ => MlxInputSource::from_toml(&toml::Value::String(value.into()), Path::new("")),
    }
    .map_err(|e| bad(&flag, e))?;
    let source = match source {
        MlxInputSource::Npy {
            path,
            dtype,
            shape,
            strides,
        } => MlxInputSource::Npy {
            path: std::path::absolute(&path).unwrap_or(path),
            dtype,
            shape,
            strides,
        },
        literal => literal,
    };
    Ok((name.to_string(), source))
}

/// `X[,Y[,Z]]` (or `XxY`), each at least 1.
fn dims(flag: &str, text: &str) -> Result<Dims, Failure> {
    let parts: Vec<&str> = text.split([',', 'x']).map(str::trim).collect();
    if parts.len() > 3 {
        return Err(bad(flag, format!("`{text}` has more than 3 dimensions")));
    }
    let mut d = [1u32; 3];
    for (slot, p) in d.iter_mut().zip(&parts) {
        *slot = p
            .parse()
            .ok()
            .filter(|&v| v >= 1)
            .ok_or_else(|| bad(flag, format!("`{text}`: `{p}` is not a positive integer")))?;
    }
    Ok(Dims(d))
}

/// `D0,D1,...` (or `D0xD1`); `()` for a scalar.
fn shape(text: &str) -> Result<Vec<u64>, Failure> {
    let t = text
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    if t.is_empty() {
        return Ok(Vec::new());
    }
    t.split([',', 'x'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<u64>().map_err(|_| {
                bad(
                    "--output-shapes",
                    format!("`{text}`: `{p}` is not a dimension"),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(f: Failure) -> String {
        match f {
            Failure::BadInput(m) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn check_flags_become_fields() {
        let args = MlxArgs {
            mlx_name: Some("myexp".into()),
            input_names: Some("inp, s".into()),
            template: vec!["T=float16".into(), "N=4".into(), "B=true".into()],
            grid: Some("4096".into()),
            threadgroup: Some("16x16".into()),
            output_shapes: vec!["64,64".into(), "()".into()],
            inputs: vec![
                "inp=data/inp.npy".into(),
                "s=2.5".into(),
                "v={ npy = \"v.npy\", strides = [1, 4] }".into(),
            ],
            atomic_outputs: Some(true),
            ..MlxArgs::default()
        };
        let f = args.fields().unwrap().unwrap();
        assert_eq!(f.input_names, Some(vec!["inp".into(), "s".into()]));
        assert_eq!(f.template["T"], SpecValue::Type("float16".into()));
        assert_eq!(f.template["N"], SpecValue::Int(4));
        assert_eq!(f.template["B"], SpecValue::Bool(true));
        assert_eq!(f.grid, Some(Dims([4096, 1, 1])));
        assert_eq!(f.threadgroup, Some(Dims([16, 16, 1])));
        assert_eq!(f.output_shapes, Some(vec![vec![64, 64], vec![]]));
        assert!(matches!(&f.inputs["inp"], MlxInputSource::Npy { path, .. }
            if path.is_absolute() && path.ends_with("data/inp.npy")));
        assert!(matches!(&f.inputs["s"], MlxInputSource::Value { .. }));
        assert!(
            matches!(&f.inputs["v"], MlxInputSource::Npy { strides: Some(s), .. } if s == &[1, 4])
        );
        assert_eq!(MlxArgs::default().fields().unwrap(), None);
    }

    #[test]
    fn bad_flags_are_named() {
        let grid = MlxArgs {
            grid: Some("4096,0".into()),
            ..MlxArgs::default()
        };
        assert_eq!(
            message(grid.fields().unwrap_err()),
            "--grid: `4096,0`: `0` is not a positive integer"
        );
        let input = MlxArgs {
            inputs: vec!["inp".into()],
            ..MlxArgs::default()
        };
        assert_eq!(
            message(input.fields().unwrap_err()),
            "--input: `inp` is not NAME=VALUE"
        );
        let shape = MlxArgs {
            output_shapes: vec!["4,a".into()],
            ..MlxArgs::default()
        };
        assert!(message(shape.fields().unwrap_err()).starts_with("--output-shapes: `4,a`"));
    }

    #[test]
    fn flag_names_follow_mlx_keywords() {
        let f = MlxFields {
            template: BTreeMap::from([("T".to_string(), SpecValue::Type("float".into()))]),
            ..MlxFields::default()
        };
        assert_eq!(flag_name(&f, "name"), "--mlx-name");
        assert_eq!(flag_name(&f, "output_shapes"), "--output-shapes");
        assert_eq!(flag_name(&f, "T"), "--template T");
        assert_eq!(flag_name(&f, "inp"), "--input inp");
    }
}
