//! The launch spec: a TOML file naming the kernel, the grid and every binding.
//!
//! `docs/launch-spec.md` is the user's reference; this module is its serde model. Every
//! table denies unknown keys, so a misspelt key is an error naming it, with its line and
//! column.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::dispatch::{ElemType, Grid};
use crate::error::SpecError;
use crate::init::Init;

/// The most threads a threadgroup may have in any Apple GPU; the simulator checks the
/// model's own limit too.
pub const MAX_THREADS_PER_THREADGROUP: u64 = 1024;

/// A launch spec as read from its file: what to run, on which grid, with which data.
///
/// `from_file`/`from_str` check what can be checked without the kernel (syntax, keys,
/// types, the grid); [`LaunchSpec::resolve`] checks the rest against the kernel's
/// parameters and makes a [`crate::Launch`].
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchSpec {
    /// The kernel function's host name.
    pub kernel: String,
    /// `dispatchThreads`: the grid in threads. Exactly one of `threads` and
    /// `threadgroups` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<Dims>,
    /// `dispatchThreadgroups`: the grid in threadgroups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threadgroups: Option<Dims>,
    /// Threads per threadgroup.
    pub threadgroup: Dims,
    /// `[[buffer]]` tables, in file order.
    #[serde(rename = "buffer", default, skip_serializing_if = "Vec::is_empty")]
    pub buffers: Vec<BufferSpec>,
    /// `[[threadgroup_memory]]` tables, in file order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threadgroup_memory: Vec<ThreadgroupMemorySpec>,
    /// `[[texture]]` tables, in file order.
    #[serde(rename = "texture", default, skip_serializing_if = "Vec::is_empty")]
    pub textures: Vec<crate::texture::TextureSpec>,
    /// `[[sampler]]` tables, in file order.
    #[serde(rename = "sampler", default, skip_serializing_if = "Vec::is_empty")]
    pub samplers: Vec<crate::sampler::SamplerSpec>,
    /// `[constants]`: the value of each function constant (`[[function_constant(n)]]`),
    /// keyed by its name or by its index written as a number.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub constants: BTreeMap<String, SpecValue>,
    /// `template = { T = "float", N = 256 }`: the template arguments of a templated
    /// kernel, by parameter name (types as strings, values as numbers or bools).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub template: BTreeMap<String, SpecValue>,
    /// The folder `.npy` paths are relative to (the spec file's folder), absolute.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// What error messages call the spec (the file as given).
    #[serde(skip)]
    pub origin: String,
}

/// A `[[buffer]]` table: one `[[buffer(index)]]` binding and its contents.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    /// The binding index `n` of `[[buffer(n)]]`.
    pub index: u32,
    /// The buffer's name: for messages and the output file `<name>.npy`.
    pub name: String,
    /// The element type (`type` in the file).
    #[serde(rename = "type", with = "elem_type_serde")]
    pub elem: ElemType,
    /// Number of elements; may be omitted when `init` (`values`, `npy`) or the kernel
    /// parameter (a reference) determines it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// The initial contents; `None` means zeros.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<Init>,
    /// Written to `OUT/<name>.npy` after the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub output: bool,
}

/// A value in `[constants]` or `template`: a bool, an integer, a floating-point number,
/// (in `template` only) a type name, or (in `[constants]` only, for a vector function
/// constant) an array of numbers or bools.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SpecValue {
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A type name (`"float"`, `"half4"`, a struct's name).
    Type(String),
    /// The components of a vector (`[0.25, 0.5, 0.25, 0.0]` for a `float4`).
    List(Vec<SpecValue>),
}

/// A `[[threadgroup_memory]]` table: the size of a `[[threadgroup(index)]]` binding.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadgroupMemorySpec {
    /// The binding index `n` of `[[threadgroup(n)]]`.
    pub index: u32,
    /// Size in bytes: more than 0 and a multiple of 16, as Metal requires.
    pub bytes: u32,
}

/// Three dimensions, each at least 1. The file may give 1 to 3 of them (`[256]` is
/// `[256, 1, 1]`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Dims(pub [u32; 3]);

