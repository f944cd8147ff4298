//! The collapsed bound together with a function of the predictive at query points, and the
//! gradient of their weighted sum in the parameters and the query inputs (for EULBO,
//! `rcagp.md` §2.11, with the RCSVGP of §2.8).
//!
//! With `Λ = K_uu + K_uf P K_fu` (`= L B Lᵀ`), `r = K_uf P t` and `k = k(Z, x)` the predictive
//! of [`predict`](super::predict) is
//!
//! ```text
//! μ(x) = m(x) + kᵀ Λ⁻¹ r,        v(x) = k(x, x) − kᵀ K_uu⁻¹ k + kᵀ Λ⁻¹ k,
//! ```
//!
//! so with `α = Λ⁻¹r`, `β = K_uu⁻¹k`, `e = Λ⁻¹k`, adjoints `μ̄`, `v̄` give
//!
//! ```text
//! k̄ = μ̄ α − 2v̄ β + 2v̄ e,          Λ̄ = −μ̄ e αᵀ − v̄ e eᵀ,          r̄ = μ̄ e,
//! K̄_uu = Λ̄ + v̄ β βᵀ,               K̄_uf = (Λ̄ + Λ̄ᵀ) K_uf P + r̄ (P t)ᵀ,
//! P̄_j = (K_fu Λ̄ K_uf)_jj + t_j (K_fu r̄)_j,    t̄_j = P_j (K_fu r̄)_j,    k̄(x, x) = v̄,
//! ```
//!
//! summed over the query points. `P̄` (as `∂/∂log P = P P̄`) and `t̄` join the bound's own
//! adjoints before the chain rule to `σ²` and the mean, the kernel matrices' adjoints are
//! contracted with the kernel's derivatives, and those of `K_uu`, `K_uf` and `k` also give the
//! inducing inputs' gradient.

use faer::linalg::triangular_solve::solve_upper_triangular_in_place;
use faer::{Mat, MatRef, Par};

use super::collapsed::{CollapsedGrad, Factors, Wanted};
use super::fit::Layout;
use super::likelihood::Pseudo;
use super::{Problem, SparseGp};
use crate::kernels::Kernel;
use crate::means::PriorMean;
use crate::models::computation_aware::{
    checked_adjoints, marginal_adjoints, Adjoints, JointAdjoints, JointEvaluation,
};
use crate::models::ModelError;
use crate::posterior::{JointGaussian, Marginals};

/// Computes a [`Seed`] from the bound's factors and pseudo-likelihood.
pub(super) type SeedFn<'a> = &'a mut dyn FnMut(&Factors, &Pseudo) -> Result<Seed, ModelError>;

/// The adjoints that a function of the predictive adds to the bound's gradient.
pub(super) struct Seed {
    log_p: Vec<f64>,
    t: Vec<f64>,
    kernel: Vec<f64>,
    /// With respect to the inducing inputs (m×d).
    z: Mat<f64>,
    /// With respect to the mean's parameters, through `m(x)` at the query points.
    pub mean: Vec<f64>,
}

impl Seed {
    /// Adds the adjoints to the bound's own.
    pub(super) fn add_to(&self, g: &mut CollapsedGrad) {
        for (a, b) in g.log_p.iter_mut().zip(&self.log_p) {
            *a += b;
        }
        for (a, b) in g.t.iter_mut().zip(&self.t) {
            *a += b;
        }
        for (a, b) in g.kernel.iter_mut().zip(&self.kernel) {
            *a += b;
        }
        if let Some(gz) = g.z.as_mut() {
            *gz += &self.z;
        }
    }
}

/// `(K + Kᵀ)/2`: the kernel contractions read a symmetric weight's lower triangle.
fn symmetric(k: &Mat<f64>) -> Mat<f64> {
    Mat::from_fn(k.nrows(), k.ncols(), |r, c| 0.5 * (k[(r, c)] + k[(c, r)]))
}

