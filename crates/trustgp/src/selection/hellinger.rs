//! The Hellinger distance between two multivariate Gaussians, in closed form: the distance
//! behind the kernel-between-kernels of the BO baseline (Malkomes, Schaff & Garnett 2016).
//!
//! For `P = N(μ_a, Σ_a)`, `Q = N(μ_b, Σ_b)` and `Σ̄ = (Σ_a + Σ_b)/2`, the Bhattacharyya
//! coefficient `BC = ∫ √(p q)` is
//!
//! ```text
//! ln BC = ¼ ln|Σ_a| + ¼ ln|Σ_b| − ½ ln|Σ̄| − ⅛ (μ_a − μ_b)ᵀ Σ̄⁻¹ (μ_a − μ_b)
//! ```
//!
//! and `H(P, Q) = √(1 − BC) ∈ [0, 1]`. The log-determinants come from Cholesky factors (with the
//! crate's jitter escalation), never from determinants, which under- or overflow for the
//! 200-dimensional prior predictives the baseline compares; `1 − BC` is `−expm1(ln BC)`, accurate
//! when the two are close.

use faer::Mat;

use crate::linalg::{Cholesky, Parallelism};
use crate::models::ModelError;

use super::SelectionError;

/// A multivariate Gaussian `N(μ, Σ)` with the log-determinant of `Σ` computed once.
#[derive(Clone, Debug)]
pub struct Gaussian {
    mean: Vec<f64>,
    cov: Mat<f64>,
    log_det: f64,
}

impl Gaussian {
    /// `N(mean, cov)`; `cov` must be symmetric positive definite (up to the Cholesky jitter).
    ///
    /// # Errors
    /// [`SelectionError::Invalid`] if `cov` is not `d × d` for the mean's length `d ≥ 1`;
    /// [`SelectionError::Model`] if `cov` has a non-finite entry or is not positive definite
    /// even with the largest jitter.
    pub fn new(mean: Vec<f64>, cov: Mat<f64>) -> Result<Gaussian, SelectionError> {
        let d = mean.len();
        if d == 0 || cov.nrows() != d || cov.ncols() != d {
            return Err(SelectionError::Invalid(format!(
                "Gaussian: expected a {d}×{d} covariance for a mean of length {d} (at least 1), \
                 got {}×{}",
                cov.nrows(),
                cov.ncols()
            )));
        }
        if let Some(i) = mean.iter().position(|v| !v.is_finite()) {
            return Err(SelectionError::Invalid(format!(
                "Gaussian: mean entry {i} must be finite, got {}",
                mean[i]
            )));
        }
        let log_det = factor(&cov, "Gaussian covariance")?.log_det();
        Ok(Gaussian { mean, cov, log_det })
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.mean.len()
    }

    /// `ln |Σ|` (of `Σ` plus the jitter its factorisation needed, if any).
    pub fn log_det(&self) -> f64 {
        self.log_det
    }

    /// The Hellinger distance `H(self, other) = √(1 − BC)` (module notes).
    ///
    /// # Errors
    /// [`SelectionError::Invalid`] if the dimensions differ; [`SelectionError::Model`] if the
    /// average covariance cannot be factorised.
    pub fn hellinger(&self, other: &Gaussian) -> Result<f64, SelectionError> {
        // 1 − BC = −expm1(ln BC); ln BC > 0 only by rounding, where the distance is 0.
        let log_bc = self.log_bhattacharyya(other)?.min(0.0);
        Ok((-log_bc.exp_m1()).sqrt())
    }

    /// `ln BC(self, other)` (module notes); at most 0 up to rounding.
    ///
    /// # Errors
    /// As for [`Gaussian::hellinger`].
    pub fn log_bhattacharyya(&self, other: &Gaussian) -> Result<f64, SelectionError> {
        let d = self.dim();
        if other.dim() != d {
            return Err(SelectionError::Invalid(format!(
                "Hellinger distance: the Gaussians must have the same dimension, got {d} and {}",
                other.dim()
            )));
        }
        let avg = Mat::from_fn(d, d, |i, j| 0.5 * (self.cov[(i, j)] + other.cov[(i, j)]));
        let chol = factor(&avg, "average covariance")?;
        let delta: Vec<f64> = self
            .mean
            .iter()
            .zip(&other.mean)
            .map(|(a, b)| a - b)
            .collect();
        // δᵀ Σ̄⁻¹ δ = ‖L⁻¹ δ‖².
        let mut w = Mat::from_fn(d, 1, |i, _| delta[i]);
        chol.solve_lower_in_place(w.as_mut());
        let quad: f64 = (0..d).map(|i| w[(i, 0)] * w[(i, 0)]).sum();
        Ok(0.25 * (self.log_det + other.log_det) - 0.5 * chol.log_det() - 0.125 * quad)
    }
}

