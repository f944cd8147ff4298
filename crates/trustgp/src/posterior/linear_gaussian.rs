//! The linear-Gaussian posterior form, and the predictive algebra every model shares through it.
//!
//! ```text
//! mean(x) = m(x) + k(x, Z)ᵀ t,      cov(x, x') = k(x, x') − k(x, Z)ᵀ S k(Z, x'),
//! ```
//!
//! `S` is kept as the model holds it, a signed sum of [`Term`]s, so that no model has to form
//! (or invert) an n×n matrix to hand out its form: `(K + D)⁻¹` is a triangular solve with the
//! model's Cholesky factor, SGPR's `K_uu⁻¹ − (K_uu + K_uf P K_fu)⁻¹` is two chains of solves,
//! CaGP's action form `S (SᵀK̂S)⁻¹ Sᵀ` is a projection followed by a solve.
//!
//! Input gradients, for a test row `x` (`k = k(Z, x)`):
//!
//! ```text
//! ∂mean/∂x = Σ_b t_b ∂k(x, z_b)/∂x + ∂m/∂x,
//! ∂var/∂x  = ∂k(x, x)/∂x − 2 Σ_b [S k]_b ∂k(x, z_b)/∂x,
//! ```
//!
//! both one [`Covariance::grad_inputs_cross`] contraction over a block of test rows.

mod joint;

use std::borrow::Cow;

use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Mat, MatRef, Par};
use rayon::prelude::*;

use super::{JointGaussian, LinearGaussianForm, MarginalGradients, Marginals};
use crate::kernels::Covariance;
use crate::means::PriorMean;
use crate::models::ModelError;

/// Test points per block: bounds memory to `n × BLOCK` and gives rayon independent blocks.
const BLOCK: usize = 256;

/// One signed term of the matrix `S` of a [`LinearGaussian`] form.
#[derive(Clone, Debug)]
pub enum Term<'a> {
    /// `sign · G Gᵀ` with `G = P L_1⁻ᵀ ⋯ L_r⁻ᵀ`, so that `kᵀ (G Gᵀ) k = ‖L_r⁻¹ ⋯ L_1⁻¹ Pᵀ k‖²`:
    /// an optional projection `P` (n×i) and lower-triangular factors applied in order (only
    /// their lower triangles are read).
    Chain {
        /// `+1` or `−1`.
        sign: f64,
        /// `P` (n×i), or `None` for the identity.
        project: Option<MatRef<'a, f64>>,
        /// `L_1, …, L_r`, each square and lower triangular.
        lower: Vec<MatRef<'a, f64>>,
    },
    /// `sign · A` for a dense symmetric `A` (n×n).
    Dense {
        /// `+1` or `−1`.
        sign: f64,
        /// `A`.
        a: MatRef<'a, f64>,
    },
}

