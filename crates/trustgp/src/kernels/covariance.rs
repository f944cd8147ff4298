//! The covariance interface shared by single- and multi-output kernels.
//!
//! The conjugate core and the objectives built on it only need a covariance matrix, cross- and
//! diagonal covariances, and the gradient contraction `Σ_ab W_ab ∂K_ab/∂θ_j`. A [`Kernel`] on
//! plain inputs and a [`MultiOutputKernel`](super::MultiOutputKernel) on task-indexed inputs
//! both provide them, so every model is written once for both.

use faer::{Mat, MatRef};

use super::{Kernel, KernelError};
use crate::linalg::{sum_pairs, Cholesky, LinalgError, Parallelism};

/// A covariance function over the rows of an input matrix, with log-space hyperparameters.
pub trait Covariance: Clone + std::fmt::Debug + Send + Sync {
    /// This covariance as a single-output [`Kernel`], where it is one (what random-feature
    /// prior samples are drawn from); `None` otherwise.
    fn as_kernel(&self) -> Option<&Kernel> {
        None
    }
    /// The n×n covariance matrix of the rows of `x` (full, symmetric).
    fn matrix(&self, x: MatRef<'_, f64>) -> Mat<f64>;
    /// The lower triangle and diagonal of [`Covariance::matrix`]; the strict upper triangle is
    /// unspecified. What a Cholesky factorisation reads, for implementations that can skip
    /// completing the matrix.
    fn matrix_lower(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        self.matrix(x)
    }
    /// The n1×n2 cross-covariance between the rows of `x1` and `x2`.
    fn cross(&self, x1: MatRef<'_, f64>, x2: MatRef<'_, f64>) -> Mat<f64>;
    /// The diagonal of [`Covariance::matrix`].
    fn diag(&self, x: MatRef<'_, f64>) -> Vec<f64>;
    /// Checks that the rows of `x` are inputs this covariance can evaluate (the number of
    /// columns, and for task-indexed inputs the task indices), with a message saying what is
    /// wrong; the other methods may panic on inputs that fail it.
    fn check_inputs(&self, x: MatRef<'_, f64>) -> Result<(), KernelError>;
    /// `G[a, c] = Σ_b W_ab ∂k(x1_a, x2_b)/∂x1_{a,c}` (n1 × columns of `x1`, `W` n1×n2): the
    /// gradient of `Σ W∘cross(x1, x2)` with respect to the first inputs, in one pass. Columns
    /// that are not continuous inputs (a task index) get zero.
    fn grad_inputs_cross(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
    ) -> Mat<f64>;
    /// `d k(x_a, x_a) / d x_a` for every row `a` of `x` (zero for a stationary covariance).
    /// By symmetry of `k` it is twice the derivative in the first argument, which
    /// [`Covariance::grad_inputs_cross`] gives row by row.
    fn grad_inputs_diag(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        let two = Mat::<f64>::from_fn(1, 1, |_, _| 2.0);
        let mut g = Mat::<f64>::zeros(x.nrows(), x.ncols());
        for a in 0..x.nrows() {
            let row = x.subrows(a, 1);
            let ga = self.grad_inputs_cross(row, row, two.as_ref());
            for c in 0..x.ncols() {
                g[(a, c)] = ga[(0, c)];
            }
        }
        g
    }
    /// Number of hyperparameters.
    fn n_params(&self) -> usize;
    /// The flat unconstrained (log-space for positive quantities) parameter vector.
    fn params(&self) -> Vec<f64>;
    /// Sets the parameters from a vector laid out as [`Covariance::params`]; nothing changes
    /// on error.
    fn set_params(&mut self, p: &[f64]) -> Result<(), KernelError>;
    /// Optimisation bounds of each parameter.
    fn bounds(&self) -> Vec<(f64, f64)>;
    /// Readable parameter names.
    fn param_names(&self) -> Vec<String>;
    /// Adds `Σ_ab W_ab ∂K_ab/∂θ_j` to `out[j]` for every hyperparameter; `W` is symmetric and
    /// only its lower triangle is read.
    fn grad_contract(&self, x: MatRef<'_, f64>, w: MatRef<'_, f64>, out: &mut [f64]);
    /// The covariance `c · K` (`c > 0`) in this family, if it has a parameter carrying the
    /// overall scale; the result may lie outside [`Covariance::bounds`]. Objectives that
    /// profile the scale out need it to report the fitted covariance.
    fn scaled(&self, c: f64) -> Option<Self>;
}

/// `P = (K + diag(d))⁻¹` and the diagonal of `K P` (see
/// [`LooCovariance::inverse_plus_diagonal`](crate::models::robust::LooCovariance::inverse_plus_diagonal)).
#[derive(Clone, Debug)]
pub struct InversePlusDiagonal {
    /// `P`, in full (both triangles).
    pub p: Mat<f64>,
    /// `[K P]_jj`, summed as `Σ_i K_ij P_ij`: unlike `1 − d_j P_jj` it does not cancel when
    /// `d_j` is huge (the effective noise of an outlier in the robust GPs).
    pub kp_diag: Vec<f64>,
}

/// The derivative of `P = (K + diag(d))⁻¹` along one covariance parameter, through what
/// [`LooCovariance::inverse_derivatives`](crate::models::robust::LooCovariance::inverse_derivatives)
/// returns (`∂P = −P ∂K P`).
#[derive(Clone, Debug)]
pub struct InverseDerivative {
    /// `[P ∂K P]_jj`.
    pub diag: Vec<f64>,
    /// `P ∂K P V` (n × q).
    pub times_v: Mat<f64>,
}

/// [`InversePlusDiagonal`] by a Cholesky factorisation of the dense `K + diag(d)`.
pub(crate) fn dense_inverse_plus_diagonal(
    k: &Mat<f64>,
    d: &[f64],
    what: &str,
    par: Parallelism,
) -> Result<InversePlusDiagonal, LinalgError> {
    let build = || {
        let mut q = k.clone();
        for (j, dj) in d.iter().enumerate() {
            q[(j, j)] += dj;
        }
        q
    };
    let p = Cholesky::factor_owned(build(), what, par, build)?.inverse();
    let kp_diag = (0..p.ncols())
        .map(|j| sum_pairs(k.col_as_slice(j), p.col_as_slice(j), |a, b| a * b))
        .collect();
    Ok(InversePlusDiagonal { p, kp_diag })
}

impl Covariance for Kernel {
    fn as_kernel(&self) -> Option<&Kernel> {
        Some(self)
    }
    fn matrix(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        Kernel::matrix(self, x)
    }
    fn matrix_lower(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        Kernel::matrix_lower(self, x)
    }
    fn cross(&self, x1: MatRef<'_, f64>, x2: MatRef<'_, f64>) -> Mat<f64> {
        Kernel::cross(self, x1, x2)
    }
    fn diag(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        Kernel::diag(self, x)
    }
    fn check_inputs(&self, x: MatRef<'_, f64>) -> Result<(), KernelError> {
        self.validate(x.ncols())
    }
    fn grad_inputs_cross(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
    ) -> Mat<f64> {
        Kernel::grad_inputs_cross(self, x1, x2, w)
    }
    fn n_params(&self) -> usize {
        Kernel::n_params(self)
    }
    fn params(&self) -> Vec<f64> {
        self.log_params()
    }
    fn set_params(&mut self, p: &[f64]) -> Result<(), KernelError> {
        self.set_log_params(p)
    }
    fn bounds(&self) -> Vec<(f64, f64)> {
        self.log_bounds()
    }
    fn param_names(&self) -> Vec<String> {
        Kernel::param_names(self)
    }
    fn grad_contract(&self, x: MatRef<'_, f64>, w: MatRef<'_, f64>, out: &mut [f64]) {
        Kernel::grad_contract(self, x, w, out)
    }
    fn scaled(&self, c: f64) -> Option<Self> {
        let i = self.overall_scale_index()?;
        let mut p = self.log_params();
        p[i] += c.ln();
        let mut k = self.clone();
        k.set_log_params(&p).ok()?;
        Some(k)
    }
}
