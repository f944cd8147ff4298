//! The ELBO together with a function of the predictive at query points, and the gradient of
//! their weighted sum in the model's parameters and in the query inputs: what joint model and
//! query optimisation (EULBO, `rcagp.md` §2.11) needs.
//!
//! At a query point `x` with `k_x = k(X, x)` and `s_x = Sᵀk_x`, the predictive of Algorithm P is
//!
//! ```text
//! μ(x) = m0 + s_xᵀ a,        v(x) = k(x, x) − s_xᵀ G⁻¹ s_x,
//! ```
//!
//! so adjoints `μ̄`, `v̄` reach the ELBO's own intermediate quantities as
//!
//! ```text
//! ā += μ̄ s_x,    Ḡ += v̄ G⁻¹s_x s_xᵀG⁻¹,    s̄_x = μ̄ a − 2v̄ G⁻¹s_x,    m̄0 += μ̄,
//! S̄ += k_x s̄_xᵀ,    k̄_x = S s̄_x,    k̄(x, x) = v̄,
//! ```
//!
//! and the ELBO's backward pass ([`gradient_seeded`]) carries them on through `a = G⁻¹Sᵀr`,
//! `G = SᵀK̃S` and, for inducing-point actions, `S = k(X, Z)`. The query inputs' gradient is
//! that of `k_x` and `k(x, x)`.
//!
//! A function of the **joint** predictive of a batch (EULBO with `q > 1`) has a covariance
//! adjoint `Σ̄` (q×q, symmetrised) in place of `diag(v̄)`: with `Σ_tu = k(x_t, x_u) −
//! s_tᵀG⁻¹s_u`, `s̄_t = μ̄_t a − 2 Σ_u Σ̄_tu G⁻¹s_u`, `Ḡ += G⁻¹ S_x Σ̄ S_xᵀ G⁻¹` and
//! `k̄(x_t, x_u) = Σ̄_tu`; the marginal form is the case of a diagonal `Σ̄`, and
//! [`CaGp::joint_evaluation`] is computed through [`CaGp::joint_evaluation_batch`].

use faer::{Mat, MatRef};

use super::elbo::{forward, gradient_seeded, State};
use super::fit::Layout;
use super::CaGp;
use crate::models::ModelError;
use crate::posterior::{JointGaussian, Marginals};

/// `(μ̄, v̄)` from the predictive at the query points: the derivatives of a function of that
/// predictive in each query point's mean and variance.
pub type Adjoints<'a> = &'a mut dyn FnMut(&Marginals) -> (Vec<f64>, Vec<f64>);

/// `(μ̄, Σ̄)` from the joint predictive at the query points: the derivatives of a function of
/// it in each mean and in each entry of the covariance (q×q; only its symmetric part counts).
pub type JointAdjoints<'a> = &'a mut dyn FnMut(&JointGaussian) -> (Vec<f64>, Mat<f64>);

/// [`JointAdjoints`] from marginal [`Adjoints`]: the function sees the diagonal of the joint
/// predictive, and its covariance adjoint is `diag(v̄)`.
pub(crate) fn marginal_adjoints<'a>(
    adjoints: Adjoints<'a>,
) -> impl FnMut(&JointGaussian) -> (Vec<f64>, Mat<f64>) + 'a {
    move |joint: &JointGaussian| {
        let q = joint.mean.len();
        let marginals = Marginals {
            mean: joint.mean.clone(),
            var: (0..q).map(|t| joint.cov[(t, t)]).collect(),
        };
        let (mean_bar, var_bar) = adjoints(&marginals);
        let cov_bar = Mat::from_fn(var_bar.len(), var_bar.len(), |r, c| {
            if r == c {
                var_bar[r]
            } else {
                0.0
            }
        });
        (mean_bar, cov_bar)
    }
}

/// Checks the adjoints' shapes against `q` query points and returns `(μ̄, Σ̄)` with `Σ̄`
/// symmetrised.
///
/// # Errors
/// [`ModelError::Invalid`] for adjoints of the wrong shape.
pub(crate) fn checked_adjoints(
    q: usize,
    (mean_bar, cov_bar): (Vec<f64>, Mat<f64>),
) -> Result<(Vec<f64>, Mat<f64>), ModelError> {
    if mean_bar.len() != q || cov_bar.nrows() != q || cov_bar.ncols() != q {
        return Err(ModelError::Invalid(format!(
            "the utility's adjoints need one mean entry per query point ({q}) and a {q}×{q} \
             covariance adjoint, got {} and {}×{}",
            mean_bar.len(),
            cov_bar.nrows(),
            cov_bar.ncols()
        )));
    }
    let sym = Mat::from_fn(q, q, |r, c| 0.5 * (cov_bar[(r, c)] + cov_bar[(c, r)]));
    Ok((mean_bar, sym))
}

