//! The posterior of a fitted latent model, behind one interface.
//!
//! Every fitted latent model (exact GP, RCGP, MOGP, MO-RCGP, SGPR, RCSVGP, SVGP, CaGP, RCaGP
//! and the Student-t GP) is a [`Posterior`]: marginal mean and variance of the latent function
//! at new inputs, the joint covariance, seeded joint samples, and the gradients of the mean and
//! the variance with respect to the input, and the joint mean and covariance of a batch with
//! their gradients in the batch's inputs ([`JointGradients`]). Acquisition functions, verification and kernel
//! selection only talk to this interface. Everything is in the model's own units (standardised,
//! where the model was fitted on standardised data); observation noise belongs to the
//! likelihood, not here.
//!
//! All of today's models share the **linear-Gaussian form** ([`LinearGaussian`])
//!
//! ```text
//! mean(x) = m(x) + k(x, Z)ᵀ t,      cov(x, x') = k(x, x') − k(x, Z)ᵀ S k(Z, x'),
//! ```
//!
//! over support points `Z`, so they implement [`LinearGaussianForm`] (hand out their form,
//! borrowing their own factors) and get [`Posterior`] from it: the predictive algebra and the
//! input gradients are written once, in [`LinearGaussian`].
//!
//! Multi-output models work on task-indexed inputs (the input columns followed by the output
//! index, see [`MultiOutputKernel`](crate::kernels::MultiOutputKernel)); [`with_task`] builds
//! them, and the gradient of the task column is zero.

mod linear_gaussian;
mod pathwise;
#[cfg(test)]
mod tests;

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use rand_distr::StandardNormal;

pub use self::linear_gaussian::{LinearGaussian, Term};
pub use self::pathwise::PathwiseSamples;
use crate::kernels::Covariance;
use crate::linalg::{Cholesky, Parallelism};
use crate::means::PriorMean;
use crate::models::ModelError;

/// Posterior marginals at a set of test points.
#[derive(Clone, Debug, PartialEq)]
pub struct Marginals {
    /// Posterior mean of the latent function.
    pub mean: Vec<f64>,
    /// Posterior variance of the latent function (`k(x,x)` includes any `white` term).
    pub var: Vec<f64>,
}

/// The joint Gaussian posterior of the latent function at a set of test points.
#[derive(Clone, Debug, PartialEq)]
pub struct JointGaussian {
    /// The mean vector (one entry per test point).
    pub mean: Vec<f64>,
    /// The covariance matrix (m×m, symmetric; not clamped, so it may be semi-definite).
    pub cov: Mat<f64>,
}

/// Marginals with their gradients with respect to the test inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct MarginalGradients {
    /// The marginal means and variances.
    pub marginals: Marginals,
    /// `∂mean(x_a)/∂x_{a,c}`: one row per test point, one column per input column.
    pub mean: Mat<f64>,
    /// `∂var(x_a)/∂x_{a,c}` of the unclamped variance `k(x,x) − k(x,Z)ᵀ S k(Z,x)`.
    pub var: Mat<f64>,
}

/// The joint posterior at fixed rows followed by free rows, with its gradients with respect to
/// the free rows (from [`Posterior::joint_gradients`]). The fixed rows are, for instance, the
/// pending points a batch acquisition conditions on; nothing is differentiated in them.
#[derive(Clone, Debug, PartialEq)]
pub struct JointGradients {
    /// How many fixed rows come first (`p`); free row `a` is joint row `p + a`.
    pub fixed: usize,
    /// The joint mean and covariance over all `m = p + q` rows, fixed first.
    pub joint: JointGaussian,
    /// `∂mean(x_a)/∂x_{a,c}` of free row `a` (q × d); the mean at a row depends on no other row.
    pub mean: Mat<f64>,
    /// One m × d matrix per free row `a`: column `c` is the vector `u` with
    /// `∂cov/∂x_{a,c} = u e_{p+a}ᵀ + e_{p+a} uᵀ`, i.e. `u_j = ∂cov(x_a, x_j)/∂x_{a,c}` holding
    /// `x_j` fixed, which counts the diagonal entry `(p+a, p+a)` twice, as it should.
    pub cov: Vec<Mat<f64>>,
}

