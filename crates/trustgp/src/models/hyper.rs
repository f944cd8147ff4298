//! The hyperparameters of a Gaussian-likelihood GP as one flat unconstrained vector.
//!
//! Order: the kernel's log-parameters (depth-first over the expression), then `ln σ²` of the
//! noise, then the mean's parameters. For `const * se` plus noise this is exactly
//! scikit-learn's `theta` of `C * RBF + WhiteKernel`.

use crate::kernels::Kernel;
use crate::means::Mean;

use super::ModelError;

/// Bounds on the noise variance (natural units), as scikit-learn's `WhiteKernel` but with a
/// lower floor that still keeps `K + σ²I` well conditioned on standardised targets.
pub const NOISE_BOUNDS: (f64, f64) = (1e-6, 1e5);

/// Kernel, mean and Gaussian noise variance.
#[derive(Clone, Debug, PartialEq)]
pub struct GpHyper {
    /// The covariance function.
    pub kernel: Kernel,
    /// The prior mean.
    pub mean: Mean,
    /// The noise variance σ².
    pub noise: f64,
}

impl GpHyper {
    /// Number of entries of the flat vector.
    pub fn n_params(&self) -> usize {
        self.kernel.n_params() + 1 + self.mean.n_params()
    }

    /// Index of `ln σ²` in the flat vector.
    pub fn noise_index(&self) -> usize {
        self.kernel.n_params()
    }

    /// Names of the entries of the flat vector.
    pub fn param_names(&self) -> Vec<String> {
        let mut names = self.kernel.param_names();
        names.push("noise".to_string());
        names.extend(self.mean.param_names());
        names
    }

    /// The flat unconstrained vector.
    pub fn to_vec(&self) -> Vec<f64> {
        let mut v = self.kernel.log_params();
        v.push(self.noise.ln());
        v.extend(self.mean.params());
        v
    }

    /// A copy with the parameters set from a flat vector.
    pub fn with_vec(&self, v: &[f64]) -> Result<GpHyper, ModelError> {
        if v.len() != self.n_params() {
            return Err(ModelError::Invalid(format!(
                "expected {} hyperparameters, got {}",
                self.n_params(),
                v.len()
            )));
        }
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(ModelError::Invalid(format!(
                "hyperparameter {} is not finite ({})",
                self.param_names()[i],
                v[i]
            )));
        }
        let k = self.kernel.n_params();
        let mut out = self.clone();
        out.kernel.set_log_params(&v[..k])?;
        out.noise = v[k].exp();
        out.mean.set_params(&v[k + 1..])?;
        Ok(out)
    }

    /// Optimisation bounds of the flat vector.
    pub fn bounds(&self) -> Vec<(f64, f64)> {
        let mut b = self.kernel.log_bounds();
        b.push((NOISE_BOUNDS.0.ln(), NOISE_BOUNDS.1.ln()));
        b.extend(std::iter::repeat_n(
            (f64::NEG_INFINITY, f64::INFINITY),
            self.mean.n_params(),
        ));
        b
    }
}
