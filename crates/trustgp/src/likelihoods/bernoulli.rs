//! The Bernoulli likelihood of binary classification, labels `y ∈ {−1, +1}`:
//! `p(y | f) = σ(y f)` with the probit link `σ = Φ` or the logit link `σ(z) = 1/(1 + e^{−z})`.
//!
//! With `z = y f` and `y² = 1`:
//!
//! ```text
//! probit: ℓ = log Φ(z),  r = φ(z)/Φ(z):  ℓ' = y r,  ℓ'' = −r (z + r),
//!         ℓ''' = y r [(z + r)(2r + z) − 1]
//! logit:  ℓ = −softplus(−z),  p = σ(z):  ℓ' = y (1 − p),  ℓ'' = −p (1 − p),
//!         ℓ''' = −y p (1 − p)(1 − 2p)
//! ```
//!
//! `log Φ` and the ratio `r` come from the accurate normal helpers of
//! [`normal`](crate::sequential::acquisition::normal): for `z ≤ 0`, `r = √(2/π) / erfcx(−z/√2)`,
//! finite far below where `Φ` underflows. Both log densities are concave (`ℓ'' < 0`), so the
//! Laplace mode is unique and `W > 0`.
//!
//! **Class probability** `P(y = +1) = ∫ σ(f) N(f; μ, v) df`: the probit has the closed form
//! `Φ(μ/√(1 + v))`; the logit has none, and is integrated by the trapezoid rule with a certified
//! error below 10⁻¹² ([`LogitIntegral::Quadrature`], [`super::logistic_normal`]), or, for agreement with scikit-learn, by its approximation
//! ([`LogitIntegral::ErfMixture`], Williams & Barber 1998, App. A): `σ(z) ≈ Σ_k c_k Φ(√2 λ_k z)`
//! with five fixed `(λ_k, c_k)`, whose Gaussian integral is `Σ_k c_k Φ(√2 λ_k μ/√(1 + 2λ_k² v))`.

use std::f64::consts::{PI, SQRT_2};

use super::logistic_normal::{logistic, logistic_normal};
use super::{check_count, LatentDerivatives, Likelihood, LikelihoodError, ParamDerivatives};
use crate::sequential::acquisition::normal::{cdf, erfcx, log_cdf, pdf};
use crate::sequential::acquisition::softplus;

/// The link `σ` of `p(y | f) = σ(y f)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Link {
    /// `σ = Φ`, the standard normal distribution function.
    Probit,
    /// `σ(z) = 1/(1 + e^{−z})`, the logistic function.
    Logit,
}

impl Link {
    /// The link's name (`probit`, `logit`).
    pub fn name(self) -> &'static str {
        match self {
            Link::Probit => "probit",
            Link::Logit => "logit",
        }
    }
}

/// How the logit's class probability `∫ σ(f) N(f; μ, v) df` is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogitIntegral {
    /// The trapezoid rule with a certified error bound ([`super::logistic_normal`]): within
    /// 10⁻¹² of the integral for latent standard deviations up to about 300.
    #[default]
    Quadrature,
    /// scikit-learn's mixture of five probits (what `GaussianProcessClassifier.predict_proba`
    /// uses); off by up to about 1e-3 from the integral.
    ErfMixture,
}

/// The scales `λ_k` of scikit-learn's erf mixture (`σ(z) ≈ Σ c_k (1 + erf(λ_k z))/2`).
const MIXTURE_LAMBDAS: [f64; 5] = [0.41, 0.4, 0.37, 0.44, 0.39];
/// Its weights `c_k`, fitted by least squares at `z ∈ {0, 0.6, 2, 3.5, 4.5, ∞}`.
const MIXTURE_COEFS: [f64; 5] = [
    -1854.8214151,
    3516.89893646,
    221.29346712,
    128.12323805,
    -2010.49422654,
];

/// The Bernoulli likelihood with a probit or logit link; it has no parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bernoulli {
    link: Link,
    logit_integral: LogitIntegral,
}

