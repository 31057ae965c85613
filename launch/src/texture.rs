//! Textures: the `[[texture]]` table, pixel formats, and the buffer a texture becomes.
//!
//! The frontend lowers `textureNd<T, A> t [[texture(n)]]` to the device buffer at
//! [`KernelParam::TEXTURE_BUFFER_BASE`]` + n` (see `frontend/src/lower/texture.rs`): a
//! 16-byte header (width, height, depth, and a code naming the pixel format and `T`) and
//! then the texels, four channels of `T` each. The pixel format is a property of the bound
//! texture, as in Metal: the texels are converted from the format here, when the spec is
//! resolved, and back to it when the texture is written out, by the rules of the MSL
//! specification, section 7.7 ("Texture Addressing and Conversion Rules"): table 31 for
//! normalized integers to float, table 32 for float to normalized integers (round to
//! nearest even, NaN to 0), 7.7.2 for half, and table 33 (saturation) for integers.

use std::path::Path;

use half::f16;
use metalsim_isa::{KernelParam, Type};
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

use crate::dispatch::{BufferBinding, ElemType};
use crate::init::{Init, generate};
use crate::npy::{peek_type_and_shape, read_npy_bytes};
use crate::resolve::allocate;

/// Bytes of the header in front of the texels.
pub(crate) const HEADER_BYTES: usize = 16;

/// A `[[texture]]` table: one `[[texture(index)]]` binding and its contents.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextureSpec {
    /// The binding index `n` of `[[texture(n)]]`.
    pub index: u32,
    /// The texture's name: for messages and the output file `<name>.npy`.
    pub name: String,
    /// The pixel format (`rgba8unorm`, `r32float`...).
    #[serde(with = "format_serde")]
    pub format: PixelFormat,
    /// Width in texels; may be omitted when `init` is `npy` (its shape gives it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Height in texels (2D and 3D textures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// Depth in texels (3D textures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// The number of elements of a texture array (`texture2d_array`, `texturecube_array`,
    /// `texture2d_ms_array`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_length: Option<u32>,
    /// The number of samples of a multisample texture (`texture2d_ms`, `depth2d_ms`...):
    /// 1, 2, 4 or 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_count: Option<u32>,
    /// The initial channel values in the format's storage type (`uchar` for `rgba8unorm`,
    /// `half` for `rgba16float`...); `None` means zeros. An `.npy` file has shape
    /// `(width, C)`, `(height, width, C)` or `(depth, height, width, C)` for `C` channels
    /// (the channel axis may be left out when `C` is 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<Init>,
    /// Written to `OUT/<name>.npy` after the run, in the same shape and storage type.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub output: bool,
}

/// How one channel of a pixel format is stored and what it means.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Channel {
    /// An unsigned normalized integer of this many bits: `c / (2^bits - 1)`.
    Unorm(u32),
    /// A signed normalized integer of this many bits: `max(c / (2^(bits-1) - 1), -1)`.
    Snorm(u32),
    /// An unsigned integer of this many bits.
    Uint(u32),
    /// A signed integer of this many bits.
    Sint(u32),
    /// An IEEE float of this many bits (16 or 32).
    Float(u32),
}

impl Channel {
    /// The scalar type a channel is stored as (and read from or written to `.npy` as).
    pub fn storage(self) -> Type {
        match self {
            Channel::Unorm(8) | Channel::Uint(8) => Type::U8,
            Channel::Snorm(8) | Channel::Sint(8) => Type::I8,
            Channel::Unorm(_) | Channel::Uint(16) => Type::U16,
            Channel::Snorm(_) | Channel::Sint(16) => Type::I16,
            Channel::Uint(_) => Type::U32,
            Channel::Sint(_) => Type::I32,
            Channel::Float(16) => Type::F16,
            Channel::Float(_) => Type::F32,
        }
    }

    /// Whether a texture of this element type may read the channel: float and half
    /// textures read normalized and float formats, int and short signed integers, uint and
    /// ushort unsigned integers.
    fn fits(self, elem: Type) -> bool {
        match self {
            Channel::Unorm(_) | Channel::Snorm(_) | Channel::Float(_) => elem.is_float(),
            Channel::Uint(_) => matches!(elem, Type::U32 | Type::U16),
            Channel::Sint(_) => matches!(elem, Type::I32 | Type::I16),
        }
    }
}

/// A pixel format: `MTLPixelFormat` without the prefix, in lower case.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PixelFormat {
    /// The name (`rgba8unorm`).
    pub name: &'static str,
    /// Channels per pixel, 1 to 4.
    pub channels: u8,
    /// What each channel holds.
    pub channel: Channel,
    /// Stored blue, green, red, alpha (`bgra8unorm`).
    pub bgra: bool,
}