/// What the seed leaves for the caller: the predictive and the query inputs' gradient.
struct QueryParts {
    predictive: Marginals,
    inputs: Mat<f64>,
}

/// The seed of `Σ_t μ̄_t μ(x_t) + Σ_tu Σ̄_tu Σ(x_t, x_u)` over `weight`, with the adjoints
/// from `adjoints` (the joint form of the module notes: `v̄_t e_t`-type sums become `e Σ̄`,
/// `β Σ̄`); writes the predictive and the (unweighted) query gradient to `out`.
#[allow(clippy::too_many_arguments)]
fn seed(
    gp: &SparseGp,
    kernel: &Kernel,
    mean: &crate::means::Mean,
    z: MatRef<'_, f64>,
    xq: MatRef<'_, f64>,
    weight: f64,
    factors: &Factors,
    pseudo: &Pseudo,
    adjoints: JointAdjoints<'_>,
    out: &mut Option<QueryParts>,
) -> Result<Seed, ModelError> {
    let (m, q, x) = (z.nrows(), xq.nrows(), gp.x.as_ref());
    let kux = kernel.cross(z, xq);
    let mut c = kux.clone();
    factors.l_uu.solve_lower_in_place(c.as_mut());
    let lower_t = factors.l_uu.l().transpose();
    let mut beta = c.clone();
    solve_upper_triangular_in_place(lower_t, beta.as_mut(), Par::Seq);
    let mut e = c.clone();
    factors.l_b.solve_in_place(e.as_mut());
    solve_upper_triangular_in_place(lower_t, e.as_mut(), Par::Seq);
    let prior = mean.eval(xq);
    let joint = JointGaussian {
        mean: (0..q)
            .map(|t| prior[t] + (0..m).map(|i| kux[(i, t)] * factors.alpha[i]).sum::<f64>())
            .collect(),
        cov: kernel.cross(xq, xq) - c.transpose() * &c + kux.transpose() * &e,
    };
    let (mean_bar, cov_bar) = checked_adjoints(q, adjoints(&joint))?;
    let mb: Vec<f64> = mean_bar.iter().map(|v| v / weight).collect();
    let cb = &cov_bar * (1.0 / weight);
    let alpha = &factors.alpha;
    let (beta_cb, e_cb) = (&beta * &cb, &e * &cb);
    let k_bar = Mat::<f64>::from_fn(m, q, |i, t| {
        mb[t] * alpha[i] - 2.0 * beta_cb[(i, t)] + 2.0 * e_cb[(i, t)]
    });
    let e_mb: Vec<f64> = (0..m)
        .map(|i| (0..q).map(|t| mb[t] * e[(i, t)]).sum())
        .collect();
    let lam_bar = Mat::<f64>::from_fn(m, m, |i, k| -e_mb[i] * alpha[k]) - &e_cb * e.transpose();
    let r_bar = e_mb;
    let kuu_bar = &lam_bar + &beta_cb * beta.transpose();
    let kuf = kernel.cross(z, x);
    let (p, tt) = (&pseudo.p, &pseudo.t);
    let lam_sym2 = &lam_bar + lam_bar.transpose();
    let lk = &lam_sym2 * &kuf;
    let lam_kuf = &lam_bar * &kuf;
    let n = x.nrows();
    let kuf_bar = Mat::<f64>::from_fn(m, n, |i, j| lk[(i, j)] * p[j] + r_bar[i] * p[j] * tt[j]);
    let kfu_r: Vec<f64> = (0..n)
        .map(|j| (0..m).map(|i| kuf[(i, j)] * r_bar[i]).sum())
        .collect();
    let log_p = (0..n)
        .map(|j| {
            let quad: f64 = (0..m).map(|i| kuf[(i, j)] * lam_kuf[(i, j)]).sum();
            p[j] * (quad + tt[j] * kfu_r[j])
        })
        .collect();
    let t_bar = (0..n).map(|j| p[j] * kfu_r[j]).collect();
    let kuu_sym = symmetric(&kuu_bar);
    let mut g_kernel = vec![0.0; kernel.n_params()];
    kernel.grad_contract(z, kuu_sym.as_ref(), &mut g_kernel);
    kernel.grad_contract_cross(z, x, kuf_bar.as_ref(), &mut g_kernel);
    kernel.grad_contract_cross(z, xq, k_bar.as_ref(), &mut g_kernel);
    kernel.grad_contract(xq, cb.as_ref(), &mut g_kernel);
    let g_z = kernel.grad_inputs_cross(z, x, kuf_bar.as_ref())
        + kernel.grad_inputs_cross(z, xq, k_bar.as_ref())
        + 2.0 * kernel.grad_inputs_cross(z, z, kuu_sym.as_ref());
    // The query rows' gradient of the unweighted function: through k(Z, x_t), k(x_t, x_u)
    // (both arguments move, hence the 2; it includes d k(x, x)/dx) and m(x_t).
    let k_bar_t = Mat::<f64>::from_fn(q, m, |t, i| k_bar[(i, t)] * weight);
    let mut inputs = kernel.grad_inputs_cross(xq, z, k_bar_t.as_ref())
        + 2.0 * kernel.grad_inputs_cross(xq, xq, cov_bar.as_ref());
    let mean_x = mean.grad_inputs(xq);
    for t in 0..q {
        for col in 0..xq.ncols() {
            inputs[(t, col)] += mean_bar[t] * mean_x[(t, col)];
        }
    }
    let predictive = Marginals {
        var: (0..q).map(|t| joint.cov[(t, t)]).collect(),
        mean: joint.mean,
    };
    *out = Some(QueryParts { predictive, inputs });
    Ok(Seed {
        log_p,
        t: t_bar,
        kernel: g_kernel,
        z: g_z,
        mean: mean.grad_contract(xq, &mb),
    })
}

