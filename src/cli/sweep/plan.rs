//! The variants of a sweep: `--vary` and `--model` parsed, their cartesian product, and
//! each variant's launch spec, folder and self-contained `metalsim run` command.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use metalsim_launch::{Dims, ElemType, LaunchSpec, SpecValue};
use serde::{Deserialize, Serialize};

/// One `--vary KEY=V1,V2,...`: the key and its values as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Vary {
    /// `threadgroup`, `template.NAME` or `constants.NAME`.
    pub key: String,
    /// The values, in the order given.
    pub values: Vec<String>,
}

impl Vary {
    /// Parses `KEY=V1,V2,...`, checking the key and every value.
    pub fn parse(text: &str) -> Result<Vary, String> {
        let Some((key, values)) = text.split_once('=') else {
            return Err(format!(
                "`--vary {text}`: expected KEY=V1,V2,... (KEY is threadgroup, template.NAME or constants.NAME)"
            ));
        };
        let key = key.trim().to_string();
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(|v| v.is_empty()) {
            return Err(format!("`--vary {text}`: a value is empty"));
        }
        let vary = Vary { key, values };
        for v in &vary.values {
            vary.check(v)?;
        }
        Ok(vary)
    }

    /// Whether `value` is valid for this key (applied to an empty spec).
    fn check(&self, value: &str) -> Result<(), String> {
        let mut probe = LaunchSpec::from_str(
            "kernel = \"k\"\nthreadgroups = [1]\nthreadgroup = [1]\n",
            Path::new("."),
            "probe",
        )
        .map_err(|e| e.to_string())?;
        apply(&mut probe, &self.key, value)
    }
}

/// Sets `key` to `value` in `spec`.
fn apply(spec: &mut LaunchSpec, key: &str, value: &str) -> Result<(), String> {
    if key == "threadgroup" {
        spec.threadgroup = parse_dims(value)?;
        return Ok(());
    }
    if let Some(name) = key.strip_prefix("template.").filter(|n| !n.is_empty()) {
        spec.template
            .insert(name.to_string(), parse_value(value, true)?);
        return Ok(());
    }
    if let Some(name) = key.strip_prefix("constants.").filter(|n| !n.is_empty()) {
        spec.constants
            .insert(name.to_string(), parse_value(value, false)?);
        return Ok(());
    }
    Err(format!(
        "`--vary {key}=...`: cannot vary `{key}` (varied keys are threadgroup, template.NAME and constants.NAME; models with --model, kernels with several --spec files)"
    ))
}

/// `8x8`, `256` or `16x16x1` as threadgroup dimensions.
fn parse_dims(value: &str) -> Result<Dims, String> {
    let parts: Vec<&str> = value.split('x').collect();
    let bad = || format!("`{value}` is not a threadgroup size (write it as 256, 16x16 or 8x8x4)");
    if parts.is_empty() || parts.len() > 3 {
        return Err(bad());
    }
    let mut dims = [1u32; 3];
    for (d, p) in dims.iter_mut().zip(&parts) {
        *d = p.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(bad)?;
    }
    Ok(Dims(dims))
}

/// A template argument or function constant value: a bool, an integer, a float, or (for
/// template arguments only) a type name.
fn parse_value(value: &str, types_allowed: bool) -> Result<SpecValue, String> {
    if let Ok(b) = value.parse::<bool>() {
        return Ok(SpecValue::Bool(b));
    }
    if let Ok(i) = value.parse::<i64>() {
        return Ok(SpecValue::Int(i));
    }
    if let Ok(f) = value.parse::<f64>() {
        return Ok(SpecValue::Float(f));
    }
    let is_name = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        && !value.starts_with(|c: char| c.is_ascii_digit());
    if types_allowed && is_name {
        Ok(SpecValue::Type(value.to_string()))
    } else if types_allowed {
        Err(format!("`{value}` is not a bool, a number or a type name"))
    } else {
        Err(format!(
            "`{value}` is not a bool or a number (function constants take no types)"
        ))
    }
}

