//! A buffer's initial contents: the `init` table and how it becomes bytes.

use std::path::PathBuf;

use metalsim_isa::Type;
use serde::{Deserialize, Serialize};

use crate::dispatch::ElemType;
use crate::rng::Rng;
use crate::value::{Scalar, encode, int_range, put_float, put_int, type_name};

/// How a buffer is filled before the run. Omitted `init` means zeros.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(try_from = "InitTable", into = "InitTable")]
pub enum Init {
    /// `{ fill = x }`: every component is `x`.
    Fill(Scalar),
    /// `{ iota = { start = a, step = d } }`: every component of element `i` is
    /// `a + i * d` (defaults 0 and 1).
    Iota {
        /// The first element's value.
        start: Scalar,
        /// The increment from one element to the next.
        step: Scalar,
    },
    /// `{ random = "uniform" | "normal", ..., seed = s }`: components drawn from a
    /// seeded generator, element by element and component by component.
    Random {
        /// Which distribution, with its parameters.
        distribution: Distribution,
        /// The generator's seed (default 0).
        seed: u64,
    },
    /// `{ npy = "file.npy" }`: a NumPy file, relative to the spec file's folder.
    Npy(PathBuf),
    /// `{ values = [...] }`: the components, flattened (element 0's components first).
    Values(Vec<Scalar>),
}

/// A random distribution.
#[derive(Clone, PartialEq, Debug)]
pub enum Distribution {
    /// Uniform: reals in `[min, max)` (defaults 0 and 1), integers in `[min, max]`
    /// (defaults: the type's whole range).
    Uniform {
        /// The low bound, when given.
        min: Option<Scalar>,
        /// The high bound, when given.
        max: Option<Scalar>,
    },
    /// Normal (Gaussian), for float types only.
    Normal {
        /// The mean (default 0).
        mean: f64,
        /// The standard deviation (default 1).
        std: f64,
    },
}

/// The `init` table as written: every key optional, checked by `TryFrom`.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct InitTable {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fill: Option<Scalar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iota: Option<IotaTable>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    random: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min: Option<Scalar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max: Option<Scalar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    std: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    npy: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    values: Option<Vec<Scalar>>,
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct IotaTable {
    #[serde(default = "zero")]
    start: Scalar,
    #[serde(default = "one")]
    step: Scalar,
}

fn zero() -> Scalar {
    Scalar::Int(0)
}

fn one() -> Scalar {
    Scalar::Int(1)
}

impl TryFrom<InitTable> for Init {
    type Error = String;

    fn try_from(t: InitTable) -> Result<Init, String> {
        let kinds: Vec<&str> = [
            ("fill", t.fill.is_some()),
            ("iota", t.iota.is_some()),
            ("random", t.random.is_some()),
            ("npy", t.npy.is_some()),
            ("values", t.values.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, present)| present.then_some(k))
        .collect();
        match kinds.as_slice() {
            [_] => {}
            [] => {
                return Err(
                    "`init` needs one of `fill`, `iota`, `random`, `npy` or `values`".into(),
                );
            }
            [a, b, ..] => return Err(format!("`init` has both `{a}` and `{b}`; give one")),
        }
        let random_keys = [
            ("min", t.min.is_some()),
            ("max", t.max.is_some()),
            ("mean", t.mean.is_some()),
            ("std", t.std.is_some()),
            ("seed", t.seed.is_some()),
        ];
        let allowed: &[&str] = match t.random.as_deref() {
            None => &[],
            Some("uniform") => &["min", "max", "seed"],
            Some("normal") => &["mean", "std", "seed"],
            Some(other) => {
                return Err(format!(
                    "unknown distribution `random = \"{other}\"`; expected \"uniform\" or \"normal\""
                ));
            }
        };
        if let Some((key, _)) = random_keys
            .iter()
            .find(|(k, present)| *present && !allowed.contains(k))
        {
            return Err(match &t.random {
                None => format!(
                    "`{key}` belongs to `random`, but this `init` uses `{}`",
                    kinds[0]
                ),
                Some(d) => format!("`{key}` is not a parameter of `random = \"{d}\"`"),
            });
        }
        Ok(if let Some(v) = t.fill {
            Init::Fill(v)
        } else if let Some(i) = t.iota {
            Init::Iota {
                start: i.start,
                step: i.step,
            }
        } else if let Some(p) = t.npy {
            Init::Npy(p)
        } else if let Some(v) = t.values {
            Init::Values(v)
        } else {
            let distribution = if t.random.as_deref() == Some("normal") {
                Distribution::Normal {
                    mean: t.mean.unwrap_or(0.0),
                    std: t.std.unwrap_or(1.0),
                }
            } else {
                Distribution::Uniform {
                    min: t.min,
                    max: t.max,
                }
            };
            Init::Random {
                distribution,
                seed: t.seed.unwrap_or(0),
            }
        })
    }
}