impl Bernoulli {
    /// The likelihood with link `link` (logit class probabilities by quadrature).
    pub fn new(link: Link) -> Self {
        Bernoulli {
            link,
            logit_integral: LogitIntegral::default(),
        }
    }

    /// The same likelihood with the logit's class probability computed by `integral` (no
    /// effect on the probit, whose integral is closed-form).
    pub fn with_logit_integral(self, integral: LogitIntegral) -> Self {
        Bernoulli {
            logit_integral: integral,
            ..self
        }
    }

    /// The link.
    pub fn link(&self) -> Link {
        self.link
    }

    /// How the logit's class probability is computed.
    pub fn logit_integral(&self) -> LogitIntegral {
        self.logit_integral
    }

    /// `P(y = +1)` when `f ~ N(mu, v)` (`v ≥ 0`; a negative `v` is read as 0).
    pub fn class_probability(&self, mu: f64, v: f64) -> f64 {
        let v = v.max(0.0);
        match (self.link, self.logit_integral) {
            (Link::Probit, _) => cdf(mu / (1.0 + v).sqrt()),
            (Link::Logit, LogitIntegral::Quadrature) => logistic_normal(mu, v).value,
            (Link::Logit, LogitIntegral::ErfMixture) => {
                let p: f64 = MIXTURE_LAMBDAS
                    .iter()
                    .zip(MIXTURE_COEFS)
                    .map(|(&l, c)| c * cdf(SQRT_2 * l * mu / (1.0 + 2.0 * l * l * v).sqrt()))
                    .sum();
                // The weights' cancellation can leave p a rounding error outside [0, 1].
                p.clamp(0.0, 1.0)
            }
        }
    }
}

/// `φ(z)/Φ(z)`, accurate where `Φ(z)` underflows.
pub(crate) fn inverse_mills(z: f64) -> f64 {
    if z <= 0.0 {
        (2.0 / PI).sqrt() / erfcx(-z / SQRT_2)
    } else {
        pdf(z) / cdf(z)
    }
}

