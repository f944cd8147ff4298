//! Centring each observation on the conditional mean of its output given the other outputs
//! observed at the same input (the `w_MORCGP` weight of the multi-output robust GP).
//!
//! ```text
//! γ_{i,t} = m_t(x_i) + C[t, S] (C[S, S] + 10⁻³ I)⁻¹ (y_{i,S} − m_S(x_i)),    S = {s ≠ t observed at i}
//! ```
//!
//! where `C` is the covariance of one row of outputs (`B + Σ` for ICM, or a robust estimate of
//! it). A row with no other observed output falls back to the prior mean (the RCGP centre).
//! The small ridge keeps the solve stable when `C` is nearly singular, as in the reference
//! implementation.

use std::collections::HashMap;

use faer::{Mat, MatRef};

use crate::linalg::{Cholesky, LinalgError, Parallelism};

/// The ridge added to `C[S, S]` before solving.
const RIDGE: f64 = 1e-3;

/// Centres `γ` (N×T) of the observed entries of `y` (N×T, NaN = missing) given the prior means
/// `m` (N×T) and the row covariance `c` (T×T); unobserved entries get NaN.
pub fn conditional_centres(
    y: MatRef<'_, f64>,
    m: MatRef<'_, f64>,
    c: MatRef<'_, f64>,
) -> Result<Mat<f64>, LinalgError> {
    let (n, t) = (y.nrows(), y.ncols());
    let mut out = Mat::from_fn(n, t, |_, _| f64::NAN);
    // Regression coefficients per (missingness pattern, output): few distinct patterns in
    // practice, so each small solve is done once.
    let mut cache: HashMap<(Vec<bool>, usize), Vec<f64>> = HashMap::new();
    for i in 0..n {
        let observed: Vec<bool> = (0..t).map(|s| y[(i, s)].is_finite()).collect();
        for tt in 0..t {
            if !observed[tt] {
                continue;
            }
            let others: Vec<usize> = (0..t).filter(|&s| s != tt && observed[s]).collect();
            if others.is_empty() {
                out[(i, tt)] = m[(i, tt)];
                continue;
            }
            let key = (observed.clone(), tt);
            let coef = match cache.get(&key) {
                Some(coef) => coef.clone(),
                None => {
                    let coef = coefficients(c, &others, tt)?;
                    cache.insert(key, coef.clone());
                    coef
                }
            };
            out[(i, tt)] = m[(i, tt)]
                + others
                    .iter()
                    .zip(&coef)
                    .map(|(&s, b)| b * (y[(i, s)] - m[(i, s)]))
                    .sum::<f64>();
        }
    }
    Ok(out)
}

/// `(C[S, S] + ridge I)⁻¹ C[S, t]`.
fn coefficients(c: MatRef<'_, f64>, others: &[usize], t: usize) -> Result<Vec<f64>, LinalgError> {
    let k = others.len();
    let css = Mat::from_fn(k, k, |a, b| {
        c[(others[a], others[b])] + if a == b { RIDGE } else { 0.0 }
    });
    let chol = Cholesky::factor(&css, "output covariance C[S, S]", Parallelism::Sequential)?;
    let cst: Vec<f64> = others.iter().map(|&s| c[(s, t)]).collect();
    Ok(chol.solve_vec(&cst))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_gaussian_conditional_mean_and_handles_missing_entries() {
        let c = Mat::from_fn(3, 3, |i, j| {
            [[1.0, 0.9, 0.7], [0.9, 1.0, 0.8], [0.7, 0.8, 1.0]][i][j]
        });
        let y = Mat::from_fn(3, 3, |i, j| {
            [
                [0.5, -0.2, 1.0],
                [f64::NAN, 0.4, -0.3],
                [2.0, f64::NAN, f64::NAN],
            ][i][j]
        });
        let m = Mat::from_fn(3, 3, |_, j| [0.1, 0.0, -0.1][j]);
        let g = conditional_centres(y.as_ref(), m.as_ref(), c.as_ref()).unwrap();
        // Row 0, output 0 given outputs 1 and 2: solve the 2×2 system by hand.
        let (a, b, d) = (1.0 + RIDGE, 0.8, 1.0 + RIDGE);
        let det = a * d - b * b;
        let (r1, r2) = (-0.2 - 0.0, 1.0 + 0.1);
        let (c1, c2) = (0.9, 0.7);
        let coef1 = (d * c1 - b * c2) / det;
        let coef2 = (a * c2 - b * c1) / det;
        assert!((g[(0, 0)] - (0.1 + coef1 * r1 + coef2 * r2)).abs() < 1e-14);
        // Row 1, output 1 given only output 2 (output 0 missing).
        let expected = 0.0 + 0.8 / (1.0 + RIDGE) * (-0.3 + 0.1);
        assert!((g[(1, 1)] - expected).abs() < 1e-14);
        assert!(g[(1, 0)].is_nan());
        // Row 2 has a single observed output: the prior mean.
        assert_eq!(g[(2, 0)], 0.1);
        assert!(g[(2, 1)].is_nan() && g[(2, 2)].is_nan());
    }

    #[test]
    fn a_single_output_is_centred_on_its_prior_mean() {
        let c = Mat::from_fn(1, 1, |_, _| 2.0);
        let y = Mat::from_fn(4, 1, |i, _| i as f64);
        let m = Mat::from_fn(4, 1, |_, _| 0.5);
        let g = conditional_centres(y.as_ref(), m.as_ref(), c.as_ref()).unwrap();
        assert!((0..4).all(|i| g[(i, 0)] == 0.5));
    }
}
