//! MLX inputs: where an input's data comes from (a `.npy` file, with real strides when
//! the launch asks for them, or a literal scalar) and the buffer, shape and strides the
//! kernel then gets, as MLX binds them.
//!
//! MLX hands a kernel each input's buffer as it lies in memory with its `strides`, unless
//! `ensure_row_contiguous` (the default) has it copied to a row-contiguous array first. A
//! `.npy` file in Fortran order, or one given with explicit `strides` (a strided view of
//! the file's data as stored, such as a transpose or a slice with a step), is such an
//! array; a C-order file with no `strides` is already row-contiguous.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use metalsim_isa::Type;
use npyz::{NpyHeader, Order};

use crate::dispatch::ElemType;
use crate::init::Init;
use crate::value::{Scalar, encode};

use super::dtype::parse_dtype;

/// Where one input's data comes from, as a spec's `[mlx.inputs]` entry or an `--input`
/// flag gives it.
#[derive(Clone, PartialEq, Debug)]
pub enum MlxInputSource {
    /// A `.npy` file.
    Npy {
        /// The file, resolved against the folder the spec (or flag) is relative to.
        path: PathBuf,
        /// `dtype`: the element type, when the file's own is not meant (only `bfloat16`
        /// for a float32 file, as NumPy has no bfloat16).
        dtype: Option<String>,
        /// `shape`: the array's shape, with `strides` (default: the file's shape).
        shape: Option<Vec<u64>>,
        /// `strides`: the array is a view, with these strides in elements, of the
        /// file's data as stored.
        strides: Option<Vec<i64>>,
    },
    /// A literal scalar (`alpha = 2.5`): a 0-d array, float32 for a float, int32 for an
    /// integer and bool for a bool unless `dtype` says otherwise (as MLX converts
    /// Python scalars).
    Value {
        /// The number or bool.
        value: Scalar,
        /// `dtype`, when given.
        dtype: Option<String>,
    },
}

/// One input array, ready to bind.
#[derive(Clone, PartialEq, Debug)]
pub struct MlxInput {
    /// The name the body uses.
    pub name: String,
    /// The element type.
    pub elem: ElemType,
    /// The array's shape (empty for a scalar).
    pub shape: Vec<u64>,
    /// The array's strides in elements, as `{name}_strides` gives them.
    pub strides: Vec<i64>,
    /// The buffer's contents.
    pub init: Init,
    /// Elements in the buffer.
    pub count: u64,
}