impl Likelihood for Bernoulli {
    fn name(&self) -> &'static str {
        "bernoulli"
    }

    fn log_density(&self, y: f64, f: f64) -> f64 {
        let z = y * f;
        match self.link {
            Link::Probit => log_cdf(z),
            Link::Logit => -softplus(-z),
        }
    }

    fn latent_derivatives(&self, y: f64, f: f64) -> LatentDerivatives {
        let z = y * f;
        match self.link {
            Link::Probit => {
                let r = inverse_mills(z);
                let zr = z + r;
                LatentDerivatives {
                    value: log_cdf(z),
                    d1: y * r,
                    d2: -r * zr,
                    d3: y * r * (zr * (2.0 * r + z) - 1.0),
                }
            }
            Link::Logit => {
                let (p, q) = (logistic(z), logistic(-z));
                LatentDerivatives {
                    value: -softplus(-z),
                    d1: y * q,
                    d2: -p * q,
                    d3: -y * p * q * (q - p),
                }
            }
        }
    }

    fn param_names(&self) -> &'static [&'static str] {
        &[]
    }

    fn natural(&self) -> Vec<f64> {
        Vec::new()
    }

    fn unconstrained(&self) -> Vec<f64> {
        Vec::new()
    }

    fn set_unconstrained(&mut self, u: &[f64]) -> Result<(), LikelihoodError> {
        check_count(self.name(), 0, u)
    }

    fn bounds(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }

    fn param_derivatives(&self, _y: f64, _f: f64, _out: &mut [ParamDerivatives]) {}

    /// A label `y ∈ {−1, +1}` has mean `2p − 1` and variance `4p(1 − p)`, `p = P(y = +1)`.
    fn predict(&self, mu: f64, v: f64) -> (f64, f64) {
        let p = self.class_probability(mu, v);
        (2.0 * p - 1.0, 4.0 * p * (1.0 - p))
    }

    /// `log P(y | μ, v)`: of the class probability (the closed form for the probit, otherwise
    /// [`Bernoulli::class_probability`]'s integral).
    fn log_predictive_density(&self, y: f64, mu: f64, v: f64) -> f64 {
        match self.link {
            Link::Probit => log_cdf(y * mu / (1.0 + v.max(0.0)).sqrt()),
            Link::Logit => self.class_probability(y * mu, v).ln(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POINTS: [f64; 9] = [-40.0, -8.0, -2.5, -0.3, 0.0, 0.7, 3.0, 9.0, 30.0];

    fn both() -> [Bernoulli; 2] {
        [Bernoulli::new(Link::Probit), Bernoulli::new(Link::Logit)]
    }

    #[test]
    fn latent_derivatives_match_central_differences() {
        for lik in both() {
            for y in [-1.0, 1.0] {
                for f in POINTS {
                    let d = lik.latent_derivatives(y, f);
                    assert_eq!(d.value, lik.log_density(y, f));
                    let h = 1e-5 * (1.0 + f.abs());
                    let (up, down) = (
                        lik.latent_derivatives(y, f + h),
                        lik.latent_derivatives(y, f - h),
                    );
                    let fd = |a: f64, b: f64| (a - b) / (2.0 * h);
                    let name = lik.link().name();
                    for (what, fd, exact) in [
                        ("d1", fd(up.value, down.value), d.d1),
                        ("d2", fd(up.d1, down.d1), d.d2),
                        ("d3", fd(up.d2, down.d2), d.d3),
                    ] {
                        assert!(
                            (fd - exact).abs() <= 1e-6 * (1.0 + exact.abs()),
                            "{name} {what} at y={y} f={f}: {exact} vs FD {fd}"
                        );
                    }
                    assert!(d.d2 < 0.0 || (f * y > 25.0), "concave: {name} {f}");
                }
            }
        }
    }

    /// The densities against direct formulas where those are accurate, and the far tails
    /// against their asymptotes.
    #[test]
    fn log_densities_are_accurate_in_the_tails() {
        let probit = Bernoulli::new(Link::Probit);
        let logit = Bernoulli::new(Link::Logit);
        for f in [-3.0f64, -0.5, 0.0, 1.2, 4.0] {
            assert!((probit.log_density(1.0, f) - cdf(f).ln()).abs() < 1e-14);
            let direct = (1.0 / (1.0 + (-f).exp())).ln();
            assert!((logit.log_density(1.0, f) - direct).abs() < 1e-14);
            assert_eq!(probit.log_density(-1.0, f), probit.log_density(1.0, -f));
        }
        // log Φ(z) ≈ −z²/2 − ln(−z √(2π)) − 1/z² far below zero; r ≈ −z − 1/z.
        let z = -40.0;
        let asym = -0.5 * z * z - (-z * (2.0 * PI).sqrt()).ln() - 1.0 / (z * z);
        assert!((probit.log_density(1.0, z) - asym).abs() < 1e-5);
        let r = probit.latent_derivatives(1.0, z).d1;
        assert!((r - (-z - 1.0 / z)).abs() < 1e-4, "{r}");
        // log σ(z) ≈ z far below zero, ≈ −e^{−z} far above.
        assert!((logit.log_density(1.0, -800.0) + 800.0).abs() < 1e-12);
        assert!((logit.log_density(1.0, 40.0) + (-40.0f64).exp()).abs() < 1e-30);
    }

    /// `∫ σ(f) N(f; μ, v) df` by the trapezoid rule on ±14 standard deviations.
    fn brute_force(sigma: impl Fn(f64) -> f64, mu: f64, v: f64) -> f64 {
        let (sd, n) = (v.sqrt(), 20_000);
        let step = 28.0 * sd / n as f64;
        (0..=n)
            .map(|i| {
                let f = mu - 14.0 * sd + i as f64 * step;
                let w = if i == 0 || i == n { 0.5 } else { 1.0 };
                w * sigma(f) * (-(f - mu).powi(2) / (2.0 * v)).exp()
            })
            .sum::<f64>()
            * step
            / (2.0 * PI * v).sqrt()
    }

    #[test]
    fn class_probabilities_match_brute_force_integrals() {
        let probit = Bernoulli::new(Link::Probit);
        let logit = Bernoulli::new(Link::Logit);
        let mixture = logit.with_logit_integral(LogitIntegral::ErfMixture);
        for (mu, v) in [
            (0.0, 1.0),
            (0.8, 0.3),
            (-2.0, 2.5),
            (3.0, 0.01),
            (1.5, 6.0),
            (5.0, 14.5),
        ] {
            let exact = brute_force(cdf, mu, v);
            assert!(
                (probit.class_probability(mu, v) - exact).abs() < 1e-12,
                "probit {mu} {v}"
            );
            let exact = brute_force(logistic, mu, v);
            // The certified trapezoid rule: as accurate as the brute force itself.
            let q = logit.class_probability(mu, v);
            assert!((q - exact).abs() < 1e-11, "logit {mu} {v}: {q} vs {exact}");
            // scikit-learn's erf mixture is a least-squares fit: within 2e-3 of the integral.
            let m = mixture.class_probability(mu, v);
            assert!((m - exact).abs() < 2e-3, "mixture {mu} {v}: {m} vs {exact}");
        }
        // Symmetry P(y = +1 | μ) = 1 − P(y = +1 | −μ), and the v = 0 limit σ(μ).
        for lik in [probit, logit, mixture] {
            let (p, q) = (
                lik.class_probability(0.9, 0.7),
                lik.class_probability(-0.9, 0.7),
            );
            // The mixture's weights sum to 1 − 1.0e-8, so it is symmetric to that.
            assert!((p + q - 1.0).abs() < 2e-8, "{p} + {q}");
        }
        assert!((logit.class_probability(0.9, 0.0) - logistic(0.9)).abs() < 1e-15);
        assert!((probit.class_probability(0.9, 0.0) - cdf(0.9)).abs() < 1e-15);
        assert!((mixture.class_probability(0.9, 0.0) - logistic(0.9)).abs() < 2e-3);
    }

    /// The mixture's integral formula against its own integrand integrated by brute force:
    /// `Σ c_k Φ(√2 λ_k μ/√(1 + 2λ_k² v))` is exactly `∫ Σ c_k Φ(√2 λ_k f) N(f; μ, v) df`.
    #[test]
    fn erf_mixture_integral_is_exact_for_its_integrand() {
        let mixture = Bernoulli::new(Link::Logit).with_logit_integral(LogitIntegral::ErfMixture);
        let integrand = |f: f64| {
            MIXTURE_LAMBDAS
                .iter()
                .zip(MIXTURE_COEFS)
                .map(|(&l, c)| c * cdf(SQRT_2 * l * f))
                .sum::<f64>()
        };
        for (mu, v) in [(0.4, 0.5), (-1.3, 3.0)] {
            let exact = brute_force(integrand, mu, v);
            assert!((mixture.class_probability(mu, v) - exact).abs() < 1e-9);
        }
    }

    #[test]
    fn predictive_moments_and_density_of_a_label() {
        for lik in both() {
            let (mu, v) = (0.6, 1.4);
            let p = lik.class_probability(mu, v);
            let (m, var) = lik.predict(mu, v);
            assert!((m - (2.0 * p - 1.0)).abs() < 1e-15);
            assert!((var - (1.0 - m * m)).abs() < 1e-15);
            assert!((lik.log_predictive_density(1.0, mu, v) - p.ln()).abs() < 1e-14);
            assert!((lik.log_predictive_density(-1.0, mu, v) - (1.0 - p).ln()).abs() < 1e-12);
            let mut none = lik;
            assert!(none.set_unconstrained(&[]).is_ok());
            assert!(none.set_unconstrained(&[1.0]).is_err());
        }
    }
}
