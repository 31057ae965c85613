//! MLX mode: a kernel written as MLX's `mx.fast.metal_kernel` takes it, a body only.
//!
//! An `[mlx]` spec (`docs/launch-spec.md`, "MLX mode") gives what MLX's call gives: the
//! kernel's name, input and output names, template arguments, the grid and threadgroup
//! (`dispatchThreads`), output shapes and dtypes, `atomic_outputs`, `init_value`,
//! `ensure_row_contiguous`, and the inputs as `.npy` files whose shapes and dtypes come
//! from the files. [`MlxSpec::kernel`] generates the full kernel around the body as MLX
//! documents it (inputs as `const device T*` in order, each followed by `{name}_shape`,
//! `{name}_strides` and `{name}_ndim` when the body uses them, then the outputs, then the
//! Metal attributes the body uses) together with the ordinary [`LaunchSpec`] that binds
//! it, and [`MlxSpec::write_outputs`] writes each output with its shape.
//!
//! Not supported: non-contiguous inputs (a `.npy` file is read in C order, so the
//! strides given to the kernel are always the row-major ones, whatever
//! `ensure_row_contiguous` says), and scalar inputs bound as `constant T&`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use half::{bf16, f16};
use metalsim_isa::Type;
use npyz::WriterBuilder;
use serde::Deserialize;

use crate::dispatch::{ElemType, Launch};
use crate::error::SpecError;
use crate::init::Init;
use crate::spec::{
    BufferSpec, Dims, LaunchSpec, MAX_THREADS_PER_THREADGROUP, SpecValue, read_spec_file,
};
use crate::value::Scalar;

/// The Metal attributes a body may use (MSL specification, table 5.8), with the type
/// each is declared with: MLX adds the ones the body names as kernel parameters.
const ATTRIBUTES: [(&str, &str); 20] = [
    ("dispatch_quadgroups_per_threadgroup", "uint"),
    ("dispatch_simdgroups_per_threadgroup", "uint"),
    ("dispatch_threads_per_threadgroup", "uint3"),
    ("grid_origin", "uint3"),
    ("grid_size", "uint3"),
    ("quadgroup_index_in_threadgroup", "uint"),
    ("quadgroups_per_threadgroup", "uint"),
    ("simdgroup_index_in_threadgroup", "uint"),
    ("simdgroups_per_threadgroup", "uint"),
    ("thread_execution_width", "uint"),
    ("thread_index_in_quadgroup", "uint"),
    ("thread_index_in_simdgroup", "uint"),
    ("thread_index_in_threadgroup", "uint"),
    ("thread_position_in_grid", "uint3"),
    ("thread_position_in_threadgroup", "uint3"),
    ("threadgroup_position_in_grid", "uint3"),
    ("threadgroups_per_grid", "uint3"),
    ("threads_per_grid", "uint3"),
    ("threads_per_simdgroup", "uint"),
    ("threads_per_threadgroup", "uint3"),
];

/// The utilities every generated kernel has, as MLX's `utils.h` provides them: the
/// location of a row-major element index in a strided array, and ceiling division.
const UTILITIES: &str = "\
#include <metal_stdlib>
using namespace metal;

// Where element `elem` (counted in row-major order) lies in an array of `ndim`
// dimensions with the given shape and strides.
static inline int64_t elem_to_loc(uint elem, constant const int* shape,
                                  constant const int64_t* strides, int ndim) {
    int64_t loc = 0;
    for (int i = ndim - 1; i >= 0; --i) {
        loc += int64_t(elem % uint(shape[i])) * strides[i];
        elem /= uint(shape[i]);
    }
    return loc;
}

// a / b, rounded up.
static inline int ceildiv(int a, int b) {
    return (a + b - 1) / b;
}
";

/// An `[mlx]` spec, checked, with its inputs' shapes and dtypes read from their files.
#[derive(Clone, PartialEq, Debug)]
pub struct MlxSpec {
    /// The kernel's name; the generated kernel is `custom_kernel_{name}`.
    pub name: String,
    /// The body file (`source`), absolute, when the spec names one.
    pub source: Option<PathBuf>,
    /// The inputs in `input_names` order.
    pub inputs: Vec<MlxInput>,
    /// The outputs in `output_names` order.
    pub outputs: Vec<MlxOutput>,
    /// Template arguments by name: types as MSL names, ints and bools as values.
    pub template: BTreeMap<String, SpecValue>,
    /// Threads in the grid (`dispatchThreads`).
    pub grid: Dims,
    /// Threads per threadgroup.
    pub threadgroup: Dims,
    /// Outputs are declared `device atomic<T>*`.
    pub atomic_outputs: bool,
    /// Every output element starts as this value (zeros when not given).
    pub init_value: Option<f64>,
    /// MLX's flag; inputs read from `.npy` files are row-contiguous either way.
    pub ensure_row_contiguous: bool,
    /// The folder relative paths resolve against (the spec file's), absolute.
    pub base_dir: PathBuf,
    /// What error messages call the spec.
    pub origin: String,
}