macro_rules! formats {
    ($($name:literal $channels:literal $channel:expr),* $(,)?) => {
        &[$(PixelFormat { name: $name, channels: $channels, channel: $channel, bgra: false }),*]
    };
}

/// Every supported format (the ordinary, non-packed, non-compressed, non-sRGB ones, and the
/// depth formats without stencil).
pub const PIXEL_FORMATS: &[PixelFormat] = {
    use Channel::*;
    formats![
        "r8unorm" 1 Unorm(8), "rg8unorm" 2 Unorm(8), "rgba8unorm" 4 Unorm(8),
        "r8snorm" 1 Snorm(8), "rg8snorm" 2 Snorm(8), "rgba8snorm" 4 Snorm(8),
        "r8uint" 1 Uint(8), "rg8uint" 2 Uint(8), "rgba8uint" 4 Uint(8),
        "r8sint" 1 Sint(8), "rg8sint" 2 Sint(8), "rgba8sint" 4 Sint(8),
        "r16unorm" 1 Unorm(16), "rg16unorm" 2 Unorm(16), "rgba16unorm" 4 Unorm(16),
        "r16snorm" 1 Snorm(16), "rg16snorm" 2 Snorm(16), "rgba16snorm" 4 Snorm(16),
        "r16uint" 1 Uint(16), "rg16uint" 2 Uint(16), "rgba16uint" 4 Uint(16),
        "r16sint" 1 Sint(16), "rg16sint" 2 Sint(16), "rgba16sint" 4 Sint(16),
        "r16float" 1 Float(16), "rg16float" 2 Float(16), "rgba16float" 4 Float(16),
        "r32uint" 1 Uint(32), "rg32uint" 2 Uint(32), "rgba32uint" 4 Uint(32),
        "r32sint" 1 Sint(32), "rg32sint" 2 Sint(32), "rgba32sint" 4 Sint(32),
        "r32float" 1 Float(32), "rg32float" 2 Float(32), "rgba32float" 4 Float(32),
        "bgra8unorm" 4 Unorm(8),
        "depth16unorm" 1 Unorm(16), "depth32float" 1 Float(32),
    ]
};

impl PixelFormat {
    /// The format with this name.
    pub fn from_name(name: &str) -> Option<PixelFormat> {
        PIXEL_FORMATS
            .iter()
            .find(|f| f.name == name)
            .map(|f| PixelFormat {
                bgra: f.name == "bgra8unorm",
                ..*f
            })
    }

    fn code(self) -> u32 {
        PIXEL_FORMATS
            .iter()
            .position(|f| f.name == self.name)
            .unwrap_or_else(|| unreachable!("every format is in the table")) as u32
    }

    /// Where the logical channel `c` (0 red ... 3 alpha) is stored.
    fn stored_at(self, c: usize) -> usize {
        if self.bgra && c < 3 { 2 - c } else { c }
    }
}

/// `format = "rgba8unorm"` in the file.
mod format_serde {
    use super::*;

    pub(super) fn serialize<S: Serializer>(f: &PixelFormat, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(f.name)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PixelFormat, D::Error> {
        let name = String::deserialize(d)?;
        PixelFormat::from_name(&name).ok_or_else(|| {
            let known: Vec<&str> = PIXEL_FORMATS.iter().map(|f| f.name).collect();
            de::Error::custom(format!(
                "unknown pixel format `{name}`; expected one of {}",
                known.join(", ")
            ))
        })
    }
}

/// How many slices of a layered texture's buffer one array element takes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Slices {
    /// One (texture arrays), or not layered.
    One,
    /// The six faces of a cube.
    Faces,
    /// The spec's `sample_count` samples of a multisample texture.
    Samples,
}

/// What a texture parameter's type asks of its buffer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct TextureKind {
    /// Axes of the buffer: 1 for `texture1d` and `texture_buffer`, 2 for `texture2d`,
    /// `depth2d` and `texture1d_array`, 3 for `texture3d` and every other array, cube or
    /// multisample texture (their slices are the outermost axis).
    pub(crate) dims: usize,
    /// A texture array: the spec gives its `array_length`.
    pub(crate) array: bool,
    /// Slices per array element.
    pub(crate) slices: Slices,
    /// The element type `T`.
    pub(crate) elem: Type,
}