/// The posterior of the latent function of a fitted model.
pub trait Posterior {
    /// Marginal mean and variance at the rows of `xs`.
    ///
    /// # Errors
    /// [`ModelError`] if `xs` is not a valid input (wrong width, non-finite entries, a task
    /// index out of range).
    fn marginals(&self, xs: MatRef<'_, f64>) -> Result<Marginals, ModelError>;

    /// The joint mean and covariance at the rows of `xs` (forms an m×m matrix).
    ///
    /// # Errors
    /// As for [`Posterior::marginals`].
    fn joint(&self, xs: MatRef<'_, f64>) -> Result<JointGaussian, ModelError>;

    /// The marginals and their gradients with respect to each test input.
    ///
    /// # Errors
    /// As for [`Posterior::marginals`].
    fn marginal_gradients(&self, xs: MatRef<'_, f64>) -> Result<MarginalGradients, ModelError>;

    /// The joint posterior at the rows of `fixed` followed by those of `free`, with its
    /// gradients with respect to every free row (see [`JointGradients`]): what batch
    /// acquisitions differentiate through. `fixed` may have no rows.
    ///
    /// # Errors
    /// [`ModelError`] if the two have different widths, or as for [`Posterior::marginals`].
    fn joint_gradients(
        &self,
        fixed: MatRef<'_, f64>,
        free: MatRef<'_, f64>,
    ) -> Result<JointGradients, ModelError>;

    /// `count` joint samples of the latent function at the rows of `xs` (an m × count matrix,
    /// one sample per column), drawing standard normals from `rng`: `mean + L z` with `L` the
    /// Cholesky factor of the joint covariance (jitter escalated only if it is singular).
    ///
    /// # Errors
    /// As for [`Posterior::marginals`], or if the covariance cannot be factorised.
    fn sample(
        &self,
        xs: MatRef<'_, f64>,
        count: usize,
        rng: &mut dyn RngCore,
    ) -> Result<Mat<f64>, ModelError> {
        let joint = self.joint(xs)?;
        let m = joint.mean.len();
        let chol = Cholesky::factor(
            &joint.cov,
            "joint posterior covariance",
            Parallelism::Sequential,
        )?;
        let z = Mat::from_fn(m, count, |_, _| rng.sample::<f64, _>(StandardNormal));
        let l = Mat::from_fn(m, m, |i, j| if i >= j { chol.l()[(i, j)] } else { 0.0 });
        let mut s = &l * &z;
        for j in 0..count {
            for (i, mi) in joint.mean.iter().enumerate() {
                s[(i, j)] += mi;
            }
        }
        Ok(s)
    }

    /// [`Posterior::sample`] with a generator seeded by `seed`: the same seed gives the same
    /// numbers.
    ///
    /// # Errors
    /// As for [`Posterior::sample`].
    fn sample_seeded(
        &self,
        xs: MatRef<'_, f64>,
        count: usize,
        seed: u64,
    ) -> Result<Mat<f64>, ModelError> {
        self.sample(xs, count, &mut StdRng::seed_from_u64(seed))
    }

    /// `count` pathwise posterior samples at the rows of `xs` (an m × count matrix, one
    /// sample per column), seeded by `seed`: random-feature prior paths with `frequencies`
    /// frequencies each, updated by Matheron's rule (see [`PathwiseSamples`]); linear in the
    /// number of rows, where [`Posterior::sample`] is cubic. Models or kernels without random
    /// features give [`PathwiseSamples::Unsupported`] with the reason.
    ///
    /// # Errors
    /// As for [`Posterior::marginals`], or if `frequencies` is 0.
    fn pathwise_sample(
        &self,
        xs: MatRef<'_, f64>,
        count: usize,
        frequencies: usize,
        seed: u64,
    ) -> Result<PathwiseSamples, ModelError> {
        let _ = (xs, count, frequencies, seed);
        Ok(PathwiseSamples::Unsupported(
            "the model has no linear-Gaussian form over a kernel".into(),
        ))
    }
}

/// A model whose posterior has the linear-Gaussian form; it is a [`Posterior`] through it.
pub trait LinearGaussianForm {
    /// The covariance function of the form.
    type Covariance: Covariance;
    /// The prior mean of the form.
    type Mean: PriorMean;
    /// The form, borrowing the model's factors (cheap: no factorisation, no copy of a matrix).
    fn linear_gaussian(&self) -> LinearGaussian<'_, Self::Covariance, Self::Mean>;
}

impl<P: LinearGaussianForm> Posterior for P {
    fn marginals(&self, xs: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        self.linear_gaussian().marginals(xs)
    }
    fn joint(&self, xs: MatRef<'_, f64>) -> Result<JointGaussian, ModelError> {
        self.linear_gaussian().joint(xs)
    }
    fn marginal_gradients(&self, xs: MatRef<'_, f64>) -> Result<MarginalGradients, ModelError> {
        self.linear_gaussian().marginal_gradients(xs)
    }
    fn joint_gradients(
        &self,
        fixed: MatRef<'_, f64>,
        free: MatRef<'_, f64>,
    ) -> Result<JointGradients, ModelError> {
        self.linear_gaussian().joint_gradients(fixed, free)
    }
    fn pathwise_sample(
        &self,
        xs: MatRef<'_, f64>,
        count: usize,
        frequencies: usize,
        seed: u64,
    ) -> Result<PathwiseSamples, ModelError> {
        pathwise::samples(&self.linear_gaussian(), xs, count, frequencies, seed)
    }
}

/// The task-indexed inputs of output `task` at the rows of `xs` (`xs` with a task column
/// appended), what the multi-output posteriors take.
pub fn with_task(xs: MatRef<'_, f64>, task: usize) -> Mat<f64> {
    let d = xs.ncols();
    Mat::from_fn(xs.nrows(), d + 1, |i, c| {
        if c < d {
            xs[(i, c)]
        } else {
            task as f64
        }
    })
}