/// One input array: a `.npy` file.
#[derive(Clone, PartialEq, Debug)]
pub struct MlxInput {
    /// The name the body uses.
    pub name: String,
    /// The file, absolute.
    pub path: PathBuf,
    /// The element type, from the file's dtype.
    pub elem: ElemType,
    /// The shape, from the file.
    pub shape: Vec<u64>,
}

/// One output array.
#[derive(Clone, PartialEq, Debug)]
pub struct MlxOutput {
    /// The name the body uses; also the output file's (`<name>.npy`).
    pub name: String,
    /// The element type (`output_dtypes`).
    pub elem: ElemType,
    /// The shape (`output_shapes`).
    pub shape: Vec<u64>,
}

/// The kernel generated from a body, and the launch that runs it.
#[derive(Clone, PartialEq, Debug)]
pub struct MlxKernel {
    /// The source to compile: the body is `#include`d from its file, so diagnostics
    /// and fault locations name the body file's own lines.
    pub compiled: String,
    /// The same source with the body written out, as MLX's `verbose=True` prints it.
    pub shown: String,
    /// The ordinary launch spec binding every parameter of the generated kernel.
    pub spec: LaunchSpec,
}

/// The file's form, as serde reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    mlx: RawMlx,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMlx {
    name: String,
    #[serde(default)]
    source: Option<String>,
    input_names: Vec<String>,
    output_names: Vec<String>,
    #[serde(default)]
    template: BTreeMap<String, SpecValue>,
    grid: Dims,
    threadgroup: Dims,
    output_shapes: Vec<Vec<u64>>,
    output_dtypes: Vec<String>,
    #[serde(default)]
    atomic_outputs: bool,
    #[serde(default)]
    init_value: Option<f64>,
    #[serde(default = "yes")]
    ensure_row_contiguous: bool,
    #[serde(default)]
    inputs: BTreeMap<String, String>,
}

fn yes() -> bool {
    true
}

/// Whether a spec's text is in MLX form (has an `[mlx]` table). Text that is not valid
/// TOML is not: the ordinary parser then reports the syntax error.
pub fn is_mlx_spec(text: &str) -> bool {
    text.parse::<toml::Table>()
        .is_ok_and(|t| t.contains_key("mlx"))
}

impl MlxSpec {
    /// Reads an `[mlx]` spec file; `.npy` and `source` paths resolve against its folder.
    pub fn from_file(path: &Path) -> Result<MlxSpec, SpecError> {
        let (text, dir) = read_spec_file(path)?;
        MlxSpec::from_str(&text, dir, &path.display().to_string())
    }

