//! The two pseudo-likelihoods in the Gaussian form of the [collapsed core](super::collapsed):
//! `log p̃(y | f) = −½ (g − t)ᵀ P (g − t) + κ` with `g = f − m(X)`, per point `j`, with
//! residual `u = y − m(x)`, noise variance `s = σ²` and `λ = log s`:
//!
//! ```text
//! SGPR     P = 1/s,          t = u,          κ = −½ log(2π s)
//! RCSVGP   P = 2w²/s²,       t = u − s g,    κ = w² (g² + 2/s)
//!          w² = β² c² / (c² + u²),   g = ∂ log w²/∂y = −2u / (c² + u²)
//! ```
//!
//! (the weight algebra is [`ImqPoint`]'s).
//!
//! The RCSVGP form is the weighted score-matching loss of spec §2.2 (the IMQ weight centred
//! on the prior mean, as in [`crate::robust`]) with the square completed in `f`: expanding
//! `−Σ_j [w²(f − y)²/s² + (2/s) ∂_y(w²(f − y))]` gives exactly the line above, so `P`, `t` and
//! `κ` are `P`, `y − m_w` and `½νᵀP⁻¹ν − ½C` of the spec, with `y` cancelling from `κ`.
//! Every quantity depends on the residual (so on the mean parameters) and on `s`; `c` and `β`
//! are fixed. The derivatives below feed the chain rule from the core's adjoints.

use super::SparseKind;
use crate::likelihoods::{ImqPoint, ImqWeighting};

/// One point's `log P`, `t`, `κ` and their derivatives in `λ = log s` and in `u`.
struct Point {
    p: f64,
    t: f64,
    kappa: f64,
    log_p_dlam: f64,
    t_dlam: f64,
    kappa_dlam: f64,
    log_p_du: f64,
    t_du: f64,
    kappa_du: f64,
}

/// `P`, `t` and the total constant `Σ κ_j` of one model at given parameters.
pub(super) struct Pseudo {
    /// Diagonal precision.
    pub p: Vec<f64>,
    /// Target of the centred latent values.
    pub t: Vec<f64>,
    /// `Σ_j κ_j`.
    pub kappa: f64,
}

/// The fixed settings of the robust weight (unused by SGPR).
#[derive(Clone, Copy, Debug)]
pub(super) struct WeightSettings {
    /// Soft threshold `c`.
    pub c: f64,
    /// Weight scale `β`.
    pub beta: f64,
}

impl SparseKind {
    fn point(self, u: f64, s: f64, ws: WeightSettings) -> Point {
        match self {
            SparseKind::Sgpr => Point {
                p: 1.0 / s,
                t: u,
                kappa: -0.5 * (2.0 * std::f64::consts::PI * s).ln(),
                log_p_dlam: -1.0,
                t_dlam: 0.0,
                kappa_dlam: -0.5,
                log_p_du: 0.0,
                t_du: 1.0,
                kappa_du: 0.0,
            },
            SparseKind::Rcsvgp => {
                let imq = ImqPoint::new(u, ws.c);
                let w2 = ws.beta * ws.beta * imq.w_hat2();
                let (g, dg) = (imq.g(), imq.dg_dy());
                Point {
                    p: 2.0 * w2 / (s * s),
                    t: u - s * g,
                    kappa: w2 * (g * g + 2.0 / s),
                    log_p_dlam: -2.0,
                    t_dlam: -s * g,
                    kappa_dlam: -2.0 * w2 / s,
                    // ∂w²/∂u = w² g
                    log_p_du: g,
                    t_du: 1.0 - s * dg,
                    kappa_du: w2 * g * (g * g + 2.0 / s) + 2.0 * w2 * g * dg,
                }
            }
        }
    }

    /// `P`, `t` and `Σκ` for targets `y`, prior mean values `prior` and noise variance `s`.
    pub(super) fn pseudo(self, y: &[f64], prior: &[f64], s: f64, ws: WeightSettings) -> Pseudo {
        let mut out = Pseudo {
            p: Vec::with_capacity(y.len()),
            t: Vec::with_capacity(y.len()),
            kappa: 0.0,
        };
        for (yj, mj) in y.iter().zip(prior) {
            let pt = self.point(yj - mj, s, ws);
            out.p.push(pt.p);
            out.t.push(pt.t);
            out.kappa += pt.kappa;
        }
        out
    }

    /// The chain rule from `∂G/∂log P` and `∂G/∂t` (plus `Σκ`'s own derivatives) to the
    /// derivative in `log s` and the derivatives in the prior mean values `m(x_j)`.
    pub(super) fn chain(
        self,
        y: &[f64],
        prior: &[f64],
        s: f64,
        ws: WeightSettings,
        log_p_bar: &[f64],
        t_bar: &[f64],
    ) -> (f64, Vec<f64>) {
        let mut d_lam = 0.0;
        let d_prior = (0..y.len())
            .map(|j| {
                let pt = self.point(y[j] - prior[j], s, ws);
                d_lam += log_p_bar[j] * pt.log_p_dlam + t_bar[j] * pt.t_dlam + pt.kappa_dlam;
                // u = y − m, so ∂/∂m = −∂/∂u.
                -(log_p_bar[j] * pt.log_p_du + t_bar[j] * pt.t_du + pt.kappa_du)
            })
            .collect();
        (d_lam, d_prior)
    }

    /// The weight `w_j` of every point (RCSVGP), or the constant `σ/√2` that makes the robust
    /// model Gaussian (SGPR).
    pub(super) fn weights(self, y: &[f64], prior: &[f64], s: f64, ws: WeightSettings) -> Vec<f64> {
        let weighting = match self {
            SparseKind::Sgpr => ImqWeighting::Constant,
            SparseKind::Rcsvgp => ImqWeighting::Imq {
                beta: ws.beta,
                c: ws.c,
            },
        };
        y.iter()
            .zip(prior)
            .map(|(yj, mj)| weighting.weight(yj - mj, s))
            .collect()
    }
}