impl Term<'_> {
    /// The size `S` this term acts on, and whether its factors fit together.
    fn size(&self) -> Option<usize> {
        match self {
            Term::Chain { project, lower, .. } => {
                let (n, mut width) = match project {
                    Some(p) => (p.nrows(), p.ncols()),
                    None => (lower.first()?.nrows(), lower.first()?.nrows()),
                };
                for l in lower {
                    if l.nrows() != width || l.ncols() != width {
                        return None;
                    }
                    width = l.nrows();
                }
                Some(n)
            }
            Term::Dense { a, .. } => (a.nrows() == a.ncols()).then_some(a.nrows()),
        }
    }

    /// `L_r⁻¹ ⋯ L_1⁻¹ Pᵀ k` for the columns `k` of `kz`.
    fn forward(
        project: Option<MatRef<'_, f64>>,
        lower: &[MatRef<'_, f64>],
        kz: MatRef<'_, f64>,
    ) -> Mat<f64> {
        let mut v = match project {
            Some(p) => p.transpose() * kz,
            None => kz.to_owned(),
        };
        for l in lower {
            solve_lower_triangular_in_place(*l, v.as_mut(), Par::Seq);
        }
        v
    }

    /// Adds `diag(kzᵀ (this term) kz)` to `q`.
    fn add_quadratic(&self, kz: MatRef<'_, f64>, q: &mut [f64]) {
        match self {
            Term::Chain {
                sign,
                project,
                lower,
            } => {
                let v = Self::forward(*project, lower, kz);
                for (j, qj) in q.iter_mut().enumerate() {
                    *qj += sign * v.col(j).iter().map(|a| a * a).sum::<f64>();
                }
            }
            Term::Dense { sign, a } => {
                let ak = *a * kz;
                for (j, qj) in q.iter_mut().enumerate() {
                    *qj += sign
                        * (0..kz.nrows())
                            .map(|i| kz[(i, j)] * ak[(i, j)])
                            .sum::<f64>();
                }
            }
        }
    }

    /// Adds `kzᵀ (this term) kz` to `out`.
    fn add_gram(&self, kz: MatRef<'_, f64>, out: &mut Mat<f64>) {
        match self {
            Term::Chain {
                sign,
                project,
                lower,
            } => {
                let v = Self::forward(*project, lower, kz);
                *out += *sign * (v.transpose() * &v);
            }
            Term::Dense { sign, a } => *out += *sign * (kz.transpose() * (*a * kz)),
        }
    }

    /// Adds `(this term) kz` to `out` (n×m).
    fn add_apply(&self, kz: MatRef<'_, f64>, out: &mut Mat<f64>) {
        match self {
            Term::Chain {
                sign,
                project,
                lower,
            } => {
                let mut v = Self::forward(*project, lower, kz);
                for l in lower.iter().rev() {
                    solve_upper_triangular_in_place(l.transpose(), v.as_mut(), Par::Seq);
                }
                match project {
                    Some(p) => *out += *sign * (*p * &v),
                    None => *out += *sign * &v,
                }
            }
            Term::Dense { sign, a } => *out += *sign * (*a * kz),
        }
    }
}

/// A posterior in linear-Gaussian form over support points `Z`: `mean(x) = m(x) + k(x, Z)ᵀ t`,
/// `cov(x, x') = k(x, x') − k(x, Z)ᵀ S k(Z, x')` with `S` a signed sum of [`Term`]s.
///
/// Exact GP and RCGP (and their multi-output versions): `Z = X`, `t = (K + D)⁻¹ (y − m̃)`,
/// `S = (K + D)⁻¹`; SGPR, RCSVGP and SVGP: `Z` the inducing inputs; CaGP and RCaGP:
/// `Z = X`, `t = ṽ` and `S = S_a (S_aᵀ K̂ S_a)⁻¹ S_aᵀ` over the actions `S_a`; the Student-t GP
/// (Laplace): `Z = X`, `t = ∇ log p(y | f̂)`, `S = (K + W⁻¹)⁻¹`.
#[derive(Clone, Debug)]
pub struct LinearGaussian<'a, C, M: Clone> {
    covariance: &'a C,
    mean: Cow<'a, M>,
    support: MatRef<'a, f64>,
    t: &'a [f64],
    terms: Vec<Term<'a>>,
}

impl<'a, C: Covariance, M: PriorMean> LinearGaussian<'a, C, M> {
    /// The form from its parts.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if `t` does not have one entry per support point or a term does
    /// not act on the support points.
    pub fn new(
        covariance: &'a C,
        mean: Cow<'a, M>,
        support: MatRef<'a, f64>,
        t: &'a [f64],
        terms: Vec<Term<'a>>,
    ) -> Result<Self, ModelError> {
        let n = support.nrows();
        if t.len() != n {
            return Err(ModelError::Invalid(format!(
                "linear-Gaussian form: t has {} entries but there are {n} support points",
                t.len()
            )));
        }
        if let Some(k) = terms.iter().position(|s| s.size() != Some(n)) {
            return Err(ModelError::Invalid(format!(
                "linear-Gaussian form: term {k} of S does not act on the {n} support points"
            )));
        }
        Ok(Self::of_model(covariance, mean, support, t, terms))
    }