    /// Parses an `[mlx]` spec from text and reads its inputs' headers.
    pub fn from_str(text: &str, base_dir: &Path, origin: &str) -> Result<MlxSpec, SpecError> {
        let at = |key: &str, message: String| SpecError::Syntax {
            origin: origin.to_string(),
            line: key_line(text, key),
            column: 1,
            message,
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|s| line_column(text, s.start))
                .unwrap_or((1, 1));
            SpecError::Syntax {
                origin: origin.to_string(),
                line,
                column,
                message: e
                    .message()
                    .trim_end()
                    .replace("unknown field `", "unknown key `")
                    .replace("missing field `", "missing key `"),
            }
        })?;
        let m = raw.mlx;
        let base_dir = std::path::absolute(base_dir).unwrap_or_else(|_| base_dir.to_path_buf());

        if !is_identifier(&m.name) {
            return Err(at(
                "name",
                format!("`name = \"{}\"` is not an identifier", m.name),
            ));
        }
        let mut seen = BTreeSet::new();
        for (key, names) in [
            ("input_names", &m.input_names),
            ("output_names", &m.output_names),
        ] {
            for n in names {
                if !is_identifier(n) {
                    return Err(at(key, format!("`{n}` is not an identifier")));
                }
                if ATTRIBUTES.iter().any(|(a, _)| a == n) || m.template.contains_key(n) {
                    return Err(at(
                        key,
                        format!("`{n}` is a Metal attribute or template parameter name"),
                    ));
                }
                if !seen.insert(n.to_ascii_lowercase()) {
                    return Err(at(
                        key,
                        format!(
                            "`{n}` names two arrays (names must differ, even ignoring case, \
                             to make distinct output files)"
                        ),
                    ));
                }
            }
        }
        if m.output_names.is_empty() {
            return Err(at("output_names", "give at least one output".into()));
        }
        for (name, value) in &m.template {
            if !is_identifier(name) {
                return Err(at("template", format!("`{name}` is not an identifier")));
            }
            match value {
                SpecValue::Type(t) if ElemType::from_msl_name(t).is_none_or(|e| e.lanes != 1) => {
                    return Err(at(
                        "template",
                        format!("`{name} = \"{t}\"`: not a scalar MSL type (float, half, int...)"),
                    ));
                }
                SpecValue::Float(_) => {
                    return Err(at(
                        "template",
                        format!("`{name}`: a template argument is a type, an int or a bool"),
                    ));
                }
                _ => {}
            }
        }
        if m.threadgroup.product() > MAX_THREADS_PER_THREADGROUP {
            return Err(at(
                "threadgroup",
                format!(
                    "`threadgroup = {}` has {} threads; a threadgroup has at most \
                     {MAX_THREADS_PER_THREADGROUP}",
                    m.threadgroup,
                    m.threadgroup.product()
                ),
            ));
        }
        let n = m.output_names.len();
        for (key, len) in [
            ("output_shapes", m.output_shapes.len()),
            ("output_dtypes", m.output_dtypes.len()),
        ] {
            if len != n {
                return Err(at(
                    key,
                    format!(
                        "{len} given for {n} output{}",
                        if n == 1 { "" } else { "s" }
                    ),
                ));
            }
        }
        let mut outputs = Vec::with_capacity(n);
        for ((name, shape), dtype) in m
            .output_names
            .iter()
            .zip(&m.output_shapes)
            .zip(&m.output_dtypes)
        {
            let elem = ElemType::from_msl_name(dtype)
                .filter(|e| e.lanes == 1)
                .ok_or_else(|| {
                    at(
                        "output_dtypes",
                        format!("`{dtype}` is not a scalar MSL type (float, half, int...)"),
                    )
                })?;
            if shape
                .iter()
                .try_fold(1u64, |p, &d| p.checked_mul(d))
                .is_none_or(|c| c == 0)
            {
                return Err(at(
                    "output_shapes",
                    format!("output `{name}`: shape {shape:?} has no elements or is too large"),
                ));
            }
            outputs.push(MlxOutput {
                name: name.clone(),
                elem,
                shape: shape.clone(),
            });
        }
        for given in m.inputs.keys() {
            if !m.input_names.contains(given) {
                return Err(at(
                    given,
                    format!("`[mlx.inputs]` gives `{given}`, which is not in `input_names`"),
                ));
            }
        }
        let mut inputs = Vec::with_capacity(m.input_names.len());
        for name in &m.input_names {
            let Some(file) = m.inputs.get(name) else {
                return Err(at(
                    "input_names",
                    format!(
                        "input `{name}` has no file: add `{name} = \"FILE.npy\"` to `[mlx.inputs]`"
                    ),
                ));
            };
            let path = base_dir.join(file);
            let (elem, shape) = crate::npy::peek_type_and_shape(&path)
                .map_err(|e| at(name, format!("input `{name}` ({}): {e}", path.display())))?;
            if shape.len() > 32 {
                return Err(at(
                    name,
                    format!("input `{name}` has more than 32 dimensions"),
                ));
            }
            inputs.push(MlxInput {
                name: name.clone(),
                path,
                elem,
                shape,
            });
        }
        Ok(MlxSpec {
            name: m.name,
            source: m.source.map(|s| base_dir.join(s)),
            inputs,
            outputs,
            template: m.template,
            grid: m.grid,
            threadgroup: m.threadgroup,
            atomic_outputs: m.atomic_outputs,
            init_value: m.init_value,
            ensure_row_contiguous: m.ensure_row_contiguous,
            base_dir,
            origin: origin.to_string(),
        })
    }

    /// The generated kernel's host name.
    pub fn kernel_name(&self) -> String {
        format!("custom_kernel_{}", self.name)
    }

    /// Generates the kernel around `body` (read from `body_path`) and the launch spec
    /// binding it.
    pub fn kernel(&self, body: &str, body_path: &Path) -> MlxKernel {
        let used = identifiers(body);
        let mut params = Vec::new();
        let mut buffers = Vec::new();
        let mut index = 0u32;
        let mut bind = |params: &mut Vec<String>, decl: String, spec: BufferSpec| {
            params.push(format!("{decl} [[buffer({})]]", spec.index));
            buffers.push(spec);
        };
        for input in &self.inputs {
            let ty = input.elem.msl_name();
            bind(
                &mut params,
                format!("const device {ty}* {}", input.name),
                buffer(
                    index,
                    &input.name,
                    input.elem,
                    Init::Npy(input.path.clone()),
                    false,
                ),
            );
            index += 1;
            // A 0-d array still gets one (unused) element, as a buffer cannot be empty.
            let dims: Vec<i64> = if input.shape.is_empty() {
                vec![1]
            } else {
                input.shape.iter().map(|&d| d as i64).collect()
            };
            let strides = row_major_strides(&dims);
            let extras = [
                ("shape", "const constant int*", "int", dims),
                ("strides", "const constant int64_t*", "long", strides),
                (
                    "ndim",
                    "const constant int&",
                    "int",
                    vec![input.shape.len() as i64],
                ),
            ];
            for (suffix, decl, elem, values) in extras {
                let name = format!("{}_{suffix}", input.name);
                if !used.contains(name.as_str()) {
                    continue;
                }
                let elem = ElemType::from_msl_name(elem).expect("a known type name");
                let values = Init::Values(values.into_iter().map(Scalar::Int).collect());
                bind(
                    &mut params,
                    format!("{decl} {name}"),
                    buffer(index, &name, elem, values, false),
                );
                index += 1;
            }
        }
        let init = self.init_value.map(|v| {
            if v.fract() == 0.0 && v.abs() < 9e15 {
                Init::Fill(Scalar::Int(v as i64))
            } else {
                Init::Fill(Scalar::Float(v))
            }
        });
        for output in &self.outputs {
            let ty = output.elem.msl_name();
            let decl = if self.atomic_outputs {
                format!("device atomic<{ty}>* {}", output.name)
            } else {
                format!("device {ty}* {}", output.name)
            };
            let mut spec = buffer(
                index,
                &output.name,
                output.elem,
                Init::Fill(Scalar::Int(0)),
                true,
            );
            spec.init = init.clone();
            spec.count = Some(output.shape.iter().product());
            bind(&mut params, decl, spec);
            index += 1;
        }
        for (attr, ty) in ATTRIBUTES {
            if used.contains(attr) {
                params.push(format!("{ty} {attr} [[{attr}]]"));
            }
        }
        let template = if self.template.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = self
                .template
                .iter()
                .map(|(name, value)| match value {
                    SpecValue::Type(_) => format!("typename {name}"),
                    SpecValue::Bool(_) => format!("bool {name}"),
                    _ => format!("int {name}"),
                })
                .collect();
            format!("template <{}>\n", list.join(", "))
        };
        let head = format!(
            "{UTILITIES}\n{template}[[kernel]] void {}(\n    {}) {{\n",
            self.kernel_name(),
            params.join(",\n    ")
        );
        let shown = format!("{head}{}\n}}\n", body.trim_end());
        let path_text = body_path.display().to_string();
        let compiled = if path_text.contains(['"', '\n', '\\']) {
            shown.clone()
        } else {
            format!("{head}#include \"{path_text}\"\n}}\n")
        };
        let spec = LaunchSpec {
            kernel: self.kernel_name(),
            threads: Some(self.grid),
            threadgroups: None,
            threadgroup: self.threadgroup,
            buffers,
            threadgroup_memory: Vec::new(),
            constants: BTreeMap::new(),
            template: self.template.clone(),
            base_dir: self.base_dir.clone(),
            origin: self.origin.clone(),
        };
        MlxKernel {
            compiled,
            shown,
            spec,
        }
    }

    /// Writes each output as `dir/<name>.npy` with its shape (`bfloat` as float32), from
    /// the final buffers of a run of [`MlxKernel::spec`]; returns the paths written.
    pub fn write_outputs(
        &self,
        launch: &Launch,
        final_buffers: &[Vec<u8>],
        dir: &Path,
    ) -> Result<Vec<PathBuf>, SpecError> {
        let fail = |path: &Path, message: String| SpecError::Output {
            path: path.display().to_string(),
            message,
        };
        std::fs::create_dir_all(dir).map_err(|e| fail(dir, e.to_string()))?;
        let mut written = Vec::new();
        for output in &self.outputs {
            let path = dir.join(format!("{}.npy", output.name));
            let bytes = launch
                .buffers
                .iter()
                .zip(final_buffers)
                .find(|(b, _)| b.name == output.name)
                .map(|(_, bytes)| bytes)
                .ok_or_else(|| fail(&path, "the run has no such buffer".into()))?;
            write_shaped(&path, output.elem, &output.shape, bytes)
                .map_err(|e| fail(&path, e.to_string()))?;
            written.push(path);
        }
        Ok(written)
    }
}