/// What a variant's folder records about it (`variant.json`), so that `sweep merge` can
/// rebuild the table from folders alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantInfo {
    /// Position in the sweep's cartesian product (0 is the reference for outputs).
    pub index: usize,
    /// The folder name, unique within the sweep.
    pub name: String,
    /// The varied parameters and their values, in `--vary` order (`spec` and `model`
    /// when those vary).
    pub params: Vec<(String, String)>,
    /// The GPU model.
    pub model: String,
    /// The output buffers: name and MSL element type.
    pub outputs: Vec<(String, String)>,
}

/// One variant: what it is and the spec it runs.
#[derive(Clone, Debug)]
pub struct Variant {
    /// What `variant.json` says.
    pub info: VariantInfo,
    /// The launch spec with the variant's values applied.
    pub spec: LaunchSpec,
}

/// A base spec as given: its file (for the label) and contents.
pub struct BaseSpec {
    /// The file.
    pub path: PathBuf,
    /// Its contents.
    pub spec: LaunchSpec,
}

/// The cartesian product of specs × `--vary` values × models, specs outermost and
/// models innermost.
pub fn variants(
    specs: &[BaseSpec],
    varies: &[Vary],
    models: &[String],
) -> Result<Vec<Variant>, String> {
    let mut combos: Vec<Vec<(String, String)>> = vec![vec![]];
    for v in varies {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                v.values.iter().map(move |value| {
                    let mut c = c.clone();
                    c.push((v.key.clone(), value.clone()));
                    c
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for base in specs {
        for combo in &combos {
            for model in models {
                let mut spec = base.spec.clone();
                for (k, v) in combo {
                    apply(&mut spec, k, v)?;
                }
                make_npy_paths_absolute(&mut spec);
                let mut params = Vec::new();
                if specs.len() > 1 {
                    params.push(("spec".to_string(), spec_label(&base.path)));
                }
                params.extend(combo.iter().cloned());
                if models.len() > 1 {
                    params.push(("model".to_string(), model.clone()));
                }
                let index = out.len();
                let name = folder_name(index, &params, model);
                let outputs = spec
                    .buffers
                    .iter()
                    .filter(|b| b.output)
                    .map(|b| (b.name.clone(), b.elem.msl_name()))
                    .collect();
                out.push(Variant {
                    info: VariantInfo {
                        index,
                        name,
                        params,
                        model: model.clone(),
                        outputs,
                    },
                    spec,
                });
            }
        }
    }
    Ok(out)
}

/// The spec file's stem: what tables call a variant that differs by spec.
fn spec_label(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// `.npy` inputs resolve against the spec's folder; the variant's spec lives elsewhere.
fn make_npy_paths_absolute(spec: &mut LaunchSpec) {
    for b in &mut spec.buffers {
        if let Some(metalsim_launch::Init::Npy(p)) = &mut b.init
            && p.is_relative()
        {
            *p = spec.base_dir.join(&*p);
        }
    }
}

/// `003-threadgroup-8x8-m1`: the index, then the values, in characters safe in any
/// file system and shell.
fn folder_name(index: usize, params: &[(String, String)], model: &str) -> String {
    let mut name = format!("{index:03}");
    for (k, v) in params {
        if k != "model" {
            name.push('-');
            name.push_str(&format!("{}-{v}", k.rsplit('.').next().unwrap_or(k)));
        }
    }
    name.push('-');
    name.push_str(model);
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The element type of an output recorded in `variant.json`.
pub fn output_elem(msl_name: &str) -> Option<ElemType> {
    ElemType::from_msl_name(msl_name)
}

/// The arguments after `metalsim` that run `variant` from `dir` (its folder, holding
/// `spec.toml`): `run KERNEL --spec DIR/spec.toml --model M --out DIR --json` and the
/// compiler flags.
pub fn run_arguments(
    kernel: &Path,
    dir: &Path,
    model: &str,
    compile: &[OsString],
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "run".into(),
        kernel.into(),
        "--spec".into(),
        dir.join("spec.toml").into(),
        "--model".into(),
        model.into(),
        "--out".into(),
        dir.into(),
        "--json".into(),
    ];
    args.extend(compile.iter().cloned());
    args
}

/// `args` as one POSIX shell command line, each argument quoted where it needs to be.
pub fn shell_line(program: &str, args: &[OsString]) -> String {
    std::iter::once(program.to_string())
        .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
        .map(|a| shell_quote(&a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(spec: &str, varies: &[&str], models: &[&str]) -> Vec<(String, [u32; 3], String)> {
        let base = BaseSpec {
            path: PathBuf::from("base.toml"),
            spec: LaunchSpec::from_str(spec, Path::new("/specs"), "base.toml").unwrap(),
        };
        let varies: Vec<Vary> = varies.iter().map(|v| Vary::parse(v).unwrap()).collect();
        let models: Vec<String> = models.iter().map(|m| m.to_string()).collect();
        variants(&[base], &varies, &models)
            .unwrap()
            .into_iter()
            .map(|v| (v.info.name, v.spec.threadgroup.0, v.spec.to_toml()))
            .collect()
    }

    const SPEC: &str = "kernel = \"k\"\nthreads = [64]\nthreadgroup = [8]\n\
                        [[buffer]]\nindex = 0\nname = \"x\"\ntype = \"float\"\n\
                        init = { npy = \"x.npy\" }\noutput = true\n";

    #[test]
    fn the_product_runs_specs_then_varies_then_models() {
        let got = check(
            SPEC,
            &["threadgroup=8x8,16x16", "template.TILE=8,16"],
            &["m1", "m3"],
        );
        let names: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "000-threadgroup-8x8-TILE-8-m1",
                "001-threadgroup-8x8-TILE-8-m3",
                "002-threadgroup-8x8-TILE-16-m1",
                "003-threadgroup-8x8-TILE-16-m3",
                "004-threadgroup-16x16-TILE-8-m1",
                "005-threadgroup-16x16-TILE-8-m3",
                "006-threadgroup-16x16-TILE-16-m1",
                "007-threadgroup-16x16-TILE-16-m3",
            ]
        );
        assert_eq!(got[4].1, [16, 16, 1]);
        assert!(got[2].2.contains("TILE = 16"), "{}", got[2].2);
        assert!(got[0].2.contains("/specs/x.npy"), "{}", got[0].2);
    }

    #[test]
    fn values_take_their_types() {
        assert_eq!(parse_value("true", false), Ok(SpecValue::Bool(true)));
        assert_eq!(parse_value("32", false), Ok(SpecValue::Int(32)));
        assert_eq!(parse_value("0.5", false), Ok(SpecValue::Float(0.5)));
        assert_eq!(
            parse_value("half", true),
            Ok(SpecValue::Type("half".into()))
        );
        assert!(parse_value("half", false).is_err());
    }

    #[test]
    fn bad_varies_are_refused_with_the_reason() {
        let err = |t: &str| Vary::parse(t).unwrap_err();
        assert!(err("threadgroup").contains("expected KEY=V1,V2"));
        assert!(err("threadgroup=8x0").contains("not a threadgroup size"));
        assert!(err("threadgroup=8,,16").contains("empty"));
        assert!(err("grid=8").contains("cannot vary `grid`"));
        assert!(err("constants.N=float").contains("function constants take no types"));
    }

    #[test]
    fn commands_are_quoted_for_the_shell() {
        let args = run_arguments(
            Path::new("my kernel.metal"),
            Path::new("/out/000-m1"),
            "m1",
            &["-D".into(), "X=1".into()],
        );
        assert_eq!(
            shell_line("metalsim", &args),
            "metalsim run 'my kernel.metal' --spec /out/000-m1/spec.toml --model m1 --out /out/000-m1 --json -D X=1"
        );
    }
}
