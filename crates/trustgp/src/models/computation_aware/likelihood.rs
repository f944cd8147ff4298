//! The robust pseudo-likelihood of RCGP (spec §2.1–§2.2) and its derivatives.
//!
//! With `u = y − γ` (the centre `γ` is the prior mean `m0`, or a given fixed centre per point),
//! the IMQ weight `w = β(1 + u²/c²)^(−1/2)` gives per point
//!
//! ```text
//! g = ∂_y log w² = −2u/(c² + u²),   h = ∂_y(y w²) = w²(1 + y g),
//! D = σ⁴/(2w²),   P = 1/D,   m_w = m0 + σ² g,   r = y − m_w,
//! ν = P (y − σ² g),   C = yᵀPy − 4σ⁻² Σ h,
//! log p^w(y | f) = −½ (fᵀPf − 2fᵀν + C).
//! ```
//!
//! CaGP is the same pseudo-likelihood with the constant weight `w = σ/√2` (so `D = σ²I`,
//! `m_w = m0`); its Gaussian log-likelihood differs from `log p^w` by the constant
//! `−n − (n/2) log(2πσ²)` (spec §2.7), which [`PseudoLikelihood::offset`] adds. The weight
//! algebra (`w²`, `g`, `h` and their derivatives) is [`ImqPoint`]'s.

use crate::likelihoods::imq::h_term;
use crate::likelihoods::ImqPoint;

/// How the observations are weighted: the IMQ weight (RCaGP) or `w ≡ σ/√2` (CaGP).
pub(crate) use crate::likelihoods::ImqWeighting as Weighting;

/// The per-point quantities of the pseudo-likelihood at given `σ²` and `m0`.
#[derive(Clone, Debug)]
pub(crate) struct PseudoLikelihood {
    weighting: Weighting,
    s2: f64,
    y: Vec<f64>,
    /// `y − γ`, the residuals from the weight's centre.
    u: Vec<f64>,
    /// Whether the centre is the prior mean `m0` (so the weights move with it).
    centred_on_mean: bool,
    /// `w²`.
    pub w2: Vec<f64>,
    g: Vec<f64>,
    h: Vec<f64>,
    /// `P = 2w²/σ⁴`.
    pub p: Vec<f64>,
    /// `D = σ⁴/(2w²)`.
    pub d: Vec<f64>,
    /// `log D`, computed from `log w²` so that it stays finite when `D` overflows.
    pub log_d: Vec<f64>,
    /// `r = y − m_w`.
    pub r: Vec<f64>,
    /// `ν = P (y − σ² g)`.
    pub nu: Vec<f64>,
    /// `C`.
    pub c: f64,
}

impl PseudoLikelihood {
    /// The quantities for targets `y`, constant prior mean `m0` and noise variance `s2`, the
    /// weights centred on `centre` (one per point, fixed) or, if `None`, on `m0`.
    pub(crate) fn new(
        y: &[f64],
        m0: f64,
        s2: f64,
        weighting: Weighting,
        centre: Option<&[f64]>,
    ) -> PseudoLikelihood {
        let n = y.len();
        let u: Vec<f64> = match centre {
            Some(c) => y.iter().zip(c).map(|(v, g)| v - g).collect(),
            None => y.iter().map(|v| v - m0).collect(),
        };
        let (mut log_w2, mut g) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for &uj in &u {
            let (lw, gj) = weighting.log_w2_and_g(uj, s2);
            log_w2.push(lw);
            g.push(gj);
        }
        let w2: Vec<f64> = log_w2.iter().map(|v| v.exp()).collect();
        let h: Vec<f64> = (0..n).map(|j| h_term(w2[j], g[j], y[j])).collect();
        let log_d: Vec<f64> = log_w2
            .iter()
            .map(|lw| 2.0 * s2.ln() - 2f64.ln() - lw)
            .collect();
        let d = log_d.iter().map(|v| v.exp()).collect();
        let p: Vec<f64> = w2.iter().map(|w| 2.0 * w / (s2 * s2)).collect();
        let r = (0..n).map(|j| y[j] - m0 - s2 * g[j]).collect();
        let nu = (0..n).map(|j| p[j] * (y[j] - s2 * g[j])).collect();
        let c = (0..n).map(|j| p[j] * y[j] * y[j]).sum::<f64>() - 4.0 / s2 * h.iter().sum::<f64>();
        PseudoLikelihood {
            weighting,
            s2,
            y: y.to_vec(),
            u,
            centred_on_mean: centre.is_none(),
            w2,
            g,
            h,
            p,
            d,
            log_d,
            r,
            nu,
            c,
        }
    }

