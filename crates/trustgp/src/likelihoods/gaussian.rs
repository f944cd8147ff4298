//! The Gaussian likelihood `p(y | f) = N(y; f, σ²)`, parametrised by `log σ²`. Everything is
//! closed-form: the expectation `E[log p] = −½ log(2πσ²) − ((y − μ)² + v) / (2σ²)` and the
//! predictive `y ~ N(μ, v + σ²)`.

use std::f64::consts::PI;

use super::{
    check_count, check_variance, ExpectedGrad, LatentDerivatives, Likelihood, LikelihoodError,
    ParamDerivatives,
};
use crate::models::hyper::NOISE_BOUNDS;

/// The Gaussian likelihood with noise variance σ².
#[derive(Clone, Debug, PartialEq)]
pub struct Gaussian {
    noise: f64,
}

impl Gaussian {
    /// The likelihood with noise variance `noise`.
    ///
    /// # Errors
    /// If `noise` is not a positive finite number.
    pub fn new(noise: f64) -> Result<Self, LikelihoodError> {
        Ok(Gaussian {
            noise: check_variance("the noise variance σ²", noise)?,
        })
    }

    /// The likelihood of a fitted model with noise variance `noise`, unchecked: a fitted
    /// model's noise passed its own checks, and predictions from a model file with a
    /// non-positive noise come out non-finite, which the estimators report.
    pub(crate) fn fitted(noise: f64) -> Self {
        Gaussian { noise }
    }

    /// The noise variance σ².
    pub fn noise(&self) -> f64 {
        self.noise
    }
}

impl Likelihood for Gaussian {
    fn name(&self) -> &'static str {
        "gaussian"
    }

    fn log_density(&self, y: f64, f: f64) -> f64 {
        -0.5 * (2.0 * PI * self.noise).ln() - (y - f).powi(2) / (2.0 * self.noise)
    }

    fn latent_derivatives(&self, y: f64, f: f64) -> LatentDerivatives {
        LatentDerivatives {
            value: self.log_density(y, f),
            d1: (y - f) / self.noise,
            d2: -1.0 / self.noise,
            d3: 0.0,
        }
    }

    fn param_names(&self) -> &'static [&'static str] {
        &["noise"]
    }

    fn natural(&self) -> Vec<f64> {
        vec![self.noise]
    }

    fn unconstrained(&self) -> Vec<f64> {
        vec![self.noise.ln()]
    }

    fn set_unconstrained(&mut self, u: &[f64]) -> Result<(), LikelihoodError> {
        check_count(self.name(), 1, u)?;
        *self = Gaussian::new(u[0].exp())?;
        Ok(())
    }

    /// The library's noise-variance box, in log space.
    fn bounds(&self) -> Vec<(f64, f64)> {
        vec![(NOISE_BOUNDS.0.ln(), NOISE_BOUNDS.1.ln())]
    }

    fn param_derivatives(&self, y: f64, f: f64, out: &mut [ParamDerivatives]) {
        let (r, s2) = (y - f, self.noise);
        out[0] = ParamDerivatives {
            value: -0.5 + 0.5 * r * r / s2,
            d1: -r / s2,
            d2: 1.0 / s2,
        };
    }

    fn predict(&self, mu: f64, v: f64) -> (f64, f64) {
        (mu, v + self.noise)
    }

    fn log_predictive_density(&self, y: f64, mu: f64, v: f64) -> f64 {
        let var = v + self.noise;
        -0.5 * (2.0 * PI * var).ln() - (y - mu).powi(2) / (2.0 * var)
    }

    fn expected_log_lik(
        &self,
        y: &[f64],
        mu: &[f64],
        v: &[f64],
        grad: Option<ExpectedGrad<'_>>,
    ) -> f64 {
        let s2 = self.noise;
        let sq: Vec<f64> = (0..y.len())
            .map(|j| (y[j] - mu[j]).powi(2) + v[j])
            .collect();
        let total_sq: f64 = sq.iter().sum();
        if let Some(g) = grad {
            for j in 0..y.len() {
                g.d_mu[j] = (y[j] - mu[j]) / s2;
                g.d_v[j] = -0.5 / s2;
            }
            g.d_params[0] += -0.5 * y.len() as f64 + 0.5 * total_sq / s2;
        }
        -0.5 * y.len() as f64 * (2.0 * PI * s2).ln() - 0.5 * total_sq / s2
    }
}
