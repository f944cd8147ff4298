//! The BO baseline's surrogate: a GP over candidate kernels whose covariance is built from the
//! kernel distances, `k(a, b) = σ² exp(−d(a, b)²/(2ℓ²))`, with noise `σ_n²` and a constant mean
//! `c`, fitted to the evaluated kernels' evidences by maximum evidence.
//!
//! Written `σ_n² = g σ²`, the observations are `y ~ N(c1, σ² A)` with `A = R + gI`,
//! `R_ab = exp(−d_ab²/(2ℓ²))`. For fixed `(ℓ, g)` the maximising `c` and `σ²` are closed
//! forms (generalised least squares):
//!
//! ```text
//! ĉ = 1ᵀA⁻¹y / 1ᵀA⁻¹1,   r = y − ĉ1,   σ̂² = rᵀA⁻¹r / n,
//! max log p(y) = −(n/2)(ln(2π σ̂²) + 1) − ½ ln|A|
//! ```
//!
//! and `(ℓ, g)` maximise that profile over a log-spaced grid (a choice: with the 3–15 points of
//! a BO run a gradient search finds nothing the grid misses, and the grid is deterministic;
//! its lower end on `ℓ` is a choice too, see `LENGTHSCALE_RANGE`).
//! The latent posterior at a candidate `j` with correlations `r_j` to the evaluated kernels
//! is `μ_j = ĉ + r_jᵀA⁻¹r`, `v_j = σ̂²(1 − r_jᵀA⁻¹r_j)`.

use faer::{Mat, MatRef};

use crate::linalg::{Cholesky, Parallelism};
use crate::models::ModelError;
use crate::sequential::acquisition::{
    standard_deviation, Improvement, ImprovementKind, MarginalUtility,
};

use super::SelectionError;

/// The grid of lengthscales `ℓ` (distances lie in `[0, 1]`): `10^(−0.6 … 1)`, about
/// `0.25 … 10`. The lower end is a choice: with two or three evidences the maximum of the
/// evidence is at the shortest `ℓ` whenever the evidences are not ordered along the distances
/// (for two points, the profile is `½ ln((1 + g − ρ)/(1 + g + ρ))`, decreasing in their
/// correlation `ρ`), and below about 0.25 every candidate is uncorrelated with every evaluated
/// one (`ρ < 10⁻⁵` at `d = 0.9`), so the acquisition would be flat. At `ℓ = 0.25` a close pair
/// (`d = 0.5`) keeps `ρ ≈ 0.14`, a distant one (`d = 0.95`) `ρ < 10⁻³`.
const LENGTHSCALE_RANGE: (f64, f64, usize) = (-0.6, 1.0, 17);
/// The grid of noise-to-signal ratios `g`: `10^(−6 … 0)`.
const NOISE_RATIO_RANGE: (f64, f64, usize) = (-6.0, 0.0, 13);
/// `σ̂²` is floored at this multiple of `1 + max y²`: evidences that are all equal (or a single
/// one) would otherwise give a zero signal variance and an infinite evidence.
const SIGNAL_FLOOR: f64 = 1e-12;

/// `count` points evenly spaced in `log10` between the range's ends.
fn log_grid((lo, hi, count): (f64, f64, usize)) -> impl Iterator<Item = f64> {
    (0..count).map(move |i| 10f64.powf(lo + (hi - lo) * i as f64 / (count - 1) as f64))
}

/// A fitted GP over kernels (module notes).
#[derive(Clone, Debug)]
pub struct KernelGp {
    evaluated: Vec<usize>,
    lengthscale: f64,
    noise_ratio: f64,
    signal: f64,
    mean: f64,
    chol: Cholesky,
    /// `A⁻¹(y − ĉ1)`.
    alpha: Vec<f64>,
    log_evidence: f64,
}