impl MlxInputSource {
    /// Reads a `[mlx.inputs]` value: a file name, a number or bool, or a table with
    /// `npy` or `value` and the optional `dtype`, `shape` and `strides`. Paths resolve
    /// against `base_dir`.
    pub fn from_toml(value: &toml::Value, base_dir: &Path) -> Result<MlxInputSource, String> {
        let scalar = |v: &toml::Value| match v {
            toml::Value::Integer(i) => Some(Scalar::Int(*i)),
            toml::Value::Float(x) => Some(Scalar::Float(*x)),
            toml::Value::Boolean(b) => Some(Scalar::Bool(*b)),
            _ => None,
        };
        if let toml::Value::String(file) = value {
            return Ok(MlxInputSource::Npy {
                path: base_dir.join(file),
                dtype: None,
                shape: None,
                strides: None,
            });
        }
        if let Some(value) = scalar(value) {
            return Ok(MlxInputSource::Value { value, dtype: None });
        }
        let toml::Value::Table(t) = value else {
            return Err("give a `.npy` file name, a number, a bool, or a table \
                        `{ npy = \"FILE.npy\", strides = [...] }` / `{ value = 2.5, dtype = \"float16\" }`"
                .into());
        };
        for key in t.keys() {
            if !["npy", "value", "dtype", "shape", "strides"].contains(&key.as_str()) {
                return Err(format!(
                    "unknown key `{key}` (expected npy, value, dtype, shape, strides)"
                ));
            }
        }
        let dtype = match t.get("dtype") {
            None => None,
            Some(toml::Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("`dtype` is a string (\"float16\", \"int32\"...)".into()),
        };
        let ints = |key: &str| -> Result<Option<Vec<i64>>, String> {
            match t.get(key) {
                None => Ok(None),
                Some(toml::Value::Array(a)) => a
                    .iter()
                    .map(|v| v.as_integer())
                    .collect::<Option<Vec<i64>>>()
                    .map(Some)
                    .ok_or_else(|| format!("`{key}` is an array of integers")),
                Some(_) => Err(format!("`{key}` is an array of integers")),
            }
        };
        let shape = match ints("shape")? {
            None => None,
            Some(s) => Some(
                s.into_iter()
                    .map(|d| u64::try_from(d).map_err(|_| "`shape` has a negative dimension"))
                    .collect::<Result<Vec<u64>, _>>()?,
            ),
        };
        let strides = ints("strides")?;
        match (t.get("npy"), t.get("value")) {
            (Some(toml::Value::String(file)), None) => Ok(MlxInputSource::Npy {
                path: base_dir.join(file),
                dtype,
                shape,
                strides,
            }),
            (Some(_), None) => Err("`npy` is a file name".into()),
            (None, Some(v)) => {
                if shape.is_some() || strides.is_some() {
                    return Err(
                        "a literal `value` is a scalar: it takes no `shape` or `strides`".into(),
                    );
                }
                let value = scalar(v).ok_or("`value` is a number or a bool")?;
                Ok(MlxInputSource::Value { value, dtype })
            }
            (Some(_), Some(_)) => Err("give `npy` or `value`, not both".into()),
            (None, None) => Err("give `npy = \"FILE.npy\"` or `value = ...`".into()),
        }
    }

    /// The input's element type, shape, strides and buffer, reading the file's header
    /// (and, for a view that MLX would bind as it lies or copy, its data).
    pub(crate) fn prepare(
        &self,
        name: &str,
        ensure_row_contiguous: bool,
    ) -> Result<MlxInput, String> {
        match self {
            MlxInputSource::Value { value, dtype } => {
                let elem = match (dtype, value) {
                    (Some(d), _) => parse_dtype(d)?,
                    (None, Scalar::Bool(_)) => scalar_type(Type::Pred),
                    (None, Scalar::Int(_)) => scalar_type(Type::I32),
                    (None, Scalar::Float(_)) => scalar_type(Type::F32),
                };
                encode(elem.scalar, *value, &mut Vec::new())
                    .map_err(|e| format!("`{value}`: {e}"))?;
                Ok(MlxInput {
                    name: name.to_string(),
                    elem,
                    shape: Vec::new(),
                    strides: Vec::new(),
                    init: Init::Values(vec![*value]),
                    count: 1,
                })
            }
            MlxInputSource::Npy {
                path,
                dtype,
                shape,
                strides,
            } => prepare_npy(
                name,
                path,
                dtype.as_deref(),
                shape,
                strides,
                ensure_row_contiguous,
            )
            .map_err(|e| format!("({}): {e}", path.display())),
        }
    }
}

fn scalar_type(scalar: Type) -> ElemType {
    ElemType { scalar, lanes: 1 }
}

fn prepare_npy(
    name: &str,
    path: &Path,
    dtype: Option<&str>,
    shape: &Option<Vec<u64>>,
    strides: &Option<Vec<i64>>,
    ensure_row_contiguous: bool,
) -> Result<MlxInput, String> {
    let (file_elem, file_shape) = crate::npy::peek_type_and_shape(path).map_err(|e| {
        // Say what MLX calls the two dtypes it has that metalsim has not.
        match ["c8", "f8"]
            .into_iter()
            .find(|d| e.contains(&format!("`<{d}`")) || e.contains(&format!("`>{d}`")))
        {
            Some("c8") => parse_dtype("complex64").err().unwrap_or(e),
            Some(_) => parse_dtype("float64").err().unwrap_or(e),
            None => e,
        }
    })?;
    let elem = match dtype {
        None => file_elem,
        Some(d) => {
            let want = parse_dtype(d)?;
            if want != file_elem && !(want.scalar == Type::BF16 && file_elem.scalar == Type::F32) {
                return Err(format!(
                    "`dtype = \"{d}\"`, but the file holds {} (only a float32 file may be \
                     read as bfloat16)",
                    file_elem.msl_name()
                ));
            }
            want
        }
    };
    if file_shape.len() > 32 || shape.as_ref().is_some_and(|s| s.len() > 32) {
        return Err("more than 32 dimensions".into());
    }
    // The header was checked by `peek_type_and_shape`; this reads its order.
    let fortran = file_shape.len() > 1 && {
        let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
        NpyHeader::from_reader(BufReader::new(file))
            .map_err(|e| e.to_string())?
            .order()
            == Order::Fortran
    };
    let file_count: u64 = file_shape.iter().product();
    let item = elem.scalar.bytes() as usize;
    // The file's data as it lies in the file (C-order reading, put back in storage order
    // when the file is column-major).
    let stored = || -> Result<Vec<u8>, String> {
        let (_, c_order) = crate::npy::read_npy(path, elem).map_err(|e| e.to_string())?;
        Ok(if fortran {
            let rev: Vec<u64> = file_shape.iter().rev().copied().collect();
            let c_strides = row_major_strides(&file_shape);
            let rev_strides: Vec<u64> = c_strides.iter().rev().map(|&s| s as u64).collect();
            gather(&c_order, item, &rev, &rev_strides)
        } else {
            c_order
        })
    };
    let row_major = |shape: &[u64]| row_major_strides(shape);
    let Some(strides) = strides else {
        if shape.is_some() {
            return Err("`shape` is taken only with `strides` (a view of the file's data)".into());
        }
        let (init, strides) = if !fortran || ensure_row_contiguous {
            // The reader gives C order: a row-contiguous array.
            (Init::Npy(path.to_path_buf()), row_major(&file_shape))
        } else {
            let col_major: Vec<i64> =
                row_major(&file_shape.iter().rev().copied().collect::<Vec<_>>())
                    .into_iter()
                    .rev()
                    .collect();
            (values(elem, &stored()?)?, col_major)
        };
        return Ok(MlxInput {
            name: name.to_string(),
            elem,
            shape: file_shape,
            strides,
            init,
            count: file_count,
        });
    };
    let shape = shape.clone().unwrap_or_else(|| file_shape.clone());
    if strides.len() != shape.len() {
        return Err(format!(
            "`strides` has {} entries for the {} dimensions of shape {shape:?}",
            strides.len(),
            shape.len()
        ));
    }
    if strides.iter().any(|&s| s < 0) {
        return Err(
            "negative strides are not supported (the view is bound from the start of the \
             file's data, with no offset)"
                .into(),
        );
    }
    let elements = shape
        .iter()
        .try_fold(1u64, |p, &d| p.checked_mul(d))
        .ok_or("the shape has too many elements")?;
    if elements == 0 {
        return Err(format!("shape {shape:?} has no elements"));
    }
    let last = shape
        .iter()
        .zip(strides)
        .try_fold(0u64, |sum, (&d, &s)| {
            (d - 1).checked_mul(s as u64)?.checked_add(sum)
        })
        .ok_or("the strides reach past any file")?;
    if last >= file_count {
        return Err(format!(
            "shape {shape:?} with strides {strides:?} reaches element {last}, but the file \
             holds {file_count}"
        ));
    }
    let (init, count, bound_strides) = if ensure_row_contiguous {
        let u: Vec<u64> = strides.iter().map(|&s| s as u64).collect();
        let data = gather(&stored()?, item, &shape, &u);
        (values(elem, &data)?, elements, row_major(&shape))
    } else if fortran {
        (values(elem, &stored()?)?, file_count, strides.clone())
    } else {
        (Init::Npy(path.to_path_buf()), file_count, strides.clone())
    };
    Ok(MlxInput {
        name: name.to_string(),
        elem,
        shape,
        strides: bound_strides,
        init,
        count,
    })
}

/// The strides (in elements) of a row-major array.
pub(crate) fn row_major_strides(shape: &[u64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1] as i64);
    }
    strides
}

