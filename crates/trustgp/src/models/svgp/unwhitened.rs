//! The Gaussian-likelihood SVGP ELBO in the **non-whitened** parameterisation
//! `q(u) = N(m, C Cᵀ)` (`C` lower-triangular, positive diagonal, zero prior mean), with its
//! gradient in `m`, `C`, the kernel's log-hyperparameters and `log σ²`.
//!
//! Kernel selection's full-θ mode needs it: there `θ` is random, and a whitened `q(ũ)`
//! (`u = L(θ) ũ`) would make `q(u)` move with every sample of `θ` — a different variational
//! family from the paper's (VBKS spec §7.14). The value is the whitened one at
//! `m̃ = L⁻¹ m`, `L̃ = L⁻¹ C` (`K_uu + εI = L Lᵀ`; the same distribution of `u`, so the same
//! ELBO, `KL(N(m̃, L̃L̃ᵀ) ‖ N(0, I)) = KL(N(m, CCᵀ) ‖ N(0, K_uu + εI))`), and the gradient
//! is the whitened one plus the chain through `m̃(L)` and `L̃(L)`:
//!
//! ```text
//! m̄ = L⁻ᵀ ∂m̃,   C̄ = tril(L⁻ᵀ ∂L̃),   L̄ = −tril(m̄ m̃ᵀ + L⁻ᵀ ∂L̃ L̃ᵀ)  → K̄_uu (Murray 2016)
//! ```
//!
//! (from `dm̃ = −L⁻¹ dL m̃` and `dL̃ = L⁻¹ dC − L⁻¹ dL L̃`).

use faer::{Mat, MatRef};

use super::elbo::{cholesky_adjoint, evaluate, Need, Rows};
use super::state::{lower, product_with, State, Whitened, FULL, LOWER, UPPER};
use super::{Svgp, SvgpLikelihood};
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::ModelError;

/// The gradient of [`unwhitened_elbo`].
#[derive(Clone, Debug)]
pub(crate) struct UnwhitenedGrad {
    /// In the variational mean `m`.
    pub(crate) m: Vec<f64>,
    /// In the entries of `C` on and below the diagonal (zeros above).
    pub(crate) c: Mat<f64>,
    /// In the kernel's log-hyperparameters (order of [`Kernel::log_params`]).
    pub(crate) kernel: Vec<f64>,
    /// In `log σ²`.
    pub(crate) log_noise: f64,
}

/// The whitened state equal to `q(u) = N(m, C Cᵀ)` under `kernel` at inducing inputs `z`.
fn whiten(
    kernel: &Kernel,
    noise: f64,
    z: MatRef<'_, f64>,
    m: &[f64],
    c: MatRef<'_, f64>,
) -> Result<(State, Whitened), ModelError> {
    let mm = z.nrows();
    if m.len() != mm || c.nrows() != mm || c.ncols() != mm {
        return Err(ModelError::Invalid(format!(
            "the variational parameters must be a mean of length {mm} and an {mm}×{mm} factor \
             (one per inducing point), got {} and {}×{}",
            m.len(),
            c.nrows(),
            c.ncols()
        )));
    }
    let mut state = State {
        kernel: kernel.clone(),
        mean: Mean::Zero,
        likelihood: SvgpLikelihood::Gaussian,
        lik_params: vec![noise],
        z: z.to_owned(),
        m_tilde: vec![0.0; mm],
        l_tilde: Mat::identity(mm, mm),
    };
    // Only this factorisation's `L⁻¹` is used; the second one (same `K_uu`, same factor)
    // forms the prediction weights of the whitened parameters.
    let prior = Whitened::new(&state)?;
    state.m_tilde = (0..mm)
        .map(|i| (0..=i).map(|k| prior.l_inv[(i, k)] * m[k]).sum())
        .collect();
    state.l_tilde = lower(product_with(prior.l_inv.as_ref(), LOWER, c, LOWER).as_ref());
    state.validate()?;
    let w = Whitened::new(&state)?;
    Ok((state, w))
}

/// The lower factor `L` of `k(z, z) + εI` (the same jitter and escalation as the SVGP's):
/// `C = L` makes `q(u)` the prior.
///
/// # Errors
/// If `K_uu` cannot be factorised even with escalated jitter.
pub(crate) fn prior_factor(kernel: &Kernel, z: MatRef<'_, f64>) -> Result<Mat<f64>, ModelError> {
    let mm = z.nrows();
    let (_, w) = whiten(
        kernel,
        1.0,
        z,
        &vec![0.0; mm],
        Mat::identity(mm, mm).as_ref(),
    )?;
    Ok(w.l)
}