impl KernelGp {
    /// The GP with lengthscale `ℓ` and noise ratio `g` given, `c` and `σ²` at their maximum-
    /// evidence values, on the kernels `evaluated` (indices into `distances`) with evidences
    /// `y`.
    ///
    /// # Errors
    /// [`SelectionError::Invalid`] for mismatched or empty inputs, an index outside
    /// `distances`, a non-finite evidence or a non-positive `ℓ` or `g`;
    /// [`SelectionError::Model`] if `A` cannot be factorised.
    pub fn profile(
        distances: MatRef<'_, f64>,
        evaluated: &[usize],
        y: &[f64],
        lengthscale: f64,
        noise_ratio: f64,
    ) -> Result<KernelGp, SelectionError> {
        check(distances, evaluated, y)?;
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !(positive(lengthscale) && positive(noise_ratio)) {
            return Err(SelectionError::Invalid(format!(
                "kernel GP: expected a positive lengthscale and noise ratio, got {lengthscale} \
                 and {noise_ratio}"
            )));
        }
        let n = evaluated.len();
        let a = Mat::from_fn(n, n, |i, j| {
            let r = correlation(distances[(evaluated[i], evaluated[j])], lengthscale);
            if i == j {
                r + noise_ratio
            } else {
                r
            }
        });
        let chol = Cholesky::factor(&a, "kernel GP covariance", Parallelism::Sequential)
            .map_err(|e| SelectionError::Model(ModelError::from(e)))?;
        let a_inv_1 = chol.solve_vec(&vec![1.0; n]);
        let a_inv_y = chol.solve_vec(y);
        let mean = a_inv_y.iter().sum::<f64>() / a_inv_1.iter().sum::<f64>();
        let alpha: Vec<f64> = a_inv_y
            .iter()
            .zip(&a_inv_1)
            .map(|(u, v)| u - mean * v)
            .collect();
        let quad: f64 = y.iter().zip(&alpha).map(|(yi, ai)| (yi - mean) * ai).sum();
        let scale = 1.0 + y.iter().map(|v| v * v).fold(0.0, f64::max);
        let signal = (quad / n as f64).max(SIGNAL_FLOOR * scale);
        // At σ̂² = quad/n the quadratic term is n/2; with the floor it is quad/(2σ̂²).
        let log_evidence = -0.5 * n as f64 * (2.0 * std::f64::consts::PI * signal).ln()
            - 0.5 * chol.log_det()
            - 0.5 * quad / signal;
        Ok(KernelGp {
            evaluated: evaluated.to_vec(),
            lengthscale,
            noise_ratio,
            signal,
            mean,
            chol,
            alpha,
            log_evidence,
        })
    }

    /// The GP fitted by maximum evidence: [`KernelGp::profile`] at the best `(ℓ, g)` of the
    /// grid (the first on ties).
    ///
    /// # Errors
    /// As for [`KernelGp::profile`]; grid points whose `A` cannot be factorised are skipped, and
    /// the error is returned only if every one fails.
    pub fn fit(
        distances: MatRef<'_, f64>,
        evaluated: &[usize],
        y: &[f64],
    ) -> Result<KernelGp, SelectionError> {
        check(distances, evaluated, y)?;
        let mut best: Option<KernelGp> = None;
        let mut last_error = None;
        for l in log_grid(LENGTHSCALE_RANGE) {
            for g in log_grid(NOISE_RATIO_RANGE) {
                match KernelGp::profile(distances, evaluated, y, l, g) {
                    Ok(gp) => {
                        if best
                            .as_ref()
                            .is_none_or(|b| gp.log_evidence > b.log_evidence)
                        {
                            best = Some(gp);
                        }
                    }
                    Err(e) => last_error = Some(e),
                }
            }
        }
        best.ok_or_else(|| last_error.expect("the grid is not empty"))
    }

    /// The maximised log evidence `log p(y | ℓ, g, ĉ, σ̂²)`.
    pub fn log_evidence(&self) -> f64 {
        self.log_evidence
    }

    /// `(ℓ, g, σ̂², ĉ)`: lengthscale, noise-to-signal ratio, signal variance, constant mean.
    pub fn hyperparameters(&self) -> (f64, f64, f64, f64) {
        (self.lengthscale, self.noise_ratio, self.signal, self.mean)
    }

