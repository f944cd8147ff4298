//! Leave-one-out quantities of the collapsed model and the one-dimensional `ρ_j` update.
//!
//! With `A = Q + D_ρ` (the marginal covariance of `y` under the Nyström prior),
//!
//! ```text
//! V_j = 1/[A⁻¹]_jj,      e_j = y_j − E[y_j | y₋ⱼ] = [A⁻¹(y − m)]_j / [A⁻¹]_jj,
//! ```
//!
//! and by Woodbury, with the core's `Â = L⁻¹K_uf`, `B = I + Â P Âᵀ`, `P = D_ρ⁻¹`:
//! `[A⁻¹]_jj = P_j − P_j² ‖L_B⁻¹Â_j‖²` and `A⁻¹(y − m) = P (y − m − μ)` with `μ` the posterior
//! mean (centred) at the training inputs. Nothing larger than m×n is formed.
//!
//! Changing `ρ_j` alone is a rank-one update of `A`: `e_j` does not move, `V_j` becomes
//! `V⁰_j + ρ_j` with `V⁰_j = V_j − ρ_j`, and the bound changes by (spec §2.10)
//!
//! ```text
//! 2ℓ(ρ) = const − log(V⁰ + ρ) − e²/(V⁰ + ρ) − δ/(σ² + ρ),        δ = K_jj − Q_jj.
//! ```
//!
//! [`RhoUpdate::Exact`] maximises this over `ρ ≥ 0` (the spec's [choice]); for `δ = 0` the
//! optimum is Ament's `[e² − V⁰]₊`. [`RhoUpdate::Paper`] is the paper's closed form
//! `[e/√δ − V⁰]₊` (Prop. F.4, Eq. S134), which is dimensionally inconsistent and offered for
//! comparison only.

use faer::MatRef;

use super::super::sparse::collapsed::{col_dot, Factors};
use super::RelevancePursuit;
use crate::kernels::Kernel;
use crate::means::Mean;

/// Log-spaced grid points of the exact search before its golden-section refinement.
const GRID: usize = 96;
/// Golden-section steps (the bracket shrinks by 0.618 per step: 10⁻²⁰ of the bracket after
/// 100, far below double precision).
const GOLDEN_STEPS: usize = 100;

/// How a candidate's own `ρ_j` is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RhoUpdate {
    /// The exact maximiser of the one-dimensional bound (a bounded scalar search).
    #[default]
    Exact,
    /// The paper's closed form `[e/√δ − V⁰]₊` (and Ament's `[e² − V⁰]₊` where `δ = 0`, where
    /// the paper's is undefined).
    Paper,
}

/// The leave-one-out quantities of every training point.
#[derive(Clone, Debug, PartialEq)]
pub struct LeaveOneOut {
    /// `e_j = y_j − E[y_j | y₋ⱼ]`.
    pub residual: Vec<f64>,
    /// `V_j = Var[y_j | y₋ⱼ]` at the current `ρ` (it includes the noise `σ² + ρ_j`).
    pub variance: Vec<f64>,
    /// `δ_j = K_jj − Q_jj`, what the inducing inputs miss of the point's prior variance.
    pub nystrom_gap: Vec<f64>,
}

impl LeaveOneOut {
    /// `V⁰_j = V_j − ρ_j`: the variance with the point's own `ρ_j` set to 0.
    pub fn variance_without_rho(&self, rho: &[f64]) -> Vec<f64> {
        self.variance.iter().zip(rho).map(|(v, r)| v - r).collect()
    }
}

impl RelevancePursuit {
    /// The `ρ_j` that maximises the bound with every other parameter held, for every point.
    pub fn best_rho(&self, update: RhoUpdate) -> Vec<f64> {
        let l = self.leave_one_out();
        let v0 = l.variance_without_rho(&self.rho);
        (0..self.rho.len())
            .map(|j| best_rho(l.residual[j], v0[j], l.nystrom_gap[j], self.noise, update))
            .collect()
    }
}

/// The leave-one-out quantities of a fitted model.
pub(super) fn leave_one_out(m: &RelevancePursuit) -> LeaveOneOut {
    leave_one_out_at(
        m.x.as_ref(),
        &m.y,
        &m.kernel,
        &m.mean,
        m.noise,
        m.z.as_ref(),
        &m.rho,
        &m.factors,
    )
}

