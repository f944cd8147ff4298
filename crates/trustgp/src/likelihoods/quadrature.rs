//! Gauss–Hermite quadrature: `∫ e^{−t²} g(t) dt ≈ Σ_k w_k g(t_k)`, exact for polynomials of
//! degree < 2K, so `E_{N(f; μ, v)}[g(f)] ≈ Σ_k (w_k/√π) g(μ + √(2v) t_k)`.
//!
//! The nodes are the roots of the Hermite polynomial `H_K`, found by Newton's method on the
//! orthonormal recurrence (Numerical Recipes' `gauher`), which gives every weight to full
//! relative precision — Golub–Welsch eigenvectors would give the smallest weights (~1e-13)
//! only to absolute precision.
//!
//! [`expected_log_lik`] and [`log_predictive_density`] are the quadratures every likelihood
//! without a closed form shares.

use std::f64::consts::PI;
use std::sync::OnceLock;

use super::{ExpectedGrad, Likelihood, ParamDerivatives};

/// Number of nodes (the spec's 20, exact up to degree 39).
pub const NODES: usize = 20;

/// The rule, nodes in ascending order; symmetric: `t_{K−1−k} = −t_k`, `w_{K−1−k} = w_k`.
#[derive(Debug)]
pub struct GaussHermite {
    /// Nodes `t_k`.
    pub nodes: [f64; NODES],
    /// Weights `w_k` of `e^{−t²}` (they sum to `√π`).
    pub weights: [f64; NODES],
}

impl GaussHermite {
    /// The 20-node rule, computed once.
    pub fn get() -> &'static GaussHermite {
        static RULE: OnceLock<GaussHermite> = OnceLock::new();
        RULE.get_or_init(compute)
    }

    /// The positive nodes with their weights normalised for the Gaussian expectation
    /// (`w_k/√π`): the symmetric pairs `±t_k` that the likelihoods evaluate together.
    pub fn positive_pairs(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let scale = 1.0 / PI.sqrt();
        (NODES / 2..NODES).map(move |k| (self.nodes[k], self.weights[k] * scale))
    }
}

/// `Σ_j E_{N(f; μ_j, v_j)}[log p(y_j | f)]` by the 20-node rule, with its derivatives written
/// to `grad` if given. The derivatives are those of the quadrature sum itself (through the
/// nodes), so that an optimiser sees the gradient of exactly the objective it is given. The
/// nodes come in pairs `±t_k`; `∂/∂v` is taken as `Σ w_k t_k (ℓ'(f₊) − ℓ'(f₋)) / √(2v)` per pair,
/// which stays accurate as `v → 0` and has the limit `½ ℓ''(μ)` (Stein's lemma) at `v = 0`.
pub fn expected_log_lik<L: Likelihood + ?Sized>(
    lik: &L,
    y: &[f64],
    mu: &[f64],
    v: &[f64],
    mut grad: Option<ExpectedGrad<'_>>,
) -> f64 {
    let rule = GaussHermite::get();
    let n_params = grad.as_ref().map_or(0, |g| g.d_params.len());
    let zero = ParamDerivatives::default();
    let (mut up_p, mut down_p) = (vec![zero; n_params], vec![zero; n_params]);
    let mut total = 0.0;
    for j in 0..y.len() {
        let s = (2.0 * v[j].max(0.0)).sqrt();
        let (mut d_mu, mut d_v) = (0.0, 0.0);
        for (t, w) in rule.positive_pairs() {
            let (f_up, f_down) = (mu[j] + s * t, mu[j] - s * t);
            let (up, down) = (
                lik.latent_derivatives(y[j], f_up),
                lik.latent_derivatives(y[j], f_down),
            );
            total += w * (up.value + down.value);
            d_mu += w * (up.d1 + down.d1);
            d_v += w * t * (up.d1 - down.d1);
            if let Some(g) = grad.as_mut() {
                lik.param_derivatives(y[j], f_up, &mut up_p);
                lik.param_derivatives(y[j], f_down, &mut down_p);
                for (k, d) in g.d_params.iter_mut().enumerate() {
                    *d += w * (up_p[k].value + down_p[k].value);
                }
            }
        }
        if let Some(g) = grad.as_mut() {
            g.d_mu[j] = d_mu;
            // ∂f±/∂v = ±t/s; at s = 0 the pair difference over s tends to 2t ℓ''(μ).
            g.d_v[j] = if s > 0.0 {
                d_v / s
            } else {
                0.5 * lik.latent_derivatives(y[j], mu[j]).d2
            };
        }
    }
    total
}

/// `log ∫ p(y | f) N(f; μ, v) df` by the 20-node rule, summed in log space (log-sum-exp) so
/// that a density far in its tail does not underflow.
pub fn log_predictive_density<L: Likelihood + ?Sized>(lik: &L, y: f64, mu: f64, v: f64) -> f64 {
    let rule = GaussHermite::get();
    let s = (2.0 * v.max(0.0)).sqrt();
    let scale = 1.0 / PI.sqrt();
    let terms: Vec<f64> = (0..NODES)
        .map(|k| (rule.weights[k] * scale).ln() + lik.log_density(y, mu + s * rule.nodes[k]))
        .collect();
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !top.is_finite() {
        return top;
    }
    top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln()
}

