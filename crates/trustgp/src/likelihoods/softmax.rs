//! The softmax (multinomial logit) likelihood over `C` latent values per observation:
//!
//! ```text
//! p(y = c | f) = π_c = exp(f_c) / Σ_k exp(f_k),      log p(y | f) = f_y − log Σ_k exp(f_k),
//! ∇_f log p(y | f) = e_y − π,                          −∇∇_f log p(y | f) = diag(π) − ππᵀ.
//! ```
//!
//! It does not fit the scalar [`Likelihood`](super::Likelihood) trait (one latent value per
//! observation), so it is a type of its own, used by the multi-class Laplace model
//! ([`crate::models::classification::multiclass`]). Everything goes through the log-sum-exp
//! with the largest latent value subtracted first, so no `exp` overflows and `log p` stays
//! exact where one class dominates (`log p → 0⁻` or `→ f_y − f_max`).

use faer::Mat;

/// The softmax likelihood over a fixed number of classes (at least 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Softmax {
    classes: usize,
}

impl Softmax {
    /// The softmax over `classes` classes.
    ///
    /// # Errors
    /// A message if `classes < 2`.
    pub fn new(classes: usize) -> Result<Softmax, super::LikelihoodError> {
        if classes < 2 {
            return Err(super::LikelihoodError(format!(
                "the softmax likelihood needs at least 2 classes, got {classes}"
            )));
        }
        Ok(Softmax { classes })
    }

    /// The number of classes `C`.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// `log Σ_k exp(f_k)`, with the maximum taken out first.
    ///
    /// # Panics
    /// If `f` does not have one entry per class.
    pub fn log_sum_exp(&self, f: &[f64]) -> f64 {
        assert_eq!(f.len(), self.classes, "softmax: one latent value per class");
        let m = f.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !m.is_finite() {
            return m;
        }
        m + f.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
    }

    /// `log p(y | f) = f_y − log Σ_k exp(f_k)`.
    ///
    /// # Panics
    /// If `y` is not a class index or `f` has the wrong length.
    pub fn log_prob(&self, f: &[f64], y: usize) -> f64 {
        assert!(y < self.classes, "softmax: class {y} out of range");
        assert_eq!(f.len(), self.classes, "softmax: one latent value per class");
        // (f_y − max) − log Σ exp(f_k − max): the large common part cancels exactly first.
        let m = f.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (f[y] - m) - f.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
    }

    /// The class probabilities `π = softmax(f)` (they sum to 1 up to rounding).
    ///
    /// # Panics
    /// If `f` has the wrong length.
    pub fn probabilities(&self, f: &[f64]) -> Vec<f64> {
        assert_eq!(f.len(), self.classes, "softmax: one latent value per class");
        // exp(f_k − max) / Σ: every factor is in (0, 1] and exact relative to its size, where
        // exp(f_k − log Σ exp f) would inherit the rounding of a large log-sum-exp.
        let m = f.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = f.iter().map(|v| (v - m).exp()).collect();
        let total: f64 = e.iter().sum();
        e.into_iter().map(|v| v / total).collect()
    }

    /// `∇_f log p(y | f) = e_y − π`.
    ///
    /// # Panics
    /// As for [`Softmax::log_prob`].
    pub fn gradient(&self, f: &[f64], y: usize) -> Vec<f64> {
        assert!(y < self.classes, "softmax: class {y} out of range");
        let mut g: Vec<f64> = self.probabilities(f).iter().map(|p| -p).collect();
        g[y] += 1.0;
        g
    }

    /// The negated Hessian `W = −∇∇_f log p(y | f) = diag(π) − ππᵀ` (C×C, positive
    /// semi-definite and singular: `W 1 = 0`); it does not depend on `y`.
    ///
    /// # Panics
    /// If `f` has the wrong length.
    pub fn neg_hessian(&self, f: &[f64]) -> Mat<f64> {
        let p = self.probabilities(f);
        Mat::from_fn(self.classes, self.classes, |a, b| {
            let d = if a == b { p[a] } else { 0.0 };
            d - p[a] * p[b]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: [f64; 4] = [0.3, -1.2, 2.0, 0.5];

    #[test]
    fn probabilities_sum_to_one_and_match_the_definition() {
        let s = Softmax::new(4).unwrap();
        let p = s.probabilities(&F);
        let z: f64 = F.iter().map(|v| v.exp()).sum();
        for (pc, fc) in p.iter().zip(F) {
            assert!((pc - fc.exp() / z).abs() < 1e-15);
        }
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        for (y, fy) in F.iter().enumerate() {
            assert!((s.log_prob(&F, y) - (fy.exp() / z).ln()).abs() < 1e-14);
        }
    }

    #[test]
    fn gradient_and_hessian_match_central_differences() {
        let s = Softmax::new(4).unwrap();
        let h = 1e-5;
        for y in 0..4 {
            let g = s.gradient(&F, y);
            let w = s.neg_hessian(&F);
            for k in 0..4 {
                let (mut fp, mut fm) = (F, F);
                fp[k] += h;
                fm[k] -= h;
                let fd = (s.log_prob(&fp, y) - s.log_prob(&fm, y)) / (2.0 * h);
                assert!((g[k] - fd).abs() < 1e-9, "gradient {k}: {} vs {fd}", g[k]);
                let (gp, gm) = (s.gradient(&fp, y), s.gradient(&fm, y));
                for a in 0..4 {
                    let fd = -(gp[a] - gm[a]) / (2.0 * h);
                    assert!(
                        (w[(a, k)] - fd).abs() < 1e-9,
                        "W[{a},{k}]: {} vs {fd}",
                        w[(a, k)]
                    );
                }
            }
            // W 1 = 0: the softmax is invariant under adding a constant to every latent value.
            for a in 0..4 {
                assert!((0..4).map(|b| w[(a, b)]).sum::<f64>().abs() < 1e-15);
            }
        }
    }

    #[test]
    fn extreme_latent_values_stay_finite_and_exact() {
        let s = Softmax::new(3).unwrap();
        let f = [1000.0, -1000.0, 999.0];
        // log p(0) = −log(1 + e⁻¹) exactly; a naive exp would overflow.
        let exact = -(1.0 + (-1.0f64).exp()).ln();
        assert!((s.log_prob(&f, 0) - exact).abs() < 1e-13);
        assert!((s.log_prob(&f, 1) - (-2000.0 + exact)).abs() < 1e-9);
        let p = s.probabilities(&f);
        assert!(p.iter().all(|v| v.is_finite()) && (p.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        assert!(Softmax::new(1).is_err());
    }
}