impl SparseGp {
    /// The layout of the flat parameter vector.
    fn layout(&self, learn_inducing: bool) -> Layout {
        Layout {
            n_kernel: self.kernel.n_params(),
            n_mean: self.mean.n_params(),
            z_shape: (self.z.nrows(), self.z.ncols()),
            learn_z: learn_inducing,
        }
    }

    /// The parameters as one vector, as [`SparseGp::fit`] lays them out: `[log θ_kernel…,
    /// log σ², the mean's parameters, Z column by column (if learn_inducing)]`.
    pub fn parameters(&self, learn_inducing: bool) -> Vec<f64> {
        self.layout(learn_inducing)
            .pack(&self.kernel, self.noise, &self.mean, self.z.as_ref())
    }

    /// Box constraints of [`SparseGp::parameters`]: the kernel's bounds, the noise's (or its
    /// value, fixed, unless `learn_noise`), the mean's parameters free (or fixed unless
    /// `learn_mean`), the inducing inputs free.
    pub fn parameter_bounds(
        &self,
        learn_mean: bool,
        learn_noise: bool,
        learn_inducing: bool,
    ) -> Vec<(f64, f64)> {
        self.layout(learn_inducing).bounds(
            &self.kernel,
            self.kind,
            (!learn_noise).then_some(self.noise),
            (!learn_mean).then_some(&self.mean),
        )
    }

    /// The parts at parameter vector `v` (checked for length and finiteness).
    fn parts_at(
        &self,
        v: &[f64],
        learn_inducing: bool,
    ) -> Result<(Kernel, f64, crate::means::Mean, Mat<f64>), ModelError> {
        let want = self.parameters(learn_inducing).len();
        if v.len() != want {
            return Err(ModelError::Invalid(format!(
                "sparse GP parameter vector must have {want} entries, got {}",
                v.len()
            )));
        }
        if let Some(k) = v.iter().position(|p| !p.is_finite()) {
            return Err(ModelError::Invalid(format!(
                "sparse GP parameter {k} is not finite: {}",
                v[k]
            )));
        }
        self.layout(learn_inducing)
            .unpack(v, &self.kernel, &self.mean, &self.z)
    }