    /// The constant turning `log p^w` into the Gaussian log-likelihood for CaGP; 0 for RCaGP.
    pub(crate) fn offset(&self) -> f64 {
        match self.weighting {
            Weighting::Imq { .. } => 0.0,
            Weighting::Constant => {
                let n = self.y.len() as f64;
                -n - 0.5 * n * (2.0 * std::f64::consts::PI * self.s2).ln()
            }
        }
    }

    /// `E_q[log p^w(y | f)]` (plus [`offset`](Self::offset)) for `q` with marginal means `mu`
    /// and variances `kappa`.
    pub(crate) fn expected(&self, mu: &[f64], kappa: &[f64]) -> f64 {
        let quad: f64 = (0..mu.len())
            .map(|j| self.p[j] * (kappa[j] + mu[j] * mu[j]) - 2.0 * mu[j] * self.nu[j])
            .sum();
        -0.5 * (quad + self.c) + self.offset()
    }

    /// Gradient `(∂/∂log σ², ∂/∂m0)` of the ELBO through this pseudo-likelihood, given the
    /// marginals `mu`, `kappa` of [`expected`](Self::expected) and the adjoints of `D` and `r`
    /// from the rest of the ELBO (the explicit `m0` in the mean of `q` is the caller's).
    pub(crate) fn backward(
        &self,
        mu: &[f64],
        kappa: &[f64],
        d_bar: &[f64],
        r_bar: &[f64],
    ) -> (f64, f64) {
        let s2 = self.s2;
        let (mut d_ls2, mut d_m0) = (0.0, 0.0);
        // Adjoint of h: C̄ = −½ and ∂C/∂h = −4/σ².
        let h_bar = 2.0 / s2;
        for j in 0..self.y.len() {
            let (p, d, g, y) = (self.p[j], self.d[j], self.g[j], self.y[j]);
            // P reaches ℓ through E directly, through ν = P(y − σ²g) and through C = Σ P y² − ….
            let p_bar = -0.5 * (kappa[j] + mu[j] * mu[j]) + mu[j] * (y - s2 * g) - 0.5 * y * y;
            // P = 2w²/σ⁴ and D = σ⁴/(2w²): P̄·P − D̄·D is the adjoint of log w².
            let lw2_bar = p_bar * p - d_bar[j] * d;
            let g_bar = -mu[j] * p * s2 - r_bar[j] * s2;
            d_ls2 += -2.0 * p_bar * p + 2.0 * d_bar[j] * d;
            d_ls2 += s2 * (-mu[j] * p * g - r_bar[j] * g) - 2.0 * self.h[j] / s2;
            d_m0 -= r_bar[j];
            match self.weighting {
                // A given centre is fixed: the weights do not move with m0.
                Weighting::Imq { .. } if !self.centred_on_mean => {}
                Weighting::Imq { beta, c } => {
                    let imq = ImqPoint::new(self.u[j], c);
                    // u = y − m0 at fixed y, and ∂ log w²/∂u = g.
                    d_m0 -= lw2_bar * g + g_bar * imq.dg_dy() + h_bar * imq.dh_dresidual(beta, y);
                }
                Weighting::Constant => {
                    // log w² = log(σ²/2) and h = w² = σ²/2.
                    d_ls2 += lw2_bar + h_bar * s2 / 2.0;
                }
            }
        }
        if self.weighting == Weighting::Constant {
            d_ls2 -= 0.5 * self.y.len() as f64;
        }
        (d_ls2, d_m0)
    }
}
