//! The Laplace machinery for any [`Likelihood`]: Newton's method for the mode, the approximate
//! evidence and its gradient, all in the `K = L Lᵀ`, `B = I + Lᵀ W L` form (see the parent
//! module's docs), which tolerates `W = −∂²log p/∂f² < 0`. Entry `j` has the likelihood of its
//! group, `likelihoods[group[j]]`; the gradient covers the covariance parameters, then the
//! unconstrained parameters of every group's likelihood in turn.

use faer::linalg::matmul::triangular::{matmul, BlockStructure};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Accum, Mat, MatRef};

use super::{check_data, Laplace, StudentTData};
use crate::kernels::Covariance;
use crate::likelihoods::{LatentDerivatives, Likelihood, ParamDerivatives};
use crate::linalg::{lower_gram_in_place, parallelism_for, Cholesky, Parallelism};
use crate::models::ModelError;

/// Newton stops once an accepted step changes `Ψ` by less than this times `1 + |Ψ|`.
pub(crate) const MODE_TOL: f64 = 1e-10;
/// Newton iterations allowed before the mode search is reported as failed.
const MODE_MAX_ITER: usize = 100;
/// Step halvings tried before a Newton direction is declared to offer no increase of `Ψ`.
const MAX_HALVINGS: usize = 40;

/// A copy of the lower triangle of `l` with explicit zeros above it, so that every product
/// may read the whole matrix.
fn clean_lower(l: MatRef<'_, f64>) -> Mat<f64> {
    Mat::from_fn(
        l.nrows(),
        l.ncols(),
        |i, j| if i >= j { l[(i, j)] } else { 0.0 },
    )
}

/// `f = m + L Lᵀ a` (`K` as factorised, jitter included, so `f` and `a` stay consistent).
fn latent_from(l: MatRef<'_, f64>, a: &[f64], prior: &[f64]) -> Vec<f64> {
    let n = a.len();
    let lta: Vec<f64> = (0..n)
        .map(|i| (i..n).map(|k| l[(k, i)] * a[k]).sum())
        .collect();
    let mut f = prior.to_vec();
    for (i, v) in lta.iter().enumerate() {
        for (k, fk) in f.iter_mut().enumerate().skip(i) {
            *fk += l[(k, i)] * v;
        }
    }
    f
}

/// The lower Cholesky factor of `B = I + Lᵀ diag(w) L`, or `None` if `B` is not positive
/// definite. No jitter: whether `B` is positive definite is exactly what decides the step.
fn factor_b(l: MatRef<'_, f64>, w: &[f64], par: Parallelism) -> Option<Mat<f64>> {
    let n = w.len();
    let mut wl = l.to_owned();
    for j in 0..n {
        for (v, wi) in wl.col_mut(j).iter_mut().zip(w).skip(j) {
            *v *= wi;
        }
    }
    let mut b = Mat::<f64>::zeros(n, n);
    matmul(
        b.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        l.transpose(),
        BlockStructure::TriangularUpper,
        wl.as_ref(),
        BlockStructure::TriangularLower,
        1.0,
        par.faer(),
    );
    for i in 0..n {
        b[(i, i)] += 1.0;
    }
    factor_exact(b, par)
}

/// The lower Cholesky factor of the symmetric `b` (lower triangle read), with zeros above the
/// diagonal, or `None` if `b` is not (numerically) positive definite.
fn factor_exact(mut b: Mat<f64>, par: Parallelism) -> Option<Mat<f64>> {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::cholesky::llt;
    let n = b.nrows();
    let p = par.faer();
    let mut buf = MemBuffer::new(llt::factor::cholesky_in_place_scratch::<f64>(
        n,
        p,
        Default::default(),
    ));
    let ok = llt::factor::cholesky_in_place(
        b.as_mut(),
        Default::default(),
        p,
        MemStack::new(&mut buf),
        Default::default(),
    )
    .is_ok();
    if !(ok && (0..n).all(|i| b[(i, i)].is_finite() && b[(i, i)] > 0.0)) {
        return None;
    }
    for j in 1..n {
        b.col_mut(j).subrows_mut(0, j).fill(0.0);
    }
    Some(b)
}

