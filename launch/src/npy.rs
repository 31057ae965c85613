//! NumPy `.npy` files: inputs (`init = { npy = ... }`) and outputs (`output = true`).
//!
//! The dtype must be the element type's own (`float` is `<f4`, `uchar` is `|u1`, `bool`
//! is `|b1`); `bfloat` has no NumPy dtype, so it is read from `<f4` (rounded to nearest)
//! and written as `<f4` (exactly). Vectors take a trailing axis of their width; other
//! axes are flattened in C order (Fortran-ordered files are reordered). Big-endian files
//! are accepted. Outputs have shape `(count,)` or `(count, lanes)`, with the padding of
//! 3-component vectors dropped, byte for byte as NumPy's `np.save` writes them.
//!
//! npyz parses the headers, reads the items and writes the files. What it does not
//! guard against is checked here first, so that a hostile or truncated file is an error,
//! never a panic nor a large allocation: the magic and version, a header length within
//! the file and within NumPy's own limit, brackets nested only a few deep, and a shape
//! whose element count fits in a `u64` (npyz multiplies the dimensions unchecked). The
//! size of the data is compared with the file's before anything is allocated for it.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use half::{bf16, f16};
use metalsim_isa::Type;
use npyz::{
    DType, DTypeError, Deserialize, NpyFile, NpyHeader, Order, Serialize, TypeChar, TypeRead,
    TypeStr, WriteOptions, WriterBuilder,
};
use py_literal::Value;

use crate::dispatch::{ElemType, Launch};
use crate::error::SpecError;

/// The longest header text read: NumPy's own default (`np.load(max_header_size=10000)`).
/// A plain array's header is about a hundred bytes.
const MAX_HEADER_LEN: u64 = 10_000;

/// The deepest nesting of brackets read: a plain array's header nests two deep. Bounded
/// so that parsing a hostile header needs little stack.
const MAX_NESTING: usize = 8;

/// Reads a `.npy` file into a buffer of `elem`s: the element count and
/// `count * elem.size()` bytes, little endian, laid out as in an MSL buffer.
///
/// The file's dtype and shape must fit `elem` (see the module docs); any mismatch is an
/// error saying what was expected.
pub fn read_npy(path: &Path, elem: ElemType) -> Result<(u64, Vec<u8>), SpecError> {
    read(path, elem).map_err(|message| SpecError::Npy {
        path: path.display().to_string(),
        message,
    })
}

/// A `.npy` header checked against an element type.
pub(crate) struct NpyLayout {
    /// Elements of the buffer type (the product of the shape, less the vector axis).
    pub(crate) count: u64,
    header: NpyHeader,
    /// Bytes from the start of the file to the data.
    data_start: u64,
}

/// The dtype a file must have for a scalar type (before the byte order): its kind and
/// size in bytes.
fn file_kind(ty: Type) -> (TypeChar, u64) {
    let bytes = u64::from(ty.bytes());
    match ty {
        Type::Pred => (TypeChar::Bool, 1),
        Type::I8 | Type::I16 | Type::I32 | Type::I64 => (TypeChar::Int, bytes),
        Type::U8 | Type::U16 | Type::U32 | Type::U64 => (TypeChar::Uint, bytes),
        Type::F16 | Type::F32 => (TypeChar::Float, bytes),
        // No NumPy dtype: stored as float32.
        Type::BF16 => (TypeChar::Float, 4),
    }
}

/// The dtype string written for a scalar type, and NumPy's name for it.
fn dtype_text(ty: Type) -> (String, &'static str) {
    let (kind, size) = file_kind(ty);
    let order = if size == 1 { '|' } else { '<' };
    let numpy = match ty {
        Type::Pred => "bool",
        Type::I8 => "int8",
        Type::U8 => "uint8",
        Type::I16 => "int16",
        Type::U16 => "uint16",
        Type::I32 => "int32",
        Type::U32 => "uint32",
        Type::I64 => "int64",
        Type::U64 => "uint64",
        Type::F16 => "float16",
        Type::F32 | Type::BF16 => "float32",
    };
    (format!("{order}{kind}{size}"), numpy)
}

/// The scalar element type and the shape a `.npy` file holds, from its checked header
/// alone (MLX mode takes both from the file). `bfloat` is never the answer: a float32
/// file is `float`.
pub(crate) fn peek_type_and_shape(path: &Path) -> Result<(ElemType, Vec<u64>), String> {
    let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let file_len = file.metadata().map_err(|e| e.to_string())?.len();
    let (raw, text) = read_header(&mut BufReader::new(&file), file_len)?;
    let header = NpyHeader::from_reader(&raw[..]).map_err(|e| bad_header(&text, &e.to_string()))?;
    let DType::Plain(t) = header.dtype() else {
        return Err(format!(
            "dtype `{}` is structured; MLX mode reads plain arrays",
            header.dtype().descr()
        ));
    };
    let scalar = match (t.type_char(), t.size_field()) {
        (TypeChar::Bool, 1) => Type::Pred,
        (TypeChar::Int, 1) => Type::I8,
        (TypeChar::Int, 2) => Type::I16,
        (TypeChar::Int, 4) => Type::I32,
        (TypeChar::Int, 8) => Type::I64,
        (TypeChar::Uint, 1) => Type::U8,
        (TypeChar::Uint, 2) => Type::U16,
        (TypeChar::Uint, 4) => Type::U32,
        (TypeChar::Uint, 8) => Type::U64,
        (TypeChar::Float, 2) => Type::F16,
        (TypeChar::Float, 4) => Type::F32,
        _ => {
            return Err(format!(
                "dtype `{t}` has no MSL element type (use bool, (u)int8/16/32/64, float16 or float32)"
            ));
        }
    };
    Ok((ElemType { scalar, lanes: 1 }, header.shape().to_vec()))
}

