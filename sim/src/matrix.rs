//! SIMD-group 8x8 matrices: the multiply-accumulate of `matrix_mac`.
//!
//! A matrix is spread over the 32 lanes of a SIMD-group, two elements per lane, as
//! [`matrix_element`] lays them out. `D = A x B + C` computes each element as a chain of
//! fused multiply-adds in ascending `k`, each rounded to the element type:
//! `d = c[i][j]; for k in 0..8 { d = fma(a[i][k], b[k][j], d) }`. Apple does not document
//! the order its hardware uses; this one is what a straightforward FMA loop gives, and it
//! makes the result reproducible.

use metalsim_isa::matrix_element;

use crate::alu::{self, FloatTy};

/// An 8x8 matrix of canonical float bits, `[row][column]`.
type Matrix = [[u32; 8]; 8];

/// The matrix held by a SIMD-group as each lane's two elements.
fn gather(elements: [&[u32; 32]; 2]) -> Matrix {
    let mut m = [[0; 8]; 8];
    for lane in 0..32 {
        for (k, e) in elements.iter().enumerate() {
            let (r, c) = matrix_element(lane, k as u32);
            m[r as usize][c as usize] = e[lane as usize];
        }
    }
    m
}

/// `A x B + C` of matrices of type `ft` held as each lane's two elements; the result the
/// same way (`[element 0, element 1]`, each by lane). Reads every lane.
pub(crate) fn multiply_accumulate(
    ft: FloatTy,
    a: [&[u32; 32]; 2],
    b: [&[u32; 32]; 2],
    c: [&[u32; 32]; 2],
) -> [[u32; 32]; 2] {
    let (a, b, c) = (gather(a), gather(b), gather(c));
    let mut d = [[0u32; 32]; 2];
    for lane in 0..32u32 {
        for (k, out) in d.iter_mut().enumerate() {
            let (i, j) = matrix_element(lane, k as u32);
            let (i, j) = (i as usize, j as usize);
            let mut acc = c[i][j];
            for (&x, row) in a[i].iter().zip(&b) {
                acc = alu::float_fma(ft, x, row[j], acc);
            }
            out[lane as usize] = acc;
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lane-held elements of the matrix `f(row, column)`.
    fn held(f: impl Fn(u32, u32) -> f32) -> [[u32; 32]; 2] {
        std::array::from_fn(|k| {
            std::array::from_fn(|lane| {
                let (r, c) = matrix_element(lane as u32, k as u32);
                f(r, c).to_bits()
            })
        })
    }

    fn check(
        a: impl Fn(u32, u32) -> f32,
        b: impl Fn(u32, u32) -> f32,
        c: impl Fn(u32, u32) -> f32,
    ) {
        let (ha, hb, hc) = (held(&a), held(&b), held(&c));
        let d = multiply_accumulate(
            FloatTy::F32,
            [&ha[0], &ha[1]],
            [&hb[0], &hb[1]],
            [&hc[0], &hc[1]],
        );
        for lane in 0..32 {
            for k in 0..2 {
                let (i, j) = matrix_element(lane, k);
                let mut want = c(i, j);
                for m in 0..8 {
                    want = a(i, m).mul_add(b(m, j), want);
                }
                assert_eq!(
                    f32::from_bits(d[k as usize][lane as usize]),
                    want,
                    "({i}, {j})"
                );
            }
        }
    }

    #[test]
    fn multiplies_in_row_column_order() {
        check(
            |r, c| (r * 8 + c) as f32 * 0.37 - 3.0,
            |r, c| 1.0 / (r as f32 + 2.0 * c as f32 + 1.0),
            |r, c| (r as f32 - c as f32) * 1e-3,
        );
    }

    #[test]
    fn identity_times_b_is_b_plus_c() {
        check(
            |r, c| if r == c { 1.0 } else { 0.0 },
            |r, c| (r * 10 + c) as f32,
            |_, _| 0.5,
        );
    }
}
