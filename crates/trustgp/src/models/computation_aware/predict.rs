//! Algorithm P (spec §3.4): the latent predictive of a fitted [`CaGp`].
//!
//! ```text
//! mean(X*) = m0 + k(X*, X) ṽ,         ṽ = S a,
//! cov(X*)  = k(X*, X*) − VᵀV,         V = L⁻¹ Sᵀ k(X, X*),
//! ```
//!
//! with `L` the Cholesky factor of `G = SᵀK̃S`. `Sᵀ k(X, X*)` is built chunk by chunk of
//! training rows, and
//! marginals are computed for chunks of test rows, so memory is `O(n·chunk)`.

use faer::{Mat, MatRef};

use super::elbo::{add_product, on_chunk};
use super::CaGp;
use crate::posterior::Marginals;

/// Test rows per chunk of the marginal prediction.
const CHUNK: usize = 512;

/// Floor of a predictive variance: round-off can push it slightly below zero (spec §6.6).
const VAR_FLOOR: f64 = 1e-10;

impl CaGp {
    /// `V = L⁻¹ Sᵀ k(X, X*)` (i×m) and the latent mean at the rows of `xs`.
    fn project_test(&self, xs: MatRef<'_, f64>) -> (Mat<f64>, Vec<f64>) {
        let mut v = Mat::<f64>::zeros(self.s.ncols(), xs.nrows());
        let mut mean = vec![self.state.mean; xs.nrows()];
        for ch in self.state.actions.chunks(self.x.nrows()) {
            let kr = self
                .state
                .kernel
                .cross(self.x.subrows(ch.rows.start, ch.rows.len()), xs);
            add_product(
                v.as_mut().subrows_mut(ch.cols.start, ch.cols.len()),
                on_chunk(&self.s, &ch).transpose(),
                kr.as_ref(),
            );
            let vt = &self.v[ch.rows.clone()];
            for (t, m) in mean.iter_mut().enumerate() {
                *m += (0..vt.len()).map(|l| vt[l] * kr[(l, t)]).sum::<f64>();
            }
        }
        self.chol.solve_lower_in_place(v.as_mut());
        (v, mean)
    }

    /// Latent predictive means and variances at the rows of `xs` (add `noise()` for the
    /// variance of an observation). Never forms a test×test matrix.
    ///
    /// # Panics
    /// If `xs` has a different number of columns than the training inputs.
    pub fn predict(&self, xs: MatRef<'_, f64>) -> Marginals {
        let mut out = Marginals {
            mean: Vec::with_capacity(xs.nrows()),
            var: Vec::with_capacity(xs.nrows()),
        };
        for s in (0..xs.nrows()).step_by(CHUNK) {
            let chunk = xs.subrows(s, CHUNK.min(xs.nrows() - s));
            let (v, mean) = self.project_test(chunk);
            let prior = self.state.kernel.diag(chunk);
            out.mean.extend(mean);
            out.var.extend((0..chunk.nrows()).map(|t| {
                let q: f64 = (0..v.nrows()).map(|b| v[(b, t)] * v[(b, t)]).sum();
                (prior[t] - q).max(VAR_FLOOR)
            }));
        }
        out
    }

    /// Latent predictive mean and full covariance at the rows of `xs` (an m×m matrix, not
    /// clamped: add jitter before factorising it).
    ///
    /// # Panics
    /// As for [`CaGp::predict`].
    pub fn predict_joint(&self, xs: MatRef<'_, f64>) -> (Vec<f64>, Mat<f64>) {
        let (v, mean) = self.project_test(xs);
        let mut cov = self.state.kernel.matrix(xs);
        cov -= v.transpose() * &v;
        (mean, cov)
    }
}