    /// The latent posterior mean and variance at kernel `j` (an index into `distances`).
    pub fn predict(&self, distances: MatRef<'_, f64>, j: usize) -> (f64, f64) {
        let r: Vec<f64> = self
            .evaluated
            .iter()
            .map(|&e| correlation(distances[(j, e)], self.lengthscale))
            .collect();
        let mean = self.mean + r.iter().zip(&self.alpha).map(|(a, b)| a * b).sum::<f64>();
        let mut w = Mat::from_fn(r.len(), 1, |i, _| r[i]);
        self.chol.solve_lower_in_place(w.as_mut());
        let explained: f64 = (0..r.len()).map(|i| w[(i, 0)] * w[(i, 0)]).sum();
        (mean, (self.signal * (1.0 - explained)).max(0.0))
    }

    /// `kind` of improvement over `incumbent` at each of `candidates` (indices into
    /// `distances`): the discrete acquisition of the BO baseline (EI or, for ranking where EI
    /// underflows, log EI).
    ///
    /// # Errors
    /// [`SelectionError::Invalid`] if `incumbent` is not finite or a candidate is out of range.
    pub fn acquisition(
        &self,
        distances: MatRef<'_, f64>,
        candidates: &[usize],
        kind: ImprovementKind,
        incumbent: f64,
    ) -> Result<Vec<f64>, SelectionError> {
        let utility = Improvement::new(kind, incumbent)?;
        candidates
            .iter()
            .map(|&j| {
                if j >= distances.nrows() {
                    return Err(SelectionError::Invalid(format!(
                        "kernel GP: candidate {j} is outside the {} kernels",
                        distances.nrows()
                    )));
                }
                let (mean, var) = self.predict(distances, j);
                Ok(utility.utility(mean, standard_deviation(var).0).value)
            })
            .collect()
    }
}

/// `exp(−d²/(2ℓ²))`.
fn correlation(d: f64, lengthscale: f64) -> f64 {
    (-0.5 * (d / lengthscale).powi(2)).exp()
}