impl Dims {
    /// The product of the dimensions.
    pub fn product(self) -> u64 {
        self.0.iter().map(|&d| d as u64).product()
    }
}

impl fmt::Display for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.0;
        write!(f, "[{x}, {y}, {z}]")
    }
}

impl<'de> Deserialize<'de> for Dims {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dims, D::Error> {
        struct DimsVisitor;
        impl<'de> Visitor<'de> for DimsVisitor {
            type Value = Dims;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of 1 to 3 positive integers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Dims, A::Error> {
                let mut dims = [1u32; 3];
                let mut n = 0;
                while let Some(d) = seq.next_element::<u32>()? {
                    if n == 3 {
                        return Err(de::Error::custom("more than 3 dimensions"));
                    }
                    if d == 0 {
                        return Err(de::Error::custom("every dimension must be at least 1"));
                    }
                    dims[n] = d;
                    n += 1;
                }
                if n == 0 {
                    return Err(de::Error::custom("no dimensions; give 1 to 3"));
                }
                Ok(Dims(dims))
            }
        }
        d.deserialize_seq(DimsVisitor)
    }
}

impl Serialize for Dims {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// `type = "float4"` in the file, an [`ElemType`] in memory.
mod elem_type_serde {
    use super::*;

    pub(super) fn serialize<S: Serializer>(e: &ElemType, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&e.msl_name())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ElemType, D::Error> {
        let name = String::deserialize(d)?;
        ElemType::from_msl_name(&name).ok_or_else(|| {
            de::Error::custom(format!(
                "unknown type `{name}`; expected bool, char, uchar, short, ushort, int, uint, \
                 long, ulong, half, bfloat or float, or a vector of 2 to 4 of them (float4)"
            ))
        })
    }
}

/// A spec file's text and the folder its relative paths resolve against.
pub(crate) fn read_spec_file(path: &Path) -> Result<(String, &Path), SpecError> {
    let text = std::fs::read_to_string(path).map_err(|source| SpecError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((text, dir))
}

impl LaunchSpec {
    /// Reads a spec file. `.npy` paths in it resolve against the file's folder.
    pub fn from_file(path: &Path) -> Result<LaunchSpec, SpecError> {
        let (text, dir) = read_spec_file(path)?;
        LaunchSpec::from_str(&text, dir, &path.display().to_string())
    }

    /// Parses a spec from text. `.npy` paths resolve against `base_dir` (made absolute
    /// now, against the current folder); `origin` is what messages call the spec.
    pub fn from_str(text: &str, base_dir: &Path, origin: &str) -> Result<LaunchSpec, SpecError> {
        let mut spec: LaunchSpec =
            toml::from_str(text).map_err(|e| syntax_error(text, origin, &e))?;
        spec.base_dir = std::path::absolute(base_dir).unwrap_or_else(|_| base_dir.to_path_buf());
        spec.origin = origin.to_string();
        spec.grid()?;
        if let Some((name, SpecValue::Type(t))) = spec
            .constants
            .iter()
            .find(|(_, v)| matches!(v, SpecValue::Type(_)))
        {
            return Err(SpecError::Launch {
                origin: spec.origin.clone(),
                message: format!(
                    "`[constants]`: `{name} = \"{t}\"` is a string; a function constant is a bool or a number"
                ),
            });
        }
        if let Some((name, _)) = spec.constants.iter().find(|(_, v)| match v {
            SpecValue::List(items) => {
                items.is_empty()
                    || items
                        .iter()
                        .any(|i| matches!(i, SpecValue::Type(_) | SpecValue::List(_)))
            }
            _ => false,
        }) {
            return Err(SpecError::Launch {
                origin: spec.origin.clone(),
                message: format!(
                    "`[constants]`: `{name}` is an array; a vector function constant's array holds its components, bools or numbers"
                ),
            });
        }
        if let Some((name, _)) = spec
            .template
            .iter()
            .find(|(_, v)| matches!(v, SpecValue::List(_)))
        {
            return Err(SpecError::Launch {
                origin: spec.origin.clone(),
                message: format!(
                    "`template`: `{name}` is an array; a template argument is a type name, a bool or a number"
                ),
            });
        }
        Ok(spec)
    }

    /// The grid, checking that exactly one of `threads` and `threadgroups` is given and
    /// that the threadgroup has at most 1024 threads.
    pub fn grid(&self) -> Result<Grid, SpecError> {
        let fail = |message: String| SpecError::Launch {
            origin: self.origin.clone(),
            message,
        };
        let tg = self.threadgroup;
        if tg.0.contains(&0) {
            return Err(fail(format!(
                "`threadgroup = {tg}`: every dimension must be at least 1"
            )));
        }
        if tg.product() > MAX_THREADS_PER_THREADGROUP {
            return Err(fail(format!(
                "`threadgroup = {tg}` has {} threads; a threadgroup has at most \
                 {MAX_THREADS_PER_THREADGROUP}",
                tg.product()
            )));
        }
        let grid = match (self.threads, self.threadgroups) {
            (Some(t), None) => Grid::Threads(t.0),
            (None, Some(g)) => Grid::Threadgroups(g.0),
            (Some(_), Some(_)) => {
                return Err(fail(
                    "both `threads` and `threadgroups` are given; give one \
                     (`threads` for dispatchThreads, `threadgroups` for dispatchThreadgroups)"
                        .into(),
                ));
            }
            (None, None) => {
                return Err(fail(
                    "the grid is missing: give `threads` (dispatchThreads) or \
                     `threadgroups` (dispatchThreadgroups)"
                        .into(),
                ));
            }
        };
        let (key, dims) = match grid {
            Grid::Threads(d) => ("threads", d),
            Grid::Threadgroups(d) => ("threadgroups", d),
        };
        if dims.contains(&0) {
            return Err(fail(format!(
                "`{key} = {}`: every dimension must be at least 1",
                Dims(dims)
            )));
        }
        Ok(grid)
    }

    /// The spec as TOML text (without `base_dir` and `origin`).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| unreachable!("a spec always serializes: {e}"))
    }
}

/// A TOML or shape error of a spec's text as a [`SpecError::Syntax`] at its line and
/// column.
pub(crate) fn syntax_error(text: &str, origin: &str, e: &toml::de::Error) -> SpecError {
    let (line, column) = e
        .span()
        .map(|s| line_column(text, s.start))
        .unwrap_or((1, 1));
    SpecError::Syntax {
        origin: origin.to_string(),
        line,
        column,
        // serde says "field"; the format (and TOML) says "key".
        message: e
            .message()
            .trim_end()
            .replace("unknown field `", "unknown key `")
            .replace("missing field `", "missing key `"),
    }
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::init::Distribution;
    use crate::value::Scalar;

    fn parse(text: &str) -> Result<LaunchSpec, String> {
        LaunchSpec::from_str(text, Path::new("/specs"), "spec.toml").map_err(|e| e.to_string())
    }

    const EXAMPLE: &str = r#"
kernel = "matmul_tiled"
threads = [1024, 1024, 1]
threadgroup = [16, 16, 1]

[[buffer]]
index = 0
name = "A"
type = "float"
count = 1048576
init = { random = "uniform", min = 0.0, max = 1.0, seed = 1 }
output = false

[[buffer]]
index = 3
name = "N"
type = "uint"
init = { values = [1024] }

[[threadgroup_memory]]
index = 0
bytes = 1024
"#;

    #[test]
    fn the_issue_example_parses() {
        let spec = parse(EXAMPLE).unwrap();
        assert_eq!(spec.kernel, "matmul_tiled");
        assert_eq!(spec.grid().unwrap(), Grid::Threads([1024, 1024, 1]));
        assert_eq!(spec.threadgroup, Dims([16, 16, 1]));
        assert_eq!(spec.buffers.len(), 2);
        assert_eq!(spec.buffers[0].count, Some(1048576));
        assert_eq!(
            spec.buffers[0].init,
            Some(Init::Random {
                distribution: Distribution::Uniform {
                    min: Some(Scalar::Float(0.0)),
                    max: Some(Scalar::Float(1.0))
                },
                seed: 1
            })
        );
        assert_eq!(
            spec.buffers[1].elem,
            ElemType::from_msl_name("uint").unwrap()
        );
        assert_eq!(spec.buffers[1].count, None);
        assert_eq!(
            spec.threadgroup_memory,
            [ThreadgroupMemorySpec {
                index: 0,
                bytes: 1024
            }]
        );
        assert_eq!(spec.base_dir, Path::new("/specs"));
    }

    #[test]
    fn short_dims_are_padded_with_ones() {
        let spec = parse("kernel = \"k\"\nthreadgroups = [8]\nthreadgroup = [32, 2]\n").unwrap();
        assert_eq!(spec.grid().unwrap(), Grid::Threadgroups([8, 1, 1]));
        assert_eq!(spec.threadgroup, Dims([32, 2, 1]));
    }

    #[test]
    fn specs_round_trip_through_toml() {
        let with_output = EXAMPLE.replace("output = false", "output = true");
        for text in [EXAMPLE, &with_output] {
            let spec = parse(text).unwrap();
            let again = parse(&spec.to_toml()).unwrap();
            assert_eq!(spec, again);
        }
        let mixed = "kernel = \"k\"\nthreadgroups = [2]\nthreadgroup = [1]\n[[buffer]]\n\
                     index = 0\nname = \"a\"\ntype = \"float\"\n\
                     init = { values = [1, 2.5, nan, -inf] }\noutput = true\n";
        let spec = parse(mixed).unwrap();
        let text = spec.to_toml();
        let again = parse(&text).unwrap();
        // NaN is not equal to itself: compare the text instead.
        assert_eq!(again.to_toml(), text);
    }

    #[test]
    fn constants_and_template_arguments() {
        let spec = parse(
            "kernel = \"softmax\"\nthreads = [32]\nthreadgroup = [32]\n\
             template = { T = \"half\", N = 256 }\n[constants]\nhas_mask = true\n3 = 1.5\n",
        )
        .unwrap();
        assert_eq!(spec.template["T"], SpecValue::Type("half".into()));
        assert_eq!(spec.template["N"], SpecValue::Int(256));
        assert_eq!(spec.constants["has_mask"], SpecValue::Bool(true));
        assert_eq!(spec.constants["3"], SpecValue::Float(1.5));
        let again = parse(&spec.to_toml()).unwrap();
        assert_eq!(spec, again);
        let err =
            parse("kernel = \"k\"\nthreads = [1]\nthreadgroup = [1]\n[constants]\nx = \"a\"\n")
                .unwrap_err();
        assert!(
            err.contains("a function constant is a bool or a number"),
            "{err}"
        );
    }

    #[test]
    fn vector_function_constants_are_arrays_of_their_components() {
        let head = "kernel = \"k\"\nthreads = [1]\nthreadgroup = [1]\n";
        let spec = parse(&format!(
            "{head}[constants]\nweights = [0.25, 0.5, 1, -2]\nmask = [true, false]\n"
        ))
        .unwrap();
        assert_eq!(
            spec.constants["weights"],
            SpecValue::List(vec![
                SpecValue::Float(0.25),
                SpecValue::Float(0.5),
                SpecValue::Int(1),
                SpecValue::Int(-2)
            ])
        );
        assert_eq!(parse(&spec.to_toml()).unwrap(), spec);
        for bad in ["w = []", "w = [\"a\", 1]", "w = [[1, 2], [3, 4]]"] {
            let err = parse(&format!("{head}[constants]\n{bad}\n")).unwrap_err();
            assert!(err.contains("`w` is an array"), "{bad}: {err}");
        }
        let err = parse(&format!("{head}template = {{ N = [1, 2] }}\n")).unwrap_err();
        assert!(err.contains("`N` is an array"), "{err}");
    }

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_column("é\nxé = 1", 6), (2, 3));
    }
}
