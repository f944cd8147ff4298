//! The conjugate core shared by the exact GP and the robust conjugate models.
//!
//! Every model of this family has a posterior of the form
//!
//! ```text
//! mean(x*) = m(x*) + k*ᵀ (K + D)⁻¹ r,      cov(x*, x*') = k(x*, x*') − k*ᵀ (K + D)⁻¹ k*'
//! ```
//!
//! with a diagonal `D` (σ²I for a GP, σ²J_w for RCGP, …) and a residual `r = y − m̃` of the
//! training targets against a shifted mean `m̃`. The models differ only in how they build `D` and
//! `r` (and in their training objective), so this is written once here.
//!
//! It also exposes the linear-Gaussian form `mean = m + k*ᵀ t`, `var = k** − k*ᵀ S k*` with
//! `t = (K + D)⁻¹ r` and `S = (K + D)⁻¹` ([`LinearGaussianForm`], through the Cholesky factor),
//! which makes the exact GP, RCGP, MOGP and MO-RCGP [`Posterior`](crate::posterior::Posterior)s.

use std::borrow::Cow;

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::exact::ExactGp;
use super::robust::mogp::MultiOutputGp;
use super::robust::multi_output::MultiOutputModel;
use super::robust::RobustGp;
use crate::kernels::{Covariance, Kernel, MultiOutputKernel};
use crate::linalg::{Cholesky, LinalgError, Parallelism};
use crate::means::{Mean, PriorMean, TaskMean};
use crate::posterior::{LinearGaussian, LinearGaussianForm, Marginals, Term};

/// How many test points are predicted per block: bounds memory to `n × BLOCK` for the
/// cross-covariance and gives rayon independent blocks to spread over cores.
const PREDICT_BLOCK: usize = 512;

/// A fitted conjugate posterior over training inputs `x`, for any covariance `C` (a kernel, or
/// a multi-output kernel on task-indexed inputs) and prior mean `M`.
#[derive(Clone, Debug)]
pub struct ConjugatePosterior<C = Kernel, M = Mean> {
    kernel: C,
    mean: M,
    x: Mat<f64>,
    chol: Cholesky,
    t: Vec<f64>,
}

impl<C: Covariance, M: PriorMean> ConjugatePosterior<C, M> {
    /// Build the posterior: factorise `K(x, x) + diag(d)` and solve for `t = (K + D)⁻¹ r`.
    ///
    /// `residual` is `y − m̃` and `d` the diagonal of `D`, one entry per training row.
    pub fn new(
        kernel: C,
        mean: M,
        x: Mat<f64>,
        residual: &[f64],
        d: &[f64],
        par: Parallelism,
    ) -> Result<Self, LinalgError> {
        let build = || {
            let mut k = kernel.matrix_lower(x.as_ref());
            for (i, di) in d.iter().enumerate() {
                k[(i, i)] += di;
            }
            k
        };
        let chol = Cholesky::factor_owned(build(), "kernel matrix K + D", par, build)?;
        let t = chol.solve_vec(residual);
        Ok(ConjugatePosterior {
            kernel,
            mean,
            x,
            chol,
            t,
        })
    }

    /// Build the posterior from a factor of `K(x, x) + D` computed elsewhere (e.g. the
    /// two-step [`BlockCholesky`](crate::linalg::BlockCholesky) with a cached source block):
    /// only `t = (K + D)⁻¹ r` is solved here, `O(n²)`.
    ///
    /// # Errors
    /// The factor's dimension or the residual's length is not the number of rows of `x`.
    pub fn from_factor(
        kernel: C,
        mean: M,
        x: Mat<f64>,
        chol: Cholesky,
        residual: &[f64],
    ) -> Result<Self, LinalgError> {
        if chol.n() != x.nrows() || residual.len() != x.nrows() {
            return Err(LinalgError::Shape {
                what: format!(
                    "prebuilt factor for {} training rows (residual of length {})",
                    x.nrows(),
                    residual.len()
                ),
                rows: chol.n(),
                cols: chol.n(),
            });
        }
        let t = chol.solve_vec(residual);
        Ok(ConjugatePosterior {
            kernel,
            mean,
            x,
            chol,
            t,
        })
    }

    /// The training inputs.
    pub fn x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The covariance function.
    pub fn kernel(&self) -> &C {
        &self.kernel
    }

    /// The prior mean.
    pub fn mean(&self) -> &M {
        &self.mean
    }

    /// The Cholesky factor of `K + D` (with the jitter it needed).
    pub fn cholesky(&self) -> &Cholesky {
        &self.chol
    }