impl TextureKind {
    /// Whether the last axis holds slices (array elements, cube faces or samples).
    fn layered(self) -> bool {
        self.array || self.slices != Slices::One
    }
}

/// What the kernel declares: `texture2d<float, access::read>` gives 2 axes of `f32`;
/// `texturecube_array<half>` gives 3 axes of `f16`, six slices per array element.
pub(crate) fn texture_type(param: &KernelParam) -> Option<TextureKind> {
    let (template, rest) = param.type_name.split_once('<')?;
    let (dims, array, slices) = match template {
        "texture1d" | "texture_buffer" => (1, false, Slices::One),
        "texture1d_array" => (2, true, Slices::One),
        "texture2d" | "depth2d" => (2, false, Slices::One),
        "texture2d_array" | "depth2d_array" => (3, true, Slices::One),
        "texture3d" => (3, false, Slices::One),
        "texturecube" | "depthcube" => (3, false, Slices::Faces),
        "texturecube_array" | "depthcube_array" => (3, true, Slices::Faces),
        "texture2d_ms" | "depth2d_ms" => (3, false, Slices::Samples),
        "texture2d_ms_array" | "depth2d_ms_array" => (3, true, Slices::Samples),
        _ => return None,
    };
    let elem = match rest.split([',', '>']).next()?.trim() {
        "float" => Type::F32,
        "half" => Type::F16,
        "int" => Type::I32,
        "uint" => Type::U32,
        "short" => Type::I16,
        "ushort" => Type::U16,
        _ => return None,
    };
    Some(TextureKind {
        dims,
        array,
        slices,
        elem,
    })
}

/// The sample counts a multisample texture may have (`MTLTextureDescriptor.sampleCount`
/// on Apple GPUs).
const SAMPLE_COUNTS: [u32; 4] = [1, 2, 4, 8];

/// A texture checked against its parameter, not yet read or converted.
pub(crate) struct PlannedTexture<'a> {
    pub(crate) spec: &'a TextureSpec,
    dims: usize,
    elem: Type,
    /// Samples per texel of a multisample texture, else 1.
    samples: u32,
    /// Width, height, depth (slices, for a layered texture).
    size: [u32; 3],
    /// The `.npy` file, already opened far enough to know its shape.
    npy: Option<std::path::PathBuf>,
}

impl PlannedTexture<'_> {
    /// Bytes the texture's buffer takes.
    pub(crate) fn bytes(&self) -> u128 {
        let texels: u128 = self.size.iter().map(|&s| s as u128).product();
        HEADER_BYTES as u128 + texels * 4 * self.elem.bytes() as u128
    }
}

