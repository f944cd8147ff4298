//! Tests of the sparse models against dense references written here, independently of the
//! collapsed core: the exact GP, RCGP (spec §2.2) and the uncollapsed RCSVGP bound (§2.8).

mod fitting;
mod gradients;
mod joint;
mod reductions;

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::{SparseGp, SparseKind};
use crate::kernels::Kernel;
use crate::linalg::{Cholesky, Parallelism};
use crate::means::Mean;

/// Inputs uniform on [0, 3]^d and targets `sin(x₁) + cos(x₂)/2 + …` plus N(0, 0.1²) noise.
fn data(n: usize, d: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| 3.0 * rng.random::<f64>());
    let y = (0..n)
        .map(|i| truth(x.as_ref(), i) + 0.1 * rng.sample::<f64, _>(StandardNormal))
        .collect();
    (x, y)
}

/// The noise-free function behind [`data`].
fn truth(x: MatRef<'_, f64>, i: usize) -> f64 {
    (0..x.ncols())
        .map(|c| {
            if c % 2 == 0 {
                x[(i, c)].sin()
            } else {
                0.5 * x[(i, c)].cos()
            }
        })
        .sum()
}

/// Adds `shift` to every `every`-th target (gross, one-sided outliers).
fn contaminate(y: &mut [f64], every: usize, shift: f64) {
    for v in y.iter_mut().step_by(every) {
        *v += shift;
    }
}

fn kernel(expr: &str) -> Kernel {
    Kernel::parse(expr).unwrap()
}

/// `|a − b| ≤ tol · max(|b|, floor)`.
fn assert_rel(a: f64, b: f64, tol: f64, floor: f64, what: &str) {
    assert!(
        (a - b).abs() <= tol * b.abs().max(floor),
        "{what}: {a} vs {b} (diff {:e})",
        (a - b).abs()
    );
}

fn chol(a: &Mat<f64>) -> Cholesky {
    Cholesky::factor(a, "test", Parallelism::Sequential).unwrap()
}

fn with_diag(mut a: Mat<f64>, d: &[f64]) -> Mat<f64> {
    for (i, v) in d.iter().enumerate() {
        a[(i, i)] += v;
    }
    a
}

/// The IMQ weight, its score `g = ∂ log w²/∂y` and `D = σ⁴/(2w²)`, written from spec §2.1–2.2.
struct RobustTerms {
    w: Vec<f64>,
    g: Vec<f64>,
    d: Vec<f64>,
}

fn robust_terms(y: &[f64], prior: &[f64], noise: f64, c: f64, beta: f64) -> RobustTerms {
    let u: Vec<f64> = y.iter().zip(prior).map(|(y, m)| y - m).collect();
    let w: Vec<f64> = u
        .iter()
        .map(|u| beta * (1.0 + u * u / (c * c)).powf(-0.5))
        .collect();
    RobustTerms {
        g: u.iter().map(|u| -2.0 * u / (c * c + u * u)).collect(),
        d: w.iter().map(|w| noise * noise / (2.0 * w * w)).collect(),
        w,
    }
}

/// Training data and fixed parameters of one comparison.
struct Setup {
    x: Mat<f64>,
    y: Vec<f64>,
    k: Kernel,
    mean: Mean,
    noise: f64,
    c: f64,
    beta: f64,
}

impl Setup {
    /// The model at these parameters with inducing inputs `z` and `K_uu` jitter `jitter`
    /// (0 for exact comparisons).
    fn model(&self, kind: SparseKind, z: &Mat<f64>, jitter: f64) -> SparseGp {
        SparseGp::build(
            kind,
            self.x.clone(),
            self.y.clone(),
            self.k.clone(),
            self.mean.clone(),
            self.noise,
            z.clone(),
            self.c,
            self.beta,
            jitter,
        )
        .unwrap()
    }

    fn robust_terms(&self) -> RobustTerms {
        let prior = self.mean.eval(self.x.as_ref());
        robust_terms(&self.y, &prior, self.noise, self.c, self.beta)
    }

    /// `K_uu` with `jitter` on its diagonal.
    fn kuu(&self, z: &Mat<f64>, jitter: f64) -> Mat<f64> {
        with_diag(self.k.matrix(z.as_ref()), &vec![jitter; z.nrows()])
    }

