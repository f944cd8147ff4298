//! The ELBO together with a function of the predictive at query points, and the gradient of
//! their weighted sum in the parameters and the query inputs (for EULBO, `rcagp.md` §2.11).
//!
//! The predictive `μ(x) = m(x) + k_xu w̃`, `v(x) = k_xx + k_xu P k_ux` has the form of the data
//! marginals, so the adjoints `(μ̄, v̄)` at the query rows enter the ELBO's backward pass as one
//! more block of `(g_μ, g_v)` ([`evaluate_seeded`]); the query inputs' gradient is that of
//! `K̄_uf = w̃ μ̄ᵀ + 2 P K_uf diag(v̄)` through `k(Z, x)`, plus `k(x, x)` and `m(x)`. The
//! parameters are the training loop's, with the variational ones always included.

use faer::MatRef;

use super::elbo::{evaluate_seeded, kuf_adjoint, Need, QuerySeed, Rows};
use super::layout::Layout;
use super::state::Whitened;
use super::Svgp;
use crate::kernels::Covariance;
use crate::means::PriorMean;
use crate::models::checks::{check_matrix, check_training_data};
use crate::models::computation_aware::{Adjoints, JointEvaluation};
use crate::models::ModelError;
use crate::posterior::Marginals;

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
        let predictive = Marginals {
            mean: bm.mu.clone(),
            var: bm.v.clone(),
        };
        let (mean_bar, var_bar) = adjoints(&predictive);
        let q = xq.nrows();
        if mean_bar.len() != q || var_bar.len() != q {
            return Err(ModelError::Invalid(format!(
                "the utility's adjoints need one entry per query point ({q}), got {} and {}",
                mean_bar.len(),
                var_bar.len()
            )));
        }
        let mb: Vec<f64> = mean_bar.iter().map(|g| g / elbo_weight).collect();
        let vb: Vec<f64> = var_bar.iter().map(|g| g / elbo_weight).collect();
        let seed = QuerySeed {
            xq,
            marginals: &bm,
            mean_bar: &mb,
            var_bar: &vb,
        };
        let need = Need::Gradient { z: learn_inducing };
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
        let kuf_bar = kuf_adjoint(w, &bm, &mean_bar, &var_bar);
        let mut inputs = state
            .kernel
            .grad_inputs_cross(xq, state.z.as_ref(), kuf_bar.transpose());
        let (diag, mean_x) = (
            state.kernel.grad_inputs_diag(xq),
            state.mean.grad_inputs(xq),
        );
        for t in 0..q {
            for c in 0..xq.ncols() {
                inputs[(t, c)] += var_bar[t] * diag[(t, c)] + mean_bar[t] * mean_x[(t, c)];
            }
        }
        Ok(JointEvaluation {
            elbo: elbo.value,
            predictive,
            parameters,
            inputs,
        })
    }
}