/// The ELBO `c Σ_j E_q[log N(y_j | f_j, σ²)] − KL(q(u) ‖ p(u | θ))` of `q(u) = N(m, C Cᵀ)` under
/// `kernel` with inducing inputs `z` (zero prior mean), over all rows (`rows` `None`, `c = 1`)
/// or a minibatch (`c = n/|rows|`), and its gradient if asked for.
///
/// # Errors
/// Inconsistent shapes, a non-positive diagonal of `C` or noise, or a `K_uu` that cannot be
/// factorised.
#[allow(clippy::too_many_arguments)]
pub(crate) fn unwhitened_elbo(
    kernel: &Kernel,
    noise: f64,
    z: MatRef<'_, f64>,
    m: &[f64],
    c: MatRef<'_, f64>,
    (x, y): (MatRef<'_, f64>, &[f64]),
    rows: Option<&[usize]>,
    gradient: bool,
) -> Result<(f64, Option<UnwhitenedGrad>), ModelError> {
    let (state, w) = whiten(kernel, noise, z, m, c)?;
    let rows = rows.map_or(Rows::All, Rows::Batch);
    let need = if gradient {
        Need::Gradient {
            z: false,
            variational: true,
        }
    } else {
        Need::Value
    };
    let elbo = evaluate(&state, &w, x, y, rows, need)?;
    let Some(g) = elbo.grad else {
        return Ok((elbo.value, None));
    };
    let mm = state.m();
    let m_bar: Vec<f64> = (0..mm)
        .map(|i| (i..mm).map(|k| w.l_inv[(k, i)] * g.m_tilde[k]).sum())
        .collect();
    let ltg = product_with(w.l_inv.transpose(), UPPER, g.l_tilde.as_ref(), LOWER);
    let t = product_with(ltg.as_ref(), FULL, state.l_tilde.transpose(), UPPER);
    let l_bar = Mat::from_fn(mm, mm, |i, j| {
        if i >= j {
            -(m_bar[i] * state.m_tilde[j] + t[(i, j)])
        } else {
            0.0
        }
    });
    let kuu_bar = cholesky_adjoint(&w, l_bar.as_ref());
    let mut kernel_grad = g.kernel;
    state
        .kernel
        .grad_contract(state.z.as_ref(), kuu_bar.as_ref(), &mut kernel_grad);
    Ok((
        elbo.value,
        Some(UnwhitenedGrad {
            m: m_bar,
            c: lower(ltg.as_ref()),
            kernel: kernel_grad,
            log_noise: g.lik[0],
        }),
    ))
}

impl Svgp {
    /// The Gaussian-likelihood SVGP with `q(u) = N(m, C Cᵀ)` (non-whitened) under `kernel`,
    /// noise `σ²` and inducing inputs `z`, zero prior mean (for prediction).
    ///
    /// # Errors
    /// As for [`unwhitened_elbo`].
    pub(crate) fn from_unwhitened(
        kernel: &Kernel,
        noise: f64,
        z: MatRef<'_, f64>,
        m: &[f64],
        c: MatRef<'_, f64>,
    ) -> Result<Svgp, ModelError> {
        let (state, whitened) = whiten(kernel, noise, z, m, c)?;
        Ok(Svgp {
            state,
            whitened,
            report: None,
        })
    }
}

/// The `q(u) = N(m, C Cᵀ)` (non-whitened) that maximises the average over `kernels` (samples
/// of the hyperparameters) of the full-data Gaussian ELBO at noise `σ²`: the ELBO is
/// quadratic in `(m, S)` for every kernel, so the average's maximiser is exact,
///
/// ```text
/// S⁻¹ = mean_s [K_s⁻¹ + A_s A_sᵀ / σ²],   m = S · mean_s [A_s y / σ²],   A_s = K_s⁻¹ K_s,ZX
/// ```
///
/// (`K_s = k_s(Z, Z) + εI`). With one kernel it is Titsias's optimal `q(u)`.
///
/// # Errors
/// No kernel; a `K_ZZ` or the precision that cannot be factorised.
pub(crate) fn optimal_q_u(
    kernels: &[Kernel],
    noise: f64,
    z: MatRef<'_, f64>,
    (x, y): (MatRef<'_, f64>, &[f64]),
) -> Result<(Vec<f64>, Mat<f64>), ModelError> {
    if kernels.is_empty() {
        return Err(ModelError::Invalid(
            "the optimal q(u) needs at least one hyperparameter sample".into(),
        ));
    }
    let mm = z.nrows();
    let mut precision = Mat::<f64>::zeros(mm, mm);
    let mut b = vec![0.0; mm];
    let zero = vec![0.0; mm];
    for kernel in kernels {
        let (_, w) = whiten(kernel, noise, z, &zero, Mat::identity(mm, mm).as_ref())?;
        // K⁻¹ = L⁻ᵀ L⁻¹ and A = K⁻¹ K_ZX, in blocks of rows.
        let kinv = product_with(w.l_inv.transpose(), UPPER, w.l_inv.as_ref(), LOWER);
        precision += &kinv;
        for start in (0..x.nrows()).step_by(super::state::CHUNK) {
            let len = super::state::CHUNK.min(x.nrows() - start);
            let kzx = kernel.cross(z, x.subrows(start, len));
            let a = product_with(kinv.as_ref(), FULL, kzx.as_ref(), FULL);
            let aat = product_with(a.as_ref(), FULL, a.transpose(), FULL);
            precision += aat * (1.0 / noise);
            for (i, bi) in b.iter_mut().enumerate() {
                *bi += (0..len).map(|j| a[(i, j)] * y[start + j]).sum::<f64>() / noise;
            }
        }
    }
    let s = kernels.len() as f64;
    let precision = Mat::from_fn(mm, mm, |i, j| {
        0.5 * (precision[(i, j)] + precision[(j, i)]) / s
    });
    let chol = crate::linalg::Cholesky::factor(
        &precision,
        "precision of the optimal q(u)",
        crate::linalg::Parallelism::Sequential,
    )?;
    let cov = chol.inverse();
    let cov = Mat::from_fn(mm, mm, |i, j| 0.5 * (cov[(i, j)] + cov[(j, i)]));
    let mean = chol.solve_vec(&b.iter().map(|v| v / s).collect::<Vec<_>>());
    let factor = crate::linalg::Cholesky::factor(
        &cov,
        "covariance of the optimal q(u)",
        crate::linalg::Parallelism::Sequential,
    )?;
    Ok((mean, lower(factor.l())))
}