/// Checks a `[[texture]]` against the kernel's parameter and finds its size, reading at
/// most an `.npy` header.
pub(crate) fn plan<'a>(
    spec: &'a TextureSpec,
    param: &KernelParam,
    base_dir: &Path,
) -> Result<PlannedTexture<'a>, String> {
    let Some(kind) = texture_type(param) else {
        return Err(format!(
            "kernel parameter `{}` is `{}`, which the launch spec cannot bind",
            param.name, param.type_name
        ));
    };
    let (dims, elem) = (kind.dims, kind.elem);
    let format = spec.format;
    if param.type_name.starts_with("depth") != format.name.starts_with("depth") {
        return Err(format!(
            "`format = \"{}\"` cannot be bound to kernel parameter `{} {}`: depth textures \
             (depth2d, depthcube...) take a depth format (depth32float, depth16unorm), other \
             textures a colour format",
            format.name, param.type_name, param.name
        ));
    }
    if !format.channel.fits(elem) {
        return Err(format!(
            "`format = \"{}\"` cannot be read by kernel parameter `{} {}`: float and half \
             textures take normalized or float formats (rgba8unorm, r32float...), int and \
             short ones signed integer formats (r32sint...), uint and ushort ones unsigned \
             integer formats (r32uint...)",
            format.name, param.type_name, param.name
        ));
    }
    let samples = sample_count(spec, param, kind)?;
    // Slices of the last axis per array element.
    let group = match kind.slices {
        Slices::One => 1,
        Slices::Faces => 6,
        Slices::Samples => samples,
    };
    // A layered texture's slices are its last axis, sized by `array_length` (and the
    // faces or samples of each element).
    let mut keys = ["width", "height", "depth"];
    let mut given = [spec.width, spec.height, spec.depth];
    if kind.layered() {
        if let Some(g) = given[dims - 1] {
            return Err(format!(
                "`{} = {g}` is given but kernel parameter `{}` is `{}`, whose slices are its \
                 {}: give {}",
                keys[dims - 1],
                param.name,
                param.type_name,
                match kind.slices {
                    Slices::One => "array elements",
                    Slices::Faces => "cube faces",
                    Slices::Samples => "samples",
                },
                if kind.array {
                    "the number of elements as `array_length`"
                } else {
                    "no size for them"
                }
            ));
        }
        keys[dims - 1] = "array_length";
        given[dims - 1] = if kind.array {
            spec.array_length
        } else {
            Some(1)
        };
    }
    if !kind.array && spec.array_length.is_some() {
        return Err(format!(
            "`array_length` is given but kernel parameter `{}` is not a texture array (`{}`)",
            param.name, param.type_name
        ));
    }
    let spatial_dims = if kind.layered() { dims - 1 } else { dims };
    for (k, g) in keys.iter().zip(given).skip(dims) {
        if g.is_some_and(|v| v != 1) {
            return Err(format!(
                "`{k}` is given but kernel parameter `{}` is a {spatial_dims}D texture (`{}`)",
                param.name, param.type_name
            ));
        }
    }
    if let Some((k, _)) = keys.iter().zip(given).find(|(_, g)| *g == Some(0)) {
        return Err(format!(
            "`{k} = 0`: a texture has at least one texel each way"
        ));
    }
    let cube = kind.slices == Slices::Faces;
    let mut size = [1u32; 3];
    let mut npy = None;
    match &spec.init {
        Some(Init::Npy(rel)) => {
            let key = format!("`init.npy = \"{}\"`", rel.display());
            let path = base_dir.join(rel);
            let (file_elem, shape) =
                peek_type_and_shape(&path).map_err(|e| format!("{key}: {e}"))?;
            let storage = format.channel.storage();
            if file_elem.scalar != storage {
                return Err(format!(
                    "{key}: the file holds `{}` but `{}` stores each channel as `{}`",
                    crate::value::type_name(file_elem.scalar),
                    format.name,
                    crate::value::type_name(storage)
                ));
            }
            let c = format.channels as u64;
            let spatial = match shape.split_last() {
                Some((&last, rest)) if shape.len() == dims + 1 && last == c => rest.to_vec(),
                _ if shape.len() == dims && c == 1 => shape.clone(),
                _ => {
                    let mut axes = keys[..dims].to_vec();
                    if kind.layered() {
                        axes[dims - 1] = slices_axis(kind);
                    }
                    return Err(format!(
                        "{key}: shape {shape:?} does not fit a `{}` texture of `{}`: expected \
                         ({}{c}) — outermost axis first, channels last",
                        param.type_name,
                        format.name,
                        axes.iter()
                            .rev()
                            .map(|k| format!("{k}, "))
                            .collect::<String>()
                    ));
                }
            };
            for (i, &s) in spatial.iter().rev().enumerate() {
                size[i] = u32::try_from(s)
                    .ok()
                    .filter(|&s| s > 0)
                    .ok_or_else(|| format!("{key}: {} {s} is out of range", keys[i]))?;
            }
            if kind.layered() && size[dims - 1] % group != 0 {
                return Err(format!(
                    "{key}: {} slices are not a whole number of {}",
                    size[dims - 1],
                    slices_axis(kind)
                ));
            }
            for i in 0..dims {
                let n = if kind.layered() && i == dims - 1 {
                    size[i] / group
                } else {
                    size[i]
                };
                match given[i].filter(|&g| g != n) {
                    Some(_) if kind.layered() && !kind.array && i == dims - 1 => {
                        return Err(format!(
                            "{key} has {} slices but `{}` has {group} ({})",
                            size[i],
                            param.type_name,
                            slices_axis(kind)
                        ));
                    }
                    Some(g) => {
                        return Err(format!("`{} = {g}` but {key} has {} {n}", keys[i], keys[i]));
                    }
                    None => {}
                }
            }
            npy = Some(path);
        }
        _ => {
            let Some(w) = spec.width else {
                return Err(
                    "`width` is missing; it may be left out only when `init` is `npy`".into(),
                );
            };
            size = [
                w,
                given[1].unwrap_or(if cube { w } else { 1 }),
                given[2].unwrap_or(1),
            ];
            if kind.layered() {
                size[dims - 1] = size[dims - 1]
                    .checked_mul(group)
                    .ok_or_else(|| format!("`array_length = {}` is too large", size[dims - 1]))?;
            }
        }
    }
    if cube && size[0] != size[1] {
        return Err(format!(
            "kernel parameter `{}` is a cube texture (`{}`), whose faces are square, but \
             its width is {} and its height {}",
            param.name, param.type_name, size[0], size[1]
        ));
    }
    Ok(PlannedTexture {
        spec,
        dims,
        elem,
        samples,
        size,
        npy,
    })
}

