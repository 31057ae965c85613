//! MLX mode: a kernel written as MLX's `mx.fast.metal_kernel` takes it, a body only.
//!
//! MLX's arguments (`docs/launch-spec.md`, "MLX mode") come from an `[mlx]` spec, from
//! command-line flags, or both ([`MlxFields`]): the kernel's name, input and output names,
//! template arguments, the grid and threadgroup (`dispatchThreads`), output shapes and
//! dtypes, `atomic_outputs`, `init_value`, `ensure_row_contiguous`, and each input as a
//! `.npy` file (its shape and dtype are the file's; Fortran order or explicit `strides`
//! make a strided array) or a literal scalar ([`MlxInputSource`]). [`MlxSpec::check`]
//! checks them together; [`MlxSpec::kernel`] generates the full kernel around the body as
//! MLX does (inputs as `const device T*` in order, `const constant T*` under 8 elements
//! and `const constant T&` for scalars, each followed by `{name}_shape`,
//! `{name}_strides` and `{name}_ndim` when the body names them, then the outputs, then
//! the Metal attributes the body names) together with the ordinary [`LaunchSpec`] that
//! binds it, and [`MlxSpec::write_outputs`] writes each output with its shape.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::dispatch::{ElemType, Launch};
use crate::error::SpecError;
use crate::init::Init;
use crate::spec::{
    BufferSpec, Dims, LaunchSpec, MAX_THREADS_PER_THREADGROUP, SpecValue, read_spec_file,
};
use crate::value::Scalar;

mod dtype;
mod fields;
mod input;

use dtype::{mlx_type_name, parse_dtype};
pub use fields::MlxFields;
use fields::key_line;
pub use input::{MlxInput, MlxInputSource};

/// MLX passes inputs with fewer elements than this in the `constant` address space
/// (`max_constant_array_size` in MLX's `write_signature`).
const MAX_CONSTANT_ARRAY_SIZE: u64 = 8;

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

/// The utilities every generated kernel has, as MLX's `utils.h` provides them: MLX's
/// names for half and bfloat, the location of a row-major element index in a strided
/// array, and ceiling division.
const UTILITIES: &str = "\
#include <metal_stdlib>
using namespace metal;

typedef half float16_t;
typedef bfloat bfloat16_t;

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

/// An MLX launch, checked, with its inputs' shapes and dtypes read from their files.
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
    /// Threads per threadgroup, each dimension at most the grid's (MLX clamps it so).
    pub threadgroup: Dims,
    /// Outputs are declared `device atomic<T>*`.
    pub atomic_outputs: bool,
    /// Every output element starts as this value (zeros when not given).
    pub init_value: Option<f64>,
    /// Strided inputs are copied to row-contiguous arrays first (MLX's default).
    pub ensure_row_contiguous: bool,
    /// The folder relative paths resolve against (the spec file's), absolute.
    pub base_dir: PathBuf,
    /// What error messages call the launch: the spec file, or the command line.
    pub origin: String,
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

/// Where an MLX launch's arguments came from, so that an error names the spec line or
/// the flag that gave the wrong value.
pub struct MlxOrigins<'a> {
    /// The spec file's text and name, when there is one.
    pub spec: Option<(&'a str, &'a str)>,
    /// What the command line gives (nothing for a spec alone).
    pub flags: &'a MlxFields,
    /// How the command line spells a key's flag (`grid` is `--grid`); `None` when there
    /// is no command line.
    pub flag_name: Option<&'a dyn Fn(&str) -> String>,
}