/// Newton's method on `H̃_K`, the orthonormal Hermite polynomial
/// (`H̃_j = t √(2/j) H̃_{j−1} − √((j−1)/j) H̃_{j−2}`, `H̃_0 = π^{−1/4}`), with NR's asymptotic
/// initial guesses; the weight at a root is `2 / H̃'_K(t)²` with `H̃'_K = √(2K) H̃_{K−1}`.
fn compute() -> GaussHermite {
    let n = NODES;
    let nf = n as f64;
    let mut nodes = [0.0; NODES];
    let mut weights = [0.0; NODES];
    let mut z = 0.0;
    // Largest root first; nodes[n−1−i] is the i-th largest.
    for i in 0..n / 2 {
        z = match i {
            0 => (2.0 * nf + 1.0).sqrt() - 1.85575 * (2.0 * nf + 1.0).powf(-0.16667),
            1 => z - 1.14 * nf.powf(0.426) / z,
            2 => 1.86 * z - 0.86 * nodes[n - 1],
            3 => 1.91 * z - 0.91 * nodes[n - 2],
            _ => 2.0 * z - nodes[n + 1 - i],
        };
        // The derivative at the last Newton iterate: the step it gave was below 1e-15, so the
        // root is that close and the weight is exact to rounding.
        let mut derivative = 1.0;
        for _ in 0..100 {
            let (value, below) = orthonormal_hermite(n, z);
            derivative = (2.0 * nf).sqrt() * below;
            let step = value / derivative;
            z -= step;
            if step.abs() <= 1e-15 * z.abs().max(1.0) {
                break;
            }
        }
        nodes[n - 1 - i] = z;
        nodes[i] = -z;
        weights[n - 1 - i] = 2.0 / (derivative * derivative);
        weights[i] = weights[n - 1 - i];
    }
    GaussHermite { nodes, weights }
}

/// `(H̃_K(t), H̃_{K−1}(t))`.
fn orthonormal_hermite(k: usize, t: f64) -> (f64, f64) {
    let (mut p1, mut p2) = (PI.powf(-0.25), 0.0);
    for j in 1..=k {
        let jf = j as f64;
        let p3 = p2;
        p2 = p1;
        p1 = t * (2.0 / jf).sqrt() * p2 - ((jf - 1.0) / jf).sqrt() * p3;
    }
    (p1, p2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `∫ e^{−t²} t^{2j} dt = Γ(j + ½)`, and odd moments vanish.
    #[test]
    fn exact_for_polynomials_up_to_degree_39() {
        let rule = GaussHermite::get();
        let total: f64 = rule.weights.iter().sum();
        assert!((total - PI.sqrt()).abs() < 1e-15, "Σw = {total}");
        let mut gamma = PI.sqrt(); // Γ(½)
        for degree in 0..2 * NODES {
            let q: f64 = (0..NODES)
                .map(|k| rule.weights[k] * rule.nodes[k].powi(degree as i32))
                .sum();
            if degree % 2 == 1 {
                assert!(q.abs() < 1e-13 * gamma, "degree {degree}: {q}");
            } else {
                assert!(
                    (q - gamma).abs() < 1e-13 * gamma,
                    "degree {degree}: {q} vs {gamma}"
                );
                gamma *= degree as f64 / 2.0 + 0.5; // Γ(j + 3/2) = (j + ½) Γ(j + ½)
            }
        }
    }

    /// Reference values (NumPy's `hermgauss(20)`), and the symmetry the likelihoods rely on.
    #[test]
    fn nodes_and_weights_match_reference_values() {
        let rule = GaussHermite::get();
        let reference = [
            (0.245_340_708_300_901_24, 0.462_243_669_600_610_1),
            (2.254_974_002_089_275_7, 3.243_773_342_237_856_7e-3),
            (5.387_480_890_011_233, 2.229_393_645_534_144_7e-13),
        ];
        for (k, (t, w)) in [10, 14, 19].into_iter().zip(reference) {
            assert!(
                (rule.nodes[k] - t).abs() < 1e-14,
                "node {k}: {}",
                rule.nodes[k]
            );
            assert!((rule.weights[k] / w - 1.0).abs() < 1e-12, "weight {k}");
        }
        for k in 0..NODES {
            assert_eq!(rule.nodes[k], -rule.nodes[NODES - 1 - k]);
            assert_eq!(rule.weights[k], rule.weights[NODES - 1 - k]);
            assert!(k == 0 || rule.nodes[k] > rule.nodes[k - 1]);
        }
        let half: f64 = rule.positive_pairs().map(|(_, w)| w).sum();
        assert!((half - 0.5).abs() < 1e-15);
    }
}