/// The `.npy` name of a layered texture's outermost axis.
fn slices_axis(kind: TextureKind) -> &'static str {
    match (kind.slices, kind.array) {
        (Slices::One, _) => "array_length",
        (Slices::Faces, false) => "6 faces",
        (Slices::Faces, true) => "array_length x 6 faces",
        (Slices::Samples, false) => "sample_count",
        (Slices::Samples, true) => "array_length x sample_count",
    }
}

/// The spec's `sample_count`: required by a multisample texture, refused by others.
fn sample_count(spec: &TextureSpec, param: &KernelParam, kind: TextureKind) -> Result<u32, String> {
    match (kind.slices, spec.sample_count) {
        (Slices::Samples, Some(n)) if SAMPLE_COUNTS.contains(&n) => Ok(n),
        (Slices::Samples, Some(n)) => Err(format!(
            "`sample_count = {n}`: a multisample texture has {} samples",
            SAMPLE_COUNTS.map(|c| c.to_string()).join(", ")
        )),
        (Slices::Samples, None) => Err(format!(
            "`sample_count` is missing: kernel parameter `{}` is a multisample texture (`{}`)",
            param.name, param.type_name
        )),
        (_, Some(_)) => Err(format!(
            "`sample_count` is given but kernel parameter `{}` is not a multisample texture \
             (`{}`)",
            param.name, param.type_name
        )),
        (_, None) => Ok(1),
    }
}

/// Reads or generates a planned texture's channels and converts them to its buffer.
pub(crate) fn materialize(plan: PlannedTexture<'_>) -> Result<BufferBinding, String> {
    let format = plan.spec.format;
    let storage = ElemType {
        scalar: format.channel.storage(),
        lanes: 1,
    };
    let texels: u64 = plan.size.iter().map(|&s| s as u64).product();
    let channels = texels * format.channels as u64;
    let stored = match (&plan.spec.init, &plan.npy) {
        (_, Some(path)) => read_npy_bytes(path, storage)
            .map_err(|e| format!("`init.npy = \"{}\"`: {e}", path.display()))?,
        (Some(init @ Init::Values(v)), None) => {
            if v.len() as u64 != channels {
                return Err(format!(
                    "`init.values` has {} values; {} texels of `{}` take {channels}",
                    v.len(),
                    texels,
                    format.name
                ));
            }
            let mut out = allocate(channels as usize * storage.size() as usize)?;
            generate(init, storage, channels, &mut out)?;
            out
        }
        (Some(init), None) => {
            let mut out = allocate(channels as usize * storage.size() as usize)?;
            generate(init, storage, channels, &mut out)?;
            out
        }
        (None, None) => vec![0; channels as usize * storage.size() as usize],
    };
    let texel_bytes = 4 * plan.elem.bytes() as usize;
    let mut bytes = allocate(HEADER_BYTES + texels as usize * texel_bytes)?;
    // The channel count tells `sample` whether the format has alpha (clamp_to_zero).
    // A multisample texture's sample count tells `get_num_samples` and `read` how its
    // slices group.
    let code = format.code()
        | (elem_code(plan.elem) << 8)
        | ((plan.dims as u32) << 16)
        | (plan.samples << 20)
        | ((format.channels as u32) << 24);
    for word in [plan.size[0], plan.size[1], plan.size[2], code] {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    let width = storage.size() as usize;
    for pixel in stored.chunks_exact(width * format.channels as usize) {
        for c in 0..4 {
            let value = if c < format.channels as usize {
                let at = format.stored_at(c) * width;
                read_channel(format.channel, &pixel[at..at + width])
            } else if c == 3 {
                Value::one(format.channel)
            } else {
                Value::Int(0)
            };
            put_texel_value(plan.elem, value, &mut bytes);
        }
    }
    Ok(BufferBinding {
        index: KernelParam::TEXTURE_BUFFER_BASE + plan.spec.index,
        name: plan.spec.name.clone(),
        // The header takes the room of one or two texels.
        elem: ElemType {
            scalar: plan.elem,
            lanes: 4,
        },
        count: (bytes.len() / texel_bytes) as u64,
        bytes,
        output: plan.spec.output,
    })
}

/// The element types a texture may have, by code.
const ELEM_CODES: [Type; 6] = [
    Type::F32,
    Type::F16,
    Type::I32,
    Type::U32,
    Type::I16,
    Type::U16,
];

fn elem_code(t: Type) -> u32 {
    ELEM_CODES.iter().position(|&e| e == t).unwrap_or(0) as u32
}

/// A channel's value between the format and the texel.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Value {
    Int(i64),
    Float(f32),
}

