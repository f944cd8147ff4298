//! The dense reference: RCGP, RCaGP and CaGP with every n×n matrix formed, from the spec's
//! formulas (§2.1–§2.7) written independently of the library code.

use faer::Mat;

use crate::kernels::Kernel;
use crate::linalg::{Cholesky, Parallelism};

/// `A⁻¹` and `log det A` of a symmetric positive definite matrix.
pub(super) fn inv_logdet(a: &Mat<f64>) -> (Mat<f64>, f64) {
    let ch = Cholesky::factor(a, "reference", Parallelism::Sequential).unwrap();
    assert_eq!(ch.jitter(), 0.0, "the reference needs no jitter");
    (ch.inverse(), ch.log_det())
}

/// `KL(N(m1, s1) ‖ N(m0, s0))`.
pub(super) fn gaussian_kl(m1: &[f64], s1: &Mat<f64>, m0: &[f64], s0: &Mat<f64>) -> f64 {
    let n = m1.len();
    let (s0inv, ld0) = inv_logdet(s0);
    let (_, ld1) = inv_logdet(s1);
    let tr: f64 = (0..n)
        .flat_map(|a| (0..n).map(move |b| (a, b)))
        .map(|(a, b)| s0inv[(a, b)] * s1[(b, a)])
        .sum();
    let dm: Vec<f64> = (0..n).map(|j| m0[j] - m1[j]).collect();
    let quad: f64 = (0..n)
        .flat_map(|a| (0..n).map(move |b| (a, b)))
        .map(|(a, b)| dm[a] * s0inv[(a, b)] * dm[b])
        .sum();
    0.5 * (tr + quad - n as f64 + ld0 - ld1)
}

/// The dense action matrix of block vectors.
pub(super) fn dense_actions(blocks: &[Vec<f64>]) -> Mat<f64> {
    let n: usize = blocks.iter().map(Vec::len).sum();
    let mut s = Mat::<f64>::zeros(n, blocks.len());
    let mut row = 0;
    for (b, t) in blocks.iter().enumerate() {
        for v in t {
            s[(row, b)] = *v;
            row += 1;
        }
    }
    s
}

/// Everything about one problem at fixed parameters.
pub(super) struct Dense {
    kernel: Kernel,
    x: Mat<f64>,
    y: Vec<f64>,
    s2: f64,
    m0: f64,
    robust: bool,
    /// `K`.
    pub k: Mat<f64>,
    /// `w` and `∂_y w`.
    pub w: Vec<f64>,
    dw: Vec<f64>,
    /// `D`, `P`, `r = y − m_w`, `ν`, `C`.
    pub d: Vec<f64>,
    pub p: Vec<f64>,
    pub r: Vec<f64>,
    pub nu: Vec<f64>,
    pub c: f64,
}

impl Dense {
    /// The reference for noise `s2`, mean `m0` and IMQ `(β, c)` (RCaGP) or `None` (CaGP).
    pub(super) fn new(
        x: &Mat<f64>,
        y: &[f64],
        kernel: &Kernel,
        s2: f64,
        m0: f64,
        imq: Option<(f64, f64)>,
    ) -> Dense {
        let n = y.len();
        let (w, dw): (Vec<f64>, Vec<f64>) = (0..n)
            .map(|j| match imq {
                Some((beta, c)) => {
                    let u = y[j] - m0;
                    let w = beta / (1.0 + u * u / (c * c)).sqrt();
                    (w, -w.powi(3) * u / (beta * beta * c * c))
                }
                None => (s2.sqrt() / 2f64.sqrt(), 0.0),
            })
            .unzip();
        let d: Vec<f64> = w.iter().map(|w| s2 * s2 / (2.0 * w * w)).collect();
        let p: Vec<f64> = d.iter().map(|d| 1.0 / d).collect();
        // g = ∂_y log w² = 2 ∂_y w / w, m_w = m0 + σ² g, ν = P(y − m_w + m0).
        let g: Vec<f64> = (0..n).map(|j| 2.0 * dw[j] / w[j]).collect();
        let r: Vec<f64> = (0..n).map(|j| y[j] - m0 - s2 * g[j]).collect();
        let nu = (0..n).map(|j| p[j] * (y[j] - s2 * g[j])).collect();
        let c = (0..n)
            .map(|j| {
                let h = w[j] * w[j] + 2.0 * y[j] * w[j] * dw[j];
                2.0 * w[j] * w[j] * y[j] * y[j] / (s2 * s2) - 4.0 / s2 * h
            })
            .sum();
        Dense {
            kernel: kernel.clone(),
            x: x.clone(),
            y: y.to_vec(),
            s2,
            m0,
            robust: imq.is_some(),
            k: kernel.matrix(x.as_ref()),
            w,
            dw,
            d,
            p,
            r,
            nu,
            c,
        }
    }

