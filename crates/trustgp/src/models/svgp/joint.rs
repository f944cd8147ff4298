//! The ELBO together with a function of the predictive at query points, and the gradient of
//! their weighted sum in the parameters and the query inputs (for EULBO, `rcagp.md` §2.11).
//!
//! The joint predictive `μ(X) = m(X) + K_xu w̃`, `Σ(X) = K_xx + K_xu P K_ux` has the form of the
//! data marginals, so the adjoints `(μ̄, Σ̄)` at the query rows enter the ELBO's backward pass
//! as one more block of `(g_μ, Σ̄)` ([`evaluate_seeded`]; `Σ̄` dense for a batch, diagonal for
//! a function of the marginals); the query inputs' gradient is that of
//! `K̄_uf = w̃ μ̄ᵀ + 2 P K_uf Σ̄` through `k(Z, x)`, plus `K̄_xx = Σ̄` through `k(x_t, x_u)` and
//! `m̄ = μ̄` through `m(x)`. The parameters are the training loop's, with the variational ones
//! always included.

use faer::{Mat, MatRef};

use super::elbo::{evaluate_seeded, kuf_adjoint, CovBar, Need, QuerySeed, Rows};
use super::layout::Layout;
use super::state::Whitened;
use super::Svgp;
use crate::means::PriorMean;
use crate::models::checks::{check_matrix, check_training_data};
use crate::models::computation_aware::{
    checked_adjoints, marginal_adjoints, Adjoints, JointAdjoints, JointEvaluation,
};
use crate::models::ModelError;
use crate::posterior::{JointGaussian, Marginals};

impl Svgp {
    /// The layout of the flat vector: variational parameters always, `Z` if `learn_inducing`.
    fn joint_layout(&self, learn_inducing: bool) -> Layout {
        Layout::new(&self.state, true, learn_inducing)
    }

    /// The parameters as one vector: `[m̃, the lower triangle of L̃ column by column (its
    /// diagonal as logarithms), log θ_kernel…, the likelihood's unconstrained parameters, the
    /// mean's parameters, Z row by row (if learn_inducing)]`.
    ///
    /// # Errors
    /// Likelihood parameters out of their domain.
    pub fn parameters(&self, learn_inducing: bool) -> Result<Vec<f64>, ModelError> {
        self.joint_layout(learn_inducing).pack(&self.state)
    }

    /// Box constraints of [`Svgp::parameters`]: the kernel's and the likelihood's bounds (the
    /// likelihood's parameters fixed at their values unless `learn_noise`), the mean's
    /// parameters free (fixed unless `learn_mean`), the rest free.
    ///
    /// # Errors
    /// As for [`Svgp::parameters`].
    pub fn parameter_bounds(
        &self,
        learn_mean: bool,
        learn_noise: bool,
        learn_inducing: bool,
    ) -> Result<Vec<(f64, f64)>, ModelError> {
        let layout = self.joint_layout(learn_inducing);
        let (mut bounds, v) = (layout.bounds(&self.state), layout.pack(&self.state)?);
        let m = self.state.m();
        let lik_start = m + m * (m + 1) / 2 + self.state.kernel.n_params();
        let mean_start = lik_start + self.state.likelihood.n_params();
        let mean_end = mean_start + self.state.mean.n_params();
        let fix = |b: &mut Vec<(f64, f64)>, range: std::ops::Range<usize>| {
            for k in range {
                b[k] = (v[k], v[k]);
            }
        };
        if !learn_noise {
            fix(&mut bounds, lik_start..mean_start);
        }
        if !learn_mean {
            fix(&mut bounds, mean_start..mean_end);
        }
        Ok(bounds)
    }

    /// This model at parameter vector `v` of [`Svgp::parameters`].
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for a vector of the wrong length or with non-finite entries;
    /// parameters the kernel or the likelihood rejects; a failed factorisation of `K_uu`.
    pub fn with_parameters(&self, v: &[f64], learn_inducing: bool) -> Result<Svgp, ModelError> {
        let want = self.parameters(learn_inducing)?.len();
        if v.len() != want {
            return Err(ModelError::Invalid(format!(
                "SVGP parameter vector must have {want} entries, got {}",
                v.len()
            )));
        }
        if let Some(k) = v.iter().position(|p| !p.is_finite()) {
            return Err(ModelError::Invalid(format!(
                "SVGP parameter {k} is not finite: {}",
                v[k]
            )));
        }
        let state = self.joint_layout(learn_inducing).unpack(&self.state, v)?;
        state.validate()?;
        Ok(Svgp {
            whitened: Whitened::new(&state)?,
            state,
            report: None,
        })
    }