impl Value {
    /// Alpha of a format without alpha.
    fn one(channel: Channel) -> Value {
        match channel {
            Channel::Uint(_) | Channel::Sint(_) => Value::Int(1),
            _ => Value::Float(1.0),
        }
    }
}

/// A stored channel as the texture reads it (MSL spec, table 31 and 7.7.2).
fn read_channel(channel: Channel, b: &[u8]) -> Value {
    let uint = || b.iter().rev().fold(0u64, |v, &x| v << 8 | x as u64);
    let sint = || {
        let bits = 8 * b.len() as u32;
        ((uint() << (64 - bits)) as i64) >> (64 - bits)
    };
    match channel {
        Channel::Unorm(bits) => Value::Float(uint() as f32 / ((1u64 << bits) - 1) as f32),
        Channel::Snorm(bits) => {
            Value::Float((sint() as f32 / ((1u64 << (bits - 1)) - 1) as f32).max(-1.0))
        }
        Channel::Uint(_) => Value::Int(uint() as i64),
        Channel::Sint(_) => Value::Int(sint()),
        Channel::Float(16) => Value::Float(f16::from_bits(uint() as u16).to_f32()),
        Channel::Float(_) => Value::Float(f32::from_bits(uint() as u32)),
    }
}

/// Appends one channel of a texel of type `elem`.
fn put_texel_value(elem: Type, v: Value, out: &mut Vec<u8>) {
    match (elem, v) {
        (Type::F32, Value::Float(f)) => out.extend_from_slice(&f.to_le_bytes()),
        (Type::F32, Value::Int(i)) => out.extend_from_slice(&(i as f32).to_le_bytes()),
        (Type::F16, Value::Float(f)) => out.extend_from_slice(&f16::from_f32(f).to_le_bytes()),
        (Type::F16, Value::Int(i)) => out.extend_from_slice(&f16::from_f32(i as f32).to_le_bytes()),
        (t, v) => {
            let i = match v {
                Value::Int(i) => i,
                Value::Float(f) => f as i64,
            };
            out.extend_from_slice(&i.to_le_bytes()[..t.bytes() as usize]);
        }
    }
}

/// Whether a binding is a texture's buffer.
pub(crate) fn is_texture(b: &BufferBinding) -> bool {
    b.index >= KernelParam::TEXTURE_BUFFER_BASE
}