    /// `log p^w(y | f)` from the per-point weighted score-matching loss (spec §2.2).
    pub(super) fn score_matching(&self, f: &[f64]) -> f64 {
        let s2 = self.s2;
        -(0..self.y.len())
            .map(|j| {
                let (w, e) = (self.w[j], f[j] - self.y[j]);
                // ∂_y (w² (f − y)) = 2w ∂_y w (f − y) − w².
                w * w * e * e / (s2 * s2) + 2.0 / s2 * (2.0 * w * self.dw[j] * e - w * w)
            })
            .sum::<f64>()
    }

    /// The expected log-likelihood under marginals `mu`, `kappa`: the score-matching loss
    /// (quadratic in f) for RCaGP, the Gaussian log density for CaGP.
    fn expected(&self, mu: &[f64], kappa: &[f64]) -> f64 {
        let s2 = self.s2;
        (0..mu.len())
            .map(|j| {
                let (w, e) = (self.w[j], mu[j] - self.y[j]);
                if self.robust {
                    -(w * w * (e * e + kappa[j]) / (s2 * s2)
                        + 2.0 / s2 * (2.0 * w * self.dw[j] * e - w * w))
                } else {
                    -0.5 * (2.0 * std::f64::consts::PI * s2).ln() - (e * e + kappa[j]) / (2.0 * s2)
                }
            })
            .sum()
    }

    /// `K̃ = K + D`.
    pub(super) fn k_tilde(&self) -> Mat<f64> {
        let mut kt = self.k.clone();
        for j in 0..self.y.len() {
            kt[(j, j)] += self.d[j];
        }
        kt
    }

    /// `C̃ = S (SᵀK̃S)⁻¹ Sᵀ`, or `K̃⁻¹` (exact RCGP / GP) without actions.
    pub(super) fn c_tilde(&self, s: Option<&Mat<f64>>) -> Mat<f64> {
        let kt = self.k_tilde();
        match s {
            Some(s) => {
                let g = s.transpose() * &kt * s;
                s * inv_logdet(&g).0 * s.transpose()
            }
            None => inv_logdet(&kt).0,
        }
    }

    /// `C̃ r`: the representer weights.
    pub(super) fn weights(&self, s: Option<&Mat<f64>>) -> Vec<f64> {
        let c = self.c_tilde(s);
        (0..self.y.len())
            .map(|a| (0..self.y.len()).map(|b| c[(a, b)] * self.r[b]).sum())
            .collect()
    }

    /// Posterior mean and covariance at `xs` with actions `s` (`None`: exact RCGP / GP).
    pub(super) fn posterior(&self, s: Option<&Mat<f64>>, xs: &Mat<f64>) -> (Vec<f64>, Mat<f64>) {
        let kxs = self.kernel.cross(self.x.as_ref(), xs.as_ref());
        let v = self.weights(s);
        let mean = (0..xs.nrows())
            .map(|t| self.m0 + (0..v.len()).map(|j| kxs[(j, t)] * v[j]).sum::<f64>())
            .collect();
        let cov = self.kernel.matrix(xs.as_ref()) - kxs.transpose() * self.c_tilde(s) * &kxs;
        (mean, cov)
    }