impl MlxOrigins<'_> {
    /// The error for `key`: `None` when no one gave it.
    fn error(&self, key: &str, message: Option<String>) -> SpecError {
        let flag = self.flag_name.map(|f| f(key));
        match (message, self.spec) {
            (Some(message), _) if self.flags.gives(key) => SpecError::Launch {
                origin: flag.unwrap_or_else(|| key.to_string()),
                message,
            },
            (Some(message), Some((text, origin))) => SpecError::Syntax {
                origin: origin.to_string(),
                line: key_line(text, key),
                column: 1,
                message,
            },
            (Some(message), None) => SpecError::Launch {
                origin: "the command line".into(),
                message,
            },
            (None, Some((_, origin))) => SpecError::Launch {
                origin: origin.to_string(),
                message: match flag {
                    Some(flag) => format!("missing key `{key}` in `[mlx]` (or give {flag})"),
                    None => format!("missing key `{key}` in `[mlx]`"),
                },
            },
            (None, None) => SpecError::Launch {
                origin: "the command line".into(),
                message: format!(
                    "missing {} (MLX's `{key}`)",
                    flag.unwrap_or_else(|| key.to_string())
                ),
            },
        }
    }
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
        let base_dir = std::path::absolute(base_dir).unwrap_or_else(|_| base_dir.to_path_buf());
        let fields = MlxFields::from_toml(text, &base_dir, origin)?;
        let none = MlxFields::default();
        let origins = MlxOrigins {
            spec: Some((text, origin)),
            flags: &none,
            flag_name: None,
        };
        MlxSpec::check(fields, &origins, &base_dir)
    }

    /// Checks MLX's arguments together (the spec's merged with the command line's, say)
    /// and reads the inputs' headers; errors name the key's origin. `base_dir` is the
    /// folder the generated launch spec is relative to.
    pub fn check(
        fields: MlxFields,
        origins: &MlxOrigins<'_>,
        base_dir: &Path,
    ) -> Result<MlxSpec, SpecError> {
        let at = |key: &str, message: String| origins.error(key, Some(message));
        let missing = |key: &str| origins.error(key, None);
        let name = fields.name.ok_or_else(|| missing("name"))?;
        let input_names = fields.input_names.unwrap_or_default();
        let output_names = fields.output_names.ok_or_else(|| missing("output_names"))?;
        let grid = fields.grid.ok_or_else(|| missing("grid"))?;
        let threadgroup = fields.threadgroup.ok_or_else(|| missing("threadgroup"))?;
        let output_shapes = fields
            .output_shapes
            .ok_or_else(|| missing("output_shapes"))?;
        let output_dtypes = fields
            .output_dtypes
            .ok_or_else(|| missing("output_dtypes"))?;
        let ensure_row_contiguous = fields.ensure_row_contiguous.unwrap_or(true);

        if !is_identifier(&name) {
            return Err(at("name", format!("`{name}` is not an identifier")));
        }
        let mut seen = BTreeSet::new();
        for (key, names) in [
            ("input_names", &input_names),
            ("output_names", &output_names),
        ] {
            for n in names {
                if !is_identifier(n) {
                    return Err(at(key, format!("`{n}` is not an identifier")));
                }
                if ATTRIBUTES.iter().any(|(a, _)| a == n) || fields.template.contains_key(n) {
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
        if output_names.is_empty() {
            return Err(at("output_names", "give at least one output".into()));
        }
        let mut template = BTreeMap::new();
        for (tname, value) in &fields.template {
            // A spec writes template arguments inline: its errors point at `template`.
            let key = if origins.flags.gives(tname) {
                tname.as_str()
            } else {
                "template"
            };
            let at = |_: &str, message: String| at(key, message);
            if !is_identifier(tname) {
                return Err(at(
                    tname,
                    format!("template `{tname}` is not an identifier"),
                ));
            }
            let value = match value {
                SpecValue::Type(t) => SpecValue::Type(
                    parse_dtype(t)
                        .map_err(|e| at(tname, format!("template `{tname}`: {e}")))?
                        .msl_name(),
                ),
                SpecValue::Float(_) | SpecValue::List(_) => {
                    return Err(at(
                        tname,
                        format!(
                            "template `{tname}`: a template argument is a dtype, an int or a bool"
                        ),
                    ));
                }
                other => other.clone(),
            };
            template.insert(tname.clone(), value);
        }
        if threadgroup.product() > MAX_THREADS_PER_THREADGROUP {
            return Err(at(
                "threadgroup",
                format!(
                    "`threadgroup = {threadgroup}` has {} threads; a threadgroup has at most \
                     {MAX_THREADS_PER_THREADGROUP}",
                    threadgroup.product()
                ),
            ));
        }
        // MLX dispatches `min(threadgroup, grid)` in each dimension.
        let threadgroup = Dims(std::array::from_fn(|i| threadgroup.0[i].min(grid.0[i])));
        let n = output_names.len();
        for (key, len) in [
            ("output_shapes", output_shapes.len()),
            ("output_dtypes", output_dtypes.len()),
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
        for ((oname, shape), dtype) in output_names.iter().zip(&output_shapes).zip(&output_dtypes) {
            let elem = parse_dtype(dtype).map_err(|e| at("output_dtypes", e))?;
            if shape
                .iter()
                .try_fold(1u64, |p, &d| p.checked_mul(d))
                .is_none_or(|c| c == 0)
            {
                return Err(at(
                    "output_shapes",
                    format!("output `{oname}`: shape {shape:?} has no elements or is too large"),
                ));
            }
            outputs.push(MlxOutput {
                name: oname.clone(),
                elem,
                shape: shape.clone(),
            });
        }
        for given in fields.inputs.keys() {
            if !input_names.contains(given) {
                return Err(at(
                    given,
                    format!("input `{given}` is given, but it is not in `input_names`"),
                ));
            }
        }
        let mut inputs = Vec::with_capacity(input_names.len());
        for iname in &input_names {
            let Some(source) = fields.inputs.get(iname) else {
                return Err(at(
                    "input_names",
                    format!(
                        "input `{iname}` has no data: add `{iname} = \"FILE.npy\"` (or a \
                         number) to `[mlx.inputs]`"
                    ),
                ));
            };
            let input = source
                .prepare(iname, ensure_row_contiguous)
                .map_err(|e| at(iname, format!("input `{iname}` {e}")))?;
            inputs.push(input);
        }
        Ok(MlxSpec {
            name,
            source: fields.source,
            inputs,
            outputs,
            template,
            grid,
            threadgroup,
            atomic_outputs: fields.atomic_outputs.unwrap_or(false),
            init_value: fields.init_value,
            ensure_row_contiguous,
            base_dir: base_dir.to_path_buf(),
            origin: origins
                .spec
                .map_or_else(|| "the command line".to_string(), |(_, o)| o.to_string()),
        })
    }

    /// The generated kernel's host name.
    pub fn kernel_name(&self) -> String {
        format!("custom_kernel_{}", self.name)
    }

    /// Generates the kernel around `body` (read from `body_path`) and the launch spec
    /// binding it. A name counts as used when the body's text contains it anywhere, as
    /// MLX's search does.
    pub fn kernel(&self, body: &str, body_path: &Path) -> MlxKernel {
        let mut params = Vec::new();
        let mut buffers = Vec::new();
        let mut index = 0u32;
        let mut bind = |params: &mut Vec<String>, decl: String, spec: BufferSpec| {
            params.push(format!("{decl} [[buffer({})]]", spec.index));
            buffers.push(spec);
        };
        for input in &self.inputs {
            let ty = mlx_type_name(input.elem);
            let space = if input.count < MAX_CONSTANT_ARRAY_SIZE {
                "constant"
            } else {
                "device"
            };
            let reference = if input.shape.is_empty() { "&" } else { "*" };
            let mut spec = buffer(index, &input.name, input.elem, input.init.clone(), false);
            spec.count = Some(input.count);
            bind(
                &mut params,
                format!("const {space} {ty}{reference} {}", input.name),
                spec,
            );
            index += 1;
            if input.shape.is_empty() {
                continue;
            }
            let dims = input.shape.iter().map(|&d| d as i64).collect();
            let extras = [
                ("shape", "const constant int*", "int", dims),
                (
                    "strides",
                    "const constant int64_t*",
                    "long",
                    input.strides.clone(),
                ),
                (
                    "ndim",
                    "const constant int&",
                    "int",
                    vec![input.shape.len() as i64],
                ),
            ];
            for (suffix, decl, elem, values) in extras {
                let name = format!("{}_{suffix}", input.name);
                if !body.contains(name.as_str()) {
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
            let ty = mlx_type_name(output.elem);
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
            if body.contains(attr) {
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
            textures: Vec::new(),
            samplers: Vec::new(),
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
            crate::npy::write_npy_shaped(&path, output.elem.scalar, &output.shape, bytes)
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

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::BufWriter;

    use npyz::{Order, WriterBuilder};

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

    /// A fresh folder holding `inp.npy`, float32 (4, 4) in C order, and `inp_f.npy`,
    /// the same array in Fortran order; both hold `i` at row-major index `i`.
    fn folder() -> PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("metalsim-mlx-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (file, order) in [("inp.npy", Order::C), ("inp_f.npy", Order::Fortran)] {
            let mut w = npyz::WriteOptions::<f32>::new()
                .default_dtype()
                .shape(&[4, 4])
                .order(order)
                .writer(BufWriter::new(File::create(dir.join(file)).unwrap()))
                .begin_nd()
                .unwrap();
            for i in 0..16 {
                // Items go in storage order: column-major for Fortran.
                let v = if order == Order::C {
                    i
                } else {
                    (i % 4) * 4 + i / 4
                };
                w.push(&(v as f32)).unwrap();
            }
            w.finish().unwrap();
        }
        dir
    }

    /// Parses `text` against a fresh [`folder`].
    fn check(text: &str) -> Result<MlxSpec, String> {
        MlxSpec::from_str(text, &folder(), "s.toml").map_err(|e| e.to_string())
    }

    /// The values of an input's buffer, when given as values.
    fn values_of(input: &MlxInput) -> Vec<f64> {
        match &input.init {
            Init::Values(v) => v.iter().map(|s| s.as_f64().unwrap()).collect(),
            other => panic!("{other:?}"),
        }
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
        for decl in [
            "const constant int* inp_shape [[buffer(1)]]",
            "const constant int64_t* inp_strides [[buffer(2)]]",
            "const constant int& inp_ndim [[buffer(3)]]",
            "device float* out [[buffer(4)]]",
        ] {
            assert!(k.shown.contains(decl), "{decl}");
        }
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
    fn scalars_and_small_inputs_are_constant_as_in_mlx() {
        let text = EXP
            .replace("[\"inp\"]", "[\"inp\", \"alpha\", \"small\"]")
            .replace(
                "inp = \"inp.npy\"",
                "inp = \"inp.npy\"\nalpha = { value = 0.5, dtype = \"float16\" }\n\
                 small = { npy = \"inp.npy\", shape = [7], strides = [1] }",
            );
        let k = check(&text)
            .unwrap()
            .kernel("alpha_shape small_shape", Path::new("b.metal"));
        assert!(
            k.shown
                .contains("const constant float16_t& alpha [[buffer(1)]]"),
            "{}",
            k.shown
        );
        // A 0-d array gets no shape, strides or ndim, even when the body names them.
        assert!(!k.shown.contains("alpha_shape ["));
        assert!(
            k.shown
                .contains("const constant float* small [[buffer(2)]]")
        );
        assert!(
            k.shown
                .contains("const constant int* small_shape [[buffer(3)]]")
        );
        assert!(k.shown.contains("typedef half float16_t;"));
    }

    #[test]
    fn fortran_order_gives_real_strides_unless_row_contiguous_is_ensured() {
        let text = EXP.replace("\"inp.npy\"", "\"inp_f.npy\"");
        let copied = check(&text).unwrap();
        assert_eq!(copied.inputs[0].strides, [4, 1]);
        assert!(matches!(copied.inputs[0].init, Init::Npy(_)));
        let text = text.replace(
            "[mlx.inputs]",
            "ensure_row_contiguous = false\n[mlx.inputs]",
        );
        let strided = check(&text).unwrap();
        assert_eq!(strided.inputs[0].strides, [1, 4]);
        // The buffer as stored: column by column.
        let want: Vec<f64> = (0..16).map(|i| f64::from((i % 4) * 4 + i / 4)).collect();
        assert_eq!(values_of(&strided.inputs[0]), want);
    }

    #[test]
    fn explicit_strides_view_the_file_or_copy_it() {
        // The transpose of the (4, 4) file, and every other element of its first row.
        let view = "{ npy = \"inp.npy\", strides = [1, 4] }";
        let text = EXP.replace("\"inp.npy\"", view);
        let copied = check(&text).unwrap();
        let transpose: Vec<f64> = (0..16).map(|i| f64::from((i % 4) * 4 + i / 4)).collect();
        assert_eq!(values_of(&copied.inputs[0]), transpose);
        assert_eq!(copied.inputs[0].strides, [4, 1]);
        let text = text.replace(
            "[mlx.inputs]",
            "ensure_row_contiguous = false\n[mlx.inputs]",
        );
        let strided = check(&text).unwrap();
        assert!(matches!(strided.inputs[0].init, Init::Npy(_)));
        assert_eq!(strided.inputs[0].strides, [1, 4]);
        let text = EXP.replace(
            "\"inp.npy\"",
            "{ npy = \"inp.npy\", shape = [2], strides = [2] }",
        );
        assert_eq!(values_of(&check(&text).unwrap().inputs[0]), [0.0, 2.0]);
        let text = EXP.replace(
            "\"inp.npy\"",
            "{ npy = \"inp.npy\", shape = [9], strides = [2] }",
        );
        let err = check(&text).unwrap_err();
        assert!(
            err.contains("reaches element 16, but the file holds 16"),
            "{err}"
        );
        let text = EXP.replace("\"inp.npy\"", "{ npy = \"inp.npy\", strides = [1] }");
        let err = check(&text).unwrap_err();
        assert!(err.starts_with("s.toml:12:1: input `inp` ("), "{err}");
        assert!(
            err.contains("`strides` has 1 entries for the 2 dimensions"),
            "{err}"
        );
    }

    #[test]
    fn threadgroup_is_clamped_to_the_grid_as_mlx_dispatches() {
        let spec = check(&EXP.replace("grid = [16, 1, 1]", "grid = [4, 1, 1]")).unwrap();
        assert_eq!(spec.threadgroup, Dims([4, 1, 1]));
    }

    #[test]
    fn mlx_dtype_names_are_taken() {
        let text = EXP.replace("T = \"float\"", "T = \"float16\"").replace(
            "output_dtypes = [\"float\"]",
            "output_dtypes = [\"bfloat16\"]",
        );
        let spec = check(&text).unwrap();
        assert_eq!(spec.template["T"], SpecValue::Type("half".into()));
        let k = spec.kernel("out;", Path::new("b.metal"));
        assert!(k.shown.contains("device bfloat16_t* out [[buffer(1)]]"));
        let err = check(&EXP.replace("T = \"float\"", "T = \"complex64\"")).unwrap_err();
        assert!(err.contains("no complex type"), "{err}");
    }

    #[test]
    fn bad_specs_name_the_line() {
        let err =
            check(&EXP.replace("output_dtypes = [\"float\"]", "output_dtypes = []")).unwrap_err();
        assert_eq!(err, "s.toml:10:1: 0 given for 1 output");
        let err = check(&EXP.replace("inp = \"inp.npy\"", "inp = \"missing.npy\"")).unwrap_err();
        assert!(err.starts_with("s.toml:12:1: input `inp`"), "{err}");
        let err = check(&EXP.replace("\"float\" }", "\"float3\" }")).unwrap_err();
        assert!(err.starts_with("s.toml:6:1: template `T`"), "{err}");
        let err = check(&EXP.replace("grid =", "gird =")).unwrap_err();
        assert!(err.contains("unknown key `gird`"), "{err}");
        let err = check(&EXP.replace("grid = [16, 1, 1]\n", "")).unwrap_err();
        assert_eq!(err, "s.toml: missing key `grid` in `[mlx]`");
        let err =
            check(&EXP.replace("[mlx.inputs]\ninp", "[mlx.inputs]\nx = \"a\"\ninp")).unwrap_err();
        assert!(err.contains("not in `input_names`"), "{err}");
    }

    #[test]
    fn flag_errors_name_the_flag() {
        let dir = folder();
        let flags = MlxFields {
            grid: Some(Dims([16, 1, 1])),
            threadgroup: Some(Dims([2048, 1, 1])),
            ..MlxFields::default()
        };
        let fields = MlxFields::from_toml(EXP, &dir, "s.toml")
            .unwrap()
            .overridden_by(&flags);
        let flag_name = |key: &str| format!("--{}", key.replace('_', "-"));
        let origins = MlxOrigins {
            spec: Some((EXP, "s.toml")),
            flags: &flags,
            flag_name: Some(&flag_name),
        };
        let err = MlxSpec::check(fields, &origins, &dir)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--threadgroup: `threadgroup = [2048, 1, 1]`"),
            "{err}"
        );
        let none = MlxFields::default();
        let origins = MlxOrigins {
            spec: None,
            flags: &none,
            flag_name: Some(&flag_name),
        };
        let err = MlxSpec::check(flags.clone(), &origins, &dir)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "the command line: missing --name (MLX's `name`)");
    }

    #[test]
    fn mlx_form_is_recognized() {
        assert!(is_mlx_spec(EXP));
        assert!(!is_mlx_spec("kernel = \"k\"\n"));
        assert!(!is_mlx_spec("[mlx\n"));
    }
}
