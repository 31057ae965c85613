//! Whether a real GPU's output buffer matches the simulator's.
//!
//! Integers and booleans must be equal. Floats are compared by the relative L2 error
//! `‖real − sim‖ / ‖sim‖` (a NaN on one side only never matches): at most 1e-4 for
//! `float` (fast-math functions and a different order of floating-point sums, as in
//! atomics and SIMD-group reductions, move the last bits) and 1e-2 for `half` and
//! `bfloat`.

use half::{bf16, f16};
use metalsim_isa::Type;
use metalsim_launch::ElemType;

/// The verdict for one buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferMatch {
    /// Within tolerance.
    pub matches: bool,
    /// What was compared and how far apart (`max |Δ| …, rel. L2 …`, or how many
    /// elements differ).
    pub detail: String,
}

/// Compares two buffers of `count` elements of `elem` in MSL layout.
pub fn compare_buffer(elem: ElemType, count: u64, real: &[u8], sim: &[u8]) -> BufferMatch {
    let size = elem.size() as usize;
    let expected = count as usize * size;
    if real.len() != expected || sim.len() != expected {
        return BufferMatch {
            matches: false,
            detail: format!(
                "sizes differ: {} bytes measured, {} simulated, {expected} expected",
                real.len(),
                sim.len()
            ),
        };
    }
    let scalar = elem.scalar.bytes() as usize;
    let lanes = elem.lanes as usize;
    let values = |bytes: &[u8]| -> Vec<u64> {
        let mut out = Vec::with_capacity(count as usize * lanes);
        for e in bytes.chunks_exact(size) {
            for l in 0..lanes {
                let mut w = [0u8; 8];
                w[..scalar].copy_from_slice(&e[l * scalar..(l + 1) * scalar]);
                out.push(u64::from_le_bytes(w));
            }
        }
        out
    };
    let (r, s) = (values(real), values(sim));
    let to_f64 = |bits: u64| -> Option<f64> {
        match elem.scalar {
            Type::F32 => Some(f32::from_bits(bits as u32) as f64),
            Type::F16 => Some(f16::from_bits(bits as u16).to_f64()),
            Type::BF16 => Some(bf16::from_bits(bits as u16).to_f64()),
            _ => None,
        }
    };
    if !elem.scalar.is_float() {
        let differ = r.iter().zip(&s).filter(|(a, b)| a != b).count();
        return BufferMatch {
            matches: differ == 0,
            detail: if differ == 0 {
                format!("{} values equal", r.len())
            } else {
                let first = r.iter().zip(&s).position(|(a, b)| a != b).unwrap_or(0);
                format!(
                    "{differ} of {} values differ (first at {first}: {} measured, {} simulated)",
                    r.len(),
                    r[first],
                    s[first]
                )
            },
        };
    }
    let tolerance = if elem.scalar == Type::F32 { 1e-4 } else { 1e-2 };
    let (mut diff2, mut ref2, mut max_abs, mut nan_mismatch) = (0.0f64, 0.0f64, 0.0f64, 0usize);
    for (&a, &b) in r.iter().zip(&s) {
        let (x, y) = (to_f64(a).unwrap_or(0.0), to_f64(b).unwrap_or(0.0));
        if x.is_nan() || y.is_nan() {
            if x.is_nan() != y.is_nan() {
                nan_mismatch += 1;
            }
            continue;
        }
        if x.is_infinite() || y.is_infinite() {
            if x != y {
                nan_mismatch += 1;
            }
            continue;
        }
        diff2 += (x - y) * (x - y);
        ref2 += y * y;
        max_abs = max_abs.max((x - y).abs());
    }
    let rel = if ref2 > 0.0 {
        (diff2 / ref2).sqrt()
    } else if diff2 == 0.0 {
        0.0
    } else {
        f64::INFINITY
    };
    BufferMatch {
        matches: nan_mismatch == 0 && rel <= tolerance,
        detail: format!(
            "max |Δ| {max_abs:.3e}, rel. L2 {rel:.3e} (tolerance {tolerance:e}){}",
            if nan_mismatch > 0 {
                format!(", {nan_mismatch} NaN/inf mismatches")
            } else {
                String::new()
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elem(name: &str) -> ElemType {
        ElemType::from_msl_name(name).unwrap()
    }

    fn f32s(xs: &[f32]) -> Vec<u8> {
        xs.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn check(e: &str, count: u64, real: &[u8], sim: &[u8], matches: bool, detail: &str) {
        let m = compare_buffer(elem(e), count, real, sim);
        assert_eq!(m.matches, matches, "{}", m.detail);
        assert!(m.detail.contains(detail), "{}", m.detail);
    }

    #[test]
    fn floats_match_within_rounding_only() {
        let a = f32s(&[1.0, 2.0, 3.0]);
        check("float", 3, &a, &a, true, "rel. L2 0.000e0");
        check(
            "float",
            3,
            &f32s(&[1.0, 2.0, 3.000_01]),
            &a,
            true,
            "max |Δ|",
        );
        check("float", 3, &f32s(&[1.0, 2.0, 3.1]), &a, false, "rel. L2");
        check(
            "float",
            3,
            &f32s(&[1.0, f32::NAN, 3.0]),
            &a,
            false,
            "1 NaN/inf",
        );
    }

    #[test]
    fn integers_must_be_equal() {
        let a: Vec<u8> = [1u32, 2, 3].iter().flat_map(|x| x.to_le_bytes()).collect();
        let b: Vec<u8> = [1u32, 5, 3].iter().flat_map(|x| x.to_le_bytes()).collect();
        check("uint", 3, &a, &a, true, "3 values equal");
        check(
            "uint",
            3,
            &b,
            &a,
            false,
            "1 of 3 values differ (first at 1: 5 measured, 2 simulated)",
        );
        check("uint", 4, &a, &a, false, "sizes differ");
    }

    #[test]
    fn padding_of_three_component_vectors_is_ignored() {
        let a = f32s(&[1.0, 2.0, 3.0, 0.0]);
        let b = f32s(&[1.0, 2.0, 3.0, 99.0]);
        check("float3", 1, &a, &b, true, "rel. L2 0.000e0");
    }
}