/// The Cholesky factor of `a` (sequential: callers run many of these in parallel).
fn factor(a: &Mat<f64>, what: &str) -> Result<Cholesky, SelectionError> {
    Cholesky::factor(a, what, Parallelism::Sequential)
        .map_err(|e| SelectionError::Model(ModelError::from(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    fn gaussian(mean: &[f64], cov: &[&[f64]]) -> Gaussian {
        let d = mean.len();
        Gaussian::new(mean.to_vec(), Mat::from_fn(d, d, |i, j| cov[i][j])).unwrap()
    }

    /// A random SPD matrix `A Aᵀ + I/2` of size `d`.
    fn spd(d: usize, rng: &mut StdRng) -> Mat<f64> {
        let a = Mat::from_fn(d, d, |_, _| rng.random_range(-1.0..1.0));
        Mat::from_fn(d, d, |i, j| {
            (0..d).map(|k| a[(i, k)] * a[(j, k)]).sum::<f64>() + if i == j { 0.5 } else { 0.0 }
        })
    }

    #[test]
    fn one_dimensional_closed_form() {
        // H² = 1 − √(2σ₁σ₂/(σ₁²+σ₂²)) exp(−(μ₁−μ₂)²/(4(σ₁²+σ₂²))).
        for &(m1, s1, m2, s2) in &[
            (0.0, 1.0, 0.0, 1.0),
            (0.3, 0.7, -1.2, 2.5),
            (5.0, 0.1, -5.0, 0.2),
            (1.0, 3.0, 1.5, 0.01),
        ] {
            let p = gaussian(&[m1], &[&[s1 * s1]]);
            let q = gaussian(&[m2], &[&[s2 * s2]]);
            let v = s1 * s1 + s2 * s2;
            let bc = (2.0 * s1 * s2 / v).sqrt() * (-(m1 - m2) * (m1 - m2) / (4.0 * v)).exp();
            let expected = (1.0 - bc).sqrt();
            let got = p.hellinger(&q).unwrap();
            assert!((got - expected).abs() < 1e-12, "{got} vs {expected}");
        }
    }

    /// `∫ √(p q)` by the midpoint rule on a wide grid, for densities given as closures.
    fn quadrature_1d(p: impl Fn(f64) -> f64, q: impl Fn(f64) -> f64) -> f64 {
        let (lo, hi, n) = (-30.0, 30.0, 200_000);
        let h = (hi - lo) / n as f64;
        (0..n)
            .map(|i| {
                let x = lo + (i as f64 + 0.5) * h;
                (p(x) * q(x)).sqrt() * h
            })
            .sum()
    }

    fn normal_pdf(x: f64, m: f64, v: f64) -> f64 {
        (-(x - m) * (x - m) / (2.0 * v)).exp() / (2.0 * std::f64::consts::PI * v).sqrt()
    }

    #[test]
    fn one_dimensional_brute_force_integral() {
        let (m1, v1, m2, v2) = (0.4, 0.5, -0.8, 2.0);
        let bc = quadrature_1d(|x| normal_pdf(x, m1, v1), |x| normal_pdf(x, m2, v2));
        let got = gaussian(&[m1], &[&[v1]])
            .hellinger(&gaussian(&[m2], &[&[v2]]))
            .unwrap();
        assert!((got - (1.0 - bc).sqrt()).abs() < 1e-9);
    }

    #[test]
    fn two_dimensional_brute_force_integral() {
        // Correlated covariances and different means; the densities written out by hand.
        let (ma, ca) = ([0.3, -0.2], [[1.0, 0.6], [0.6, 0.9]]);
        let (mb, cb) = ([-0.5, 0.4], [[0.5, -0.2], [-0.2, 1.4]]);
        let pdf2 = |x: f64, y: f64, m: [f64; 2], c: [[f64; 2]; 2]| {
            let det = c[0][0] * c[1][1] - c[0][1] * c[1][0];
            let (dx, dy) = (x - m[0], y - m[1]);
            let quad = (c[1][1] * dx * dx - 2.0 * c[0][1] * dx * dy + c[0][0] * dy * dy) / det;
            (-0.5 * quad).exp() / (2.0 * std::f64::consts::PI * det.sqrt())
        };
        let (lo, hi, n) = (-12.0, 12.0, 1200);
        let h = (hi - lo) / n as f64;
        let mut bc = 0.0;
        for i in 0..n {
            let x = lo + (i as f64 + 0.5) * h;
            for j in 0..n {
                let y = lo + (j as f64 + 0.5) * h;
                bc += (pdf2(x, y, ma, ca) * pdf2(x, y, mb, cb)).sqrt() * h * h;
            }
        }
        let p = gaussian(&ma, &[&ca[0], &ca[1]]);
        let q = gaussian(&mb, &[&cb[0], &cb[1]]);
        let got = p.hellinger(&q).unwrap();
        assert!(
            (got - (1.0 - bc).sqrt()).abs() < 1e-8,
            "{got} vs {}",
            (1.0 - bc).sqrt()
        );
    }

    #[test]
    fn metric_properties_in_high_dimension() {
        let mut rng = StdRng::seed_from_u64(4);
        let d = 60;
        let p = Gaussian::new(
            (0..d).map(|_| rng.random_range(-1.0..1.0)).collect(),
            spd(d, &mut rng),
        )
        .unwrap();
        let q = Gaussian::new(
            (0..d).map(|_| rng.random_range(-1.0..1.0)).collect(),
            spd(d, &mut rng),
        )
        .unwrap();
        assert_eq!(p.hellinger(&p).unwrap(), 0.0);
        let (pq, qp) = (p.hellinger(&q).unwrap(), q.hellinger(&p).unwrap());
        assert!((pq - qp).abs() < 1e-14);
        assert!(pq > 0.0 && pq <= 1.0);
        // Far apart: BC underflows to 0 and the distance is 1, never above.
        let far = Gaussian::new(vec![1e3; d], Mat::identity(d, d)).unwrap();
        let near = Gaussian::new(vec![0.0; d], Mat::identity(d, d)).unwrap();
        assert_eq!(far.hellinger(&near).unwrap(), 1.0);
        // Ill-conditioned covariances (the prior predictive of a long-lengthscale kernel):
        // still finite and in range.
        let x: Vec<f64> = (0..d).map(|i| i as f64 / d as f64).collect();
        let smooth = Mat::from_fn(d, d, |i, j| (-(x[i] - x[j]).powi(2) / 50.0).exp());
        let s = Gaussian::new(vec![0.0; d], smooth).unwrap();
        let h = s.hellinger(&near).unwrap();
        assert!(h.is_finite() && h > 0.0 && h <= 1.0);
    }

    #[test]
    fn the_triangle_inequality_holds_on_random_triples() {
        // H is the L2 distance between √p and √q (up to a factor √2), hence a metric.
        let mut rng = StdRng::seed_from_u64(9);
        for _ in 0..20 {
            let g: Vec<Gaussian> = (0..3)
                .map(|_| {
                    Gaussian::new(
                        (0..3).map(|_| rng.random_range(-1.0..1.0)).collect(),
                        spd(3, &mut rng),
                    )
                    .unwrap()
                })
                .collect();
            let d = |a: usize, b: usize| g[a].hellinger(&g[b]).unwrap();
            assert!(d(0, 2) <= d(0, 1) + d(1, 2) + 1e-12);
        }
    }

    #[test]
    fn bad_input_is_reported() {
        let e = Gaussian::new(vec![0.0; 2], Mat::identity(3, 3)).unwrap_err();
        assert!(e.to_string().contains("2×2"), "{e}");
        let e = Gaussian::new(vec![0.0, f64::NAN], Mat::identity(2, 2)).unwrap_err();
        assert!(e.to_string().contains("mean entry 1"), "{e}");
        let indefinite = Mat::from_fn(2, 2, |i, j| if i == j { -1.0 } else { 0.0 });
        assert!(Gaussian::new(vec![0.0; 2], indefinite).is_err());
        let a = Gaussian::new(vec![0.0], Mat::identity(1, 1)).unwrap();
        let b = Gaussian::new(vec![0.0; 2], Mat::identity(2, 2)).unwrap();
        assert!(a
            .hellinger(&b)
            .unwrap_err()
            .to_string()
            .contains("same dimension"));
    }
}
