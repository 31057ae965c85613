//! Samplers: the `[[sampler]]` table and the buffer a sampler becomes.
//!
//! The frontend lowers `sampler s [[sampler(n)]]` to the constant buffer at
//! [`KernelParam::SAMPLER_BUFFER_BASE`]` + n` holding the prelude's `sampler` struct: twelve 4-byte
//! words, each enum as its position in the MSL enum (MSL spec 2.6, table 2). The keys and
//! values of the table are MSL's names, as a `constexpr sampler` in the source spells them.

use metalsim_isa::{KernelParam, Type};
use serde::{Deserialize, Serialize};

use crate::dispatch::{BufferBinding, ElemType};

/// The most samplers a kernel has (`[[sampler(0)]]` to `[[sampler(15)]]`).
const MAX_SAMPLERS: u32 = 16;

/// `coord`: normalized (0 to 1 across the texture) or pixel coordinates.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coord {
    /// `coord::normalized`, the default.
    #[default]
    Normalized,
    /// `coord::pixel`.
    Pixel,
}

/// An address mode (`address`, `s_address`, `t_address`, `r_address`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressMode {
    /// Outside reads zero (opaque black for a format without alpha).
    ClampToZero,
    /// Outside reads the nearest edge texel; the default.
    ClampToEdge,
    /// Outside reads the border colour.
    ClampToBorder,
    /// The texture repeats.
    Repeat,
    /// The texture repeats, every other copy mirrored.
    MirroredRepeat,
}

/// A filter (`filter`, `mag_filter`, `min_filter`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Filter {
    /// The nearest texel; the default.
    Nearest,
    /// Linear interpolation of the 2, 4 or 8 nearest texels.
    Linear,
}

/// `mip_filter`. Textures have one mipmap level, so it has no effect.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MipFilter {
    /// One level of detail; the default.
    #[default]
    None,
    /// The nearest level.
    Nearest,
    /// Between the two nearest levels.
    Linear,
}

/// `border_color`, read outside the texture under `clamp_to_border`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BorderColor {
    /// (0, 0, 0, 0), the default.
    #[default]
    TransparentBlack,
    /// (0, 0, 0, 1).
    OpaqueBlack,
    /// (1, 1, 1, 1).
    OpaqueWhite,
}

/// `compare_func`, for `sample_compare` on depth textures (`none` never passes).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareFunc {
    /// No comparison; the default.
    #[default]
    None,
    /// Passes when the reference is less than the texel.
    Less,
    /// Less or equal.
    LessEqual,
    /// Greater.
    Greater,
    /// Greater or equal.
    GreaterEqual,
    /// Equal.
    Equal,
    /// Not equal.
    NotEqual,
    /// Always passes.
    Always,
    /// Never passes.
    Never,
}

/// A `[[sampler]]` table: the sampler state bound at `[[sampler(index)]]`. Unset keys take
/// MSL's defaults (normalized coordinates, `clamp_to_edge`, `nearest`); a per-axis address
/// mode overrides `address` and `mag_filter`/`min_filter` override `filter`.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplerSpec {
    /// The binding index `n` of `[[sampler(n)]]`.
    pub index: u32,
    /// Normalized or pixel coordinates.
    #[serde(default)]
    pub coord: Coord,
    /// The address mode of every axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<AddressMode>,
    /// The address mode of the first axis (x).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s_address: Option<AddressMode>,
    /// The address mode of the second axis (y).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_address: Option<AddressMode>,
    /// The address mode of the third axis (z).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r_address: Option<AddressMode>,
    /// The magnification and minification filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Filter>,
    /// The magnification filter (level of detail 0 or less: every `sample` in a kernel
    /// without a `level`, `bias` or gradient).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mag_filter: Option<Filter>,
    /// The minification filter (level of detail above 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_filter: Option<Filter>,
    /// The mipmap filter.
    #[serde(default)]
    pub mip_filter: MipFilter,
    /// The border colour of `clamp_to_border`.
    #[serde(default)]
    pub border_color: BorderColor,
    /// The comparison of `sample_compare`.
    #[serde(default)]
    pub compare_func: CompareFunc,
    /// The smallest level of detail (`lod_clamp`'s first value), 0 by default.
    #[serde(default)]
    pub lod_min_clamp: f32,
    /// The largest level of detail, `FLT_MAX` by default.
    #[serde(default = "max_lod")]
    pub lod_max_clamp: f32,
    /// The most anisotropic samples, 1 to 16 (accepted; sampling is isotropic).
    #[serde(default = "one")]
    pub max_anisotropy: u32,
}

fn max_lod() -> f32 {
    f32::MAX
}

fn one() -> u32 {
    1
}