/// The items of the view of `data` (items of `item` bytes) with `shape` and `strides`,
/// in row-major order.
fn gather(data: &[u8], item: usize, shape: &[u64], strides: &[u64]) -> Vec<u8> {
    let count: u64 = shape.iter().product();
    let mut out = Vec::with_capacity(count as usize * item);
    let mut index = vec![0u64; shape.len()];
    for _ in 0..count {
        let at = index.iter().zip(strides).map(|(i, s)| i * s).sum::<u64>() as usize * item;
        out.extend_from_slice(&data[at..at + item]);
        for (i, &d) in index.iter_mut().zip(shape).rev() {
            *i += 1;
            if *i < d {
                break;
            }
            *i = 0;
        }
    }
    out
}

/// Buffer bytes of `elem`s as the values that encode back to them.
fn values(elem: ElemType, bytes: &[u8]) -> Result<Init, String> {
    let size = elem.scalar.bytes() as usize;
    let mut out = Vec::with_capacity(bytes.len() / size);
    for (i, b) in bytes.chunks_exact(size).enumerate() {
        let le = |n: usize| {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(&b[..n]);
            a
        };
        out.push(match elem.scalar {
            Type::Pred => Scalar::Bool(b[0] != 0),
            Type::I8 => Scalar::Int(i64::from(b[0] as i8)),
            Type::U8 => Scalar::Int(i64::from(b[0])),
            Type::I16 => Scalar::Int(i64::from(i16::from_le_bytes([b[0], b[1]]))),
            Type::U16 => Scalar::Int(i64::from(u16::from_le_bytes([b[0], b[1]]))),
            Type::I32 => Scalar::Int(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            Type::U32 => Scalar::Int(i64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            Type::I64 => Scalar::Int(i64::from_le_bytes(le(8))),
            Type::U64 => {
                let v = u64::from_le_bytes(le(8));
                match i64::try_from(v) {
                    Ok(v) => Scalar::Int(v),
                    // Above i64: exact as a float only when f64 holds it.
                    Err(_) if v as f64 != 2f64.powi(64) && (v as f64) as u64 == v => {
                        Scalar::Float(v as f64)
                    }
                    Err(_) => {
                        return Err(format!(
                            "element {i} ({v}): uint64 values above 2^63 that a double \
                             cannot hold are not supported in a strided or copied input"
                        ));
                    }
                }
            }
            Type::F16 => Scalar::Float(half::f16::from_le_bytes([b[0], b[1]]).to_f64()),
            Type::BF16 => Scalar::Float(half::bf16::from_le_bytes([b[0], b[1]]).to_f64()),
            Type::F32 => Scalar::Float(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        });
    }
    Ok(Init::Values(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<MlxInputSource, String> {
        let t: toml::Table = toml::from_str(&format!("v = {text}")).unwrap();
        MlxInputSource::from_toml(&t["v"], Path::new("/d"))
    }

    #[test]
    fn input_forms() {
        assert_eq!(
            check("\"a.npy\""),
            Ok(MlxInputSource::Npy {
                path: "/d/a.npy".into(),
                dtype: None,
                shape: None,
                strides: None
            })
        );
        assert_eq!(
            check("2.5"),
            Ok(MlxInputSource::Value {
                value: Scalar::Float(2.5),
                dtype: None
            })
        );
        assert_eq!(
            check("{ value = 3, dtype = \"uint8\" }"),
            Ok(MlxInputSource::Value {
                value: Scalar::Int(3),
                dtype: Some("uint8".into())
            })
        );
        assert_eq!(
            check("{ npy = \"a.npy\", shape = [2, 2], strides = [1, 4] }"),
            Ok(MlxInputSource::Npy {
                path: "/d/a.npy".into(),
                dtype: None,
                shape: Some(vec![2, 2]),
                strides: Some(vec![1, 4])
            })
        );
        assert!(
            check("{ npy = \"a\", value = 1 }")
                .unwrap_err()
                .contains("not both")
        );
        assert!(
            check("{ value = 1, strides = [1] }")
                .unwrap_err()
                .contains("no `shape`")
        );
        assert!(
            check("{ npy = \"a\", stride = [1] }")
                .unwrap_err()
                .contains("unknown key `stride`")
        );
        assert!(
            check("[1, 2]")
                .unwrap_err()
                .contains("give a `.npy` file name")
        );
    }

    #[test]
    fn literal_scalars_take_mlx_default_dtypes() {
        let prep = |text: &str| check(text).unwrap().prepare("s", true);
        let p = prep("2.5").unwrap();
        assert_eq!(
            (p.elem.msl_name().as_str(), p.shape.len(), p.count),
            ("float", 0, 1)
        );
        assert_eq!(prep("7").unwrap().elem.msl_name(), "int");
        assert_eq!(prep("true").unwrap().elem.msl_name(), "bool");
        assert_eq!(
            prep("{ value = 1.5, dtype = \"float16\" }")
                .unwrap()
                .elem
                .msl_name(),
            "half"
        );
        assert!(
            prep("{ value = 300, dtype = \"uint8\" }")
                .unwrap_err()
                .contains("out of range")
        );
    }

    /// A `.npy` file of `descr` holding two items of `size` bytes.
    fn raw_npy(file: &str, descr: &str, size: usize) -> PathBuf {
        let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (2,), }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.resize(bytes.len() + 2 * size, 0);
        let path = std::env::temp_dir().join(format!("metalsim-mlx-{}-{file}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn complex_and_float64_files_are_refused_by_mlx_names() {
        for (file, descr, size, expected) in [
            ("c.npy", "<c8", 8, "`complex64` is not supported"),
            ("d.npy", "<f8", 8, "`float64` has no Metal type"),
        ] {
            let source = MlxInputSource::Npy {
                path: raw_npy(file, descr, size),
                dtype: None,
                shape: None,
                strides: None,
            };
            let err = source.prepare("x", true).unwrap_err();
            assert!(err.contains(expected), "{err}");
        }
    }

    #[test]
    fn gather_walks_a_view_in_row_major_order() {
        // Items 0..6 as one byte each; the (3, 2) transpose of the (2, 3) array.
        let data = [0u8, 1, 2, 3, 4, 5];
        assert_eq!(gather(&data, 1, &[3, 2], &[1, 3]), [0, 3, 1, 4, 2, 5]);
        assert_eq!(gather(&data, 1, &[3], &[2]), [0, 2, 4]);
        assert_eq!(gather(&data, 2, &[2], &[1]), [0, 1, 2, 3]);
    }

    #[test]
    fn row_major_strides_of_a_shape() {
        assert_eq!(row_major_strides(&[2, 3, 4]), [12, 4, 1]);
        assert_eq!(row_major_strides(&[5]), [1]);
        assert!(row_major_strides(&[]).is_empty());
    }

    #[test]
    fn values_round_trip_every_type() {
        let v = values(scalar_type(Type::I16), &(-3i16).to_le_bytes()).unwrap();
        assert_eq!(v, Init::Values(vec![Scalar::Int(-3)]));
        let v = values(scalar_type(Type::U64), &u64::MAX.to_le_bytes()).unwrap_err();
        assert!(v.contains("uint64"), "{v}");
        let v = values(scalar_type(Type::U64), &(1u64 << 63).to_le_bytes()).unwrap();
        assert_eq!(v, Init::Values(vec![Scalar::Float(9223372036854775808.0)]));
        let v = values(
            scalar_type(Type::F16),
            &half::f16::from_f32(0.5).to_le_bytes(),
        )
        .unwrap();
        assert_eq!(v, Init::Values(vec![Scalar::Float(0.5)]));
    }
}