/// Reads and checks a file's header: enough to know the buffer's size before reading it.
pub(crate) fn read_layout(file: &File, elem: ElemType) -> Result<NpyLayout, String> {
    let file_len = file.metadata().map_err(|e| e.to_string())?.len();
    let (raw, text) = read_header(&mut BufReader::new(file), file_len)?;
    let header = NpyHeader::from_reader(&raw[..]).map_err(|e| bad_header(&text, &e.to_string()))?;
    layout_of(header, raw.len() as u64, file_len, elem)
}

/// Reads a header's bytes (magic, version, length and text) and checks what npyz does
/// not; returns them, and the text as npyz parses it.
fn read_header(r: &mut impl Read, file_len: u64) -> Result<(Vec<u8>, String), String> {
    let not_npy = || "not a .npy file (it does not start with \\x93NUMPY)".to_string();
    let cut_short = || "the header is cut short".to_string();
    let mut raw = vec![0u8; 8];
    r.read_exact(&mut raw).map_err(|_| not_npy())?;
    if raw[..6] != *b"\x93NUMPY" {
        return Err(not_npy());
    }
    let len_bytes = match (raw[6], raw[7]) {
        (1, 0) => 2,
        (2 | 3, 0) => 4,
        (major, minor) => {
            return Err(format!("unsupported .npy format version {major}.{minor}"));
        }
    };
    let mut len = [0u8; 4];
    r.read_exact(&mut len[..len_bytes])
        .map_err(|_| cut_short())?;
    raw.extend_from_slice(&len[..len_bytes]);
    let text_len = u64::from(u32::from_le_bytes(len));
    // npyz allocates whatever length the header gives (up to 4 GiB) before reading it.
    if text_len > MAX_HEADER_LEN {
        return Err(format!(
            "the header is {text_len} bytes long; at most {MAX_HEADER_LEN} are read \
             (as NumPy's `np.load` does)"
        ));
    }
    if raw.len() as u64 + text_len > file_len {
        return Err(cut_short());
    }
    let start = raw.len();
    r.take(text_len)
        .read_to_end(&mut raw)
        .map_err(|e| e.to_string())?;
    if (raw.len() - start) as u64 != text_len {
        return Err(cut_short());
    }
    let text = check_text(&raw[start..])?;
    Ok((raw, text))
}