/// Adjoints that a function of the predictive at query points adds to the ELBO's backward
/// pass.
#[derive(Clone, Debug)]
pub(crate) struct Seed {
    /// `ā` (i).
    pub a_bar: Vec<f64>,
    /// `Ḡ` (i×i).
    pub g_bar: Mat<f64>,
    /// `S̄` (n×i, dense; only the entries `S` has are read).
    pub s_bar: Mat<f64>,
    /// With respect to the kernel's log-hyperparameters, through `k_x` and `k(x, x)`.
    pub kernel: Vec<f64>,
    /// With respect to `m0`.
    pub mean: f64,
}

/// The ELBO, the predictive at the query points and the gradient of
/// `elbo_weight · ELBO + Σ_t (μ̄_t μ(x_t) + v̄_t v(x_t))`.
#[derive(Clone, Debug)]
pub struct JointEvaluation {
    /// The ELBO at the parameters.
    pub elbo: f64,
    /// Latent predictive means and (unclamped) variances at the query rows.
    pub predictive: Marginals,
    /// The gradient in the parameter vector of [`CaGp::parameters`].
    pub parameters: Vec<f64>,
    /// The gradient of `Σ_t (μ̄_t μ(x_t) + v̄_t v(x_t))` in the query rows (q×d).
    pub inputs: Mat<f64>,
}

impl CaGp {
    /// The layout of the flat parameter vector.
    fn layout(&self, learn_mean: bool, learn_noise: bool) -> Layout {
        Layout {
            n_kernel: self.state.kernel.n_params(),
            learn_mean,
            learn_noise,
        }
    }

    /// The trainable parameters as one vector, as [`CaGp::fit`] lays them out:
    /// `[log θ_kernel…, log σ², m0 (if learn_mean), Θ (block actions; the inducing inputs
    /// are fixed)]`.
    pub fn parameters(&self, learn_mean: bool) -> Vec<f64> {
        self.layout(learn_mean, true).to_vec(&self.state)
    }

    /// Box constraints of [`CaGp::parameters`]: the kernel's own bounds, `σ² ≥ 10⁻⁴` (or fixed
    /// at its value unless `learn_noise`), the rest free.
    pub fn parameter_bounds(&self, learn_mean: bool, learn_noise: bool) -> Vec<(f64, f64)> {
        self.layout(learn_mean, learn_noise).bounds(&self.state)
    }

    /// The state at parameter vector `v` (checked for length and finiteness).
    fn state_at(&self, v: &[f64], learn_mean: bool) -> Result<State, ModelError> {
        let want = self.parameters(learn_mean).len();
        if v.len() != want {
            return Err(ModelError::Invalid(format!(
                "CaGP parameter vector must have {want} entries, got {}",
                v.len()
            )));
        }
        if let Some(k) = v.iter().position(|p| !p.is_finite()) {
            return Err(ModelError::Invalid(format!(
                "CaGP parameter {k} is not finite: {}",
                v[k]
            )));
        }
        self.layout(learn_mean, true).state(&self.state, v)
    }

    /// This model (same data, threshold and `β`) at parameter vector `v` of
    /// [`CaGp::parameters`], every cache recomputed.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for a vector of the wrong length or with non-finite entries; a
    /// factorisation error.
    pub fn with_parameters(&self, v: &[f64], learn_mean: bool) -> Result<CaGp, ModelError> {
        let state = self.state_at(v, learn_mean)?;
        CaGp::build(
            self.x.clone(),
            self.y.clone(),
            state,
            self.threshold,
            self.beta,
            None,
        )
    }

    /// The ELBO at parameter vector `v` of [`CaGp::parameters`] and the latent predictive at
    /// the rows of `xq`; `adjoints` maps that predictive to `(μ̄, v̄)`, the derivatives of a
    /// function `U` of it in each query point's mean and variance. Returns the gradient of
    /// `elbo_weight · ELBO + U` in `v` and of `U` in the rows of `xq`.
    ///
    /// # Errors
    /// As for [`CaGp::with_parameters`]; [`ModelError::Invalid`] if `xq` has the wrong width,
    /// non-finite entries, or `elbo_weight` is not positive and finite.
    pub fn joint_evaluation(
        &self,
        v: &[f64],
        learn_mean: bool,
        elbo_weight: f64,
        xq: MatRef<'_, f64>,
        adjoints: Adjoints<'_>,
    ) -> Result<JointEvaluation, ModelError> {
        let mut joint = marginal_adjoints(adjoints);
        self.joint_evaluation_batch(v, learn_mean, elbo_weight, xq, &mut joint)
    }