impl SamplerSpec {
    /// The twelve words of the prelude's `sampler` struct, in its field order.
    fn words(&self) -> [u32; 12] {
        let address = self.address.unwrap_or(AddressMode::ClampToEdge);
        let axis = |a: Option<AddressMode>| a.unwrap_or(address) as u32;
        let filter = self.filter.unwrap_or(Filter::Nearest);
        [
            self.coord as u32,
            axis(self.s_address),
            axis(self.t_address),
            axis(self.r_address),
            self.mag_filter.unwrap_or(filter) as u32,
            self.min_filter.unwrap_or(filter) as u32,
            self.mip_filter as u32,
            self.border_color as u32,
            self.compare_func as u32,
            self.max_anisotropy,
            self.lod_min_clamp.to_bits(),
            self.lod_max_clamp.to_bits(),
        ]
    }

    /// Checks the state against the MSL specification's rules (2.6): pixel coordinates
    /// need one filter for both, no mipmap filter and clamping address modes.
    fn check(&self) -> Result<(), String> {
        if self.index >= MAX_SAMPLERS {
            return Err(format!(
                "`index = {}`: a kernel has samplers 0 to {}",
                self.index,
                MAX_SAMPLERS - 1
            ));
        }
        if !(1..=16).contains(&self.max_anisotropy) {
            return Err(format!(
                "`max_anisotropy = {}` is out of range: 1 to 16",
                self.max_anisotropy
            ));
        }
        if self.lod_min_clamp.is_nan()
            || self.lod_max_clamp.is_nan()
            || self.lod_min_clamp > self.lod_max_clamp
        {
            return Err(format!(
                "`lod_min_clamp = {}` and `lod_max_clamp = {}` do not make a range",
                self.lod_min_clamp, self.lod_max_clamp
            ));
        }
        if self.coord == Coord::Pixel {
            let w = self.words();
            if w[4] != w[5] {
                return Err(
                    "`coord = \"pixel\"` needs the same `mag_filter` and `min_filter` (MSL spec 2.6)"
                        .into(),
                );
            }
            if self.mip_filter != MipFilter::None {
                return Err(
                    "`coord = \"pixel\"` needs `mip_filter = \"none\"` (MSL spec 2.6)".into(),
                );
            }
            if w[1..4]
                .iter()
                .any(|&a| a > AddressMode::ClampToBorder as u32)
            {
                return Err(
                    "`coord = \"pixel\"` needs clamp_to_zero, clamp_to_edge or clamp_to_border \
                     address modes, not repeat or mirrored_repeat (MSL spec 2.6)"
                        .into(),
                );
            }
        }
        Ok(())
    }
}

/// Checks a sampler's state and makes its buffer.
pub(crate) fn materialize(spec: &SamplerSpec) -> Result<BufferBinding, String> {
    spec.check()?;
    let words = spec.words();
    Ok(BufferBinding {
        index: KernelParam::SAMPLER_BUFFER_BASE + spec.index,
        name: format!("sampler{}", spec.index),
        elem: ElemType {
            scalar: Type::U32,
            lanes: 1,
        },
        count: words.len() as u64,
        bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        output: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses a `[[sampler]]` table's body and returns its words or the error.
    fn check(body: &str) -> Result<[u32; 12], String> {
        let spec: SamplerSpec = toml::from_str(body).map_err(|e| e.message().to_string())?;
        let b = materialize(&spec)?;
        assert_eq!(b.bytes.len(), 48);
        Ok(spec.words())
    }

    #[test]
    fn defaults_are_msl_defaults_and_specific_keys_win() {
        let w = check("index = 0").unwrap();
        assert_eq!(w[..10], [0, 1, 1, 1, 0, 0, 0, 0, 0, 1]);
        assert_eq!(f32::from_bits(w[11]), f32::MAX);
        let w = check(
            "index = 3\naddress = \"repeat\"\nt_address = \"mirrored_repeat\"\n\
             filter = \"linear\"\nmin_filter = \"nearest\"\nborder_color = \"opaque_white\"",
        )
        .unwrap();
        assert_eq!(w[..8], [0, 3, 4, 3, 1, 0, 0, 2]);
    }

    #[test]
    fn pixel_coordinates_follow_the_spec_rules() {
        assert!(check("index = 0\ncoord = \"pixel\"\nfilter = \"linear\"").is_ok());
        let e = check("index = 0\ncoord = \"pixel\"\naddress = \"repeat\"").unwrap_err();
        assert!(e.contains("not repeat or mirrored_repeat"), "{e}");
        let e = check("index = 0\ncoord = \"pixel\"\nmag_filter = \"linear\"").unwrap_err();
        assert!(e.contains("same `mag_filter` and `min_filter`"), "{e}");
        let e = check("index = 16").unwrap_err();
        assert!(e.contains("samplers 0 to 15"), "{e}");
        let e = check("index = 0\naddress = \"wrap\"").unwrap_err();
        assert!(e.contains("unknown variant `wrap`"), "{e}");
        let e = check("index = 0\nlod_min_clamp = 2.0\nlod_max_clamp = 1.0").unwrap_err();
        assert!(e.contains("do not make a range"), "{e}");
    }
}