/// Checks a header's text before npyz parses it, and returns it as npyz parses it (as
/// UTF-8, less its final newline).
///
/// npyz multiplies a shape's dimensions unchecked, which panics in a debug build when the
/// product overflows (and gives a wrong count in a release build), so the shape is read
/// here first with the parser npyz itself uses.
fn check_text(bytes: &[u8]) -> Result<String, String> {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let text = String::from_utf8(bytes.to_vec())
        .map_err(|_| bad_header(&String::from_utf8_lossy(bytes), "the header is not UTF-8"))?;
    // Brackets in strings count too: only structured dtypes, refused anyway, have them.
    let mut depth = 0usize;
    for c in bytes {
        match c {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(bad_header(&text, "brackets nested too deep"));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let dict: Value = text
        .parse()
        .map_err(|e| bad_header(&text, &parse_error_text(&e)))?;
    // Anything else wrong with the dict, npyz says.
    let Value::Dict(entries) = dict else {
        return Ok(text);
    };
    for (key, value) in &entries {
        if let (Value::String(key), Value::Tuple(dims) | Value::List(dims)) = (key, value)
            && key == "shape"
            && let Some(dims) = dims
                .iter()
                .map(|d| match d {
                    Value::Integer(n) => u64::try_from(n).ok(),
                    _ => None,
                })
                .collect::<Option<Vec<u64>>>()
            // npyz also multiplies the dimensions in other orders (for strides), so zeros
            // do not make a product of huge dimensions safe.
            && product(dims.iter().copied().filter(|&d| d != 0)).is_none()
        {
            return Err(format!("shape {} is too large", shape_text(&dims)));
        }
    }
    Ok(text)
}

/// A header that npyz (or its parser) refused: quoted only in part, since a hostile
/// header can be long, and with control characters escaped.
fn bad_header(text: &str, why: &str) -> String {
    let mut shown = String::new();
    for c in text.trim().chars() {
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    format!("bad header `{}`: {}", clip(&shown, 120), clip(why, 200))
}

fn clip(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// A parse error in one line: pest's syntax errors quote the source over several lines
/// (`--> 1:5`, the line, a caret, `= expected value`); keep the position and the reason.
fn parse_error_text(e: &py_literal::ParseError) -> String {
    let py_literal::ParseError::Syntax(message) = e else {
        return e.to_string();
    };
    let at = message
        .lines()
        .find_map(|l| l.trim().strip_prefix("--> "))
        .and_then(|p| p.split_once(':'));
    let why = message
        .lines()
        .filter_map(|l| l.trim().strip_prefix("= "))
        .next_back();
    match (at, why) {
        (Some(("1", column)), Some(why)) => {
            format!("not a Python literal: {why} at character {column}")
        }
        (Some((line, column)), Some(why)) => {
            format!("not a Python literal: {why} at line {line}, character {column}")
        }
        _ => "not a Python literal".to_string(),
    }
}

/// Checks a parsed header against an element type and the file's length.
fn layout_of(
    header: NpyHeader,
    data_start: u64,
    file_len: u64,
    elem: ElemType,
) -> Result<NpyLayout, String> {
    let (kind, size) = file_kind(elem.scalar);
    let dtype = header.dtype();
    if !matches!(&dtype, DType::Plain(t) if t.type_char() == kind && t.size_field() == size) {
        let given = match &dtype {
            DType::Plain(t) => t.to_string(),
            structured => structured.descr(),
        };
        let (expected, numpy) = dtype_text(elem.scalar);
        let bfloat = if elem.scalar == Type::BF16 {
            " (bfloat has no NumPy dtype: give float32)"
        } else {
            ""
        };
        return Err(format!(
            "dtype `{given}` does not match `{}`: expected `{expected}` ({numpy}){bfloat}; \
             in NumPy, `a.astype(np.{numpy})`",
            elem.msl_name(),
        ));
    }
    let shape = header.shape();
    let lanes = u64::from(elem.lanes);
    let too_large = || format!("shape {} is too large", shape_text(shape));
    let count = if lanes == 1 {
        product(shape.iter().copied())
    } else {
        match shape.split_last() {
            Some((&last, rest)) if last == lanes => product(rest.iter().copied()),
            _ => {
                return Err(format!(
                    "shape {} does not fit `{}`: vectors need a trailing axis of {lanes}, \
                     e.g. shape (n, {lanes})",
                    shape_text(shape),
                    elem.msl_name()
                ));
            }
        }
    }
    .ok_or_else(too_large)?;
    let data_len = count.checked_mul(lanes * size).ok_or_else(too_large)?;
    let available = file_len.saturating_sub(data_start);
    if available < data_len {
        return Err(format!(
            "the file is cut short: shape {} needs {data_len} bytes of data but only \
             {available} follow the header",
            shape_text(shape)
        ));
    }
    Ok(NpyLayout {
        count,
        header,
        data_start,
    })
}

fn product(dims: impl IntoIterator<Item = u64>) -> Option<u64> {
    dims.into_iter().try_fold(1u64, |p, d| p.checked_mul(d))
}

fn shape_text(shape: &[u64]) -> String {
    match shape {
        [d] => format!("({d},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
            format!("({})", dims.join(", "))
        }
    }
}

/// Reads a whole `.npy` file of `elem`s as buffer bytes.
pub(crate) fn read_npy_bytes(path: &Path, elem: ElemType) -> Result<Vec<u8>, String> {
    read(path, elem).map(|(_, bytes)| bytes)
}

fn read(path: &Path, elem: ElemType) -> Result<(u64, Vec<u8>), String> {
    let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let layout = read_layout(&file, elem)?;
    let bytes = read_data(file, &layout, elem)?;
    Ok((layout.count, bytes))
}

/// Reads the data a checked header describes, as buffer bytes. The caller has checked
/// that `layout.count` elements may be allocated.
pub(crate) fn read_data(
    mut file: File,
    layout: &NpyLayout,
    elem: ElemType,
) -> Result<Vec<u8>, String> {
    file.seek(SeekFrom::Start(layout.data_start))
        .map_err(|e| e.to_string())?;
    let npy = NpyFile::with_header(layout.header.clone(), BufReader::new(file));
    let item = elem.scalar.bytes() as usize;
    let mut raw = crate::resolve::allocate(layout.count as usize * elem.lanes as usize * item)?;
    read_items(npy, elem.scalar, &mut raw)?;
    let shape = layout.header.shape();
    if layout.header.order() == Order::Fortran && shape.len() > 1 {
        raw = to_c_order(&raw, shape, layout.header.strides(), item)?;
    }
    if elem.lanes != 3 {
        return Ok(raw);
    }
    let mut padded = crate::resolve::allocate(layout.count as usize * elem.size() as usize)?;
    for e in raw.chunks_exact(3 * item) {
        padded.extend_from_slice(e);
        padded.resize(padded.len() + item, 0);
    }
    Ok(padded)
}

/// Reads every item of a file as buffer bytes of `scalar` onto `out`.
fn read_items(npy: NpyFile<impl Read>, scalar: Type, out: &mut Vec<u8>) -> Result<(), String> {
    match scalar {
        Type::Pred => read_as(npy, out, |b: Truthy, out| out.push(u8::from(b.0))),
        Type::I8 => read_as(npy, out, i8::push_le),
        Type::U8 => read_as(npy, out, u8::push_le),
        Type::I16 => read_as(npy, out, i16::push_le),
        Type::U16 => read_as(npy, out, u16::push_le),
        Type::I32 => read_as(npy, out, i32::push_le),
        Type::U32 => read_as(npy, out, u32::push_le),
        Type::I64 => read_as(npy, out, i64::push_le),
        Type::U64 => read_as(npy, out, u64::push_le),
        Type::F16 => read_as(npy, out, f16::push_le),
        Type::F32 => read_as(npy, out, f32::push_le),
        Type::BF16 => read_as(npy, out, |x: f32, out| bf16::from_f32(x).push_le(out)),
    }
}

fn read_as<T: Deserialize>(
    npy: NpyFile<impl Read>,
    out: &mut Vec<u8>,
    push: impl Fn(T, &mut Vec<u8>),
) -> Result<(), String> {
    let items = npy.data::<T>().map_err(|e| e.to_string())?;
    for item in items {
        push(item.map_err(|e| format!("cannot read the data: {e}"))?, out);
    }
    Ok(())
}

/// Reorders items stored as npyz's `strides` (counted in items) say into C order.
fn to_c_order(raw: &[u8], shape: &[u64], strides: &[u64], item: usize) -> Result<Vec<u8>, String> {
    let mut out = crate::resolve::allocate(raw.len())?;
    let mut index = vec![0u64; shape.len()];
    for _ in 0..raw.len() / item {
        let offset: u64 = index.iter().zip(strides).map(|(i, s)| i * s).sum();
        let at = offset as usize * item;
        out.extend_from_slice(&raw[at..at + item]);
        for (i, &d) in index.iter_mut().zip(shape).rev() {
            *i += 1;
            if *i < d {
                break;
            }
            *i = 0;
        }
    }
    Ok(out)
}

/// A `|b1` item as NumPy reads it: any non-zero byte is true. (npyz's `bool` refuses
/// bytes other than 0 and 1, which an array made by `a.view(np.bool_)` can hold.)
struct Truthy(bool);

struct TruthyReader;

impl TypeRead for TruthyReader {
    type Value = Truthy;

    fn read_one<R: Read>(&self, mut bytes: R) -> io::Result<Truthy> {
        let mut b = [0u8];
        bytes.read_exact(&mut b)?;
        Ok(Truthy(b[0] != 0))
    }
}

impl Deserialize for Truthy {
    type TypeReader = TruthyReader;

    fn reader(dtype: &DType) -> Result<TruthyReader, DTypeError> {
        match dtype {
            DType::Plain(t) if t.type_char() == TypeChar::Bool && t.size_field() == 1 => {
                Ok(TruthyReader)
            }
            _ => Err(DTypeError::custom("expected the dtype `|b1`")),
        }
    }
}

/// A number as an MSL buffer holds it: little endian, in its own size.
trait LeBytes: Sized {
    /// From exactly its size of bytes.
    fn from_le_slice(bytes: &[u8]) -> Self;
    /// Appends its bytes.
    fn push_le(self, out: &mut Vec<u8>);
}

macro_rules! le_bytes {
    ($($t:ty)*) => {$(
        impl LeBytes for $t {
            fn from_le_slice(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("callers pass one item's bytes"))
            }

            fn push_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

le_bytes!(i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32);

/// Writes the elements of `elem` in buffer bytes as a `.npy` file (see the module docs
/// for shapes and dtypes), byte for byte as NumPy's `np.save` would.
pub(crate) fn write_npy(path: &Path, elem: ElemType, bytes: &[u8]) -> io::Result<()> {
    let w = BufWriter::new(File::create(path)?);
    let (dtype, _) = dtype_text(elem.scalar);
    let dtype = DType::Plain(dtype.parse::<TypeStr>().map_err(io::Error::other)?);
    let item = elem.scalar.bytes() as usize;
    let width = elem.lanes as usize * item;
    let items = bytes
        .chunks_exact(elem.size() as usize)
        .flat_map(move |e| e[..width].chunks_exact(item));
    let lanes = elem.lanes;
    match elem.scalar {
        Type::Pred => write_as(w, dtype, lanes, items.map(|b| b[0] != 0)),
        Type::I8 => write_as(w, dtype, lanes, items.map(i8::from_le_slice)),
        Type::U8 => write_as(w, dtype, lanes, items.map(u8::from_le_slice)),
        Type::I16 => write_as(w, dtype, lanes, items.map(i16::from_le_slice)),
        Type::U16 => write_as(w, dtype, lanes, items.map(u16::from_le_slice)),
        Type::I32 => write_as(w, dtype, lanes, items.map(i32::from_le_slice)),
        Type::U32 => write_as(w, dtype, lanes, items.map(u32::from_le_slice)),
        Type::I64 => write_as(w, dtype, lanes, items.map(i64::from_le_slice)),
        Type::U64 => write_as(w, dtype, lanes, items.map(u64::from_le_slice)),
        Type::F16 => write_as(w, dtype, lanes, items.map(f16::from_le_slice)),
        Type::F32 => write_as(w, dtype, lanes, items.map(f32::from_le_slice)),
        Type::BF16 => write_as(
            w,
            dtype,
            lanes,
            items.map(|b| bf16::from_le_slice(b).to_f32()),
        ),
    }
}

/// Writes scalars of type `scalar` (little-endian bytes) as a `.npy` file of `shape`
/// (`bfloat` as float32, as `write_npy` does).
pub(crate) fn write_npy_shaped(
    path: &Path,
    scalar: Type,
    shape: &[u64],
    bytes: &[u8],
) -> io::Result<()> {
    let (dtype, _) = dtype_text(scalar);
    let dtype = DType::Plain(dtype.parse::<TypeStr>().map_err(io::Error::other)?);
    let items = bytes.chunks_exact(scalar.bytes() as usize);
    fn write<T: Serialize>(
        path: &Path,
        dtype: DType,
        shape: &[u64],
        items: impl Iterator<Item = T>,
    ) -> io::Result<()> {
        let w = BufWriter::new(File::create(path)?);
        let mut npy = WriteOptions::new()
            .dtype(dtype)
            .shape(shape)
            .writer(w)
            .begin_nd()?;
        for x in items {
            npy.push(&x)?;
        }
        npy.finish()
    }
    match scalar {
        Type::Pred => write(path, dtype, shape, items.map(|b| b[0] != 0)),
        Type::I8 => write(path, dtype, shape, items.map(i8::from_le_slice)),
        Type::U8 => write(path, dtype, shape, items.map(u8::from_le_slice)),
        Type::I16 => write(path, dtype, shape, items.map(i16::from_le_slice)),
        Type::U16 => write(path, dtype, shape, items.map(u16::from_le_slice)),
        Type::I32 => write(path, dtype, shape, items.map(i32::from_le_slice)),
        Type::U32 => write(path, dtype, shape, items.map(u32::from_le_slice)),
        Type::I64 => write(path, dtype, shape, items.map(i64::from_le_slice)),
        Type::U64 => write(path, dtype, shape, items.map(u64::from_le_slice)),
        Type::F16 => write(path, dtype, shape, items.map(f16::from_le_slice)),
        Type::F32 => write(path, dtype, shape, items.map(f32::from_le_slice)),
        Type::BF16 => write(
            path,
            dtype,
            shape,
            items.map(|b| bf16::from_le_slice(b).to_f32()),
        ),
    }
}

fn write_as<T: Serialize>(
    w: BufWriter<File>,
    dtype: DType,
    lanes: u8,
    items: impl Iterator<Item = T>,
) -> io::Result<()> {
    let options = WriteOptions::new().dtype(dtype).writer(w);
    // `begin_1d` and `begin_2d` write the shape as NumPy does (`(3,)`, `(2, 3)`, with
    // room left for the first axis to grow), where `begin_nd` writes `(3, )`.
    let mut npy = if lanes == 1 {
        options.begin_1d()?
    } else {
        options.begin_2d(u64::from(lanes))?
    };
    for x in items {
        npy.push(&x)?;
    }
    npy.finish()
}

/// Writes every output buffer of `launch` (those with `output = true`) as
/// `dir/<name>.npy`, from the buffers' final contents, and returns the paths written.
///
/// `final_buffers[i]` holds the final bytes of `launch.buffers[i]` (same order, same
/// size). Creates `dir` when it does not exist. Shapes are `(count,)` for scalars and
/// `(count, lanes)` for vectors; `bfloat` is written as float32.
pub fn write_outputs(
    launch: &Launch,
    final_buffers: &[Vec<u8>],
    dir: &Path,
) -> Result<Vec<PathBuf>, SpecError> {
    let fail = |path: &Path, message: String| SpecError::Output {
        path: path.display().to_string(),
        message,
    };
    if final_buffers.len() != launch.buffers.len() {
        return Err(fail(
            dir,
            format!(
                "{} final buffers given for {} bindings",
                final_buffers.len(),
                launch.buffers.len()
            ),
        ));
    }
    let mut written = Vec::new();
    for (b, bytes) in launch.buffers.iter().zip(final_buffers) {
        if !b.output {
            continue;
        }
        let path = dir.join(format!("{}.npy", b.name));
        if crate::texture::is_texture(b) {
            let (shape, scalar, stored) =
                crate::texture::stored_channels(bytes).map_err(|m| fail(&path, m))?;
            if written.is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| fail(dir, e.to_string()))?;
            }
            write_npy_shaped(&path, scalar, &shape, &stored)
                .map_err(|e| fail(&path, e.to_string()))?;
            written.push(path);
            continue;
        }
        let expected = b.count * b.elem.size() as u64;
        if bytes.len() as u64 != expected {
            return Err(fail(
                &path,
                format!(
                    "buffer {} ({}) holds {} bytes, expected {expected}",
                    b.index,
                    b.name,
                    bytes.len()
                ),
            ));
        }
        if written.is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| fail(dir, e.to_string()))?;
        }
        write_npy(&path, b.elem, bytes).map_err(|e| fail(&path, e.to_string()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed};

    use super::*;

    fn elem(name: &str) -> ElemType {
        ElemType::from_msl_name(name).unwrap()
    }

    /// A `.npy` file in memory, version 1.0, as NumPy lays it out.
    fn npy_bytes(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let py_bool = if fortran { "True" } else { "False" };
        header_bytes(
            &format!("{{'descr': '{descr}', 'fortran_order': {py_bool}, 'shape': {shape}, }}"),
            data,
        )
    }

    /// A version 1.0 file with any header text, padded as NumPy pads it.
    fn header_bytes(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut dict = dict.to_string();
        while !(10 + dict.len() + 1).is_multiple_of(64) {
            dict.push(' ');
        }
        dict.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn check(file: &[u8], ty: &str) -> Result<(u64, Vec<u8>), String> {
        let dir = std::env::temp_dir().join(format!("metalsim-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!(
            "t{}.npy",
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::write(&path, file).unwrap();
        let got = read_npy(&path, elem(ty)).map_err(|e| match e {
            SpecError::Npy { message, .. } => message,
            e => e.to_string(),
        });
        std::fs::remove_file(&path).unwrap();
        got
    }

    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

    fn f32_bytes(xs: &[f32]) -> Vec<u8> {
        xs.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn hand_made_files_read() {
        let data = f32_bytes(&[1.0, 2.0, 3.0]);
        assert_eq!(
            check(&npy_bytes("<f4", false, "(3,)", &data), "float"),
            Ok((3, data.clone()))
        );
        // Any shape flattens for scalars; a 0-d array is one element.
        let six = f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(
            check(&npy_bytes("<f4", false, "(2, 3)", &six), "float"),
            Ok((6, six.clone()))
        );
        assert_eq!(
            check(&npy_bytes("<u4", false, "()", &7u32.to_le_bytes()), "uint"),
            Ok((1, 7u32.to_le_bytes().to_vec()))
        );
        // Any non-zero byte is true, as in NumPy.
        assert_eq!(
            check(&npy_bytes("|b1", false, "(3,)", &[1, 0, 5]), "bool"),
            Ok((3, vec![1, 0, 1]))
        );
        // Big endian is swapped.
        assert_eq!(
            check(
                &npy_bytes(">i2", false, "(2,)", &[0x01, 0x02, 0xff, 0xfe]),
                "short"
            ),
            Ok((2, vec![0x02, 0x01, 0xfe, 0xff]))
        );
        // Vectors: a trailing axis; 3 components are padded to 4.
        assert_eq!(
            check(&npy_bytes("<f4", false, "(2, 3)", &six), "float3"),
            Ok((2, f32_bytes(&[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0])))
        );
        assert_eq!(
            check(
                &npy_bytes("|u1", false, "(1, 2, 4)", &[1, 2, 3, 4, 5, 6, 7, 8]),
                "uchar4"
            ),
            Ok((2, vec![1, 2, 3, 4, 5, 6, 7, 8]))
        );
        // Fortran order: the file holds columns of the (2, 3) array [[1,2,3],[4,5,6]].
        let columns = f32_bytes(&[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        assert_eq!(
            check(&npy_bytes("<f4", true, "(2, 3)", &columns), "float"),
            Ok((6, six.clone()))
        );
        // ... and of a (2, 3, 1) array, as float3s: the components of one element are
        // apart in the file.
        assert_eq!(
            check(&npy_bytes("<f4", true, "(2, 3)", &columns), "float3"),
            Ok((2, f32_bytes(&[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0])))
        );
        // bfloat reads float32, rounding to nearest.
        assert_eq!(
            check(
                &npy_bytes("<f4", false, "(2,)", &f32_bytes(&[1.0, -2.0])),
                "bfloat"
            ),
            Ok((2, vec![0x80, 0x3f, 0x00, 0xc0]))
        );
        // Python's other spellings of integers, as np.load reads them.
        assert_eq!(
            check(&npy_bytes("<f4", false, "(0x1, 0b11)", &data), "float"),
            Ok((3, data))
        );
    }

    #[test]
    fn mismatches_say_what_was_expected() {
        let data = f32_bytes(&[1.0, 2.0]);
        assert_eq!(
            check(&npy_bytes("<f8", false, "(1,)", &[0; 8]), "float").unwrap_err(),
            "dtype `<f8` does not match `float`: expected `<f4` (float32); \
             in NumPy, `a.astype(np.float32)`"
        );
        assert_eq!(
            check(&npy_bytes("<i4", false, "(2,)", &data), "uint").unwrap_err(),
            "dtype `<i4` does not match `uint`: expected `<u4` (uint32); \
             in NumPy, `a.astype(np.uint32)`"
        );
        assert_eq!(
            check(&npy_bytes("<f2", false, "(2,)", &data), "bfloat").unwrap_err(),
            "dtype `<f2` does not match `bfloat`: expected `<f4` (float32) \
             (bfloat has no NumPy dtype: give float32); in NumPy, `a.astype(np.float32)`"
        );
        assert_eq!(
            check(&npy_bytes("|O", false, "(2,)", &data), "float").unwrap_err(),
            "dtype `|O` does not match `float`: expected `<f4` (float32); \
             in NumPy, `a.astype(np.float32)`"
        );
        assert_eq!(
            check(
                &header_bytes(
                    "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                    &data
                ),
                "float"
            )
            .unwrap_err(),
            "dtype `[('a', '<f4'), ]` does not match `float`: expected `<f4` (float32); \
             in NumPy, `a.astype(np.float32)`"
        );
        assert_eq!(
            check(&npy_bytes("<f4", false, "(2,)", &data), "float4").unwrap_err(),
            "shape (2,) does not fit `float4`: vectors need a trailing axis of 4, e.g. shape (n, 4)"
        );
        assert_eq!(
            check(&npy_bytes("<f4", false, "(3,)", &data), "float").unwrap_err(),
            "the file is cut short: shape (3,) needs 12 bytes of data but only 8 follow the header"
        );
    }

    #[test]
    fn hostile_headers_are_errors() {
        let data = f32_bytes(&[1.0, 2.0]);
        let err = |file: &[u8]| check(file, "float").unwrap_err();
        // A shape whose element count overflows, also behind a zero (npyz multiplies
        // the dimensions in other orders too).
        assert_eq!(
            err(&npy_bytes("<f4", false, "(4294967296, 4294967296)", &data)),
            "shape (4294967296, 4294967296) is too large"
        );
        assert_eq!(
            err(&npy_bytes(
                "<f4",
                false,
                "(0, 4294967296, 4294967296)",
                &data
            )),
            "shape (0, 4294967296, 4294967296) is too large"
        );
        // A shape whose bytes overflow; one past the end of the file.
        assert_eq!(
            err(&npy_bytes("<f4", false, "(4294967296, 4294967295)", &data)),
            "shape (4294967296, 4294967295) is too large"
        );
        assert_eq!(
            err(&npy_bytes("<f4", false, "(1000000000,)", &data)),
            "the file is cut short: shape (1000000000,) needs 4000000000 bytes of data but \
             only 8 follow the header"
        );
        // Nesting is bounded; the header is quoted only in part.
        let deep = format!("{}{}", "(".repeat(4000), ")".repeat(4000));
        let e = err(&npy_bytes("<f4", false, &deep, &data));
        assert!(
            e.ends_with("(((...`: brackets nested too deep") && e.len() < 200,
            "{e}"
        );
        // A header longer than NumPy reads; one longer than the file; one cut short.
        let long = format!("({},)", "0".repeat(20000));
        assert_eq!(
            err(&npy_bytes("<f4", false, &long, &data)),
            "the header is 20086 bytes long; at most 10000 are read (as NumPy's `np.load` does)"
        );
        let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
        v2.extend_from_slice(&9000u32.to_le_bytes());
        v2.extend_from_slice(b"{'descr': '<f4', ");
        assert_eq!(err(&v2), "the header is cut short");
        assert_eq!(err(b"\x93NUMPY\x01\x00\x10"), "the header is cut short");
        assert_eq!(
            err(b"\x93NUMPY\x04\x00\x10\x00"),
            "unsupported .npy format version 4.0"
        );
        assert_eq!(
            err(b"PK\x03\x04 not npy"),
            "not a .npy file (it does not start with \\x93NUMPY)"
        );
        // Headers that are not what npyz expects.
        assert_eq!(
            err(&npy_bytes("<f4", false, "(2.5,)", &data)),
            "bad header `{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }`: \
             dimension must be an integer"
        );
        assert_eq!(
            err(&header_bytes("{'descr': '<f4', 'shape': (2,), }", &data)),
            "bad header `{'descr': '<f4', 'shape': (2,), }`: dict is missing key 'fortran_order'"
        );
        assert_eq!(
            err(&npy_bytes("<f4", false, "(2,", &data)),
            "bad header `{'descr': '<f4', 'fortran_order': False, 'shape': (2,, }`: \
             not a Python literal: expected value at character 54"
        );
        assert_eq!(
            err(&npy_bytes("f4", false, "(2,)", &data)),
            "bad header `{'descr': 'f4', 'fortran_order': False, 'shape': (2,), }`: \
             invalid type string: Invalid type-string"
        );
    }

    #[test]
    fn round_trips_every_type() {
        let dir = std::env::temp_dir().join(format!("metalsim-npy-rt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases: [(&str, Vec<u8>); 8] = [
            ("float", f32_bytes(&[1.5, -2.0])),
            (
                "float3",
                f32_bytes(&[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0]),
            ),
            (
                "half2",
                vec![0x00, 0x3c, 0x00, 0xc0, 0x00, 0x00, 0xff, 0x7b],
            ),
            ("bfloat", vec![0x80, 0x3f, 0x00, 0xc0]),
            ("bool", vec![1, 0]),
            ("char4", vec![1, 2, 3, 0x80, 5, 6, 7, 8]),
            (
                "ushort3",
                vec![1, 0, 2, 0, 3, 0, 0, 0, 4, 0, 5, 0, 6, 0, 0, 0],
            ),
            ("long", vec![0xff; 16]),
        ];
        for (ty, bytes) in cases {
            let e = elem(ty);
            let count = bytes.len() as u64 / e.size() as u64;
            let path = dir.join(format!("{ty}.npy"));
            write_npy(&path, e, &bytes).unwrap();
            assert_eq!(read_npy(&path, e).unwrap(), (count, bytes), "{ty}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Element types the fuzzing reads files as.
    const TYPES: [&str; 8] = [
        "float", "float3", "uchar4", "bool", "half2", "bfloat", "long", "short",
    ];

    /// Values for a header's keys, plausible and hostile, to build headers that get past
    /// the parser.
    const DESCRS: [&str; 16] = [
        "'<f4'",
        "'>f4'",
        "'|b1'",
        "'<f2'",
        "'|u1'",
        "'<i8'",
        "'>i2'",
        "'|O'",
        "'<U3'",
        "'f4'",
        "'=f4'",
        "'<f99999999999999999999'",
        "'<m8[ns]'",
        "[('a', '<f4')]",
        "[('a', '<f4', (4294967296, 4294967296))]",
        "None",
    ];
    const SHAPES: [&str; 18] = [
        "()",
        "(3,)",
        "(2, 3)",
        "(1, 2, 4)",
        "(2, 4)",
        "(0,)",
        "(4294967296, 4294967296)",
        "(0, 18446744073709551615, 2)",
        "(18446744073709551616,)",
        "(-1,)",
        "(2.5,)",
        "[2, 3]",
        "(0x10,)",
        "(1_000_000_000,)",
        "3",
        "('a',)",
        "((2,),)",
        "None",
    ];
    const ORDERS: [&str; 4] = ["False", "True", "1", "None"];

    /// A header dict from those values, each key possibly missing.
    fn header_dict() -> impl Strategy<Value = String> {
        let pick = |values: &'static [&'static str]| {
            prop::option::weighted(0.9, 0..values.len()).prop_map(move |i| i.map(|i| values[i]))
        };
        (pick(&DESCRS), pick(&ORDERS), pick(&SHAPES)).prop_map(|(descr, order, shape)| {
            let mut dict = "{".to_string();
            for (key, value) in [("descr", descr), ("fortran_order", order), ("shape", shape)] {
                if let Some(value) = value {
                    dict.push_str(&format!("'{key}': {value}, "));
                }
            }
            dict.push('}');
            dict
        })
    }

    /// A valid file of some type and shape, and the type to read it as.
    fn valid_file() -> impl Strategy<Value = (Vec<u8>, &'static str)> {
        (0..TYPES.len(), 1u64..6, any::<bool>(), any::<bool>()).prop_map(|(t, n, fortran, big)| {
            let ty = TYPES[t];
            let e = elem(ty);
            let (descr, _) = dtype_text(e.scalar);
            let descr = if big { descr.replace('<', ">") } else { descr };
            let shape = if e.lanes == 1 {
                format!("({n},)")
            } else {
                format!("({n}, {})", e.lanes)
            };
            let size = file_kind(e.scalar).1 * n * u64::from(e.lanes);
            let data: Vec<u8> = (0..size).map(|i| i as u8).collect();
            (npy_bytes(&descr, fortran, &shape, &data), ty)
        })
    }

    /// One change to a file: set a byte, cut it short, insert or remove bytes.
    #[derive(Clone, Debug)]
    enum Mutation {
        Set(usize, u8),
        Truncate(usize),
        Insert(usize, Vec<u8>),
        Remove(usize, usize),
    }

    fn mutation() -> impl Strategy<Value = Mutation> {
        prop_oneof![
            (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
            any::<usize>().prop_map(Mutation::Truncate),
            (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
                .prop_map(|(i, bytes)| Mutation::Insert(i, bytes)),
            (any::<usize>(), 1usize..8).prop_map(|(i, n)| Mutation::Remove(i, n)),
        ]
    }

    fn mutate(file: &mut Vec<u8>, m: &Mutation) {
        let at = |i: usize, len: usize| if len == 0 { 0 } else { i % len };
        match m {
            Mutation::Set(i, b) if !file.is_empty() => {
                let i = at(*i, file.len());
                file[i] = *b;
            }
            Mutation::Truncate(i) => file.truncate(at(*i, file.len())),
            Mutation::Insert(i, bytes) => {
                let i = at(*i, file.len() + 1);
                file.splice(i..i, bytes.iter().copied());
            }
            Mutation::Remove(i, n) => {
                let i = at(*i, file.len());
                file.drain(i..(i + n).min(file.len()));
            }
            Mutation::Set(..) => {}
        }
    }

    /// Whatever a file holds, reading it returns: a buffer of the size it says, or an
    /// error. (A panic fails the test.)
    fn reads_or_refuses(file: &[u8], ty: &str) -> Result<(), TestCaseError> {
        if let Ok((count, bytes)) = check(file, ty) {
            prop_assert_eq!(bytes.len() as u64, count * u64::from(elem(ty).size()));
        }
        Ok(())
    }

    proptest! {
        // Deterministic: the same cases on every run, and no regression files.
        #![proptest_config(Config {
            cases: 600,
            rng_seed: RngSeed::Fixed(0x6e70_7966),
            failure_persistence: None,
            ..Config::default()
        })]

        #[test]
        fn random_bytes_are_refused(
            bytes in prop::collection::vec(any::<u8>(), 0..200),
            magic in any::<bool>(),
            t in 0..TYPES.len(),
        ) {
            let file = if magic {
                // Past the magic, so that the rest is read as a header.
                let mut file = b"\x93NUMPY\x01\x00".to_vec();
                file.extend_from_slice(&(bytes.len().min(100) as u16).to_le_bytes());
                file.extend_from_slice(&bytes);
                file
            } else {
                bytes
            };
            reads_or_refuses(&file, TYPES[t])?;
        }

        #[test]
        fn random_headers_read_or_are_refused(
            dict in header_dict(),
            data in prop::collection::vec(any::<u8>(), 0..64),
            t in 0..TYPES.len(),
        ) {
            reads_or_refuses(&header_bytes(&dict, &data), TYPES[t])?;
        }

        #[test]
        fn mutated_files_read_or_are_refused(
            (file, ty) in valid_file(),
            mutations in prop::collection::vec(mutation(), 1..4),
            other_type in prop::option::of(0..TYPES.len()),
        ) {
            let mut file = file;
            for m in &mutations {
                mutate(&mut file, m);
            }
            reads_or_refuses(&file, other_type.map_or(ty, |t| TYPES[t]))?;
        }
    }
}