    /// Dense RCGP (spec §2.2): mean `m + k (K + D)⁻¹ (y − m_w)` and the full covariance.
    fn dense_rcgp(&self, xs: &Mat<f64>) -> (Vec<f64>, Mat<f64>) {
        let (x, y, k, n) = (self.x.as_ref(), &self.y, &self.k, self.y.len());
        let prior = self.mean.eval(x);
        let rt = self.robust_terms();
        let kt = chol(&with_diag(k.matrix(x), &rt.d));
        let r: Vec<f64> = (0..n)
            .map(|j| y[j] - (prior[j] + self.noise * rt.g[j]))
            .collect();
        let v = kt.solve_vec(&r);
        let ks = k.cross(x, xs.as_ref());
        let ps = self.mean.eval(xs.as_ref());
        let mu = (0..xs.nrows())
            .map(|a| ps[a] + (0..n).map(|j| ks[(j, a)] * v[j]).sum::<f64>())
            .collect();
        let mut sk = ks.clone();
        kt.solve_in_place(sk.as_mut());
        let cov = k.matrix(xs.as_ref()) - ks.transpose() * &sk;
        (mu, cov)
    }

    /// The uncollapsed RCSVGP bound `E_q[log p^w(y | f)] − KL[q(u) ‖ p(u)]` for
    /// `q(u) = N(m(Z) + mu_u, sigma_u)`, with `E_q[log p^w]` taken from the per-point
    /// score-matching loss of spec §2.2 (not from its Gaussian form).
    fn uncollapsed(&self, z: &Mat<f64>, jitter: f64, mu_u: &[f64], sigma_u: &Mat<f64>) -> f64 {
        let (x, y, k, noise) = (self.x.as_ref(), &self.y, &self.k, self.noise);
        let m = z.nrows();
        let luu = chol(&self.kuu(z, jitter));
        let kuu_inv = luu.inverse();
        let kfu = k.cross(x, z.as_ref());
        let proj = &kfu * &kuu_inv; // K_fu K_uu⁻¹
        let kdiag = k.diag(x);
        let prior = self.mean.eval(x);
        let rt = self.robust_terms();
        let s_proj = &proj * sigma_u * proj.transpose();
        let q = &proj * kfu.transpose();
        let mut expected = 0.0;
        for j in 0..y.len() {
            let mf = prior[j] + (0..m).map(|a| proj[(j, a)] * mu_u[a]).sum::<f64>();
            let vf = kdiag[j] - q[(j, j)] + s_proj[(j, j)];
            let (w2, e) = (rt.w[j] * rt.w[j], mf - y[j]);
            // E[w²(f − y)²/σ⁴ + (2/σ²)((f − y) w² g − w²)]
            expected -= w2 * (e * e + vf) / (noise * noise) + 2.0 / noise * (e * w2 * rt.g[j] - w2);
        }
        let trace: f64 = (0..m)
            .map(|a| {
                (0..m)
                    .map(|b| kuu_inv[(a, b)] * sigma_u[(b, a)])
                    .sum::<f64>()
            })
            .sum();
        let maha: f64 = (0..m)
            .map(|a| mu_u[a] * (0..m).map(|b| kuu_inv[(a, b)] * mu_u[b]).sum::<f64>())
            .sum();
        let kl = 0.5 * (trace + maha - m as f64 + luu.log_det() - chol(sigma_u).log_det());
        expected - kl
    }

    /// The optimal `q(u)` of spec §2.8: `μ_u = K_uu P_u⁻¹ K_uf P (y − m_w)`,
    /// `Σ_u = K_uu P_u⁻¹ K_uu`.
    fn optimal_qu(&self, z: &Mat<f64>, jitter: f64) -> (Vec<f64>, Mat<f64>) {
        let (x, y, n, m) = (self.x.as_ref(), &self.y, self.y.len(), z.nrows());
        let kuu = self.kuu(z, jitter);
        let kfu = self.k.cross(x, z.as_ref());
        let prior = self.mean.eval(x);
        let rt = self.robust_terms();
        let p: Vec<f64> = rt.d.iter().map(|d| 1.0 / d).collect();
        let pkfu = Mat::from_fn(n, m, |j, a| p[j] * kfu[(j, a)]);
        let pu_inv = chol(&(&kuu + kfu.transpose() * &pkfu)).inverse();
        let nu: Vec<f64> = (0..n)
            .map(|j| p[j] * (y[j] - prior[j] - self.noise * rt.g[j]))
            .collect();
        let kuf_nu = Mat::from_fn(m, 1, |a, _| {
            (0..n).map(|j| kfu[(j, a)] * nu[j]).sum::<f64>()
        });
        let mu = &kuu * (&pu_inv * &kuf_nu);
        let sigma = &kuu * &pu_inv * &kuu;
        ((0..m).map(|a| mu[(a, 0)]).collect(), sigma)
    }
}