    /// This model (same kind, data, threshold and `β`) at parameter vector `v` of
    /// [`SparseGp::parameters`].
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for a vector of the wrong length or with non-finite entries; a
    /// factorisation error.
    pub fn with_parameters(&self, v: &[f64], learn_inducing: bool) -> Result<SparseGp, ModelError> {
        let (kernel, noise, mean, z) = self.parts_at(v, learn_inducing)?;
        SparseGp::build(
            self.kind,
            self.x.clone(),
            self.y.clone(),
            kernel,
            mean,
            noise,
            z,
            self.weight.c,
            self.weight.beta,
            self.jitter,
        )
    }

    /// The collapsed bound at parameter vector `v` of [`SparseGp::parameters`] and the latent
    /// predictive at the rows of `xq`; `adjoints` maps that predictive to `(μ̄, v̄)`, the
    /// derivatives of a function `U` of it in each query point's mean and variance. Returns
    /// the gradient of `elbo_weight · bound + U` in `v` and of `U` in the rows of `xq`.
    ///
    /// # Errors
    /// As for [`SparseGp::with_parameters`]; [`ModelError::Invalid`] if `xq` has the wrong
    /// width or non-finite entries, or `elbo_weight` is not positive and finite.
    pub fn joint_evaluation(
        &self,
        v: &[f64],
        learn_inducing: bool,
        elbo_weight: f64,
        xq: MatRef<'_, f64>,
        adjoints: Adjoints<'_>,
    ) -> Result<JointEvaluation, ModelError> {
        let mut joint = marginal_adjoints(adjoints);
        self.joint_evaluation_batch(v, learn_inducing, elbo_weight, xq, &mut joint)
    }

    /// [`SparseGp::joint_evaluation`] for a function `U` of the **joint** predictive at the
    /// rows of `xq` (a batch): `adjoints` maps it to `(μ̄, Σ̄)`.
    ///
    /// # Errors
    /// As for [`SparseGp::joint_evaluation`]; adjoints of the wrong shape.
    pub fn joint_evaluation_batch(
        &self,
        v: &[f64],
        learn_inducing: bool,
        elbo_weight: f64,
        xq: MatRef<'_, f64>,
        adjoints: JointAdjoints<'_>,
    ) -> Result<JointEvaluation, ModelError> {
        super::fit::check_positive("the ELBO weight", elbo_weight)?;
        crate::models::checks::check_matrix("query point", xq, self.x.ncols())?;
        let (kernel, noise, mean, z) = self.parts_at(v, learn_inducing)?;
        let problem = Problem {
            kind: self.kind,
            x: self.x.as_ref(),
            y: &self.y,
            weight: self.weight,
            jitter: self.jitter,
        };
        let mut parts = None;
        let mut make = |f: &Factors, p: &Pseudo| {
            seed(
                self,
                &kernel,
                &mean,
                z.as_ref(),
                xq,
                elbo_weight,
                f,
                p,
                &mut *adjoints,
                &mut parts,
            )
        };
        let wanted = if learn_inducing {
            Wanted::All
        } else {
            Wanted::FixedInducing
        };
        let ev =
            problem.evaluate_seeded(&kernel, &mean, noise, z.as_ref(), wanted, Some(&mut make))?;
        let QueryParts { predictive, inputs } =
            parts.ok_or_else(|| ModelError::Invalid("the query seed was not computed".into()))?;
        Ok(JointEvaluation {
            elbo: ev.value,
            predictive,
            parameters: ev
                .grad
                .unwrap_or_default()
                .into_iter()
                .map(|g| g * elbo_weight)
                .collect(),
            inputs,
        })
    }
}
