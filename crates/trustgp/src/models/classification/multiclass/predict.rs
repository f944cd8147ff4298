//! Predictions of the multi-class Laplace model (R&W Alg. 3.4): the latent means and `C×C`
//! covariances at test points, and the class probabilities by seeded Monte Carlo.

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rayon::prelude::*;

use super::MulticlassLaplace;
use crate::likelihoods::Softmax;
use crate::linalg::{Cholesky, Parallelism};
use crate::models::checks::check_test_inputs;
use crate::models::ModelError;

/// The latent posterior at test points.
#[derive(Clone, Debug, PartialEq)]
pub struct MulticlassLatent {
    /// `μ_c(x_j)`: one row per test point, one column per class.
    pub mean: Mat<f64>,
    /// `Σ(x_j)` (C×C), one per test point.
    pub cov: Vec<Mat<f64>>,
}

impl MulticlassLaplace {
    /// The latent means and covariances at the rows of `xs`:
    /// `μ_c = k_c(x, X) t_c`, `Σ_cc' = δ_cc' k_c(x, x) − k_c(x, X) S_cc' k_c'(X, x)`.
    ///
    /// # Errors
    /// `xs` with the wrong number of columns or non-finite entries.
    pub fn predict_latent(&self, xs: MatRef<'_, f64>) -> Result<MulticlassLatent, ModelError> {
        check_test_inputs(xs, self.x.ncols())?;
        let (n, m, classes) = (self.y.len(), xs.nrows(), self.classes);
        let kstar: Vec<Mat<f64>> = (0..classes)
            .map(|c| self.kernels.kernel(c).cross(self.x.as_ref(), xs))
            .collect();
        let kss: Vec<Vec<f64>> = (0..classes)
            .map(|c| self.kernels.kernel(c).diag(xs))
            .collect();
        let mean = Mat::from_fn(m, classes, |j, c| {
            (0..n).map(|i| kstar[c][(i, j)] * self.t[c * n + i]).sum()
        });
        let mut cov = vec![Mat::<f64>::zeros(classes, classes); m];
        for c in 0..classes {
            for d in 0..classes {
                let sk = self.s.as_ref().submatrix(c * n, d * n, n, n) * &kstar[d];
                for (j, cj) in cov.iter_mut().enumerate() {
                    let q: f64 = (0..n).map(|i| kstar[c][(i, j)] * sk[(i, j)]).sum();
                    cj[(c, d)] = if c == d { kss[c][j] } else { 0.0 } - q;
                }
            }
        }
        // Symmetrise: the two triangles are the same numbers summed in different orders.
        for cj in &mut cov {
            for c in 0..classes {
                for d in 0..c {
                    let v = 0.5 * (cj[(c, d)] + cj[(d, c)]);
                    cj[(c, d)] = v;
                    cj[(d, c)] = v;
                }
            }
        }
        Ok(MulticlassLatent { mean, cov })
    }

    /// The predictive class probabilities `∫ softmax(f) N(f; μ(x), Σ(x)) df` at the rows of
    /// `xs` (one row per test point, one column per class), by Monte Carlo with `samples`
    /// draws (in antithetic pairs `μ ± L z`, so rounded up to even) seeded by `seed`. Every
    /// test row uses the same standard-normal draws `z` (common random numbers), so a row's
    /// numbers depend only on its own input: not on the thread count, on the order of the
    /// rows or on which other rows are predicted (scikit-learn's invariance checks), and the
    /// probabilities vary smoothly with the input. Rows sum to one.
    ///
    /// # Errors
    /// As for [`MulticlassLaplace::predict_latent`], `samples == 0`, or a covariance that
    /// cannot be factorised even with jitter.
    pub fn predict_proba(
        &self,
        xs: MatRef<'_, f64>,
        samples: usize,
        seed: u64,
    ) -> Result<Mat<f64>, ModelError> {
        if samples == 0 {
            return Err(ModelError::Invalid(
                "predict_proba: the number of Monte Carlo samples must be at least 1".into(),
            ));
        }
        let latent = self.predict_latent(xs)?;
        let classes = self.classes;
        let softmax = Softmax::new(classes).map_err(|e| ModelError::Invalid(e.0))?;
        let pairs = samples.div_ceil(2);
        let mut rng = StdRng::seed_from_u64(seed);
        let draws: Vec<f64> = (0..pairs * classes)
            .map(|_| rng.sample(StandardNormal))
            .collect();
        let rows: Vec<Vec<f64>> = (0..xs.nrows())
            .into_par_iter()
            .map(|j| -> Result<Vec<f64>, ModelError> {
                let chol = Cholesky::factor(
                    &latent.cov[j],
                    &format!("latent covariance of test row {j}"),
                    Parallelism::Sequential,
                )?;
                let l = chol.l();
                let mu: Vec<f64> = (0..classes).map(|c| latent.mean[(j, c)]).collect();
                let mut acc = vec![0.0; classes];
                let (mut plus, mut minus) = (vec![0.0; classes], vec![0.0; classes]);
                for z in draws.chunks_exact(classes) {
                    for c in 0..classes {
                        let lz: f64 = (0..=c).map(|k| l[(c, k)] * z[k]).sum();
                        plus[c] = mu[c] + lz;
                        minus[c] = mu[c] - lz;
                    }
                    for (a, (p, q)) in acc.iter_mut().zip(
                        softmax
                            .probabilities(&plus)
                            .into_iter()
                            .zip(softmax.probabilities(&minus)),
                    ) {
                        *a += p + q;
                    }
                }
                let total = (2 * pairs) as f64;
                Ok(acc.into_iter().map(|a| a / total).collect())
            })
            .collect::<Result<_, _>>()?;
        Ok(Mat::from_fn(xs.nrows(), classes, |j, c| rows[j][c]))
    }
}