fn check(distances: MatRef<'_, f64>, evaluated: &[usize], y: &[f64]) -> Result<(), SelectionError> {
    let k = distances.nrows();
    let bad = |what: String| Err(SelectionError::Invalid(format!("kernel GP: {what}")));
    if distances.ncols() != k {
        return bad(format!(
            "expected a square distance matrix, got {}×{}",
            k,
            distances.ncols()
        ));
    }
    if evaluated.is_empty() || evaluated.len() != y.len() {
        return bad(format!(
            "expected one evidence per evaluated kernel (at least one), got {} kernels and {} \
             evidences",
            evaluated.len(),
            y.len()
        ));
    }
    if let Some(&i) = evaluated.iter().find(|&&i| i >= k) {
        return bad(format!("evaluated kernel {i} is outside the {k} kernels"));
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return bad(format!("evidence {i} must be finite, got {}", y[i]));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use rand_distr::{Distribution, StandardNormal};

    /// A symmetric distance matrix with zero diagonal and entries in (0, 1).
    fn distances(k: usize, seed: u64) -> Mat<f64> {
        // Distances of points on a line, scaled into [0, 1): a valid metric.
        let mut rng = StdRng::seed_from_u64(seed);
        let p: Vec<f64> = (0..k).map(|_| rng.random_range(0.0..0.9)).collect();
        Mat::from_fn(k, k, |a, b| (p[a] - p[b]).abs())
    }

    /// Gauss–Jordan inverse with partial pivoting (independent of the crate's Cholesky).
    fn inverse(a: &Mat<f64>) -> Mat<f64> {
        let n = a.nrows();
        let mut m = a.clone();
        let mut inv = Mat::<f64>::identity(n, n);
        for c in 0..n {
            let p = (c..n)
                .max_by(|&i, &j| m[(i, c)].abs().total_cmp(&m[(j, c)].abs()))
                .unwrap();
            for j in 0..n {
                let (t, u) = (m[(c, j)], inv[(c, j)]);
                m[(c, j)] = m[(p, j)];
                m[(p, j)] = t;
                inv[(c, j)] = inv[(p, j)];
                inv[(p, j)] = u;
            }
            let d = m[(c, c)];
            for j in 0..n {
                m[(c, j)] /= d;
                inv[(c, j)] /= d;
            }
            for i in (0..n).filter(|&i| i != c) {
                let f = m[(i, c)];
                for j in 0..n {
                    m[(i, j)] -= f * m[(c, j)];
                    inv[(i, j)] -= f * inv[(c, j)];
                }
            }
        }
        inv
    }

    /// The log density of `y ~ N(c1, K)` with `K` given in full, via the inverse and the
    /// determinant from the Gauss–Jordan pivots' product (computed as `ln det` of the LU).
    fn log_normal(y: &[f64], c: f64, k: &Mat<f64>) -> f64 {
        let n = y.len();
        let inv = inverse(k);
        let r: Vec<f64> = y.iter().map(|v| v - c).collect();
        let quad: f64 = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| r[i] * inv[(i, j)] * r[j])
            .sum();
        // ln det K = −ln det K⁻¹; det by Gaussian elimination without pivoting (SPD).
        let mut m = k.clone();
        let mut log_det = 0.0;
        for c in 0..n {
            log_det += m[(c, c)].ln();
            for i in c + 1..n {
                let f = m[(i, c)] / m[(c, c)];
                for j in c..n {
                    m[(i, j)] -= f * m[(c, j)];
                }
            }
        }
        -0.5 * quad - 0.5 * log_det - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln()
    }

    fn covariance(d: &Mat<f64>, idx: &[usize], l: f64, signal: f64, noise: f64) -> Mat<f64> {
        let n = idx.len();
        Mat::from_fn(n, n, |i, j| {
            signal * (-0.5 * (d[(idx[i], idx[j])] / l).powi(2)).exp()
                + if i == j { noise } else { 0.0 }
        })
    }

    #[test]
    fn profiled_evidence_is_the_maximum_over_mean_and_signal() {
        let d = distances(8, 1);
        let idx = [0, 2, 3, 5, 7];
        let y = [-1040.0, -1012.5, -1030.2, -998.7, -1021.0];
        let (l, g) = (0.3, 0.05);
        let gp = KernelGp::profile(d.as_ref(), &idx, &y, l, g).unwrap();
        let (_, _, s2, c) = gp.hyperparameters();
        // The dense log density at the profiled values equals the reported evidence…
        let at = |c: f64, s2: f64| log_normal(&y, c, &covariance(&d, &idx, l, s2, g * s2));
        assert!((at(c, s2) - gp.log_evidence()).abs() < 1e-9 * gp.log_evidence().abs());
        // …and it is a maximum in c and in ln σ² (central differences vanish, neighbours lower).
        let h = 1e-4;
        let dc = (at(c + h, s2) - at(c - h, s2)) / (2.0 * h);
        let ds = (at(c, s2 * h.exp()) - at(c, s2 * (-h).exp())) / (2.0 * h);
        assert!(dc.abs() < 1e-6 && ds.abs() < 1e-6, "{dc} {ds}");
        assert!(at(c + 1.0, s2) < gp.log_evidence() && at(c, 1.1 * s2) < gp.log_evidence());
    }

    #[test]
    fn the_fit_picks_the_best_grid_point_and_predicts_the_data() {
        let d = distances(10, 2);
        let idx = [1, 4, 6, 9];
        // Evidences smooth in the distance: a quadratic of the 1-D positions.
        let y: Vec<f64> = idx
            .iter()
            .map(|&i| -5.0 * (d[(i, 0)] - 0.4).powi(2))
            .collect();
        let gp = KernelGp::fit(d.as_ref(), &idx, &y).unwrap();
        for l in log_grid(LENGTHSCALE_RANGE) {
            for g in log_grid(NOISE_RATIO_RANGE) {
                let other = KernelGp::profile(d.as_ref(), &idx, &y, l, g).unwrap();
                assert!(other.log_evidence() <= gp.log_evidence());
            }
        }
        // The posterior at an evaluated kernel: mean within the noise of its evidence, and the
        // posterior against a dense computation at every kernel.
        let (l, g, s2, c) = gp.hyperparameters();
        let k_ee = covariance(&d, &idx, l, s2, g * s2);
        let inv = inverse(&k_ee);
        for j in 0..10 {
            let k_je: Vec<f64> = idx
                .iter()
                .map(|&e| s2 * (-0.5 * (d[(j, e)] / l).powi(2)).exp())
                .collect();
            let mut mean = c;
            let mut var = s2;
            for a in 0..idx.len() {
                for b in 0..idx.len() {
                    mean += k_je[a] * inv[(a, b)] * (y[b] - c);
                    var -= k_je[a] * inv[(a, b)] * k_je[b];
                }
            }
            let (m, v) = gp.predict(d.as_ref(), j);
            assert!((m - mean).abs() < 1e-9 && (v - var.max(0.0)).abs() < 1e-9 * s2);
        }
    }

    #[test]
    fn expected_improvement_matches_monte_carlo_of_the_posterior() {
        let d = distances(9, 3);
        let idx = [0, 3, 8];
        let y = [-12.0, -10.5, -11.3];
        let gp = KernelGp::profile(d.as_ref(), &idx, &y, 0.2, 0.01).unwrap();
        let best = -10.5;
        let candidates = [1, 2, 4, 5, 6, 7];
        let ei = gp
            .acquisition(d.as_ref(), &candidates, ImprovementKind::Expected, best)
            .unwrap();
        let log_ei = gp
            .acquisition(d.as_ref(), &candidates, ImprovementKind::LogExpected, best)
            .unwrap();
        // The posterior of each candidate by the dense formula; EI = E[max(f − f*, 0)] by
        // Monte Carlo over it.
        let (l, g, s2, c) = gp.hyperparameters();
        let inv = inverse(&covariance(&d, &idx, l, s2, g * s2));
        let mut rng = StdRng::seed_from_u64(11);
        let draws: usize = 400_000;
        for (a, &j) in candidates.iter().enumerate() {
            let k: Vec<f64> = idx
                .iter()
                .map(|&e| s2 * (-0.5 * (d[(j, e)] / l).powi(2)).exp())
                .collect();
            let (mut mean, mut var) = (c, s2);
            for p in 0..3 {
                for q in 0..3 {
                    mean += k[p] * inv[(p, q)] * (y[q] - c);
                    var -= k[p] * inv[(p, q)] * k[q];
                }
            }
            let sd = var.max(0.0).sqrt();
            let samples: Vec<f64> = (0..draws)
                .map(|_| {
                    let z: f64 = StandardNormal.sample(&mut rng);
                    (mean + sd * z - best).max(0.0)
                })
                .collect();
            let mc = samples.iter().sum::<f64>() / draws as f64;
            let se = (samples.iter().map(|v| (v - mc).powi(2)).sum::<f64>()
                / (draws as f64 * (draws as f64 - 1.0)))
                .sqrt();
            assert!(
                (ei[a] - mc).abs() < 4.0 * se + 1e-12,
                "{j}: {} vs {mc} ± {se}",
                ei[a]
            );
            assert!((log_ei[a] - ei[a].ln()).abs() < 1e-10 * log_ei[a].abs().max(1.0));
        }
    }

    #[test]
    fn bad_input_is_reported() {
        let d = distances(4, 0);
        let e = KernelGp::fit(d.as_ref(), &[0, 1], &[1.0]).unwrap_err();
        assert!(
            e.to_string().contains("one evidence per evaluated kernel"),
            "{e}"
        );
        let e = KernelGp::fit(d.as_ref(), &[0, 9], &[1.0, 2.0]).unwrap_err();
        assert!(e.to_string().contains("evaluated kernel 9"), "{e}");
        let e = KernelGp::fit(d.as_ref(), &[0, 1], &[1.0, f64::NEG_INFINITY]).unwrap_err();
        assert!(e.to_string().contains("evidence 1"), "{e}");
        let e = KernelGp::profile(d.as_ref(), &[0, 1], &[1.0, 2.0], 0.0, 0.1).unwrap_err();
        assert!(e.to_string().contains("lengthscale"), "{e}");
        let gp = KernelGp::fit(d.as_ref(), &[0, 1], &[1.0, 2.0]).unwrap();
        let e = gp
            .acquisition(d.as_ref(), &[7], ImprovementKind::Expected, 2.0)
            .unwrap_err();
        assert!(e.to_string().contains("candidate 7"), "{e}");
    }
}