/// `B⁻¹ v` from the factor of `B`.
fn solve_b(lb: MatRef<'_, f64>, v: &[f64], par: Parallelism) -> Vec<f64> {
    let mut m = Mat::from_fn(v.len(), 1, |i, _| v[i]);
    solve_lower_triangular_in_place(lb, m.as_mut(), par.faer());
    solve_upper_triangular_in_place(lb.transpose(), m.as_mut(), par.faer());
    (0..v.len()).map(|i| m[(i, 0)]).collect()
}

/// The targets with the likelihood of every entry.
struct Observations<'a, L> {
    y: &'a [f64],
    group: &'a [usize],
    likelihoods: &'a [L],
}

impl<L: Likelihood> Observations<'_, L> {
    fn lik(&self, j: usize) -> &L {
        &self.likelihoods[self.group[j]]
    }

    fn derivs(&self, j: usize, f: f64) -> LatentDerivatives {
        self.lik(j).latent_derivatives(self.y[j], f)
    }

    /// `Ψ = Σ ℓ(f) − ½ aᵀ(f − m)`.
    fn psi(&self, f: &[f64], a: &[f64], prior: &[f64]) -> f64 {
        (0..f.len())
            .map(|j| self.lik(j).log_density(self.y[j], f[j]) - 0.5 * a[j] * (f[j] - prior[j]))
            .sum()
    }
}

/// How the prior covariance enters the mode search: `f = m + K a`, the factor of `B` at a
/// curvature `W` and the Newton direction `(K⁻¹ + W)⁻¹ g` from that factor.
trait PriorForm {
    /// `f = m + K a`.
    fn latent(&self, a: &[f64], prior: &[f64]) -> Vec<f64>;
    /// The lower Cholesky factor of `B` at curvature `w`, or `None` if `B` is not positive
    /// definite.
    fn factor(&self, w: &[f64], par: Parallelism) -> Option<Mat<f64>>;
    /// `(K⁻¹ + diag(w))⁻¹ g`, with `lb` the factor of `B` at `w`.
    fn newton(&self, lb: MatRef<'_, f64>, w: &[f64], g: &[f64], par: Parallelism) -> Vec<f64>;
}

/// The generic form: `K = L Lᵀ`, `B = I + Lᵀ W L` (any sign of `W`).
struct Factored {
    l: Mat<f64>,
}

impl PriorForm for Factored {
    fn latent(&self, a: &[f64], prior: &[f64]) -> Vec<f64> {
        latent_from(self.l.as_ref(), a, prior)
    }

    fn factor(&self, w: &[f64], par: Parallelism) -> Option<Mat<f64>> {
        factor_b(self.l.as_ref(), w, par)
    }

    // (K⁻¹ + W)⁻¹ = L B⁻¹ Lᵀ.
    fn newton(&self, lb: MatRef<'_, f64>, _w: &[f64], g: &[f64], par: Parallelism) -> Vec<f64> {
        let l = &self.l;
        let n = g.len();
        let ltg: Vec<f64> = (0..n)
            .map(|i| (i..n).map(|k| l[(k, i)] * g[k]).sum())
            .collect();
        let u = solve_b(lb, &ltg, par);
        let mut df = vec![0.0; n];
        for (i, ui) in u.iter().enumerate() {
            for (k, dk) in df.iter_mut().enumerate().skip(i) {
                *dk += l[(k, i)] * ui;
            }
        }
        df
    }
}

/// The log-concave form (R&W Alg. 3.1): `K` itself and `B = I + W½ K W½`, which needs
/// `W ≥ 0` but no factor of `K`, and only an `O(n²)` scaling of `K` per Newton step.
struct Direct {
    k: Mat<f64>,
}

/// `k v`.
fn mat_vec(k: MatRef<'_, f64>, v: &[f64], par: Parallelism) -> Vec<f64> {
    let vm = faer::ColRef::from_slice(v);
    let mut out = faer::Col::<f64>::zeros(k.nrows());
    faer::linalg::matmul::matmul(out.as_mut(), Accum::Replace, k, vm, 1.0, par.faer());
    out.iter().copied().collect()
}

impl Direct {
    fn times(&self, v: &[f64], par: Parallelism) -> Vec<f64> {
        mat_vec(self.k.as_ref(), v, par)
    }
}

/// `√w`, or `None` if some `w < 0` (then `I + W½ K W½` does not exist).
fn sqrt_w(w: &[f64]) -> Option<Vec<f64>> {
    w.iter().map(|&v| (v >= 0.0).then(|| v.sqrt())).collect()
}

impl PriorForm for Direct {
    fn latent(&self, a: &[f64], prior: &[f64]) -> Vec<f64> {
        let ka = self.times(a, Parallelism::Sequential);
        prior.iter().zip(ka).map(|(m, v)| m + v).collect()
    }

