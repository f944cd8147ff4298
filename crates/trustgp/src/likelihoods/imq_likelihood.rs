//! The robust IMQ pseudo-likelihood of RCGP, RCSVGP and RCaGP (spec `rcagp.md` §2.2): the
//! weighted score-matching loss of the Gaussian `N(y; f, σ²)`,
//!
//! ```text
//! log p^w(y | f) = −[w² (f − y)²/σ⁴ + (2/σ²) ∂_y(w² (f − y))]
//!                = −w² e²/σ⁴ − 2 w² g e/σ² + 2 w²/σ²,     e = f − y,
//! ```
//!
//! with the IMQ weight `w(y)` of [`imq`](super::imq) centred on `γ` (the prior mean at the
//! observation). It is quadratic in `f` with curvature `−P = −2w²/σ⁴`, so its posterior is
//! conjugate, the Laplace approximation is exact and the expectation under `N(μ, v)` is
//! `ℓ(μ) + ½ v ℓ''`. The parameter is `log σ²` with `β` and `c` fixed (the RCSVGP/RCaGP
//! convention); with the constant weight `w ≡ σ/√2` the loss is the Gaussian log-density plus
//! `1 + ½ log(2πσ²)`, so every posterior equals the Gaussian one. It is a loss, not a density
//! of `y`: predictions of `y` use the Gaussian observation model it robustifies.

use super::imq::ImqWeighting;
use super::{
    check_count, ExpectedGrad, Gaussian, LatentDerivatives, Likelihood, LikelihoodError,
    ParamDerivatives,
};

/// The IMQ pseudo-likelihood of one observation (or several sharing a centre).
#[derive(Clone, Debug, PartialEq)]
pub struct Imq {
    gaussian: Gaussian,
    weighting: ImqWeighting,
    centre: f64,
}

impl Imq {
    /// The pseudo-likelihood with noise variance `sigma2`, weighting `weighting` and weight
    /// centre `centre`.
    ///
    /// # Errors
    /// If `sigma2` is not a positive finite variance, or the IMQ `β` or `c` is not positive and
    /// finite.
    pub fn new(sigma2: f64, weighting: ImqWeighting, centre: f64) -> Result<Self, LikelihoodError> {
        if let ImqWeighting::Imq { beta, c } = weighting {
            if !(beta.is_finite() && beta > 0.0 && c.is_finite() && c > 0.0) {
                return Err(LikelihoodError(format!(
                    "the IMQ weight needs a positive finite β and c, got β = {beta}, c = {c}"
                )));
            }
        }
        Ok(Imq {
            gaussian: Gaussian::new(sigma2)?,
            weighting,
            centre,
        })
    }

    /// `(w², w² g)` of the observation `y`.
    fn weight_terms(&self, y: f64) -> (f64, f64) {
        let (log_w2, g) = self
            .weighting
            .log_w2_and_g(y - self.centre, self.gaussian.noise());
        let w2 = log_w2.exp();
        (w2, w2 * g)
    }
}

impl Likelihood for Imq {
    fn name(&self) -> &'static str {
        "imq"
    }

    fn log_density(&self, y: f64, f: f64) -> f64 {
        self.latent_derivatives(y, f).value
    }

    fn latent_derivatives(&self, y: f64, f: f64) -> LatentDerivatives {
        let s2 = self.gaussian.noise();
        let (a, b) = self.weight_terms(y);
        let e = f - y;
        LatentDerivatives {
            value: -a * e * e / (s2 * s2) - 2.0 * b * e / s2 + 2.0 * a / s2,
            d1: -2.0 * a * e / (s2 * s2) - 2.0 * b / s2,
            d2: -2.0 * a / (s2 * s2),
            d3: 0.0,
        }
    }

    fn param_names(&self) -> &'static [&'static str] {
        &["noise"]
    }

    fn natural(&self) -> Vec<f64> {
        self.gaussian.natural()
    }

    fn unconstrained(&self) -> Vec<f64> {
        self.gaussian.unconstrained()
    }

    fn set_unconstrained(&mut self, u: &[f64]) -> Result<(), LikelihoodError> {
        check_count(self.name(), 1, u)?;
        self.gaussian.set_unconstrained(u)
    }

    fn bounds(&self) -> Vec<(f64, f64)> {
        self.gaussian.bounds()
    }

    fn param_derivatives(&self, y: f64, f: f64, out: &mut [ParamDerivatives]) {
        let s2 = self.gaussian.noise();
        let e = f - y;
        out[0] = match self.weighting {
            // w² and g do not depend on σ²: differentiate the powers of σ² in the loss.
            ImqWeighting::Imq { .. } => {
                let (a, b) = self.weight_terms(y);
                ParamDerivatives {
                    value: 2.0 * a * e * e / (s2 * s2) + 2.0 * b * e / s2 - 2.0 * a / s2,
                    d1: 4.0 * a * e / (s2 * s2) + 2.0 * b / s2,
                    d2: 4.0 * a / (s2 * s2),
                }
            }
            // w² = σ²/2: the loss is −e²/(2σ²) + 1.
            ImqWeighting::Constant => ParamDerivatives {
                value: e * e / (2.0 * s2),
                d1: e / s2,
                d2: 1.0 / s2,
            },
        };
    }

    fn predict(&self, mu: f64, v: f64) -> (f64, f64) {
        self.gaussian.predict(mu, v)
    }

    fn log_predictive_density(&self, y: f64, mu: f64, v: f64) -> f64 {
        self.gaussian.log_predictive_density(y, mu, v)
    }

    /// Closed form: the loss is quadratic in `f`, so `E[ℓ] = ℓ(μ) + ½ v ℓ''` and the same holds
    /// for its parameter derivatives.
    fn expected_log_lik(
        &self,
        y: &[f64],
        mu: &[f64],
        v: &[f64],
        mut grad: Option<ExpectedGrad<'_>>,
    ) -> f64 {
        let mut total = 0.0;
        let mut p = [ParamDerivatives::default()];
        for j in 0..y.len() {
            let d = self.latent_derivatives(y[j], mu[j]);
            total += d.value + 0.5 * v[j] * d.d2;
            if let Some(g) = grad.as_mut() {
                g.d_mu[j] = d.d1;
                g.d_v[j] = 0.5 * d.d2;
                self.param_derivatives(y[j], mu[j], &mut p);
                g.d_params[0] += p[0].value + 0.5 * v[j] * p[0].d2;
            }
        }
        total
    }
}