    /// `q(f)` at the training inputs: mean `m0 + K C̃ r` and covariance `K − K C̃ K`.
    fn q(&self, s: &Mat<f64>) -> (Vec<f64>, Mat<f64>) {
        let v = self.weights(Some(s));
        let n = v.len();
        let mean = (0..n)
            .map(|a| self.m0 + (0..n).map(|b| self.k[(a, b)] * v[b]).sum::<f64>())
            .collect();
        let cov = &self.k - &self.k * self.c_tilde(Some(s)) * &self.k;
        (mean, cov)
    }

    /// The dense Gaussian `KL(q ‖ p)`.
    pub(super) fn kl(&self, s: &Mat<f64>) -> f64 {
        let (mean, cov) = self.q(s);
        gaussian_kl(&mean, &cov, &vec![self.m0; mean.len()], &self.k)
    }

    /// The ELBO: expected log-likelihood (per point) minus the dense KL.
    pub(super) fn elbo(&self, s: &Mat<f64>) -> f64 {
        let (mean, cov) = self.q(s);
        let kappa: Vec<f64> = (0..mean.len()).map(|j| cov[(j, j)]).collect();
        self.expected(&mean, &kappa) - self.kl(s)
    }

    /// The ELBO by the spec's closed form with a dense `log det(SᵀDS)` (valid for any `S`).
    pub(super) fn elbo_closed_form(&self, s: &Mat<f64>) -> f64 {
        let n = self.y.len();
        let kt = self.k_tilde();
        let m = s.transpose() * &self.k * s;
        let (ginv, ld_g) = inv_logdet(&(s.transpose() * &kt * s));
        let dmat = Mat::<f64>::from_fn(n, n, |a, b| if a == b { self.d[a] } else { 0.0 });
        let (_, ld_t) = inv_logdet(&(s.transpose() * dmat * s));
        let z = s.transpose() * Mat::<f64>::from_fn(n, 1, |j, _| self.r[j]);
        let a = &ginv * &z;
        let b = &self.k * s;
        let mu: Vec<f64> = (0..n).map(|j| self.m0 + (&b * &a)[(j, 0)]).collect();
        let bgb = &b * &ginv * b.transpose();
        let kappa: Vec<f64> = (0..n).map(|j| self.k[(j, j)] - bgb[(j, j)]).collect();
        let ama = (a.transpose() * &m * &a)[(0, 0)];
        let tr: f64 = (0..m.nrows()).map(|q| (&ginv * &m)[(q, q)]).sum();
        self.expected(&mu, &kappa) - 0.5 * (ama + ld_g - ld_t - tr)
    }

    /// `log Z^w` by the closed form of spec §2.6 (RCaGP), or the exact GP log evidence (CaGP).
    pub(super) fn log_evidence(&self) -> f64 {
        let n = self.y.len();
        let (kt_inv, ld_kt) = inv_logdet(&self.k_tilde());
        let quad = |v: &[f64]| -> f64 {
            (0..n)
                .flat_map(|a| (0..n).map(move |b| (a, b)))
                .map(|(a, b)| v[a] * kt_inv[(a, b)] * v[b])
                .sum()
        };
        if !self.robust {
            let res: Vec<f64> = self.y.iter().map(|y| y - self.m0).collect();
            let two_pi = 2.0 * std::f64::consts::PI;
            return -0.5 * (quad(&res) + ld_kt + n as f64 * two_pi.ln());
        }
        let m = self.m0;
        let sum = |f: &dyn Fn(usize) -> f64| (0..n).map(f).sum::<f64>();
        // log det(I + KP) = log det(K + D) + Σ log P.
        let ld = ld_kt + sum(&|j| self.p[j].ln());
        -0.5 * self.c - 0.5 * sum(&|j| self.p[j] * m * m)
            + sum(&|j| m * self.nu[j])
            + 0.5 * sum(&|j| self.p[j] * self.r[j] * self.r[j])
            - 0.5 * quad(&self.r)
            - 0.5 * ld
    }
}