    fn factor(&self, w: &[f64], par: Parallelism) -> Option<Mat<f64>> {
        let s = sqrt_w(w)?;
        let n = w.len();
        let b = Mat::from_fn(n, n, |i, j| {
            let v = s[i] * self.k[(i, j)] * s[j];
            if i == j {
                1.0 + v
            } else {
                v
            }
        });
        factor_exact(b, par)
    }

    // (K⁻¹ + W)⁻¹ = K − K W½ B⁻¹ W½ K.
    fn newton(&self, lb: MatRef<'_, f64>, w: &[f64], g: &[f64], par: Parallelism) -> Vec<f64> {
        let s = sqrt_w(w).expect("B was factorised at this w, so w ≥ 0");
        let kg = self.times(g, par);
        let v: Vec<f64> = (0..g.len()).map(|i| s[i] * kg[i]).collect();
        let u = solve_b(lb, &v, par);
        let su: Vec<f64> = (0..g.len()).map(|i| s[i] * u[i]).collect();
        let ksu = self.times(&su, par);
        kg.iter().zip(ksu).map(|(a, b)| a - b).collect()
    }
}

/// The mode and what the value and the gradient need there.
struct Mode {
    lb: Mat<f64>,
    a: Vec<f64>,
    f: Vec<f64>,
    d: Vec<LatentDerivatives>,
    iterations: usize,
    damped: usize,
}

/// Everything the value, the gradient and the predictions share at the mode.
pub(crate) struct ModeState {
    pub(crate) chol: Cholesky,
    pub(crate) lb: Mat<f64>,
    pub(crate) d: Vec<LatentDerivatives>,
}

/// Newton's method for the mode of `Ψ` (see the module docs), from `a = 0` or from the start
/// in `starts` that gives the largest `Ψ`, if it beats `a = 0`.
fn find_mode<L: Likelihood, F: PriorForm>(
    form: &F,
    lik: &Observations<'_, L>,
    prior: &[f64],
    starts: &[&[f64]],
    tol: f64,
    par: Parallelism,
) -> Result<Mode, ModelError> {
    let n = prior.len();
    let mut a = vec![0.0; n];
    let mut f = prior.to_vec();
    let mut psi = lik.psi(&f, &a, prior);
    for w0 in starts {
        let fw = form.latent(w0, prior);
        let pw = lik.psi(&fw, w0, prior);
        if pw > psi {
            (a, f, psi) = (w0.to_vec(), fw, pw);
        }
    }
    let mut converged = false;
    let mut iterations = 0;
    let mut damped = 0;
    loop {
        let d: Vec<LatentDerivatives> = (0..n).map(|j| lik.derivs(j, f[j])).collect();
        let w: Vec<f64> = d.iter().map(|d| -d.d2).collect();
        let exact = form.factor(&w, par);
        if converged {
            let lb = exact.ok_or_else(|| {
                ModelError::Invalid(
                    "the Laplace mode search ended where K⁻¹ + W is not positive definite \
                     (a saddle of the posterior, not a mode)"
                        .into(),
                )
            })?;
            return Ok(Mode {
                lb,
                a,
                f,
                d,
                iterations,
                damped,
            });
        }
        if iterations >= MODE_MAX_ITER {
            return Err(ModelError::Invalid(format!(
                "the Laplace mode search did not converge in {MODE_MAX_ITER} Newton iterations"
            )));
        }
        iterations += 1;
        // Where B is indefinite the Newton direction may not ascend: damp W to the likelihood's
        // Newton curvature (≥ max(W, 0), e.g. that of a quadratic minoriser), so B ⪰ I factorises.
        let (lb, w_step) = match exact {
            Some(lb) => (lb, w),
            None => {
                damped += 1;
                let wp: Vec<f64> = (0..n)
                    .map(|j| lik.lik(j).newton_curvature(lik.y[j], f[j]))
                    .collect();
                let lb = form.factor(&wp, par).ok_or_else(|| {
                    ModelError::Invalid("non-finite values in the Laplace mode search".into())
                })?;
                (lb, wp)
            }
        };
        let g: Vec<f64> = (0..n).map(|j| d[j].d1 - a[j]).collect();
        let df = form.newton(lb.as_ref(), &w_step, &g, par);
        let da: Vec<f64> = (0..n).map(|j| g[j] - w_step[j] * df[j]).collect();
        // Near the mode Ψ is flat to second order, so its rounding hides the last quadratic
        // Newton steps; accepting a "decrease" within the tolerance lets them through (and
        // such a step then ends the search), so the mode is as accurate as the tolerance.
        let slack = tol * (1.0 + psi.abs());
        let mut step = 1.0;
        let mut accepted = None;
        for _ in 0..=MAX_HALVINGS {
            let ft: Vec<f64> = (0..n).map(|j| f[j] + step * df[j]).collect();
            let at: Vec<f64> = (0..n).map(|j| a[j] + step * da[j]).collect();
            let pt = lik.psi(&ft, &at, prior);
            if pt >= psi - slack {
                accepted = Some(at);
                break;
            }
            step *= 0.5;
        }
        let Some(at) = accepted else {
            // No step keeps Ψ within the tolerance of its value: it is at its maximum.
            converged = true;
            continue;
        };
        // Recompute f from a so that the pair stays exactly consistent.
        a = at;
        f = form.latent(&a, prior);
        let new_psi = lik.psi(&f, &a, prior);
        if !new_psi.is_finite() {
            return Err(ModelError::Invalid(
                "the Laplace objective became non-finite".into(),
            ));
        }
        converged = (new_psi - psi).abs() < tol * (1.0 + new_psi.abs());
        psi = new_psi;
    }
}

/// `log q = Σ log p(y|f̂) − ½ âᵀ(f̂ − m) − ½ log|B|` (the same `|B|` in either form).
fn log_evidence(mode: &Mode, prior: &[f64]) -> f64 {
    let n = prior.len();
    let log_det_b: f64 = 2.0 * (0..n).map(|i| mode.lb[(i, i)].ln()).sum::<f64>();
    mode.d.iter().map(|d| d.value).sum::<f64>()
        - 0.5
            * (0..n)
                .map(|j| mode.a[j] * (mode.f[j] - prior[j]))
                .sum::<f64>()
        - 0.5 * log_det_b
}

/// The [`Laplace`] summary of a mode.
fn summary(mode: &Mode, value: f64, grad: Vec<f64>) -> Laplace {
    Laplace {
        value,
        grad,
        mode: mode.f.clone(),
        alpha: mode.a.clone(),
        newton_iterations: mode.iterations,
        damped_steps: mode.damped,
    }
}

/// Mode, value and (if `with_grad`) gradient with entry `j` under `likelihoods[group[j]]`;
/// also returns the state predictions need.
pub(crate) fn evaluate<C: Covariance, L: Likelihood>(
    cov: &C,
    data: &StudentTData<'_>,
    likelihoods: &[L],
    warm: Option<&[f64]>,
    with_grad: bool,
    tol: f64,
) -> Result<(Laplace, ModeState), ModelError> {
    check_data(data, likelihoods.len(), "likelihoods", warm)?;
    let n = data.y.len();
    let par = parallelism_for(n);
    let lik = Observations {
        y: data.y,
        group: data.group,
        likelihoods,
    };
    let build = || cov.matrix(data.x);
    let chol = Cholesky::factor_owned(build(), "Laplace kernel matrix K", par, build)?;
    let form = Factored {
        l: clean_lower(chol.l()),
    };
    let starts: Vec<&[f64]> = warm.into_iter().collect();
    let mode = find_mode(&form, &lik, data.prior, &starts, tol, par)?;
    let value = log_evidence(&mode, data.prior);
    let grad = if with_grad {
        // Σ = Cᵀ C with C = L_B⁻¹ Lᵀ.
        let mut c = form.l.transpose().to_owned();
        solve_lower_triangular_in_place(mode.lb.as_ref(), c.as_mut(), par.faer());
        let mut sigma = Mat::<f64>::zeros(n, n);
        gram_lower(&mut sigma, c.as_ref(), Accum::Replace, 1.0, par);
        drop(c);
        gradient(
            cov,
            data,
            &lik,
            &mode,
            parts_from_sigma(&mode, sigma),
            |t| latent_from(form.l.as_ref(), t, &vec![0.0; n]),
        )
    } else {
        Vec::new()
    };
    let laplace = summary(&mode, value, grad);
    let st = ModeState {
        chol,
        lb: mode.lb,
        d: mode.d,
    };
    Ok((laplace, st))
}

/// What a log-concave evaluation ([`evaluate_log_concave_from`]) leaves at its mode `f̂` for the
/// mode search of the next evaluation, at nearby parameters: `â`, `f̂ − m = Kâ`, and the `K`,
/// `√W` and factor of `B = I + W½KW½` there, with which the new mode is predicted to first
/// order in `O(n²)` ([`PreviousMode::predict`]).
pub(crate) struct PreviousMode {
    alpha: Vec<f64>,
    f: Vec<f64>,
    k: Mat<f64>,
    s: Vec<f64>,
    lb: Mat<f64>,
}

impl PreviousMode {
    /// `â` of the previous mode.
    pub(crate) fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    /// The first-order prediction of the mode's `a` under the new prior covariance `K'`
    /// (`k_new`): the mode condition `f − m = K' ∇log p(f)` linearised at the previous mode
    /// (`∇log p(f̂ + δ) ≈ â − Wδ`) is `(I + K'W) δ = K'â − (f̂ − m)`; with the previous
    /// `(I + KW)⁻¹ = I − KW½B⁻¹W½` in place of `(I + K'W)⁻¹` (a second-order difference),
    /// `δ = v − KW½B⁻¹W½v` with `v = K'â − (f̂ − m)`, and `a = â − Wδ`. Its error is second
    /// order in the parameter step where that of `â` alone is first order.
    pub(crate) fn predict(&self, k_new: MatRef<'_, f64>, par: Parallelism) -> Vec<f64> {
        let s = &self.s;
        let v: Vec<f64> = mat_vec(k_new, &self.alpha, par)
            .iter()
            .zip(&self.f)
            .map(|(ka, f)| ka - f)
            .collect();
        let sv: Vec<f64> = s.iter().zip(&v).map(|(si, vi)| si * vi).collect();
        let su: Vec<f64> = solve_b(self.lb.as_ref(), &sv, par)
            .iter()
            .zip(s)
            .map(|(ui, si)| si * ui)
            .collect();
        let ksu = mat_vec(self.k.as_ref(), &su, par);
        (0..v.len())
            .map(|j| self.alpha[j] - s[j] * s[j] * (v[j] - ksu[j]))
            .collect()
    }
}

/// [`evaluate_log_concave_from`] without a previous mode.
#[cfg(test)]
pub(crate) fn evaluate_log_concave<C: Covariance, L: Likelihood>(
    cov: &C,
    data: &StudentTData<'_>,
    likelihoods: &[L],
    warm: Option<&[f64]>,
    with_grad: bool,
    tol: f64,
) -> Result<Laplace, ModelError> {
    evaluate_log_concave_from(cov, data, likelihoods, warm, None, with_grad, tol).map(|r| r.0)
}

/// As [`evaluate`] (value, gradient, mode; no prediction state), for likelihoods whose
/// `W = −∂²log p/∂f²` is `≥ 0` everywhere (log-concave: Bernoulli, Gaussian): the form
/// `B = I + W½ K W½` of R&W Alg. 3.1/5.1 needs no factor of `K`, and each Newton step only
/// scales `K`, so an evaluation costs one Cholesky per Newton step plus the gradient. Where
/// `W < 0` at the mode it fails (use [`evaluate`]). Unlike [`evaluate`] it uses `K` without
/// jitter, so the two agree wherever `K` factorises without it.
///
/// The mode search starts from `a = 0`, `warm`, or `previous` (the mode of an evaluation at
/// other parameters, as is or moved by its first-order prediction [`PreviousMode::predict`]),
/// whichever gives the largest `Ψ`: the same mode to the tolerance, in fewer Newton steps
/// from a better start. Also returns what the next evaluation's mode search may start from.
pub(crate) fn evaluate_log_concave_from<C: Covariance, L: Likelihood>(
    cov: &C,
    data: &StudentTData<'_>,
    likelihoods: &[L],
    warm: Option<&[f64]>,
    previous: Option<&PreviousMode>,
    with_grad: bool,
    tol: f64,
) -> Result<(Laplace, PreviousMode), ModelError> {
    check_data(data, likelihoods.len(), "likelihoods", warm)?;
    let n = data.y.len();
    let par = parallelism_for(n);
    let lik = Observations {
        y: data.y,
        group: data.group,
        likelihoods,
    };
    let form = Direct {
        k: cov.matrix(data.x),
    };
    if form.k.col_iter().any(|c| c.iter().any(|v| !v.is_finite())) {
        return Err(ModelError::Invalid(
            "the Laplace kernel matrix K has non-finite entries".into(),
        ));
    }
    let previous = previous.filter(|p| p.alpha.len() == n);
    let predicted = previous.map(|p| p.predict(form.k.as_ref(), par));
    let mut starts: Vec<&[f64]> = warm.into_iter().collect();
    if let (Some(p), Some(predicted)) = (previous, &predicted) {
        starts.extend([p.alpha.as_slice(), predicted]);
    }
    let mode = find_mode(&form, &lik, data.prior, &starts, tol, par)?;
    let value = log_evidence(&mode, data.prior);
    let s = sqrt_w(&mode.d.iter().map(|d| -d.d2).collect::<Vec<_>>()).ok_or_else(|| {
        ModelError::Invalid("W < 0 at the mode: the likelihood is not log-concave".into())
    })?;
    let grad = if with_grad {
        let parts = parts_from_b_inverse(&form, &mode, &s, par);
        gradient(cov, data, &lik, &mode, parts, |t| form.times(t, par))
    } else {
        Vec::new()
    };
    let laplace = summary(&mode, value, grad);
    let f = mode.f.iter().zip(data.prior).map(|(f, m)| f - m).collect();
    let previous = PreviousMode {
        alpha: mode.a,
        f,
        k: form.k,
        s,
        lb: mode.lb,
    };
    Ok((laplace, previous))
}

/// The lower triangle of `out ← (out +) alpha · Cᵀ C`.
fn gram_lower(out: &mut Mat<f64>, c: MatRef<'_, f64>, accum: Accum, alpha: f64, par: Parallelism) {
    matmul(
        out.as_mut(),
        BlockStructure::TriangularLower,
        accum,
        c.transpose(),
        BlockStructure::Rectangular,
        c,
        BlockStructure::Rectangular,
        alpha,
        par.faer(),
    );
}

/// What the gradient of `log q` needs at the mode (R&W Alg. 5.1): `diag Σ` with
/// `Σ = (K⁻¹ + W)⁻¹`, `t = s₂ − WΣs₂` (`s₂ = ½ diag Σ ∘ ∂³ log p`), and the lower triangle of
/// `M = ½ââᵀ − ½R + ½(tâᵀ + âtᵀ)`, `R = W − WΣW`, that each `∂K/∂θ` is contracted with.
struct GradientParts {
    sigma_diag: Vec<f64>,
    t: Vec<f64>,
    m: Mat<f64>,
}

/// [`GradientParts`] from `Σ` (lower triangle read).
fn parts_from_sigma(st: &Mode, sigma: Mat<f64>) -> GradientParts {
    let n = st.a.len();
    let sym = |i: usize, j: usize| if i >= j { sigma[(i, j)] } else { sigma[(j, i)] };
    let w: Vec<f64> = st.d.iter().map(|d| -d.d2).collect();
    let s2: Vec<f64> = (0..n).map(|i| 0.5 * sigma[(i, i)] * st.d[i].d3).collect();
    let t: Vec<f64> = (0..n)
        .map(|i| s2[i] - w[i] * (0..n).map(|k| sym(i, k) * s2[k]).sum::<f64>())
        .collect();
    let a = &st.a;
    // Overwrites Σ's lower triangle column by column (entry (i, j) is read only to build
    // itself), keeping Σ's diagonal apart.
    let sigma_diag: Vec<f64> = (0..n).map(|i| sigma[(i, i)]).collect();
    let mut m = sigma;
    for j in 0..n {
        for i in j..n {
            let r = w[i] * m[(i, j)] * w[j];
            m[(i, j)] = 0.5 * (a[i] * a[j] + r + t[i] * a[j] + a[i] * t[j]);
        }
        m[(j, j)] -= 0.5 * w[j];
    }
    GradientParts { sigma_diag, t, m }
}

/// Below this `W_ii K_ii`, `Σ_ii = (1 − B⁻¹_ii)/W_ii` loses more than `ε/1e-10 ≈ 2e-6` of its
/// value to cancellation, so [`parts_from_b_inverse`] takes that row the exact `O(n²)` way.
pub(super) const SIGMA_DIAG_CANCELLATION: f64 = 1e-10;

/// [`GradientParts`] of the log-concave form from `B = I + W½KW½ = L_B L_Bᵀ` alone (`s = √W`):
/// with `B⁻¹ = L_B⁻ᵀL_B⁻¹` (`2n³/3` flops), `W½ΣW½ = I − B⁻¹`, so `R = W½B⁻¹W½`,
/// `Σ_ii = (1 − B⁻¹_ii)/W_ii` and `WΣs₂ = W½B⁻¹W½(Ks₂)`. Forming `Σ = K − CᵀC` with
/// `C = L_B⁻¹W½K` instead costs `2n³`, which made it most of an evaluation's gradient.
fn parts_from_b_inverse(form: &Direct, st: &Mode, s: &[f64], par: Parallelism) -> GradientParts {
    let n = st.a.len();
    let mut b_inv = Mat::<f64>::zeros(n, n);
    faer::linalg::triangular_inverse::invert_lower_triangular(
        b_inv.as_mut(),
        st.lb.as_ref(),
        par.faer(),
    );
    lower_gram_in_place(b_inv.as_mut(), par);
    let sym = |i: usize, j: usize| if i >= j { b_inv[(i, j)] } else { b_inv[(j, i)] };
    let b_inv_times = |v: &[f64]| -> Vec<f64> {
        (0..n)
            .map(|i| (0..n).map(|k| sym(i, k) * v[k]).sum())
            .collect()
    };
    let sigma_diag: Vec<f64> = (0..n)
        .map(|i| {
            let (w, kii) = (s[i] * s[i], form.k[(i, i)]);
            if w * kii >= SIGMA_DIAG_CANCELLATION {
                (1.0 - b_inv[(i, i)]) / w
            } else {
                // Σ_ii = K_ii − vᵀB⁻¹v with v = W½ k_i.
                let v: Vec<f64> = (0..n).map(|k| s[k] * form.k[(k, i)]).collect();
                let bv = b_inv_times(&v);
                kii - v.iter().zip(&bv).map(|(x, y)| x * y).sum::<f64>()
            }
        })
        .collect();
    let s2: Vec<f64> = (0..n).map(|i| 0.5 * sigma_diag[i] * st.d[i].d3).collect();
    let ks2 = form.times(&s2, par);
    let u: Vec<f64> = (0..n).map(|k| s[k] * ks2[k]).collect();
    let bu = b_inv_times(&u);
    let t: Vec<f64> = (0..n).map(|i| s2[i] - s[i] * bu[i]).collect();
    let a = &st.a;
    let mut m = b_inv;
    for j in 0..n {
        for i in j..n {
            let r = s[i] * m[(i, j)] * s[j];
            m[(i, j)] = 0.5 * (a[i] * a[j] - r + t[i] * a[j] + a[i] * t[j]);
        }
    }
    GradientParts { sigma_diag, t, m }
}

/// The gradient of `log q` (see the module docs) from its [`GradientParts`] and `v ↦ K v`.
fn gradient<C: Covariance, L: Likelihood>(
    cov: &C,
    data: &StudentTData<'_>,
    lik: &Observations<'_, L>,
    st: &Mode,
    parts: GradientParts,
    k_times: impl Fn(&[f64]) -> Vec<f64>,
) -> Vec<f64> {
    let n = st.a.len();
    let GradientParts { sigma_diag, t, m } = parts;
    // Each group's likelihood parameters follow the covariance parameters, group by group.
    let nk = cov.n_params();
    let mut offsets = Vec::with_capacity(lik.likelihoods.len());
    let mut total = nk;
    for l in lik.likelihoods {
        offsets.push(total);
        total += l.param_names().len();
    }
    let mut grad = vec![0.0; total];
    cov.grad_contract(data.x, m.as_ref(), &mut grad[..nk]);
    let kt = k_times(&t);
    let mut pd = vec![ParamDerivatives::default(); total - nk];
    for j in 0..n {
        let g = data.group[j];
        let np = lik.likelihoods[g].param_names().len();
        lik.lik(j)
            .param_derivatives(data.y[j], st.f[j], &mut pd[..np]);
        for (k, p) in pd[..np].iter().enumerate() {
            grad[offsets[g] + k] += p.value + 0.5 * sigma_diag[j] * p.d2 + kt[j] * p.d1;
        }
    }
    grad
}