fn buffer(index: u32, name: &str, elem: ElemType, init: Init, output: bool) -> BufferSpec {
    BufferSpec {
        index,
        name: name.to_string(),
        elem,
        count: None,
        init: Some(init),
        output,
    }
}

/// The strides (in elements) of a row-major array.
fn row_major_strides(dims: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(dims[i + 1]);
    }
    strides
}

/// The identifiers a body's text contains (comments included, as MLX's search does).
fn identifiers(body: &str) -> BTreeSet<&str> {
    body.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| is_identifier(w))
        .collect()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The 1-based line where `key` is assigned (`key = ...`), or 1 when it is not written.
fn key_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(1, |i| i + 1)
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

/// Writes buffer bytes of scalar `elem`s as a `.npy` file of the given shape.
fn write_shaped(path: &Path, elem: ElemType, shape: &[u64], bytes: &[u8]) -> io::Result<()> {
    let size = elem.scalar.bytes() as usize;
    let items = bytes.chunks_exact(size);
    let w = BufWriter::new(File::create(path)?);
    fn le<const N: usize>(b: &[u8]) -> [u8; N] {
        b.try_into().expect("chunks of the element size")
    }
    match elem.scalar {
        Type::Pred => write_items(w, shape, items.map(|b| b[0] != 0)),
        Type::I8 => write_items(w, shape, items.map(|b| b[0] as i8)),
        Type::U8 => write_items(w, shape, items.map(|b| b[0])),
        Type::I16 => write_items(w, shape, items.map(|b| i16::from_le_bytes(le(b)))),
        Type::U16 => write_items(w, shape, items.map(|b| u16::from_le_bytes(le(b)))),
        Type::I32 => write_items(w, shape, items.map(|b| i32::from_le_bytes(le(b)))),
        Type::U32 => write_items(w, shape, items.map(|b| u32::from_le_bytes(le(b)))),
        Type::I64 => write_items(w, shape, items.map(|b| i64::from_le_bytes(le(b)))),
        Type::U64 => write_items(w, shape, items.map(|b| u64::from_le_bytes(le(b)))),
        Type::F16 => write_items(w, shape, items.map(|b| f16::from_le_bytes(le(b)))),
        Type::F32 => write_items(w, shape, items.map(|b| f32::from_le_bytes(le(b)))),
        Type::BF16 => write_items(w, shape, items.map(|b| bf16::from_le_bytes(le(b)).to_f32())),
    }
}