    /// The full-data ELBO on `(x, y)` at parameter vector `v` of [`Svgp::parameters`] and the
    /// latent predictive at the rows of `xq`; `adjoints` maps that predictive to `(μ̄, v̄)`, the
    /// derivatives of a function `U` of it. Returns the gradient of `elbo_weight · ELBO + U`
    /// in `v` and of `U` in the rows of `xq`.
    ///
    /// # Errors
    /// As for [`Svgp::with_parameters`]; [`ModelError::Invalid`] for bad data, query rows of
    /// the wrong width or with non-finite entries, or an ELBO weight that is not positive.
    #[allow(clippy::too_many_arguments)]
    pub fn joint_evaluation(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        v: &[f64],
        learn_inducing: bool,
        elbo_weight: f64,
        xq: MatRef<'_, f64>,
        adjoints: Adjoints<'_>,
    ) -> Result<JointEvaluation, ModelError> {
        let mut joint = marginal_adjoints(adjoints);
        self.joint_evaluation_batch(x, y, v, learn_inducing, elbo_weight, xq, &mut joint)
    }

    /// [`Svgp::joint_evaluation`] for a function `U` of the **joint** predictive
    /// `N(m(X) + K_xu w̃, K_xx + K_xu P K_ux)` at the rows of `xq` (a batch): `adjoints` maps it
    /// to `(μ̄, Σ̄)`.
    ///
    /// # Errors
    /// As for [`Svgp::joint_evaluation`]; adjoints of the wrong shape.
    #[allow(clippy::too_many_arguments)]
    pub fn joint_evaluation_batch(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        v: &[f64],
        learn_inducing: bool,
        elbo_weight: f64,
        xq: MatRef<'_, f64>,
        adjoints: JointAdjoints<'_>,
    ) -> Result<JointEvaluation, ModelError> {
        if !(elbo_weight > 0.0 && elbo_weight.is_finite()) {
            return Err(ModelError::Invalid(format!(
                "the ELBO weight must be positive and finite, got {elbo_weight}"
            )));
        }
        check_training_data(x, y)?;
        check_matrix("training input", x, self.input_dim())?;
        check_matrix("query point", xq, self.input_dim())?;
        let at = self.with_parameters(v, learn_inducing)?;
        let (state, w) = (&at.state, &at.whitened);
        let bm = w.marginals(state, xq);
        let q = xq.nrows();
        // K_xx + K_xu P K_ux, symmetrised against rounding in the dense product.
        let (kxx, kpk) = (state.kernel.cross(xq, xq), bm.kuf.transpose() * &bm.pk);
        let joint = JointGaussian {
            mean: bm.mu.clone(),
            cov: Mat::from_fn(q, q, |r, c| kxx[(r, c)] + 0.5 * (kpk[(r, c)] + kpk[(c, r)])),
        };
        let (mean_bar, cov_bar) = checked_adjoints(q, adjoints(&joint))?;
        let mb: Vec<f64> = mean_bar.iter().map(|g| g / elbo_weight).collect();
        let cb = &cov_bar * (1.0 / elbo_weight);
        let seed = QuerySeed {
            xq,
            marginals: &bm,
            mean_bar: &mb,
            cov_bar: CovBar::Full(cb.as_ref()),
        };
        let need = Need::Gradient {
            z: learn_inducing,
            variational: true,
        };
        let elbo = evaluate_seeded(state, w, x, y, Rows::All, need, Some(seed))?;
        let grad = elbo
            .grad
            .as_ref()
            .ok_or_else(|| ModelError::Invalid("the SVGP gradient was not computed".into()))?;
        let parameters = self
            .joint_layout(learn_inducing)
            .pack_grad(state, grad)
            .into_iter()
            .map(|g| g * elbo_weight)
            .collect();
        // The query rows' gradient of the unweighted function: through k(Z, x_t), k(x_t, x_u)
        // and m(x_t).
        let cov_bar = CovBar::Full(cov_bar.as_ref());
        let kuf_bar = kuf_adjoint(w, &bm, &mean_bar, &cov_bar.right_multiply(bm.pk.as_ref()));
        let mut inputs = state
            .kernel
            .grad_inputs_cross(xq, state.z.as_ref(), kuf_bar.transpose())
            + cov_bar.input_gradient(&state.kernel, xq);
        let mean_x = state.mean.grad_inputs(xq);
        for t in 0..q {
            for c in 0..xq.ncols() {
                inputs[(t, c)] += mean_bar[t] * mean_x[(t, c)];
            }
        }
        let predictive = Marginals {
            var: (0..q).map(|t| joint.cov[(t, t)]).collect(),
            mean: joint.mean,
        };
        Ok(JointEvaluation {
            elbo: elbo.value,
            predictive,
            parameters,
            inputs,
        })
    }
}
