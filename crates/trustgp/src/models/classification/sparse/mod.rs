//! The sparse FIC, DTC and VAR posteriors of spec §2.2 over `M` inducing inputs `U`, for
//! regression ([`SparseRegression`]) and for EP classification with the probit likelihood
//! ([`SparseEp`]).
//!
//! With `Q_ff = K_fu K_uu⁻¹ K_uf`, the three priors on the training latent values are
//!
//! ```text
//! DTC, VAR:  f ~ N(0, Q_ff)               FIC:  f ~ N(0, Q_ff + G),  G = diag(K_ff − Q_ff)
//! ```
//!
//! and every posterior is the linear-Gaussian form over `U` (spec table §2.2)
//!
//! ```text
//! t = Σ_u K_uf Λ⁻¹ ỹ,   S = K_uu⁻¹ − Σ_u,   Σ_u = (K_uu + K_uf Λ⁻¹ K_fu)⁻¹,
//! Λ = Λ_s (DTC, VAR)  or  Λ_s + G (FIC),
//! ```
//!
//! with `Λ_s = σ²I`, `ỹ = y − m(X)` for regression and `Λ_s = diag(1/τ̃)`, `ỹ = μ̃` (the EP
//! sites) for classification. That is SGPR's collapsed core with a diagonal precision
//! `P = Λ⁻¹` (`models::sparse::collapsed`), which both models reuse for their factors and
//! (VAR) their bound: no twin of it lives here. DTC and VAR share predictions and differ in
//! their evidence: VAR subtracts `½ Σ_j (K_jj − Q_jj) / Λ_s,jj` (Titsias' trace term).
//! `Λ⁻¹` is formed as `τ / (1 + g τ)` from the site precision `τ = Λ_s⁻¹`, so an EP site with
//! `τ̃ = 0` (no information yet) is exact, not `1/0`.

mod ep;
mod regression;
#[cfg(test)]
mod tests;

use faer::{Mat, MatRef};

pub use self::ep::{EpOptions, SparseEp};
pub use self::regression::SparseRegression;
use crate::kernels::Kernel;
use crate::linalg::{parallelism_for, Cholesky};
use crate::models::ModelError;

/// The jitter added to the diagonal of `K_uu` by default (SGPR's).
pub const INDUCING_JITTER: f64 = crate::models::sparse::KUU_JITTER;

/// Which sparse approximation of the prior.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SparsePrior {
    /// Fully independent conditional (FITC training, FI test conditional).
    Fic,
    /// Deterministic training conditional (projected process).
    Dtc,
    /// Titsias' variational free energy: DTC's predictions, an evidence with a trace term.
    Var,
}

impl SparsePrior {
    /// The lower-case name (`fic`, `dtc`, `var`).
    pub fn name(self) -> &'static str {
        match self {
            SparsePrior::Fic => "fic",
            SparsePrior::Dtc => "dtc",
            SparsePrior::Var => "var",
        }
    }
}

/// The pieces of the low-rank prior that do not depend on the sites or the noise.
pub(super) struct LowRank {
    /// The Cholesky factor of `K_uu + jitter·I`.
    pub l_uu: Cholesky,
    /// `V = L_uu⁻¹ K_uf` (M×n), so that `Q_ff = VᵀV`.
    pub v: Mat<f64>,
    /// `K_jj − Q_jj ≥ 0` (clamped: round-off can make it slightly negative).
    pub trace: Vec<f64>,
    /// The diagonal `G` of the prior beyond `Q_ff`: `trace` for FIC, zeros otherwise.
    pub g: Vec<f64>,
}

impl LowRank {
    /// `V`, `K_ff − Q_ff` and `G` for training inputs `x` and inducing inputs `z`.
    pub fn new(
        kernel: &Kernel,
        x: MatRef<'_, f64>,
        z: MatRef<'_, f64>,
        jitter: f64,
        prior: SparsePrior,
    ) -> Result<LowRank, ModelError> {
        let mut kuu = kernel.matrix(z);
        for i in 0..z.nrows() {
            kuu[(i, i)] += jitter;
        }
        let l = Cholesky::factor(&kuu, "inducing covariance K_uu", parallelism_for(z.nrows()))?;
        let mut v = kernel.cross(z, x);
        l.solve_lower_in_place(v.as_mut());
        let kdiag = kernel.diag(x);
        let trace: Vec<f64> = kdiag
            .iter()
            .enumerate()
            .map(|(j, k)| (k - v.col(j).iter().map(|a| a * a).sum::<f64>()).max(0.0))
            .collect();
        let g = match prior {
            SparsePrior::Fic => trace.clone(),
            SparsePrior::Dtc | SparsePrior::Var => vec![0.0; x.nrows()],
        };
        Ok(LowRank {
            l_uu: l,
            v,
            trace,
            g,
        })
    }