fn write_items<T: npyz::AutoSerialize>(
    w: BufWriter<File>,
    shape: &[u64],
    items: impl Iterator<Item = T>,
) -> io::Result<()> {
    let mut npy = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(w)
        .begin_nd()?;
    for x in items {
        npy.push(&x)?;
    }
    npy.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXP: &str = r#"
[mlx]
name = "myexp"
input_names = ["inp"]
output_names = ["out"]
template = { T = "float" }
grid = [16, 1, 1]
threadgroup = [8, 1, 1]
output_shapes = [[4, 4]]
output_dtypes = ["float"]
[mlx.inputs]
inp = "inp.npy"
"#;

    /// Writes a float32 `inp.npy` of shape (4, 4) into a fresh folder and parses `text`
    /// against it.
    fn check(text: &str) -> Result<MlxSpec, String> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("metalsim-mlx-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut w = npyz::WriteOptions::<f32>::new()
            .default_dtype()
            .shape(&[4, 4])
            .writer(BufWriter::new(File::create(dir.join("inp.npy")).unwrap()))
            .begin_nd()
            .unwrap();
        for i in 0..16 {
            w.push(&(i as f32)).unwrap();
        }
        w.finish().unwrap();
        MlxSpec::from_str(text, &dir, "s.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn the_exp_example_generates_mlx_signature() {
        let spec = check(EXP).unwrap();
        assert_eq!(spec.inputs[0].shape, [4, 4]);
        assert_eq!(spec.inputs[0].elem.msl_name(), "float");
        let body = "uint elem = thread_position_in_grid.x;\nout[elem] = metal::exp(inp[elem]);\n";
        let k = spec.kernel(body, Path::new("/b/exp.metal"));
        assert!(
            k.shown.contains(
                "template <typename T>\n[[kernel]] void custom_kernel_myexp(\n    \
             const device float* inp [[buffer(0)]],\n    device float* out [[buffer(1)]],\n    \
             uint3 thread_position_in_grid [[thread_position_in_grid]]) {\nuint elem"
            ),
            "{}",
            k.shown
        );
        assert!(k.compiled.contains("#include \"/b/exp.metal\"\n}"));
        assert_eq!(k.spec.buffers.len(), 2);
        assert_eq!(k.spec.buffers[1].count, Some(16));
        assert!(k.spec.buffers[1].output);
    }

    #[test]
    fn shapes_strides_and_ndim_only_when_used() {
        let spec = check(&EXP.replace("myexp", "strided")).unwrap();
        let k = spec.kernel(
            "out[0] = inp[elem_to_loc(0, inp_shape, inp_strides, inp_ndim)];",
            Path::new("b.metal"),
        );
        assert!(
            k.shown
                .contains("const constant int* inp_shape [[buffer(1)]]")
        );
        assert!(
            k.shown
                .contains("const constant int64_t* inp_strides [[buffer(2)]]")
        );
        assert!(
            k.shown
                .contains("const constant int& inp_ndim [[buffer(3)]]")
        );
        assert!(k.shown.contains("device float* out [[buffer(4)]]"));
        assert_eq!(
            k.spec.buffers[2].init,
            Some(Init::Values(vec![Scalar::Int(4), Scalar::Int(1)]))
        );
        let k = spec.kernel("out[0] = inp_shape[0];", Path::new("b.metal"));
        assert!(!k.shown.contains("inp_strides"));
        assert!(!k.shown.contains("thread_position_in_grid"));
    }

    #[test]
    fn atomic_outputs_and_init_value() {
        let text = EXP.replace(
            "[mlx.inputs]",
            "atomic_outputs = true\ninit_value = 2\n[mlx.inputs]",
        );
        let k = check(&text).unwrap().kernel("out;", Path::new("b.metal"));
        assert!(k.shown.contains("device atomic<float>* out [[buffer(1)]]"));
        assert_eq!(k.spec.buffers[1].init, Some(Init::Fill(Scalar::Int(2))));
    }

    #[test]
    fn bad_specs_name_the_line() {
        let err =
            check(&EXP.replace("output_dtypes = [\"float\"]", "output_dtypes = []")).unwrap_err();
        assert_eq!(err, "s.toml:10:1: 0 given for 1 output");
        let err = check(&EXP.replace("inp = \"inp.npy\"", "inp = \"missing.npy\"")).unwrap_err();
        assert!(err.starts_with("s.toml:12:1: input `inp`"), "{err}");
        let err = check(&EXP.replace("\"float\" }", "\"float3\" }")).unwrap_err();
        assert!(err.starts_with("s.toml:6:1: `T = \"float3\"`"), "{err}");
        let err = check(&EXP.replace("grid =", "gird =")).unwrap_err();
        assert!(err.contains("unknown key `gird`"), "{err}");
        let err =
            check(&EXP.replace("[mlx.inputs]\ninp", "[mlx.inputs]\nx = \"a\"\ninp")).unwrap_err();
        assert!(err.contains("not in `input_names`"), "{err}");
    }

    #[test]
    fn mlx_form_is_recognized() {
        assert!(is_mlx_spec(EXP));
        assert!(!is_mlx_spec("kernel = \"k\"\n"));
        assert!(!is_mlx_spec("[mlx\n"));
    }

    #[test]
    fn row_major_strides_of_a_shape() {
        assert_eq!(row_major_strides(&[2, 3, 4]), [12, 4, 1]);
        assert_eq!(row_major_strides(&[5]), [1]);
    }
}
