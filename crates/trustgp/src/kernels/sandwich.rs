//! The adjoint matrix of objectives built from an inverse covariance's diagonal and its
//! products with vectors, such as the weighted LOO-CV of the robust GPs:
//!
//! ```text
//! W = −P diag(e) P − ½(a bᵀ + b aᵀ),        P = (c K + diag(d))⁻¹.
//! ```
//!
//! Such an objective's gradient is `Σ_ab W_ab ∂K_ab/∂θ`. Forming `W` costs a dense `n³`
//! product; [`LooCovariance::grad_contract_sandwich`](crate::models::robust::LooCovariance::grad_contract_sandwich)
//! lets a covariance with structure contract it without forming it (see
//! [`MultiOutputKernel`](super::MultiOutputKernel): `T` times fewer flops for an ICM on
//! outputs observed at the same inputs).

use faer::linalg::matmul::triangular::{matmul, BlockStructure};
use faer::{Accum, Mat, MatRef};

use crate::linalg::{sum_pairs, Parallelism};

/// `W = −P diag(e) P − ½(a bᵀ + b aᵀ)` with `P = (c K + diag(d))⁻¹` (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct InverseSandwich<'a> {
    /// `P`, in full (both triangles).
    pub p: MatRef<'a, f64>,
    /// The scale `c` of the covariance inside `P`.
    pub scale: f64,
    /// The diagonal `d` added to `c K`.
    pub d: &'a [f64],
    /// The diagonal `e` between the two factors of `P`.
    pub e: &'a [f64],
    /// First vector of the symmetric rank-two term.
    pub a: &'a [f64],
    /// Second vector of the symmetric rank-two term.
    pub b: &'a [f64],
}

impl InverseSandwich<'_> {
    /// The lower triangle and diagonal of `W` (strict upper triangle zero): one triangular
    /// `n³` product.
    pub fn lower(&self, par: Parallelism) -> Mat<f64> {
        let n = self.p.nrows();
        let mut ep = self.p.to_owned();
        for j in 0..n {
            (ep.col_as_slice_mut(j).iter_mut().zip(self.e)).for_each(|(v, ei)| *v *= ei);
        }
        let mut w = Mat::<f64>::zeros(n, n);
        matmul(
            w.as_mut(),
            BlockStructure::TriangularLower,
            Accum::Replace,
            self.p,
            BlockStructure::Rectangular,
            ep.as_ref(),
            BlockStructure::Rectangular,
            -1.0,
            par.faer(),
        );
        for j in 0..n {
            let (aj, bj) = (self.a[j], self.b[j]);
            let col = &mut w.col_as_slice_mut(j)[j..];
            for ((v, ai), bi) in col.iter_mut().zip(&self.a[j..]).zip(&self.b[j..]) {
                *v -= 0.5 * (ai * bj + bi * aj);
            }
        }
        w
    }

    /// The diagonal of `W`, in `O(n²)`: `W_jj = −Σ_i P_ij² e_i − a_j b_j`.
    pub fn diag(&self) -> Vec<f64> {
        (0..self.p.ncols())
            .map(|j| {
                let col = self.p.col(j).try_as_col_major().map(|c| c.as_slice());
                let quad = match col {
                    Some(c) => sum_pairs(c, self.e, |p, e| p * p * e),
                    None => (0..self.p.nrows())
                        .map(|i| self.p[(i, j)] * self.p[(i, j)] * self.e[i])
                        .sum(),
                };
                -quad - self.a[j] * self.b[j]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_triangle_and_diagonal_match_the_dense_formula() {
        let n = 9;
        let p = Mat::from_fn(n, n, |i, j| {
            1.0 / (1.0 + (i as f64 - j as f64).abs()) + if i == j { 2.0 } else { 0.0 }
        });
        let e: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
        let a: Vec<f64> = (0..n).map(|i| (i as f64 * 1.3).cos()).collect();
        let b: Vec<f64> = (0..n).map(|i| 0.5 - i as f64 / 9.0).collect();
        let d = vec![0.1; n];
        let s = InverseSandwich {
            p: p.as_ref(),
            scale: 1.0,
            d: &d,
            e: &e,
            a: &a,
            b: &b,
        };
        let w = s.lower(Parallelism::Sequential);
        let diag = s.diag();
        for i in 0..n {
            for j in 0..n {
                let brute: f64 = (0..n).map(|k| p[(i, k)] * e[k] * p[(k, j)]).sum::<f64>()
                    + 0.5 * (a[i] * b[j] + b[i] * a[j]);
                let want = if i >= j { -brute } else { 0.0 };
                assert!((w[(i, j)] - want).abs() < 1e-13, "({i},{j})");
                if i == j {
                    assert!((diag[i] + brute).abs() < 1e-13);
                }
            }
        }
    }
}