    /// `∂/∂θ Σ_j w_j (K_jj − Q_jj)` for every kernel log-hyperparameter `θ` (the jitter on
    /// `K_uu` is a constant). With `C = K_uu⁻¹ K_uf`,
    /// `∂ Σ_j w_j Q_jj = Σ 2 (C diag(w))_uj ∂K_uf[u, j] − Σ (C diag(w) Cᵀ)_uu' ∂K_uu[u, u']`.
    pub fn trace_gradient(
        &self,
        kernel: &Kernel,
        x: MatRef<'_, f64>,
        z: MatRef<'_, f64>,
        w: &[f64],
    ) -> Vec<f64> {
        let mut out = vec![0.0; kernel.n_params()];
        kernel.grad_contract_diag(x, w, &mut out);
        let mut c = self.v.clone();
        self.l_uu.solve_lower_transpose_in_place(c.as_mut());
        let cw = Mat::from_fn(c.nrows(), c.ncols(), |u, j| c[(u, j)] * w[j]);
        let cross = Mat::from_fn(c.nrows(), c.ncols(), |u, j| -2.0 * cw[(u, j)]);
        kernel.grad_contract_cross(z, x, cross.as_ref(), &mut out);
        let uu = &cw * c.transpose();
        kernel.grad_contract(z, uu.as_ref(), &mut out);
        out
    }

    /// The gradient of the Gaussian part of the evidence at fixed site precisions `tau` and
    /// targets `target`,
    /// `L = log N(ỹ | 0, Q_ff + G + diag(1/τ)) [− ½ Σ_j τ_j (K_jj − Q_jj) for VAR]`
    /// (the whole regression LML; EP's evidence at converged sites, whose other terms do not
    /// depend on θ there, R&W §5.5.2): `(∂L/∂θ, ∂L/∂log τ_j)`.
    ///
    /// `L = G(P, ỹ) + c ½ Σ_j P_j tr_j + ½ Σ_j log P_j + const` with SGPR's core `G`, `c = 0`
    /// for VAR and 1 otherwise; FIC's `P_j = τ_j / (1 + tr_j τ_j)` moves with θ through
    /// `tr_j = K_jj − Q_jj`: `∂ log P_j = −P_j ∂tr_j`.
    #[allow(clippy::too_many_arguments)]
    pub fn evidence_gradient(
        &self,
        kernel: &Kernel,
        x: MatRef<'_, f64>,
        z: MatRef<'_, f64>,
        jitter: f64,
        prior: SparsePrior,
        tau: &[f64],
        target: &[f64],
    ) -> Result<(Vec<f64>, Vec<f64>), ModelError> {
        use crate::models::sparse::collapsed::{collapsed_bound, Wanted};
        let p = self.precision(tau);
        let core = collapsed_bound(kernel, x, z, jitter, &p, target, Wanted::FixedInducing)?;
        let g = core.grad.ok_or_else(|| {
            ModelError::Invalid("sparse evidence: the collapsed core gave no gradient".into())
        })?;
        let c = if prior == SparsePrior::Var { 0.0 } else { 1.0 };
        // ∂L/∂log P_j.
        let d_log_p: Vec<f64> = (0..p.len())
            .map(|j| g.log_p[j] + c * 0.5 * p[j] * self.trace[j] + 0.5)
            .collect();
        let mut grad = g.kernel;
        let mut w: Vec<f64> = p.iter().map(|pj| c * 0.5 * pj).collect();
        if prior == SparsePrior::Fic {
            for (j, wj) in w.iter_mut().enumerate() {
                *wj -= p[j] * d_log_p[j];
            }
        }
        for (a, b) in grad.iter_mut().zip(self.trace_gradient(kernel, x, z, &w)) {
            *a += b;
        }
        // log P_j = log τ_j − log(1 + g_j τ_j): ∂ log P_j / ∂ log τ_j = 1 / (1 + g_j τ_j).
        let d_log_tau = (0..p.len())
            .map(|j| d_log_p[j] / (1.0 + self.g[j] * tau[j]))
            .collect();
        Ok((grad, d_log_tau))
    }

    /// `Λ⁻¹ = τ / (1 + g τ)` for site precisions `τ`.
    pub fn precision(&self, tau: &[f64]) -> Vec<f64> {
        tau.iter()
            .zip(&self.g)
            .map(|(t, g)| t / (1.0 + g * t))
            .collect()
    }
}

/// Checks inducing inputs and a jitter.
fn check_inducing(z: MatRef<'_, f64>, d: usize, jitter: f64) -> Result<(), ModelError> {
    crate::models::checks::check_matrix("inducing input", z, d)?;
    if !(jitter.is_finite() && jitter >= 0.0) {
        return Err(ModelError::Invalid(format!(
            "the K_uu jitter must be a finite number ≥ 0, got {jitter}"
        )));
    }
    Ok(())
}