/// A texture's final buffer as the format stores it: the `.npy` shape and scalar type
/// and the channel bytes.
pub(crate) fn stored_channels(bytes: &[u8]) -> Result<(Vec<u64>, Type, Vec<u8>), String> {
    let word = |i: usize| {
        bytes
            .get(4 * i..4 * i + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    let (Some(w), Some(h), Some(d), Some(code)) = (word(0), word(1), word(2), word(3)) else {
        return Err("the texture's header is missing".into());
    };
    let format = PIXEL_FORMATS
        .get((code & 0xff) as usize)
        .and_then(|f| PixelFormat::from_name(f.name))
        .ok_or("the texture's header names no pixel format")?;
    let elem = ELEM_CODES[((code >> 8 & 0xff) as usize).min(ELEM_CODES.len() - 1)];
    let texel_bytes = 4 * elem.bytes() as usize;
    let texels = w as u128 * h as u128 * d as u128;
    let body = bytes
        .get(HEADER_BYTES..)
        .filter(|b| b.len() as u128 == texels * texel_bytes as u128)
        .ok_or("the texture's buffer does not match its header")?;
    let texels = texels as usize;
    let storage = format.channel.storage();
    let mut out = Vec::with_capacity(texels * format.channels as usize * storage.bytes() as usize);
    let item = elem.bytes() as usize;
    let mut stored = vec![Value::Int(0); format.channels as usize];
    for texel in body.chunks_exact(texel_bytes) {
        for (c, slot) in (0..format.channels as usize).map(|c| (c, format.stored_at(c))) {
            stored[slot] = texel_value(elem, &texel[c * item..(c + 1) * item]);
        }
        for v in &stored {
            write_channel(format.channel, *v, &mut out);
        }
    }
    let dims = ((code >> 16 & 0xf) as usize).clamp(1, 3);
    let mut shape: Vec<u64> = [d, h, w][3 - dims..].iter().map(|&s| s as u64).collect();
    shape.push(format.channels as u64);
    Ok((shape, storage, out))
}

/// One channel of a texel of type `elem`.
fn texel_value(elem: Type, b: &[u8]) -> Value {
    let uint = b.iter().rev().fold(0u64, |v, &x| v << 8 | x as u64);
    match elem {
        Type::F32 => Value::Float(f32::from_bits(uint as u32)),
        Type::F16 => Value::Float(f16::from_bits(uint as u16).to_f32()),
        Type::I32 => Value::Int(uint as u32 as i32 as i64),
        Type::I16 => Value::Int(uint as u16 as i16 as i64),
        _ => Value::Int(uint as i64),
    }
}

/// Appends a channel as the format stores it (MSL spec, tables 32 and 33, and 7.7.2).
fn write_channel(channel: Channel, v: Value, out: &mut Vec<u8>) {
    let int = |i: i64, bits: u32, signed: bool, out: &mut Vec<u8>| {
        let (lo, hi) = if signed {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        } else {
            (0, (1i64 << bits) - 1)
        };
        let i = if bits == 32 { i } else { i.clamp(lo, hi) };
        out.extend_from_slice(&i.to_le_bytes()[..bits as usize / 8]);
    };
    let float = |v: Value| match v {
        Value::Float(f) => f,
        Value::Int(i) => i as f32,
    };
    match channel {
        Channel::Unorm(bits) => {
            let max = ((1u64 << bits) - 1) as f32;
            let f = float(v);
            let x = if f.is_nan() {
                0.0
            } else {
                (f * max).clamp(0.0, max)
            };
            int(x.round_ties_even() as i64, bits, false, out);
        }
        Channel::Snorm(bits) => {
            let max = ((1u64 << (bits - 1)) - 1) as f32;
            let f = float(v);
            let x = if f.is_nan() {
                0.0
            } else {
                (f * max).clamp(-max, max)
            };
            int(x.round_ties_even() as i64, bits, true, out);
        }
        Channel::Uint(bits) | Channel::Sint(bits) => {
            let i = match v {
                Value::Int(i) => i,
                Value::Float(f) => f as i64,
            };
            int(i, bits, matches!(channel, Channel::Sint(_)), out);
        }
        Channel::Float(16) => out.extend_from_slice(&f16::from_f32(float(v)).to_le_bytes()),
        Channel::Float(_) => out.extend_from_slice(&float(v).to_le_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads one stored channel of `format` and writes it back.
    fn check(format: &str, stored: &[u8]) -> (Value, Vec<u8>) {
        let f = PixelFormat::from_name(format).unwrap();
        let v = read_channel(f.channel, stored);
        let mut back = Vec::new();
        write_channel(f.channel, v, &mut back);
        (v, back)
    }

    #[test]
    fn normalized_integers_convert_by_the_spec_tables() {
        assert_eq!(check("rgba8unorm", &[255]), (Value::Float(1.0), vec![255]));
        assert_eq!(check("rgba8unorm", &[0]).0, Value::Float(0.0));
        assert_eq!(check("r8unorm", &[51]).0, Value::Float(0.2));
        // -128 and -127 both read as -1.0 (table 31); -1.0 writes as -127 (table 32).
        assert_eq!(check("r8snorm", &[0x80]), (Value::Float(-1.0), vec![0x81]));
        assert_eq!(check("r16unorm", &[0xff, 0xff]).0, Value::Float(1.0));
        let mut out = Vec::new();
        // 0.5 * 255 = 127.5 rounds to even: 128; NaN writes 0; out of range clamps.
        for f in [0.5, f32::NAN, 2.0, -1.0] {
            write_channel(Channel::Unorm(8), Value::Float(f), &mut out);
        }
        assert_eq!(out, [128, 0, 255, 0]);
    }

    #[test]
    fn integers_saturate_when_written() {
        let mut out = Vec::new();
        write_channel(Channel::Uint(8), Value::Int(300), &mut out);
        write_channel(Channel::Sint(16), Value::Int(-40000), &mut out);
        assert_eq!(out, [255, 0x00, 0x80]);
        assert_eq!(check("r8sint", &[0xfe]).0, Value::Int(-2));
        assert_eq!(
            check("r32float", &1.5f32.to_le_bytes()).0,
            Value::Float(1.5)
        );
    }

    #[test]
    fn kernel_texture_types_are_read_from_the_parameter() {
        let mut p = KernelParam {
            kind: metalsim_isa::ParamKind::Buffer,
            index: KernelParam::TEXTURE_BUFFER_BASE,
            name: "t".into(),
            space: metalsim_isa::Space::Device,
            type_name: "texture2d<half, access::read_write>".into(),
            elem_size: 8,
            elem_align: 8,
            readonly: false,
            is_ref: false,
            atomic: false,
            is_struct: false,
        };
        let kind = |dims, array, slices, elem| {
            Some(TextureKind {
                dims,
                array,
                slices,
                elem,
            })
        };
        let cases = [
            (
                "texture2d<half, access::read_write>",
                kind(2, false, Slices::One, Type::F16),
            ),
            (
                "texture3d<ushort, access::read>",
                kind(3, false, Slices::One, Type::U16),
            ),
            (
                "texture1d_array<int, access::read>",
                kind(2, true, Slices::One, Type::I32),
            ),
            (
                "texture2d_array<float, access::sample>",
                kind(3, true, Slices::One, Type::F32),
            ),
            ("texture3d_array<float, access::sample>", None),
            (
                "depth2d<float, access::sample>",
                kind(2, false, Slices::One, Type::F32),
            ),
            ("depth3d<float, access::sample>", None),
            (
                "texturecube<half, access::sample>",
                kind(3, false, Slices::Faces, Type::F16),
            ),
            (
                "depthcube_array<float, access::sample>",
                kind(3, true, Slices::Faces, Type::F32),
            ),
            (
                "texture2d_ms<uint, access::read>",
                kind(3, false, Slices::Samples, Type::U32),
            ),
            (
                "depth2d_ms_array<float, access::read>",
                kind(3, true, Slices::Samples, Type::F32),
            ),
            (
                "texture_buffer<short, access::write>",
                kind(1, false, Slices::One, Type::I16),
            ),
        ];
        for (name, want) in cases {
            p.type_name = name.into();
            assert_eq!(texture_type(&p), want, "{name}");
        }
        p.type_name = "float".into();
        assert_eq!(texture_type(&p), None);
    }

    /// Plans `keys` (a `[[texture]]` table's size keys) against a parameter of `type_name`
    /// and gives the buffer's size and sample count, or the message.
    fn planned(type_name: &str, format: &str, keys: &str) -> Result<([u32; 3], u32), String> {
        let spec: TextureSpec = toml::from_str(&format!(
            "index = 0\nname = \"t\"\nformat = \"{format}\"\n{keys}"
        ))
        .map_err(|e| e.to_string())?;
        let p = KernelParam {
            kind: metalsim_isa::ParamKind::Buffer,
            index: KernelParam::TEXTURE_BUFFER_BASE,
            name: "t".into(),
            space: metalsim_isa::Space::Device,
            type_name: type_name.into(),
            elem_size: 16,
            elem_align: 16,
            readonly: true,
            is_ref: false,
            atomic: false,
            is_struct: false,
        };
        plan(&spec, &p, Path::new(".")).map(|t| (t.size, t.samples))
    }

    #[test]
    fn cubes_and_multisample_textures_are_slices_of_a_3d_buffer() {
        let cube = "texturecube_array<float, access::sample>";
        assert_eq!(
            planned(cube, "rgba8unorm", "width = 4\narray_length = 3"),
            Ok(([4, 4, 18], 1))
        );
        assert_eq!(
            planned("depthcube<float>", "depth32float", "width = 2"),
            Ok(([2, 2, 6], 1))
        );
        let ms = "texture2d_ms_array<float, access::read>";
        assert_eq!(
            planned(
                ms,
                "rgba16float",
                "width = 5\nheight = 3\nsample_count = 4\narray_length = 2"
            ),
            Ok(([5, 3, 8], 4))
        );
        assert_eq!(
            planned("texture_buffer<uint>", "r32uint", "width = 9"),
            Ok(([9, 1, 1], 1))
        );
        let err = |t, f, k| planned(t, f, k).unwrap_err();
        assert!(err(cube, "rgba8unorm", "width = 4\nheight = 5").contains("faces are square"));
        assert!(err(cube, "rgba8unorm", "width = 4\ndepth = 6").contains("cube faces"));
        assert!(
            err(ms, "rgba8unorm", "width = 4\nheight = 4").contains("`sample_count` is missing")
        );
        assert!(err(ms, "rgba8unorm", "width = 4\nsample_count = 3").contains("1, 2, 4, 8"));
        assert!(
            err(
                "texture2d<float>",
                "rgba8unorm",
                "width = 4\nsample_count = 2"
            )
            .contains("not a multisample texture")
        );
        assert!(err("depthcube<float>", "rgba8unorm", "width = 4").contains("take a depth format"));
    }
}