    /// [`CaGp::joint_evaluation`] for a function `U` of the **joint** predictive at the rows
    /// of `xq` (a batch): `adjoints` maps it to `(μ̄, Σ̄)`.
    ///
    /// # Errors
    /// As for [`CaGp::joint_evaluation`]; adjoints of the wrong shape.
    pub fn joint_evaluation_batch(
        &self,
        v: &[f64],
        learn_mean: bool,
        elbo_weight: f64,
        xq: MatRef<'_, f64>,
        adjoints: JointAdjoints<'_>,
    ) -> Result<JointEvaluation, ModelError> {
        super::fit::check_positive("the ELBO weight", elbo_weight)?;
        let d = self.x.ncols();
        if xq.ncols() != d {
            return Err(ModelError::Invalid(format!(
                "query points need {d} columns, got {}",
                xq.ncols()
            )));
        }
        if (0..xq.nrows()).any(|r| (0..d).any(|c| !xq[(r, c)].is_finite())) {
            return Err(ModelError::Invalid(
                "query points must have finite coordinates".into(),
            ));
        }
        let state = self.state_at(v, learn_mean)?;
        let x = self.x.as_ref();
        let fw = forward(x, &self.y, &state)?;
        let kq = state.kernel.cross(x, xq);
        let sx = fw.s.transpose() * &kq;
        let mut l_sx = sx.clone();
        fw.chol.solve_lower_in_place(l_sx.as_mut());
        let mut g_sx = sx.clone();
        fw.chol.solve_in_place(g_sx.as_mut());
        let (i, q) = (sx.nrows(), xq.nrows());
        let joint = JointGaussian {
            mean: (0..q)
                .map(|t| state.mean + (0..i).map(|c| sx[(c, t)] * fw.a[c]).sum::<f64>())
                .collect(),
            cov: state.kernel.cross(xq, xq) - l_sx.transpose() * &l_sx,
        };
        let (mean_bar, cov_bar) = checked_adjoints(q, adjoints(&joint))?;
        // The ELBO's backward pass is unweighted: seed it with the adjoints over the weight
        // and scale the result.
        let mb: Vec<f64> = mean_bar.iter().map(|m| m / elbo_weight).collect();
        let cb = &cov_bar * (1.0 / elbo_weight);
        let g_sx_cb = &g_sx * &cb;
        let sx_bar = Mat::<f64>::from_fn(i, q, |c, t| mb[t] * fw.a[c] - 2.0 * g_sx_cb[(c, t)]);
        let kq_bar = &fw.s * &sx_bar;
        let mut kernel = vec![0.0; state.kernel.n_params()];
        state
            .kernel
            .grad_contract_cross(x, xq, kq_bar.as_ref(), &mut kernel);
        state.kernel.grad_contract(xq, cb.as_ref(), &mut kernel);
        let seed = Seed {
            a_bar: (0..i)
                .map(|c| (0..q).map(|t| mb[t] * sx[(c, t)]).sum())
                .collect(),
            g_bar: &g_sx_cb * g_sx.transpose(),
            s_bar: &kq * sx_bar.transpose(),
            kernel,
            mean: mb.iter().sum(),
        };
        let g = gradient_seeded(x, &state, &fw, Some(&seed));
        let layout = self.layout(learn_mean, true);
        let parameters = layout
            .grad_vec(g)
            .into_iter()
            .map(|p| p * elbo_weight)
            .collect();
        // The query rows' gradient of U itself (unweighted adjoints): through k(X, x_t) and
        // k(x_t, x_u) (both arguments move, hence the 2; it includes d k(x, x)/dx).
        let k_bar_inputs = Mat::<f64>::from_fn(q, x.nrows(), |t, j| kq_bar[(j, t)] * elbo_weight);
        let inputs = state.kernel.grad_inputs_cross(xq, x, k_bar_inputs.as_ref())
            + 2.0 * state.kernel.grad_inputs_cross(xq, xq, cov_bar.as_ref());
        Ok(JointEvaluation {
            elbo: fw.elbo,
            predictive: Marginals {
                var: (0..q).map(|t| joint.cov[(t, t)]).collect(),
                mean: joint.mean,
            },
            parameters,
            inputs,
        })
    }
}