/// The leave-one-out quantities at given parameters and their factors.
#[allow(clippy::too_many_arguments)]
pub(super) fn leave_one_out_at(
    x: MatRef<'_, f64>,
    y: &[f64],
    kernel: &Kernel,
    mean: &Mean,
    noise: f64,
    z: MatRef<'_, f64>,
    rho: &[f64],
    factors: &Factors,
) -> LeaveOneOut {
    let kzx = kernel.cross(z, x);
    let mut a = kzx.clone();
    factors.l_uu.solve_lower_in_place(a.as_mut());
    let mut v = a.clone();
    factors.l_b.solve_lower_in_place(v.as_mut());
    let kdiag = kernel.diag(x);
    let prior = mean.eval(x);
    let n = y.len();
    let mut out = LeaveOneOut {
        residual: Vec::with_capacity(n),
        variance: Vec::with_capacity(n),
        nystrom_gap: Vec::with_capacity(n),
    };
    for j in 0..n {
        let p = 1.0 / (noise + rho[j]);
        let fitted: f64 = (0..z.nrows()).map(|i| kzx[(i, j)] * factors.alpha[i]).sum();
        // [A⁻¹]_jj = P(1 − P‖L_B⁻¹Â_j‖²) ≤ P, and > 0 in exact arithmetic; round-off at a
        // point the inducing inputs explain fully could cancel it, hence the floor.
        let c = (p * (1.0 - p * col_dot(v.as_ref(), v.as_ref(), j))).max(p * 1e-15);
        let b = p * (y[j] - prior[j] - fitted);
        out.residual.push(b / c);
        out.variance.push(1.0 / c);
        out.nystrom_gap
            .push((kdiag[j] - col_dot(a.as_ref(), a.as_ref(), j)).max(0.0));
    }
    out
}

/// `2ℓ(ρ)` up to its constant: `−log(V⁰ + ρ) − e²/(V⁰ + ρ) − δ/(s + ρ)`.
pub fn point_objective(e: f64, v0: f64, delta: f64, noise: f64, rho: f64) -> f64 {
    let v = v0 + rho;
    -v.ln() - e * e / v - delta / (noise + rho)
}

/// The `ρ ≥ 0` that maximises [`point_objective`] (or the paper's closed form), for the
/// point's leave-one-out residual `e`, variance `v0` at `ρ = 0`, Nyström gap `delta` and the
/// noise variance `noise`.
pub fn best_rho(e: f64, v0: f64, delta: f64, noise: f64, update: RhoUpdate) -> f64 {
    match update {
        RhoUpdate::Paper if delta > 0.0 => (e / delta.sqrt() - v0).max(0.0),
        RhoUpdate::Paper => (e * e - v0).max(0.0),
        RhoUpdate::Exact => exact_rho(e, v0, delta, noise),
    }
}

/// Grid search over `[0, upper]` then golden section around the best grid point.
///
/// Beyond `upper` the objective falls: with `ρ ≥ V⁰ ≥ s`, `(V⁰ + ρ)/(s + ρ) ≤ 2`, so
/// `(V⁰ + ρ)² ∂ℓ/∂ρ ∝ −(V⁰ + ρ) + e² + δ(V⁰ + ρ)²/(s + ρ)² < e² + 4δ − V⁰ − ρ < 0` once
/// `ρ > max(V⁰, e² + 4δ)`. The numerator of the derivative is a cubic, so at most two local
/// maxima exist; the grid (log-spaced, so both small and large optima are resolved) picks the
/// basin and the golden section finds its top.
fn exact_rho(e: f64, v0: f64, delta: f64, noise: f64) -> f64 {
    let f = |r: f64| point_objective(e, v0, delta, noise, r);
    let upper = 2.0 * v0.max(e * e + 4.0 * delta);
    if !(upper.is_finite() && upper > 0.0) {
        return 0.0;
    }
    let lowest = upper * 1e-12;
    let grid: Vec<f64> = std::iter::once(0.0)
        .chain((0..GRID).map(|k| lowest * (upper / lowest).powf(k as f64 / (GRID - 1) as f64)))
        .collect();
    let values: Vec<f64> = grid.iter().map(|&r| f(r)).collect();
    let best = (0..grid.len()).fold(0, |b, k| if values[k] > values[b] { k } else { b });
    let (mut lo, mut hi) = (grid[best.saturating_sub(1)], grid[(best + 1).min(GRID)]);
    let phi = 0.5 * (5f64.sqrt() - 1.0);
    let (mut c, mut d) = (hi - phi * (hi - lo), lo + phi * (hi - lo));
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..GOLDEN_STEPS {
        if fc >= fd {
            hi = d;
            (d, fd) = (c, fc);
            c = hi - phi * (hi - lo);
            fc = f(c);
        } else {
            lo = c;
            (c, fc) = (d, fd);
            d = lo + phi * (hi - lo);
            fd = f(d);
        }
    }
    let refined = if fc >= fd { c } else { d };
    // The boundary ρ = 0 is a grid point; keep it when the refinement does not beat it.
    if f(refined) > values[best] {
        refined
    } else {
        grid[best]
    }
}
