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
use crate::linalg::{parallelism_for, Cholesky, Parallelism};
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
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::cholesky::llt;
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

/// Everything the value, the gradient and the predictions share at the mode.
pub(crate) struct ModeState {
    pub(crate) chol: Cholesky,
    pub(crate) l: Mat<f64>,
    pub(crate) lb: Mat<f64>,
    pub(crate) a: Vec<f64>,
    pub(crate) f: Vec<f64>,
    pub(crate) d: Vec<LatentDerivatives>,
    pub(crate) iterations: usize,
    pub(crate) damped: usize,
}

/// Newton's method for the mode of `Ψ` (see the module docs), from `a = 0` or from the warm
/// start, whichever gives the larger `Ψ`.
fn find_mode<L: Likelihood>(
    chol: Cholesky,
    lik: &Observations<'_, L>,
    prior: &[f64],
    warm: Option<&[f64]>,
    tol: f64,
    par: Parallelism,
) -> Result<ModeState, ModelError> {
    let n = prior.len();
    let l = clean_lower(chol.l());
    let mut a = vec![0.0; n];
    let mut f = prior.to_vec();
    let mut psi = lik.psi(&f, &a, prior);
    if let Some(w0) = warm {
        let fw = latent_from(l.as_ref(), w0, prior);
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
        let exact = factor_b(l.as_ref(), &w, par);
        if converged {
            let lb = exact.ok_or_else(|| {
                ModelError::Invalid(
                    "the Laplace mode search ended where K⁻¹ + W is not positive definite \
                     (a saddle of the posterior, not a mode)"
                        .into(),
                )
            })?;
            return Ok(ModeState {
                chol,
                l,
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
                let lb = factor_b(l.as_ref(), &wp, par).ok_or_else(|| {
                    ModelError::Invalid("non-finite values in the Laplace mode search".into())
                })?;
                (lb, wp)
            }
        };
        let g: Vec<f64> = (0..n).map(|j| d[j].d1 - a[j]).collect();
        let ltg: Vec<f64> = (0..n)
            .map(|i| (i..n).map(|k| l[(k, i)] * g[k]).sum())
            .collect();
        let u = solve_b(lb.as_ref(), &ltg, par);
        let mut df = vec![0.0; n];
        for (i, ui) in u.iter().enumerate() {
            for (k, dk) in df.iter_mut().enumerate().skip(i) {
                *dk += l[(k, i)] * ui;
            }
        }
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
        f = latent_from(l.as_ref(), &a, prior);
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
    let st = find_mode(chol, &lik, data.prior, warm, tol, par)?;
    let log_det_b: f64 = 2.0 * (0..n).map(|i| st.lb[(i, i)].ln()).sum::<f64>();
    let value = st.d.iter().map(|d| d.value).sum::<f64>()
        - 0.5
            * (0..n)
                .map(|j| st.a[j] * (st.f[j] - data.prior[j]))
                .sum::<f64>()
        - 0.5 * log_det_b;
    let grad = if with_grad {
        gradient(cov, data, &lik, &st, par)
    } else {
        Vec::new()
    };
    let laplace = Laplace {
        value,
        grad,
        mode: st.f.clone(),
        alpha: st.a.clone(),
        newton_iterations: st.iterations,
        damped_steps: st.damped,
    };
    Ok((laplace, st))
}

/// The gradient of `log q` (see the module docs).
fn gradient<C: Covariance, L: Likelihood>(
    cov: &C,
    data: &StudentTData<'_>,
    lik: &Observations<'_, L>,
    st: &ModeState,
    par: Parallelism,
) -> Vec<f64> {
    let n = st.a.len();
    // Σ = Cᵀ C with C = L_B⁻¹ Lᵀ.
    let mut c = st.l.transpose().to_owned();
    solve_lower_triangular_in_place(st.lb.as_ref(), c.as_mut(), par.faer());
    let mut sigma = Mat::<f64>::zeros(n, n);
    matmul(
        sigma.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        c.transpose(),
        BlockStructure::Rectangular,
        c.as_ref(),
        BlockStructure::Rectangular,
        1.0,
        par.faer(),
    );
    drop(c);
    let sym = |i: usize, j: usize| if i >= j { sigma[(i, j)] } else { sigma[(j, i)] };
    let w: Vec<f64> = st.d.iter().map(|d| -d.d2).collect();
    let s2: Vec<f64> = (0..n).map(|i| 0.5 * sigma[(i, i)] * st.d[i].d3).collect();
    let t: Vec<f64> = (0..n)
        .map(|i| s2[i] - w[i] * (0..n).map(|k| sym(i, k) * s2[k]).sum::<f64>())
        .collect();
    let a = &st.a;
    // Lower triangle of ½ââᵀ − ½R + ½(tâᵀ + âtᵀ), R = W − WΣW; overwrites Σ's lower triangle
    // column by column (entry (i, j) is read only to build itself), keeping Σ's diagonal apart.
    let sigma_diag: Vec<f64> = (0..n).map(|i| sigma[(i, i)]).collect();
    let mut m = sigma;
    for j in 0..n {
        for i in j..n {
            let r = w[i] * m[(i, j)] * w[j];
            m[(i, j)] = 0.5 * (a[i] * a[j] + r + t[i] * a[j] + a[i] * t[j]);
        }
        m[(j, j)] -= 0.5 * w[j];
    }
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
    let kt = latent_from(st.l.as_ref(), &t, &vec![0.0; n]);
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