impl From<Init> for InitTable {
    fn from(init: Init) -> InitTable {
        let mut t = InitTable::default();
        match init {
            Init::Fill(v) => t.fill = Some(v),
            Init::Iota { start, step } => t.iota = Some(IotaTable { start, step }),
            Init::Npy(p) => t.npy = Some(p),
            Init::Values(v) => t.values = Some(v),
            Init::Random { distribution, seed } => {
                t.seed = Some(seed);
                match distribution {
                    Distribution::Uniform { min, max } => {
                        t.random = Some("uniform".into());
                        t.min = min;
                        t.max = max;
                    }
                    Distribution::Normal { mean, std } => {
                        t.random = Some("normal".into());
                        t.mean = Some(mean);
                        t.std = Some(std);
                    }
                }
            }
        }
        t
    }
}

/// Appends `count` elements generated by `init` (which must not be `Npy`) to `out`.
/// Errors name the `init` key at fault, e.g. "`init.values[3]`: 256 is out of range...".
pub(crate) fn generate(
    init: &Init,
    elem: ElemType,
    count: u64,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let ty = elem.scalar;
    let layout = Layout {
        count,
        lanes: elem.lanes as usize,
        pad: elem.size() as usize - elem.lanes as usize * ty.bytes() as usize,
    };
    match init {
        Init::Fill(v) => {
            let mut one = Vec::new();
            encode(ty, *v, &mut one).map_err(|e| format!("`init.fill`: {e}"))?;
            layout.each(out, |_, out| {
                out.extend_from_slice(&one);
                Ok(())
            })
        }
        Init::Values(values) => {
            let mut k = 0;
            layout.each(out, |_, out| {
                encode(ty, values[k], out).map_err(|e| format!("`init.values[{k}]`: {e}"))?;
                k += 1;
                Ok(())
            })
        }
        Init::Iota { start, step } => iota(ty, *start, *step, &layout, out),
        Init::Random { distribution, seed } => {
            random(ty, distribution, &mut Rng::new(*seed), &layout, out)
        }
        Init::Npy(_) => unreachable!("npy inputs are read, not generated"),
    }
}

/// Where the components of a buffer go.
struct Layout {
    count: u64,
    lanes: usize,
    /// Padding bytes after each element (3-component vectors take the space of 4).
    pad: usize,
}

impl Layout {
    /// Calls `component(i, out)` for every component of every element `i`, in order,
    /// padding each element.
    fn each(
        &self,
        out: &mut Vec<u8>,
        mut component: impl FnMut(u64, &mut Vec<u8>) -> Result<(), String>,
    ) -> Result<(), String> {
        for i in 0..self.count {
            for _ in 0..self.lanes {
                component(i, out)?;
            }
            out.resize(out.len() + self.pad, 0);
        }
        Ok(())
    }
}

fn iota(
    ty: Type,
    start: Scalar,
    step: Scalar,
    layout: &Layout,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let name = type_name(ty);
    if ty == Type::Pred {
        return Err("`init.iota` does not apply to `bool`; use `values` or `random`".into());
    }
    if ty.is_float() {
        let (Some(a), Some(d)) = (start.as_f64(), step.as_f64()) else {
            return Err(format!(
                "`init.iota`: `start` and `step` must be numbers for `{name}`"
            ));
        };
        layout.each(out, |i, out| {
            put_float(ty, a + i as f64 * d, out)
                .map_err(|e| format!("`init.iota`: element {i}: {e}"))
        })
    } else {
        let (Some(a), Some(d)) = (start.as_int(), step.as_int()) else {
            return Err(format!(
                "`init.iota`: `start` and `step` must be integers for `{name}`"
            ));
        };
        layout.each(out, |i, out| {
            let v = (i as i128)
                .checked_mul(d)
                .and_then(|id| id.checked_add(a))
                .ok_or_else(|| format!("`init.iota`: element {i} overflows"))?;
            put_int(ty, v, out).map_err(|e| format!("`init.iota`: element {i}: {e}"))
        })
    }
}

