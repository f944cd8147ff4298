//! The Gaussian likelihood `p(y | f) = N(y; f, σ²)`, whose expectation is closed-form:
//! `E[log p] = −½ log(2πσ²) − ((y − μ)² + v) / (2σ²)`. Parametrised by `log σ²`.

use std::f64::consts::PI;

use super::likelihood::{check_variance, ExpectedGrad, Likelihood};
use crate::models::hyper::NOISE_BOUNDS;
use crate::models::ModelError;

/// The Gaussian likelihood with noise variance σ².
#[derive(Clone, Debug)]
pub(super) struct Gaussian {
    noise: f64,
}

impl Gaussian {
    pub(super) fn new(noise: f64) -> Result<Self, ModelError> {
        Ok(Gaussian {
            noise: check_variance("the noise variance σ²", noise)?,
        })
    }

    pub(super) fn natural_from(u: &[f64]) -> Vec<f64> {
        vec![u[0].exp()]
    }

    /// The library's noise-variance box, in log space.
    pub(super) fn bounds() -> Vec<(f64, f64)> {
        vec![(NOISE_BOUNDS.0.ln(), NOISE_BOUNDS.1.ln())]
    }
}

impl Likelihood for Gaussian {
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

    fn predictive_noise(&self) -> f64 {
        self.noise
    }

    fn natural(&self) -> Vec<f64> {
        vec![self.noise]
    }

    fn unconstrained(&self) -> Vec<f64> {
        vec![self.noise.ln()]
    }
}

#[cfg(test)]
mod tests {
    use super::super::quadrature::GaussHermite;
    use super::*;

    /// The closed form equals the 20-node quadrature of the log density (a quadratic in f, so
    /// the rule is exact), and its derivatives equal central differences.
    #[test]
    fn closed_form_matches_quadrature_and_differences() {
        let lik = Gaussian::new(0.37).unwrap();
        let (y, mu, v): ([f64; 2], [f64; 2], [f64; 2]) = ([0.4, -1.2], [0.1, 0.5], [0.8, 2.5e-3]);
        let log_pdf =
            |y: f64, f: f64, s2: f64| -0.5 * (2.0 * PI * s2).ln() - (y - f).powi(2) / (2.0 * s2);
        let quad: f64 = (0..2)
            .map(|j| {
                GaussHermite::get()
                    .positive_pairs()
                    .map(|(t, w)| {
                        let s = (2.0 * v[j]).sqrt() * t;
                        w * (log_pdf(y[j], mu[j] + s, 0.37) + log_pdf(y[j], mu[j] - s, 0.37))
                    })
                    .sum::<f64>()
            })
            .sum();
        let (mut d_mu, mut d_v, mut d_p) = ([0.0; 2], [0.0; 2], [0.0]);
        let grad = ExpectedGrad {
            d_mu: &mut d_mu,
            d_v: &mut d_v,
            d_params: &mut d_p,
        };
        let value = lik.expected_log_lik(&y, &mu, &v, Some(grad));
        assert!(
            (value - quad).abs() < 1e-13 * quad.abs(),
            "{value} vs {quad}"
        );
        let h: f64 = 1e-6;
        let at = |mu: [f64; 2], v: [f64; 2], s2: f64| {
            Gaussian::new(s2)
                .unwrap()
                .expected_log_lik(&y, &mu, &v, None)
        };
        let fd_p = (at(mu, v, 0.37 * h.exp()) - at(mu, v, 0.37 * (-h).exp())) / (2.0 * h);
        assert!((fd_p - d_p[0]).abs() < 1e-8);
        for j in 0..2 {
            let (mut up, mut down) = (mu, mu);
            up[j] += h;
            down[j] -= h;
            assert!(((at(up, v, 0.37) - at(down, v, 0.37)) / (2.0 * h) - d_mu[j]).abs() < 1e-8);
            let (mut up, mut down) = (v, v);
            up[j] += 1e-7;
            down[j] -= 1e-7;
            assert!(((at(mu, up, 0.37) - at(mu, down, 0.37)) / 2e-7 - d_v[j]).abs() < 1e-7);
        }
        assert_eq!(lik.predictive_noise(), 0.37);
        assert!(Gaussian::new(0.0).is_err() && Gaussian::new(f64::NAN).is_err());
    }
}