    /// `t = (K + D)⁻¹ r`: the weights of the posterior mean on the training points.
    pub fn t(&self) -> &[f64] {
        &self.t
    }

    /// `S = (K + D)⁻¹`, the matrix of the posterior variance's quadratic form.
    pub fn s_matrix(&self) -> Mat<f64> {
        self.chol.inverse()
    }

    /// Latent posterior mean and variance at the rows of `xs`, computed block by block so that
    /// no test×test matrix is ever formed.
    pub fn marginals(&self, xs: MatRef<'_, f64>) -> Marginals {
        let m = xs.nrows();
        let blocks: Vec<(usize, usize)> = (0..m)
            .step_by(PREDICT_BLOCK)
            .map(|s| (s, (s + PREDICT_BLOCK).min(m)))
            .collect();
        let run = |&(s, e): &(usize, usize)| self.marginals_block(xs.subrows(s, e - s));
        // Blocks are independent: spread them over cores, but only when the factor's own solves
        // are sequential (never nest rayon inside faer's parallel calls).
        let parts: Vec<Marginals> =
            if blocks.len() > 1 && self.chol.parallelism() == Parallelism::Sequential {
                blocks.par_iter().map(run).collect()
            } else {
                blocks.iter().map(run).collect()
            };
        let mut out = Marginals {
            mean: Vec::with_capacity(m),
            var: Vec::with_capacity(m),
        };
        for p in parts {
            out.mean.extend(p.mean);
            out.var.extend(p.var);
        }
        out
    }

    fn marginals_block(&self, xs: MatRef<'_, f64>) -> Marginals {
        let mut kx = self.kernel.cross(self.x.as_ref(), xs);
        let prior = self.mean.eval(xs);
        let kss = self.kernel.diag(xs);
        let n = self.x.nrows();
        let mean: Vec<f64> = (0..xs.nrows())
            .map(|j| prior[j] + (0..n).map(|i| kx[(i, j)] * self.t[i]).sum::<f64>())
            .collect();
        self.chol.solve_lower_in_place(kx.as_mut());
        let var = (0..xs.nrows())
            .map(|j| {
                let q: f64 = (0..n).map(|i| kx[(i, j)] * kx[(i, j)]).sum();
                (kss[j] - q).max(0.0)
            })
            .collect();
        Marginals { mean, var }
    }

    /// The joint latent posterior covariance at the rows of `xs` (an `m × m` matrix; only on request).
    pub fn joint_covariance(&self, xs: MatRef<'_, f64>) -> Mat<f64> {
        let mut kx = self.kernel.cross(self.x.as_ref(), xs);
        self.chol.solve_lower_in_place(kx.as_mut());
        let mut cov = self.kernel.matrix(xs);
        cov -= kx.transpose() * &kx;
        cov
    }
}

/// `Z = X`, `t = (K + D)⁻¹ r` and `S = (K + D)⁻¹` through the Cholesky factor.
impl<C: Covariance, M: PriorMean> LinearGaussianForm for ConjugatePosterior<C, M> {
    type Covariance = C;
    type Mean = M;
    fn linear_gaussian(&self) -> LinearGaussian<'_, C, M> {
        LinearGaussian::of_model(
            &self.kernel,
            Cow::Borrowed(&self.mean),
            self.x.as_ref(),
            &self.t,
            vec![Term::Chain {
                sign: 1.0,
                project: None,
                lower: vec![self.chol.l()],
            }],
        )
    }
}

impl LinearGaussianForm for ExactGp {
    type Covariance = Kernel;
    type Mean = Mean;
    fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        self.posterior().linear_gaussian()
    }
}

impl<C: Covariance, M: PriorMean> LinearGaussianForm for MultiOutputGp<C, M> {
    type Covariance = C;
    type Mean = M;
    fn linear_gaussian(&self) -> LinearGaussian<'_, C, M> {
        self.posterior().linear_gaussian()
    }
}

impl<C: Covariance, M: PriorMean> LinearGaussianForm for RobustGp<C, M> {
    type Covariance = C;
    type Mean = M;
    fn linear_gaussian(&self) -> LinearGaussian<'_, C, M> {
        self.posterior().linear_gaussian()
    }
}

/// On task-indexed inputs (see [`crate::posterior::with_task`]).
impl LinearGaussianForm for MultiOutputModel {
    type Covariance = MultiOutputKernel;
    type Mean = TaskMean;
    fn linear_gaussian(&self) -> LinearGaussian<'_, MultiOutputKernel, TaskMean> {
        match self {
            MultiOutputModel::Mogp(g) => g.linear_gaussian(),
            MultiOutputModel::Robust(g) => g.linear_gaussian(),
        }
    }
}