fn random(
    ty: Type,
    distribution: &Distribution,
    rng: &mut Rng,
    layout: &Layout,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let name = type_name(ty);
    match *distribution {
        Distribution::Normal { mean, std } => {
            if !ty.is_float() {
                return Err(format!(
                    "`init.random = \"normal\"` needs a float type, not `{name}`; \
                     use \"uniform\" for integers"
                ));
            }
            if !mean.is_finite() || !std.is_finite() || std < 0.0 {
                return Err(format!(
                    "`init.mean` and `init.std` must be finite and `std` at least 0 \
                     (mean = {mean:?}, std = {std:?})"
                ));
            }
            layout.each(out, |_, out| {
                // The generator's values are unbounded; one past the type's range is
                // rounded to infinity rather than refused.
                let x = mean + std * rng.standard_normal();
                put_float(ty, x, out).or_else(|_| put_float(ty, x.signum() * f64::INFINITY, out))
            })
        }
        Distribution::Uniform { min, max } if ty.is_float() => {
            let bound = |key: &str, v: Option<Scalar>, default: f64| -> Result<f64, String> {
                let x = match v {
                    None => default,
                    Some(v) => v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                        format!("`init.{key}` must be a finite number for `{name}`, not {v}")
                    })?,
                };
                put_float(ty, x, &mut Vec::new()).map_err(|e| format!("`init.{key}`: {e}"))?;
                Ok(x)
            };
            let lo = bound("min", min, 0.0)?;
            let hi = bound("max", max, 1.0)?;
            if lo > hi {
                return Err(format!(
                    "`init.min` ({lo:?}) is greater than `init.max` ({hi:?})"
                ));
            }
            layout.each(out, |_, out| {
                let x = lo + (hi - lo) * rng.next_f64();
                put_float(ty, x, out)
            })
        }
        Distribution::Uniform { min, max } => {
            let (type_lo, type_hi) = int_range(ty);
            let bound = |key: &str, v: Option<Scalar>, default: i128| -> Result<i128, String> {
                let x = match v {
                    None => default,
                    Some(Scalar::Bool(b)) if ty == Type::Pred => b as i128,
                    Some(v) => v.as_int().ok_or_else(|| {
                        format!("`init.{key}` must be an integer for `{name}`, not {v}")
                    })?,
                };
                put_int(ty, x, &mut Vec::new()).map_err(|e| format!("`init.{key}`: {e}"))?;
                Ok(x)
            };
            let lo = bound("min", min, type_lo)?;
            let hi = bound("max", max, type_hi)?;
            if lo > hi {
                return Err(format!(
                    "`init.min` ({lo}) is greater than `init.max` ({hi})"
                ));
            }
            layout.each(out, |_, out| put_int(ty, rng.int_in(lo, hi), out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elem(name: &str) -> ElemType {
        ElemType::from_msl_name(name).unwrap()
    }

    fn init(toml_text: &str) -> Init {
        #[derive(Deserialize)]
        struct Wrap {
            init: Init,
        }
        toml::from_str::<Wrap>(&format!("init = {toml_text}"))
            .unwrap()
            .init
    }

    fn bytes(init_text: &str, ty: &str, count: u64) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        generate(&init(init_text), elem(ty), count, &mut out)?;
        assert_eq!(out.len() as u64, count * elem(ty).size() as u64);
        Ok(out)
    }

    fn f32s(b: &[u8]) -> Vec<f32> {
        b.chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn u32s(b: &[u8]) -> Vec<u32> {
        b.chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn i16s(b: &[u8]) -> Vec<i16> {
        b.chunks(2)
            .map(|c| i16::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn halves(b: &[u8]) -> Vec<f32> {
        b.chunks(2)
            .map(|c| f16::from_le_bytes(c.try_into().unwrap()).to_f32())
            .collect()
    }

    use half::f16;

    #[test]
    fn fill_every_type() {
        assert_eq!(
            f32s(&bytes("{ fill = 1.5 }", "float", 3).unwrap()),
            [1.5; 3]
        );
        assert_eq!(u32s(&bytes("{ fill = 7 }", "uint", 2).unwrap()), [7, 7]);
        assert_eq!(bytes("{ fill = -1 }", "char", 2).unwrap(), [0xff, 0xff]);
        assert_eq!(bytes("{ fill = 200 }", "uchar2", 1).unwrap(), [200, 200]);
        assert_eq!(i16s(&bytes("{ fill = -3 }", "short", 2).unwrap()), [-3, -3]);
        assert_eq!(
            bytes("{ fill = 65535 }", "ushort", 1).unwrap(),
            [0xff, 0xff]
        );
        assert_eq!(
            bytes("{ fill = -2 }", "int", 1).unwrap(),
            (-2i32).to_le_bytes()
        );
        assert_eq!(
            bytes("{ fill = -2 }", "long", 1).unwrap(),
            (-2i64).to_le_bytes()
        );
        assert_eq!(
            bytes("{ fill = 9 }", "ulong", 1).unwrap(),
            9u64.to_le_bytes()
        );
        assert_eq!(
            halves(&bytes("{ fill = 0.5 }", "half", 2).unwrap()),
            [0.5, 0.5]
        );
        assert_eq!(bytes("{ fill = 1 }", "bfloat", 1).unwrap(), [0x80, 0x3f]);
        assert_eq!(bytes("{ fill = true }", "bool", 3).unwrap(), [1, 1, 1]);
        assert_eq!(
            bytes("{ fill = 256 }", "uchar", 1).unwrap_err(),
            "`init.fill`: 256 is out of range for `uchar` (0 to 255)"
        );
    }

    #[test]
    fn three_component_vectors_are_padded() {
        assert_eq!(
            f32s(&bytes("{ fill = 2 }", "float3", 2).unwrap()),
            [2.0, 2.0, 2.0, 0.0, 2.0, 2.0, 2.0, 0.0]
        );
        assert_eq!(
            bytes("{ values = [1, 2, 3, 4, 5, 6] }", "uchar3", 2).unwrap(),
            [1, 2, 3, 0, 4, 5, 6, 0]
        );
        assert_eq!(
            halves(&bytes("{ iota = { start = 1 } }", "half3", 2).unwrap()),
            [1.0, 1.0, 1.0, 0.0, 2.0, 2.0, 2.0, 0.0]
        );
    }

    #[test]
    fn values_are_flattened_components() {
        assert_eq!(
            f32s(&bytes("{ values = [1, 2.5, -3, 4] }", "float2", 2).unwrap()),
            [1.0, 2.5, -3.0, 4.0]
        );
        assert_eq!(
            bytes("{ values = [true, 0, 1, false] }", "bool", 4).unwrap(),
            [1, 0, 1, 0]
        );
        assert_eq!(
            bytes("{ values = [1, 2, 300] }", "uchar", 3).unwrap_err(),
            "`init.values[2]`: 300 is out of range for `uchar` (0 to 255)"
        );
        assert_eq!(
            bytes("{ values = [1, 2.5] }", "int", 2).unwrap_err(),
            "`init.values[1]`: 2.5 is not an integer but the type is `int`"
        );
    }

    #[test]
    fn iota_gives_each_component_of_element_i_the_same_value() {
        assert_eq!(
            u32s(&bytes("{ iota = {} }", "uint", 4).unwrap()),
            [0, 1, 2, 3]
        );
        assert_eq!(
            i16s(&bytes("{ iota = { start = 10, step = -3 } }", "short", 3).unwrap()),
            [10, 7, 4]
        );
        assert_eq!(
            u32s(&bytes("{ iota = { start = 5, step = 2 } }", "uint2", 2).unwrap()),
            [5, 5, 7, 7]
        );
        assert_eq!(
            f32s(&bytes("{ iota = { start = 0.5, step = 0.25 } }", "float", 3).unwrap()),
            [0.5, 0.75, 1.0]
        );
        assert_eq!(
            bytes("{ iota = { step = 100 } }", "uchar", 4).unwrap_err(),
            "`init.iota`: element 3: 300 is out of range for `uchar` (0 to 255)"
        );
        assert_eq!(
            bytes("{ iota = { step = 0.5 } }", "int", 4).unwrap_err(),
            "`init.iota`: `start` and `step` must be integers for `int`"
        );
        assert_eq!(
            bytes("{ iota = {} }", "bool", 4).unwrap_err(),
            "`init.iota` does not apply to `bool`; use `values` or `random`"
        );
    }

    #[test]
    fn uniform_stays_in_bounds() {
        let xs = f32s(
            &bytes(
                "{ random = \"uniform\", min = -2, max = 3, seed = 5 }",
                "float",
                1000,
            )
            .unwrap(),
        );
        assert!(xs.iter().all(|&x| (-2.0..=3.0).contains(&x)));
        let ints =
            i16s(&bytes("{ random = \"uniform\", min = -1, max = 1 }", "short", 1000).unwrap());
        assert!(ints.iter().all(|&x| (-1..=1).contains(&x)));
        assert!([-1, 0, 1].iter().all(|v| ints.contains(v)));
        let full = bytes("{ random = \"uniform\" }", "uchar", 4000).unwrap();
        assert!(full.contains(&0) && full.contains(&255));
        let b = bytes("{ random = \"uniform\" }", "bool", 100).unwrap();
        assert!(b.iter().all(|&x| x <= 1) && b.contains(&0) && b.contains(&1));
        let h = halves(&bytes("{ random = \"uniform\" }", "half", 100).unwrap());
        assert!(h.iter().all(|&x| (0.0..=1.0).contains(&x)));
    }

    #[test]
    fn random_streams_are_pinned() {
        assert_eq!(
            f32s(&bytes("{ random = \"uniform\", seed = 1 }", "float", 4).unwrap()),
            [0.7029218, 0.52043664, 0.5741057, 0.3913286]
        );
        assert_eq!(
            u32s(
                &bytes(
                    "{ random = \"uniform\", min = 0, max = 99, seed = 1 }",
                    "uint",
                    4
                )
                .unwrap()
            ),
            [70, 52, 57, 39]
        );
        assert_eq!(
            f32s(
                &bytes(
                    "{ random = \"normal\", mean = 1, std = 2, seed = 1 }",
                    "float2",
                    2
                )
                .unwrap()
            ),
            [4.768792, 1.3795618, 3.6041806, -2.8188686]
        );
    }

    #[test]
    fn random_errors() {
        assert_eq!(
            bytes("{ random = \"normal\" }", "int", 1).unwrap_err(),
            "`init.random = \"normal\"` needs a float type, not `int`; use \"uniform\" for integers"
        );
        assert_eq!(
            bytes("{ random = \"uniform\", min = 1.5 }", "int", 1).unwrap_err(),
            "`init.min` must be an integer for `int`, not 1.5"
        );
        assert_eq!(
            bytes("{ random = \"uniform\", min = -1 }", "uint", 1).unwrap_err(),
            "`init.min`: -1 is out of range for `uint` (0 to 4294967295)"
        );
        assert_eq!(
            bytes("{ random = \"uniform\", min = 3, max = 2 }", "float", 1).unwrap_err(),
            "`init.min` (3.0) is greater than `init.max` (2.0)"
        );
        assert_eq!(
            bytes("{ random = \"uniform\", max = 1e6 }", "half", 1).unwrap_err(),
            "`init.max`: 1000000.0 is out of range for `half` (largest 65504)"
        );
    }

    #[test]
    fn init_tables_are_checked() {
        fn err(text: &str) -> String {
            #[derive(Deserialize, Debug)]
            #[allow(dead_code)]
            struct Wrap {
                init: Init,
            }
            toml::from_str::<Wrap>(&format!("init = {text}"))
                .unwrap_err()
                .message()
                .to_string()
        }
        assert_eq!(
            err("{}"),
            "`init` needs one of `fill`, `iota`, `random`, `npy` or `values`"
        );
        assert_eq!(
            err("{ fill = 1, values = [1] }"),
            "`init` has both `fill` and `values`; give one"
        );
        assert_eq!(
            err("{ random = \"gauss\" }"),
            "unknown distribution `random = \"gauss\"`; expected \"uniform\" or \"normal\""
        );
        assert_eq!(
            err("{ random = \"normal\", min = 1 }"),
            "`min` is not a parameter of `random = \"normal\"`"
        );
        assert_eq!(
            err("{ fill = 1, seed = 1 }"),
            "`seed` belongs to `random`, but this `init` uses `fill`"
        );
        assert!(err("{ fil = 1 }").starts_with("unknown field `fil`"));
        assert!(err("{ iota = { begin = 1 } }").starts_with("unknown field `begin`"));
    }

    #[test]
    fn init_round_trips_through_toml() {
        for text in [
            "{ fill = 1.5 }",
            "{ iota = { start = 1, step = 2 } }",
            "{ random = \"uniform\", min = 0, max = 9, seed = 3 }",
            "{ random = \"normal\", mean = 1.0, std = 2.0, seed = 0 }",
            "{ npy = \"a.npy\" }",
            "{ values = [1, 2.5, true] }",
        ] {
            #[derive(Deserialize, Serialize, PartialEq, Debug)]
            struct Wrap {
                init: Init,
            }
            let a: Wrap = toml::from_str(&format!("init = {text}")).unwrap();
            let b: Wrap = toml::from_str(&toml::to_string(&a).unwrap()).unwrap();
            assert_eq!(a, b);
        }
    }
}