    /// The form of a fitted model, whose parts fit together by construction (checked in
    /// debug builds only).
    pub(crate) fn of_model(
        covariance: &'a C,
        mean: Cow<'a, M>,
        support: MatRef<'a, f64>,
        t: &'a [f64],
        terms: Vec<Term<'a>>,
    ) -> Self {
        debug_assert!(t.len() == support.nrows());
        debug_assert!(terms.iter().all(|s| s.size() == Some(support.nrows())));
        LinearGaussian {
            covariance,
            mean,
            support,
            t,
            terms,
        }
    }

    /// The covariance function.
    pub fn covariance(&self) -> &C {
        self.covariance
    }

    /// The prior mean.
    pub fn prior_mean(&self) -> &M {
        &self.mean
    }

    /// The support points `Z` (one per row).
    pub fn support(&self) -> MatRef<'a, f64> {
        self.support
    }

    /// `t`, the weights of the posterior mean on the support points.
    pub fn t(&self) -> &[f64] {
        self.t
    }

    /// The terms whose sum is `S`.
    pub fn terms(&self) -> &[Term<'a>] {
        &self.terms
    }

    /// `S` as a dense symmetric matrix (n×n; only on request).
    pub fn s_matrix(&self) -> Mat<f64> {
        let n = self.support.nrows();
        self.apply_s(Mat::<f64>::identity(n, n).as_ref())
    }

    /// `S kz` for the columns of `kz` (n×m).
    fn apply_s(&self, kz: MatRef<'_, f64>) -> Mat<f64> {
        let mut out = Mat::<f64>::zeros(kz.nrows(), kz.ncols());
        for s in &self.terms {
            s.add_apply(kz, &mut out);
        }
        out
    }

    /// Checks test inputs: the support points' width, finite entries, and what the covariance
    /// requires.
    fn check(&self, xs: MatRef<'_, f64>) -> Result<(), ModelError> {
        let d = self.support.ncols();
        if xs.ncols() != d {
            return Err(ModelError::Invalid(format!(
                "test inputs have {} columns, the posterior takes {d}",
                xs.ncols()
            )));
        }
        for c in 0..d {
            if let Some(i) = (0..xs.nrows()).find(|&i| !xs[(i, c)].is_finite()) {
                return Err(ModelError::Invalid(format!(
                    "test input [{i}, {c}] = {} is not finite",
                    xs[(i, c)]
                )));
            }
        }
        self.covariance.check_inputs(xs)?;
        Ok(())
    }

    /// `f` on blocks of the rows of `xs`, in parallel, concatenated in order.
    fn by_blocks<T: Send>(
        &self,
        xs: MatRef<'_, f64>,
        f: impl Fn(MatRef<'_, f64>) -> T + Sync,
    ) -> Vec<T> {
        let starts: Vec<usize> = (0..xs.nrows()).step_by(BLOCK).collect();
        let run = |&s: &usize| f(xs.subrows(s, BLOCK.min(xs.nrows() - s)));
        if starts.len() > 1 {
            starts.par_iter().map(run).collect()
        } else {
            starts.iter().map(run).collect()
        }
    }

    /// Prior mean plus `kzᵀ t`.
    fn mean_of(&self, xs: MatRef<'_, f64>, kz: MatRef<'_, f64>) -> Vec<f64> {
        let mut mean = self.mean.eval(xs);
        for (j, mj) in mean.iter_mut().enumerate() {
            *mj += (0..kz.nrows()).map(|i| kz[(i, j)] * self.t[i]).sum::<f64>();
        }
        mean
    }

    fn marginals_block(&self, xs: MatRef<'_, f64>) -> (Marginals, Mat<f64>) {
        let kz = self.covariance.cross(self.support, xs);
        let mean = self.mean_of(xs, kz.as_ref());
        let mut q = vec![0.0; xs.nrows()];
        for s in &self.terms {
            s.add_quadratic(kz.as_ref(), &mut q);
        }
        let var = self
            .covariance
            .diag(xs)
            .iter()
            .zip(&q)
            .map(|(k, q)| (k - q).max(0.0))
            .collect();
        (Marginals { mean, var }, kz)
    }

    /// Marginal mean and variance (clamped at zero against rounding) at the rows of `xs`.
    ///
    /// # Errors
    /// [`ModelError`] for inputs that fail the checks of [`super::Posterior::marginals`].
    pub fn marginals(&self, xs: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        self.check(xs)?;
        let parts = self.by_blocks(xs, |b| self.marginals_block(b).0);
        let mut out = Marginals {
            mean: Vec::with_capacity(xs.nrows()),
            var: Vec::with_capacity(xs.nrows()),
        };
        for p in parts {
            out.mean.extend(p.mean);
            out.var.extend(p.var);
        }
        Ok(out)
    }

    /// The joint mean and covariance at the rows of `xs`.
    ///
    /// # Errors
    /// As for [`LinearGaussian::marginals`].
    pub fn joint(&self, xs: MatRef<'_, f64>) -> Result<JointGaussian, ModelError> {
        self.check(xs)?;
        let kz = self.covariance.cross(self.support, xs);
        Ok(self.joint_of(xs, kz.as_ref()))
    }

    /// The joint mean and covariance at the rows of `xs`, given `kz = k(Z, xs)`.
    fn joint_of(&self, xs: MatRef<'_, f64>, kz: MatRef<'_, f64>) -> JointGaussian {
        let mean = self.mean_of(xs, kz);
        let mut q = Mat::<f64>::zeros(xs.nrows(), xs.nrows());
        for s in &self.terms {
            s.add_gram(kz, &mut q);
        }
        let k = self.covariance.matrix(xs);
        // Symmetric by construction up to rounding in the dense terms: average it out.
        let cov = Mat::from_fn(xs.nrows(), xs.nrows(), |i, j| {
            k[(i, j)] - 0.5 * (q[(i, j)] + q[(j, i)])
        });
        JointGaussian { mean, cov }
    }

    /// `∂mean(x_a)/∂x_{a,c}` for every row `a` of `xs`: `Σ_b t_b ∂k(x_a, z_b)/∂x_a + ∂m/∂x_a`.
    fn mean_gradient(&self, xs: MatRef<'_, f64>) -> Mat<f64> {
        let w_mean = Mat::from_fn(xs.nrows(), self.support.nrows(), |_, b| self.t[b]);
        self.covariance
            .grad_inputs_cross(xs, self.support, w_mean.as_ref())
            + self.mean.grad_inputs(xs)
    }

    fn gradients_block(&self, xs: MatRef<'_, f64>) -> MarginalGradients {
        let (marginals, kz) = self.marginals_block(xs);
        let mean = self.mean_gradient(xs);
        let sk = self.apply_s(kz.as_ref());
        let var = self.covariance.grad_inputs_diag(xs)
            - 2.0
                * self
                    .covariance
                    .grad_inputs_cross(xs, self.support, sk.transpose());
        MarginalGradients {
            marginals,
            mean,
            var,
        }
    }

    /// The marginals with their gradients with respect to each test input.
    ///
    /// # Errors
    /// As for [`LinearGaussian::marginals`].
    pub fn marginal_gradients(&self, xs: MatRef<'_, f64>) -> Result<MarginalGradients, ModelError> {
        self.check(xs)?;
        let parts = self.by_blocks(xs, |b| self.gradients_block(b));
        let (m, d) = (xs.nrows(), xs.ncols());
        let mut out = MarginalGradients {
            marginals: Marginals {
                mean: Vec::with_capacity(m),
                var: Vec::with_capacity(m),
            },
            mean: Mat::zeros(m, d),
            var: Mat::zeros(m, d),
        };
        let mut row = 0;
        for p in parts {
            let len = p.marginals.mean.len();
            out.mean.as_mut().subrows_mut(row, len).copy_from(&p.mean);
            out.var.as_mut().subrows_mut(row, len).copy_from(&p.var);
            out.marginals.mean.extend(p.marginals.mean);
            out.marginals.var.extend(p.marginals.var);
            row += len;
        }
        Ok(out)
    }
}

impl<C: Covariance, M: PriorMean> LinearGaussianForm for LinearGaussian<'_, C, M> {
    type Covariance = C;
    type Mean = M;
    fn linear_gaussian(&self) -> LinearGaussian<'_, C, M> {
        LinearGaussian {
            covariance: self.covariance,
            mean: Cow::Borrowed(&*self.mean),
            support: self.support,
            t: self.t,
            terms: self.terms.clone(),
        }
    }
}
